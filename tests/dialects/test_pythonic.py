"""pythonic: calls written as Python (LFM2's list, OLMo 3's lines), read and written.

The fixture replies are rendered from LFM2.5's, LFM2's and OLMo 3's chat templates
(``tests/fixtures/dialects/pythonic/render.py``) and read by ``check_dialect``: whole,
one character at a time, split at every position and as tokens.  The reader is llama's
(``dialects/llama/pythonic.py``): the tracker cases it now reads are read under
``llama`` too.
"""

from __future__ import annotations

import ast
import keyword
import warnings
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from stream_parser import ParserConfig, StreamToolParser, ToolCallEvent
from stream_parser.dialects import ModelDialect
from stream_parser.dialects.llama.pythonic import (
    format_pythonic_call,
    literal_value,
    parse_pythonic_call,
)
from stream_parser.dialects.pythonic import PythonicDialect
from stream_parser.testing import check_dialect
from stream_parser.testing.dialects import load_cases
from tests.dialects.family import THINK, FamilyChecks
from tests.dialects.support import FAMILY_TOOLS, read
from tests.fixtures.dialects.pythonic import render

PYTHONIC = PythonicDialect()


class MemoryGet(BaseModel):
    from_: int = Field(alias="from")
    to: int | None = None


FIXTURE_TOOLS: dict[str, type[BaseModel]] = {**FAMILY_TOOLS, "memory_get": MemoryGet}
_CASES = load_cases(render.HERE / "cases.json")
_TRACKER = {c["name"]: c for c in _CASES if c["source"].startswith(render.PR)}


class TestPythonic(FamilyChecks):
    dialect = "pythonic"
    render = render
    tools = FIXTURE_TOOLS
    templates = 3  # one per template
    names = (
        ("LiquidAI/LFM2-1.2B-Tool", ModelDialect("pythonic", THINK)),
        ("LiquidAI/LFM2.5-8B-A1B", ModelDialect("pythonic", THINK)),
        ("allenai/Olmo-3-7B-Instruct", ModelDialect("pythonic")),
        ("allenai/Olmo-3-32B-Think", ModelDialect("pythonic", THINK, True)),
        ("meta-llama/Llama-4-Scout-17B-16E-Instruct", ModelDialect("llama")),
    )
    usage = (
        '<|tool_call_start|>[read_file(path="a.py")]<|tool_call_end|>',
        "<|tool_call_start|>",
    )


def test_the_tracker_cases_are_the_pull_requests_three() -> None:
    assert len(_TRACKER) == 3  # vLLM PR #48171's three cases


@pytest.mark.parametrize(
    "name", ["raw_newline_inside_a_string", "parameter_named_with_a_python_keyword"]
)
def test_the_shared_reader_fixes_llama_too(name: str) -> None:
    # The same list, as Llama 4 writes it: read under llama as under pythonic.
    case = dict(_TRACKER[name])
    case["text"] = (
        case["text"]
        .replace("<|tool_call_start|>", "<|python_start|>")
        .replace("<|tool_call_end|>", "<|python_end|>")
        .replace("<|im_end|>", "<|eot|>")
    )
    check_dialect("llama", [case], tools=FIXTURE_TOOLS)


def _events(dialect: str, text: str) -> list[Any]:
    return read(dialect, text, tools=FIXTURE_TOOLS)


def test_a_llama4_list_reads_the_same_under_both_dialects() -> None:
    text = "[read_file(path='a.py'), search(query=\"x\", max_results=3)]"
    events = _events("pythonic", text)
    assert events == _events("llama", text)
    assert [e.tool_name for e in events if isinstance(e, ToolCallEvent)] == ["read_file", "search"]


def test_nothing_is_evaluated() -> None:
    assert isinstance(parse_pythonic_call("read_file(path=__import__('os').getcwd())"), str)
    events = _events("pythonic", "<|tool_call_start|>[read_file(path=open('x').read())]")
    assert not [e for e in events if isinstance(e, ToolCallEvent)]


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
_KEYS = st.sampled_from(["query", "from", "class", "x_1", "lambda", "path"])
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | _TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3),
    max_leaves=6,
)


@settings(max_examples=60, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=4))
def test_format_call_round_trips_any_value(args: dict[str, Any]) -> None:
    written = format_pythonic_call([("anything", args)])
    assert parse_pythonic_call(written[1:-1]) == ("anything", args)


def test_every_python_keyword_names_a_parameter() -> None:
    for word in keyword.kwlist:
        assert parse_pythonic_call(f"f({word}=1, x='{word}=2')") == (
            "f",
            {word: 1, "x": f"{word}=2"},
        )


# --- string values, read apart from ``ast`` ------------------------------------------------

# Every escape Python knows (and two it does not, which keep their backslash), and the raw
# line breaks models write inside strings (each is the character, as the tracker fix reads it).
_ESCAPES = (
    *("\\\\", "\\'", '\\"', "\\n", "\\t", "\\r", "\\a", "\\b", "\\f", "\\v", "\\/", "\\d"),
    *("\\0", "\\101", "\\x41", "\\u00e9", "\\ud83d", "\\ude00", "\\U0001F600", "\\N{BULLET}"),
    "\\\n",  # a line continuation: nothing
)
_RAW_BREAKS = {"\n": "\\n", "\r": "\\r"}


