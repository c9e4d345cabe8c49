r"""The event vocabulary: everything the parser tells its caller.

Every event of the library is an immutable, slotted dataclass derived from
:class:`Event`, with a ``kind`` discriminator unique to its class.  The parser's events
derive from :class:`ParseEvent` and have a ``span = (start, end)``: character offsets in
the text stream the parser was fed.  (The layers above add their own events on the same
base, such as the agent's ``StepStartEvent``; those are not in the text and their
``span`` is None.)

The parse events come in two families:

* **Block events** (``TILES = True``): :class:`TextOutputEvent`, :class:`ThinkingEvent`,
  :class:`ToolCallEvent` (for calls written in the text), :class:`FramingEvent` (markup
  of a chat format that is neither text nor content) and plugin blocks such as
  :class:`CodeBlockEvent`.  Their spans tile the input: sorted, contiguous, covering it
  exactly, so joining the raw text of their spans gives the input back (losslessness).
  Text is itself streamed: a run of text comes as several adjacent ``TextOutputEvent``\\ s.
* **Side events** (``TILES = False``): deltas that let a UI show an open block live
  (:class:`ThinkingDeltaEvent`, :class:`ToolCallStartEvent`, :class:`ToolParamDeltaEvent`,
  :class:`ToolArgumentsDeltaEvent`, :class:`CodeBlockDeltaEvent`, :class:`TagDeltaEvent`),
  errors
  (:class:`ParseErrorEvent`), usage (:class:`TokenUsageEvent`) and notices
  (:class:`NoticeEvent`).  Their spans point into the input but are outside the tiling.

Events that come from a side channel rather than the text (reasoning deltas and native
tool calls streamed by a provider, usage reports) have zero-width spans at the text
offset where they arrived.

The parser builds its hot-path events with :func:`_fast_text` and friends, which skip the
dataclass ``__init__`` (h11's ``_parsed=True`` idea); hand-built events go through the
normal constructor.  :data:`AnyParseEvent` is the union of the parse events.  Every
event's JSON form (``model_dump``, ``model_dump_json``, ``model_validate``) is in
:mod:`~stream_parser.core._event_json`; :mod:`stream_parser.encoders` writes streams of
events with it.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal, TypeVar, cast

from pydantic import Discriminator

from . import _event_json

__all__ = [
    "AnyParseEvent",
    "CodeBlockDeltaEvent",
    "CodeBlockEvent",
    "ErrorType",
    "Event",
    "FramingEvent",
    "NoticeEvent",
    "ParseErrorEvent",
    "ParseEvent",
    "Span",
    "TagDeltaEvent",
    "TextOutputEvent",
    "ThinkingDeltaEvent",
    "ThinkingEvent",
    "TokenUsageEvent",
    "ToolArgumentsDeltaEvent",
    "ToolCallEvent",
    "ToolCallStartEvent",
    "ToolParamDeltaEvent",
    "shorten_context",
]

Span = tuple[int, int]
"""``(start, end)`` character offsets in the text stream, end exclusive."""


class ErrorType(str, enum.Enum):
    """Every ``error_type`` the library uses: one vocabulary for all dialects and layers.

    Parse errors (:class:`ParseErrorEvent`) come from the parser, whatever the dialect, and
    from native calls; tool errors (``ToolResult.error_type``) from running a tool; the
    agent's names say why a call was not run.  Arguments that cannot be *read* are
    ``malformed_tool``; arguments read but failing validation are ``invalid_params``; a
    call the stream ended is ``unclosed_tool``.  ``docs/errors.md`` has the table: when
    each is emitted, its ``details``, and what an agent tells the model.

    The ``error_type`` fields are plain ``str`` so that plugins can add values of their
    own; members compare equal to their strings (``ErrorType.UNCLOSED_TOOL ==
    "unclosed_tool"``).
    """

    # --- a call that cannot run ----------------------------------------------------------
    UNCLOSED_TOOL = "unclosed_tool"
    """The stream ended inside a tool call (any dialect, or a native call); never run."""
    MALFORMED_TOOL = "malformed_tool"
    """A call's arguments cannot be read (markup out of place, JSON that does not parse)."""
    INVALID_PARAMS = "invalid_params"
    """Arguments were read but failed validation; ``details`` holds Pydantic's errors."""
    UNKNOWN_TOOL = "unknown_tool"
    """A call names a tool that is not registered."""
    TOOL_TOO_LARGE = "tool_too_large"
    """A call grew past ``max_tool_size``; it is delivered as text and never run."""
    # --- a call that runs without part of what was written -------------------------------
    UNKNOWN_PARAM = "unknown_param"
    """A parameter that is not a field of the tool; it is dropped and the call stands."""
    DUPLICATE_PARAM = "duplicate_param"
    """A parameter given twice; the last value wins."""
    # --- other blocks --------------------------------------------------------------------
    UNCLOSED_THINKING = "unclosed_thinking"
    """The stream ended inside a thinking block; the ThinkingEvent follows."""
    THINKING_TOO_LARGE = "thinking_too_large"
    """A thinking block grew past ``max_thinking_size``; the rest streams, not kept."""
    UNCLOSED_BLOCK = "unclosed_block"
    """The stream ended inside a plugin's (non-call) block; its raw text follows."""
    BLOCK_TOO_LARGE = "block_too_large"
    """A plugin's (non-call) block grew past ``max_tool_size``; it continues as text."""
    # --- the reply as a whole ------------------------------------------------------------
    TRUNCATED = "truncated"
    """The reply was cut by the model's length limit (``finish_reason == "length"``)."""
    STREAM_ERROR = "stream_error"
    """The transport failed mid-reply; what arrived before was still delivered."""
    # --- running a tool ------------------------------------------------------------------
    TOOL_EXCEPTION = "tool_exception"
    """The tool raised; the result's text names the exception."""
    INVALID_RESULT = "invalid_result"
    """The tool's return value cannot be turned into text or content for the model."""
    TOOL_TIMEOUT = "tool_timeout"
    """The tool ran past its time limit and was cancelled."""
    CANCELLED = "cancelled"
    """The run was cancelled before the call finished."""
    TOOL_CALL_LIMIT = "tool_call_limit"
    """The run's limit on tool calls was reached; the call was not run."""
    DENIED = "denied"
    """The call needed approval and was not approved; it was not run."""

    def __str__(self) -> str:
        return self.value


