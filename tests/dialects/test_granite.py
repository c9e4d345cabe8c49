"""granite: Granite 3.x's JSON array of calls and 4.0's ``<tool_call>`` blocks, read and written.

The fixture replies are rendered from Granite 3.3's and 4.0's chat templates
(``tests/fixtures/dialects/granite/render.py``) and read by ``check_dialect``: whole,
one character at a time, split at every position and as tokens.  No cut or malformed
call ever yields a ``ToolCallEvent``.
"""

from __future__ import annotations

from typing import Any

import pytest

from stream_parser import ConfigError, ParserConfig, StreamToolParser, ToolCallEvent
from stream_parser.dialects import ModelDialect
from stream_parser.dialects.granite import GraniteDialect
from stream_parser.testing import merge_deltas
from stream_parser.testing.dialects import load_cases
from tests.dialects.family import THINK, FamilyChecks
from tests.dialects.support import FAMILY_TOOLS, read_calls
from tests.fixtures.dialects.granite import render

GRANITE = GraniteDialect()
_CASES = load_cases(render.HERE / "cases.json")


class TestGranite(FamilyChecks):
    dialect = "granite"
    render = render
    names = (
        ("ibm-granite/granite-3.3-8b-instruct", ModelDialect("granite", THINK)),
        ("granite3.1-dense:8b", ModelDialect("granite", THINK)),
        # 4.0 writes <tool_call>{...}</tool_call>, and no reasoning.
        ("ibm-granite/granite-4.0-h-small", ModelDialect("granite")),
        ("granite4:micro", ModelDialect("granite")),
        ("granite-4.1-8b", ModelDialect("granite")),
        ("ibm-granite/granite-20b-functioncalling", None),
        ("ibm-granite/granite-guardian-3.2-5b", None),
        ("ibm-granite/granite-embedding-30m-english", None),
    )
    usage = (
        '<|tool_call|>[{"name": "read_file", "arguments": {"path": "a.py"}}]',
        "<|tool_call|>",
    )

    def replies(self, tool: str, args: dict[str, Any]) -> list[str]:
        # Granite 3's array after prose on the line, and 4.0's block after a line break.
        return [
            "Looking. " + GRANITE.format_call(tool, args),
            "Looking.\n" + GRANITE.format_call_4(tool, args),
        ]


def test_format_calls_writes_one_array() -> None:
    calls = [("read_file", {"path": "a"}), ("get_current_time", {})]
    written = GRANITE.format_calls(calls)
    assert read_calls("granite", written) == calls


def _read(dialect: str, text: str) -> tuple[list[tuple[str, Any, int]], str]:
    """The calls (name, instance, index) and the text a dialect reads in ``text``."""
    parser = StreamToolParser(FAMILY_TOOLS, config=ParserConfig(dialect=dialect))
    events = merge_deltas(parser.feed(text) + parser.close())
    calls = [
        (e.tool_name, e.tool_instance, e.call_index) for e in events if isinstance(e, ToolCallEvent)
    ]
    return calls, "".join(e.text for e in events if e.kind == "text")


@pytest.mark.parametrize(
    "name",
    ["template4_one_call", "template4_prose_then_two_calls", "template4_answer"],
)
def test_granite_4_replies_read_as_hermes_reads_them(name: str) -> None:
    # Granite 4.0 writes hermes' blocks: granite reads the same calls and text (hermes
    # does not know Granite's <|end_of_text|>, so the reply is given without it; hermes
    # counts the line break before <tool_call> in the call's span, granite as framing).
    text = next(c["text"] for c in _CASES if c["name"] == name).removesuffix("<|end_of_text|>\n")
    assert _read("granite", text) == _read("hermes", text)


def test_granite_is_not_combined_with_another_tool_call_dialect() -> None:
    # granite reads <tool_call> itself (4.0's blocks, 3.1's list): one owner of the tag.
    with pytest.raises(ConfigError, match="granite and hermes cannot be combined"):
        StreamToolParser(FAMILY_TOOLS, config=ParserConfig(dialect=["granite", "hermes"]))
