"""gpt_oss: Harmony messages read from the raw stream, the same however it is cut."""

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
    FramingEvent,
    ParseErrorEvent,
    ParseEvent,
    ParserConfig,
    StreamToolParser,
    TextOutputEvent,
    ThinkingEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
)
from stream_parser.dialects import DIALECTS, get_dialect
from stream_parser.dialects.gpt_oss import GPT_OSS_THINKING, GptOssDialect
from stream_parser.testing import assert_lossless, check_dialect, merge_deltas
from tests.dialects import support
from tests.dialects.test_dialects import check_spans, describe, factory
from tests.helpers import ENDINGS, assert_all_splittings, feed_all, run
from tests.tools_fixture import TOOLS, ReadFile, Search, WriteToFile

GPT = ("gpt_oss",)
_SOME = settings(max_examples=40, deadline=None)

HEADER = "<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>"
NEXT = "<|start|>assistant"


def call(name: str, body: str, end: str = "<|call|>") -> str:
    """A call as the model writes it (recipient after the channel)."""
    return HEADER.format(name=name) + body + end


def check(text: str, expected: list[tuple[object, ...]], **config: Any) -> list[ParseEvent]:
    events = assert_all_splittings(factory(GPT, **config), text)
    check_spans(events, text)
    assert describe(events) == expected
    return events


def tokens(text: str) -> list[str]:
    """``text`` cut as a tokenizer would: each special token alone, words in pieces."""
    out: list[str] = []
    for part in re.split(r"(<\|[a-z]+\|>)", text):
        if part.startswith("<|"):
            out.append(part)
        else:
            out.extend(re.findall(r"\s*[^\s]{1,3}|\s+", part))
    return [piece for piece in out if piece]


def cut_events(text: str, chunks: list[str] | None = None) -> list[ParseEvent]:
    """The events of ``text`` when the reply was cut by its length limit."""
    parser = StreamToolParser(TOOLS, config=ParserConfig(dialect="gpt_oss"))
    events: list[ParseEvent] = []
    for chunk in chunks if chunks is not None else [text]:
        events += parser.feed(chunk)
    events += parser.feed_delta(ChatDelta(finish_reason="length"))
    events += parser.close()
    assert_lossless(events, text)
    return merge_deltas(events)


errors = support.errors


def calls(events: list[ParseEvent]) -> list[BaseModel]:
    return [e.tool_instance for e in events if isinstance(e, ToolCallEvent)]


text_of = support.text_of


# --- what each message is ----------------------------------------------------------------


def test_reasoning_then_a_call() -> None:
    text = (
        "<|channel|>analysis<|message|>Read a.py first.<|end|>"
        + NEXT
        + call("read_file", '{"path": "a.py"}')
    )
    events = check(
        text,
        [
            ("thinking_delta", "Read a.py first."),
            ("thinking", "Read a.py first.", True),
            ("start", "read_file", 0),
            ("args", '{"path": "a.py"}'),
            ("call", "read_file", ReadFile(path="a.py"), 0),
        ],
    )
    # The reasoning block spans its header and <|end|>; the call, its header and <|call|>.
    thinking = next(e for e in events if isinstance(e, ThinkingEvent))
    assert text[slice(*thinking.span)].endswith("<|end|>")
    done = next(e for e in events if isinstance(e, ToolCallEvent))
    assert done.raw == text[text.index(NEXT) :]
    start = next(e for e in events if isinstance(e, ToolCallStartEvent))
    assert text[slice(*start.span)] == "functions.read_file"


def test_final_answer_is_text_and_its_markup_framing() -> None:
    text = (
        "<|channel|>analysis<|message|>Easy.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>2 + 2 = 4.<|return|>"
    )
    events = check(
        text,
        [
            ("thinking_delta", "Easy."),
            ("thinking", "Easy.", True),
            ("framing",),
            ("text", "2 + 2 = 4."),
            ("framing",),
        ],
    )
    framing = [e.text for e in events if isinstance(e, FramingEvent)]
    assert framing == ["<|start|>assistant<|channel|>final<|message|>", "<|return|>"]