_E = TypeVar("_E", bound="Event")


class Event:
    """Base class of every event of the library: the parser's and the layers' above.

    Every event has a JSON form (see :mod:`~stream_parser.core._event_json`):
    :meth:`model_dump` gives it as a ``dict``, :meth:`model_dump_json` as text, and
    :meth:`model_validate` (or :meth:`model_validate_json`) reads it back, by its
    ``kind``, as an event of the class that ``kind`` names.  Events are not Pydantic
    models (they are slotted dataclasses, cheaper to make), but these four methods are
    named and behave as a Pydantic model's do.

    Attributes:
        kind: discriminator, a snake_case string unique to each event class.
        span: ``(start, end)`` offsets into the text stream for a parse event; None for
            an event that is not about the text (an agent's step, a tool's result).

    Example:
        >>> event = TextOutputEvent(text="hi", span=(0, 2))
        >>> event.model_dump()
        {'text': 'hi', 'span': [0, 2], 'kind': 'text'}
        >>> ParseEvent.model_validate(event.model_dump()) == event
        True
        >>> ParseEvent.model_validate_json('{"text":"hi","span":[0,2],"kind":"text"}')
        TextOutputEvent(text='hi', span=(0, 2), kind='text')
    """

    __slots__ = ()
    TILES: ClassVar[bool] = False
    """True for block events, whose spans tile the input."""

    kind: str
    span: Span | None

    def model_dump(self) -> dict[str, Any]:
        """The event's JSON form as JSON-able data: a ``dict`` with one member per field.

        A tool call's ``tool_instance`` (a Pydantic model) becomes its fields, a span a
        two-number list; see :mod:`~stream_parser.core._event_json` for every rule.
        Never raises, whatever the event holds.
        """
        return _event_json.dump(self)

    def model_dump_json(self) -> str:
        """The event's JSON form as one line of text (what ``event_to_json`` writes)."""
        return _event_json.dump_json(self)

    @classmethod
    def model_validate(cls: type[_E], obj: object) -> _E:
        """Read an event from its JSON form (a ``dict``), as the class its ``kind`` names.

        On the base classes it reads any kind they cover (``ParseEvent.model_validate``
        any parse event, ``Event.model_validate`` any event whose module is loaded); on
        an event class, that class's kind (``kind`` may then be left out).  An event of
        the class is returned as it is.  A tool call's ``tool_instance`` comes back as a
        ``dict``.

        Raises:
            ValueError: not a ``dict``, an unknown ``kind``, a kind of another class, or
                invalid fields (Pydantic's ``ValidationError`` is a ``ValueError``).
        """
        if isinstance(obj, cls):
            return obj
        if not isinstance(obj, Mapping):
            raise ValueError(f"{cls.__name__}.model_validate expects a dict, got {obj!r:.80}")
        data = dict(obj)
        own = _own_kind(cls)
        kind = data.setdefault("kind", own) if own is not None else data.get("kind")
        target = _event_class(kind)
        if target is None:
            raise ValueError(f"not an event: unknown kind {kind!r:.80}")
        if not issubclass(target, cls):
            raise ValueError(f"a {kind!r} event is a {target.__name__}, not a {cls.__name__}")
        return cast(_E, target._from_json_object(data))

    @classmethod
    def model_validate_json(cls: type[_E], data: str | bytes) -> _E:
        """:meth:`model_validate` of a JSON text (``model_dump_json``'s output).

        Raises:
            ValueError: not JSON (``json.JSONDecodeError`` is a ``ValueError``), or as
                :meth:`model_validate`.
        """
        return cls.model_validate(json.loads(data))

    @classmethod
    def _from_json_object(cls, obj: dict[str, Any]) -> Event:
        """Validate ``obj`` (of this class's kind) into an event of this class.

        Pydantic validates the dataclass's fields (a validator per class, made on first
        use).  A class whose fields Pydantic cannot validate as they are overrides this.
        """
        adapter = _ADAPTERS.get(cls)
        if adapter is None:
            from pydantic import TypeAdapter

            adapter = _ADAPTERS[cls] = TypeAdapter(cls)
        return cast(Event, adapter.validate_python(obj))


