"""StreamToolParser: the driver of the sans-IO streaming parser.

How it works (the theory of operation is in ``state.py``; the readers are described in
``_readers/``):

* ``feed(chunk)`` glues the pending tail (bounded, see invariant 4) to the chunk and
  runs the reader of the current state over it.  A reader consumes what it can decide,
  appends events to the output list and either moves to another state (the loop then
  runs that state's reader from where it stopped) or returns in its own state, which
  means it waits: the rest of the buffer cannot be decided without more input.  What
  is left becomes the new tail.
* Every decision depends only on the characters seen, never on where chunks were cut:
  when a reader reaches the end of the buffer in the middle of something that may still
  become a tag, it waits.  That is what makes the events independent of chunking.
* Most chunks of a long text, thinking block or parameter value contain no character
  that could matter in the current state; the reader's *fast path* takes such a chunk
  whole, without the loop (see :meth:`StreamToolParser.feed`).  With most readers it
  also takes a chunk up to a tag cut by its end, the driver holding the cut tag
  (``Reader.holds_cut``), and tries held text with the next chunk the same way.
* ``close()`` runs the readers once more in *final* mode, where the end of the buffer is
  the end of the stream (partial tags are text, open blocks are reported unclosed).

The side channels of :class:`~stream_parser.core.chunks.ChatDelta` items (reasoning,
native tool calls, usage) are handled here too; native calls are assembled in
``_native.py``, and chat completion chunks (the ``openai`` SDK's, or their JSON) are read
into ``ChatDelta`` items by ``_sdk_items.py``.  The parser is not thread-safe: feed one
parser from one thread or task.

Compiled tables (the tag table, the tools' lookup data, the argument converter) come
from ``_tables.py``, which keeps them per tool set so that a new parser costs little.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
)
from typing import TYPE_CHECKING, Any, Final, cast

from ..errors import ConfigError, InternalError, ParserClosedError
from ._compiled_attrs import mypyc_attr
from ._dialect_registry import dialect_plugins
from ._drivers import drive, drive_async, usage_from_metadata
from ._line_plugins import LinePlugins, is_line_plugin
from ._readers import (
    Cursor,
    PluginReader,
    Reader,
    Stopped,
    TextReader,
    ThinkingReader,
    ToolReader,
)
from ._scan import TagKind, TagSpec, stop_char
from ._sdk_items import ACCEPTED_ITEMS, ChunkDeltas, helper_event_type, is_chunk, read_field
from ._tables import plugin_tags, tag_tables, tool_tables
from .chunks import ChatDelta, StreamItem
from .config import ParserConfig
from .events import (
    ErrorType,
    ParseEvent,
    Span,
    ThinkingEvent,
    TokenUsageEvent,
    _fast_thinking_delta,
)
from .plugins import ParsePlugin, PluginContext
from .state import ParseState, ParseStateManager, Trigger
from .xml_tools import XMLArgumentConverter

if TYPE_CHECKING:
    from ._native import NativeCallAccumulator, ProviderReasoning

__all__ = ["StreamItem", "StreamToolParser", "aparse_stream", "parse_stream"]

# Module-level names: an Enum member lookup is a slow attribute access.
_CLOSED, _ERROR, _TEXT = ParseState.CLOSED, ParseState.ERROR, ParseState.TEXT
_NEVER: Final = re.compile(r"(?!)")
"""The stop pattern of a fast path that takes any chunk: it matches nothing."""
_NEVER_CHAR: Final = "\uffff"
"""Its first test: a noncharacter, so the search (which finds nothing) hardly ever runs."""
_SLICE: Final = 8192
"""Chunks longer than this (a whole file fed at once) are read in slices of this size."""
_log: Final = logging.getLogger(__name__)
"""State changes, errors and recoveries at DEBUG (see :meth:`StreamToolParser._move`)."""
_DEBUG: Final = logging.DEBUG


# Users subclass the parser; in the compiled build that must be allowed explicitly.
@mypyc_attr(allow_interpreted_subclasses=True)
class StreamToolParser:
    """Incremental parser of LLM output into text, thinking and tool-call events.

    Args:
        tool_registry: the tools: a mapping of tool name to the Pydantic model of its
            arguments, or any form :func:`~stream_parser.core._toolset.tool_models`
            accepts (a :class:`~stream_parser.tools.ToolRegistry`, a list of tools...).
        config: parser configuration; defaults to ``ParserConfig()``.
        xml_parser: converts a closed tool block's raw parameters into a model instance;
            defaults to ``XMLArgumentConverter(tool_registry, config=config)``.
        plugins: plugins to register, in order (see :meth:`use`).

    A new parser is cheap to build when one was built before with tools of the same
    names and models and an equal configuration: what they compile is cached (see the
    module's "Compiled tables").

    Raises:
        ConfigError: invalid tools (bad tool name, not a Pydantic model), an unknown
            dialect, or a tag claimed twice (a tool named like a thinking tag, two
            plugins with one tag).

    Example:
        >>> from pydantic import BaseModel
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> parser = StreamToolParser({"read_file": ReadFile})
        >>> events = parser.feed("Let me look. <read_file><path>a.py</path></read_file>")
        >>> events += parser.close()
        >>> [e.kind for e in events]
        ['text', 'tool_call_start', 'tool_param_delta', 'tool_call']
        >>> events[-1].tool_instance
        ReadFile(path='a.py')
    """

    def __init__(
        self,
        tool_registry: object,
        *,
        config: ParserConfig | None = None,
        xml_parser: XMLArgumentConverter | None = None,
        plugins: Iterable[ParsePlugin] = (),
    ) -> None:
        self.config = config if config is not None else ParserConfig()
        if not isinstance(self.config, ParserConfig):
            raise ConfigError(f"config must be a ParserConfig, not {type(self.config).__name__}")
        # Compiled once per tool set and configuration (see "Compiled tables" above).
        self.tool_registry, self._tables = tool_tables(tool_registry, self.config, xml_parser)
        self.xml_parser = self._tables.xml_parser
        self._sm = ParseStateManager(ParseState.TEXT, self)
        # (Few attributes: past about thirty, CPython stops sharing an instance's key
        # layout with its class, and every attribute read of the hot path gets slower.)
        self._build_readers()
        self._context = PluginContext(
            tool_registry=self.tool_registry,
            xml_parser=self.xml_parser,
            config=self.config,
            # The parser's method, not the cursor's: reset() gives the parser a new cursor.
            next_call_index=self.next_call_index,
        )
        self._plugins: list[ParsePlugin] = []
        # Plugins in the line shape (can_handle / process), run by an adapter over the
        # text events; None while there are none, so that nothing is held otherwise.
        self._lines: LinePlugins | None = None
        for plugin in dialect_plugins(self.config.dialects):
            self._add_plugin(cast(ParsePlugin, plugin))  # the dialects' plugins are ParsePlugins
        for plugin in plugins:
            self._add_plugin(plugin)
        self._compile()
        self._begin()

    def _build_readers(self) -> None:
        """A new cursor and a new reader for each state (a new stream starts)."""
        self._cur = cur = Cursor(self.config, self._move)
        # Whether the ``stream_parser`` loggers take DEBUG records: asked here and at
        # each state change (never per chunk), so that logging costs nothing when off.
        cur.debug = _log.isEnabledFor(_DEBUG)
        self._thinking = thinking = ThinkingReader(cur)
        # (A converter with a parse_tool_xml of its own builds each call: see _tables.)
        tool_reader = ToolReader(cur, self._tables.tools, self.xml_parser, self._tables.whole_call)
        plugin_reader = PluginReader(cur)
        # The text reader opens blocks by calling the other readers' open().
        self._text = TextReader(cur, thinking, tool_reader, plugin_reader)
        self._framed = self._text.framed_chunk  # its fast path with whitespace framing
        cur.hold = self._hold
        stopped = Stopped(cur)
        # The state -> reader table.  The stopped states have a reader too, so that the
        # table is total; feed() and close() refuse input in them before any reader runs.
        self._readers: dict[ParseState, Reader] = {
            ParseState.TEXT: self._text,
            ParseState.THINKING: thinking,
            ParseState.TOOL: tool_reader,
            ParseState.PLUGIN: plugin_reader,
            ParseState.CLOSED: stopped,
            ParseState.ERROR: stopped,
        }

    def _begin(self) -> None:
        """The state of a stream that has not started: set by ``__init__`` and ``reset``."""
        # The stream so far: the cursor's offset is the absolute offset of _tail[0].
        self._tail = ""
        self._started = False
        # Side channels (ChatDelta items).
        self._reasoning: ProviderReasoning | None = None
        self._native: NativeCallAccumulator | None = None
        self._native_index: dict[int, int] = {}
        self._finish_reason: str | None = None
        self._stream_errors: list[str] = []  # reported by close(), after the text
        self._last_usage: Any = None
        self._chunks: ChunkDeltas | None = None  # chat completion chunks, on first use
        if self.config.starts_in_thinking:
            self._sm.current_state = ParseState.THINKING
            pairs = self.config.thinking_pairs
            self._thinking.begin(tuple(end for _, end in pairs), tuple(start for start, _ in pairs))
        # The current state's reader, kept in step with the state by _move() so that the
        # per-chunk loop does not look it up (Enum hashing is a Python-level call).
        self._reader = self._readers[self._sm.current_state]
        # The fast path of feed() (see _select_fast_path): None while it is off; _held
        # is the fast path of a chunk that follows held text.
        self._plain: Callable[[str, list[ParseEvent]], bool] | None = None
        self._held: Callable[[str, list[ParseEvent]], bool] | None = None
        self._stop: re.Pattern[str] = _NEVER
        self._stop_char = _NEVER_CHAR
        self._select_fast_path()

    def _move(self, trigger: Trigger) -> None:
        """Apply a transition from the table and select the new state's reader.

        An illegal transition (a bug) moves to ``ERROR`` through the table and raises.
        """
        before = self._sm.current_state
        try:
            self._sm.transition(trigger)
        finally:
            state = self._sm.current_state
            self._reader = self._readers[state]
            if state is _TEXT:  # a block ended: the text reader reads what it ended as
                self._cur.settle = True
                self._cur.long_space = False
            # Off until the loop selects the new reader's fast path as it returns (and
            # for good in a stopped state, so that feed() reaches its checks).
            self._plain = self._held = None
            # A state change is rare beside chunks: the place to ask the logger.
            self._cur.debug = debug = _log.isEnabledFor(_DEBUG)
            if debug:
                self._log_move(before, trigger)

    def _log_move(self, before: ParseState, trigger: Trigger) -> None:
        """Record a state change at DEBUG; leaving a tool call on bad markup is a recovery."""
        if trigger is Trigger.TOOL_ABORT:
            _log.debug("recovered: a malformed tool call is delivered as text, reading goes on")
        after = self._sm.current_state
        _log.debug("state %s -> %s (%s)", before.name, after.name, trigger.value)

    def _fail(self, message: str) -> InternalError:
        """An internal error was detected: move to ``ERROR`` and return the exception."""
        self._move(Trigger.BUG)
        return InternalError(message)

    # --- configuration -----------------------------------------------------------------

    def use(self, plugin: ParsePlugin) -> StreamToolParser:
        """Register a plugin (after those already registered) and return the parser.

        ``plugin`` is a :class:`~stream_parser.core.plugins.ParsePlugin` with tags of
        its own, or a plugin in the line shape: one with ``can_handle(content, state)``
        and ``process(content)`` and no ``start_tags``, which an adapter runs over the
        lines of text (see :mod:`~stream_parser.core._line_plugins`).

        Raises:
            ConfigError: the parser has already been fed, or a tag is already claimed.
        """
        if not self._untouched():
            raise ConfigError("plugins must be registered before the first feed()")
        self._add_plugin(plugin)
        self._compile()
        self._select_fast_path()
        return self

    def add_plugin(self, plugin: ParsePlugin) -> StreamToolParser:
        """The same as :meth:`use`: register a plugin and return the parser."""
        return self.use(plugin)

    def reset(self) -> None:
        """Start a new reply on the same tools, configuration and plugins.

        Whatever the parser was doing is dropped: held text, an open block, pending
        reasoning.  Spans and call indexes restart at 0, each plugin's ``reset()`` is
        called, and a closed parser (or one stopped by an internal error) is open again.
        :meth:`parse_stream` and :meth:`aparse_stream` call it on a closed parser, so a
        parser serves one stream after another.
        """
        self._sm.current_state = ParseState.TEXT
        self._build_readers()
        # The dialects' plugins are made anew (they are the parser's own, registered
        # first); the user's plugins are told.
        fresh = [cast(ParsePlugin, p) for p in dialect_plugins(self.config.dialects)]
        for plugin in fresh:
            plugin.bind(self._context)
        self._plugins[: len(fresh)] = fresh
        for plugin in self._plugins[len(fresh) :]:
            plugin.reset()
        if self._lines is not None:
            self._lines.reset()
        self._compile()
        self._begin()
        if self._cur.debug:
            _log.debug("reset: a new reply starts")

    @property
    def state_manager(self) -> ParseStateManager:
        """The parser's state: ``current_state``, ``current_tool_name``, ``buffer``, ``reset()``."""
        return self._sm

    def current_tool_name(self) -> str | None:
        """The tool of the call open in the XML format, or None outside one."""
        if self._sm.current_state is not ParseState.TOOL:
            return None
        block = cast(ToolReader, self._readers[ParseState.TOOL]).block
        return None if block is None else block.spec.name

    def _untouched(self) -> bool:
        """Whether no content was read yet (reasoning on its own channel aside)."""
        # The fast path does not set _started: a chunk it took moved the offset, or is
        # held.
        return not (self._started or self._cur.offset or self._tail)

    @property
    def plugins(self) -> tuple[ParsePlugin, ...]:
        """The registered plugins, in order: those with tags, then those in the line shape."""
        lines = self._lines
        return tuple(self._plugins) if lines is None else (*self._plugins, *lines.plugins)

    def _add_plugin(self, plugin: ParsePlugin) -> None:
        if is_line_plugin(plugin):
            if isinstance(plugin, ParsePlugin):
                plugin.bind(self._context)
            if self._lines is None:
                self._lines = LinePlugins(self.config.max_tool_size)
            self._lines.add(plugin)
            return
        if not isinstance(plugin, ParsePlugin):
            raise ConfigError(f"{plugin!r} is not a ParsePlugin")
        if not plugin.start_tags:
            raise ConfigError(f"plugin {plugin.name!r} needs start_tags")
        if any(p.name == plugin.name for p in self._plugins):
            raise ConfigError(f"a plugin named {plugin.name!r} is already registered")
        plugin.bind(self._context)
        self._plugins.append(plugin)

    def _compile(self) -> None:
        """Set the table of the tags that open blocks in text (shared, see above)."""
        plugins = self._plugins
        tags = tag_tables(self._tables, self.config, tuple(plugin_tags(p) for p in plugins))
        table, later = tags.table, tags.later
        if plugins:
            table = table.with_plugins({tag: p for p in plugins for tag in p.start_tags})
            if later is not tags.table:
                later = later.with_plugins(
                    {tag: p for p in plugins if not p.reply_start_only for tag in p.start_tags}
                )
            else:
                later = table
        # The call start tags that end an open reasoning block, with their own guard.
        self._thinking.set_enders(
            tuple(
                TagSpec(tag, TagKind.PLUGIN, plugin=p, next_chars=p.ends_reasoning)
                for p in plugins
                if p.ends_reasoning
                for tag in p.reasoning_tags or p.start_tags
            )
        )
        # Only while a tag waits for the start of the reply does the text reader track it.
        self._cur.reply_start = any(p.reply_start_only for p in plugins)
        self._text.configure(
            table, tags.stop, self._tables.names, tags.reserved, later, tags.later_stop
        )

    # --- public API ----------------------------------------------------------------------

    @property
    def state(self) -> ParseState:
        """The current state."""
        return self._sm.current_state

    @property
    def pending(self) -> str:
        """The held-back tail: received text that cannot be decided yet."""
        return self._tail

    @property
    def offset(self) -> int:
        """Offset of the first character not yet delivered in an event."""
        return self._cur.offset

    def next_call_index(self) -> int:
        """Reserve the next ``call_index`` (for code that emits tool calls of its own)."""
        return self._cur.next_call_index()

    def _arrival(self) -> Span:
        """The zero-width span of an event from a side channel: where it came in the text.

        That is after every character of text received so far, the held tail included,
        not at :attr:`offset`: how much is still held depends on where the chunks were
        cut, and the span of reasoning, native calls, usage or a stream error must not.
        """
        at = self._cur.offset + len(self._tail)
        return at, at

    def feed(self, chunk: str) -> list[ParseEvent]:
        """Parse the next chunk of text and return the events it completes.

        Raises:
            ParserClosedError: the parser was closed.
            InternalError: the parser stopped after an internal error.
            TypeError: ``chunk`` is not a ``str``.
        """
        # Fast path: the chunk contains no character that could matter in the current
        # state, so all of it is plain content of that state.  Most chunks of a long
        # text, thinking block or parameter value go this way: one ``in`` test (the
        # search only when the stop character is there), one call.  Everything else
        # that would forbid it (held text, pending reasoning, a stopped parser) has
        # turned it off (``_plain`` is None), so it is not tested per chunk.
        plain = self._plain
        # (A str subclass takes the slow path.  ``type(chunk) is str`` is cheaper than
        # isinstance, and compiled it reads the type directly, where ``chunk.__class__``
        # would be an attribute lookup.)
        if plain is not None and type(chunk) is str and chunk:
            out: list[ParseEvent] = []
            if self._stop_char not in chunk or (m := self._stop.search(chunk)) is None:
                if plain(chunk, out):
                    return out
            elif self._cut(chunk, m, plain, out):
                return out
        lines = self._lines
        if lines is None:
            return self._feed(chunk)
        # Plugins in the line shape: their adapter holds the text of a line (the fast
        # path is off while one is registered, see _select_fast_path).
        return lines.events(self._feed(chunk))

    def _feed(self, chunk: str) -> list[ParseEvent]:
        """``feed()`` of a chunk that the fast path does not take."""
        if isinstance(chunk, str) and len(chunk) > _SLICE:
            # A block's size guard and its cut tags look at the buffer from the block's
            # start, so a buffer of megabytes would be copied once per block: quadratic
            # in one huge chunk.  Any chunking is read alike, so reading it in slices
            # gives the same events (text deltas come per slice) in linear time.
            out: list[ParseEvent] = []
            lines = self._lines  # the adapter reads the slices' events in feed()
            for start in range(0, len(chunk), _SLICE):
                piece = chunk[start : start + _SLICE]
                out += self.feed(piece) if lines is None else self._feed(piece)
            return out
        held = self._held
        if held is not None and isinstance(chunk, str) and chunk:
            # Text was held: the start of a tag cut by the end of the last chunk (the
            # parser is open, no reasoning is pending: both turn _held off).  If the
            # chunk shows it was none, the held text and the chunk are plain content
            # together (the reader's offset is that of the held text); or the two may
            # end in a cut tag again.
            buf = self._tail + chunk
            self._tail = ""  # in buf; the function may hold a new tail (_hold)
            out = []
            if self._stop_char not in buf or (m := self._stop.search(buf)) is None:
                if held(buf, out):
                    if not self._tail:
                        self._plain, self._held = held, None
                    return out
            elif self._cut(buf, m, held, out):
                return out
            # Refused: nothing was taken, and the loop reads the buffer.
            self._started = True
            self._consume(buf, out)
            return out
        state = self._sm.current_state
        if state is _CLOSED:
            raise ParserClosedError("feed() after close()")
        if state is _ERROR:
            raise InternalError("the parser stopped after an internal error")
        if not isinstance(chunk, str):
            raise TypeError(f"feed() takes str, not {type(chunk).__name__}")
        if not chunk:
            return []
        self._started = True
        out = []
        if self._reasoning is not None:
            self._end_reasoning(out)
        self._consume(self._tail + chunk if self._tail else chunk, out)
        return out

    def _cut(
        self,
        buf: str,
        m: re.Match[str],
        plain: Callable[[str, list[ParseEvent]], bool],
        out: list[ParseEvent],
    ) -> bool:
        """The fast path of a buffer whose first stop is a tag cut by its end.

        With a reader that allows it (``Reader.holds_cut``), what comes before the cut
        tag is plain content and the cut tag is held, as the loop would do, without
        running the loop.  Returns whether the buffer was taken.  Not when nothing comes
        before it: the reader's function, which may refuse (near a size limit, say),
        must see the part taken.
        """
        k = m.start()
        # m.lastindex: is_cut(m), without the call.
        if not k or m.lastindex is None or not self._reader.holds_cut or not plain(buf[:k], out):
            return False
        self._tail += buf[k:]  # after what the function held, if anything (_hold)
        self._plain, self._held = None, plain
        return True

    def _hold(self, text: str) -> None:
        """The text reader's fast path took a chunk but its trailing whitespace: hold it.

        That whitespace waits for the next character, as the start of a cut tag waits
        (see the text reader's whitespace framing); the next chunk is tried with it.
        """
        self._tail = text
        self._plain, self._held = None, self._framed

    def close(self) -> list[ParseEvent]:
        """End the stream: flush what is held, report stream errors and blocks left open.

        Returns ``[]`` when called again.

        Raises:
            InternalError: the parser stopped after an internal error.
        """
        state = self._sm.current_state
        if state is _CLOSED:
            return []
        if state is _ERROR:
            raise InternalError("the parser stopped after an internal error")
        out: list[ParseEvent] = []
        if self._chunks is not None:
            # Half of a surrogate pair held back by the last chunk, its pair never sent.
            rest = self._chunks.flush()
            if rest is not None:
                out += self.feed_delta(rest)
        # What comes from here on goes through the adapter of line-shaped plugins, if
        # any (the events above went through it in feed_delta).
        mark = len(out)
        self._end_reasoning(out)
        # An open plugin block learns whether the stream was cut or ended normally.
        self._cur.cut = self._finish_reason == "length" or bool(self._stream_errors)
        self._cur.final = True
        self._consume(self._tail, out)
        # A stream error is said after every event of the text that came before it, and
        # before what the end of the stream leaves open.  Said when it arrived, it would
        # come before or after the events of held text (a "<" that may begin a tag)
        # depending on where the chunks were cut.
        for error in self._stream_errors:
            self._cur.error(
                out, ErrorType.STREAM_ERROR, f"the stream failed: {error}", self._arrival()
            )
        self._reader.at_end(out)
        self._close_native(out)
        self._move(Trigger.CLOSE)
        lines = self._lines
        if lines is not None:
            out[mark:] = lines.events(out[mark:])
            lines.finish(out)
        return out

    def feed_item(self, item: StreamItem) -> list[ParseEvent]:
        """Parse one stream item of any accepted kind (see :meth:`parse_stream`).

        Raises:
            TypeError: the item is of no accepted kind.
        """
        if isinstance(item, str):
            return self.feed(item)
        if isinstance(item, ChatDelta):
            return self.feed_delta(item)
        if isinstance(item, tuple) and len(item) == 2:
            content, metadata = item
            lines = self._lines
            out = (self.feed(content) if lines is None else self._feed(content)) if content else []
            usage = usage_from_metadata(metadata)
            if usage is not None:
                self._usage(usage, out)
            return out if lines is None else lines.events(out)
        if is_chunk(item):
            if self._chunks is None:
                self._chunks = ChunkDeltas()
            delta = self._chunks.delta(item)
            return [] if delta is None else self.feed_delta(delta)
        helper = helper_event_type(item)
        if helper is not None:
            # The SDK's stream helper: its "chunk" events carry the chunks, and the rest
            # is worked out from them, so only the chunks are read.
            chunk = read_field(item, "chunk") if helper == "chunk" else None
            return self.feed_item(chunk) if chunk is not None and is_chunk(chunk) else []
        raise TypeError(
            f"a stream item must be one of: {ACCEPTED_ITEMS}; got {type(item).__name__}"
        )

    def feed_delta(self, delta: ChatDelta) -> list[ParseEvent]:
        """Parse one streamed chat chunk: content, reasoning, native tool calls, usage.

        A stream error (``delta.error``, the last item of a failed stream) is reported by
        :meth:`close`: its ``stream_error`` event follows the events of all the text that
        came before it, however that text was chunked.
        """
        if self._sm.current_state is _CLOSED:
            raise ParserClosedError("feed_delta() after close()")
        lines = self._lines
        out: list[ParseEvent] = []
        if delta.reasoning:
            self._add_reasoning(delta.reasoning, out)
        if delta.content:
            # (With plugins in the line shape, their adapter reads this call's events
            # once, at the end.)
            out.extend(self.feed(delta.content) if lines is None else self._feed(delta.content))
        if delta.tool_calls:
            self._end_reasoning(out)
            native = self._renumber(self._native_calls().feed(delta.tool_calls, self._arrival()[0]))
            self._cur.extend(out, native)  # a call past max_tool_size is reported as it streams
        if delta.usage is not None:
            self._usage(delta.usage, out)
        if delta.finish_reason is not None:
            self._finish_reason = delta.finish_reason
        if delta.error is not None:
            self._stream_errors.append(delta.error)  # its event comes with close()
        return out if lines is None else lines.events(out)

    def parse_stream(self, stream: Iterable[StreamItem]) -> Iterator[ParseEvent]:
        """Parse a whole synchronous stream, yielding events as they are decided.

        Items may be ``str``, ``bytes`` (decoded incrementally as UTF-8),
        ``(content, metadata)`` tuples (``metadata`` with usage gives a
        :class:`TokenUsageEvent`), :class:`~stream_parser.core.chunks.ChatDelta`, or
        chat completion chunks: the ``openai`` SDK's ``ChatCompletionChunk`` (so the
        SDK's ``Stream`` can be passed as it is, and so can its stream helper,
        ``client.chat.completions.stream()``) or a dict shaped like its JSON (see
        :mod:`~stream_parser.core._sdk_items`).

        On a closed parser it starts a new reply first (:meth:`reset`), so one parser
        may parse one stream after another.

        Raises:
            TypeError: an item is of no accepted kind (the message lists them).
        """
        if self._sm.current_state is _CLOSED:
            self.reset()
        return drive(self, stream)

    def aparse_stream(
        self, stream: AsyncIterable[StreamItem] | Iterable[StreamItem]
    ) -> AsyncIterator[ParseEvent]:
        """Parse an asynchronous stream; the async twin of :meth:`parse_stream`.

        ``stream`` may also be a synchronous iterable (a list, the SDK's ``Stream``).
        On a closed parser it starts a new reply first (:meth:`reset`).
        """
        if self._sm.current_state is _CLOSED:
            self.reset()
        return drive_async(self, stream)

    # --- the loop ------------------------------------------------------------------------

    def _consume(self, buf: str, out: list[ParseEvent]) -> None:
        """Run the readers over ``buf`` (tail + chunk) and keep the undecided rest."""
        pos = 0
        cur = self._cur
        while True:
            reader = self._reader
            pos = reader.run(buf, pos, out)
            if self._reader is reader:  # still in its state: it waits for more input
                break
            if cur.back >= 0:  # a reader gave text back with its state change
                buf, pos = self._go_back(buf)
        if pos:
            cur.before = buf[pos - 1]
            cur.offset += pos
        self._tail = buf[pos:]
        if cur.final and self._tail:
            raise self._fail(f"final pass left {len(self._tail)} characters undecided")
        self._select_fast_path()

    def _go_back(self, buf: str) -> tuple[str, int]:
        """Read again from where a reader gave text back (``Cursor.give_back``).

        When that point lies inside the buffer, only the position moves.  Otherwise the
        given-back text is put before the buffer, whose start moves back to it: at most
        once per ``feed``, since what is read again cannot give back text before it.
        """
        cur = self._cur
        target, text = cur.back, cur.back_text
        cur.back, cur.back_text = -1, ""
        if target >= cur.offset:
            return buf, target - cur.offset
        if cur.offset - target != len(text):
            raise self._fail("text given back does not end where the buffer starts")
        cur.offset = target
        cur.before = cur.back_prev
        return text + buf, 0

    def _select_fast_path(self) -> None:
        """Choose the fast path of feed() for the reader that is now current.

        It stays off while reasoning is pending (the next chunk ends it).  While text is
        held, it is tried on the held text and the next chunk together, by ``_feed``,
        if what the reader holds is only ever a cut tag (``Reader.holds_cut``).
        The stop character is worked out only when the pattern changes: most readers
        return the same pattern each time.
        """
        stop, plain = self._reader.fast_path()
        if self._reasoning is not None or self._lines is not None:
            plain = None
        if stop is None:
            stop = _NEVER
        if stop is not self._stop:
            self._stop = stop
            self._stop_char = _NEVER_CHAR if stop is _NEVER else stop_char(stop)
        if not self._tail:
            self._plain, self._held = plain, None
        elif self._reader.holds_cut:
            self._plain, self._held = None, plain
        else:
            self._plain = self._held = None

    # --- side channels ---------------------------------------------------------------------

    def _add_reasoning(self, text: str, out: list[ParseEvent]) -> None:
        span = self._arrival()
        reasoning = self._reasoning
        if (
            reasoning is None
            and self._sm.current_state is ParseState.THINKING
            and (self.config.start_in_thinking is None or self.config.start_from_template)
            and self._untouched()
        ):
            # The template opens reasoning in the prompt, so the content would start
            # inside it; but this server sends the reasoning on its own channel (it took
            # it out of the content), so the content starts as the reply.  Only a user's
            # own start_in_thinking=True says the content still holds reasoning.
            self._sm.current_state = ParseState.TEXT
            self._thinking.block = None
            self._reader = self._text
        if reasoning is None:
            from ._native import ProviderReasoning  # on first use, as for native calls

            reasoning = self._reasoning = ProviderReasoning(self.config.max_thinking_size)
            self._plain = self._held = None  # the next chunk ends the reasoning first
        if reasoning.add(text):
            # Bounded as a thinking block in the text is: reported once, then the rest
            # only streams.
            self._cur.error(out, ErrorType.THINKING_TOO_LARGE, reasoning.too_large_message(), span)
        if self._cur.emit_deltas:
            out.append(_fast_thinking_delta(text, span))

    def _end_reasoning(self, out: list[ParseEvent]) -> None:
        reasoning = self._reasoning
        if reasoning is not None:
            self._reasoning = None
            out.append(
                ThinkingEvent(
                    content=reasoning.text(),
                    truncated=reasoning.truncated,
                    span=self._arrival(),
                )
            )

    def _usage(self, usage: Any, out: list[ParseEvent]) -> None:
        if usage != self._last_usage:
            self._last_usage = usage
            out.append(TokenUsageEvent(usage_info=usage, span=self._arrival()))

    def _native_calls(self) -> NativeCallAccumulator:
        if self._native is None:
            # Imported on first use: most streams carry no native calls.
            from ._native import NativeCallAccumulator

            self._native = NativeCallAccumulator(
                self.tool_registry,
                emit_deltas=self._cur.emit_deltas,
                max_size=self.config.max_tool_size,
            )
        return self._native

    def _renumber(self, events: list[ParseEvent]) -> list[ParseEvent]:
        """Give native calls stream-wide call indexes, shared with XML and dialect calls.

        The accumulator numbers calls by the provider's index; the stream may also hold
        calls written in the text, so each provider index gets the next free index.
        """
        renumbered: list[ParseEvent] = []
        for event in events:
            index = getattr(event, "call_index", None)
            if index is not None:
                if index not in self._native_index:
                    self._native_index[index] = self.next_call_index()
                event = dataclasses.replace(event, call_index=self._native_index[index])  # type: ignore[type-var]
            renumbered.append(event)
        return renumbered

    def _close_native(self, out: list[ParseEvent]) -> None:
        if self._native is not None:
            # A finish reason that arrived counts even if the transport failed after it
            # (e.g. only the usage chunk was lost); without one, the calls were cut and
            # each open one is `unclosed_tool`, like a call in the text.
            events = self._renumber(self._native.finish(self._finish_reason, self._arrival()[0]))
            self._cur.extend(out, events)
        if self._finish_reason == "length":
            # The reply as a whole was cut by its token limit: said once, after the
            # calls it cut (native ones above, one in the text by the text reader).
            self._cur.error(
                out,
                ErrorType.TRUNCATED,
                "the reply was cut off by its length limit (finish_reason='length')",
                self._arrival(),
            )


def parse_stream(
    stream: Iterable[StreamItem],
    tool_registry: object = None,
    *,
    config: ParserConfig | None = None,
    plugins: Iterable[ParsePlugin] = (),
) -> Iterator[ParseEvent]:
    """Parse a synchronous stream with a new :class:`StreamToolParser`.

    The items are those :meth:`StreamToolParser.parse_stream` takes: text, bytes,
    ``ChatDelta`` items, the ``openai`` SDK's chunks (pass its ``Stream`` as it is)...

    Example:
        >>> [e.kind for e in parse_stream(["<think>hm", "m</think>ok"])]
        ['thinking_delta', 'thinking_delta', 'thinking', 'text']
    """
    parser = StreamToolParser(tool_registry, config=config, plugins=plugins)
    return parser.parse_stream(stream)


def aparse_stream(
    stream: AsyncIterable[StreamItem] | Iterable[StreamItem],
    tool_registry: object = None,
    *,
    config: ParserConfig | None = None,
    plugins: Iterable[ParsePlugin] = (),
) -> AsyncIterator[ParseEvent]:
    """Parse an asynchronous (or synchronous) stream with a new :class:`StreamToolParser`.

    The async twin of :func:`parse_stream`: it takes the same items, so the ``openai``
    SDK's ``AsyncStream`` of chunks can be passed as it is.
    """
    parser = StreamToolParser(tool_registry, config=config, plugins=plugins)
    return parser.aparse_stream(stream)
