r"""Pythonic calls: ``[name(param=value, ...)]``, read as they stream, and written.

Theory of operation.  :class:`PythonicReader`, on the kit's one reader base, follows a
list of calls from its ``[`` to its ``]`` with constant work per character: the bracket
depth, Python strings (both quotes, with their escapes), each element's name (announced
at its ``(``: name characters, then whitespace at most, as
:func:`parse_pythonic_call` splits it off; ``get-weather(`` is a name, ``a - b(`` is
not) and, inside an announced call, each keyword's name and the source of its
value (streamed verbatim as parameter deltas).  The list has no end marker: the reader
ends the block at the first character after the list that is not whitespace.  A block
may open with the list's ``[`` or with a marker its plugin chooses (``<|python_start|>``,
say: framing, then the list), so the reader serves any format that writes this syntax.
When the block closes each element is parsed once, whole, by :func:`parse_pythonic_call`
(Python literals only, by ``ast``: nothing is evaluated) and validated by its tool's
model; :func:`format_pythonic_call` writes calls.  A list with no element naming a
registered tool, opened without a marker, is not a call: its text is text.
"""

from __future__ import annotations

import re
from typing import Final

from ...core.events import ErrorType, FramingEvent, ParseEvent, Span, TextOutputEvent
from ...core.kit import (
    CallContext,
    FastData,
    JsonScanner,
    PluginBlock,
    Reader,
    ValueRun,
    call_too_large,
    failure,
)
from .pythonic_syntax import (
    PYTHONIC_NAME_CHARS,
    PYTHONIC_NAME_MAX,
    format_pythonic_call,
    is_pythonic_name,
    literal_value,
    parse_pythonic_call,
)

__all__ = [
    "PythonicReader",
    "format_pythonic_call",
    "is_pythonic_name",
    "literal_value",
    "parse_pythonic_call",
]


_NAME_MAX: Final = 256
_PY_STOP: Final = re.compile(r"""["'{}\[\]()]""")
_VALUE_STOP: Final = re.compile(r"""["'{}\[\](),]""")  # a keyword value's end, too
_STOP_IN: Final = {'"': re.compile(r'["\\]'), "'": re.compile(r"['\\]")}
_TRAILING_BACKSLASH: Final = re.compile(r"\\\Z")
_WS: Final = frozenset(" \t\r\n")
_OPEN: Final = frozenset("{[(")
_CLOSE: Final = frozenset("}])")

# What the reader expects next (a subclass adds its own states after these).
TAG, LIST, AFTER = range(3)


