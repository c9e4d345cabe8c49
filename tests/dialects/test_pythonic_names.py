"""Pythonic calls of tools named with ``-``, ``.`` or ``/`` (MCP's ``get-weather``).

Python reads ``get-weather(city='Paris')`` as a subtraction, so the name is split off
before the ``(`` and only the argument list is parsed: every entry point (llama's list,
LFM2's list, OLMo 3's ``<function_calls>`` lines, ``parse_pythonic_call``, with strings
read apart or by ``ast`` whole) reads the name as written, and what
``format_pythonic_call`` writes reads back.  Streams are read whole, one character at a
time and split at every position.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from stream_parser import (
    ConfigError,
    ParseErrorEvent,
    ParseEvent,
    ParserConfig,
    StreamToolParser,
    TextOutputEvent,
    ToolCallEvent,
    ToolCallStartEvent,
)
from stream_parser.dialects.llama.pythonic import (
    format_pythonic_call,
    is_pythonic_name,
    parse_pythonic_call,
)
from stream_parser.dialects.llama.pythonic_syntax import PYTHONIC_NAME_PATTERN
from stream_parser.dialects.pythonic import PythonicDialect
from stream_parser.schema.names import TOOL_NAME_PATTERN
from tests.helpers import ParserFactory, assert_all_splittings, feed_all


class City(BaseModel):
    city: str


class Issue(BaseModel):
    title: str
    labels: list[str] = []


MCP_TOOLS: dict[str, type[BaseModel]] = {
    "get-weather": City,
    "github.create_issue": Issue,
    "fs/read": City,
    "b": City,
}


def _factory(dialect: str, tools: dict[str, type[BaseModel]] | None = None) -> ParserFactory:
    registry = MCP_TOOLS if tools is None else tools
    return lambda: StreamToolParser(registry, config=ParserConfig(dialect=dialect))


def _calls(events: list[ParseEvent]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (e.tool_name, e.tool_instance.model_dump()) for e in events if isinstance(e, ToolCallEvent)
    ]


def _starts(events: list[ParseEvent]) -> list[str]:
    return [e.tool_name for e in events if isinstance(e, ToolCallStartEvent)]


# --- streaming, every split ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("dialect", "text"),
    [
        ("llama", "[get-weather(city='Paris')]"),
        ("llama", '<|python_start|>[github.create_issue (title="x")]<|python_end|>'),
        ("pythonic", "<|tool_call_start|>[fs/read(city='a'), get-weather(city='b')]"),
        ("pythonic", "[github.create_issue(title='t', labels=['a'])]"),
        ("pythonic", "<function_calls>\nget-weather(city='Lima')\n</function_calls>"),
    ],
)
def test_names_with_hyphens_dots_and_slashes_stream_in_every_split(dialect: str, text: str) -> None:
    events = assert_all_splittings(_factory(dialect), text)
    assert not [e for e in events if isinstance(e, ParseErrorEvent)]
    calls = _calls(events)
    assert calls and _starts(events) == [name for name, _ in calls]
    # Each call is the tool its text names, with the arguments written after its "(".
    for name, arguments in calls:
        assert name in text
        assert all(str(value) in text for value in arguments.values() if value)


def test_each_entry_point_reads_the_names() -> None:
    expected = ("get-weather", {"city": "Paris"})
    assert parse_pythonic_call("get-weather(city='Paris')") == expected
    assert parse_pythonic_call("  get-weather \t(city='Paris')\n") == expected
    # A triple-quoted string: read by ``ast`` whole, not apart.
    assert parse_pythonic_call("get-weather(city='''Paris''')") == expected
    # A keyword parameter name, repaired; a raw line break in a string.
    assert parse_pythonic_call("a.b-c/d(from=1, s='x\ny')") == ("a.b-c/d", {"from": 1, "s": "x\ny"})
    # A Python keyword as the tool's name is a name too, and a leading digit.
    assert parse_pythonic_call("class(x=1)") == ("class", {"x": 1})
    assert parse_pythonic_call("3d-render(x=1)") == ("3d-render", {"x": 1})


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("get-weather('Paris')", "passes positional arguments"),
        ("get-weather(city=x)", "gives 'city' a value that is not a literal (Name)"),
        ("get-weather(city='a')(b=1)", "is not a call of a tool name"),
        ("get-weather(city='a') + 1", "is not a call of a tool name"),
        ("get-weather(city='a'", "is not a Python call (SyntaxError)"),
        # Not a name before the "(": read as Python, as before.
        ("a - b(c=1)", "is not a call of a tool name"),
        ("'x'(c=1)", "is not a call of a tool name"),
    ],
)
def test_what_follows_the_name_is_still_python(text: str, reason: str) -> None:
    assert parse_pythonic_call(text) == reason


def test_prose_that_looks_like_a_list_is_text_as_before() -> None:
    # At the start of a reply, a list that names no registered tool is an answer: text.
    # ``x-b`` is not ``b``, and ``x - b`` is not the tool ``x-b`` (whitespace inside).
    tools: dict[str, type[BaseModel]] = {"b": City, "x-b": City}
    for text in ("[x-y(b)] is the difference", "[x - b(city='a')] is a difference"):
        events = assert_all_splittings(_factory("llama", tools), text)
        assert events == [TextOutputEvent(text=text, span=(0, len(text)))]


def test_an_announced_name_is_never_refused_for_its_name() -> None:
    # After a marker every element has an outcome: an unregistered hyphenated name is
    # ``unknown_tool``, an expression is ``malformed_tool``; neither was announced.
    text = "<|python_tag|>[get-wether(city='a'), x - b(city='a'), get-weather(city='b')]"
    events = feed_all(_factory("llama")(), [text])
    errors = [(e.error_type, e.span) for e in events if isinstance(e, ParseErrorEvent)]
    assert [kind for kind, _ in errors] == ["unknown_tool", "malformed_tool"]
    assert _starts(events) == ["get-weather"]
    assert _calls(events) == [("get-weather", {"city": "b"})]


# --- the writer's names read back -------------------------------------------------------------

_NAMES = st.from_regex(PYTHONIC_NAME_PATTERN, fullmatch=True)
_TOOL_NAMES = st.from_regex(TOOL_NAME_PATTERN, fullmatch=True)
_ARGS = st.dictionaries(
    st.sampled_from(["city", "from", "x_1"]),
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    max_size=3,
)


@settings(max_examples=60, deadline=None)
@given(_NAMES, _ARGS, st.booleans())
def test_any_name_of_the_grammar_round_trips(
    name: str, args: dict[str, Any], double_quoted: bool
) -> None:
    assert is_pythonic_name(name)
    written = format_pythonic_call([(name, args)], double_quoted=double_quoted)
    assert parse_pythonic_call(written[1:-1]) == (name, args)


@settings(max_examples=24, deadline=None)
@given(_TOOL_NAMES, st.text(max_size=8), st.sampled_from(["llama", "lfm2", "olmo"]), st.data())
def test_every_valid_tool_name_streams_back_under_its_name(
    name: str, city: str, form: str, data: st.DataObject
) -> None:
    # The registry takes every name of TOOL_NAME_PATTERN; each is read in each form.
    written = format_pythonic_call([(name, {"city": city})])
    text = {
        "llama": written,
        "lfm2": PythonicDialect().format_call(name, {"city": city}),
        "olmo": f"<function_calls>\n{written[1:-1]}\n</function_calls>",
    }[form]
    cut = data.draw(st.integers(min_value=0, max_value=len(text)))
    for pieces in ([text], [text[:cut], text[cut:]]):
        parser = _factory("llama" if form == "llama" else "pythonic", {name: City})()
        events = feed_all(parser, pieces)
        assert _starts(events) == [name]
        assert _calls(events) == [(name, {"city": city})]


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=12).filter(lambda name: not is_pythonic_name(name)))
def test_the_writer_refuses_a_name_it_cannot_write(name: str) -> None:
    with pytest.raises(ConfigError, match="cannot be written as a pythonic call"):
        format_pythonic_call([(name, {})])
