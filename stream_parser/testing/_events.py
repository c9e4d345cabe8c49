"""Helpers for testing code that consumes events: merging deltas, checking spans."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..events import (
    CodeBlockDeltaEvent,
    ParseEvent,
    TextOutputEvent,
    ThinkingDeltaEvent,
    ToolArgumentsDeltaEvent,
    ToolParamDeltaEvent,
)

__all__ = ["assert_lossless", "merge_deltas", "tiling_events"]


def _merge_key(event: ParseEvent) -> tuple[object, ...] | None:
    """Events with equal keys that follow each other are pieces of one value."""
    if isinstance(event, TextOutputEvent):
        return ("text",)
    if isinstance(event, ThinkingDeltaEvent):
        return ("thinking_delta",)
    if isinstance(event, ToolParamDeltaEvent):
        return ("param", event.tool_name, event.param, event.call_index)
    if isinstance(event, ToolArgumentsDeltaEvent):
        return ("args", event.tool_name, event.call_index, event.call_id)
    if isinstance(event, CodeBlockDeltaEvent):
        return ("code", event.language)
    return None


def _join(first: ParseEvent, second: ParseEvent) -> ParseEvent:
    span = (first.span[0], second.span[1])
    if isinstance(first, TextOutputEvent) and isinstance(second, TextOutputEvent):
        return replace(first, text=first.text + second.text, span=span)
    if isinstance(first, ThinkingDeltaEvent) and isinstance(second, ThinkingDeltaEvent):
        return replace(first, content=first.content + second.content, span=span)
    if isinstance(first, (ToolParamDeltaEvent, ToolArgumentsDeltaEvent, CodeBlockDeltaEvent)):
        assert isinstance(second, type(first))
        return replace(first, delta=first.delta + second.delta, span=span)
    raise TypeError(f"cannot merge {first.kind} and {second.kind}")  # pragma: no cover


def merge_deltas(events: Iterable[ParseEvent]) -> list[ParseEvent]:
    """Merge runs of adjacent deltas of one kind (and one parameter / call) into one event.

    After merging, the events of a stream do not depend on how it was cut into chunks
    (invariant 1); this is the form in which tests compare event sequences.
    """
    merged: list[ParseEvent] = []
    last_key: tuple[object, ...] | None = None
    for event in events:
        key = _merge_key(event)
        if key is not None and key == last_key:
            merged[-1] = _join(merged[-1], event)
        else:
            merged.append(event)
        last_key = key
    return merged


def tiling_events(events: Iterable[ParseEvent]) -> list[ParseEvent]:
    """The block events whose spans tile the input (zero-width side-channel ones excluded)."""
    return [e for e in events if e.TILES and e.span[0] != e.span[1]]


def _raw_of(event: ParseEvent, text: str) -> str:
    return text[event.span[0] : event.span[1]]


def assert_lossless(events: Sequence[ParseEvent], text: str) -> None:
    """Assert that the block events' spans tile ``text`` exactly (invariant 2).

    Also checks that every text event's ``text`` is exactly its span's raw text.

    Raises:
        AssertionError: with the first place where the tiling breaks.
    """
    position = 0
    for event in tiling_events(events):
        start, end = event.span
        assert start == position, f"gap or overlap at {position}: {event!r}"
        assert end > start, f"empty span: {event!r}"
        if isinstance(event, TextOutputEvent):
            assert event.text == _raw_of(event, text), f"text differs from its span: {event!r}"
        position = end
    assert position == len(text), f"events cover {position} of {len(text)} characters"
