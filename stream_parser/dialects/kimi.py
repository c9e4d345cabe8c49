r"""The kimi dialect: Moonshot's Kimi models, K2 (special tokens and JSON) and K3 (XTML).

Kimi K2 (K2-Instruct, K2-Thinking, K2.5, Kimi-Linear) writes its calls in a section of
special tokens, each call's arguments one JSON object (on one line, shown in three)::

    <|tool_calls_section_begin|>
    <|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>{"path": "a.py"}
    <|tool_call_end|><|tool_calls_section_end|>

``functions.NAME:IDX`` is the call's id (the ``functions.`` prefix is sometimes
missing); ``IDX`` counts the calls of the conversation.  Kimi K3 writes XTML, a tag
language on three control tokens, with one typed element per argument (on one line,
shown in four)::

    <|open|>tools<|sep|><|open|>call tool="read_file" index="1"<|sep|>
    <|open|>argument key="path" type="string"<|sep|>a.py<|close|>argument<|sep|>
    <|close|>call<|sep|>
    <|close|>tools<|sep|>

Both read as one dialect: each call opens with its own marker, so what the model wrote
tells them apart.  Reasoning is ``<think>…</think>`` (K2) or
``<|open|>think<|sep|>…<|close|>think<|sep|>`` (K3); the chat templates may open it in
the prompt, so a reply may start inside reasoning and show only the closing tag.

Theory of operation
-------------------

Three plugins read a reply (:meth:`KimiDialect.make_plugin`):

* :class:`KimiK2Plugin` reads one K2 call, from ``<|tool_call_begin|>`` to
  ``<|tool_call_end|>``, with :class:`KimiK2Reader`: the header up to
  ``<|tool_call_argument_begin|>`` (bounded) names the tool, which is then announced
  (:class:`~stream_parser.core.events.ToolCallStartEvent` with the header as
  ``call_id``); the arguments follow the core's
  :class:`~stream_parser.core.json_scan.JsonScanner` and stream verbatim as
  :class:`~stream_parser.core.events.ToolArgumentsDeltaEvent`\ s.  A
  ``<|tool_call_end|>`` inside a JSON string is content.
* :class:`KimiK3Plugin` reads one K3 call, from ``<|open|>call`` to
  ``<|close|>call<|sep|>``, with :class:`KimiK3Reader`, a state machine: the call's
  attributes up to ``<|sep|>`` (``tool=``, ``index=``; ``&quot;`` and ``&amp;``
  decoded), then argument elements, each value streamed as
  :class:`~stream_parser.core.events.ToolParamDeltaEvent`\ s up to its
  ``<|close|>argument<|sep|>``, or one ``<|open|>json type="object"<|sep|>`` element
  holding all arguments as JSON (streamed as arguments deltas).  The reader holds back
  only what may be the start of a marker (a few characters), or a header (at most
  :data:`MAX_HEADER` characters): linear time.
* :class:`KimiFramingPlugin` reads the markup around calls and replies
  (``<|tool_calls_section_begin|>``, ``<|open|>tools<|sep|>``,
  ``<|close|>response<|sep|>``, ``<|close|>message<|sep|>``, ``<|im_end|>``...) as
  :class:`~stream_parser.core.events.FramingEvent`\ s: they tile the input but are
  never text.

Every call comes out as a :class:`~stream_parser.core.events.ToolCallEvent` spanning
it, or as an error and its raw text: ``malformed_tool`` (no
``<|tool_call_argument_begin|>``, a header that names no tool, arguments that are not
one JSON object, K3 markup out of place), ``unknown_tool``, ``invalid_params``
(validation by the tool's model), ``unclosed_tool`` (the stream ended inside the call:
never run) or ``tool_too_large``.  A K3 argument the tool does not have gives
``unknown_param`` and is dropped; one given twice gives ``duplicate_param`` and the last
value wins (the call still runs).  Argument values are converted by the tool's field
types: a K3 ``type="string"`` value is the raw text (converted by the field's type when
the field is not a string), any other type is JSON.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final, Literal

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from ..core.events import (
    ErrorType,
    FramingEvent,
    ParseEvent,
    Span,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
)
from ..core.kit import (
    CallContext,
    FastData,
    JsonScanner,
    ParsePlugin,
    PluginBlock,
    Reader,
    ReaderPlugin,
    ThinkingFormat,
    ValueRun,
    failure,
    refuse_chunk,
    register,
    tag_stop,
)
from ..errors import ConfigError
from ..schema.coerce import coerce_value
from ._base import Dialect

if TYPE_CHECKING:
    from ..schema.validation import ToolBuildResult

__all__ = [
    "K2_FRAMING_TAGS",
    "K3_FRAMING_TAGS",
    "KIMI_THINKING",
    "MAX_HEADER",
    "KimiDialect",
    "KimiFramingPlugin",
    "KimiK2Plugin",
    "KimiK2Reader",
    "KimiK3Plugin",
    "KimiK3Reader",
    "format_k2_call",
    "format_k3_call",
    "k2_tool_name",
]

# --- K2 markers ------------------------------------------------------------------------
SECTION_BEGIN: Final = "<|tool_calls_section_begin|>"
SECTION_END: Final = "<|tool_calls_section_end|>"
CALL_BEGIN: Final = "<|tool_call_begin|>"
ARGUMENT_BEGIN: Final = "<|tool_call_argument_begin|>"
CALL_END: Final = "<|tool_call_end|>"

# --- K3 markers ------------------------------------------------------------------------
OPEN: Final = "<|open|>"
CLOSE: Final = "<|close|>"
SEP: Final = "<|sep|>"
K3_CALL_OPEN: Final = OPEN + "call"
K3_CALL_CLOSE: Final = CLOSE + "call" + SEP
_ARG_OPEN: Final = OPEN + "argument"
_ARG_CLOSE: Final = CLOSE + "argument" + SEP
_JSON_OPEN: Final = OPEN + "json"
_JSON_CLOSE: Final = CLOSE + "json" + SEP
# What an element's value must not hold for the fast path: its closing marker, whole or
# cut by the end of the chunk.
_ARG_CLOSE_STOP: Final = tag_stop((_ARG_CLOSE,))
_JSON_CLOSE_STOP: Final = tag_stop((_JSON_CLOSE,))
_K3_RUN_STOP: Final = "<"
"""Every marker begins with it: a value's chunk without one is all value."""

