r"""OLMo 3's calls: pythonic calls one per line inside ``<function_calls>``.

Theory of operation.  :class:`FunctionCallsReader` reads the block's content on the
kit's reader base.  It follows Python's strings (either quote; a backslash escapes the
next character, and a line break inside a string is part of it) and brackets, jumping
with one regular expression from one such character to the next, so each character is
looked at a bounded number of times.  Outside strings and brackets, a line break ends an
element: the element is the text from its first to its last non-whitespace character.
When an element's ``(`` comes after a plain name of a registered tool (a name
:func:`~stream_parser.dialects.llama.pythonic_syntax.is_pythonic_name` accepts:
``get-weather`` and ``github.create_issue`` too), the call is announced
(:class:`~stream_parser.core.events.ToolCallStartEvent`).  ``</function_calls>`` ends
the block only outside strings and brackets (:meth:`FunctionCallsReader.accepts_end`), so
a value may hold it.

When the block closes each element is parsed once by
:func:`~stream_parser.dialects.llama.pythonic.parse_pythonic_call` (literals through
``ast``, never evaluated; ``true``, ``false`` and ``null`` as OLMo writes them) and has
its own outcome, spanning the element: a call, or ``malformed_tool``, ``unknown_tool``
or ``invalid_params`` and its text.  The tags, the line breaks and the whitespace between
the elements are framing, so the spans tile the block.
"""

from __future__ import annotations

import re
from typing import Final

from ...core.events import ErrorType, FramingEvent, ParseEvent
from ...core.kit import CallContext, PluginBlock, Reader, ReaderPlugin, failure
from ..llama.pythonic_syntax import PYTHONIC_NAME_MAX, is_pythonic_name, parse_pythonic_call

__all__ = ["CALLS_END", "CALLS_START", "FunctionCallsPlugin", "FunctionCallsReader"]

CALLS_START: Final = "<function_calls>"
CALLS_END: Final = "</function_calls>"

_OUTSIDE: Final = re.compile(r"""["'()\[\]{}\n]""")
_IN_STRING: Final = {'"': re.compile(r'["\\]'), "'": re.compile(r"['\\]")}
_WS: Final = " \t\r\n"


