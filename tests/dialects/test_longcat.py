"""longcat: hermes' JSON object inside ``<longcat_tool_call>``, read and written.

The fixture replies are rendered from LongCat-Flash-Chat's documented chat format
(``tests/fixtures/dialects/longcat/render.py``) and read by ``check_dialect``: whole,
one character at a time, split at every position and as tokens.  No cut or malformed
call ever yields a ``ToolCallEvent``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_parser import ParserConfig, StreamToolParser, ToolCallEvent
from stream_parser.dialects import dialect_for_model, get_dialect
from stream_parser.dialects.longcat import LongcatDialect
from stream_parser.testing import check_dialect, merge_deltas
from stream_parser.testing.dialects import load_cases
from tests.dialects.support import FAMILY_TOOLS
from tests.fixtures.dialects.longcat import render

LONGCAT = LongcatDialect()


_CASES = load_cases(render.HERE / "cases.json")


@pytest.mark.parametrize("case", _CASES, ids=[c["name"] for c in _CASES])
def test_fixture_cases(case: dict[str, Any]) -> None:
    assert case["source"]
    check_dialect("longcat", [case], tools=FAMILY_TOOLS)


def test_the_fixtures_are_what_the_template_renders() -> None:
    written = render.HERE / "cases.json"
    assert written.read_text(encoding="utf-8") == render.cases_json(render.ABOUT, render.cases())
    assert sum(c["name"].startswith("template_") for c in _CASES) >= 3
    assert sum("#" in c["source"] for c in _CASES) >= 3  # tracker cases name their issue


def _events(dialect: str, text: str) -> list[Any]:
    parser = StreamToolParser(FAMILY_TOOLS, config=ParserConfig(dialect=dialect))
    return merge_deltas(parser.feed(text) + parser.close())


def _outcomes(dialect: str, text: str) -> list[tuple[str, Any]]:
    return [
        (e.kind, e.tool_instance if isinstance(e, ToolCallEvent) else getattr(e, "error_type", ""))
        for e in _events(dialect, text)
        if e.kind in ("tool_call", "error", "tool_call_start", "tool_arguments_delta")
    ]


@pytest.mark.parametrize(
    "name",
    ["template_calls_placed_consecutively", "raw_line_break_inside_a_string", "malformed_call"],
)
def test_a_block_reads_as_the_same_object_in_hermes_tags(name: str) -> None:
    text = next(c["text"] for c in _CASES if c["name"] == name)
    hermes = (
        text.replace("</longcat_s>", "")
        .replace("</longcat_tool_call>", "</tool_call>")
        .replace("<longcat_tool_call>", "<tool_call>")
    )
    assert _outcomes("longcat", text) == _outcomes("hermes", hermes)


def test_model_names() -> None:
    for name in (
        "meituan-longcat/LongCat-Flash-Chat",
        "LongCat-Flash-Chat-FP8",
        "longcat_flash_chat",
    ):
        found = dialect_for_model(name)
        assert found is not None
        assert (found.dialect, found.reasoning, found.prefilled_reasoning) == (
            "longcat",
            None,
            False,
        )
    # The later models write another format: not mapped to this dialect.
    for name in ("meituan-longcat/LongCat-Flash-Thinking-2601", "LongCat-Flash-Lite"):
        found = dialect_for_model(name)
        assert found is None or found.dialect != "longcat"


def test_usage_instructions_show_the_format() -> None:
    for language in ("en", "zh"):
        text = get_dialect("longcat").usage_instructions(
            "read_file", {"path": "a.py"}, language=language
        )
        assert '<longcat_tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}' in text
        assert "<longcat_tool_call>" in text.split("\n\n")[0]


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=40, deadline=None)
@given(query=_TEXT, tags=st.lists(_TEXT, max_size=3), max_results=st.integers())
def test_format_call_round_trips(query: str, tags: list[str], max_results: int) -> None:
    args = {"query": query, "tags": tags, "max_results": max_results}
    text = "Looking.\n" + LONGCAT.format_call("search", args) + "</longcat_s>"
    calls = [
        (e.tool_name, e.tool_instance.model_dump())
        for e in _events("longcat", text)
        if isinstance(e, ToolCallEvent)
    ]
    assert calls == [("search", args)]
