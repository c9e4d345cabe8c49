"""internlm: InternLM 2 and 2.5's ``<|action_start|><|plugin|>`` calls, read and written.

The fixture replies are rendered from vLLM's InternLM2 tool chat template
(``tests/fixtures/dialects/internlm/render.py``) and read by ``check_dialect``: whole,
one character at a time, split at every position and as tokens.  No cut or malformed
call ever yields a ``ToolCallEvent``.
"""

from __future__ import annotations

from typing import Any

from stream_parser.dialects import ModelDialect
from stream_parser.dialects.internlm import InternLMDialect
from tests.dialects.family import FamilyChecks
from tests.fixtures.dialects.internlm import render

INTERNLM = InternLMDialect()


class TestInternLM(FamilyChecks):
    dialect = "internlm"
    render = render
    names = (
        ("internlm/internlm2_5-7b-chat", ModelDialect("internlm")),
        ("internlm/internlm2-chat-20b", ModelDialect("internlm")),
        ("internlm2:7b", ModelDialect("internlm")),
        ("internlm/internlm2_5-20b-chat", ModelDialect("internlm")),
        ("internlm/internlm-xcomposer2-7b", None),
        ("internlm/internlm3-8b-instruct", None),
    )
    usage = (
        '<|action_start|><|plugin|>\n{"name": "read_file", "parameters": {"path": "a.py"}}'
        "<|action_end|>",
        "<|action_start|><|plugin|>",
    )

    def replies(self, tool: str, args: dict[str, Any]) -> list[str]:
        return ["Looking. " + INTERNLM.format_call(tool, args)]
