"""Memory while a large block streams: a few bytes per input byte, however it is chunked.

The figures are ``tracemalloc`` peaks (allocations by the parser while it reads), not
timings, so they hold on a busy machine.  The chunks are cut from the stream as they are
fed, as a network would hand them over: a parser that kept every chunk would pay for
each one's string object (tens of bytes), which is what these tests rule out.
"""

from __future__ import annotations

import random
import tracemalloc
from collections.abc import Iterator

import pytest
from pydantic import BaseModel

from stream_parser import StreamToolParser
from stream_parser.core._readers.pieces import FOLD, Pieces
from stream_parser.core.config import ParserConfig
from stream_parser.core.events import ThinkingEvent, ToolCallEvent

# Megabyte streams under tracemalloc take seconds each: run with the slow tests.
pytestmark = pytest.mark.slow

SIZE = 1_000_000


class write_file(BaseModel):
    path: str
    content: str


def chunks(stream: str, seed: int = 0) -> Iterator[str]:
    """``stream`` in chunks of 1-8 characters, cut as they are asked for."""
    rng = random.Random(seed)
    i = 0
    while i < len(stream):
        k = rng.randint(1, 8)
        yield stream[i : i + k]
        i += k


def peak_growth(parser: StreamToolParser, stream: str) -> tuple[int, list[object]]:
    """Feed ``stream``; the peak of memory allocated meanwhile, and the whole blocks."""
    kept: list[object] = []
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for chunk in chunks(stream):
            # Events are dropped as they come, as a streaming UI does; whole blocks
            # are kept to check what was read (they are part of the cost).
            kept += [e for e in parser.feed(chunk) if isinstance(e, ToolCallEvent | ThinkingEvent)]
        kept += [e for e in parser.close() if isinstance(e, ToolCallEvent | ThinkingEvent)]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak - base, kept


def test_a_large_parameter_costs_a_few_bytes_per_byte() -> None:
    body = ("lorem ipsum <b> dolor & sit amet\n" * (SIZE // 33 + 1))[:SIZE]
    stream = f"ok <write_file><path>a</path><content>{body}</content></write_file> bye"
    parser = StreamToolParser(
        {"write_file": write_file}, config=ParserConfig(max_tool_size=2 * SIZE)
    )
    growth, kept = peak_growth(parser, stream)
    (call,) = kept
    assert isinstance(call, ToolCallEvent)
    assert call.tool_instance.content == body  # type: ignore[attr-defined]
    assert call.raw == stream[3:-4]
    # The value, the raw text and one join of it: about 3 bytes per byte.  Kept as
    # chunks, raw text and value apart, it was about 15.
    assert growth < 4 * SIZE


def test_a_large_thinking_block_costs_a_few_bytes_per_byte() -> None:
    body = ("step by step, " * (SIZE // 14 + 1))[:SIZE]
    parser = StreamToolParser({})
    growth, kept = peak_growth(parser, f"<think>{body}</think>done")
    (event,) = kept
    assert isinstance(event, ThinkingEvent)
    assert event.content == body
    assert growth < 3 * SIZE


def test_pieces_fold_and_slice_like_the_joined_text() -> None:
    rng = random.Random(7)
    text = "".join(rng.choice("ab<>") for _ in range(20 * FOLD + 123))
    pieces = Pieces()
    for chunk in chunks(text, seed=3):
        pieces.add(chunk)
    assert len(pieces.segments) >= 3  # folded as it grew
    assert len(pieces) < FOLD
    assert sum(map(len, pieces.segments + pieces)) == len(text)
    for _ in range(200):
        start = rng.randrange(len(text) + 1)
        end = rng.randrange(start, len(text) + 1)
        assert pieces.slice(start, end) == text[start:end]
    assert pieces.text() == text
    assert pieces.segments == [text] and not pieces  # joined once, kept once
    assert pieces.slice(7 * FOLD, 9 * FOLD) == text[7 * FOLD : 9 * FOLD]
