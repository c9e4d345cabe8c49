"""One chat-completions request, rewritten: the proxy's and the transports' one rewriter.

:class:`ChatRewriter` is sans-IO: it is given the client's request body, says what to
send upstream (:attr:`~ChatRewriter.upstream_body`), and turns the upstream's reply
bytes, cut anywhere, into the bytes the client gets.  ``stream-parser serve`` (the ASGI
app) and :class:`~stream_parser.serve.transport.ParsingTransport` drive the same object,
so the rewriting exists once.

Theory of operation
-------------------

**The request.**  The dialect is the one named, or with ``"auto"`` the one
:func:`~stream_parser.dialects.dialect_for_model` finds for the request's ``model``; a
name it does not know is relayed unparsed (:attr:`~ChatRewriter.parsing` is False),
logged once per name.  The request's ``tools`` become a registry (any OpenAI tool list,
cached by content in a :class:`RegistryCache`, since clients resend the list every
turn); tools that cannot be read, or a name the dialect cannot carry, raise a
:class:`~stream_parser.errors.ConfigError` and nothing goes upstream.  ``tools``,
``tool_choice`` and ``parallel_tool_calls`` go upstream unchanged (the chat template
needs them); a dialect whose markers are special tokens gets what
:data:`~stream_parser.llm.openai.RAW_OUTPUT_BODY` asks for, under what the client set.
Whether the reply starts inside reasoning follows from the model's family (its
template may open the reasoning itself) and from ``chat_template_kwargs``
(``enable_thinking``, ``thinking``), unless ``start_in_reasoning`` says.

**The reply.**  Server-Sent Events are read with :mod:`stream_parser.llm.sse` (the
client's reader).  Each choice has its own parser and
:class:`~stream_parser.encoders.openai_chunks.ChoiceEncoder`; a chunk's choice goes in as
a :class:`~stream_parser.core.chunks.ChatDelta` (text, reasoning, native call fragments,
which the parser gathers and validates), and what the parser decides comes out as
chunks with the upstream's ``id``, ``created``, ``model`` and ``system_fingerprint``.  A
choice's ``finish_reason`` closes its parser.  A usage chunk passes through.  An error
frame, bytes that are not UTF-8, an event that is not JSON, or an end without a
``finish_reason`` end the reply: what the parser holds is delivered (calls that did not
complete as their text, never as calls), then one ``data: {"error": ...}`` event, which
the ``openai`` SDK raises as ``APIError``.  Nothing here raises on what the upstream
sends.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Final

from ..agent.react import tools_prompt
from ..core.chunks import ChatDelta
from ..core.config import ParserConfig
from ..core.kit import ChunkDeltas
from ..core.parser import StreamToolParser
from ..dialects import get_dialect
from ..dialects.detect import ModelDialect, dialect_for_model, with_reasoning
from ..encoders.openai_chunks import ChoiceEncoder, chunk, completion_message
from ..errors import ConfigError
from ..llm.openai import RAW_OUTPUT_BODY
from ..llm.sse import SSEDecoder, StreamFailure, completion_as_chunk, event_payload
from ..prompts import text as prompts
from ..tools import ToolRegistry, as_registry
from .settings import ProxySettings

__all__ = ["ChatRewriter", "RegistryCache"]

_log = logging.getLogger(__name__)

_DONE: Final = b"data: [DONE]\n\n"

# Model names already logged as unknown (once per name and process).
_UNKNOWN: set[str] = set()


class RegistryCache:
    """Registries made from requests' ``tools``, kept by content (least recent out).

    Clients send the same tool list with every turn; reading it once saves compiling
    every schema again.  Safe to share between threads.

    Args:
        size: how many tool lists to keep.
    """

    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._entries: OrderedDict[str, ToolRegistry] = OrderedDict()
        self._lock = threading.Lock()

    def registry(self, tools: Any) -> ToolRegistry:
        """The registry of a request's ``tools`` (None or empty: no tools).

        Raises:
            ConfigError: the list cannot be read (an invalid schema, a duplicate name...).
        """
        if not tools:
            return ToolRegistry([])
        try:
            key = json.dumps(tools, sort_keys=True, ensure_ascii=False)
        except (TypeError, ValueError):
            return _registry(tools)
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
        made = _registry(tools)
        with self._lock:
            self._entries[key] = made
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)
        return made


def _registry(tools: Any) -> ToolRegistry:
    if not isinstance(tools, list):
        raise ConfigError(f"'tools' must be a list of tool definitions, not {type(tools).__name__}")
    return as_registry(tools)


class _Choice:
    """One choice of the reply: its delta reader, parser and encoder."""

    __slots__ = ("deltas", "encoder", "finished", "parser")

    def __init__(self, index: int, parser: StreamToolParser, settings: ProxySettings) -> None:
        self.deltas = ChunkDeltas(index)
        self.parser = parser
        self.encoder = ChoiceEncoder(
            index, reasoning_field=settings.reasoning_field, bad_calls=settings.bad_calls
        )
        self.finished = False


class ChatRewriter:
    """A chat-completions request and its reply, rewritten (one object per request).

    Args:
        body: the client's request body (a JSON object).
        settings: what to do (:class:`~stream_parser.serve.settings.ProxySettings`).
        cache: registries by content, shared between requests (None: none kept).

    Raises:
        ConfigError: the request's ``tools`` cannot be read, or hold a name the dialect
            cannot carry; the message is for the client (answer 400, send nothing).
    """

    def __init__(
        self,
        body: Mapping[str, Any],
        settings: ProxySettings,
        cache: RegistryCache | None = None,
    ) -> None:
        self.settings = settings
        self.streaming = bool(body.get("stream"))
        """Whether the client asked for a stream."""
        model = body.get("model")
        self.model = model if isinstance(model, str) else ""
        found = dialect_for_model(self.model) if self.model else None
        dialect = settings.dialect
        if dialect == "auto":
            dialect = found.dialect if found is not None else ""
        elif found is not None and found.dialect != dialect:
            found = None  # the family's reasoning belongs to another format
        self.dialect = dialect
        """The dialect the reply is read in (``""`` when it is relayed unparsed)."""
        self.parsing = bool(dialect)
        """False when the model's name is of no known family: bytes pass through."""
        self.upstream_body: dict[str, Any] = dict(body)
        """The request to send upstream."""
        self._choices: dict[int, _Choice] = {}
        self._decoder = SSEDecoder()
        self._ended = False
        self._envelope: dict[str, Any] = {}
        self._prefix = b""  # a chunk's bytes before its one choice entry
        if not self.parsing:
            if self.model not in _UNKNOWN:
                _UNKNOWN.add(self.model)
                _log.warning(
                    "model %r is of no known family: its replies are relayed unparsed "
                    "(name the dialect with --dialect)",
                    self.model,
                )
            return
        tools = (cache or RegistryCache(1)).registry(body.get("tools"))
        self._tools = tools
        self._config = self._parser_config(found, body.get("chat_template_kwargs"))
        # Made once now: a name the dialect cannot carry is refused before anything is
        # sent (and the compiled tables are cached for every choice's parser).
        self._new_parser()
        if settings.raw_output and get_dialect(dialect).special_tokens:
            self._ask_raw_output()
        if settings.render_tools and tools.tools:
            self._render_tools()

    # -- the request -----------------------------------------------------------------------

    def _parser_config(self, found: ModelDialect | None, template_kwargs: Any) -> ParserConfig:
        config = ParserConfig(dialect=self.dialect)
        wanted = self.settings.start_in_reasoning
        if wanted != "auto":
            return dataclasses.replace(config, start_in_thinking=wanted == "yes")
        if found is not None:
            config = with_reasoning(config, found)
        if isinstance(template_kwargs, Mapping) and any(
            template_kwargs.get(key) is False for key in ("enable_thinking", "thinking")
        ):
            # Thinking turned off in the template: the reply starts with its answer.
            config = dataclasses.replace(config, start_in_thinking=False)
        return config

    def _new_parser(self) -> StreamToolParser:
        return StreamToolParser(self._tools, config=self._config)

    def _ask_raw_output(self) -> None:
        body = self.upstream_body
        for key, value in RAW_OUTPUT_BODY.items():
            body.setdefault(key, value)
        kwargs = body.get("chat_template_kwargs")
        if kwargs is None or isinstance(kwargs, Mapping):
            body["chat_template_kwargs"] = {
                "spaces_between_special_tokens": False,
                **(kwargs or {}),
            }

    def _render_tools(self) -> None:
        """Tools for a server that ignores them: in the instructions, and the history written.

        The tools go into the system message (or, with ``instructions_role="user"``, at
        the start of the first user message) in the dialect's words, as a
        ``ReActAgent`` writes them; ``tools`` and ``tool_choice`` are not sent.  An
        assistant message's ``tool_calls`` become the calls written as the dialect
        writes a turn's calls (``format_calls``: one array for xlam, one section for
        kimi), and ``tool`` messages become one user message of observations, the
        text the ReAct agent sends.
        """
        body = self.upstream_body
        for key in ("tools", "tool_choice", "parallel_tool_calls"):
            body.pop(key, None)
        dialect = get_dialect(self.dialect)
        instructions = tools_prompt(dialect, self._tools)
        messages = body.get("messages")
        if not isinstance(messages, list):
            return
        written: list[Any] = []
        names: dict[str, str] = {}  # call id -> tool name, for the tool messages
        observations: dict[str, Any] | None = None  # the user message being gathered
        for message in messages:
            role = message.get("role") if isinstance(message, Mapping) else None
            if role == "tool":
                name = names.get(str(message.get("tool_call_id")), "tool")
                seen = prompts.result_observation(name, _text_of(message.get("content")))
                if observations is None:
                    observations = {"role": "user", "content": seen}
                    written.append(observations)
                else:  # the results of one turn's calls: one message, as the agent sends
                    observations["content"] += "\n\n" + seen
                continue
            observations = None
            if role == "assistant" and message.get("tool_calls"):
                written.append(_written_calls(message, dialect, names))
            else:
                written.append(message)
        role = self.settings.instructions_role
        body["messages"] = _with_instructions(written, instructions, role)

    # -- a streamed reply ------------------------------------------------------------------

    def feed(self, data: bytes) -> bytes:
        """The client's bytes for the upstream's next bytes (any cut; maybe ``b""``)."""
        if self._ended:
            return b""
        try:
            events = self._decoder.feed(data)
        except UnicodeDecodeError:
            return self.fail("the upstream sent bytes that are not UTF-8")
        out: list[bytes] = []
        for event in events:
            if event.error is None and event.name != "error" and event.data.startswith("[DONE]"):
                continue
            try:
                payload = event_payload(event)
            except StreamFailure as exc:
                return b"".join(out) + self.fail(str(exc))
            except ValueError:
                preview = event.data[:200]
                return b"".join(out) + self.fail(
                    f"the upstream sent an event that is not JSON: {preview!r}"
                )
            self._payload(payload, out)
        return b"".join(out)

    def close(self) -> bytes:
        """The upstream's stream ended: what is left, and ``[DONE]`` (or an error event)."""
        if self._ended:
            return b""
        open_choices = [c for c in self._choices.values() if not c.finished]
        if not self._choices:
            return self.fail("the upstream's stream ended without sending any chunk")
        if open_choices:
            return self.fail("the upstream's stream ended without a finish_reason")
        self._ended = True
        return _DONE

    def fail(self, message: str) -> bytes:
        """A fault mid-stream: what the parsers hold, then one error event.

        Calls still open are delivered as their text (never as calls); the error event
        is the last thing sent.
        """
        if self._ended:
            return b""
        self._ended = True
        out: list[bytes] = []
        for choice in self._choices.values():
            if choice.finished:
                continue
            choice.finished = True
            events = choice.parser.feed_delta(ChatDelta(error=message))
            events += choice.parser.close()
            out += map(self._chunk, choice.encoder.encode(events))
        error = {"error": {"message": message, "type": "upstream_error", "code": "upstream_error"}}
        out.append(b"data: " + json.dumps(error, ensure_ascii=False).encode() + b"\n\n")
        return b"".join(out)

    def _payload(self, payload: Any, out: list[bytes]) -> None:
        # Per chunk: exact-type tests first (a decoded chunk is a dict), the ABC only after.
        if type(payload) is not dict and not isinstance(payload, Mapping):
            return
        if not self._envelope:
            self._envelope = _envelope(payload, self.model)
        choices = payload.get("choices")
        if type(choices) is list:
            for raw in choices:
                is_map = type(raw) is dict or isinstance(raw, Mapping)
                index = raw.get("index", 0) if is_map else 0
                if type(index) is not int or index < 0:
                    index = 0
                self._choice_chunk(index, payload, out)
        usage = payload.get("usage")
        if usage is not None and isinstance(usage, Mapping):
            usage_chunk = chunk([], usage=usage, **self._envelope)
            out.append(_data(usage_chunk))

    def _choice_chunk(self, index: int, payload: Mapping[str, Any], out: list[bytes]) -> None:
        choice = self._choices.get(index)
        entries: list[dict[str, Any]] = []
        if choice is None:
            choice = self._choices[index] = _Choice(index, self._new_parser(), self.settings)
            entries.append(choice.encoder.start())
        if choice.finished:
            return
        delta = choice.deltas.delta(payload)
        if delta is not None:
            if delta.usage is not None:  # usage passes through as it came
                delta = dataclasses.replace(delta, usage=None)
            events = choice.parser.feed_delta(delta)
            if delta.finish_reason is not None:
                events += choice.parser.close()
            entries += choice.encoder.encode(events)
            if delta.finish_reason is not None:
                choice.finished = True
                entries.append(choice.encoder.finish(delta.finish_reason))
        for entry in entries:
            out.append(self._chunk(entry))

    def _chunk(self, entry: dict[str, Any]) -> bytes:
        # One choice entry a chunk: clients merge a chunk's choices by index, and two
        # entries of one choice in one chunk are not what any server sends.  The
        # envelope is the same for every chunk: encoded once, as the start of each.
        if not self._prefix:
            envelope = self._envelope or _envelope({}, self.model)
            whole = _data(chunk([{}], **envelope))  # b'data: {..., "choices": [{}]}\n\n'
            self._prefix = whole[: -len(b"{}]}\n\n")]
        return self._prefix + json.dumps(entry, ensure_ascii=False).encode() + b"]}\n\n"

    # -- a whole reply ---------------------------------------------------------------------

    def rewrite_completion(self, body: bytes) -> bytes:
        """The client's ``chat.completion`` for the upstream's whole one.

        A body that is not a chat completion (an error object, something else) is
        returned as it came.
        """
        try:
            payload = json.loads(body)
        except ValueError:
            return body
        as_chunk = completion_as_chunk(payload)
        if as_chunk is None or not isinstance(payload, Mapping):
            return body
        result = copy.copy(dict(payload))
        result_choices = []
        for raw in as_chunk["choices"]:
            index = raw.get("index", 0)
            index = index if isinstance(index, int) and not isinstance(index, bool) else 0
            encoder = ChoiceEncoder(
                index,
                reasoning_field=self.settings.reasoning_field,
                bad_calls=self.settings.bad_calls,
            )
            parser = self._new_parser()
            delta = ChunkDeltas(index).delta({"choices": [raw]})
            events = parser.feed_delta(delta) if delta is not None else []
            events += parser.close()
            reason = delta.finish_reason if delta is not None else None
            entries = [encoder.start(), *encoder.encode(events), encoder.finish(reason)]
            message, finish = completion_message(
                entries, reasoning_field=self.settings.reasoning_field
            )
            original = next(
                (
                    c
                    for c in payload.get("choices", [])
                    if isinstance(c, Mapping) and c.get("index", 0) == index
                ),
                {},
            )
            result_choices.append(
                {**original, "index": index, "message": message, "finish_reason": finish}
            )
        result["choices"] = result_choices
        return json.dumps(result, ensure_ascii=False).encode()


