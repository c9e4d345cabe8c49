"""gemma4: ``<|tool_call>call:NAME{key:<|"|>text<|"|>}<tool_call|>``, read and written.

Every stream goes through ``assert_all_splittings`` (whole, one character at a time,
split at every position) and a token-level split where each of the format's markers
is one token, as a Gemma tokenizer streams them.  No cut or malformed call ever yields
a ``ToolCallEvent``.
"""

from __future__ import annotations

import json
import re
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
    ParserConfig,
    StreamToolParser,
    ThinkingEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
)
from stream_parser.dialects import get_dialect
from stream_parser.dialects.gemma4 import Gemma4Dialect, parse_call
from stream_parser.testing import check_dialect, merge_deltas
from tests.dialects import support
from tests.helpers import ENDINGS, assert_all_splittings, run
from tests.tools_fixture import TOOLS, ExecuteCommand, ReadFile, Search, WriteToFile

D = '<|"|>'
GEMMA = Gemma4Dialect()
_SOME = settings(max_examples=40, deadline=None)


class Meta(BaseModel):
    draft: bool
    votes: int


class CreateIssue(BaseModel):
    title: str
    labels: list[str]
    meta: Meta


class GetWeather(BaseModel):
    location: str
    unit: str = "celsius"


class Grep(BaseModel):
    include: str
    output_mode: str
    path: str
    pattern: str


class Write(BaseModel):
    content: str
    filePath: str


class Terminal(BaseModel):
    command: str


class ExecutePython(BaseModel):
    code: str


class WebSearch(BaseModel):
    query: str
    limit: int = 5


class Edit(BaseModel):
    oldText: str
    path: str


class Analyse(BaseModel):
    pdfs: list[str]
    prompt: str


class Zip(BaseModel):
    code: str
    count: int
    values: list[int] = []


FIXTURE_TOOLS: dict[str, type[BaseModel]] = {
    **TOOLS,  # the shared tools, which the format-rule cases call
    "get_weather": GetWeather,
    "create_issue": CreateIssue,
    "grep": Grep,
    "write": Write,
    "terminal": Terminal,
    "execute_python": ExecutePython,
    "web_search": WebSearch,
    "edit": Edit,
    "analyse": Analyse,
}
ALL_TOOLS: dict[str, type[BaseModel]] = {**TOOLS, **FIXTURE_TOOLS, "zip": Zip}


def factory(tools: dict[str, type[BaseModel]] = ALL_TOOLS, **config: Any) -> Any:
    cfg = ParserConfig(**{"dialect": "gemma4", **config})
    return lambda: StreamToolParser(tools, config=cfg)


_MARKERS = re.compile(
    r'(<\|tool_call>|<tool_call\|>|<\|"\|>|<\|channel>|<channel\|>|<\|tool_response>)'
)


def tokens(text: str) -> list[str]:
    """The text cut as a Gemma tokenizer streams it: each marker one token, words apart."""
    return support.tokens(_MARKERS, text, words=True)


def events_of(text: str, **config: Any) -> list[ParseEvent]:
    """Merged events, the same under every chunking (token-level included), spans checked."""
    make = factory(**config)
    return support.checked_events(make, text, tokens(text))


calls, errors, text_of = support.calls, support.errors, support.text_of


def call(name: str, body: str) -> str:
    return f"<|tool_call>call:{name}{{{body}}}<tool_call|>"


# --- reading ----------------------------------------------------------------------------------


def test_a_call_with_text_around_streams_its_arguments() -> None:
    body = f"path:{D}src/app.py{D}"
    text = f"Let me read it.{call('read_file', body)}Done."
    events = events_of(text)
    assert [e.kind for e in events] == [
        "text",
        "tool_call_start",
        "tool_arguments_delta",
        "tool_call",
        "text",
    ]
    assert text_of(events) == "Let me read it.Done."
    delta = next(e for e in events if isinstance(e, ToolArgumentsDeltaEvent))
    assert delta.delta == "{" + body + "}"
    assert calls(events) == [("read_file", ReadFile(path="src/app.py"))]