_ADAPTERS: dict[type[Event], Any] = {}
"""Each event class's Pydantic validator, made on first use."""
_KINDS: dict[str, type[Event]] = {}
"""Each ``kind`` -> its event class, of the classes seen so far (see :func:`_event_class`)."""


def _own_kind(cls: type[Event]) -> str | None:
    """The ``kind`` of an event class (its field's default), None for a base class."""
    field = getattr(cls, "__dataclass_fields__", {}).get("kind")
    default = None if field is None else field.default
    return default if isinstance(default, str) else None


def _event_class(kind: object) -> type[Event] | None:
    """The event class of ``kind``, among the classes defined so far.

    Classes are visited breadth first from :class:`Event`, so a library class keeps its
    kind when a subclass (which inherits the ``kind``) is defined.  A class of the same
    name and module that comes later replaces the earlier one: a slotted dataclass is a
    new class that replaces the one its body defined, which lives on for a while.
    """
    if not isinstance(kind, str):
        return None
    found = _KINDS.get(kind)
    if found is None:
        queue: list[type[Event]] = [Event]
        while queue:
            cls = queue.pop(0)
            own = _own_kind(cls)
            if own is not None:
                known = _KINDS.get(own)
                if known is None or (
                    known.__qualname__ == cls.__qualname__ and known.__module__ == cls.__module__
                ):
                    _KINDS[own] = cls
            queue += cls.__subclasses__()
        found = _KINDS.get(kind)
    return found


class ParseEvent(Event):
    """Base class of the parser's events: every one has a span in the text stream.

    Attributes:
        kind: discriminator, a snake_case string unique to each event class.
        span: ``(start, end)`` offsets into the text stream.
    """

    __slots__ = ()

    span: Span


class _TextOutputSlots(ParseEvent):
    """The slots of :class:`TextOutputEvent` (it adds none), for its fast builder."""

    __slots__ = ("kind", "span", "text")


@dataclass(frozen=True, slots=True, kw_only=True)
class TextOutputEvent(_TextOutputSlots):
    """Plain text, verbatim (no trimming, no entity decoding).

    A run of text arrives as several adjacent events; concatenate their ``text``.
    """

    TILES: ClassVar[bool] = True
    text: str
    span: Span = (0, 0)
    kind: Literal["text"] = "text"


