"""Chat completion chunks (the ``openai`` SDK's objects, or their JSON) as stream items.

Every test compares with what the equivalent ``ChatDelta`` items give: a chunk must read
exactly as the delta it stands for.  The SDK's own types build the chunks
(``ChatCompletionChunk.model_validate``), so what is read is what the SDK hands out.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
from collections.abc import AsyncIterator, Iterable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from stream_parser import (
    ChatDelta,
    ParseErrorEvent,
    ParseEvent,
    StreamToolParser,
    TextOutputEvent,
    ThinkingEvent,
    TokenUsageEvent,
    ToolCallEvent,
    aparse_stream,
    parse_stream,
)
from stream_parser.core._sdk_items import ChunkReader, is_chunk
from stream_parser.core.chunks import ToolCallDelta
from stream_parser.testing import merge_deltas

openai_chat = pytest.importorskip("openai.types.chat")
ChatCompletionChunk = openai_chat.ChatCompletionChunk


class GetWeather(BaseModel):
    city: str


TOOLS = {"get_weather": GetWeather}


def chunk_json(
    delta: dict[str, Any] | None = None,
    *,
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
    choices: bool = True,
) -> dict[str, Any]:
    """A chunk as a server sends it (``choices`` empty when ``choices`` is False)."""
    data: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}]
        if choices
        else [],
    }
    if usage is not None:
        data["usage"] = usage
    return data


def sdk(data: dict[str, Any]) -> Any:
    """The SDK's chunk object for ``data``."""
    return ChatCompletionChunk.model_validate(data)


def call(index: int, *, id: str | None = None, name: str | None = None, args: str | None = None):
    fragment: dict[str, Any] = {"index": index}
    if id is not None:
        fragment["id"], fragment["type"] = id, "function"
    function = {k: v for k, v in (("name", name), ("arguments", args)) if v is not None}
    if function:
        fragment["function"] = function
    return fragment


USAGE = {"prompt_tokens": 3, "completion_tokens": 9, "total_tokens": 12}

# A whole reply: role chunk, reasoning, text, two interleaved native calls, usage.
REPLY: list[tuple[dict[str, Any], ChatDelta | None]] = [
    (chunk_json({"role": "assistant", "content": None}), None),
    (chunk_json({"reasoning_content": "The user "}), ChatDelta(reasoning="The user ")),
    (chunk_json({"reasoning_content": "asks."}), ChatDelta(reasoning="asks.")),
    (chunk_json({"content": "Let me <b>check"}), ChatDelta(content="Let me <b>check")),
    (chunk_json({"content": "</b>."}), ChatDelta(content="</b>.")),
    (
        chunk_json({"tool_calls": [call(0, id="c1", name="get_weather", args="")]}),
        ChatDelta(tool_calls=(ToolCallDelta(index=0, id="c1", name="get_weather"),)),
    ),
    (
        chunk_json({"tool_calls": [call(1, id="c2", name="get_weather", args='{"ci')]}),
        ChatDelta(
            tool_calls=(ToolCallDelta(index=1, id="c2", name="get_weather", arguments='{"ci'),)
        ),
    ),
    (
        chunk_json({"tool_calls": [call(0, args='{"city": "Oslo"}')]}),
        ChatDelta(tool_calls=(ToolCallDelta(index=0, arguments='{"city": "Oslo"}'),)),
    ),
    (
        chunk_json({"tool_calls": [call(1, args='ty": "Rome"}')]}),
        ChatDelta(tool_calls=(ToolCallDelta(index=1, arguments='ty": "Rome"}'),)),
    ),
    (chunk_json(finish_reason="tool_calls"), ChatDelta(finish_reason="tool_calls")),
    (chunk_json(choices=False, usage=USAGE), ChatDelta(usage=USAGE)),
]


def deltas_of(reply: Iterable[tuple[dict[str, Any], ChatDelta | None]]) -> list[ChatDelta]:
    return [delta for _, delta in reply if delta is not None]


def events(items: Iterable[Any], tools: object = TOOLS) -> list[ParseEvent]:
    return list(parse_stream(items, tools))


def aevents(items: Any, tools: object = TOOLS) -> list[ParseEvent]:
    async def collect() -> list[ParseEvent]:
        return [event async for event in aparse_stream(items, tools)]

    return asyncio.run(collect())


async def agen(items: Iterable[Any]) -> AsyncIterator[Any]:
    for item in items:
        yield item


