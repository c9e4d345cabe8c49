"""longcat: hermes' JSON object inside ``<longcat_tool_call>``, read and written.

The fixture replies are rendered from LongCat-Flash-Chat's documented chat format
(``tests/fixtures/dialects/longcat/render.py``) and read by ``check_dialect``: whole,
one character at a time, split at every position and as tokens.  No cut or malformed
call ever yields a ``ToolCallEvent``.
"""

from __future__ import annotations

from typing import Any

import pytest

from stream_parser import ToolCallEvent
from stream_parser.dialects import ModelDialect
from stream_parser.dialects.longcat import LongcatDialect
from stream_parser.testing.dialects import load_cases
from tests.dialects.family import FamilyChecks
from tests.dialects.support import read
from tests.fixtures.dialects.longcat import render

LONGCAT = LongcatDialect()
_CASES = load_cases(render.HERE / "cases.json")


class TestLongcat(FamilyChecks):
    dialect = "longcat"
    render = render
    templates = 3
    names = (
        ("meituan-longcat/LongCat-Flash-Chat", ModelDialect("longcat")),
        ("LongCat-Flash-Chat-FP8", ModelDialect("longcat")),
        ("longcat_flash_chat", ModelDialect("longcat")),
    )
    # The later models write another format: not mapped to this dialect.
    others = ("meituan-longcat/LongCat-Flash-Thinking-2601", "LongCat-Flash-Lite")
    usage = (
        '<longcat_tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}',
        "<longcat_tool_call>",
    )

    def replies(self, tool: str, args: dict[str, Any]) -> list[str]:
        return ["Looking.\n" + LONGCAT.format_call(tool, args) + "</longcat_s>"]


def _outcomes(dialect: str, text: str) -> list[tuple[str, Any]]:
    return [
        (e.kind, e.tool_instance if isinstance(e, ToolCallEvent) else getattr(e, "error_type", ""))
        for e in read(dialect, text)
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
