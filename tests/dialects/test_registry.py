"""Dialects register their plugin factories with the core when they are imported."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pytest

from stream_parser import ConfigError, FencedCodePlugin, ParsePlugin, ParserConfig, StreamToolParser
from stream_parser.core import _dialect_registry as dialect_registry
from stream_parser.dialects import DIALECTS, Dialect, add_dialect
from tests.tools_fixture import TOOLS


class _FenceDialect(Dialect):
    name = "fence_test"
    title = "fenced code as a dialect (test only)"
    plugin_key = "fence_test"

    def make_plugin(self, names: tuple[str, ...]) -> ParsePlugin | None:
        return FencedCodePlugin()

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        return f"```\n{tool_name}\n```"

    def _instructions(self) -> str:
        return "Write a fenced block."


def test_every_dialect_is_registered_with_the_core() -> None:
    assert set(DIALECTS) <= set(dialect_registry.dialect_names())


def test_add_dialect_makes_it_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dialect_registry, "_DIALECTS", dict(dialect_registry._DIALECTS))
    monkeypatch.setitem(DIALECTS, "fence_test", DIALECTS["xml"])  # restored afterwards
    add_dialect(_FenceDialect())
    assert isinstance(DIALECTS["fence_test"], _FenceDialect)
    parser = StreamToolParser(TOOLS, config=ParserConfig(dialect=("xml", "fence_test")))
    assert [p.name for p in parser.plugins] == ["fenced_code"]


def test_a_misspelt_dialect_is_an_error_when_the_config_is_made() -> None:
    with pytest.raises(ConfigError, match=r"unknown dialect 'hermse' \(known: deepseek, .*hermes"):
        ParserConfig(dialect="hermse")
    with pytest.raises(ConfigError, match="unknown dialect 'nope'"):
        ParserConfig(dialect=("xml", "nope"))


def test_auto_points_to_the_places_that_know_the_model() -> None:
    with pytest.raises(ConfigError) as error:
        ParserConfig(dialect="auto")
    message = str(error.value)
    for place in ("ReActAgent(", "dialect='auto'", "protocol='auto'", "dialect_for_model("):
        assert place in message


def test_a_dialect_is_known_from_its_registration_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dialect_registry, "_DIALECTS", dict(dialect_registry._DIALECTS))
    with pytest.raises(ConfigError, match="unknown dialect 'late'"):
        ParserConfig(dialect="late")
    dialect_registry.register_dialect("late", None, lambda names: None)
    assert ParserConfig(dialect="late").dialects == ("late",)
    assert "late" in dialect_registry.dialect_names()


def test_the_docs_table_lists_the_registered_dialects() -> None:
    from pathlib import Path

    docs = Path(__file__).resolve().parents[2] / "docs" / "dialects.md"
    head = docs.read_text(encoding="utf-8").split("\n## ", 1)[0]
    rows = re.findall(r'^\| `"(\w+)"`', head, re.M)
    assert len(rows) == len(set(rows))  # one row each
    assert sorted(rows) == sorted(dialect_registry.dialect_names())
    for name in rows:
        assert dialect_registry.dialect_record(name, writer=True).dialect.name == name