def test_sdk_chunks_read_as_the_equivalent_chat_deltas() -> None:
    expected = events(deltas_of(REPLY))
    got = events(sdk(data) for data, _ in REPLY)
    assert got == expected
    kinds = [event.kind for event in got]
    assert kinds.count("tool_call") == 2 and kinds.count("usage") == 1
    thinking = next(e for e in got if isinstance(e, ThinkingEvent))
    assert thinking.content == "The user asks."
    assert "".join(e.text for e in got if isinstance(e, TextOutputEvent)) == "Let me <b>check</b>."
    calls = [e for e in got if isinstance(e, ToolCallEvent)]
    assert [(c.call_id, c.tool_instance) for c in calls] == [
        ("c1", GetWeather(city="Oslo")),
        ("c2", GetWeather(city="Rome")),
    ]
    (usage,) = [e for e in got if isinstance(e, TokenUsageEvent)]
    assert usage.usage_info == USAGE  # a plain dict, as the LLM layer's deltas carry


def test_dicts_shaped_like_the_json_read_alike() -> None:
    assert events(copy.deepcopy(data) for data, _ in REPLY) == events(deltas_of(REPLY))


def test_async_streams_of_chunks_read_alike() -> None:
    expected = events(deltas_of(REPLY))
    assert aevents(agen([sdk(data) for data, _ in REPLY])) == expected
    assert aevents(agen([data for data, _ in REPLY])) == expected


def test_a_sync_iterable_is_accepted_by_aparse_stream() -> None:
    items = ["<think>a", "b</think>", "c"]
    expected = events(items)
    assert aevents(items) == expected
    assert aevents(iter(items)) == expected
    assert aevents(agen(items)) == expected
    assert aevents([sdk(data) for data, _ in REPLY]) == events(deltas_of(REPLY))
    parser = StreamToolParser(TOOLS)

    async def collect() -> list[ParseEvent]:
        return [event async for event in parser.aparse_stream(tuple(items))]

    assert asyncio.run(collect()) == expected


def test_aparse_stream_refuses_what_is_not_iterable() -> None:
    with pytest.raises(TypeError, match="async or a sync iterable"):
        aevents(42)


@pytest.mark.parametrize(
    "delta",
    [
        {"role": "assistant"},
        {"content": None},
        {"content": ""},
        {"role": "assistant", "content": None, "tool_calls": None},
        {"reasoning_content": None, "reasoning": None},
        {"tool_calls": []},
        {"tool_calls": [{"index": 0}]},
    ],
)
def test_chunks_that_carry_nothing_give_no_event(delta: dict[str, Any]) -> None:
    parser = StreamToolParser(TOOLS)
    assert parser.feed_item(sdk(chunk_json(delta))) == []
    assert parser.feed_item(chunk_json(delta)) == []
    assert parser.feed_item(sdk(chunk_json(choices=False))) == []
    assert parser.close() == []


def test_none_content_between_text_changes_nothing() -> None:
    plain = events(["Hel", "lo"])
    noisy = [
        sdk(chunk_json({"role": "assistant", "content": None})),
        sdk(chunk_json({"content": "Hel"})),
        sdk(chunk_json({"content": None})),
        sdk(chunk_json({"content": "lo"})),
        sdk(chunk_json({"content": None})),
    ]
    assert events(noisy) == plain


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_under_either_name(field: str) -> None:
    chunk = sdk(chunk_json({field: "hmm"}))
    # The SDK does not declare these fields: they are extras of its model.
    assert field in (chunk.choices[0].delta.model_extra or {})
    got = events([chunk, sdk(chunk_json({"content": "ok"}))])
    assert got == events([ChatDelta(reasoning="hmm"), "ok"])
    assert [e.kind for e in got] == ["thinking_delta", "thinking", "text"]


def test_reasoning_content_is_preferred_over_reasoning() -> None:
    delta = ChunkReader().delta(chunk_json({"reasoning_content": "a", "reasoning": "b"}))
    assert delta.reasoning == "a"


def test_extras_are_read_from_model_extra_of_any_object() -> None:
    class Delta:
        def __init__(self) -> None:
            self.content = None
            self.model_extra = {"reasoning": "from extras"}

    class Choice:
        def __init__(self) -> None:
            self.index = 0
            self.delta = Delta()
            self.finish_reason = "stop"

    class Chunk:
        def __init__(self) -> None:
            self.choices = [Choice()]
            self.usage = None

    assert ChunkReader().delta(Chunk()) == ChatDelta(reasoning="from extras", finish_reason="stop")


