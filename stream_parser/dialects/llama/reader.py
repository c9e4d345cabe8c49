r"""The llama reader: a reply that is a bare JSON call, or a list of pythonic calls.

:class:`LlamaPlugin` reads the call that opens a reply: ``{"name": ..., "parameters":
...}`` (each object followed with the hermes reader) or ``[name(...), ...]`` (each
element read by :mod:`.pythonic` once whole).  See the package for the format.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Final

from ...core.events import (
    ErrorType,
    FramingEvent,
    ParseErrorEvent,
    ParseEvent,
    TextOutputEvent,
    ToolCallStartEvent,
    ToolParamDeltaEvent,
    shorten_context,
)
from ...core.kit import (
    CallContext,
    ParsePlugin,
    PluginBlock,
    failure,
)
from ..hermes import HermesReader

if TYPE_CHECKING:
    from ...core.events import Span
    from ...core.kit import FastData, PluginContext, ValueRun
from .json_call import _indexed, _Object
from .pythonic import parse_pythonic_call

CALL_TAGS: Final = ("<|python_tag|>", "<|python_start|>")
"""Special tokens that announce a call: what follows is a call, whatever its name."""


_NAME_MAX: Final = 256
_PY_STOP: Final = re.compile(r"""["'{}\[\]()]""")
_VALUE_STOP: Final = re.compile(r"""["'{}\[\](),]""")  # a keyword value's end, too
_STOP_IN: Final = {'"': re.compile(r'["\\]'), "'": re.compile(r"['\\]")}
_WS: Final = frozenset(" \t\r\n")

# What the plugin expects next.
_TAG, _JSON, _LIST, _AFTER = range(4)
_OPEN: Final = frozenset("{[(")
_CLOSE: Final = frozenset("}])")


