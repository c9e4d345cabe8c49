"""phi4_mini: Phi-4-mini's ``functools`` marker and one JSON array of calls, read and written.

The fixture replies are rendered from vLLM's Phi-4-mini tool chat template
(``tests/fixtures/dialects/phi4_mini/render.py``) and read by ``check_dialect``: whole,
one character at a time, split at every position and as tokens.  No cut or malformed
call ever yields a ``ToolCallEvent``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from stream_parser import ParserConfig, StreamToolParser, ToolCallEvent
from stream_parser.dialects import dialect_for_model, get_dialect
from stream_parser.dialects.phi4_mini import Phi4MiniDialect
from stream_parser.testing import check_dialect, merge_deltas
from stream_parser.testing.dialects import load_cases
from stream_parser.testing.fixtures import TOOLS
from tests.fixtures.dialects.phi4_mini import render

PHI = Phi4MiniDialect()


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
    check_dialect("phi4_mini", [case], tools=FIXTURE_TOOLS)


def test_the_fixtures_are_what_the_template_renders() -> None:
    written = render.HERE / "cases.json"
    assert written.read_text(encoding="utf-8") == render.cases_json(render.ABOUT, render.cases())
    assert any(c["name"].startswith("template_") for c in _CASES)
    assert sum("#" in c["source"] for c in _CASES) >= 3  # tracker cases name their issue


def _calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    parser = StreamToolParser(FIXTURE_TOOLS, config=ParserConfig(dialect="phi4_mini"))
    events = merge_deltas(parser.feed(text) + parser.close())
    return [
        (e.tool_name, e.tool_instance.model_dump()) for e in events if isinstance(e, ToolCallEvent)
    ]


def test_model_names() -> None:
    for name in (
        "microsoft/Phi-4-mini-instruct",
        "phi4-mini:3.8b",
        "unsloth/Phi-4-mini-instruct-GGUF",
        "microsoft/Phi-4-multimodal-instruct",
    ):
        found = dialect_for_model(name)
        assert found is not None, name
        assert found.dialect == "phi4_mini"
        assert found.reasoning is None
    for other in ("microsoft/Phi-4-mini-reasoning", "microsoft/phi-4", "phi3.5:3.8b"):
        assert dialect_for_model(other) is None, other


def test_usage_instructions_show_the_format() -> None:
    for language in ("en", "zh"):
        text = get_dialect("phi4_mini").usage_instructions(
            "read_file", {"path": "a.py"}, language=language
        )
        assert 'functools[{"name": "read_file", "arguments": {"path": "a.py"}}]' in text
        assert "functools" in text.split("\n\n")[0]


def test_format_calls_writes_one_array() -> None:
    written = PHI.format_calls([("read_file", {"path": "a"}), ("get_current_time", {})])
    assert _calls(written) == [("read_file", {"path": "a"}), ("get_current_time", {})]


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=40, deadline=None)
@given(query=_TEXT, tags=st.lists(_TEXT, max_size=3), max_results=st.integers())
def test_format_call_round_trips(query: str, tags: list[str], max_results: int) -> None:
    args = {"query": query, "tags": tags, "max_results": max_results}
    assert _calls("Looking. " + PHI.format_call("search", args)) == [("search", args)]
