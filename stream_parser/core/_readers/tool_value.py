"""The TOOL reader's VALUE and CDATA phases, the watch for a cut call, the fast path.

Inside a parameter's value only a few tags matter: the parameter's closing tag (its
close becomes pending, read by :mod:`.tool_pending`), the tool's end tag, the start of
a CDATA section (opaque up to ``]]>``) and, while the value is watched, the start tag
of a registered tool where rule 3 would open a call.  Every other character is value,
streamed as ``ToolParamDeltaEvent``.

The watch begins at the first tool end tag held in the value: from there the value's
deltas pause (kept in ``quiet``), since that end tag may turn out to be where the call
ended.  A call's start tag later in the value settles it: the call is cut at that end
tag and the text after it is given back to the driver (:meth:`ValueSteps._cut`).  A
close that is confirmed settles it the other way: the paused deltas are sent
(:meth:`ValueSteps._send_quiet`).  The rules are laid out in :mod:`.tool`.

The fast path of ``feed()`` is here too: inside a value (or CDATA), a chunk without a
tag that matters is all value, taken whole by :meth:`ValueSteps.delta` (each chunk one
delta event, the common case) or :meth:`ValueSteps.plain`.
"""

from __future__ import annotations

import re
from typing import Final

from .._scan import exact_stop_pattern, longest_prefix_suffix, stop_pattern
from ..events import ErrorType, ParseEvent, _fast_param_delta
from ..state import ToolPhase, Trigger
from ..xml_tools import XMLArgumentConverter
from .base import NO, WAIT, YES, Cursor, FastPath
from .pieces import FOLD_SIZE
from .tool_base import CDATA_OPEN, WS, ToolReaderBase
from .tool_block import ToolBlock, ToolTable

# The compiled build keeps a module-level Final in a C variable: calling the event
# builder through it skips a dictionary lookup per event (pure Python: no difference).
_new_param_delta: Final = _fast_param_delta

__all__ = ["ValueSteps"]

_CDATA_CLOSE: Final = "]]>"
# Inside a value only a closing tag ("</") or a CDATA section ("<!") can matter; while
# the value is watched for another call's start, every "<" can.
_VALUE_STOP: Final = stop_pattern(("</", CDATA_OPEN))
# A value longer than this (characters) gets its exact stop pattern: compiling one costs
# about as much as a few hundred chunks, paid once per parameter of a tool set.
_EXACT_AFTER: Final = 1024
_WATCH_STOP: Final = stop_pattern(("<",))
_CDATA_STOP: Final = stop_pattern((_CDATA_CLOSE,))
# Module-level names: an Enum member lookup is a slow attribute access.
_VALUE, _CDATA = ToolPhase.VALUE, ToolPhase.CDATA


