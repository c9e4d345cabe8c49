"""Helpers for testing code that consumes events: merging deltas, checking spans."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from ..core.events import (
    CodeBlockDeltaEvent,
    ParseEvent,
    TagDeltaEvent,
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
    if isinstance(event, TagDeltaEvent):
        return ("tag", event.tag)
    return None


def _join(run: list[ParseEvent]) -> ParseEvent:
    """One event for a run of mergeable deltas: the pieces joined once (linear)."""
    first = run[0]
    if len(run) == 1:
        return first
    span = (first.span[0], run[-1].span[1])
    # Each run holds events of one class (see _merge_key); the field that grows is
    # ``delta`` in every delta event, ``text`` in text events.
    field = "text" if isinstance(first, TextOutputEvent) else "delta"
    joined = "".join(getattr(event, field) for event in run)
    return replace(first, **{field: joined, "span": span})  # type: ignore[type-var]


def merge_deltas(events: Iterable[ParseEvent]) -> list[ParseEvent]:
    """Merge runs of adjacent deltas of one kind (and one parameter / call) into one event.

    After merging, the events of a stream do not depend on how it was cut into chunks
    (invariant 1); this is the form in which tests compare event sequences.
    """
    merged: list[ParseEvent] = []
    run: list[ParseEvent] = []
    run_key: tuple[object, ...] | None = None
    for event in events:
        key = _merge_key(event)
        if key is not None and key == run_key:
            run.append(event)
            continue
        if run:
            merged.append(_join(run))
        run, run_key = [event], key
    if run:
        merged.append(_join(run))
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
