r"""The THINKING reader: a thinking block's content, up to its own end tag.

A block opened by a start tag closes only with that tag's end tag; a stream that starts
inside thinking (``start_in_thinking``) closes with any configured end tag.  Each chunk
is searched for the end tags together with the few characters held from before (at most
one end tag minus one character: the start of an end tag cut by the chunk boundary), so
each character is searched a bounded number of times.  The content streams as
``ThinkingDeltaEvent`` and is kept as :class:`~.pieces.Pieces` (folded as it
grows, a few bytes per byte), joined once into the ``ThinkingEvent`` when the block
closes.  Only ``max_thinking_size`` characters are kept: past them, one
``thinking_too_large`` error, and the rest streams without being kept (the event then
has ``truncated=True``).  The content is contiguous in the stream, so the limit is an
absolute offset (``cutoff``), the same however the stream was chunked.

With a dialect that declares framing (:class:`~stream_parser.core._dialect_registry.Framing`,
the Qwen3 templates write ``<think>\n…\n</think>\n\n``), the newline after the start tag
and the one before the end tag are not content, and the blank line after the end tag
belongs to the block's span.  The reader holds what may still become framing (a newline
that may precede the end tag, an end tag that may be followed by the blank line): at
most the framing's length more than without it.

A dialect whose reasoning may be closed by a bare closing tag (``ThinkingFormat.bare_close``)
starts the stream inside thinking; an opening tag written at the very start is then the
block's own opening, not content (the reader waits while the buffer holds a prefix of
one), so a reply reads the same with or without it.

**Calls that end reasoning.**  A plugin may declare that its start tag, written inside
reasoning, ends it (``ParsePlugin.ends_reasoning``: the servers of qwen3_coder, glm,
kimi, deepseek, gemma4 and mistral switch from reasoning to the call at the opener).
The reader then looks for those tags too (``enders``), with their own guard on the next
non-whitespace character, so a tag merely mentioned in reasoning stays thinking.  At one
that opens, the block closes there (its span ends at the tag), the cursor records it
(``Cursor.call_ended_reasoning``), and the text reader, which runs next, opens the call.
Dialects without such tags search nothing more: ``enders`` is empty and their fast path
is unchanged (each such tag begins with the same character as the dialect's end tag).
"""

from __future__ import annotations

import re
from typing import Final

from .._dialect_registry import dialect_framing, dialect_thinking
from .._scan import TagSpec, longest_prefix_suffix, stop_pattern
from ..events import ErrorType, ParseEvent, ThinkingEvent, _fast_thinking_delta
from ..state import Trigger
from .base import NO, YES, Cursor, FastPath, Reader, opens
from .pieces import FOLD_SIZE, Pieces

# The compiled build keeps a module-level Final in a C variable: calling the event
# builder through it skips a dictionary lookup per event (pure Python: no difference).
_new_thinking_delta: Final = _fast_thinking_delta

__all__ = ["ThinkingBlock", "ThinkingReader"]


class ThinkingBlock:
    """The open thinking block.

    Attributes:
        start: absolute offset of its start tag (of the stream, with
            ``start_in_thinking``).
        ends: the end tags that close it.
        stop: the first characters of ``ends`` (and of the framing before them), for
            the fast path.
        pieces: the content so far (its retained head, once ``truncated``).
        max_size: ``max_thinking_size``.
        cutoff: absolute offset past which content is not retained (the content is
            contiguous in the stream, so a piece's end offset says whether it fits).
        mark: absolute offset past which the fast path stops to fold the pieces (every
            :data:`~.pieces.FOLD_SIZE` characters) or to cut them (at ``cutoff``).
        truncated: the content grew past ``max_thinking_size``: the rest streams as
            deltas and is not retained.
        fresh: nothing of the content was read yet (the opening framing may follow).
        lead: start tags that, at the very start of the content, are the block's own
            opening (a stream that starts inside thinking, ``bare_close``).
    """

    __slots__ = (
        "cutoff",
        "ends",
        "fresh",
        "lead",
        "mark",
        "max_size",
        "pieces",
        "start",
        "stop",
        "truncated",
    )

    def __init__(
        self,
        start: int,
        ends: tuple[str, ...],
        close: str = "",
        lead: tuple[str, ...] = (),
        max_size: int = 4 * 1024 * 1024,
        content: int = 0,
        enders: tuple[str, ...] = (),
    ) -> None:
        self.start = start
        self.max_size = max_size
        self.cutoff = content + max_size
        self.mark = min(self.cutoff, content + FOLD_SIZE)
        self.truncated = False
        self.lead = lead
        self.ends = ends
        self.stop: re.Pattern[str] | None = stop_pattern(
            (ends + tuple(close + end for end in ends) if close else ends) + enders
        )
        self.pieces = Pieces()
        self.fresh = True


