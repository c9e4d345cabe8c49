"""Parse states and the one table of allowed transitions.

Theory of operation
===================

The parser reads a stream of text in chunks of any size and turns it into events as
early as the text allows.  It is a *sans-IO* state machine: ``feed(chunk)`` and
``close()`` are pure computations; the drivers that pull chunks from an iterator (sync or
async) live in ``_drivers.py`` and contain no logic of their own.  Each state has a
*reader* (``_readers/``) that consumes the text of that state.

States
------

``TEXT``
    Plain text.  The only thing carried from one chunk to the next is the *pending tail*:
    the shortest suffix of what arrived that might still begin a recognised tag (a
    thinking start tag, a registered tool's start tag, a plugin's start tag), or a tool
    start tag plus the whitespace after it while we wait for the next non-whitespace
    character (tool-block rule 3).  In every dialect but XML it also holds the trailing
    run of whitespace, which the next character decides as framing or text (whitespace
    framing, ``_readers/text.py``).  Everything before the tail has been emitted as
    ``TextOutputEvent`` (or ``FramingEvent``).  The tail is at most the longest tag minus
    one character, plus ``buffer_keep_size`` characters of whitespace on each side of it
    (invariant 4).

``THINKING``
    Inside a thinking block.  The parser searches each chunk, plus at most
    ``len(end_tag) - 1`` characters kept from before, for the block's end tag; content
    that cannot be part of the end tag is emitted as ``ThinkingDeltaEvent`` and kept as a
    list of pieces, joined once when the block closes (``ThinkingEvent``).

``TOOL``
    Inside a tool call of the XML dialect.  A tool block has phases (``ToolPhase``):
    ``BODY`` between parameters, ``VALUE`` inside a parameter, ``CDATA`` inside a CDATA
    section of a value, ``PENDING`` after a parameter's closing tag while what follows has
    not yet confirmed that it really ends the value (rule 5).  The text read while a close
    is pending is kept in the block, not in the tail, so the tail holds at most one tag
    (a tool's start tag plus ``buffer_keep_size`` whitespace while rule 3 decides).  Raw
    text and parameter values are kept as lists of pieces.  The block's size is bounded
    by ``max_tool_size``; past it, the block continues as text (``PASSTHROUGH``).

``PLUGIN``
    Inside a block owned by a :class:`~stream_parser.core.plugins.ParsePlugin`; like
    ``THINKING`` with the plugin's end tag, the plugin receiving the data.

``CLOSED``
    ``close()`` was called; ``feed()`` now raises ``ParserClosedError``.

``ERROR``
    An internal error (a bug) was detected; the parser refuses further input.  It is
    reached like every other state, through the table (the ``BUG`` trigger).

Transitions
-----------

They are listed in :data:`TRANSITIONS`, the only place that says which state follows
which; ``docs/make_state_diagram.py`` draws the diagram in the docs from it.  Model text
cannot reach an illegal transition: asking for one is a bug, which moves the parser to
``ERROR`` by the table's ``BUG`` row and raises ``InternalError``.

Invariants (each has a property test)
-------------------------------------

1. chunking invariance; 2. lossless spans; 3. early text; 4. bounded pending tail;
5. linear time (no re-scan: each character is examined a bounded number of times);
6. model output never raises; 7. safe XML (in ``coerce.py``).
"""

from __future__ import annotations

import enum
from typing import Protocol

from ..errors import InternalError

__all__ = ["TRANSITIONS", "ParseState", "ParseStateManager", "ToolPhase", "Trigger"]


class ParseState(enum.Enum):
    """Where the parser is in the stream."""

    TEXT = "text"
    THINKING = "thinking"
    TOOL = "tool"
    PLUGIN = "plugin"
    CLOSED = "closed"
    ERROR = "error"


class ToolPhase(enum.Enum):
    """Where the parser is inside a tool block."""

    BODY = "body"
    """Between parameters: whitespace, a parameter's start tag or the tool's end tag."""
    VALUE = "value"
    """Inside a parameter's value, looking for its closing tag."""
    CDATA = "cdata"
    """Inside a CDATA section of a value: opaque until ``]]>``."""
    PENDING = "pending"
    """After a parameter's closing tag, until what follows confirms or rejects the close."""


