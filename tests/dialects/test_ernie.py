"""ernie: ERNIE 4.5 Thinking's hermes ``<tool_call>`` after ``</think>``, read and written.

The fixture replies are rendered from ERNIE-4.5-21B-A3B-Thinking's documented chat
format (``tests/fixtures/dialects/ernie/render.py``) and read by ``check_dialect``:
whole, one character at a time, split at every position and as tokens.  No cut or
malformed call ever yields a ``ToolCallEvent``.
"""

from __future__ import annotations

from typing import Any

import pytest

from stream_parser.dialects import ModelDialect
from stream_parser.dialects.ernie import ErnieDialect
from stream_parser.testing.dialects import load_cases
from tests.dialects.family import THINK, FamilyChecks
from tests.dialects.support import read
from tests.fixtures.dialects.ernie import render

ERNIE = ErnieDialect()
_CASES = load_cases(render.HERE / "cases.json")


class TestErnie(FamilyChecks):
    dialect = "ernie"
    render = render
    templates = 3
    names = (
        ("baidu/ERNIE-4.5-21B-A3B-Thinking", ModelDialect("ernie", THINK, True)),
        ("unsloth/ERNIE-4.5-21B-A3B-Thinking-GGUF", ModelDialect("ernie", THINK, True)),
    )
    # The VL models' templates and the models without the thinking template are others'.
    others = ("baidu/ERNIE-4.5-VL-28B-A3B-Thinking", "baidu/ERNIE-4.5-21B-A3B-PT")
    usage = ('<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}', "<response>")
    # The template opens <think>: a reply starts in reasoning and answers after </think>.
    prefilled_reasoning = True

    def replies(self, tool: str, args: dict[str, Any]) -> list[str]:
        return ["Search.\n</think>\n\n\n" + ERNIE.format_call(tool, args) + "\n<|im_end|>"]


@pytest.mark.parametrize("dialects", [("ernie", "hermes"), ("hermes", "ernie")])
def test_with_hermes_on_the_shared_tool_call_plugin(dialects: tuple[str, ...]) -> None:
    # One <tool_call> plugin reads both; ERNIE's response tags stay framing either way.
    case = next(c for c in _CASES if c["name"] == "an_answer_and_a_call")
    alone, combined = (
        read(names, case["text"], start_in_thinking=True) for names in ("ernie", dialects)
    )
    # The same calls, text and thinking; the first format's framing splits the
    # whitespace before <tool_call> its own way (hermes: "\n<tool_call>" is its tag).
    assert _read(combined) == _read(alone)


def _read(events: list[Any]) -> list[tuple[str, Any]]:
    """What the reply means: its thinking, text and calls, in order."""
    meaning = {"thinking": "content", "text": "text", "tool_call": "tool_instance"}
    return [(e.kind, getattr(e, meaning[e.kind])) for e in events if e.kind in meaning]
