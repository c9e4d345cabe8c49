"""What the dialects share: the :class:`Dialect` description, block readers, outcomes.

A *dialect* is one way of writing tool calls in text.  It has two faces:

* **Reading.**  A dialect that is not the core's own XML brings a
  :class:`~stream_parser.core.plugins.ParsePlugin` that reads its blocks out of the stream.
  Dialects whose blocks open with the same tag (hermes and qwen3_coder both open with
  ``<tool_call>``) share one plugin, because the tag table lets a tag be claimed once:
  they name the same :attr:`Dialect.plugin_key`, and one plugin is built for all of the
  configured ones (:func:`stream_parser.dialects.dialect_plugins`).
* **Writing.**  :meth:`Dialect.format_call` writes a call in the dialect,
  :meth:`Dialect.format_calls` a reply's several calls the way its model writes them
  (one array, one section, one list, or the calls one after another), and
  :meth:`Dialect.usage_instructions` explains the format, so that an agent whose model
  speaks the dialect can show it in its prompt, and ``stream-parser serve`` can write a
  conversation's past calls as the model's template would.

Each dialect is registered once, as a record on the core's registry
(:meth:`Dialect.record`, :func:`~stream_parser.core.kit.register`): the record's facts
are the class attributes below, and the object itself writes the calls.  Its readers are
built on the kit's one reader base (:class:`~stream_parser.core.kit.Reader`).
"""

from __future__ import annotations

import enum
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Final, cast

from pydantic_core import to_jsonable_python

from ..core.config import DEFAULT_THINKING_TAGS
from ..core.kit import (
    NO_FRAMING,
    XML_TOOL_NAMES,
    DialectRecord,
    Framing,
    ModelPattern,
    ParsePlugin,
    Reader,
    ThinkingFormat,
    ToolNameRule,
)
from ..core.xml_write import write_call
from ..prompts.text import Templates, say

__all__ = ["Dialect", "XmlDialect", "value_text"]

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
            (:class:`~stream_parser.core.kit.Framing`); active when the
            dialect is configured.  None for the XML dialect.
        thinking: the dialect's reasoning format
            (:class:`~stream_parser.core.kit.ThinkingFormat`: its thinking
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
            (:class:`~stream_parser.core.kit.ToolNameRule`), when not every
            valid one; an agent speaking it refuses any other tool.  None: every valid
            name.
        model_patterns: the model names that speak it
            (:class:`~stream_parser.core.kit.ModelPattern`); the built-in dialects'
            are known to the registry before their modules load.
        block_reader: for a format read inside ``<tool_call>``: the reader of a block
            (:class:`~stream_parser.core.kit.Reader`), chosen by ``first_chars``.
        first_chars: the first characters of the ``<tool_call>`` blocks it reads (a
            set, or ``^`` and a complement); "" for what no other format claims.
        reasoning_guard: for a ``<tool_call>`` format whose servers run a call
            written inside reasoning: what may follow ``<tool_call>`` there for the
            tag to end the reasoning (the notation of ``ParsePlugin.next_chars``);
            "" keeps such a tag thinking (``ParsePlugin.ends_reasoning``).
        companion: for a ``<tool_call>`` format, a plugin (given the framing) that
            reads its calls written without ``<tool_call>``.
        markers: the markers inside its blocks that its tokenizer streams as one token
            each (besides its plugins' tags); ``check_dialect`` streams each as one.
        shared_rules: :meth:`usage_instructions` ends with the rules every format
            shares (``call_rules``); False for a format whose own instructions say it all
            (a call that is the whole reply: llama, xlam).
        call_separator: what :meth:`format_calls` writes between two calls by default
            (the text a chat template puts between consecutive calls: a newline, or
            nothing).
    """

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    plugin_key: ClassVar[str | None] = None
    framing: ClassVar[Framing] = NO_FRAMING
    thinking: ClassVar[ThinkingFormat | None] = None
    special_tokens: ClassVar[bool] = False
    parameter_tags: ClassVar[bool] = False
    tool_names: ClassVar[ToolNameRule | None] = None
    model_patterns: ClassVar[tuple[ModelPattern, ...]] = ()
    block_reader: ClassVar[type[Reader] | None] = None
    first_chars: ClassVar[str] = ""
    reasoning_guard: ClassVar[str] = ""
    companion: ClassVar[type[ParsePlugin] | None] = None
    markers: ClassVar[tuple[str, ...]] = ()
    shared_rules: ClassVar[bool] = True
    call_separator: ClassVar[str] = "\n"

    def record(self) -> DialectRecord:
        """The dialect's record for the registry: its facts, and itself as the writer.

        Example:
            >>> record = XmlDialect().record()
            >>> record.name, record.key, record.tool_names is not None
            ('xml', None, True)
        """
        return DialectRecord(
            self.name,
            plugins=None if self.plugin_key is None else self.make_plugin,
            plugin_key=self.plugin_key,
            framing=self.framing,
            thinking=self.thinking,
            special_tokens=self.special_tokens,
            tool_names=self.tool_names,
            model_patterns=self.model_patterns,
            dialect=self,
            block_reader=self.block_reader,
            first_chars=self.first_chars,
            # A companion's class takes the dialect's framing (BareFunctionPlugin).
            companion=cast("Callable[[Framing], ParsePlugin] | None", self.companion),
            markers=self.markers,
        )

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

    def format_calls(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        """Write a reply's calls, in order, as a model speaking this dialect writes them.

        By default each call is written by :meth:`format_call` and the calls are joined
        by :attr:`call_separator`, which is right for a format whose model writes each
        call in a block of its own.  A dialect whose model writes several calls in one
        structure (one JSON array, one section of calls, one list) overrides this, so
        that several calls are written in that one structure, as its chat template
        renders a past turn's calls.

        No calls write nothing: ``format_calls([])`` is ``""`` in every dialect, never an
        empty array or section, so a turn without calls adds no text to a reply.  An
        override keeps this.

        Args:
            calls: (tool name, arguments) pairs, in order; arguments as for
                :meth:`format_call`.

        Returns:
            The text of the calls, without a trailing newline; ``""`` for no calls.

        Raises:
            ValueError: a name or value cannot be written (as :meth:`format_call`).

        Example:
            >>> print(XmlDialect().format_calls([("read_file", {"path": "a.py"}), ("now", {})]))
            <read_file>
            <path>a.py</path>
            </read_file><now>
            </now>
        """
        return self.call_separator.join(self.format_call(name, args) for name, args in calls)

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
        if not self.shared_rules:
            return f"{instructions}\n\n{example}"
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
    # Text between two calls is text in this format: a turn's calls go back to back.
    call_separator = ""

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
