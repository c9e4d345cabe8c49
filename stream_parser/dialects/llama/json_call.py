r"""Llama's bare JSON call: one object, its end found by a scanner, read by the hermes reader.

:class:`_Object` is one ``{"name": ..., "parameters": ...}`` of a reply: the kit's
``JsonScanner`` says where in a piece it ends, and a
:class:`~stream_parser.dialects.hermes.HermesReader` reads it; its events are held
until the object proves a call (a name and an arguments key).
"""

from __future__ import annotations

import dataclasses

from ...core.events import ParseEvent
from ...core.kit import JsonScanner
from ...errors import InternalError
from ..hermes import HermesReader


class _Object:
    """One JSON object of a block: a scanner finds its end, a hermes reader reads it."""

    __slots__ = ("held", "reader", "scanner", "start")

    def __init__(self, reader: HermesReader, start: int) -> None:
        self.reader = reader
        # The reader has a scanner of its own, but it cannot say where in a piece the
        # object ended; this one is fed the same text and reports it.
        self.scanner = JsonScanner(keep_text=False)
        self.start = start
        self.held: list[ParseEvent] = []  # events held until the object is a call

    def caught_up(self) -> JsonScanner:
        """The scanner, once it has taken the chunks of the fast path.

        The reader's fast-path function skipped them with the reader's scanner; this
        one, fed the same text from the same start, never saw them and follows it.
        """
        scanner = self.scanner
        if not scanner.follow(self.reader.scanner):
            raise InternalError("the object's scanners disagree about the fast path")
        return scanner

    @property
    def call_shaped(self) -> bool:
        """It has shown a name and an arguments key: it is a call, not an answer."""
        return self.reader.is_call_shaped

    @property
    def name(self) -> str | None:
        return self.reader.name


def _indexed(event: ParseEvent, index: int) -> ParseEvent:
    """A held event with the call index reserved when the object proved a call."""
    if hasattr(event, "call_index"):
        return dataclasses.replace(event, call_index=index)  # type: ignore[type-var]
    return event  # pragma: no cover - the reader holds only call events
