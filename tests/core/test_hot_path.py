"""The fast path of ``feed()`` changes nothing but the time a chunk takes.

A chunk without a character that matters in the current state is taken whole by the
reader's fast path (``Reader.fast_path``) instead of the loop.  These properties run
the same input through a parser whose fast path is off and check that the events are
the very same, chunk by chunk and unmerged; and that the cheap first test of a chunk
(:func:`~stream_parser.core._scan.stop_char`) never lets through a chunk the stop
pattern would stop.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_parser import (
    ChatDelta,
    FencedCodePlugin,
    ParserConfig,
    ParseState,
    StreamToolParser,
    TextOutputEvent,
    ThinkingEvent,
)
from stream_parser.core import COMPILED
from stream_parser.core._scan import stop_char, stop_pattern
from stream_parser.core.plugins import tag_stop
from stream_parser.errors import ConfigError, ParserClosedError
from tests.core.test_properties import PROPS, configs, cut, texts
from tests.tools_fixture import TOOLS


class SlowOnly(StreamToolParser):
    """A parser that never takes the fast path: every chunk goes through the loop."""

    def _select_fast_path(self) -> None:
        super()._select_fast_path()
        self._plain = self._held = None


def events_per_chunk(parser: StreamToolParser, chunks: list[str]) -> list[list[object]]:
    return [parser.feed(chunk) for chunk in chunks] + [parser.close()]


all_configs = st.one_of(
    configs,
    st.sampled_from(
        [
            ParserConfig(dialect="hermes"),
            ParserConfig(dialect="qwen3_coder"),
            ParserConfig(report_unknown_tools=True),
        ]
    ),
)


@PROPS
@given(texts, st.lists(st.integers(min_value=0), max_size=12), all_configs)
def test_the_fast_path_gives_the_events_of_the_loop(
    text: str, cuts: list[int], config: ParserConfig
) -> None:
    chunks = cut(text, cuts)
    fast = events_per_chunk(StreamToolParser(TOOLS, config=config), chunks)
    slow = events_per_chunk(SlowOnly(TOOLS, config=config), chunks)
    assert fast == slow


value_pieces = st.sampled_from(
    ["a", "b", "<", "/", "!", "]", "\n", "</p", "</path>", "</read_file>", "<![CDATA[", "]]>"]
)


@PROPS
@given(
    st.lists(value_pieces, max_size=30).map("".join),
    st.integers(min_value=1, max_value=5),
    st.sampled_from([None, 40, 70]),
)
def test_the_fast_path_takes_a_long_value_chunk_by_chunk(
    body: str, size: int, max_tool_size: int | None
) -> None:
    # A parameter's value a few characters at a time: the case most chunks are; tags
    # cut by the chunks' ends, and a call that grows past its size limit.
    text = f"<read_file><path>{body}</path></read_file> after"
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    for deltas in (True, False):
        if max_tool_size is None:
            config = ParserConfig(emit_deltas=deltas)
        else:
            config = ParserConfig(emit_deltas=deltas, max_tool_size=max_tool_size)
        fast = events_per_chunk(StreamToolParser(TOOLS, config=config), chunks)
        slow = events_per_chunk(SlowOnly(TOOLS, config=config), chunks)
        assert fast == slow


@settings(PROPS, max_examples=60)
@given(
    st.lists(value_pieces, max_size=30).map("".join),
    st.integers(min_value=1, max_value=8),
    st.sampled_from([None, 1200]),
)
def test_the_fast_path_of_a_long_value(body: str, size: int, max_tool_size: int | None) -> None:
    # Past 1 KB a value's fast path stops only at the tags that matter in it.
    head = "x" * 1100
    text = f"<write_to_file><path>a</path><content>{head}{body}</content></write_to_file>."
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    config = ParserConfig() if max_tool_size is None else ParserConfig(max_tool_size=max_tool_size)
    fast = events_per_chunk(StreamToolParser(TOOLS, config=config), chunks)
    slow = events_per_chunk(SlowOnly(TOOLS, config=config), chunks)
    assert fast == slow


tags = st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=4)


@PROPS
@given(tags, st.text(max_size=12))
def test_a_chunk_without_the_stop_char_has_no_stop(tags: list[str], chunk: str) -> None:
    pattern = stop_pattern(tags)
    assert pattern is not None
    first = stop_char(pattern)
    if first not in chunk:
        assert pattern.search(chunk) is None
    # The character is known whenever every tag begins with it.
    assert (first != "") == (len({tag[0] for tag in tags}) == 1)


@given(st.sampled_from(["<", "`", ".", "|", "\\", "a", "\n", "é"]), st.text(max_size=12))
def test_the_stop_char_of_one_start(first: str, chunk: str) -> None:
    pattern = stop_pattern([first + "x", first + "/", first])
    assert stop_char(pattern) == first
    assert (first in chunk) == (pattern.search(chunk) is not None)


@PROPS
@given(st.lists(tags, min_size=1, max_size=3), st.booleans(), st.text(max_size=12))
def test_alternatives_of_patterns_share_their_stop_char(
    tag_lists: list[list[str]], cut: bool, chunk: str
) -> None:
    # A plugin's fast path joins its pattern and its end tag's as alternatives of groups.
    parts = [tag_stop(tag_list) if cut else stop_pattern(tag_list) for tag_list in tag_lists]
    pattern = re.compile("|".join(f"(?:{part.pattern})" for part in parts if part))
    first = stop_char(pattern)
    if first not in chunk:
        assert pattern.search(chunk) is None
    firsts = {tag[0] for tag_list in tag_lists for tag in tag_list}
    assert (first != "") == (len(firsts) == 1)


@pytest.mark.parametrize(
    ("source", "first"),
    [
        ("(?:<a|<b(?:c|$))|<d", "<"),
        ("(<a)|<b", "<"),
        ("(?:<a)?b", ""),  # the group may match nothing
        ("(?:<a|)b", ""),
        ("(?=<)<a", ""),  # a lookahead is left alone
        ("(?i:<a)", ""),
        ("(?:)<", ""),
        ("[<]a|<b", ""),
        ("<a|<b|", ""),  # the empty alternative
        ("\\<a|<b", "<"),
    ],
)
def test_the_stop_char_of_groups_and_alternatives(source: str, first: str) -> None:
    assert stop_char(re.compile(source)) == first


def test_no_stop_char_for_patterns_it_cannot_vouch_for() -> None:
    assert stop_char(None) == ""
    assert stop_char(re.compile(r"\d(?:[x]|\Z)")) == ""  # a class, not a character
    assert stop_char(re.compile("<", re.IGNORECASE)) == ""  # "<" has no case, but <x may
    assert stop_char(re.compile("a*")) == ""
    assert stop_char(re.compile("<|>")) == ""


def test_after_close_a_plain_chunk_is_refused() -> None:
    parser = StreamToolParser(TOOLS)
    assert [type(e) for e in parser.feed("plain text")] == [TextOutputEvent]
    parser.close()
    try:
        parser.feed("more plain text")
    except ParserClosedError:
        pass
    else:  # pragma: no cover - the failure being tested for
        raise AssertionError("feed() after close() took a chunk")
    assert parser.state is ParseState.CLOSED


def test_a_plain_chunk_after_reasoning_ends_it_first() -> None:
    parser = StreamToolParser(TOOLS)
    parser.feed("one ")
    events = parser.feed_delta(ChatDelta(reasoning="hmm"))
    events += parser.feed("two")
    kinds = [e.kind for e in events]
    assert kinds == ["thinking_delta", "thinking", "text"]
    thinking = events[1]
    assert isinstance(thinking, ThinkingEvent)
    assert thinking.content == "hmm"


def test_plugins_are_refused_after_a_chunk_taken_whole() -> None:
    parser = StreamToolParser(TOOLS)
    parser.feed("plain")
    try:
        parser.use(FencedCodePlugin())
    except ConfigError:
        pass
    else:  # pragma: no cover - the failure being tested for
        raise AssertionError("use() after feed() registered a plugin")


@pytest.mark.skipif(COMPILED, reason="compiled, the parser's attributes are native fields")
def test_a_parser_keeps_few_attributes() -> None:
    # CPython (3.11 to 3.13) stores an instance's attributes in a layout shared with its
    # class only up to about thirty of them; past that every attribute read of feed()
    # gets slower (measured: about 3% per chunk at 30).  A new piece of state belongs
    # in an object the parser already holds (the cursor, a reader) or in one new holder.
    parser = StreamToolParser(TOOLS, plugins=[FencedCodePlugin()])
    parser.feed("<read_file><path>a</path></read_file>")
    parser.close()
    parser.reset()
    assert len(vars(parser)) <= 27, sorted(vars(parser))