def test_values_are_converted_by_the_fields_types() -> None:
    text = call("search", f"max_results:3,query:{D}a, b{D},tags:[{D}x{D},{D}y{D}]")
    assert calls(events_of(text)) == [
        ("search", Search(query="a, b", max_results=3, tags=["x", "y"]))
    ]
    # A bare number for a str field is its text (as written); a string for an int
    # or list field is converted by the field's type.
    text = call("zip", f"code:2139.50,count:{D}7{D},values:{D}[1, 2]{D}")
    assert calls(events_of(text)) == [("zip", Zip(code="2139.50", count=7, values=[1, 2]))]


def test_booleans_nested_objects_and_whitespace() -> None:
    text = call(
        "create_issue",
        f" labels : [ {D}bug{D} , {D}p1{D} ] ,\n meta:{{draft:false,votes:-3}},title:{D}T{D} ",
    )
    assert calls(events_of(text)) == [
        (
            "create_issue",
            CreateIssue(title="T", labels=["bug", "p1"], meta=Meta(draft=False, votes=-3)),
        )
    ]
    text = call("execute_command", f"command:{D}ls{D},requires_approval:true")
    assert calls(events_of(text)) == [
        ("execute_command", ExecuteCommand(command="ls", requires_approval=True))
    ]


def test_markers_inside_string_values_are_content() -> None:
    content = 'x = {"a": [1]}\n<tool_call|> <|tool_call>call:read_file{} "quoted" <|channel>'
    text = call("write_to_file", f"content:{D}{content}{D},path:{D}a.py{D}") + "After."
    events = events_of(text)
    assert calls(events) == [("write_to_file", WriteToFile(path="a.py", content=content))]
    assert text_of(events) == "After."


def test_parallel_calls_and_text_between() -> None:
    one = call("read_file", f"path:{D}a{D}")
    two = call("search", f"query:{D}q{D}")
    events = events_of(f"A {one} B {two}{one} C")
    assert calls(events) == [
        ("read_file", ReadFile(path="a")),
        ("search", Search(query="q")),
        ("read_file", ReadFile(path="a")),
    ]
    assert [e.call_index for e in events if isinstance(e, ToolCallEvent)] == [0, 1, 2]
    # The spaces before the calls are framing; those after them, on their line, prose.
    assert text_of(events) == "A B C"


def test_tool_response_marker_after_a_call_belongs_to_the_call() -> None:
    text = call("read_file", f"path:{D}a{D}") + "<|tool_response>"
    events = events_of(text)
    assert calls(events) == [("read_file", ReadFile(path="a"))]
    assert text_of(events) == ""
    assert events[-1].span == (0, len(text))


def test_unknown_tool() -> None:
    text = call("delete_everything", f"path:{D}/{D}")
    events = events_of(text)
    assert errors(events) == ["unknown_tool"]
    assert not any(isinstance(e, (ToolCallEvent, ToolCallStartEvent)) for e in events)
    assert text_of(events) == text


def test_invalid_arguments() -> None:
    text = call("search", f"max_results:{D}many{D},query:{D}q{D}")
    events = events_of(text)
    assert errors(events) == ["invalid_params"]
    assert not calls(events)
    assert text_of(events) == text
    error = next(e for e in events if isinstance(e, ParseErrorEvent))
    assert error.call_index == 0


@pytest.mark.parametrize(
    "body",
    [
        "path:src/app.py",  # a string without its tokens
        f"path:{D}a{D},path:{D}b{D}",  # a key given twice
        f"path:{D}a{D}}} extra",  # text after the object
        f"path:{D}a{D},",  # a trailing comma
        f"path {D}a{D}",  # no colon
        f"path:[{D}a{D}",  # an array not closed
        "n:1e999",  # a number out of range
        "n:" + "[" * 70 + "]" * 70,  # nested too deep
    ],
)
def test_malformed_arguments_never_run(body: str) -> None:
    text = call("read_file", body)
    events = events_of(text)
    assert errors(events) == ["malformed_tool"]
    assert not calls(events)
    assert text_of(events) == text


