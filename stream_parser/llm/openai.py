r"""An OpenAI-compatible chat model on the official ``openai`` SDK (the ``openai`` extra).

:class:`OpenAIChatModel` streams a reply from any server that speaks the OpenAI chat
completions protocol (OpenAI itself, vLLM, SGLang, Ollama, llama.cpp's ``llama-server``,
DeepSeek, Qwen on DashScope, ...) and turns each ``ChatCompletionChunk`` into a
provider-neutral :class:`~stream_parser.core.chunks.ChatDelta`:

* ``choices[0].delta.content`` -> ``content`` (``delta.refusal`` text is appended to it);
* ``delta.reasoning_content`` or ``delta.reasoning`` (whichever the server sends) ->
  ``reasoning``;
* ``delta.tool_calls[i]`` -> ``tool_calls`` (index, id, function name, arguments piece);
* ``choices[0].finish_reason`` -> ``finish_reason``;
* ``usage`` (in the last chunk) -> ``usage``, as a plain dict.

Only the first choice is streamed (``n > 1`` is not supported).  Chunks that carry
nothing (the opening ``role`` chunk, keep-alives) are skipped; fields the SDK does not
know are ignored unless listed above.

Theory of operation
-------------------

The SDK sends the request: it serialises it, retries it (``max_retries``) and turns an
HTTP error status into an exception.  The answer's body is then read here, from the
SDK's HTTP response, so that everything a server may send is seen:

* a ``text/event-stream`` body is split into Server-Sent Events with the SDK's rules
  (CR, LF or CRLF line ends, ``:`` comments ignored, an event with an ``id:`` or
  ``retry:`` line but no ``data:`` is dispatched with empty data, which is not JSON);
  unlike the SDK's own reader, the event name is kept, so an ``event: error`` frame is
  seen whatever its data, as is llama.cpp's ``error: {...}`` line;
* an ``application/json`` body (a server that ignored ``stream=True`` and sent a whole
  ``chat.completion``) is read as the reply, in one delta; a JSON error object sent with
  status 200 is reported as the server's error;
* a JSON string may hold half of a UTF-16 surrogate pair (``"\ud83d"``) and the next
  event the other half: a trailing high surrogate is held back per channel (content,
  reasoning, each call's arguments) and joined with the next piece; a surrogate without
  its pair becomes U+FFFD, so every delta's text is valid Unicode;
* ``reply_timeout`` bounds the whole reply, from the request to the last byte, while
  the SDK's ``timeout`` bounds each read: a server that sends keep-alive comments
  forever is cut off.

Failures come in two kinds.  Until the server has answered with a success status,
:meth:`OpenAIChatModel.stream` raises :class:`~stream_parser.llm.ModelError`: HTTP 4xx
/ 5xx after the SDK's retries, connection refused, timeout, no answer within
``reply_timeout``, a request that cannot be built or sent; when the server says the
conversation does not fit in the model's context, the error is a
:class:`~stream_parser.llm.ContextLengthError`.  Once it has answered,
nothing raises: a dropped connection, a malformed event, an error frame, an error JSON
answer, ``reply_timeout`` running out mid-reply or a stream that ends without a
``finish_reason`` (how a cut connection can look) ends the stream with one final
``ChatDelta(error=...)``, after everything that arrived before it.  After such an
abnormal end the connection is closed rather than returned to the SDK's pool, so a
server left in a bad state cannot fail the next request.

Each request is logged to ``stream_parser.llm.openai`` (at INFO: the model, the number
of messages and the other options; at DEBUG: the messages), and so is each reply's end
(INFO: finish reason, usage, duration) and each error (INFO too: the caller is given it,
raised or as the last delta, and decides whether it deserves a warning).

Lone surrogates in the request (text cut out of a UTF-16 source, or decoded with
``surrogateescape``) cannot be encoded as UTF-8; they are sent as U+FFFD, in a copy: the
caller's messages are not changed.

The ``openai`` package is imported only when a model is created, so this module can be
imported without it.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import os
import threading
import time
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from types import MappingProxyType, ModuleType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..core.chunks import ChatDelta
from ..core.kit import ChunkDeltas, fix_surrogates, read_field
from ..errors import ConfigError
from .base import ContextLengthError, Message, ModelError
from .sse import CONTEXT_NOTE as _CONTEXT_NOTE
from .sse import SSEDecoder as _SSEDecoder
from .sse import StreamFailure as _Failure
from .sse import completion_as_chunk as _completion_as_chunk
from .sse import error_message as _error_message
from .sse import event_payload as _event_payload
from .sse import is_context_overflow as _is_context_overflow
from .sse import plainly as _plainly
from .sse import shorten as _shorten

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletionChunk

__all__ = ["RAW_OUTPUT_BODY", "OpenAIChatModel"]

_INSTALL_HINT = (
    "OpenAIChatModel needs the 'openai' package; "
    "install it with: python -m pip install openai "
    "(or, in a checkout of stream_parser: python -m pip install '.[openai]')"
)

# What is passed as a keyword when the installed SDK's ``chat.completions.create`` has no
# readable signature: only the SDK's own request options.  Every other option then goes
# into ``extra_body``, which the SDK merges into the JSON it sends, so the request is the
# same (the real list is read from the SDK, see ``_known_parameters``).
_FALLBACK_PARAMETERS = frozenset({"extra_headers", "extra_query", "timeout"})

# Handled by the model itself, never passed through as-is.
_OWN_PARAMETERS = frozenset(
    {
        "messages",
        "model",
        "stream",
        "stream_options",
        "tools",
        "extra_body",
        "reply_timeout",
        "raw_output",
    }
)

# The options handled by the model that a caller may give (besides the SDK's own).
_REQUEST_OPTIONS = frozenset({"extra_body", "stream_options", "reply_timeout", "raw_output"})

RAW_OUTPUT_BODY: Mapping[str, Any] = MappingProxyType(
    {"skip_special_tokens": False, "spaces_between_special_tokens": False}
)
"""What ``raw_output=True`` adds to the request body (vLLM's and SGLang's names).

