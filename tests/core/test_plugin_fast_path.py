"""A plugin's fast path: the same events as ``on_data``, however the stream is cut."""

from __future__ import annotations

import re

import pytest

from stream_parser import ParseEvent, ParsePlugin, ParserConfig, StreamToolParser
from stream_parser.core.events import CodeBlockDeltaEvent, CodeBlockEvent, Span
from stream_parser.core.plugins import FastData, PluginBlock
from stream_parser.testing import merge_deltas
from tests.helpers import assert_all_splittings, feed_all
from tests.tools_fixture import TOOLS

_STOP = re.compile('[!"]')


class Note(ParsePlugin):
    """``[note]...[/note]``: deltas of the content; a block with a ``!`` is "loud".

    Between double quotes the end tag is content.  The fast path watches for ``!`` and
    quotes (the characters that change its state) and refuses chunks with a digit, so
    that both outcomes of ``take`` are exercised; inside quotes it says that the end
    tag is content, so the core does not look for it.
    """

    name = "note"
    start_tags = ("[note]",)
    end_tag = "[/note]"

    def __init__(self, fast: bool = True) -> None:
        self.fast = fast
        self.loud = False
        self.quoted = False
        self.taken = 0

    def on_start(self, tag: str, span: Span) -> list[ParseEvent]:
        self.loud = False
        self.quoted = False
        return []

    def on_data(self, data: str, span: Span) -> list[ParseEvent]:
        if "!" in data:
            self.loud = True
        if data.count('"') % 2:
            self.quoted = not self.quoted
        return [CodeBlockDeltaEvent(delta=data, span=span)]

    def accepts_end(self) -> bool:
        return not self.quoted

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:
        language = "loud" if self.loud else ""
        return [CodeBlockEvent(code=block.content, language=language, span=block.span)]

    def fast_path(self) -> FastData | None:
        return (_STOP, self._take, self.quoted) if self.fast else None

    def _take(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        if any(c.isdigit() for c in data):
            return False
        self.taken += 1
        out.append(CodeBlockDeltaEvent(delta=data, span=(start, start + len(data))))
        return True


TEXTS = [
    "before [note]quiet words, then! loud ones[/note] after",
    "[note]a [/not a tag [ [/note [/note]",
    "[note]digits 123 and words[/note][note]again! 4[/note]",
    "[note]never closed, 42!",
    "[note][/note]x[note]![/note]",
    '[note]say "a [/note] b [/no" then[/note] after',
    '[note]"open [/note] never closed',
]


@pytest.mark.parametrize("text", TEXTS)
def test_the_fast_path_reads_as_on_data(text: str) -> None:
    def slow() -> StreamToolParser:
        return StreamToolParser(TOOLS, plugins=[Note(fast=False)])

    def fast() -> StreamToolParser:
        return StreamToolParser(TOOLS, plugins=[Note()])

    reference = assert_all_splittings(slow, text)
    assert assert_all_splittings(fast, text) == reference


def test_chunks_take_the_fast_path() -> None:
    plugin = Note()
    parser = StreamToolParser(TOOLS, plugins=[plugin])
    chunks = ["[note]", "some ", "plain ", "words", " and 1", " more", "[/no", "te]"]
    events = merge_deltas(feed_all(parser, chunks))
    assert plugin.taken == 4  # all but " and 1" (a digit) and the end tag's pieces
    assert [e.kind for e in events] == ["code_block_delta", "code_block"]


@pytest.mark.parametrize("limit", [10, 20, 30])
def test_the_size_limit_holds_on_the_fast_path(limit: int) -> None:
    text = "[note]" + "word " * 10 + "[/note] end"
    config = ParserConfig(max_tool_size=limit)

    def slow() -> StreamToolParser:
        return StreamToolParser(TOOLS, config=config, plugins=[Note(fast=False)])

    def fast() -> StreamToolParser:
        return StreamToolParser(TOOLS, config=config, plugins=[Note()])

    assert assert_all_splittings(fast, text) == assert_all_splittings(slow, text)