def test_refusal_is_text() -> None:
    delta = ChunkReader().delta(sdk(chunk_json({"content": "I ", "refusal": "cannot."})))
    assert delta.content == "I cannot."


def test_usage_on_a_chunk_without_choices() -> None:
    got = events([sdk(chunk_json({"content": "hi"})), sdk(chunk_json(choices=False, usage=USAGE))])
    assert got == events(["hi", ChatDelta(usage=USAGE)])
    assert isinstance(got[-1], TokenUsageEvent) and got[-1].usage_info == USAGE


def test_usage_that_is_not_a_model_is_passed_on() -> None:
    marker = object()
    assert ChunkReader().delta({"usage": marker, "choices": []}).usage is marker


def test_finish_reason_length_cuts_native_calls() -> None:
    reply = [
        chunk_json({"tool_calls": [call(0, id="c", name="get_weather", args='{"city": "Os')]}),
        chunk_json(finish_reason="length"),
    ]
    got = events(sdk(data) for data in reply)
    assert got == events(ChunkReader().delta(data) for data in reply)
    errors = [e.error_type for e in got if isinstance(e, ParseErrorEvent)]
    assert errors == ["unclosed_tool", "truncated"]


def test_native_calls_need_the_tools_as_for_chat_deltas() -> None:
    reply = [
        chunk_json({"tool_calls": [call(0, id="c", name="get_weather", args="{}")]}),
        chunk_json(finish_reason="tool_calls"),
    ]
    deltas = [ChunkReader().delta(data) for data in reply]
    for tools in (None, {}, TOOLS):
        assert events((sdk(data) for data in reply), tools) == events(deltas, tools)
    assert [e.error_type for e in events(reply, None) if isinstance(e, ParseErrorEvent)] == [
        "unknown_tool"
    ]


def test_fragments_without_an_index_follow_their_id() -> None:
    reader = ChunkReader()
    got = [
        reader.delta({"choices": [{"delta": {"tool_calls": [fragment]}}]}).tool_calls
        for fragment in [
            {"id": "a", "function": {"name": "f", "arguments": "{"}},
            {"function": {"arguments": "}"}},
            {"id": "b", "function": {"name": "g"}},
            {"id": "a", "function": {"arguments": " "}},
            {"index": 5, "function": {"arguments": "x"}},
        ]
    ]
    assert [[fragment.index for fragment in fragments] for fragments in got] == [
        [0],
        [0],
        [1],
        [0],
        [5],
    ]


@pytest.mark.parametrize(
    "data",
    [
        {"choices": "not a list"},
        {"choices": None, "usage": None},
        {"choices": [{"index": 1, "delta": {"content": "second choice"}}]},
        {"choices": [{"index": 0, "delta": {"content": 5, "reasoning": ["x"]}}]},
        {"choices": [{"index": 0, "delta": "oops", "finish_reason": 3}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": "nope"}}]},
        {"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": 7}]}}]},
    ],
)
def test_fields_of_the_wrong_type_count_as_absent(data: dict[str, Any]) -> None:
    assert ChunkReader().delta(data) == ChatDelta()
    assert events([data]) == []


def test_the_first_choice_is_the_one_with_index_0() -> None:
    data = {
        "choices": [
            {"index": 1, "delta": {"content": "other"}},
            {"index": 0, "delta": {"content": "mine"}},
        ]
    }
    assert ChunkReader().delta(data).content == "mine"


def test_what_is_a_chunk() -> None:
    assert is_chunk(sdk(chunk_json()))
    assert is_chunk({"choices": []}) and is_chunk({"usage": {}})
    assert not is_chunk({"content": "x"}) and not is_chunk(3) and not is_chunk(None)


UNSUPPORTED = [
    42,
    None,
    1.5,
    {"content": "x"},
    ["a"],
    ("a", None, 1),
    object(),
    {"type": "chunk"},  # a helper event's shape without its chunk
    {"type": "response.output_text.delta", "delta": "x"},  # another API's event
]


@pytest.mark.parametrize("item", UNSUPPORTED, ids=lambda item: type(item).__name__)
def test_an_unsupported_item_is_a_type_error_naming_every_accepted_kind(item: object) -> None:
    for run in (
        lambda: events([item]),
        lambda: aevents(agen([item])),
        lambda: aevents([item]),
        lambda: StreamToolParser(TOOLS).feed_item(item),
    ):
        with pytest.raises(TypeError) as info:
            run()
        message = str(info.value)
        for kind in (
            "str",
            "bytes",
            "(content, metadata) tuples",
            "ChatDelta",
            "ChatCompletionChunk",
            "Stream / AsyncStream",
            "dicts shaped like a chunk",
            "stream helper",
        ):
            assert kind in message, (kind, message)
        assert message.endswith(f"got {type(item).__name__}")


