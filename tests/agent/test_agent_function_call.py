"""FunctionCallAgent: native calls, the exact OpenAI history, and the shared run API."""

from __future__ import annotations

import asyncio
import copy
import json
import pickle
import threading
from typing import Any

import pytest

from stream_parser import AgentRun, FunctionCallAgent, ImgUrl, ParseEvent, ToolResultEvent
from stream_parser.agent import StepStartEvent
from stream_parser.encoders import event_to_json
from stream_parser.errors import ConfigError
from stream_parser.llm import ModelError
from stream_parser.testing import FunctionModel, NativeCall, ScriptedModel, ScriptedReply
from stream_parser.testing import assert_valid_history as assert_valid
from stream_parser.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


@tool
def look(name: str) -> ImgUrl:
    """Look at a picture.

    Args:
        name: Its name.
    """
    return ImgUrl(f"https://example.org/{name}.png")


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no")

    def __repr__(self) -> str:
        raise RuntimeError("no")


@tool
def boom() -> str:
    """Always fails."""
    raise Unprintable


@tool
def fail(why: str) -> str:
    """Fails with a reason.

    Args:
        why: The reason.
    """
    raise ValueError(why)


def agent(model: Any, tools: Any = (add,), **options: Any) -> FunctionCallAgent:
    return FunctionCallAgent(model, list(tools), **options)


# --- the history --------------------------------------------------------------------------