class FunctionCallsReader(Reader):
    """Reads one ``<function_calls>`` block: a pythonic call on each line."""

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self._quote = ""
        self._escaped = False
        self._depth = 0
        # The open element: its start and end (-1: none yet), its head before the first
        # bracket, whether that head is still a plain name, and its call's context.
        self._start = -1
        self._end = -1
        self._head: list[str] = []
        self._head_size = 0
        self._plain = True
        self._context: CallContext | None = None
        # The elements read: (start, end, the context of an announced call or None).
        self._elements: list[tuple[int, int, CallContext | None]] = []

    def feed(self, data: str, start: int, out: list[ParseEvent]) -> None:
        """Follow strings, brackets and line breaks; announce a call at its ``(``."""
        i, n = 0, len(data)
        while i < n:
            if self._quote:
                i = self._in_string(data, i, start)
                continue
            m = _OUTSIDE.search(data, i)
            k = n if m is None else m.start()
            if k > i:
                self._text(data, i, k, start)
            if m is None:
                return
            c = data[k]
            i = k + 1
            if c == "\n" and self._depth == 0:
                self._close_element()
                continue
            if c == "\n":
                continue
            self._mark(k + start)
            if c in "\"'":
                self._quote = c
                self._plain = False
            elif c in "([{":
                if c == "(" and self._depth == 0 and self._plain:
                    self._announce(k + start, out)
                self._plain = False
                self._depth += 1
            else:
                self._plain = False
                self._depth = max(self._depth - 1, 0)

    def _in_string(self, data: str, i: int, start: int) -> int:
        """Inside a string from ``i``: where reading goes on."""
        n = len(data)
        if self._escaped:
            self._escaped = False
            i += 1
        m = _IN_STRING[self._quote].search(data, i)
        if m is None:
            self._end = start + n
            return n
        k = m.start()
        if data[k] == "\\":
            if k + 1 == n:
                self._escaped = True
                self._end = start + n
                return n
            self._end = start + k + 2
            return k + 2
        self._quote = ""
        self._end = start + k + 1
        return k + 1

    def _text(self, data: str, i: int, k: int, start: int) -> None:
        """Plain characters ``data[i:k]`` outside strings (no bracket, no line break)."""
        piece = data[i:k]
        stripped = piece.strip(_WS)
        if not stripped:
            return
        first = i + len(piece) - len(piece.lstrip(_WS))
        self._mark(start + first)
        self._end = start + i + len(piece.rstrip(_WS))
        if self._depth == 0 and self._plain:
            if self._head_size + len(piece) > PYTHONIC_NAME_MAX:
                self._plain = False
            else:
                self._head.append(piece)
                self._head_size += len(piece)

    def _mark(self, at: int) -> None:
        """A non-whitespace character at ``at``: it opens an element if none is open."""
        if self._start < 0:
            self._start = at
            self._head, self._head_size, self._plain = [], 0, True
            self._context = None
        self._end = max(self._end, at + 1)

    def _announce(self, at: int, out: list[ParseEvent]) -> None:
        name = "".join(self._head).strip(_WS)
        if not is_pythonic_name(name) or name not in self.call.tool_registry:
            return
        # The block's own call index for its first call; a new one for each other.
        context = self.call if not self.announced else CallContext(self.call.plugin)
        self.announced = True
        self._context = context
        out.append(context.start(name, (self._start, at)))

    def _close_element(self) -> None:
        if self._start >= 0:
            self._elements.append((self._start, self._end, self._context))
            self._start = self._end = -1

    def accepts_end(self) -> bool:
        """``</function_calls>`` inside a string or brackets is content."""
        return not self._quote and self._depth == 0

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """One outcome per element; tags, line breaks and whitespace are framing."""
        self._close_element()
        if not self._elements:
            return failure(ErrorType.MALFORMED_TOOL, "the function_calls block is empty", block)
        raw, origin = block.raw, block.span[0]
        out: list[ParseEvent] = []
        pos = origin
        for start, end, context in self._elements:
            if pos < start:
                out.append(FramingEvent(text=raw[pos - origin : start - origin], span=(pos, start)))
            piece = PluginBlock("", "", raw[start - origin : end - origin], (start, end))
            out.extend(self._outcome(piece, context))
            pos = end
        if pos < block.span[1]:
            out.append(FramingEvent(text=raw[pos - origin :], span=(pos, block.span[1])))
        return out

    def _outcome(self, piece: PluginBlock, context: CallContext | None) -> list[ParseEvent]:
        parsed = parse_pythonic_call(piece.content)
        index = None if context is None else context.call_index
        if isinstance(parsed, str):
            return failure(
                ErrorType.MALFORMED_TOOL,
                f"the tool call {parsed}; expected name(param=value, ...) on its line; "
                "the call is not executed",
                piece,
                call_index=index,
            )
        name, arguments = parsed
        model = self.call.tool_registry.get(name)
        if model is None or context is None:
            return self.call.unknown_tool(name, piece)
        return context.call(name, context.validate(name, model, arguments), piece)


class FunctionCallsPlugin(ReaderPlugin):
    r"""Reads OLMo 3's ``<function_calls>`` blocks: ``name(param=value)`` on each line.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> parser = StreamToolParser({"read_file": ReadFile}, plugins=[FunctionCallsPlugin()])
        >>> text = "<function_calls>\nread_file(path='a')\n</function_calls>"
        >>> [e.kind for e in parser.feed(text) + parser.close()]
        ['tool_call_start', 'framing', 'tool_call', 'framing']
    """

    name = "pythonic_function_calls"
    start_tags: tuple[str, ...] = (CALLS_START,)
    end_tag = CALLS_END
    next_chars = "^<"  # a call's name follows; "<function_calls><" is prose (markup)

    reader = FunctionCallsReader