def test_final_text_streams_as_it_arrives() -> None:
    parser = StreamToolParser(TOOLS, config=ParserConfig(dialect="gpt_oss"))
    parser.feed("<|channel|>final<|message|>")
    first = parser.feed("The answer ")
    # All of it but the trailing space, which the next character decides (framing
    # before a block, or text).
    assert [e.text for e in first if isinstance(e, TextOutputEvent)] == ["The answer"]
    assert parser.pending == " "
    assert [e.text for e in parser.feed("is 4.") if isinstance(e, TextOutputEvent)] == [" is 4."]


def test_text_before_between_and_after_calls() -> None:
    text = (
        "<|channel|>commentary<|message|>Reading both.<|end|>"
        + NEXT
        + call("read_file", '{"path": "a.py"}')
        + NEXT
        + "<|channel|>commentary<|message|>Now the second.<|end|>"
        + NEXT
        + call("read_file", '{"path": "b.py"}')
        + NEXT
        + "<|channel|>final<|message|>Both read."
    )
    check(
        text,
        [
            ("framing",),
            ("text", "Reading both."),
            ("start", "read_file", 0),
            ("args", '{"path": "a.py"}'),
            ("call", "read_file", ReadFile(path="a.py"), 0),
            ("framing",),
            ("text", "Now the second."),
            ("start", "read_file", 1),
            ("args", '{"path": "b.py"}'),
            ("call", "read_file", ReadFile(path="b.py"), 1),
            ("framing",),
            ("text", "Both read."),
        ],
    )


def test_parallel_calls_with_and_without_their_end_tokens() -> None:
    first = HEADER.format(name="read_file") + '{"path": "a"}'
    second = HEADER.format(name="search") + '{"query": "q", "max_results": 2}'
    # Without <|call|> the next header ends the body; <|end|> belongs to the call.
    for text in (
        first + "<|call|>" + NEXT + second + "<|call|>",
        first + NEXT + second,
        first + "<|end|>" + second + "<|return|>",
    ):
        events = check(
            text,
            [
                ("start", "read_file", 0),
                ("args", '{"path": "a"}'),
                ("call", "read_file", ReadFile(path="a"), 0),
                ("start", "search", 1),
                ("args", '{"query": "q", "max_results": 2}'),
                ("call", "search", Search(query="q", max_results=2), 1),
            ],
        )
        assert "".join(e.raw for e in events if isinstance(e, ToolCallEvent)) == text


def test_recipient_before_the_channel() -> None:
    # How the chat template renders a call in the history.
    text = (
        "<|start|>assistant to=functions.search<|channel|>commentary json<|message|>"
        '{"query": "x"}<|call|>'
    )
    check(
        text,
        [
            ("start", "search", 0),
            ("args", '{"query": "x"}'),
            ("call", "search", Search(query="x"), 0),
        ],
    )


def test_markers_inside_string_values_are_content() -> None:
    content = 'print("<|call|>")\n<|end|><|start|>assistant<|channel|>final<|message|>\\'
    body = json.dumps({"path": "a<|call|>.py", "content": content})
    text = call("write_to_file", body)
    check(
        text,
        [
            ("start", "write_to_file", 0),
            ("args", body),
            ("call", "write_to_file", WriteToFile(path="a<|call|>.py", content=content), 0),
        ],
    )


def test_escapes_at_every_place_in_a_string() -> None:
    body = r'{"query": "a\"<|call|>\\", "tags": ["\\\\", "\u003c|call|>"]}'
    check(
        call("search", body),
        [
            ("start", "search", 0),
            ("args", body),
            ("call", "search", Search(query='a"<|call|>\\', tags=["\\\\", "<|call|>"]), 0),
        ],
    )


def test_a_reply_that_is_only_reasoning() -> None:
    check(
        "<|channel|>analysis<|message|>Hmm, nothing to do.<|end|>",
        [
            ("thinking_delta", "Hmm, nothing to do."),
            ("thinking", "Hmm, nothing to do.", True),
        ],
    )
    check(
        "<|channel|>analysis<|message|>Still think",
        [
            ("thinking_delta", "Still think"),
            ("error", "unclosed_thinking"),
            ("thinking", "Still think", False),
        ],
    )


