"""OpenAIChatModel on the wire: the real ``openai`` SDK against a loopback SSE server."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest
from pydantic import BaseModel

from stream_parser.core._native import NativeCallAccumulator
from stream_parser.core.chunks import ChatDelta, ToolCallDelta
from stream_parser.core.events import ToolCallEvent
from stream_parser.errors import ConfigError, StreamParserError
from stream_parser.llm import ChatModel, ModelError, OpenAIChatModel

from .sse_server import SSEServer, chunk, error, sse, tool_fragment

openai = pytest.importorskip("openai")

USER: list[Any] = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server():
    with SSEServer() as running:
        yield running


def collect(server: SSEServer, messages: Any = None, **kwargs: Any) -> list[ChatDelta]:
    """Stream one reply with a fresh model (no retries) and return every delta."""
    model_options = {key: kwargs.pop(key) for key in ("max_retries", "api_key") if key in kwargs}
    model_options.setdefault("max_retries", 0)

    async def main() -> list[ChatDelta]:
        async with OpenAIChatModel("test-model", base_url=server.url, **model_options) as model:
            return [delta async for delta in model.stream(messages or USER, **kwargs)]

    return asyncio.run(main())


def text_of(deltas: list[ChatDelta]) -> str:
    return "".join(delta.content or "" for delta in deltas)


def reasoning_of(deltas: list[ChatDelta]) -> str:
    return "".join(delta.reasoning or "" for delta in deltas)


def finish_of(deltas: list[ChatDelta]) -> list[str]:
    return [delta.finish_reason for delta in deltas if delta.finish_reason]


def errors_of(deltas: list[ChatDelta]) -> list[str]:
    return [delta.error for delta in deltas if delta.error]


def test_is_a_chat_model():
    async def main() -> None:
        async with OpenAIChatModel("m", base_url="http://127.0.0.1:9/v1") as model:
            assert isinstance(model, ChatModel)
            assert "127.0.0.1:9" in repr(model)

    asyncio.run(main())


def test_plain_text(server):
    server.script(
        sse(
            [
                chunk(role="assistant", content=""),
                chunk(content="Hel"),
                chunk(content="lo, "),
                chunk(content="world"),
                chunk(finish_reason="stop"),
            ]
        )
    )
    deltas = collect(server)
    assert [delta.content for delta in deltas] == ["Hel", "lo, ", "world", None]
    assert deltas[-1] == ChatDelta(finish_reason="stop")
    assert errors_of(deltas) == []

    (request,) = server.requests
    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "test-model"
    assert request.body["messages"] == USER
    assert request.body["stream"] is True
    assert request.body["stream_options"] == {"include_usage": True}
    assert "tools" not in request.body
    # No key given for a custom base_url: the placeholder, never the OpenAI key.
    assert request.headers["authorization"] == "Bearer EMPTY"


def test_openai_key_is_not_sent_to_another_server(server, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-must-not-leak")
    server.script(sse([chunk(content="x", finish_reason="stop")]))
    collect(server)
    assert server.requests[0].headers["authorization"] == "Bearer EMPTY"


def test_explicit_api_key(server):
    server.script(sse([chunk(content="x", finish_reason="stop")]))
    collect(server, api_key="sk-local")
    assert server.requests[0].headers["authorization"] == "Bearer sk-local"


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_then_text(server, field):
    server.script(
        sse(
            [
                chunk(role="assistant", **{field: ""}),
                chunk(**{field: "The user "}),
                chunk(**{field: "greets me."}),
                chunk(content="Hello"),
                chunk(content="!"),
                chunk(finish_reason="stop"),
            ]
        )
    )
    deltas = collect(server)
    assert reasoning_of(deltas) == "The user greets me."
    assert text_of(deltas) == "Hello!"
    # Reasoning strictly before text, each delta on one channel.
    kinds = ["r" if delta.reasoning else "c" if delta.content else "-" for delta in deltas]
    assert "".join(kinds) == "rrcc-"


def test_both_reasoning_spellings_in_one_delta_are_not_doubled(server):
    server.script(
        sse(
            [
                chunk(reasoning_content="think", reasoning="think"),
                chunk(content="ok", finish_reason="stop"),
            ]
        )
    )
    deltas = collect(server)
    assert reasoning_of(deltas) == "think"
    assert deltas[-1] == ChatDelta(content="ok", finish_reason="stop")


def test_xml_tool_call_split_across_many_chunks(server):
    text = (
        "I will read it.\n<read_file>\n<path>src/app.py</path>\n</read_file>\n"
        'Then: <write_to_file><path>a.py</path><content>\nif a < b: print("</content>")\n'
        "</content></write_to_file> 中文 ✓"
    )
    pieces = [text[i : i + 3] for i in range(0, len(text), 3)]
    server.script(sse([chunk(content=piece) for piece in pieces] + [chunk(finish_reason="stop")]))
    deltas = collect(server)
    assert [delta.content for delta in deltas[:-1]] == pieces
    assert text_of(deltas) == text


class ReadFile(BaseModel):
    path: str


class WriteToFile(BaseModel):
    path: str
    content: str


def test_wire_to_parser(server):
    from stream_parser import StreamToolParser

    text = (
        "<thinking>plan</thinking>Reading.\n<read_file>\n<path>src/app.py</path>\n</read_file>"
        '<write_to_file><path>a.py</path><content>\nif a < b: print("</content>")\n'
        "</content></write_to_file>"
    )
    events_in = [chunk(reasoning_content="r")]
    events_in += [chunk(content=text[i : i + 2]) for i in range(0, len(text), 2)]
    events_in += [chunk(finish_reason="stop"), chunk(no_choices=True, usage={"total_tokens": 5})]
    server.script(sse(events_in))

    async def main() -> list[Any]:
        parser = StreamToolParser({"read_file": ReadFile, "write_to_file": WriteToFile})
        async with OpenAIChatModel("m", base_url=server.url, max_retries=0) as model:
            return [event async for event in parser.aparse_stream(model.stream(USER))]

    events = asyncio.run(main())
    calls = [event.tool_instance for event in events if isinstance(event, ToolCallEvent)]
    assert calls == [
        ReadFile(path="src/app.py"),
        WriteToFile(path="a.py", content='if a < b: print("</content>")'),
    ]
    assert [event.kind for event in events if event.kind in ("thinking", "usage")] == [
        "thinking",  # the reasoning channel
        "thinking",  # <thinking> in the text
        "usage",
    ]
    assert not [event for event in events if event.kind == "error"]


class GetWeather(BaseModel):
    city: str
    unit: str = "celsius"


class Search(BaseModel):
    query: str
    limit: int = 5


def test_two_native_tool_calls_interleaved(server):
    server.script(
        sse(
            [
                chunk(role="assistant", content=None),
                chunk(tool_calls=[tool_fragment(0, id="call_a", name="get_weather", arguments="")]),
                chunk(tool_calls=[tool_fragment(1, id="call_b", name="search", arguments="")]),
                chunk(tool_calls=[tool_fragment(0, arguments='{"ci')]),
                chunk(tool_calls=[tool_fragment(1, arguments='{"query": "rain')]),
                chunk(tool_calls=[tool_fragment(0, arguments='ty": "北京"}')]),
                chunk(
                    tool_calls=[
                        tool_fragment(1, arguments='", "limit"'),
                        tool_fragment(0, arguments=""),
                    ]
                ),
                chunk(tool_calls=[tool_fragment(1, arguments=": 3}")]),
                chunk(finish_reason="tool_calls"),
            ]
        )
    )
    tools = [
        {"type": "function", "function": {"name": "get_weather", "parameters": {}}},
        {"type": "function", "function": {"name": "search", "parameters": {}}},
    ]
    deltas = collect(server, tools=tools, tool_choice="auto", parallel_tool_calls=True)

    fragments = [fragment for delta in deltas for fragment in delta.tool_calls]
    assert fragments[:2] == [
        ToolCallDelta(index=0, id="call_a", name="get_weather"),
        ToolCallDelta(index=1, id="call_b", name="search"),
    ]
    by_index: dict[int, str] = {}
    for fragment in fragments:
        by_index[fragment.index] = by_index.get(fragment.index, "") + (fragment.arguments or "")
    assert by_index == {0: '{"city": "北京"}', 1: '{"query": "rain", "limit": 3}'}
    assert finish_of(deltas) == ["tool_calls"]

    body = server.requests[0].body
    assert body["tools"] == tools
    assert body["tool_choice"] == "auto"
    assert body["parallel_tool_calls"] is True

    # The deltas are everything the core needs to rebuild the calls.
    accumulator = NativeCallAccumulator({"get_weather": GetWeather, "search": Search})
    events = []
    for delta in deltas:
        events += accumulator.feed(delta.tool_calls, 0)
    events += accumulator.finish(finish_of(deltas)[-1], 0)
    calls = [event for event in events if isinstance(event, ToolCallEvent)]
    assert [(c.call_index, c.call_id, c.tool_instance) for c in calls] == [
        (0, "call_a", GetWeather(city="北京")),
        (1, "call_b", Search(query="rain", limit=3)),
    ]


def test_tool_fragments_without_index(server):
    # Some servers (early Gemini compatibility layers) leave out the index.
    def fragment(**fields: Any) -> dict[str, Any]:
        data = tool_fragment(0, **fields)
        del data["index"]
        return data

    server.script(
        sse(
            [
                chunk(tool_calls=[fragment(id="c1", name="a", arguments="{}")]),
                chunk(tool_calls=[fragment(id="c2", name="b", arguments='{"x"')]),
                chunk(tool_calls=[fragment(arguments=": 1}")]),
                chunk(finish_reason="tool_calls"),
            ]
        )
    )
    fragments = [f for delta in collect(server) for f in delta.tool_calls]
    assert fragments == [
        ToolCallDelta(index=0, id="c1", name="a", arguments="{}"),
        ToolCallDelta(index=1, id="c2", name="b", arguments='{"x"'),
        ToolCallDelta(index=1, arguments=": 1}"),
    ]


def test_usage_at_the_end(server):
    usage = {
        "prompt_tokens": 12,
        "completion_tokens": 3,
        "total_tokens": 15,
        "prompt_cache_hit_tokens": 8,  # a provider extension (DeepSeek) is kept
    }
    server.script(
        sse(
            [
                chunk(content="Hi"),
                chunk(finish_reason="stop"),
                chunk(no_choices=True, usage=usage),
            ]
        )
    )
    deltas = collect(server)
    assert deltas[-2] == ChatDelta(finish_reason="stop")
    assert deltas[-1] == ChatDelta(usage=usage)
    assert type(deltas[-1].usage) is dict
    json.dumps(deltas[-1].usage)  # plain, JSON-safe


def test_usage_in_the_finish_chunk(server):
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    server.script(sse([chunk(content="Hi", finish_reason="stop", usage=usage)]))
    assert collect(server) == [ChatDelta(content="Hi", finish_reason="stop", usage=usage)]


def test_connection_dropped_mid_reply(server):
    server.script(
        sse(
            [
                chunk(content="Partial "),
                chunk(content="answ"),
                chunk(tool_calls=[tool_fragment(0, id="c", name="search", arguments='{"qu')]),
            ],
            drop=True,
        )
    )
    deltas = collect(server)  # must not raise
    assert text_of(deltas) == "Partial answ"
    assert deltas[-1].error is not None
    assert "mid-reply" in deltas[-1].error
    assert [d for d in deltas if d.error] == [deltas[-1]]
    assert finish_of(deltas) == []


def test_clean_end_without_finish_reason_is_reported(server):
    server.script(sse([chunk(content="cut"), chunk(content=" here")]))
    deltas = collect(server)
    assert text_of(deltas) == "cut here"
    assert deltas[-1].error == "the stream ended without a finish_reason"


def test_tolerated_sse_lines_are_ignored(server):
    server.script(
        sse(
            [
                ": keep-alive comment\n\n",
                chunk(content="a"),
                "this line is not an SSE field\n\n",
                "event: ping\ndata: {}\n\n",  # a chunk without choices
                chunk(content="b"),
                "data: " + json.dumps(chunk(content="c")) + "\r\n\r\n",  # CRLF line ends
                chunk(finish_reason="stop"),
            ]
        )
    )
    deltas = collect(server)
    assert text_of(deltas) == "abc"
    assert errors_of(deltas) == []
    assert finish_of(deltas) == ["stop"]


def test_malformed_json_event_ends_the_reply_with_an_error(server):
    server.script(
        sse(
            [
                chunk(content="kept "),
                chunk(content="text"),
                'data: {"choices": [{"delta": {"content": "bro\n\n',
                chunk(content="never seen"),
                chunk(finish_reason="stop"),
            ]
        )
    )
    deltas = collect(server)
    assert text_of(deltas) == "kept text"
    assert len(errors_of(deltas)) == 1
    assert deltas[-1].error is not None
    assert "JSONDecodeError" in deltas[-1].error


@pytest.mark.parametrize(
    "bad",
    [
        "id: 7\n\n",  # legal SSE without data, but the SDK decodes the empty data as JSON
        b"data: \xff\xfe\n\n",  # not UTF-8
    ],
)
def test_events_the_sdk_chokes_on_end_the_reply_with_an_error(server, bad):
    server.script(sse([chunk(content="kept"), bad, chunk(content="lost", finish_reason="stop")]))
    deltas = collect(server)  # never raises
    assert text_of(deltas) == "kept"
    assert deltas[-1].error is not None
    assert deltas[-1].error.startswith("transport error mid-reply: ")


def test_error_object_mid_stream(server):
    server.script(
        sse(
            [
                chunk(content="so far"),
                {"error": {"message": "model overloaded", "type": "server_error"}},
                chunk(finish_reason="stop"),
            ]
        )
    )
    deltas = collect(server)
    assert text_of(deltas) == "so far"
    assert deltas[-1].error is not None
    assert "model overloaded" in deltas[-1].error


def test_odd_shapes_are_ignored(server):
    server.script(
        sse(
            [
                {"id": "x", "object": "chat.completion.chunk", "created": 1, "model": "m"},
                {"choices": "not a list"},
                "data: [1, 2]\n\n",  # JSON, but not an object
                "data: null\n\n",
                {"choices": [{"index": 0, "delta": "not an object"}]},
                {"choices": [{"index": 0, "delta": {"content": 42, "tool_calls": "nope"}}]},
                {"choices": [{"index": 1, "delta": {"content": "second choice"}}]},
                chunk(content="ok"),
                chunk(finish_reason="stop"),
            ]
        )
    )
    deltas = collect(server)
    assert deltas == [ChatDelta(content="ok"), ChatDelta(finish_reason="stop")]


def test_unknown_delta_fields(server):
    server.script(
        sse(
            [
                chunk(
                    content="Hello",
                    extra_delta={
                        "audio": None,
                        "annotations": [],
                        "some_vendor_field": {"nested": [1, 2]},
                        "reasoning_details": [{"type": "reasoning.text", "text": "x"}],
                    },
                ),
                chunk(content=" there", extra_delta={"function_call": None, "refusal": None}),
                {**chunk(finish_reason="stop"), "vendor_top_level": True, "service_tier": "odd"},
            ]
        )
    )
    deltas = collect(server)
    assert deltas == [
        ChatDelta(content="Hello"),
        ChatDelta(content=" there"),
        ChatDelta(finish_reason="stop"),
    ]


def test_refusal_text_is_delivered_as_content(server):
    server.script(sse([chunk(extra_delta={"refusal": "I can't help."}, finish_reason="stop")]))
    assert text_of(collect(server)) == "I can't help."


def test_http_500_raises_model_error(server):
    server.script(error(500, "the GPU caught fire"))
    with pytest.raises(ModelError) as info:
        collect(server)
    assert info.value.status_code == 500
    assert info.value.message == "the GPU caught fire"
    assert str(info.value) == "500: the GPU caught fire"
    assert isinstance(info.value, StreamParserError)
    assert isinstance(info.value.body, dict)
    assert len(server.requests) == 1  # max_retries=0


def test_http_429_raises_model_error_with_retry_after(server):
    server.script(error(429, "slow down", headers={"retry-after": "7"}))
    with pytest.raises(ModelError) as info:
        collect(server)
    assert info.value.status_code == 429
    assert info.value.retry_after == 7.0
    assert "slow down" in str(info.value)
    assert len(server.requests) == 1


def test_retries_are_configurable(server):
    server.script(
        error(503, "busy", headers={"retry-after-ms": "1"}),
        error(429, "busy", headers={"retry-after-ms": "1"}),
        sse([chunk(content="finally", finish_reason="stop")]),
    )
    deltas = collect(server, max_retries=2)
    assert text_of(deltas) == "finally"
    assert len(server.requests) == 3


def test_connection_refused_raises_model_error():
    with SSEServer() as gone:
        url = gone.url

    async def main() -> None:
        async with OpenAIChatModel("m", base_url=url, max_retries=0) as model:
            with pytest.raises(ModelError) as info:
                async for _ in model.stream(USER):
                    pass
            assert info.value.status_code is None
            assert "APIConnectionError" in str(info.value)

    asyncio.run(main())


def test_options_pass_through(server):
    server.script(sse([chunk(content="x", finish_reason="stop")]))
    server.script(sse([chunk(content="y", finish_reason="stop")]))

    async def main() -> None:
        async with OpenAIChatModel(
            "base-model",
            base_url=server.url,
            max_retries=0,
            temperature=0.2,
            top_k=20,
            chat_template_kwargs={"enable_thinking": False},
        ) as model:
            assert model.defaults["temperature"] == 0.2
            async for _ in model.stream(
                USER,
                temperature=0.7,
                max_tokens=64,
                repetition_penalty=1.05,
                extra_body={"min_p": 0.1},
                extra_headers={"X-Trace": "abc"},
                stream_options={"continuous_usage_stats": True},
            ):
                pass
            async for _ in model.stream(USER, model="other-model", stream_options=None, tools=[]):
                pass

    asyncio.run(main())
    first, second = (request.body for request in server.requests)
    assert first["model"] == "base-model"
    assert first["temperature"] == 0.7  # per-call wins over defaults
    assert first["max_tokens"] == 64
    # Unknown options travel in the body through extra_body.
    assert first["top_k"] == 20
    assert first["repetition_penalty"] == 1.05
    assert first["min_p"] == 0.1
    assert first["chat_template_kwargs"] == {"enable_thinking": False}
    assert first["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    assert server.requests[0].headers["x-trace"] == "abc"
    assert second["model"] == "other-model"
    assert "stream_options" not in second
    assert "tools" not in second  # an empty list is left out


def test_without_a_readable_sdk_signature_the_request_is_the_same(server, monkeypatch):
    # An SDK whose create() has no signature to read: its own request options stay
    # keywords, every other option travels through extra_body, and the body is the same.
    from stream_parser.llm import openai as client_module

    def requests() -> list[dict[str, Any]]:
        server.requests.clear()
        server.script(sse([chunk(content="x", finish_reason="stop")]))

        async def main() -> None:
            async with OpenAIChatModel("m", base_url=server.url, max_retries=0) as model:
                options = {"temperature": 0.7, "max_tokens": 64, "top_k": 20}
                async for _ in model.stream(USER, extra_headers={"X-Trace": "abc"}, **options):
                    pass

        asyncio.run(main())
        assert server.requests[0].headers["x-trace"] == "abc"
        return [request.body for request in server.requests]

    normal = requests()
    monkeypatch.setattr(
        client_module,
        "_known_parameters",
        lambda client: frozenset(client_module._FALLBACK_PARAMETERS),
    )
    assert requests() == normal
    assert normal[0]["temperature"] == 0.7 and normal[0]["top_k"] == 20


def test_multimodal_messages_are_sent_verbatim(server):
    server.script(sse([chunk(content="a cat", finish_reason="stop")]))
    messages: list[Any] = [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What is this?"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "look", "arguments": "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "name": "look", "content": "a cat"},
    ]
    sent = copy.deepcopy(messages)
    collect(server, messages)
    # Verbatim but for the one change every server takes: an assistant message of tool
    # calls alone is sent with content "" (llama.cpp refuses null); the caller's copy
    # keeps None.
    sent[2]["content"] = ""
    assert server.requests[0].body["messages"] == sent
    assert messages[2]["content"] is None


@pytest.mark.parametrize("content", ["missing", None])
def test_an_assistant_message_of_tool_calls_alone_is_sent_with_empty_content(server, content):
    server.script(sse([chunk(content="ok", finish_reason="stop")]))
    assistant: dict[str, Any] = {
        "role": "assistant",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "add", "arguments": "{}"}}
        ],
    }
    if content is None:
        assistant["content"] = None
    messages: list[Any] = [
        {"role": "user", "content": "Add."},
        assistant,
        {"role": "tool", "tool_call_id": "c1", "content": "3"},
    ]
    deltas = collect(server, messages)
    assert server.history_problems == []  # the loopback server refuses null, as llama.cpp
    assert "".join(d.content or "" for d in deltas) == "ok"
    assert server.requests[0].body["messages"][1]["content"] == ""
    assert ("content" in assistant) == (content is None)  # the caller's message unchanged


def test_the_loopback_server_refuses_null_assistant_content_as_llama_cpp_does(server):
    problems = server.check(
        "POST",
        "/v1/chat/completions",
        {"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": None}]},
    )
    assert any("needs a string content" in p for p in problems)


def test_stream_option_is_refused(server):
    async def main() -> None:
        async with OpenAIChatModel("m", base_url=server.url, max_retries=0) as model:
            with pytest.raises(ConfigError):
                async for _ in model.stream(USER, stream=False):
                    pass

    asyncio.run(main())
    with pytest.raises(ConfigError):
        OpenAIChatModel("m", stream=True)
    with pytest.raises(ConfigError):
        OpenAIChatModel("")
    assert server.requests == []


def test_given_client_is_used_and_not_closed(server):
    server.script(sse([chunk(content="mine", finish_reason="stop")]))

    async def main() -> None:
        client = openai.AsyncOpenAI(base_url=server.url, api_key="k", max_retries=0)
        try:
            with pytest.raises(ConfigError):
                OpenAIChatModel("m", client=client, base_url=server.url)
            model = OpenAIChatModel("m", client=client)
            assert model.client is client
            deltas = [delta async for delta in model.stream(USER)]
            await model.aclose()
            assert not client.is_closed()
            assert text_of(deltas) == "mine"
        finally:
            await client.close()

    asyncio.run(main())


def test_consumer_stops_early(server):
    server.script(sse([chunk(content=str(i)) for i in range(50)] + [chunk(finish_reason="stop")]))

    async def main() -> list[str]:
        seen = []
        async with OpenAIChatModel("m", base_url=server.url, max_retries=0) as model:
            stream = model.stream(USER)
            async for delta in stream:
                seen.append(delta.content or "")
                if len(seen) == 3:
                    break
            await stream.aclose()  # type: ignore[attr-defined]
        return seen

    assert asyncio.run(main()) == ["0", "1", "2"]
