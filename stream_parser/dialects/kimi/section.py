r"""The kimi tool-calls sections: K2's holds its calls, K3's opener is framing or a cut call.

K2 writes every call of a reply inside one section of special tokens,
``<|tool_calls_section_begin|>`` … ``<|tool_calls_section_end|>`` (or the singular
``<|tool_call_section_…|>``).  What the section holds besides its calls is no text the
model meant for the reader: whitespace, or stray text a checkpoint writes between its
markers, which vLLM's parser drops too.  It is framing, and so are the markers.  K3's
``<|open|>tools<|sep|>`` opens its tools channel the same way.

Theory of operation.  :class:`KimiK2SectionPlugin` reads a K2 section as one block, with
:class:`KimiK2SectionReader`, a two-state table on the kit's reader base:

* *between calls*, the reader looks for ``<|tool_call_begin|>`` and the section's end
  markers (either spelling); every other character is stray, noted by its offsets (runs
  that touch are one).  The start of a marker cut by the end of a piece is held.
* *in a call*, it hands the call's text to a :class:`~.k2.KimiK2Reader` of its own (its
  call index reserved when ``<|tool_call_begin|>`` comes) up to a ``<|tool_call_end|>``
  that the call reader accepts (not inside a JSON string), exactly as the core does for a
  call on its own: the call's start and arguments stream while it is written, and its
  JSON string values take the K2 reader's fast path (``ValueRun``), the end marker of
  the call added to the pattern where it is not content.

The section's end marker ends the block (the reader sets :attr:`Reader.end` right after
it, so it is never cut).  The outcomes come then, tiling the block: the opener as
framing, each stray run as framing and each call as its own outcome (a
:class:`~stream_parser.core.events.ToolCallEvent`, or an error and its raw text), the end
marker as framing.  When the stream ends inside the section, the calls that were closed
run, an open one is ``unclosed_tool`` (never run) and the stray text after the last
call is framing; a section cut before its first call is a cut call: ``unclosed_tool``
and the section's raw text.  A section past ``max_tool_size`` (its calls together) is
``tool_too_large`` and its text so far, and the rest is read as ordinary input.

:class:`KimiK3SectionPlugin` reads K3's ``<|open|>tools<|sep|>`` alone: a block of the
marker and the whitespace after it, which ends before the next other character (the
core reads the calls), or, when the stream ends there, a cut call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from ...core.events import ErrorType, FramingEvent, ParseEvent, Span
from ...core.kit import (
    CallContext,
    FastData,
    ParsePlugin,
    PluginBlock,
    Reader,
    ReaderPlugin,
    ValueRun,
    call_too_large,
    failure,
    tag_stop,
)
from .k2 import KimiK2Reader
from .markers import (
    _WS,
    CALL_BEGIN,
    CALL_END,
    OPEN,
    SECTION_BEGIN,
    SECTION_BEGIN_SINGULAR,
    SECTION_END,
    SECTION_END_SINGULAR,
    SEP,
)

K2_SECTION_OPENERS: Final = (SECTION_BEGIN, SECTION_BEGIN_SINGULAR)
"""The markers that open a K2 tool-calls section (both spellings)."""


K2_SECTION_ENDS: Final = (SECTION_END, SECTION_END_SINGULAR)
"""The markers that end a K2 tool-calls section (either spelling ends either opener)."""


SECTION_OPENERS: Final = (*K2_SECTION_OPENERS, OPEN + "tools" + SEP)
"""The markers that open a tool-calls section (K2, K2's singular spelling, K3)."""


# Between calls: the markers that end a run of stray text.
_BETWEEN_MARKERS: Final = (CALL_BEGIN, *K2_SECTION_ENDS)
_NEXT_MARKER: Final = re.compile("|".join(re.escape(m) for m in _BETWEEN_MARKERS))


# In a call whose end marker is not content: a chunk with it, whole or cut, needs the reader.
_CALL_END_STOP: Final = tag_stop((CALL_END,))


# The reader's states.
_BETWEEN, _CALL = range(2)


@dataclass(slots=True)
class _Part:
    """A call of the section, or a run of stray text in it (absolute offsets)."""

    start: int
    end: int  # -1: a call whose end marker has not come
    call: KimiK2Reader | None = None  # None: stray text


class KimiK2SectionReader(Reader):
    """Reads one K2 section: its calls, the stray text between them, its end marker.

    Each call is read by a :class:`~.k2.KimiK2Reader` of its own; the outcomes come when
    the section ends (see the module).
    """

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self.handlers = {_BETWEEN: self._between, _CALL: self._in_call}
        self.state = _BETWEEN
        self._parts: list[_Part] = []
        self._open: KimiK2Reader | None = None  # the call being read
        self._closer = ""  # the end marker that ended the section

    # --- reading -------------------------------------------------------------------------

    def _between(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """Stray text up to the next call or the section's end."""
        found = _NEXT_MARKER.search(buf, pos)
        if found is None:
            keep = max(self.cut_marker(buf, pos, marker) for marker in _BETWEEN_MARKERS)
            stop = len(buf) - keep
            self._stray(base + pos, base + stop)
            return stop, True
        at = found.start()
        self._stray(base + pos, base + at)
        marker = found.group()
        after = at + len(marker)
        if marker == CALL_BEGIN:
            reader = self._open = KimiK2Reader(CallContext(self.call.plugin))
            self._parts.append(_Part(base + at, -1, reader))
            self.state = _CALL
            return after, False
        self._closer = marker
        self.end = base + after
        return after, True

    def _in_call(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """The call's text up to the ``<|tool_call_end|>`` that closes it."""
        reader = self._open
        assert reader is not None
        found = buf.find(CALL_END, pos)
        while found >= 0:
            if found > pos:
                reader.feed(buf[pos:found], base + pos, out)
            after = found + len(CALL_END)
            if reader.accepts_end():
                self._parts[-1].end = base + after
                self._open = None
                self.state = _BETWEEN
                return after, False
            reader.feed(CALL_END, base + found, out)  # inside a JSON string: content
            pos = after
            found = buf.find(CALL_END, pos)
        keep = self.cut_marker(buf, pos, CALL_END)
        stop = len(buf) - keep
        if stop > pos:
            reader.feed(buf[pos:stop], base + pos, out)
        if keep and not reader.accepts_end():
            # Where the end marker would be content, so is its start.
            reader.feed(buf[stop:], base + stop, out)
            return len(buf), True
        return stop, True

    def _stray(self, start: int, end: int) -> None:
        """Note stray text at ``start:end``; it joins a run that it touches."""
        if start == end:
            return
        parts = self._parts
        if parts and parts[-1].call is None and parts[-1].end == start:
            parts[-1].end = end
        else:
            parts.append(_Part(start, end))

    # --- the fast path -------------------------------------------------------------------

    def fast_path(self) -> FastData | None:
        """The open call's fast path, unless the start of a marker is held."""
        reader = self._open
        if reader is None or self.held:
            return None
        fast = reader.fast_path()
        if fast is None:
            return None
        _, take, end_is_content = fast  # a K2 call's fast path has no pattern of its own
        if end_is_content:  # inside a JSON string
            return fast
        # The core looks for no end tag in a section (the reader ends it): the call's end
        # marker must stop the fast path where it would close the call.
        return _CALL_END_STOP, take, False

    def value_run(self) -> ValueRun | None:
        """The open call's JSON arguments, which the core streams."""
        reader = self._open
        return None if reader is None else reader.value_run()

    # --- the outcome ---------------------------------------------------------------------

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """The section ended at its end marker: each part's outcome, tiling the block."""
        return self._outcome(block)

    def unclosed(self, block: PluginBlock) -> list[ParseEvent]:
        """The stream ended in the section: closed calls run, an open one never does."""
        if not any(part.call is not None for part in self._parts):
            return failure(
                ErrorType.UNCLOSED_TOOL,
                f"the stream ended inside a tool-calls section opened by {block.start_tag}, "
                "before its first call; nothing is executed and its text is delivered as "
                "text",
                block,
            )
        return self._outcome(block)

    def too_large(self, block: PluginBlock) -> list[ParseEvent]:
        """``tool_too_large`` (with the open call's index, once it was announced)."""
        return call_too_large(block, self._open, self.call.plugin)

    def _outcome(self, block: PluginBlock) -> list[ParseEvent]:
        first, last = block.span
        raw = block.raw
        opened = first + len(block.start_tag)
        closer = len(self._closer)
        body_end = last - closer  # where the end marker begins (the block's end if none)
        out: list[ParseEvent] = [FramingEvent(text=block.start_tag, span=(first, opened))]
        pos = opened
        for part in self._parts:
            if part.call is None:
                end = part.end
                out.append(FramingEvent(text=raw[pos - first : end - first], span=(pos, end)))
            elif part.end < 0:
                end = body_end
                tile = PluginBlock(
                    CALL_BEGIN,
                    "",
                    raw[part.start + len(CALL_BEGIN) - first : end - first],
                    (part.start, end),
                    block.cut,
                )
                out += part.call.unclosed(tile)
            else:
                end = part.end
                tile = PluginBlock(
                    CALL_BEGIN,
                    CALL_END,
                    raw[part.start + len(CALL_BEGIN) - first : end - len(CALL_END) - first],
                    (part.start, end),
                )
                out += part.call.finish(tile)
            pos = end
        if pos < body_end:  # the stream ended in stray text (or the start of a marker)
            out.append(FramingEvent(text=raw[pos - first : body_end - first], span=(pos, body_end)))
        if closer:
            out.append(FramingEvent(text=self._closer, span=(body_end, last)))
        return out


class KimiK2SectionPlugin(ReaderPlugin):
    """Reads a K2 tool-calls section whole: its calls, and the rest of it as framing.

    ``ParserConfig(dialect="kimi")`` registers one.  A call written without its section
    is :class:`~.k2.KimiK2Plugin`'s.
    """

    name = "kimi_k2_section"
    start_tags = K2_SECTION_OPENERS
    end_tag = ""  # the reader ends the block after the section's end marker
    reader = KimiK2SectionReader
    reserve_index = False  # each call reserves its own when its begin marker comes
    # vLLM's Kimi K2 reasoning parser ends reasoning at the tool-calls section.
    ends_reasoning = "^"


class KimiK3SectionPlugin(ParsePlugin):
    """Reads K3's ``<|open|>tools<|sep|>``: framing, or ``unclosed_tool`` at the end.

    The block is the marker and the whitespace after it; it ends before the next other
    character.  ``ParserConfig(dialect="kimi")`` registers one.
    """

    name = "kimi_k3_section"
    start_tags = (OPEN + "tools" + SEP,)
    end_tag = ""  # the block ends where the whitespace after the marker ends
    is_framing = True
    # K3's tools channel ends its think channel, by the rule of K2's section.
    ends_reasoning = "^"

    def __init__(self) -> None:
        self._end: int | None = None

    def on_start(self, tag: str, span: Span) -> list[ParseEvent]:
        """The marker was seen: the block goes on over the whitespace after it."""
        self._end = None
        return []

    def on_data(self, data: str, span: Span) -> list[ParseEvent]:
        """End the block before the first character that is not whitespace."""
        stripped = data.lstrip(_WS)
        if stripped:
            self._end = span[0] + len(data) - len(stripped)
        return []

    def ends_at(self) -> int | None:
        """Where the whitespace after the marker ended, once a later character came."""
        return self._end

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:
        """The marker as framing, then the whitespace after it (its own framing)."""
        self._end = None
        start, end = block.span
        marker_end = end - len(block.content)
        events: list[ParseEvent] = [FramingEvent(text=block.start_tag, span=(start, marker_end))]
        if block.content:
            events.append(FramingEvent(text=block.content, span=(marker_end, end)))
        return events

    def on_unclosed(self, block: PluginBlock) -> list[ParseEvent]:
        """The reply ended before the channel's first call: a cut call, never run."""
        self._end = None
        return failure(
            ErrorType.UNCLOSED_TOOL,
            f"the stream ended right after {block.start_tag}, before the section's first "
            "call; nothing is executed and its text is delivered as text",
            block,
        )
