"""Budgets against a real server that reports no usage (llama.cpp's); skipped unless set.

Set ``STREAM_PARSER_LIVE_BASE_URL`` and ``STREAM_PARSER_LIVE_MODEL`` (and
``STREAM_PARSER_LIVE_API_KEY`` if needed), then run ``pytest -m live``.  The request
names the function in ``tool_choice``, so that every reply is a call whatever the model
would rather say: the run can only end on its limit.
"""

from __future__ import annotations

import asyncio

from stream_parser.agent import AgentRun, FunctionCallAgent, LimitHit, UsageLimits
from stream_parser.testing import assert_valid_history as assert_valid
from stream_parser.tools import tool
from tests.live import API_KEY, BASE_URL, MODEL, live_marks

pytestmark = live_marks()


@tool
def next_number(n: int) -> int:
    """The number after n.

    Args:
        n: A number.
    """
    return n + 1


def drive() -> AgentRun:
    from stream_parser.llm import OpenAIChatModel

    async def main() -> AgentRun:
        assert BASE_URL and MODEL
        async with OpenAIChatModel(
            MODEL, base_url=BASE_URL, api_key=API_KEY, max_retries=1, timeout=300
        ) as model:
            agent = FunctionCallAgent(
                model,
                [next_number],
                usage_limits=UsageLimits(requests=2, output_tokens=100_000),
                model_options={
                    "tool_choice": {"type": "function", "function": {"name": "next_number"}},
                    "max_tokens": 64,
                    "temperature": 0,
                },
                timings=True,
            )
            return await agent.run("Count up from 1 with next_number.")

    return asyncio.run(main())


def test_a_token_limit_without_usage_is_noticed_once_and_requests_still_ends_the_run() -> None:
    run = drive()
    notices = [event for event in run.events if event.kind == "notice"]
    unreported = [notice for notice in notices if notice.code == "usage_unreported"]
    assert len(unreported) == 1, notices
    assert "output_tokens=100000" in unreported[0].message
    assert run.reason == "usage_limit"
    assert run.limit == LimitHit("requests", 2, 2)
    assert [record.usage_reported for record in run.requests] == [False, False]
    assert_valid(run.messages)
