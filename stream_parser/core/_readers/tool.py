"""The TOOL reader: a tool call in the core's XML format, ``<tool><p>value</p></tool>``.

A tool block has four phases (``ToolPhase``), each read by a step of its own:

* ``BODY``, between parameters: only whitespace, a parameter's start tag or the tool's
  end tag may appear (rules 4, 7, 8); anything else makes the call malformed, and its
  markup so far is delivered as text.
* ``VALUE``, inside a parameter: only the parameter's closing tag, the tool's end tag,
  a CDATA section and (see below) another call's start tag matter.
* ``PENDING``, after the parameter's closing tag ``</p>`` (rule 5): the close is pending
  until what follows decides it.  The tool's end tag or a declared parameter's start tag
  confirms it, after any whitespace and plain undeclared elements ``<x>...</x>`` (each
  an ``unknown_param``, dropped).  Anything else rejects it: ``</p>`` and what followed
  become value, and the value goes on; a later ``</p>`` is the new pending close.  The
  text read while pending is kept in the block (``pend``), not in the parser's tail, and
  its value deltas wait for the decision.
* ``CDATA``, inside a CDATA section of a value: opaque up to ``]]>``.

Two things end a call inside a value, so that a reply is never swallowed by it:

* the tool's end tag after a rejected close (and no pending one): ``malformed_tool``,
  the raw text up to that end tag, and the reply goes on after it;
* a value that holds the tool's own end tag and then, later, the start tag of a
  registered tool where rule 3 would open it: the call was cut short.  From the first
  end tag in the value on, the reader *watches* (value deltas pause); at such a start
  tag the call ends at that end tag (``malformed_tool``, its raw text up to there) and
  the text after it is given back to the driver, which reads it again as ordinary text
  (``Cursor.give_back``).  The watch stops at the first start tag, so each character is
  read again at most once.

A step returns either after switching the phase (the next step goes on from there),
after the block ended, or when it waits for more input; the phase staying the same
means waiting.  The raw text is kept as :class:`~.pieces.Pieces` (folded as it grows)
and a value is one slice of it, taken when its close is confirmed; parameter values
stream as ``ToolParamDeltaEvent``.  When the block closes, the argument converter
builds the model: a ``ToolCallEvent``, or an ``invalid_params`` error and the raw text.

The reader is split by phase, one module each, every class building on the one before
it: :mod:`.tool_base` (the call as a whole: its ends, and the entries into a phase),
:mod:`.tool_value` (VALUE and CDATA, the watch, the fast path), :mod:`.tool_pending`
(PENDING) and this module (BODY, and :class:`ToolReader` put together).  The blocks are
in :mod:`.tool_block`.
"""

from __future__ import annotations

from typing import Final

from .._scan import TagSpec
from ..events import ParseEvent, ToolCallStartEvent
from ..state import ToolPhase, Trigger
from ..xml_tools import XMLArgumentConverter
from .base import Cursor
from .tool_base import PARAM_OPEN, PARAM_OPEN_PARTIAL, WS, WholeCall
from .tool_block import ToolBlock, ToolTable
from .tool_pending import PendingSteps

__all__ = ["ToolReader"]

# Module-level name: an Enum member lookup is a slow attribute access.
_BODY: Final = ToolPhase.BODY


class ToolReader(PendingSteps):
    """Reads XML tool calls of the registered tools."""

    __slots__ = ()

    def __init__(
        self,
        cur: Cursor,
        table: ToolTable,
        converter: XMLArgumentConverter,
        whole_call: WholeCall | None = None,
    ) -> None:
        super().__init__(cur, table, converter)
        self.whole_call = whole_call
        self._steps = {
            ToolPhase.BODY: self._body,
            ToolPhase.VALUE: self._value_step,
            ToolPhase.CDATA: self._cdata,
            ToolPhase.PENDING: self._pending,
        }

    # --- the block ---------------------------------------------------------------------

    def open(self, spec: TagSpec, buf: str, i: int, out: list[ParseEvent]) -> int:
        """The start tag ``spec`` is at ``i`` (rule 3 holds): open the call."""
        cur = self.cur
        cur.move(Trigger.TOOL_START)
        start = cur.offset + i
        end = i + len(spec.tag)
        tool = self.tools[spec.tool_name]
        block = ToolBlock(tool, start, cur.next_call_index(), cur.config.max_tool_size)
        self._set_phase(block, _BODY)
        self.block = block
        out.append(
            ToolCallStartEvent(
                tool_name=tool.name, call_index=block.call_index, span=(start, cur.offset + end)
            )
        )
        self._take(block, buf, i, end, out)
        return end

    def steps(self, block: ToolBlock, buf: str, pos: int, out: list[ParseEvent]) -> int:
        """Run the phase steps until one waits or the block ends."""
        while True:
            step = block.step
            pos = step(block, buf, pos, out)
            if block.step is step or self.block is not block:
                return pos

    def passthrough(self, block: ToolBlock, buf: str, pos: int, out: list[ParseEvent]) -> int:
        """A too-large block is read the same way, its text emitted."""
        # A method, not ``passthrough = steps``: mypyc turns a class-level alias of a
        # method into a class attribute, and the compiled class then loses the
        # attribute lookup of the methods it inherits.
        return self.steps(block, buf, pos, out)

    # --- BODY --------------------------------------------------------------------------

    def _body(self, block: ToolBlock, buf: str, pos: int, out: list[ParseEvent]) -> int:
        """BODY: whitespace, then a parameter's start tag or the tool's end tag."""
        n = len(buf)
        j = WS.match(buf, pos).end()  # type: ignore[union-attr]
        self._take(block, buf, pos, j, out)
        if j == n:
            return n
        if buf[j] == "<":
            close = block.spec.close_tag
            if buf.startswith(close, j):
                end = j + len(close)
                self._take(block, buf, j, end, out)
                self._finish(block, self.cur.offset + end, out)
                return end
            # Any plain <name> opens a parameter; an unknown name is reported and its
            # value dropped (rule 7), but it is still read so the call can go on.
            m = PARAM_OPEN.match(buf, j)
            if m is not None:
                self._take(block, buf, j, m.end(), out)
                base = self.cur.offset
                self._open_param(block, m.group(1), base + j, base + m.end(), out)
                return m.end()
            if close.startswith(buf[j:]) or PARAM_OPEN_PARTIAL.fullmatch(buf, j):
                # A tag cut by the end of the buffer: wait.  At the end of the stream it
                # is part of an unclosed call (rule 9), not stray text.
                if self.cur.final:
                    self._take(block, buf, j, n, out)
                    return n
                return j
        return self._abort(block, j, out)