def _written_calls(message: Mapping[str, Any], dialect: Any, names: dict[str, str]) -> Any:
    """An assistant message with its native calls written into its text, as the dialect does.

    The calls are written together by the dialect's ``format_calls``, so that a format
    whose model writes a turn's calls in one structure (one array, one section) shows
    them so; a call whose arguments are no JSON object is said as it came, on a line of
    its own, between the runs of calls around it.
    """
    parts = [str(message.get("content") or "")]
    run: list[tuple[str, Mapping[str, Any]]] = []  # the calls written together
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping):
            continue
        name = str(function.get("name") or "")
        names[str(call.get("id"))] = name
        raw = function.get("arguments")
        try:
            arguments = json.loads(raw) if isinstance(raw, str) else raw
        except ValueError:
            arguments = None
        if isinstance(arguments, Mapping):
            run.append((name, arguments))
            continue
        if run:
            parts.append(_calls_text(dialect, run))
            run = []
        parts.append(f"{name}({raw})")  # arguments that are no JSON object: as they came
    if run:
        parts.append(_calls_text(dialect, run))
    text = "\n".join(part for part in parts if part)
    return {
        key: value for key, value in message.items() if key not in ("tool_calls", "content")
    } | {"content": text}


def _calls_text(dialect: Any, calls: list[tuple[str, Mapping[str, Any]]]) -> str:
    """The calls as the dialect writes them, or, when it cannot, one ``name(json)`` a line.

    A value the format cannot carry (its own closing markup) is the client's history,
    not a programmer's error: it is said plainly rather than refused.
    """
    try:
        return str(dialect.format_calls(calls))
    except ValueError:
        _log.debug("a past call cannot be written in %s: written as name(arguments)", dialect)
        return "\n".join(
            f"{name}({json.dumps(dict(args), ensure_ascii=False, default=str)})"
            for name, args in calls
        )


