"""The driver's own mechanics: the dialect factory registry, the ERROR state, the readers."""

from __future__ import annotations

import pytest

from stream_parser import (
    ConfigError,
    FencedCodePlugin,
    InternalError,
    ParserConfig,
    ParseState,
    ParseStateManager,
    StreamToolParser,
)
from stream_parser.core import _dialect_registry as dialect_registry
from stream_parser.core.plugins import ParsePlugin
from stream_parser.core.state import TRANSITIONS, Trigger
from tests.helpers import assert_all_splittings
from tests.tools_fixture import TOOLS, summary


def test_registered_dialect_factories_build_the_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    built: list[tuple[str, ...]] = []

    def factory(names: tuple[str, ...]) -> ParsePlugin | None:
        built.append(names)
        return FencedCodePlugin()

    # Two dialects sharing a plugin key get one plugin, built by the first one named.
    for name in ("fence_a", "fence_b"):
        record = dialect_registry.DialectRecord(name, plugins=factory, plugin_key="fence")
        monkeypatch.setitem(dialect_registry._DIALECTS, name, record)
    parser = StreamToolParser(TOOLS, config=ParserConfig(dialect=("fence_b", "xml", "fence_a")))
    assert built == [("fence_b", "fence_a")]
    assert [p.name for p in parser.plugins] == ["fenced_code"]
    events = assert_all_splittings(
        lambda: StreamToolParser(TOOLS, config=ParserConfig(dialect=("fence_a", "xml"))),
        "a\n```py\nx\n```\n",
    )
    kinds = [entry[0] for entry in summary(events) if entry[0] != "code_delta"]
    assert kinds == ["text", "code", "text"]


def test_unknown_dialect_lists_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"unknown dialect 'nope' \(known: .*hermes.*xml"):
        StreamToolParser(TOOLS, config=ParserConfig(dialect="nope"))
    assert {"xml", "hermes", "qwen3_coder"} <= set(dialect_registry.dialect_names())


def test_register_dialect_replaces_an_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dialect_registry, "_DIALECTS", dict(dialect_registry._DIALECTS))
    dialect_registry.register_dialect("plain", None, lambda names: None)
    assert "plain" in dialect_registry.dialect_names()
    assert dialect_registry.dialect_plugins(("plain", "xml")) == []


def test_illegal_transition_goes_to_error_through_the_table() -> None:
    manager = ParseStateManager(ParseState.THINKING)
    with pytest.raises(InternalError, match="illegal transition THINKING --TOOL_END-->"):
        manager.transition(Trigger.TOOL_END)
    assert manager.current_state is TRANSITIONS[(ParseState.THINKING, Trigger.BUG)]
    assert manager.current_state is ParseState.ERROR


def test_parser_refuses_input_after_an_internal_error() -> None:
    parser = StreamToolParser(TOOLS)
    parser.feed("some text")
    with pytest.raises(InternalError):
        parser._move(Trigger.TOOL_END)  # a bug: TEXT has no such transition
    assert parser.state is ParseState.ERROR
    with pytest.raises(InternalError, match="stopped"):
        parser.feed("more")
    with pytest.raises(InternalError, match="stopped"):
        parser.close()


def test_every_live_state_has_a_bug_row_and_a_close_row() -> None:
    for state in (ParseState.TEXT, ParseState.THINKING, ParseState.TOOL, ParseState.PLUGIN):
        assert TRANSITIONS[(state, Trigger.BUG)] is ParseState.ERROR
        assert TRANSITIONS[(state, Trigger.CLOSE)] is ParseState.CLOSED
