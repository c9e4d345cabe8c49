"""Hypothesis properties of the line adapter: chunking invariance, losslessness, early text."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_parser import ChatDelta, CodeBlockEvent, ParserConfig, StreamToolParser
from stream_parser.testing import assert_lossless, merge_deltas
from tests.compat.test_parser_line_plugins import FencePlugin, Recorder
from tests.core.test_properties import FRAGMENTS, cut
from tests.helpers import ENDINGS, feed_all
from tests.tools_fixture import TOOLS

LINE_FRAGMENTS = [*FRAGMENTS, "!!", "\n!!", "```py\n", "\n```\n", "\n\n"]
texts = st.lists(st.one_of(st.sampled_from(LINE_FRAGMENTS), st.text(max_size=3)), max_size=40).map(
    "".join
)
plugin_sets = st.sampled_from(["fence", "marker", "both", "empty"])
configs = st.sampled_from(
    [ParserConfig(), ParserConfig(max_tool_size=12), ParserConfig(emit_deltas=False)]
)


def parser(plugins: str, config: ParserConfig) -> StreamToolParser:
    chosen: list[object] = []
    if plugins in ("fence", "both"):
        chosen.append(FencePlugin())
    if plugins in ("marker", "both"):
        chosen.append(Recorder(result=[CodeBlockEvent(code="m")]))
    if plugins == "empty":
        chosen.append(Recorder(result=None))
    return StreamToolParser(TOOLS, config=config, plugins=chosen)  # type: ignore[arg-type]


def check(
    text: str, cuts: list[int], plugins: str, config: ParserConfig, end: ChatDelta | None
) -> None:
    whole = feed_all(parser(plugins, config), [text], end)
    assert_lossless(whole, text)
    chunked = feed_all(parser(plugins, config), cut(text, cuts), end)
    assert_lossless(chunked, text)
    assert merge_deltas(chunked) == merge_deltas(whole)
    by_char = feed_all(parser(plugins, config), list(text), end)
    assert merge_deltas(by_char) == merge_deltas(whole)


FAST = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ARGS = (
    texts,
    st.lists(st.integers(min_value=0), max_size=12),
    plugin_sets,
    configs,
    st.sampled_from(ENDINGS),
)


@FAST
@given(*ARGS)
def test_chunking_invariance_and_losslessness(
    text: str, cuts: list[int], plugins: str, config: ParserConfig, end: ChatDelta | None
) -> None:
    check(text, cuts, plugins, config, end)


@pytest.mark.slow
@SLOW
@given(*ARGS)
def test_chunking_invariance_and_losslessness_at_length(
    text: str, cuts: list[int], plugins: str, config: ParserConfig, end: ChatDelta | None
) -> None:
    check(text, cuts, plugins, config, end)


@FAST
@given(st.text(alphabet=st.characters(blacklist_characters="<`!"), max_size=60))
def test_text_is_held_by_at_most_the_current_line(text: str) -> None:
    p = StreamToolParser(TOOLS, plugins=[Recorder()])  # type: ignore[list-item]
    emitted = ""
    for i, char in enumerate(text):
        emitted += "".join(e.text for e in p.feed(char))  # type: ignore[attr-defined]
        seen = text[: i + 1]
        assert emitted == seen[: seen.rfind("\n") + 1]
