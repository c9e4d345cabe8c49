"""What the dialects share: the :class:`Dialect` description, block readers, outcomes.

A *dialect* is one way of writing tool calls in text.  It has two faces:

* **Reading.**  A dialect that is not the core's own XML brings a
  :class:`~stream_parser.core.plugins.ParsePlugin` that reads its blocks out of the stream.
  Dialects whose blocks open with the same tag (hermes and qwen3_coder both open with
  ``<tool_call>``) share one plugin, because the tag table lets a tag be claimed once:
  they name the same :attr:`Dialect.plugin_key`, and one plugin is built for all of the
  configured ones (:func:`stream_parser.dialects.dialect_plugins`).
* **Writing.**  :meth:`Dialect.format_call` writes a call in the dialect and
  :meth:`Dialect.usage_instructions` explains the format, so that an agent whose model
  speaks the dialect can show it in its prompt.

The readers of the ``<tool_call>`` plugin (:class:`BlockReader` subclasses) are fed the
block's content piece by piece, keep only bounded state between pieces (no re-scan of
what came before: linear time), and at the end turn the block into exactly one outcome:
a :class:`~stream_parser.core.events.ToolCallEvent` spanning the block, or an error event
followed by the block's raw text (:func:`failure`).  Nothing here raises on model text.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Final

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from ..core.config import DEFAULT_THINKING_TAGS
from ..core.dialect_registry import (
    NO_FRAMING,
    XML_TOOL_NAMES,
    Framing,
    ThinkingFormat,
    ToolNameRule,
)
from ..core.events import (
    ErrorType,
    ParseErrorEvent,
    ParseEvent,
    TextOutputEvent,
    ToolCallEvent,
    shorten_context,
)
from ..core.xml_write import write_call
from ..errors import StrictModeError
from ..prompts.text import Templates, say
from ..schema.validation import ToolBuildResult, validate_arguments

if TYPE_CHECKING:
    from ..core.config import ParserConfig
    from ..core.plugins import FastData, ParsePlugin, PluginBlock, ValueRun
    from ..core.xml_tools import XMLArgumentConverter

__all__ = [
    "BlockReader",
    "CallContext",
    "Dialect",
    "XmlDialect",
    "call_event",
    "failure",
    "side_error",
    "validate_arguments",
    "value_text",
]

_EXAMPLE_ARGS: Final[Mapping[str, Any]] = {"parameter_name": "value"}


class Dialect:
    """A tool-call format: how to read it (a plugin) and how to write it (for prompts).

    Subclass it to add a dialect, and register an instance in
    :data:`stream_parser.dialects.DIALECTS` under its :attr:`name`.

    Attributes:
        name: the name used in ``ParserConfig(dialect=...)``.
        title: a short human-readable description.
        plugin_key: dialects with the same key share one plugin (their blocks open with
            the same tag); None for the core's own format, which needs no plugin.
        framing: the strings the dialect's chat template writes around blocks
            (:class:`~stream_parser.core.dialect_registry.Framing`); active when the
            dialect is configured.  None for the XML dialect.
        thinking: the dialect's reasoning format
            (:class:`~stream_parser.core.dialect_registry.ThinkingFormat`: its thinking
            tags, a prefilled opening tag, a bare closing tag); None keeps the defaults.
            ``ParserConfig`` uses it unless the user sets thinking tags.
        special_tokens: the dialect's markers are special tokens of the model's
            tokenizer (``[TOOL_CALLS]``, ``<|python_tag|>``...), which servers drop from
            the text unless asked not to; an agent speaking it asks its model for the
            raw output (``OpenAIChatModel``'s ``raw_output`` option).  False for
            markers written as plain text (xml, hermes, qwen3_coder).
        parameter_tags: the dialect names each parameter in markup the parser reads by
            the parameter's tag (``<city>``, ``<parameter=city>``), so a prompt names a
            parameter whose schema name cannot be a tag (``say "hi"``) by its field name
            (``say_hi``), the name that dialect reads; False where the schema's own
            names are written (JSON arguments).
        tool_names: the tool names its format can carry
            (:class:`~stream_parser.core.dialect_registry.ToolNameRule`), when not every
            valid one; an agent speaking it refuses any other tool.  None: every valid
            name.
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    plugin_key: ClassVar[str | None] = None
    framing: ClassVar[Framing] = NO_FRAMING
    thinking: ClassVar[ThinkingFormat | None] = None
    special_tokens: ClassVar[bool] = False
    parameter_tags: ClassVar[bool] = False
    tool_names: ClassVar[ToolNameRule | None] = None

    def make_plugin(self, names: tuple[str, ...]) -> ParsePlugin | Sequence[ParsePlugin] | None:
        """New plugins that read this dialect and the others of ``names``.

        Args:
            names: the configured dialects that share this one's :attr:`plugin_key`,
                in configuration order (this dialect's name among them).

        Returns:
            The plugin (or several), or None when the core reads the dialect itself.
        """
        return None

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write one tool call as a model speaking this dialect would.

        Args:
            tool_name: the tool to call.
            args: argument name -> value; values that are not strings are written as
                JSON (Pydantic models, enums, paths and the like included).

        Returns:
            The text of the call, without a trailing newline.

        Raises:
            ValueError: a value cannot be written so that it reads back unchanged (the
                xml dialect never raises: it falls back to CDATA).
        """
        raise NotImplementedError

    def usage_instructions(
        self,
        example_tool: str = "tool_name",
        example_args: Mapping[str, Any] | None = None,
        *,
        language: str = "en",
        templates: Templates = None,
    ) -> str:
        """Explain the call format to a model, with one example call.

        Args:
            example_tool: the tool named in the example.
            example_args: the example's arguments (default: one placeholder parameter).
            language: the language of the instructions, ``"en"`` or ``"zh"``.
            templates: replacement prompt templates by name (see
                :func:`~stream_parser.prompts.templating.render`).

        Returns:
            A paragraph of instructions followed by the example, for a system prompt.
        """
        example = self.format_call(
            example_tool, _EXAMPLE_ARGS if example_args is None else example_args
        )
        instructions = say(self._instructions(), language, templates)
        rules = say("call_rules", language, templates)
        return f"{instructions}\n\n{example}\n\n{rules}"

    def _instructions(self) -> str:
        """The name of the prompt template that explains this dialect's format."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class XmlDialect(Dialect):
    """The core's own XML format (Cline, auto-coder): ``<tool><param>value</param></tool>``.

    Example:
        >>> print(XmlDialect().format_call("read_file", {"path": "a.py"}))
        <read_file>
        <path>a.py</path>
        </read_file>
    """

    name = "xml"
    parameter_tags = True
    tool_names = XML_TOOL_NAMES
    title = "XML tags named after the tool and its parameters (Cline, auto-coder)"
    plugin_key = None
    # The usual tags, declared so that they stay when combined with a family of its own.
    thinking = ThinkingFormat(DEFAULT_THINKING_TAGS)

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write ``<tool>``, one ``<param>value</param>`` per argument, ``</tool>``.

        Written by :func:`~stream_parser.core.xml_write.write_call`: values verbatim (no
        entity escaping, non-strings as JSON by :func:`value_text`), a value with a line
        break on lines of its own (rule 6 of the core removes exactly those newlines
        again), and a value that the parser would not read back unchanged (its own
        closing tag where it could end the value, surrounding whitespace, CDATA markup)
        in CDATA.  Never raises for a value.
        """
        return write_call(tool_name, {param: value_text(value) for param, value in args.items()})

    def _instructions(self) -> str:
        return "xml_instructions"


def value_text(value: Any) -> str:
    """A value as text inside a tag, as the readers convert it back by the field's type.

    Strings verbatim; an enum member as its value; a value whose JSON form is a string
    (``datetime``, ``UUID``, ``Path``...) as that string, without JSON's quotes (which
    would be read as part of it); anything else as JSON, models by alias (as they are
    validated).
    """
    if isinstance(value, enum.Enum):
        return value_text(value.value)
    if isinstance(value, str):
        return value
    jsonable = to_jsonable_python(value, by_alias=True)
    if isinstance(jsonable, str):
        return jsonable
    return json.dumps(jsonable, ensure_ascii=False)


@dataclass(slots=True)
class CallContext:
    """What a block reader needs of the parser for one ``<tool_call>`` block.

    Attributes:
        tool_registry: tool name -> Pydantic model of its arguments.
        xml_parser: converts raw parameter strings to a model instance.
        config: the parser's configuration.
        call_index: the index reserved for this call.
    """

    tool_registry: Mapping[str, type[BaseModel]]
    xml_parser: XMLArgumentConverter
    config: ParserConfig
    call_index: int

    @property
    def emit_deltas(self) -> bool:
        """Whether delta events are wanted."""
        return self.config.emit_deltas


class BlockReader:
    """Reads the content of one block in one format, piece by piece.

    The plugin calls :meth:`feed` with each piece of content in order (leading
    whitespace already skipped), :meth:`accepts_end` when the end tag follows, and
    :meth:`finish` once when the block closed.  Every answer depends only on the
    characters fed so far, never on how they were cut.
    """

    def __init__(self, call: CallContext) -> None:
        self.call = call
        self.announced = False  # a ToolCallStartEvent was sent for the call

    @property
    def error_index(self) -> int | None:
        """The ``call_index`` for the block's error events: set once it was announced."""
        return self.call.call_index if self.announced else None

    def feed(self, data: str, start: int, out: list[ParseEvent]) -> None:
        """Take the next piece of content; ``start`` is its offset in the stream."""
        raise NotImplementedError

    def accepts_end(self) -> bool:
        """Whether the end tag that follows the content fed so far closes the block."""
        return True

    def fast_path(self) -> FastData | None:
        """The plugin's fast path for what may be fed next (``ParsePlugin.fast_path``).

        None (the default) feeds every piece through :meth:`feed`.
        """
        return None

    def value_run(self) -> ValueRun | None:
        """The open value the core may stream itself (``ParsePlugin.value_run``).

        Asked right after :meth:`fast_path`; None (the default) leaves every chunk to it.
        """
        return None

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """The closed block's outcome: a call, or an error and the raw text."""
        raise NotImplementedError


