r"""A stream of events as JSON lines, and back.

Each event is one line: :func:`~stream_parser.encoders.event_to_json`'s object and a
``\n``.  In an agent run's stream, each event after a
:class:`~stream_parser.agent.StepStartEvent` carries that step as a ``step`` member (the
step's own events have it as a field): a reader of the lines needs no state of its own
to know it.  The decoder reads lines with or without it.  The object never holds a
raw line break (JSON escapes them inside strings), so a reader may cut the text at
every ``\n`` and read each piece on its own.

:func:`encode_json_lines` and :func:`decode_json_lines` take a plain iterable or an async
one and give back the same kind: the same code serves a script, a file, or a web
response.  The decoder reads text cut anywhere (``str`` or UTF-8 ``bytes``), ends of
line ``\n`` or ``\r\n``, and skips blank lines.

Example:
    >>> from stream_parser import StepStartEvent, TextOutputEvent
    >>> events = [StepStartEvent(step=1), TextOutputEvent(text="hi", span=(0, 2))]
    >>> text = "".join(encode_json_lines(events))
    >>> print(text, end="")
    {"step":1,"span":null,"kind":"step_start"}
    {"text":"hi","span":[0,2],"kind":"text","step":1}
    >>> list(decode_json_lines([text[:30], text[30:]])) == events
    True
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import overload

from ..agent.events import StepStartEvent
from ..core.events import Event
from ._text import LineSplitter
from .json import AnyEvent, event_from_json, event_to_json

__all__ = ["decode_json_lines", "encode_json_lines"]


@overload
def encode_json_lines(events: AsyncIterable[Event]) -> AsyncIterator[str]: ...
@overload
def encode_json_lines(events: Iterable[Event]) -> Iterator[str]: ...
def encode_json_lines(
    events: Iterable[Event] | AsyncIterable[Event],
) -> Iterator[str] | AsyncIterator[str]:
    r"""Each event as one line of JSON, ``\n`` included.

    Args:
        events: any events of the library (a parser's, an agent run...), as a plain or
            an async iterable.

    Returns:
        The lines, as an iterator of the same kind as ``events``.  Writing them never
        raises, whatever text the events hold.  Every event after a
        :class:`~stream_parser.agent.StepStartEvent` is written with its ``step``.
    """
    if isinstance(events, AsyncIterable):
        return _encode_async(events)
    return _encode(events)


def _encode(events: Iterable[Event]) -> Iterator[str]:
    step = None
    for event in events:
        if isinstance(event, StepStartEvent):
            step = event.step
        yield event_to_json(event, step=step) + "\n"


async def _encode_async(events: AsyncIterable[Event]) -> AsyncIterator[str]:
    step = None
    async for event in events:
        if isinstance(event, StepStartEvent):
            step = event.step
        yield event_to_json(event, step=step) + "\n"


@overload
def decode_json_lines(text: AsyncIterable[str | bytes]) -> AsyncIterator[AnyEvent]: ...
@overload
def decode_json_lines(text: Iterable[str | bytes]) -> Iterator[AnyEvent]: ...
def decode_json_lines(
    text: Iterable[str | bytes] | AsyncIterable[str | bytes],
) -> Iterator[AnyEvent] | AsyncIterator[AnyEvent]:
    """Read events back from JSON lines.

    Args:
        text: the text in pieces cut anywhere (lines, chunks of a response, a file
            opened in text or binary mode), ``str`` or UTF-8 ``bytes``, as a plain or an
            async iterable.

    Returns:
        The events, as an iterator of the same kind as ``text``, each as soon as its line
        is complete.

    Raises:
        ValueError: while iterating, a line that is not an event, or bytes that are not
            UTF-8.
    """
    if isinstance(text, AsyncIterable):
        return _decode_async(text)
    return _decode(text)


def _decode(text: Iterable[str | bytes]) -> Iterator[AnyEvent]:
    lines = LineSplitter(carriage_return=False)
    for piece in text:
        yield from _events(lines.feed(piece))
    yield from _events(lines.close())


async def _decode_async(text: AsyncIterable[str | bytes]) -> AsyncIterator[AnyEvent]:
    lines = LineSplitter(carriage_return=False)
    async for piece in text:
        for event in _events(lines.feed(piece)):
            yield event
    for event in _events(lines.close()):
        yield event


def _events(lines: list[str]) -> Iterator[AnyEvent]:
    for line in lines:
        if line.strip():
            yield event_from_json(line)
