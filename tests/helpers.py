"""Shared test helpers: feed a parser in every way a stream can be cut."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from typing import Any

from stream_parser import ChatDelta, ParseEvent, StreamToolParser
from stream_parser.testing import assert_lossless, merge_deltas

ParserFactory = Callable[[], StreamToolParser]

ENDINGS: tuple[ChatDelta | None, ...] = (
    None,
    ChatDelta(finish_reason="length"),
    ChatDelta(error="connection reset"),
)
"""Each way a reply can end: the end of the stream, the length limit, a stream error.

Passed as ``end`` to :func:`feed_all` and :func:`run`: the item that comes after the
last chunk (None: nothing comes, the stream just ends)."""


def feed_all(
    parser: StreamToolParser, chunks: Iterable[str], end: ChatDelta | None = None
) -> list[ParseEvent]:
    """Feed every chunk, then ``end`` (one of :data:`ENDINGS`), then close; all events."""
    events: list[ParseEvent] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    if end is not None:
        events.extend(parser.feed_delta(end))
    events.extend(parser.close())
    return events


def run(
    factory: ParserFactory, chunks: Iterable[str], end: ChatDelta | None = None
) -> list[ParseEvent]:
    """Merged events of a fresh parser fed ``chunks`` and ``end``; checks losslessness."""
    chunks = list(chunks)
    events = feed_all(factory(), chunks, end)
    assert_lossless(events, "".join(chunks))
    return merge_deltas(events)


def splits(text: str, cuts: Sequence[int]) -> list[str]:
    bounds = [0, *cuts, len(text)]
    return [text[a:b] for a, b in itertools.pairwise(bounds)]


def assert_all_splittings(
    factory: ParserFactory,
    text: str,
    expected: list[ParseEvent] | None = None,
    end: ChatDelta | None = None,
) -> list[ParseEvent]:
    """Check that ``text`` gives the same merged events however it is cut.

    Feeds (a) the whole text, (b) one character at a time, (c) split at every single
    position, (d) split at every pair of positions for short texts.  Every run must be
    lossless and give the same merged events (equal to ``expected`` when given); each
    run ends with ``end`` (one of :data:`ENDINGS`).  Returns the merged events.
    """
    reference = run(factory, [text], end)
    if expected is not None:
        assert reference == expected, f"\n got: {reference}\nwant: {expected}"
    assert run(factory, list(text), end) == reference, "one character at a time differs"
    for cut in range(len(text) + 1):
        assert run(factory, splits(text, [cut]), end) == reference, f"split at {cut} differs"
    if len(text) < 40:
        for a in range(1, len(text)):
            for b in range(a + 1, len(text)):
                chunks = splits(text, [a, b])
                assert run(factory, chunks, end) == reference, f"split {a},{b} differs"
    return reference


def run_async(factory: ParserFactory, chunks: Iterable[str]) -> list[ParseEvent]:
    """Events from the async driver."""

    async def source() -> AsyncIterator[str]:
        for chunk in chunks:
            yield chunk

    async def collect() -> list[ParseEvent]:
        return [event async for event in factory().aparse_stream(source())]

    return asyncio.run(collect())


class EndlessModel:
    """A model whose reply never ends: ``head``, then ``piece(0)``, ``piece(1)``...

    Its stream's ``finally`` sets :attr:`closed`, which says when the stream was closed.
    """

    def __init__(self, piece: Callable[[int], str], head: str = "") -> None:
        self.closed = threading.Event()
        self._piece = piece
        self._head = head

    async def stream(
        self, messages: Any, *, tools: Any = None, **options: Any
    ) -> AsyncIterator[ChatDelta]:
        try:
            if self._head:
                yield ChatDelta(content=self._head)
            for number in itertools.count():
                yield ChatDelta(content=self._piece(number))
                await asyncio.sleep(0)
        finally:
            self.closed.set()
