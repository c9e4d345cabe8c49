"""ValueRun: a plugin's open value, streamed by the core as the plugin would stream it."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream_parser import ParseEvent, ParsePlugin, StreamToolParser
from stream_parser.core._json_scan import JsonScanner
from stream_parser.core.events import (
    CodeBlockEvent,
    Span,
    ToolArgumentsDeltaEvent,
    ToolParamDeltaEvent,
)
from stream_parser.core.plugins import FastData, PluginBlock, ValueRun
from stream_parser.errors import ConfigError
from stream_parser.testing import merge_deltas
from tests.helpers import assert_all_splittings, feed_all
from tests.tools_fixture import TOOLS

CAP = 4


def expected_line(text: str, line: int = -1, cap: int = CAP) -> int:
    """What ``line`` must be after ``text`` was taken as value, ``line`` before it."""
    if "\n" in text:
        line, rest = 0, text.rsplit("\n", 1)[1]
    else:
        rest = text
    if line < 0 or rest.strip(" \t"):
        return -1
    return line + len(rest) if line + len(rest) <= cap else -1


@given(
    st.lists(st.text(alphabet=" \t\nab", max_size=8), max_size=8),
    st.integers(min_value=-1, max_value=CAP),
)
def test_follow_sees_the_line_however_the_value_is_cut(pieces: list[str], line: int) -> None:
    run = ValueRun("<", indent_cap=CAP)
    run.line = line
    for piece in pieces:
        run.follow(piece)
    assert run.line == expected_line("".join(pieces), line)


def test_follow_caps_the_indentation() -> None:
    run = ValueRun("<", indent_cap=2)
    run.follow("x\n  ")
    assert run.line == 2
    run.follow(" ")
    assert run.line == -1  # deeper than the cap: no markup line
    run.follow("\n\t")
    assert run.line == 1


def test_open_resets_the_run() -> None:
    run = ValueRun("<", indent_cap=CAP)
    run.armed = True
    run.line = 3
    run.open("write_file", "content", 2, 40)
    assert (run.tool_name, run.param, run.call_index, run.end) == ("write_file", "content", 2, 40)
    assert run.line == -1 and not run.armed
    assert "content" in repr(run)


@pytest.mark.parametrize("stop", ["<>", "</"])
def test_the_stop_is_one_character(stop: str) -> None:
    with pytest.raises(ConfigError, match="one character"):
        ValueRun(stop)


_LOUD = re.compile("!")
END_TAG = "[/body]"


class Body(ParsePlugin):
    """``[body]...[/body]``: the parameter ``body`` of a ``note`` call, streamed as deltas.

    A ``!`` makes the block "loud"; the run stops at it, so such chunks go to ``take``,
    which refuses chunks with a digit (so that every path is exercised).  Without the
    run (``use_run=False``) ``take`` reads every chunk: the reference.  With
    ``arguments`` the block is the call's whole arguments text instead, streamed as
    arguments deltas.
    """

    name = "body"
    start_tags = ("[body]",)
    end_tag = END_TAG

    def __init__(
        self,
        use_run: bool = True,
        ends: list[tuple[int, int]] | None = None,
        arguments: bool = False,
    ) -> None:
        self.use_run = use_run
        self.arguments = arguments
        self.run = ValueRun("!", arguments=arguments)
        self.loud = False
        self.taken = 0
        self.ends = ends if ends is not None else []

    def on_start(self, tag: str, span: Span) -> list[ParseEvent]:
        self.loud = False
        self.run.open("note", "body", 0, span[1])
        self.run.armed = True
        return []

    def _delta(self, data: str, start: int) -> ParseEvent:
        self.run.end = end = start + len(data)
        if self.arguments:
            return ToolArgumentsDeltaEvent(tool_name="note", delta=data, span=(start, end))
        return ToolParamDeltaEvent(tool_name="note", param="body", delta=data, span=(start, end))

    def on_data(self, data: str, span: Span) -> list[ParseEvent]:
        self.loud = self.loud or "!" in data
        return [self._delta(data, span[0])]

    def fast_path(self) -> FastData | None:
        return None, self._take, False

    def value_run(self) -> ValueRun | None:
        return self.run if self.use_run else None

    def _take(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        if any(c.isdigit() for c in data):
            return False
        self.taken += 1
        self.loud = self.loud or "!" in data
        out.append(self._delta(data, start))
        return True

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:
        self.ends.append((self.run.end, block.span[1] - len(END_TAG)))
        language = "loud" if self.loud else ""
        return [CodeBlockEvent(code=block.content, language=language, span=block.span)]


TEXTS = [
    "before [body]quiet words, then! loud ones[/body] after",
    "[body]digits 123 and words[/body][body]again! 4[/body]",
    "[body]a [/bod [/body [/body]",
    "[body]never closed, 42!",
    "[body][/body]x[body]![/body]",
]


@pytest.mark.parametrize("arguments", [False, True], ids=["param", "arguments"])
@pytest.mark.parametrize("text", TEXTS)
def test_the_run_streams_what_the_plugin_would(text: str, arguments: bool) -> None:
    ends: list[tuple[int, int]] = []

    def reference() -> StreamToolParser:
        return StreamToolParser(TOOLS, plugins=[Body(use_run=False, arguments=arguments)])

    def with_run() -> StreamToolParser:
        return StreamToolParser(TOOLS, plugins=[Body(ends=ends, arguments=arguments)])

    assert assert_all_splittings(with_run, text) == assert_all_splittings(reference, text)
    # Every closed block's value ends where its end tag begins, however it was cut.
    assert all(run_end == content_end for run_end, content_end in ends)


def test_plain_chunks_do_not_reach_the_plugin() -> None:
    plugin = Body()
    parser = StreamToolParser(TOOLS, plugins=[plugin])
    chunks = ["[body]", "some ", "plain ", "words", " and!", " 1", " more", "[/bo", "dy]"]
    events = feed_all(parser, chunks)
    # The run took the plain chunks; " and!" went to take; " 1" was refused by it.
    assert plugin.taken == 1
    deltas = [e.delta for e in events if isinstance(e, ToolParamDeltaEvent)]
    assert "".join(deltas) == "some plain words and! 1 more"
    assert [e.kind for e in merge_deltas(events)] == ["tool_param_delta", "code_block"]
    assert plugin.ends == [(len("[body]some plain words and! 1 more"),) * 2]


def test_a_run_has_a_stop_or_a_scanner() -> None:
    with pytest.raises(ConfigError, match="not both"):
        ValueRun("<", scanner=JsonScanner())
    run = ValueRun(arguments=True)
    run.armed = True
    assert run.scanner is None and run.stop == ""  # it takes nothing yet
    run.arm_json(JsonScanner(), "note", 3, "call-3")
    assert run.armed and (run.tool_name, run.call_index, run.call_id) == ("note", 3, "call-3")


class JsonBody(ParsePlugin):
    """``[json]{...}[/json]``: JSON arguments of a ``note`` call, streamed as deltas.

    The fast path takes what the scanner skips (inside a string, or a nested value);
    with ``use_run`` the core does, through a run armed with the scanner.
    """

    name = "json"
    start_tags = ("[json]",)
    end_tag = "[/json]"

    def __init__(self, use_run: bool = True) -> None:
        self.use_run = use_run
        self.scanner = JsonScanner(keep_text=False)
        self.run = ValueRun(scanner=self.scanner, arguments=True)
        self.taken = 0

    def on_start(self, tag: str, span: Span) -> list[ParseEvent]:
        self.scanner = JsonScanner(keep_text=False)
        return []

    def _delta(self, data: str, start: int) -> ParseEvent:
        span = (start, start + len(data))
        return ToolArgumentsDeltaEvent(tool_name="note", delta=data, call_id="c", span=span)

    def on_data(self, data: str, span: Span) -> list[ParseEvent]:
        self.scanner.feed(data)
        return [self._delta(data, span[0])]

    def accepts_end(self) -> bool:
        return not self.scanner.in_string

    def fast_path(self) -> FastData | None:
        self.run.armed = False
        if not self.scanner.skips:
            return None
        if self.use_run:
            self.run.arm_json(self.scanner, "note", 0, "c")
        return None, self._take, self.scanner.in_string

    def value_run(self) -> ValueRun | None:
        return self.run

    def _take(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        if not self.scanner.skip(data):
            return False
        self.taken += 1
        out.append(self._delta(data, start))
        return True

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:
        return [CodeBlockEvent(code=block.content, language="json", span=block.span)]


JSON_TEXTS = [
    'a [json]{"path": "a [/json] b", "n": [1, {"x": "y\\"z"}]}[/json] after',
    '[json]{"text": "long plain words, then an escape \\\\ and a quote \\" end"}[/json]',
    '[json]{"open": "never closed',
]


@pytest.mark.parametrize("text", JSON_TEXTS)
def test_a_scanner_run_streams_what_the_plugin_would(text: str) -> None:
    def reference() -> StreamToolParser:
        return StreamToolParser(TOOLS, plugins=[JsonBody(use_run=False)])

    def with_run() -> StreamToolParser:
        return StreamToolParser(TOOLS, plugins=[JsonBody()])

    assert assert_all_splittings(with_run, text) == assert_all_splittings(reference, text)


def test_the_core_takes_what_the_scanner_skips() -> None:
    plugin = JsonBody()
    parser = StreamToolParser(TOOLS, plugins=[plugin])
    chunks = ['[json]{"text": "', "some ", "plain ", "words", '"}', "[/json]"]
    events = feed_all(parser, chunks)
    assert plugin.taken == 0  # the string's chunks went to the run, the rest slow
    deltas = [e.delta for e in events if isinstance(e, ToolArgumentsDeltaEvent)]
    assert "".join(deltas) == '{"text": "some plain words"}'