@pytest.mark.parametrize(
    "text",
    [
        f"<|tool_call>read_file{{path:{D}a{D}}}<tool_call|>",  # no "call:"
        f"<|tool_call>call:read file{{path:{D}a{D}}}<tool_call|>",  # a name with a space
        "<|tool_call>call:read_file<tool_call|>",  # no arguments
        "<|tool_call><tool_call|>",  # empty
    ],
)
def test_a_call_without_its_head_is_malformed(text: str) -> None:
    events = events_of(text)
    assert errors(events) == ["malformed_tool"]
    assert text_of(events) == text
    assert not any(isinstance(e, ToolCallStartEvent) for e in events)


@pytest.mark.parametrize(
    "cut",
    [
        "<|tool_call>",
        "<|tool_call>call:read_f",
        f"<|tool_call>call:read_file{{path:{D}a",
        f"<|tool_call>call:read_file{{path:{D}a{D}}}",
        f"<|tool_call>call:read_file{{path:{D}a{D}}}<tool_call",
    ],
)
def test_a_call_cut_by_the_end_of_the_stream_never_runs(cut: str) -> None:
    text = "Reading." + cut
    events = events_of(text)
    assert errors(events) == ["unclosed_tool"]
    assert not calls(events)
    assert text_of(events) == text


@_SOME
@given(st.integers(min_value=1, max_value=60))
def test_any_prefix_of_a_call_never_runs(cut: int) -> None:
    full = call("write_to_file", f"content:{D}a}}<tool_call|>{D},path:{D}p{D}")
    prefix = full[: min(cut, len(full) - 1)]
    parser = factory()()
    events = merge_deltas(parser.feed(prefix) + parser.close())
    assert not calls(events)


_PIECES = st.sampled_from(
    [
        "<|tool_call>",
        "<tool_call|>",
        D,
        "<|channel>",
        "thought\n",
        "<channel|>",
        "<|tool_response>",
        "call:",
        "read_file",
        "search",
        "path:",
        "query:",
        "max_results:",
        "{",
        "}",
        "[",
        "]",
        ",",
        ":",
        "1",
        "-2.5",
        "true",
        "null",
        " ",
        "\n",
        "x",
        "<",
        "|",
    ]
)


@_SOME
@given(st.lists(_PIECES, max_size=14), st.data(), st.sampled_from(ENDINGS))
def test_any_text_is_read_the_same_however_it_is_cut(
    pieces: list[str], data: Any, end: ChatDelta | None
) -> None:
    # Nothing raises on model text; the events are lossless and the same for the whole
    # text, one character at a time, and any cut.
    text = "".join(pieces)
    make = factory()
    reference = run(make, [text], end)
    assert run(make, list(text), end) == reference
    cut = data.draw(st.integers(min_value=0, max_value=len(text)))
    assert run(make, [text[:cut], text[cut:]], end) == reference
    for event in reference:
        if isinstance(event, ToolCallEvent):
            assert event.raw.startswith("<|tool_call>")
            assert "<tool_call|>" in event.raw


def test_a_call_over_max_tool_size_is_too_large() -> None:
    text = call("write_to_file", f"content:{D}{'x' * 300}{D},path:{D}a{D}") + "end"
    events = events_of(text, max_tool_size=100)
    assert errors(events)[0] == "tool_too_large"
    assert not calls(events)
    assert text_of(events) == text


def test_deltas_can_be_turned_off() -> None:
    text = call("read_file", f"path:{D}a{D}")
    events = events_of(text, emit_deltas=False)
    assert [e.kind for e in events] == ["tool_call_start", "tool_call"]


def test_a_reply_that_is_only_reasoning() -> None:
    text = "<|channel>thought\nThe user only says hello.\n<channel|>"
    events = events_of(text)
    thinking = [e for e in events if isinstance(e, ThinkingEvent)]
    assert [t.content for t in thinking] == ["The user only says hello."]
    assert text_of(events) == ""
    assert not calls(events)


