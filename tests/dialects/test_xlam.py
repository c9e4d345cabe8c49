"""xlam: Salesforce xLAM-2's array of calls, the whole reply or wrapped, read and written.

The fixture replies are rendered from the xLAM-2 templates vLLM ships
(``tests/fixtures/dialects/xlam/render.py``) and read by ``check_dialect``: whole, one
character at a time, split at every position and as tokens.  No cut or malformed call
ever yields a ``ToolCallEvent``, and JSON that is an answer is text.
"""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from stream_parser import ParserConfig, StreamToolParser, ToolArgumentsDeltaEvent
from stream_parser.dialects import ModelDialect, get_dialect
from stream_parser.dialects.xlam import XlamDialect
from stream_parser.errors import ConfigError
from stream_parser.testing import check_chunkings, merge_deltas
from tests.dialects.family import FamilyChecks
from tests.dialects.support import FAMILY_TOOLS, read_calls
from tests.fixtures.dialects.xlam import render

XLAM = XlamDialect()


class GetCurrentWeather(BaseModel):
    city: str
    state: str
    unit: str


FIXTURE_TOOLS: dict[str, type[BaseModel]] = {
    **FAMILY_TOOLS,
    "get_current_weather": GetCurrentWeather,
}


class TestXlam(FamilyChecks):
    dialect = "xlam"
    render = render
    tools = FIXTURE_TOOLS
    trackers = 4
    names = (
        ("Salesforce/Llama-xLAM-2-8b-fc-r", ModelDialect("xlam")),
        ("Salesforce/xLAM-2-32b-fc-r", ModelDialect("xlam")),
        ("Salesforce/xLAM-2-1b-fc-r-gguf", ModelDialect("xlam")),
        ("llama-xlam-2-70b-fc-r", ModelDialect("xlam")),
    )
    others = ("Salesforce/xLAM-7b-fc-r", "Salesforce/xLAM-8x7b-r")
    usage = ('[{"name": "read_file", "arguments": {"path": "a.py"}}]', "JSON")

    def replies(self, tool: str, args: dict[str, Any]) -> list[str]:
        # The array is a call where it opens the reply, or fenced after prose.
        written = XLAM.format_call(tool, args)
        return [written, "Looking.\n```json\n" + written + "\n```"]


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


def test_usage_instructions_end_with_the_example() -> None:
    for language in ("en", "zh"):
        text = get_dialect("xlam").usage_instructions(
            "read_file", {"path": "a.py"}, language=language
        )
        assert text.endswith('[{"name": "read_file", "arguments": {"path": "a.py"}}]')


def test_format_calls_writes_one_array() -> None:
    calls = [("read_file", {"path": "a"}), ("get_current_time", {})]
    written = XLAM.format_calls(calls)
    assert written.startswith("[") and written.count("[") == 1
    assert read_calls("xlam", written) == calls
