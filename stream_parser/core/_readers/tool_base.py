"""The TOOL reader's base: the call as a whole, and what its phases share.

:class:`ToolReaderBase` holds the state of the TOOL reader (the registered tools, the
argument converter, the step of each phase), the ways a call ends (its end tag: a
``ToolCallEvent``, or ``invalid_params``; malformed, unclosed or too large: an error
and its markup as text) and what more than one phase does: account text to the call,
open a parameter (from BODY, or from PENDING when its close is confirmed) and open the
pending region at a parameter's closing tag (from VALUE).  The overview of the phases is
in :mod:`.tool`.

The reader is one line of classes, each module building on the one before it:
:class:`ToolReaderBase` here, :class:`~.tool_value.ValueSteps` (the VALUE and CDATA
phases, the watch for a cut call, the fast path), :class:`~.tool_pending.PendingSteps`
(the PENDING phase) and :class:`~.tool.ToolReader` (the BODY phase, and the table of
steps).  Mixins rather than collaborating objects: a step calls the others on ``self``,
so the split adds no attribute lookup or call to the hot path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from ...schema.validation import ToolBuildResult
from ..events import ErrorType, ParseEvent, ToolCallEvent
from ..state import ToolPhase, Trigger
from ..xml_tools import XMLArgumentConverter
from .base import BoundedReader, Cursor
from .pieces import Pieces
from .tool_block import Step, ToolBlock, ToolSpec

__all__ = ["CDATA_OPEN", "PARAM_OPEN", "PARAM_OPEN_PARTIAL", "WS", "ToolReaderBase", "WholeCall"]

WS: Final = re.compile(r"[ \t\r\n]*")
"""Whitespace between a tool body's tags (also after a start tag, for rule 3)."""
# A parameter's start tag inside a tool body: a plain name, no attributes.  The length
# bound keeps what is held while a tag is cut by a chunk boundary small.
PARAM_OPEN: Final = re.compile(r"<([A-Za-z_][A-Za-z0-9_.\-]{0,255})>")
"""A parameter's start tag ``<name>``; group 1 is the name."""
PARAM_OPEN_PARTIAL: Final = re.compile(r"<(?:[A-Za-z_][A-Za-z0-9_.\-]{0,255})?")
"""What a parameter's start tag cut by the end of the buffer can look like."""
CDATA_OPEN: Final = "<![CDATA["
"""The start of a CDATA section in a value."""
# Module-level names: an Enum member lookup is a slow attribute access.
_VALUE, _PENDING = ToolPhase.VALUE, ToolPhase.PENDING


WholeCall = Callable[[str, str], Any]
"""A converter's own ``parse_tool_xml(xml_content, tool_name)``: a whole call's text to
its model instance, or None."""


