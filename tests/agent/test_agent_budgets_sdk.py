"""Budgets, a last answer and timings through the real ``openai`` SDK, on loopback."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from stream_parser import AgentRun, FunctionCallAgent
from stream_parser.agent import LimitHit, RequestDoneEvent, ToolResultEvent, UsageLimits
from stream_parser.llm import OpenAIChatModel
from stream_parser.testing import assert_valid_history as assert_valid
from stream_parser.tools import tool

from ..llm.sse_server import SSEServer, chunk, sse, tool_fragment

pytest.importorskip("openai")

RAN: list[int] = []


@tool
def add(a: int, b: int) -> int:
    """Add.

    Args:
        a: A number.
        b: Another.
    """
    RAN.append(a + b)
    return a + b


@pytest.fixture
def server():
    RAN.clear()
    with SSEServer() as running:
        yield running


def calls_reply(call_id: str, a: int, usage: dict[str, int]) -> Any:
    """A reply with one native call of ``add``, then the server's usage report."""
    arguments = f'{{"a": {a}, "b": 1}}'
    return sse(
        [
            chunk(role="assistant", content="Adding."),
            chunk(tool_calls=[tool_fragment(0, id=call_id, name="add", arguments="")]),
            chunk(tool_calls=[tool_fragment(0, arguments=arguments)]),
            chunk(finish_reason="tool_calls"),
            chunk(usage=usage, no_choices=True),
        ]
    )


def text_reply(text: str, usage: dict[str, int] | None = None) -> Any:
    chunks = [chunk(content=text), chunk(finish_reason="stop")]
    if usage is not None:
        chunks.append(chunk(usage=usage, no_choices=True))
    return sse(chunks)


def drive(server: SSEServer, **options: Any) -> AgentRun:
    async def main() -> AgentRun:
        async with OpenAIChatModel("test-model", base_url=server.url, max_retries=0) as model:
            return await FunctionCallAgent(model, [add], **options).run("Add.")

    return asyncio.run(main())


def usage(prompt: int, completion: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def test_an_output_token_limit_ends_the_run_with_the_servers_numbers(server: SSEServer) -> None:
    server.script(
        calls_reply("call_1", 1, usage(20, 12)),
        calls_reply("call_2", 2, usage(45, 11)),
        text_reply("Done."),
    )
    run = drive(server, usage_limits=UsageLimits(output_tokens=20), timings=True)
    assert run.reason == "usage_limit"
    assert run.limit == LimitHit("output_tokens", 20, 23)
    assert (run.usage.input_tokens, run.usage.output_tokens) == (65, 23)
    assert (run.usage.total_tokens, run.usage.requests) == (88, 2)
    assert RAN == [2]  # the reply that crossed the limit had its call answered, not run
    assert len(server.requests) == 2
    assert run.messages[-1]["role"] == "tool"
    assert run.messages[-1]["tool_call_id"] == "call_2"
    assert "output_tokens=20" in run.messages[-1]["content"]
    done = [event for event in run.events if isinstance(event, RequestDoneEvent)]
    assert [(event.usage.output_tokens, event.usage_reported) for event in done] == [
        (12, True),
        (11, True),
    ]
    assert [e.duration_s is not None for e in run.events if isinstance(e, ToolResultEvent)] == [
        True
    ]
    assert_valid(run.messages)


def test_a_last_answer_through_the_sdk_sends_tool_choice_none(server: SSEServer) -> None:
    server.script(calls_reply("call_1", 1, usage(20, 12)), text_reply("It is 2.", usage(40, 4)))
    run = drive(server, usage_limits=UsageLimits(requests=1), final_answer_at_limit=True)
    assert (run.reason, run.output) == ("done", "It is 2.")
    assert run.limit == LimitHit("requests", 1, 1)
    last = server.requests[-1].body
    assert last["tool_choice"] == "none"
    assert [item["function"]["name"] for item in last["tools"]] == ["add"]
    assert_valid(last["messages"])
    assert_valid(run.messages)
