"""seed_oss: qwen3_coder's tags inside ``<seed:tool_call>``, read and written.

The fixture replies are rendered from Seed-OSS's chat template
(``tests/fixtures/dialects/seed_oss/render.py``) and read by ``check_dialect``: whole,
one character at a time, split at every position and as tokens.  No cut or malformed
call ever yields a ``ToolCallEvent``.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from stream_parser import ParserConfig, StreamToolParser, ToolCallEvent
from stream_parser.dialects import dialect_for_model, get_dialect
from stream_parser.dialects.seed_oss import SeedOssDialect
from stream_parser.testing import check_dialect, merge_deltas
from stream_parser.testing.dialects import load_cases
from stream_parser.testing.fixtures import TOOLS
from tests.fixtures.dialects.seed_oss import render

SEED = SeedOssDialect()


class GetWeather(BaseModel):
    location: str
    unit: str | None = None


class GetCurrentTime(BaseModel):
    pass


class Settings(BaseModel):
    flags: dict[str, bool]
    ratio: float | None = None
    note: str = ""


FIXTURE_TOOLS: dict[str, type[BaseModel]] = {
    **TOOLS,
    "get_weather": GetWeather,
    "get_current_time": GetCurrentTime,
}
ALL_TOOLS = {**FIXTURE_TOOLS, "settings": Settings}
_CASES = load_cases(render.HERE / "cases.json")


@pytest.mark.parametrize("case", _CASES, ids=[c["name"] for c in _CASES])
def test_fixture_cases(case: dict[str, Any]) -> None:
    assert case["source"]
    check_dialect("seed_oss", [case], tools=FIXTURE_TOOLS)


def test_the_fixtures_are_what_the_template_renders() -> None:
    written = render.HERE / "cases.json"
    assert written.read_text(encoding="utf-8") == render.cases_json(render.ABOUT, render.cases())
    assert any(c["name"].startswith("template_") for c in _CASES)
    assert sum("#" in c["source"] for c in _CASES) >= 3  # tracker cases name their issue


def _events(text: str, **config: Any) -> list[Any]:
    parser = StreamToolParser(ALL_TOOLS, config=ParserConfig(dialect="seed_oss", **config))
    return merge_deltas(parser.feed(text) + parser.close())


def _calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        (e.tool_name, e.tool_instance.model_dump())
        for e in _events(text)
        if isinstance(e, ToolCallEvent)
    ]


def _block(**values: str) -> str:
    params = "".join(f"<parameter={k}>{v}</parameter>\n" for k, v in values.items())
    return f"<seed:tool_call>\n<function=settings>\n{params}</function>\n</seed:tool_call>"


def test_values_are_json_then_python_literals() -> None:
    text = _block(flags="{'a': True, 'b': false}", ratio="None", note="None")
    read = {"flags": {"a": True, "b": False}, "ratio": None, "note": "None"}
    assert _calls(text) == [("settings", read)]
    assert _calls(_block(flags='{"a": true}', ratio="0.5")) == [
        ("settings", {"flags": {"a": True}, "ratio": 0.5, "note": ""})
    ]


def test_a_value_that_is_code_is_never_evaluated() -> None:
    events = _events(_block(flags="__import__('os').system('echo hi')"))
    assert not [e for e in events if isinstance(e, ToolCallEvent)]
    assert [e.error_type for e in events if e.kind == "error"] == ["invalid_params"]


def test_model_names() -> None:
    for name in ("ByteDance-Seed/Seed-OSS-36B-Instruct", "seed-oss:36b", "seed_oss"):
        found = dialect_for_model(name)
        assert found is not None
        assert found.dialect == "seed_oss"
        assert found.reasoning == ("<seed:think>", "</seed:think>")
        assert not found.prefilled_reasoning


def test_usage_instructions_show_the_format() -> None:
    for language in ("en", "zh"):
        text = get_dialect("seed_oss").usage_instructions(
            "read_file", {"path": "a.py"}, language=language
        )
        assert "<parameter=path>a.py</parameter>" in text
        assert "<seed:tool_call>" in text.split("\n\n")[0]


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=40, deadline=None)
@given(query=_TEXT, tags=st.lists(_TEXT, max_size=3), max_results=st.integers())
def test_format_call_round_trips(query: str, tags: list[str], max_results: int) -> None:
    args = {"query": query, "tags": tags, "max_results": max_results}
    try:
        written = SEED.format_call("search", args)
    except ValueError:
        return  # markup the reader would take for the call's structure: refused
    assert _calls("Looking.\n" + written) == [("search", args)]


def test_format_call_refuses_what_cannot_be_read_back() -> None:
    end = "</function>\n</seed:tool_call>"
    for value in ("a</parameter>\n<parameter=x>", "x\n<parameter=x>", end):
        with pytest.raises(ValueError, match="cannot be written"):
            SEED.format_call("write_to_file", {"content": value})
