r"""A stream of events as Server-Sent Events, and back.

Each event is one SSE frame: an ``event:`` line naming its ``kind``, an optional ``id:``
line, a ``data:`` line holding :func:`~stream_parser.encoders.event_to_json`'s object,
and a blank line::

    event: text
    data: {"text":"hi","span":[0,2],"kind":"text"}

In an agent run's stream, each event after a
:class:`~stream_parser.agent.StepStartEvent` carries that step as a last ``step`` member
of its data (``{"text":"hi","span":[0,2],"kind":"text","step":1}``); the decoder reads
data with or without it.

The JSON object never holds a raw line break, so one ``data:`` line always suffices.  A
browser's ``EventSource`` dispatches each frame under its ``kind``
(``source.addEventListener("tool_call", ...)``).

:func:`encode_sse` takes a plain or an async iterable of events and gives back the same
kind.  Over an async iterable it can send a comment (``: keep-alive``) whenever no event
came for a while, so that proxies keep an idle connection open while a tool runs.
:func:`decode_sse` (and :class:`SSEDecoder`, fed by hand) reads SSE text cut anywhere,
with ``\n``, ``\r\n`` or ``\r`` ends of line, as the SSE standard reads it: comments and
unknown fields are skipped, and a frame without data dispatches nothing.

Example:
    >>> from stream_parser import StepStartEvent
    >>> frames = list(encode_sse([StepStartEvent(step=1)], ids=True))
    >>> print(frames[0], end="")
    event: step_start
    id: 1
    data: {"step":1,"span":null,"kind":"step_start"}
    <BLANKLINE>
    >>> list(decode_sse(["event: step_st", frames[0][14:]]))
    [StepStartEvent(step=1, span=None, kind='step_start')]
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import Final, overload

from ..agent.events import StepStartEvent
from ..core.events import Event
from ..errors import ConfigError
from ._text import LineSplitter
from .json import AnyEvent, event_from_json, event_to_json

__all__ = ["KEEP_ALIVE", "SSEDecoder", "decode_sse", "encode_sse", "event_to_sse"]

KEEP_ALIVE: Final = ": keep-alive\n\n"
"""The comment :func:`encode_sse` sends while no event comes; SSE readers ignore it."""


def event_to_sse(event: Event, *, id: str | None = None, step: int | None = None) -> str:
    """One event as one SSE frame, blank line included.

    Args:
        event: any event of the library.
        id: the frame's ``id:`` (a browser sends the last one back as
            ``Last-Event-ID`` when it reconnects), or None for none.
        step: the agent step the event belongs to, written in its data (see
            :func:`~stream_parser.encoders.event_to_json`).

    Returns:
        The frame.  It never raises for an event, whatever text it holds.

    Raises:
        ValueError: ``id`` holds a line break or a NUL (it could not be read back).
        TypeError: ``event`` is not an event.
    """
    data = event_to_json(event, step=step)
    if id is None:
        return f"event: {event.kind}\ndata: {data}\n\n"
    if "\n" in id or "\r" in id or "\0" in id:
        raise ValueError(f"an SSE id cannot hold a line break or NUL: {id!r}")
    return f"event: {event.kind}\nid: {id}\ndata: {data}\n\n"


@overload
def encode_sse(
    events: AsyncIterable[Event], *, ids: bool = False, keep_alive: float | None = None
) -> AsyncIterator[str]: ...
@overload
def encode_sse(
    events: Iterable[Event], *, ids: bool = False, keep_alive: None = None
) -> Iterator[str]: ...
def encode_sse(
    events: Iterable[Event] | AsyncIterable[Event],
    *,
    ids: bool = False,
    keep_alive: float | None = None,
) -> Iterator[str] | AsyncIterator[str]:
    """Each event as an SSE frame (see :func:`event_to_sse`).

    Args:
        events: any events of the library, as a plain or an async iterable.
        ids: number the frames ``id: 1``, ``id: 2``... (in the order sent).
        keep_alive: over an async iterable, send :data:`KEEP_ALIVE` after each this
            many seconds without an event; None sends none.

    Returns:
        The frames, as an iterator of the same kind as ``events``.  Closing the async
        iterator early closes ``events`` too, when it can be closed.  Every event after
        a :class:`~stream_parser.agent.StepStartEvent` is written with its ``step``.

    Raises:
        ConfigError: ``keep_alive`` is not a positive number, or is given with a plain
            iterable (which cannot be waited on).
    """
    if keep_alive is not None and (
        isinstance(keep_alive, bool)
        or not isinstance(keep_alive, (int, float))
        or not keep_alive > 0
        or keep_alive == float("inf")
    ):
        raise ConfigError(f"keep_alive must be a positive number of seconds, got {keep_alive!r}")
    if isinstance(events, AsyncIterable):
        if keep_alive is None:
            return _encode_async(events, ids)
        return _encode_keeping_alive(events, ids, float(keep_alive))
    if keep_alive is not None:
        raise ConfigError("keep_alive needs an async iterable of events")
    return _encode(events, ids)


def _encode(events: Iterable[Event], ids: bool) -> Iterator[str]:
    step = None
    for number, event in enumerate(events, 1):
        if isinstance(event, StepStartEvent):
            step = event.step
        yield event_to_sse(event, id=str(number) if ids else None, step=step)


async def _encode_async(events: AsyncIterable[Event], ids: bool) -> AsyncIterator[str]:
    iterator = aiter(events)
    try:
        number = 0
        step = None
        async for event in iterator:
            number += 1
            if isinstance(event, StepStartEvent):
                step = event.step
            yield event_to_sse(event, id=str(number) if ids else None, step=step)
    finally:
        await _close(iterator)


async def _encode_keeping_alive(
    events: AsyncIterable[Event], ids: bool, seconds: float
) -> AsyncIterator[str]:
    iterator = aiter(events)
    number = 0
    step = None
    # The next event is awaited in a task of its own, kept across the keep-alives: a
    # timeout must not cancel the source mid-step (an agent would end its run).
    pending: asyncio.Future[Event] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(iterator))
            done, _ = await asyncio.wait({pending}, timeout=seconds)
            if not done:
                yield KEEP_ALIVE
                continue
            try:
                event = pending.result()
            except StopAsyncIteration:
                pending = None
                return
            pending = None
            number += 1
            if isinstance(event, StepStartEvent):
                step = event.step
            yield event_to_sse(event, id=str(number) if ids else None, step=step)
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
        await _close(iterator)


async def _close(iterator: AsyncIterator[Event]) -> None:
    """Close the source when the frames stop early (a browser went away, say)."""
    aclose = getattr(iterator, "aclose", None)
    if aclose is not None:
        await aclose()


class SSEDecoder:
    r"""Reads SSE text fed in pieces, cut anywhere, and gives back the events.

    Example:
        >>> decoder = SSEDecoder()
        >>> decoder.feed('event: step_start\r\ndata: {"step":2,"span":null,')
        []
        >>> decoder.feed('"kind":"step_start"}\r\n\r\n')
        [StepStartEvent(step=2, span=None, kind='step_start')]
        >>> decoder.last_id is None
        True
    """

    def __init__(self) -> None:
        self._lines = LineSplitter(carriage_return=True)
        self._started = False
        self._event = ""
        self._data: list[str] = []
        self.last_id: str | None = None
        """The last ``id:`` read (what a browser would send back as ``Last-Event-ID``)."""

    def feed(self, text: str | bytes) -> list[AnyEvent]:
        """Add a piece of SSE text (``str`` or UTF-8 ``bytes``); return the events it ends.

        Raises:
            ValueError: a frame whose data is not an event, or whose ``event:`` names
                another kind than its data; bytes that are not UTF-8.
        """
        return self._read(self._lines.feed(text))

    def close(self) -> list[AnyEvent]:
        """End of the text.  A frame not ended by a blank line is dropped, as SSE says.

        Raises:
            ValueError: as :meth:`feed`; bytes that end inside a UTF-8 sequence.
        """
        found = self._read(self._lines.close())
        self._event, self._data = "", []
        return found

    def _read(self, lines: list[str]) -> list[AnyEvent]:
        found: list[AnyEvent] = []
        for line in lines:
            if not self._started:
                self._started = True
                line = line.removeprefix("\ufeff")  # a byte-order mark may open the stream
            if not line:
                event = self._dispatch()
                if event is not None:
                    found.append(event)
                continue
            if line[0] == ":":
                continue  # a comment (a keep-alive)
            name, colon, value = line.partition(":")
            if colon and value.startswith(" "):
                value = value[1:]
            if name == "event":
                self._event = value
            elif name == "data":
                self._data.append(value)
            elif name == "id" and "\0" not in value:
                self.last_id = value
            # "retry" and unknown fields: nothing to do for events.
        return found

    def _dispatch(self) -> AnyEvent | None:
        data, kind = self._data, self._event
        self._data, self._event = [], ""
        if not data:
            return None
        event = event_from_json("\n".join(data))
        if kind and kind != event.kind:
            raise ValueError(f"an SSE frame named {kind!r:.40} holds a {event.kind!r} event")
        return event


@overload
def decode_sse(text: AsyncIterable[str | bytes]) -> AsyncIterator[AnyEvent]: ...
@overload
def decode_sse(text: Iterable[str | bytes]) -> Iterator[AnyEvent]: ...
def decode_sse(
    text: Iterable[str | bytes] | AsyncIterable[str | bytes],
) -> Iterator[AnyEvent] | AsyncIterator[AnyEvent]:
    """Read events back from SSE text.

    Args:
        text: the text in pieces cut anywhere (chunks of a response body), ``str`` or
            UTF-8 ``bytes``, as a plain or an async iterable.

    Returns:
        The events, as an iterator of the same kind as ``text``, each as soon as its
        frame is complete.

    Raises:
        ValueError: while iterating, as :meth:`SSEDecoder.feed`.
    """
    if isinstance(text, AsyncIterable):
        return _decode_async(text)
    return _decode(text)


def _decode(text: Iterable[str | bytes]) -> Iterator[AnyEvent]:
    decoder = SSEDecoder()
    for piece in text:
        yield from decoder.feed(piece)
    yield from decoder.close()


async def _decode_async(text: AsyncIterable[str | bytes]) -> AsyncIterator[AnyEvent]:
    decoder = SSEDecoder()
    async for piece in text:
        for event in decoder.feed(piece):
            yield event
    for event in decoder.close():
        yield event
