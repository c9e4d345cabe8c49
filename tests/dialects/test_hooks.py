"""The dialect hooks: a shared start tag, a reasoning format, clashing markers.

The dialects here are dummies defined for the test (a ``<tool_call>NAME …`` reader, a
``[THINK]`` reasoning format), registered for one test and removed afterwards.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from stream_parser import (
    CodeBlockEvent,
    ConfigError,
    ParseEvent,
    ParsePlugin,
    ParserConfig,
    PluginBlock,
    StreamToolParser,
    ThinkingEvent,
    ToolCallEvent,
)
from stream_parser.core import _dialect_registry as dialect_registry
from stream_parser.core.config import DEFAULT_THINKING_TAGS
from stream_parser.core.kit import Reader
from stream_parser.dialects import Dialect, ThinkingFormat, _toolcall, add_dialect
from stream_parser.dialects._toolcall import ToolCallTagDialect
from stream_parser.testing import merge_deltas
from tests.helpers import assert_all_splittings
from tests.tools_fixture import TOOLS


@pytest.fixture(autouse=True)
def _registries() -> Iterator[None]:
    """Whatever a test registers is gone afterwards."""
    registry = dialect_registry._DIALECTS  # every dialect's record: the one table
    saved = dict(registry)
    yield
    registry.clear()
    registry.update(saved)


class _Dummy(Dialect):
    title = "a dialect of the tests"

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        return tool_name

    def _instructions(self) -> str:
        return "xml_instructions"


# --- several dialects that share a start tag -------------------------------------------


class NameReader(Reader):
    """``<tool_call>NAME …</tool_call>``: the block's first word, as a code block."""

    def __init__(self, call: Any) -> None:
        super().__init__(call)
        self.parts: list[str] = []

    def feed(self, data: str, start: int, out: list[ParseEvent]) -> None:
        self.parts.append(data)

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        name = "".join(self.parts).split()[0]
        return [CodeBlockEvent(code=name, language="name_test", span=block.span)]


class NameDialect(ToolCallTagDialect, _Dummy):
    name = "name_test"
    block_reader = NameReader
    first_chars = "^{<["


def _register_name_dialect() -> None:
    add_dialect(NameDialect())


HERMES = '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>'
QWEN = (
    "<tool_call>\n<function=read_file>\n<parameter=path>\na\n</parameter>\n</function>\n"
    "</tool_call>"
)
NAMED = "<tool_call>read_file path=a</tool_call>"


def _kinds(dialects: tuple[str, ...], text: str) -> list[tuple[str, str]]:
    config = ParserConfig(dialect=dialects)
    events = assert_all_splittings(lambda: StreamToolParser(TOOLS, config=config), text)
    out: list[tuple[str, str]] = []
    for e in events:
        if isinstance(e, ToolCallEvent):
            out.append(("tool_call", e.tool_name))
        elif isinstance(e, CodeBlockEvent):
            out.append((e.language, e.code))
    return out


def test_a_third_reader_joins_the_tool_call_tag() -> None:
    _register_name_dialect()
    three = ("hermes", "qwen3_coder", "name_test")
    assert _kinds(three, HERMES) == [("tool_call", "read_file")]
    assert _kinds(three, QWEN) == [("tool_call", "read_file")]
    assert _kinds(three, NAMED) == [("name_test", "read_file")]
    assert _kinds(("name_test",), NAMED) == [("name_test", "read_file")]


def test_without_the_third_reader_a_name_stays_text() -> None:
    _register_name_dialect()
    assert _kinds(("hermes", "qwen3_coder"), NAMED) == []
    assert _kinds(("hermes", "qwen3_coder"), HERMES) == [("tool_call", "read_file")]


def test_the_first_characters_of_each_reader() -> None:
    _register_name_dialect()
    plugin = _toolcall.ToolCallPlugin(("hermes", "qwen3_coder", "name_test"))
    assert plugin.next_chars == "^"  # a name, "{", "[" or "<": anything
    assert _toolcall.ToolCallPlugin(("hermes", "qwen3_coder")).next_chars == "<[{"
    assert _toolcall.ToolCallPlugin(("name_test",)).next_chars == "^"


# --- a reasoning format per dialect ---------------------------------------------------


THINK = ThinkingFormat((("[THINK]", "[/THINK]"),))


def _reasoning_dialect(name: str, fmt: ThinkingFormat) -> None:
    dialect = type(name, (_Dummy,), {"name": name, "thinking": fmt})
    add_dialect(dialect())


def test_the_xml_dialect_keeps_the_default_tags() -> None:
    config = ParserConfig()
    assert config.thinking_tags is None
    assert config.thinking_pairs == DEFAULT_THINKING_TAGS
    assert config.starts_in_thinking is False


