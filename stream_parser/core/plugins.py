"""ParsePlugin: the hook for blocks with tags of their own.

A plugin declares the tags that open its block (``start_tags``) and the tag that closes
it (``end_tag``).  The core finds those tags in the stream, with the same guarantees as
for thinking blocks (split tags, linear time, lossless), and calls the plugin with
block-scoped hooks; the plugin never sees the parser's buffer, nor the parser itself::

    bind(context)              the plugin was registered with a parser; ``context`` (a
                               :class:`PluginContext`) is what it may use of it
    reset()                    the parser starts a new reply (``StreamToolParser.reset``)
    on_start(tag, span)        the start tag was seen
    on_data(data, span)        a piece of the block's content (any number of times)
    accepts_end()              the end tag follows the data seen so far: does it close
                               the block?  (False: it is content, e.g. inside a string)
    on_end(block)              the end tag closed the block; return the block's events
    on_too_large(block)        the block passed max_tool_size; return error events (the
                               core delivers the block as text from then on)
    on_unclosed(block)         the stream ended inside the block (``block.cut`` says
                               whether the stream was cut or ended normally)
    ends_at()                  after ``on_start`` and each ``on_data``: the absolute
                               offset where the block ended, for a plugin that ends its
                               own blocks (no end tag: a JSON value's end), or None
    fast_path()                optional: for content that changes nothing but the
                               plugin's position (inside a JSON string, say), a pattern
                               of the characters that matter and a function that takes
                               a chunk without them in one step (or refuses it)

A block ends in one of two ways.  Either the core finds the plugin's ``end_tag`` (and
the plugin ``accepts_end``), or the plugin says where its block ended: ``ends_at()``
returns an offset inside the data it was just given (or the end of its start tag).
The core then closes the block there, hands the plugin the content up to that offset
(``on_end``) and reads the rest of the data as ordinary input: text, thinking, other
blocks.  A plugin with ``end_tag = ""`` ends its blocks only that way (or at the end of
the stream).  Because the plugin decides from the characters it was given, never from
how they were cut, the outcome does not depend on chunking.

When the stream ends, what was held back as the possible start of the end tag is content
(``on_data``) if the stream ended normally.  If it was cut (``finish_reason ==
"length"``, a stream error), the end tag the stream cut is whole nowhere: where the end
tag would close the block (``accepts_end``), those characters are not handed to
``on_data`` (a plugin that ends a call at a ``<`` would run a call whose end never
came); they stay in the block that ``on_unclosed`` gets, with ``block.cut`` set.

Markup that is neither text nor a block of its own (a chat format's message headers,
``<|start|>assistant``) is *framing*: a plugin returns it as a
:class:`~stream_parser.core.events.FramingEvent`, which tiles like a block and carries
no text.  A plugin whose blocks are only framing sets ``is_framing``, so that they do not
end the start of the reply (``reply_start_only``).

Losslessness is part of the contract: ``on_end`` and ``on_unclosed`` must return events
whose tiling spans cover ``block.span`` exactly (usually one block event with
``span=block.span``; the defaults return the raw text as a ``TextOutputEvent``).

**The fast path.**  Most chunks of a long call fall inside a value where the plugin only
passes them on (an argument delta) and looks for one or two characters (a closing quote,
a ``<``).  ``fast_path()`` says so: it returns the pattern of those characters (or
None), a function ``take(data, start, out)``, and whether the end tag is content where
the plugin stands (inside a JSON string, say, where ``accepts_end`` would say False).
The core then hands every chunk that holds no match of the pattern, nor (unless it is
content) the end tag or its start cut by the chunk's end, to ``take`` directly, without
``on_data``, ``ends_at`` or the end-tag search.  ``take`` either refuses the chunk
(returns False having changed nothing: the chunk then goes the usual way) or does exactly
what ``on_data`` would do with it (appending the events to ``out`` instead of returning
them, never an error) and returns True.  Either way what ``fast_path`` returned must still
be right for the next chunk: the core keeps using it, and asks again only after a piece
of content that went the usual way.

Inside a tool call's parameter value, a plugin may go one step further: ``value_run()``
(asked with ``fast_path()``) returns its :class:`~stream_parser.core.value_run.ValueRun`,
the record of the open value (tool, parameter, call index, where the value ends, and the
character that needs the plugin).  While the run is ``armed``, a chunk without its
``stop`` is taken by the core itself: it emits the ``ToolParamDeltaEvent`` (or, for a run
of ``arguments``, the ``ToolArgumentsDeltaEvent``) and moves ``run.end``, without calling
``take``.  The plugin keeps ``armed`` true only while
such a chunk would be all value, and reads the value's end from ``run.end``.  A run with
a ``JsonScanner`` takes the chunks the scanner takes whole; its plugin's function then has
nothing left to take, and :func:`refuse_chunk` serves.

Register plugins with ``StreamToolParser(..., plugins=[...])`` or ``parser.use(plugin)``
(``parser.add_plugin(plugin)`` is the same).  :class:`FencedCodePlugin` is a complete
example.  A plugin written in the line shape, ``can_handle(content, state)`` and
``process(content)`` without tags, is run by the adapter of
:mod:`~stream_parser.core._line_plugins`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .events import (
    CodeBlockDeltaEvent,
    CodeBlockEvent,
    ErrorType,
    ParseErrorEvent,
    ParseEvent,
    Span,
    TagDeltaEvent,
    TextOutputEvent,
)
from .value_run import ValueRun

if TYPE_CHECKING:
    from ._toolset import ToolModels
    from .config import ParserConfig
    from .xml_tools import XMLArgumentConverter

__all__ = [
    "CustomTagPlugin",
    "EventFactory",
    "FastData",
    "FencedCodePlugin",
    "ParsePlugin",
    "PluginBlock",
    "PluginContext",
    "ValueRun",
    "refuse_chunk",
    "tag_stop",
]

FastData = tuple["re.Pattern[str] | None", Callable[[str, int, list[ParseEvent]], bool], bool]
"""A plugin's fast path (``ParsePlugin.fast_path``): the pattern of the characters that
need ``on_data`` (None: the function decides alone); ``take(data, start, out)``, which
takes a chunk of content at absolute offset ``start`` that holds none of them, or
refuses it (False); and whether the end tag is content where the plugin stands (then
the core does not look for it in such chunks)."""


def refuse_chunk(data: str, start: int, out: list[ParseEvent]) -> bool:
    """A fast-path function that takes no chunk (``ParsePlugin.fast_path``).

    For a plugin whose armed :class:`ValueRun` with a scanner takes every chunk its own
    function would: what the scanner does not take goes the usual way (``on_data``).
    """
    return False


def tag_stop(tags: Iterable[str]) -> re.Pattern[str]:
    """A pattern that finds each of ``tags`` in a chunk, or the start of one cut by its end.

    For a fast path (``ParsePlugin.fast_path``): a chunk without a match neither holds a
    tag nor ends with a part of one, so no tag can begin in it, whatever comes next.
    Unlike a check of the first characters (``</``), it lets ``</td>`` through when the
    tags are ``</parameter>`` and ``</function>``.

    Example:
        >>> stop = tag_stop(["</parameter>"])
        >>> [bool(stop.search(chunk)) for chunk in ("a</td>b", "a</param", "</parameter>x")]
        [False, True, True]
    """
    alternatives: list[str] = []
    for tag in sorted(set(tags)):
        alternatives.append(re.escape(tag))
        if len(tag) > 1:
            # Its proper prefixes at the end of the chunk: t(?:a(?:g)?)?\Z for "tags".
            inner = ""
            for char in reversed(tag[1:-1]):
                inner = f"(?:{re.escape(char)}{inner})?"
            alternatives.append(f"{re.escape(tag[0])}{inner}\\Z")
    return re.compile("|".join(alternatives))


@dataclass(frozen=True, slots=True)
class PluginContext:
    """What a plugin may use of the parser it is registered with (see ``bind``).

    A plugin gets this instead of the parser so that it depends on four things, not on
    the parser's internals, and so that plugins (which live in layers above the core)
    never import the parser class.

    Attributes:
        tool_registry: tool name -> Pydantic model of its arguments.
        xml_parser: the parser's argument converter (raw parameter strings -> model
            instance; the parameter names of each tool).
        config: the parser's configuration.
        next_call_index: reserves the next ``call_index`` of the stream, for plugins
            that emit tool calls; calls numbered this way share one sequence with the
            XML calls and native calls of the stream.
    """

    tool_registry: ToolModels
    xml_parser: XMLArgumentConverter
    config: ParserConfig
    next_call_index: Callable[[], int]


@dataclass(frozen=True, slots=True)
class PluginBlock:
    """A finished (or unfinished) plugin block, as handed to ``on_end``/``on_unclosed``.

    Attributes:
        start_tag: the tag that opened the block (with the framing before it, if the
            plugin declares such a tag).
        end_tag: the tag that closed it, with the trailing framing that followed it
            (``ParsePlugin.trailing``); "" when unclosed.
        content: the text between the tags, verbatim.
        span: offsets of the whole block, tags included.
        cut: for ``on_unclosed``: the stream was cut (``finish_reason == "length"`` or a
            stream error) rather than ended normally.  A block that may end with the
            stream (a last call without its end tag) counts only when it was not cut.
    """

    start_tag: str
    end_tag: str
    content: str
    span: Span
    cut: bool = False

    @property
    def raw(self) -> str:
        """The block exactly as it appeared in the stream."""
        return self.start_tag + self.content + self.end_tag

    def between(self, start: int, end: int) -> str:
        """The content from stream offset ``start`` to ``end`` (a part a plugin noted).

        A plugin that notes where a value lies while the block streams takes its text
        here once the block is whole, instead of keeping the value's chunks too.

        Example:
            >>> block = PluginBlock("<v>", "</v>", "hello", (10, 21))
            >>> block.between(15, 17)
            'll'
        """
        offset = self.span[0] + len(self.start_tag)  # of the content in the stream
        return self.content[start - offset : end - offset]


class ParsePlugin:
    r"""Base class for plugins; every hook has a sensible default.

    Attributes:
        name: a unique name for the plugin.
        start_tags: the strings that open a block.
        end_tag: the string that closes it; "" when the plugin ends its blocks itself
            (``ends_at``).
        line_start_only: when True, a start tag counts only at the beginning of a line
            (or of the stream).
        next_chars: when set, a start tag opens a block only if the next
            non-whitespace character is one of these, and not right after a backtick
            (or inside a fenced block with ``fence_aware``): the rule that keeps prose
            mentioning an XML tool from running it (rule 3), for a plugin's own calls.
            Otherwise the tag is text.  A value that starts with ``^`` is a complement:
            any non-whitespace character but the ones after it (``"^{<"``: a name).
        named_start: the start tag is followed by a name and ``>`` (``<function=``
            ``NAME>``): ``next_chars`` is then looked for after that ``>``, and a name
            that is empty, longer than 256 characters, or holds whitespace, ``<`` or
            a quote makes the tag text.
        trailing: framing that belongs to a block when it follows the end tag right
            away (the longest that matches; a partial one is not framing).  It is
            part of the block's span and of ``PluginBlock.end_tag``.
        reply_start_only: a start tag counts only at the start of the reply: when
            nothing but whitespace, thinking blocks and framing came before it in the
            stream (a bare JSON call that is the whole reply).  Otherwise it is text.
        is_framing: the plugin's blocks are framing (message headers, end markers):
            opening one does not end the start of the reply.
        ends_reasoning: when set, a start tag written inside an open reasoning block
            ends the block there, and opens its own, if the next non-whitespace
            character is one of these (the notation of ``next_chars``; not after a
            backtick): the servers of the dialect treat a call opener as the implicit
            end of reasoning.  ``"^"`` (a complement of nothing): any character.  ""
            (the default): inside reasoning the tag is thinking.
        reasoning_tags: the start tags that ``ends_reasoning`` applies to; empty (the
            default): all of ``start_tags``.

    A start tag that begins with a newline (framing before a block, ``"\n<tool_call>"``)
    starts a line by itself: ``line_start_only`` does not apply to it.
    """

    name: str = "plugin"
    start_tags: tuple[str, ...] = ()
    end_tag: str = ""
    line_start_only: bool = False
    next_chars: str = ""
    named_start: bool = False
    trailing: tuple[str, ...] = ()
    reply_start_only: bool = False
    is_framing: bool = False
    ends_reasoning: str = ""
    reasoning_tags: tuple[str, ...] = ()

    def bind(self, context: PluginContext) -> None:
        """Called once when the plugin is registered; keep what you need of ``context``.

        A plugin instance belongs to one parser; create one per parser.
        """

    def reset(self) -> None:
        """Called by ``StreamToolParser.reset()``: a new reply starts; forget the last one.

        The default does nothing; a plugin that keeps state across blocks clears it here.
        """

    def on_start(self, tag: str, span: Span) -> list[ParseEvent]:
        """Called when a start tag opens a block.  Return events to emit now."""
        return []

    def accepts_end(self) -> bool:
        """Whether the end tag just found closes the block (default: always).

        Called after ``on_data`` has received everything before the end tag.  Return
        False when, by what the plugin has seen, the tag is part of the content; it is
        then passed to ``on_data`` and the search goes on.  The answer must depend only
        on the data seen, never on how it was chunked.
        """
        return True

    def on_data(self, data: str, span: Span) -> list[ParseEvent]:
        """Called with each piece of block content as it arrives (outside the tiling)."""
        return []

    def ends_at(self) -> int | None:
        """Where the block ended, for a plugin that ends its own blocks; else None.

        Called after ``on_start`` and after each ``on_data``.  Return an absolute offset
        between the start and the end of the span just given (the end of the start tag
        after ``on_start``): the block ends there, ``on_end`` follows with ``end_tag``
        "", and the characters after it are read as ordinary input.  The answer must
        depend only on the characters seen, never on how they were chunked (a JSON
        number, say, ends only when a character that is not part of it arrives).
        """
        return None

    def fast_path(self) -> FastData | None:
        """The fast path for the content that may come next, or None (the default).

        Called after ``on_start`` and after each piece of content handed to ``on_data``.
        See the module's "fast path" for the contract.
        """
        return None

    def value_run(self) -> ValueRun | None:
        """The open parameter value that the core may stream itself, or None (the default).

        Asked right after ``fast_path()`` returned a fast path.  See the module's "fast
        path" for the contract.
        """
        return None

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:
        """Called when the block closes (end tag or ``ends_at``); must tile ``block.span``."""
        return [TextOutputEvent(text=block.raw, span=block.span)]

    def on_too_large(self, block: PluginBlock) -> list[ParseEvent]:
        """Called when the block grows past ``max_tool_size``; return error events only.

        ``block`` holds what was read so far (``end_tag`` is "").  The core then
        delivers the block's text itself, as it streams, up to its end tag; no other
        hook is called for this block.  The default is a ``block_too_large`` error.
        """
        return [
            ParseErrorEvent(
                error_type=ErrorType.BLOCK_TOO_LARGE.value,
                message=f"a {self.name} block is longer than max_tool_size; "
                "it is delivered as text",
                context=block.raw[:200],
                span=block.span,
            )
        ]

    def on_unclosed(self, block: PluginBlock) -> list[ParseEvent]:
        """Called when the stream ends inside the block; must tile ``block.span``."""
        return [
            ParseErrorEvent(
                error_type=ErrorType.UNCLOSED_BLOCK.value,
                message=f"stream ended inside a {self.name} block opened by {block.start_tag!r}",
                context=block.raw[:200],
                span=block.span,
            ),
            TextOutputEvent(text=block.raw, span=block.span),
        ]


class FencedCodePlugin(ParsePlugin):
    r"""Markdown fenced code blocks as their own events.

    A line starting with three backticks opens a block; the info string after them (up
    to the end of that line) is the language; a later line starting with three
    backticks closes it.  While the block is open, :class:`CodeBlockDeltaEvent`\\ s carry
    the code; the closed block is one :class:`CodeBlockEvent`.

    Tool calls inside a fenced block belong to the block (they are code, not calls).
    An unclosed block at the end of the stream is delivered as text after an
    ``unclosed_block`` error.
    """

    name = "fenced_code"
    start_tags = ("```",)
    end_tag = "\n```"
    line_start_only = True

    def __init__(self) -> None:
        self._language_done = False
        self._language: list[str] = []

    def on_start(self, tag: str, span: Span) -> list[ParseEvent]:  # noqa: D102
        self._language_done = False
        self._language = []
        return []

    def on_data(self, data: str, span: Span) -> list[ParseEvent]:  # noqa: D102
        if self._language_done:
            return [CodeBlockDeltaEvent(delta=data, language=self._lang(), span=span)]
        newline = data.find("\n")
        if newline < 0:
            self._language.append(data)
            return []
        self._language.append(data[:newline])
        self._language_done = True
        code = data[newline + 1 :]
        if not code:
            return []
        start = span[0] + newline + 1
        return [CodeBlockDeltaEvent(delta=code, language=self._lang(), span=(start, span[1]))]

    def _lang(self) -> str:
        return "".join(self._language).strip()

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:  # noqa: D102
        info, newline, code = block.content.partition("\n")
        if not newline:
            info, code = block.content, ""
        return [CodeBlockEvent(code=code, language=info.strip(), span=block.span)]


EventFactory = Callable[[str, Span], ParseEvent]
"""Builds a custom tag's event: ``(content, span) -> event`` (see :class:`CustomTagPlugin`)."""