class ValueSteps(ToolReaderBase):
    """The steps of the VALUE and CDATA phases, with the watch and the fast path."""

    __slots__ = ("_start_max", "_start_prefixes", "_start_tags")

    def __init__(self, cur: Cursor, table: ToolTable, converter: XMLArgumentConverter) -> None:
        super().__init__(cur, table.specs, converter)
        self.holds_cut = True  # what run() holds at a chunk's end is a cut tag
        # The start tags that open a call in text (rule 3), watched for in a value that
        # holds its tool's end tag: compiled once per tool set, copied to slots here for
        # the hot path.
        self._start_tags = table.start_tags
        self._start_prefixes = table.start_prefixes
        self._start_max = table.start_max

    # --- VALUE and CDATA ---------------------------------------------------------------

    def _value(
        self, block: ToolBlock, buf: str, start: int, end: int, out: list[ParseEvent]
    ) -> None:
        """Consume ``buf[start:end]`` as part of the open parameter's value."""
        if start < end:
            if block.passthrough:
                self.cur.text(buf, start, end, out)
                return
            piece = buf[start:end]
            block.raw.append(piece)
            at = self.cur.offset + end
            if at > block.fold_at:
                block.raw.fold()
                block.fold_at = min(block.limit - block.window, at + FOLD_SIZE)
            if block.param_known and self.cur.emit_deltas:
                if block.watch >= 0:  # undecided: the deltas wait (see _watch)
                    block.quiet.append(piece)
                    return
                base = self.cur.offset
                out.append(
                    _fast_param_delta(
                        block.name,
                        block.param,
                        piece,
                        block.call_index,
                        (base + start, base + end),
                    )
                )

    def _send_quiet(self, block: ToolBlock, out: list[ParseEvent]) -> None:
        """The watched part of the value stays value: send its deltas now."""
        if block.quiet:
            piece = "".join(block.quiet)
            block.quiet = []
            start = block.quiet_start
            out.append(
                _fast_param_delta(
                    block.name,
                    block.param,
                    piece,
                    block.call_index,
                    (start, start + len(piece)),
                )
            )

    def _value_step(self, block: ToolBlock, buf: str, pos: int, out: list[ParseEvent]) -> int:
        """VALUE: the open parameter's value, up to a ``<`` that matters."""
        n = len(buf)
        stop = block.stop
        if stop is not None and block.watch < 0:
            # A declared parameter, not watched: its exact stop pattern skips every '<'
            # that cannot matter (the closing tags of HTML in a file body) in one search.
            m = stop.search(buf, pos)
            if m is None:
                self._value(block, buf, pos, n, out)
                return n
            i = m.start()
            if not self.cur.final and buf[i:] in block.cut_short:
                # The most frequent stop: a '<' (or "</") at the end of the chunk.
                self._value(block, buf, pos, i, out)
                return i
        else:
            i = buf.find("<", pos)
            if i < 0:  # the common case inside a long value: all of it is value
                self._value(block, buf, pos, n, out)
                return n
        # Walk the '<'s of the value.  What matters: this parameter's closing tag (the
        # close becomes pending, rule 5), the tool's end tag (after a rejected close it
        # ends the call as malformed; otherwise the value is watched from there), the
        # start of a CDATA section (opaque until "]]>"), while watched a call's start
        # tag, or a prefix of any of them cut by the end of the buffer (wait for more).
        # Every other '<' is value.
        close = block.param_close
        end_tag = block.spec.close_tag
        window = block.window
        final = self.cur.final
        watching = block.watch >= 0 and not block.passthrough
        cut_short = block.cut_short
        while i >= 0:
            if buf.startswith(close, i):
                self._value(block, buf, pos, i, out)
                return self._pend(block, buf, i, out)
            if buf.startswith(CDATA_OPEN, i):
                end = i + len(CDATA_OPEN)
                self._value(block, buf, pos, end, out)
                self._set_phase(block, _CDATA)
                return end
            if buf.startswith(end_tag, i):
                end = i + len(end_tag)
                if block.rejected:
                    self._value(block, buf, pos, i, out)
                    self._take(block, buf, i, end, out)
                    return self._abort(
                        block,
                        end,
                        out,
                        f"the closing tag of parameter {block.param!r} of tool call "
                        f"{block.spec.name!r} is followed by text, and then the call's end "
                        "tag: the call is not executed and its markup is delivered as text",
                    )
                if block.watch < 0:
                    self._value(block, buf, pos, i, out)
                    self._watch(block, i)
                    watching = not block.passthrough
                    pos = i
                i = buf.find("<", end)
                continue
            if watching:
                verdict = self._starts_call(buf, i)
                if verdict == YES:
                    self._value(block, buf, pos, i, out)
                    return self._cut(block, i, out)
                if verdict == WAIT:
                    self._value(block, buf, pos, i, out)
                    return i
            if not final and n - i < window and buf[i:] in cut_short:
                self._value(block, buf, pos, i, out)
                return i
            i = buf.find("<", i + 1)
        self._value(block, buf, pos, n, out)
        return n

    def _watch(self, block: ToolBlock, i: int) -> None:
        """The value holds the tool's end tag at ``i``: watch for a call's start from here."""
        block.quiet_start = self.cur.offset + i
        block.watch = block.quiet_start + len(block.spec.close_tag)

    def _starts_call(self, buf: str, i: int) -> int:
        """Rule 3 at ``i``: does a registered tool's start tag there open a call?

        YES or NO as the text reader would decide it (the tag, not after a backtick,
        then at most ``buffer_keep_size`` whitespace and ``<``); WAIT while the buffer ends
        before that is decided.
        """
        cur = self.cur
        n = len(buf)
        gt = buf.find(">", i + 1, i + self._start_max)
        if gt < 0:
            if not cur.final and n - i < self._start_max and buf[i:] in self._start_prefixes:
                return WAIT
            return NO
        if buf[i : gt + 1] not in self._start_tags:
            return NO
        before = buf[i - 1] if i else cur.before[-1]
        if before == "`" or cur.in_fence:
            return NO
        j = gt + 1
        k = WS.match(buf, j).end()  # type: ignore[union-attr]
        if k - j > cur.ws_cap:
            return NO
        if k == n:
            return NO if cur.final else WAIT
        return YES if buf[k] == "<" else NO

    def _cut(self, block: ToolBlock, i: int, out: list[ParseEvent]) -> int:
        """Another call starts at ``i`` in a value that holds the tool's end tag.

        The call ended at that end tag: ``malformed_tool`` and its raw text up to there;
        the text after it is given back to the driver, to be read again as text.
        """
        cur = self.cur
        raw = block.raw.text()  # the block up to i
        keep = block.watch - block.start
        self.block = None
        cur.move(Trigger.TOOL_ABORT)
        cur.fail_block(
            out,
            ErrorType.MALFORMED_TOOL,
            f"tool call {block.spec.name!r} ends inside its parameter {block.param!r}: its "
            "end tag is followed by another call; the call is not executed, its markup is "
            "delivered as text and the reply is read on from its end tag",
            raw[:keep],
            block.start,
            tool_name=block.spec.name,
            call_index=block.call_index,
        )
        cur.give_back(block.watch, raw[keep : cur.offset - block.start], raw[keep - 1])
        return i

    def _cdata(self, block: ToolBlock, buf: str, pos: int, out: list[ParseEvent]) -> int:
        """CDATA: value, opaque up to ``]]>``."""
        k = buf.find(_CDATA_CLOSE, pos)
        if k >= 0:
            end = k + len(_CDATA_CLOSE)
            self._value(block, buf, pos, end, out)
            self._set_phase(block, _VALUE)
            return end
        stop = len(buf) - (0 if self.cur.final else longest_prefix_suffix(buf, pos, _CDATA_CLOSE))
        self._value(block, buf, pos, stop, out)
        return stop

    # --- fast path ---------------------------------------------------------------------

    def fast_path(self) -> FastPath:
        """Inside a value (or CDATA), a chunk without a tag that matters is all value.

        In a long value of a declared parameter (over 1024 characters) the stop pattern
        finds only the parameter's closing tag, the tool's end tag and ``<![CDATA[`` (or
        the start of one at the end of the chunk), so ``</div>`` in a file body does not
        leave the fast path; elsewhere it finds ``</`` and ``<!`` (every ``<`` while the
        value is watched, ``]]`` in CDATA).

        The function is chosen for the situation, which only the slow path changes:
        :meth:`delta` while each chunk of the value becomes one delta event (the common
        case), :meth:`plain` otherwise.
        """
        block = self.block
        if block is None or block.passthrough:
            return None, None
        phase = block.phase
        if phase is _VALUE:
            if block.watch >= 0:
                return _WATCH_STOP, self.plain
            stop = block.stop
            if stop is None:
                stop = _VALUE_STOP
                if (
                    block.param_known
                    and self.cur.offset - block.start - block.value_start > _EXACT_AFTER
                ):
                    stop = block.stop = self._exact_stop(block)
        elif phase is _CDATA:
            stop = _CDATA_STOP
            if block.watch >= 0:
                return stop, self.plain
        else:
            return None, None
        if block.param_known and self.cur.emit_deltas:
            return stop, self.delta
        return stop, self.plain

    @staticmethod
    def _exact_stop(block: ToolBlock) -> re.Pattern[str]:
        """The exact stop pattern of the open (declared) parameter, compiled once.

        It finds only the tags that matter in the value, not every ``</``, so that a
        value full of HTML or XML closing tags goes through the fast path too.  It is
        kept in the tool's spec, shared by the parsers of the tool set (bounded by the
        tool's parameters; an undeclared one keeps the coarse pattern).
        """
        stops = block.spec.value_stops
        stop = stops.get(block.param)
        if stop is None:
            tags = (block.param_close, block.spec.close_tag, CDATA_OPEN)
            stop = stops[block.param] = exact_stop_pattern(tags)
        return stop

    def delta(self, chunk: str, out: list[ParseEvent]) -> bool:
        """Take a whole chunk as value, and its delta event: the hottest path of all.

        Only for a declared parameter whose deltas stream (not paused by the watch);
        a chunk that reaches the next fold offset goes through :meth:`plain`.
        """
        block = self.block
        assert block is not None
        cur = self.cur
        start = cur.offset
        end = start + len(chunk)
        if end > block.fold_at:
            return self.plain(chunk, out)
        cur.offset = end
        cur.before = chunk
        # Typed as the list it is, the append is a direct list append when compiled.
        raw: list[str] = block.raw
        raw.append(chunk)
        out.append(_new_param_delta(block.name, block.param, chunk, block.call_index, (start, end)))
        return True

    def plain(self, chunk: str, out: list[ParseEvent]) -> bool:
        """Take a whole chunk as value; refuse one that reaches the size limit."""
        block = self.block
        assert block is not None
        cur = self.cur
        start = cur.offset
        end = start + len(chunk)
        if end > block.fold_at:
            # Near the size limit the slow path runs the size guard.  The margin of a
            # tag's length keeps a chunk whose end the driver holds (Reader.holds_cut)
            # from reaching past the limit unseen.
            if end + block.window > block.limit:
                return False
            block.raw.fold()
            block.fold_at = min(block.limit - block.window, end + FOLD_SIZE)
        cur.offset = end
        cur.before = chunk
        raw: list[str] = block.raw  # a direct list append when compiled
        raw.append(chunk)
        if block.param_known and cur.emit_deltas:
            if block.watch >= 0:
                block.quiet.append(chunk)
            else:
                out.append(
                    _new_param_delta(block.name, block.param, chunk, block.call_index, (start, end))
                )
        return True
