"""Plugins in the line shape: ``can_handle(content, state)`` and ``process(content)``.

Theory of operation
===================

Some plugins are written against lines of text rather than tags: ``can_handle(line,
state)`` says whether a line opens (or closes) a block of theirs, and ``process(block)``
turns a whole block into events.  :class:`LinePlugins` runs such plugins over the
parser's events, after the readers.  The parser makes one only when such a plugin is
registered (and then turns its fast path off, so that every chunk comes here); without
one, nothing of this module runs.

* The text events (:class:`~stream_parser.core.events.TextOutputEvent`) are read as
  lines.  A line ends at a newline (not part of it), at the end of the stream, or where
  the parser leaves text for a block of its own (thinking, a tool call, a tagged
  plugin's block): at the first event whose span begins at or after the end of the
  text read so far.
* While no block is open, each complete line is offered to each plugin in turn
  (``can_handle(line, ParseState.TEXT)``).  A line that no plugin accepts is text again,
  with its newline; a line that one accepts opens that plugin's block.  So text is held
  back by at most the current line.
* A block runs to the next line its plugin accepts (both lines included, the closing
  line's newline not), or to the end of the text (the end of the stream, or a block of
  the parser's own).  ``process`` then gets the block's text, and the events it
  returns replace it: the first gets the block's span, the others an empty span at its
  end, so the spans still tile.  An empty result (or None) leaves the block as text.
* Every other event (deltas, errors, usage) waits behind the text held before it, so
  the events keep the parser's order.
* Bounds: a line longer than ``max_tool_size`` is text without being offered, and so is
  a block that grows past it, after a ``block_too_large`` error.

Each decision depends only on the characters of the lines, never on where the stream
was cut, so the events (deltas merged) do not depend on the chunking.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from ..errors import ConfigError
from .events import ErrorType, ParseErrorEvent, ParseEvent, TextOutputEvent
from .state import ParseState

__all__ = ["LinePlugins", "is_line_plugin"]


def is_line_plugin(plugin: object) -> bool:
    """Whether ``plugin`` is in the line shape: ``can_handle`` and ``process``, no tags."""
    return (
        callable(getattr(plugin, "can_handle", None))
        and callable(getattr(plugin, "process", None))
        and not getattr(plugin, "start_tags", ())
    )


def _text(text: str, start: int) -> TextOutputEvent:
    return TextOutputEvent(text=text, span=(start, start + len(text)))


class LinePlugins:
    """The adapter that runs the plugins in the line shape of one parser.

    Args:
        max_size: ``max_tool_size``: the longest line offered, the largest block.

    Attributes:
        plugins: the plugins, in the order they were registered.
    """

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self.plugins: list[Any] = []
        self.reset()

    def add(self, plugin: Any) -> None:
        """Register a plugin (after those already registered)."""
        self.plugins.append(plugin)

    def reset(self) -> None:
        """Forget the stream: a new reply starts, and each plugin with a ``reset()`` is told."""
        for plugin in self.plugins:
            reset = getattr(plugin, "reset", None)
            if callable(reset):
                reset()
        self._at = 0  # the end offset of the text read so far
        # The current line: its pieces, its start offset (-1: nothing held), its size.
        self._line: list[str] = []
        self._line_start = -1
        self._line_size = 0
        self._long = False  # the current line is too long: it goes as text as it comes
        # The open block: its plugin (None: no block), its text so far, its start.
        self._owner: Any = None
        self._block: list[str] = []
        self._block_start = 0
        self._block_size = 0
        self._queue: list[ParseEvent] = []  # events behind the held text

    # --- the events --------------------------------------------------------------------

    def events(self, events: Iterable[ParseEvent]) -> list[ParseEvent]:
        """Pass the parser's events through: lines are offered, blocks replaced."""
        out: list[ParseEvent] = []
        for event in events:
            if isinstance(event, TextOutputEvent):
                self._text(event.text, event.span[0], out)
                continue
            start, end = event.span
            if start >= self._at and end > start:
                # The parser left text at ``start``: the line (and any block) ends there.
                self._end_text(out)
                if event.TILES:
                    self._at = end
            if self._line_start >= 0 or self._owner is not None:
                self._queue.append(event)
            else:
                out.append(event)
        return out

    def finish(self, out: list[ParseEvent]) -> None:
        """The stream ended: the last line is complete, and an open block ends with it."""
        self._end_text(out)

    def _text(self, text: str, start: int, out: list[ParseEvent]) -> None:
        self._at = start + len(text)
        pos = 0
        while True:
            newline = text.find("\n", pos)
            if newline < 0:
                if pos < len(text):
                    self._add(text[pos:], start + pos, out)
                return
            if pos < newline:
                self._add(text[pos:newline], start + pos, out)
            self._newline(start + newline, out)
            pos = newline + 1

    def _add(self, piece: str, at: int, out: list[ParseEvent]) -> None:
        """A piece of the current line (no newline in it)."""
        if self._long:
            out.append(_text(piece, at))
            return
        if self._line_start < 0:
            self._line_start = at
        self._line.append(piece)
        self._line_size += len(piece)
        if self._block_size + self._line_size <= self.max_size:
            return
        # Too long to hold: what is held goes as text, and so does the rest of the line.
        line = "".join(self._line)
        line_start = self._line_start
        self._clear_line()
        self._long = True
        if self._owner is not None:
            self._drop_block(out)
        out.append(_text(line, line_start))
        self._release(out)

    def _drop_block(self, out: list[ParseEvent]) -> None:
        """The open block grew past ``max_tool_size``: an error, then the block as text."""
        block = "".join(self._block)
        self._owner = None
        self._block = []
        self._block_size = 0
        out.append(
            ParseErrorEvent(
                error_type=ErrorType.BLOCK_TOO_LARGE.value,
                message="a plugin's block is longer than max_tool_size; it is delivered as text",
                context=block[:200],
                # Where the bound was passed: the same however the stream was cut.
                span=(self._block_start, self._block_start + self.max_size),
            )
        )
        out.append(_text(block, self._block_start))

    def _clear_line(self) -> None:
        self._line = []
        self._line_start = -1
        self._line_size = 0

    def _take_line(self, end: int) -> tuple[str, int]:
        """The current line (ending at ``end``) and its start; the line is cleared."""
        line = "".join(self._line)
        start = self._line_start if self._line_start >= 0 else end
        self._clear_line()
        return line, start

    def _newline(self, at: int, out: list[ParseEvent]) -> None:
        """A newline at offset ``at`` completes the current line."""
        if self._long:
            self._long = False
            out.append(_text("\n", at))
            return
        line, start = self._take_line(at)
        owner = self._owner
        if owner is None:
            plugin = self._accepting(line)
            if plugin is None:
                out.append(_text(line + "\n", start))
                self._release(out)
            else:
                self._open(plugin, line + "\n", start)
        elif owner.can_handle(line, ParseState.TEXT):
            self._block.append(line)
            self._block_size += len(line)
            self._close_block(out)
            out.append(_text("\n", at))
        else:
            self._block += (line, "\n")
            self._block_size += len(line) + 1
            if self._block_size > self.max_size:
                # (Empty lines grow the block too, and never pass through _add.)
                self._drop_block(out)
                self._release(out)

    def _end_text(self, out: list[ParseEvent]) -> None:
        """The text ends (a block of the parser's own, or the end of the stream)."""
        if self._long:
            self._long = False
        elif self._line_start >= 0:
            line, start = self._take_line(0)
            if self._owner is None:
                plugin = self._accepting(line)
                if plugin is None:
                    out.append(_text(line, start))
                else:
                    self._open(plugin, line, start)
            else:
                self._block.append(line)
                self._block_size += len(line)
        if self._owner is not None:
            self._close_block(out)
        self._release(out)

    # --- blocks --------------------------------------------------------------------------

    def _accepting(self, line: str) -> Any:
        for plugin in self.plugins:
            if plugin.can_handle(line, ParseState.TEXT):
                return plugin
        return None

    def _open(self, plugin: Any, text: str, start: int) -> None:
        self._owner = plugin
        self._block = [text]
        self._block_start = start
        self._block_size = len(text)

    def _close_block(self, out: list[ParseEvent]) -> None:
        """The block is whole: its plugin's events replace it (none: it stays text)."""
        plugin = self._owner
        content = "".join(self._block)
        start = self._block_start
        end = start + len(content)
        self._owner = None
        self._block = []
        self._block_size = 0
        result = plugin.process(content)
        events = [] if result is None else list(result)
        if not events:
            out.append(_text(content, start))
        for number, event in enumerate(events):
            if not isinstance(event, ParseEvent) or not dataclasses.is_dataclass(event):
                name = getattr(plugin, "name", type(plugin).__name__)
                raise ConfigError(
                    f"plugin {name!r}: process() must give events (ParseEvent), got {event!r}"
                )
            span = (start, end) if number == 0 else (end, end)
            out.append(dataclasses.replace(event, span=span))
        self._release(out)

    def _release(self, out: list[ParseEvent]) -> None:
        """Nothing is held any more: the events that waited behind it follow."""
        if self._queue and self._line_start < 0 and self._owner is None:
            out += self._queue
            self._queue = []
