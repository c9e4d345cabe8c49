"""The TOOL reader's PENDING phase: does a parameter's closing tag end its value?

After a parameter's closing tag ``</p>`` (rule 5) the close is pending until what
follows decides it.  The tool's end tag or a declared parameter's start tag confirms
it, after any whitespace and plain undeclared elements ``<x>...</x>`` (each an
``unknown_param``, dropped).  Anything else rejects it: ``</p>`` and what followed
become value, and the VALUE step goes on (:mod:`.tool_value`); a later ``</p>`` is the
new pending close.  The text read while pending is kept in the block (``pend``), not in
the parser's tail, and its value deltas wait for the decision.  While the value is
watched, a call's start tag here cuts the call as it does in the value.

The pending region is opened by :meth:`~.tool_base.ToolReaderBase._pend`; this module
holds the step that reads it and the two outcomes.
"""

from __future__ import annotations

from typing import Final

from ..events import ParseEvent, _fast_param_delta
from ..state import ToolPhase
from .base import NO, WAIT
from .tool_base import PARAM_OPEN, PARAM_OPEN_PARTIAL, WS
from .tool_block import ToolBlock
from .tool_value import ValueSteps

__all__ = ["PendingSteps"]

# Module-level name: an Enum member lookup is a slow attribute access.
_VALUE: Final = ToolPhase.VALUE


def _cut_short(rest: str, *tags: str) -> bool:
    """Is ``rest`` (the buffer's end) a proper prefix of one of ``tags``?"""
    return any(len(rest) < len(tag) and tag.startswith(rest) for tag in tags)


class PendingSteps(ValueSteps):
    """The step of the PENDING phase and its outcomes, confirmed or rejected."""

    __slots__ = ()

    def _pending(self, block: ToolBlock, buf: str, pos: int, out: list[ParseEvent]) -> int:
        """PENDING: what follows a parameter's closing tag, up to what decides its close."""
        n = len(buf)
        cur = self.cur
        final = cur.final
        spec = block.spec
        end_tag = spec.close_tag
        close = block.param_close
        watching = block.watch >= 0 and not block.passthrough
        i = pos
        while True:
            elem_close = block.elem_close
            if elem_close:
                # Inside an undeclared element: its closing tag ends it; the parameter's
                # closing tag, the tool's end tag or the element's own start tag (nested)
                # reject the pending close; a call's start tag, when watched, cuts it.
                elem_open = block.elem_open
                window = max(len(elem_close), len(close), len(end_tag))
                k = buf.find("<", i)
                while k >= 0:
                    if buf.startswith(elem_close, k):
                        break
                    if (
                        buf.startswith(close, k)
                        or buf.startswith(end_tag, k)
                        or buf.startswith(elem_open, k)
                    ):
                        self._hold(block, buf, i, k, out)
                        return self._reject(block, k, out)
                    if watching:
                        verdict = self._starts_call(buf, k)
                        if verdict != NO:
                            self._hold(block, buf, i, k, out)
                            return k if verdict == WAIT else self._cut(block, k, out)
                    if (
                        not final
                        and n - k < window
                        and _cut_short(buf[k:], elem_close, close, end_tag, elem_open)
                    ):
                        self._hold(block, buf, i, k, out)
                        return k
                    k = buf.find("<", k + 1)
                else:
                    self._hold(block, buf, i, n, out)
                    return n
                end = k + len(elem_close)
                self._hold(block, buf, i, end, out)
                block.elem_open = block.elem_close = ""
                i = end
                continue
            # Between elements: whitespace, then what decides.
            j = WS.match(buf, i).end()  # type: ignore[union-attr]
            self._hold(block, buf, i, j, out)
            if j == n:
                return n  # undecided; at the end of the stream, the call is unclosed
            if buf[j] != "<":
                return self._reject(block, j, out)
            if buf.startswith(end_tag, j):
                end = j + len(end_tag)
                self._confirm(block, out)
                self._take(block, buf, j, end, out)
                self._finish(block, cur.offset + end, out)
                return end
            m = PARAM_OPEN.match(buf, j)
            if m is not None:
                name = m.group(1)
                if name in spec.params or name == block.param:
                    self._confirm(block, out)
                    self._take(block, buf, j, m.end(), out)
                    base = cur.offset
                    self._open_param(block, name, base + j, base + m.end(), out)
                    return m.end()
                if watching:
                    verdict = self._starts_call(buf, j)
                    if verdict != NO:
                        return j if verdict == WAIT else self._cut(block, j, out)
                self._hold(block, buf, j, m.end(), out)
                base = cur.offset
                block.elements.append((name, base + j, base + m.end()))
                block.elem_open = m.group(0)
                block.elem_close = f"</{name}>"
                i = m.end()
                continue
            if not final and (_cut_short(buf[j:], end_tag) or PARAM_OPEN_PARTIAL.fullmatch(buf, j)):
                return j
            # Another closing tag (this parameter's: a new pending close), markup that is
            # no plain element, or a tag cut by the end of the stream: value.
            return self._reject(block, j, out)

    def _confirm(self, block: ToolBlock, out: list[ParseEvent]) -> None:
        """The pending close is confirmed: the value is what came before it."""
        if not block.passthrough:
            self._send_quiet(block, out)
            if block.param_known:
                block.params[block.param] = block.raw.slice(
                    block.value_start, block.pend_start - block.start
                )
            for name, start, end in block.elements:
                self._unknown_param(block, name, start, end, out)
        block.reset_value()

    def _reject(self, block: ToolBlock, k: int, out: list[ParseEvent]) -> int:
        """The pending close is rejected at ``k``: it and what followed are value."""
        # The value runs on through the pending region (it is a slice of the raw text):
        # only its deltas are owed.
        if block.pend and self.cur.emit_deltas:
            if block.watch >= 0:
                block.quiet.extend(block.pend)
            else:
                piece = "".join(block.pend)
                start = block.pend_start
                out.append(
                    _fast_param_delta(
                        block.spec.name,
                        block.param,
                        piece,
                        block.call_index,
                        (start, start + len(piece)),
                    )
                )
        block.pend = []
        block.elements = []
        block.elem_open = block.elem_close = ""
        block.rejected = True
        self._set_phase(block, _VALUE)
        return k
