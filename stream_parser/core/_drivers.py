"""Drivers: pull items from a stream and push them into a parser, sync or async.

The parser is push-based (``feed`` / ``close``).  These loops are all that differs
between a synchronous and an asynchronous stream; they hold no parsing logic.  Items
may be ``str``, ``bytes`` (decoded incrementally as UTF-8), ``(content, metadata)``
pairs (usage read from the metadata, :func:`usage_from_metadata`),
:class:`~stream_parser.core.chunks.ChatDelta` or chat completion chunks (the ``openai``
SDK's, read in :mod:`~stream_parser.core._sdk_items`); the parser's ``feed_item``
dispatches them, ``str`` first.

:func:`drive_async` also takes a synchronous iterable (a list, the SDK's ``Stream``):
code that is async throughout can hand over whatever stream it has.  Pulling an item
from it then runs in the event loop's thread, as a synchronous source does anyway.
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator, Mapping
from typing import Any, Protocol

from .chunks import StreamItem
from .events import ParseEvent

__all__ = ["Utf8Decoder", "drive", "drive_async", "usage_from_metadata"]


class _Parser(Protocol):
    def feed_item(self, item: StreamItem) -> list[ParseEvent]: ...

    def close(self) -> list[ParseEvent]: ...


class Utf8Decoder:
    """Incremental UTF-8 decoding of ``bytes`` items (a character may be split)."""

    __slots__ = ("_decoder",)

    def __init__(self) -> None:
        self._decoder: codecs.IncrementalDecoder | None = None

    def text(self, item: StreamItem) -> StreamItem:
        """``item`` decoded if it is bytes (invalid bytes replaced), else unchanged."""
        if isinstance(item, (bytes, bytearray)):
            if self._decoder is None:
                self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
            return self._decoder.decode(bytes(item))
        return item

    def flush(self) -> str:
        """What the decoder still holds at the end of the stream."""
        return "" if self._decoder is None else self._decoder.decode(b"", final=True)


def usage_from_metadata(metadata: Any) -> Any:
    """The usage carried by a ``(content, metadata)`` item's metadata, if any.

    Accepts a mapping with ``"usage"``, an object with ``usage``, or an object with
    ``input_tokens_count`` / ``generated_tokens_count``.
    """
    if metadata is None:
        return None
    if isinstance(metadata, Mapping):
        return metadata.get("usage")
    usage = getattr(metadata, "usage", None)
    if usage is not None:
        return usage
    if hasattr(metadata, "input_tokens_count") or hasattr(metadata, "generated_tokens_count"):
        return {
            "input_tokens": getattr(metadata, "input_tokens_count", None),
            "output_tokens": getattr(metadata, "generated_tokens_count", None),
        }
    return None


def drive(parser: _Parser, stream: Iterable[StreamItem]) -> Iterator[ParseEvent]:
    """Feed every item of ``stream`` to ``parser``, then close it; yield the events."""
    decoder = Utf8Decoder()
    for item in stream:
        yield from parser.feed_item(decoder.text(item))
    yield from parser.feed_item(decoder.flush())
    yield from parser.close()


async def drive_async(
    parser: _Parser, stream: AsyncIterable[StreamItem] | Iterable[StreamItem]
) -> AsyncIterator[ParseEvent]:
    """The async twin of :func:`drive`; ``stream`` may be async or sync.

    Raises:
        TypeError: ``stream`` is neither an async nor a sync iterable (raised when the
            first event is asked for), or an item is of no accepted kind.
    """
    decoder = Utf8Decoder()
    if isinstance(stream, AsyncIterable):
        async for item in stream:
            for event in parser.feed_item(decoder.text(item)):
                yield event
    elif isinstance(stream, Iterable):
        for item in stream:
            for event in parser.feed_item(decoder.text(item)):
                yield event
    else:
        raise TypeError(
            f"aparse_stream() takes an async or a sync iterable, not {type(stream).__name__}"
        )
    for event in parser.feed_item(decoder.flush()):
        yield event
    for event in parser.close():
        yield event
