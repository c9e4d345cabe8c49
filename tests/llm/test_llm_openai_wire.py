"""OpenAIChatModel and what a server may really send: split surrogate pairs, error frames,
JSON answers to a streaming request, keep-alives for ever, connections left broken.

Like ``test_llm_openai.py``: the real ``openai`` SDK against the loopback server.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from typing import Any

import pytest
from pydantic import BaseModel

from stream_parser import StreamToolParser
from stream_parser.core.chunks import ChatDelta, ToolCallDelta
from stream_parser.core.events import ParseErrorEvent, ParseEvent, ToolCallEvent
from stream_parser.errors import ConfigError
from stream_parser.llm import ModelError, OpenAIChatModel

from .sse_server import SSEServer, chunk, json_answer, sse, tool_fragment

pytest.importorskip("openai")

USER: list[Any] = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server():
    with SSEServer() as running:
        yield running


def collect(server: SSEServer, messages: Any = None, **kwargs: Any) -> list[ChatDelta]:
    """Stream one reply with a fresh model (no retries) and return every delta."""
    model_options = {
        key: kwargs.pop(key) for key in ("max_retries", "reply_timeout", "timeout") if key in kwargs
    }
    model_options.setdefault("max_retries", 0)

    async def main() -> list[ChatDelta]:
        async with OpenAIChatModel("test-model", base_url=server.url, **model_options) as model:
            return [delta async for delta in model.stream(messages or USER, **kwargs)]

    return asyncio.run(main())


def text_of(deltas: list[ChatDelta]) -> str:
    return "".join(delta.content or "" for delta in deltas)


def errors_of(deltas: list[ChatDelta]) -> list[str]:
    return [delta.error for delta in deltas if delta.error]


def assert_valid_unicode(deltas: list[ChatDelta]) -> None:
    for delta in deltas:
        for text in (delta.content, delta.reasoning, delta.error):
            if text is not None:
                text.encode("utf-8")  # raises on a lone surrogate
        for fragment in delta.tool_calls:
            if fragment.arguments is not None:
                fragment.arguments.encode("utf-8")


def utf16_units(text: str) -> str:
    """``text`` as a string of UTF-16 code units: each astral character as its pair."""
    data = text.encode("utf-16-le")
    return "".join(chr(int.from_bytes(data[i : i + 2], "little")) for i in range(0, len(data), 2))


# --- 1. surrogates --------------------------------------------------------------------------


def test_a_surrogate_pair_split_across_two_events_is_one_character(server):
    server.script(
        sse(
            [
                'data: {"choices": [{"index": 0, "delta": {"content": "\\ud83d"}}]}\n\n',
                'data: {"choices": [{"index": 0, "delta": {"content": "\\ude00"}}]}\n\n',
                chunk(finish_reason="stop"),
            ]
        )
    )
    deltas = collect(server)
    assert text_of(deltas) == "😀"
    assert [delta.content for delta in deltas] == ["😀", None]
    assert errors_of(deltas) == []


TEXT = "a😀 b𝄞c 中文 🇫🇷!"
UNITS = utf16_units(TEXT)


@pytest.mark.parametrize("cut", range(len(UNITS) + 1))
@pytest.mark.parametrize("channel", ["content", "reasoning_content", "arguments"])
def test_any_split_in_utf16_units_gives_the_text_back(server, cut, channel):
    pieces = [UNITS[:cut], UNITS[cut:]]

    def event(piece: str) -> dict[str, Any]:
        if channel == "arguments":
            return chunk(tool_calls=[tool_fragment(0, arguments=piece)])
        return chunk(**{channel: piece})

    events = (
        [chunk(tool_calls=[tool_fragment(0, id="c", name="f")])] if channel == "arguments" else []
    )
    events += [event(piece) for piece in pieces] + [chunk(finish_reason="stop")]
    server.script(sse(events))
    deltas = collect(server)
    assert_valid_unicode(deltas)
    if channel == "content":
        assert text_of(deltas) == TEXT
    elif channel == "reasoning_content":
        assert "".join(delta.reasoning or "" for delta in deltas) == TEXT
    else:
        fragments = [f for delta in deltas for f in delta.tool_calls]
        assert "".join(f.arguments or "" for f in fragments) == TEXT
        assert {f.index for f in fragments} == {0}
    assert errors_of(deltas) == []


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        (["x\ud83d"], "x\ufffd"),  # a high surrogate, then the finish reason
        (["\ude00y"], "\ufffdy"),  # a low surrogate alone
        (["\ud83d", "z"], "\ufffdz"),  # a high surrogate followed by no low one
        (["\ud83d", "\ud83d", "\ude00"], "\ufffd😀"),
        (["a\ud83d\ude00\ude00"], "a😀\ufffd"),
    ],
)
def test_lone_surrogates_become_replacement_characters(server, pieces, expected):
    server.script(sse([chunk(content=p) for p in pieces] + [chunk(finish_reason="stop")]))
    deltas = collect(server)
    assert_valid_unicode(deltas)
    assert text_of(deltas) == expected
    assert deltas[-1].finish_reason == "stop"


def test_a_held_half_pair_is_delivered_before_a_failure(server):
    server.script(sse([chunk(content="ok"), chunk(reasoning_content="r\ud83d")], drop=True))
    deltas = collect(server)
    assert_valid_unicode(deltas)
    assert "".join(delta.reasoning or "" for delta in deltas) == "r\ufffd"
    assert deltas[-1].error is not None and "mid-reply" in deltas[-1].error


def test_lone_surrogates_in_the_request_go_out_as_replacement_characters(server):
    server.script(sse([chunk(content="x", finish_reason="stop")]))
    messages: list[Any] = [
        {"role": "system", "content": "be \ud800 brief"},
        {
            "role": "user",
            "content": [{"type": "text", "text": "half \udc00 and whole \ud83d\ude00"}],
        },
    ]
    tools = [{"type": "function", "function": {"name": "f", "description": "d\udfff"}}]
    original = copy.deepcopy(messages)
    deltas = collect(server, messages, tools=tools, stop=["\ud83d"], top_k_note="\udead")
    assert text_of(deltas) == "x"
    body = server.requests[0].body
    assert body["messages"][0]["content"] == "be \ufffd brief"
    assert body["messages"][1]["content"][0]["text"] == "half \ufffd and whole 😀"
    assert body["tools"][0]["function"]["description"] == "d\ufffd"
    assert body["stop"] == ["\ufffd"]
    assert body["top_k_note"] == "\ufffd"  # through extra_body
    # The caller's history keeps what it had.
    assert messages == original
    assert messages[0]["content"] == "be \ud800 brief"
    assert tools[0]["function"]["description"] == "d\udfff"


@pytest.mark.parametrize(
    "options",
    [
        {"temperature": float("nan")},  # JSON cannot encode it
        {"extra_body": {"data": object()}},  # nor this
        {"extra_headers": {"X-Note": "caf\u00e9 \u20ac"}},  # not Latin-1
    ],
    ids=["nan", "object", "header"],
)
def test_a_request_that_cannot_be_sent_is_a_model_error(server, options):
    with pytest.raises(ModelError) as info:
        collect(server, **options)
    assert info.value.status_code is None
    assert "could not be sent" in str(info.value)
    assert info.value.__cause__ is not None
    assert server.requests == []


# --- 2. the stream's own errors -------------------------------------------------------------


@pytest.mark.parametrize(
    "frame",
    [
        'event: error\ndata: {"error": {"message": "overloaded", "type": "server_error"}}\n\n',
        'event: error\ndata: {"message": "overloaded"}\n\n',
        "event: error\ndata: overloaded\n\n",
        'error: {"code": 500, "message": "overloaded", "type": "server_error"}\n\n',  # llama.cpp
        'data: {"error": "overloaded"}\n\n',
        'data: {"error": {"message": "overloaded", "code": 503}}\n\n',
        'data: {"object": "error", "message": "overloaded", "type": "X", "code": 400}\n\n',  # vLLM
    ],
    ids=["event-error", "event-message", "event-text", "error-line", "string", "object", "vllm"],
)
def test_error_frames_end_the_reply_with_an_error_delta(server, frame):
    server.script(
        sse([chunk(content="so far"), frame, chunk(content="never"), chunk(finish_reason="stop")])
    )
    deltas = collect(server)  # never raises
    assert text_of(deltas) == "so far"
    assert errors_of(deltas) == [deltas[-1].error]
    assert deltas[-1].error is not None
    assert deltas[-1].error.startswith("the server sent an error in the stream: ")
    assert "overloaded" in deltas[-1].error


def test_an_error_frame_is_a_stream_error_event_in_the_parser(server):
    server.script(sse([chunk(content="Hello"), "event: error\ndata: {}\n\n"]))

    async def main() -> list[ParseEvent]:
        parser = StreamToolParser({})
        async with OpenAIChatModel("m", base_url=server.url, max_retries=0) as model:
            return [event async for event in parser.aparse_stream(model.stream(USER))]

    events = asyncio.run(main())
    errors = [event for event in events if isinstance(event, ParseErrorEvent)]
    assert [error.error_type for error in errors] == ["stream_error"]
    assert "the server sent an error in the stream" in errors[0].message


class GetWeather(BaseModel):
    city: str


COMPLETION: dict[str, Any] = {
    "id": "chatcmpl-1",
    "object": "chat.completion",
    "created": 1700000000,
    "model": "test-model",
    "choices": [
        {
            "index": 0,
            "message": {
                "role": "assistant",
                "content": "Let me look.",
                "reasoning_content": "The user wants the weather.",
                "tool_calls": [
                    {
                        "id": "call_a",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    },
                    {
                        "id": "call_b",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": {"city": "Oslo"}},
                    },
                ],
            },
            "finish_reason": "tool_calls",
        }
    ],
    "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
}


def test_a_whole_json_completion_is_read_as_the_reply(server):
    server.script(json_answer(COMPLETION))
    deltas = collect(server)
    assert deltas == [
        ChatDelta(
            content="Let me look.",
            reasoning="The user wants the weather.",
            tool_calls=(
                ToolCallDelta(
                    index=0, id="call_a", name="get_weather", arguments='{"city": "Paris"}'
                ),
                ToolCallDelta(
                    index=1, id="call_b", name="get_weather", arguments='{"city": "Oslo"}'
                ),
            ),
            usage=COMPLETION["usage"],
            finish_reason="tool_calls",
        )
    ]
    assert server.requests[0].body["stream"] is True

    server.script(json_answer(COMPLETION))

    async def main() -> list[ParseEvent]:
        parser = StreamToolParser({"get_weather": GetWeather})
        async with OpenAIChatModel("m", base_url=server.url, max_retries=0) as model:
            return [event async for event in parser.aparse_stream(model.stream(USER))]

    calls = [e for e in asyncio.run(main()) if isinstance(e, ToolCallEvent)]
    assert [(c.call_id, c.tool_instance) for c in calls] == [
        ("call_a", GetWeather(city="Paris")),
        ("call_b", GetWeather(city="Oslo")),
    ]


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            {"error": {"message": "context too long", "code": 400}},
            "the server answered with an error instead of a stream: context too long",
        ),
        ({"object": "list", "data": []}, "JSON that is not a chat completion"),
        ("just a string", "JSON that is not a chat completion"),
    ],
)
def test_other_json_answers_are_reported_as_what_they_are(server, body, expected):
    server.script(json_answer(body))
    deltas = collect(server)
    assert len(deltas) == 1
    assert deltas[0].error is not None
    assert expected in deltas[0].error
    assert "finish_reason" not in deltas[0].error


def test_a_json_answer_that_does_not_parse(server):
    server.script(json_answer(b'{"choices": [{"message": '))
    deltas = collect(server)
    assert deltas[-1].error is not None
    assert "JSON instead of a stream, and it does not parse" in deltas[-1].error


def test_a_json_completion_without_finish_reason(server):
    body = copy.deepcopy(COMPLETION)
    del body["choices"][0]["finish_reason"]
    del body["choices"][0]["message"]["tool_calls"]
    server.script(json_answer(body))
    deltas = collect(server)
    assert text_of(deltas) == "Let me look."
    assert deltas[-1].error == "the server's JSON answer has no finish_reason"


def test_an_empty_stream_is_reported_as_such(server):
    server.script(sse([], done=False))
    deltas = collect(server)
    assert errors_of(deltas) == [
        "the stream ended without a finish_reason (the server sent no data; with llama.cpp "
        "this usually means the prompt is longer than the server's context size)"
    ]


# --- reply_timeout ----------------------------------------------------------------------------


def test_reply_timeout_bounds_a_reply_of_keep_alives(server):
    server.script(sse([chunk(content="thinking about it")], done=False, ping_every=0.05))
    started = time.monotonic()
    deltas = collect(server, reply_timeout=0.5)
    elapsed = time.monotonic() - started
    assert 0.4 < elapsed < 5
    assert text_of(deltas) == "thinking about it"
    assert errors_of(deltas) == ["the reply took longer than reply_timeout (0.5 s)"]


def test_reply_timeout_before_the_answer_is_a_model_error(server):
    server.script(sse([chunk(content="late", finish_reason="stop")], delay=1.5))
    started = time.monotonic()
    with pytest.raises(ModelError) as info:
        collect(server, reply_timeout=0.3)
    assert time.monotonic() - started < 1.4
    assert "reply_timeout (0.3 s)" in str(info.value)


def test_reply_timeout_per_call_and_not_sent(server):
    server.script(
        sse([chunk(content="a")], done=False, ping_every=0.05),
        sse([chunk(content="b", finish_reason="stop")]),
    )

    async def main() -> tuple[list[ChatDelta], list[ChatDelta]]:
        async with OpenAIChatModel(
            "m", base_url=server.url, max_retries=0, reply_timeout=60
        ) as model:
            assert model.reply_timeout == 60
            first = [d async for d in model.stream(USER, reply_timeout=0.3)]
            second = [d async for d in model.stream(USER)]
            return first, second

    first, second = asyncio.run(main())
    assert errors_of(first) == ["the reply took longer than reply_timeout (0.3 s)"]
    assert text_of(second) == "b" and errors_of(second) == []
    assert all("reply_timeout" not in request.body for request in server.requests)


@pytest.mark.parametrize("bad", [0, -1, float("nan"), "5", True])
def test_bad_reply_timeout_is_a_config_error(server, bad):
    with pytest.raises(ConfigError):
        OpenAIChatModel("m", base_url=server.url, reply_timeout=bad)

    async def main() -> None:
        async with OpenAIChatModel("m", base_url=server.url, max_retries=0) as model:
            async for _ in model.stream(USER, reply_timeout=bad):
                pass

    with pytest.raises(ConfigError):
        asyncio.run(main())
    assert server.requests == []


# --- the connection after an abnormal end -----------------------------------------------------


def two_replies(server: SSEServer) -> tuple[list[ChatDelta], list[ChatDelta] | ModelError]:
    """Two replies on one model (one connection pool), with no retries."""

    async def main() -> tuple[list[ChatDelta], list[ChatDelta] | ModelError]:
        async with OpenAIChatModel("m", base_url=server.url, max_retries=0) as model:
            first = [d async for d in model.stream(USER)]
            try:
                second: list[ChatDelta] | ModelError = [d async for d in model.stream(USER)]
            except ModelError as exc:
                second = exc
            return first, second

    return asyncio.run(main())


def test_a_normal_reply_leaves_the_connection_for_the_next_request(server):
    server.script(
        sse([chunk(content="one", finish_reason="stop")], keep_alive=True),
        sse([chunk(content="two", finish_reason="stop")], keep_alive=True),
    )
    first, second = two_replies(server)
    assert text_of(first) == "one"
    assert isinstance(second, list) and text_of(second) == "two"
    ports = [request.client_port for request in server.requests]
    assert ports[0] == ports[1]  # one connection, reused


@pytest.mark.parametrize(
    "events",
    [
        [],  # a 200 stream closed with no data (a context overflow on llama.cpp)
        [chunk(content="cut")],  # no finish_reason
        [chunk(content="a"), "event: error\ndata: {}\n\n"],
        ["data: {not json\n\n"],
    ],
    ids=["empty", "no-finish", "error-frame", "malformed"],
)
def test_after_an_abnormal_end_the_connection_is_not_reused(server, events):
    # The first answer leaves its connection open but broken: a request sent on it is
    # hung up on.  The next request must go on a new connection and succeed.
    server.script(
        sse(events, done=False, stale=True),
        sse([chunk(content="fine", finish_reason="stop")]),
    )
    first, second = two_replies(server)
    assert first[-1].error is not None
    assert isinstance(second, list), second
    assert text_of(second) == "fine"
    assert server.hang_ups == 0
    ports = [request.client_port for request in server.requests]
    assert ports[0] != ports[1]


def test_an_early_stop_does_not_leave_the_connection_in_the_pool(server):
    server.script(
        sse([chunk(content=str(i)) for i in range(20)] + [chunk(finish_reason="stop")], stale=True),
        sse([chunk(content="fine", finish_reason="stop")]),
    )

    async def main() -> list[ChatDelta]:
        async with OpenAIChatModel("m", base_url=server.url, max_retries=0) as model:
            stream = model.stream(USER)
            async for _ in stream:
                break
            await stream.aclose()  # type: ignore[attr-defined]
            return [d async for d in model.stream(USER)]

    assert text_of(asyncio.run(main())) == "fine"
    assert server.hang_ups == 0


def test_done_then_a_clean_end_keeps_the_connection(server):
    # [DONE] is followed by the end of the chunked body, which is read so that the
    # connection can serve the next request.
    server.script(
        sse([chunk(content="one", finish_reason="stop")], keep_alive=True),
        sse([chunk(content="two", finish_reason="stop")]),
    )
    first, second = two_replies(server)
    assert isinstance(second, list) and text_of(second) == "two"
    assert errors_of(first) == []
    assert len({request.client_port for request in server.requests}) == 1


def test_usage_chunk_after_finish_is_read(server):
    usage = {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
    server.script(
        sse([chunk(content="x"), chunk(finish_reason="stop"), chunk(no_choices=True, usage=usage)])
    )
    deltas = collect(server)
    assert deltas[-1] == ChatDelta(usage=usage)
    json.dumps(deltas[-1].usage)


def test_an_error_message_with_a_lone_surrogate_is_valid_unicode(server):
    server.script(sse(['data: {"error": {"message": "bad \\ud800 news"}}\n\n']))
    deltas = collect(server)
    assert_valid_unicode(deltas)
    assert deltas[-1].error == "the server sent an error in the stream: bad \ufffd news"
