"""The proxy as an ASGI app: routes, keys and faults around one rewriter per request.

Theory of operation.  The app is thin on purpose: what a reply becomes is decided by
:class:`~stream_parser.serve.rewrite.ChatRewriter` (sans-IO, the same object the in-process
transport uses); this module moves bytes and maps faults.

* ``POST /v1/chat/completions``: the body is read whole and must be a JSON object (else
  400).  A ``ChatRewriter`` is made for it; a request whose ``tools`` cannot be read is
  answered 400 with the rewriter's message and nothing goes upstream.  The rewriter's
  ``upstream_body`` is sent; a streamed answer is fed to the rewriter piece by piece as it
  arrives and what it returns is written at once; a whole answer is rewritten in one go.
  A model name the rewriter does not parse (``parsing`` false) is relayed byte for byte.
* Any other path is relayed: method, query, headers and body up, status, headers and body
  (streamed as it comes) down.  ``/v1/...`` maps to the upstream URL, other paths to the
  same path on the upstream's host.
* ``GET /healthz`` answers 200 without calling the upstream.

Faults, in OpenAI's error format (``{"error": {"message", "type", "param", "code"}}``): an
upstream that cannot be reached is a 502; no first byte within the timeout a 504; an
upstream error status is relayed with its own body.  Once a stream has begun, a fault (the
upstream's silence past the timeout, a connection cut, bytes that are not UTF-8, an end
without a ``finish_reason``) becomes the rewriter's ``data: {"error": ...}`` event after
everything already decided; a call that did not close is never sent.

Each exchange with the upstream runs beside a watch on the client's connection: when the
ASGI server reports ``http.disconnect``, the exchange is cancelled and the upstream
response closed, so the upstream sees its connection go at once rather than generating a
reply nobody reads.  Nothing is kept between requests but the upstream connection pool and
the rewriter's registry cache (keyed by the content of a request's tools), so any number of
workers and replicas serve the same clients.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final

import anyio
import httpx2
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from ..errors import ConfigError
from .config import ServeConfig
from .rewrite import ChatRewriter, RegistryCache

__all__ = ["create_app"]

_log = logging.getLogger("stream_parser.serve")

# Headers that describe one hop, not the message (RFC 9110 section 7.6.1), and those the
# proxy sets itself: never copied from one side to the other.
_HOP_BY_HOP: Final = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-authenticate",
        "proxy-authorization",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
        # uvicorn writes its own on every answer
        "date",
        "server",
    }
)
# On a rewritten reply the body is the proxy's own: the upstream's description of its
# body does not apply.
_BODY_HEADERS: Final = frozenset({"content-type", "content-encoding", "etag", "content-md5"})

_CHAT_PATH: Final = "/v1/chat/completions"

_Exchange = Callable[[Send], Awaitable[None]]


def _error_body(message: str, kind: str, code: str, param: str | None = None) -> dict[str, Any]:
    """An error in OpenAI's format, which every OpenAI SDK reads into its exception."""
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _error(status: int, message: str, kind: str, code: str, param: str | None = None) -> Response:
    return JSONResponse(_error_body(message, kind, code, param), status_code=status)


def _error_event(message: str) -> bytes:
    """A ``data: {"error": ...}`` event: the ``openai`` SDK raises it as ``APIError``."""
    body = _error_body(message, "server_error", "upstream_error")
    return b"data: " + json.dumps(body).encode() + b"\n\n"


