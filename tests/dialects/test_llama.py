"""llama: Llama 3.x JSON calls and Llama 4 pythonic calls, as the whole reply.

Every stream goes through ``assert_all_splittings`` (whole, one character at a time,
every split point, each run lossless), and through a token-level split where each
marker is one token.  A cut or malformed call never yields a ``ToolCallEvent``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from stream_parser import (
    ChatDelta,
    FramingEvent,
    ParseEvent,
    ParserConfig,
    StreamToolParser,
    TextOutputEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolParamDeltaEvent,
)
from stream_parser.core.kit import ReaderPlugin
from stream_parser.dialects import DIALECTS, get_dialect
from stream_parser.dialects.llama import (
    CALL_TAGS,
    END_MARKERS,
    LlamaDialect,
    PythonicReader,
    format_pythonic_call,
    parse_pythonic_call,
)
from stream_parser.testing import assert_lossless, check_dialect, merge_deltas
from tests.dialects import support
from tests.dialects.test_dialects import check_spans
from tests.helpers import ENDINGS, assert_all_splittings, feed_all
from tests.tools_fixture import TOOLS, ReadFile, Search, WriteToFile

LLAMA = ParserConfig(dialect="llama")
_SOME = settings(max_examples=40, deadline=None)


def factory(tools: Any = TOOLS, config: ParserConfig = LLAMA) -> Any:
    return lambda: StreamToolParser(tools, config=config)


_TOKEN = re.compile(
    "|".join(re.escape(m) for m in (*CALL_TAGS, *END_MARKERS)) + r"|\w+|\s+|[^\w\s]"
)


def tokens(text: str) -> list[str]:
    """The text cut as a tokeniser would: each special marker one token."""
    return _TOKEN.findall(text)


def events_of(text: str, tools: Any = TOOLS) -> list[ParseEvent]:
    """Merged events, the same under every chunking (tokens included), spans checked."""
    events = assert_all_splittings(factory(tools), text)
    check_spans(events, text)
    pieces = tokens(text)
    assert "".join(pieces) == text
    by_token = feed_all(factory(tools)(), pieces)
    assert_lossless(by_token, text)
    assert merge_deltas(by_token) == events
    return events


calls = support.calls


errors = support.errors


text_of = support.text_of


# --- Llama 3.x JSON -------------------------------------------------------------------------


def test_a_json_call_is_the_reply() -> None:
    text = '{"name": "read_file", "parameters": {"path": "src/app.py"}}'
    events = events_of(text)
    assert calls(events) == [("read_file", ReadFile(path="src/app.py"))]
    start = next(e for e in events if isinstance(e, ToolCallStartEvent))
    assert text[start.span[0] : start.span[1]] == '"read_file"'
    delta = next(e for e in events if isinstance(e, ToolArgumentsDeltaEvent))
    assert delta.delta == '{"path": "src/app.py"}'
    assert text_of(events) == ""


def test_arguments_key_and_python_tag() -> None:
    text = '<|python_tag|>{"name": "search", "arguments": {"query": "q", "max_results": "3"}}'
    events = events_of(text)
    assert calls(events) == [("search", Search(query="q", max_results=3))]
    framing = [e.text for e in events if isinstance(e, FramingEvent)]
    assert framing == ["<|python_tag|>"]


def test_the_arguments_stream_before_the_call_closes() -> None:
    parser = StreamToolParser(TOOLS, config=LLAMA)
    seen = parser.feed('{"name": "write_to_file", "parameters": {"path": "a", "content": "x')
    kinds = [e.kind for e in seen]
    assert kinds[0] == "tool_call_start" and "tool_arguments_delta" in kinds
    assert not any(isinstance(e, ToolCallEvent) for e in seen)


def test_json_that_is_not_a_call_is_text() -> None:
    for text in (
        '{"answer": 42}',
        '{"name": "read_file", "path": "a"}',  # no parameters key: an answer
        '{"name": "nowhere", "parameters": {}}',  # not a registered tool
        "[1, 2, {\"a\": 'b'}]",
    ):
        events = events_of(text)
        assert [type(e) for e in events] == [TextOutputEvent], text
        assert text_of(events) == text
    # A JSON answer followed by prose streams on as text.
    events = events_of('{"answer": 42}\nThat is all.')
    assert text_of(events) == '{"answer": 42}\nThat is all.' and not errors(events)


def test_calls_count_only_at_the_start_of_the_reply() -> None:
    call = '{"name": "read_file", "parameters": {"path": "a"}}'
    events = events_of(f"Sure: {call}")
    assert not calls(events) and text_of(events) == f"Sure: {call}"
    events = events_of(f"\n\n {call}")  # whitespace before it is fine: framing
    assert calls(events) == [("read_file", ReadFile(path="a"))]
    assert text_of(events) == ""
    assert [e.text for e in events if isinstance(e, FramingEvent)] == ["\n\n "]


def test_parallel_calls_separated_by_semicolons_and_newlines() -> None:
    a = '{"name": "read_file", "parameters": {"path": "a"}}'
    b = '{"name": "search", "parameters": {"query": "b"}}'
    for sep in (";", "; ", "\n", ";\n", " \n\n"):
        events = events_of(a + sep + b)
        assert calls(events) == [("read_file", ReadFile(path="a")), ("search", Search(query="b"))]
        assert [e.call_index for e in events if isinstance(e, ToolCallEvent)] == [0, 1]
        assert text_of(events) == ""


def test_brackets_quotes_and_separators_inside_strings_do_not_end_a_json_call() -> None:
    content = 'x = {"a": [1, 2]}; }\\ \'"\n{"name": "search"}'
    a = json.dumps({"name": "write_to_file", "parameters": {"path": "p", "content": content}})
    b = '{"name": "search", "parameters": {"query": "}]"}, "extra": [[{}], "]"]}'
    events = events_of(f"{a};{b} That is all.")
    assert calls(events) == [
        ("write_to_file", WriteToFile(path="p", content=content)),
        ("search", Search(query="}]")),
    ]
    spans = [e.span for e in events if isinstance(e, ToolCallEvent)]
    assert [(end - start) for start, end in spans] == [len(a), len(b)]
    assert text_of(events) == "That is all."  # the space after the calls is framing


def test_text_after_the_calls() -> None:
    a = '{"name": "read_file", "parameters": {"path": "a"}}'
    events = events_of(a + "<|eot_id|>\nDone. {not a call}")
    assert calls(events) == [("read_file", ReadFile(path="a"))]
    assert text_of(events) == "Done. {not a call}"
    assert [e.text for e in events if isinstance(e, FramingEvent)] == ["<|eot_id|>", "\n"]
    # After the calls a partial end marker is text.
    events = events_of(a + "<|eo!")
    assert calls(events) and text_of(events) == "<|eo!"
    events = events_of(a + " <|eo")
    assert calls(events) and text_of(events) == "<|eo"


def test_with_other_dialects() -> None:
    # What ends a llama block is read by the other dialects: a hermes block after it.
    text = (
        '{"name": "read_file", "parameters": {"path": "a"}}\n'
        '<tool_call>{"name": "read_file", "arguments": {"path": "b"}}</tool_call>'
    )
    config = ParserConfig(dialect=("llama", "hermes"))
    events = assert_all_splittings(factory(config=config), text)
    assert calls(events) == [("read_file", ReadFile(path="a")), ("read_file", ReadFile(path="b"))]


def test_markers_inside_string_values() -> None:
    content = 'x}"; {"name": "read_file", "parameters": {}} <|eot_id|> ]) [f()]'
    args = json.dumps({"path": "p", "content": content})
    text = f'{{"name": "write_to_file", "parameters": {args}}}'
    events = events_of(text)
    assert calls(events) == [("write_to_file", WriteToFile(path="p", content=content))]
    py = format_pythonic_call([("write_to_file", {"path": "p", "content": content + "'\\"})])
    events = events_of(py)
    assert calls(events) == [("write_to_file", WriteToFile(path="p", content=content + "'\\"))]


def test_unknown_tool_after_a_call_tag() -> None:
    # A tag says the model meant a call: an unknown name is an error, not an answer.
    text = '<|python_tag|>{"name": "delete_all", "parameters": {}}'
    events = events_of(text)
    assert errors(events) == ["unknown_tool"] and not calls(events)
    assert '{"name": "delete_all", "parameters": {}}' in text_of(events)
    # Beside a registered call, an unknown one is an error too.
    text = '{"name": "read_file", "parameters": {"path": "a"}}; {"name": "nope", "parameters": {}}'
    events = events_of(text)
    assert calls(events) == [("read_file", ReadFile(path="a"))]
    assert errors(events) == ["unknown_tool"]


def test_invalid_and_malformed_arguments() -> None:
    events = events_of('{"name": "search", "parameters": {"max_results": "many"}}')
    assert errors(events) == ["invalid_params"] and not calls(events)
    events = events_of('{"name": "search", "parameters": [1, 2]}')
    assert errors(events) == ["malformed_tool"] and not calls(events)
    events = events_of('{"name": "search", "parameters": {"query": q}}')
    assert errors(events) == ["malformed_tool"] and not calls(events)
    assert text_of(events) == '{"name": "search", "parameters": {"query": q}}'


@_SOME
@given(st.integers(min_value=1, max_value=57))
def test_a_call_cut_by_the_end_of_the_stream_never_runs(cut: int) -> None:
    text = '{"name": "read_file", "parameters": {"path": "src/app.py"}}'[:cut]
    events = events_of(text)
    assert not calls(events)
    assert text_of(events) == text
    assert errors(events) in ([], ["unclosed_tool"])
    if cut > len('{"name": "read_file", "parameters": '):
        assert errors(events) == ["unclosed_tool"]


def test_a_call_over_max_tool_size() -> None:
    config = ParserConfig(dialect="llama", max_tool_size=64)
    body = json.dumps({"path": "p", "content": "x" * 200})
    text = f'{{"name": "write_to_file", "parameters": {body}}}'
    events = merge_deltas(feed_all(StreamToolParser(TOOLS, config=config), [text]))
    assert errors(events) == ["tool_too_large"] and not calls(events)
    assert text_of(events) == text
    answer = json.dumps({"content": "x" * 200})  # an answer: no error, text
    events = merge_deltas(feed_all(StreamToolParser(TOOLS, config=config), [answer]))
    assert not errors(events) and text_of(events) == answer


def test_a_reply_that_is_only_reasoning() -> None:
    text = "<think>\nNothing to call.\n</think>\n"
    events = events_of(text)
    assert not calls(events) and not errors(events)
    thinking = '<think>Read it.</think>\n{"name": "read_file", "parameters": {"path": "a"}}'
    events = events_of(thinking)
    assert calls(events) == [("read_file", ReadFile(path="a"))]


# --- Llama 4 pythonic -----------------------------------------------------------------------


def test_pythonic_calls() -> None:
    text = "[read_file(path='a.py'), search(query=\"x\", max_results=-3, tags=['a', \"b\"])]"
    events = events_of(text)
    assert calls(events) == [
        ("read_file", ReadFile(path="a.py")),
        ("search", Search(query="x", max_results=-3, tags=["a", "b"])),
    ]
    starts = [e for e in events if isinstance(e, ToolCallStartEvent)]
    assert [text[e.span[0] : e.span[1]] for e in starts] == ["read_file", "search"]
    assert [e.call_index for e in starts] == [0, 1]
    assert text_of(events) == ""


def test_pythonic_values_stream_verbatim() -> None:
    text = "[search(query=\"x, (y)\", max_results=-3, tags=['a', \"b\"]), read_file(path = 'a')]"
    events = events_of(text)
    deltas = [(e.param, e.delta) for e in events if isinstance(e, ToolParamDeltaEvent)]
    assert deltas == [
        ("query", '"x, (y)"'),
        ("max_results", "-3"),
        ("tags", "['a', \"b\"]"),
        ("path", " 'a'"),
    ]
    parser = StreamToolParser(TOOLS, config=LLAMA)
    seen = parser.feed("[search(query='it is ")
    assert [(e.kind, getattr(e, "delta", "")) for e in seen] == [
        ("tool_call_start", ""),
        ("tool_param_delta", "'it is "),
    ]


class _PythonicAfterMarker(ReaderPlugin):
    """A format of its own that writes the pythonic list after a marker of its choice."""

    name = "pythonic_after_marker"
    start_tags = ("<calls>",)
    end_tag = ""
    reader = PythonicReader
    reserve_index = False


def test_the_pythonic_reader_serves_a_format_with_markers_of_its_own() -> None:
    text = "Sure.<calls> [read_file(path='a.py'), search(query=\"x\")]\nDone."
    events = support.checked_events(
        lambda: StreamToolParser(TOOLS, plugins=[_PythonicAfterMarker()]),
        text,
        support.tokens(re.compile("<calls>"), text),
    )
    assert calls(events) == [("read_file", ReadFile(path="a.py")), ("search", Search(query="x"))]
    assert [e.text for e in events if isinstance(e, FramingEvent)] == ["<calls> [", ", ", "]\n"]
    assert text_of(events) == "Sure.Done."
    starts = [e.call_index for e in events if isinstance(e, ToolCallStartEvent)]
    assert starts == [0, 1]
    # Without the list after it, the marker is framing and the rest is text.
    events = support.checked_events(
        lambda: StreamToolParser(TOOLS, plugins=[_PythonicAfterMarker()]),
        "<calls> no",
        ["<calls>", " no"],
    )
    assert calls(events) == [] and text_of(events) == "no"


def test_pythonic_values_are_never_evaluated() -> None:
    for text in (
        "[read_file(path=__import__('os').getcwd())]",
        "[read_file(path='a' + 'b')]",
        "[read_file('a')]",
        "[read_file(**{'path': 'a'})]",
        "[read_file(path=f'{1}')]",
        "[read_file(path='a', path='b')]",
        "[read_file(path=[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]])]",
    ):
        events = merge_deltas(feed_all(StreamToolParser(TOOLS, config=LLAMA), [text]))
        assert errors(events) == ["malformed_tool"], text
        assert not calls(events) and text_of(events) == text.removeprefix("[")[:-1]


def test_pythonic_literals() -> None:
    assert parse_pythonic_call("f(a=true, b=null, c=(1, 2.5), d={'k': False}, e=+4)") == (
        "f",
        {"a": True, "b": None, "c": [1, 2.5], "d": {"k": False}, "e": 4},
    )
    assert isinstance(parse_pythonic_call("f(a=1j)"), str)
    assert isinstance(parse_pythonic_call("f(a=b'x')"), str)
    assert isinstance(parse_pythonic_call("f(a={[1]: 2})"), str)
    assert isinstance(parse_pythonic_call("f(a=1"), str)


def test_pythonic_unknown_tool_and_invalid_params() -> None:
    events = events_of("<|python_start|>[nope(a=1)]<|python_end|>")
    assert errors(events) == ["unknown_tool"] and text_of(events) == "nope(a=1)"
    events = events_of("[search(max_results='many')]")
    assert errors(events) == ["invalid_params"] and not calls(events)
    events = events_of("[read_file(path='a'), 3]")
    assert calls(events) == [("read_file", ReadFile(path="a"))]
    assert errors(events) == ["malformed_tool"]


def test_pythonic_list_cut() -> None:
    for text in ("[read_file(path='a')", "[read_file(path='a'", "[read_file(path='a)]"):
        events = events_of(text)
        assert errors(events) == ["unclosed_tool"] and not calls(events), text
        assert text_of(events) == text


def test_text_before_between_and_after() -> None:
    # Before: whitespace only (a call is the reply); between: separators; after: text.
    # The whitespace before the calls is framing, as the list's own markup is.
    text = ' \n[read_file(path="a"),\n search(query="b")]\n\nThe files.'
    events = events_of(text)
    assert len(calls(events)) == 2
    assert text_of(events) == "The files."
    framing = [e.text for e in events if isinstance(e, FramingEvent)]
    assert framing == [" \n", "[", ",\n ", "]\n\n"]


# --- writing --------------------------------------------------------------------------------


_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=8,
)


class Anything(BaseModel):
    value: Any = None
    text: str = ""


@_SOME
@given(_VALUES, st.text(max_size=30))
def test_round_trip(value: Any, text: str) -> None:
    tools = {"anything": Anything}
    args = {"value": value, "text": text}
    for written in (
        get_dialect("llama").format_call("anything", args),
        format_pythonic_call([("anything", args), ("anything", {"text": text})]),
    ):
        parser = StreamToolParser(tools, config=LLAMA)
        events = merge_deltas(feed_all(parser, [written]))
        assert_lossless(events, written)
        got = [e.tool_instance for e in events if isinstance(e, ToolCallEvent)]
        assert got[0] == Anything(value=value, text=text), written


def test_format_call_is_the_template_rendering() -> None:
    dialect = DIALECTS["llama"]
    assert isinstance(dialect, LlamaDialect)
    written = dialect.format_call("search", {"query": "é", "max_results": 3})
    assert written == '{"name": "search", "parameters": {"query": "é", "max_results": 3}}'
    assert format_pythonic_call([("read_file", {"path": "a"}), ("search", {})]) == (
        "[read_file(path='a'), search()]"
    )
    instructions = dialect.usage_instructions("read_file", {"path": "a.py"})
    assert dialect.format_call("read_file", {"path": "a.py"}) in instructions
    assert '"parameters"' in dialect.usage_instructions(language="zh")


# --- replies and failure cases from real output ---------------------------------------------


class GetWeather(BaseModel):
    location: str
    unit: str | None = None


class GetTime(BaseModel):
    timezone: str


class WebSearch(BaseModel):
    query: str


class NoArguments(BaseModel):
    pass


class SearchItems(BaseModel):
    filters: list[list[str]]
    limit: int = 10


class Bash(BaseModel):
    command: str
    timeout: int | None = None


FIXTURE_TOOLS: dict[str, type[BaseModel]] = {
    **TOOLS,  # the shared tools, which the format-rule cases call
    "get_weather": GetWeather,
    "get_time": GetTime,
    "brave_web_search": WebSearch,
    "get_bitcoin_price": NoArguments,
    "get_fee_recommendation": NoArguments,
    "get_fee_estimates": NoArguments,
    "get_todays_date": NoArguments,
    "search_items": SearchItems,
    "Bash": Bash,
}

_CASES = json.loads(
    (Path(__file__).parent.parent / "fixtures" / "dialects" / "llama" / "cases.json").read_text(
        encoding="utf-8"
    )
)


@pytest.mark.parametrize("case", _CASES, ids=[c["name"] for c in _CASES])
def test_fixture_cases(case: dict[str, Any]) -> None:
    assert case["source"]
    check_dialect("llama", [case], tools=FIXTURE_TOOLS)


_PIECES = st.sampled_from(
    [
        "{",
        "}",
        "[",
        "]",
        "(",
        ")",
        '"',
        "'",
        "\\",
        ";",
        ",",
        " ",
        "\n",
        "x",
        '"name": "read_file"',
        '"parameters": ',
        '{"path": "a"}',
        "read_file(",
        "search(",
        "path=",
        "query=",
        "=",
        "<|python_tag|>",
        "<|python_start|>",
        "<|python_end|>",
        "<|eot_id|>",
        "<|eo",
        "<think>",
        "</think>",
    ]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_PIECES, max_size=8), st.sampled_from(ENDINGS))
# A call opener after framing at the reply's start: the start's tags still count there.
@example(["<|python_end|>", "{", "<|python_tag|>"], None)
def test_any_stream_reads_the_same_however_it_is_cut(
    pieces: list[str], end: ChatDelta | None
) -> None:
    # Model text never raises; every chunking gives the same, lossless events, however
    # the reply ends.
    text = "".join(pieces)
    events = assert_all_splittings(factory(), text, end=end)
    check_spans(events, text)
    for call in calls(events):
        assert call[0] in ("read_file", "search")


def test_an_agent_speaking_llama() -> None:
    from stream_parser.testing import ScriptedModel
    from tests.agent.test_agent_react import agent, last_content

    call = get_dialect("llama").format_call("read_file", {"path": "b.txt"})
    model = ScriptedModel([f"{call}<|eot_id|>", "It says world."], chunk_size=(1, 7), seed=3)
    run = agent(model, dialect="llama").run_sync("b.txt?")
    assert run.reason == "done" and run.output == "It says world."
    assert last_content(model.requests[1].messages) == "[read_file] result:\nworld"
    prompt = agent(ScriptedModel([]), dialect="llama").system_prompt()
    assert '{"name": "example_tool", "parameters": {"parameter_name": "value"}}' in prompt
