"""One parser for one reply after another: ``reset()`` and ``state_manager``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from stream_parser import (
    ParserClosedError,
    ParseState,
    ParseStateManager,
    StreamToolParser,
    TextOutputEvent,
    ToolCallEvent,
)
from stream_parser.core.events import Span
from stream_parser.core.plugins import ParsePlugin
from tests.tools_fixture import TOOLS

CALL = "<read_file><path>a.py</path></read_file>"
N = len(CALL)


def calls(events: list[object]) -> list[tuple[int, Span]]:
    return [(e.call_index, e.span) for e in events if isinstance(e, ToolCallEvent)]


def test_reset_starts_spans_and_call_indexes_at_zero() -> None:
    parser = StreamToolParser(tool_registry=TOOLS)
    first = parser.feed("Hi " + CALL + CALL) + parser.close()
    assert calls(first) == [(0, (3, 3 + N)), (1, (3 + N, 3 + 2 * N))]
    parser.reset()
    second = parser.feed(CALL) + parser.close()
    assert calls(second) == [(0, (0, N))]


def test_reset_in_the_middle_of_a_block_drops_it() -> None:
    parser = StreamToolParser(tool_registry=TOOLS)
    parser.feed("<thinking>half a thou")
    assert parser.state_manager.current_state is ParseState.THINKING
    parser.reset()
    assert parser.state_manager.current_state is ParseState.TEXT
    assert parser.feed("plain") + parser.close() == [TextOutputEvent(text="plain", span=(0, 5))]


def test_parse_stream_again_starts_a_new_reply() -> None:
    parser = StreamToolParser(tool_registry=TOOLS)
    assert calls(list(parser.parse_stream([CALL[:7], CALL[7:]]))) == [(0, (0, N))]
    assert calls(list(parser.parse_stream(["x", CALL]))) == [(0, (1, 1 + N))]

    async def collect() -> list[object]:
        async def stream() -> AsyncIterator[str]:
            yield CALL

        return [event async for event in parser.aparse_stream(stream())]

    assert calls(asyncio.run(collect())) == [(0, (0, N))]


def test_feed_after_close_still_refuses() -> None:
    parser = StreamToolParser(tool_registry=TOOLS)
    parser.close()
    with pytest.raises(ParserClosedError):
        parser.feed("more")
    parser.reset()
    assert parser.feed("more") == [TextOutputEvent(text="more", span=(0, 4))]


def test_state_manager_shows_state_tool_and_buffer() -> None:
    parser = StreamToolParser(tool_registry=TOOLS)
    manager = parser.state_manager
    assert isinstance(manager, ParseStateManager)
    assert (manager.current_state, manager.current_tool_name, manager.buffer) == (
        ParseState.TEXT,
        None,
        "",
    )
    parser.feed("Let me <read_fi")
    assert manager.buffer == "<read_fi" == parser.pending
    parser.feed("le><path>a")
    assert manager.current_state is ParseState.TOOL
    assert manager.current_tool_name == "read_file"
    parser.feed(".py</path></read_file>")
    assert (manager.current_state, manager.current_tool_name) == (ParseState.TEXT, None)
    parser.close()
    assert manager.current_state is ParseState.CLOSED
    manager.reset()
    assert manager.current_state is ParseState.TEXT
    assert calls(parser.feed(CALL)) == [(0, (0, N))]


def test_a_state_manager_of_its_own() -> None:
    manager = ParseStateManager()
    manager.current_state = ParseState.THINKING
    manager.reset()
    assert (manager.current_state, manager.buffer, manager.current_tool_name) == (
        ParseState.TEXT,
        "",
        None,
    )


class Counting(ParsePlugin):
    name = "counting"
    start_tags = ("<<",)
    end_tag = ">>"

    def __init__(self) -> None:
        self.blocks = 0
        self.resets = 0

    def on_start(self, tag: str, span: Span) -> list[object]:  # type: ignore[override]
        self.blocks += 1
        return []

    def reset(self) -> None:
        self.resets += 1
        self.blocks = 0


def test_plugins_get_a_reset_hook_and_dialect_plugins_start_anew() -> None:
    plugin = Counting()
    parser = StreamToolParser(tool_registry=TOOLS, plugins=[plugin])
    parser.feed("<<a>> <<b")
    assert plugin.blocks == 2
    parser.reset()
    assert (plugin.resets, plugin.blocks) == (1, 0)
    assert parser.plugins == (plugin,)
    hermes = StreamToolParser(tool_registry=TOOLS, config=_hermes())
    cut = '<tool_call>{"name": "read_file", "arguments": {"path": "a'
    hermes.feed(cut)
    hermes.reset()
    events = hermes.feed('<tool_call>{"name": "read_file", "arguments": {"path": "b"}}</tool_call>')
    events += hermes.close()
    assert [
        (e.tool_instance.path, e.call_index) for e in events if isinstance(e, ToolCallEvent)
    ] == [("b", 0)]


def _hermes() -> object:
    from stream_parser import ParserConfig

    return ParserConfig(dialect="hermes")
