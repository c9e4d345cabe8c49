"""Approval that can wait: a run paused on deferred calls, its JSON form, and resuming it."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from stream_parser.agent import (
    Defer,
    Deny,
    FunctionCallAgent,
    PausedRun,
    ReActAgent,
    ToolResultEvent,
    UsageLimits,
)
from stream_parser.errors import ConfigError
from stream_parser.testing import NativeCall, ScriptedModel, ScriptedReply, validate_history
from stream_parser.tools import ToolResult, tool

RAN: list[str] = []


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    RAN.append(f"add {a} {b}")
    return a + b


@tool(requires_approval=True)
def send(to: str) -> str:
    """Send a mail.

    Args:
        to: The address.
    """
    RAN.append(f"send {to}")
    return f"sent to {to}"


@pytest.fixture(autouse=True)
def _forget_runs() -> None:
    RAN.clear()


KINDS = ["native", "text"]
CHUNKS = [1, 4, 10_000]


def calls(kind: str, *items: tuple[str, dict[str, Any]]) -> ScriptedReply:
    """A reply of calls, native or written in the text (the xml dialect)."""
    if kind == "native":
        return ScriptedReply(tool_calls=[NativeCall(name, args) for name, args in items])
    text = "".join(
        f"<{name}>" + "".join(f"<{k}>{v}</{k}>" for k, v in args.items()) + f"</{name}>"
        for name, args in items
    )
    return ScriptedReply(content=f"On it. {text}")


def script(kind: str) -> list[ScriptedReply]:
    return [
        calls(kind, ("add", {"a": 1, "b": 2}), ("send", {"to": "ann"})),
        ScriptedReply(content="All done."),
    ]


def agent_of(kind: str, replies: list[Any], chunk_size: int = 4, **options: Any) -> Any:
    model = ScriptedModel(replies, chunk_size=chunk_size)
    agent_class = FunctionCallAgent if kind == "native" else ReActAgent
    return agent_class(model, [add, send], **options)


# --- the pause ------------------------------------------------------------------------------


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("kind", KINDS)
def test_defer_pauses_after_the_calls_that_need_no_decision(kind: str, chunk_size: int) -> None:
    run = agent_of(kind, script(kind), chunk_size, approve="defer").run_sync("Go")
    assert run.reason == "paused"
    assert RAN == ["add 1 2"]
    assert [(c.name, c.arguments) for c in run.pending_calls] == [("send", {"to": "ann"})]
    assert run.pending_calls[0].native is (kind == "native")
    assert run.messages[-1]["role"] == "assistant"
    assert validate_history(run.messages, pending_calls_ok=True) == []
    if kind == "native":
        assert run.pending_calls[0].call_id == run.messages[-1]["tool_calls"][1]["id"]
        assert validate_history(run.messages) != []
    assert run.events[-1].reason == "paused"
    assert not [e for e in run.events if isinstance(e, ToolResultEvent) and e.tool_name == "send"]
    paused = run.pause_state()
    assert [r["text"] for r in paused.results] == ["3"]
    # The deferred call is counted with the one that ran: it keeps its place under a limit.
    assert paused.step == 1 and paused.tool_calls == 2 and paused.usage.requests == 1


@pytest.mark.parametrize("kind", KINDS)
def test_an_approver_that_returns_defer_pauses(kind: str) -> None:
    seen: list[str] = []

    def approve(call: Any) -> Any:
        seen.append(call.tool_name)
        return Defer()

    run = agent_of(kind, script(kind), approve=approve).run_sync("Go")
    assert run.reason == "paused" and seen == ["send"] and RAN == ["add 1 2"]


def test_pause_state_of_a_run_that_did_not_pause_is_a_config_error() -> None:
    run = agent_of("native", [ScriptedReply(content="Hi")], approve="defer").run_sync("Go")
    assert run.reason == "done" and run.pending_calls == []
    with pytest.raises(ConfigError, match="only a paused run"):
        run.pause_state()


def test_approve_must_be_a_callable_or_defer() -> None:
    with pytest.raises(ConfigError, match='callable or "defer"'):
        agent_of("native", [], approve="later")


def test_validate_history_flags_pending_calls_unless_allowed() -> None:
    messages = [
        {"role": "user", "content": "Go"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
    ]
    assert validate_history(messages, pending_calls_ok=True) == []
    assert validate_history(messages) == [
        "messages[1] (assistant): tool call 'c1' is never answered"
    ]
    # Only at the end: a later message still needs the answers before it.
    later = [*messages, {"role": "user", "content": "and?"}]
    assert validate_history(later, pending_calls_ok=True) != []


# --- resuming -------------------------------------------------------------------------------


class SendArgs(BaseModel):
    to: str


# decision at resume -> the same decision given in-process by an approver (None: no twin)
DECISIONS: dict[str, tuple[Any, Any]] = {
    "approved": (True, True),
    "denied": (Deny("not today"), Deny("not today")),
    "edited dict": ({"to": "bob"}, None),
    "by hand str": ("sent by hand", None),
    "by hand result": (ToolResult(tool_name="send", text="queued"), None),
}


@pytest.mark.parametrize("through_json", [False, True])
@pytest.mark.parametrize("decision_name", list(DECISIONS))
@pytest.mark.parametrize("kind", KINDS)
def test_resume_matches_the_run_decided_in_process(
    kind: str, decision_name: str, through_json: bool
) -> None:
    decision, twin = DECISIONS[decision_name]
    first = agent_of(kind, script(kind), approve="defer").run_sync("Go")
    paused: Any = first.pause_state()
    if through_json:
        paused = PausedRun.from_json(paused.to_json())
    call_id = first.pending_calls[0].call_id
    later = agent_of(kind, script(kind)[1:], approve="defer")
    run = later.resume(paused, {call_id: decision})
    _drive(run)
    assert run.reason == "done" and run.output == "All done."
    assert validate_history(run.messages) == []
    assert run.steps == 2 and run.usage.requests == 2
    sent = [e for e in run.events if isinstance(e, ToolResultEvent)]
    assert [e.tool_name for e in sent] == ["send"]
    if decision_name == "edited dict":
        assert RAN == ["add 1 2", "send bob"]
    elif decision_name == "approved":
        assert RAN == ["add 1 2", "send ann"]
    else:
        assert RAN == ["add 1 2"]
    if decision_name.startswith("by hand"):
        assert sent[0].result.text in ("sent by hand", "queued")
    if twin is not None:
        RAN.clear()
        whole = agent_of(kind, script(kind), approve=lambda call: twin).run_sync("Go")
        assert whole.messages == run.messages
        assert whole.output == run.output


@pytest.mark.parametrize("kind", KINDS)
def test_resume_with_an_edited_argument_model(kind: str) -> None:
    first = agent_of(kind, script(kind), approve="defer").run_sync("Go")
    edited = send.args_model(to="carl")
    later = agent_of(kind, script(kind)[1:], approve="defer")
    run = _drive(later.resume(first.pause_state(), {first.pending_calls[0].call_id: edited}))
    assert RAN == ["add 1 2", "send carl"] and run.reason == "done"
    assert validate_history(run.messages) == []
    twin = agent_of(
        kind, script(kind), approve=lambda call: edited if call.tool_name == "send" else True
    )
    RAN.clear()
    assert twin.run_sync("Go").messages == run.messages


def _drive(run: Any) -> Any:
    return asyncio.run(run._drive())


@pytest.mark.parametrize("kind", KINDS)
def test_a_pending_call_whose_tool_is_gone_is_answered_unknown_tool(kind: str) -> None:
    first = agent_of(kind, script(kind), approve="defer").run_sync("Go")
    model = ScriptedModel(script(kind)[1:])
    agent_class = FunctionCallAgent if kind == "native" else ReActAgent
    later = agent_class(model, [add])
    run = _drive(later.resume(first.pause_state(), {first.pending_calls[0].call_id: True}))
    result = next(e for e in run.events if isinstance(e, ToolResultEvent)).result
    assert result.error_type == "unknown_tool" and RAN == ["add 1 2"]
    assert validate_history(run.messages) == []


def test_steps_limits_and_usage_count_on_across_the_pause() -> None:
    # A server's ids are unique; a fresh ScriptedModel's would start over at the resume.
    replies = [
        ScriptedReply(tool_calls=[NativeCall(name, args, id=f"id{n}")])
        for n, (name, args) in enumerate(
            [
                ("add", {"a": 1, "b": 1}),
                ("send", {"to": "ann"}),
                ("add", {"a": 2, "b": 2}),
                ("add", {"a": 3, "b": 3}),
            ]
        )
    ]
    first = agent_of("native", replies, approve="defer", max_iterations=3).run_sync("Go")
    assert first.reason == "paused" and first.steps == 2
    later = agent_of("native", replies[2:], approve="defer", max_iterations=3)
    run = _drive(later.resume(first.pause_state(), {first.pending_calls[0].call_id: True}))
    assert run.reason == "max_iterations"
    assert run.steps == 3 and run.usage.requests == 3 and run.tool_calls == 3
    assert RAN == ["add 1 1", "send ann", "add 2 2"]
    assert validate_history(run.messages) == []


# --- bad input ------------------------------------------------------------------------------


@pytest.fixture
def paused_native() -> tuple[Any, PausedRun]:
    first = agent_of("native", script("native"), approve="defer").run_sync("Go")
    return agent_of("native", script("native")[1:], approve="defer"), first.pause_state()


def test_a_missing_decision_is_a_config_error(paused_native: Any) -> None:
    agent, paused = paused_native
    with pytest.raises(ConfigError, match="no decision for pending call"):
        agent.resume(paused, {})
    assert RAN == ["add 1 2"]


def test_an_unknown_call_id_is_a_config_error(paused_native: Any) -> None:
    agent, paused = paused_native
    decisions = {paused.pending[0].call_id: True, "nope": True}
    with pytest.raises(ConfigError, match="unknown call id"):
        agent.resume(paused, decisions)


def test_a_decision_of_another_kind_is_a_config_error(paused_native: Any) -> None:
    agent, paused = paused_native
    with pytest.raises(ConfigError, match="must be True, False, Deny"):
        agent.resume(paused, {paused.pending[0].call_id: 42})


def test_a_truncated_document_is_a_config_error(paused_native: Any) -> None:
    agent, paused = paused_native
    text = paused.to_json()
    for cut in (1, len(text) // 2, len(text) - 1):
        with pytest.raises(ConfigError, match="cannot be read"):
            agent.resume(text[:cut], {paused.pending[0].call_id: True})


def test_another_version_is_a_config_error(paused_native: Any) -> None:
    _, paused = paused_native
    document = json.loads(paused.to_json())
    document["version"] = 99
    with pytest.raises(ConfigError, match="version 99"):
        PausedRun.from_json(json.dumps(document))


def test_an_edited_call_id_is_a_config_error(paused_native: Any) -> None:
    _, paused = paused_native
    document = json.loads(paused.to_json())
    document["pending"][0]["call_id"] = "edited"
    with pytest.raises(ConfigError, match="was its id edited"):
        PausedRun.from_json(json.dumps(document))


def test_a_document_of_another_kind_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not a paused run"):
        PausedRun.from_json("[1, 2]")
    with pytest.raises(ConfigError, match="damaged"):
        PausedRun.from_json(json.dumps({"kind": "stream_parser.paused_run", "version": 1}))


@pytest.mark.parametrize("kind", KINDS)
def test_resume_sync_takes_the_json_and_denies(kind: str) -> None:
    first = agent_of(kind, script(kind), approve="defer").run_sync("Go")
    later = agent_of(kind, script(kind)[1:], approve="defer")
    decisions = {first.pending_calls[0].call_id: False}
    run = later.resume_sync(first.pause_state().to_json(), decisions)
    assert run.reason == "done" and RAN == ["add 1 2"]
    assert validate_history(run.messages) == []
    denied = next(e for e in run.events if isinstance(e, ToolResultEvent)).result
    assert denied.error_type == "denied"


# --- a result given by hand keeps its images --------------------------------------------------


def _image(name: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{name}"}}


# What each photo tool returns in this test (set per case).
PHOTOS: dict[str, ToolResult] = {}


@tool
def shoot(place: str) -> ToolResult:
    """Take a photo.

    Args:
        place: Where.
    """
    return PHOTOS["shoot"]


@tool(requires_approval=True)
def snap(place: str) -> ToolResult:
    """Take a photo that needs approval.

    Args:
        place: Where.
    """
    return PHOTOS["snap"]


def _photo(name: str, with_images: bool) -> ToolResult:
    images = (_image(name.upper()),) if with_images else ()
    return ToolResult(tool_name=name, text=f"photo by {name}", images=images)


@pytest.mark.parametrize(
    ("made_images", "hand_images"), [(False, True), (True, True), (True, False), (False, False)]
)
@pytest.mark.parametrize("kind", KINDS)
def test_a_result_given_by_hand_keeps_its_images_as_a_made_one_would(
    kind: str, made_images: bool, hand_images: bool
) -> None:
    PHOTOS["shoot"] = _photo("shoot", made_images)
    by_hand = _photo("snap", hand_images)
    replies = [
        calls(kind, ("shoot", {"place": "a"}), ("snap", {"place": "b"})),
        ScriptedReply(content="Nice photos."),
    ]
    agent_class = FunctionCallAgent if kind == "native" else ReActAgent
    first = agent_class(ScriptedModel(replies), [shoot, snap], approve="defer").run_sync("Go")
    assert first.reason == "paused"
    paused = PausedRun.from_json(first.pause_state().to_json())
    later = agent_class(ScriptedModel(replies[1:]), [shoot, snap], approve="defer")
    run = later.resume_sync(paused, {first.pending_calls[0].call_id: by_hand})
    assert run.reason == "done" and validate_history(run.messages) == []

    # The same run, the tool itself making that result.
    PHOTOS["snap"] = by_hand
    twin = agent_class(ScriptedModel(replies), [shoot, snap], approve=lambda call: True)
    whole = twin.run_sync("Go")
    assert run.messages == whole.messages
    sent = json.dumps(run.messages)
    assert ("SNAP" in sent) is hand_images and ("SHOOT" in sent) is made_images


# --- a pause with eager and with concurrent tools ---------------------------------------------


class WatchedModel(ScriptedModel):
    """A scripted model that lets other tasks run between deltas and says when it streams."""

    streaming = False

    async def _play(self, reply: Any, number: int) -> Any:
        self.streaming = True
        try:
            async for delta in super()._play(reply, number):
                await asyncio.sleep(0)  # as a network stream would: eager calls start
                yield delta
        finally:
            self.streaming = False


def _reading_tools(model: WatchedModel) -> list[Any]:
    @tool(read_only=True)
    def look(name: str) -> str:
        """Look a name up.

        Args:
            name: The name.
        """
        RAN.append(f"look {name} {'while streaming' if model.streaming else 'after'}")
        return f"{name} found"

    @tool(read_only=True, requires_approval=True)
    def peek(name: str) -> str:
        """Look at a private record.

        Args:
            name: The name.
        """
        RAN.append(f"peek {name} {'while streaming' if model.streaming else 'after'}")
        return f"{name}'s record"

    return [look, peek]


@pytest.mark.parametrize("kind", KINDS)
def test_a_pause_with_eager_tools(kind: str) -> None:
    replies = [
        calls(kind, ("look", {"name": "a"}), ("peek", {"name": "b"}), ("look", {"name": "c"})),
        ScriptedReply(content="Seen."),
    ]
    agent_class = FunctionCallAgent if kind == "native" else ReActAgent
    model = WatchedModel([replies[0]], chunk_size=3)
    first = agent_class(model, _reading_tools(model), approve="defer", eager_tools=True)
    run = first.run_sync("Look")
    assert run.reason == "paused"
    assert [(call.name, call.arguments) for call in run.pending_calls] == [("peek", {"name": "b"})]
    assert validate_history(run.messages, pending_calls_ok=True) == []
    # The calls that need no decision ran; in text, eagerly (a deferred read does not hold
    # back the reads after it); native calls are whole only when the reply ends.
    when = "while streaming" if kind == "text" else "after"
    assert list(RAN) == [f"look a {when}", f"look c {when}"]
    paused = run.pause_state()
    assert [result["text"] for result in paused.results] == ["a found", "c found"]

    model = WatchedModel(replies[1:], chunk_size=3)
    later = agent_class(model, _reading_tools(model), approve="defer", eager_tools=True)
    resumed = later.resume_sync(paused.to_json(), {run.pending_calls[0].call_id: True})
    assert resumed.reason == "done" and RAN[-1] == "peek b after"
    assert validate_history(resumed.messages) == []

    model = WatchedModel(replies, chunk_size=3)
    twin = agent_class(model, _reading_tools(model), approve=lambda c: True, eager_tools=True)
    whole = twin.run_sync("Look")
    assert (whole.messages, whole.output) == (resumed.messages, resumed.output)


@pytest.mark.parametrize("kind", KINDS)
def test_a_pause_with_concurrent_tools(kind: str) -> None:
    replies = [
        calls(kind, ("send", {"to": "ann"}), ("add", {"a": 1, "b": 2}), ("send", {"to": "bob"})),
        ScriptedReply(content="Sent."),
    ]

    def ann_later(call: Any) -> Any:
        return Defer() if call.tool_instance.to == "ann" else True

    run = agent_of(kind, replies, concurrent_tools=True, approve=ann_later).run_sync("Mail")
    assert run.reason == "paused"
    assert [call.arguments for call in run.pending_calls] == [{"to": "ann"}]
    assert sorted(RAN) == ["add 1 2", "send bob"]
    assert validate_history(run.messages, pending_calls_ok=True) == []
    paused = PausedRun.from_json(run.pause_state().to_json())
    assert [result["text"] for result in paused.results] == ["3", "sent to bob"]

    later = agent_of(kind, replies[1:], concurrent_tools=True, approve=ann_later)
    resumed = later.resume_sync(paused, {run.pending_calls[0].call_id: Deny("not ann")})
    assert resumed.reason == "done" and sorted(RAN) == ["add 1 2", "send bob"]
    assert validate_history(resumed.messages) == []

    def deny_ann(call: Any) -> Any:
        return Deny("not ann") if call.tool_instance.to == "ann" else True

    whole = agent_of(kind, replies, concurrent_tools=True, approve=deny_ann).run_sync("Mail")
    assert (whole.messages, whole.output) == (resumed.messages, resumed.output)


# --- a pause at the call limit ------------------------------------------------------------


def _over_the_limit(kind: str) -> list[Any]:
    """A reply of three calls, the first deferred; a limit of two refuses the third."""
    return [
        calls(kind, ("send", {"to": "ann"}), ("add", {"a": 1, "b": 2}), ("add", {"a": 3, "b": 4})),
        ScriptedReply(content="All done."),
    ]


LIMITS = [
    pytest.param({"max_tool_calls": 2}, "max_tool_calls", id="max_tool_calls"),
    pytest.param(
        {"usage_limits": UsageLimits(tool_calls=2)}, "usage_limit", id="usage_limits.tool_calls"
    ),
]


@pytest.mark.parametrize(("limit", "reason"), LIMITS)
@pytest.mark.parametrize("decision", [True, Deny("no")], ids=["approved", "denied"])
@pytest.mark.parametrize("kind", KINDS)
def test_a_pause_at_the_call_limit_ends_at_it_once_resumed(
    kind: str, decision: Any, limit: dict[str, Any], reason: str
) -> None:
    first = agent_of(kind, _over_the_limit(kind), approve="defer", **limit).run_sync("Go")
    # At the pause: the deferred call holds its place, the call past the limit is refused
    # (it needs no decision), and the pause says which limit the run will end on.
    assert first.reason == "paused" and RAN == ["add 1 2"]
    assert first.limit is not None and (first.limit.limit, first.limit.used) == (2, 2)
    assert first.events[-1].limit == first.limit
    paused = first.pause_state()
    assert paused.tool_calls == 2
    assert [r["error_type"] for r in paused.results] == [None, "tool_call_limit"]

    # At the resume: the deferred call is carried out (its place was kept), and the run
    # ends at the limit without another request, as the run decided at once does.
    later = agent_of(kind, [], approve="defer", **limit)
    run = later.resume_sync(paused.to_json(), {first.pending_calls[0].call_id: decision})
    assert run.reason == reason and run.limit == first.limit
    assert run.usage.requests == 1 and run.tool_calls == 2
    assert (["add 1 2", "send ann"] if decision is True else ["add 1 2"]) == RAN
    assert validate_history(run.messages) == []
    RAN.clear()
    whole = agent_of(kind, _over_the_limit(kind), approve=lambda c: decision, **limit)
    at_once = whole.run_sync("Go")
    assert (at_once.messages, at_once.output, at_once.reason, at_once.limit) == (
        run.messages,
        run.output,
        run.reason,
        run.limit,
    )


@pytest.mark.parametrize("kind", KINDS)
def test_a_pause_at_the_call_limit_resumes_to_a_last_answer(kind: str) -> None:
    options: dict[str, Any] = {"max_tool_calls": 2, "final_answer_at_limit": True}
    first = agent_of(kind, _over_the_limit(kind), approve="defer", **options).run_sync("Go")
    later = agent_of(kind, _over_the_limit(kind)[1:], approve="defer", **options)
    run = later.resume_sync(first.pause_state(), {first.pending_calls[0].call_id: True})
    assert run.reason == "done" and run.output == "All done." and run.usage.requests == 2
    assert run.limit is not None and run.limit.name == "max_tool_calls"
    RAN.clear()
    whole = agent_of(kind, _over_the_limit(kind), approve=lambda c: True, **options)
    at_once = whole.run_sync("Go")
    assert (at_once.messages, at_once.output) == (run.messages, run.output)


@pytest.mark.parametrize("kind", KINDS)
def test_a_call_past_the_limit_is_refused_before_it_is_asked_about(kind: str) -> None:
    replies = [calls(kind, ("add", {"a": 1, "b": 2}), ("send", {"to": "ann"})), "Done."]
    asked: list[str] = []

    def approve(call: Any) -> Any:
        asked.append(call.tool_name)
        return Defer()

    run = agent_of(kind, replies, approve=approve, max_tool_calls=1).run_sync("Go")
    assert asked == [] and run.reason == "max_tool_calls" and RAN == ["add 1 2"]
