"""Plugins in the line shape: ``can_handle(content, state)`` and ``process(content)``.

Each input runs whole, one character at a time and split at every position
(``assert_all_splittings``): the events, deltas merged, are the same, and their spans
tile the input.
"""

from __future__ import annotations

from collections.abc import Generator, Iterable
from typing import Any

import pytest

from stream_parser import (
    CodeBlockEvent,
    ConfigError,
    FencedCodePlugin,
    NoticeEvent,
    ParseEvent,
    ParsePlugin,
    ParserConfig,
    ParseState,
    StreamToolParser,
    TextOutputEvent,
)
from stream_parser.testing import tiling_events
from tests.helpers import assert_all_splittings, feed_all
from tests.tools_fixture import TOOLS, summary


class FencePlugin(ParsePlugin):
    """The fence plugin as a user of the line shape writes it."""

    def can_handle(self, content: str, state: ParseState) -> bool:
        return "```" in content and state == ParseState.TEXT

    def process(self, content: str) -> Generator[ParseEvent, None, None]:
        info, _, rest = content.partition("\n")
        code = rest.rpartition("\n")[0] if rest.endswith("```") else rest
        yield CodeBlockEvent(language=info.strip("`").strip(), code=code)


class Recorder:
    """A plugin in the line shape that is not a ParsePlugin: it records what it is offered."""

    def __init__(self, marker: str = "!!", result: Iterable[ParseEvent] | None = ()) -> None:
        self.marker = marker
        self.result = result
        self.lines: list[str] = []
        self.blocks: list[str] = []

    def can_handle(self, content: str, state: ParseState) -> bool:
        self.lines.append(content)
        return self.marker in content

    def process(self, content: str) -> Iterable[ParseEvent] | None:
        self.blocks.append(content)
        return self.result


def with_plugins(*plugins: Any, **config: Any) -> StreamToolParser:
    return StreamToolParser(TOOLS, config=ParserConfig(**config), plugins=plugins)


FENCED = [
    "Here:\n```python\nif a < b:\n    x()\n```\nDone.",
    "```\n```",
    "a\n```sh\nls\n```",
    "```js\nlet x\n```\n\n```py\ny\n```\nend\n",
]


@pytest.mark.parametrize("text", FENCED)
def test_the_fence_plugin_gives_the_blocks_fenced_code_gives(text: str) -> None:
    ours = assert_all_splittings(lambda: with_plugins(FencePlugin()), text)
    shipped = assert_all_splittings(lambda: with_plugins(FencedCodePlugin()), text)
    assert tiling_events(ours) == tiling_events(shipped)
    assert any(isinstance(e, CodeBlockEvent) for e in ours)


def test_a_block_runs_to_the_next_accepted_line_both_lines_included() -> None:
    plugin = Recorder(result=None)
    text = "x\n!! open\nbody\n!! close\ny"
    events = assert_all_splittings(lambda: with_plugins(plugin), text)
    assert set(plugin.blocks) == {"!! open\nbody\n!! close"}
    # process() gave nothing: the block stays text.
    assert summary(events) == [("text", text)]


def test_a_block_without_its_closing_line_runs_to_the_end_of_the_stream() -> None:
    plugin = Recorder(result=[CodeBlockEvent(code="c")])
    text = "x\n!! open\nbody"
    events = assert_all_splittings(lambda: with_plugins(plugin), text)
    assert set(plugin.blocks) == {"!! open\nbody"}
    assert events == [
        TextOutputEvent(text="x\n", span=(0, 2)),
        CodeBlockEvent(code="c", span=(2, len(text))),
    ]


def test_each_complete_line_is_offered_in_text_only() -> None:
    plugin = Recorder(marker="never")
    text = "one\n<think>not\na line</think>two\n\n<read_file><path>p</path></read_file>\nend"
    events = assert_all_splittings(lambda: with_plugins(plugin), text)
    plain = assert_all_splittings(lambda: with_plugins(), text)
    assert events == plain
    plugin.lines.clear()
    feed_all(with_plugins(plugin), [text])
    # A block of the parser's own ends the line before it.
    assert plugin.lines == ["one", "two", "", "", "end"]


def test_the_events_of_process_replace_the_block_and_spans_tile() -> None:
    first, second = CodeBlockEvent(code="a"), NoticeEvent(code="n", message="m")
    plugin = Recorder(result=[first, second])
    text = "!!\nx\n!!\ntail"
    events = assert_all_splittings(lambda: with_plugins(plugin), text)
    assert events == [
        CodeBlockEvent(code="a", span=(0, 7)),
        NoticeEvent(code="n", message="m", span=(7, 7)),
        TextOutputEvent(text="\ntail", span=(7, 12)),
    ]


