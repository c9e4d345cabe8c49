"""ScriptedModel and FunctionModel: network-free ChatModels for tests."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel

from stream_parser.core._native import NativeCallAccumulator
from stream_parser.core.chunks import ChatDelta, ToolCallDelta
from stream_parser.core.events import ToolCallEvent
from stream_parser.errors import ConfigError, StreamParserError
from stream_parser.llm import ChatModel, ModelError
from stream_parser.testing.models import (
    ChatRequest,
    FunctionModel,
    NativeCall,
    ScriptedModel,
    ScriptedReply,
    ScriptExhaustedError,
)

USER: list[Any] = [{"role": "user", "content": "hi"}]


def drain(stream: AsyncIterator[ChatDelta]) -> list[ChatDelta]:
    async def main() -> list[ChatDelta]:
        return [delta async for delta in stream]

    return asyncio.run(main())


def text_of(deltas: list[ChatDelta]) -> str:
    return "".join(delta.content or "" for delta in deltas)


def test_text_in_fixed_chunks():
    model = ScriptedModel(["Hello, world!"], chunk_size=5)
    assert isinstance(model, ChatModel)
    deltas = drain(model.stream(USER))
    assert deltas == [
        ChatDelta(content="Hello"),
        ChatDelta(content=", wor"),
        ChatDelta(content="ld!"),
        ChatDelta(finish_reason="stop"),
    ]


def test_one_character_chunks_and_empty_reply():
    model = ScriptedModel(["<think>", ""], chunk_size=1)
    assert [d.content for d in drain(model.stream(USER))][:-1] == list("<think>")
    assert drain(model.stream(USER)) == [ChatDelta(finish_reason="stop")]


def test_random_chunks_are_seeded():
    text = "The quick brown fox jumps over the lazy dog. " * 4

    def cuts(seed: int) -> list[str]:
        model = ScriptedModel([text], chunk_size=(1, 7), seed=seed)
        return [d.content for d in drain(model.stream(USER)) if d.content]

    first = cuts(42)
    assert "".join(first) == text
    assert all(1 <= len(piece) <= 7 for piece in first)
    assert len({len(piece) for piece in first}) > 1
    assert cuts(42) == first
    assert cuts(43) != first


@pytest.mark.parametrize("chunk_size", [0, -1, (3, 2), (0, 4), (1,), "4", (1, 2, 3)])
def test_bad_chunk_size(chunk_size):
    with pytest.raises(ConfigError):
        ScriptedModel(["x"], chunk_size=chunk_size)


class GetWeather(BaseModel):
    city: str


class Search(BaseModel):
    query: str
    limit: int = 5


def test_native_calls_stream_as_fragments():
    model = ScriptedModel(
        [
            [
                NativeCall("get_weather", {"city": "北京"}),
                NativeCall("search", {"query": "x"}, id="s1"),
            ]
        ],
        chunk_size=6,
    )
    deltas = drain(model.stream(USER, tools=[{"type": "function"}]))
    assert deltas[-1] == ChatDelta(finish_reason="tool_calls")
    fragments = [fragment for delta in deltas for fragment in delta.tool_calls]
    assert all(len(delta.tool_calls) == 1 for delta in deltas[:-1])
    assert fragments[0] == ToolCallDelta(index=0, id="call_1_0", name="get_weather")
    assert fragments[1:4] == [
        ToolCallDelta(index=0, arguments='{"city'),
        ToolCallDelta(index=0, arguments='": "北京'),
        ToolCallDelta(index=0, arguments='"}'),
    ]
    assert fragments[4] == ToolCallDelta(index=1, id="s1", name="search")
    assert "".join(f.arguments or "" for f in fragments if f.index == 1) == '{"query": "x"}'

    accumulator = NativeCallAccumulator({"get_weather": GetWeather, "search": Search})
    events = []
    for delta in deltas:
        events += accumulator.feed(delta.tool_calls, 0)
    events += accumulator.finish(deltas[-1].finish_reason, 0)
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [(c.call_id, c.tool_instance) for c in calls] == [
        ("call_1_0", GetWeather(city="北京")),
        ("s1", Search(query="x")),
    ]


def test_interleaved_tool_calls():
    model = ScriptedModel(
        [[NativeCall("a", '{"x": 1}'), NativeCall("b", "{}"), NativeCall("c", '{"long": true}')]],
        chunk_size=4,
        interleave_tool_calls=True,
    )
    deltas = drain(model.stream(USER))
    order = [(d.tool_calls[0].index, d.tool_calls[0].name) for d in deltas if d.tool_calls]
    assert order[:3] == [(0, "a"), (1, "b"), (2, "c")]
    assert [index for index, _ in order[3:]] == [0, 1, 2, 0, 2, 2, 2]
    by_index: dict[int, str] = {}
    for delta in deltas:
        for f in delta.tool_calls:
            by_index[f.index] = by_index.get(f.index, "") + (f.arguments or "")
    assert by_index == {0: '{"x": 1}', 1: "{}", 2: '{"long": true}'}


def test_string_arguments_are_sent_verbatim():
    model = ScriptedModel([[NativeCall("search", "{not json")]], chunk_size=100)
    deltas = drain(model.stream(USER))
    assert deltas[1] == ChatDelta(tool_calls=(ToolCallDelta(index=0, arguments="{not json"),))


def test_full_reply_order():
    usage = {"prompt_tokens": 3, "completion_tokens": 5, "total_tokens": 8}
    model = ScriptedModel(
        [
            ScriptedReply(
                reasoning="Think.",
                content="<read_file><path>a</path></read_file>",
                tool_calls=[NativeCall("search", {"query": "q"})],
                usage=usage,
            )
        ],
        chunk_size=20,
    )
    deltas = drain(model.stream(USER))
    assert deltas[0] == ChatDelta(reasoning="Think.")
    assert text_of(deltas) == "<read_file><path>a</path></read_file>"
    assert deltas[-2] == ChatDelta(finish_reason="tool_calls")
    assert deltas[-1] == ChatDelta(usage=usage)

    def kind(d: ChatDelta) -> str:
        fields = ("reasoning", "content", "tool_calls", "finish_reason", "usage")
        return next(name[0] for name in fields if getattr(d, name))

    kinds = [kind(d) for d in deltas]
    assert "".join(kinds) == "rccttfu"  # reasoning, content, tool calls, finish, usage


def test_scripted_finish_reason():
    model = ScriptedModel([ScriptedReply(content="cut of", finish_reason="length")])
    assert drain(model.stream(USER))[-1] == ChatDelta(finish_reason="length")


def test_scripted_transport_error():
    model = ScriptedModel(
        [
            ScriptedReply(
                content="partial",
                tool_calls=[NativeCall("search", '{"que')],
                usage={"total_tokens": 1},
                error="connection reset",
            )
        ]
    )
    deltas = drain(model.stream(USER))
    assert text_of(deltas) == "partial"
    assert deltas[-1] == ChatDelta(error="connection reset")
    assert not any(d.finish_reason or d.usage for d in deltas)


def test_exception_reply_is_raised_when_iterated():
    model = ScriptedModel([ModelError("overloaded", status_code=529), "after"])
    stream = model.stream(USER)  # not raised yet: like an HTTP error, on first iteration
    with pytest.raises(ModelError) as info:
        drain(stream)
    assert info.value.status_code == 529
    assert text_of(drain(model.stream(USER))) == "after"


def test_requests_are_recorded_as_sent_without_copying_the_messages():
    model = ScriptedModel(["a", "b"])
    messages: list[Any] = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]
    tools = [{"type": "function", "function": {"name": "search", "parameters": {}}}]
    options = {"temperature": 0.1, "tool_choice": "auto"}
    drain(model.stream(messages, tools=tools, **options))
    messages.append({"role": "assistant", "content": "a"})
    drain(model.stream(messages))
    first, second = model.requests
    assert first == ChatRequest(
        messages=[{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
        tools=tools,
        options={"temperature": 0.1, "tool_choice": "auto"},
    )
    # The lists are the record's own (a message added later is not in it); the messages
    # in them are the ones sent, which no agent changes once sent.
    assert first.messages is not messages and first.messages[0] is messages[0]
    assert first.tools is not tools
    assert second.tools is None and second.options == {}
    assert len(second.messages) == 2


def test_running_out_of_replies():
    model = ScriptedModel(["only one"])
    drain(model.stream(USER))
    assert model.remaining == 0
    with pytest.raises(ScriptExhaustedError, match=r"ran out of replies: it had 1 .* #2"):
        model.stream([{"role": "user", "content": "again?"}])
    assert isinstance(ScriptExhaustedError("x"), StreamParserError)
    assert isinstance(ScriptExhaustedError("x"), RuntimeError)
    assert len(model.requests) == 2  # the failed request is recorded too
    model.add_replies("more")
    assert model.remaining == 1
    assert text_of(drain(model.stream(USER))) == "more"


def test_bad_reply_type():
    model = ScriptedModel([[{"name": "not a NativeCall"}]])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="NativeCall"):
        drain(model.stream(USER))


def test_function_model_with_messages():
    model = FunctionModel(lambda messages: f"You said: {messages[-1]['content']}", chunk_size=3)
    assert isinstance(model, ChatModel)
    deltas = drain(model.stream([{"role": "user", "content": "ping"}], seed=1))
    assert text_of(deltas) == "You said: ping"
    assert deltas[0] == ChatDelta(content="You")
    assert deltas[-1] == ChatDelta(finish_reason="stop")
    assert model.requests[0].options == {"seed": 1}


def test_function_model_with_tools_and_async():
    seen: list[Any] = []

    async def reply(messages: list[Any], tools: list[Any] | None) -> Any:
        await asyncio.sleep(0)
        seen.append(tools)
        messages.clear()  # the function gets a copy
        if tools:
            return [NativeCall(tools[0]["function"]["name"], {"query": "q"})]
        return ScriptedReply(content="no tools", finish_reason="length")

    model = FunctionModel(reply)
    tools = [{"type": "function", "function": {"name": "search", "parameters": {}}}]
    with_tools = drain(model.stream(USER, tools=tools))
    assert with_tools[0].tool_calls[0].name == "search"
    assert with_tools[-1].finish_reason == "tool_calls"
    without = drain(model.stream(USER))
    assert text_of(without) == "no tools"
    assert without[-1].finish_reason == "length"
    assert seen == [tools, None]
    assert model.requests[0].messages == USER


def test_function_model_errors():
    def failing(messages: list[Any]) -> Any:
        if len(messages) > 1:
            raise ValueError("a bug in the test function")
        return ModelError("rate limited", status_code=429)

    model = FunctionModel(failing)
    with pytest.raises(ModelError):
        drain(model.stream(USER))
    with pytest.raises(ValueError, match="bug"):
        drain(model.stream(USER * 2))
    assert len(model.requests) == 2


def test_function_model_signature_detection():
    def varargs(*args: Any) -> str:
        return str(len(args))

    def with_default(messages: list[Any], tools: Any = None) -> str:
        return "tools" if tools is not None else "none"

    assert text_of(drain(FunctionModel(varargs).stream(USER))) == "2"
    assert text_of(drain(FunctionModel(with_default).stream(USER, tools=[]))) == "tools"
    # No signature to read (a builtin type): called with the messages only.
    assert text_of(drain(FunctionModel(str).stream(USER))) == str(USER)
    with pytest.raises(TypeError, match="a reply must be"):
        drain(FunctionModel(len).stream(USER))


class ReadFile(BaseModel):
    path: str


def parse(model: ScriptedModel) -> list[Any]:
    from stream_parser import StreamToolParser

    async def main() -> list[Any]:
        parser = StreamToolParser({"read_file": ReadFile, "get_weather": GetWeather})
        return [event async for event in parser.aparse_stream(model.stream(USER))]

    return asyncio.run(main())


def test_scripted_replies_through_the_parser():
    text = "Sure.\n<read_file>\n<path>a.py</path>\n</read_file>\nDone."
    model = ScriptedModel(
        [
            ScriptedReply(
                reasoning="Let me think.",
                content=text,
                tool_calls=[NativeCall("get_weather", {"city": "Paris"})],
                usage={"total_tokens": 9},
            ),
            ScriptedReply(tool_calls=[NativeCall("get_weather", '{"ci')], finish_reason="length"),
            ScriptedReply(tool_calls=[NativeCall("get_weather", '{"city": "x"}')], error="reset"),
        ],
        chunk_size=(1, 5),
        seed=7,
    )
    events = parse(model)
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [c.tool_instance for c in calls] == [ReadFile(path="a.py"), GetWeather(city="Paris")]
    assert "".join(e.text for e in events if e.kind == "text") == "Sure.\n\nDone."
    assert any(e.kind == "usage" for e in events)

    cut = parse(model)
    assert not any(isinstance(e, ToolCallEvent) for e in cut)
    assert [e.error_type for e in cut if e.kind == "error"] == ["unclosed_tool", "truncated"]

    dropped = parse(model)
    assert not any(isinstance(e, ToolCallEvent) for e in dropped)
    assert {e.error_type for e in dropped if e.kind == "error"} == {"stream_error", "unclosed_tool"}
