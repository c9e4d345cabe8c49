# ruff: noqa: RUF001  (the template's label, "assistant:", ends with a fullwidth colon)
"""hunyuan: Hunyuan-A13B's ``<tool_calls>[…]</tool_calls>``, read and written.

The fixture replies are rendered from Hunyuan-A13B's chat template
(``tests/fixtures/dialects/hunyuan/render.py``) and read by ``check_dialect``: whole,
one character at a time, split at every position and as tokens.  No cut or malformed
call ever yields a ``ToolCallEvent``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from stream_parser import FramingEvent, ParserConfig, StreamToolParser, ToolCallEvent
from stream_parser.dialects import dialect_for_model, get_dialect
from stream_parser.dialects.hunyuan import HunyuanDialect
from stream_parser.testing import check_dialect, merge_deltas
from stream_parser.testing.dialects import load_cases
from stream_parser.testing.fixtures import TOOLS
from tests.fixtures.dialects.hunyuan import render

HUNYUAN = HunyuanDialect()


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
    check_dialect("hunyuan", [case], tools=FIXTURE_TOOLS)


def test_the_fixtures_are_what_the_template_renders() -> None:
    written = render.HERE / "cases.json"
    assert written.read_text(encoding="utf-8") == render.cases_json(render.ABOUT, render.cases())
    assert any(c["name"].startswith("template_") for c in _CASES)
    assert sum("#" in c["source"] for c in _CASES) >= 3  # tracker cases name their issue


def _events(text: str, **config: Any) -> list[Any]:
    parser = StreamToolParser(FIXTURE_TOOLS, config=ParserConfig(dialect="hunyuan", **config))
    return merge_deltas(parser.feed(text) + parser.close())


def _calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        (e.tool_name, e.tool_instance.model_dump())
        for e in _events(text)
        if isinstance(e, ToolCallEvent)
    ]


def test_model_names() -> None:
    for name in (
        "tencent/Hunyuan-A13B-Instruct",
        "tencent/Hunyuan-A13B-Instruct-FP8",
        "Hunyuan-A13B-Instruct-GPTQ-Int4",
    ):
        found = dialect_for_model(name)
        assert found is not None, name
        assert found.dialect == "hunyuan"
        assert found.reasoning == ("<think>", "</think>")
        assert not found.prefilled_reasoning  # the model opens <think> itself
    # Other Hunyuan models join once their templates are read.
    for other in ("tencent/Hunyuan-7B-Instruct", "tencent/Hunyuan-MT-7B"):
        assert dialect_for_model(other) is None


def test_the_label_after_the_reasoning_and_answer_tag_is_framing() -> None:
    events = _events("<think>\nx\n</think>\n<answer>\n助手：Hi.\n</answer>")
    framing = [e.text for e in events if isinstance(e, FramingEvent)]
    assert "助手：" in framing
    assert [e.text for e in events if e.kind == "text"] == ["Hi."]


def test_the_label_after_prose_is_text() -> None:
    events = _events("Sure. 助手：Hi.")
    assert not any(isinstance(e, FramingEvent) and e.text == "助手：" for e in events)
    assert "".join(e.text for e in events if e.kind == "text") == "Sure. 助手：Hi."


def test_usage_instructions_show_the_format() -> None:
    for language in ("en", "zh"):
        text = get_dialect("hunyuan").usage_instructions(
            "read_file", {"path": "a.py"}, language=language
        )
        assert (
            '<tool_calls>[{"name": "read_file", "arguments": {"path": "a.py"}}]</tool_calls>'
            in text
        )
        assert "<tool_calls>" in text.split("\n\n")[0]


def test_format_calls_writes_one_array() -> None:
    written = HUNYUAN.format_calls([("read_file", {"path": "a"}), ("get_current_time", {})])
    assert written == (
        '<tool_calls>[{"name": "read_file", "arguments": {"path": "a"}}, '
        '{"name": "get_current_time", "arguments": {}}]</tool_calls>'
    )
    assert _calls(written) == [("read_file", {"path": "a"}), ("get_current_time", {})]


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=40, deadline=None)
@given(query=_TEXT, tags=st.lists(_TEXT, max_size=3), max_results=st.integers())
def test_format_call_round_trips(query: str, tags: list[str], max_results: int) -> None:
    args = {"query": query, "tags": tags, "max_results": max_results}
    reply = f"<answer>\nLooking. {HUNYUAN.format_call('search', args)}\n</answer>"
    assert _calls(reply) == [("search", args)]