class ToolReaderBase(BoundedReader[ToolBlock]):
    """The TOOL reader's state, the ends of a call and the entries into a phase.

    Attributes:
        tools: the registered tools, by name.
        converter: builds a call's model from its parameters' raw values.
        whole_call: the converter's own ``parse_tool_xml``, when it has one: it then
            builds the model from the call's whole text, at the end tag.
    """

    __slots__ = ("_steps", "converter", "tools", "whole_call")

    def __init__(
        self, cur: Cursor, tools: Mapping[str, ToolSpec], converter: XMLArgumentConverter
    ) -> None:
        super().__init__(cur)
        self.tools = tools
        self.converter = converter
        self.whole_call: WholeCall | None = None
        # The step of each phase, set by ToolReader: the class that has them all.
        self._steps: dict[ToolPhase, Step]

    # --- the block ---------------------------------------------------------------------

    def too_large(self, block: ToolBlock, out: list[ParseEvent]) -> None:
        """A ``tool_too_large`` error and the block so far as text."""
        self._fail(
            block,
            out,
            ErrorType.TOOL_TOO_LARGE,
            f"tool call {block.spec.name!r} is longer than max_tool_size "
            f"({self.cur.config.max_tool_size} characters); it is delivered as text",
            error_span=(block.start, block.limit),
            quote=False,
        )
        block.raw = Pieces()
        block.quiet = []
        block.pend = []
        block.elements = []

    def _set_phase(self, block: ToolBlock, phase: ToolPhase) -> None:
        block.phase = phase
        block.step = self._steps[phase]

    def _take(
        self, block: ToolBlock, buf: str, start: int, end: int, out: list[ParseEvent]
    ) -> None:
        """Account ``buf[start:end]`` to the block's raw text (or emit it, in passthrough)."""
        if start < end:
            if block.passthrough:
                self.cur.text(buf, start, end, out)
            else:
                block.raw.add(buf[start:end])

    def _finish(self, block: ToolBlock, end: int, out: list[ParseEvent]) -> None:
        """The tool's end tag was seen: emit the call, or fall back to text."""
        self.block = None
        self.cur.move(Trigger.TOOL_END)
        if block.passthrough:
            return
        raw = block.raw.text()
        whole_call = self.whole_call
        if whole_call is None:
            result = self.converter.build_instance(block.spec.name, block.params)
        else:
            result = self._whole(whole_call, raw, block.spec.name)
        if result.instance is not None:
            out.append(
                ToolCallEvent(
                    tool_name=block.spec.name,
                    tool_instance=result.instance,
                    raw=raw,
                    call_index=block.call_index,
                    span=(block.start, end),
                )
            )
            return
        self._fail(block, out, ErrorType.INVALID_PARAMS, result.message, details=result.errors)

    def _whole(self, whole_call: WholeCall, raw: str, name: str) -> ToolBuildResult:
        """The model of a call built by the converter's own ``parse_tool_xml``.

        None is an invalid call, and so is an exception (it is the model's text that
        the converter could not read; the exception is named in the error).
        """
        try:
            instance = whole_call(raw, name)
        except Exception as exc:
            return ToolBuildResult(
                instance=None,
                message=f"the tool call {name!r} could not be parsed: {type(exc).__name__}: {exc}",
            )
        if instance is None:
            return ToolBuildResult(
                instance=None, message=f"the tool call {name!r} could not be parsed"
            )
        return ToolBuildResult(instance=instance)

    def _abort(self, block: ToolBlock, j: int, out: list[ParseEvent], message: str = "") -> int:
        """A malformed call (rule 8): the markup so far becomes text, reading goes on at j."""
        self.block = None
        self.cur.move(Trigger.TOOL_ABORT)
        if not block.passthrough:
            self._fail(
                block,
                out,
                ErrorType.MALFORMED_TOOL,
                message
                or (
                    f"unexpected text in the body of tool call {block.spec.name!r}; "
                    "the call is not executed and its markup is delivered as text"
                ),
            )
        return j

    def at_end(self, out: list[ParseEvent]) -> None:
        """An unclosed call (rule 9): never executed, its markup delivered as text."""
        block = self.block
        assert block is not None
        self.block = None
        if block.passthrough:
            return
        self._fail(
            block,
            out,
            ErrorType.UNCLOSED_TOOL,
            f"the stream ended inside tool call {block.spec.name!r}; it is not executed "
            "and its markup is delivered as text",
        )

    def _fail(
        self,
        block: ToolBlock,
        out: list[ParseEvent],
        error_type: ErrorType,
        message: str,
        **options: Any,
    ) -> None:
        """The call does not happen: an error tied to it, then its markup as text."""
        self.cur.fail_block(
            out,
            error_type,
            message,
            block.raw.text(),
            block.start,
            tool_name=block.spec.name,
            call_index=block.call_index,
            **options,
        )

    # --- into a phase ------------------------------------------------------------------

    def _open_param(
        self, block: ToolBlock, name: str, start: int, end: int, out: list[ParseEvent]
    ) -> None:
        """The start tag of parameter ``name`` spans ``start:end``: its value begins."""
        block.param = name
        block.param_close = f"</{name}>"
        block.param_known = known = name in block.spec.params
        block.reset_value()
        block.value_start = end - block.start  # the start tag is in raw already
        tags = (block.param_close, block.spec.close_tag, CDATA_OPEN)
        block.window = max(len(tag) for tag in tags)
        # The value's fast paths stop a tag's length before the size limit (see plain).
        block.fold_at = min(block.fold_at, block.limit - block.window)
        block.cut_short = frozenset(tag[:k] for tag in tags for k in range(1, len(tag)))
        # The exact stop pattern of the value, if one was compiled (see fast_path).
        block.stop = block.spec.value_stops.get(name) if known else None
        self._set_phase(block, _VALUE)
        if block.passthrough:
            return
        tool = block.spec.name
        if not known:
            self._unknown_param(block, name, start, end, out)
            return
        if name in block.params:
            self.cur.error(
                out,
                ErrorType.DUPLICATE_PARAM,
                f"parameter {name!r} of tool {tool!r} is given twice; the last value wins",
                (start, end),
                context=f"<{name}>",
                tool_name=tool,
                call_index=block.call_index,
            )

    def _unknown_param(
        self, block: ToolBlock, name: str, start: int, end: int, out: list[ParseEvent]
    ) -> None:
        """Rule 7: the tool has no parameter ``name``; it is dropped, the call stands."""
        tool = block.spec.name
        self.cur.error(
            out,
            ErrorType.UNKNOWN_PARAM,
            f"tool {tool!r} has no parameter {name!r}; it is ignored "
            f"(parameters: {', '.join(sorted(block.spec.params)) or 'none'})",
            (start, end),
            context=f"<{name}>",
            tool_name=tool,
            call_index=block.call_index,
        )

    def _pend(self, block: ToolBlock, buf: str, i: int, out: list[ParseEvent]) -> int:
        """The parameter's closing tag is at ``i``: its close is pending (rule 5)."""
        end = i + len(block.param_close)
        block.pend_start = self.cur.offset + i
        block.pend = []
        block.elements = []
        block.elem_open = block.elem_close = ""
        self._hold(block, buf, i, end, out)
        self._set_phase(block, _PENDING)
        return end

    def _hold(
        self, block: ToolBlock, buf: str, start: int, end: int, out: list[ParseEvent]
    ) -> None:
        """Consume ``buf[start:end]`` into the pending region (or emit it, in passthrough)."""
        if start < end:
            if block.passthrough:
                self.cur.text(buf, start, end, out)
                return
            piece = buf[start:end]
            block.raw.add(piece)
            if block.param_known:
                block.pend.append(piece)