class _Upstream:
    """The upstream's address and the one HTTP client that talks to it (per worker)."""

    def __init__(self, config: ServeConfig) -> None:
        self.config = config
        base = httpx2.URL(config.upstream)
        self.base_path = base.path.rstrip("/")
        self.origin = base.copy_with(path="/", query=None, fragment=None)
        self._client: httpx2.AsyncClient | None = None

    @property
    def client(self) -> httpx2.AsyncClient:
        # Made on first use, inside the server's event loop.
        if self._client is None:
            self._client = httpx2.AsyncClient(
                # One timeout for every wait: connecting, the first byte, each later byte.
                timeout=httpx2.Timeout(self.config.timeout),
                # As many streams as clients ask for; the upstream decides what it takes.
                limits=httpx2.Limits(max_connections=None, max_keepalive_connections=100),
                follow_redirects=False,
                # Only what the command says: no proxies or .netrc from the environment.
                trust_env=False,
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def url(self, path: str, query: str) -> httpx2.URL:
        """Where a request for ``path`` goes: ``/v1/...`` under the upstream URL, else its host."""
        under_v1 = path == "/v1" or path.startswith("/v1/")
        target = self.base_path + path[3:] if under_v1 else path
        return self.origin.copy_with(path=target or "/", query=query.encode() or None)

    def headers(self, request: Request, *, rewritten: bool) -> list[tuple[str, str]]:
        """The client's headers as they go upstream: hop-by-hop ones dropped, the key set."""
        out = [
            (name, value)
            for name, value in request.headers.items()
            if name not in _HOP_BY_HOP
            and not (rewritten and name in ("content-type", "accept-encoding"))
            and not (name == "authorization" and self._replaces_authorization)
        ]
        if self.config.upstream_api_key is not None:
            out.append(("authorization", f"Bearer {self.config.upstream_api_key}"))
        if rewritten:
            # The proxy reads the reply: ask for it uncompressed.
            out += [("content-type", "application/json"), ("accept-encoding", "identity")]
        return out

    @property
    def _replaces_authorization(self) -> bool:
        return self.config.api_key is not None or self.config.upstream_api_key is not None


def _reply_headers(response: httpx2.Response, *, rewritten: bool) -> list[tuple[bytes, bytes]]:
    skip = _HOP_BY_HOP | _BODY_HEADERS if rewritten else _HOP_BY_HOP
    return [
        (name.lower(), value)
        for name, value in response.headers.raw
        if name.decode("latin-1").lower() not in skip
    ]


class _Watched(Response):
    """An answer made by an exchange with the upstream, cancelled if the client leaves.

    The exchange sends the status, headers and body itself.  Beside it, the client's
    connection is watched for ``http.disconnect`` (the request body has been read by
    then, so the next message can only be that); when it comes, the exchange is
    cancelled, which closes the upstream response and so its connection.
    """

    def __init__(self, exchange: _Exchange, what: str) -> None:
        self._exchange = exchange
        self._what = what

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async with anyio.create_task_group() as group:

            async def watch() -> None:
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        _log.info(
                            "the client left during %s: upstream request cancelled", self._what
                        )
                        group.cancel_scope.cancel()
                        return

            group.start_soon(watch)
            try:
                await self._exchange(_tolerant(send))
            finally:
                group.cancel_scope.cancel()


def _tolerant(send: Send) -> Send:
    """``send``, but a client gone away mid-write is not an error of the app."""

    async def wrapped(message: Message) -> None:
        with contextlib.suppress(OSError):
            await send(message)

    return wrapped


async def _start(send: Send, status: int, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})


async def _send_whole(send: Send, response: Response) -> None:
    await _start(send, response.status_code, response.raw_headers)
    await send({"type": "http.response.body", "body": response.body, "more_body": False})


async def _open(upstream: _Upstream, request: httpx2.Request, send: Send) -> httpx2.Response | None:
    """Send ``request`` and wait for the reply's head; on failure answer 502 or 504."""
    try:
        return await upstream.client.send(request, stream=True)
    except httpx2.TimeoutException:
        _log.warning(
            "no answer from the upstream %s within %s s", request.url, upstream.config.timeout
        )
        message = f"the upstream sent nothing within {upstream.config.timeout:g} s"
        await _send_whole(send, _error(504, message, "server_error", "upstream_timeout"))
    except httpx2.TransportError as exc:
        _log.warning("the upstream %s could not be reached: %s", request.url, exc)
        message = f"the upstream could not be reached: {exc or type(exc).__name__}"
        await _send_whole(send, _error(502, message, "server_error", "upstream_unreachable"))
    return None