def failure(
    error_type: ErrorType,
    message: str,
    block: PluginBlock,
    details: tuple[dict[str, Any], ...] = (),
    call_index: int | None = None,
) -> list[ParseEvent]:
    """A block that does not make a call: an error event, then its raw text.

    ``call_index`` ties the error to a call that was announced with that index.
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


def side_error(
    call: CallContext, error_type: ErrorType, message: str, span: tuple[int, int], context: str
) -> ParseErrorEvent:
    """An error that does not end the block (unknown or repeated parameter).

    Raises:
        StrictModeError: the parser is in strict mode.
    """
    event = ParseErrorEvent(
        error_type=error_type.value,
        message=message,
        context=shorten_context(context),
        call_index=call.call_index,
        span=span,
    )
    if call.config.strict:
        raise StrictModeError(event)
    return event


def call_event(
    call: CallContext, tool_name: str, result: ToolBuildResult, block: PluginBlock
) -> list[ParseEvent]:
    """The outcome of a built call: the :class:`ToolCallEvent`, or ``invalid_params``."""
    if result.instance is None:
        return failure(
            ErrorType.INVALID_PARAMS, result.message, block, result.errors, call.call_index
        )
    return [
        ToolCallEvent(
            tool_name=tool_name,
            tool_instance=result.instance,
            raw=block.raw,
            call_index=call.call_index,
            span=block.span,
        )
    ]


StateHandler = Callable[[str, int, int, list[ParseEvent]], tuple[int, bool]]
"""One state of a :class:`HeldStateReader`: ``(buf, pos, base, out) -> (pos, done)``."""


class HeldStateReader(BlockReader):
    """A :class:`BlockReader` run as a state machine over held text.

    Each piece fed is appended to what the last piece left undecided (the hold), and the
    handler of the current state consumes what it can decide from ``pos``: it returns the
    new position and whether it must wait for more input (done) or the next state's
    handler goes on.  What is left undecided is held, with its offset in the stream, for
    the next piece.  Once the state is ``malformed_state`` everything fed is dropped.

    Subclasses set ``malformed_state`` and fill ``_handlers`` (a state to its handler).
    """

    malformed_state: ClassVar[int]

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self._state = 0
        self._hold = ""
        self._hold_start = 0
        # The content fed so far ends with the call's closing tag and whitespace inside a
        # value: the block's end tag, if it comes next, closes the value and the call.
        self._pending_end = False
        self._handlers: dict[int, StateHandler] = {}

    def feed(self, data: str, start: int, out: list[ParseEvent]) -> None:
        """Run the state machine over the hold and ``data``; keep what is undecided."""
        malformed = self.malformed_state
        if self._state == malformed:
            return
        self._pending_end = False
        if self._hold:
            buf = self._hold + data
            base = self._hold_start
        else:
            buf = data
            base = start
        pos = 0
        n = len(buf)
        handlers = self._handlers
        done = False
        while pos < n and not done:
            pos, done = handlers[self._state](buf, pos, base, out)
        if self._state == malformed:
            pos = n
        self._hold = buf[pos:]
        self._hold_start = base + pos
