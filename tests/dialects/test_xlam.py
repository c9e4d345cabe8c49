"""xlam: Salesforce xLAM-2's array of calls, the whole reply or wrapped, read and written.

The fixture replies are rendered from the xLAM-2 templates vLLM ships
(``tests/fixtures/dialects/xlam/render.py``) and read by ``check_dialect``: whole, one
character at a time, split at every position and as tokens.  No cut or malformed call
ever yields a ``ToolCallEvent``, and JSON that is an answer is text.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from stream_parser import ParserConfig, StreamToolParser, ToolArgumentsDeltaEvent, ToolCallEvent
from stream_parser.dialects import dialect_for_model, get_dialect
from stream_parser.dialects.xlam import XlamDialect
from stream_parser.errors import ConfigError
from stream_parser.testing import check_chunkings, check_dialect, merge_deltas
from stream_parser.testing.dialects import load_cases
from stream_parser.testing.fixtures import TOOLS
from tests.fixtures.dialects.xlam import render

XLAM = XlamDialect()


class GetWeather(BaseModel):
    location: str
    unit: str | None = None


class GetCurrentTime(BaseModel):
    pass


class GetCurrentWeather(BaseModel):
    city: str
    state: str
    unit: str


FIXTURE_TOOLS: dict[str, type[BaseModel]] = {
    **TOOLS,
    "get_weather": GetWeather,
    "get_current_time": GetCurrentTime,
    "get_current_weather": GetCurrentWeather,
}
_CASES = load_cases(render.HERE / "cases.json")


@pytest.mark.parametrize("case", _CASES, ids=[c["name"] for c in _CASES])
def test_fixture_cases(case: dict[str, Any]) -> None:
    assert case["source"]
    check_dialect("xlam", [case], tools=FIXTURE_TOOLS)


def test_the_fixtures_are_what_the_templates_render() -> None:
    written = render.HERE / "cases.json"
    assert written.read_text(encoding="utf-8") == render.cases_json(render.ABOUT, render.cases())
    assert any(c["name"].startswith("template_") for c in _CASES)
    assert sum("#" in c["source"] for c in _CASES) >= 4  # tracker cases name their issue


def _parser() -> StreamToolParser:
    return StreamToolParser(FIXTURE_TOOLS, config=ParserConfig(dialect="xlam"))


def _arguments(events: list[Any]) -> dict[int, str]:
    """Each call's streamed arguments, joined."""
    out: dict[int, str] = {}
    for event in events:
        if isinstance(event, ToolArgumentsDeltaEvent):
            out[event.call_index] = out.get(event.call_index, "") + event.delta
    return out


def test_each_call_streams_its_own_arguments_once() -> None:
    # vLLM #51697: the arguments came twice; #47901: a call after {} streamed {}.
    text = (
        '[{"name": "get_current_time", "arguments": {}}, '
        '{"name": "get_current_weather", "arguments": {"city": "X", "state": "Y", "unit": "c"}}]'
    )
    events = check_chunkings(_parser, text, label="two calls")
    assert _arguments(events) == {0: "{}", 1: '{"city": "X", "state": "Y", "unit": "c"}'}
    for form in (f"[TOOL_CALLS]{text}", f"```json\n{text}\n```", f"<tool_call>{text}</tool_call>"):
        parser = _parser()
        events = merge_deltas(parser.feed("Sure. " + form) + parser.close())
        assert _arguments(events) == {0: "{}", 1: '{"city": "X", "state": "Y", "unit": "c"}'}


def test_prose_that_mentions_a_marker_is_text() -> None:
    for text in (
        "Write `<tool_call>` then the array.",
        "The [TOOL_CALLS] token opens Mistral's calls.",
        "Use ```python\nprint(1)\n``` to print.",
    ):
        events = check_chunkings(_parser, text, label=text)
        assert [e.kind for e in events] == ["text"] * len(events)
        assert "".join(e.text for e in events) == text


def test_dialects_that_claim_its_markers_cannot_be_combined_with_it() -> None:
    for other in ("hermes", "qwen3_coder", "glm", "mistral", "llama", "pythonic"):
        with pytest.raises(ConfigError, match="cannot be combined"):
            StreamToolParser(FIXTURE_TOOLS, config=ParserConfig(dialect=("xlam", other)))


def test_model_names() -> None:
    for name in (
        "Salesforce/Llama-xLAM-2-8b-fc-r",
        "Salesforce/xLAM-2-32b-fc-r",
        "Salesforce/xLAM-2-1b-fc-r-gguf",
        "llama-xlam-2-70b-fc-r",
    ):
        found = dialect_for_model(name)
        assert found is not None, name
        assert found.dialect == "xlam"
        assert found.reasoning is None
    for other in ("Salesforce/xLAM-7b-fc-r", "Salesforce/xLAM-8x7b-r"):
        found = dialect_for_model(other)
        assert found is None or found.dialect != "xlam", other


def test_usage_instructions_show_the_format() -> None:
    for language in ("en", "zh"):
        text = get_dialect("xlam").usage_instructions(
            "read_file", {"path": "a.py"}, language=language
        )
        assert text.endswith('[{"name": "read_file", "arguments": {"path": "a.py"}}]')
        assert "JSON" in text.split("\n\n")[0]


def _calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    parser = _parser()
    events = merge_deltas(parser.feed(text) + parser.close())
    return [
        (e.tool_name, e.tool_instance.model_dump()) for e in events if isinstance(e, ToolCallEvent)
    ]


def test_format_calls_writes_one_array() -> None:
    written = XLAM.format_calls([("read_file", {"path": "a"}), ("get_current_time", {})])
    assert written.startswith("[") and written.count("[") == 1
    assert _calls(written) == [("read_file", {"path": "a"}), ("get_current_time", {})]


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=40, deadline=None)
@given(query=_TEXT, tags=st.lists(_TEXT, max_size=3), max_results=st.integers())
def test_format_call_round_trips(query: str, tags: list[str], max_results: int) -> None:
    args = {"query": query, "tags": tags, "max_results": max_results}
    assert _calls(XLAM.format_call("search", args)) == [("search", args)]
    assert _calls("Looking.\n```json\n" + XLAM.format_call("search", args) + "\n```") == [
        ("search", args)
    ]
