"""The JSON encoder: every event kind, any text, written and read back."""

from __future__ import annotations

import ast
import dataclasses
import json
import math
from pathlib import Path
from typing import Any, get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

import stream_parser
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
    event_from_json,
    event_to_json,
)
from stream_parser.agent import LimitHit, RequestDoneEvent, StopReason, Usage
from stream_parser.encoders import EVENT_TYPES, AnyEvent

PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Any text, lone surrogates included (hypothesis leaves them out unless asked).
any_text = st.text(st.characters(exclude_categories=()), max_size=12)
# Text a UTF-8 stream can carry: what comes back from JSON exactly as it went in.
plain_text = st.text(max_size=12)


class Sample(BaseModel):
    path: str
    count: int = 0
    tags: list[str] = []


def json_values(text: st.SearchStrategy[str], finite: bool) -> st.SearchStrategy[Any]:
    floats = st.floats(allow_nan=not finite, allow_infinity=not finite)
    scalars = st.none() | st.booleans() | st.integers() | floats | text
    return st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
        max_leaves=8,
    )


def spans() -> st.SearchStrategy[tuple[int, int]]:
    return st.tuples(st.integers(0, 10**6), st.integers(0, 10**6))


def tool_results(text: st.SearchStrategy[str]) -> st.SearchStrategy[ToolResult]:
    parts = st.dictionaries(text, text, max_size=2)
    return st.builds(
        ToolResult,
        tool_name=text,
        text=text,
        images=st.lists(parts, max_size=2).map(tuple),
        is_error=st.booleans(),
        error_type=st.none() | text,
        exception_type=st.none() | text,
        details=st.lists(parts, max_size=2).map(tuple),
        value=st.none() | st.just(object()) | text,
        exception=st.none() | st.just(ValueError("boom")),
    )


def build(cls: type[Event], **fields: Any) -> tuple[type, st.SearchStrategy[Event]]:
    return cls, st.builds(cls, **fields)


def strategies(text: st.SearchStrategy[str], finite: bool) -> dict[type, st.SearchStrategy[Event]]:
    """Each event class of the library -> its events, with ``text`` in every string field."""
    values = json_values(text, finite)
    opt = st.none() | text
    index = st.integers(0, 100)
    seconds = st.floats(0, 2e9, allow_nan=False)
    messages = st.lists(st.fixed_dictionaries({"role": text, "content": text}), max_size=3)
    found = [
        build(TextOutputEvent, text=text, span=spans()),
        build(ThinkingDeltaEvent, delta=text, span=spans()),
        build(ThinkingEvent, content=text, closed=st.booleans(), span=spans()),
        build(ToolCallStartEvent, tool_name=text, call_index=index, call_id=opt, span=spans()),
        build(
            ToolParamDeltaEvent,
            tool_name=text,
            param=text,
            delta=text,
            call_index=index,
            span=spans(),
        ),
        build(
            ToolArgumentsDeltaEvent,
            tool_name=text,
            delta=text,
            call_index=index,
            call_id=opt,
            span=spans(),
        ),
        build(
            ToolCallEvent,
            tool_name=text,
            tool_instance=st.builds(Sample, path=text, count=st.integers(), tags=st.lists(text)),
            raw=text,
            call_index=index,
            call_id=opt,
            span=spans(),
        ),
        build(
            ParseErrorEvent,
            error_type=text,
            message=text,
            context=opt,
            details=st.lists(st.dictionaries(text, values, max_size=2), max_size=2).map(tuple),
            tool_name=opt,
            call_index=st.none() | index,
            call_id=opt,
            span=spans(),
        ),
        build(TokenUsageEvent, usage_info=values, span=spans()),
        build(NoticeEvent, code=text, message=text, span=spans()),
        build(CodeBlockDeltaEvent, delta=text, language=text, span=spans()),
        build(CodeBlockEvent, code=text, language=text, span=spans()),
        build(FramingEvent, text=text, span=spans()),
        build(TagDeltaEvent, tag=text, delta=text, span=spans()),
        build(StepStartEvent, step=index),
        build(
            RequestDoneEvent,
            step=index,
            started_at=seconds,
            first_token_s=st.none() | seconds,
            duration_s=seconds,
            usage=st.builds(
                Usage,
                input_tokens=index,
                output_tokens=index,
                reasoning_tokens=index,
                requests=index,
                total_tokens=index,
            ),
            usage_reported=st.booleans(),
        ),
        build(
            ToolResultEvent,
            tool_name=text,
            result=tool_results(text),
            call_index=index,
            step=index,
            call_id=opt,
            duration_s=st.none() | seconds,
        ),
        build(
            AgentDoneEvent,
            reason=st.sampled_from(list(get_args(StopReason))),
            messages=messages,
            output=text,
            steps=index,
            limit=st.none() | st.builds(LimitHit, name=text, limit=index, used=index),
        ),
    ]
    return dict(found)


