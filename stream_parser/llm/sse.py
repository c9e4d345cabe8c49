"""Server-Sent Events from OpenAI-compatible servers, read as every such server sends them.

One reader for everything that takes a chat-completions stream from a server: the
client (:class:`~stream_parser.llm.OpenAIChatModel`) and the proxy
(``stream-parser serve`` and its in-process transports).

Theory of operation
-------------------

:class:`SSEDecoder` splits a body into events with the ``openai`` SDK's rules (CR, LF
or CRLF line ends, even a CRLF cut between two pieces; ``:`` comments; an event with an
``id:`` or ``retry:`` line and no ``data:`` is still dispatched), and keeps what the
SDK's reader drops: the event's name, so that an ``event: error`` frame is seen whatever
its data, and llama.cpp's ``error: {...}`` line.  :func:`event_payload` turns one event
into its JSON payload and raises :class:`StreamFailure` for an error frame or an error
object (OpenAI's ``{"error": ...}``, vLLM's ``{"object": "error"}``), its message led
by a plain statement when the server says the context is exceeded.
:func:`completion_as_chunk` reads a whole ``chat.completion`` (what a server that
ignores ``stream=True`` sends) as one chunk.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..core.kit import read_field

__all__ = [
    "CONTEXT_NOTE",
    "SSEDecoder",
    "SSEEvent",
    "StreamFailure",
    "completion_as_chunk",
    "error_message",
    "event_payload",
    "is_context_overflow",
    "plainly",
    "shorten",
]

_CONTEXT_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
# Phrases (lower case): OpenAI and vLLM ("This model's maximum context length is N
# tokens. However, you requested M tokens"), llama.cpp ("request (N tokens) exceeds the
# available context size (M tokens)"), vLLM's engine ("Prompt length of N is longer than
# the maximum model length of M", "Input prompt (N tokens) is too long and exceeds limit").
_CONTEXT_PHRASES = (
    "maximum context length",
    "context length exceeded",
    "context_length_exceeded",
    "exceeds the available context size",
    "exceed_context_size",
    "longer than the maximum model length",
    "is too long and exceeds limit",
)
CONTEXT_NOTE = "the conversation is too long for the model's context (context length exceeded)"


def is_context_overflow(payload: Any, message: str) -> bool:
    """Whether an error (its decoded body and message) says the context is exceeded."""
    for obj in (payload, read_field(payload, "error")):
        for key in ("code", "type"):
            value = read_field(obj, key)
            if isinstance(value, str) and value.lower() in _CONTEXT_CODES:
                return True
    text = message.lower()
    return any(phrase in text for phrase in _CONTEXT_PHRASES)


def plainly(payload: Any, message: str) -> str:
    """``message``, led by a plain statement when it says the context is exceeded."""
    if is_context_overflow(payload, message):
        return f"{CONTEXT_NOTE}; the server said: {message}"
    return message


class StreamFailure(Exception):
    """A reply that failed in a way worth its own message (an error frame, a bad answer).

    Raised by :func:`event_payload`; the message is a sentence for the caller.
    """


def completion_as_chunk(payload: Any) -> dict[str, Any] | None:
    """A whole ``chat.completion`` rewritten as one chunk (``message`` -> ``delta``)."""
    if not isinstance(payload, Mapping):
        return None
    choices = payload.get("choices")
    if not isinstance(choices, list):
        return None
    converted = []
    for choice in choices:
        message = choice.get("message") if isinstance(choice, Mapping) else None
        if not isinstance(message, Mapping):
            continue
        delta = dict(message)
        calls = message.get("tool_calls")
        if isinstance(calls, list):
            # A whole call has no ``index`` (there is nothing to interleave); give each
            # its position, and arguments sent as a JSON object their string form.
            delta["tool_calls"] = [
                _whole_call(position, call)
                for position, call in enumerate(calls)
                if isinstance(call, Mapping)
            ]
        converted.append(
            {
                "index": choice.get("index", 0),
                "delta": delta,
                "finish_reason": choice.get("finish_reason"),
            }
        )
    if not converted:
        return None
    return {"choices": converted, "usage": payload.get("usage")}


def _whole_call(position: int, call: Mapping[str, Any]) -> dict[str, Any]:
    result = dict(call)
    result.setdefault("index", position)
    function = call.get("function")
    if isinstance(function, Mapping) and isinstance(function.get("arguments"), (Mapping, list)):
        result["function"] = {**function, "arguments": json.dumps(function["arguments"])}
    return result


def shorten(text: str, limit: int = 200) -> str:
    """``text``, cut to ``limit`` characters with ``...`` when it is longer."""
    return text if len(text) <= limit else text[:limit] + "..."


def error_message(payload: Any) -> str | None:
    """The message of an error object (``{"error": ...}``, or vLLM's ``"object": "error"``)."""
    if type(payload) is not dict and not isinstance(payload, Mapping):
        return None
    error = payload.get("error")
    if error:
        if isinstance(error, Mapping):
            message = error.get("message")
            return message if isinstance(message, str) and message else shorten(str(error))
        return shorten(str(error))
    if payload.get("object") == "error":
        message = payload.get("message")
        return message if isinstance(message, str) and message else shorten(str(payload))
    return None


def event_payload(event: SSEEvent) -> Any:
    """The JSON payload of one event; an error frame or an error object is a StreamFailure."""
    if event.error is not None or event.name == "error":
        text = event.data if event.error is None else event.error
        try:
            payload = json.loads(text)
        except ValueError:
            payload = None
        message = error_message(payload)
        if message is None and isinstance(payload, Mapping):
            found = payload.get("message")
            message = found if isinstance(found, str) and found else None
        message = message or shorten(text) or "no details"
        raise StreamFailure(f"the server sent an error in the stream: {plainly(payload, message)}")
    payload = json.loads(event.data)  # not JSON: the caller reports a malformed event
    message = error_message(payload)
    if message is not None:
        raise StreamFailure(f"the server sent an error in the stream: {plainly(payload, message)}")
    return payload


class SSEEvent:
    """One Server-Sent Event: its name, its data, and llama.cpp's ``error:`` line."""

    __slots__ = ("data", "error", "name")

    def __init__(self, name: str | None, data: str, error: str | None) -> None:
        self.name = name
        self.data = data
        self.error = error


_LINE_END = re.compile(b"[\r\n]")


class SSEDecoder:
    """Incremental Server-Sent Events decoding, with the rules of the SDK's decoder.

    Lines end with CR, LF or CRLF (a CRLF may be split between two chunks); each line
    is decoded as UTF-8 (a UnicodeDecodeError is the caller's to report).  A blank line
    dispatches the event if any field was set; ``:`` lines are comments.  Besides the
    standard fields, an ``error`` field (llama.cpp's server writes ``error: {...}``) is
    kept, so that the error is not lost.
    """

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._skip_lf = False
        self._reset()

    def _reset(self) -> None:
        self._name: str | None = None
        self._data: list[str] = []
        self._error: list[str] = []
        self._other = False  # an id: or retry: line

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """The events that ``chunk`` completes (cut anywhere, CRLF included).

        Raises:
            UnicodeDecodeError: a line is not UTF-8.
        """
        events = []
        if not self._skip_lf and b"\r" not in chunk:
            # The usual case (LF line ends, no CRLF cut at the last chunk): split, no regex.
            lines = chunk.split(b"\n")
            rest = lines.pop()
            if lines and self._buffer:
                self._buffer += lines[0]
                lines[0] = bytes(self._buffer)
                self._buffer.clear()
            for line in lines:
                event = self._line(line.decode("utf-8"))
                if event is not None:
                    events.append(event)
            self._buffer += rest
            return events
        start = 0
        for match in _LINE_END.finditer(chunk):
            end = match.start()
            if self._skip_lf and end == start and chunk[end] == 0x0A:
                self._skip_lf = False  # the LF of a CRLF whose CR ended the last chunk
                start = end + 1
                continue
            self._skip_lf = chunk[end] == 0x0D
            self._buffer += chunk[start:end]
            line = bytes(self._buffer)
            self._buffer.clear()
            start = end + 1
            event = self._line(line.decode("utf-8"))
            if event is not None:
                events.append(event)
        if start < len(chunk):
            self._skip_lf = False
            self._buffer += chunk[start:]
        return events

    def finish(self) -> list[SSEEvent]:
        """The end of the body: an event without its closing blank line is dropped."""
        self._buffer.clear()
        self._reset()
        return []

    def _line(self, line: str) -> SSEEvent | None:
        if not line:
            if self._name is None and not self._data and not self._error and not self._other:
                return None
            event = SSEEvent(
                self._name, "\n".join(self._data), "\n".join(self._error) if self._error else None
            )
            self._reset()
            return event
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "event":
            self._name = value or None
        elif field == "data":
            self._data.append(value)
        elif field == "error":
            self._error.append(value)
        elif field == "id":
            self._other = self._other or "\0" not in value
        elif field == "retry":
            self._other = self._other or value.isdigit()
        return None