class _ThinkingDeltaSlots(ParseEvent):
    """The slots of :class:`ThinkingDeltaEvent` (it adds none), for its fast builder."""

    __slots__ = ("delta", "kind", "span")


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingDeltaEvent(_ThinkingDeltaSlots):
    """A piece of an open thinking block, as it arrives (outside the tiling).

    Attributes:
        delta: the new characters of the block (verbatim).
    """

    delta: str
    span: Span = (0, 0)
    kind: Literal["thinking_delta"] = "thinking_delta"


@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingEvent(ParseEvent):
    """A whole thinking block.  ``span`` covers its tags; ``content`` is verbatim.

    Attributes:
        content: the text between the tags (or the provider's reasoning text).
        closed: False when the stream ended before the end tag.
        truncated: True when the block grew past ``max_thinking_size``: ``content`` is
            its first ``max_thinking_size`` characters (the rest was streamed as
            deltas only); ``span`` still covers the whole block.
    """

    TILES: ClassVar[bool] = True
    content: str
    closed: bool = True
    truncated: bool = False
    span: Span = (0, 0)
    kind: Literal["thinking"] = "thinking"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStartEvent(ParseEvent):
    """A tool call has opened (its start tag, or a native call's first fragment).

    Attributes:
        tool_name: the tool being called.
        call_index: position of this call among the calls of the stream (0, 1, ...).
        call_id: the provider's call id for native calls, else None.
    """

    tool_name: str
    call_index: int = 0
    call_id: str | None = None
    span: Span = (0, 0)
    kind: Literal["tool_call_start"] = "tool_call_start"


class _ToolParamDeltaSlots(ParseEvent):
    """The slots of :class:`ToolParamDeltaEvent` (it adds none), for its fast builder."""

    __slots__ = ("call_index", "delta", "kind", "param", "span", "tool_name")


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolParamDeltaEvent(_ToolParamDeltaSlots):
    """Raw characters of one parameter of an open tool call, as they arrive.

    The deltas are verbatim (CDATA markers and surrounding newlines included); the
    final, converted value is in the :class:`ToolCallEvent`.
    """

    tool_name: str
    param: str
    delta: str
    call_index: int = 0
    span: Span = (0, 0)
    kind: Literal["tool_param_delta"] = "tool_param_delta"


class _ToolArgumentsDeltaSlots(ParseEvent):
    """The slots of :class:`ToolArgumentsDeltaEvent` (it adds none), for its fast builder."""

    __slots__ = ("call_id", "call_index", "delta", "kind", "span", "tool_name")


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolArgumentsDeltaEvent(_ToolArgumentsDeltaSlots):
    """A fragment of a JSON arguments string (native calls and JSON dialects)."""

    tool_name: str
    delta: str
    call_index: int = 0
    call_id: str | None = None
    span: Span = (0, 0)
    kind: Literal["tool_arguments_delta"] = "tool_arguments_delta"


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallEvent(ParseEvent):
    """A complete, validated tool call: safe to execute.

    Attributes:
        tool_name: the registered tool name.
        tool_instance: the validated Pydantic model instance of its arguments.
        raw: the raw text of the call as written: the markup of a call in the text,
            the JSON arguments string of a native call.
        call_index: position of this call among the calls of the stream.
        call_id: the provider's call id for native calls, else None.
    """

    TILES: ClassVar[bool] = True
    tool_name: str
    tool_instance: Any
    raw: str
    call_index: int = 0
    call_id: str | None = None
    span: Span = (0, 0)
    kind: Literal["tool_call"] = "tool_call"

    @property
    def raw_xml(self) -> str:
        """The same as :attr:`raw`, read-only: the call's raw text as written."""
        return self.raw


@dataclass(frozen=True, slots=True, kw_only=True)
class ParseErrorEvent(ParseEvent):
    """Something in the model output could not be parsed.

    Never fatal: the raw text involved is still delivered by the events around it.

    Attributes:
        error_type: a short snake_case code, see :class:`ErrorType`.
        message: a human- (and model-) readable explanation.
        context: the raw text involved (possibly shortened), if any.
        details: structured details, e.g. Pydantic's validation errors.
        tool_name: the tool whose call the error is about, when known.
        call_index: the tool call the error belongs to, when it belongs to one that was
            announced by a :class:`ToolCallStartEvent` with this index.
        call_id: the provider's id of that call (native calls), so that an agent can
            answer the failed call with a tool message.
    """

    error_type: str
    message: str
    context: str | None = None
    details: tuple[dict[str, Any], ...] = ()
    tool_name: str | None = None
    call_index: int | None = None
    call_id: str | None = None
    span: Span = (0, 0)
    kind: Literal["error"] = "error"


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenUsageEvent(ParseEvent):
    """Token usage reported by the model or carried in stream metadata."""

    usage_info: Any
    span: Span = (0, 0)
    kind: Literal["usage"] = "usage"