def test_the_dialect_brings_its_reasoning_format() -> None:
    config = ParserConfig(dialect="gpt_oss")
    assert config.thinking_pairs == GPT_OSS_THINKING.tags
    # Other reasoning tags are text for this model.
    check("<think>no</think>", [("text", "<think>no</think>")])
    # With reasoning tags set explicitly, an analysis message is framing and text.
    check(
        "<|channel|>analysis<|message|>plan<|end|>",
        [("framing",), ("text", "plan<|end|>")],
        thinking_tags=(("<think>", "</think>"),),
    )


def test_markup_alone_is_framing_and_prose_with_a_token_is_text() -> None:
    check("<|return|><|call|><|message|>", [("framing",), ("framing",), ("framing",)])
    prose = "The token <|channel|> starts a header\nand that is all."
    check(prose, [("text", prose)])
    long_header = "<|channel|>" + "x" * 600
    check(long_header, [("text", long_header)])


# --- calls that are not executed -----------------------------------------------------------


def test_unknown_tool_is_never_announced() -> None:
    text = "Before" + call("delete_all", "{}") + "after"
    events = check(text, [("text", "Before"), ("error", "unknown_tool"), ("text", text[6:])])
    assert not any(isinstance(e, ToolArgumentsDeltaEvent) for e in events)


def test_invalid_arguments() -> None:
    body = '{"query": "q", "max_results": "many"}'
    text = call("search", body)
    events = check(
        text, [("start", "search", 0), ("args", body), ("error", "invalid_params"), ("text", text)]
    )
    error = next(e for e in events if isinstance(e, ParseErrorEvent))
    assert error.call_index == 0 and error.details


def test_values_are_converted_by_the_fields_types() -> None:
    # A list written as a JSON string is read as the list; a string field keeps such a
    # string as it is; "3" for an int is Pydantic's lax mode.
    body = '{"query": "[1]", "max_results": "3", "tags": "[\\"x\\", \\"y\\"]"}'
    events = check(
        call("search", body),
        [
            ("start", "search", 0),
            ("args", body),
            ("call", "search", Search(query="[1]", max_results=3, tags=["x", "y"]), 0),
        ],
    )
    assert calls(events) == [Search(query="[1]", max_results=3, tags=["x", "y"])]
    events = run(factory(GPT), [call("search", '{"query": "q", "tags": "not a list"}')])
    assert errors(events) == ["invalid_params"]


class Optional_(BaseModel):
    items: list[int] | None = None
    name: str | None = None


def test_optional_structures_and_strings() -> None:
    tools = {"opt": Optional_}
    text = call("opt", '{"items": "[1, 2]", "name": "[3]"}')
    events = run(lambda: StreamToolParser(tools, config=ParserConfig(dialect=GPT)), [text])
    assert calls(events) == [Optional_(items=[1, 2], name="[3]")]
    text = call("opt", '{"items": null, "name": null}')
    events = run(lambda: StreamToolParser(tools, config=ParserConfig(dialect=GPT)), [text])
    assert calls(events) == [Optional_()]


@pytest.mark.parametrize(
    "body",
    [
        "",
        "   ",
        '["a"]',
        "42",
        '{"query": "q"} extra',
        '{"query": "q"}}',
        '{"query": "q",}',
        "{'query': 'q'}",
        '"not an object"',
        '{"query": "q"}<|err|>',
    ],
)
def test_arguments_that_cannot_be_read_are_malformed(body: str) -> None:
    events = assert_all_splittings(factory(GPT), call("search", body))
    check_spans(events, call("search", body))
    assert errors(events) == ["malformed_tool"]
    assert not calls(events)


def test_a_header_ended_by_call_is_malformed() -> None:
    text = "<|channel|>commentary to=functions.search<|call|>"
    check(text, [("error", "malformed_tool"), ("text", text)])


def test_a_body_cut_by_a_header_is_malformed() -> None:
    text = HEADER.format(name="search") + '{"query": "q"' + NEXT + "<|channel|>final<|message|>ok"
    events = assert_all_splittings(factory(GPT), text)
    assert errors(events) == ["malformed_tool"]
    assert text_of(events).endswith("ok") and not calls(events)