def events(text: st.SearchStrategy[str], finite: bool = False) -> st.SearchStrategy[Event]:
    """Events of every kind of the library."""
    return st.one_of(list(strategies(text, finite).values()))


def test_the_strategies_cover_every_kind() -> None:
    assert set(EVENT_TYPES) == {
        "text",
        "thinking_delta",
        "thinking",
        "tool_call_start",
        "tool_param_delta",
        "tool_arguments_delta",
        "tool_call",
        "error",
        "usage",
        "notice",
        "code_block_delta",
        "code_block",
        "framing",
        "tag_delta",
        "step_start",
        "request_done",
        "tool_result",
        "agent_done",
    }
    assert set(strategies(plain_text, finite=False)) == set(EVENT_TYPES.values())


@PROPS
@given(events(any_text))
def test_any_event_is_written_and_reads_back_to_the_same_json(event: Event) -> None:
    line = event_to_json(event)
    assert "\n" not in line
    line.encode("utf-8")  # no raw surrogate: the line can be written anywhere
    data = json.loads(line)
    assert data["kind"] == event.kind
    back = event_from_json(line)
    assert type(back) is type(event)
    assert event_to_json(back) == line
    assert event_from_json(line.encode("utf-8")) == back


@PROPS
@given(events(plain_text, finite=True))
def test_events_of_plain_text_read_back_equal(event: Event) -> None:
    back = event_from_json(event_to_json(event))
    if isinstance(event, ToolCallEvent):
        assert isinstance(back, ToolCallEvent)
        assert back.tool_instance == event.tool_instance.model_dump()
        back = dataclasses.replace(back, tool_instance=event.tool_instance)
    assert back == event


def test_the_json_form() -> None:
    call = ToolCallEvent(
        tool_name="read_file", tool_instance=Sample(path="a.py"), raw="<read_file>", span=(3, 9)
    )
    assert json.loads(event_to_json(call)) == {
        "tool_name": "read_file",
        "tool_instance": {"path": "a.py", "count": 0, "tags": []},
        "raw": "<read_file>",
        "call_index": 0,
        "call_id": None,
        "span": [3, 9],
        "kind": "tool_call",
    }
    assert event_to_json(StepStartEvent(step=2)) == '{"step":2,"span":null,"kind":"step_start"}'


def test_a_tool_result_is_written_without_its_python_objects() -> None:
    result = ToolResult(tool_name="t", text="ok", value=object(), exception=KeyError("k"))
    event = ToolResultEvent(tool_name="t", result=result, call_index=1, step=2, call_id="c1")
    data = json.loads(event_to_json(event))
    assert data["result"] == {
        "tool_name": "t",
        "text": "ok",
        "images": [],
        "is_error": False,
        "error_type": None,
        "exception_type": None,
        "details": [],
    }
    back = event_from_json(event_to_json(event))
    assert back == event
    assert isinstance(back, ToolResultEvent)
    assert back.result.value is None and back.result.exception is None


def test_lone_surrogates_are_escaped_and_pairs_joined() -> None:
    lone = TextOutputEvent(text="a\ud800b\udfff", span=(0, 4))
    line = event_to_json(lone)
    assert line == '{"text":"a\\ud800b\\udfff","span":[0,4],"kind":"text"}'
    assert event_from_json(line) == lone
    pair = ThinkingDeltaEvent(delta="\ud83d\ude00", span=(0, 2))  # two code units
    line = event_to_json(pair)
    assert '"\U0001f600"' in line
    assert event_from_json(line) == ThinkingDeltaEvent(delta="\U0001f600", span=(0, 2))
    key = TokenUsageEvent(usage_info={"\udc00": ["\ud800"]})
    assert event_to_json(event_from_json(event_to_json(key))) == event_to_json(key)


class Broken:
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


@pytest.mark.parametrize(
    "usage",
    [
        {"ratio": math.nan, "big": math.inf, "small": -math.inf},
        {"bytes": b"\xff\xfe", "set": {1}, "object": object()},
        {1: "int key", None: "none key", (1, 2): "tuple key"},
        [Broken(), Sample(path="\ud800")],
    ],
)
def test_values_without_a_json_form_never_raise(usage: object) -> None:
    line = event_to_json(TokenUsageEvent(usage_info=usage, span=(0, 0)))
    assert event_to_json(event_from_json(line)) == line
    assert json.loads(event_to_json(TokenUsageEvent(usage_info={"x": math.nan}))) == {
        "usage_info": {"x": None},
        "span": [0, 0],
        "kind": "usage",
    }


