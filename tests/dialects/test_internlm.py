"""internlm: InternLM 2 and 2.5's ``<|action_start|><|plugin|>`` calls, read and written.

The fixture replies are rendered from vLLM's InternLM2 tool chat template
(``tests/fixtures/dialects/internlm/render.py``) and read by ``check_dialect``: whole,
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
from stream_parser.dialects.internlm import InternLMDialect
from stream_parser.testing import check_dialect, merge_deltas
from stream_parser.testing.dialects import load_cases
from stream_parser.testing.fixtures import TOOLS
from tests.fixtures.dialects.internlm import render

INTERNLM = InternLMDialect()


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
    check_dialect("internlm", [case], tools=FIXTURE_TOOLS)


def test_the_fixtures_are_what_the_template_renders() -> None:
    written = render.HERE / "cases.json"
    assert written.read_text(encoding="utf-8") == render.cases_json(render.ABOUT, render.cases())
    assert any(c["name"].startswith("template_") for c in _CASES)
    assert sum("#" in c["source"] for c in _CASES) >= 3  # tracker cases name their issue


def _calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    parser = StreamToolParser(FIXTURE_TOOLS, config=ParserConfig(dialect="internlm"))
    events = merge_deltas(parser.feed(text) + parser.close())
    return [
        (e.tool_name, e.tool_instance.model_dump()) for e in events if isinstance(e, ToolCallEvent)
    ]


def test_model_names() -> None:
    for name in (
        "internlm/internlm2_5-7b-chat",
        "internlm/internlm2-chat-20b",
        "internlm2:7b",
        "internlm/internlm2_5-20b-chat",
    ):
        found = dialect_for_model(name)
        assert found is not None, name
        assert found.dialect == "internlm"
        assert found.reasoning is None
    for other in ("internlm/internlm-xcomposer2-7b", "internlm/internlm3-8b-instruct"):
        assert dialect_for_model(other) is None, other


def test_usage_instructions_show_the_format() -> None:
    for language in ("en", "zh"):
        text = get_dialect("internlm").usage_instructions(
            "read_file", {"path": "a.py"}, language=language
        )
        block = '<|action_start|><|plugin|>\n{"name": "read_file", "parameters": {"path": "a.py"}}'
        assert block + "<|action_end|>" in text
        assert "<|action_start|><|plugin|>" in text.split("\n\n")[0]


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=40, deadline=None)
@given(query=_TEXT, tags=st.lists(_TEXT, max_size=3), max_results=st.integers())
def test_format_call_round_trips(query: str, tags: list[str], max_results: int) -> None:
    args = {"query": query, "tags": tags, "max_results": max_results}
    assert _calls("Looking. " + INTERNLM.format_call("search", args)) == [("search", args)]
