"""ParsingTransport: the real openai SDK, in process, against a loopback server.

And every dialect's recorded replies through the SDK and the transport, the upstream in
process (``httpx2.MockTransport``): the SDK's accumulated message equals what
``parse_stream`` gives for the same reply, one fixture per dialect in the fast suite and
all of them, cut three ways, under ``slow``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from stream_parser.serve import AsyncParsingTransport, ParsingTransport, ProxySettings

from ..llm.sse_server import SSEServer, chunk, json_answer, sse
from .cases import CASES, ServeCase, cuts, expected, one_per_dialect
from .test_rewrite import settings_of, upstream_sse

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
    # The space before the call is framing: not content.
    assert got["content"] == "Adding." and got["finish"] == "tool_calls"
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
    assert message.content == "Adding." and reply.choices[0].finish_reason == "tool_calls"
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


# --- every dialect's recorded replies, through the real SDK and the transport ------------


def mock_upstream(data: bytes, cut: int) -> Any:
    """An upstream in process: the recorded reply's SSE bytes, ``cut`` bytes a read."""
    pieces = [data[i : i + cut] for i in range(0, len(data), cut)]

    def reply(request: Any) -> Any:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=iter(pieces)
        )

    async def areply(request: Any) -> Any:
        async def body() -> Any:
            for piece in pieces:
                yield piece

        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body())

    return httpx2.MockTransport(reply), httpx2.MockTransport(areply)


def sdk_result(case: ServeCase, data: bytes, cut: int, *, run_async: bool) -> dict[str, Any]:
    sync_mock, async_mock = mock_upstream(data, cut)
    settings = settings_of(case)
    kwargs: dict[str, Any] = {
        "model": case.model,
        "messages": MESSAGES,
        "tools": list(case.tools),
        "stream": True,
    }
    if not run_async:
        http = httpx2.Client(transport=ParsingTransport(settings, transport=sync_mock))
        with (
            openai.OpenAI(base_url="http://up/v1", api_key="k", http_client=http) as client,
            client.chat.completions.create(**kwargs) as stream,
        ):
            return accumulate(stream)

    async def main() -> dict[str, Any]:
        transport = AsyncParsingTransport(settings, transport=async_mock)
        http = httpx2.AsyncClient(transport=transport)
        async with openai.AsyncOpenAI(
            base_url="http://up/v1", api_key="k", http_client=http
        ) as client:
            stream = await client.chat.completions.create(**kwargs)
            parts = [part async for part in stream]
        return accumulate(iter(parts))

    return asyncio.run(main())


def check_case(case: ServeCase, how: str, cut: int, run_async: bool) -> None:
    pieces = cuts(case.text)[how]
    got = sdk_result(case, upstream_sse(pieces), cut, run_async=run_async)
    want = expected(case, pieces)
    assert got["content"] == want.content
    calls = [(c["name"], json.loads(c["arguments"])) for c in got["calls"]]
    assert calls == want.calls
    assert got["finish"] == ("tool_calls" if want.calls else "stop")


@pytest.mark.parametrize("case", one_per_dialect(), ids=lambda c: c.id)
@pytest.mark.parametrize("run_async", [False, True], ids=["sync", "async"])
def test_one_fixture_per_dialect(case: ServeCase, run_async: bool) -> None:
    check_case(case, "markers", 5, run_async)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
@pytest.mark.parametrize("how", ["whole", "markers", "chars"])
def test_every_fixture(case: ServeCase, how: str) -> None:
    for cut, run_async in ((1 << 20, False), (1, True), (9, False)):
        check_case(case, how, cut, run_async)
