"""JSON lines and Server-Sent Events: every event kind, any text, written and read back."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable, Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_parser import (
    AgentDoneEvent,
    CodeBlockDeltaEvent,
    CodeBlockEvent,
    Event,
    FramingEvent,
    NoticeEvent,
    ParseErrorEvent,
    StepStartEvent,
    TagDeltaEvent,
    TextOutputEvent,
    ThinkingDeltaEvent,
    ThinkingEvent,
    TokenUsageEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolParamDeltaEvent,
    ToolResult,
    ToolResultEvent,
    event_to_json,
)
from stream_parser.agent import LimitHit, RequestDoneEvent, Usage
from stream_parser.encoders import (
    EVENT_TYPES,
    KEEP_ALIVE,
    SSEDecoder,
    decode_json_lines,
    decode_sse,
    encode_json_lines,
    encode_sse,
    event_to_sse,
)
from stream_parser.errors import ConfigError
from tests.encoders.test_json import (
    DEEP_LINES,
    MAX_LEVELS,
    PROPS,
    Sample,
    any_text,
    events,
    levels,
    nest,
    plain_text,
)
from tests.helpers import splits

# One event of every kind, with text a stream may carry: lone surrogates, a pair held
# as two code units, line breaks of every sort, non-ASCII characters.
ODD = "a\ud800\n\r\n\r\u2028\u0085é\ud83d\ude00\udfff😀 :data: event:"
SAMPLE: list[Event] = [
    StepStartEvent(step=1),
    TextOutputEvent(text=ODD, span=(0, 3)),
    ThinkingDeltaEvent(delta=ODD, span=(3, 4)),
    ThinkingEvent(content=ODD, closed=False, span=(3, 4)),
    ToolCallStartEvent(tool_name=ODD, call_id=ODD, span=(4, 5)),
    ToolParamDeltaEvent(tool_name="t", param=ODD, delta=ODD, span=(5, 6)),
    ToolArgumentsDeltaEvent(tool_name="t", delta=ODD, call_id="c", span=(5, 6)),
    ToolCallEvent(tool_name="t", tool_instance=Sample(path=ODD), raw=ODD, span=(4, 9)),
    ParseErrorEvent(error_type="malformed_tool", message=ODD, context=ODD, span=(9, 9)),
    TokenUsageEvent(usage_info={ODD: [ODD, 1.5]}),
    NoticeEvent(code="call_in_text", message=ODD, span=(4, 4)),
    CodeBlockDeltaEvent(delta=ODD, language=ODD, span=(9, 10)),
    CodeBlockEvent(code=ODD, language="py", span=(9, 20)),
    FramingEvent(text=ODD, span=(20, 21)),
    TagDeltaEvent(tag="note", delta=ODD, span=(21, 22)),
    RequestDoneEvent(
        step=1,
        started_at=1.5e9,
        first_token_s=0.25,
        duration_s=1.0,
        usage=Usage(input_tokens=3, requests=1),
        usage_reported=True,
    ),
    ToolResultEvent(
        tool_name="t",
        result=ToolResult(tool_name="t", text=ODD),
        call_index=0,
        step=1,
        duration_s=0.5,
    ),
    AgentDoneEvent(
        reason="usage_limit",
        messages=[{"role": "user", "content": ODD}],
        output=ODD,
        steps=2,
        limit=LimitHit(ODD, 2, 3),
    ),
]


def test_the_sample_holds_every_kind() -> None:
    assert {event.kind for event in SAMPLE} == set(EVENT_TYPES)


def as_json(items: Iterable[Event]) -> list[str]:
    """What an event stream stands for: its JSON objects (what a reader gets back)."""
    return [event_to_json(event) for event in items]


def cut_everywhere(text: str) -> Iterator[list[str]]:
    """The text whole, one character at a time, and split in two at every position."""
    yield [text]
    yield list(text)
    for cut in range(len(text) + 1):
        yield splits(text, [cut])


def cut_bytes_everywhere(data: bytes) -> Iterator[list[bytes]]:
    yield [data]
    yield [data[i : i + 1] for i in range(len(data))]
    for cut in range(len(data) + 1):
        yield [data[:cut], data[cut:]]


async def aiterate(items: Iterable[Any], pause: float = 0.0) -> AsyncIterator[Any]:
    for item in items:
        await asyncio.sleep(pause)
        yield item


async def collect(items: AsyncIterator[Any]) -> list[Any]:
    return [item async for item in items]


# --- JSON lines -----------------------------------------------------------------------------


@PROPS
@given(st.lists(events(any_text), max_size=4), st.integers(0, 10**6), st.booleans())
def test_json_lines_read_back_whatever_the_text_and_the_cut(
    sent: list[Event], cut: int, crlf: bool
) -> None:
    text = "".join(encode_json_lines(sent))
    assert text.count("\n") == len(sent)
    text.encode("utf-8")  # no raw surrogate: the text can go anywhere
    if crlf:
        text = text.replace("\n", "\r\n")
    cut %= len(text) + 1
    back = list(decode_json_lines([text[:cut], text[cut:]]))
    assert as_json(back) == as_json(sent)
    data = text.encode("utf-8")
    cut %= len(data) + 1
    assert as_json(decode_json_lines([data[:cut], data[cut:]])) == as_json(sent)


@PROPS
@given(st.lists(events(plain_text, finite=True), max_size=3))
def test_json_lines_of_plain_text_read_back_equal_over_async_iterables(sent: list[Event]) -> None:
    lines = asyncio.run(collect(encode_json_lines(aiterate(sent))))
    assert lines == list(encode_json_lines(sent))
    back = asyncio.run(collect(decode_json_lines(aiterate(lines))))
    assert as_json(back) == as_json(sent)
    assert [type(event) for event in back] == [type(event) for event in sent]


def test_json_lines_of_every_kind_split_at_every_position() -> None:
    text = "".join(encode_json_lines(SAMPLE))
    expected = as_json(SAMPLE)
    for pieces in cut_everywhere(text):
        assert as_json(decode_json_lines(pieces)) == expected
    for chunks in cut_bytes_everywhere(text.replace("\n", "\r\n").encode("utf-8")):
        assert as_json(decode_json_lines(chunks)) == expected


def test_json_lines_skip_blank_lines_and_read_a_last_line_without_its_end() -> None:
    text = "\n" + event_to_json(SAMPLE[0]) + "\r\n  \n" + event_to_json(SAMPLE[1])
    assert as_json(decode_json_lines([text])) == as_json(SAMPLE[:2])


@pytest.mark.parametrize(
    "bad", [["not json\n"], [b"\xff\n"], [b'{"kind":"step_start","step":1}\xe2']]
)
def test_json_lines_that_are_not_events_are_value_errors(bad: list[str | bytes]) -> None:
    with pytest.raises(ValueError):
        list(decode_json_lines(bad))


# --- Server-Sent Events ---------------------------------------------------------------------


@PROPS
@given(
    st.lists(events(any_text), max_size=4),
    st.integers(0, 10**6),
    st.sampled_from(["\n", "\r\n", "\r"]),
    st.booleans(),
)
def test_sse_reads_back_whatever_the_text_the_cut_and_the_line_ends(
    sent: list[Event], cut: int, newline: str, ids: bool
) -> None:
    text = "".join(encode_sse(sent, ids=ids))
    text.encode("utf-8")
    text = text.replace("\n", newline)
    cut %= len(text) + 1
    decoder = SSEDecoder()
    back = decoder.feed(text[:cut]) + decoder.feed(text[cut:]) + decoder.close()
    assert as_json(back) == as_json(sent)
    assert decoder.last_id == (str(len(sent)) if ids and sent else None)
    data = text.encode("utf-8")
    cut %= len(data) + 1
    assert as_json(decode_sse([data[:cut], data[cut:]])) == as_json(sent)


@PROPS
@given(st.lists(events(plain_text, finite=True), max_size=3))
def test_sse_over_async_iterables(sent: list[Event]) -> None:
    frames = asyncio.run(collect(encode_sse(aiterate(sent), ids=True)))
    assert frames == list(encode_sse(sent, ids=True))
    back = asyncio.run(collect(decode_sse(aiterate(frames))))
    assert as_json(back) == as_json(sent)


def test_sse_of_every_kind_split_at_every_position() -> None:
    text = "".join(encode_sse(SAMPLE, ids=True))
    expected = as_json(SAMPLE)
    for pieces in cut_everywhere(text):
        assert as_json(decode_sse(pieces)) == expected


@pytest.mark.slow
def test_sse_with_any_line_end_split_at_every_position() -> None:
    text = "".join(encode_sse(SAMPLE, ids=True))
    expected = as_json(SAMPLE)
    for newline in ("\r\n", "\r"):
        for pieces in cut_everywhere(text.replace("\n", newline)):
            assert as_json(decode_sse(pieces)) == expected
    for chunks in cut_bytes_everywhere(text.replace("\n", "\r\n").encode("utf-8")):
        assert as_json(decode_sse(chunks)) == expected


def test_the_sse_frame() -> None:
    event = TextOutputEvent(text="hi\n", span=(0, 3))
    assert (
        event_to_sse(event) == 'event: text\ndata: {"text":"hi\\n","span":[0,3],"kind":"text"}\n\n'
    )
    assert event_to_sse(event, id="a-1").startswith("event: text\nid: a-1\ndata: {")
    with pytest.raises(ValueError):
        event_to_sse(event, id="a\nb")
    with pytest.raises(TypeError):
        event_to_sse({"kind": "text"})  # type: ignore[arg-type]


def test_the_sse_decoder_reads_sse_as_the_standard_says() -> None:
    data = event_to_json(StepStartEvent(step=4))
    text = (
        "\ufeff: a comment\n"
        "retry: 1000\n"
        "unknown: field\n"
        "\n"  # a frame without data: nothing
        "event: step_start\n"
        "\n"
        f"id: 9\ndata:{data}\n\n"  # no space after the colon, no event name
        f"data: {data[:10]}\n"  # data on two lines, joined by a line break
        f"data: {data[10:]}\n\n"
        "id\n"  # a field without a colon: an empty id
        f"event: step_start\ndata: {data}\n"  # not ended by a blank line: dropped
    )
    decoder = SSEDecoder()
    assert decoder.feed(text) == [StepStartEvent(step=4), StepStartEvent(step=4)]
    assert decoder.last_id == ""
    assert decoder.close() == []


@pytest.mark.parametrize(
    "text",
    [
        "data: not json\n\n",
        'data: {"kind":"no_such_kind"}\n\n',
        f"event: text\ndata: {event_to_json(StepStartEvent(step=1))}\n\n",
    ],
)
def test_sse_frames_that_are_not_events_are_value_errors(text: str) -> None:
    with pytest.raises(ValueError):
        list(decode_sse([text]))


def test_keep_alives_are_sent_while_the_source_waits_and_do_not_interrupt_it() -> None:
    finished: list[bool] = []

    async def slow() -> AsyncIterator[Event]:
        yield StepStartEvent(step=1)
        await asyncio.sleep(0.2)  # a tool runs: must not be cancelled by the keep-alives
        finished.append(True)
        yield StepStartEvent(step=2)

    frames = asyncio.run(collect(encode_sse(slow(), keep_alive=0.03)))
    assert frames[0] == event_to_sse(StepStartEvent(step=1))
    assert frames[-1] == event_to_sse(StepStartEvent(step=2))
    assert KEEP_ALIVE in frames[1:-1] and set(frames[1:-1]) == {KEEP_ALIVE}
    assert finished == [True]
    assert list(decode_sse(frames)) == [StepStartEvent(step=1), StepStartEvent(step=2)]


@pytest.mark.parametrize("keep_alive", [None, 0.05])
def test_stopping_the_frames_early_closes_the_source(keep_alive: float | None) -> None:
    closed: list[bool] = []

    async def source() -> AsyncIterator[Event]:
        try:
            for step in range(1, 100):
                yield StepStartEvent(step=step)
                await asyncio.sleep(0)
        finally:
            closed.append(True)

    async def first_two() -> list[str]:
        frames = encode_sse(source(), keep_alive=keep_alive)
        assert isinstance(frames, AsyncIterator)
        taken = [await anext(frames), await anext(frames)]
        await frames.aclose()  # type: ignore[attr-defined]
        return taken

    assert len(asyncio.run(first_two())) == 2
    assert closed == [True]


@pytest.mark.parametrize("keep_alive", [0, -1, float("inf"), float("nan"), True, "5"])
def test_a_bad_keep_alive_is_a_config_error(keep_alive: Any) -> None:
    with pytest.raises(ConfigError):
        encode_sse(aiterate([]), keep_alive=keep_alive)


def test_keep_alive_needs_an_async_source() -> None:
    with pytest.raises(ConfigError):
        encode_sse([], keep_alive=1)  # type: ignore[call-overload]


def test_an_agent_run_whose_model_sends_lone_surrogates_goes_through() -> None:
    from stream_parser import ReActAgent
    from stream_parser.testing import ScriptedModel

    reply = "I will \ud800 check.\n<read_file><path>\udfffa</path></read_file>"

    def agent() -> ReActAgent:
        return ReActAgent(ScriptedModel([reply, "Done \ud83d\ude00 \udc00."]), [])

    expected = list(agent().stream_sync("Go"))

    async def through_sse() -> list[str]:
        return await collect(encode_sse(agent().run("Go"), ids=True, keep_alive=10))

    frames = asyncio.run(through_sse())
    text = "".join(frames)
    text.encode("utf-8")
    back = list(decode_sse([text.encode("utf-8")]))
    assert as_json(back) == as_json(expected)
    assert any("\ud800" in getattr(event, "text", "") for event in back)
    done = back[-1]
    assert isinstance(done, AgentDoneEvent) and done.output == "Done \U0001f600 \udc00."


# --- values nested deep or referring to themselves; lines nested deep -----------------------


def odd_values() -> list[Event]:
    """Events whose values nest deep or refer to themselves."""
    arguments: dict[str, Any] = {"path": "a"}
    arguments["self"] = arguments
    message: dict[str, Any] = {"role": "user", "content": "hi"}
    messages = [message]
    message["history"] = messages
    return [
        TokenUsageEvent(usage_info=nest(500)),
        ToolCallEvent(tool_name="t", tool_instance=arguments, raw="", span=(0, 0)),
        AgentDoneEvent(reason="done", messages=messages, output="", steps=1),  # type: ignore[list-item]
    ]


def test_the_encoders_write_values_nested_deep_or_referring_to_themselves() -> None:
    sent = odd_values()
    expected = as_json(sent)
    assert all(levels(json.loads(line)) <= MAX_LEVELS for line in expected)
    lines = list(encode_json_lines(sent))
    assert lines == asyncio.run(collect(encode_json_lines(aiterate(sent))))
    assert as_json(decode_json_lines(lines)) == expected
    frames = list(encode_sse(sent, ids=True))
    assert frames == asyncio.run(collect(encode_sse(aiterate(sent), ids=True, keep_alive=10)))
    assert frames == [event_to_sse(event, id=str(n)) for n, event in enumerate(sent, 1)]
    assert as_json(decode_sse(frames)) == expected


@pytest.mark.parametrize("line", DEEP_LINES, ids=lambda line: line[:12])
def test_every_decoder_reads_a_line_nested_deep_as_a_value_error_that_names_it(line: str) -> None:
    jsonl, sse = line + "\n", f"data: {line}\n\n"
    readers = [
        lambda: list(decode_json_lines([jsonl])),
        lambda: list(decode_json_lines([jsonl.encode("utf-8")])),
        lambda: asyncio.run(collect(decode_json_lines(aiterate([jsonl])))),
        lambda: list(decode_sse([sse])),
        lambda: asyncio.run(collect(decode_sse(aiterate([sse.encode("utf-8")])))),
        lambda: SSEDecoder().feed(sse),
    ]
    for read in readers:
        with pytest.raises(ValueError) as caught:
            read()
        message = str(caught.value)
        assert line[:20] in message and len(message) < 300
