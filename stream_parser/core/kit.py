"""The dialect author's kit: one reader base, the plugin that runs it, and its context.

Theory of operation.  A dialect reads tool calls written in its model's format.  The core
finds the call's markers in the stream (split markers, linear time, lossless) and hands
the content between them, piece by piece, to the dialect's plugin
(:class:`~stream_parser.core.plugins.ParsePlugin`).  Almost every format does the same
with that content: it reads one call per block, as a small state machine over text that
may be cut anywhere.  This module is that shape, written once:

* :class:`Reader` -- the one reader base.  Each piece fed is appended to what the last
  piece left undecided (the *hold*); the handler of the current state (a table,
  ``self.handlers``) consumes what it can decide and says whether it must wait for more.
  What is left undecided is held, with its stream offset, for the next piece: a handler
  never sees how the text was cut, so the outcome never depends on chunking.  Once the
  reader is in its malformed state it drops what it is fed; the block comes out as an
  error and its raw text.  A reader says whether the end marker closes the block
  (:meth:`Reader.accepts_end`: not inside a value), may offer the core a fast path for
  the long values (:meth:`Reader.fast_path`, :class:`ValueRun`), and turns the closed
  block into exactly one outcome (:meth:`Reader.finish`).
* :class:`ReaderPlugin` -- the one plugin that runs a reader between its tags: a new
  reader per block with its own call index, the shared outcomes of a block that is too
  large or unclosed.
* :class:`CallContext` -- what a reader may use of the parser for one call: the
  parser's :class:`~stream_parser.core.plugins.PluginContext` and the call's index, with
  the emit helpers (text, parameter and arguments deltas, a side error, a failure with
  the raw text, the call).  Strict mode is applied there, once.

The kit is also the one door from the floors above into the core's private modules
(``_dialect_registry``, ``_json_scan``, ``_sdk_items``, ``_toolset``, ...): it re-exports
what a dialect needs of them (:class:`ValueRun`, :class:`JsonScanner`,
:class:`ThinkingFormat`, :class:`Framing`, :class:`ParsePlugin` and :class:`PluginBlock`
for framing plugins, the registry's :func:`register`), and the hooks the other floors plug
into: the dialect registry's look-ups (:data:`BUILTIN_DIALECTS`,
:func:`check_tool_names`), the reading of SDK chunks for the chat-model adapters
(:class:`ChunkDeltas`, :func:`read_field`, :func:`fix_surrogates`) and the tool-set
converter of the tools layer (:func:`register_tool_converter`, :func:`tool_models`).
Besides the kit, a module outside the core imports only the core's other public modules
(``parser``, ``events``, ``config``, ``plugins``, ``state``, ``chunks``, ``value_run``,
the XML converter ``xml_tools`` / ``xml_write`` / ``xml_tool_parser``), and only the
names in their ``__all__``; ``tests/test_layers.py`` holds every floor to that.
``docs/dialects.md`` ("Adding a dialect") walks through the hermes reader as the
template.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ..errors import ConfigError, StrictModeError
from ..schema.validation import ToolBuildResult, validate_arguments
from ._dialect_registry import (
    BUILTIN_DIALECTS,
    NO_FRAMING,
    QWEN3_FRAMING,
    XML_TOOL_NAMES,
    DialectRecord,
    Framing,
    ModelPattern,
    ToolNameRule,
    check_tool_names,
    dialect_names,
    dialect_plugins,
    dialect_record,
    dialect_thinking,
    model_patterns,
    register,
    registered_records,
    unregister,
)
from ._json_scan import JsonMark, JsonScanner
from ._reasoning import ThinkingFormat
from ._scan import longest_prefix_suffix
from ._sdk_items import ChunkDeltas, fix_surrogates, read_field
from ._toolset import ToolModels, register_tool_converter, tool_models
from .events import (
    ErrorType,
    ParseErrorEvent,
    ParseEvent,
    Span,
    TextOutputEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolParamDeltaEvent,
    _fast_arguments_delta,
    _fast_param_delta,
    shorten_context,
)
from .plugins import FastData, ParsePlugin, PluginBlock, PluginContext, refuse_chunk, tag_stop
from .value_run import ValueRun

if TYPE_CHECKING:
    from pydantic import BaseModel

    from .config import ParserConfig
    from .xml_tools import XMLArgumentConverter

__all__ = [
    "BUILTIN_DIALECTS",
    "NO_FRAMING",
    "QWEN3_FRAMING",
    "XML_TOOL_NAMES",
    "CallContext",
    "ChunkDeltas",
    "DialectRecord",
    "FastData",
    "Framing",
    "JsonMark",
    "JsonScanner",
    "ModelPattern",
    "ParsePlugin",
    "PluginBlock",
    "PluginContext",
    "Reader",
    "ReaderPlugin",
    "StateHandler",
    "ThinkingFormat",
    "ToolBuildResult",
    "ToolModels",
    "ToolNameRule",
    "ValueRun",
    "call_too_large",
    "call_unclosed",
    "check_tool_names",
    "dialect_names",
    "dialect_plugins",
    "dialect_record",
    "dialect_thinking",
    "failure",
    "field_annotation",
    "fix_surrogates",
    "model_patterns",
    "read_field",
    "refuse_chunk",
    "register_tool_converter",
    "register",
    "registered_records",
    "unregister",
    "tag_stop",
    "tool_models",
    "validate_arguments",
]


def failure(
    error_type: ErrorType,
    message: str,
    block: PluginBlock,
    details: tuple[dict[str, Any], ...] = (),
    call_index: int | None = None,
) -> list[ParseEvent]:
    """A block that does not make a call: an error event, then its raw text.

    ``call_index`` ties the error to a call that was announced with that index.

    Example:
        >>> block = PluginBlock("<c>", "</c>", "?", (0, 8))
        >>> [e.kind for e in failure(ErrorType.MALFORMED_TOOL, "not a call", block)]
        ['error', 'text']
    """
    raw = block.raw
    return [
        ParseErrorEvent(
            error_type=error_type.value,
            message=message,
            context=shorten_context(raw),
            details=details,
            call_index=call_index,
            span=block.span,
        ),
        TextOutputEvent(text=raw, span=block.span),
    ]


class CallContext:
    """What a reader may use of the parser for one call, and the helpers that emit.

    Args:
        plugin: the parser's context, as the plugin got it (``ParsePlugin.bind``).
        call_index: the index of this call; None reserves the next one of the stream.

    Attributes:
        call_index: the index of this call (shared by all its events).
        tool_registry: tool name -> Pydantic model of its arguments.
        xml_parser: the parser's argument converter (parameter names of each tool).
        config: the parser's configuration.
        emit_deltas: whether delta events are wanted (``config.emit_deltas``).
    """

    __slots__ = ("call_index", "config", "emit_deltas", "plugin", "tool_registry", "xml_parser")

    def __init__(self, plugin: PluginContext, call_index: int | None = None) -> None:
        self.plugin = plugin
        self.call_index = plugin.next_call_index() if call_index is None else call_index
        self.tool_registry: Mapping[str, type[BaseModel]] = plugin.tool_registry
        self.xml_parser: XMLArgumentConverter = plugin.xml_parser
        self.config: ParserConfig = plugin.config
        self.emit_deltas: bool = plugin.config.emit_deltas

    @classmethod
    def unreserved(cls, plugin: PluginContext) -> CallContext:
        """A context whose index is reserved later (:meth:`reserve`), once it is a call.

        For a format whose block is a call only once its name is read (or that holds
        several calls): the calls of the stream keep their order without gaps.
        """
        return cls(plugin, -1)

    def reserve(self) -> int:
        """Reserve the call's index now (once); return it.

        Example:
            >>> import itertools
            >>> from stream_parser.core.config import ParserConfig
            >>> numbers = itertools.count(7)
            >>> parser = PluginContext({}, None, ParserConfig(), lambda: next(numbers))
            >>> call = CallContext.unreserved(parser)
            >>> call.call_index, call.reserve(), call.reserve()
            (-1, 7, 7)
        """
        if self.call_index < 0:
            self.call_index = self.plugin.next_call_index()
        return self.call_index

    @classmethod
    def of(
        cls,
        tools: Mapping[str, type[BaseModel]],
        config: ParserConfig,
        call_index: int = 0,
        xml_parser: XMLArgumentConverter | None = None,
    ) -> CallContext:
        """A context outside a parser, to drive a reader by hand (tests, tools).

        Example:
            >>> from stream_parser.core.config import ParserConfig
            >>> CallContext.of({}, ParserConfig(), 4).call_index
            4
        """
        if xml_parser is None:
            from .xml_tools import XMLArgumentConverter

            xml_parser = XMLArgumentConverter(dict(tools))
        context = PluginContext(dict(tools), xml_parser, config, lambda: call_index)
        return cls(context, call_index)

    def start(self, tool_name: str, span: Span, call_id: str | None = None) -> ToolCallStartEvent:
        """The event that announces the call (its name is known)."""
        return ToolCallStartEvent(
            tool_name=tool_name, call_index=self.call_index, call_id=call_id, span=span
        )

    def text(self, text: str, span: Span) -> TextOutputEvent:
        """Text that belongs to the reply, not to the call (a framing plugin's, say)."""
        return TextOutputEvent(text=text, span=span)

    def param_delta(
        self, tool_name: str, param: str, delta: str, span: Span
    ) -> ToolParamDeltaEvent:
        """A piece of a parameter's value, as it streams."""
        return _fast_param_delta(tool_name, param, delta, self.call_index, span)

    def arguments_delta(
        self, tool_name: str, delta: str, span: Span, call_id: str | None = None
    ) -> ToolArgumentsDeltaEvent:
        """A piece of the call's JSON arguments, as it streams."""
        return _fast_arguments_delta(tool_name, delta, self.call_index, call_id, span)

    def side_error(
        self, error_type: ErrorType, message: str, span: Span, context: str
    ) -> ParseErrorEvent:
        """An error that does not end the call (an unknown or repeated parameter).

        Raises:
            StrictModeError: the parser is in strict mode.
        """
        event = ParseErrorEvent(
            error_type=error_type.value,
            message=message,
            context=shorten_context(context),
            call_index=self.call_index,
            span=span,
        )
        if self.config.strict:
            raise StrictModeError(event)
        return event

    def failure(
        self,
        error_type: ErrorType,
        message: str,
        block: PluginBlock,
        details: tuple[dict[str, Any], ...] = (),
        *,
        announced: bool = False,
    ) -> list[ParseEvent]:
        """The block makes no call: an error event, then its raw text (:func:`failure`).

        ``announced``: the call was announced, so the error carries its index.
        """
        index = self.call_index if announced else None
        return failure(error_type, message, block, details, index)

    def validate(
        self, tool_name: str, model: type[BaseModel], arguments: dict[str, Any]
    ) -> ToolBuildResult:
        """The arguments validated by the tool's model (unless validation is off)."""
        return validate_arguments(
            tool_name, model, arguments, validate=self.config.enable_xml_validation
        )

    def call(
        self,
        tool_name: str,
        result: ToolBuildResult,
        block: PluginBlock,
        call_id: str | None = None,
    ) -> list[ParseEvent]:
        """The outcome of a built call: the :class:`ToolCallEvent`, or ``invalid_params``."""
        if result.instance is None:
            return failure(
                ErrorType.INVALID_PARAMS, result.message, block, result.errors, self.call_index
            )
        return [
            ToolCallEvent(
                tool_name=tool_name,
                tool_instance=result.instance,
                raw=block.raw,
                call_index=self.call_index,
                call_id=call_id,
                span=block.span,
            )
        ]

    def unknown_tool(self, tool_name: str, block: PluginBlock) -> list[ParseEvent]:
        """A call of a tool that is not registered: ``unknown_tool`` and the raw text."""
        known = ", ".join(sorted(self.tool_registry)) or "none"
        return failure(
            ErrorType.UNKNOWN_TOOL,
            f"unknown tool {tool_name!r} (registered: {known}); the call is not executed",
            block,
        )


def field_annotation(model: type[BaseModel], key: str) -> Any:
    """The annotation of the field a key names (by name or alias), or Any.

    For a format that writes a value as text and converts it by its field's type.

    Example:
        >>> from pydantic import BaseModel, Field
        >>> class Weather(BaseModel):
        ...     days: int = Field(alias="d")
        >>> field_annotation(Weather, "d"), field_annotation(Weather, "x")
        (<class 'int'>, typing.Any)
    """
    fields = model.model_fields
    info = fields.get(key)
    if info is None:
        info = next((f for f in fields.values() if f.alias == key), None)
    return Any if info is None else info.annotation


StateHandler = Callable[[str, int, int, list[ParseEvent]], tuple[int, bool]]
"""One state of a :class:`Reader`: ``(buf, pos, base, out) -> (new pos, wait for more)``.

``buf`` is the held text and the new piece, ``base`` the stream offset of ``buf[0]``."""


class Reader:
    """The one reader base: reads one block's content, piece by piece, as a state machine.

    Subclasses fill :attr:`handlers` (a state -> its :data:`StateHandler`), set the
    first state in ``self.state`` and the state that drops everything in
    :attr:`malformed_state`, and write :meth:`finish`.  A format with a structure of
    its own (a JSON object, followed by a scanner) may override :meth:`feed` instead.

    The core calls :meth:`begin` with the tag that opened the block, :meth:`feed` with
    each piece of content in order, :meth:`accepts_end` when the end marker follows, and
    :meth:`finish` once when the block closed (:meth:`unclosed` or :meth:`too_large`
    when it did not).  Every answer depends only on the characters fed so far, never on
    how they were cut.

    A format without an end marker (a call that ends where its JSON ends) ends the block
    itself: a handler sets :attr:`end` to the stream offset where the block ended and
    returns ``(its position, True)``; the characters after it are not the block's, and
    the core reads them as ordinary input.

    Attributes:
        call: the call's context (:class:`CallContext`).
        announced: a ``ToolCallStartEvent`` was sent for the call.
        state: the current state (a key of :attr:`handlers`).
        handlers: the state table.
        why: why the call is malformed, once it is.
        end: where the block ended (a stream offset), for a format that ends its own
            blocks; None while it goes on.
    """

    malformed_state: ClassVar[int] = -1

    def __init__(self, call: CallContext) -> None:
        self.call = call
        self.announced = False
        self.state = 0
        self.handlers: dict[int, StateHandler] = {}
        self.why = ""
        self.end: int | None = None
        # The text held undecided at the end of the content fed so far.  Read it here (an
        # attribute, not a property: fast paths read it on every chunk); change it only
        # through hold(), take_hold() and drop_hold(), which keep its offset with it.
        self.held = ""
        self._hold_start = 0
        # The content fed so far ends with a value's closing marker and whitespace: the
        # block's end marker, if it comes next, closes the value and the call.
        self._pending_end = False

    @property
    def error_index(self) -> int | None:
        """The ``call_index`` for the block's error events: set once it was announced."""
        return self.call.call_index if self.announced else None

    def take_hold(self, data: str, start: int) -> tuple[str, int]:
        """What is held, then ``data`` (at stream offset ``start``); the hold is emptied.

        Returns the text to read and the stream offset of its first character.  Give back
        what stays undecided with :meth:`hold`.  :meth:`feed` reads each piece so; a fast
        path that reads a chunk itself does the same.

        Example:
            >>> from stream_parser.core.config import ParserConfig
            >>> reader = Reader(CallContext.of({}, ParserConfig()))
            >>> reader.hold("</arg", 10)  # a closing tag cut by the end of a chunk
            >>> reader.take_hold("_value>", 15), reader.held
            (('</arg_value>', 10), '')
        """
        held = self.held
        if not held:
            return data, start
        self.held = ""
        return held + data, self._hold_start

    def hold(self, text: str, start: int) -> None:
        """Keep ``text``, at stream offset ``start``, undecided: the next piece follows it.

        :meth:`feed` does this itself with what its handlers leave.  A fast path
        (:meth:`fast_path`) that reads a chunk on its own holds the start of a marker
        cut by the chunk's end here, so that the next :meth:`feed` reads it first.
        """
        self.held = text
        self._hold_start = start

    def drop_hold(self) -> None:
        """Forget what is held: the block's end decided it (a value closed by the end)."""
        self.held = ""

    def feed(self, data: str, start: int, out: list[ParseEvent]) -> None:
        """Run the state table over the hold and ``data``; hold what is still undecided.

        ``start`` is the stream offset of ``data``.
        """
        malformed = self.malformed_state
        if self.state == malformed:
            return
        self._pending_end = False
        buf, base = self.take_hold(data, start)
        pos = 0
        n = len(buf)
        handlers = self.handlers
        done = False
        while pos < n and not done:
            pos, done = handlers[self.state](buf, pos, base, out)
        if self.state == malformed or self.end is not None:
            pos = n  # nothing more of this block is read
        self.held = buf[pos:]
        self._hold_start = base + pos

    def begin(self, tag: str, span: Span, out: list[ParseEvent]) -> None:
        """The block opened with ``tag`` at ``span`` (its events go to ``out``).

        The default reads nothing from it; a format with several start tags (or one
        that is content, a JSON object's ``{``) reads it here, and may end the block
        right after it (:attr:`end`).
        """

    def malformed(self, why: str) -> tuple[int, bool]:
        """Enter the malformed state (a handler returns this): the rest is not read."""
        self.state = self.malformed_state
        self.why = why
        return 0, True

    @staticmethod
    def cut_marker(buf: str, pos: int, marker: str) -> int:
        """Length of a start of ``marker`` cut by the end of ``buf[pos:]`` (0 if none).

        A handler holds those characters: the next piece says whether they are the
        marker.  Only the last ``len(marker) - 1`` characters are looked at.
        """
        return longest_prefix_suffix(buf, pos, marker)

    def accepts_end(self) -> bool:
        """Whether the end marker that follows the content fed so far closes the block."""
        return True

    def fast_path(self) -> FastData | None:
        """The plugin's fast path for what may be fed next (``ParsePlugin.fast_path``).

        None (the default) feeds every piece through :meth:`feed`.
        """
        return None

    def value_run(self) -> ValueRun | None:
        """The open value the core may stream itself (``ParsePlugin.value_run``)."""
        return None

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """The closed block's outcome: a call, or an error and the raw text."""
        raise NotImplementedError

    def finish_unclosed(self, block: PluginBlock) -> list[ParseEvent] | None:
        """The outcome of a block the stream ended without its end marker, or None.

        None (the default) makes it ``unclosed_tool``.  A format whose model often
        leaves out one close where the call's own end follows (GLM's last
        ``</arg_value>`` before ``</tool_call>``) reads the block as complete here.  Only
        asked when the reply was not cut by its length limit.
        """
        return None

    def unclosed(self, block: PluginBlock) -> list[ParseEvent]:
        """The outcome of a block the stream ended: ``unclosed_tool``, never run.

        Unless the stream was not cut and :meth:`finish_unclosed` reads the block as
        complete.  A format that decides more at the stream's end overrides it.
        """
        if not block.cut:
            recovered = self.finish_unclosed(block)
            if recovered is not None:
                return recovered
        return call_unclosed(block, self)

    def too_large(self, block: PluginBlock) -> list[ParseEvent]:
        """The error events of a block past ``max_tool_size`` (:func:`call_too_large`).

        The core delivers the block as text from then on.
        """
        return call_too_large(block, self, self.call.plugin)

    def malformed_call(self, why: str, block: PluginBlock) -> list[ParseEvent]:
        """The outcome of a call that cannot be read: ``malformed_tool``, never executed."""
        return failure(
            ErrorType.MALFORMED_TOOL,
            f"malformed tool call: {why}; it is not executed and its text is delivered as text",
            block,
            call_index=self.error_index,
        )


def call_too_large(
    block: PluginBlock, reader: Reader | None, context: PluginContext | None
) -> list[ParseEvent]:
    """A call block past ``max_tool_size``: a ``tool_too_large`` error.

    The core then delivers the rest of the block as text; nothing runs.
    """
    max_size = context.config.max_tool_size if context else 0
    return [
        ParseErrorEvent(
            error_type=ErrorType.TOOL_TOO_LARGE.value,
            message=f"the tool call is longer than max_tool_size ({max_size} "
            "characters); it is not executed and its text is delivered as text",
            context=shorten_context(block.raw),
            call_index=None if reader is None else reader.error_index,
            span=block.span,
        )
    ]


def call_unclosed(block: PluginBlock, reader: Reader | None) -> list[ParseEvent]:
    """A call block the stream ended: ``unclosed_tool`` and its raw text, never run."""
    return failure(
        ErrorType.UNCLOSED_TOOL,
        "the stream ended inside a tool call; it is not executed and its text is delivered as text",
        block,
        call_index=None if reader is None else reader.error_index,
    )


_WS = " \t\r\n"


class ReaderPlugin(ParsePlugin):
    """The plugin that runs a :class:`Reader` between its tags: one call per block.

    Set the tags (``start_tags``, ``end_tag``...) and :attr:`reader`.  Each block gets a
    new reader with its own call index (or, with :attr:`reserve_index` off, a context
    whose index the reader reserves once the block proves a call:
    :meth:`CallContext.reserve`).  With ``end_tag = ""`` the reader ends each block
    itself (:attr:`Reader.end`).  A plugin that reads several formats between
    the same tags chooses the reader of a block by its first non-whitespace character:
    it sets :attr:`choose_at_first_char` and overrides :meth:`reader_for`.

    Attributes:
        reader: builds the reader of one block.
        choose_at_first_char: skip the block's leading whitespace and ask
            :meth:`reader_for` at its first other character.
        reserve_index: reserve the call's index when the block opens (else the reader
            does, when it knows the block is a call).
    """

    reader: Callable[[CallContext], Reader] = Reader
    choose_at_first_char: bool = False
    reserve_index: bool = True

    def __init__(self) -> None:
        self._context: PluginContext | None = None
        self._call: CallContext | None = None
        self._reader: Reader | None = None

    def bind(self, context: PluginContext) -> None:
        """Keep the parser's registry, converter, configuration and call counter."""
        self._context = context

    def reader_for(self, first: str) -> Callable[[CallContext], Reader]:
        """The reader of a block whose first non-whitespace character is ``first``."""
        return self.reader

    def on_start(self, tag: str, span: Span) -> list[ParseEvent]:
        """A block opens: reserve its call index (and make its reader, if it is known)."""
        context = self._context
        if context is None:
            raise ConfigError(f"{type(self).__name__} was not registered with a parser")
        self._call = CallContext(context) if self.reserve_index else CallContext.unreserved(context)
        if self.choose_at_first_char:
            self._reader = None
            return []
        reader = self._reader = self.reader(self._call)
        out: list[ParseEvent] = []
        reader.begin(tag, span, out)
        return out

    def ends_at(self) -> int | None:
        """Where the reader ended the block (a format without an end marker), or None."""
        reader = self._reader
        return None if reader is None else reader.end

    def on_data(self, data: str, span: Span) -> list[ParseEvent]:
        """Hand the content to the reader (chosen at the first non-whitespace character)."""
        start = span[0]
        reader = self._reader
        if reader is None:
            if self._call is None:  # pragma: no cover - on_start always runs first
                return []
            stripped = data.lstrip(_WS)
            if not stripped:
                return []
            start += len(data) - len(stripped)
            data = stripped
            reader = self._reader = self.reader_for(data[0])(self._call)
        out: list[ParseEvent] = []
        reader.feed(data, start, out)
        return out

    def accepts_end(self) -> bool:
        """Ask the reader (a closing marker inside a value is content)."""
        return self._reader is None or self._reader.accepts_end()

    def fast_path(self) -> FastData | None:
        """The reader's fast path."""
        reader = self._reader
        return None if reader is None else reader.fast_path()

    def value_run(self) -> ValueRun | None:
        """The reader's open value, asked with its fast path."""
        reader = self._reader
        return None if reader is None else reader.value_run()

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:
        """The call, or an error event and the block's raw text."""
        reader, self._reader = self._reader, None
        if reader is None:
            return failure(ErrorType.MALFORMED_TOOL, "the tool call is empty", block)
        return reader.finish(block)

    def on_too_large(self, block: PluginBlock) -> list[ParseEvent]:
        """A ``tool_too_large`` error; the core delivers the block as text."""
        reader, self._reader = self._reader, None
        if reader is None:
            return call_too_large(block, None, self._context)
        return reader.too_large(block)

    def on_unclosed(self, block: PluginBlock) -> list[ParseEvent]:
        """An ``unclosed_tool`` error and the block's raw text: never executed.

        Unless the reader reads the block as complete (:meth:`Reader.unclosed`).
        """
        reader, self._reader = self._reader, None
        if reader is None:
            return call_unclosed(block, None)
        return reader.unclosed(block)
