"""The PLUGIN reader: a plugin's block, its content handed to the plugin's hooks.

The reader finds the block's end tag the way the THINKING reader does (the chunk plus
at most one end tag's worth of held characters), hands the plugin every piece of
content before it, and then asks the plugin whether that end tag closes the block
(``accepts_end``: an end tag inside a JSON string, say, is content).  A plugin that
declares trailing framing (``ParsePlugin.trailing``) gets it as part of the block when
it follows the end tag; the reader waits while the end of the buffer cuts one.  The block is
bounded by ``max_tool_size`` through the shared size guard; a block that grows past it
is reported by the plugin (``on_too_large``) and the rest of it, up to its end tag,
streams as text.  The plugin never sees the parser's buffer, only its own content.

The whitespace that the text reader read right before the start tag, when it may be
framing (see the text reader), comes with the block (``lead``): the plugin's first
event that tiles the stream decides it.  If that is text (the block turned out to be
text: a cut call, a token written in prose), the whitespace is text, so the raw text
reads as the model wrote it; otherwise it is framing.  It comes first among the events
of the hook that gave that event.
A plugin's tiling events come only from ``on_start``, ``on_end``, ``on_unclosed`` and
the core's text of a too-large block (``on_data`` and the fast path are outside the
tiling), so the fast path never has to look.

A plugin may also end its block itself (``ParsePlugin.ends_at``): after each piece of
content it may name an offset inside that piece where the block ended.  The reader then
closes the block there and returns that position, so the driver reads the rest of the
buffer in the TEXT state: nothing is read twice.  A plugin without an end tag ends its
blocks only that way; the reader then hands it every character as it arrives (there is
no end tag whose prefix must be held).  A too-large block without an end tag ends where
it was cut: what follows is read as ordinary input.

**The fast path.**  A plugin that offers one (``ParsePlugin.fast_path``) names the
characters its current situation must see; unless the end tag is content there, the
reader adds it (whole, or cut by the end of the chunk:
:func:`~stream_parser.core.plugins.tag_stop`) and offers the parser's ``feed`` a
pattern of both (compiled once per pair and kept).  A chunk that holds neither, within
the block's size limit, is offered to the plugin's function whole; when the function
takes it, it is content: kept, without the end-tag search, the hold of a partial tag or
``ends_at``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from ...errors import InternalError
from .._scan import TagSpec, longest_prefix_suffix
from ..events import (
    FramingEvent,
    ParseEvent,
    TextOutputEvent,
    _fast_arguments_delta,
    _fast_param_delta,
)
from ..plugins import ParsePlugin, PluginBlock, tag_stop
from ..state import Trigger
from ..value_run import ValueRun
from .base import BoundedBlock, BoundedReader, Cursor, FastPath
from .pieces import FOLD_SIZE, Pieces

__all__ = ["OpenPluginBlock", "PluginReader"]

# The compiled build keeps a module-level Final in a C variable: calling the event
# builder through it skips a dictionary lookup per event (pure Python: no difference).
_new_param_delta: Final = _fast_param_delta
_new_arguments_delta: Final = _fast_arguments_delta

_STOPS: dict[tuple[re.Pattern[str] | None, str], re.Pattern[str] | None] = {}
"""(a plugin's pattern, its end tag) -> the fast path's pattern; a handful per process."""
_STOPS_MAX = 256  # a plugin that compiles new patterns as it goes cannot grow it further


def _stop(pattern: re.Pattern[str] | None, end_tag: str) -> re.Pattern[str] | None:
    """The pattern of a plugin's characters and of where its end tag may begin."""
    key = (pattern, end_tag)
    if key in _STOPS:
        return _STOPS[key]
    parts: list[str] = []
    flags = 0
    if pattern is not None:
        parts.append(f"(?:{pattern.pattern})")
        flags = pattern.flags
    if end_tag:
        parts.append(tag_stop((end_tag,)).pattern)
    compiled = re.compile("|".join(parts), flags) if parts else None
    if len(_STOPS) >= _STOPS_MAX:
        _STOPS.clear()
    _STOPS[key] = compiled
    return compiled


def _trailer(buf: str, end: int, trailing: tuple[str, ...], final: bool) -> str | None:
    """The trailing framing at ``buf[end:]`` ("" for none), or None while undecided."""
    best = ""
    for frame in trailing:
        rest = buf[end : end + len(frame)]
        if rest == frame:
            if len(frame) > len(best):
                best = frame
        elif not final and end + len(rest) == len(buf) and frame.startswith(rest):
            return None  # cut by the end of the buffer: a longer one may still come
    return best


def _refuse(data: str, start: int, out: list[ParseEvent]) -> bool:
    """The fast path's function before a plugin offered one."""
    return False


class OpenPluginBlock(BoundedBlock):
    """The open plugin block (the finished one is a :class:`PluginBlock`).

    Attributes:
        plugin: the plugin that owns it.
        tag: the start tag that opened it.
        end_tag: the tag that closes it.
        pieces: the content so far (until it is too large), folded as it grows.
        lead: whitespace right before the start tag, text or framing as the block's
            first tiling event says; "" once emitted, or when there is none.
    """

    __slots__ = ("end_tag", "lead", "pieces", "plugin", "tag")

    def __init__(
        self, plugin: ParsePlugin, spec: TagSpec, start: int, max_size: int, lead: str = ""
    ) -> None:
        super().__init__(start, max_size)
        self.plugin = plugin
        self.tag = spec.tag
        self.end_tag = spec.end_tag
        self.pieces = Pieces()
        self.lead = lead

    def finished(self, end_tag: str, end: int) -> PluginBlock:
        """The block as handed to the plugin: content joined, ``end`` its absolute end."""
        return PluginBlock(self.tag, end_tag, self.pieces.text(), (self.start, end))


class PluginReader(BoundedReader[OpenPluginBlock]):
    """Reads the blocks of registered plugins."""

    __slots__ = ("_limit", "_mark", "_pieces", "_run", "_take")

    def __init__(self, cur: Cursor) -> None:
        super().__init__(cur)
        # What the fast path reads of the open block, set when it is chosen (the block
        # does not change while the fast path stays chosen).
        self._take: Callable[[str, int, list[ParseEvent]], bool] = _refuse
        self._limit = 0
        # The fast path's one comparison per chunk: the size limit, or the offset at
        # which the pieces are folded next, whichever comes first.
        self._mark = 0
        self._pieces = Pieces()
        self._run: ValueRun | None = None  # the plugin's open value, streamed here

    def fast_path(self) -> FastPath:
        """The plugin's fast path, with the start of the end tag added to its pattern."""
        block = self.block
        if block is None or block.passthrough:
            return None, None
        fast = block.plugin.fast_path()
        if fast is None:
            return None, None
        pattern, self._take, tag_is_content = fast
        self._run = block.plugin.value_run()
        # A chunk that ends within an end tag's length of the size limit goes the slow
        # way, which holds the start of an end tag there as it does when the limit falls
        # inside one buffer: an end tag that the limit cuts then ends the too-large block
        # however the stream was chunked (taken as content, it would not).
        self._limit = limit = block.limit - max(len(block.end_tag) - 1, 0)
        self._mark = min(limit, self.cur.offset + FOLD_SIZE)
        self._pieces = block.pieces
        return (pattern if tag_is_content else _stop(pattern, block.end_tag)), self.plain

    def plain(self, chunk: str, out: list[ParseEvent]) -> bool:
        """Take a whole chunk as content (the fast path), if the plugin takes it.

        False past the size limit (the slow path cuts the block there) or when the
        plugin refuses the chunk.
        """
        cur = self.cur
        start = cur.offset
        end = start + len(chunk)
        if end > self._mark:
            if end > self._limit:
                return False
            self._pieces.fold()
            self._mark = min(self._limit, end + FOLD_SIZE)
        run = self._run
        if (
            run is not None
            and run.armed
            and (run.stop not in chunk if run.scanner is None else run.scanner.skip(chunk))
        ):
            # The plugin's open value, plain: streamed here, without a call to the plugin
            # (a chunk without its stop character, or one its JSON scanner takes whole).
            if run.indent_cap >= 0 and (run.line >= 0 or "\n" in chunk):
                run.follow(chunk)
            if cur.emit_deltas:
                if run.arguments:
                    delta: ParseEvent = _new_arguments_delta(
                        run.tool_name, chunk, run.call_index, run.call_id, (start, end)
                    )
                else:
                    delta = _new_param_delta(
                        run.tool_name, run.param, chunk, run.call_index, (start, end)
                    )
                out.append(delta)
            run.end = end
        elif not self._take(chunk, start, out):
            return False
        cur.offset = end
        cur.before = chunk  # its last character is the one before the offset
        pieces: list[str] = self._pieces  # typed as the list it is: a direct append when compiled
        pieces.append(chunk)
        return True

    def open(self, spec: TagSpec, i: int, out: list[ParseEvent], lead: str = "") -> int:
        """The start tag ``spec`` is at ``i``: open its plugin's block.

        ``lead``: the whitespace right before the tag that goes with the block.
        """
        plugin = spec.plugin
        if plugin is None:  # pragma: no cover - a TagSpec of kind PLUGIN always has one
            raise InternalError("plugin tag without a plugin")
        cur = self.cur
        cur.move(Trigger.PLUGIN_START)
        start = cur.offset + i
        block = OpenPluginBlock(plugin, spec, start, cur.config.max_tool_size, lead)
        self.block = block
        end = i + len(spec.tag)
        self._emit(block, out, plugin.on_start(spec.tag, (start, start + len(spec.tag))))
        if plugin.ends_at() is not None:  # a block that is its start tag alone
            self._close(block, "", end, out)
        return end

    def _emit(
        self, block: OpenPluginBlock, out: list[ParseEvent], events: list[ParseEvent]
    ) -> None:
        """Emit a hook's events, the block's lead first if one of them tiles."""
        if block.lead:
            for event in events:
                if event.TILES and event.span[0] != event.span[1]:
                    out.append(self._lead(block, event))
                    break
        self.cur.extend(out, events)

    def _lead(self, block: OpenPluginBlock, first: ParseEvent) -> ParseEvent:
        """The block's lead as an event: text if ``first`` is text, framing otherwise."""
        lead, block.lead = block.lead, ""
        span = (block.start - len(lead), block.start)
        if isinstance(first, TextOutputEvent):
            return TextOutputEvent(text=lead, span=span)
        return FramingEvent(text=lead, span=span)

    def _close(self, block: OpenPluginBlock, end_tag: str, end: int, out: list[ParseEvent]) -> None:
        """The block ends at ``end`` (in the buffer): the plugin turns it into events."""
        finished = block.finished(end_tag, self.cur.offset + end)
        self.block = None
        self.cur.move(Trigger.PLUGIN_END)
        self._emit(block, out, block.plugin.on_end(finished))

    def steps(self, block: OpenPluginBlock, buf: str, pos: int, out: list[ParseEvent]) -> int:
        """Content up to an end tag that the plugin accepts, or up to a possible one."""
        end_tag = block.end_tag
        plugin = block.plugin
        if not end_tag:  # the plugin ends its blocks itself (ends_at)
            ended = self._data(block, buf, pos, len(buf), out)
            return len(buf) if ended < 0 else ended
        found = buf.find(end_tag, pos)
        while found >= 0:
            ended = self._data(block, buf, pos, found, out)
            if ended >= 0:
                return ended
            end = found + len(end_tag)
            # The plugin has seen everything before the end tag and may say that this
            # occurrence is inside its content (e.g. inside a JSON string): then the
            # tag is data too, and the search goes on after it.
            if plugin.accepts_end():
                trailer = _trailer(buf, end, plugin.trailing, self.cur.final)
                if trailer is None:  # framing may still follow the end tag: wait
                    return found
                end += len(trailer)
                self._close(block, end_tag + trailer, end, out)
                return end
            ended = self._data(block, buf, found, end, out)
            if ended >= 0:
                return ended
            pos = end
            found = buf.find(end_tag, pos)
        cur = self.cur
        held = 0 if cur.final and not cur.cut else longest_prefix_suffix(buf, pos, end_tag)
        stop = len(buf) - held
        ended = self._data(block, buf, pos, stop, out)
        if ended >= 0 or not held or not cur.final:
            return stop if ended < 0 else ended
        # A cut stream ends inside what may be the end tag.  Where the end tag would end
        # the block, that cut tag is no content: the plugin would read it as what ends
        # its call (a "<" after a JSON body) and run a call whose end never came.  It
        # stays in the block, which is unclosed.  Where the end tag is content (inside a
        # JSON string), so is the cut one, as if the stream had ended normally.
        if plugin.accepts_end():
            block.pieces.add(buf[stop:])
            return len(buf)
        ended = self._data(block, buf, stop, len(buf), out)
        return len(buf) if ended < 0 else ended

    def _data(
        self, block: OpenPluginBlock, buf: str, start: int, end: int, out: list[ParseEvent]
    ) -> int:
        """Hand ``buf[start:end]`` to the plugin; where it ended the block, or -1."""
        if start < end:
            piece = buf[start:end]
            base = self.cur.offset
            plugin = block.plugin
            out.extend(plugin.on_data(piece, (base + start, base + end)))
            ended = plugin.ends_at()
            if ended is not None:
                # Clamped to the piece: the plugin could have ended the block earlier
                # only when it was given the earlier pieces.
                stop = min(max(ended - base, start), end)
                block.pieces.add(buf[start:stop])
                self._close(block, "", stop, out)
                return stop
            block.pieces.add(piece)
        return -1

    def too_large(self, block: OpenPluginBlock, out: list[ParseEvent]) -> None:
        """The plugin's error events, then the block so far as text."""
        content = block.pieces.text()
        span = (block.start, block.start + len(block.tag) + len(content))
        info = PluginBlock(block.tag, "", content, span)
        text = TextOutputEvent(text=info.raw, span=span)
        self._emit(block, out, [*block.plugin.on_too_large(info), text])
        block.pieces = Pieces()

    def passthrough(self, block: OpenPluginBlock, buf: str, pos: int, out: list[ParseEvent]) -> int:
        """The rest of a too-large block, up to its end tag, streams as text."""
        end_tag = block.end_tag
        found = buf.find(end_tag, pos) if end_tag else pos
        if found >= 0:
            end = found + len(end_tag)
            self.cur.text(buf, pos, end, out)
            self.block = None
            self.cur.move(Trigger.PLUGIN_END)
            return end
        stop = len(buf) - (0 if self.cur.final else longest_prefix_suffix(buf, pos, end_tag))
        self.cur.text(buf, pos, stop, out)
        return stop

    def at_end(self, out: list[ParseEvent]) -> None:
        """The stream ended inside the block: the plugin reports it (``on_unclosed``)."""
        block = self.block
        assert block is not None
        self.block = None
        if block.passthrough:  # too large: already reported and delivered
            return
        content = block.pieces.text()
        info = PluginBlock(block.tag, "", content, (block.start, self.cur.offset), self.cur.cut)
        self._emit(block, out, block.plugin.on_unclosed(info))