async def _relay_error(response: httpx2.Response, send: Send) -> None:
    """An upstream error status, relayed with its own body and headers."""
    try:
        body = await response.aread()
    except httpx2.TransportError as exc:
        body = json.dumps(
            _error_body(
                f"the upstream answered {response.status_code} and then failed: {exc}",
                "server_error",
                "upstream_error",
            )
        ).encode()
    _log.info("the upstream answered %s", response.status_code)
    await _start(send, response.status_code, _reply_headers(response, rewritten=False))
    await send({"type": "http.response.body", "body": body, "more_body": False})


def _fault(exc: httpx2.TransportError, timeout: float) -> str:
    """What a fault of the upstream's stream means, in words for the client."""
    if isinstance(exc, httpx2.TimeoutException):
        return f"the upstream sent nothing for {timeout:g} s; its reply is incomplete"
    return f"the upstream's reply was cut off ({exc or type(exc).__name__})"


class _Verbatim:
    """A stand-in for the rewriter when a reply is relayed unparsed: bytes as they come."""

    def feed(self, data: bytes) -> bytes:
        return data

    def close(self) -> bytes:
        return b""

    def fail(self, message: str) -> bytes:
        return _error_event(message)


def _chat_exchange(
    upstream: _Upstream, request: httpx2.Request, rewriter: ChatRewriter
) -> _Exchange:
    timeout = upstream.config.timeout

    async def exchange(send: Send) -> None:
        response = await _open(upstream, request, send)
        if response is None:
            return
        try:
            if response.status_code >= 400:
                await _relay_error(response, send)
            elif not rewriter.streaming:
                await _whole_reply(response, rewriter, send, timeout)
            else:
                await _stream_reply(response, rewriter, send, timeout)
        finally:
            with anyio.CancelScope(shield=True):
                await response.aclose()

    return exchange


async def _whole_reply(
    response: httpx2.Response, rewriter: ChatRewriter, send: Send, timeout: float
) -> None:
    try:
        body = await response.aread()
    except httpx2.TransportError as exc:
        status, code = (
            (504, "upstream_timeout")
            if isinstance(exc, httpx2.TimeoutException)
            else (502, "upstream_error")
        )
        await _send_whole(send, _error(status, _fault(exc, timeout), "server_error", code))
        return
    if rewriter.parsing:
        try:
            body = rewriter.rewrite_completion(body)
        except Exception:
            # A bug of ours must not cost the client the model's reply: relay it as it came.
            _log.exception("the reply could not be rewritten; relayed unchanged")
        headers = [
            (b"content-type", b"application/json"),
            *_reply_headers(response, rewritten=True),
        ]
    else:
        headers = _reply_headers(response, rewritten=False)
    await _start(send, response.status_code, headers)
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _stream_reply(
    response: httpx2.Response, rewriter: ChatRewriter, send: Send, timeout: float
) -> None:
    reader: ChatRewriter | _Verbatim = rewriter if rewriter.parsing else _Verbatim()
    if rewriter.parsing:
        headers = [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-cache"),
            # nginx and others buffer a proxied body unless told not to.
            (b"x-accel-buffering", b"no"),
            *_reply_headers(response, rewritten=True),
        ]
    else:
        headers = _reply_headers(response, rewritten=False)
    await _start(send, response.status_code, headers)
    try:
        async for piece in response.aiter_raw():
            out = reader.feed(piece)
            if out:
                await send({"type": "http.response.body", "body": out, "more_body": True})
        tail = reader.close()
    except httpx2.TransportError as exc:
        _log.warning("the upstream's stream failed: %s", exc or type(exc).__name__)
        tail = reader.fail(_fault(exc, timeout))
    except Exception:
        # A bug of ours: the client still learns that its reply is incomplete.
        _log.exception("the reply could not be rewritten")
        tail = _error_event("the proxy failed while rewriting the reply; see its log")
    await send({"type": "http.response.body", "body": tail, "more_body": False})