class Trigger(enum.Enum):
    """What makes the parser change state."""

    THINKING_START = "thinking start tag"
    THINKING_END = "thinking end tag"
    TOOL_START = "tool start tag + '<'"
    TOOL_END = "tool end tag"
    TOOL_ABORT = "malformed tool body"
    PLUGIN_START = "plugin start tag"
    PLUGIN_END = "plugin end tag"
    CLOSE = "close()"
    BUG = "internal error"


TRANSITIONS: dict[tuple[ParseState, Trigger], ParseState] = {
    (ParseState.TEXT, Trigger.THINKING_START): ParseState.THINKING,
    (ParseState.TEXT, Trigger.TOOL_START): ParseState.TOOL,
    (ParseState.TEXT, Trigger.PLUGIN_START): ParseState.PLUGIN,
    (ParseState.THINKING, Trigger.THINKING_END): ParseState.TEXT,
    (ParseState.TOOL, Trigger.TOOL_END): ParseState.TEXT,
    (ParseState.TOOL, Trigger.TOOL_ABORT): ParseState.TEXT,
    (ParseState.PLUGIN, Trigger.PLUGIN_END): ParseState.TEXT,
    (ParseState.TEXT, Trigger.CLOSE): ParseState.CLOSED,
    (ParseState.THINKING, Trigger.CLOSE): ParseState.CLOSED,
    (ParseState.TOOL, Trigger.CLOSE): ParseState.CLOSED,
    (ParseState.PLUGIN, Trigger.CLOSE): ParseState.CLOSED,
    (ParseState.TEXT, Trigger.BUG): ParseState.ERROR,
    (ParseState.THINKING, Trigger.BUG): ParseState.ERROR,
    (ParseState.TOOL, Trigger.BUG): ParseState.ERROR,
    (ParseState.PLUGIN, Trigger.BUG): ParseState.ERROR,
}
"""``(state, trigger) -> next state``: every transition the parser may make."""


class _Owner(Protocol):
    """What a state manager shows of the parser it belongs to."""

    @property
    def pending(self) -> str: ...

    def current_tool_name(self) -> str | None: ...

    def reset(self) -> None: ...


class ParseStateManager:
    """Holds the current state and applies transitions from :data:`TRANSITIONS`.

    A parser's own manager (``StreamToolParser.state_manager``) also shows what the
    parser holds back and the tool of an open call, and ``reset()`` resets the parser.

    Attributes:
        current_state: the state the parser is in.

    Example:
        >>> manager = ParseStateManager()
        >>> manager.current_state, manager.buffer, manager.current_tool_name
        (<ParseState.TEXT: 'text'>, '', None)
    """

    __slots__ = ("_owner", "current_state")

    def __init__(self, initial: ParseState = ParseState.TEXT, owner: _Owner | None = None) -> None:
        self.current_state = initial
        self._owner = owner

    @property
    def buffer(self) -> str:
        """The text received but held back, not yet in an event (the parser's ``pending``)."""
        owner = self._owner
        return "" if owner is None else owner.pending

    @property
    def current_tool_name(self) -> str | None:
        """The tool of the call open in the XML format, or None outside one."""
        owner = self._owner
        return None if owner is None else owner.current_tool_name()

    def reset(self) -> None:
        """Back to ``TEXT``; a parser's manager resets the parser (:meth:`StreamToolParser.reset`).

        A parser's reply then starts where its configuration says: in ``THINKING`` when
        it starts inside reasoning (``start_in_thinking``), else in ``TEXT``.
        """
        owner = self._owner
        if owner is None:
            self.current_state = ParseState.TEXT
        else:
            owner.reset()

    def transition(self, trigger: Trigger) -> ParseState:
        """Move to the state that ``trigger`` leads to and return it.

        Raises:
            InternalError: the transition is not in the table (a bug in the caller); the
                state then follows the table's ``BUG`` row, to ``ERROR`` (a state without
                one, ``CLOSED`` or ``ERROR``, stays as it is).
        """
        bad = self.current_state
        nxt = TRANSITIONS.get((bad, trigger))
        if nxt is None:
            self.current_state = TRANSITIONS.get((bad, Trigger.BUG), bad)
            raise InternalError(f"illegal transition {bad.name} --{trigger.name}-->")
        self.current_state = nxt
        return nxt
