# ruff: noqa: RUF001  (the template's label, "assistant:", ends with a fullwidth colon)
"""hunyuan: Hunyuan-A13B's ``<tool_calls>[…]</tool_calls>``, read and written.

The fixture replies are rendered from Hunyuan-A13B's chat template
(``tests/fixtures/dialects/hunyuan/render.py``) and read by ``check_dialect``: whole,
one character at a time, split at every position and as tokens.  No cut or malformed
call ever yields a ``ToolCallEvent``.
"""

from __future__ import annotations

from typing import Any

from stream_parser import FramingEvent, ParseEvent
from stream_parser.dialects import ModelDialect
from stream_parser.dialects.hunyuan import HunyuanDialect
from tests.dialects.family import THINK, FamilyChecks
from tests.dialects.support import read, read_calls
from tests.fixtures.dialects.hunyuan import render

HUNYUAN = HunyuanDialect()


class TestHunyuan(FamilyChecks):
    dialect = "hunyuan"
    render = render
    names = (
        # The model opens <think> itself: the reasoning is not prefilled.
        ("tencent/Hunyuan-A13B-Instruct", ModelDialect("hunyuan", THINK)),
        ("tencent/Hunyuan-A13B-Instruct-FP8", ModelDialect("hunyuan", THINK)),
        ("Hunyuan-A13B-Instruct-GPTQ-Int4", ModelDialect("hunyuan", THINK)),
        # Other Hunyuan models join once their templates are read.
        ("tencent/Hunyuan-7B-Instruct", None),
        ("tencent/Hunyuan-MT-7B", None),
    )
    usage = (
        '<tool_calls>[{"name": "read_file", "arguments": {"path": "a.py"}}]</tool_calls>',
        "<tool_calls>",
    )

    def replies(self, tool: str, args: dict[str, Any]) -> list[str]:
        return [f"<answer>\nLooking. {HUNYUAN.format_call(tool, args)}\n</answer>"]


def _events(text: str) -> list[ParseEvent]:
    return read("hunyuan", text)


def test_the_label_after_the_reasoning_and_answer_tag_is_framing() -> None:
    events = _events("<think>\nx\n</think>\n<answer>\n助手：Hi.\n</answer>")
    framing = [e.text for e in events if isinstance(e, FramingEvent)]
    assert "助手：" in framing
    assert [e.text for e in events if e.kind == "text"] == ["Hi."]


def test_the_label_after_prose_is_text() -> None:
    events = _events("Sure. 助手：Hi.")
    assert not any(isinstance(e, FramingEvent) and e.text == "助手：" for e in events)
    assert "".join(e.text for e in events if e.kind == "text") == "Sure. 助手：Hi."


def test_format_calls_writes_one_array() -> None:
    calls = [("read_file", {"path": "a"}), ("get_current_time", {})]
    written = HUNYUAN.format_calls(calls)
    assert written == (
        '<tool_calls>[{"name": "read_file", "arguments": {"path": "a"}}, '
        '{"name": "get_current_time", "arguments": {}}]</tool_calls>'
    )
    assert read_calls("hunyuan", written) == calls