K2_FRAMING_TAGS: Final = (
    SECTION_BEGIN,
    SECTION_END,
    # The singular spelling: some K2 checkpoints and servers write it.
    "<|tool_call_section_begin|>",
    "<|tool_call_section_end|>",
    "<|im_end|>",
)
"""K2 markup that is neither text nor a call: the tool-call section and the end of turn."""

K3_FRAMING_TAGS: Final = (
    OPEN + "tools" + SEP,
    CLOSE + "tools" + SEP,
    OPEN + "response" + SEP,
    CLOSE + "response" + SEP,
    CLOSE + "message" + SEP,
    "<|end_of_msg|>",
)
"""K3 channel markup around the reply's text and calls, and the end of the message."""

KIMI_THINKING: Final = ThinkingFormat(
    (("<think>", "</think>"), (OPEN + "think" + SEP, CLOSE + "think" + SEP)),
    bare_close=True,
)
"""K2's ``<think>…</think>`` and K3's think channel; the template may open either."""

MAX_HEADER: Final = 1024
"""The longest call header (K2 id, K3 attributes) read before the call is malformed."""

_WS: Final = " \t\r\n"
_DECODER: Final = json.JSONDecoder(strict=False)  # lenient: models write raw control chars
_ATTR: Final = re.compile(r'([A-Za-z_][\w.-]*)="([^"]*)"')
_INDEX: Final = re.compile(r"[0-9]+")
_SANITISED: Final = re.compile(r"functions_([A-Za-z0-9_.-]+?)_[0-9]+")


