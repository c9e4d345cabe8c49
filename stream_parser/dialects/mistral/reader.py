r"""The mistral reader: ``[TOOL_CALLS]`` and the calls after it, v11 and JSON-list forms.

:class:`MistralReader` (the kit's one reader base, with a state per part of the
layout) reads a reply's calls after ``[TOOL_CALLS]``: v11's ``NAME[ARGS]{...}`` (with
``[CALL_ID]``), and the older JSON list, each call's JSON followed with the kit's
``JsonScanner`` and its arguments streamed verbatim; :class:`MistralPlugin` runs it.  See the
package for the format and its outcomes.
"""

from __future__ import annotations

import json
import re
from typing import ClassVar, Final

from ...core.events import ParseEvent, Span
from ...core.kit import (
    CallContext,
    FastData,
    JsonScanner,
    PluginBlock,
    ReaderPlugin,
    ValueRun,
    refuse_chunk,
)
from ..json_array import AFTER_ARRAY, ARRAY_LEAD, JsonArrayReader, json_end_in

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

# What the block is reading: the array reader's states, then v11's own.
_NAME, _MARK, _ID, _BEFORE_ARGS, _ARGS = range(AFTER_ARRAY + 1, AFTER_ARRAY + 6)

_end_in = json_end_in


class MistralReader(JsonArrayReader):
    """Reads one ``[TOOL_CALLS]`` block: a v11 call, a v3 array, or a lone call object.

    The block has no end marker: the reader ends it (:attr:`~Reader.end`) after the JSON
    that closes it, or where its layout breaks.  Its context is reserved once a v11
    call's name is read; each element of a v3 array has a context of its own.
    """

    expected: ClassVar[str] = (
        f'{TOOL_CALLS}NAME{ARGS}{{"key": "value"}} or '
        f'{TOOL_CALLS} [{{"name": "NAME", "arguments": {{"key": "value"}}}}]'
    )

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self.state = ARRAY_LEAD
        self.handlers.update(
            {
                _NAME: self._word,
                _ID: self._word,
                _MARK: self._mark,
                _BEFORE_ARGS: self._before_args,
                _ARGS: self._args,
            }
        )
        self._pieces: list[str] = []  # a name, marker or id being read
        self._size = 0
        self._name = ""
        self._id: str | None = None  # v11: the id after [CALL_ID]
        self._name_span: Span = (0, 0)
        self._named = False  # v11: the name was read (the call's index is reserved)
        self._scanner = JsonScanner(keep_text=False)  # the JSON being read
        # The arguments' chunks that the scanner takes whole, streamed by the core.
        self._run = ValueRun(scanner=self._scanner, arguments=True)
        self._mark_from = _NAME  # what came before the token being read

    # --- streaming -----------------------------------------------------------------------

    def lead_other(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """Neither ``[`` nor ``{`` after the token: a v11 call's name."""
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
        """Inside a v11 call's arguments (a string, a nested value): the scanner skips.

        In a v3 array, the array reader's (the open element's).
        """
        self._run.armed = False
        if self.state != _ARGS:
            return super().fast_path()
        if not self._scanner.skips:
            return None
        call = self.call
        if self.announced and call.emit_deltas:
            self._run.arm_json(self._scanner, self._name, call.call_index, self._id)
            return None, refuse_chunk, False  # the run takes what it can; no end tag
        return None, self._plain, False

    def value_run(self) -> ValueRun | None:
        """The arguments, which the core streams while the scanner takes a chunk whole."""
        return self._run if self.state == _ARGS else super().value_run()

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

    # --- outcomes ------------------------------------------------------------------------

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """The block's calls, or an error and its raw text."""
        if self.why:
            return self.malformed_block(self.why, block)
        if self.read_array:
            return self.array_outcome(block)
        return self._v11_outcome(block)

    @property
    def error_index(self) -> int | None:
        """The index of the v11 call, or of the last announced element of an array."""
        if self.announced:
            return self.call.call_index
        return super().error_index

    def _v11_outcome(self, block: PluginBlock) -> list[ParseEvent]:
        call = self.call
        if not self._named:  # pragma: no cover - a closed v11 block always has its name
            return self.malformed_block("the call is incomplete", block)
        raw = block.raw
        brace = self._name_span[1] - block.span[0]
        brace = raw.index("{", brace)
        try:
            arguments = _DECODER.decode(raw[brace:])
        except (ValueError, RecursionError) as exc:
            return self.malformed_block(f"the arguments are not valid JSON ({exc})", block)
        model = call.tool_registry.get(self._name)
        if model is None:
            return call.unknown_tool(self._name, block)
        if not isinstance(arguments, dict):  # pragma: no cover - the scanner saw an object
            return self.malformed_block("the arguments must be a JSON object", block)
        result = call.validate(self._name, model, arguments)
        # The id the model wrote ([CALL_ID]) goes with the call, for the tool's result.
        return call.call(self._name, result, block, self._id)


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
    # vLLM's Mistral parser: "[TOOL_CALLS] directly from reasoning implicitly ends it".
    ends_reasoning = "^`"
    end_tag = ""
    next_chars = "^`"
    reader = MistralReader
    reserve_index = False  # a v11 call's index once its name is read; an array's per element