By default these servers decode a reply without its special tokens, and with a space
between special tokens where they keep them: a dialect whose markers are special tokens
(``[TOOL_CALLS]``, ``<|python_tag|>``) would reach the parser without them, or with
spaces the model never wrote.  vLLM reads both fields at the top of the body; SGLang
reads ``skip_special_tokens`` there and ``spaces_between_special_tokens`` from
``chat_template_kwargs``, so it is set in both places.  A field the caller sets itself
wins (in ``chat_template_kwargs`` too).
"""

# After ``data: [DONE]`` the rest of the body (normally just the end of the chunked
# encoding) is read for at most this long, so that the connection can be reused.
_DRAIN_SECONDS = 0.25

_T = TypeVar("_T")

# Under ``stream_parser``, which has a NullHandler: silent unless configured.
_log = logging.getLogger(__name__)


def _import_openai() -> ModuleType:
    try:
        import openai
    except ImportError as exc:  # pragma: no cover - the test extra installs openai
        raise ImportError(_INSTALL_HINT) from exc
    return openai


class OpenAIChatModel:
    """A :class:`~stream_parser.llm.ChatModel` for any OpenAI-compatible server.

    Example::

        model = OpenAIChatModel("Qwen/Qwen3-8B", base_url="http://localhost:8000/v1")
        async with model:
            async for delta in model.stream([{"role": "user", "content": "Hi"}]):
                print(delta.content or "", end="")

    Every request is sent with ``stream=True`` and
    ``stream_options={"include_usage": True}`` (pass ``stream_options=None`` to leave it
    out for a server that rejects it).  Options are ``defaults`` merged with the
    per-call ``options`` (per-call wins): those the SDK's ``create()`` knows
    (``temperature``, ``max_tokens``, ``tool_choice``, ``extra_headers``, ``timeout``,
    ...) are passed as they are; any other (``top_k``, ``chat_template_kwargs``,
    ``enable_thinking``, ...) goes into the JSON body through ``extra_body``.  A
    ``model`` option overrides the model for one call, a ``reply_timeout`` option the
    model's ``reply_timeout``, a ``raw_output`` option the model's ``raw_output``.

    Args:
        model: the model name the server knows.
        base_url: the server's OpenAI-compatible root, e.g.
            ``"http://localhost:8000/v1"``.  None means OpenAI (or ``OPENAI_BASE_URL``).
        api_key: the key to send.  When None: with no ``base_url``, the
            ``OPENAI_API_KEY`` environment variable; with a ``base_url``, the placeholder
            ``"EMPTY"`` (local servers ignore it; the SDK refuses to run without one).
            The OpenAI key is never sent to a third-party ``base_url`` by default.
        client: an ``openai.AsyncOpenAI`` to use instead of building one; the caller
            keeps ownership of it (:meth:`aclose` does not close it).  Cannot be
            combined with ``base_url``, ``api_key``, ``max_retries`` or ``timeout``.
            Its connections belong to the event loop that first uses it: a request
            from another loop is a :class:`~stream_parser.errors.ConfigError` (a model
            that builds its own client builds one per event loop instead).
        max_retries: how many times the SDK retries a failed request (429, 5xx,
            connection errors) before :class:`~stream_parser.llm.ModelError` is
            raised; None keeps the SDK's default (2).  Use 0 in tests.
        timeout: the SDK's request timeout in seconds; None keeps its default.  It
            bounds the connection and each read, not the whole reply.
        reply_timeout: seconds the whole reply may take, from sending the request to
            its last byte; None (the default) for no bound.  Past it, a reply not yet
            started raises :class:`~stream_parser.llm.ModelError` and a streaming one
            ends with ``ChatDelta(error=...)``.
        raw_output: ask the server for the model's text as it was generated, special
            tokens included: the request body gets ``skip_special_tokens: false`` and
            ``spaces_between_special_tokens: false`` (:data:`RAW_OUTPUT_BODY`; the
            latter also in ``chat_template_kwargs``, where SGLang reads it), which
            vLLM and SGLang understand.  Needed by a dialect whose markers are special
            tokens (:attr:`~stream_parser.dialects.Dialect.special_tokens`); a
            ``ReActAgent`` speaking one asks for it per request.  Leave it off for
            OpenAI itself, which rejects fields it does not know.  See
            ``docs/dialects.md`` for what each server needs besides (its own tool
            parser off).
        **defaults: request options sent with every call.

    One model may be used from several event loops, one after another or at once (the
    caller's ``asyncio.run(...)``, then a sync decorated function, which runs on the
    library's own loop in another thread): an SDK client's pooled connections belong to
    the loop that opened them, so the model keeps one client per event loop, made on
    first use there.  :meth:`aclose` closes them all.

    Raises:
        ImportError: if the ``openai`` package is not installed.
        ConfigError: if ``client`` is combined with connection arguments,
            ``reply_timeout`` is not a positive number, or ``raw_output`` not a bool.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: AsyncOpenAI | None = None,
        max_retries: int | None = None,
        timeout: float | None = None,
        reply_timeout: float | None = None,
        raw_output: bool = False,
        **defaults: Any,
    ) -> None:
        if not model:
            raise ConfigError("OpenAIChatModel needs a model name")
        if "stream" in defaults:
            raise ConfigError("OpenAIChatModel always streams; do not pass 'stream'")
        self.model = model
        self.reply_timeout = _check_reply_timeout(reply_timeout)
        self.raw_output = _check_raw_output(raw_output)
        """Whether every request asks for the raw output (see ``raw_output``)."""
        self._defaults = dict(defaults)
        if client is not None:
            given = [
                name
                for name, value in (
                    ("base_url", base_url),
                    ("api_key", api_key),
                    ("max_retries", max_retries),
                    ("timeout", timeout),
                )
                if value is not None
            ]
            if given:
                raise ConfigError(
                    f"pass either client or {', '.join(given)}, not both "
                    "(configure the client itself, e.g. with client.with_options())"
                )
            self._client = client
            self._owns_client = False
            self._client_options: dict[str, Any] = {}
        else:
            openai = _import_openai()
            if api_key is None:
                env_key = os.environ.get("OPENAI_API_KEY") if base_url is None else None
                api_key = env_key or "EMPTY"
            client_options: dict[str, Any] = {"api_key": api_key, "base_url": base_url}
            if max_retries is not None:
                client_options["max_retries"] = max_retries
            if timeout is not None:
                client_options["timeout"] = timeout
            self._client = openai.AsyncOpenAI(**client_options)
            self._owns_client = True
            self._client_options = client_options
        self._known = _known_parameters(self._client)
        # The client of each event loop that used the model.  The first client (above)
        # waits for the first loop; weak keys: a loop that is gone takes its entry along.
        self._loop_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncOpenAI] = (
            weakref.WeakKeyDictionary()
        )
        self._unclaimed: AsyncOpenAI | None = self._client
        self._clients_lock = threading.Lock()

    @property
    def client(self) -> AsyncOpenAI:
        """The ``openai.AsyncOpenAI`` client of the running event loop.

        Outside a running loop, or on a loop the model has not used yet, the first
        client (the one given as ``client=``, or the first one made).
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return self._client
        return self._loop_clients.get(loop, self._client)

    def _client_of_loop(self) -> AsyncOpenAI:
        """The client for the running event loop, made on first use there."""
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            client = self._loop_clients.get(loop)
            if client is not None:
                return client
            if self._unclaimed is not None:
                client, self._unclaimed = self._unclaimed, None
            elif self._owns_client:
                client = _import_openai().AsyncOpenAI(**self._client_options)
            else:
                raise ConfigError(
                    "the client given to OpenAIChatModel(client=...) belongs to the event "
                    "loop that first used it, and this request comes from another one; "
                    "let the model build its own client (base_url=..., api_key=...), "
                    "which it does once per event loop, or use it from one loop only"
                )
            self._loop_clients[loop] = client
            return client

    @property
    def request_option_names(self) -> frozenset[str]:
        """The request options :meth:`stream` takes as keywords, by name.

        The installed SDK's parameters of ``chat.completions.create`` (``temperature``,
        ``max_tokens``, ``tool_choice``, ``timeout``, ``extra_headers``...), besides
        ``extra_body`` and ``stream_options``, and the model's own ``reply_timeout`` and
        ``raw_output``.  ``@llm_function`` and ``@llm_chat`` read it to tell a request
        option given as a keyword (``temperature=0.2``) from a misspelled one of theirs.

        Any other option reaches the server in ``extra_body`` as well; give such an
        option in ``model_options`` (or ``extra_body``) to a decorator.
        """
        return self._known | _REQUEST_OPTIONS

    @property
    def defaults(self) -> dict[str, Any]:
        """A copy of the request options sent with every call."""
        return dict(self._defaults)

    def __repr__(self) -> str:
        return f"OpenAIChatModel(model={self.model!r}, base_url={str(self._client.base_url)!r})"

    async def aclose(self) -> None:
        """Close the HTTP clients this model created (a given ``client`` stays open).

        The client of the running loop, and those of loops that are not running, are
        closed here; a client whose loop is running in another thread is closed on that
        loop.  Used again afterwards, the model makes a fresh client for each loop.
        """
        if not self._owns_client:
            return
        with self._clients_lock:
            owners = {id(client): loop for loop, client in self._loop_clients.items()}
            clients = list(self._loop_clients.values())
            if self._unclaimed is not None:
                clients.append(self._unclaimed)
            # Used again after this, the model makes a fresh client for each loop.
            self._loop_clients = weakref.WeakKeyDictionary()
            self._unclaimed = None
        here = asyncio.get_running_loop()
        for client in clients:
            loop = owners.get(id(client))
            if loop is not None and loop is not here and loop.is_running():
                # Its connections belong to that loop: close them there.
                done = asyncio.run_coroutine_threadsafe(client.close(), loop)
                with contextlib.suppress(Exception):
                    await asyncio.wrap_future(done)
                continue
            with contextlib.suppress(Exception):
                # On a loop that is closed, its sockets are gone with it; closing can fail.
                await client.close()

    async def __aenter__(self) -> OpenAIChatModel:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        **options: Any,
    ) -> AsyncIterator[ChatDelta]:
        """Stream one reply as :class:`~stream_parser.core.chunks.ChatDelta` items.

        Args:
            messages: the conversation, in the OpenAI chat format.  Lone surrogates in
                it are sent as U+FFFD (in a copy; ``messages`` is not changed).
            tools: OpenAI tool definitions for native tool calls; an empty sequence is
                the same as None (the field is left out).
            **options: request options for this call, over the model's defaults.

        Yields:
            Deltas in arrival order; the last is the ``finish_reason`` delta or the
            usage report, or ``ChatDelta(error=...)`` if the reply ended abnormally
            (dropped connection, malformed event, error frame, ``reply_timeout``, no
            ``finish_reason``).

        Raises:
            ModelError: (when first iterated) the server answered with an HTTP error
                after the SDK's retries, could not be reached, did not answer within
                ``reply_timeout``, or the request could not be built or sent.
            ConfigError: ``stream`` was passed as an option, or a bad ``reply_timeout``.
        """
        return cast("AsyncIterator[ChatDelta]", self._reply(messages, tools, options, False))

    def stream_with_chunks(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        **options: Any,
    ) -> AsyncIterator[ChatDelta | ChatCompletionChunk]:
        """Stream one reply as :meth:`stream` does, each delta after the SDK chunk it came from.

        Every Server-Sent Event the server sent (but ``[DONE]`` and error frames) gives
        one ``openai.types.chat.ChatCompletionChunk``, made as the SDK's own stream
        reader makes it (so validated only when the client was built with
        ``_strict_response_validation``, and with the fields the SDK does not declare
        kept, in ``model_extra``), in the order the events came.  The chunk comes first,
        then the :class:`~stream_parser.core.chunks.ChatDelta` read from it, when it
        gives one (a role-only chunk gives none).  A whole ``chat.completion`` sent as
        JSON instead of a stream gives one chunk, made from it.  A failure ends the
        stream with ``ChatDelta(error=...)``, as :meth:`stream` does.

        Args:
            messages: the conversation, in the OpenAI chat format.
            tools: OpenAI tool definitions for native tool calls.
            **options: request options for this call, over the model's defaults.

        Raises:
            ModelError: as :meth:`stream`.
            ConfigError: as :meth:`stream`.
        """
        return self._reply(messages, tools, options, True)

    async def _reply(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] | None,
        options: Mapping[str, Any],
        with_chunks: bool,
    ) -> AsyncGenerator[Any, None]:
        """The reply's deltas, each after its SDK chunk when ``with_chunks``."""
        openai = _import_openai()
        request, reply_timeout = self._request(messages, tools, options)
        clock = _Clock(reply_timeout)
        client = self._client_of_loop()
        create: Any = client.chat.completions.create
        _log_request(request)
        started = time.monotonic()
        try:
            sdk_stream: Any = await _send(openai, create, request, clock)
        except ModelError as exc:
            # INFO, not WARNING: the caller gets the error raised and decides about it.
            _log.info(
                "model %s: no reply (%.2f s): %s", request["model"], time.monotonic() - started, exc
            )
            raise

        response: Any = sdk_stream.response
        body = _Body(response, clock)
        mapper = ChunkDeltas()
        chunk_of = _sdk_chunks(openai, client, response) if with_chunks else None
        deltas: AsyncGenerator[Any, None]
        if _media_type(response) == "application/json":
            deltas = _json_answer(body, mapper, chunk_of)
        else:
            deltas = _event_stream(body, mapper, chunk_of)
        error: str | None = None
        finished = False
        finish_reason: str | None = None
        usage: dict[str, Any] | None = None
        logged = False
        try:
            try:
                async for delta in deltas:
                    if delta is None:
                        continue
                    if not isinstance(delta, ChatDelta):  # an SDK chunk (with_chunks)
                        yield delta
                        continue
                    if delta.finish_reason is not None:
                        finished = True
                        finish_reason = delta.finish_reason
                    if delta.usage is not None:
                        usage = delta.usage
                    yield delta
                if body.done:
                    await body.drain()
            except _Failure as exc:
                error = str(exc)
            except _Expired:
                error = f"the reply took longer than reply_timeout ({reply_timeout:g} s)"
            except Exception as exc:
                # A dropped connection, bytes that are not UTF-8, an event that is not
                # JSON: the reply ends here, and nothing raises once it has started.
                error = f"transport error mid-reply: {_describe(exc)}"
            rest = mapper.flush()
            if rest is not None:
                yield rest
            if error is None and not finished:
                error = "the stream ended without a finish_reason"
                if not body.received:
                    error += (
                        " (the server sent no data; with llama.cpp this usually means the "
                        "prompt is longer than the server's context size)"
                    )
            elapsed = time.monotonic() - started
            if error is not None:
                error = fix_surrogates(error)  # it may quote the server, surrogates included
                # INFO: the caller gets the error as the reply's last delta.
                _log.info(
                    "model %s: reply failed (%.2f s, finish_reason=%s, usage=%s): %s",
                    request["model"],
                    elapsed,
                    finish_reason,
                    usage,
                    error,
                )
            else:
                _log.info(
                    "model %s: reply ended (%.2f s): finish_reason=%s, usage=%s",
                    request["model"],
                    elapsed,
                    finish_reason,
                    usage,
                )
            logged = True
            if error is not None:
                yield ChatDelta(error=error)
        finally:
            if not logged:
                _log.info(
                    "model %s: reply closed by the caller before its end (%.2f s)",
                    request["model"],
                    time.monotonic() - started,
                )
            with contextlib.suppress(Exception):
                await deltas.aclose()  # the consumer may have stopped early
            # Reuse the connection only after a reply that ended as it should; after
            # anything else the server may be in a state that fails the next request.
            await body.release(reuse=error is None and body.eof)

    def _request(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] | None,
        options: Mapping[str, Any],
    ) -> tuple[dict[str, Any], float | None]:
        """The keyword arguments of ``create()``, and the reply's time bound."""
        merged = {**self._defaults, **options}
        if "stream" in merged:
            raise ConfigError("OpenAIChatModel always streams; do not pass 'stream'")
        reply_timeout = _check_reply_timeout(merged.pop("reply_timeout", self.reply_timeout))
        request: dict[str, Any] = {
            "model": merged.pop("model", self.model),
            "messages": _valid_unicode([_sendable(message) for message in messages]),
            "stream": True,
        }
        stream_options = merged.pop("stream_options", {})
        if stream_options is not None:
            request["stream_options"] = {"include_usage": True, **stream_options}
        if tools:
            request["tools"] = _valid_unicode(list(tools))
        raw_output = _check_raw_output(merged.pop("raw_output", self.raw_output))
        extra_body = dict(merged.pop("extra_body", None) or {})
        if raw_output:
            # Under what the caller set, in extra_body or as an option (added below).
            extra_body = {**RAW_OUTPUT_BODY, **extra_body}
        for key, value in merged.items():
            if key in self._known:
                request[key] = _valid_unicode(value)
            else:
                extra_body[key] = value
        if raw_output:
            template_kwargs = extra_body.get("chat_template_kwargs")
            if template_kwargs is None or isinstance(template_kwargs, Mapping):
                extra_body["chat_template_kwargs"] = {
                    "spaces_between_special_tokens": False,
                    **(template_kwargs or {}),
                }
        if extra_body:
            request["extra_body"] = _valid_unicode(extra_body)
        return request, reply_timeout


