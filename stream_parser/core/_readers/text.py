r"""The TEXT reader: plain text, and the start tags that open blocks.

The text between candidates (characters that may begin a tag) is skipped with one
compiled character-class regex; at a candidate the tag table says whether a whole tag
is there, a proper prefix of one that reaches the end of the buffer (wait: the next
chunk may complete it), or nothing.  A thinking start tag opens its block.  A
call's start tag (an XML tool's, or a plugin's that declares ``next_chars``) opens it
only when the next non-whitespace character says it is a call (rule 3); otherwise the
tag is text, so prose that mentions a tool does not run it, and so is a thinking start
tag right after a backtick (inline code).  When the stream ends right after a dialect's
call opener, or after an XML tool's start tag and a line break, the call was cut (rule
9): it opens, and its reader reports it unclosed.  Everything before an opened tag or a
held prefix is emitted as text at once (invariant 3, early text).

A plugin's start tag may begin with a dialect's framing (``"\n<tool_call>"``): the tag
table then holds a trailing newline back exactly as it holds a tag's prefix, only while
such a tag may still follow.  A plugin tag with ``reply_start_only`` opens its block only
while the reply has not started (``Cursor.reply_start``: no text but whitespace and no
block but thinking and framing before it); the reader clears that flag as it emits text
or opens a block.  Such tags are looked for only while the flag is set: from the text
that starts the reply on, the reader scans with a table without them (``later``), so
their first characters (a space, a ``{``) cost nothing in the rest of the reply; and
before it starts, its fast path takes only whitespace.  A plugin block that ends with its
start tag (framing such as ``<|end|>``) closes at once, and the reader goes on.  With
``report_unknown_tools``, the text is emitted through an
:class:`~.unknown.UnknownToolWatch`, which reports calls of unregistered tools without
holding any text back.

**Whitespace framing.**  In every dialect but XML (whose rule 1 keeps whitespace between
blocks as text), the whitespace a chat template writes around blocks is framing, not
text: a :class:`~stream_parser.core.events.FramingEvent` per run, which tiles like any
block.  A run of whitespace is framing when a block opens right after it (``I'll check.
<tool_call>``, the newline before a call or between calls), and when it follows the
reply's start or a block's end (``Cursor.edge``: the newline after a reasoning block)
and the stream ends after it, or, up to its last line break, prose follows it (the
indentation of the prose's first line stays text).  A block that came back as text (a
failed call) is no edge.  Before a plugin's block the run goes with the block, which
emits it as framing, or as text when the block turns out to be text (see the plugin
reader).  Any other whitespace is text.  So text holds back only its trailing whitespace
until the next character decides (:meth:`TextReader._piece`; the fast path cuts a chunk
before its trailing run and the driver holds the run, ``Cursor.hold``).  A run longer
than ``buffer_keep_size`` is text whatever follows (``Cursor.long_space``), which keeps
the decision independent of how the stream was cut.  Whitespace a dialect declares in
its framing (``"\n<tool_call>"``) stays in the span of the block it frames.
"""

from __future__ import annotations

import re
from typing import Final

from .._scan import PARTIAL, TagKind, TagSpec, TagTable
from ..events import FramingEvent, NoticeEvent, ParseEvent, TextOutputEvent, _fast_text
from .base import WAIT, YES, Cursor, FastPath, Reader, opens
from .plugin import PluginReader
from .thinking import ThinkingReader
from .tool import ToolReader
from .unknown import UnknownToolWatch

# The compiled build keeps a module-level Final in a C variable: calling the event
# builder through it skips a dictionary lookup per event (pure Python: no difference).
_new_text: Final = _fast_text

__all__ = ["TextReader"]

_WS: Final = re.compile(r"[ \t\r\n]*")
_SPACE: Final = " \t\r\n"
"""The whitespace of ``_WS``: what may be framing."""
# What follows a piece of text (``TextReader._piece``): a block that opens, the end of
# the stream, or nothing known yet (the next chunk decides).
_OPENS: Final = 0
_ENDS: Final = 1
_UNKNOWN: Final = 2
_PLUGIN_OPENS: Final = 3  # a plugin's block, which may still turn out to be text
# Module-level names: an Enum member lookup is a slow attribute access.
_THINKING, _TOOL, _PLUGIN = TagKind.THINKING, TagKind.TOOL, TagKind.PLUGIN
_CLOSE: Final = TagKind.THINKING_CLOSE
# The table of a reader not configured yet; read-only, so one serves every reader.
_NO_TAGS: Final = TagTable(())


def _ended_as_block(out: list[ParseEvent]) -> bool:
    """Whether the last event that tiles the stream is a block's, not text."""
    for event in reversed(out):
        if event.TILES and event.span[0] != event.span[1]:
            return not isinstance(event, TextOutputEvent)
    return True