def test_several_steps_the_history_is_exactly_the_openai_format() -> None:
    model = ScriptedModel(
        [
            ScriptedReply(
                content="Adding.",
                tool_calls=[
                    NativeCall("add", {"a": 1, "b": 2}),
                    NativeCall("add", '{"a":3,"b":4}'),
                ],
            ),
            [NativeCall("add", {"a": 3, "b": 7}, id="c9")],
            "It is 10.",
        ]
    )
    run = agent(model, system_prompt="Be brief.").run_sync("1+2, 3+4, then both")
    assert run.reason == "done" and run.steps == 3 and run.output == "It is 10."
    assert run.messages == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "1+2, 3+4, then both"},
        {
            "role": "assistant",
            "content": "Adding.",
            "tool_calls": [
                {
                    "id": "call_1_0",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 1, "b": 2}'},
                },
                {
                    "id": "call_1_1",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a":3,"b":4}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "call_1_0", "content": "3", "name": "add"},
        {"role": "tool", "tool_call_id": "call_1_1", "content": "7", "name": "add"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c9",
                    "type": "function",
                    "function": {"name": "add", "arguments": '{"a": 3, "b": 7}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c9", "content": "10", "name": "add"},
        {"role": "assistant", "content": "It is 10."},
    ]
    # The model saw the tools as OpenAI definitions, and each request the history so far.
    assert model.requests[0].tools == [add.to_openai()]
    assert model.requests[2].messages == run.messages[:-1]
    assert_valid(run.messages)


def test_interleaved_fragments_are_gathered_by_index() -> None:
    calls = [NativeCall("add", {"a": n, "b": n}) for n in range(3)]
    model = ScriptedModel([calls, "done"], interleave_tool_calls=True, chunk_size=2)
    run = agent(model).run_sync("go")
    assert [m["content"] for m in run.messages if m["role"] == "tool"] == ["0", "2", "4"]


def test_each_failed_call_is_answered_and_the_model_corrects_itself() -> None:
    model = ScriptedModel(
        [
            [
                NativeCall("add", {"a": 1, "b": "many"}),
                NativeCall("nope", {}),
                NativeCall("add", "{not json"),
                NativeCall("boom"),
                NativeCall("fail", {"why": "disk full"}),
            ],
            [NativeCall("add", {"a": 1, "b": 2})],
            "3",
        ]
    )
    run = agent(model, [add, boom, fail]).run_sync("go")
    answers = {m["tool_call_id"]: m["content"] for m in run.messages if m["role"] == "tool"}
    assert answers["call_1_0"].startswith("Error (invalid_params):")
    assert "b: Input should be a valid integer" in answers["call_1_0"]
    assert answers["call_1_1"].startswith("Error (unknown_tool):")
    assert "add" in answers["call_1_1"]  # the registered tools are named
    assert answers["call_1_2"].startswith("Error (malformed_tool):")
    assert answers["call_1_3"] == "Error: tool 'boom' raised Unprintable"
    assert answers["call_1_4"] == "Error: tool 'fail' raised ValueError: disk full"
    assert answers["call_2_0"] == "3"
    assert run.reason == "done" and run.steps == 3
    # Every call the model sent is in the assistant message, as it was sent.
    assert [c["function"]["arguments"] for c in run.messages[1]["tool_calls"]][2] == "{not json"
    assert_valid(run.messages)


def test_images_go_in_one_user_message_after_all_the_tool_messages() -> None:
    model = ScriptedModel(
        [
            [
                NativeCall("look", {"name": "a"}),
                NativeCall("add", {"a": 1, "b": 1}),
                NativeCall("look", {"name": "b"}),
            ],
            "Two pictures.",
        ]
    )
    run = agent(model, [add, look]).run_sync("look")
    roles = [m["role"] for m in run.messages]
    assert roles == ["user", "assistant", "tool", "tool", "tool", "user", "assistant"]
    images = run.messages[5]["content"]
    assert [part["type"] for part in images] == ["text", "image_url", "text", "image_url"]
    assert images[1]["image_url"]["url"] == "https://example.org/a.png"
    assert images[3]["image_url"]["url"] == "https://example.org/b.png"
    assert "call_1_2" in images[2]["text"]
    assert_valid(run.messages)


def test_a_reply_cut_by_its_length_limit_never_runs_a_call() -> None:
    ran: list[int] = []

    @tool
    def record(n: int) -> str:
        """Record.

        Args:
            n: A number.
        """
        ran.append(n)
        return "ok"

    cut = ScriptedReply(
        tool_calls=[NativeCall("record", {"n": 1}), NativeCall("record", '{"n": 2')],
        finish_reason="length",
    )
    model = ScriptedModel([cut, "Sorry, too long."])
    run = agent(model, [record]).run_sync("go")
    assert ran == [] and run.reason == "done"
    answers = [m["content"] for m in run.messages if m["role"] == "tool"]
    # Native calls are only complete when the reply ends well: a cut leaves both open.
    assert all(answer.startswith("Error (unclosed_tool):") for answer in answers)
    assert len(answers) == 2
    assert_valid(run.messages)


def test_a_cut_reply_without_calls_ends_the_run() -> None:
    model = ScriptedModel([ScriptedReply(content="The answer is", finish_reason="length")])
    run = agent(model).run_sync("go")
    assert run.reason == "length" and run.output == "The answer is"


def test_text_before_a_call_never_ends_the_run() -> None:
    model = ScriptedModel(
        [ScriptedReply(content="\n  ", tool_calls=[NativeCall("add", {"a": 1, "b": 1})]), "2"]
    )
    run = agent(model).run_sync("go")
    assert run.steps == 2 and run.reason == "done"
    assert run.messages[1]["content"] == "\n  "


# --- limits and options -------------------------------------------------------------------


def test_max_iterations() -> None:
    model = FunctionModel(lambda messages: [NativeCall("add", {"a": 1, "b": 1})])
    run = agent(model, max_iterations=3).run_sync("loop")
    assert run.reason == "max_iterations" and run.steps == 3 and len(model.requests) == 3
    assert run.messages[-1]["role"] == "tool"
    assert_valid(run.messages)


def test_max_tool_calls_caps_the_whole_run() -> None:
    two = [NativeCall("add", {"a": 1, "b": 1}), NativeCall("add", {"a": 2, "b": 2})]
    model = ScriptedModel([two, two, "never"])
    run = agent(model, max_tool_calls=3).run_sync("go")
    assert run.reason == "max_tool_calls" and run.steps == 2 and run.tool_calls == 3
    answers = [m["content"] for m in run.messages if m["role"] == "tool"]
    assert answers[:3] == ["2", "4", "2"]
    assert answers[3].startswith("Error (tool_call_limit):")
    assert_valid(run.messages)


def test_model_options_pass_through_and_concurrent_tools_is_not_sent() -> None:
    model = ScriptedModel(["hi"])
    options = {"temperature": 0.2, "parallel_tool_calls": False}
    agent(model, concurrent_tools=True, model_options=options).run_sync("go")
    assert model.requests[0].options == options


def test_usage_is_summed_over_the_steps() -> None:
    usage = {
        "prompt_tokens": 10,
        "completion_tokens": 4,
        "completion_tokens_details": {"reasoning_tokens": 3},
    }
    model = ScriptedModel(
        [
            ScriptedReply(tool_calls=[NativeCall("add", {"a": 1, "b": 1})], usage=usage),
            ScriptedReply(content="2", usage={"prompt_tokens": 20, "completion_tokens": 1}),
        ]
    )
    run = agent(model).run_sync("go")
    assert (run.usage.input_tokens, run.usage.output_tokens) == (30, 5)
    assert run.usage.reasoning_tokens == 3


def test_events_come_out_as_the_parser_made_them() -> None:
    model = ScriptedModel([[NativeCall("add", {"a": 1, "b": 1})], "2"])
    events = list(agent(model).stream_sync("go"))
    # The step of an event is the one of the StepStartEvent before it.
    step = 0
    steps = []
    for event in events:
        if isinstance(event, StepStartEvent):
            step = event.step
        steps.append(step)
    assert steps[0] == 1 and steps[-2] == 2 and set(steps) == {1, 2}
    parse = [e for e in events if isinstance(e, ParseEvent)]
    assert {steps[events.index(e)] for e in parse} == {1, 2}
    for event in parse:
        # The parser's own classes: no copy made for the run, nothing added.
        assert type(event).__module__ == "stream_parser.core.events"
        assert not hasattr(event, "step")
        assert copy.copy(event) == event
        if event.kind != "tool_call":  # a tool call holds its tool's argument model
            assert pickle.loads(pickle.dumps(event)) == event
        assert "step" not in json.loads(event_to_json(event))


def test_programmer_errors_raise_at_once() -> None:
    model = ScriptedModel([])
    for bad in (
        {"max_iterations": 0},
        {"max_tool_calls": -1},
        {"tool_timeout": 0},
        {"max_result_chars": 0},
        {"approve": 3},
        {"model_options": {"concurrent_tools": True}},
    ):
        with pytest.raises(ConfigError):
            FunctionCallAgent(model, [add], **bad)


# --- the run API --------------------------------------------------------------------------


def test_a_run_is_awaitable_and_async_iterable() -> None:
    async def main() -> tuple[AgentRun, list[str]]:
        model = ScriptedModel([[NativeCall("add", {"a": 1, "b": 1})], "2", "4"])
        fc = agent(model)
        finished = await fc.run("1+1")
        kinds = [event.kind async for event in fc.run("2+2")]
        return finished, kinds

    finished, kinds = asyncio.run(main())
    assert finished.reason == "done" and finished.output == "2"
    assert kinds == ["step_start", "text", "agent_done"]


def test_history_continues_a_conversation() -> None:
    model = ScriptedModel(["Hi.", "Again."])
    fc = agent(model, system_prompt="S")
    first = fc.run_sync("hello")
    second = fc.run_sync("again", history=first.messages)
    assert [m["role"] for m in second.messages] == [
        "system",
        "user",
        "assistant",
        "user",
        "assistant",
    ]


def test_a_model_error_is_raised_after_the_run_is_recorded() -> None:
    model = ScriptedModel(
        [[NativeCall("add", {"a": 1, "b": 1})], ModelError("busy", status_code=503)]
    )
    run = agent(model).run("go")
    with pytest.raises(ModelError, match="busy"):
        asyncio.run(run._drive())
    assert run.reason == "model_error"
    assert [m["role"] for m in run.messages] == ["user", "assistant", "tool"]


def test_a_model_error_mid_reply_keeps_the_partial_reply_and_answers_its_calls() -> None:
    broken = ScriptedReply(
        content="Let me add",
        tool_calls=[NativeCall("add", {"a": 1, "b": 1})],
        error="connection reset",
    )
    model = ScriptedModel([broken])
    run = agent(model).run("go")
    with pytest.raises(ModelError, match="connection reset"):
        asyncio.run(run._drive())
    assert run.reason == "model_error"
    assert run.messages[1]["content"] == "Let me add"
    assert run.messages[-1]["role"] == "tool"
    assert_valid(run.messages)


def test_two_concurrent_runs_of_one_agent_share_nothing() -> None:
    def reply(messages: list[Any]) -> Any:
        last = messages[-1]
        if last["role"] == "user":
            n = int(last["content"])
            return [NativeCall("add", {"a": n, "b": n})]
        return f"= {last['content']}"

    fc = agent(FunctionModel(reply, chunk_size=1))

    async def main() -> list[AgentRun]:
        return list(await asyncio.gather(fc.run("1"), fc.run("5")))

    one, five = asyncio.run(main())
    assert (one.output, five.output) == ("= 2", "= 10")
    assert len(one.messages) == len(five.messages) == 4
    assert one.run_id != five.run_id


def test_run_sync_and_stream_sync_inside_a_running_loop() -> None:
    model = ScriptedModel(["one", "two", "three"])
    fc = agent(model)

    async def notebook_cell() -> tuple[str, list[str], str]:
        first = fc.run_sync("a").output
        kinds = [event.kind for event in fc.stream_sync("b")]
        return first, kinds, fc.run_sync("c").output

    first, kinds, third = asyncio.run(notebook_cell())
    assert (first, third) == ("one", "three")
    assert kinds == ["step_start", "text", "agent_done"]


def test_stream_sync_stopped_early_closes_the_run() -> None:
    model = ScriptedModel(
        [[NativeCall("add", {"a": 1, "b": 1}), NativeCall("add", {"a": 2, "b": 2})]]
    )
    seen: list[ToolResultEvent] = []
    stream = agent(model).stream_sync("go")
    for event in stream:
        if isinstance(event, ToolResultEvent):
            seen.append(event)
            break
    stream.close()  # type: ignore[attr-defined]
    assert len(seen) == 1


def test_sync_tools_run_in_a_worker_thread() -> None:
    threads: list[str] = []

    @tool
    def where() -> str:
        """Where it runs."""
        threads.append(threading.current_thread().name)
        return "here"

    agent(ScriptedModel([[NativeCall("where")], "ok"]), [where]).run_sync("go")
    assert threads == ["stream_parser-tool"]


def test_a_step_start_opens_each_reply() -> None:
    model = ScriptedModel([[NativeCall("add", {"a": 1, "b": 1})], "2"])
    run = agent(model).run_sync("go")
    starts = [e for e in run.events if isinstance(e, StepStartEvent)]
    assert [e.step for e in starts] == [1, 2]


def test_a_call_written_in_the_text_runs_too_and_is_observed_after_the_tool_messages() -> None:
    reply = ScriptedReply(
        content="<add><a>5</a><b>5</b></add>", tool_calls=[NativeCall("add", {"a": 1, "b": 1})]
    )
    run = agent(ScriptedModel([reply, "ok"])).run_sync("go")
    assert [m["role"] for m in run.messages] == ["user", "assistant", "tool", "user", "assistant"]
    assert run.messages[2]["content"] == "2"
    assert run.messages[3]["content"] == "[add] result:\n10"
    assert_valid(run.messages)


def test_max_tool_calls_in_the_text_protocol() -> None:
    from stream_parser import ReActAgent

    model = ScriptedModel(["<add><a>1</a><b>1</b></add><add><a>2</a><b>2</b></add>"])
    run = ReActAgent(model, [add], max_tool_calls=1).run_sync("go")
    assert run.reason == "max_tool_calls"
    assert run.messages[-1]["content"] == (
        "[add] result:\n2\n\n[add] not executed (tool_call_limit):\n"
        "the run's limit of 1 tool call(s) was reached"
    )
