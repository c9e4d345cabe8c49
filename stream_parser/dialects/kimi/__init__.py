r"""The kimi dialect: Moonshot's Kimi models, K2 (special tokens and JSON) and K3 (XTML).

Kimi K2 (K2-Instruct, K2-Thinking, K2.5, Kimi-Linear) writes its calls in a section of
special tokens, each call's arguments one JSON object (on one line, shown in three)::

    <|tool_calls_section_begin|>
    <|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>{"path": "a.py"}
    <|tool_call_end|><|tool_calls_section_end|>

``functions.NAME:IDX`` is the call's id (the ``functions.`` prefix is sometimes
missing); ``IDX`` counts the calls of the conversation.  Kimi K3 writes XTML, a tag
language on three control tokens, with one typed element per argument (on one line,
shown in four)::

    <|open|>tools<|sep|><|open|>call tool="read_file" index="1"<|sep|>
    <|open|>argument key="path" type="string"<|sep|>a.py<|close|>argument<|sep|>
    <|close|>call<|sep|>
    <|close|>tools<|sep|>

Both read as one dialect: each call opens with its own marker, so what the model wrote
tells them apart.  Reasoning is ``<think>…</think>`` (K2) or
``<|open|>think<|sep|>…<|close|>think<|sep|>`` (K3); the chat templates may open it in
the prompt, so a reply may start inside reasoning and show only the closing tag.

Theory of operation
-------------------

Five plugins read a reply (:meth:`KimiDialect.make_plugin`):

* :class:`KimiK2SectionPlugin` reads a K2 section whole (``<|tool_calls_section_begin|>``
  to ``<|tool_calls_section_end|>``, either spelling) with :class:`KimiK2SectionReader`:
  each call inside with a :class:`KimiK2Reader` of its own, and whatever else the
  section holds (whitespace, stray text between its markers) as framing.  The calls'
  outcomes come when the section ends.  See :mod:`.section`.
* :class:`KimiK2Plugin` reads one K2 call written without its section, from
  ``<|tool_call_begin|>`` to ``<|tool_call_end|>``, with :class:`KimiK2Reader`: the
  header up to ``<|tool_call_argument_begin|>`` (bounded) names the tool, which is then
  announced (:class:`~stream_parser.core.events.ToolCallStartEvent` with the header as
  ``call_id``); the arguments follow the core's
  :class:`~stream_parser.core.kit.JsonScanner` and stream verbatim as
  :class:`~stream_parser.core.events.ToolArgumentsDeltaEvent`\ s.  A
  ``<|tool_call_end|>`` inside a JSON string is content.
* :class:`KimiK3Plugin` reads one K3 call, from ``<|open|>call`` to
  ``<|close|>call<|sep|>``, with :class:`KimiK3Reader`, a state machine: the call's
  attributes up to ``<|sep|>`` (``tool=``, ``index=``; ``&quot;`` and ``&amp;``
  decoded), then argument elements, each value streamed as
  :class:`~stream_parser.core.events.ToolParamDeltaEvent`\ s up to its
  ``<|close|>argument<|sep|>``, or one ``<|open|>json type="object"<|sep|>`` element
  holding all arguments as JSON (streamed as arguments deltas).  The reader holds back
  only what may be the start of a marker (a few characters), or a header (at most
  :data:`MAX_HEADER` characters): linear time.
* :class:`KimiK3SectionPlugin` reads K3's ``<|open|>tools<|sep|>`` as framing (a cut
  call when the reply ends right after it).
* :class:`KimiFramingPlugin` reads the rest of the markup around calls and replies
  (``<|close|>tools<|sep|>``, ``<|close|>response<|sep|>``, ``<|close|>message<|sep|>``,
  ``<|im_end|>``, a K2 section end that no opener came before...) as
  :class:`~stream_parser.core.events.FramingEvent`\ s: they tile the input but are
  never text.

Every call comes out as a :class:`~stream_parser.core.events.ToolCallEvent` spanning
it, or as an error and its raw text: ``malformed_tool`` (no
``<|tool_call_argument_begin|>``, a header that names no tool, arguments that are not
one JSON object, K3 markup out of place), ``unknown_tool``, ``invalid_params``
(validation by the tool's model), ``unclosed_tool`` (the stream ended inside the call:
never run) or ``tool_too_large``.  A K3 argument the tool does not have gives
``unknown_param`` and is dropped; one given twice gives ``duplicate_param`` and the last
value wins (the call still runs).  Argument values are converted by the tool's field
types: a K3 ``type="string"`` value is the raw text (converted by the field's type when
the field is not a string), any other type is JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from ...core.events import FramingEvent, ParseEvent, Span
from ...core.kit import ParsePlugin, PluginBlock, register
from ...errors import ConfigError
from .._base import Dialect
from .k2 import KimiK2Plugin, KimiK2Reader, format_k2_call, format_k2_calls
from .k3 import KimiK3Plugin, KimiK3Reader, format_k3_call, format_k3_calls
from .markers import (
    ARGUMENT_BEGIN,
    CALL_BEGIN,
    CALL_END,
    CLOSE,
    K2_FRAMING_TAGS,
    K3_FRAMING_TAGS,
    KIMI_THINKING,
    MAX_HEADER,
    OPEN,
    SEP,
    k2_tool_name,
)
from .section import (
    SECTION_OPENERS,
    KimiK2SectionPlugin,
    KimiK2SectionReader,
    KimiK3SectionPlugin,
)

__all__ = [
    "CALL_END",
    "CLOSE",
    "SEP",
    "K2_FRAMING_TAGS",
    "K3_FRAMING_TAGS",
    "KIMI_THINKING",
    "MAX_HEADER",
    "KimiDialect",
    "KimiFramingPlugin",
    "KimiK2Plugin",
    "KimiK2Reader",
    "KimiK3Plugin",
    "KimiK2SectionPlugin",
    "KimiK2SectionReader",
    "KimiK3Reader",
    "KimiK3SectionPlugin",
    "SECTION_OPENERS",
    "format_k2_call",
    "format_k2_calls",
    "format_k3_call",
    "format_k3_calls",
    "k2_tool_name",
]


class KimiFramingPlugin(ParsePlugin):
    """Reads the K2 and K3 markup around calls and replies as framing, never as text.

    Each tag is a block by itself (:data:`K2_FRAMING_TAGS`, :data:`K3_FRAMING_TAGS`),
    delivered as a :class:`~stream_parser.core.events.FramingEvent`.
    """

    name = "kimi_framing"
    # A section's opener is a section plugin's (KimiK2SectionPlugin, KimiK3SectionPlugin).
    start_tags = tuple(t for t in K2_FRAMING_TAGS + K3_FRAMING_TAGS if t not in SECTION_OPENERS)
    is_framing = True
    # K3's response channel ends its think channel, as the sections' openers do.
    ends_reasoning = "^"
    reasoning_tags = (OPEN + "response" + SEP,)

    def __init__(self) -> None:
        self._end: int | None = None

    def on_start(self, tag: str, span: Span) -> list[ParseEvent]:
        """The block is the tag alone: it ends where the tag ends."""
        self._end = span[1]
        return []

    def ends_at(self) -> int | None:
        """The end of the tag just seen."""
        return self._end

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:
        """The tag as framing."""
        self._end = None
        return [FramingEvent(text=block.raw, span=block.span)]


class KimiDialect(Dialect):
    """Kimi K2 and K3 tool calls (Moonshot AI), read in either format.

    Args:
        variant: the format :meth:`format_call` writes: ``"k2"`` (the default) or
            ``"k3"``.  Both are always read.

    Example:
        >>> for tag in KimiDialect("k3").format_call("ping", {}).split("<|sep|>")[:-1]:
        ...     print(tag)
        <|open|>tools
        <|open|>call tool="ping" index="1"
        <|close|>call
        <|close|>tools
    """

    name = "kimi"
    title = "Kimi special-token sections with JSON arguments (K2) or XTML calls (K3)"
    plugin_key = "kimi"
    thinking = KIMI_THINKING
    special_tokens = True  # its markers are special tokens: servers drop them unless asked
    markers = (CALL_BEGIN, ARGUMENT_BEGIN, CALL_END, OPEN, CLOSE, SEP)

    def __init__(self, variant: Literal["k2", "k3"] = "k2") -> None:
        if variant not in ("k2", "k3"):
            raise ConfigError(f"unknown kimi variant {variant!r} (known: k2, k3)")
        self.variant = variant

    def make_plugin(self, names: tuple[str, ...]) -> list[ParsePlugin]:
        """The K2 section and call plugins, K3's call and tools channel, the framing."""
        return [
            KimiK2SectionPlugin(),
            KimiK2Plugin(),
            KimiK3Plugin(),
            KimiK3SectionPlugin(),
            KimiFramingPlugin(),
        ]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write the call as the chat template of :attr:`variant` renders it.

        Raises:
            ValueError: (K3) a string value holds ``<|close|>argument<|sep|>``.
        """
        if self.variant == "k3":
            return format_k3_call(tool_name, args)
        return format_k2_call(tool_name, args)

    def format_calls(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        """Write a turn's calls in one section (K2) or one tools channel (K3), numbered.

        Raises:
            ValueError: (K3) a string value holds ``<|close|>argument<|sep|>``.
        """
        if self.variant == "k3":
            return format_k3_calls(calls)
        return format_k2_calls(calls)

    def _instructions(self) -> str:
        return "kimi_instructions"


register(KimiDialect().record())
