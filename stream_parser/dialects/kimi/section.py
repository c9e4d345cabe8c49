"""The opener of a kimi tool-calls section: framing, or a cut call when nothing follows it.

``<|tool_calls_section_begin|>`` (K2) and ``<|open|>tools<|sep|>`` (K3) open the part of
a reply that holds its calls.  Each is markup, never text, so a section that goes on
comes out as framing.  A reply that ends right after the opener (nothing but whitespace
after it) was cut where its first call should begin: that is a cut call, an
``unclosed_tool`` error whose span holds the marker, and its raw text, never framing
alone (a ``truncated`` error follows when the reply hit its length limit).

Theory of operation.  :class:`KimiSectionPlugin` opens a block at the marker and has no
end tag: the block takes the whitespace after the marker and ends before the first
other character, which the core then reads as ordinary input (the first call's marker,
say).  Only the stream's end inside that block makes the error, so the outcome depends
on the characters alone, never on how the stream was cut.
"""

from __future__ import annotations

from typing import Final

from ...core.events import ErrorType, FramingEvent, ParseEvent, Span
from ...core.kit import ParsePlugin, PluginBlock, failure
from .markers import _WS, OPEN, SECTION_BEGIN, SEP

SECTION_OPENERS: Final = (
    SECTION_BEGIN,
    # The singular spelling: some K2 checkpoints and servers write it.
    "<|tool_call_section_begin|>",
    OPEN + "tools" + SEP,
)
"""The markers that open a tool-calls section (K2, K2's singular spelling, K3)."""


class KimiSectionPlugin(ParsePlugin):
    """Reads a tool-calls section's opener: framing, or ``unclosed_tool`` at the end.

    The block is the marker and the whitespace after it; it ends before the next other
    character.  ``ParserConfig(dialect="kimi")`` registers one.
    """

    name = "kimi_section"
    start_tags = SECTION_OPENERS
    end_tag = ""  # the block ends where the whitespace after the marker ends
    is_framing = True
    # vLLM's Kimi K2 reasoning parser ends reasoning at the tool-calls section; K3's
    # tools channel ends its think channel by the same rule.
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
        """The reply ended before the section's first call: a cut call, never run."""
        self._end = None
        return failure(
            ErrorType.UNCLOSED_TOOL,
            f"the stream ended right after {block.start_tag}, before the section's first "
            "call; nothing is executed and its text is delivered as text",
            block,
        )