def test_a_stray_angle_bracket_after_the_body_ends_it() -> None:
    # "<" cannot be JSON: the call ends before it, however the stream is cut (the core
    # holds back a "<" that may start <|call|>, and releases it when another "<" comes).
    for junk in ("<<|channel|>final<|message|>ok", "<|<|channel|>final<|message|>ok", "<x ok"):
        text = call("search", '{"query": "q"}', end="") + junk
        events = assert_all_splittings(factory(GPT), text)
        check_spans(events, text)
        assert calls(events) == [Search(query="q")]
        assert text_of(events).endswith("ok") and not errors(events)
    text = call("search", '{"query": "q"}', end="") + "<|"
    events = assert_all_splittings(factory(GPT), text)
    assert calls(events) == [Search(query="q")] and text_of(events) == "<|"


# --- the end of the stream -----------------------------------------------------------------


def test_the_last_call_may_end_with_the_stream() -> None:
    text = HEADER.format(name="read_file") + '{"path": "a.py"}\n'
    check(
        text,
        [
            ("start", "read_file", 0),
            ("args", '{"path": "a.py"}\n'),
            ("call", "read_file", ReadFile(path="a.py"), 0),
        ],
    )


@pytest.mark.parametrize(
    "text",
    [
        HEADER.format(name="read_file") + '{"path": "a.py"',
        HEADER.format(name="read_file") + '{"path": "a.py"}, "x',
        HEADER.format(name="read_file") + '{"path": "a.py"}<|en',
        HEADER.format(name="read_file") + '{"path": "a.py"}<|r',
        HEADER.format(name="read_file"),
        "<|channel|>commentary to=functions.read_file <|constr",
    ],
)
def test_a_call_cut_by_the_end_is_never_run(text: str) -> None:
    events = assert_all_splittings(factory(GPT), text)
    check_spans(events, text)
    assert errors(events) == ["unclosed_tool"]
    assert not calls(events)
    assert text_of(events) == text


def test_a_whole_call_in_a_reply_cut_by_its_length_limit_is_never_run() -> None:
    text = "<|channel|>analysis<|message|>Go.<|end|>" + NEXT + HEADER.format(name="read_file")
    text += '{"path": "a.py"}'
    for chunks in ([text], list(text), tokens(text)):
        events = cut_events(text, chunks)
        assert not calls(events)
        assert errors(events) == ["unclosed_tool", "truncated"]
    # Its <|call|> makes it whole: the reply was cut after it.
    events = cut_events(text + "<|call|>")
    assert calls(events) == [ReadFile(path="a.py")]


# --- chunking --------------------------------------------------------------------------------


_REPLY = (
    "<|channel|>analysis<|message|>Need a.py and a search.<|end|>"
    "<|start|>assistant<|channel|>commentary<|message|>Working on it.<|end|>"
    + NEXT
    + call("read_file", '{"path": "a<|call|>.py"}')
    + "<|start|>assistant to=functions.search<|channel|>commentary json<|message|>"
    '{"query": "<|end|>", "tags": ["x"]}<|call|>'
    + NEXT
    + "<|channel|>final<|message|>Done: see <b>a.py</b>.<|return|>"
)


def test_every_marker_as_one_token_reads_as_the_whole() -> None:
    whole = run(factory(GPT), [_REPLY])
    pieces = tokens(_REPLY)
    assert "<|call|>" in pieces and len(pieces) > 30
    assert run(factory(GPT), pieces) == whole
    assert calls(whole) == [ReadFile(path="a<|call|>.py"), Search(query="<|end|>", tags=["x"])]
    assert text_of(whole) == "Working on it.Done: see <b>a.py</b>."


def test_a_long_reply_is_the_same_however_it_is_cut() -> None:
    assert_all_splittings(factory(GPT), _REPLY)


_PIECES = [
    "<|channel|>",
    "<|start|>",
    "assistant",
    "<|message|>",
    "<|end|>",
    "<|call|>",
    "<|return|>",
    "<|constrain|>",
    "analysis",
    "final",
    "commentary",
    " to=functions.search",
    " to=functions.nope",
    " json",
    '{"query": "',
    '"}',
    "\\",
    '"',
    "{",
    "}",
    "<",
    "|",
    "\n",
    "text ",
]


