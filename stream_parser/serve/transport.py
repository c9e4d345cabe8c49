"""The proxy's rewriting inside an HTTP client: ``ParsingTransport`` for ``openai`` code.

Code that takes an OpenAI client gets correct tool calls from any server without a
proxy process: wrap the client's transport::

    import httpx2
    from openai import OpenAI
    from stream_parser.serve import ParsingTransport

    client = OpenAI(
        base_url="http://localhost:8000/v1",
        api_key="none",
        http_client=httpx2.Client(transport=ParsingTransport()),
    )

Theory of operation.  The transport wraps another (by default a plain
``httpx2.HTTPTransport``).  A ``POST`` to a path ending in ``/chat/completions`` with a
JSON body is rewritten by the same :class:`~stream_parser.serve.rewrite.ChatRewriter`
that ``stream-parser serve`` drives: its ``upstream_body`` is sent instead, and the
reply's bytes go through the rewriter as the client reads them (a stream) or at once (a
whole reply).  Every other request passes through unchanged.  A request whose ``tools``
cannot be read is answered ``400`` in OpenAI's error format, which the SDK raises as
``BadRequestError``; nothing is sent.

The ``openai`` SDK 3.x takes an ``httpx2`` client (``http_client=``), so these are
``httpx2`` transports; ``httpx2`` is imported when this module is.  Earlier majors of the
SDK take an ``httpx`` client: use ``stream-parser serve`` with them.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx2

from ..errors import ConfigError
from .rewrite import ChatRewriter, RegistryCache
from .settings import ProxySettings

__all__ = ["AsyncParsingTransport", "ParsingTransport"]


def _chat_body(request: httpx2.Request) -> dict[str, Any] | None:
    """The JSON body of a chat-completions request, or None for any other request."""
    if request.method != "POST" or not request.url.path.rstrip("/").endswith("/chat/completions"):
        return None
    try:
        body = json.loads(request.content)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _rewritten_request(request: httpx2.Request, rewriter: ChatRewriter) -> httpx2.Request:
    content = json.dumps(rewriter.upstream_body, ensure_ascii=False).encode()
    headers = httpx2.Headers(request.headers)
    headers["content-length"] = str(len(content))
    return httpx2.Request(
        request.method, request.url, headers=headers, content=content, extensions=request.extensions
    )


def _refused(request: httpx2.Request, exc: ConfigError) -> httpx2.Response:
    error = {
        "error": {
            "message": str(exc),
            "type": "invalid_request_error",
            "param": "tools",
            "code": "invalid_tools",
        }
    }
    return httpx2.Response(400, json=error, request=request)


def _reply_headers(response: httpx2.Response) -> list[tuple[str, str]]:
    # The body is rewritten: its length and encoding are ours now.
    dropped = {"content-length", "content-encoding", "transfer-encoding"}
    return [(k, v) for k, v in response.headers.multi_items() if k.lower() not in dropped]


class _RewrittenStream(httpx2.SyncByteStream):
    def __init__(self, response: httpx2.Response, rewriter: ChatRewriter) -> None:
        self._response = response
        self._rewriter = rewriter

    def __iter__(self) -> Iterator[bytes]:
        rewriter = self._rewriter
        try:
            for piece in self._response.iter_raw():
                out = rewriter.feed(piece)
                if out:
                    yield out
            tail = rewriter.close()
        except httpx2.TransportError as exc:
            tail = rewriter.fail(f"the upstream's stream failed: {exc or type(exc).__name__}")
        if tail:
            yield tail

    def close(self) -> None:
        self._response.close()


class _AsyncRewrittenStream(httpx2.AsyncByteStream):
    def __init__(self, response: httpx2.Response, rewriter: ChatRewriter) -> None:
        self._response = response
        self._rewriter = rewriter

    async def __aiter__(self) -> AsyncIterator[bytes]:
        rewriter = self._rewriter
        try:
            async for piece in self._response.aiter_raw():
                out = rewriter.feed(piece)
                if out:
                    yield out
            tail = rewriter.close()
        except httpx2.TransportError as exc:
            tail = rewriter.fail(f"the upstream's stream failed: {exc or type(exc).__name__}")
        if tail:
            yield tail

    async def aclose(self) -> None:
        await self._response.aclose()


class ParsingTransport(httpx2.BaseTransport):
    """An ``httpx2`` transport that rewrites chat completions as ``stream-parser serve`` does.

    Args:
        settings: what to do (:class:`~stream_parser.serve.settings.ProxySettings`;
            default: the dialect from each request's ``model``).
        transport: the transport that sends the requests (default: a new
            ``httpx2.HTTPTransport()``).
        cache: registries of requests' tools by content (default: a new cache).
    """

    def __init__(
        self,
        settings: ProxySettings | None = None,
        *,
        transport: httpx2.BaseTransport | None = None,
        cache: RegistryCache | None = None,
    ) -> None:
        self.settings = settings if settings is not None else ProxySettings()
        self._transport = transport if transport is not None else httpx2.HTTPTransport()
        self._cache = cache if cache is not None else RegistryCache()

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send ``request``; a chat completion is rewritten on the way out and back."""
        request.read()
        body = _chat_body(request)
        if body is None:
            return self._transport.handle_request(request)
        try:
            rewriter = ChatRewriter(body, self.settings, self._cache)
        except ConfigError as exc:
            return _refused(request, exc)
        if not rewriter.parsing:
            return self._transport.handle_request(request)
        response = self._transport.handle_request(_rewritten_request(request, rewriter))
        if response.status_code >= 400:
            return response
        if rewriter.streaming:
            return httpx2.Response(
                response.status_code,
                headers=_reply_headers(response),
                stream=_RewrittenStream(response, rewriter),
                extensions=response.extensions,
            )
        try:
            content = rewriter.rewrite_completion(response.read())
        finally:
            response.close()
        return httpx2.Response(
            response.status_code,
            headers=_reply_headers(response),
            content=content,
            extensions=response.extensions,
        )

    def close(self) -> None:
        """Close the wrapped transport."""
        self._transport.close()


class AsyncParsingTransport(httpx2.AsyncBaseTransport):
    """The async twin of :class:`ParsingTransport`, for ``openai.AsyncOpenAI``.

    Args:
        settings: what to do (default: the dialect from each request's ``model``).
        transport: the transport that sends the requests (default: a new
            ``httpx2.AsyncHTTPTransport()``).
        cache: registries of requests' tools by content (default: a new cache).
    """

    def __init__(
        self,
        settings: ProxySettings | None = None,
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
        cache: RegistryCache | None = None,
    ) -> None:
        self.settings = settings if settings is not None else ProxySettings()
        self._transport = transport if transport is not None else httpx2.AsyncHTTPTransport()
        self._cache = cache if cache is not None else RegistryCache()

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        """Send ``request``; a chat completion is rewritten on the way out and back."""
        await request.aread()
        body = _chat_body(request)
        if body is None:
            return await self._transport.handle_async_request(request)
        try:
            rewriter = ChatRewriter(body, self.settings, self._cache)
        except ConfigError as exc:
            return _refused(request, exc)
        if not rewriter.parsing:
            return await self._transport.handle_async_request(request)
        response = await self._transport.handle_async_request(_rewritten_request(request, rewriter))
        if response.status_code >= 400:
            return response
        if rewriter.streaming:
            return httpx2.Response(
                response.status_code,
                headers=_reply_headers(response),
                stream=_AsyncRewrittenStream(response, rewriter),
                extensions=response.extensions,
            )
        try:
            content = rewriter.rewrite_completion(await response.aread())
        finally:
            await response.aclose()
        return httpx2.Response(
            response.status_code,
            headers=_reply_headers(response),
            content=content,
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        """Close the wrapped transport."""
        await self._transport.aclose()