def _sendable(message: Message) -> Any:
    """A message as every server takes it.

    An assistant message that holds only tool calls has ``content`` None (or none at
    all) in the OpenAI format, and llama.cpp's server answers such a request with HTTP
    500 (its schema wants a string); ``""`` means the same to every server.  A copy: the
    history keeps what the format allows.
    """
    if (
        isinstance(message, Mapping)
        and message.get("role") == "assistant"
        and message.get("tool_calls")
        and message.get("content") is None
    ):
        return {**message, "content": ""}
    return message


async def _send(openai: ModuleType, create: Any, request: dict[str, Any], clock: _Clock) -> Any:
    """Send the request through the SDK; every failure to get an answer is a ModelError."""
    try:
        return await clock.wait(create(**request))
    except openai.APIStatusError as exc:
        raise _status_error(exc) from exc
    except openai.APIError as exc:
        raise ModelError(_describe(exc)) from exc
    except _Expired as exc:
        raise ModelError(f"no answer within reply_timeout ({clock.seconds:g} s)") from exc
    except Exception as exc:
        # Whatever else fails while the SDK builds or sends the request (a value
        # JSON cannot encode, a header that is not Latin-1, ...) is still a request
        # that could not be made, not a bug of the caller's loop.
        raise ModelError(f"the request could not be sent: {_describe(exc)}") from exc