@dataclass(frozen=True, slots=True, kw_only=True)
class NoticeEvent(ParseEvent):
    """Something that looks wrong but is not an error: the library's one way to say so.

    A notice carries no raw text: its span is zero-width, ``(k, k)``, at the offset
    ``k`` of the reply where what it notes begins, so it covers no character (the
    tiling and losslessness are unchanged) and it is the same however the reply was
    cut.  Nothing is dropped or run differently because of it.

    Attributes:
        code: what it notes, a short snake_case string (like ``error_type``), e.g.
            ``"call_in_text"``: a reply with no native call wrote a call of a
            registered tool as text, while the tools were sent natively (the server
            probably ignored ``tools``).
        message: the same for a person, one or two sentences.
    """

    code: str
    message: str
    span: Span = (0, 0)
    kind: Literal["notice"] = "notice"


@dataclass(frozen=True, slots=True, kw_only=True)
class FramingEvent(ParseEvent):
    """Markup of a chat format that is neither text nor content, verbatim.

    Message headers and end markers (``<|start|>assistant<|channel|>final<|message|>``,
    ``<|end|>``) are read by a dialect's plugin and come as this event: they tile the
    input like any block (nothing is lost), but never appear in text events.
    """

    TILES: ClassVar[bool] = True
    text: str
    span: Span = (0, 0)
    kind: Literal["framing"] = "framing"


@dataclass(frozen=True, slots=True, kw_only=True)
class CodeBlockDeltaEvent(ParseEvent):
    """Code of an open fenced block, as it arrives (see ``FencedCodePlugin``)."""

    delta: str
    language: str = ""
    span: Span = (0, 0)
    kind: Literal["code_block_delta"] = "code_block_delta"


@dataclass(frozen=True, slots=True, kw_only=True)
class CodeBlockEvent(ParseEvent):
    """A whole fenced code block (see ``FencedCodePlugin``).  ``span`` covers the fences."""

    TILES: ClassVar[bool] = True
    code: str
    language: str = ""
    span: Span = (0, 0)
    kind: Literal["code_block"] = "code_block"


@dataclass(frozen=True, slots=True, kw_only=True)
class TagDeltaEvent(ParseEvent):
    """Content of an open custom tag's block, as it arrives (see ``CustomTagPlugin``).

    Attributes:
        tag: the block's tag name (``note`` for ``<note>...</note>``).
        delta: the new characters of its content, verbatim.
    """

    tag: str
    delta: str
    span: Span = (0, 0)
    kind: Literal["tag_delta"] = "tag_delta"


AnyParseEvent = Annotated[
    (
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
    ),
    Discriminator("kind"),
]
"""Union of the parser's events, discriminated by ``kind`` (a Pydantic-ready type).

The union of every event kind, the agent's included, is
:data:`stream_parser.encoders.AnyEvent`.
"""


CONTEXT_CHARS = 200
"""How much of each end of a long raw text an error's ``context`` keeps."""


def shorten_context(text: str) -> str:
    """The ``context`` of an error event: ``text``, or its two ends if it is long."""
    if len(text) <= 2 * CONTEXT_CHARS:
        return text
    return f"{text[:CONTEXT_CHARS]} ... {text[-CONTEXT_CHARS:]}"