def _relay_exchange(upstream: _Upstream, request: httpx2.Request) -> _Exchange:
    async def exchange(send: Send) -> None:
        response = await _open(upstream, request, send)
        if response is None:
            return
        try:
            await _start(send, response.status_code, _reply_headers(response, rewritten=False))
            try:
                async for piece in response.aiter_raw():
                    await send({"type": "http.response.body", "body": piece, "more_body": True})
            except httpx2.TransportError as exc:
                # Nothing can be added to a body of unknown form: end it, and log why.
                _log.warning("the upstream's reply to %s failed: %s", request.url, exc)
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            with anyio.CancelScope(shield=True):
                await response.aclose()

    return exchange


def create_app(config: ServeConfig | None = None) -> Starlette:
    """The proxy's ASGI app.

    Args:
        config: the configuration; when None it is read from the environment
            (:meth:`ServeConfig.from_environ`), which is how each of several uvicorn
            workers builds its app: ``uvicorn --factory stream_parser.serve:create_app``.

    Raises:
        ConfigError: no configuration is given and the environment holds none (or an
            invalid one).
    """
    config = ServeConfig.from_environ() if config is None else config
    upstream = _Upstream(config)
    cache = RegistryCache()

    def authorised(request: Request) -> bool:
        if config.api_key is None:
            return True
        scheme, _, given = request.headers.get("authorization", "").partition(" ")
        # compare_digest: the time taken says nothing about how much of a guess was right.
        return scheme.lower() == "bearer" and hmac.compare_digest(
            given.strip().encode(), config.api_key.encode()
        )

    def unauthorised() -> Response:
        return _error(
            401,
            "Incorrect or missing API key: send the proxy's key as 'Authorization: Bearer <key>'.",
            "invalid_request_error",
            "invalid_api_key",
        )

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def chat(request: Request) -> Response:
        if not authorised(request):
            return unauthorised()
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError as exc:  # also bytes that are not UTF-8
            return _error(
                400,
                f"the request body is not valid JSON: {exc}",
                "invalid_request_error",
                "invalid_json",
            )
        if not isinstance(body, dict):
            return _error(
                400,
                f"the request body must be a JSON object, not {type(body).__name__}",
                "invalid_request_error",
                "invalid_json",
            )
        try:
            rewriter = ChatRewriter(body, config.proxy, cache)
        except ConfigError as exc:
            _log.info("request refused: %s", exc)
            return _error(400, str(exc), "invalid_request_error", "invalid_tools", "tools")
        _log.debug(
            "chat completion: model %r, %s, %s",
            body.get("model"),
            "streamed" if rewriter.streaming else "whole",
            "parsed" if rewriter.parsing else "relayed unparsed",
        )
        outgoing = upstream.client.build_request(
            "POST",
            upstream.url(request.url.path, request.url.query),
            content=json.dumps(rewriter.upstream_body, ensure_ascii=False).encode(),
            headers=upstream.headers(request, rewritten=True),
        )
        return _Watched(_chat_exchange(upstream, outgoing, rewriter), "a chat completion")

    async def relay(request: Request) -> Response:
        if not authorised(request):
            return unauthorised()
        outgoing = upstream.client.build_request(
            request.method,
            upstream.url(request.url.path, request.url.query),
            content=await request.body(),
            headers=upstream.headers(request, rewritten=False),
        )
        return _Watched(_relay_exchange(upstream, outgoing), f"{request.method} {request.url.path}")

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        _log.info("proxying %s", config.upstream)
        try:
            yield
        finally:
            await upstream.aclose()

    methods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]
    app = Starlette(
        routes=[
            Route("/healthz", healthz, methods=["GET", "HEAD"]),
            Route(_CHAT_PATH, chat, methods=["POST"]),
            Route("/{path:path}", relay, methods=methods),
        ],
        lifespan=lifespan,
    )
    app.state.config = config
    return app