@st.composite
def _python_strings(draw: st.DrawFn) -> tuple[str, str]:
    """A string literal as a model writes it, and one Python reads alike: its raw breaks escaped."""
    quote = draw(st.sampled_from("'\""))
    plain = st.characters(blacklist_categories=("Cs",), blacklist_characters=f"\\\n\r\x00{quote}")
    parts = draw(
        st.lists(
            st.text(plain, min_size=1, max_size=4)
            | st.sampled_from(_ESCAPES)
            | st.sampled_from(sorted(_RAW_BREAKS)),
            max_size=10,
        )
    )
    written = quote + "".join(parts) + quote
    return written, quote + "".join(_RAW_BREAKS.get(part, part) for part in parts) + quote


def _python_reads(literal: str) -> Any:
    # Python 3.12+ warns of an escape it does not know (3.10-3.11: a DeprecationWarning).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.literal_eval(literal)


@pytest.mark.filterwarnings("ignore::SyntaxWarning", "ignore::DeprecationWarning")
@settings(max_examples=100, deadline=None)
@given(_python_strings(), _python_strings())
def test_string_values_read_as_python_reads_them(
    first: tuple[str, str], second: tuple[str, str]
) -> None:
    (written, reference), (other, other_reference) = first, second
    value = _python_reads(reference)
    assert literal_value(written) == value
    assert parse_pythonic_call(f"f(a={written}, b=[{other}, 1], c={{{other}: {written}}})") == (
        "f",
        {
            "a": value,
            "b": [_python_reads(other_reference), 1],
            "c": {_python_reads(other_reference): value},
        },
    )


@pytest.mark.parametrize(
    ("text", "arguments"),
    [
        # What only Python's tokenizer places: read whole by ``ast``.
        ("f(a='x', # it's a comment\n b=1)", {"a": "x", "b": 1}),
        ("f(a='''x\n'y'\n''', b=\"\"\"z\"\"\")", {"a": "x\n'y'\n", "b": "z"}),
        ("f(a=r'\\d\\n', b=u'é')", {"a": "\\d\\n", "b": "é"}),
        ("f(a='x' 'y' \"z\")", {"a": "xyz"}),
        ("f(a='_lifted_str_0', b=\"_lifted_str_1\")", {"a": "_lifted_str_0", "b": "_lifted_str_1"}),
        # Keywords and raw breaks repaired around lifted strings.
        ('f(from=\'a\nb\', class="c\\"d")', {"from": "a\nb", "class": 'c"d'}),
        (
            "f(a=['x', \"y\"], b={'k': ('v',)}, c=true, d=null)",
            {"a": ["x", "y"], "b": {"k": ["v"]}, "c": True, "d": None},
        ),
    ],
)
def test_strings_only_ast_places_read_as_before(text: str, arguments: dict[str, Any]) -> None:
    assert parse_pythonic_call(text) == ("f", arguments)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("'f'(a=1)", "is not a call of a tool name"),
        ("f('a'=1)", "is not a Python call (SyntaxError)"),
        ("f(a='x'.upper())", "gives 'a' a value that is not a literal (Call)"),
        ("f(a='x\x00')", "is not a Python call ("),  # SyntaxError; ValueError on 3.10
        ("f(a='\\x4')", "is not a Python call (SyntaxError)"),
        ("f(a='open", "is not a Python call (SyntaxError)"),
    ],
)
def test_a_string_out_of_place_is_refused_in_the_same_words(text: str, reason: str) -> None:
    # The words ``ast`` gives when it reads the call whole, as before strings were lifted.
    refused = parse_pythonic_call(text)
    assert isinstance(refused, str)
    assert refused.startswith(reason)


def test_a_value_dense_with_escapes_reads_across_the_unescaping_windows() -> None:
    value = "".join(f"line {i}: 'a\\b' \"c\"\t\u00e9\n" for i in range(8000))  # 200 KB
    for written in (
        format_pythonic_call([("f", {"v": value})]),
        PYTHONIC.format_call("f", {"v": value}),
    ):
        start = written.index("f(")
        assert parse_pythonic_call(written[start : written.index(")]") + 1]) == ("f", {"v": value})


@pytest.mark.parametrize("dialect", ["pythonic", "llama"])
def test_escaped_strings_read_the_same_however_the_stream_is_cut(dialect: str) -> None:
    text = "[search(query='it\\'s \\x41\\u00e9\\\\', tags=[\"a\\/b\", 'c\\nd'], max_results=2)]"
    args = {"query": "it's Aé\\", "tags": ["a\\/b", "c\nd"], "max_results": 2}
    for pieces in ([text], list(text), *([text[:cut], text[cut:]] for cut in range(len(text)))):
        parser = StreamToolParser(FIXTURE_TOOLS, config=ParserConfig(dialect=dialect))
        events = [e for piece in pieces for e in parser.feed(piece)] + parser.close()
        calls = [
            (e.tool_name, e.tool_instance.model_dump())
            for e in events
            if isinstance(e, ToolCallEvent)
        ]
        assert calls == [("search", args)]
