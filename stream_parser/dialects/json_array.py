r"""The one array reader: a JSON array of calls, ``[{"name": …, "arguments": {…}}, …]``.

Theory of operation.  Several formats write a reply's calls as one JSON array after a
marker (Mistral's v3 ``[TOOL_CALLS]``, and others around the same array).
:class:`JsonArrayReader` (the kit's one reader base) reads that array element by
element as it arrives: whitespace, then ``[`` (or a lone call object ``{``); each
element is followed by a :class:`~stream_parser.dialects.hermes.HermesReader` of its own
(its own call index, its start and arguments streamed as they come), the array's own
commas found with the kit's ``JsonScanner`` (a comma counts only at the array's level,
outside strings).  The block ends just after the ``]`` (or the lone object's ``}``):
the reader sets :attr:`~stream_parser.core.kit.Reader.end` and the text after it is read
as ordinary input.

While an element that is an object is open, its own reader's scanner says where it ends
(:attr:`~stream_parser.dialects.hermes.HermesReader.json_end`) and the array's scanner
rests: it takes up again after the element, in the state any element leaves it in.  So
the long part of a call, its arguments, is read once, by the element's reader, and the
block's fast path (:meth:`JsonArrayReader.fast_path`) is the element's: the core streams
the chunks its scanner takes whole.  The few characters between elements (whitespace,
the commas) go the ordinary way.

An array between two markers (``<tool_calls>[…]</tool_calls>``, a fence, ``<tool_call>``
around the array) is the same reader with one difference, which one class attribute
chooses, :attr:`JsonArrayReader.until_end_tag`: the array's end does not end the block;
the reader goes on in one more state, :data:`AFTER_ARRAY`, where whitespace belongs to
the block and anything else makes it malformed, and its plugin's end tag closes it.
Whether it waits for the end tag or not, a block whose plugin has an end tag follows one
rule (:meth:`JsonArrayReader.accepts_end`): that tag inside one of the array's strings is
content, anywhere else it closes the block, and a block it closed before the array did
is malformed (:attr:`JsonArrayReader.closed` is the one flag that says the array ended).
A format whose end tag may follow the array or not (Granite 3.1's ``<tool_call>[…]``,
whose template writes none) sets :attr:`JsonArrayReader.end_tag_optional`: after the
array the reader waits in :data:`AFTER_ARRAY` through whitespace; the end tag closes the
block, as framing, and anything else ends it just before that character, the whitespace
after the array's last line break then being text, as it is after any block.

The outcome is the framing between elements and, per element, a
call or an error with its raw text; a broken array (empty, an empty element, a trailing
comma) is one error with the whole block's raw text.  A format reads its own markers
around the array, and subclasses for a layout of its own
(:meth:`JsonArrayReader.lead_other`); a start tag that ends with ``[`` opens the array
itself.  An array that no marker announces is read by
:mod:`~stream_parser.dialects.unmarked_array` (a call only when an element proves one,
else text), which builds on the hooks here (:meth:`JsonArrayReader.element_reader`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Final

from pydantic_core import to_jsonable_python

from ..core.events import ErrorType, FramingEvent, ParseEvent, Span, TextOutputEvent
from ..core.kit import (
    CallContext,
    FastData,
    JsonScanner,
    PluginBlock,
    Reader,
    ValueRun,
    failure,
)
from .hermes import HermesReader

__all__ = [
    "AFTER_ARRAY",
    "ARRAY_LEAD",
    "IN_ARRAY",
    "IN_OBJECT",
    "JsonArrayReader",
    "call_object",
    "calls_array",
    "json_end_in",
]

ARRAY_LEAD: Final = 0
"""The state before the array: whitespace, then ``[`` or ``{``."""
IN_ARRAY: Final = 1
"""The state inside the array: elements, commas, the closing ``]``."""
IN_OBJECT: Final = 2
"""The state inside a lone call object (no array around it)."""
AFTER_ARRAY: Final = 3
"""The state after the array, in a block that its plugin's end tag closes
(:attr:`JsonArrayReader.until_end_tag`): whitespace, then the end tag."""

_WS: Final = " \t\r\n"


def _after_element() -> JsonScanner:
    """A scanner of the array as any element leaves it: at its level, a comma expected.

    The array's scanner rests while an object element is read by the element's own
    reader; this one takes up after it.  What it finds (the array's commas and its end)
    depends on nothing that came before.
    """
    scanner = JsonScanner(keep_text=False)
    scanner.feed("[{}")
    return scanner


def json_end_in(scanner: JsonScanner, piece: str) -> int:
    """Feed ``piece`` to ``scanner``; where in it the top-level value ended (just after), or -1."""
    for mark in scanner.feed(piece):
        if mark.kind == "end":
            return mark.end - (scanner.position - len(piece))
    return -1


@dataclasses.dataclass(slots=True)
class _Element:
    """One call object of the array: its reader and its absolute span."""

    reader: HermesReader
    start: int
    end: int = -1


class JsonArrayReader(Reader):
    """Reads a JSON array of calls (or one lone call object), element by element.

    Each element has a call context of its own: a plugin running this reader sets
    ``reserve_index = False``.  Subclasses set :attr:`expected` (the layout, for error
    messages), :attr:`until_end_tag` for an array between two markers (or
    :attr:`end_tag_optional` for one whose end marker may be left out), and may read
    another layout after the marker (:meth:`lead_other`).

    Attributes:
        closed: the array's ``]`` (or the lone object's ``}``) was read.
    """

    expected: ClassVar[str] = '[{"name": "NAME", "arguments": {"key": "value"}}]'
    """The layout the reader expects, named in its error messages."""
    until_end_tag: ClassVar[bool] = False
    """The block goes on after the array, through whitespace only, to its plugin's end tag.

    False (the default): the block ends just after the array, and what follows is read
    as ordinary input.
    """
    end_tag_optional: ClassVar[bool] = False
    """The plugin's end tag may follow the array, after whitespace only, or not at all.

    True: after the array the block goes on through whitespace; the end tag closes it
    (framing, with the whitespace), anything else ends it just before that character,
    and a stream that ends there (cut or not) still makes the array's calls.  The
    calls are given when the block ends.
    """

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self.state = ARRAY_LEAD
        self.handlers = {
            ARRAY_LEAD: self._lead,
            IN_ARRAY: self._array,
            IN_OBJECT: self._array,
            AFTER_ARRAY: self._after_array,
        }
        self.closed = False
        self.array_end = -1  # the stream offset just after the array, once it ended
        self._scanner = JsonScanner(keep_text=False)  # the array being read
        self._elements: list[_Element] = []
        self._broken = ""  # why the array's structure is broken
        self._expect_element = False
        # The reader of the object element being read, until the object ends: its own
        # scanner finds the end (the array's rests), and its fast path is the block's.
        self._inside: HermesReader | None = None

    # --- streaming -----------------------------------------------------------------------

    def begin(self, tag: str, span: Span, out: list[ParseEvent]) -> None:
        """A start tag that ends with the array's ``[`` (a bare array's plugin) opens it."""
        if tag.endswith("["):
            self._lead("[", 0, span[1] - 1, out)

    def _lead(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """What follows the marker tells the layout: ``[`` an array, ``{`` a lone object."""
        c = data[i]
        if c in _WS:
            return i + 1, False
        if c == "[":
            self.open_array()
            return i + 1, False
        if c == "{":
            self.state = IN_OBJECT
            self._open_element(base + i, is_object=True)
            return i, False  # the element reader sees its "{"
        return self.lead_other(data, i, base, out)

    def lead_other(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """The first character after the marker is neither ``[`` nor ``{``.

        The default makes the block malformed: it ends there, or at its plugin's end tag
        (:attr:`until_end_tag`).  A format with another layout (a name first) reads it
        instead.
        """
        if not self.until_end_tag:
            self.end = base + i
        return self.malformed("the calls must be a JSON array or one call object")

    def open_array(self) -> None:
        """The array's ``[`` was read: what follows are its elements.

        A format whose marker holds the bracket (Phi-4-mini's ``functools[``) calls it
        from :meth:`~stream_parser.core.kit.Reader.begin`, so that its start tag can ask
        for a call object right after it (``next_chars = "{"``).
        """
        self.state = IN_ARRAY
        self._expect_element = True
        self._scanner = JsonScanner(keep_text=False)
        self._scanner.feed("[")

    def _open_element(self, at: int, is_object: bool) -> None:
        """An element begins at stream offset ``at`` (an object, or any other value)."""
        reader = self.element_reader()
        self._elements.append(_Element(reader, at))
        self._expect_element = False
        self._inside = reader if is_object else None

    def element_reader(self) -> HermesReader:
        """The reader of the next element: a call object with an index of its own.

        A reader that numbers a call only once it proves one gives an unreserved
        context instead (:meth:`CallContext.unreserved`).
        """
        return HermesReader(CallContext(self.call.plugin))

    @property
    def awaiting_element(self) -> bool:
        """Inside the array, before an element's first character (whitespace aside)."""
        return self.state == IN_ARRAY and self._expect_element

    @property
    def in_string(self) -> bool:
        """Whether the content read so far ends inside one of the array's JSON strings."""
        inside = self._inside  # while an object element is open, its scanner follows it
        return (self._scanner if inside is None else inside.scanner).in_string

    def _array(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """Inside the array (or a lone call object): elements, commas, the end."""
        if self._expect_element:
            c = data[i]
            if c in _WS:
                return i + 1, False
            if c in ",]":  # an empty array, an empty element, or a trailing comma
                empty = c == "]" and not self._elements
                why = "the array is empty" if empty else "the array has an empty element"
                self._broken = self._broken or why
                if c == "]":
                    return self._array_end(base, i + 1)
                return i + 1, False
            self._open_element(base + i, is_object=data[i] == "{")
        element = self._elements[-1] if self._elements else None
        inside = self._inside
        if inside is not None and element is not None:
            # An object element: its reader's scanner finds where it ends.  (What follows
            # the object in the piece is fed too; the reader no longer follows it.)
            inside.feed(data[i:], base + i, out)
            if inside.json_end < 0:
                return len(data), False
            self._inside = None
            k = element.start + inside.json_end - base  # just after the object
            if self.state == IN_OBJECT:  # a lone call object: the array's end, in effect
                element.end = base + k
                return self._array_end(base, k)
            # The rest of the element (whitespace, or stray text) up to its comma.
            self._scanner = _after_element()
            i = k
        k, event = self._scan(data, i)
        if element is not None and element.end < 0:
            element.reader.feed(data[i:k], base + i, out)
        if not event:
            return k, False
        if element is not None and element.end < 0:
            element.end = base + k
        if event == ",":
            self._expect_element = True
            return k + 1, False
        return self._array_end(base, k + 1)  # just after the "]"

    def _array_end(self, base: int, k: int) -> tuple[int, bool]:
        """The array ended just before ``k``: so does the block, unless an end tag closes it."""
        self.closed = True
        self.array_end = base + k
        if self.until_end_tag or self.end_tag_optional:
            self.state = AFTER_ARRAY
            return k, False
        self.end = base + k
        return k, True

    def _after_array(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """After the array, in a block its end tag closes: whitespace, then that tag."""
        n = len(data)
        while i < n and data[i] in _WS:
            i += 1
        if i < n:
            if self.end_tag_optional:  # not the end tag: the block ended before this
                self.end = base + i
                return i, True
            return self.malformed("the block has text after its array, before its end tag")
        return i, False

    def _scan(self, data: str, i: int) -> tuple[int, str]:
        """Follow ``data`` from ``i`` to the end of an element; return where and how.

        ``"close"``: the bracket at the returned index closed the array; ``","``: the comma
        at the returned index ends an element of the array;
        ``""``: the data ran out (index ``len(data)``).
        """
        scanner = self._scanner
        n = len(data)
        while i < n:
            # The scanner reports where the array ends but not its commas: feed it up to
            # each comma, and see whether the comma left it at the array's own level.
            comma = data.find(",", i)
            stop = n if comma < 0 else comma + 1
            end = json_end_in(scanner, data[i:stop])
            if end >= 0:
                return i + end - 1, "close"
            if comma >= 0 and scanner.depth == 1 and not scanner.in_string:
                return comma, ","
            i = stop
        return n, ""

    def fast_path(self) -> FastData | None:
        """Inside an object element, the element reader's fast path (between, none)."""
        inside = self._inside
        if inside is None or self.held:
            return None
        return inside.fast_path()

    def value_run(self) -> ValueRun | None:
        """The open element's arguments, which the core streams while its scanner skips."""
        inside = self._inside
        return None if inside is None else inside.value_run()

    # --- outcomes ------------------------------------------------------------------------

    @property
    def read_array(self) -> bool:
        """The block held an array or a lone call object (rather than another layout)."""
        return bool(self._elements or self._broken)

    @property
    def error_index(self) -> int | None:
        """The index of the last announced element, for the block's error events."""
        for element in reversed(self._elements):
            if element.reader.announced:
                return element.reader.call.call_index
        return None

    def accepts_end(self) -> bool:
        """An end tag inside one of the array's JSON strings is content.

        For a plugin with an end tag (``<tool_calls>[…]</tool_calls>``, Granite 3.1's
        ``<tool_call>[…]``): a closing tag written inside a string value does not end
        the block; anywhere else it does, and the block's outcome says whether the array
        was whole (:attr:`closed`).  A malformed block ends at its end tag wherever.
        """
        return bool(self.why) or not self.in_string

    def unclosed(self, block: PluginBlock) -> list[ParseEvent]:
        """With :attr:`end_tag_optional`, a stream that ends after the array makes its calls.

        Even a cut one: the array was whole, and the format needs no end tag.
        """
        if self.end_tag_optional and self.closed and not self.why:
            return self.array_outcome(block)
        return super().unclosed(block)

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """The block's calls, or an error and its raw text."""
        if self.why:
            return self.malformed_block(self.why, block)
        return self.array_outcome(block)

    def malformed_block(self, why: str, block: PluginBlock) -> list[ParseEvent]:
        """The whole block as one malformed-call error, with its raw text."""
        return failure(
            ErrorType.MALFORMED_TOOL,
            f"{why}; expected {self.expected}; the call is not executed",
            block,
            call_index=self.error_index,
        )

    def array_outcome(self, block: PluginBlock) -> list[ParseEvent]:
        """Framing around the elements; each element a call, or an error and its text."""
        if self._broken:
            return self.malformed_block(self._broken, block)
        if not self.closed:  # the plugin's end tag came before the array's end
            why = "the array is not closed" if self.read_array else "the block holds no array"
            return self.malformed_block(why, block)
        start, raw = block.span[0], block.raw
        out: list[ParseEvent] = []
        pos = start
        for element in self._elements:
            _framing(raw, start, pos, element.start, out)
            content = raw[element.start - start : element.end - start]
            sub = PluginBlock("", "", content, (element.start, element.end))
            out.extend(element.reader.finish(sub))
            pos = element.end
        tail = ""  # text at the block's end, after the array
        if self.end_tag_optional and not block.end_tag:
            tail = _text_after_array(raw[self.array_end - start :], prose=self.end is not None)
        end = block.span[1] - len(tail)
        _framing(raw, start, pos, end, out)
        if tail:
            out.append(TextOutputEvent(text=tail, span=(end, block.span[1])))
        return out


def _text_after_array(after: str, prose: bool) -> str:
    """What of ``after`` (a block's end after its array, no end tag) is text, not framing.

    Whitespace is framing, as the core frames it after a block: all of it when nothing
    follows in the block or the stream (``prose`` False), else up to its last line
    break.  What follows the whitespace in the block (an end tag a cut stream left
    partial) is text.
    """
    rest = after.lstrip(_WS)
    space = after[: len(after) - len(rest)]
    if not prose and not rest:
        return ""
    return after[space.rfind("\n") + 1 :]


def _framing(raw: str, start: int, begin: int, end: int, out: list[ParseEvent]) -> None:
    """``raw[begin:end]`` (offsets absolute, ``raw`` starting at ``start``) as framing."""
    if begin < end:
        out.append(FramingEvent(text=raw[begin - start : end - start], span=(begin, end)))


def calls_array(calls: Iterable[tuple[str, Mapping[str, Any]]]) -> str:
    """The calls as the one JSON array the array formats write after their marker.

    ``", "`` and ``": "`` as chat templates' ``tojson`` writes them; values that are
    not JSON types (models, enums, paths, dates) are written as their JSON form.

    Example:
        >>> print(calls_array([("read_file", {"path": "a.py"}), ("now", {})]))
        [{"name": "read_file", "arguments": {"path": "a.py"}}, {"name": "now", "arguments": {}}]
    """
    return f"[{', '.join(call_object(tool_name, args) for tool_name, args in calls)}]"


def call_object(tool_name: str, args: Mapping[str, Any]) -> str:
    """One call as the array's element (and a hermes-style block's object) is written.

    Example:
        >>> print(call_object("read_file", {"path": "a.py"}))
        {"name": "read_file", "arguments": {"path": "a.py"}}
    """
    return f'{{"name": {_json(tool_name)}, "arguments": {_json(dict(args))}}}'


def _json(value: Any) -> str:
    return json.dumps(to_jsonable_python(value, by_alias=True), ensure_ascii=False)
