"""phi4_mini: Phi-4-mini's ``functools`` marker and one JSON array of calls, read and written.

The fixture replies are rendered from vLLM's Phi-4-mini tool chat template
(``tests/fixtures/dialects/phi4_mini/render.py``) and read by ``check_dialect``: whole,
one character at a time, split at every position and as tokens.  No cut or malformed
call ever yields a ``ToolCallEvent``.
"""

from __future__ import annotations

from typing import Any

from stream_parser.dialects import ModelDialect
from stream_parser.dialects.phi4_mini import Phi4MiniDialect
from tests.dialects.family import FamilyChecks
from tests.dialects.support import read_calls
from tests.fixtures.dialects.phi4_mini import render

PHI = Phi4MiniDialect()


class TestPhi4Mini(FamilyChecks):
    dialect = "phi4_mini"
    render = render
    names = (
        ("microsoft/Phi-4-mini-instruct", ModelDialect("phi4_mini")),
        ("phi4-mini:3.8b", ModelDialect("phi4_mini")),
        ("unsloth/Phi-4-mini-instruct-GGUF", ModelDialect("phi4_mini")),
        ("microsoft/Phi-4-multimodal-instruct", ModelDialect("phi4_mini")),
        ("microsoft/Phi-4-mini-reasoning", None),
        ("microsoft/phi-4", None),
        ("phi3.5:3.8b", None),
    )
    usage = ('functools[{"name": "read_file", "arguments": {"path": "a.py"}}]', "functools")

    def replies(self, tool: str, args: dict[str, Any]) -> list[str]:
        return ["Looking. " + PHI.format_call(tool, args)]


def test_format_calls_writes_one_array() -> None:
    calls = [("read_file", {"path": "a"}), ("get_current_time", {})]
    written = PHI.format_calls(calls)
    assert read_calls("phi4_mini", written) == calls
