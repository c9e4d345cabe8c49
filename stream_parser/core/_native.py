"""Native tool calls: :class:`ToolCallDelta` fragments -> tool-call events.

Providers stream a native function call (OpenAI ``delta.tool_calls``) as fragments that
share an ``index``: the first usually carries the call ``id`` and the function ``name``,
the following ones pieces of the JSON ``arguments`` string.  Several calls may be open
at once, their fragments interleaved.  :class:`NativeCallAccumulator` gathers them and
speaks the same event vocabulary as the XML tool parser, so everything above the core
sees one kind of tool call whatever the model speaks.

Theory of operation
-------------------

Per ``index`` the accumulator keeps an open call: its id (the first one seen), its name
(pieces concatenated, as the OpenAI SDK does, except that a piece equal to the whole name
so far is taken for a repeat: some servers resend the name), its argument pieces (a
list, joined once at the end: linear time), their total length and whether its start
was announced.

While streaming (:meth:`NativeCallAccumulator.feed`):

* A call is *started* (:class:`ToolCallStartEvent`) once its name is known and either
  its first non-empty argument piece arrives or a fragment for another index arrives,
  since both mean the name is complete.  A name that arrives in pieces is therefore
  announced whole.  Argument pieces that came before the name are announced with it,
  as one :class:`ToolArgumentsDeltaEvent`.
* Every later argument piece is a :class:`ToolArgumentsDeltaEvent`, verbatim.
* Size bound: like a tool block in the text, a call may not grow past ``max_size``
  characters (``ParserConfig.max_tool_size`` in the parser).  The piece that crosses
  the bound is cut there, so the arguments announced are the first ``max_size``
  characters whatever the chunking; then a ``tool_too_large`` error ends the call at
  once.  Its pieces are freed, its later fragments are dropped without another report,
  and :meth:`NativeCallAccumulator.finish` gives it no event: it never runs.  A name
  longer than ``max_size`` is handled the same way, so memory stays bounded by
  ``max_size`` per call whatever a server sends.

When the reply is over (:meth:`NativeCallAccumulator.finish`), each call still open, in
index order, gets its start (if not yet announced) and then exactly one final event:

1. the reply was cut (``finish_reason`` ``"length"``, ``"content_filter"`` or None for a
   stream that ended without one) -> ``unclosed_tool`` error, as for a call in the text
   that the stream ended: a cut call never runs (the parser adds one ``truncated`` error
   for the reply when ``finish_reason`` is ``"length"``);
2. no name, or a name not in the registry -> ``unknown_tool`` error;
3. arguments that cannot be read: not JSON, or not a JSON object -> ``malformed_tool``
   error (an empty or blank arguments string means ``{}``);
4. arguments that fail the tool model's validation -> ``invalid_params`` error whose
   ``details`` are Pydantic's errors as JSON-safe dicts;
5. otherwise a :class:`ToolCallEvent` with the validated instance; its ``raw`` is
   the raw arguments string.

Error events carry the raw arguments string as ``context``, so nothing the server sent
is lost.  All events from this module have zero-width spans at the text offset the
caller passes in: native calls come on a side channel, outside the text tiling.

Reasoning that a server sends on its own channel (``ChatDelta.reasoning``, from
``reasoning_content``) is gathered by :class:`ProviderReasoning`, bounded like a thinking
block in the text: its first ``max_size`` characters (``ParserConfig.max_thinking_size``)
are kept, cut at the same character however the server split them; the piece that
crosses the bound makes :meth:`ProviderReasoning.add` return True, once (the parser then
reports ``thinking_too_large``), and later pieces are not kept.  The parser still
streams every piece as a delta, and the final ``ThinkingEvent`` holds the head, with
``truncated=True``.

Nothing here raises on what a server sends; only a bad registry (a programmer error)
raises, at construction.  The accumulator is pure (no I/O, no asyncio) and, like the
parser, not thread-safe.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from ..errors import ConfigError
from ..schema.names import native_name
from ..schema.validation import validate_arguments
from ._readers.pieces import Pieces
from .chunks import ToolCallDelta
from .config import ParserConfig
from .events import (
    ErrorType,
    ParseErrorEvent,
    ParseEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    shorten_context,
)

__all__ = ["NativeCallAccumulator", "ProviderReasoning", "TRUNCATING_FINISH_REASONS"]

TRUNCATING_FINISH_REASONS: frozenset[str | None] = frozenset({None, "length", "content_filter"})
"""Finish reasons after which an open native call is incomplete and must not run."""


class _Call:
    """One native call being accumulated."""

    __slots__ = ("arguments", "call_id", "index", "name", "size", "started", "too_large")

    def __init__(self, index: int) -> None:
        self.index = index
        self.call_id: str | None = None
        self.name = ""
        self.arguments: list[str] = []
        self.size = 0  # total length of ``arguments``
        self.started = False
        self.too_large = False  # reported and dropped: later fragments are ignored

    def describe(self) -> str:
        text = f"tool call {self.name!r}" if self.name else "tool call"
        text += f" (index {self.index}"
        if self.call_id is not None:
            text += f", id {self.call_id!r}"
        return text + ")"


class NativeCallAccumulator:
    """Gathers native tool-call fragments by index and turns them into events.

    Args:
        tool_registry: tool name -> Pydantic model of its arguments.
        emit_deltas: emit :class:`ToolCallStartEvent` and
            :class:`ToolArgumentsDeltaEvent` while calls stream.  When False only the
            final events are emitted (those of :meth:`finish`, and ``tool_too_large``
            errors, which :meth:`feed` emits when a call passes ``max_size``).
        max_size: the longest arguments string (and name), in characters, a call may
            have; a longer call is a ``tool_too_large`` error and never runs.  The
            parser passes its ``ParserConfig.max_tool_size``, whose default this is.

    Raises:
        ConfigError: if a registry value is not a Pydantic model class, or
            ``max_size`` is not positive.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser.core.chunks import ToolCallDelta
        >>> class GetWeather(BaseModel):
        ...     city: str
        >>> acc = NativeCallAccumulator({"get_weather": GetWeather})
        >>> events = acc.feed([ToolCallDelta(index=0, id="call_1", name="get_weather")], 0)
        >>> events += acc.feed([ToolCallDelta(index=0, arguments='{"city": "Paris"}')], 0)
        >>> [event.kind for event in events + acc.finish("tool_calls", 0)]
        ['tool_call_start', 'tool_arguments_delta', 'tool_call']
    """

    def __init__(
        self,
        tool_registry: Mapping[str, type[BaseModel]],
        *,
        emit_deltas: bool = True,
        max_size: int = ParserConfig.max_tool_size,
    ) -> None:
        for name, model in tool_registry.items():
            if not (isinstance(model, type) and issubclass(model, BaseModel)):
                raise ConfigError(f"tool {name!r}: expected a pydantic model class, got {model!r}")
        if isinstance(max_size, bool) or not isinstance(max_size, int) or max_size <= 0:
            raise ConfigError(f"max_size must be a positive int, got {max_size!r}")
        self._registry = tool_registry
        self._emit_deltas = emit_deltas
        self._max_size = max_size
        self._calls: dict[int, _Call] = {}
        self._last_index: int | None = None
        # Safe name -> the tool's own name, for tools sent under a safe name; made when
        # first needed.
        self._own_names: dict[str, str] | None = None

    @property
    def open_calls(self) -> int:
        """How many calls have fragments but were not finished yet.

        A call ended early by its ``tool_too_large`` error is not open any more.
        """
        return sum(1 for call in self._calls.values() if not call.too_large)

    def feed(self, fragments: Sequence[ToolCallDelta], offset: int) -> list[ParseEvent]:
        """Take the tool-call fragments of one stream item.

        Args:
            fragments: the item's ``tool_calls``, in the order received.
            offset: the current offset in the text stream (for the events' spans).

        Returns:
            Start and argument-delta events (none when ``emit_deltas`` is False), and a
            ``tool_too_large`` error for a call that passed ``max_size``.
        """
        events: list[ParseEvent] = []
        for fragment in fragments:
            if fragment.id is None and not fragment.name and not fragment.arguments:
                continue
            index = fragment.index
            if self._last_index is not None and index != self._last_index:
                # A fragment for another call: the earlier calls' names are complete.
                self._start_named(events, offset, skip=index)
            self._last_index = index
            call = self._calls.get(index)
            if call is None:
                call = self._calls[index] = _Call(index)
            if call.too_large:
                continue  # already reported; nothing of it is kept
            if fragment.id is not None and call.call_id is None:
                call.call_id = fragment.id
            if fragment.name and fragment.name != call.name:
                # Pieces of a name are concatenated; a fragment that repeats the whole
                # name so far (some servers resend it with every fragment) adds nothing.
                if len(call.name) + len(fragment.name) > self._max_size:
                    self._too_large(call, events, offset, "name")
                    continue
                call.name += fragment.name
            piece = fragment.arguments
            if piece:
                room = self._max_size - call.size
                over = len(piece) > room
                if over:
                    # Cut at the bound, so what is announced does not depend on how the
                    # server split the arguments.
                    piece = piece[:room]
                if piece:
                    call.arguments.append(piece)
                    call.size += len(piece)
                    if call.started:
                        if self._emit_deltas:
                            events.append(self._delta(call, piece, offset))
                    elif call.name:
                        self._start(call, events, offset)
                if over:
                    self._too_large(call, events, offset, "arguments string")
        return events

    def finish(self, finish_reason: str | None, offset: int) -> list[ParseEvent]:
        """End the reply: one final event per open call, in index order.

        The accumulator is then empty and can take the next reply.  Calling it again
        without new fragments returns ``[]``.

        Args:
            finish_reason: the reply's finish reason; ``"length"``, ``"content_filter"``
                and None (the stream ended without one) mean the calls were cut off.
            offset: the current offset in the text stream (for the events' spans).

        Returns:
            For each call: its start (if not announced yet) and then a
            :class:`ToolCallEvent` or a :class:`ParseErrorEvent`.
        """
        calls = [self._calls[index] for index in sorted(self._calls)]
        self._calls = {}
        self._last_index = None
        events: list[ParseEvent] = []
        for call in calls:
            if call.too_large:
                continue  # ended by its tool_too_large error
            if not call.started and call.name:
                self._start(call, events, offset)
            events.append(self._final(call, finish_reason, offset))
        return events

    # --- internals --------------------------------------------------------------------------

    def _own_name(self, name: str) -> str:
        """The tool a call names: a tool's own name, also when called by its safe name.

        Native function calling takes fewer names than a tool may have, so a tool such
        as ``github/create_issue`` is sent as ``github__create_issue``
        (:func:`~stream_parser.schema.names.native_name`); its calls come back under
        that name and are read as calls of the tool.
        """
        own = self._own_names
        if own is None:
            own = {}
            for tool in self._registry:
                safe = native_name(tool)
                if safe != tool and safe not in self._registry:
                    own.setdefault(safe, tool)
            self._own_names = own
        return own.get(name, name)

    def _start_named(self, events: list[ParseEvent], offset: int, *, skip: int) -> None:
        """Start every waiting call whose name is known, except the one at ``skip``."""
        waiting = [
            call
            for call in self._calls.values()
            if not call.started and call.name and not call.too_large and call.index != skip
        ]
        for call in sorted(waiting, key=lambda call: call.index):
            self._start(call, events, offset)

    def _start(self, call: _Call, events: list[ParseEvent], offset: int) -> None:
        """Announce ``call`` and any argument pieces that came before its name."""
        call.started = True
        if not self._emit_deltas:
            return
        span = (offset, offset)
        events.append(
            ToolCallStartEvent(
                tool_name=self._own_name(call.name),
                call_index=call.index,
                call_id=call.call_id,
                span=span,
            )
        )
        if call.arguments:
            events.append(self._delta(call, "".join(call.arguments), offset))

    def _too_large(self, call: _Call, events: list[ParseEvent], offset: int, what: str) -> None:
        """End ``call`` with a ``tool_too_large`` error and free what it holds."""
        if what != "name" and not call.started and call.name:
            # Arguments mean the name is complete: announce it, as for any call.  A name
            # still growing is never announced in part.
            self._start(call, events, offset)
        raw = "".join(call.arguments)
        call.too_large = True
        call.arguments = []
        events.append(
            ParseErrorEvent(
                error_type=ErrorType.TOOL_TOO_LARGE.value,
                message=f"{call.describe()}: its {what} is longer than max_tool_size "
                f"({self._max_size} characters); it is not executed",
                context=shorten_context(raw) if raw else None,
                tool_name=self._own_name(call.name) or None,
                call_index=call.index,
                call_id=call.call_id,
                span=(offset, offset),
            )
        )

    def _delta(self, call: _Call, piece: str, offset: int) -> ToolArgumentsDeltaEvent:
        return ToolArgumentsDeltaEvent(
            tool_name=self._own_name(call.name),
            delta=piece,
            call_index=call.index,
            call_id=call.call_id,
            span=(offset, offset),
        )

    def _final(self, call: _Call, finish_reason: str | None, offset: int) -> ParseEvent:
        """The one event that ends ``call``: the validated call or why it cannot run."""
        raw = "".join(call.arguments)
        span = (offset, offset)

        def error(error_type: ErrorType, message: str, **extra: Any) -> ParseErrorEvent:
            return ParseErrorEvent(
                error_type=error_type.value,
                message=message,
                context=raw,
                tool_name=self._own_name(call.name) or None,
                call_index=call.index,
                call_id=call.call_id,
                span=span,
                **extra,
            )

        if finish_reason in TRUNCATING_FINISH_REASONS:
            why = (
                "the stream ended without a finish reason"
                if finish_reason is None
                else f"finish_reason={finish_reason!r}"
            )
            return error(
                ErrorType.UNCLOSED_TOOL,
                f"{call.describe()} was cut off ({why}); it is not executed",
            )
        if not call.name:
            return error(ErrorType.UNKNOWN_TOOL, f"{call.describe()} has no function name")
        model = self._registry.get(self._own_name(call.name))
        if model is None:
            known = ", ".join(sorted(self._registry)) or "none"
            return error(
                ErrorType.UNKNOWN_TOOL,
                f"{call.describe()}: unknown tool {call.name!r} (registered: {known})",
            )
        data: object
        if not raw.strip():
            data = {}
        else:
            try:
                data = json.loads(raw)
            except (ValueError, RecursionError) as exc:
                return error(
                    ErrorType.MALFORMED_TOOL,
                    f"{call.describe()}: arguments are not valid JSON ({exc})",
                )
        if not isinstance(data, dict):
            return error(
                ErrorType.MALFORMED_TOOL,
                f"{call.describe()}: arguments must be a JSON object, got {type(data).__name__}",
            )
        result = validate_arguments(self._own_name(call.name), model, data)
        if result.instance is None:
            return error(
                ErrorType.INVALID_PARAMS,
                f"{call.describe()}: {result.message}",
                details=result.errors,
            )
        instance = result.instance
        return ToolCallEvent(
            tool_name=self._own_name(call.name),
            tool_instance=instance,
            raw=raw,
            call_index=call.index,
            call_id=call.call_id,
            span=span,
        )


class ProviderReasoning:
    """Reasoning sent on a separate channel, kept up to ``max_size`` characters.

    Args:
        max_size: how many characters are kept (``ParserConfig.max_thinking_size``).

    Example:
        >>> reasoning = ProviderReasoning(5)
        >>> [reasoning.add(piece) for piece in ["abc", "def", "ghi"]]
        [False, True, False]
        >>> reasoning.text(), reasoning.truncated
        ('abcde', True)
    """

    __slots__ = ("max_size", "pieces", "size", "truncated")

    def __init__(self, max_size: int) -> None:
        self.max_size = max_size
        self.pieces = Pieces()  # folded as it grows: a few bytes per character kept
        self.size = 0  # characters kept
        self.truncated = False

    def add(self, text: str) -> bool:
        """Keep what of ``text`` fits; True when it is the piece that crosses the bound."""
        if self.truncated:
            return False  # past the bound: it only streams
        room = self.max_size - self.size
        if len(text) <= room:
            self.pieces.add(text)
            self.size += len(text)
            return False
        if room > 0:
            self.pieces.add(text[:room])
            self.size += room
        self.truncated = True
        return True

    def text(self) -> str:
        """The reasoning kept: all of it, or its first ``max_size`` characters."""
        return self.pieces.text()

    def too_large_message(self) -> str:
        """The ``thinking_too_large`` error's message."""
        return (
            f"the reasoning is longer than max_thinking_size ({self.max_size} characters); "
            "the rest streams without being kept"
        )
