"""Thinking blocks bounded by ``max_thinking_size``: kept up to it, streamed past it."""

from __future__ import annotations

import pytest

from stream_parser import StreamToolParser, event_from_json, event_to_json
from stream_parser.core.config import ParserConfig
from stream_parser.core.events import ErrorType, ParseErrorEvent, ThinkingDeltaEvent, ThinkingEvent
from stream_parser.errors import ConfigError
from stream_parser.testing import merge_deltas
from tests.helpers import assert_all_splittings


def run(chunks: list[str], **options: object) -> list[object]:
    parser = StreamToolParser({}, config=ParserConfig(**options))  # type: ignore[arg-type]
    out: list[object] = []
    for chunk in chunks:
        out += parser.feed(chunk)
    return out + parser.close()


def deltas(events: list[object]) -> str:
    return "".join(e.delta for e in events if isinstance(e, ThinkingDeltaEvent))


def thinking(events: list[object]) -> ThinkingEvent:
    (event,) = [e for e in events if isinstance(e, ThinkingEvent)]
    return event


def too_large(events: list[object]) -> list[ParseErrorEvent]:
    return [
        e
        for e in events
        if isinstance(e, ParseErrorEvent) and e.error_type == ErrorType.THINKING_TOO_LARGE
    ]


BODY = "abcdefghijklmnopqrstuvwxyz0123"
STREAM = f"hi <think>{BODY}</think> bye"


@pytest.mark.parametrize("limit", [1, 5, 29, 30, 31, 100])
def test_whole_and_char_by_char_and_every_split_agree(limit: int) -> None:
    whole = run([STREAM], max_thinking_size=limit)
    event = thinking(whole)
    assert event.content == BODY[:limit]
    assert event.truncated == (len(BODY) > limit)
    assert event.span == (3, STREAM.index(" bye"))  # still the whole block
    errors = too_large(whole)
    assert len(errors) == (1 if len(BODY) > limit else 0)
    assert deltas(whole) == BODY
    by_char = run(list(STREAM), max_thinking_size=limit)
    assert (thinking(by_char), too_large(by_char), deltas(by_char)) == (event, errors, BODY)
    for i in range(len(STREAM) + 1):
        for j in range(i, len(STREAM) + 1):
            split = run([STREAM[:i], STREAM[i:j], STREAM[j:]], max_thinking_size=limit)
            assert thinking(split) == event
            assert too_large(split) == errors
            assert deltas(split) == BODY


def test_deltas_are_the_unbounded_ones() -> None:
    # The same text streams, in the same places (the chunk that crosses the bound comes
    # in two deltas, on either side of the error).
    chunks = [STREAM[k : k + 3] for k in range(0, len(STREAM), 3)]
    bounded = [e for e in run(chunks, max_thinking_size=4) if isinstance(e, ThinkingDeltaEvent)]
    unbounded = [e for e in run(chunks) if isinstance(e, ThinkingDeltaEvent)]
    assert merge_deltas(bounded) == merge_deltas(unbounded)
    assert [e.span[1] for e in bounded] == sorted({*(e.span[1] for e in unbounded), 14})


def test_the_error_names_the_first_character_not_kept() -> None:
    (error,) = too_large(run([STREAM], max_thinking_size=7))
    assert STREAM[error.span[1]] == BODY[7]
    assert error.span[0] == STREAM.index("<think>")


def test_an_unclosed_oversized_block() -> None:
    events = run(["<think>", BODY[:10], BODY[10:]], max_thinking_size=8)
    event = thinking(events)
    assert (event.content, event.closed, event.truncated) == (BODY[:8], False, True)
    assert event.span == (0, len("<think>") + len(BODY))
    assert len(too_large(events)) == 1
    assert deltas(events) == BODY


def test_a_stream_that_starts_inside_thinking_is_bounded_too() -> None:
    events = run([BODY, "</think>ok"], max_thinking_size=3, start_in_thinking=True)
    assert thinking(events).content == BODY[:3]
    assert thinking(events).truncated


def test_strict_mode_raises() -> None:
    from stream_parser.errors import StrictModeError

    with pytest.raises(StrictModeError):
        run([STREAM], max_thinking_size=2, strict=True)


def test_the_event_round_trips_through_json() -> None:
    event = thinking(run([STREAM], max_thinking_size=4))
    line = event_to_json(event)
    assert '"truncated": true' in line or '"truncated":true' in line
    assert event_from_json(line) == event
    plain = ThinkingEvent(content="x", span=(0, 1))
    assert event_from_json(event_to_json(plain)) == plain


@pytest.mark.parametrize("size", [0, -1])
def test_the_size_must_be_positive(size: int) -> None:
    with pytest.raises(ConfigError):
        ParserConfig(max_thinking_size=size)


def test_a_limit_past_several_folds() -> None:
    body = "".join(chr(ord("a") + k % 26) for k in range(200_003))
    stream = f"<think>\n{body}</think>"
    chunks = [stream[k : k + 7] for k in range(0, len(stream), 7)]
    events = run(chunks, max_thinking_size=150_001)
    event = thinking(events)
    assert (event.content, event.truncated) == (("\n" + body)[:150_001], True)
    (error,) = too_large(events)
    assert error.span == (0, len("<think>") + 150_001)
    assert deltas(events) == "\n" + body


@pytest.mark.parametrize("limit", [1, 5, 29])
def test_the_error_stands_between_the_thinking_before_and_after_the_bound(limit: int) -> None:
    # The deltas before the bound, the error, the deltas after it: in that order however
    # the stream is cut (a chunk that crosses the bound is delivered in two deltas).
    make = lambda: StreamToolParser({}, config=ParserConfig(max_thinking_size=limit))  # noqa: E731
    events = assert_all_splittings(make, STREAM)
    kinds = [(e.kind, getattr(e, "delta", None)) for e in events]
    assert kinds[1:4] == [
        ("thinking_delta", BODY[:limit]),
        ("error", None),
        ("thinking_delta", BODY[limit:]),
    ]
