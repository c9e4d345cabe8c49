"""Linear time (invariant 5): the cost of a chunk must not grow with the stream.

These are complexity checks, not timing asserts: each case times the same kind of input
at size n and at 4n, both cut into 1-8 character chunks (or fed whole), and requires the
total time to grow by less than x8 (linear gives x4, quadratic x16).  Each size is timed
best-of-3 (best-of-2 for the 1 MB case), the two sizes interleaved so that a burst of
load on a shared machine hits both, and a failing ratio is measured once more before
the test fails.

The inputs are the realistic agent reply of ``benchmarks/workload.py`` and the
pathological inputs: 100k ``<``, repeated ``<thi``, a 1 MB unclosed tool
block, a flood of stray ``</think>``, plus a few more that stress the look-ahead windows.
Every case has a ``pytest-timeout`` guard; the events of the floods and of the unclosed
block are also checked (lossless, and what the rules say).
Absolute figures are reported by ``benchmarks/bench_chunks.py``, not asserted here.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Sequence

import pytest

from benchmarks.workload import TOOLS, build_reply, cut_chunks
from stream_parser import ParseErrorEvent, ParseEvent, StreamToolParser, TextOutputEvent
from stream_parser.core.config import ParserConfig
from stream_parser.testing import assert_lossless
from tests.helpers import run

pytestmark = pytest.mark.slow

GROWTH = 4
LIMIT = 8.0  # total-time ratio for GROWTH x the input; linear ~4, quadratic ~16


def _time(chunks: Sequence[str]) -> float:
    parser = StreamToolParser(TOOLS)
    feed = parser.feed
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        for chunk in chunks:
            feed(chunk)
        parser.close()
        return time.perf_counter() - start
    finally:
        gc.enable()


def _ratio(small: Sequence[str], big: Sequence[str], rounds: int = 3) -> float:
    """Best-of-``rounds`` time of ``big`` over that of ``small``, measured interleaved."""
    t_small = t_big = float("inf")
    for _ in range(rounds):
        t_small = min(t_small, _time(small))
        t_big = min(t_big, _time(big))
    return t_big / t_small


def assert_linear(
    make: Callable[[int], str], big: int, *, whole: bool = False, rounds: int = 3
) -> None:
    """Time ``make(big // GROWTH)`` against ``make(big)``; require ratio < LIMIT."""

    def chunks(n: int) -> list[str]:
        text = make(n)
        return [text] if whole else cut_chunks(text)

    small_chunks, big_chunks = chunks(big // GROWTH), chunks(big)
    ratio = _ratio(small_chunks, big_chunks, rounds)
    if ratio >= LIMIT:  # noise on a shared machine: measure again before failing
        ratio = min(ratio, _ratio(small_chunks, big_chunks, rounds))
    assert ratio < LIMIT, f"x{GROWTH} input took x{ratio:.1f} the time (linear: ~x{GROWTH})"


def _events(text: str) -> list[ParseEvent]:
    parser = StreamToolParser(TOOLS)
    events: list[ParseEvent] = []
    for chunk in cut_chunks(text):
        events.extend(parser.feed(chunk))
    events.extend(parser.close())
    assert_lossless(events, text)
    return events


# --- the realistic workload -------------------------------------------------------------


@pytest.mark.timeout(60)
def test_agent_reply_is_linear() -> None:
    assert_linear(build_reply, 200_000)


# --- pathological inputs --------------------------------------------------


def lt_flood(n: int) -> str:
    return "<" * n


def thi_flood(n: int) -> str:
    return "<thi" * (n // 4)


def unclosed_tool(n: int) -> str:
    head = "<write_to_file>\n<path>big.txt</path>\n<content>\n"
    line = "if a < b && c > d: x = '<div>&amp;</div>'\n"
    return head + (line * (n // len(line) + 1))[: n - len(head)]


def stray_think_close(n: int) -> str:
    return "</think>" * (n // 8)


def lt_flood_in_value(n: int) -> str:
    return "<write_to_file><path>p</path><content>" + "<" * n


def lookalike_closers_in_value(n: int) -> str:
    """``</content>`` not followed by a closer: rule 5's look-ahead, over and over."""
    return "<write_to_file><path>p</path><content>" + "</content> x" * (n // 12)


def end_tag_prefixes_in_thinking(n: int) -> str:
    return "<thinking>" + "</thinkin" * (n // 9)


def tool_tag_then_whitespace(n: int) -> str:
    """A tool's start tag, then whitespace past ``buffer_keep_size``: rule 3's wait."""
    return ("<read_file>" + " " * 200 + "x") * (n // 212)


def short_calls(n: int) -> str:
    """Many short blocks: text, thinking and a call, repeated (a whole file fed at once)."""
    unit = "Some text.\n<think>a thought</think>\n<read_file>\n<path>a.py</path>\n</read_file>\n"
    return unit * (n // len(unit))


# name -> (builder, size of the big input, timing rounds).  The 1 MB case is timed
# best-of-2 only: it is by far the longest, and its ratio has the widest margin.
CASES: dict[str, tuple[Callable[[int], str], int, int]] = {
    "100k '<'": (lt_flood, 100_000, 3),
    "repeated '<thi'": (thi_flood, 100_000, 3),
    "1 MB unclosed tool block": (unclosed_tool, 1_000_000, 2),
    "stray '</think>' flood": (stray_think_close, 100_000, 3),
    "'<' flood in a value": (lt_flood_in_value, 100_000, 3),
    "look-alike closers in a value": (lookalike_closers_in_value, 100_000, 3),
    "end-tag prefixes in thinking": (end_tag_prefixes_in_thinking, 100_000, 3),
    "tool tag + long whitespace": (tool_tag_then_whitespace, 100_000, 3),
}


@pytest.mark.timeout(60)
@pytest.mark.parametrize("case", list(CASES))
def test_pathological_input_is_linear(case: str) -> None:
    make, big, rounds = CASES[case]
    assert_linear(make, big, rounds=rounds)


@pytest.mark.timeout(30)
@pytest.mark.parametrize("case", ["100k '<'", "repeated '<thi'", "stray '</think>' flood"])
def test_pathological_input_fed_whole_is_linear(case: str) -> None:
    make, big, _ = CASES[case]
    assert_linear(make, big, whole=True)


@pytest.mark.timeout(60)
def test_many_blocks_fed_whole_are_linear() -> None:
    # Each block's size guard looks at the buffer from the block's start: a file of
    # megabytes fed as one chunk must not be copied once per block.
    assert_linear(short_calls, 4_000_000, whole=True, rounds=2)


# --- and the events are still right -------------------------------------------------------


@pytest.mark.timeout(30)
@pytest.mark.parametrize("case", ["100k '<'", "repeated '<thi'", "stray '</think>' flood"])
def test_text_floods_stay_text(case: str) -> None:
    make, big, _ = CASES[case]
    text = make(big)
    events = _events(text)
    assert all(isinstance(e, TextOutputEvent) for e in events)


@pytest.mark.timeout(30)
def test_unclosed_tool_block_is_reported_and_delivered() -> None:
    text = unclosed_tool(250_000)
    events = _events(text)
    errors = [e for e in events if isinstance(e, ParseErrorEvent)]
    assert [e.error_type for e in errors] == ["unclosed_tool"]
    assert "".join(e.text for e in events if isinstance(e, TextOutputEvent)) == text


@pytest.mark.timeout(60)
@pytest.mark.parametrize("max_tool_size", [ParserConfig().max_tool_size, 5_000])
def test_a_chunk_read_in_slices_gives_the_events_of_small_chunks(max_tool_size: int) -> None:
    # Longer than the parser's slice, with blocks across the slice boundaries (and with a
    # small limit, a file body too large for it).
    text = build_reply(60_000) + short_calls(30_000)

    def factory() -> StreamToolParser:
        return StreamToolParser(TOOLS, config=ParserConfig(max_tool_size=max_tool_size))

    whole = run(factory, [text])
    assert whole == run(factory, cut_chunks(text))
    assert any(isinstance(e, ParseErrorEvent) for e in whole) == (max_tool_size == 5_000)