def test_the_stream_helpers_events_read_as_their_chunks() -> None:
    # client.chat.completions.stream() yields a "chunk" event per chunk, and events worked
    # out from the chunks, which add nothing: the events are those of the chunks alone.
    chunks = [
        chunk_json({"content": "Hello"}),
        chunk_json({"content": " there"}),
        chunk_json(finish_reason="stop"),
    ]
    helper: list[Any] = []
    for item in chunks:
        helper.append({"type": "chunk", "chunk": item, "snapshot": {}})
        helper.append({"type": "content.delta", "delta": "x", "snapshot": "x"})
    helper.append({"type": "content.done", "content": "Hello there"})
    assert events(helper) == events(chunks)
    assert merge_deltas(events(helper)) == [TextOutputEvent(text="Hello there", span=(0, 11))]


def test_str_items_never_reach_the_chunk_reader() -> None:
    parser = StreamToolParser(TOOLS)
    list(parser.parse_stream(["a", b"b", ("c", None), ChatDelta(content="d")]))
    assert parser._chunks is None


TEXT = "A <think>x<y</think> then <get_weather><city>Oslo</city></get_weather> end"


def content_chunks(pieces: Iterable[str]) -> list[Any]:
    return [sdk(chunk_json({"content": piece})) for piece in pieces]


def test_content_in_chunks_reads_as_the_text_however_it_is_split() -> None:
    reference = merge_deltas(events([TEXT]))
    assert merge_deltas(events(content_chunks([TEXT]))) == reference
    assert merge_deltas(events(content_chunks(TEXT))) == reference
    for cut in range(len(TEXT) + 1):
        pieces = [TEXT[:cut], TEXT[cut:]]
        assert merge_deltas(events(content_chunks(pieces))) == reference, cut
    assert [e.kind for e in reference].count("tool_call") == 1


def _reply_chunks(reasoning: list[str], content: list[str], args: list[str]) -> list[Any]:
    reply = [chunk_json({"reasoning_content": piece}) for piece in reasoning]
    reply += [chunk_json({"content": piece}) for piece in content]
    reply.append(chunk_json({"tool_calls": [call(0, id="c", name="get_weather")]}))
    reply += [chunk_json({"tool_calls": [call(0, args=piece)]}) for piece in args]
    reply.append(chunk_json(finish_reason="tool_calls"))
    reply.append(chunk_json(choices=False, usage=USAGE))
    return reply


def _cut(text: str, cuts: list[int]) -> list[str]:
    bounds = [0, *sorted(set(cuts)), len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds) if a < b]


@settings(max_examples=40, deadline=None)
@given(
    reasoning=st.text(min_size=1, max_size=12),
    content=st.text(min_size=1, max_size=20),
    cuts=st.lists(st.integers(min_value=0, max_value=40), max_size=6),
)
def test_property_chunks_equal_their_deltas_and_do_not_depend_on_the_cuts(
    reasoning: str, content: str, cuts: list[int]
) -> None:
    args = '{"city": "Oslo"}'
    cut = _reply_chunks(
        _cut(reasoning, [c % (len(reasoning) + 1) for c in cuts]),
        _cut(content, [c % (len(content) + 1) for c in cuts]),
        _cut(args, [c % (len(args) + 1) for c in cuts]),
    )
    whole = _reply_chunks([reasoning], [content], [args])
    got = events(sdk(data) for data in cut)
    assert got == events(ChunkReader().delta(data) for data in cut)
    assert merge_deltas(got) == merge_deltas(events(sdk(data) for data in whole))


def test_reading_chunks_does_not_import_the_sdk() -> None:
    import subprocess
    import sys

    probe = (
        "import sys; from stream_parser import parse_stream; "
        "chunk = {'choices': [{'index': 0, 'delta': {'content': 'hi'}}]}; "
        "assert [e.kind for e in parse_stream([chunk])] == ['text']; "
        "print('openai' in sys.modules)"
    )
    root = Path(__file__).resolve().parents[2]  # this checkout's package, not an installed one
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=root
    )
    assert result.stdout.strip() == "False"