def _unescape(value: str) -> str:
    """An XTML attribute value: the template escapes ``"`` and ``&`` only."""
    return value.replace("&quot;", '"').replace("&amp;", "&")


def _escape(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;")


def k2_tool_name(header: str) -> str | None:
    r"""The tool a K2 call header names, or None when it names none.

    Example:
        >>> k2_tool_name(" functions.read_file:3 \n"), k2_tool_name("read_file:0")
        ('read_file', 'read_file')
        >>> k2_tool_name("functions_read_file_3")
        'read_file'
        >>> k2_tool_name("functions.a b:0") is None
        True
    """
    name = header.strip(_WS)
    sanitised = _SANITISED.fullmatch(name)
    if sanitised:  # functions_NAME_IDX: an id a client rewrote, echoed back by the model
        return sanitised.group(1)
    if name.startswith("functions."):
        name = name[len("functions.") :]
    head, colon, index = name.rpartition(":")
    if colon and _INDEX.fullmatch(index):
        name = head
    if not name or any(c in name for c in " \t\r\n<>\"'{}"):
        return None
    return name


def _decode_json(text: str) -> tuple[object, str]:
    """One JSON value and nothing else, or why not."""
    start = len(text) - len(text.lstrip(_WS))
    try:
        value, end = _DECODER.raw_decode(text, start)
    except (ValueError, RecursionError) as exc:
        return None, f"is not valid JSON ({exc})"
    rest = text[end:].strip(_WS)
    if rest:
        return None, f"has text after its JSON value: {rest[:20]!r}"
    return value, ""


def _built(
    call: CallContext, name: str, result: ToolBuildResult, block: PluginBlock, call_id: str | None
) -> list[ParseEvent]:
    """The call, or ``invalid_params`` and its raw text."""
    if result.instance is None:
        return failure(
            ErrorType.INVALID_PARAMS, result.message, block, result.errors, call.call_index
        )
    return [
        ToolCallEvent(
            tool_name=name,
            tool_instance=result.instance,
            raw=block.raw,
            call_index=call.call_index,
            call_id=call_id,
            span=block.span,
        )
    ]


def _unknown(call: CallContext, name: str, block: PluginBlock) -> list[ParseEvent]:
    return call.unknown_tool(name, block)


# === K2 ================================================================================


class KimiK2Reader(Reader):
    """Reads one K2 call: ``functions.NAME:IDX<|tool_call_argument_begin|>{...}``."""

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self._header: list[str] = []  # the header's pieces while it is read
        self._in_args = False
        self._too_long = False
        self._name = ""
        self._call_id: str | None = None
        self._scanner = JsonScanner(keep_text=False)
        self._streaming = False  # inside the JSON value
        self._deltas = call.emit_deltas
        # The JSON's chunks that the scanner takes whole, streamed by the core.
        self._run = ValueRun(scanner=self._scanner, arguments=True)

    def feed(self, data: str, start: int, out: list[ParseEvent]) -> None:
        """Read the header until the argument marker, then follow the JSON."""
        if not self._in_args:
            if self._too_long:
                return
            # The header is bounded (MAX_HEADER), so joining it again costs constant time.
            prev = "".join(self._header)
            full = prev + data
            found = full.find(ARGUMENT_BEGIN, max(0, len(prev) - len(ARGUMENT_BEGIN) + 1))
            if found < 0:
                self._header.append(data)
                self._too_long = len(full) > MAX_HEADER
                return
            self._header = []
            self._in_args = True
            after = found + len(ARGUMENT_BEGIN) - len(prev)  # in ``data``
            self._announce(full[:found], (start - len(prev), start + after), out)
            data, start = data[after:], start + after
        self._follow(data, start, out)

    def _announce(self, header: str, span: Span, out: list[ParseEvent]) -> None:
        name = k2_tool_name(header)
        if name is None:
            return
        self._name = name
        self._call_id = header.strip(_WS)
        if name in self.call.tool_registry:
            self.announced = True
            out.append(self.call.start(name, span, self._call_id))

    def _follow(self, data: str, start: int, out: list[ParseEvent]) -> None:
        """Follow the JSON structure; stream the value's text while it lasts."""
        if not data or self._scanner.done:
            return
        base = self._scanner.position  # the scanner's offset of data[0]
        begin = 0 if self._streaming else -1
        end = len(data)
        for mark in self._scanner.feed(data):
            if mark.kind == "start":
                begin = mark.start - base
                self._streaming = True
            elif mark.kind == "end":
                end = mark.end - base
                self._streaming = False
                break
        if begin >= 0 and begin < end and self.announced and self.call.emit_deltas:
            out.append(
                ToolArgumentsDeltaEvent(
                    tool_name=self._name,
                    delta=data[begin:end],
                    call_index=self.call.call_index,
                    call_id=self._call_id,
                    span=(start + begin, start + end),
                )
            )

    def fast_path(self) -> FastData | None:
        """Inside the JSON value (a string, a nested value), a chunk is skipped whole."""
        self._run.armed = False
        if not (self._streaming and self._scanner.skips):
            return None
        if self.announced and self._deltas:
            self._run.arm_json(self._scanner, self._name, self.call.call_index, self._call_id)
            return None, refuse_chunk, self._scanner.in_string  # the run takes what it can
        return None, self._plain, self._scanner.in_string  # a string holds the end tag

    def value_run(self) -> ValueRun | None:
        """The JSON, which the core streams while the scanner takes a chunk whole."""
        return self._run

    def _plain(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`_follow` for a chunk the scanner skips: all of it is arguments."""
        return self._scanner.skip(data)

    def accepts_end(self) -> bool:
        """``<|tool_call_end|>`` inside a JSON string is content."""
        scanner = self._scanner
        return not (self._in_args and not scanner.done and scanner.in_string)

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """Parse the closed call once: its header, then its JSON arguments."""
        header, marker, arguments = block.content.partition(ARGUMENT_BEGIN)
        if not marker:
            return self._malformed(f"{ARGUMENT_BEGIN} is missing", block)
        name = k2_tool_name(header)
        if name is None:
            return self._malformed(f"the call id {header.strip(_WS)[:40]!r} names no tool", block)
        model = self.call.tool_registry.get(name)
        if model is None:
            return _unknown(self.call, name, block)
        if arguments.strip(_WS):
            value, unreadable = _decode_json(arguments)
            if unreadable:
                return self._malformed(f"the arguments of {name!r} {unreadable}", block)
        else:
            value = {}  # a call without arguments
        if not isinstance(value, dict):
            return self._malformed(f"the arguments of {name!r} are not a JSON object", block)
        result = self.call.validate(name, model, value)
        return _built(self.call, name, result, block, header.strip(_WS))

    def _malformed(self, why: str, block: PluginBlock) -> list[ParseEvent]:
        return failure(
            ErrorType.MALFORMED_TOOL,
            f"malformed tool call: {why}; expected {CALL_BEGIN}functions.NAME:IDX"
            f"{ARGUMENT_BEGIN}{{...}}{CALL_END}; it is not executed",
            block,
            call_index=self.error_index,
        )


# === K3 ================================================================================

# The reader's states.
_HEADER, _BODY, _ELEMENT, _VALUE, _JSON, _MALFORMED = range(6)


class KimiK3Reader(Reader):
    """Reads one K3 call: `` tool="NAME" index="N"<|sep|>`` and its argument elements."""

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self._state = _HEADER
        self._hold = ""  # text not decided yet (a header, or what may start a marker)
        self._name = ""
        self._call_id: str | None = None
        self._key = ""  # the argument being read
        self._type = ""
        # Values are kept as their offsets in the stream, and taken from the call's text
        # when it is built, so that they are not kept a second time while they stream.
        self._value_from = 0  # where the open element's value begins; the run, where it ends
        # The open element's value, which the core streams itself while a chunk holds no
        # "<" (armed while its chunks stream as deltas).
        self._run = ValueRun(_K3_RUN_STOP)
        self._args: dict[str, tuple[str, int, int]] = {}  # key -> (type, value's offsets)
        self._json: tuple[int, int] | None = None  # where a json element's text is
        self._known = True  # the argument being read is a parameter of the tool
        self._why = ""
        self._stream = False  # the fast path's chunks stream as deltas (see fast_path)

    def feed(self, data: str, start: int, out: list[ParseEvent]) -> None:
        """Run the state machine over what is held and ``data``."""
        if self._state == _MALFORMED:
            return
        buf = self._hold + data
        base = start - len(self._hold)
        pos = 0
        n = len(buf)
        while pos < n and self._state != _MALFORMED:
            state = self._state
            if state in (_HEADER, _ELEMENT):
                found = buf.find(SEP, pos)
                if found < 0:
                    if n - pos > MAX_HEADER:
                        self._malformed("a tag without its <|sep|>")
                    break
                self._tag(buf[pos:found], (base + pos, base + found + len(SEP)), out)
                pos = found + len(SEP)
            elif state == _BODY:
                k = pos
                while k < n and buf[k] in _WS:
                    k += 1
                pos = k
                if k == n:
                    break
                rest = buf[k : k + len(_ARG_OPEN)]
                if rest.startswith(_ARG_OPEN) or rest.startswith(_JSON_OPEN + " "):
                    self._state = _ELEMENT
                elif _ARG_OPEN.startswith(rest) or (_JSON_OPEN + " ").startswith(rest):
                    break  # a tag may be starting: wait for more
                else:
                    self._malformed("expected an <|open|>argument element")
            else:  # _VALUE or _JSON: up to the element's closing marker
                close = _ARG_CLOSE if state == _VALUE else _JSON_CLOSE
                found = buf.find(close, pos)
                stop = found if found >= 0 else n - self.cut_marker(buf, pos, close)
                self._take(buf, pos, stop, base, out)
                if found < 0:
                    pos = stop
                    break
                self._end_value()
                pos = found + len(close)
        self._hold = buf[pos:] if self._state != _MALFORMED else ""

    def _tag(self, text: str, span: Span, out: list[ParseEvent]) -> None:
        """The text of a call header (state HEADER) or an element header (ELEMENT)."""
        if self._state == _HEADER:
            attrs = {k: _unescape(v) for k, v in _ATTR.findall(text)}
            name = attrs.get("tool", "")
            if not name or text[:1] not in _WS:
                self._malformed('expected <|open|>call tool="NAME"')
                return
            self._name = name
            index = attrs.get("index")
            self._call_id = None if index is None else f"{name}:{index}"
            self._state = _BODY
            if name in self.call.tool_registry:
                self.announced = True
                out.append(self.call.start(name, span, self._call_id))
            return
        attrs = {k: _unescape(v) for k, v in _ATTR.findall(text)}
        if text.startswith(_JSON_OPEN + " "):
            if self._json is not None or self._args:
                self._malformed("a json element beside other arguments")
                return
            self._json = (span[1], span[1])
            self._state = _JSON
        elif "key" in attrs:
            self._key = key = attrs["key"]
            self._type = attrs.get("type", "string")
            self._state = _VALUE
            self._known = True
            if self.announced:
                self._check_param(key, span, text, out)
        else:
            self._malformed('expected <|open|>argument key="NAME"')
            return
        self._value_from = span[1]
        self._run.open(self._name, self._key, self.call.call_index, span[1], self._call_id)

    def _check_param(self, key: str, span: Span, tag: str, out: list[ParseEvent]) -> None:
        """Report a parameter the tool does not have (dropped) or one given twice."""
        call = self.call
        names = call.xml_parser.param_names(self._name)
        if key not in names:
            self._known = False
            known = ", ".join(sorted(names)) or "none"
            why = (
                f"tool {self._name!r} has no parameter {key!r}; it is ignored (parameters: {known})"
            )
            out.append(call.side_error(ErrorType.UNKNOWN_PARAM, why, span, tag))
        elif key in self._args:
            why = f"parameter {key!r} of tool {self._name!r} is given twice; the last value wins"
            out.append(call.side_error(ErrorType.DUPLICATE_PARAM, why, span, tag))

    def _take(self, buf: str, begin: int, end: int, base: int, out: list[ParseEvent]) -> None:
        """``buf[begin:end]`` is part of the open element's value: keep and stream it."""
        if begin >= end:
            return
        self._run.end = base + end
        if not (self.announced and self.call.emit_deltas and self._known):
            return
        piece = buf[begin:end]
        span = (base + begin, base + end)
        if self._state == _VALUE:
            out.append(self.call.param_delta(self._name, self._key, piece, span))
        else:
            out.append(
                ToolArgumentsDeltaEvent(
                    tool_name=self._name,
                    delta=piece,
                    call_index=self.call.call_index,
                    call_id=self._call_id,
                    span=span,
                )
            )

    def fast_path(self) -> FastData | None:
        """Inside an element's value, only its closing marker matters.

        A chunk without it (whole, or its start cut by the chunk's end) is all value,
        as :meth:`feed` would find; the block's end tag is not content there.
        """
        state = self._state
        if self._hold or (state != _VALUE and state != _JSON):
            return None
        # Fixed while the fast path runs: whether the chunks stream, and the call's index.
        self._stream = self.announced and self.call.emit_deltas and self._known
        run = self._run
        run.call_index = self.call.call_index
        run.arguments = state == _JSON  # a json element streams as arguments deltas
        run.armed = self._stream
        if state == _VALUE:
            return _ARG_CLOSE_STOP, self._plain_value, False
        return _JSON_CLOSE_STOP, self._plain_json, False

    def value_run(self) -> ValueRun | None:
        """The open element's value: the core streams its chunks without ``<``."""
        return self._run

    def _plain_value(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`feed` for a chunk of an argument's value without its closing marker."""
        self._run.end = end = start + len(data)
        if self._stream:
            out.append(self.call.param_delta(self._name, self._key, data, (start, end)))
        return True

    def _plain_json(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`feed` for a chunk of a json element without its closing marker."""
        self._run.end = end = start + len(data)
        if self._stream:
            out.append(self.call.arguments_delta(self._name, data, (start, end), self._call_id))
        return True

    def _end_value(self) -> None:
        if self._state == _VALUE:
            if self._json is not None:
                self._malformed("an argument beside a json element")
                return
            if self._known:
                self._args[self._key] = (self._type, self._value_from, self._run.end)
        else:
            self._json = (self._value_from, self._run.end)
        self._state = _BODY

    def _malformed(self, why: str) -> None:
        self._state = _MALFORMED
        self._why = why
        self._hold = ""

    def accepts_end(self) -> bool:
        """``<|close|>call<|sep|>`` inside an argument's value is content."""
        return self._state not in (_VALUE, _JSON)

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """Convert the arguments by the tool's field types and validate them."""
        state = self._state
        if state != _BODY or self._hold.strip(_WS):
            why = {
                _MALFORMED: self._why,
                _HEADER: 'expected <|open|>call tool="NAME" ...<|sep|>',
            }.get(state, "an element is not closed")
            return failure(
                ErrorType.MALFORMED_TOOL,
                f"malformed tool call: {why}; it is not executed and its text is delivered as text",
                block,
                call_index=self.error_index,
            )
        name = self._name
        model = self.call.tool_registry.get(name)
        if model is None:
            return _unknown(self.call, name, block)
        if self._json is not None:
            text = block.between(*self._json)
            value, unreadable = _decode_json(text) if text.strip(_WS) else ({}, "")
            if unreadable or not isinstance(value, dict):
                why = unreadable or "is not a JSON object"
                return failure(
                    ErrorType.MALFORMED_TOOL,
                    f"malformed tool call: the json arguments of {name!r} {why}; "
                    "it is not executed",
                    block,
                    call_index=self.error_index,
                )
            arguments: dict[str, Any] = value
        else:
            arguments = {
                key: _convert(model, key, kind, block.between(start, end))
                for key, (kind, start, end) in self._args.items()
            }
        result = self.call.validate(name, model, arguments)
        return _built(self.call, name, result, block, self._call_id)


def _annotation(model: type[BaseModel], key: str) -> Any:
    """The annotation of the field a key names (by name or alias), or Any."""
    fields = model.model_fields
    info = fields.get(key)
    if info is None:
        info = next((f for f in fields.values() if f.alias == key), None)
    return Any if info is None else info.annotation


def _convert(model: type[BaseModel], key: str, kind: str, raw: str) -> Any:
    """A K3 value by its declared type and its field's type.

    ``type="string"`` is the raw text, converted only when the field is not a string;
    any other type is JSON (text that is not JSON is converted by the field's type).
    """
    annotation = _annotation(model, key)
    if kind != "string":
        value, unreadable = _decode_json(raw)
        if not unreadable:
            return value
    if annotation is str or annotation is Any:
        return raw
    return coerce_value(raw, annotation)


# === plugins ===========================================================================


class KimiK2Plugin(ReaderPlugin):
    """Reads K2 calls: ``<|tool_call_begin|>`` ... ``<|tool_call_end|>``.

    ``ParserConfig(dialect="kimi")`` registers one.  A call written without its section
    markers is read all the same.
    """

    name = "kimi_k2"
    start_tags = (CALL_BEGIN,)
    end_tag = CALL_END
    # Any first character but a backtick: a marker quoted in prose is text (rule 3).
    next_chars = "^`"
    reader = KimiK2Reader


class KimiK3Plugin(ReaderPlugin):
    """Reads K3 calls: ``<|open|>call tool="NAME" ...<|sep|>`` ... ``<|close|>call<|sep|>``.

    ``ParserConfig(dialect="kimi")`` registers one.
    """

    name = "kimi_k3"
    start_tags = (K3_CALL_OPEN,)
    end_tag = K3_CALL_CLOSE
    # The first attribute: tool= (or index=); anything else is not a call.
    next_chars = "ti"
    reader = KimiK3Reader


class KimiFramingPlugin(ParsePlugin):
    """Reads the K2 and K3 markup around calls and replies as framing, never as text.

    Each tag is a block by itself (:data:`K2_FRAMING_TAGS`, :data:`K3_FRAMING_TAGS`),
    delivered as a :class:`~stream_parser.core.events.FramingEvent`.
    """

    name = "kimi_framing"
    start_tags = K2_FRAMING_TAGS + K3_FRAMING_TAGS
    is_framing = True

    def __init__(self) -> None:
        self._end: int | None = None

    def on_start(self, tag: str, span: Span) -> list[ParseEvent]:
        """The block is the tag alone: it ends where the tag ends."""
        self._end = span[1]
        return []

    def ends_at(self) -> int | None:
        """The end of the tag just seen."""
        return self._end

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:
        """The tag as framing."""
        self._end = None
        return [FramingEvent(text=block.raw, span=block.span)]


# === writing ===========================================================================


def format_k2_call(tool_name: str, args: Mapping[str, Any], index: int = 0) -> str:
    """One call as the K2 chat template renders it, section markers included.

    Example:
        >>> format_k2_call("read_file", {"path": "a.py"}) == (
        ...     "<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0"
        ...     '<|tool_call_argument_begin|>{"path": "a.py"}'
        ...     "<|tool_call_end|><|tool_calls_section_end|>"
        ... )
        True
    """
    arguments = json.dumps(to_jsonable_python(dict(args), by_alias=True), ensure_ascii=False)
    return (
        f"{SECTION_BEGIN}{CALL_BEGIN}functions.{tool_name}:{index}{ARGUMENT_BEGIN}"
        f"{arguments}{CALL_END}{SECTION_END}"
    )


def _k3_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, dict) else "array"


def format_k3_call(tool_name: str, args: Mapping[str, Any], index: int = 1) -> str:
    """One call as the K3 chat template renders it, in its tools channel.

    Strings are written raw, other values as JSON, each with its ``type``.

    Raises:
        ValueError: a string value holds ``<|close|>argument<|sep|>``, which would end
            it early.

    Example:
        >>> format_k3_call("read_file", {"path": "a.py"}) == (
        ...     '<|open|>tools<|sep|><|open|>call tool="read_file" index="1"<|sep|>'
        ...     '<|open|>argument key="path" type="string"<|sep|>a.py<|close|>argument<|sep|>'
        ...     "<|close|>call<|sep|><|close|>tools<|sep|>"
        ... )
        True
    """
    parts = [f'{OPEN}tools{SEP}{OPEN}call tool="{_escape(tool_name)}" index="{index}"{SEP}']
    for key, value in args.items():
        jsonable = to_jsonable_python(value, by_alias=True)
        kind = _k3_type(jsonable)
        text = jsonable if isinstance(jsonable, str) else json.dumps(jsonable, ensure_ascii=False)
        if _ARG_CLOSE in text:
            raise ValueError(
                f"parameter {key!r} of {tool_name!r} cannot be written in the kimi K3 "
                f"format: its value holds {_ARG_CLOSE}"
            )
        parts.append(f'{OPEN}argument key="{_escape(key)}" type="{kind}"{SEP}{text}{_ARG_CLOSE}')
    parts.append(f"{K3_CALL_CLOSE}{CLOSE}tools{SEP}")
    return "".join(parts)


class KimiDialect(Dialect):
    """Kimi K2 and K3 tool calls (Moonshot AI), read in either format.

    Args:
        variant: the format :meth:`format_call` writes: ``"k2"`` (the default) or
            ``"k3"``.  Both are always read.

    Example:
        >>> for tag in KimiDialect("k3").format_call("ping", {}).split("<|sep|>")[:-1]:
        ...     print(tag)
        <|open|>tools
        <|open|>call tool="ping" index="1"
        <|close|>call
        <|close|>tools
    """

    name = "kimi"
    title = "Kimi special-token sections with JSON arguments (K2) or XTML calls (K3)"
    plugin_key = "kimi"
    thinking = KIMI_THINKING
    special_tokens = True  # its markers are special tokens: servers drop them unless asked

    def __init__(self, variant: Literal["k2", "k3"] = "k2") -> None:
        if variant not in ("k2", "k3"):
            raise ConfigError(f"unknown kimi variant {variant!r} (known: k2, k3)")
        self.variant = variant

    def make_plugin(self, names: tuple[str, ...]) -> list[ParsePlugin]:
        """The K2 and K3 call plugins and the framing plugin."""
        return [KimiK2Plugin(), KimiK3Plugin(), KimiFramingPlugin()]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write the call as the chat template of :attr:`variant` renders it.

        Raises:
            ValueError: (K3) a string value holds ``<|close|>argument<|sep|>``.
        """
        if self.variant == "k3":
            return format_k3_call(tool_name, args)
        return format_k2_call(tool_name, args)

    def _instructions(self) -> str:
        return "kimi_instructions"


register(KimiDialect().record())