# --- fast constructors for the parser's hot path -------------------------------------------
#
# A frozen dataclass's __init__ pays for object.__setattr__ on every field (about 0.4 µs
# for a text event, 0.6 µs for a parameter delta, on a machine where a parser's whole
# chunk costs 0.5 µs).  The parser builds the events it emits per chunk through a
# *builder twin* instead: a plain, mutable class whose instances have exactly the event's
# layout, so its attribute stores are ordinary (fast) slot writes.  Once the fields are
# written, the object's class is switched to the event class, which CPython allows
# because the layouts are identical.  The twin is made by calling it, which costs less
# than ``object.__new__(twin)`` (a builtin called with an argument).  The result is
# indistinguishable from a constructor-built event (same class, same fields, frozen for
# everyone) at about a fifth of the cost (a third on Python 3.10).  ``_check_twins``
# verifies this at import.  This module stays interpreted in the compiled build: the class
# switch is plain Python.
#
# The event class takes its slots from a plain base class.  From Python 3.11 on, the
# dataclass adds none (it does not repeat slots its bases have), so the twin is that base
# itself and the switch needs no comparison of the two classes' slot names.  Python 3.10
# repeats them: the event adds slots of the same names, which shadow the base's (those
# stay empty), and an instance of the base is smaller than an event.  There the twin is a
# subclass of the base that adds the same slots (``_builder_twin``): CPython lays slots
# out in sorted order of their names, so the two classes place each field at the same
# offset, and it allows the switch between two subclasses of one base once it has seen
# that they add the same slot names.


def _builder_twin(event: type) -> type:
    """The plain class whose instances have the layout of ``event``'s instances.

    Args:
        event: a slotted dataclass whose direct base is a plain class holding its slots.

    Returns:
        The base when the dataclass adds no slots of its own (Python 3.11 and later);
        otherwise a subclass of the base that adds the same slots as the dataclass, so
        that each field is stored where the dataclass's own descriptor reads it.
    """
    own: tuple[str, ...] = tuple(event.__dict__.get("__slots__", ()))
    base = event.__mro__[1]  # the plain class that holds the slots
    if not own:
        return base
    return type(f"{base.__name__}Twin", (base,), {"__slots__": own, "__module__": __name__})


_TextTwin: Any = _builder_twin(TextOutputEvent)
_ThinkingDeltaTwin: Any = _builder_twin(ThinkingDeltaEvent)
_ParamDeltaTwin: Any = _builder_twin(ToolParamDeltaEvent)
_ArgumentsDeltaTwin: Any = _builder_twin(ToolArgumentsDeltaEvent)


def _fast_text(text: str, span: Span) -> TextOutputEvent:
    event = _TextTwin()
    event.text = text
    event.span = span
    event.kind = "text"
    event.__class__ = TextOutputEvent
    return event  # type: ignore[no-any-return]


def _fast_thinking_delta(delta: str, span: Span) -> ThinkingDeltaEvent:
    event = _ThinkingDeltaTwin()
    event.delta = delta
    event.span = span
    event.kind = "thinking_delta"
    event.__class__ = ThinkingDeltaEvent
    return event  # type: ignore[no-any-return]


def _fast_param_delta(
    tool_name: str, param: str, delta: str, call_index: int, span: Span
) -> ToolParamDeltaEvent:
    event = _ParamDeltaTwin()
    event.tool_name = tool_name
    event.param = param
    event.delta = delta
    event.call_index = call_index
    event.span = span
    event.kind = "tool_param_delta"
    event.__class__ = ToolParamDeltaEvent
    return event  # type: ignore[no-any-return]


def _fast_arguments_delta(
    tool_name: str, delta: str, call_index: int, call_id: str | None, span: Span
) -> ToolArgumentsDeltaEvent:
    event = _ArgumentsDeltaTwin()
    event.tool_name = tool_name
    event.delta = delta
    event.call_index = call_index
    event.call_id = call_id
    event.span = span
    event.kind = "tool_arguments_delta"
    event.__class__ = ToolArgumentsDeltaEvent
    return event  # type: ignore[no-any-return]


def _check_twins() -> None:
    """Fast-built events must equal constructor-built ones (checked once, at import)."""
    pairs = [
        (_fast_text("a", (0, 1)), TextOutputEvent(text="a", span=(0, 1))),
        (_fast_thinking_delta("a", (0, 1)), ThinkingDeltaEvent(delta="a", span=(0, 1))),
        (
            _fast_param_delta("t", "p", "a", 1, (0, 1)),
            ToolParamDeltaEvent(tool_name="t", param="p", delta="a", call_index=1, span=(0, 1)),
        ),
        (
            _fast_arguments_delta("t", "a", 1, "c", (0, 1)),
            ToolArgumentsDeltaEvent(
                tool_name="t", delta="a", call_index=1, call_id="c", span=(0, 1)
            ),
        ),
    ]
    for fast, slow in pairs:
        if type(fast) is not type(slow) or fast != slow:  # pragma: no cover - a CPython change
            raise RuntimeError(f"fast event construction is broken: {fast!r} != {slow!r}")


_check_twins()
