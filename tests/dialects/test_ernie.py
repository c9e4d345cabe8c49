"""ernie: ERNIE 4.5 Thinking's hermes ``<tool_call>`` after ``</think>``, read and written.

The fixture replies are rendered from ERNIE-4.5-21B-A3B-Thinking's documented chat
format (``tests/fixtures/dialects/ernie/render.py``) and read by ``check_dialect``:
whole, one character at a time, split at every position and as tokens.  No cut or
malformed call ever yields a ``ToolCallEvent``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_parser import ParserConfig, StreamToolParser, ToolCallEvent
from stream_parser.dialects import dialect_for_model, get_dialect
from stream_parser.dialects.ernie import ErnieDialect
from stream_parser.testing import check_dialect, merge_deltas
from stream_parser.testing.dialects import load_cases
from tests.dialects.support import FAMILY_TOOLS
from tests.fixtures.dialects.ernie import render

ERNIE = ErnieDialect()


_CASES = load_cases(render.HERE / "cases.json")


@pytest.mark.parametrize("case", _CASES, ids=[c["name"] for c in _CASES])
def test_fixture_cases(case: dict[str, Any]) -> None:
    assert case["source"]
    check_dialect("ernie", [case], tools=FAMILY_TOOLS)


def test_the_fixtures_are_what_the_template_renders() -> None:
    written = render.HERE / "cases.json"
    assert written.read_text(encoding="utf-8") == render.cases_json(render.ABOUT, render.cases())
    assert sum(c["name"].startswith("template_") for c in _CASES) >= 3
    assert sum("#" in c["source"] for c in _CASES) >= 3  # tracker cases name their issue


def _events(text: str, dialect: str | tuple[str, ...] = "ernie", **config: Any) -> list[Any]:
    parser = StreamToolParser(FAMILY_TOOLS, config=ParserConfig(dialect=dialect, **config))
    return merge_deltas(parser.feed(text) + parser.close())


@pytest.mark.parametrize("dialects", [("ernie", "hermes"), ("hermes", "ernie")])
def test_with_hermes_on_the_shared_tool_call_plugin(dialects: tuple[str, ...]) -> None:
    # One <tool_call> plugin reads both; ERNIE's response tags stay framing either way.
    case = next(c for c in _CASES if c["name"] == "an_answer_and_a_call")
    alone, combined = (
        _events(case["text"], names, start_in_thinking=True) for names in ("ernie", dialects)
    )
    # The same calls, text and thinking; the first format's framing splits the
    # whitespace before <tool_call> its own way (hermes: "\n<tool_call>" is its tag).
    assert _read(combined) == _read(alone)


def _read(events: list[Any]) -> list[tuple[str, Any]]:
    """What the reply means: its thinking, text and calls, in order."""
    meaning = {"thinking": "content", "text": "text", "tool_call": "tool_instance"}
    return [(e.kind, getattr(e, meaning[e.kind])) for e in events if e.kind in meaning]


def test_model_names() -> None:
    for name in ("baidu/ERNIE-4.5-21B-A3B-Thinking", "unsloth/ERNIE-4.5-21B-A3B-Thinking-GGUF"):
        found = dialect_for_model(name)
        assert found is not None
        assert (found.dialect, found.reasoning, found.prefilled_reasoning) == (
            "ernie",
            ("<think>", "</think>"),
            True,
        )
    # The VL models' templates and the models without the thinking template are others'.
    for name in ("baidu/ERNIE-4.5-VL-28B-A3B-Thinking", "baidu/ERNIE-4.5-21B-A3B-PT"):
        found = dialect_for_model(name)
        assert found is None or found.dialect != "ernie"


def test_usage_instructions_show_the_format() -> None:
    for language in ("en", "zh"):
        text = get_dialect("ernie").usage_instructions(
            "read_file", {"path": "a.py"}, language=language
        )
        assert '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}' in text
        assert "<response>" in text.split("\n\n")[0]


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=40, deadline=None)
@given(query=_TEXT, tags=st.lists(_TEXT, max_size=3), max_results=st.integers())
def test_format_call_round_trips(query: str, tags: list[str], max_results: int) -> None:
    args = {"query": query, "tags": tags, "max_results": max_results}
    text = "Search.\n</think>\n\n\n" + ERNIE.format_call("search", args) + "\n<|im_end|>"
    calls = [
        (e.tool_name, e.tool_instance.model_dump())
        for e in _events(text, start_in_thinking=True)
        if isinstance(e, ToolCallEvent)
    ]
    assert calls == [("search", args)]
