"""glm: ``<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``.

Read and written.  Every stream goes through ``assert_all_splittings`` (whole, one
character at a time, split at every position) and a token-level split where each of
the format's markers is one token, as the GLM tokenizer streams them.  No cut or
malformed call ever yields a ``ToolCallEvent``.
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
    ToolCallEvent,
    ToolCallStartEvent,
    ToolParamDeltaEvent,
)
from stream_parser.dialects import get_dialect
from stream_parser.dialects.glm import GlmDialect
from stream_parser.testing import check_dialect, merge_deltas
from tests.dialects import support
from tests.dialects.test_dialects import check_spans
from tests.helpers import ENDINGS, assert_all_splittings, run
from tests.tools_fixture import TOOLS, ReadFile, WriteToFile

GLM = GlmDialect()
_SOME = settings(max_examples=40, deadline=None)


class GetWeather(BaseModel):
    city: str
    days: int = 1


class GetTime(BaseModel):
    pass


class Multiply(BaseModel):
    a: int
    b: int


class Lookup(BaseModel):
    zip: str
    days: int


class AddContact(BaseModel):
    name: str | None
    companies: list[str] = []


class Ls(BaseModel):
    dirPath: str  # the tool's parameter as the model writes it


class Meta(BaseModel):
    draft: bool
    votes: int


class CreateIssue(BaseModel):
    title: str
    labels: list[str]
    meta: Meta


FIXTURE_TOOLS: dict[str, type[BaseModel]] = {
    **TOOLS,  # the shared tools, which the format-rule cases call
    "get_weather": GetWeather,
    "get_time": GetTime,
    "multiply": Multiply,
    "lookup": Lookup,
    "add_contact": AddContact,
    "ls": Ls,
    "create_issue": CreateIssue,
}
ALL_TOOLS: dict[str, type[BaseModel]] = {**TOOLS, **FIXTURE_TOOLS}


def factory(tools: dict[str, type[BaseModel]] = ALL_TOOLS, **config: Any) -> Any:
    cfg = ParserConfig(**{"dialect": "glm", "start_in_thinking": False, **config})
    return lambda: StreamToolParser(tools, config=cfg)


_MARKERS = re.compile(r"(</?tool_call>|</?arg_key>|</?arg_value>|</?think>)")


def tokens(text: str) -> list[str]:
    """The text cut as GLM tokenizer streams it: each marker one token, words apart."""
    return support.tokens(_MARKERS, text, words=True)


def events_of(text: str, **config: Any) -> list[ParseEvent]:
    """Merged events, the same under every chunking (token-level included), spans checked."""
    make = factory(**config)
    return support.checked_events(make, text, tokens(text))


calls, errors, text_of = support.calls, support.errors, support.text_of


def call(name: str, *pairs: tuple[str, str], sep: str = "") -> str:
    body = "".join(f"{sep}<arg_key>{k}</arg_key>{sep}<arg_value>{v}</arg_value>" for k, v in pairs)
    return f"<tool_call>{name}{body}{sep}</tool_call>"


# --- reading ----------------------------------------------------------------------------------


@pytest.mark.parametrize("sep", ["", "\n"], ids=["compact", "newlines"])
def test_a_call_with_text_around_streams_its_arguments(sep: str) -> None:
    text = "Reading it. " + call("read_file", ("path", "src/app.py"), sep=sep) + " Done."
    events = events_of(text)
    assert calls(events) == [("read_file", ReadFile(path="src/app.py"))]
    assert text_of(events) == "Reading it. Done."  # the space before the call is framing
    starts = [e for e in events if isinstance(e, ToolCallStartEvent)]
    assert [e.tool_name for e in starts] == ["read_file"]
    deltas = [e for e in events if isinstance(e, ToolParamDeltaEvent)]
    assert [(e.param, e.delta) for e in deltas] == [("path", "src/app.py")]


def test_values_are_converted_by_the_fields_types() -> None:
    text = call(
        "create_issue",
        ("title", "42"),
        ("labels", '["bug", "ui"]'),
        ("meta", '{"draft": true, "votes": 3}'),
    )
    events = events_of(text)
    assert calls(events) == [
        (
            "create_issue",
            CreateIssue(title="42", labels=["bug", "ui"], meta=Meta(draft=True, votes=3)),
        )
    ]


def test_string_values_are_kept_as_written() -> None:
    value = '  "quoted"\n  {"not": "decoded"}\n'
    events = events_of(call("write_to_file", ("path", "a.py"), ("content", value)))
    assert calls(events) == [("write_to_file", WriteToFile(path="a.py", content=value))]


def test_unknown_and_repeated_parameters() -> None:
    text = call("get_weather", ("city", "Rome"), ("colour", "red"), ("city", "Oslo"))
    events = events_of(text)
    assert errors(events) == ["unknown_param", "duplicate_param"]
    assert calls(events) == [("get_weather", GetWeather(city="Oslo"))]
    spans = [e.span for e in events if isinstance(e, ParseErrorEvent)]
    assert [text[a:b] for a, b in spans] == [
        "<arg_key>colour</arg_key>",
        "<arg_key>city</arg_key>",
    ]
    deltas = [e.param for e in events if isinstance(e, ToolParamDeltaEvent)]
    assert deltas == ["city", "city"]


def test_the_start_event_spans_the_name() -> None:
    text = "<tool_call>  read_file \n<arg_key>path</arg_key><arg_value>a</arg_value></tool_call>"
    events = events_of(text)
    (start,) = [e for e in events if isinstance(e, ToolCallStartEvent)]
    assert text[start.span[0] : start.span[1]] == "read_file"


def test_null_for_an_optional_string_is_none() -> None:
    events = events_of(call("add_contact", ("name", "null")))
    assert calls(events) == [("add_contact", AddContact(name=None))]


def test_markers_inside_string_values_are_content() -> None:
    value = "a </arg_value> b <arg_key>x</arg_key> </tool_call> <tool_call>c"
    events = events_of(call("write_to_file", ("path", "a.py"), ("content", value)))
    assert calls(events) == [("write_to_file", WriteToFile(path="a.py", content=value))]
    assert text_of(events) == ""


def test_parallel_calls_and_text_between() -> None:
    text = (
        "First "
        + call("get_weather", ("city", "Beijing"), sep="\n")
        + " then "
        + call("get_weather", ("city", "Paris"), ("days", "2"))
        + " after"
    )
    events = events_of(text)
    assert calls(events) == [
        ("get_weather", GetWeather(city="Beijing")),
        ("get_weather", GetWeather(city="Paris", days=2)),
    ]
    # The spaces before the calls are framing; those after them, on their line, prose.
    assert text_of(events) == "First then after"
    indexes = [e.call_index for e in events if isinstance(e, ToolCallEvent)]
    assert indexes == sorted(set(indexes))


def test_unknown_tool() -> None:
    text = call("launch", ("target", "moon"))
    events = events_of(text)
    assert errors(events) == ["unknown_tool"] and not calls(events)
    assert text_of(events) == text
    assert not [e for e in events if isinstance(e, ToolParamDeltaEvent)]


def test_invalid_arguments() -> None:
    text = call("get_weather", ("city", "Rome"), ("days", "many"))
    events = events_of(text)
    assert errors(events) == ["invalid_params"] and not calls(events)
    assert text_of(events) == text


@pytest.mark.parametrize(
    "body",
    [
        "get_weather<arg_key>city</arg_key>Rome</arg_value>",
        "get_weather<arg_key>city</arg_key></arg_key><arg_value>Rome</arg_value>",
        "get_weather</arg_key><arg_value>Rome</arg_value>",
        "get_weather<arg_key>city</arg_key><arg_value>Rome</arg_value><arg_key>days",
        "get weather<arg_key>city</arg_key><arg_value>Rome</arg_value>",
        "get_weather<arg_key></arg_key><arg_value>Rome</arg_value>",
        "get_weather<arg_key>city",
        "get_weather<arg_k",
    ],
)
def test_malformed_calls_never_run(body: str) -> None:
    text = f"<tool_call>{body}</tool_call>"
    events = events_of(text)
    assert errors(events) == ["malformed_tool"] and not calls(events)
    assert text_of(events) == text


def test_a_close_tag_followed_by_text_is_content() -> None:
    # "</arg_value>junk": the value goes on, and "</tool_call>" inside it is content too,
    # so the stream ends inside the call.
    text = (
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Rome</arg_value>junk</tool_call>"
    )
    events = events_of(text)
    assert errors(events) == ["unclosed_tool"] and not calls(events)
    assert text_of(events) == text


@pytest.mark.parametrize(
    "cut",
    [
        "<tool_call>get_weather",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Ro",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Rome</arg_value>",
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Rome</arg_value></tool_",
    ],
)
def test_a_call_cut_by_the_end_of_the_stream_never_runs(cut: str) -> None:
    events = events_of("x " + cut)
    assert not calls(events)
    assert errors(events) == ["unclosed_tool"]
    assert text_of(events) == "x " + cut


@_SOME
@given(st.integers(min_value=1, max_value=80))
def test_any_prefix_of_a_call_never_runs(cut: int) -> None:
    text = call("get_weather", ("city", "Rome"), ("days", "3"), sep="\n")
    prefix = text[: min(cut, len(text) - 1)]
    events = run(factory(), [prefix])
    assert not calls(merge_deltas(events))


_PIECES = st.sampled_from(
    [
        "<tool_call>",
        "</tool_call>",
        "<arg_key>",
        "</arg_key>",
        "<arg_value>",
        "</arg_value>",
        "get_weather",
        "city",
        "days",
        "3",
        " ",
        "\n",
        "<",
        "x",
        "</think>",
    ]
)


@_SOME
@given(st.lists(_PIECES, max_size=14), st.data(), st.sampled_from(ENDINGS))
def test_any_text_is_read_the_same_however_it_is_cut(
    pieces: list[str], data: Any, end: ChatDelta | None
) -> None:
    text = "".join(pieces)
    make = factory()
    reference = run(make, [text], end)
    assert run(make, list(text), end) == reference
    cut = data.draw(st.integers(min_value=0, max_value=len(text)))
    assert run(make, [text[:cut], text[cut:]], end) == reference
    check_spans(reference, text)


def test_a_call_over_max_tool_size_is_too_large() -> None:
    text = call("write_to_file", ("path", "a.py"), ("content", "x" * 300))
    events = events_of(text, max_tool_size=100)
    assert "tool_too_large" in errors(events) and not calls(events)
    assert text_of(events) == text


def test_a_stream_error_is_placed_at_the_end_of_the_text_however_cut() -> None:
    # The error comes after the whole reply: its span is the end of the text received,
    # whether or not the parser still holds the "<" (a tag may begin there) when it comes.
    text = "Hmm.</think>Let me look.<tool_call>read_file<arg_key>path</arg_key><arg_value>src/a.py<"
    make = lambda: StreamToolParser(ALL_TOOLS, config=ParserConfig(dialect="glm"))  # noqa: E731
    events = assert_all_splittings(make, text, end=ChatDelta(error="connection reset"))
    stream_errors = [
        e for e in events if isinstance(e, ParseErrorEvent) and e.error_type == "stream_error"
    ]
    assert [e.span for e in stream_errors] == [(len(text), len(text))]
    assert errors(events) == ["stream_error", "unclosed_tool"] and not calls(events)


def test_deltas_can_be_turned_off() -> None:
    events = events_of(call("read_file", ("path", "a.py")), emit_deltas=False)
    assert not [e for e in events if isinstance(e, ToolParamDeltaEvent)]
    assert calls(events) == [("read_file", ReadFile(path="a.py"))]


# --- reasoning ------------------------------------------------------------------------------


def test_a_reply_that_is_only_reasoning() -> None:
    for text in ("<think>Just thinking.</think>", "Just thinking.</think>"):
        events = events_of(text, start_in_thinking=True)
        assert [e.content for e in events if isinstance(e, ThinkingEvent)] == ["Just thinking."]
        assert not calls(events) and text_of(events) == ""


def test_reasoning_then_a_call() -> None:
    text = "Need the file.</think>" + call("read_file", ("path", "a.py"))
    events = events_of(text, start_in_thinking=True)
    assert [e.content for e in events if isinstance(e, ThinkingEvent)] == ["Need the file."]
    assert calls(events) == [("read_file", ReadFile(path="a.py"))]


def test_reasoning_tags_are_the_dialects_unless_set() -> None:
    text = "<think>hm</think>[THINK]x[/THINK]"
    events = events_of(text, start_in_thinking=None)
    assert [e.content for e in events if isinstance(e, ThinkingEvent)] == ["hm"]
    assert text_of(events) == "[THINK]x[/THINK]"
    mine = events_of(text, thinking_tags=(("[THINK]", "[/THINK]"),))
    assert [e.content for e in mine if isinstance(e, ThinkingEvent)] == ["x"]


def test_with_hermes() -> None:
    hermes = '<tool_call>\n{"name": "read_file", "arguments": {"path": "h.py"}}\n</tool_call>'
    text = hermes + " and " + call("read_file", ("path", "g.py"))
    for dialects in (("hermes", "glm"), ("glm", "hermes")):
        events = events_of(text, dialect=dialects)
        assert calls(events) == [
            ("read_file", ReadFile(path="h.py")),
            ("read_file", ReadFile(path="g.py")),
        ]


def test_with_qwen3_coder() -> None:
    qwen = (
        "<tool_call>\n<function=read_file>\n<parameter=path>\nq.py\n</parameter>\n"
        "</function>\n</tool_call>"
    )
    text = qwen + call("read_file", ("path", "g.py"))
    events = events_of(text, dialect=("qwen3_coder", "glm"))
    assert calls(events) == [
        ("read_file", ReadFile(path="q.py")),
        ("read_file", ReadFile(path="g.py")),
    ]


# --- writing --------------------------------------------------------------------------------


def test_format_call_writes_what_the_chat_template_renders() -> None:
    assert get_dialect("glm") is not None
    written = GLM.format_call("get_weather", {"city": "Beijing", "days": 3, "tags": ["a"]})
    assert written == (
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value>"
        '<arg_key>days</arg_key><arg_value>3</arg_value><arg_key>tags</arg_key><arg_value>["a"]</arg_value>'
        "</tool_call>"
    )


class Mixed(BaseModel):
    s: str = ""
    n: int = 0
    b: bool = False
    items: list[int] = []
    d: dict[str, int] = {}


_ARGS = st.fixed_dictionaries(
    {},
    optional={
        "s": st.text(max_size=12),
        "n": st.integers(),
        "b": st.booleans(),
        "items": st.lists(st.integers(), max_size=3),
        "d": st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    },
)


@_SOME
@given(_ARGS)
def test_format_call_round_trips_any_value(args: dict[str, Any]) -> None:
    try:
        text = GLM.format_call("mixed", args)
    except ValueError:
        assert "</arg_value>" in args.get("s", "")
        return
    make = factory({"mixed": Mixed})
    got = calls(run(make, [text]))
    assert got == [("mixed", Mixed(**args))]
    assert run(make, list(text)) == run(make, [text])


def test_format_call_round_trips_through_the_parser() -> None:
    args = {"path": "a b.py", "content": "line 1\n</arg_value> x\n"}
    events = events_of(GLM.format_call("write_to_file", args))
    assert calls(events) == [("write_to_file", WriteToFile(**args))]


def test_format_call_refuses_what_cannot_be_read_back() -> None:
    with pytest.raises(ValueError):
        GLM.format_call("write_to_file", {"content": "a</arg_value><arg_key>b"})
    with pytest.raises(ValueError):
        GLM.format_call("write_to_file", {"content": "a</arg_value>\n</tool_call>"})
    with pytest.raises(ValueError):
        GLM.format_call("bad name", {})


def test_usage_instructions_show_the_format() -> None:
    for language in ("en", "zh"):
        text = GLM.usage_instructions("read_file", {"path": "a.py"}, language=language)
        assert "<arg_key>" in text
        assert GLM.format_call("read_file", {"path": "a.py"}) in text


# --- replies and failure cases from real output ---------------------------------------------

_CASES = json.loads(
    (Path(__file__).parent.parent / "fixtures" / "dialects" / "glm" / "cases.json").read_text(
        encoding="utf-8"
    )
)


@pytest.mark.parametrize("case", _CASES, ids=[c["name"] for c in _CASES])
def test_fixture_cases(case: dict[str, Any]) -> None:
    assert case["source"]
    check_dialect("glm", [case], tools=FIXTURE_TOOLS)