_TAG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.:\-]*")


class CustomTagPlugin(ParsePlugin):
    r"""Any ``<tag>...</tag>`` block as an event of your choosing, without a subclass.

    Args:
        tag: the tag's name (``"note"``, or ``"<note>"``).
        event_factory: builds the block's event when its end tag arrives, from the
            content between the tags (verbatim) and the block's span (tags included):
            ``event_factory(content, span)``.  The event must carry that span (it
            replaces the block in the tiling, so it should be a block event, one whose
            class has ``TILES = True``, such as :class:`CodeBlockEvent` or a class of
            your own).
        emit_deltas: while the block is open, stream its content as
            :class:`TagDeltaEvent`\\ s (and only when the parser's ``emit_deltas`` is on).

    An unclosed block at the end of the stream is an ``unclosed_block`` error and its
    text, as for every plugin.

    Raises:
        ConfigError: ``tag`` is not a tag name; later, when a block ends, an event from
            ``event_factory`` whose span is not the block's (the message names the tag).

    Example:
        >>> from stream_parser import CodeBlockEvent, StreamToolParser
        >>> note = CustomTagPlugin(
        ...     "note", event_factory=lambda content, span: CodeBlockEvent(
        ...         code=content, language="note", span=span))
        >>> parser = StreamToolParser({}, plugins=[note])
        >>> [e.kind for e in parser.feed("<note>hi</note>") + parser.close()]
        ['tag_delta', 'code_block']
    """

    def __init__(self, tag: str, *, event_factory: EventFactory, emit_deltas: bool = True) -> None:
        name = tag[1:-1] if tag.startswith("<") and tag.endswith(">") else tag
        if not isinstance(name, str) or _TAG_NAME.fullmatch(name) is None:
            raise ConfigError(f"CustomTagPlugin: {tag!r} is not a tag name")
        if not callable(event_factory):
            raise ConfigError(f"CustomTagPlugin({name!r}): event_factory must be callable")
        self.tag = name
        self.name = f"custom_tag:{name}"
        self.start_tags = (f"<{name}>",)
        self.end_tag = f"</{name}>"
        self.event_factory = event_factory
        self.emit_deltas = emit_deltas

    def bind(self, context: PluginContext) -> None:  # noqa: D102
        self.emit_deltas = self.emit_deltas and context.config.emit_deltas

    def on_data(self, data: str, span: Span) -> list[ParseEvent]:  # noqa: D102
        if self.emit_deltas and data:
            return [TagDeltaEvent(tag=self.tag, delta=data, span=span)]
        return []

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:  # noqa: D102
        event = self.event_factory(block.content, block.span)
        if getattr(event, "span", None) != block.span:
            raise ConfigError(
                f"CustomTagPlugin({self.tag!r}): event_factory returned {event!r}, whose "
                f"span is not the block's {block.span}; build the event with the span "
                "it is given"
            )
        return [event]
