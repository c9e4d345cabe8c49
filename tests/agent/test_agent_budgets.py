"""Budgets (usage_limits), a last answer at a limit, and timings per step, on scripted models."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_parser.agent import (
    AgentConfig,
    Deny,
    FunctionCallAgent,
    LimitHit,
    ReActAgent,
    RequestDoneEvent,
    ToolResultEvent,
    Usage,
    UsageLimits,
)
from stream_parser.agent.options import agent_config
from stream_parser.encoders import event_from_json, event_to_json
from stream_parser.errors import ConfigError
from stream_parser.prompts.templating import render
from stream_parser.testing import NativeCall, ScriptedModel, ScriptedReply
from stream_parser.testing import assert_valid_history as assert_valid
from stream_parser.tools import tool

RAN: list[int] = []


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    RAN.append(a + b)
    return a + b


@tool
def nap() -> str:
    """Sleep a little."""
    time.sleep(0.02)
    return "rested"


@pytest.fixture(autouse=True)
def _forget_runs() -> None:
    RAN.clear()


def native(*pairs: tuple[int, int], usage: dict[str, int] | None = None) -> ScriptedReply:
    """A reply of native ``add`` calls."""
    calls = [NativeCall("add", {"a": a, "b": b}) for a, b in pairs]
    return ScriptedReply(tool_calls=calls, usage=usage)


def written(*pairs: tuple[int, int], usage: dict[str, int] | None = None) -> ScriptedReply:
    """A reply of ``add`` calls written in the text (the xml dialect)."""
    text = "".join(f"<add><a>{a}</a><b>{b}</b></add>" for a, b in pairs)
    return ScriptedReply(content=f"Adding. {text}", usage=usage)


def answer(text: str = "The sum is 3.", usage: dict[str, int] | None = None) -> ScriptedReply:
    return ScriptedReply(content=text, usage=usage)


def tokens(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def agent_of(kind: str, replies: list[Any], chunk_size: int = 4, **options: Any) -> Any:
    model = ScriptedModel(replies, chunk_size=chunk_size)
    if kind == "native":
        return FunctionCallAgent(model, [add, nap], **options)
    return ReActAgent(model, [add, nap], **options)


def calls_of(kind: str) -> Any:
    return native if kind == "native" else written


KINDS = ["native", "text"]
CHUNKS = [1, 4, 10_000]


# --- the record -----------------------------------------------------------------------------


def test_usage_limits_defaults_to_no_limit() -> None:
    limits = UsageLimits()
    assert (limits.requests, limits.tool_calls) == (None, None)
    assert limits.token_limits == {}


@pytest.mark.parametrize("field", ["requests", "input_tokens", "output_tokens", "total_tokens"])
@pytest.mark.parametrize("value", [0, -1, 1.5, True, "3"])
def test_a_limit_must_be_an_integer_of_at_least_one(field: str, value: object) -> None:
    with pytest.raises(ConfigError, match=rf"UsageLimits\.{field}"):
        UsageLimits(**{field: value})  # type: ignore[arg-type]


def test_tool_calls_may_be_zero_but_not_negative() -> None:
    assert UsageLimits(tool_calls=0).tool_calls == 0
    with pytest.raises(ConfigError, match="tool_calls must be an integer >= 0"):
        UsageLimits(tool_calls=-1)


def test_usage_limits_is_frozen() -> None:
    limits = UsageLimits(requests=2)
    with pytest.raises(AttributeError):
        limits.requests = 3  # type: ignore[misc]


def test_a_limit_given_twice_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"max_iterations and usage_limits\.requests"):
        agent_config(
            "FunctionCallAgent", {"max_iterations": 3, "usage_limits": UsageLimits(requests=2)}
        )
    with pytest.raises(ConfigError, match=r"max_tool_calls and usage_limits\.tool_calls"):
        FunctionCallAgent(
            ScriptedModel([]), [add], max_tool_calls=3, usage_limits=UsageLimits(tool_calls=2)
        )
    with pytest.raises(ConfigError, match="usage_limits must be a UsageLimits"):
        FunctionCallAgent(ScriptedModel([]), [add], usage_limits={"requests": 2})  # type: ignore[typeddict-item]
    # Each beside a budget that leaves its limit unset is fine.
    config = agent_config(
        "FunctionCallAgent",
        {"max_iterations": 3, "max_tool_calls": 1, "usage_limits": UsageLimits(output_tokens=9)},
    )
    assert config.step_limit == ("max_iterations", 3)
    assert config.call_limit == ("max_tool_calls", 1)


def test_options_round_trip_with_a_budget() -> None:
    config = AgentConfig(usage_limits=UsageLimits(requests=2, tool_calls=1))
    again = agent_config("FunctionCallAgent", config.options())
    assert again == config
    assert again.step_limit == ("requests", 2)
    assert again.call_limit == ("tool_calls", 1)


# --- requests and tool calls ----------------------------------------------------------------


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("kind", KINDS)
def test_the_requests_limit_ends_the_run(kind: str, chunk_size: int) -> None:
    calls = calls_of(kind)
    replies = [calls((1, 1)), calls((2, 2)), calls((3, 3)), answer()]
    agent = agent_of(kind, replies, chunk_size, usage_limits=UsageLimits(requests=2))
    run = agent.run_sync("Add.")
    assert run.reason == "usage_limit"
    assert run.limit == LimitHit("requests", 2, 2)
    assert run.usage.requests == 2 == run.steps
    assert RAN == [2, 4]  # the last reply's calls ran, as at max_iterations
    assert run.events[-1].limit == run.limit
    assert_valid(run.messages)


def test_requests_takes_the_place_of_max_iterations() -> None:
    replies = [native((i, 0)) for i in range(11)] + [answer()]
    agent = agent_of("native", replies, usage_limits=UsageLimits(requests=12))
    run = agent.run_sync("Add.")
    assert run.reason == "done"  # past the default of 10 steps
    assert run.steps == 12
    assert run.limit is None


@pytest.mark.parametrize("kind", KINDS)
def test_max_iterations_keeps_its_reason_and_names_its_limit(kind: str) -> None:
    calls = calls_of(kind)
    agent = agent_of(kind, [calls((1, 1)), calls((2, 2))], max_iterations=1)
    run = agent.run_sync("Add.")
    assert run.reason == "max_iterations"
    assert run.limit == LimitHit("max_iterations", 1, 1)
    assert_valid(run.messages)


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("kind", KINDS)
def test_the_tool_calls_limit_refuses_calls_past_it(kind: str, chunk_size: int) -> None:
    calls = calls_of(kind)
    agent = agent_of(
        kind, [calls((1, 1), (2, 2)), answer()], chunk_size, usage_limits=UsageLimits(tool_calls=1)
    )
    run = agent.run_sync("Add.")
    assert run.reason == "usage_limit"
    assert run.limit == LimitHit("tool_calls", 1, 1)
    assert RAN == [2]
    results = [event.result for event in run.events if isinstance(event, ToolResultEvent)]
    assert [result.error_type for result in results] == [None, "tool_call_limit"]
    assert "limit of 1 tool call" in results[1].text
    assert_valid(run.messages)


def test_max_tool_calls_keeps_its_reason() -> None:
    agent = agent_of("native", [native((1, 1), (2, 2)), answer()], max_tool_calls=1)
    run = agent.run_sync("Add.")
    assert run.reason == "max_tool_calls"
    assert run.limit == LimitHit("max_tool_calls", 1, 1)


def test_tool_calls_zero_runs_no_call() -> None:
    agent = agent_of("native", [native((1, 1)), answer()], usage_limits=UsageLimits(tool_calls=0))
    run = agent.run_sync("Add.")
    assert (run.reason, run.limit, RAN) == ("usage_limit", LimitHit("tool_calls", 0, 0), [])
    assert_valid(run.messages)


# --- tokens ---------------------------------------------------------------------------------


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("kind", KINDS)
def test_a_reply_that_crosses_a_token_limit_is_recorded_and_its_calls_not_run(
    kind: str, chunk_size: int
) -> None:
    calls = calls_of(kind)
    replies = [calls((1, 1), usage=tokens(10, 20)), calls((2, 2), usage=tokens(40, 20)), answer()]
    agent = agent_of(kind, replies, chunk_size, usage_limits=UsageLimits(output_tokens=30))
    run = agent.run_sync("Add.")
    assert run.reason == "usage_limit"
    assert run.limit == LimitHit("output_tokens", 30, 40)
    assert RAN == [2]  # the second reply's call did not run
    assert run.usage == Usage(input_tokens=50, output_tokens=40, requests=2, total_tokens=90)
    last = run.messages[-1]
    answered = last["content"]
    assert "usage_limit" in answered or "budget" in answered
    assert "output_tokens=30" in answered
    assert run.messages[-2]["role"] in ("assistant", "tool")  # the reply is recorded
    assert_valid(run.messages)


@pytest.mark.parametrize("field", ["input_tokens", "total_tokens"])
def test_a_token_limit_reached_stops_before_the_next_request(field: str) -> None:
    replies = [native((1, 1), usage=tokens(50, 50)), answer()]
    model = ScriptedModel(replies)
    run = FunctionCallAgent(
        model, [add], usage_limits=UsageLimits(**{field: 50 if field == "input_tokens" else 100})
    ).run_sync("Add.")
    assert run.reason == "usage_limit"
    assert run.limit is not None and run.limit.name == field
    assert RAN == [2]  # reached, not crossed: the reply's calls ran
    assert len(model.requests) == 1  # no request past a reached token limit
    assert_valid(run.messages)


def test_a_reply_without_calls_that_crosses_ends_on_the_limit_with_its_text() -> None:
    agent = agent_of(
        "native", [answer("Done.", tokens(5, 99))], usage_limits=UsageLimits(output_tokens=10)
    )
    run = agent.run_sync("Hi.")
    assert (run.reason, run.output) == ("usage_limit", "Done.")
    assert_valid(run.messages)


# --- a server that reports no usage ---------------------------------------------------------


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("kind", KINDS)
def test_unreported_usage_gives_one_notice_and_the_other_limits_hold(
    kind: str, chunk_size: int
) -> None:
    calls = calls_of(kind)
    limits = UsageLimits(requests=2, output_tokens=5, total_tokens=7)
    agent = agent_of(
        kind, [calls((1, 1)), calls((2, 2)), answer()], chunk_size, usage_limits=limits
    )
    run = agent.run_sync("Add.")
    notices = [event for event in run.events if event.kind == "notice"]
    assert len(notices) == 1
    notice = notices[0]
    assert notice.code == "usage_unreported"
    assert "output_tokens=5" in notice.message and "total_tokens=7" in notice.message
    # At the end of the first reply: after its last parse event, at its last offset.
    kinds = [event.kind for event in run.events]
    at = run.events.index(notice)
    before = [e for e in run.events[1:at] if e.span is not None]
    assert notice.span == (before[-1].span[1],) * 2
    assert kinds[at + 1] == "tool_result"
    assert (run.reason, run.limit) == ("usage_limit", LimitHit("requests", 2, 2))


def test_no_notice_without_a_token_limit_or_with_a_report() -> None:
    run = agent_of(
        "native", [native((1, 1)), answer()], usage_limits=UsageLimits(requests=3)
    ).run_sync("Add.")
    assert "notice" not in [event.kind for event in run.events]
    replies = [native((1, 1), usage=tokens(1, 1)), answer(usage=tokens(1, 1))]
    run = agent_of("native", replies, usage_limits=UsageLimits(output_tokens=50)).run_sync("Add.")
    assert "notice" not in [event.kind for event in run.events]


# --- a last answer at a limit ---------------------------------------------------------------


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize(
    ("options", "limit"),
    [
        ({"max_iterations": 1}, LimitHit("max_iterations", 1, 1)),
        ({"usage_limits": UsageLimits(requests=1)}, LimitHit("requests", 1, 1)),
        ({"max_tool_calls": 1}, LimitHit("max_tool_calls", 1, 1)),
        ({"usage_limits": UsageLimits(tool_calls=1)}, LimitHit("tool_calls", 1, 1)),
    ],
)
def test_a_native_last_answer_is_asked_with_tool_choice_none(
    options: dict[str, Any], limit: LimitHit, chunk_size: int
) -> None:
    model = ScriptedModel([native((1, 1), (2, 2)), answer("It is 2.")], chunk_size=chunk_size)
    agent = FunctionCallAgent(model, [add], final_answer_at_limit=True, **options)
    run = agent.run_sync("Add.")
    assert (run.reason, run.limit, run.output) == ("done", limit, "It is 2.")
    assert run.events[-1].limit == limit
    last = model.requests[-1]
    assert last.options["tool_choice"] == "none"
    assert last.tools and last.tools[0]["function"]["name"] == "add"  # still listed
    assert run.usage.requests == 2  # the one request past the limit
    assert_valid(run.messages)


@pytest.mark.parametrize("language", ["en", "zh"])
def test_a_react_last_answer_follows_the_observations_with_a_note(language: str) -> None:
    model = ScriptedModel([written((1, 1)), answer("It is 2.")])
    agent = ReActAgent(
        model, [add], max_iterations=1, final_answer_at_limit=True, language=language
    )
    run = agent.run_sync("Add.")
    assert (run.reason, run.output) == ("done", "It is 2.")
    sent = model.requests[-1].messages[-1]
    note = render("final_answer", language)
    assert sent["role"] == "user" and sent["content"].endswith(f"\n\n{note}")
    assert "<add>" not in note  # the observations come first
    assert run.messages[-2]["content"] != sent["content"]  # the note is not in the history
    assert_valid(run.messages)


@pytest.mark.parametrize("kind", KINDS)
def test_a_last_answer_that_calls_again_ends_on_the_limit(kind: str) -> None:
    calls = calls_of(kind)
    agent = agent_of(
        kind, [calls((1, 1)), calls((2, 2))], max_iterations=1, final_answer_at_limit=True
    )
    run = agent.run_sync("Add.")
    assert (run.reason, run.limit) == ("max_iterations", LimitHit("max_iterations", 1, 1))
    assert RAN == [2]
    last_result = [e for e in run.events if isinstance(e, ToolResultEvent)][-1].result
    assert last_result.error_type == "tool_call_limit"
    assert "no longer available" in last_result.text
    assert_valid(run.messages)


def test_no_last_answer_at_a_token_limit() -> None:
    model = ScriptedModel([native((1, 1), usage=tokens(5, 50)), answer()])
    agent = FunctionCallAgent(
        model, [add], final_answer_at_limit=True, usage_limits=UsageLimits(output_tokens=10)
    )
    run = agent.run_sync("Add.")
    assert (run.reason, run.limit) == ("usage_limit", LimitHit("output_tokens", 10, 50))
    assert len(model.requests) == 1
    assert_valid(run.messages)


# --- timings --------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", KINDS)
def test_timings_are_opt_in(kind: str) -> None:
    calls = calls_of(kind)
    run = agent_of(kind, [calls((1, 1)), answer()]).run_sync("Add.")
    assert "request_done" not in [event.kind for event in run.events]
    assert [e.duration_s for e in run.events if isinstance(e, ToolResultEvent)] == [None]
    # The records are kept either way.
    assert [record.step for record in run.requests] == [1, 2]
    assert run.tool_seconds > 0


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("kind", KINDS)
def test_a_request_done_event_follows_each_reply(kind: str, chunk_size: int) -> None:
    if kind == "text":
        first = ScriptedReply(content="Resting. <nap></nap>", usage=tokens(3, 4))
    else:
        first = ScriptedReply(tool_calls=[NativeCall("nap", {})], usage=tokens(3, 4))
    run = agent_of(kind, [first, answer()], chunk_size, timings=True).run_sync("Rest.")
    kinds = [event.kind for event in run.events]
    done = [event for event in run.events if isinstance(event, RequestDoneEvent)]
    assert [event.step for event in done] == [1, 2]
    at = kinds.index("request_done")
    # After the reply's last parse event (its usage and its call), before its results.
    assert set(kinds[at - 2 : at]) == {"usage", "tool_call"} and kinds[at + 1] == "tool_result"
    assert kinds[-2:] == ["request_done", "agent_done"]
    one, two = done
    assert one.usage == Usage(input_tokens=3, output_tokens=4, requests=1, total_tokens=7)
    assert (one.usage_reported, two.usage_reported) == (True, False)
    assert two.usage == Usage(requests=1)
    assert one.first_token_s is not None and 0 <= one.first_token_s <= one.duration_s
    assert one.started_at <= two.started_at
    result = next(event for event in run.events if isinstance(event, ToolResultEvent))
    assert result.duration_s is not None and result.duration_s >= 0.02  # the tool slept
    assert run.tool_seconds == pytest.approx(result.duration_s)
    records = [(r.step, r.usage, r.usage_reported, r.duration_s) for r in run.requests]
    assert records == [(e.step, e.usage, e.usage_reported, e.duration_s) for e in done]
    assert run.usage == Usage(input_tokens=3, output_tokens=4, requests=2, total_tokens=7)


def test_timing_events_read_back_from_json() -> None:
    run = agent_of(
        "native", [native((1, 1)), native((2, 2))], timings=True, max_iterations=2
    ).run_sync("Add.")
    for event in run.events:
        if event.kind in ("request_done", "tool_result", "agent_done"):
            assert event_from_json(event_to_json(event)) == event
    assert run.events[-1].limit == LimitHit("max_iterations", 2, 2)


# --- the history stays valid however a run ends ---------------------------------------------


ENDINGS: dict[str, dict[str, Any]] = {
    "done": {},
    "max_iterations": {"max_iterations": 1},
    "max_tool_calls": {"max_tool_calls": 1},
    "requests": {"usage_limits": UsageLimits(requests=1)},
    "tool_calls": {"usage_limits": UsageLimits(tool_calls=1)},
    "input_tokens": {"usage_limits": UsageLimits(input_tokens=5)},
    "output_tokens": {"usage_limits": UsageLimits(output_tokens=5)},
    "total_tokens": {"usage_limits": UsageLimits(total_tokens=5)},
    "last_answer": {"max_iterations": 1, "final_answer_at_limit": True},
    "deny": {"approve": lambda call: Deny("no")},
}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_the_history_is_valid_however_the_run_ends(kind: str, ending: str) -> None:
    calls = calls_of(kind)
    replies = [calls((1, 1), (2, 2), usage=tokens(4, 6)), answer(usage=tokens(9, 1))]
    run = agent_of(kind, replies, timings=True, **ENDINGS[ending]).run_sync("Add.")
    assert_valid(run.messages)
    expected = {
        "done": ("done", None),
        "deny": ("done", None),
        "last_answer": ("done", "max_iterations"),
        "max_iterations": ("max_iterations", "max_iterations"),
        "max_tool_calls": ("max_tool_calls", "max_tool_calls"),
    }.get(ending, ("usage_limit", ending))
    assert (run.reason, run.limit and run.limit.name) == expected


@pytest.mark.parametrize("kind", KINDS)
def test_the_history_is_valid_after_a_cancel_with_a_budget(kind: str) -> None:
    @tool
    async def slow() -> str:
        """Wait."""
        await asyncio.sleep(10)
        return "late"

    if kind == "text":
        reply = ScriptedReply(content="<slow></slow>")
    else:
        reply = ScriptedReply(tool_calls=[NativeCall("slow", {})])
    model = ScriptedModel([reply, answer()])
    cls = FunctionCallAgent if kind == "native" else ReActAgent
    agent = cls(model, [slow], usage_limits=UsageLimits(requests=3, output_tokens=99), timings=True)
    run = agent.run("Wait.")

    async def cancel_it() -> None:
        async for event in run:
            if event.kind == "request_done":
                run.cancel()

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(cancel_it())
    assert run.reason == "cancelled"
    assert len(run.requests) == 1
    assert_valid(run.messages)


# --- a property: whatever the budget and the replies ----------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(KINDS),
    steps=st.lists(
        st.tuples(st.integers(0, 3), st.none() | st.tuples(st.integers(0, 30), st.integers(0, 30))),
        min_size=1,
        max_size=6,
    ),
    requests=st.none() | st.integers(1, 5),
    tool_calls=st.none() | st.integers(0, 6),
    output_tokens=st.none() | st.integers(1, 80),
    last_answer=st.booleans(),
)
def test_a_budget_always_leaves_a_valid_history_within_its_limits(
    kind: str,
    steps: list[tuple[int, tuple[int, int] | None]],
    requests: int | None,
    tool_calls: int | None,
    output_tokens: int | None,
    last_answer: bool,
) -> None:
    calls = calls_of(kind)
    replies: list[Any] = [
        calls(*[(i, i) for i in range(count)], usage=None if use is None else tokens(*use))
        if count
        else answer(usage=None if use is None else tokens(*use))
        for count, use in steps
    ]
    replies.append(answer())  # one past the script: a last answer may take it
    limits = UsageLimits(requests=requests, tool_calls=tool_calls, output_tokens=output_tokens)
    RAN.clear()
    run = agent_of(kind, replies, usage_limits=limits, final_answer_at_limit=last_answer).run_sync(
        "Add."
    )
    assert_valid(run.messages)
    assert run.usage.requests == len(run.requests) == run.steps
    cap = (requests or 10) + (1 if last_answer else 0)
    assert run.usage.requests <= cap
    if tool_calls is not None:
        assert len(RAN) <= tool_calls
    if run.reason == "usage_limit":
        assert run.limit is not None and run.limit.name in (
            "requests",
            "tool_calls",
            "output_tokens",
        )
        if run.limit.name == "output_tokens":
            assert run.usage.output_tokens >= run.limit.limit
    elif run.reason == "done" and run.limit is not None:
        assert last_answer


@pytest.mark.parametrize("agent_class", [ReActAgent, FunctionCallAgent])
@pytest.mark.parametrize(
    ("options", "shown"),
    [
        ({}, "max_iterations=10)"),
        ({"max_iterations": 3, "max_tool_calls": 2}, "max_iterations=3, max_tool_calls=2)"),
        (
            {"usage_limits": UsageLimits(requests=4, output_tokens=50)},
            "usage_limits=UsageLimits(requests=4, output_tokens=50))",
        ),
        (
            {"max_iterations": 3, "usage_limits": UsageLimits(tool_calls=1)},
            "max_iterations=3, usage_limits=UsageLimits(tool_calls=1))",
        ),
    ],
)
def test_an_agents_repr_shows_the_limits_that_govern_its_runs(
    agent_class: type[ReActAgent] | type[FunctionCallAgent], options: Any, shown: str
) -> None:
    text = repr(agent_class(ScriptedModel([]), [], **options))
    assert text.startswith(f"{agent_class.__name__}(tools=[], ")
    assert text.endswith(", " + shown)
    if "requests" in shown:
        assert "max_iterations" not in text
