"""``@llm_chat`` return modes: ``"raw"`` (the model's deltas) and ``"sdk"`` (the SDK's chunks).

``return_mode="sdk"`` runs through the real ``openai`` SDK against the loopback SSE
server, which the tests start and stop: every chunk the server sent comes out, in order,
as the SDK's own ``ChatCompletionChunk``, fields the SDK does not know included.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from stream_parser import ChatDelta, llm_chat, tool
from stream_parser.errors import ConfigError
from stream_parser.llm import OpenAIChatModel
from stream_parser.testing import ScriptedModel

from ..llm.sse_server import SSEServer, chunk, json_answer, sse, tool_fragment

openai = pytest.importorskip("openai")
ChatCompletionChunk = openai.types.chat.ChatCompletionChunk

USAGE = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@pytest.fixture
def server() -> Iterator[SSEServer]:
    with SSEServer() as running:
        yield running


def vendor_reply() -> list[dict[str, Any]]:
    """A reply whose chunks carry fields the SDK does not declare, and chunks with no text."""
    first = chunk(role="assistant")
    first["system_fingerprint"] = "fp_1"
    thinking = chunk(reasoning_content="Greet back.", extra_delta={"x_phase": "think"})
    hello = chunk(content="Hello, ")
    hello["x_vendor"] = {"latency_ms": 12}
    ada = chunk(content="Ada!")
    done = chunk(finish_reason="stop")
    usage = chunk(usage=USAGE, no_choices=True)
    return [first, thinking, hello, ada, done, usage]


def as_sent(item: Any) -> dict[str, Any]:
    """A chunk object as its JSON (the fields it was made with, unknown ones included)."""
    dumped: dict[str, Any] = item.to_dict(exclude_unset=True)
    return dumped


def test_sdk_mode_yields_every_chunk_the_server_sent_in_order(server: SSEServer) -> None:
    events = vendor_reply()
    # A comment between events is not an event: no chunk for it.
    server.script(sse([*events[:2], ": keep-alive\n\n", *events[2:]]))

    async def main() -> list[tuple[Any, list[Any]]]:
        async with OpenAIChatModel("test-model", base_url=server.url, max_retries=0) as model:

            @llm_chat(model, return_mode="sdk")
            async def chat(message: str, history: list[dict[str, Any]]) -> None:
                """You are friendly."""

            return [pair async for pair in chat("Hi, I am Ada.", history=[])]

    pairs = asyncio.run(main())
    chunks = [item for item, _ in pairs[:-1]]
    assert all(isinstance(item, ChatCompletionChunk) for item in chunks)
    assert [as_sent(item) for item in chunks] == events
    assert chunks[2].x_vendor == {"latency_ms": 12}  # type: ignore[attr-defined]
    assert chunks[1].choices[0].delta.model_extra == {
        "reasoning_content": "Greet back.",
        "x_phase": "think",
    }
    assert chunks[4].choices[0].finish_reason == "stop" and chunks[5].usage is not None
    # The last pair is still ("", history), with the reply's text in the history.
    text, history = pairs[-1]
    assert text == "" and history[-1] == {"role": "assistant", "content": "Hello, Ada!"}


def test_the_chunks_are_those_the_sdks_own_stream_reader_makes(server: SSEServer) -> None:
    events = vendor_reply()
    server.script(sse(events), sse(events))

    async def main() -> tuple[list[Any], list[Any]]:
        async with OpenAIChatModel("test-model", base_url=server.url, max_retries=0) as model:

            @llm_chat(model, return_mode="sdk", stream=False)
            async def chat(message: str) -> None:
                """You are friendly."""

            pairs = [pair async for pair in chat("Hi")]
            ours = pairs[0][0]  # stream=False: the list of every chunk, then ("", history)
        client = openai.AsyncOpenAI(base_url=server.url, api_key="EMPTY", max_retries=0)
        async with client:
            stream = await client.chat.completions.create(
                model="test-model", messages=[{"role": "user", "content": "Hi"}], stream=True
            )
            theirs = [item async for item in stream]
        return ours, theirs

    ours, theirs = asyncio.run(main())
    assert [type(item) for item in ours] == [type(item) for item in theirs]
    assert [item.model_dump() for item in ours] == [item.model_dump() for item in theirs]
    assert [item.model_extra for item in ours] == [item.model_extra for item in theirs]


def test_sdk_mode_gives_the_chunks_of_every_request_of_a_turn(server: SSEServer) -> None:
    call = [
        chunk(role="assistant"),
        chunk(tool_calls=[tool_fragment(0, id="call_1", name="add", arguments='{"a": 2, ')]),
        chunk(tool_calls=[tool_fragment(0, arguments='"b": 3}')]),
        chunk(finish_reason="tool_calls"),
    ]
    answer = [chunk(content="It is 5."), chunk(finish_reason="stop")]
    server.script(sse(call), sse(answer))

    async def main() -> list[Any]:
        async with OpenAIChatModel("test-model", base_url=server.url, max_retries=0) as model:

            @llm_chat(model, toolkit=[add], return_mode="sdk")
            async def chat(message: str) -> None:
                """Use the tools."""

            return [item async for item, _ in chat("2 + 3?")]

    items = asyncio.run(main())
    assert [as_sent(item) for item in items[:-1]] == [*call, *answer]
    assert items[-1] == ""
    assert len(server.requests) == 2


def test_sdk_mode_needs_a_model_with_sdk_chunks() -> None:
    with pytest.raises(ConfigError, match=r'return_mode="sdk".*ScriptedModel has none'):
        llm_chat(ScriptedModel([]), return_mode="sdk")


def test_raw_mode_keeps_yielding_chat_deltas() -> None:
    @llm_chat(ScriptedModel(["Hello!"], chunk_size=2), return_mode="raw")
    def chat(message: str, history: list[dict[str, Any]]) -> None:
        """You are friendly."""

    items = [item for item, _ in chat.sync("Hi", history=[])]
    deltas = items[:-1]
    assert all(isinstance(item, ChatDelta) for item in deltas)
    assert "".join(delta.content or "" for delta in deltas) == "Hello!"
    assert deltas[-1].finish_reason == "stop" and items[-1] == ""


def test_a_whole_completion_sent_as_json_gives_one_chunk(server: SSEServer) -> None:
    completion = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "test-model",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Hello!"},
                "finish_reason": "stop",
            }
        ],
    }
    server.script(json_answer(completion))

    async def main() -> list[Any]:
        async with OpenAIChatModel("test-model", base_url=server.url, max_retries=0) as model:

            @llm_chat(model, return_mode="sdk")
            async def chat(message: str) -> None:
                """You are friendly."""

            return [item async for item, _ in chat("Hi")]

    items = asyncio.run(main())
    assert len(items) == 2 and items[-1] == ""
    assert isinstance(items[0], ChatCompletionChunk)
    assert items[0].choices[0].delta.content == "Hello!"
    assert items[0].choices[0].finish_reason == "stop"
