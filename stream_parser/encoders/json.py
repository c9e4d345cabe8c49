r"""Every event kind to a JSON object and back.

The JSON form of an event is an object with one member per field, ``kind`` included
(the discriminator :func:`event_from_json` reads it back by), written on one line
without spaces:

* a tool call's ``tool_instance`` (a Pydantic model) becomes its fields, and comes back
  as a plain ``dict``;
* a :class:`~stream_parser.tools.ToolResult` becomes its compared fields (``text``,
  ``images``, ``is_error``...); the tool's ``value`` and ``exception`` are Python
  objects, not part of the record, and come back as None;
* a parse event's ``span`` is a two-number list; an agent event's is ``null``;
* any other value is written as Pydantic writes it in JSON mode; a float that is not
  finite becomes ``null``, and a value that cannot be written at all becomes its
  ``repr``: the encoder never raises for an event, whatever it holds;
* a value that holds itself, or nests deeper than the JSON's 100th level (the event's
  object is the first), is written up to there, and a placeholder stands for the rest,
  as Python's ``repr`` writes it: ``"{...}"`` for a dict, ``"[...]"`` for a list or a
  tuple, ``"Name(...)"`` for a dataclass;
* text is written verbatim (UTF-8), except for a lone surrogate, which JSON can only
  hold as a ``\uXXXX`` escape, and a surrogate pair held as two code units, which is
  written as the one character it stands for.

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
import re
from collections.abc import Mapping
from typing import Any, Final, TypeAlias, get_args

from pydantic import ConfigDict, TypeAdapter
from pydantic_core import to_jsonable_python

from ..agent.events import (
    AgentDoneEvent,
    RequestDoneEvent,
    StepStartEvent,
    StopReason,
    ToolResultEvent,
)
from ..agent.usage import LimitHit
from ..core.events import (
    AnyParseEvent,
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

# The parse events validate through the core's discriminated union.  The agent's step
# and result events through a union of their own: ToolResult holds the tool's exception,
# a Python object that Pydantic only accepts with ``arbitrary_types_allowed`` (it is
# never in the JSON, so it comes back as its default, None).
_PARSE: Final[TypeAdapter[Any]] = TypeAdapter(AnyParseEvent)
_PARSE_KINDS: Final = frozenset(_kind_of(cls) for cls in get_args(get_args(AnyParseEvent)[0]))
_AGENT: Final[TypeAdapter[Any]] = TypeAdapter(
    StepStartEvent | RequestDoneEvent | ToolResultEvent,
    config=ConfigDict(arbitrary_types_allowed=True),
)
_LIMIT: Final[TypeAdapter[LimitHit]] = TypeAdapter(LimitHit)
# AgentDoneEvent's messages are the OpenAI chat format's TypedDicts, which Pydantic cannot
# validate on every supported Python: they are checked as JSON objects instead.
_MESSAGES: Final[TypeAdapter[list[dict[str, Any]]]] = TypeAdapter(list[dict[str, Any]])
_REASONS: Final = frozenset(get_args(StopReason))

_SURROGATE: Final = re.compile("[\ud800-\udfff]")

# How deep an event's JSON nests at most, its own object the first level: deeper values are
# written as a placeholder.  Far beyond real data, and far below Python's recursion limit
# (1000 by default), which writing and reading the text back both stay under.
_MAX_LEVELS: Final = 100
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
    obj = _jsonable(event, 1, set())
    if step is not None and isinstance(obj, dict) and "step" not in obj:
        obj["step"] = step
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    if _SURROGATE.search(text) is None:
        return text
    # Surrogate code units only occur inside JSON strings.  A pair becomes the character
    # it stands for (what any JSON reader makes of it), and a lone one an escape: JSON
    # text cannot hold it raw, and a reader gives the lone code unit back.
    text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


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
    if kind in _PARSE_KINDS:
        return _PARSE.validate_python(obj)  # type: ignore[no-any-return]
    if kind in ("step_start", "request_done", "tool_result"):
        return _AGENT.validate_python(obj)  # type: ignore[no-any-return]
    if kind == "agent_done":
        return _agent_done(obj, data)
    raise ValueError(f"not an event: unknown kind {kind!r:.80} in {_excerpt(data)}")


def _agent_done(obj: dict[str, Any], data: str | bytes) -> AgentDoneEvent:
    reason: Any = obj.get("reason")
    output, steps = obj.get("output"), obj.get("steps")
    if (
        reason not in _REASONS
        or not isinstance(output, str)
        or not isinstance(steps, int)
        or isinstance(steps, bool)
        or obj.get("span") is not None
    ):
        raise ValueError(f"not a valid agent_done event: {_excerpt(data)}")
    messages: Any = _MESSAGES.validate_python(obj.get("messages"))
    limit = obj.get("limit")
    return AgentDoneEvent(
        reason=reason,
        messages=messages,
        output=output,
        steps=steps,
        limit=None if limit is None else _LIMIT.validate_python(limit),
    )


def _excerpt(data: str | bytes) -> str:
    """The start of a text that is not an event, for its error message.

    Cut before ``repr``: the text may be megabytes long, and its parsed value may nest too
    deep for ``repr`` to write.
    """
    if len(data) <= _EXCERPT:
        return repr(data)
    unit = "bytes" if isinstance(data, bytes) else "characters"
    return f"{data[:_EXCERPT]!r}... ({len(data)} {unit})"


# --- to JSON-able data --------------------------------------------------------------------


def _jsonable(value: Any, level: int, path: set[int]) -> Any:
    """``value`` as JSON-able data: dicts with str keys, lists, str, int, float, bool, None.

    Events and other dataclasses (such as a ToolResult) give their compared fields: the
    ones left out of comparison are Python objects kept beside the value, not part of it.

    Args:
        value: the value to write.
        level: how many containers deep ``value`` sits in the JSON text (the event's own
            object is at level 1).
        path: the ``id`` of each container being written around ``value``: one met again
            holds itself.
    """
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        return value if value - value == 0 else None  # inf and nan: not JSON
    # A cycle would never end, and a value nested deep enough would reach Python's
    # recursion limit (here or in json.dumps): both end in a placeholder, as Python's repr
    # writes them.  A tuple stays out of the path: it can only hold itself through a
    # mutable value, which is in it.  Loops, not comprehensions, keep one Python frame per
    # level on every supported Python.
    if isinstance(value, dict):
        if level > _MAX_LEVELS or id(value) in path:
            return "{...}"
        path.add(id(value))
        written: dict[str, Any] = {}
        for key, item in value.items():
            written[_key(key)] = _jsonable(item, level + 1, path)
        path.discard(id(value))
        return written
    if isinstance(value, tuple):
        if level > _MAX_LEVELS:
            return "[...]"
        items: list[Any] = []
        for item in value:
            items.append(_jsonable(item, level + 1, path))
        return items
    if isinstance(value, list):
        if level > _MAX_LEVELS or id(value) in path:
            return "[...]"
        path.add(id(value))
        items = []
        for item in value:
            items.append(_jsonable(item, level + 1, path))
        path.discard(id(value))
        return items
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # Even a frozen dataclass can be made to hold itself (object.__setattr__).
        if level > _MAX_LEVELS or id(value) in path:
            return f"{type(value).__name__}(...)"
        path.add(id(value))
        fields: dict[str, Any] = {}
        for field in dataclasses.fields(value):
            if field.compare:
                fields[field.name] = _jsonable(getattr(value, field.name), level + 1, path)
        path.discard(id(value))
        return fields
    try:
        converted = to_jsonable_python(value, fallback=_unwritable)
    except Exception:  # a value Pydantic cannot write (a broken model, bad bytes...)
        return _unwritable(value)
    return _jsonable(converted, level, path)


def _key(key: Any) -> str:
    """A dict key as JSON writes it: keys are strings there."""
    if isinstance(key, str):
        return key
    if isinstance(key, float) and key - key != 0:
        return "null"  # inf and nan: not JSON, written as a value would be
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(key)
    return _unwritable(key)


def _unwritable(value: Any) -> str:
    """What stands for a value that has no JSON form: its repr."""
    try:
        return repr(value)
    except Exception:  # a broken __repr__: still never raise
        return f"<{type(value).__name__}>"