def test_reasoning_in_chunks_is_bounded_as_in_deltas() -> None:
    from stream_parser import ParserConfig

    pieces = ["abc", "defg", "hij"]
    config = ParserConfig(max_thinking_size=5)
    chunks = [sdk(chunk_json({"reasoning_content": piece})) for piece in pieces]
    got = list(parse_stream(chunks, TOOLS, config=config))
    assert got == list(parse_stream([ChatDelta(reasoning=p) for p in pieces], TOOLS, config=config))
    assert [e.error_type for e in got if isinstance(e, ParseErrorEvent)] == ["thinking_too_large"]
    (event,) = [e for e in got if isinstance(e, ThinkingEvent)]
    assert (event.content, event.truncated) == ("abcde", True)


def test_a_whole_completion_is_one_item() -> None:
    completion = openai_chat.ChatCompletion.model_validate(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": "Checking.",
                        "reasoning_content": "Two cities.",
                        "tool_calls": [
                            {
                                "id": f"c{k}",
                                "type": "function",
                                "function": {"name": "get_weather", "arguments": args},
                            }
                            for k, args in enumerate(['{"city": "Oslo"}', '{"city": "Rome"}'])
                        ],
                    },
                }
            ],
            "usage": USAGE,
        }
    )
    got = events([completion])
    deltas = [
        ChatDelta(
            content="Checking.",
            reasoning="Two cities.",
            tool_calls=(
                ToolCallDelta(index=0, id="c0", name="get_weather", arguments='{"city": "Oslo"}'),
                ToolCallDelta(index=1, id="c1", name="get_weather", arguments='{"city": "Rome"}'),
            ),
            usage=USAGE,
            finish_reason="tool_calls",
        )
    ]
    assert got == events(deltas)
    assert [e.tool_instance.city for e in got if isinstance(e, ToolCallEvent)] == ["Oslo", "Rome"]


def utf16_halves(text: str) -> str:
    """``text`` with every astral character as its two lone surrogates (as JSON decodes)."""
    return "".join(
        chr(0xD800 + ((ord(c) - 0x10000) >> 10)) + chr(0xDC00 + ((ord(c) - 0x10000) & 0x3FF))
        if ord(c) > 0xFFFF
        else c
        for c in text
    )


@given(
    text=st.text(alphabet=st.sampled_from(["a", "é", "😀", "\U0001f9e0", " "]), max_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=16), max_size=4),
    channel=st.sampled_from(["content", "reasoning_content", "arguments"]),
)
@settings(max_examples=150, deadline=None)
def test_sdk_chunks_that_split_surrogate_pairs_give_the_text_back(
    text: str, cuts: list[int], channel: str
) -> None:
    # JSON escapes text as UTF-16: a server may cut between the halves of a pair, and the
    # SDK's decoded chunks then hold lone surrogates; the events hold the text itself.
    units = utf16_halves(text)
    bounds = sorted({0, len(units), *(min(c, len(units)) for c in cuts)})
    pieces = [units[a:b] for a, b in itertools.pairwise(bounds)]
    items: list[Any] = []
    if channel == "arguments":
        items.append(chunk_json({"tool_calls": [call(0, id="c", name="get_weather")]}))
    for piece in pieces:
        if channel == "arguments":
            items.append(chunk_json({"tool_calls": [call(0, args=piece)]}))
        else:
            items.append(chunk_json({channel: piece}))
    got = merge_deltas(events([sdk(item) for item in items]))
    if channel == "content":
        assert "".join(e.text for e in got if isinstance(e, TextOutputEvent)) == text
    elif channel == "reasoning_content":
        assert "".join(e.content for e in got if isinstance(e, ThinkingEvent)) == text
    else:
        deltas = [e for e in events(items) if e.kind == "tool_arguments_delta"]
        assert "".join(e.delta for e in deltas) == text  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("pieces", "expected"),
    [
        (["x\ud83d"], "x\ufffd"),  # a high surrogate, then the end of the stream
        (["\ude00y"], "\ufffdy"),  # a low surrogate alone
        (["\ud83d", "z"], "\ufffdz"),  # a high surrogate followed by no low one
        (["\ud83d", "\ud83d", "\ude00"], "\ufffd😀"),
    ],
)
def test_lone_surrogates_in_sdk_chunks_become_replacement_characters(
    pieces: list[str], expected: str
) -> None:
    items = [chunk_json({"content": piece}) for piece in pieces]
    got = events(items)
    assert "".join(e.text for e in got if isinstance(e, TextOutputEvent)) == expected
    for event in got:
        if isinstance(event, TextOutputEvent):
            event.text.encode("utf-8")  # valid Unicode
