"""A call written inside reasoning: it runs where the dialect's servers run it.

qwen3_coder and glm end reasoning at a ``<tool_call>`` that opens a call of theirs; hermes
does not (its JSON calls drafted in reasoning stay thinking), and neither does the XML
dialect.  The ``<tool_call>`` plugin is shared, so combining hermes with qwen3_coder must
keep each format's own rule.  The per-dialect fixtures are in ``tests/fixtures/dialects``,
and ``docs/dialects.md`` gives each dialect's rule and the evidence that decided it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from stream_parser import ParserConfig, StreamToolParser
from stream_parser.core.events import NoticeEvent, ThinkingEvent, ToolCallEvent
from stream_parser.dialects import DIALECTS
from stream_parser.testing import fixtures
from stream_parser.testing.dialects import check_dialect

_JSON_DRAFT = '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>'
_QWEN_CALL = (
    "<tool_call>\n<function=read_file>\n<parameter=path>\na.py\n</parameter>\n</function>\n"
    "</tool_call>"
)

_CASES: list[dict[str, Any]] = [
    {
        "name": "hermes_json_draft_in_reasoning_stays_thinking",
        "config": {"start_in_thinking": True},
        "text": f"Maybe {_JSON_DRAFT}\n</think>\n\nNo.",
        "calls": [],
        "errors": [],
        "text_out": "No.",
        "notices": [],
        "thinking": f"Maybe {_JSON_DRAFT}",
    },
    {
        "name": "qwen3_coder_call_in_reasoning_runs",
        "config": {"start_in_thinking": True},
        "text": f"Plan.\n{_QWEN_CALL}</think>Done.",
        "calls": [["read_file", {"path": "a.py"}]],
        "errors": [],
        "text_out": "Done.",
        "framing": ["</think>"],
        "notices": [],
        "thinking": "Plan.",
    },
    {
        "name": "mention_in_inline_code_stays_thinking",
        "config": {"start_in_thinking": True},
        "text": "Write `<tool_call><function=x>` later.</think>Done.",
        "calls": [],
        "errors": [],
        "text_out": "Done.",
        "notices": [],
        "thinking": "Write `<tool_call><function=x>` later.",
    },
]


@pytest.mark.parametrize("dialects", [("hermes", "qwen3_coder"), ("qwen3_coder", "hermes")])
def test_combined_formats_keep_their_own_rule(dialects: tuple[str, ...]) -> None:
    check_dialect(dialects, _CASES)


def test_hermes_alone_keeps_a_json_draft_thinking() -> None:
    check_dialect("hermes", _CASES[:1])


def _read(text: str, **options: Any) -> list[Any]:
    parser = StreamToolParser(fixtures.TOOLS, config=ParserConfig(**options))
    return parser.feed(text) + parser.close()


def test_stray_close_after_a_later_block_has_its_notice() -> None:
    # The call ended the reasoning; a new block opened and closed; one more close is
    # stray again, with its notice.
    events = _read(
        f"Plan.\n{_QWEN_CALL}<think>More.</think>Text</think>end",
        dialect="qwen3_coder",
        start_in_thinking=True,
    )
    assert [e.content for e in events if isinstance(e, ThinkingEvent)] == ["Plan.", "More."]
    assert [e.code for e in events if isinstance(e, NoticeEvent)] == [
        "reasoning_close_without_open"
    ]
    assert len([e for e in events if isinstance(e, ToolCallEvent)]) == 1


def test_xml_call_in_reasoning_never_runs() -> None:
    events = _read("<think>Maybe <read_file><path>a.py</path></read_file></think>Done.")
    assert not [e for e in events if isinstance(e, ToolCallEvent)]
    assert [e.content for e in events if isinstance(e, ThinkingEvent)] == [
        "Maybe <read_file><path>a.py</path></read_file>"
    ]


def test_a_plugin_added_later_ends_an_open_reasoning_block() -> None:
    # The stream starts inside thinking before the plugin is added with use(): the open
    # block's fast path must stop at the plugin's opener all the same.
    from stream_parser.dialects import get_dialect

    parser = StreamToolParser(fixtures.TOOLS, config=ParserConfig(start_in_thinking=True))
    plugins = get_dialect("mistral").make_plugin(("mistral",))
    assert plugins is not None
    for plugin in plugins if isinstance(plugins, list) else [plugins]:
        parser.use(plugin)
    events = []
    for chunk in ("Read it.", '[TOOL_CALLS]read_file[ARGS]{"path": "a.py"}'):
        events += parser.feed(chunk)
    events += parser.close()
    assert [e.content for e in events if isinstance(e, ThinkingEvent)] == ["Read it."]
    assert len([e for e in events if isinstance(e, ToolCallEvent)]) == 1


_DOCS = Path(__file__).resolve().parents[2] / "docs" / "dialects.md"
_TABLE_HEAD = "| dialect | a call inside reasoning | what decided it |"


def _reasoning_table() -> dict[str, list[str]]:
    """The rows of the docs' table of calls inside reasoning: dialect -> its other cells."""
    lines = _DOCS.read_text(encoding="utf-8").splitlines()
    start = lines.index(_TABLE_HEAD) + 2  # the header, then its |---| line
    rows: dict[str, list[str]] = {}
    for line in lines[start:]:
        if not line.startswith("|"):
            break
        # A cell may hold an escaped bar (`<\|tool_call>`): split on the others only.
        cells = [cell.strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
        assert cells[0] not in rows, f"two rows for {cells[0]!r}"
        rows[cells[0]] = cells[1:]
    return rows


def test_every_dialect_has_its_row_in_the_docs_table() -> None:
    rows = _reasoning_table()
    assert sorted(rows) == sorted(DIALECTS)
    for name, (rule, evidence) in rows.items():
        if DIALECTS[name].thinking is None:
            assert rule == "(no reasoning format)", name
        else:
            assert rule and rule != "(no reasoning format)", name
            assert evidence, f"{name}: the row names no template or server behaviour"