def test_the_first_plugin_that_accepts_a_line_owns_its_block() -> None:
    a, b = Recorder("!!", [CodeBlockEvent(code="a")]), Recorder("!", [CodeBlockEvent(code="b")])
    events = assert_all_splittings(lambda: with_plugins(a, b), "!!\n!\n!!")
    assert summary(events) == [("code", "", "a")]
    assert b.blocks == []


def test_text_is_held_by_at_most_the_current_line() -> None:
    parser = with_plugins(Recorder())
    assert parser.feed("hello ") == []
    assert parser.feed("world\nnext") == [TextOutputEvent(text="hello world\n", span=(0, 12))]
    assert parser.close() == [TextOutputEvent(text="next", span=(12, 16))]
    # Without such a plugin nothing is held.
    assert with_plugins(FencedCodePlugin()).feed("hello ") != []


def test_side_events_wait_behind_held_text() -> None:
    parser = with_plugins(Recorder(), report_unknown_tools=True)
    text = "<open_doc><path>a</path></open_doc> ok\nnext"
    events = feed_all(parser, list(text))
    kinds = [e.kind for e in events]
    assert kinds == ["text", "error", "text"]
    assert events[1].span[0] < events[0].span[1]


def test_a_long_line_is_text_and_a_long_block_an_error() -> None:
    plugin = Recorder(result=[CodeBlockEvent(code="x")])
    long_line = "y" * 40 + "\n!!\n" + "z" * 5
    events = assert_all_splittings(lambda: with_plugins(plugin, max_tool_size=30), long_line)
    assert summary(events) == [("text", "y" * 40 + "\n"), ("code", "", "x")]
    block = "!!\n" + "b" * 40 + "\nrest"
    events = assert_all_splittings(lambda: with_plugins(plugin, max_tool_size=30), block)
    assert summary(events) == [("error", "block_too_large"), ("text", block)]


@pytest.mark.parametrize("line", ["", "b", "bb"])
@pytest.mark.parametrize("tail", ["", "rest"])
def test_a_block_of_short_lines_is_bounded_too(line: str, tail: str) -> None:
    # Empty lines grow the block as much as any: it is dropped once past the bound, and
    # not held to the end of the stream.
    plugin = Recorder(result=[CodeBlockEvent(code="x")])
    text = "!!\n" + (line + "\n") * 40 + tail
    events = assert_all_splittings(lambda: with_plugins(plugin, max_tool_size=30), text)
    assert summary(events) == [("error", "block_too_large"), ("text", text)]
    error = next(e for e in events if e.kind == "error")
    assert error.span == (0, 30)


def test_process_must_give_events() -> None:
    parser = with_plugins(Recorder(result=["not an event"]))  # type: ignore[list-item]
    parser.feed("!!\n")
    with pytest.raises(ConfigError, match="process"):
        parser.close()


def test_reset_forgets_the_held_line_and_tells_the_plugins() -> None:
    class Counting(Recorder):
        resets = 0

        def reset(self) -> None:
            self.resets += 1

    counting, plain = Counting(), Recorder()  # (a plugin without reset() is fine too)
    parser = with_plugins(counting, plain, FencePlugin())
    parser.feed("held")
    parser.reset()
    assert parser.feed("new\n") == [TextOutputEvent(text="new\n", span=(0, 4))]
    assert counting.resets == 1


@pytest.mark.parametrize("text", [FENCED[0], "x\n!! open\nbody\n!! close\ny"])
def test_every_kind_of_stream_item_reads_alike(text: str) -> None:
    from stream_parser import ChatDelta
    from stream_parser.testing import merge_deltas

    def plugins() -> StreamToolParser:
        return with_plugins(FencePlugin(), Recorder(result=[CodeBlockEvent(code="r")]))

    pieces = [text[i : i + 2] for i in range(0, len(text), 2)]
    as_text = merge_deltas(plugins().parse_stream(pieces))
    as_deltas = merge_deltas(plugins().parse_stream([ChatDelta(content=p) for p in pieces]))
    as_pairs = merge_deltas(plugins().parse_stream([(p, {"usage": None}) for p in pieces]))
    assert as_text == as_deltas == as_pairs
    assert any(isinstance(e, CodeBlockEvent) for e in as_text)