def test_a_dialect_brings_its_thinking_tags() -> None:
    _reasoning_dialect("think_test", THINK)
    # Combined with xml, the usual tags stay (xml declares them); alone, only its own.
    combined = ParserConfig(dialect=("xml", "think_test")).thinking_pairs
    assert set(THINK.tags) < set(combined) and ("<think>", "</think>") in combined
    config = ParserConfig(dialect="think_test")
    assert config.thinking_pairs == THINK.tags
    assert config.starts_in_thinking is False
    events = assert_all_splittings(
        lambda: StreamToolParser(TOOLS, config=config), "a[THINK]b[/THINK]<think>c"
    )
    assert [(e.kind, getattr(e, "content", getattr(e, "text", ""))) for e in events] == [
        ("text", "a"),
        ("thinking_delta", ""),
        ("thinking", "b"),
        ("text", "<think>c"),
    ]


def test_an_explicit_setting_wins() -> None:
    _reasoning_dialect("think_test", ThinkingFormat(THINK.tags, prefilled=True))
    assert ParserConfig(dialect="think_test").starts_in_thinking is True
    mine = (("<r>", "</r>"),)
    config = ParserConfig(dialect="think_test", thinking_tags=mine, start_in_thinking=False)
    assert config.thinking_pairs == mine
    assert config.starts_in_thinking is False


def test_a_copy_with_other_dialects_gets_their_reasoning_format() -> None:
    _reasoning_dialect("think_test", ThinkingFormat(THINK.tags, prefilled=True))
    config = dataclasses.replace(ParserConfig(), dialect="think_test")
    assert config.thinking_pairs == THINK.tags
    assert config.starts_in_thinking is True
    events = StreamToolParser(TOOLS, config=config).feed("a[/THINK]")
    assert isinstance(events[-1], ThinkingEvent) and events[-1].content == "a"


def test_a_prefilled_opening_tag() -> None:
    _reasoning_dialect("think_test", ThinkingFormat(THINK.tags, prefilled=True))
    config = ParserConfig(dialect="think_test")
    events = merge_deltas(StreamToolParser(TOOLS, config=config).feed("a[/THINK]b"))
    assert isinstance(events[1], ThinkingEvent) and events[1].content == "a"


@pytest.mark.parametrize("text", ["plan[/THINK]answer", "[THINK]plan[/THINK]answer"])
def test_a_bare_closing_tag_closes_reasoning_from_the_reply_start(text: str) -> None:
    _reasoning_dialect("think_test", ThinkingFormat(THINK.tags, bare_close=True))
    # A bare close format starts as the reply unless told: here the template opened it.
    config = ParserConfig(dialect="think_test", start_in_thinking=True)
    events = assert_all_splittings(lambda: StreamToolParser(TOOLS, config=config), text)
    tiles = [e for e in events if e.TILES]
    assert [(e.kind, getattr(e, "content", getattr(e, "text", ""))) for e in tiles] == [
        ("thinking", "plan"),
        ("text", "answer"),
    ]


def test_a_bare_closing_tag_leaves_a_later_opening_tag_as_content() -> None:
    _reasoning_dialect("think_test", ThinkingFormat(THINK.tags, bare_close=True))
    config = ParserConfig(dialect="think_test", start_in_thinking=True)
    events = merge_deltas(StreamToolParser(TOOLS, config=config).feed("a[THINK]b[/THINK]"))
    assert isinstance(events[-1], ThinkingEvent) and events[-1].content == "a[THINK]b"


# --- dialects whose markers clash -------------------------------------------------------


class _Tag(ParsePlugin):
    start_tags = ("<x>",)
    end_tag = "</x>"

    def __init__(self, name: str) -> None:
        self.name = name


def _plugin_dialect(name: str, key: str, fmt: ThinkingFormat | None = None) -> None:
    attrs = {
        "name": name,
        "plugin_key": key,
        "thinking": fmt,
        "make_plugin": lambda self, names: _Tag(name),
    }
    add_dialect(type(name, (_Dummy,), attrs)())


def test_two_plugins_claiming_one_start_tag_clash() -> None:
    _plugin_dialect("first_test", "one")
    _plugin_dialect("second_test", "two")
    config = ParserConfig(dialect=("first_test", "second_test"))
    with pytest.raises(ConfigError, match=r"first_test.*second_test.*'<x>'"):
        StreamToolParser(TOOLS, config=config)


def test_a_thinking_tag_that_is_another_dialects_call_tag_clashes() -> None:
    _reasoning_dialect("think_test", ThinkingFormat((("<tool_call>", "</tool_call>"),)))
    config = ParserConfig(dialect=("hermes", "think_test"))
    with pytest.raises(ConfigError, match=r"think_test and hermes.*'<tool_call>'"):
        StreamToolParser(TOOLS, config=config)


def test_dialects_may_share_a_thinking_tag() -> None:
    _reasoning_dialect("think_test", THINK)
    _reasoning_dialect("think_too_test", THINK)
    config = ParserConfig(dialect=("think_test", "think_too_test"))
    StreamToolParser(TOOLS, config=config)  # no clash
    assert config.thinking_pairs == THINK.tags