@pytest.mark.parametrize(
    "line",
    [
        "not json",
        "[1, 2]",
        '{"text": "a"}',
        '{"kind": ["text"]}',
        '{"kind": "no_such_kind"}',
        '{"kind": "text", "span": [0, 1]}',
        '{"kind": "step_start"}',
        '{"kind": "agent_done", "reason": "bored", "messages": [], "output": "", "steps": 1}',
        '{"kind": "agent_done", "reason": "done", "messages": [1], "output": "", "steps": 1}',
        '{"kind": "agent_done", "reason": "done", "messages": [], "output": "", "steps": true}',
    ],
)
def test_bad_json_is_a_value_error(line: str) -> None:
    with pytest.raises(ValueError):
        event_from_json(line)


def test_not_an_event_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        event_to_json({"kind": "text"})  # type: ignore[arg-type]


def test_the_public_names_point_at_the_encoders() -> None:
    from stream_parser.encoders import json as encoder

    assert stream_parser.event_to_json is encoder.event_to_json
    assert stream_parser.event_from_json is encoder.event_from_json
    assert stream_parser.AnyEvent is AnyEvent is encoder.AnyEvent


def test_the_core_never_imports_the_layers_above() -> None:
    core = Path(stream_parser.__file__).parent / "core"
    above = ("agent", "encoders", "llm", "tools", "testing", "cli", "prompts")
    for path in core.glob("**/*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level >= 2:
                top = (node.module or "").split(".")[0]
                assert top not in above, f"{path.name} imports {node.module}"


# --- values nested deep, values that refer to themselves ----------------------------------

# How deep the JSON of an event may nest (the event's own object is the first level).
MAX_LEVELS = 100


def nest(depth: int, pattern: int = 0, leaf: Any = 1) -> Any:
    """``leaf`` inside ``depth`` containers: bit ``i % 64`` of ``pattern`` picks a list."""
    value = leaf
    for level in range(depth):
        value = [value] if pattern >> (level % 64) & 1 else {"a": value}
    return value


def levels(value: Any) -> int:
    """How many containers deep a JSON value nests (without recursion)."""
    deepest, pending = 0, [(value, 0)]
    while pending:
        value, depth = pending.pop()
        if isinstance(value, dict):
            pending.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            pending.extend((item, depth + 1) for item in value)
        deepest = max(deepest, depth)
    return deepest


def test_values_nested_deep_are_written_to_a_limit_then_a_placeholder() -> None:
    # What a server may send as its usage, and json writes and reads: 500 levels.
    line = event_to_json(TokenUsageEvent(usage_info=nest(500)))
    data = json.loads(line)
    assert levels(data) == MAX_LEVELS
    inner = data["usage_info"]
    for _ in range(MAX_LEVELS - 2):
        inner = inner["a"]
    assert inner == {"a": "{...}"}
    assert event_to_json(event_from_json(line)) == line
    line = event_to_json(TokenUsageEvent(usage_info=nest(5000, pattern=-1)))
    assert levels(json.loads(line)) == MAX_LEVELS
    assert line.endswith('"[...]"' + "]" * (MAX_LEVELS - 1) + ',"span":[0,0],"kind":"usage"}')
    # Up to the limit, a value is written whole.
    whole = nest(MAX_LEVELS - 1, pattern=0x5555)
    assert json.loads(event_to_json(TokenUsageEvent(usage_info=whole)))["usage_info"] == whole


def test_values_that_refer_to_themselves_are_written_with_a_placeholder() -> None:
    message: dict[str, Any] = {"role": "user", "content": "hi"}
    messages = [message]
    message["history"] = messages
    done = AgentDoneEvent(reason="done", messages=messages, output="", steps=1)  # type: ignore[list-item]
    line = event_to_json(done)
    assert json.loads(line)["messages"] == [{"role": "user", "content": "hi", "history": "[...]"}]
    assert event_to_json(event_from_json(line)) == line
    # A list of messages that holds itself is no list of messages: written, not read back.
    messages.append(messages)  # type: ignore[arg-type]
    assert json.loads(event_to_json(done))["messages"][1] == "[...]"

    arguments: dict[str, Any] = {"path": "a"}
    arguments["self"] = arguments
    call = ToolCallEvent(tool_name="t", tool_instance=arguments, raw="", span=(0, 0))
    line = event_to_json(call)
    assert json.loads(line)["tool_instance"] == {"path": "a", "self": "{...}"}
    assert event_to_json(event_from_json(line)) == line

    # A result whose details hold the result: the cycle passes through a dataclass.
    detail: dict[str, Any] = {}
    result = ToolResult(tool_name="t", text="", details=(detail,))
    detail["result"] = result
    event = ToolResultEvent(tool_name="t", result=result, call_index=0, step=1)
    line = event_to_json(event)
    assert json.loads(line)["result"]["details"] == [{"result": "ToolResult(...)"}]
    assert event_to_json(event_from_json(line)) == line

    # A value held twice, without a cycle, is written twice.
    shared = [1, {"b": 2}]
    usage = json.loads(event_to_json(TokenUsageEvent(usage_info={"x": shared, "y": [shared]})))
    assert usage["usage_info"] == {"x": shared, "y": [shared]}


class Node(BaseModel):
    child: Any = None


def test_a_model_that_refers_to_itself_is_written_as_its_repr() -> None:
    node = Node()
    node.child = node
    line = event_to_json(ToolCallEvent(tool_name="t", tool_instance=node, raw="", span=(0, 0)))
    assert json.loads(line)["tool_instance"] == repr(node)


@PROPS
@given(
    st.integers(0, 3000),
    st.integers(0, 2**64 - 1),
    st.sampled_from(["usage", "call", "done", "error"]),
    st.booleans(),
)
def test_any_nesting_and_any_cycle_is_written_and_reads_back(
    depth: int, pattern: int, where: str, cycle: bool
) -> None:
    value = nest(depth, pattern)
    if cycle:
        value = [value]
        value.append({"again": value})
    event: Event
    if where == "usage":
        event = TokenUsageEvent(usage_info=value)
    elif where == "call":
        event = ToolCallEvent(tool_name="t", tool_instance={"v": value}, raw="", span=(0, 0))
    elif where == "done":
        event = AgentDoneEvent(reason="done", messages=[{"v": value}], output="", steps=1)  # type: ignore[list-item]
    else:
        event = ParseErrorEvent(error_type="e", message="m", details=({"v": value},), span=(0, 0))
    line = event_to_json(event)
    assert levels(json.loads(line)) <= MAX_LEVELS
    assert event_to_json(event_from_json(line)) == line


# --- lines that are not events, whatever their shape or size --------------------------------

DEEP_LINES = [
    "[" * 1000 + "]" * 1000,
    '{"a":' * 1000 + "1" + "}" * 1000,
    '[{"a":' * 5000 + "1" + "}]" * 5000,
    "[" * 100_000,
    '{"kind":"usage","usage_info":' + "[" * 100_000 + "]" * 100_000 + ',"span":[0,0]}',
    '{"kind":5,"x":' + "[" * 990 + "]" * 990 + "}",
    '{"kind":"nope","x":' + "{}" * 10_000 + "}",
    '{"kind":"agent_done","reason":"bored","messages":' + "[" * 990 + "]" * 990 + "}",
]


@pytest.mark.parametrize("line", DEEP_LINES, ids=lambda line: line[:12])
def test_a_line_nested_deep_is_a_value_error_that_names_it(line: str) -> None:
    for data in (line, line.encode("utf-8")):
        with pytest.raises(ValueError) as caught:
            event_from_json(data)
        message = str(caught.value)
        assert line[:20] in message and len(message) < 300


def nested_text(depth: int, pattern: int) -> str:
    """``nest(depth, pattern)`` as JSON text, written without recursion."""
    opens = ["[" if pattern >> (level % 64) & 1 else '{"a":' for level in range(depth)]
    closes = ["]" if part == "[" else "}" for part in reversed(opens)]
    return "".join(opens) + "1" + "".join(closes)


@PROPS
@given(st.integers(0, 5000), st.integers(0, 2**64 - 1), st.booleans())
def test_any_nesting_reads_as_an_event_or_a_value_error(
    depth: int, pattern: int, in_an_event: bool
) -> None:
    line = nested_text(depth, pattern)
    if in_an_event:
        line = '{"kind":"usage","usage_info":' + line + ',"span":[0,0]}'
    try:
        event = event_from_json(line)
    except ValueError as exc:
        assert line[:20] in str(exc)
        return
    assert in_an_event and isinstance(event, TokenUsageEvent)
    assert levels(json.loads(event_to_json(event))) <= MAX_LEVELS
