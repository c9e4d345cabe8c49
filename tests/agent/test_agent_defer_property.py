"""A property of pause and resume: deciding later gives what deciding at once gives.

Over scripted replies of one to three steps, each with calls that need approval and
calls that do not, every call that needs approval is approved, denied, edited or
answered by hand, and each decision is given either by the approver while the run
waits or, the call deferred, at a resume (from the paused run's JSON, in a fresh
agent).  The run that pauses and resumes, as many times as it defers, ends with the
same messages, output and reason as the run whose approver answered everything at once
(a result given by hand there is the tool's own result), whatever call and step limits
the pauses meet.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_parser.agent import (
    Defer,
    Deny,
    FunctionCallAgent,
    PausedRun,
    ReActAgent,
)
from stream_parser.testing import NativeCall, ScriptedModel, ScriptedReply, validate_history
from stream_parser.tools import ToolResult, tool

# The result a call decided "by hand" gets, by the call's number: given at the resume, or
# made by the tool itself in the run decided at once.
BY_HAND: dict[int, ToolResult] = {}


def _image(name: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{name}"}}


@tool(requires_approval=True)
def act(n: int) -> ToolResult:
    """Do something that needs approval.

    Args:
        n: Which call.
    """
    if n in BY_HAND:
        return BY_HAND[n]
    return ToolResult(tool_name="act", text=f"acted {n}")


@tool(read_only=True)
def look(n: int) -> ToolResult:
    """Look something up (no approval; it may start eagerly).

    Args:
        n: Which call.
    """
    images = (_image(f"LOOK{n}"),) if n % 3 == 0 else ()
    return ToolResult(tool_name="look", text=f"looked {n}", images=images)


DECISIONS = ["approve", "deny", "edit", "hand"]


@dataclass(frozen=True)
class Call:
    """One scripted call and what is decided about it."""

    tool: str  # "act" (asked about) or "look" (never asked about)
    n: int
    decision: str  # one of DECISIONS; "hand" only with defer
    defer: bool
    images: bool  # whether a result given by hand has an image


@st.composite
def _call(draw: st.DrawFn) -> tuple[str, str, bool, bool]:
    tool_name = draw(st.sampled_from(["act", "act", "look"]))
    defer = draw(st.booleans())
    decision = draw(st.sampled_from(DECISIONS if defer else DECISIONS[:3]))
    return tool_name, decision, defer, draw(st.booleans())


SCRIPTS = st.lists(st.lists(_call(), min_size=1, max_size=3), min_size=1, max_size=3)
RUNNING = st.sampled_from(
    [{}, {"concurrent_tools": True}, {"eager_tools": True}, {"history_length": 4}]
)
# Limits that a pause may meet: the calls or the steps run out at or around it.
LIMITS = st.fixed_dictionaries(
    {},
    optional={
        "max_tool_calls": st.integers(1, 6),
        "max_iterations": st.integers(1, 3),
        "final_answer_at_limit": st.booleans(),
    },
)


def _numbered(script: list[list[tuple[str, str, bool, bool]]]) -> list[list[Call]]:
    numbers = itertools.count(1)
    return [[Call(t, next(numbers), d, f, i) for t, d, f, i in step] for step in script]


def _replies(kind: str, steps: list[list[Call]]) -> list[Any]:
    replies: list[Any] = []
    for step in steps:
        if kind == "native":
            replies.append(
                ScriptedReply(
                    content=f"Step with {len(step)} call(s).",
                    tool_calls=[NativeCall(call.tool, {"n": call.n}) for call in step],
                )
            )
        else:
            written = " ".join(f"<{call.tool}><n>{call.n}</n></{call.tool}>" for call in step)
            replies.append(ScriptedReply(content=f"Step. {written} After."))
    replies.append(ScriptedReply(content="Finished."))
    replies.append(ScriptedReply(content="A last answer."))  # one past: at a limit
    return replies


def _decision_at_once(call: Call) -> object:
    if call.decision == "deny":
        return Deny(f"not {call.n}")
    if call.decision == "edit":
        return act.args_model(n=call.n + 1000)
    return True  # approved, or by hand: the tool makes the hand result itself


def _decision_at_resume(call: Call) -> object:
    if call.decision == "hand":
        return BY_HAND[call.n]
    if call.decision == "edit":
        return {"n": call.n + 1000}
    return _decision_at_once(call)


def _agent(kind: str, model: ScriptedModel, approve: Any, running: dict[str, Any]) -> Any:
    agent_class = FunctionCallAgent if kind == "native" else ReActAgent
    return agent_class(model, [act, look], approve=approve, **running)


def _check_both_ways(kind: str, steps: list[list[Call]], running: dict[str, Any]) -> None:
    calls = {call.n: call for step in steps for call in step}
    BY_HAND.clear()
    for call in calls.values():
        if call.decision == "hand":
            images = (_image(f"HAND{call.n}"),) if call.images else ()
            BY_HAND[call.n] = ToolResult(tool_name="act", text=f"by hand {call.n}", images=images)

    def at_once(event: Any) -> object:
        return _decision_at_once(calls[event.tool_instance.n])

    def or_later(event: Any) -> object:
        call = calls[event.tool_instance.n]
        return Defer() if call.defer else _decision_at_once(call)

    whole = _agent(kind, ScriptedModel(_replies(kind, steps)), at_once, running).run_sync("Go")

    # Deciding later: the model goes on from where the paused run left it.
    model = ScriptedModel(_replies(kind, steps))
    run = _agent(kind, model, or_later, running).run_sync("Go")
    pauses = 0
    while run.reason == "paused":
        pauses += 1
        assert validate_history(run.messages, pending_calls_ok=True) == []
        document = run.pause_state().to_json()
        paused = PausedRun.from_json(document)
        assert paused.to_json() == document
        assert paused.messages == run.messages
        decisions = {
            pending.call_id: _decision_at_resume(calls[pending.arguments["n"]])
            for pending in paused.pending
        }
        later = _agent(kind, model, or_later, running)
        run = asyncio.run(later.resume(document, decisions)._drive())
    assert validate_history(run.messages) == []
    assert (run.messages, run.output, run.reason) == (whole.messages, whole.output, whole.reason)
    assert run.limit == whole.limit and run.tool_calls == whole.tool_calls
    assert run.steps == whole.steps and run.usage.requests == whole.usage.requests
    if not running.keys() & {"max_tool_calls", "max_iterations"}:
        assert pauses == sum(any(c.defer and c.tool == "act" for c in step) for step in steps)


def _property(examples: int) -> Any:
    """The property, over ``examples`` drawn cases of either agent."""

    @settings(max_examples=examples, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(
        kind=st.sampled_from(["native", "text"]),
        script=SCRIPTS,
        running=RUNNING,
        limits=LIMITS,
    )
    def check(
        kind: str,
        script: list[list[tuple[str, str, bool, bool]]],
        running: dict[str, Any],
        limits: dict[str, Any],
    ) -> None:
        _check_both_ways(kind, _numbered(script), {**running, **limits})

    return check


test_resuming_gives_what_deciding_at_once_gives = _property(30)
test_resuming_gives_what_deciding_at_once_gives_many = pytest.mark.slow(_property(600))
