"""OpenAIChatModel against a real endpoint; skipped unless one is configured.

Set ``STREAM_PARSER_LIVE_BASE_URL`` (e.g. ``http://localhost:8000/v1``) and
``STREAM_PARSER_LIVE_MODEL``, plus ``STREAM_PARSER_LIVE_API_KEY`` if the server needs a
key, then run ``pytest -m live``.  The assertions are loose on purpose: they check the
protocol (the stream ends properly, deltas are well formed), not what the model says.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pydantic import BaseModel

from stream_parser.core._native import NativeCallAccumulator
from stream_parser.core.chunks import ChatDelta
from stream_parser.core.events import ParseErrorEvent, ToolCallEvent
from tests.live import API_KEY, BASE_URL, MODEL, live_marks

pytestmark = live_marks()


def stream(messages: list[Any], **options: Any) -> list[ChatDelta]:
    from stream_parser.llm import OpenAIChatModel

    async def main() -> list[ChatDelta]:
        assert BASE_URL and MODEL
        async with OpenAIChatModel(
            MODEL, base_url=BASE_URL, api_key=API_KEY, max_retries=1, timeout=120
        ) as model:
            return [delta async for delta in model.stream(messages, **options)]

    return asyncio.run(main())


def check_well_formed(deltas: list[ChatDelta]) -> str:
    """The reply ended with a finish reason and no transport error; returns it."""
    errors = [delta.error for delta in deltas if delta.error]
    assert errors == [], errors
    finishes = [delta.finish_reason for delta in deltas if delta.finish_reason]
    assert len(finishes) == 1, finishes
    for delta in deltas:
        if delta.usage is not None:
            assert isinstance(delta.usage, dict)
            json.dumps(delta.usage)
    return finishes[0]


def test_live_text_reply():
    deltas = stream(
        [{"role": "user", "content": "Reply with the single word: pong"}], max_tokens=1024
    )
    check_well_formed(deltas)
    text = "".join(delta.content or "" for delta in deltas)
    reasoning = "".join(delta.reasoning or "" for delta in deltas)
    assert text or reasoning


class GetWeather(BaseModel):
    city: str


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather of a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "The city name"}},
            "required": ["city"],
        },
    },
}


# Some servers (llama.cpp's Python server) ignore `tools` unless tool_choice names a
# function; named, every OpenAI-compatible server must make the call.
WEATHER_CHOICE = {"type": "function", "function": {"name": "get_weather"}}


def test_live_native_tool_call():
    deltas = stream(
        [
            {"role": "system", "content": "Use the get_weather tool to answer weather questions."},
            {"role": "user", "content": "What is the weather in Paris right now?"},
        ],
        tools=[WEATHER_TOOL],
        tool_choice=WEATHER_CHOICE,
        max_tokens=256,
    )
    finish_reason = check_well_formed(deltas)
    accumulator = NativeCallAccumulator({"get_weather": GetWeather})
    events = []
    for delta in deltas:
        events += accumulator.feed(delta.tool_calls, 0)
    events += accumulator.finish(finish_reason, 0)
    finals = [e for e in events if isinstance(e, (ToolCallEvent, ParseErrorEvent))]
    assert finals, f"no call though tool_choice named the function (finish: {finish_reason})"
    for event in finals:
        if isinstance(event, ToolCallEvent):
            assert isinstance(event.tool_instance, GetWeather)
            assert event.call_id


def test_live_a_failed_reply_does_not_break_the_next_request():
    """A prompt longer than many servers' context, then a small one, with no retries.

    Whatever the server does with the first (an HTTP error, a stream that closes with no
    data, a reply), the second request on the same client must work.
    """
    from stream_parser.llm import ModelError, OpenAIChatModel

    async def main() -> tuple[list[ChatDelta] | ModelError, list[ChatDelta]]:
        assert BASE_URL and MODEL
        async with OpenAIChatModel(
            MODEL, base_url=BASE_URL, api_key=API_KEY, max_retries=0, timeout=120
        ) as model:
            first: list[ChatDelta] | ModelError
            try:
                huge = [{"role": "user", "content": "word " * 20000}]
                first = [d async for d in model.stream(huge, max_tokens=1)]  # type: ignore[arg-type]
            except ModelError as exc:
                first = exc
            small = [{"role": "user", "content": "Say hi"}]
            second = [d async for d in model.stream(small, max_tokens=8)]  # type: ignore[arg-type]
            return first, second

    first, second = asyncio.run(main())
    if isinstance(first, list):
        errors = [delta.error for delta in first if delta.error]
        assert len(errors) <= 1
    check_well_formed(second)


def test_live_reply_timeout_bounds_a_long_reply():
    import time

    started = time.monotonic()
    deltas = stream(
        [{"role": "user", "content": "Count from 1 to 1000, one number per line."}],
        max_tokens=4096,
        reply_timeout=3,
    )
    assert time.monotonic() - started < 3 + 2
    errors = [delta.error for delta in deltas if delta.error]
    if errors:  # the usual case: the reply is cut by the bound, everything before kept
        assert errors == ["the reply took longer than reply_timeout (3 s)"]
        assert deltas[-1].error == errors[0]
    else:  # a fast server, or one that stopped early
        check_well_formed(deltas)


def live_model(**options: Any) -> Any:
    from stream_parser.llm import OpenAIChatModel

    assert BASE_URL and MODEL
    return OpenAIChatModel(
        MODEL, base_url=BASE_URL, api_key=API_KEY, max_retries=0, timeout=120, **options
    )


def test_live_function_call_agent_takes_a_second_step():
    """The second request holds an assistant message of tool calls alone: it is answered."""
    from stream_parser import FunctionCallAgent, ToolResultEvent, tool

    @tool
    def add(a: int, b: int) -> int:
        """Add two whole numbers."""
        return a + b

    choice = {"type": "function", "function": {"name": "add"}}
    model = live_model()
    agent = FunctionCallAgent(
        model, [add], max_iterations=2, model_options={"tool_choice": choice, "max_tokens": 128}
    )
    try:
        run = agent.run_sync("Add 2 and 3 with the add tool.")
    finally:
        asyncio.run(model.aclose())  # its client lives on the library's loop: closed there
    # tool_choice forces a call each step, so the run ends on its step limit, after two
    # requests the server answered, each with a call that ran.
    assert run.steps == 2 and run.reason == "max_iterations"
    results = [e for e in run.events if isinstance(e, ToolResultEvent)]
    assert len(results) >= 2
    assert [m["role"] for m in run.messages].count("tool") >= 2


def test_live_a_prompt_over_the_context_names_the_context():
    """Through an agent: the ModelError says what an empty stream usually means."""
    from stream_parser import FunctionCallAgent
    from stream_parser.llm import ModelError

    model = live_model()
    agent = FunctionCallAgent(model, [], model_options={"max_tokens": 4})
    try:
        run = agent.run_sync("word " * 20000)
    except ModelError as exc:
        message = str(exc)
        assert "context" in message, message
    else:  # a server with a context this large answers
        assert run.reason in ("done", "length")
    finally:
        asyncio.run(model.aclose())