def _log_request(request: Mapping[str, Any]) -> None:
    """Log a request: a summary at INFO, the messages themselves at DEBUG."""
    if not _log.isEnabledFor(logging.INFO):
        return
    messages = request.get("messages") or []
    options: dict[str, Any] = {}
    for key, value in request.items():
        if key in ("model", "messages"):
            continue
        if key == "tools":
            # The definitions can be long; their names say which were offered.
            value = [read_field(read_field(tool, "function"), "name") for tool in value]
        elif key == "extra_headers" and isinstance(value, Mapping):
            value = sorted(value)  # header names only: values may hold credentials
        options[key] = value
    _log.info(
        "model %s: request with %d messages, options %s", request["model"], len(messages), options
    )
    if _log.isEnabledFor(logging.DEBUG):
        _log.debug("model %s: messages %s", request["model"], _json_for_log(messages))


def _json_for_log(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except ValueError:  # a circular structure; the SDK reports it as it sends
        return repr(value)


def _known_parameters(client: Any) -> frozenset[str]:
    """The keyword parameters the installed SDK's ``chat.completions.create`` accepts."""
    try:
        parameters = inspect.signature(client.chat.completions.create).parameters
    except (TypeError, ValueError):  # pragma: no cover - C-implemented or odd wrappers
        return _FALLBACK_PARAMETERS
    names = {
        name
        for name, parameter in parameters.items()
        if parameter.kind in (parameter.KEYWORD_ONLY, parameter.POSITIONAL_OR_KEYWORD)
    }
    return frozenset(names - _OWN_PARAMETERS) or _FALLBACK_PARAMETERS


def _check_raw_output(value: object) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"raw_output must be True or False, not {value!r}")
    return value


