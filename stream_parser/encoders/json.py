r"""Every event kind to a JSON object and back.

The JSON form of an event is the core's (:meth:`~stream_parser.core.events.Event.
model_dump_json`, described in :mod:`stream_parser.core._event_json`): an object with
one member per field, ``kind`` included (the discriminator :func:`event_from_json` reads
it back by), written on one line without spaces; a tool call's ``tool_instance`` becomes
its fields and comes back as a plain ``dict``; a
:class:`~stream_parser.tools.ToolResult` becomes its compared fields (the tool's
``value`` and ``exception`` come back as None); a value that cannot be written becomes
its ``repr``, one nested too deep a placeholder; a lone surrogate an escape.

An event of an agent run may carry one more member, ``step``: the step of the latest
:class:`~stream_parser.agent.StepStartEvent` (the JSON-lines and SSE encoders write it
on every event after the first one).  :func:`event_from_json` reads an object with or
without it; the event it gives back is the parser's or the agent's own, without it.

So :func:`event_to_json` never raises for an event, ``event_to_json(event_from_json(s))
== s`` for every ``s`` it produced without a ``step``, and an event read back equals
the original but for the tool instance (a ``dict``), a result's ``value`` and
``exception``, values cut by a placeholder, and text normalised as above.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Final, TypeAlias, get_args

from pydantic import ValidationError

from ..agent.events import (
    AgentDoneEvent,
    RequestDoneEvent,
    StepStartEvent,
    ToolResultEvent,
)
from ..core.events import (
    CodeBlockDeltaEvent,
    CodeBlockEvent,
    Event,
    FramingEvent,
    NoticeEvent,
    ParseErrorEvent,
    TagDeltaEvent,
    TextOutputEvent,
    ThinkingDeltaEvent,
    ThinkingEvent,
    TokenUsageEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolParamDeltaEvent,
)

__all__ = ["AnyEvent", "EVENT_TYPES", "event_from_json", "event_to_json"]

AnyEvent: TypeAlias = (
    TextOutputEvent
    | ThinkingDeltaEvent
    | ThinkingEvent
    | ToolCallStartEvent
    | ToolParamDeltaEvent
    | ToolArgumentsDeltaEvent
    | ToolCallEvent
    | ParseErrorEvent
    | TokenUsageEvent
    | NoticeEvent
    | CodeBlockDeltaEvent
    | CodeBlockEvent
    | FramingEvent
    | TagDeltaEvent
    | StepStartEvent
    | RequestDoneEvent
    | ToolResultEvent
    | AgentDoneEvent
)
"""Union of every event kind of the library: the parser's and the agent's.

Narrow it by ``kind`` (each class has its own ``Literal``) or with ``isinstance``.  For
the parse events alone, :data:`stream_parser.core.events.AnyParseEvent` is a
Pydantic-ready discriminated union.
"""


def _kind_of(cls: type[Event]) -> str:
    kind = next(f for f in dataclasses.fields(cls) if f.name == "kind")  # type: ignore[arg-type]
    return str(kind.default)


EVENT_TYPES: Final[Mapping[str, type[Event]]] = {_kind_of(cls): cls for cls in get_args(AnyEvent)}
"""Each ``kind`` -> its event class, for every event kind of the library."""

# How much of a text that is not an event its error message quotes.
_EXCERPT: Final = 60


def event_to_json(event: Event, *, step: int | None = None) -> str:
    """Write an event as a one-line JSON object (see the module docstring for the form).

    Args:
        event: any event of the library (parse or agent event).
        step: the agent step the event belongs to, written as a last ``step`` member
            (the encoders of a stream pass the step of the latest
            :class:`~stream_parser.agent.StepStartEvent`).  None, or an event with a
            ``step`` field of its own, writes no extra member.

    Returns:
        The JSON text.  It never raises for an event, whatever text or values it holds.

    Raises:
        TypeError: ``event`` is not an event (a programmer error).

    Example:
        >>> from stream_parser import TextOutputEvent
        >>> event_to_json(TextOutputEvent(text="hi", span=(0, 2)))
        '{"text":"hi","span":[0,2],"kind":"text"}'
        >>> event_to_json(TextOutputEvent(text="hi", span=(0, 2)), step=2)
        '{"text":"hi","span":[0,2],"kind":"text","step":2}'
    """
    if not isinstance(event, Event) or not dataclasses.is_dataclass(event):
        raise TypeError(f"not an event: {event!r}")
    text = event.model_dump_json()
    if step is None or "step" in event.__dataclass_fields__:
        return text
    # The object's last member: what writing it with the others would give (the text of
    # an object always ends with its closing brace).
    return f"{text[:-1]},{json.dumps('step')}:{json.dumps(step)}}}"


def event_from_json(data: str | bytes) -> AnyEvent:
    """Read an event back from :func:`event_to_json`'s output.

    Args:
        data: one JSON object, as text or UTF-8 bytes.

    Returns:
        The event, of the class its ``kind`` names (a tool call's ``tool_instance`` is a
        ``dict``).

    Raises:
        ValueError: not JSON, nested too deep to read, or not an event of a known
            ``kind`` with valid fields (Pydantic's ``ValidationError`` is a
            ``ValueError``).  The message quotes the start of ``data``, whatever its
            shape or size.
    """
    try:
        return _read_event(data)
    except RecursionError:
        # Python's JSON reader, a repr or a validator reached the recursion limit: the
        # text nests deeper than Python can read, which says nothing about the caller.
        raise ValueError(f"not an event: nested too deep to read: {_excerpt(data)}") from None


def _read_event(data: str | bytes) -> AnyEvent:
    try:
        obj = json.loads(data)
    except json.JSONDecodeError as exc:
        raise json.JSONDecodeError(
            f"not an event: not JSON, {_excerpt(data)}: {exc.msg}", exc.doc, exc.pos
        ) from None
    kind = obj.get("kind") if isinstance(obj, dict) else None
    if not isinstance(kind, str):
        raise ValueError(f"not an event: expected an object with a 'kind', got {_excerpt(data)}")
    cls = EVENT_TYPES.get(kind)
    if cls is None:
        raise ValueError(f"not an event: unknown kind {kind!r:.80} in {_excerpt(data)}")
    try:
        return cls.model_validate(obj)  # type: ignore[return-value]
    except ValidationError:
        raise
    except ValueError:  # a shape the event's own reader refuses (an agent_done)
        raise ValueError(f"not a valid {kind} event: {_excerpt(data)}") from None


def _excerpt(data: str | bytes) -> str:
    """The start of a text that is not an event, for its error message.

    Cut before ``repr``: the text may be megabytes long, and its parsed value may nest too
    deep for ``repr`` to write.
    """
    if len(data) <= _EXCERPT:
        return repr(data)
    unit = "bytes" if isinstance(data, bytes) else "characters"
    return f"{data[:_EXCERPT]!r}... ({len(data)} {unit})"
