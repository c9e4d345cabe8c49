"""Reasoning on the provider's channel (``ChatDelta.reasoning``) bounded by
``max_thinking_size``, as a thinking block in the text is: kept up to it, streamed past it.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_parser import ChatDelta, StreamToolParser
from stream_parser.core.config import ParserConfig
from stream_parser.core.events import (
    ErrorType,
    ParseErrorEvent,
    ParseEvent,
    TextOutputEvent,
    ThinkingDeltaEvent,
    ThinkingEvent,
)
from stream_parser.errors import StrictModeError

BODY = "abcdefghijklmnopqrstuvwxyz0123"


def run(items: list[object], **options: object) -> list[ParseEvent]:
    parser = StreamToolParser({}, config=ParserConfig(**options))  # type: ignore[arg-type]
    out: list[ParseEvent] = []
    for item in items:
        out += parser.feed_item(item)
    return out + parser.close()


def reasoning(pieces: list[str], after: str | None = "ok") -> list[object]:
    items: list[object] = [ChatDelta(reasoning=piece) for piece in pieces]
    if after is not None:
        items.append(ChatDelta(content=after))
    return items


def deltas(events: list[ParseEvent]) -> str:
    return "".join(e.delta for e in events if isinstance(e, ThinkingDeltaEvent))


def thinking(events: list[ParseEvent]) -> ThinkingEvent:
    (event,) = [e for e in events if isinstance(e, ThinkingEvent)]
    return event


def too_large(events: list[ParseEvent]) -> list[ParseErrorEvent]:
    return [
        e
        for e in events
        if isinstance(e, ParseErrorEvent) and e.error_type == ErrorType.THINKING_TOO_LARGE
    ]


@pytest.mark.parametrize("limit", [1, 5, 29, 30, 31, 100])
def test_whole_and_char_by_char_and_every_split_agree(limit: int) -> None:
    whole = run(reasoning([BODY]), max_thinking_size=limit)
    event = thinking(whole)
    assert event.content == BODY[:limit]
    assert event.truncated == (len(BODY) > limit)
    assert event.closed
    errors = too_large(whole)
    assert len(errors) == (1 if len(BODY) > limit else 0)
    assert deltas(whole) == BODY
    assert [e.text for e in whole if isinstance(e, TextOutputEvent)] == ["ok"]
    by_char = run(reasoning(list(BODY)), max_thinking_size=limit)
    assert (thinking(by_char), too_large(by_char), deltas(by_char)) == (event, errors, BODY)
    for i in range(len(BODY) + 1):
        for j in range(i, len(BODY) + 1):
            pieces = [p for p in (BODY[:i], BODY[i:j], BODY[j:]) if p]
            split = run(reasoning(pieces), max_thinking_size=limit)
            assert thinking(split) == event
            assert too_large(split) == errors
            assert deltas(split) == BODY


def test_the_error_comes_with_the_piece_that_crosses_the_bound() -> None:
    events = run(reasoning(["abc", "def", "ghi"]), max_thinking_size=4)
    kinds = [(e.kind, getattr(e, "delta", None)) for e in events]
    assert kinds[:4] == [
        ("thinking_delta", "abc"),
        ("error", None),
        ("thinking_delta", "def"),
        ("thinking_delta", "ghi"),
    ]
    (error,) = too_large(events)
    assert "max_thinking_size (4 characters)" in error.message
    assert error.span == (0, 0)  # the side channel is outside the text


def test_deltas_are_the_unbounded_ones() -> None:
    items = reasoning([BODY[k : k + 3] for k in range(0, len(BODY), 3)])
    bounded = [e for e in run(items, max_thinking_size=4) if isinstance(e, ThinkingDeltaEvent)]
    unbounded = [e for e in run(items) if isinstance(e, ThinkingDeltaEvent)]
    assert bounded == unbounded


def test_a_stream_that_ends_inside_the_reasoning() -> None:
    events = run(reasoning([BODY[:10], BODY[10:]], after=None), max_thinking_size=8)
    event = thinking(events)
    assert (event.content, event.truncated) == (BODY[:8], True)
    assert len(too_large(events)) == 1


def test_each_reasoning_run_has_its_own_bound() -> None:
    # Reasoning, text, reasoning again: two blocks, each kept up to the bound.
    items = [
        ChatDelta(reasoning="abcdef"),
        ChatDelta(content="x"),
        ChatDelta(reasoning="ab"),
        ChatDelta(content="y"),
    ]
    events = run(items, max_thinking_size=4)
    blocks = [(e.content, e.truncated) for e in events if isinstance(e, ThinkingEvent)]
    assert blocks == [("abcd", True), ("ab", False)]
    assert len(too_large(events)) == 1


def test_without_deltas() -> None:
    events = run(reasoning([BODY], after=None), max_thinking_size=3, emit_deltas=False)
    assert [e.kind for e in events] == ["error", "thinking"]
    assert thinking(events).content == BODY[:3]


def test_strict_mode_raises() -> None:
    with pytest.raises(StrictModeError):
        run(reasoning([BODY]), max_thinking_size=2, strict=True)


def test_a_limit_past_several_folds() -> None:
    body = "".join(chr(ord("a") + k % 26) for k in range(200_003))
    pieces = [body[k : k + 7] for k in range(0, len(body), 7)]
    events = run(reasoning(pieces), max_thinking_size=150_001)
    event = thinking(events)
    assert (event.content, event.truncated) == (body[:150_001], True)
    assert len(too_large(events)) == 1
    assert deltas(events) == body
    assert thinking(run(reasoning(pieces))).content == body


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(min_size=1, max_size=40),
    cuts=st.lists(st.integers(min_value=1, max_value=39), max_size=8),
    limit=st.integers(min_value=1, max_value=45),
)
def test_property_the_head_is_kept_whatever_the_cuts(
    text: str, cuts: list[int], limit: int
) -> None:
    bounds = [0, *sorted({c for c in cuts if c < len(text)}), len(text)]
    pieces = [text[a:b] for a, b in itertools.pairwise(bounds)]
    events = run(reasoning(pieces), max_thinking_size=limit)
    event = thinking(events)
    assert (event.content, event.truncated) == (text[:limit], len(text) > limit)
    assert len(too_large(events)) == (1 if len(text) > limit else 0)
    assert deltas(events) == text