class PythonicReader(Reader):
    """Reads one block holding a pythonic list of calls (see the module).

    Run it with a :class:`~stream_parser.core.kit.ReaderPlugin` whose ``end_tag`` is
    ``""`` and ``reserve_index`` False (each element reserves its own call index when
    it names a registered tool); its start tags are ``[`` (the list opens the block) or
    any markers the format writes before the list.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> from stream_parser.core.kit import ReaderPlugin
        >>> class Search(BaseModel):
        ...     query: str
        >>> class Pythonic(ReaderPlugin):
        ...     name, start_tags, end_tag = "pythonic", ("<calls>",), ""
        ...     reader, reserve_index = PythonicReader, False
        >>> parser = StreamToolParser({"search": Search}, plugins=[Pythonic()])
        >>> events = parser.feed("<calls>[search(query='a b')] done") + parser.close()
        >>> [(e.kind, e.text if e.kind in ("text", "framing") else "") for e in events]
        ... # doctest: +NORMALIZE_WHITESPACE
        [('tool_call_start', ''), ('tool_param_delta', ''), ('framing', '<calls>['),
         ('tool_call', ''), ('framing', '] '), ('text', 'done')]
    """

    opens: str = "["
    """The characters that open what the reader reads after a marker."""

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self.context = call.plugin
        self.state = TAG
        self.handlers = {TAG: self._tag, LIST: self._list, AFTER: self._after}
        self.tagged = False  # a marker opened the block: it is a call, whatever it names
        self.registered_seen = False  # an element (or object) names a registered tool
        # The block's parts in order, (kind, start, end): "framing", "element", and a
        # subclass's own.
        self.segments: list[tuple[str, int, int]] = []
        # The list's structure: the bracket depth, the open string's quote ("" outside
        # strings), a backslash at a piece's end.
        self._depth = 0
        self._quote = ""
        self._escaped = False
        # The open element: its start, end, name so far, and call (once announced).
        self._elem_start = -1
        self._elem_end = -1
        self._elem_name: list[str] = []
        self._elem_plain = True  # only name characters so far (then whitespace at most)
        self._elem_gap = False  # whitespace after the name: only "(" may follow it
        self._elem_call: CallContext | None = None
        self._elem_tool = ""
        self._elements: list[tuple[int, int, CallContext | None]] = []
        self._kw: list[str] = []  # a keyword's name being read
        self._param = ""  # the keyword whose value is open
        self._string_run = ValueRun()  # an announced call's string value, streamed by the core

    # --- streaming -----------------------------------------------------------------------

    def begin(self, tag: str, span: Span, out: list[ParseEvent]) -> None:
        """The list's ``[`` opens it; any other tag is a marker, framing before it."""
        if len(tag) == 1 and tag in self.opens:
            self.open(tag, span[0], out)
        else:
            self.tagged = True
            self.frame(span[0], span[1])

    def open(self, c: str, at: int, out: list[ParseEvent]) -> None:
        """``c`` (one of :attr:`opens`) at ``at`` opens what the reader reads."""
        self._depth = 1
        self.state = LIST
        self.frame(at, at + 1)

    def frame(self, start: int, end: int) -> None:
        """Structure of the block from ``start`` to ``end``, joined to adjacent structure."""
        segments = self.segments
        if segments and segments[-1][0] == "framing" and segments[-1][2] == start:
            segments[-1] = ("framing", segments[-1][1], end)
        else:
            segments.append(("framing", start, end))

    def _tag(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """After a marker: whitespace, then what the reader reads."""
        c = data[i]
        if c in _WS:
            self.frame(base + i, base + i + 1)
            return i + 1, False
        if c in self.opens:
            self.open(c, base + i, out)
            return i + 1, False
        self.end = base + i  # a marker that announces no call we read: the block is it
        return i, True

    def _after(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """After the list: whitespace is the block's; the first other character ends it."""
        c = data[i]
        if c in _WS:
            self.frame(base + i, base + i + 1)
            return i + 1, False
        self.end = base + i
        return i, True

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

    def _list(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """Follow the list from ``i``: its elements, their names, its end."""
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
            if depth == 2 and self._elem_call is not None and not self._param:
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
                if self._elem_name:
                    self._elem_gap = True
                continue
            if c == "," or c == "]":
                self._end_element()
                if c == "]":
                    self._depth = 0
                    self.frame(at, at + 1)
                    self.state = AFTER
                    return i, False
                continue
            if self._elem_start < 0:
                self._elem_start = at
                self._elem_name = []
                self._elem_plain = True
                self._elem_gap = False
                self._elem_call = None
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
                if (
                    not self._elem_gap
                    and len(self._elem_name) < PYTHONIC_NAME_MAX
                    and (c.isalnum() or c in PYTHONIC_NAME_CHARS)
                ):
                    self._elem_name.append(c)
                else:
                    self._elem_plain = False
        if self._param and vfrom >= 0:
            self._param_delta(data, vfrom, i, base, out)
        return i, False

    # --- the fast path of a string ---------------------------------------------------------

    def fast_path(self) -> FastData | None:
        """Inside a string of the list: only a chunk that may end it needs :meth:`feed`.

        Any other chunk is all string: :meth:`_in_string` takes it whole, following the
        escapes (a backslash escapes the next character, in this chunk or the next), and
        streams it as the open keyword value's delta.  The core streams most such chunks
        itself (:meth:`value_run`): in a double-quoted string, whose escapes are JSON's,
        every chunk a JSON scanner inside that string takes whole; in a single-quoted
        one, a chunk without the quote and not ending with a backslash.
        """
        if self.state != LIST or not self._quote or self.held:
            return None
        self._arm()
        pattern = None if self._string_run.scanner is not None else _TRAILING_BACKSLASH
        return pattern, self._in_string, False

    def value_run(self) -> ValueRun | None:
        """The open string value, streamed by the core while it is armed."""
        if self.state != LIST or not self._quote:
            return None
        return self._string_run

    def _arm(self) -> None:
        """Arm the run for the open string, as the reader stands now."""
        run = self._string_run
        call = self._elem_call
        run.armed = False
        run.scanner = None
        if not self._param or call is None or not call.emit_deltas:
            return
        run.open(self._elem_tool, self._param, call.call_index, 0)
        if self._quote == '"':
            scanner = JsonScanner(keep_text=False)
            scanner.feed('"\\' if self._escaped else '"')
            run.scanner, run.stop = scanner, ""
        elif self._escaped:
            return  # the next character is escaped: the reader's function takes it
        else:
            run.stop = self._quote
        run.armed = True

    def _in_string(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """Take ``data`` if it does not end the open string (and stream it); else False."""
        run = self._string_run
        if run.armed and run.scanner is not None:
            # The scanner took the chunks since the run was armed; this one it did not.
            self._escaped = run.scanner.escape_pending
            run.armed = False
        marks = _STOP_IN[self._quote]
        n = len(data)
        # A backslash that ended the last chunk escapes this chunk's first character.
        pos, escaped = (1, False) if self._escaped else (0, False)
        while pos < n:
            m = marks.search(data, pos)
            if m is None:
                break
            k = m.start()
            if data[k] != "\\":
                return False  # the string ends in this chunk: the reader decides
            if k + 1 == n:
                escaped = True
                break
            pos = k + 2
        self._escaped = escaped
        if self._param:
            self._param_delta(data, 0, n, start, out)
        self._arm()
        return True

    def _value_end(self, data: str, vfrom: int, k: int, base: int, out: list[ParseEvent]) -> int:
        """The open keyword value ends before ``data[k]``: stream its last piece."""
        self._param_delta(data, vfrom, k, base, out)
        self._param = ""
        return -1

    def _param_delta(
        self, data: str, begin: int, end: int, base: int, out: list[ParseEvent]
    ) -> None:
        """Stream ``data[begin:end]``, a piece of a keyword value's source, verbatim."""
        call = self._elem_call
        if begin < end and call is not None and call.emit_deltas:
            span = (base + begin, base + end)
            out.append(call.param_delta(self._elem_tool, self._param, data[begin:end], span))

    def _announce(self, name: str, span: Span, out: list[ParseEvent]) -> None:
        if name not in self.context.tool_registry:
            return
        self.registered_seen = True
        call = self._elem_call = CallContext(self.context)
        self._elem_tool = name
        out.append(call.start(name, span))

    def _end_element(self) -> None:
        if self._elem_start >= 0:
            self._elements.append((self._elem_start, self._elem_end, self._elem_call))
            self.segments.append(("element", self._elem_start, self._elem_end))
            self._elem_start = -1

    # --- outcomes ------------------------------------------------------------------------

    def is_call(self) -> bool:
        """Whether the block is a call (else: an answer, delivered as text)."""
        return self.tagged or self.registered_seen

    def complete(self) -> bool:
        """Whether the block read so far ends after whole calls (the stream may end there)."""
        return self.state == AFTER

    @property
    def error_index(self) -> int | None:
        """The index of the open element's call, once announced."""
        call = self._elem_call
        return None if call is None else call.call_index

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """A call block's outcomes (one per element), or an answer's text."""
        if not self.is_call():
            return [TextOutputEvent(text=block.raw, span=block.span)]
        if self.state not in (TAG, AFTER):  # pragma: no cover - it ends only between calls
            return self.cut_call(block)
        return self.outcomes(block)

    def unclosed(self, block: PluginBlock) -> list[ParseEvent]:
        """The stream ended: whole calls run (not cut), an open one is ``unclosed_tool``."""
        if not self.is_call():
            return [TextOutputEvent(text=block.raw, span=block.span)]
        if not self.complete():
            return self.cut_call(block)
        return self.outcomes(block)

    def too_large(self, block: PluginBlock) -> list[ParseEvent]:
        """A call past ``max_tool_size``: ``tool_too_large``; an answer is only text."""
        if not self.is_call():
            return []  # an answer: the core delivers it as text
        return call_too_large(block, None, self.context)

    def cut_call(self, block: PluginBlock) -> list[ParseEvent]:
        """The stream ended inside a call: ``unclosed_tool``, and nothing in it runs."""
        cut = " (the stream was cut)" if block.cut else ""
        return failure(
            ErrorType.UNCLOSED_TOOL,
            f"the stream ended inside a tool call{cut}; the call is not executed",
            block,
            call_index=self.error_index,
        )

    def outcomes(self, block: PluginBlock) -> list[ParseEvent]:
        """The events of a complete call block, one outcome per segment."""
        raw, origin = block.raw, block.span[0]
        elements = iter(self._elements)
        out: list[ParseEvent] = []
        last = origin
        for kind, start, end in self.segments:
            if last < start:  # between a list's elements: ", " is structure
                _framing(out, raw[last - origin : start - origin], last, start)
            last = end
            text = raw[start - origin : end - origin]
            if kind == "framing":
                _framing(out, text, start, end)
            elif kind == "element":
                _, _, call = next(elements)
                out.extend(self._element_outcome(text, (start, end), call))
            else:
                out.extend(self.segment_outcome(kind, text, (start, end)))
        # Whatever lies between the segments and the block's end (nothing, normally).
        if last < block.span[1]:
            out.append(TextOutputEvent(text=raw[last - origin :], span=(last, block.span[1])))
        return out

    def segment_outcome(self, kind: str, text: str, span: Span) -> list[ParseEvent]:
        """The outcome of a subclass's own kind of segment."""
        raise NotImplementedError(kind)

    def _element_outcome(self, text: str, span: Span, call: CallContext | None) -> list[ParseEvent]:
        piece = PluginBlock("", "", text, span)
        parsed = parse_pythonic_call(text)
        index = None if call is None else call.call_index
        if isinstance(parsed, str):
            return failure(
                ErrorType.MALFORMED_TOOL,
                f"the tool call {parsed}; expected name(param=value, ...); "
                "the call is not executed",
                piece,
                call_index=index,
            )
        name, arguments = parsed
        if call is None:
            call = CallContext.unreserved(self.context)
        model = call.tool_registry.get(name)
        if model is None:
            return call.unknown_tool(name, piece)
        call.reserve()  # a registered name( is always announced; reserved then
        return call.call(name, call.validate(name, model, arguments), piece)


def _framing(out: list[ParseEvent], text: str, start: int, end: int) -> None:
    """Structure of the block (tags, separators, end markers), joined when adjacent."""
    prev = out[-1] if out else None
    if isinstance(prev, FramingEvent) and prev.span[1] == start:
        out[-1] = FramingEvent(text=prev.text + text, span=(prev.span[0], end))
    else:
        out.append(FramingEvent(text=text, span=(start, end)))