@_SOME
@given(st.lists(st.sampled_from(_PIECES), max_size=16), st.integers(1, 7), st.sampled_from(ENDINGS))
def test_any_markup_is_read_the_same_by_any_chunking(
    pieces: list[str], size: int, end: ChatDelta | None
) -> None:
    text = "".join(pieces)
    whole = run(factory(GPT), [text], end)
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    assert run(factory(GPT), chunks, end) == whole
    assert run(factory(GPT), pieces, end) == whole
    assert run(factory(GPT), list(text), end) == whole
    for event in whole:
        if isinstance(event, ToolCallEvent):
            assert isinstance(event.tool_instance, Search)


# --- options ----------------------------------------------------------------------------------


def test_too_large_call_is_not_executed() -> None:
    body = json.dumps({"path": "a.py", "content": "x" * 200})
    text = call("write_to_file", body)
    events = run(factory(GPT, max_tool_size=100), [text])
    assert errors(events) == ["tool_too_large"] and not calls(events)
    assert next(e for e in events if isinstance(e, ParseErrorEvent)).call_index == 0


def test_without_deltas() -> None:
    events = run(factory(GPT, emit_deltas=False), [call("read_file", '{"path": "a"}')])
    assert [e.kind for e in events] == ["tool_call_start", "tool_call"]


def test_with_other_dialects() -> None:
    text = (
        "<|channel|>analysis<|message|>x<|end|>"
        + NEXT
        + call("read_file", '{"path": "a"}')
        + '<tool_call>{"name": "read_file", "arguments": {"path": "b"}}</tool_call>'
    )
    events = assert_all_splittings(factory(("gpt_oss", "hermes")), text)
    assert calls(events) == [ReadFile(path="a"), ReadFile(path="b")]


# --- writing ----------------------------------------------------------------------------------


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=6,
)


class Anything(BaseModel):
    value: Any = None
    other: str = ""


@_SOME
@given(_VALUES, st.text(max_size=20))
def test_format_call_reads_back(value: Any, other: str) -> None:
    text = GptOssDialect().format_call("anything", {"value": value, "other": other})
    events = run(
        lambda: StreamToolParser({"anything": Anything}, config=ParserConfig(dialect=GPT)),
        tokens(text),
    )
    assert calls(events) == [Anything(value=value, other=other)]


def test_format_call_is_the_template_rendering() -> None:
    dialect = get_dialect("gpt_oss")
    assert DIALECTS["gpt_oss"] is dialect
    assert dialect.format_call("search", {"query": "é <|call|>", "max_results": 3}) == (
        "<|start|>assistant to=functions.search<|channel|>commentary json<|message|>"
        '{"query": "é <|call|>", "max_results": 3}<|call|>'
    )
    for name in ("", "two words", "a<b"):
        with pytest.raises(ValueError, match="gpt_oss"):
            dialect.format_call(name, {})


def test_usage_instructions() -> None:
    dialect = get_dialect("gpt_oss")
    example = dialect.format_call("read_file", {"path": "a.py"})
    for language in ("en", "zh"):
        text = dialect.usage_instructions("read_file", {"path": "a.py"}, language=language)
        assert example in text and "<|call|>" in text.split(example)[0]


# --- replies from the chat template and the servers' issue trackers --------------------------


class GetWeather(BaseModel):
    location: str | None = None
    city: str | None = None
    unit: str = "fahrenheit"


class Ffgrep(BaseModel):
    path: str
    pattern: str


class WriteFile(BaseModel):
    path: str
    content: str


class Shell(BaseModel):
    command: list[str]


FIXTURE_TOOLS: dict[str, type[BaseModel]] = {
    **TOOLS,  # the shared tools, which the format-rule cases call
    "get_weather": GetWeather,
    "ffgrep": Ffgrep,
    "write_file": WriteFile,
    "shell": Shell,
    "read_file": ReadFile,
}
_CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent.parent / "fixtures" / "dialects" / "gpt_oss" / "cases.json").read_text(
        encoding="utf-8"
    )
)


def _fixture_events(case: dict[str, Any], chunks: list[str]) -> list[ParseEvent]:
    parser = StreamToolParser(FIXTURE_TOOLS, config=ParserConfig(dialect="gpt_oss"))
    events = [event for chunk in chunks for event in parser.feed(chunk)]
    if case.get("cut"):
        events += parser.feed_delta(ChatDelta(finish_reason="length"))
    events += parser.close()
    assert_lossless(events, case["text"])
    return merge_deltas(events)


