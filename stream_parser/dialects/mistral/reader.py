r"""The mistral reader: ``[TOOL_CALLS]`` and the calls after it, v11 and JSON-list forms.

:class:`MistralReader` (the kit's one reader base, with a state per part of the
layout) reads a reply's calls after ``[TOOL_CALLS]``: v11's ``NAME[ARGS]{...}`` (with
``[CALL_ID]``), and the older JSON list, each call's JSON followed with the kit's
``JsonScanner`` and its arguments streamed verbatim; :class:`MistralPlugin` runs it.  See the
package for the format and its outcomes.
"""

from __future__ import annotations

import dataclasses
import json
import re
from typing import Final

from ...core.events import (
    ErrorType,
    FramingEvent,
    ParseEvent,
    Span,
)
from ...core.kit import (
    CallContext,
    FastData,
    JsonScanner,
    PluginBlock,
    Reader,
    ReaderPlugin,
    ValueRun,
    failure,
    refuse_chunk,
)
from ..hermes import HermesReader

TOOL_CALLS: Final = "[TOOL_CALLS]"
"""The token that opens the calls (v3: the array; v11: each call)."""
ARGS: Final = "[ARGS]"
"""The token between a v11 call's name (or id) and its arguments."""
CALL_ID: Final = "[CALL_ID]"
"""The token between a v11 call's name and its id."""
THINK_START: Final = "[THINK]"
"""The token that opens reasoning."""
THINK_END: Final = "[/THINK]"
"""The token that closes reasoning."""


_MAX_NAME: Final = 256  # longest name (or id) followed
_WS: Final = " \t\r\n"
_NAME_CHARS: Final = re.compile(r"[A-Za-z0-9_.:\-]+")
_DECODER: Final = json.JSONDecoder(strict=False)  # lenient: models write raw control chars

# What the block is reading.
_LEAD, _NAME, _MARK, _ID, _BEFORE_ARGS, _ARGS, _ARRAY, _OBJECT, _DONE = range(9)


def _end_in(scanner: JsonScanner, piece: str) -> int:
    """Feed ``piece``; where in it the top-level value ended (just after), or -1."""
    for mark in scanner.feed(piece):
        if mark.kind == "end":
            return mark.end - (scanner.position - len(piece))
    return -1


@dataclasses.dataclass(slots=True)
class _Element:
    """One call object of a v3 array: its reader and its absolute span."""

    reader: HermesReader
    start: int
    end: int = -1


