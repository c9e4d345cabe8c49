"""ParsingTransport: the real openai SDK, in process, against a loopback server."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from stream_parser.serve import AsyncParsingTransport, ParsingTransport, ProxySettings

from ..llm.sse_server import SSEServer, chunk, json_answer, sse

openai = pytest.importorskip("openai")
httpx2 = pytest.importorskip("httpx2")

TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "parameters": {
                "type": "object",
                "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                "required": ["a", "b"],
            },
        },
    }
]
REPLY = 'Adding. <tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>'
MESSAGES: list[Any] = [{"role": "user", "content": "Add 2 and 3."}]


@pytest.fixture
def server():
    with SSEServer() as running:
        yield running


def streamed(text: str, size: int = 5) -> Any:
    pieces = [chunk(content=text[i : i + size]) for i in range(0, len(text), size)]
    return sse([chunk(role="assistant"), *pieces, chunk(finish_reason="stop")])


def accumulate(stream: Any) -> dict[str, Any]:
    content, calls, finish = [], {}, None
    for part in stream:
        for choice in part.choices:
            delta = choice.delta
            content.append(delta.content or "")
            for call in delta.tool_calls or ():
                entry = calls.setdefault(call.index, {"id": call.id, "name": "", "arguments": ""})
                entry["name"] += call.function.name or ""
                entry["arguments"] += call.function.arguments or ""
            finish = choice.finish_reason or finish
    return {"content": "".join(content), "calls": list(calls.values()), "finish": finish}


def test_sync_streamed(server: SSEServer) -> None:
    server.script(streamed(REPLY))
    http = httpx2.Client(transport=ParsingTransport())
    client = openai.OpenAI(base_url=server.url, api_key="k", http_client=http, max_retries=0)
    with client.chat.completions.create(
        model="Qwen/Qwen3-8B", messages=MESSAGES, tools=TOOLS, stream=True
    ) as stream:
        got = accumulate(stream)
    assert got["content"] == "Adding. " and got["finish"] == "tool_calls"
    (call,) = got["calls"]
    assert call["name"] == "add" and json.loads(call["arguments"]) == {"a": 2, "b": 3}
    assert call["id"].startswith("call_")
    assert server.requests[0].body["tools"] == TOOLS  # tools go upstream unchanged
    client.close()


def test_async_whole_reply(server: SSEServer) -> None:
    completion = {
        "id": "c",
        "object": "chat.completion",
        "created": 1,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": REPLY},
                "finish_reason": "stop",
            }
        ],
    }
    server.script(json_answer(completion))

    async def main() -> Any:
        http = httpx2.AsyncClient(transport=AsyncParsingTransport(ProxySettings(dialect="hermes")))
        async with openai.AsyncOpenAI(
            base_url=server.url, api_key="k", http_client=http, max_retries=0
        ) as client:
            return await client.chat.completions.create(
                model="local", messages=MESSAGES, tools=TOOLS
            )

    reply = asyncio.run(main())
    message = reply.choices[0].message
    assert message.content == "Adding. " and reply.choices[0].finish_reason == "tool_calls"
    assert json.loads(message.tool_calls[0].function.arguments) == {"a": 2, "b": 3}


def test_tools_that_cannot_be_read_are_a_400_and_nothing_is_sent(server: SSEServer) -> None:
    http = httpx2.Client(transport=ParsingTransport(ProxySettings(dialect="xml")))
    client = openai.OpenAI(base_url=server.url, api_key="k", http_client=http, max_retries=0)
    slashed = [{"type": "function", "function": {"name": "github/create_issue"}}]
    with pytest.raises(openai.BadRequestError, match="xml dialect"):
        client.chat.completions.create(model="m", messages=MESSAGES, tools=slashed)
    assert server.requests == []
    client.close()


def test_other_requests_and_unknown_models_pass_through(server: SSEServer) -> None:
    server.script(streamed(REPLY))
    http = httpx2.Client(transport=ParsingTransport())
    client = openai.OpenAI(base_url=server.url, api_key="k", http_client=http, max_retries=0)
    with client.chat.completions.create(
        model="my-finetune", messages=MESSAGES, tools=TOOLS, stream=True
    ) as stream:
        got = accumulate(stream)
    assert got["content"] == REPLY and got["calls"] == []
    client.close()