class TextReader(Reader):
    """Reads text and hands each opened block to the reader of its kind.

    Attributes:
        table: the tags recognised in text (set by :meth:`configure`).
        stop: the first characters of those tags, for the fast path.
    """

    __slots__ = (
        "framed",
        "later",
        "later_stop",
        "plugin",
        "stop",
        "table",
        "thinking",
        "tool",
        "watch",
    )

    def __init__(
        self, cur: Cursor, thinking: ThinkingReader, tool: ToolReader, plugin: PluginReader
    ) -> None:
        super().__init__(cur)
        self.thinking = thinking
        self.holds_cut = True  # what run() holds at a chunk's end is a cut tag
        self.tool = tool
        self.plugin = plugin
        self.table = _NO_TAGS
        self.stop: re.Pattern[str] | None = None
        self.later = _NO_TAGS
        self.later_stop: re.Pattern[str] | None = None
        self.watch: UnknownToolWatch | None = None
        # Whitespace around blocks is framing: every dialect but XML (its rule 1).
        self.framed = "xml" not in cur.config.dialects

    def configure(
        self,
        table: TagTable,
        stop: re.Pattern[str] | None,
        registered: frozenset[str],
        reserved: frozenset[str],
        later: TagTable | None = None,
        later_stop: re.Pattern[str] | None = None,
    ) -> None:
        """Recognise the tags of ``table`` (when the parser's plugins change).

        Args:
            table: the tags.
            stop: ``stop_pattern(table.tags)``, compiled with the table.
            registered: the registered tools' names (for the unknown-tool watch).
            reserved: ``table.tags`` as a set (tags that never count as unknown tools).
            later: the tags once the reply has started (without those that count only
                at its start); None: ``table``.
            later_stop: ``stop_pattern(later.tags)``.

        Everything passed is shared by the parsers of one tool set, so that a new
        parser builds nothing whose size grows with the number of tools.
        """
        self.table = table
        self.stop = stop
        if later is None:
            self.later, self.later_stop = table, stop
        else:
            self.later, self.later_stop = later, later_stop
        config = self.cur.config
        if config.report_unknown_tools and "xml" in config.dialects:
            self.watch = UnknownToolWatch(self.cur, registered, reserved)

    def _text(self, buf: str, start: int, end: int, out: list[ParseEvent]) -> None:
        """Emit ``buf[start:end]`` as text, watched for unknown tools' calls."""
        if start < end:
            cur = self.cur
            if cur.reply_start and not buf[start:end].isspace():
                cur.reply_start = False
            watch = self.watch
            if watch is None:
                self.cur.text(buf, start, end, out)
            else:
                watch.feed(buf, start, end, self.cur.offset, out)

    def _opened(self) -> None:
        """A block opens: the text the watch follows is interrupted."""
        if self.watch is not None:
            self.watch.reset()

    def run(self, buf: str, pos: int, out: list[ParseEvent]) -> int:
        """Text up to a tag that opens a block, or up to what may still become one."""
        cur = self.cur
        if cur.settle:
            # A block ended: its edge is one only if it ended as a block, not as text
            # (a call that failed comes back as its raw text).
            cur.settle = False
            cur.edge = _ended_as_block(out)
        # The tags that count only at the reply's start are looked for only before it.
        later = self.later
        table = self.table if cur.reply_start else later
        start = pos  # first character not yet emitted
        blank_to = pos  # buf[start:blank_to] is whitespace (while the reply may start)
        i = table.next_candidate(buf, pos)
        while i >= 0:
            if table is not later:
                if blank_to < start:  # what came before was a block (framing), not text
                    blank_to = start
                if blank_to < i and not buf[blank_to:i].isspace():
                    # The reply started in this text: its start's tags count no more.
                    table = later
                    i = table.next_candidate(buf, i)
                    continue
                blank_to = i
            spec = table.match_at(buf, i)
            if spec is PARTIAL:
                if not cur.final:  # the next chunk may complete the tag
                    return self._piece(buf, start, i, out, _UNKNOWN)
            elif spec is not None:
                assert isinstance(spec, TagSpec)
                before = buf[i - 1] if i else cur.before[-1]
                kind = spec.kind
                if kind is _THINKING:
                    # A thinking tag written as inline code (`<think>`) is text, as a
                    # call's start tag is (rule 3): it mentions the tag, it does not
                    # open a block for the rest of the reply.
                    if before != "`":
                        self._piece(buf, start, i, out, _OPENS)
                        self._opened()
                        return self.thinking.open(spec, i)
                    i = table.next_candidate(buf, i + 1)
                    continue
                if kind is _CLOSE:
                    if before != "`":  # `</think>` in inline code mentions the tag
                        self._piece(buf, start, i, out, _OPENS)
                        start = i + len(spec.tag)
                        self._stray_close(spec.tag, cur.offset + i, out)
                    i = table.next_candidate(buf, i + len(spec.tag))
                    continue
                # A tag that begins with a newline (framing) starts a line by itself.
                if not spec.line_start_only or before == "\n" or spec.tag[0] == "\n":
                    verdict = self._opens(spec, buf, i, before)
                    if verdict == WAIT:
                        return self._piece(buf, start, i, out, _UNKNOWN)
                    if verdict == YES:
                        if kind is _TOOL:
                            self._piece(buf, start, i, out, _OPENS)
                            self._opened()
                            cur.reply_start = False
                            return self.tool.open(spec, buf, i, out)
                        if kind is _PLUGIN:
                            plugin = spec.plugin
                            assert plugin is not None
                            if plugin.reply_start_only and not (
                                cur.reply_start and (start == i or buf[start:i].isspace())
                            ):
                                # Not at the start of the reply: the tag is text.
                                i = table.next_candidate(buf, i + 1)
                                continue
                            # The whitespace before it goes with the block, which says
                            # what it is (see PluginReader.open).
                            lead = self._piece(buf, start, i, out, _PLUGIN_OPENS)
                            self._opened()
                            if not plugin.is_framing:
                                cur.reply_start = False
                            j = self.plugin.open(spec, i, out, buf[lead:i])
                            if self.plugin.block is not None:
                                return j
                            # The block was its start tag alone: text goes on after it.
                            cur.settle = False
                            cur.edge = _ended_as_block(out)
                            start = j
                            i = table.next_candidate(buf, j)
                            continue
                        # A fence marker (fence_aware): stays text, flips the fence state.
                        cur.in_fence = not cur.in_fence
                        i = table.next_candidate(buf, i + len(spec.tag))
                        continue
            i = table.next_candidate(buf, i + 1)
        return self._piece(buf, start, len(buf), out, _ENDS if cur.final else _UNKNOWN)

    def _piece(self, buf: str, start: int, end: int, out: list[ParseEvent], follows: int) -> int:
        """Emit ``buf[start:end]``, text and framing; return where what is held begins.

        ``follows`` says what comes after the piece: a block that opens (``_OPENS``),
        a plugin's block (``_PLUGIN_OPENS``: the trailing run of whitespace is not
        emitted but goes with the block), the end of the stream (``_ENDS``) or what
        the next chunk brings (``_UNKNOWN``: a trailing run of whitespace is held
        back).  ``end`` is returned when nothing is held or kept for a block.  Without
        whitespace framing the piece is text, all of it.
        """
        if not self.framed:
            self._text(buf, start, end, out)
            return end
        if start >= end:
            return end
        cur = self.cur
        cap = cur.ws_cap
        if cur.long_space:
            # The rest of a run too long to be framing: text, up to another character.
            k = _WS.match(buf, start, end).end()  # type: ignore[union-attr]
            self._text(buf, start, k, out)
            if k == end:
                return end
            cur.long_space = False
            start = k
        lead = _WS.match(buf, start, end).end()  # type: ignore[union-attr]
        if lead == end:  # whitespace only
            if end - start > cap:
                cur.long_space = follows == _UNKNOWN
            elif follows == _PLUGIN_OPENS:
                return start  # it goes with the block
            elif follows == _OPENS or (follows == _ENDS and cur.edge):
                self._framing(buf, start, end, out)
                return end
            elif follows == _UNKNOWN:
                return start  # the next character decides
            self._text(buf, start, end, out)
            return end
        if lead > start and cur.edge and lead - start <= cap:
            # After a block or at the reply's start: the template's line breaks are
            # framing, the indentation of the prose's first line is text.
            brk = max(buf.rfind("\n", start, lead), buf.rfind("\r", start, lead))
            if brk >= 0:
                self._framing(buf, start, brk + 1, out)
                start = brk + 1
        cur.edge = False
        trail = end
        while buf[trail - 1] in _SPACE:  # stops at the prose: lead < end
            trail -= 1
        if trail == end:
            self._text(buf, start, end, out)
            return end
        if end - trail > cap:
            cur.long_space = follows == _UNKNOWN
        elif follows == _OPENS:
            self._text(buf, start, trail, out)
            self._framing(buf, trail, end, out)
            return end
        elif follows == _PLUGIN_OPENS:
            self._text(buf, start, trail, out)
            return trail  # it goes with the block
        elif follows == _UNKNOWN:
            self._text(buf, start, trail, out)
            return trail
        self._text(buf, start, end, out)
        return end

    def _framing(self, buf: str, start: int, end: int, out: list[ParseEvent]) -> None:
        """Emit ``buf[start:end]`` (whitespace around a block) as framing."""
        base = self.cur.offset
        out.append(FramingEvent(text=buf[start:end], span=(base + start, base + end)))

    def _stray_close(self, tag: str, at: int, out: list[ParseEvent]) -> None:
        """A reasoning close with no reasoning open: framing, and a notice that says why.

        No notice when a call's start tag ended the reasoning (``ends_reasoning``): the
        reasoning was open, and the model closes it after the call as the servers expect.
        """
        cur = self.cur
        cur.edge = True  # like a block's end: the whitespace after it is framing
        out.append(FramingEvent(text=tag, span=(at, at + len(tag))))
        if cur.call_ended_reasoning:
            cur.call_ended_reasoning = False
            return
        out.append(
            NoticeEvent(
                code="reasoning_close_without_open",
                message=(
                    f"{tag!r} closes reasoning, but none was open: the text before it was "
                    "probably reasoning that the chat template opened in the prompt; "
                    "set ParserConfig(start_in_thinking=True) to read it as reasoning"
                ),
                span=(at, at),
            )
        )

    def _opens(self, spec: TagSpec, buf: str, i: int, before: str) -> int:
        """Does the tag at ``i`` open its block?  YES, NO or WAIT (:func:`.base.opens`)."""
        return opens(self.cur, spec, buf, i, before)

    def fast_path(self) -> FastPath:
        """A chunk without the first character of any tag is all text.

        Once the reply has started, without the unknown-tool watch, :meth:`text_chunk`
        (which tests nothing else) takes the chunks; :meth:`plain` otherwise; with
        whitespace framing, :meth:`framed_chunk`.
        """
        if not self.cur.reply_start:
            if self.framed:
                return self.later_stop, self.framed_chunk
            if self.watch is None:
                return self.later_stop, self.text_chunk
            return self.later_stop, self.plain
        if self.framed:  # which takes only whitespace before the reply starts
            return self.stop, self.framed_chunk
        # Before the reply starts, only whitespace is taken here: the chunk that starts
        # it goes through run(), which stops looking for the start's tags there (so the
        # cut start of one at the chunk's end is not held).
        return self.stop, self.blank

    def text_chunk(self, chunk: str, out: list[ParseEvent]) -> bool:
        """Take a whole chunk as text (the common case)."""
        cur = self.cur
        start = cur.offset
        cur.offset = end = start + len(chunk)
        cur.before = chunk
        out.append(_new_text(chunk, (start, end)))
        return True

    def framed_chunk(self, chunk: str, out: list[ParseEvent]) -> bool:
        """Take a whole chunk as text, but for whitespace that may be framing.

        Its trailing whitespace waits for the next character: the driver holds it
        (``Cursor.hold``), as the start of a cut tag.  Refused (the slow path reads
        it) when it starts with whitespace at a block's edge, or when its trailing run
        is longer than ``buffer_keep_size`` or continues one that was.
        """
        cur = self.cur
        if chunk[-1] in _SPACE or cur.edge or cur.reply_start or cur.long_space:
            return self._framed_chunk(chunk, out)
        start = cur.offset  # the common case: text_chunk's
        cur.offset = end = start + len(chunk)
        cur.before = chunk
        out.append(_new_text(chunk, (start, end)))
        return True

    def _framed_chunk(self, chunk: str, out: list[ParseEvent]) -> bool:
        """:meth:`framed_chunk` of a chunk with whitespace to weigh, or at an edge."""
        cur = self.cur
        if cur.long_space:
            return False
        end = len(chunk)
        k = end
        while k and chunk[k - 1] in _SPACE:
            k -= 1
            if end - k > cur.ws_cap:
                return False
        if k == 0:  # whitespace only: all of it waits
            cur.hold(chunk)
            return True
        if cur.reply_start:
            return False  # the chunk that starts the reply goes through run()
        if cur.edge:
            if chunk[0] in _SPACE:
                return False
            cur.edge = False
        start = cur.offset
        cur.offset = start + k
        if k == end:
            cur.before = chunk
            out.append(_new_text(chunk, (start, start + k)))
            return True
        cur.before = chunk[k - 1]
        out.append(_new_text(chunk[:k], (start, start + k)))
        cur.hold(chunk[k:])
        return True

    def blank(self, chunk: str, out: list[ParseEvent]) -> bool:
        """Take a chunk of whitespace before the reply starts; refuse anything else."""
        return chunk.isspace() and self.plain(chunk, out)

    def plain(self, chunk: str, out: list[ParseEvent]) -> bool:
        """Take a whole chunk as text (the fast path)."""
        cur = self.cur
        start = cur.offset
        if cur.reply_start and not chunk.isspace():
            cur.reply_start = False
        watch = self.watch
        if watch is None:
            out.append(_new_text(chunk, (start, start + len(chunk))))
        else:
            watch.feed(chunk, 0, len(chunk), start, out)
        cur.offset = start + len(chunk)
        cur.before = chunk
        return True