class MistralReader(Reader):
    """Reads one ``[TOOL_CALLS]`` block: a v11 call, a v3 array, or a lone call object.

    The block has no end marker: the reader ends it (:attr:`~Reader.end`) after the JSON
    that closes it, or where its layout breaks.  Its context is reserved once a v11
    call's name is read; each element of a v3 array has a context of its own.
    """

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self.state = _LEAD
        self.handlers = {
            _LEAD: self._lead,
            _NAME: self._word,
            _ID: self._word,
            _MARK: self._mark,
            _BEFORE_ARGS: self._before_args,
            _ARGS: self._args,
            _ARRAY: self._array,
            _OBJECT: self._array,
        }
        self._pieces: list[str] = []  # a name, marker or id being read
        self._size = 0
        self._name = ""
        self._id: str | None = None  # v11: the id after [CALL_ID]
        self._name_span: Span = (0, 0)
        self._named = False  # v11: the name was read (the call's index is reserved)
        self._scanner = JsonScanner(keep_text=False)  # the JSON being read
        # The arguments' chunks that the scanner takes whole, streamed by the core.
        self._run = ValueRun(scanner=self._scanner, arguments=True)
        self._elements: list[_Element] = []
        self._broken = ""  # v3: why the array's structure is broken
        self._expect_element = False
        self._mark_from = _NAME  # what came before the token being read

    # --- streaming -----------------------------------------------------------------------

    def _lead(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """What follows the token tells the layout: ``[`` a v3 array, ``{`` an object."""
        c = data[i]
        if c in _WS:
            return i + 1, False
        if c == "[":
            self.state = _ARRAY
            self._expect_element = True
            self._scanner = JsonScanner(keep_text=False)
            self._scanner.feed("[")
            return i + 1, False
        if c == "{":
            self.state = _OBJECT
            self._scanner = JsonScanner(keep_text=False)  # it sees the "{" itself
            self._open_element(base + i)
            return i, False  # the element reader sees its "{"
        self.state = _NAME
        self._name_span = (base + i, base + i)
        return i, False

    def _word(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """A v11 name (or id): up to ``[ARGS]``, ``[CALL_ID]`` or the arguments' ``{``."""
        phase = self.state
        m = _NAME_CHARS.match(data, i)
        if m is not None:
            k = m.end()
            self._pieces.append(data[i:k])
            self._size += k - i
            if self._size > _MAX_NAME:
                return self._break(base + i, "the name is too long")
            if phase == _NAME:
                self._name_span = (self._name_span[0], base + k)
            return k, False
        c = data[i]
        if c == "[":
            self._end_of_word()
            self.state = _MARK
            self._mark_from = phase
            self._pieces = ["["]
            return i + 1, False
        if c == "{" and phase == _NAME:
            self._end_of_word()
            return self._open_args(i, base, out)
        what = "the tool name" if phase == _NAME else "the call id"
        return self._break(base + i, f"{what} cannot hold {c!r}")

    def _mark(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """A token after the name: ``[ARGS]``, or ``[CALL_ID]`` and an id."""
        marker = "".join(self._pieces) + data[i]
        allowed = (ARGS, CALL_ID) if self._mark_from == _NAME else (ARGS,)
        if not any(token.startswith(marker) for token in allowed):
            return self._break(base + i, f"{marker!r} is not {ARGS}")
        self._pieces = [marker]
        if marker == ARGS:
            self._pieces = []
            self.state = _BEFORE_ARGS
        elif marker == CALL_ID:
            self._pieces = []
            self._size = 0
            self.state = _ID
        return i + 1, False

    def _before_args(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """Whitespace after ``[ARGS]``, then the arguments' ``{``."""
        c = data[i]
        if c in _WS:
            return i + 1, False
        if c != "{":
            return self._break(base + i, "the arguments must be a JSON object")
        return self._open_args(i, base, out)

    def _end_of_word(self) -> None:
        """A name (or id) ended: keep the name, and start the call once the name is known."""
        word = "".join(self._pieces)
        self._pieces = []
        if self.state == _NAME:
            self._name = word
            self._named = True
            self.call.reserve()
        else:
            self._id = word

    def _open_args(self, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """The ``{`` of a v11 call's arguments at ``i``: announce the call, stream them."""
        call = self.call
        if not self._name:
            return self._break(base + i, "the tool name is missing")
        if self._name in call.tool_registry:
            self.announced = True
            out.append(call.start(self._name, self._name_span, self._id))
        self.state = _ARGS
        self._scanner = JsonScanner(keep_text=False)  # it sees the "{" itself
        return i, False

    def _args(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """Inside a v11 call's arguments: stream them up to the brace that closes them."""
        end = _end_in(self._scanner, data[i:])
        if end < 0:
            k = len(data)
        else:
            k = i + end
            self.end = base + k
        self._delta(data, i, k, base, out)
        return k, end >= 0

    def fast_path(self) -> FastData | None:
        """Inside a v11 call's arguments (a string, a nested value): the scanner skips."""
        self._run.armed = False
        if self.state != _ARGS or not self._scanner.skips:
            return None
        call = self.call
        if self.announced and call.emit_deltas:
            self._run.arm_json(self._scanner, self._name, call.call_index, self._id)
            return None, refuse_chunk, False  # the run takes what it can; no end tag
        return None, self._plain, False

    def value_run(self) -> ValueRun | None:
        """The arguments, which the core streams while the scanner takes a chunk whole."""
        return self._run

    def _plain(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`_args` for a chunk that cannot end the arguments (no deltas wanted)."""
        return self._scanner.skip(data)

    def _delta(self, data: str, begin: int, end: int, base: int, out: list[ParseEvent]) -> None:
        call = self.call
        if begin < end and self.announced and call.emit_deltas:
            span = (base + begin, base + end)
            delta = data[begin:end]
            out.append(call.arguments_delta(self._name, delta, span, self._id))

    def _break(self, at: int, why: str) -> tuple[int, bool]:
        """The layout broke at offset ``at``: the block ends there, malformed."""
        self.end = at
        return self.malformed(why)

    # --- v3 arrays ---------------------------------------------------------------------

    def _open_element(self, at: int) -> None:
        call = CallContext(self.call.plugin)
        self._elements.append(_Element(HermesReader(call), at))
        self._expect_element = False

    def _array(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """Inside a v3 array (or a lone call object): elements, commas, the end."""
        if self._expect_element:
            c = data[i]
            if c in _WS:
                return i + 1, False
            if c in ",]":  # an empty array, an empty element, or a trailing comma
                self._broken = self._broken or "the array has an empty element"
                if c == "]":
                    self.end = base + i + 1
                    return i + 1, True
                return i + 1, False
            self._open_element(base + i)
        element = self._elements[-1] if self._elements else None
        k, event = self._scan(data, i)
        if self.state == _OBJECT and event:
            k += 1  # the element's own closing brace
        if element is not None and element.end < 0:
            element.reader.feed(data[i:k], base + i, out)
        if not event:
            return k, False
        if element is not None and element.end < 0:
            element.end = base + k
        if event == ",":
            self._expect_element = True
            return k + 1, False
        if self.state == _ARRAY:
            k += 1  # the "]"
        self.end = base + k
        return k, True

    def _scan(self, data: str, i: int) -> tuple[int, str]:
        """Follow ``data`` from ``i`` to the end of an element; return where and how.

        ``"close"``: the bracket at the returned index closed the array (or the lone call
        object); ``","``: the comma at the returned index ends an element of the array;
        ``""``: the data ran out (index ``len(data)``).
        """
        scanner = self._scanner
        n = len(data)
        if self.state == _OBJECT:
            end = _end_in(scanner, data[i:])
            return (n, "") if end < 0 else (i + end - 1, "close")
        while i < n:
            # The scanner reports where the array ends but not its commas: feed it up to
            # each comma, and see whether the comma left it at the array's own level.
            comma = data.find(",", i)
            stop = n if comma < 0 else comma + 1
            end = _end_in(scanner, data[i:stop])
            if end >= 0:
                return i + end - 1, "close"
            if comma >= 0 and scanner.depth == 1 and not scanner.in_string:
                return comma, ","
            i = stop
        return n, ""

    # --- outcomes ------------------------------------------------------------------------

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """The block's calls, or an error and its raw text."""
        if self.why:
            return self._malformed(self.why, block)
        if self._elements or self._broken:
            return self._array_outcome(block)
        return self._v11_outcome(block)

    @property
    def error_index(self) -> int | None:
        """The index of the v11 call, or of the last announced element of an array."""
        if self.announced:
            return self.call.call_index
        for element in reversed(self._elements):
            if element.reader.announced:
                return element.reader.call.call_index
        return None

    def _malformed(self, why: str, block: PluginBlock) -> list[ParseEvent]:
        return failure(
            ErrorType.MALFORMED_TOOL,
            f"{why}; expected {_EXPECTED}; the call is not executed",
            block,
            call_index=self.error_index,
        )

    def _v11_outcome(self, block: PluginBlock) -> list[ParseEvent]:
        call = self.call
        if not self._named:  # pragma: no cover - a closed v11 block always has its name
            return self._malformed("the call is incomplete", block)
        raw = block.raw
        brace = self._name_span[1] - block.span[0]
        brace = raw.index("{", brace)
        try:
            arguments = _DECODER.decode(raw[brace:])
        except (ValueError, RecursionError) as exc:
            return self._malformed(f"the arguments are not valid JSON ({exc})", block)
        model = call.tool_registry.get(self._name)
        if model is None:
            return call.unknown_tool(self._name, block)
        if not isinstance(arguments, dict):  # pragma: no cover - the scanner saw an object
            return self._malformed("the arguments must be a JSON object", block)
        result = call.validate(self._name, model, arguments)
        # The id the model wrote ([CALL_ID]) goes with the call, for the tool's result.
        return call.call(self._name, result, block, self._id)

    def _array_outcome(self, block: PluginBlock) -> list[ParseEvent]:
        """Framing around the elements; each element a call, or an error and its text."""
        if self._broken or not self._elements:
            return self._malformed(self._broken or "the array is empty", block)
        start, raw = block.span[0], block.raw
        out: list[ParseEvent] = []
        pos = start
        for element in self._elements:
            _framing(raw, start, pos, element.start, out)
            content = raw[element.start - start : element.end - start]
            sub = PluginBlock("", "", content, (element.start, element.end))
            out.extend(element.reader.finish(sub))
            pos = element.end
        _framing(raw, start, pos, block.span[1], out)
        return out


class MistralPlugin(ReaderPlugin):
    """Reads Mistral's ``[TOOL_CALLS]`` calls, v3 arrays and v11 ``NAME[ARGS]{...}`` alike.

    ``ParserConfig(dialect="mistral")`` registers one for you.  A ``[TOOL_CALLS]`` right
    after a backtick, or followed by one, is prose and stays text.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> parser = StreamToolParser({"read_file": ReadFile}, plugins=[MistralPlugin()])
        >>> text = '[TOOL_CALLS]read_file[ARGS]{"path": "a.py"} Done.'
        >>> [e.kind for e in parser.feed(text) + parser.close()]
        ['tool_call_start', 'tool_arguments_delta', 'tool_call', 'text']
    """

    name = "mistral"
    start_tags: tuple[str, ...] = (TOOL_CALLS,)
    end_tag = ""
    next_chars = "^`"
    reader = MistralReader
    reserve_index = False  # a v11 call's index once its name is read; an array's per element


def _framing(raw: str, start: int, begin: int, end: int, out: list[ParseEvent]) -> None:
    """``raw[begin:end]`` (offsets absolute, ``raw`` starting at ``start``) as framing."""
    if begin < end:
        out.append(FramingEvent(text=raw[begin - start : end - start], span=(begin, end)))


_EXPECTED: Final = (
    f'{TOOL_CALLS}NAME{ARGS}{{"key": "value"}} or '
    f'{TOOL_CALLS} [{{"name": "NAME", "arguments": {{"key": "value"}}}}]'
)