class LlamaPlugin(ParsePlugin):
    """Reads Llama's tool calls: JSON objects or a pythonic list, as the reply itself."""

    name = "llama"
    start_tags: tuple[str, ...] = ("{", "[")
    end_tag = ""
    reply_start_only = True

    def bind(self, context: PluginContext) -> None:  # noqa: D102
        self.context = context
        self._reset()

    def _reset(self) -> None:
        self._mode = _TAG
        self._tagged = False
        # The pythonic list's structure (a JSON object's is its scanner's): the bracket
        # depth, the open string's quote ("" outside strings), a backslash at a piece's end.
        self._depth = 0
        self._quote = ""
        self._escaped = False
        self._end: int | None = None
        # The block's parts in order, (kind, start, end): "framing", "object", "element".
        self._segments: list[tuple[str, int, int]] = []
        self._objects: list[_Object] = []
        self._object: _Object | None = None
        self._pythonic = False
        # The open pythonic element: its start, end, name so far, call index.
        self._elem_start = -1
        self._elem_end = -1
        self._elem_name: list[str] = []
        self._elem_plain = True  # only name characters so far
        self._elem_index: int | None = None
        self._elements: list[tuple[int, int, int | None]] = []
        self._elem_tool = ""
        self._kw: list[str] = []  # a keyword's name being read
        self._param = ""  # the keyword whose value is open
        self._registered_seen = False

    # --- streaming -----------------------------------------------------------------------

    def on_start(self, tag: str, span: Span) -> list[ParseEvent]:  # noqa: D102
        self._reset()
        out: list[ParseEvent] = []
        if tag in CALL_TAGS:
            self._tagged = True
            self._frame(span[0], span[1])
            return out
        self._begin(tag, span[0], out)
        return out

    def _begin(self, c: str, at: int, out: list[ParseEvent]) -> None:
        """``{`` or ``[`` at ``at`` opens the call(s)."""
        if c == "{":
            self._mode = _JSON
            self._open_object(at, out)
        else:
            self._depth = 1
            self._mode = _LIST
            self._pythonic = True
            self._frame(at, at + 1)

    def _frame(self, start: int, end: int) -> None:
        """Structure of the block from ``start`` to ``end``, joined to adjacent structure."""
        segments = self._segments
        if segments and segments[-1][0] == "framing" and segments[-1][2] == start:
            segments[-1] = ("framing", segments[-1][1], end)
        else:
            segments.append(("framing", start, end))

    def _open_object(self, at: int, out: list[ParseEvent]) -> None:
        call = CallContext(self.context, -1)
        self._object = _Object(HermesReader(call), at)
        self._object.scanner.feed("{")
        self._feed_object("{", at, out)

    def _feed_object(self, data: str, at: int, out: list[ParseEvent]) -> None:
        obj = self._object
        assert obj is not None
        obj.reader.feed(data, at, obj.held)
        if obj.held and obj.call_shaped:
            reader = obj.reader
            if reader.call.call_index < 0:
                reader.call.call_index = self.context.next_call_index()
                obj.held = [_indexed(e, reader.call.call_index) for e in obj.held]
            out.extend(obj.held)
            obj.held = []

    def on_data(self, data: str, span: Span) -> list[ParseEvent]:  # noqa: D102
        out: list[ParseEvent] = []
        base = span[0]
        i, n = 0, len(data)
        while i < n and self._end is None:
            mode = self._mode
            if mode == _JSON:
                i = self._json(data, i, base, out)
            elif mode == _LIST:
                i = self._list(data, i, base, out)
            elif mode == _TAG:
                c = data[i]
                if c in _WS:
                    self._frame(base + i, base + i + 1)
                    i += 1
                elif c in "{[":
                    self._begin(c, base + i, out)
                    i += 1
                else:  # a tag that announces no call we read: the block is the tag
                    self._end = base + i
            else:
                i = self._after(data, i, base, out)
        return out

    def _json(self, data: str, i: int, base: int, out: list[ParseEvent]) -> int:
        """Follow a JSON object from ``i``; feed its characters to its reader."""
        obj = self._object
        assert obj is not None
        scanner = obj.caught_up()
        piece = data[i:]
        for mark in scanner.feed(piece):
            if mark.kind == "end":  # the bracket that closes the object, at depth 0
                j = i + mark.end - (scanner.position - len(piece))
                self._feed_object(data[i:j], base + i, out)
                self._close_object(base + j)
                return j
        self._feed_object(piece, base + i, out)
        return len(data)

    def fast_path(self) -> FastData | None:
        """Inside an announced call's object, where its reader has a fast path of its own."""
        obj = self._object
        if self._mode != _JSON or obj is None or obj.held or obj.reader.call.call_index < 0:
            return None
        scanner = obj.caught_up()
        # While the object's scanner reads a key of the object (a few characters), it
        # must see them: they go through on_data.
        if not scanner.skips or scanner.holds_slice:
            return None
        fast = obj.reader.fast_path()
        if fast is None or fast[0] is not None:
            return None
        # The reader's own function, with no call of ours around it: the object's scanner
        # follows the reader's when it is next needed (caught_up).
        return None, fast[1], False  # no end tag

    def value_run(self) -> ValueRun | None:
        """The arguments' run of the object's reader, asked with its fast path."""
        obj = self._object
        return None if obj is None else obj.reader.value_run()

    def _close_object(self, end: int) -> None:
        obj = self._object
        assert obj is not None
        self._object = None
        self._objects.append(obj)
        self._segments.append(("object", obj.start, end))
        shaped = obj.call_shaped
        if shaped and obj.name in self.context.tool_registry:
            self._registered_seen = True
        if not shaped:
            obj.held = []
        self._mode = _AFTER
        if not shaped and len(self._objects) == 1 and not self._tagged:
            self._end = end  # an answer, not a call: nothing more belongs to it

    def _string(self, data: str, j: int) -> int:
        """Inside a string from ``j``: where scanning goes on."""
        n = len(data)
        if self._escaped:
            self._escaped = False
            j += 1
        while j < n:
            m = _STOP_IN[self._quote].search(data, j)
            if m is None:
                return n
            k = m.start()
            if data[k] == "\\":
                if k + 1 == n:
                    self._escaped = True
                    return n
                j = k + 2
                continue
            self._quote = ""
            return k + 1
        return j

    def _list(self, data: str, i: int, base: int, out: list[ParseEvent]) -> int:
        """Follow a pythonic list from ``i``: its elements, their names, its end."""
        n = len(data)
        # Where the piece of an open keyword value begins in ``data`` (streamed at the
        # value's end or at the end of ``data``), or -1.
        vfrom = i if self._param else -1
        while i < n:
            if self._quote:
                i = self._string(data, i)
                if not self._quote and self._depth == 1:
                    self._elem_end = base + i
                continue
            depth = self._depth
            if depth == 2 and self._elem_index is not None and not self._param:
                # Between the keyword arguments of an announced call: read their names.
                c = data[i]
                i += 1
                if c == "=" and self._kw:
                    self._param = "".join(self._kw)
                    self._kw = []
                    vfrom = i
                elif c.isalnum() or c == "_":
                    if len(self._kw) < _NAME_MAX:
                        self._kw.append(c)
                elif c not in _WS:
                    self._kw = []
                    if c in "\"'":
                        self._quote = c
                    elif c in _OPEN:
                        self._depth += 1
                    elif c in _CLOSE:
                        self._depth -= 1
                        self._elem_end = base + i
                continue
            if depth > 1:
                m = (_VALUE_STOP if depth == 2 and self._param else _PY_STOP).search(data, i)
                if m is None:
                    i = n
                    break
                k = m.start()
                c = data[k]
                i = k + 1
                if c in "\"'":
                    self._quote = c
                elif c in _OPEN:
                    self._depth += 1
                elif c == "," and depth == 2 and self._param:
                    vfrom = self._value_end(data, vfrom, k, base, out)
                elif c in _CLOSE:
                    if depth == 2 and self._param:
                        vfrom = self._value_end(data, vfrom, k, base, out)
                    self._depth -= 1
                    if self._depth == 1:
                        self._elem_end = base + i
                continue
            # Depth 1: between and inside the list's elements.
            c = data[i]
            at = base + i
            i += 1
            if c in _WS:
                continue
            if c == "," or c == "]":
                self._end_element()
                if c == "]":
                    self._depth = 0
                    self._frame(at, at + 1)
                    self._mode = _AFTER
                    return i
                continue
            if self._elem_start < 0:
                self._elem_start = at
                self._elem_name = []
                self._elem_plain = True
                self._elem_index = None
            self._elem_end = at + 1
            if c in "\"'":
                self._quote = c
                self._elem_plain = False
            elif c in _OPEN:
                if c == "(" and self._elem_plain:
                    self._announce("".join(self._elem_name), (self._elem_start, at), out)
                    self._kw = []
                self._elem_plain = False
                self._depth += 1
            elif c in _CLOSE:  # unbalanced: the list cannot be read; let it end here
                self._elem_plain = False
            elif self._elem_plain:
                if len(self._elem_name) < _NAME_MAX and (c.isalnum() or c in "_.-"):
                    self._elem_name.append(c)
                else:
                    self._elem_plain = False
        if self._param and vfrom >= 0:
            self._param_delta(data, vfrom, i, base, out)
        return i

    def _value_end(self, data: str, vfrom: int, k: int, base: int, out: list[ParseEvent]) -> int:
        """The open keyword value ends before ``data[k]``: stream its last piece."""
        self._param_delta(data, vfrom, k, base, out)
        self._param = ""
        return -1

    def _param_delta(
        self, data: str, begin: int, end: int, base: int, out: list[ParseEvent]
    ) -> None:
        """Stream ``data[begin:end]``, a piece of a keyword value's source, verbatim."""
        index = self._elem_index
        if begin < end and index is not None and self.context.config.emit_deltas:
            out.append(
                ToolParamDeltaEvent(
                    tool_name=self._elem_tool,
                    param=self._param,
                    delta=data[begin:end],
                    call_index=index,
                    span=(base + begin, base + end),
                )
            )

    def _announce(self, name: str, span: Span, out: list[ParseEvent]) -> None:
        if name not in self.context.tool_registry:
            return
        self._registered_seen = True
        index = self.context.next_call_index()
        self._elem_index = index
        self._elem_tool = name
        out.append(ToolCallStartEvent(tool_name=name, call_index=index, span=span))

    def _end_element(self) -> None:
        if self._elem_start >= 0:
            self._elements.append((self._elem_start, self._elem_end, self._elem_index))
            self._segments.append(("element", self._elem_start, self._elem_end))
            self._elem_start = -1

    def _after(self, data: str, i: int, base: int, out: list[ParseEvent]) -> int:
        """After a call: separators, the next JSON call, or the block's end."""
        c = data[i]
        at = base + i
        if c in _WS or (c == ";" and not self._pythonic):
            self._frame(at, at + 1)
            return i + 1
        if c == "{" and not self._pythonic:
            self._mode = _JSON
            self._open_object(at, out)
            return i + 1
        self._end = at
        return i

    def ends_at(self) -> int | None:  # noqa: D102
        return self._end

    # --- outcomes ------------------------------------------------------------------------

    def _is_call(self) -> bool:
        """Whether the block is a call (else: an answer, delivered as text)."""
        return self._tagged or self._registered_seen

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:  # noqa: D102
        if not self._is_call():
            return [TextOutputEvent(text=block.raw, span=block.span)]
        if self._mode in (_JSON, _LIST) or self._object is not None:  # pragma: no cover
            # The plugin ends its blocks only between calls; never inside one.
            return self._unclosed(block)
        return self._outcomes(block)

    def on_unclosed(self, block: PluginBlock) -> list[ParseEvent]:  # noqa: D102
        complete = self._mode == _AFTER and self._object is None
        obj = self._object
        if obj is not None and obj.call_shaped and obj.name in self.context.tool_registry:
            self._registered_seen = True
        if not self._is_call():
            return [TextOutputEvent(text=block.raw, span=block.span)]
        if not complete:
            return self._unclosed(block)
        return self._outcomes(block)

    def on_too_large(self, block: PluginBlock) -> list[ParseEvent]:  # noqa: D102
        obj = self._object
        if obj is not None and obj.call_shaped and obj.name in self.context.tool_registry:
            self._registered_seen = True
        if not self._is_call():
            return []  # an answer: the core delivers it as text
        return [
            ParseErrorEvent(
                error_type=ErrorType.TOOL_TOO_LARGE.value,
                message="a llama tool call is longer than max_tool_size; it is not executed",
                context=shorten_context(block.raw),
                span=block.span,
            )
        ]

    def _unclosed(self, block: PluginBlock) -> list[ParseEvent]:
        index = None
        if self._object is not None and self._object.reader.call.call_index >= 0:
            index = self._object.reader.call.call_index
        elif self._elem_index is not None:
            index = self._elem_index
        cut = " (the stream was cut)" if block.cut else ""
        return failure(
            ErrorType.UNCLOSED_TOOL,
            f"the stream ended inside a llama tool call{cut}; the call is not executed",
            block,
            call_index=index,
        )

    def _outcomes(self, block: PluginBlock) -> list[ParseEvent]:
        """The events of a complete call block, one outcome per object or element."""
        raw, origin = block.raw, block.span[0]
        objects = iter(self._objects)
        elements = iter(self._elements)
        out: list[ParseEvent] = []
        last = origin
        for kind, start, end in self._segments:
            if last < start:  # between a list's elements: ", " is structure
                self._framing(out, raw[last - origin : start - origin], last, start)
            last = end
            text = raw[start - origin : end - origin]
            if kind == "framing":
                self._framing(out, text, start, end)
            elif kind == "object":
                out.extend(self._object_outcome(next(objects), text, (start, end)))
            else:
                _, _, index = next(elements)
                out.extend(self._element_outcome(text, (start, end), index))
        # Whatever lies between the segments and the block's end (nothing, normally).
        if last < block.span[1]:
            out.append(TextOutputEvent(text=raw[last - origin :], span=(last, block.span[1])))
        return out

    @staticmethod
    def _framing(out: list[ParseEvent], text: str, start: int, end: int) -> None:
        """Structure of the block (tags, separators, end markers), joined when adjacent."""
        prev = out[-1] if out else None
        if isinstance(prev, FramingEvent) and prev.span[1] == start:
            out[-1] = FramingEvent(text=prev.text + text, span=(prev.span[0], end))
        else:
            out.append(FramingEvent(text=text, span=(start, end)))

    def _object_outcome(self, obj: _Object, text: str, span: Span) -> list[ParseEvent]:
        call = obj.reader.call
        if call.call_index < 0:
            call.call_index = self.context.next_call_index()
        return obj.reader.finish(PluginBlock("", "", text, span))

    def _element_outcome(self, text: str, span: Span, index: int | None) -> list[ParseEvent]:
        piece = PluginBlock("", "", text, span)
        parsed = parse_pythonic_call(text)
        if isinstance(parsed, str):
            return failure(
                ErrorType.MALFORMED_TOOL,
                f"the tool call {parsed}; expected name(param=value, ...); "
                "the call is not executed",
                piece,
                call_index=index,
            )
        name, arguments = parsed
        call = CallContext(self.context, -1 if index is None else index)
        model = call.tool_registry.get(name)
        if model is None:
            return call.unknown_tool(name, piece)
        if call.call_index < 0:  # pragma: no cover - a registered name( is always announced
            call.call_index = self.context.next_call_index()
        return call.call(name, call.validate(name, model, arguments), piece)
