"""What every reader shares: the cursor, the verdicts, the reader contract, the size guard.

The :class:`Cursor` is the one piece of state that the driver and all readers share:
where the stream is (``offset`` of the buffer's first character, the character before
it), whether this is the final pass, the call counter, and the few ways a reader writes
events that are not its own block (text, error events, a failed block, a plugin's
events).  It is a separate object, not the parser, so that readers depend on nothing
above them.

A reader follows one contract (:class:`Reader`): ``run(buf, pos, out)`` consumes
``buf`` from ``pos`` and returns the position reached, and it returns *while its state
is still current only when it waits for more input* (in the final pass: when it has
consumed everything).  When it opens or closes a block it moves the state and returns
at once; the driver then runs the next state's reader from there.  So "waiting" needs no
flag: it is the state staying the same.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final, Generic, TypeVar

from ...errors import InternalError, StrictModeError
from ..events import ErrorType, ParseErrorEvent, ParseEvent, _fast_text, shorten_context

if TYPE_CHECKING:
    from .._scan import TagSpec
    from ..config import ParserConfig
    from ..state import Trigger

__all__ = [
    "NO",
    "opens",
    "WAIT",
    "YES",
    "BoundedBlock",
    "BoundedReader",
    "Cursor",
    "FastPath",
    "Reader",
    "Stopped",
]

_log: Final = logging.getLogger("stream_parser.core.parser")

# Verdicts of a look-ahead decision ("does this tag open a block?", "does this closing
# tag end the value?").  Plain ints, not an Enum: they are compared in the hot path,
# which is meant to be compiled with mypyc, where Final ints are constants.
YES: Final = 1
"""The tag does what it would: it opens (or closes) the block."""
NO: Final = 2
"""It does not: the tag is content (text, or part of a value)."""
WAIT: Final = 3
"""Undecided until more input arrives: hold the tag back."""

FastPath = tuple["re.Pattern[str] | None", "Callable[[str, list[ParseEvent]], bool] | None"]
"""A reader's fast path: a pattern of the characters that need the slow path (None: any
chunk qualifies) and the function that takes a whole chunk as plain content (None: no
fast path).  The function may still refuse a chunk by returning False, before it has
changed anything.  With ``Reader.holds_cut`` it is also given held text and the next
chunk together, and the part of a chunk before a tag cut by its end."""


def _hold_nothing(text: str) -> None:
    """``Cursor.hold`` of a cursor without a driver: nothing may be left."""
    raise InternalError("text was left for a driver that cannot hold it")


class Cursor:
    """The stream position and the event helpers that the driver and the readers share.

    Attributes:
        config: the parser's configuration.
        emit_deltas: ``config.emit_deltas`` (read in the hot path).
        ws_cap: ``config.buffer_keep_size``: how much whitespace a look-ahead may skip.
        offset: absolute offset of the first character of the buffer being read (of the
            held tail, between chunks).
        before: text that ends at ``offset``: its last character is the one before
            ``offset`` (a newline at the start of the stream).  The fast paths store the
            chunk they took, which costs less than taking its last character.
        final: True in the pass of ``close()``: the end of the buffer is the end of the
            stream, so nothing waits.
        in_fence: inside a fenced code block (``fence_aware``).
        call_count: call indexes reserved so far.
        move: the driver's state transition (takes a ``Trigger``).
        hold: the driver's hold of text that a fast path left at the end of a chunk
            (the text reader's trailing whitespace): it waits as a cut tag does.
        back: the absolute offset the driver must read again from, after a reader gave
            back text it had consumed (see :meth:`give_back`); -1 when none.
        back_text: the given-back text that lies before the buffer (from ``back`` up to
            ``offset``); empty when ``back`` is inside the buffer.
        back_prev: the character before ``back``.
        debug: the ``stream_parser`` loggers take DEBUG records (asked by the driver at
            each state change): error events are then logged too.
        cut: set by ``close()``: the stream was cut (``finish_reason == "length"`` or a
            stream error) rather than ended normally; open plugin blocks learn it.
        reply_start: nothing but whitespace, thinking and framing was read yet, while
            a plugin tag counts only there (``reply_start_only``); False otherwise,
            which also spares the text reader the check.
        edge: nothing but whitespace was read in text since the reply started or a
            block ended (the driver sets it as it comes back to ``TEXT``): whitespace
            read there is framing up to its last line break, in a dialect whose
            whitespace around blocks is framing (see the text reader).
        long_space: the run of whitespace being read is longer than ``ws_cap``, so
            none of it is framing: it is text up to the next other character.
        settle: a block just ended: the text reader works out ``edge`` from the
            block's last event before it reads on.
        call_ended_reasoning: a call's start tag ended the reasoning block it was
            written in (``ParsePlugin.ends_reasoning``): a reasoning close tag that
            comes later is framing with no notice (the reasoning was open).
    """

    __slots__ = (
        "back",
        "back_prev",
        "back_text",
        "before",
        "call_count",
        "call_ended_reasoning",
        "config",
        "cut",
        "debug",
        "edge",
        "emit_deltas",
        "final",
        "hold",
        "in_fence",
        "long_space",
        "move",
        "offset",
        "reply_start",
        "settle",
        "ws_cap",
    )

    def __init__(self, config: ParserConfig, move: Callable[[Trigger], None]) -> None:
        self.config = config
        self.emit_deltas = config.emit_deltas
        self.ws_cap = config.buffer_keep_size
        self.offset = 0
        self.before = "\n"  # the stream starts a line
        self.final = False
        self.in_fence = False
        self.call_count = 0
        self.move = move
        self.hold: Callable[[str], None] = _hold_nothing  # the driver's, set by the parser
        self.back = -1
        self.back_text = ""
        self.back_prev = ""
        self.cut = False
        self.reply_start = False
        self.edge = True  # the reply starts here
        self.long_space = False
        self.settle = False
        self.call_ended_reasoning = False
        self.debug = False

    @property
    def prev_char(self) -> str:
        """The character before ``offset`` (the last of :attr:`before`)."""
        return self.before[-1]

    @prev_char.setter
    def prev_char(self, char: str) -> None:
        self.before = char

    def give_back(self, target: int, text: str, prev: str) -> None:
        """Ask the driver to read the stream again from absolute offset ``target``.

        A reader that consumed text into its block and then learns that the block ended
        earlier (a tool call cut short by another call, rule 5) gives that text back
        together with the state change: the driver runs the next reader from
        ``target``.  Each character is given back at most once, so reading stays linear.

        Args:
            target: where to read again from; at most the current position.
            text: the characters from ``target`` up to ``offset`` (the buffer's start),
                empty when ``target`` lies inside the buffer.
            prev: the character before ``target``.
        """
        self.back = target
        self.back_text = text
        self.back_prev = prev

    def next_call_index(self) -> int:
        """Reserve the next ``call_index`` of the stream."""
        index = self.call_count
        self.call_count += 1
        return index

    def text(self, buf: str, start: int, end: int, out: list[ParseEvent]) -> None:
        """Emit ``buf[start:end]`` as text (nothing when empty)."""
        if start < end:
            base = self.offset
            out.append(_fast_text(buf[start:end], (base + start, base + end)))

    def error(
        self,
        out: list[ParseEvent],
        error_type: ErrorType,
        message: str,
        span: tuple[int, int],
        context: str | None = None,
        details: tuple[dict[str, Any], ...] = (),
        tool_name: str | None = None,
        call_index: int | None = None,
    ) -> None:
        """Emit an error event, or raise it in strict mode.

        Raises:
            StrictModeError: ``config.strict`` is set.
        """
        event = ParseErrorEvent(
            error_type=error_type.value,
            message=message,
            context=None if context is None else shorten_context(context),
            details=details,
            tool_name=tool_name,
            call_index=call_index,
            span=span,
        )
        if self.debug:
            _log.debug("%s at %s: %s", event.error_type, span, message)
        if self.config.strict:
            raise StrictModeError(event)
        out.append(event)

    def fail_block(
        self,
        out: list[ParseEvent],
        error_type: ErrorType,
        message: str,
        raw: str,
        start: int,
        *,
        error_span: tuple[int, int] | None = None,
        quote: bool = True,
        details: tuple[dict[str, Any], ...] = (),
        tool_name: str | None = None,
        call_index: int | None = None,
    ) -> None:
        """A block that does not become its event: an error, then its raw text.

        The text keeps the stream lossless: the block's characters are delivered once,
        as text, spanning ``start`` to ``start + len(raw)``.

        Args:
            out: the event list.
            error_type: the error's type.
            message: the error's message.
            raw: the block's text so far.
            start: the block's absolute start offset.
            error_span: the error's span when it differs from the text's.
            quote: give the error the raw text as its context.
            details: the error's details (validation errors).
            tool_name: the tool of the block, if it is a call.
            call_index: the call's index, if it was announced.
        """
        span = (start, start + len(raw))
        self.error(
            out,
            error_type,
            message,
            span if error_span is None else error_span,
            context=raw if quote else None,
            details=details,
            tool_name=tool_name,
            call_index=call_index,
        )
        out.append(_fast_text(raw, span))

    def extend(self, out: list[ParseEvent], events: list[ParseEvent]) -> None:
        """Emit events built outside the core (a plugin's); strict mode applies to them.

        Raises:
            StrictModeError: ``config.strict`` is set and one of them is an error.
        """
        if self.debug or self.config.strict:
            for event in events:
                if isinstance(event, ParseErrorEvent):
                    if self.debug:
                        _log.debug("%s at %s: %s", event.error_type, event.span, event.message)
                    if self.config.strict:
                        raise StrictModeError(event)
        out.extend(events)


class Reader:
    """The reader of one state; see the module docstring for the contract of :meth:`run`.

    Attributes:
        cur: the shared cursor.
        holds_cut: what the reader holds at the end of a buffer is only ever a tag cut
            by the buffer's end, so its fast path may take more than whole chunks: the
            part of a chunk before such a cut tag (a match of its stop pattern that
            :func:`~stream_parser.core._scan.is_cut` tells), the driver holding the
            rest, which :meth:`run` would deliver the same way (one event) and hold
            without a word; and held text with the next chunk, when together they
            hold no match.  False by default.
    """

    __slots__ = ("cur", "holds_cut")

    def __init__(self, cur: Cursor) -> None:
        self.cur = cur
        self.holds_cut = False

    def run(self, buf: str, pos: int, out: list[ParseEvent]) -> int:
        """Consume ``buf`` from ``pos``; return the position reached."""
        raise NotImplementedError

    def fast_path(self) -> FastPath:
        """The fast path of ``feed()`` for the reader's current situation (default: none)."""
        return None, None

    def at_end(self, out: list[ParseEvent]) -> None:
        """The stream ended in this state (after the final pass): report what is open."""


class Stopped(Reader):
    """The reader of ``CLOSED`` and ``ERROR``: the driver refuses input before it runs."""

    __slots__ = ()

    def run(self, buf: str, pos: int, out: list[ParseEvent]) -> int:
        """Never reached: ``feed()`` and ``close()`` check for these states first."""
        raise InternalError("the parser does not read in a stopped state")


class BoundedBlock:
    """A block bounded by ``max_tool_size`` (tool calls, plugin blocks).

    Attributes:
        start: absolute offset of the block's first character.
        limit: absolute offset past which the block is too large.
        passthrough: too large: the rest of the block streams as text.
    """

    __slots__ = ("limit", "passthrough", "start")

    def __init__(self, start: int, max_size: int) -> None:
        self.start = start
        self.limit = start + max_size
        self.passthrough = False


B = TypeVar("B", bound=BoundedBlock)


class BoundedReader(Reader, Generic[B]):
    """A reader whose blocks may not grow past ``max_tool_size``: the one size guard.

    Subclasses provide :meth:`steps` (read the block), :meth:`passthrough` (read the
    rest of a too-large block as text) and :meth:`too_large` (report it); ``block`` is
    the open block, or None.
    """

    __slots__ = ("block",)

    def __init__(self, cur: Cursor) -> None:
        super().__init__(cur)
        self.block: B | None = None

    def run(self, buf: str, pos: int, out: list[ParseEvent]) -> int:
        """Read the open block, cut at its size limit."""
        block = self.block
        assert block is not None
        if block.passthrough:
            return self.passthrough(block, buf, pos, out)
        cut = block.limit - self.cur.offset
        if cut >= len(buf):
            return self.steps(block, buf, pos, out)
        # The buffer reaches past the limit.  Read a view that ends there: if the block is
        # still open at the limit although more input exists, it is too large.  Cutting
        # at a fixed offset keeps the outcome independent of chunking.
        if pos < cut:
            pos = self.steps(block, buf[:cut], pos, out)
            if self.block is not block:  # it closed in time
                return pos
        self.too_large(block, out)
        block.passthrough = True
        return self.passthrough(block, buf, pos, out)

    def steps(self, block: B, buf: str, pos: int, out: list[ParseEvent]) -> int:
        """Read the block (the contract of :meth:`Reader.run`)."""
        raise NotImplementedError

    def passthrough(self, block: B, buf: str, pos: int, out: list[ParseEvent]) -> int:
        """Deliver the rest of a too-large block as text, up to its end."""
        raise NotImplementedError

    def too_large(self, block: B, out: list[ParseEvent]) -> None:
        """Report the block as too large and deliver what was read of it as text."""
        raise NotImplementedError


_NAME: Final = re.compile(r"[^\s<>\"'`]{0,257}")
"""The name after a named start tag (``<function=NAME>``), up to one past the longest."""
_NAME_MAX: Final = 256
_WS: Final = re.compile(r"[ \t\r\n]*")


def opens(cur: Cursor, spec: TagSpec, buf: str, i: int, before: str) -> int:
    """Does the tag at ``i`` open its block?  YES, NO (it is text) or WAIT.

    Tags without ``next_chars`` always do.  A call's start tag does only if the next
    non-whitespace character is one of ``next_chars`` (rule 3: ``<`` for XML tools),
    and not when it follows a backtick or, with ``fence_aware``, sits inside a fenced
    block.  So prose that mentions a tag, `` `<tag>` `` included, stays text.
    """
    allowed = spec.next_chars
    if not allowed:
        return YES
    if before == "`" or cur.in_fence:
        return NO
    j = i + len(spec.tag)
    plugin = spec.plugin
    if plugin is not None and plugin.named_start:
        # "<function=NAME>": the look-ahead starts after the name and its ">".
        m = _NAME.match(buf, j)
        assert m is not None
        k = m.end()
        if k - j > _NAME_MAX:
            return NO
        if k == len(buf):
            return NO if cur.final else WAIT
        if buf[k] != ">" or k == j:
            return NO
        j = k + 1
    k = _WS.match(buf, j).end()  # type: ignore[union-attr]
    if k - j > cur.ws_cap:
        return NO
    if k == len(buf):
        if not cur.final:
            return WAIT
        # The stream ended right after a dialect's call opener: a cut call (rule 9),
        # whose reader reports it unclosed.  An XML tool's tag, or a call named
        # without its opener (qwen3_coder's bare "<function=NAME>"), needs a line
        # break after it too: prose that ends naming a tag goes on on the same line.
        if plugin is not None and not plugin.named_start:
            return YES
        return YES if "\n" in buf[j:k] else NO
    if allowed[0] == "^":  # a complement: any character but those listed
        return NO if buf[k] in allowed[1:] else YES
    return YES if buf[k] in allowed else NO