def _check_reply_timeout(value: object) -> float | None:
    """``value`` if it is None or a positive number of seconds; else a ConfigError."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise ConfigError(f"reply_timeout must be a positive number of seconds, got {value!r}")
    return float(value)


def _describe(exc: BaseException) -> str:
    """``Type: message``, plus the underlying cause the SDK wrapped, if any."""
    text = f"{type(exc).__name__}: {exc}"
    cause = exc.__cause__
    if cause is not None and str(cause) and str(cause) not in text:
        text += f" ({type(cause).__name__}: {cause})"
    return text


# How servers say that a request does not fit in the model's context.  Codes and types:
# OpenAI's ``context_length_exceeded``, llama.cpp's ``exceed_context_size_error``.
def _status_error(exc: Any) -> ModelError:
    """A :class:`ModelError` (or ContextLengthError) from an ``openai.APIStatusError``."""
    body = getattr(exc, "body", None)
    message = read_field(body, "message")
    if not isinstance(message, str) or not message:
        message = str(getattr(exc, "message", "") or exc)
    headers = getattr(getattr(exc, "response", None), "headers", None) or {}
    error_type = ModelError
    if _is_context_overflow(body, message):
        error_type = ContextLengthError
        message = f"{_CONTEXT_NOTE}; the server said: {message}"
    return error_type(
        message,
        status_code=getattr(exc, "status_code", None),
        body=body,
        retry_after=_retry_after(headers),
    )


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or a numeric ``retry-after`` header."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return float(value) / scale
        except ValueError:
            continue
    return None


# --- chunk -> ChatDelta ---------------------------------------------------------------------
#
# The SDK builds chunks without validation, so a misbehaving server can put anything
# anywhere: every field is read defensively (a wrong type counts as absent), and fields
# the SDK does not declare are read from ``model_extra`` (``getattr`` also finds them).


# --- Unicode: lone surrogates -----------------------------------------------------------------
#
# A server's text may hold lone surrogates (see ``fix_surrogates`` in the core's
# ``sdk_items``, which also joins pairs split between events).


def _valid_unicode(value: Any) -> Any:
    """A copy of a JSON-like value whose strings are valid Unicode (see _fix_surrogates).

    Containers are rebuilt (the caller's objects are never changed); anything that is not
    a string, mapping, list or tuple is returned as it is.
    """
    if isinstance(value, str):
        return fix_surrogates(value)
    if isinstance(value, Mapping):
        return {
            fix_surrogates(key) if isinstance(key, str) else key: _valid_unicode(item)
            for key, item in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_valid_unicode(item) for item in value]
    return value


# --- reading the answer -----------------------------------------------------------------------


class _Expired(Exception):
    """``reply_timeout`` ran out."""


class _Clock:
    """The deadline of one reply (``reply_timeout``), applied to every wait.

    A bound is put around each single wait rather than around the whole generator: a
    cancel scope must not stay open across a ``yield``.  The scopes are anyio's (the SDK
    depends on it), so the client works under any event loop the SDK supports.
    """

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._deadline: float | None = None

    async def wait(self, awaitable: Awaitable[_T], cap: float | None = None) -> _T:
        """Await ``awaitable`` until the deadline (or ``cap`` seconds); else _Expired."""
        import anyio

        now = anyio.current_time()
        if self.seconds is not None and self._deadline is None:
            self._deadline = now + self.seconds  # the clock starts with the request
        limit = None if self._deadline is None else max(0.0, self._deadline - now)
        if cap is not None:
            limit = cap if limit is None else min(limit, cap)
        if limit is None:
            return await awaitable
        with anyio.move_on_after(limit):
            return await awaitable
        raise _Expired


class _Body:
    """The body of the HTTP answer, read in byte chunks under the reply's deadline.

    Attributes:
        received: some bytes arrived.
        done: ``data: [DONE]`` was seen (set by the reader).
        eof: the body was read to its end.
    """

    def __init__(self, response: Any, clock: _Clock) -> None:
        self._response = response
        self._clock = clock
        self._chunks: AsyncIterator[bytes] = response.aiter_bytes()
        self.received = False
        self.done = False
        self.eof = False

    async def next(self) -> bytes | None:
        """The next chunk, or None at the end of the body."""
        if self.eof:
            return None
        try:
            data = await self._clock.wait(self._chunks.__anext__())
        except StopAsyncIteration:
            self.eof = True
            return None
        if data:
            self.received = True
        return data

    async def drain(self) -> None:
        """Read what follows ``[DONE]`` for a moment, so the connection can be reused."""
        with contextlib.suppress(Exception):
            while await self._clock.wait(self.next(), cap=_DRAIN_SECONDS) is not None:
                pass

    async def release(self, *, reuse: bool) -> None:
        """Close the answer; unless ``reuse``, close its connection too."""
        if not reuse:
            # An HTTP/1.1 answer read to its end goes back to the pool; closing its
            # socket first makes the pool drop the connection instead of reusing it.
            network = getattr(self._response, "extensions", {}).get("network_stream")
            if network is not None:
                with contextlib.suppress(Exception):
                    await network.aclose()
        with contextlib.suppress(Exception):
            await self._response.aclose()


def _media_type(response: Any) -> str:
    """The answer's media type, lower-cased, without parameters."""
    headers = getattr(response, "headers", None) or {}
    value = headers.get("content-type") or ""
    return str(value).split(";", 1)[0].strip().lower()