def test_reasoning_then_a_call() -> None:
    text = (
        "<|channel>thought\nRead it first.\n<channel|>"
        + call("read_file", f"path:{D}a{D}")
        + "<|tool_response>"
    )
    events = events_of(text)
    assert [t.content for t in events if isinstance(t, ThinkingEvent)] == ["Read it first."]
    assert calls(events) == [("read_file", ReadFile(path="a"))]


def test_reasoning_tags_are_the_dialects_unless_set() -> None:
    text = "<|channel>thought\nhm\n<channel|><think>x</think>"
    events = events_of(text)
    assert [e.content for e in events if isinstance(e, ThinkingEvent)] == ["hm"]
    assert text_of(events) == "<think>x</think>"
    mine = events_of(text, thinking_tags=(("<think>", "</think>"),))
    assert [e.content for e in mine if isinstance(e, ThinkingEvent)] == ["x"]


def test_with_other_dialects() -> None:
    text = (
        call("read_file", f"path:{D}a{D}")
        + '<tool_call>{"name": "search", "arguments": {"query": "q"}}</tool_call>'
    )
    make = factory(dialect=("gemma4", "hermes"))
    events = assert_all_splittings(make, text)
    assert calls(events) == [("read_file", ReadFile(path="a")), ("search", Search(query="q"))]


# --- writing ----------------------------------------------------------------------------------


def test_format_call_writes_what_the_chat_template_renders() -> None:
    written = GEMMA.format_call(
        "create_issue",
        {"title": "Crash", "meta": {"votes": 3, "draft": False}, "labels": ["bug"]},
    )
    assert written == (
        f"<|tool_call>call:create_issue{{labels:[{D}bug{D}],"
        f"meta:{{draft:false,votes:3}},title:{D}Crash{D}}}<tool_call|>"
    )
    assert get_dialect("gemma4") is not None


_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**12), max_value=10**12)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | st.text(max_size=12).filter(lambda s: D not in s),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.text(min_size=1, max_size=6).filter(lambda s: D not in s), inner, max_size=3
        )
    ),
    max_leaves=8,
)


@_SOME
@given(st.dictionaries(st.from_regex(r"[a-z_]{1,8}", fullmatch=True), _values, max_size=4))
def test_format_call_round_trips_any_value(args: dict[str, Any]) -> None:
    written = GEMMA.format_call("anything", args)
    name, arguments, _ = parse_call(written[len("<|tool_call>") : -len("<tool_call|>")])
    assert name == "anything"
    assert arguments == json.loads(json.dumps(args))


def test_format_call_round_trips_through_the_parser() -> None:
    args = {"content": 'def f():\n    return {"a": "<tool_call|>"}\n', "path": "src/x.py"}
    text = "Writing.\n" + GEMMA.format_call("write_to_file", args) + "\nDone."
    events = events_of(text)
    assert calls(events) == [("write_to_file", WriteToFile(**args))]


def test_format_call_refuses_what_cannot_be_read_back() -> None:
    with pytest.raises(ValueError, match="cannot be written"):
        GEMMA.format_call("write_to_file", {"content": f"a{D}b"})
    with pytest.raises(ValueError, match="cannot be written"):
        GEMMA.format_call("write to file", {})
    with pytest.raises(ValueError, match="cannot be written"):
        GEMMA.format_call("t", {"x": float("nan")})


def test_usage_instructions_show_the_format() -> None:
    for language in ("en", "zh"):
        text = GEMMA.usage_instructions("read_file", {"path": "a.py"}, language=language)
        assert f"<|tool_call>call:read_file{{path:{D}a.py{D}}}<tool_call|>" in text
        assert "<|tool_call>call:" in text.split("\n\n")[0]


# --- replies and failure cases from real output ---------------------------------------------

_CASES = json.loads(
    (Path(__file__).parent.parent / "fixtures" / "dialects" / "gemma4" / "cases.json").read_text(
        encoding="utf-8"
    )
)


@pytest.mark.parametrize("case", _CASES, ids=[c["name"] for c in _CASES])
def test_fixture_cases(case: dict[str, Any]) -> None:
    assert case["source"]
    check_dialect("gemma4", [case], tools=FIXTURE_TOOLS)
