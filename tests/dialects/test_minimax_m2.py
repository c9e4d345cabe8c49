"""minimax_m2: DSML's ``invoke``/``parameter`` shape in ``<minimax:tool_call>``, read and written.

The fixture replies are rendered from MiniMax-M2's chat template
(``tests/fixtures/dialects/minimax_m2/render.py``) and read by ``check_dialect``: whole,
one character at a time, split at every position and as tokens.  No cut or malformed
call ever yields a ``ToolCallEvent``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from stream_parser import ParseErrorEvent, ParserConfig, StreamToolParser, ToolCallEvent
from stream_parser.dialects import dialect_for_model, get_dialect
from stream_parser.dialects.minimax_m2 import MiniMaxDialect
from stream_parser.testing import check_dialect, merge_deltas
from stream_parser.testing.dialects import load_cases
from stream_parser.testing.fixtures import TOOLS
from tests.fixtures.dialects.minimax_m2 import render
from tests.helpers import ENDINGS, assert_all_splittings

MINIMAX = MiniMaxDialect()


class GetWeather(BaseModel):
    location: str
    unit: str | None = None


class GetCurrentTime(BaseModel):
    pass


FIXTURE_TOOLS: dict[str, type[BaseModel]] = {
    **TOOLS,
    "get_weather": GetWeather,
    "get_current_time": GetCurrentTime,
}
_CASES = load_cases(render.HERE / "cases.json")


@pytest.mark.parametrize("case", _CASES, ids=[c["name"] for c in _CASES])
def test_fixture_cases(case: dict[str, Any]) -> None:
    assert case["source"]
    check_dialect("minimax_m2", [case], tools=FIXTURE_TOOLS)


def test_the_fixtures_are_what_the_template_renders() -> None:
    written = render.HERE / "cases.json"
    assert written.read_text(encoding="utf-8") == render.cases_json(render.ABOUT, render.cases())
    assert any(c["name"].startswith("template_") for c in _CASES)
    assert sum("#" in c["source"] for c in _CASES) >= 3  # tracker cases name their issue


def _calls(text: str, **config: Any) -> list[tuple[str, dict[str, Any]]]:
    parser = StreamToolParser(FIXTURE_TOOLS, config=ParserConfig(dialect="minimax_m2", **config))
    events = merge_deltas(parser.feed(text) + parser.close())
    return [
        (e.tool_name, e.tool_instance.model_dump()) for e in events if isinstance(e, ToolCallEvent)
    ]


def test_a_call_without_its_invoke_close_runs_only_when_the_block_ends() -> None:
    body = '<minimax:tool_call>\n<invoke name="read_file">\n<parameter name="path">a</parameter>\n'
    assert _calls(body + "</minimax:tool_call>") == [("read_file", {"path": "a"})]
    # At the stream's end another parameter may have been coming: the call is cut.

    def factory() -> StreamToolParser:
        return StreamToolParser(FIXTURE_TOOLS, config=ParserConfig(dialect="minimax_m2"))

    for end in ENDINGS:
        events = assert_all_splittings(factory, body, end=end)
        assert "unclosed_tool" in [e.error_type for e in events if isinstance(e, ParseErrorEvent)]
        assert not any(isinstance(e, ToolCallEvent) for e in events)


@pytest.mark.parametrize("quoted", ['"read_file"', "'read_file'", "read_file"])
def test_the_name_in_any_quotes(quoted: str) -> None:
    text = (
        f"<minimax:tool_call>\n<invoke name={quoted}>\n<parameter name='path'>a</parameter>\n"
        "</invoke>\n</minimax:tool_call>"
    )
    assert _calls(text) == [("read_file", {"path": "a"})]


def test_a_string_field_keeps_json_looking_text() -> None:
    text = (
        '<minimax:tool_call>\n<invoke name="search">\n<parameter name="query">"quoted"</parameter>'
        '\n<parameter name="tags">["x"]</parameter>\n</invoke>\n</minimax:tool_call>'
    )
    assert _calls(text) == [("search", {"query": '"quoted"', "max_results": 10, "tags": ["x"]})]


@pytest.mark.parametrize(
    ("name", "mapped"),
    [
        ("MiniMaxAI/MiniMax-M2", True),
        ("MiniMaxAI/MiniMax-M2.1", True),
        ("MiniMaxAI/MiniMax-M2.5", True),
        ("hf.co/unsloth/MiniMax-M2-GGUF:Q4_K_M", True),
        ("MiniMaxAI/MiniMax-M1-80k", False),  # another form
        ("MiniMaxAI/MiniMax-M3", False),  # not read until its template is
    ],
)
def test_model_names(name: str, mapped: bool) -> None:
    found = dialect_for_model(name)
    if not mapped:
        assert found is None or found.dialect != "minimax_m2"
        return
    assert found is not None
    assert (found.dialect, found.reasoning, found.prefilled_reasoning) == (
        "minimax_m2",
        ("<think>", "</think>"),
        True,
    )


def test_usage_instructions_show_the_format() -> None:
    for language in ("en", "zh"):
        text = get_dialect("minimax_m2").usage_instructions(
            "read_file", {"path": "a.py"}, language=language
        )
        assert '<parameter name="path">a.py</parameter>' in text
        assert "<minimax:tool_call>" in text.split("\n\n")[0]


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=40, deadline=None)
@given(query=_TEXT, tags=st.lists(_TEXT, max_size=3), max_results=st.integers())
def test_format_call_round_trips(query: str, tags: list[str], max_results: int) -> None:
    args = {"query": query, "tags": tags, "max_results": max_results}
    try:
        written = MINIMAX.format_call("search", args)
    except ValueError:
        return  # </parameter> followed by a tag of the format: refused
    assert _calls("Looking.\n" + written) == [("search", args)]


def test_format_call_refuses_what_cannot_be_read_back() -> None:
    for value in ("a</parameter>\n<parameter name='x'>", "x</parameter>", "y</parameter>\n"):
        with pytest.raises(ValueError, match="cannot be written"):
            MINIMAX.format_call("write_to_file", {"content": value})
    with pytest.raises(ValueError, match="cannot be written"):
        MINIMAX.format_call('say "hi"', {})