def _sdk_chunks(openai: ModuleType, client: Any, response: Any) -> Callable[[Any], Any]:
    """What makes a ``ChatCompletionChunk`` of a payload, as the SDK's stream reader does."""
    chunk_type = openai.types.chat.ChatCompletionChunk
    process = getattr(client, "_process_response_data", None)
    if process is None:  # pragma: no cover - every SDK since 1.0 has it
        return lambda payload: chunk_type.construct(**payload)

    def make(payload: Any) -> Any:
        return process(data=payload, cast_to=chunk_type, response=response)

    return make


async def _event_stream(
    body: _Body, mapper: ChunkDeltas, chunk_of: Callable[[Any], Any] | None = None
) -> AsyncGenerator[Any, None]:
    """The deltas of a Server-Sent Events body, until ``[DONE]`` or its end.

    With ``chunk_of``, each event's SDK chunk comes before its delta.
    """
    decoder = _SSEDecoder()
    while True:
        data = await body.next()
        events = decoder.feed(data) if data is not None else decoder.finish()
        for event in events:
            if event.error is None and event.name != "error" and event.data.startswith("[DONE]"):
                body.done = True
                return
            payload = _event_payload(event)
            if chunk_of is not None:
                yield chunk_of(payload)
            yield mapper.delta(payload)
        if data is None:
            return


async def _json_answer(
    body: _Body, mapper: ChunkDeltas, chunk_of: Callable[[Any], Any] | None = None
) -> AsyncGenerator[Any, None]:
    """The delta of a whole ``chat.completion`` sent as JSON instead of a stream."""
    pieces = []
    while (data := await body.next()) is not None:
        pieces.append(data)
    raw = b"".join(pieces)
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        raise _Failure(
            f"the server answered with JSON instead of a stream, and it does not parse: {exc}"
        ) from exc
    message = _error_message(payload)
    if message is not None:
        raise _Failure(
            "the server answered with an error instead of a stream: " + _plainly(payload, message)
        )
    chunk = _completion_as_chunk(payload)
    if chunk is None:
        raise _Failure(
            "the server answered with JSON that is not a chat completion instead of a "
            f"stream: {_shorten(raw.decode('utf-8', 'replace'))}"
        )
    if chunk_of is not None:
        yield chunk_of(chunk)
    delta = mapper.delta(chunk)
    if delta is None or delta.finish_reason is None:
        # Report it as what it is (the answer is whole), not as a cut stream.
        if delta is not None:
            yield delta
        raise _Failure("the server's JSON answer has no finish_reason")
    yield delta