@pytest.mark.parametrize("case", _CASES, ids=[c["name"] for c in _CASES])
def test_fixture_cases(case: dict[str, Any]) -> None:
    assert case["source"]
    check_dialect("gpt_oss", [case], tools=FIXTURE_TOOLS)


def test_there_are_failure_cases_from_issue_trackers() -> None:
    sources = [c["source"] for c in _CASES if "github.com" in c["source"]]
    assert len(sources) >= 3


def test_feed_all_and_merge_agree() -> None:
    # The helper the other tests use merges deltas; the raw stream holds several.
    text = call("read_file", '{"path": "a.py"}')
    raw = feed_all(factory(GPT)(), list(text))
    assert sum(isinstance(e, ToolArgumentsDeltaEvent) for e in raw) > 1
    assert merge_deltas(raw) == run(factory(GPT), [text])


def test_a_react_agent_speaks_gpt_oss() -> None:
    from stream_parser.agent import ReActAgent
    from stream_parser.testing import ScriptedModel
    from stream_parser.tools import tool

    @tool
    def read_file(path: str) -> str:
        """Read a text file.

        Args:
            path: The file's path.
        """
        return {"a.txt": "hello"}[path]

    reply = (
        "<|channel|>analysis<|message|>Read it.<|end|>"
        + NEXT
        + call("read_file", '{"path": "a.txt"}', end="")
    )
    final = (
        "<|channel|>analysis<|message|>It says hello.<|end|>"
        + NEXT
        + "<|channel|>final<|message|>The file says hello."
    )
    model = ScriptedModel([reply, final], chunk_size=3)
    agent = ReActAgent(model, [read_file], dialect="gpt_oss")
    run = agent.run_sync("What is in a.txt?")
    assert (run.reason, run.output, run.steps) == ("done", "The file says hello.", 2)
    assert "<|message|>" in agent.system_prompt()
    assert "hello" in str(model.requests[1].messages[-1]["content"])


# --- where a body's strings are --------------------------------------------------------------


def test_escapes_next_to_markers_at_every_place() -> None:
    # A backslash pair before a quote, an escaped quote before a marker, "<" everywhere.
    query = 'x\\<|call|>\\"<|end|><<|return|>\\\\"'
    body = json.dumps({"query": query, "tags": ["<", "\\", '"<|call|>']})
    check(
        call("search", body),
        [
            ("start", "search", 0),
            ("args", body),
            ("call", "search", Search(query=query, tags=["<", "\\", '"<|call|>']), 0),
        ],
    )


@pytest.mark.parametrize(
    "body",
    [
        '{"query": "q"}] "<|call|>"',  # a stray close, then a string
        '{"query": "q"}}]} "a<|end|>\\"<|call|>"',  # several stray closes
        'x "<|call|>" {"query": "q"}',  # text before the value
        '"{\\"query\\": \\"q\\"}" "<|call|>"',  # a string value, then another
    ],
)
def test_quotes_outside_the_value_still_hold_markers(body: str) -> None:
    # Quotes open strings in the whole body: the markers in them do not end the call,
    # which ends at the first <|call|> outside a string, and is malformed.
    text = call("search", body)
    events = assert_all_splittings(factory(GPT), text)
    check_spans(events, text)
    assert errors(events) == ["malformed_tool"]
    assert not calls(events) and text_of(events) == text


@pytest.mark.parametrize("size", [1, 3, 7, 500, 5000])
def test_a_long_body_is_read_the_same_however_it_is_cut(size: int) -> None:
    # Longer than what the reader holds back between two "<": markers in strings far
    # from any "<" before them are still content.
    content = "a" * 9000 + '\\"<|call|>' + "b" * 5000 + "\\\\" + "<" + "c" * 4100
    body = json.dumps({"path": "p", "content": content})
    text = call("write_to_file", body)
    chunks = [text[k : k + size] for k in range(0, len(text), size)]
    events = merge_deltas(feed_all(factory(GPT)(), chunks))
    check_spans(events, text)
    assert calls(events) == [WriteToFile(path="p", content=content)]
    assert not errors(events)
