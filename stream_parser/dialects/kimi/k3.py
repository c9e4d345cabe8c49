r"""Kimi K3: XTML, a tag language on three control tokens, one typed element per argument.

:class:`KimiK3Reader` is the kit's reader with a handler table: the call's attributes
up to ``<|sep|>``, then argument elements (each value streamed up to its closing
element) or one JSON element with all the arguments.  It holds back only what may begin
a marker, or a header of at most ``MAX_HEADER`` characters: linear time.  See the
package.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from ...core.events import (
    ErrorType,
    ParseEvent,
    Span,
    ToolArgumentsDeltaEvent,
)
from ...core.kit import (
    CallContext,
    FastData,
    PluginBlock,
    Reader,
    ReaderPlugin,
    StateHandler,
    ValueRun,
    failure,
    field_annotation,
)
from ...schema.coerce import coerce_value

if TYPE_CHECKING:
    pass
from .markers import (
    _ARG_CLOSE,
    _ARG_CLOSE_STOP,
    _ARG_OPEN,
    _ATTR,
    _JSON_CLOSE,
    _JSON_CLOSE_STOP,
    _JSON_OPEN,
    _K3_RUN_STOP,
    _WS,
    CLOSE,
    K3_CALL_CLOSE,
    K3_CALL_OPEN,
    MAX_HEADER,
    OPEN,
    SEP,
    _decode_json,
    _escape,
    _unescape,
)

# The reader's states.
_HEADER, _BODY, _ELEMENT, _VALUE, _JSON, _MALFORMED = range(6)


class KimiK3Reader(Reader):
    """Reads one K3 call: `` tool="NAME" index="N"<|sep|>`` and its argument elements."""

    malformed_state = _MALFORMED

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self.state = _HEADER
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
        self._stream = False  # the fast path's chunks stream as deltas (see fast_path)
        self.handlers: dict[int, StateHandler] = {
            _HEADER: self._in_tag,
            _ELEMENT: self._in_tag,
            _BODY: self._in_body,
            _VALUE: self._in_value,
            _JSON: self._in_value,
        }

    def _in_tag(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """A call's or an element's header, up to its ``<|sep|>`` (held until it comes)."""
        found = buf.find(SEP, pos)
        if found < 0:
            if len(buf) - pos > MAX_HEADER:
                return self.malformed("a tag without its <|sep|>")
            return pos, True
        self._tag(buf[pos:found], (base + pos, base + found + len(SEP)), out)
        return found + len(SEP), self.state == _MALFORMED

    def _in_body(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """Between elements: whitespace, then the next element's opening marker."""
        n = len(buf)
        while pos < n and buf[pos] in _WS:
            pos += 1
        if pos == n:
            return pos, True
        rest = buf[pos : pos + len(_ARG_OPEN)]
        if rest.startswith(_ARG_OPEN) or rest.startswith(_JSON_OPEN + " "):
            self.state = _ELEMENT
            return pos, False
        if _ARG_OPEN.startswith(rest) or (_JSON_OPEN + " ").startswith(rest):
            return pos, True  # a tag may be starting: wait for more
        return self.malformed("expected an <|open|>argument element")

    def _in_value(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """An element's value, up to its closing marker (a cut start of it is held)."""
        close = _ARG_CLOSE if self.state == _VALUE else _JSON_CLOSE
        found = buf.find(close, pos)
        stop = found if found >= 0 else len(buf) - self.cut_marker(buf, pos, close)
        self._take(buf, pos, stop, base, out)
        if found < 0:
            return stop, True
        self._end_value()
        return found + len(close), self.state == _MALFORMED

    def _tag(self, text: str, span: Span, out: list[ParseEvent]) -> None:
        """The text of a call header (state HEADER) or an element header (ELEMENT)."""
        if self.state == _HEADER:
            attrs = {k: _unescape(v) for k, v in _ATTR.findall(text)}
            name = attrs.get("tool", "")
            if not name or text[:1] not in _WS:
                self.malformed('expected <|open|>call tool="NAME"')
                return
            self._name = name
            index = attrs.get("index")
            self._call_id = None if index is None else f"{name}:{index}"
            self.state = _BODY
            if name in self.call.tool_registry:
                self.announced = True
                out.append(self.call.start(name, span, self._call_id))
            return
        attrs = {k: _unescape(v) for k, v in _ATTR.findall(text)}
        if text.startswith(_JSON_OPEN + " "):
            if self._json is not None or self._args:
                self.malformed("a json element beside other arguments")
                return
            self._json = (span[1], span[1])
            self.state = _JSON
        elif "key" in attrs:
            self._key = key = attrs["key"]
            self._type = attrs.get("type", "string")
            self.state = _VALUE
            self._known = True
            if self.announced:
                self._check_param(key, span, text, out)
        else:
            self.malformed('expected <|open|>argument key="NAME"')
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
        if self.state == _VALUE:
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
        state = self.state
        if self.held or (state != _VALUE and state != _JSON):
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
        if self.state == _VALUE:
            if self._json is not None:
                self.malformed("an argument beside a json element")
                return
            if self._known:
                self._args[self._key] = (self._type, self._value_from, self._run.end)
        else:
            self._json = (self._value_from, self._run.end)
        self.state = _BODY

    def accepts_end(self) -> bool:
        """``<|close|>call<|sep|>`` inside an argument's value is content."""
        return self.state not in (_VALUE, _JSON)

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """Convert the arguments by the tool's field types and validate them."""
        state = self.state
        if state != _BODY or self.held.strip(_WS):
            why = {
                _MALFORMED: self.why,
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
            return self.call.unknown_tool(name, block)
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
        return self.call.call(name, result, block, self._call_id)


def _convert(model: type[BaseModel], key: str, kind: str, raw: str) -> Any:
    """A K3 value by its declared type and its field's type.

    ``type="string"`` is the raw text, converted only when the field is not a string;
    any other type is JSON (text that is not JSON is converted by the field's type).
    """
    annotation = field_annotation(model, key)
    if kind != "string":
        value, unreadable = _decode_json(raw)
        if not unreadable:
            return value
    if annotation is str or annotation is Any:
        return raw
    return coerce_value(raw, annotation)


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
    return f"{OPEN}tools{SEP}{_k3_call(tool_name, args, index)}{CLOSE}tools{SEP}"


def format_k3_calls(calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """Several calls as the K3 chat template renders a turn's calls: one tools channel.

    The calls are numbered from 1, as the template numbers them.  No calls write ``""``,
    not an empty channel.

    Raises:
        ValueError: a string value holds ``<|close|>argument<|sep|>``.
    """
    if not calls:  # no calls write nothing, not an empty channel
        return ""
    inner = "".join(_k3_call(name, args, index) for index, (name, args) in enumerate(calls, 1))
    return f"{OPEN}tools{SEP}{inner}{CLOSE}tools{SEP}"


def _k3_call(tool_name: str, args: Mapping[str, Any], index: int) -> str:
    parts = [f'{OPEN}call tool="{_escape(tool_name)}" index="{index}"{SEP}']
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
    parts.append(K3_CALL_CLOSE)
    return "".join(parts)
