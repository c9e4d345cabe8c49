"""NativeCallAccumulator: native tool-call fragments -> tool-call events."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, field_validator

from stream_parser.core._native import NativeCallAccumulator
from stream_parser.core.chunks import ToolCallDelta
from stream_parser.core.events import (
    ParseErrorEvent,
    ParseEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
)
from stream_parser.encoders import event_to_json
from stream_parser.errors import ConfigError
from stream_parser.testing import merge_deltas


class GetWeather(BaseModel):
    city: str
    days: int = 1


class Search(BaseModel):
    query: str

    @field_validator("query")
    @classmethod
    def not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("query must not be blank")
        if value == "boom":
            raise TypeError("a validator bug")
        return value


class NoArgs(BaseModel):
    pass


REGISTRY: dict[str, type[BaseModel]] = {
    "get_weather": GetWeather,
    "search": Search,
    "no_args": NoArgs,
}


def frag(index: int, *, id: str | None = None, name: str | None = None, args: str | None = None):
    return ToolCallDelta(index=index, id=id, name=name, arguments=args)


def run(
    items: list[list[ToolCallDelta]],
    finish_reason: str | None = "tool_calls",
    *,
    emit_deltas: bool = True,
    max_size: int = 1_048_576,
) -> list[ParseEvent]:
    accumulator = NativeCallAccumulator(REGISTRY, emit_deltas=emit_deltas, max_size=max_size)
    events: list[ParseEvent] = []
    for offset, fragments in enumerate(items):
        events += accumulator.feed(fragments, offset)
    events += accumulator.finish(finish_reason, len(items))
    return events


def summary(events: list[ParseEvent]) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for event in events:
        if isinstance(event, ToolCallStartEvent):
            out.append(("start", event.call_index, event.tool_name, event.call_id))
        elif isinstance(event, ToolArgumentsDeltaEvent):
            out.append(("delta", event.call_index, event.delta))
        elif isinstance(event, ToolCallEvent):
            out.append(("call", event.call_index, event.tool_instance))
        elif isinstance(event, ParseErrorEvent):
            out.append(("error", event.error_type, event.context))
        else:  # pragma: no cover
            raise AssertionError(event)
    return out


def test_single_call():
    events = run(
        [
            [frag(0, id="call_1", name="get_weather", args="")],
            [frag(0, args='{"city": ')],
            [frag(0, args='"Paris", "days": 3}')],
        ]
    )
    assert summary(events) == [
        ("start", 0, "get_weather", "call_1"),
        ("delta", 0, '{"city": '),
        ("delta", 0, '"Paris", "days": 3}'),
        ("call", 0, GetWeather(city="Paris", days=3)),
    ]
    start, first, second, call = events
    assert start.span == (1, 1)  # announced with the first argument piece
    assert first.span == (1, 1) and second.span == (2, 2)
    assert isinstance(call, ToolCallEvent)
    assert call.span == (3, 3)
    assert call.tool_name == "get_weather"
    assert call.raw == '{"city": "Paris", "days": 3}'
    assert call.call_id == "call_1"
    assert isinstance(first, ToolArgumentsDeltaEvent)
    assert first.call_id == "call_1" and first.tool_name == "get_weather"


def test_name_only_fragment_waits_for_arguments():
    # The name may still be incomplete: nothing is announced before the arguments.
    accumulator = NativeCallAccumulator(REGISTRY)
    assert accumulator.feed([frag(0, id="c", name="get_")], 0) == []
    assert accumulator.open_calls == 1
    assert accumulator.feed([frag(0, name="weather")], 1) == []
    events = accumulator.feed([frag(0, args='{"city": "Oslo"}')], 2)
    assert summary(events) == [
        ("start", 0, "get_weather", "c"),
        ("delta", 0, '{"city": "Oslo"}'),
    ]
    assert summary(accumulator.finish("tool_calls", 3)) == [("call", 0, GetWeather(city="Oslo"))]
    assert accumulator.open_calls == 0


def test_name_in_pieces_then_another_index():
    events = run(
        [
            [frag(0, id="a", name="sea")],
            [frag(0, name="rch")],
            [frag(1, id="b", name="no_args")],
            [frag(0, args='{"query": "x"}')],
        ]
    )
    assert summary(events) == [
        ("start", 0, "search", "a"),  # its name is complete once index 1 arrives
        ("start", 1, "no_args", "b"),  # ... and this one's once index 0 comes back
        ("delta", 0, '{"query": "x"}'),
        ("call", 0, Search(query="x")),
        ("call", 1, NoArgs()),
    ]


def test_call_without_arguments_is_empty_object():
    events = run([[frag(0, id="c", name="no_args")]])
    # Never given arguments: announced at finish.
    assert summary(events) == [("start", 0, "no_args", "c"), ("call", 0, NoArgs())]
    assert isinstance(events[-1], ToolCallEvent)
    assert events[-1].raw == ""


@pytest.mark.parametrize("blank", ["", "  ", "\n\t"])
def test_blank_arguments_mean_empty_object(blank):
    events = run([[frag(0, name="no_args", args=blank)]])
    assert summary(events)[-1] == ("call", 0, NoArgs())


def test_arguments_before_the_name_are_announced_with_it():
    events = run(
        [
            [frag(0, args='{"city"')],
            [frag(0, id="late", name="get_weather")],
            [frag(0, args=': "Rome"}')],
        ]
    )
    assert summary(events) == [
        ("start", 0, "get_weather", "late"),
        ("delta", 0, '{"city": "Rome"}'),  # everything so far, as one delta
        ("call", 0, GetWeather(city="Rome")),
    ]


def test_interleaved_calls_finish_in_index_order():
    events = run(
        [
            [frag(1, id="b", name="search", args="")],
            [frag(0, id="a", name="get_weather", args="")],
            [frag(1, args='{"query":')],
            [frag(0, args='{"city":'), frag(1, args=' "rain"}')],
            [frag(0, args=' "Lima"}')],
        ]
    )
    assert summary(events) == [
        ("start", 1, "search", "b"),  # the name of 1 is complete once 0 arrives
        ("start", 0, "get_weather", "a"),
        ("delta", 1, '{"query":'),
        ("delta", 0, '{"city":'),
        ("delta", 1, ' "rain"}'),
        ("delta", 0, ' "Lima"}'),
        ("call", 0, GetWeather(city="Lima")),
        ("call", 1, Search(query="rain")),
    ]
    calls = [event for event in events if isinstance(event, ToolCallEvent)]
    assert [(call.call_id, call.call_index) for call in calls] == [("a", 0), ("b", 1)]


def test_repeated_name_and_id_are_not_doubled():
    events = run(
        [
            [frag(0, id="x", name="search", args="")],
            [frag(0, id="x", name="search", args='{"query"')],
            [frag(0, id="other", name="search", args=': "q"}')],
        ]
    )
    assert summary(events) == [
        ("start", 0, "search", "x"),
        ("delta", 0, '{"query"'),
        ("delta", 0, ': "q"}'),
        ("call", 0, Search(query="q")),
    ]


def test_empty_fragments_are_ignored():
    accumulator = NativeCallAccumulator(REGISTRY)
    assert accumulator.feed([frag(3), frag(4, args="")], 0) == []
    assert accumulator.open_calls == 0
    assert accumulator.finish("tool_calls", 0) == []


@pytest.mark.parametrize("reason", ["length", None, "content_filter"])
def test_cut_reply_never_yields_a_call(reason):
    events = run(
        [
            [frag(0, id="a", name="get_weather", args='{"city": "Paris"}')],
            [frag(1, id="b", name="search", args='{"query": "unfinished')],
        ],
        finish_reason=reason,
    )
    assert not any(isinstance(event, ToolCallEvent) for event in events)
    errors = [event for event in events if isinstance(event, ParseErrorEvent)]
    # A call the stream ended is unclosed, as in the text (the parser adds one `truncated`
    # for the reply when it was cut by the length limit).
    assert [(e.error_type, e.context) for e in errors] == [
        ("unclosed_tool", '{"city": "Paris"}'),  # even a complete-looking call is not run
        ("unclosed_tool", '{"query": "unfinished'),
    ]
    assert "not executed" in errors[0].message
    assert "'a'" in errors[0].message


def test_unknown_tool():
    events = run([[frag(0, id="c", name="rm_rf", args='{"path": "/"}')]])
    assert summary(events) == [
        ("start", 0, "rm_rf", "c"),
        ("delta", 0, '{"path": "/"}'),
        ("error", "unknown_tool", '{"path": "/"}'),
    ]
    assert "rm_rf" in events[-1].message  # type: ignore[attr-defined]


def test_call_without_a_name():
    events = run([[frag(0, id="c", args='{"a": 1}')]])
    assert summary(events) == [("error", "unknown_tool", '{"a": 1}')]


@pytest.mark.parametrize(
    "raw",
    [
        '{"city": "Paris"',  # cut JSON
        "{'city': 'Paris'}",  # Python, not JSON
        '["Paris"]',  # not an object
        '"{\\"city\\": \\"Paris\\"}"',  # a JSON string holding JSON
        "null",
        "[" * 100_000,  # deep nesting (RecursionError)
        "1" * 10_000,  # over Python's int-string limit
    ],
)
def test_unreadable_arguments_are_malformed(raw):
    events = run([[frag(0, name="get_weather", args=raw)]])
    error = events[-1]
    assert isinstance(error, ParseErrorEvent)
    assert error.error_type == "malformed_tool"
    assert error.context == raw
    assert not any(isinstance(event, ToolCallEvent) for event in events)


def test_invalid_params_carry_json_safe_pydantic_details():
    events = run([[frag(0, name="get_weather", args='{"days": "many"}')]])
    error = events[-1]
    assert isinstance(error, ParseErrorEvent)
    assert error.error_type == "invalid_params"
    assert {tuple(item["loc"]) for item in error.details} == {("city",), ("days",)}
    assert {item["type"] for item in error.details} == {"missing", "int_parsing"}
    assert "city" in error.message and "days" in error.message
    json.dumps(error.details)
    json.loads(event_to_json(error))


def test_validator_value_error_details_are_json_safe():
    events = run([[frag(0, name="search", args='{"query": "  "}')]])
    error = events[-1]
    assert isinstance(error, ParseErrorEvent)
    assert error.error_type == "invalid_params"
    (detail,) = error.details
    assert detail["type"] == "value_error"
    assert "blank" in detail["msg"]
    json.dumps(error.details)  # ctx held a ValueError object


def test_validator_raising_other_exception_is_an_error_event():
    events = run([[frag(0, name="search", args='{"query": "boom"}')]])
    error = events[-1]
    assert isinstance(error, ParseErrorEvent)
    assert error.error_type == "invalid_params"
    assert "TypeError" in error.message


def test_emit_deltas_off_gives_only_final_events():
    events = run(
        [
            [frag(0, id="a", name="get_weather", args='{"city": "Kyiv"}')],
            [frag(1, id="b", name="nope", args="{}")],
        ],
        emit_deltas=False,
    )
    assert summary(events) == [
        ("call", 0, GetWeather(city="Kyiv")),
        ("error", "unknown_tool", "{}"),
    ]


def test_finish_resets_for_the_next_reply():
    accumulator = NativeCallAccumulator(REGISTRY)
    accumulator.feed([frag(0, id="a", name="no_args", args="{}")], 0)
    assert summary(accumulator.finish("tool_calls", 1)) == [("call", 0, NoArgs())]
    assert accumulator.finish("tool_calls", 1) == []
    events = accumulator.feed([frag(0, id="b", name="search", args='{"query": "z"}')], 2)
    assert summary(events)[0] == ("start", 0, "search", "b")
    assert summary(accumulator.finish("stop", 3)) == [("call", 0, Search(query="z"))]


def test_events_serialise():
    events = run([[frag(0, id="a", name="get_weather", args='{"city": "Paris"}')]])
    decoded = [json.loads(event_to_json(event)) for event in events]
    assert [item["kind"] for item in decoded] == [
        "tool_call_start",
        "tool_arguments_delta",
        "tool_call",
    ]
    assert decoded[-1]["tool_instance"] == {"city": "Paris", "days": 1}
    assert decoded[-1]["call_id"] == "a"


def test_bad_registry_is_a_config_error():
    with pytest.raises(ConfigError):
        NativeCallAccumulator({"x": dict})  # type: ignore[dict-item]


@pytest.mark.parametrize("max_size", [0, -1, 1.5, True, "10"])
def test_bad_max_size_is_a_config_error(max_size):
    with pytest.raises(ConfigError):
        NativeCallAccumulator(REGISTRY, max_size=max_size)


# --- max_size: a call may not grow past it ---------------------------------------------------

BIG = '{"city": "' + "x" * 30 + '"}'  # 42 characters
LIMIT = 20


def test_arguments_past_max_size_are_a_tool_too_large_error():
    events = run(
        [
            [frag(0, id="c0", name="get_weather"), frag(1, id="c1", name="search")],
            [frag(0, args=BIG[:15])],
            [frag(0, args=BIG[15:30]), frag(1, args='{"query": "ok"}')],
            [frag(0, args=BIG[30:])],  # dropped, never reported again
            [frag(0, id="c9", name="search", args="{}")],  # dropped too
        ],
        max_size=LIMIT,
    )
    expected = [
        ("start", 0, "get_weather", "c0"),
        ("start", 1, "search", "c1"),
        ("delta", 0, BIG[:15]),
        ("delta", 0, BIG[15:20]),  # cut at the bound
        ("error", "tool_too_large", BIG[:20]),
        ("delta", 1, '{"query": "ok"}'),
        ("call", 1, Search(query="ok")),  # the other call is not affected
    ]
    assert summary(events) == expected
    (error,) = [e for e in events if isinstance(e, ParseErrorEvent)]
    assert error.call_index == 0
    assert error.call_id == "c0"
    assert error.tool_name == "get_weather"
    assert "max_tool_size (20 characters)" in error.message
    assert error.span == (2, 2)  # reported as soon as the bound is passed


def _split_cases(text: str) -> list[list[str]]:
    """``text`` whole, one character at a time, and cut in two at every position."""
    cases = [[text], list(text)]
    cases += [[text[:cut], text[cut:]] for cut in range(len(text) + 1)]
    return cases


@pytest.mark.parametrize("size", [LIMIT - 1, LIMIT, LIMIT + 1, len(BIG)])
@pytest.mark.parametrize("emit_deltas", [True, False])
def test_max_size_at_every_split_of_the_fragments(size, emit_deltas):
    arguments = '{"city": "' + "y" * (size - 12) + '"}'
    assert len(arguments) == size
    outcomes = []
    for pieces in _split_cases(arguments):
        accumulator = NativeCallAccumulator(REGISTRY, emit_deltas=emit_deltas, max_size=LIMIT)
        events = accumulator.feed([frag(0, id="c", name="get_weather")], 0)
        for piece in pieces:
            events += accumulator.feed([frag(0, args=piece)], 0)
            assert accumulator._calls[0].size <= LIMIT  # memory stays bounded
        events += accumulator.finish("tool_calls", 0)
        outcomes.append(summary(merge_deltas(events)))
    assert all(outcome == outcomes[0] for outcome in outcomes)
    head = [("start", 0, "get_weather", "c")] if emit_deltas else []
    if size <= LIMIT:
        delta = [("delta", 0, arguments)] if emit_deltas else []
        assert outcomes[0] == head + delta + [("call", 0, GetWeather(city="y" * (size - 12)))]
    else:
        delta = [("delta", 0, arguments[:LIMIT])] if emit_deltas else []
        assert outcomes[0] == head + delta + [("error", "tool_too_large", arguments[:LIMIT])]


def test_a_call_too_large_is_not_open():
    accumulator = NativeCallAccumulator(REGISTRY, max_size=LIMIT)
    accumulator.feed([frag(0, id="a", name="search", args="{")], 0)
    assert accumulator.open_calls == 1
    accumulator.feed([frag(1, id="b", name="get_weather", args=BIG)], 0)
    assert accumulator.open_calls == 1


@pytest.mark.parametrize("finish_reason", ["tool_calls", "length", None])
def test_a_call_too_large_gets_no_other_final_event(finish_reason):
    events = run([[frag(0, id="c", name="get_weather", args=BIG)]], finish_reason, max_size=LIMIT)
    finals = [e for e in events if isinstance(e, (ToolCallEvent, ParseErrorEvent))]
    assert [(e.kind, getattr(e, "error_type", None)) for e in finals] == [
        ("error", "tool_too_large")
    ]


def test_arguments_before_the_name_past_max_size():
    events = run(
        [[frag(0, args=BIG[:25])], [frag(0, id="c", name="get_weather", args=BIG[25:])]],
        max_size=LIMIT,
    )
    # No name yet: nothing to announce; the error still carries the call's index.
    assert summary(events) == [("error", "tool_too_large", BIG[:20])]
    (error,) = events
    assert isinstance(error, ParseErrorEvent)
    assert error.call_index == 0 and error.tool_name is None


def test_a_name_past_max_size_is_too_large():
    events = run(
        [[frag(0, id="c", name="get_")], [frag(0, name="weather" * 3)], [frag(0, args="{}")]],
        max_size=LIMIT,
    )
    assert [(e.kind, getattr(e, "error_type", None)) for e in events] == [
        ("error", "tool_too_large")
    ]
    assert isinstance(events[0], ParseErrorEvent)
    assert "name" in events[0].message
    assert events[0].call_index == 0 and events[0].call_id == "c"

    # A fragment of another call does not announce the dropped call's partial name.
    events = run(
        [[frag(0, name="get_")], [frag(0, name="x" * LIMIT)], [frag(1, name="no_args")]],
        max_size=LIMIT,
    )
    assert summary(events) == [
        ("error", "tool_too_large", None),
        ("start", 1, "no_args", None),
        ("call", 1, NoArgs()),
    ]


def test_max_size_in_the_parser_is_max_tool_size():
    from stream_parser import ParserConfig, StreamToolParser
    from stream_parser.core.chunks import ChatDelta
    from stream_parser.errors import StrictModeError

    def deltas() -> list[ChatDelta]:
        return [
            ChatDelta(content="<no_args></no_args>"),  # an XML call within the bound
            ChatDelta(tool_calls=(frag(0, id="c", name="get_weather"),)),
            *[ChatDelta(tool_calls=(frag(0, args=ch),)) for ch in BIG],
            ChatDelta(finish_reason="tool_calls"),
        ]

    parser = StreamToolParser(REGISTRY, config=ParserConfig(max_tool_size=LIMIT))
    events = merge_deltas(list(parser.parse_stream(deltas())))
    native = [e for e in events if getattr(e, "call_id", None) == "c"]
    assert [e.kind for e in native] == ["tool_call_start", "tool_arguments_delta", "error"]
    start, delta, error = native
    assert isinstance(delta, ToolArgumentsDeltaEvent) and delta.delta == BIG[:LIMIT]
    assert isinstance(error, ParseErrorEvent) and error.error_type == "tool_too_large"
    # The XML call took index 0; the native call's events share the parser's index 1.
    assert start.call_index == error.call_index == 1  # type: ignore[attr-defined]
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [(c.call_index, c.tool_instance) for c in calls] == [(0, NoArgs())]
    assert not [e for e in events if isinstance(e, ToolCallEvent) and e.call_id == "c"]

    strict = StreamToolParser(REGISTRY, config=ParserConfig(max_tool_size=LIMIT, strict=True))
    with pytest.raises(StrictModeError):
        list(strict.parse_stream(deltas()))

    # Cut by the length limit: the reply is reported cut, the call only too large.
    cut = [*deltas()[:-1], ChatDelta(finish_reason="length")]
    parser = StreamToolParser(REGISTRY, config=ParserConfig(max_tool_size=LIMIT))
    errors = [e for e in parser.parse_stream(cut) if isinstance(e, ParseErrorEvent)]
    assert [e.error_type for e in errors] == ["tool_too_large", "truncated"]
    assert errors[1].call_index is None


ARGUMENTS = '{"city": "São Paulo \\"centro\\"", "days": 2}'


@pytest.mark.parametrize("cut", range(len(ARGUMENTS) + 1))
def test_any_split_of_the_arguments_gives_the_same_call(cut):
    pieces = [ARGUMENTS[:cut], ARGUMENTS[cut:]]
    events = run([[frag(0, id="c", name="get_weather")]] + [[frag(0, args=p)] for p in pieces])
    deltas = "".join(e.delta for e in events if isinstance(e, ToolArgumentsDeltaEvent))
    assert deltas == ARGUMENTS
    assert summary(events)[-1] == ("call", 0, GetWeather(city='São Paulo "centro"', days=2))


names = st.sampled_from(["get_weather", "search", "no_args", "get_", "weather", "unknown", ""])
argument_pieces = st.one_of(
    st.text(max_size=8),
    st.sampled_from(['{"city": "x"}', '{"query": "q"}', "{", "}", '"', ":", ",", "[", "null"]),
)
fragments = st.builds(
    ToolCallDelta,
    index=st.integers(min_value=0, max_value=3),
    id=st.one_of(st.none(), st.sampled_from(["a", "b", "c"])),
    name=st.one_of(st.none(), names),
    arguments=st.one_of(st.none(), argument_pieces),
)


@settings(max_examples=150, deadline=None)
@given(
    items=st.lists(st.lists(fragments, max_size=3), max_size=12),
    finish_reason=st.sampled_from([None, "stop", "tool_calls", "length", "content_filter"]),
    emit_deltas=st.booleans(),
    max_size=st.sampled_from([1, 6, 12, 1_048_576]),
)
def test_never_raises_and_ends_every_call_once(items, finish_reason, emit_deltas, max_size):
    events = run(items, finish_reason, emit_deltas=emit_deltas, max_size=max_size)
    indices = {
        fragment.index
        for fragments_ in items
        for fragment in fragments_
        if fragment.id is not None or fragment.name or fragment.arguments
    }
    finals = [e for e in events if isinstance(e, (ToolCallEvent, ParseErrorEvent))]
    assert len(finals) == len(indices)
    if finish_reason in (None, "length", "content_filter"):
        assert all(
            isinstance(e, ParseErrorEvent) and e.error_type in ("unclosed_tool", "tool_too_large")
            for e in finals
        )
    starts = [e for e in events if isinstance(e, ToolCallStartEvent)]
    assert len({e.call_index for e in starts}) == len(starts)  # at most one start per call
    if not emit_deltas:
        assert starts == []
    for event in events:
        json.loads(event_to_json(event))
