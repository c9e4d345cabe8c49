"""Hypothesis properties for the invariants in the README and docs/architecture.md.

The alphabet is biased toward tag fragments so that random inputs hit the interesting
cases: split tags, look-alike closers, partial tags at the end, CDATA, whitespace.
"""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from stream_parser import ChatDelta, ParserConfig, ParseState, StreamToolParser, TextOutputEvent
from stream_parser.testing import assert_lossless, merge_deltas
from tests.helpers import ENDINGS, feed_all
from tests.tools_fixture import TOOLS

FRAGMENTS = [
    "<",
    "</",
    ">",
    "<think>",
    "</think>",
    "<thinking>",
    "</thinking>",
    "<thi",
    "nk>",
    "<read_file>",
    "</read_file>",
    "<path>",
    "</path>",
    "<write_to_file>",
    "</write_to_file>",
    "<content>",
    "</content>",
    "<search>",
    "<query>",
    "</query>",
    "</search>",
    "<max_results>",
    "</max_results>",
    "<![CDATA[",
    "]]>",
    "`",
    "```",
    "\n",
    " ",
    "\r\n",
    "a",
    "xyz",
    "é",
    "&amp;",
    "\x00",
    "\ud800",
]

texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=3)), max_size=40).map(
    "".join
)

configs = st.sampled_from(
    [
        ParserConfig(),
        ParserConfig(fence_aware=True),
        ParserConfig(max_tool_size=30, buffer_keep_size=2),
        ParserConfig(start_in_thinking=True),
        ParserConfig(emit_deltas=False),
        ParserConfig(max_thinking_size=5),
        ParserConfig(max_thinking_size=5, emit_deltas=False),
    ]
)


def cut(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts})
    bounds = [0, *points, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


PROPS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(texts, st.lists(st.integers(min_value=0), max_size=12), configs, st.sampled_from(ENDINGS))
def test_chunking_invariance(
    text: str, cuts: list[int], config: ParserConfig, end: ChatDelta | None
) -> None:
    # Every event, error events and spans included, however the reply ends.
    whole = merge_deltas(feed_all(StreamToolParser(TOOLS, config=config), [text], end))
    chunked = merge_deltas(feed_all(StreamToolParser(TOOLS, config=config), cut(text, cuts), end))
    assert chunked == whole
    by_char = merge_deltas(feed_all(StreamToolParser(TOOLS, config=config), list(text), end))
    assert by_char == whole


@PROPS
@given(texts, st.lists(st.integers(min_value=0), max_size=12), configs, st.sampled_from(ENDINGS))
def test_lossless(text: str, cuts: list[int], config: ParserConfig, end: ChatDelta | None) -> None:
    events = feed_all(StreamToolParser(TOOLS, config=config), cut(text, cuts), end)
    assert_lossless(events, text)


@PROPS
@given(texts, configs)
def test_pending_tail_is_bounded(text: str, config: ParserConfig) -> None:
    parser = StreamToolParser(TOOLS, config=config)
    longest_tag = max(len(f"<{name}>") for name in TOOLS)
    for ch in text:
        parser.feed(ch)
        if parser.state is ParseState.TEXT:
            assert len(parser.pending) <= longest_tag + config.buffer_keep_size
        elif parser.state is ParseState.THINKING:
            assert len(parser.pending) < len("</thinking>")


@PROPS
@given(st.text(alphabet=st.characters(blacklist_characters="<`"), max_size=60))
def test_text_without_tag_starts_streams_at_once(text: str) -> None:
    """Early text: nothing that cannot begin a tag is ever held back."""
    parser = StreamToolParser(TOOLS)
    for i, ch in enumerate(text):
        events = parser.feed(ch)
        assert events == [TextOutputEvent(text=ch, span=(i, i + 1))]
        assert parser.pending == ""


@PROPS
@given(texts)
def test_prose_with_angle_brackets_is_released_when_decidable(text: str) -> None:
    """Early text: a held '<' is released as soon as what follows rules a tag out."""
    parser = StreamToolParser({})
    for ch in text + " ":
        parser.feed(ch)
        # With no tools, only thinking tags can be held; what is held is a proper prefix.
        tags = (
            ("<thinking>", "<think>")
            if parser.state is ParseState.TEXT
            else (
                "</thinking>",
                "</think>",
            )
        )
        assert not parser.pending or any(
            t.startswith(parser.pending) and t != parser.pending for t in tags
        )


class FeedCloseMachine(RuleBasedStateMachine):
    """Any sequence of feed()/close() calls: never raises on text, stays lossless."""

    def __init__(self) -> None:
        super().__init__()
        self.parser = StreamToolParser(TOOLS)
        self.text = ""
        self.events: list[object] = []
        self.closed = False

    @precondition(lambda self: not self.closed)
    @rule(chunk=texts)
    def feed(self, chunk: str) -> None:
        self.text += chunk
        self.events.extend(self.parser.feed(chunk))

    @rule()
    def close(self) -> None:
        events = self.parser.close()
        if self.closed:
            assert events == []
        self.events.extend(events)
        self.closed = True

    @invariant()
    def delivered_text_is_a_prefix(self) -> None:
        if self.closed:
            assert_lossless(self.events, self.text)  # type: ignore[arg-type]
        else:
            assert self.parser.offset + len(self.parser.pending) == len(self.text)


TestFeedClose = FeedCloseMachine.TestCase
TestFeedClose.settings = settings(max_examples=100, stateful_step_count=20, deadline=None)