class ThinkingReader(Reader):
    """Reads thinking blocks."""

    __slots__ = ("after", "bare_close", "block", "close", "enders", "open_")

    def __init__(self, cur: Cursor) -> None:
        super().__init__(cur)
        self.block: ThinkingBlock | None = None
        self.holds_cut = True  # what run() holds at a chunk's end is a cut tag
        framing = dialect_framing(cur.config.dialects)
        self.open_ = framing.thinking_open
        self.close = framing.thinking_close
        self.after = framing.after_thinking
        fmt = dialect_thinking(cur.config.dialects)
        self.bare_close = fmt is not None and fmt.bare_close
        # The start tags that end reasoning (see the module docstring), their
        # ``next_chars`` the plugin's ``ends_reasoning``: set by the parser.
        self.enders: tuple[TagSpec, ...] = ()

    def set_enders(self, enders: tuple[TagSpec, ...]) -> None:
        """Set the call start tags that end reasoning (``ParsePlugin.ends_reasoning``).

        A block already open (a stream that starts inside thinking, then a plugin added
        with ``use``) gets them too: its fast path must stop at their first characters.
        """
        self.enders = enders
        block = self.block
        if block is not None:
            tags = block.ends + tuple(self.close + end for end in block.ends if self.close)
            block.stop = stop_pattern(tags + tuple(spec.tag for spec in enders))

    def begin(self, ends: tuple[str, ...], starts: tuple[str, ...] = ()) -> None:
        """Start the stream inside a block closed by any of ``ends`` (no start tag).

        With a dialect whose reasoning may close with a bare closing tag, one of
        ``starts`` at the very start is the block's opening.
        """
        lead = starts if self.bare_close else ()
        self.block = ThinkingBlock(
            self.cur.offset,
            ends,
            self.close,
            lead,
            self.cur.config.max_thinking_size,
            self.cur.offset,
            tuple(spec.tag for spec in self.enders),
        )

    def open(self, spec: TagSpec, i: int) -> int:
        """The start tag ``spec`` is at ``i``: open a block; return the position after it."""
        self.cur.move(Trigger.THINKING_START)
        self.cur.call_ended_reasoning = False
        self.block = ThinkingBlock(
            self.cur.offset + i,
            (spec.end_tag,),
            self.close,
            max_size=self.cur.config.max_thinking_size,
            content=self.cur.offset + i + len(spec.tag),
            enders=tuple(spec.tag for spec in self.enders),
        )
        return i + len(spec.tag)

    def run(self, buf: str, pos: int, out: list[ParseEvent]) -> int:
        """Content up to the earliest end tag, or up to what may begin one."""
        block = self.block
        assert block is not None
        final = self.cur.final
        if block.lead:
            rest = buf[pos:]
            for tag in block.lead:
                if rest.startswith(tag):
                    pos += len(tag)  # the block's own opening: in the span, not content
                    break
            else:
                if not final and any(tag.startswith(rest) for tag in block.lead):
                    return pos  # it may still be an opening tag (or nothing came yet)
            block.lead = ()
        if block.fresh:
            opening = self.open_
            if opening:
                if buf.startswith(opening, pos):
                    pos += len(opening)  # framing: in the span, not in the content
                elif not final and opening.startswith(buf[pos:]):
                    return pos  # it may still be the framing (or nothing came yet)
            block.fresh = False
            content = self.cur.offset + pos  # the content starts here
            block.cutoff = content + block.max_size
            block.mark = min(block.cutoff, content + FOLD_SIZE)
        found, end_tag = -1, ""
        for tag in block.ends:
            k = buf.find(tag, pos)
            if k >= 0 and (found < 0 or k < found):
                found, end_tag = k, tag
        close = self.close
        if self.enders:
            at = self._call_opens(buf, pos, found)
            if at >= 0:
                # A call's start tag before any end tag: the reasoning ends there.
                self._content(block, buf, pos, at, out)
                if self.cur.final or (at < len(buf) and self._opener_at(buf, at)):
                    return self._end_at_call(block, at, out)
                return at  # its guard waits for the next chunk
        if found >= 0:
            stop = found
            if close and found - len(close) >= pos and buf.startswith(close, found - len(close)):
                stop = found - len(close)  # framing before the end tag: not content
            end = found + len(end_tag)
            after = self.after
            if after:
                rest = buf[end : end + len(after)]
                if rest == after:
                    end += len(after)
                elif not final and len(rest) < len(after) and after.startswith(rest):
                    # The blank line after the end tag may still come: wait, holding the
                    # framing before the end tag too (it is decided with the block).
                    self._content(block, buf, pos, stop, out)
                    return stop
            self._content(block, buf, pos, stop, out)
            out.append(
                ThinkingEvent(
                    content=block.pieces.text(),
                    truncated=block.truncated,
                    span=(block.start, self.cur.offset + end),
                )
            )
            self.block = None
            self.cur.move(Trigger.THINKING_END)
            return end
        if final:
            hold = 0
        elif close:
            hold = max(
                max(longest_prefix_suffix(buf, pos, close + t), longest_prefix_suffix(buf, pos, t))
                for t in block.ends
            )
        else:
            hold = max(longest_prefix_suffix(buf, pos, t) for t in block.ends)
        if self.enders and not final:
            for spec in self.enders:  # a loop, not max() over a generator: the slow path
                cut = longest_prefix_suffix(buf, pos, spec.tag)
                if cut > hold:
                    hold = cut
        self._content(block, buf, pos, len(buf) - hold, out)
        return len(buf) - hold

    def _call_opens(self, buf: str, pos: int, limit: int) -> int:
        """Where the first call start tag (of ``enders``) that ends the block begins.

        Only before ``limit`` (the first end tag; -1: none).  A tag whose guard waits
        for the next chunk counts too: the caller stops there.  -1 when there is none.
        """
        best = -1
        end = len(buf) if limit < 0 else limit
        for spec in self.enders:
            k = buf.find(spec.tag, pos, end)
            while k >= 0 and (best < 0 or k < best):
                before = buf[k - 1] if k else self.cur.before[-1]
                verdict = opens(self.cur, spec, buf, k, before)
                if verdict != NO:  # it opens, or its guard waits for more
                    best = k
                    break
                k = buf.find(spec.tag, k + 1, end)
        return best

    def _opener_at(self, buf: str, at: int) -> bool:
        """Whether a tag of ``enders`` at ``at`` opens its call (its guard does not wait)."""
        before = buf[at - 1] if at else self.cur.before[-1]
        return any(
            buf.startswith(spec.tag, at) and opens(self.cur, spec, buf, at, before) == YES
            for spec in self.enders
        )

    def _end_at_call(self, block: ThinkingBlock, at: int, out: list[ParseEvent]) -> int:
        """Close ``block`` where a call's start tag begins (at ``at``); return ``at``."""
        out.append(
            ThinkingEvent(
                content=block.pieces.text(),
                truncated=block.truncated,
                span=(block.start, self.cur.offset + at),
            )
        )
        self.block = None
        self.cur.call_ended_reasoning = True
        self.cur.move(Trigger.THINKING_END)
        return at

    def _content(
        self, block: ThinkingBlock, buf: str, start: int, end: int, out: list[ParseEvent]
    ) -> None:
        if start < end:
            piece = buf[start:end]
            base = self.cur.offset
            if base + end > block.mark:
                sent = self._keep(block, piece, base + start, out)
                piece, start = piece[sent:], start + sent
            else:
                block.pieces.append(piece)
            if self.cur.emit_deltas:
                out.append(_fast_thinking_delta(piece, (base + start, base + end)))

    def fast_path(self) -> FastPath:
        """A chunk without the first character of an end tag is all content.

        Once the content has begun, with deltas on, :meth:`delta` (which tests nothing
        else) takes the chunks; :meth:`plain` otherwise.
        """
        block = self.block
        assert block is not None
        if not block.fresh and self.cur.emit_deltas:
            return block.stop, self.delta
        return block.stop, self.plain

    def delta(self, chunk: str, out: list[ParseEvent]) -> bool:
        """Take a whole chunk as content, and its delta event (the common case)."""
        cur = self.cur
        block = self.block
        assert block is not None
        start = cur.offset
        end = start + len(chunk)
        if end > block.mark:
            return self.plain(chunk, out)
        cur.offset = end
        cur.before = chunk
        # Typed as the list it is, the append is a direct list append when compiled.
        pieces: list[str] = block.pieces
        pieces.append(chunk)
        out.append(_new_thinking_delta(chunk, (start, end)))
        return True

    def plain(self, chunk: str, out: list[ParseEvent]) -> bool:
        """Take a whole chunk as content (the fast path)."""
        cur = self.cur
        block = self.block
        assert block is not None
        if block.fresh:
            if self.open_ or block.lead:
                return False  # the opening framing is decided on the slow path
            block.fresh = False  # the content began right after the start tag
        start = cur.offset
        cur.offset = end = start + len(chunk)
        cur.before = chunk
        if end > block.mark:
            sent = self._keep(block, chunk, start, out)
            chunk, start = chunk[sent:], start + sent
        else:
            pieces: list[str] = block.pieces  # a direct list append when compiled
            pieces.append(chunk)
        if cur.emit_deltas:
            out.append(_new_thinking_delta(chunk, (start, end)))
        return True

    def _keep(self, block: ThinkingBlock, piece: str, at: int, out: list[ParseEvent]) -> int:
        """``piece`` (content at absolute offset ``at``) reaches past ``mark``.

        Within ``max_thinking_size`` it is kept and the pieces are folded; past it, the
        head that fits is kept and the block is truncated.

        The content is contiguous in the stream, so the character that crosses the limit
        is at the same offset however the stream was chunked: the error and the retained
        head do not depend on chunking.  Nor does the error's place among the deltas: a
        piece that crosses the limit has the delta of its head delivered here, before the
        error.

        Returns:
            How many of the piece's first characters were delivered as a delta (the
            caller delivers the rest).
        """
        if block.truncated:
            return 0  # past the limit: the content only streams
        room = block.cutoff - at
        if len(piece) <= room:
            end = at + len(piece)
            block.pieces.append(piece)
            block.pieces.fold()
            block.mark = min(block.cutoff, end + FOLD_SIZE)
            return 0
        sent = 0
        if room > 0:
            head = piece[:room]
            block.pieces.append(head)
            if self.cur.emit_deltas:
                out.append(_new_thinking_delta(head, (at, block.cutoff)))
                sent = room
        block.truncated = True
        self.cur.error(
            out,
            ErrorType.THINKING_TOO_LARGE,
            f"a thinking block is longer than max_thinking_size ({block.max_size} "
            "characters); the rest streams without being kept",
            (block.start, block.cutoff),
        )
        return sent

    def at_end(self, out: list[ParseEvent]) -> None:
        """An unclosed block: an error, then the block with ``closed=False``."""
        block = self.block
        assert block is not None
        self.block = None
        span = (block.start, self.cur.offset)
        self.cur.error(
            out, ErrorType.UNCLOSED_THINKING, "the stream ended inside a thinking block", span
        )
        out.append(
            ThinkingEvent(
                content=block.pieces.text(), closed=False, truncated=block.truncated, span=span
            )
        )