def _text_of(content: Any) -> str:
    """A message's content as text (the text parts of a list of parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, Mapping) and part.get("type") == "text"
        )
    return "" if content is None else str(content)


def _with_instructions(messages: list[Any], instructions: str, role: str) -> list[Any]:
    """``messages`` with ``instructions`` in the system message or the first user message."""
    if role == "user":
        for index, message in enumerate(messages):
            if isinstance(message, Mapping) and message.get("role") == "user":
                content = message.get("content")
                if isinstance(content, list):
                    new: Any = [{"type": "text", "text": instructions}, *content]
                else:
                    new = f"{instructions}\n\n{_text_of(content)}"
                messages[index] = {**message, "content": new}
                return messages
        return [{"role": "user", "content": instructions}, *messages]
    first = messages[0] if messages else None
    if isinstance(first, Mapping) and first.get("role") in ("system", "developer"):
        messages[0] = {**first, "content": f"{_text_of(first.get('content'))}\n\n{instructions}"}
        return messages
    return [{"role": "system", "content": instructions}, *messages]


def _envelope(payload: Mapping[str, Any], model: str) -> dict[str, Any]:
    """The identity every chunk keeps: the upstream's own, or made up when missing."""
    chunk_id = payload.get("id")
    created = payload.get("created")
    name = payload.get("model")
    fingerprint = payload.get("system_fingerprint")
    return {
        "id": chunk_id if isinstance(chunk_id, str) and chunk_id else "chatcmpl-proxy",
        "created": created if isinstance(created, int) else int(time.time()),
        "model": name if isinstance(name, str) and name else model,
        "system_fingerprint": fingerprint if isinstance(fingerprint, str) else None,
    }


def _data(obj: Mapping[str, Any]) -> bytes:
    return b"data: " + json.dumps(obj, ensure_ascii=False).encode() + b"\n\n"
