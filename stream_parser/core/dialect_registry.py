"""Which plugin reads each dialect: a registry the core owns and the dialects fill.

``ParserConfig(dialect=...)`` names the tool-call formats a model writes.  The core
reads its own XML format itself; every other format is read by a
:class:`~stream_parser.core.plugins.ParsePlugin` that the ``dialects`` layer defines.
The core must not import that layer (it sits above the core), so the dialects register
a *plugin factory* per dialect name here when they are imported, and the parser asks
:func:`dialect_plugins` for the plugins of its configuration.  A built-in dialect's
module is imported the first time its plugin or framing is asked for
(:mod:`~stream_parser.core.dialect_names`), so that nothing pays for the dialects
before it names one.

Dialects whose blocks open with the same tag (hermes and qwen3_coder both open with
``<tool_call>``) must share one plugin, because a tag can be claimed only once: they
register the same *plugin key*, and the factory of the first configured one builds the
plugin for all of them.

A dialect also declares its *framing* (:class:`Framing`): the strings a chat template
writes around blocks, such as the newline after ``<think>`` and the blank line after
``</think>`` of the Qwen3 templates.  Framing belongs to the span of the block it frames,
so text and thinking carry what the model meant and nothing is lost.  The framing of
the configured dialects is active (:func:`dialect_framing`); the XML dialect declares
none, so the default configuration reads every character as before.

A dialect may declare its *reasoning format* (:class:`ThinkingFormat`): its thinking
tag pairs, whether its chat template writes the opening tag itself (the reply starts
inside reasoning), and whether a reply may close reasoning with the closing tag alone.
``ParserConfig`` takes the configured dialects' formats when the user sets no thinking
tags (:func:`dialect_thinking`); an explicit setting always wins.

Dialects are combined only when their markers cannot be confused: two plugins of
different plugin keys that claim one start tag, or a dialect's thinking tag that is
another dialect's call tag, make :func:`dialect_plugins` raise a ``ConfigError`` naming
both dialects.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, TypeAlias

from ..errors import ConfigError
from ..schema.names import XML_TOOL_NAME_PATTERN, XML_TOOL_NAME_RULE
from . import dialect_names as _names
from .dialect_names import check_dialect_names, dialect_names, load_dialects
from .reasoning import _THINKING, ThinkingFormat, dialect_thinking

if TYPE_CHECKING:
    from .plugins import ParsePlugin

__all__ = [
    "NO_FRAMING",
    "QWEN3_FRAMING",
    "Framing",
    "PluginFactory",
    "ThinkingFormat",
    "XML_TOOL_NAMES",
    "ToolNameRule",
    "check_dialect_names",
    "check_tool_names",
    "dialect_framing",
    "dialect_names",
    "dialect_plugins",
    "dialect_thinking",
    "register_dialect",
]

PluginFactory: TypeAlias = "Callable[[tuple[str, ...]], ParsePlugin | Sequence[ParsePlugin] | None]"
"""Builds new plugins for the configured dialects that share a plugin key (their names,
in configuration order): one plugin, several, or None when no plugin is needed."""


@dataclass(frozen=True, slots=True)
class Framing:
    r"""The strings a dialect's chat template writes around blocks.

    Each is matched exactly (a partial one is not framing) and belongs to the span of
    the block it frames: the tiling spans still cover the input exactly, but text and
    thinking content do not carry it.

    Attributes:
        thinking_open: right after a thinking start tag; not part of the content.
        thinking_close: right before a thinking end tag; not part of the content.
        after_thinking: right after a thinking end tag; in the thinking block's span.
        before_call: right before a call's start tag (``<tool_call>``); in the call's
            span, so the text before a call does not end with it.  Read by the
            dialect's plugin, which opens its blocks with it too.
    """

    thinking_open: str = ""
    thinking_close: str = ""
    after_thinking: str = ""
    before_call: str = ""

    def merge(self, other: Framing) -> Framing:
        """This framing, with ``other``'s strings where this one declares none."""
        return Framing(
            **{f.name: getattr(self, f.name) or getattr(other, f.name) for f in fields(self)}
        )


NO_FRAMING: Framing = Framing()
"""No framing: every character is read as it is (the XML dialect)."""

QWEN3_FRAMING: Framing = Framing(
    thinking_open="\n", thinking_close="\n", after_thinking="\n\n", before_call="\n"
)
"""The Qwen3 chat templates: ``<think>\n…\n</think>\n\n`` and ``\n<tool_call>``."""


@dataclass(frozen=True, slots=True)
class ToolNameRule:
    """The tool names a dialect's format can carry, when it cannot carry every valid one.

    Attributes:
        pattern: a regular expression a name must match whole.
        words: the rule in words, for the message that refuses a tool.
    """

    pattern: str
    words: str


XML_TOOL_NAMES: ToolNameRule = ToolNameRule(
    XML_TOOL_NAME_PATTERN, "an XML tag name: " + XML_TOOL_NAME_RULE
)
"""The names the xml dialect carries: its calls are XML tags named after the tool."""

# dialect -> its rule, for the dialects that cannot carry every valid name.
_NAME_RULES: dict[str, ToolNameRule] = {"xml": XML_TOOL_NAMES}


def check_tool_names(dialects: Sequence[str], names: Iterable[str]) -> None:
    """Refuse a tool whose name a dialect's format cannot carry.

    A parser calls this when it compiles its tools, unless its calls may also come
    natively (``ParserConfig(native_tools=True)``, as a ``FunctionCallAgent``'s parser:
    such a tool is then read from native calls only); a ``ReActAgent`` calls it when it
    is made, so that the error comes before the first request.

    Raises:
        ConfigError: naming the tool, the dialect and its rule.
    """
    if any(d not in _NAME_RULES for d in dialects):
        # A dialect registers its rule when its module loads, on first use.
        load_dialects(dialects)
    rules = [(d, _NAME_RULES[d]) for d in dialects if d in _NAME_RULES]
    if rules:
        _check_names(tuple(rules), tuple(names))


@functools.lru_cache(maxsize=64)
def _check_names(rules: tuple[tuple[str, ToolNameRule], ...], names: tuple[str, ...]) -> None:
    # Cached: a parser is made per stream, and its tools rarely change.
    for dialect, rule in rules:
        matcher = re.compile(rule.pattern + r"\Z")
        for name in names:
            if not matcher.match(name):
                raise ConfigError(
                    f"tool {name!r} cannot be called in the {dialect} dialect: its format "
                    f"needs {rule.words}; read it with a dialect that carries such names "
                    "(hermes, qwen3_coder...), rename the tool, or, when its calls come as "
                    "native tool calls, set ParserConfig(native_tools=True)"
                )


def _no_plugin(names: tuple[str, ...]) -> ParsePlugin | None:
    return None


# name -> (plugin key, factory).  "xml" is the core's own format and needs no plugin; it
# is known even when the dialects layer was never imported (the core used on its own).
_DIALECTS: dict[str, tuple[str | None, PluginFactory]] = {"xml": (None, _no_plugin)}


def _registered() -> Collection[str]:
    return _DIALECTS  # looked up at each call: a test may put a copy in its place


# ParserConfig checks its names against this registry too.
_names.registered = _registered
# name -> framing, for the dialects that declare one.
_FRAMING: dict[str, Framing] = {}


def register_dialect(
    name: str,
    plugin_key: str | None,
    factory: PluginFactory,
    framing: Framing = NO_FRAMING,
    *,
    thinking: ThinkingFormat | None = None,
    tool_names: ToolNameRule | None = None,
) -> None:
    """Make a dialect name known to ``ParserConfig(dialect=...)``.

    Args:
        name: the dialect's name.
        plugin_key: dialects with the same key share one plugin; None when the dialect
            needs no plugin (the factory is then never called).
        factory: builds the plugin (see :data:`PluginFactory`).  Registering a name
            again replaces its entry.
        framing: the strings its chat template writes around blocks (:class:`Framing`).
        thinking: its reasoning format (:class:`ThinkingFormat`); None keeps the
            defaults (``DEFAULT_THINKING_TAGS``).
        tool_names: the names its format can carry (:class:`ToolNameRule`), when not
            every valid tool name; an agent speaking it refuses any other tool
            (:func:`check_tool_names`), and its parser reads no call of one.
    """
    _DIALECTS[name] = (plugin_key, factory)
    if tool_names is None:
        _NAME_RULES.pop(name, None)
    else:
        _NAME_RULES[name] = tool_names
    _FRAMING[name] = framing
    if thinking is None:
        _THINKING.pop(name, None)
    else:
        _THINKING[name] = thinking


def dialect_framing(names: Sequence[str]) -> Framing:
    """The framing active for the named dialects: the first declared one of each kind.

    Raises:
        ConfigError: a name is not a registered dialect.
    """
    framing = NO_FRAMING
    load_dialects(names)
    for name in names:
        _entry(name)
        framing = framing.merge(_FRAMING.get(name, NO_FRAMING))
    return framing


def _entry(name: str) -> tuple[str | None, PluginFactory]:
    """A registered dialect's entry (the caller loaded the built-in ones it names).

    Raises:
        ConfigError: the name is not a known dialect.
    """
    entry = _DIALECTS.get(name)
    if entry is None:
        check_dialect_names((name,))
        # Known by name but not registered: a built-in module that did not register it.
        raise ConfigError(f"dialect {name!r} did not register itself when it was loaded")
    return entry


def dialect_plugins(names: Sequence[str]) -> list[ParsePlugin]:
    """New plugin instances for the named dialects.

    Dialects that share a plugin key get one plugin between them, built by the factory
    of the first of them that is named.

    Raises:
        ConfigError: a name is not a registered dialect, or two of them clash: plugins
            of different keys claim one start tag, or one's thinking tag is a tag of
            another's plugins.
    """
    groups: dict[str, list[str]] = {}
    factories: dict[str, PluginFactory] = {}
    load_dialects(names)
    for name in names:
        key, factory = _entry(name)
        if key is not None:
            groups.setdefault(key, []).append(name)
            factories.setdefault(key, factory)
    plugins: list[ParsePlugin] = []
    # A start tag -> the plugin key that claims it and the dialects of that key; the
    # tags (start or end) of the plugins -> the dialects that use them.
    starts: dict[str, tuple[str, tuple[str, ...]]] = {}
    call_tags: dict[str, tuple[str, ...]] = {}
    for key, members in groups.items():
        made = factories[key](tuple(members))
        if made is None:
            continue
        built = list(made) if isinstance(made, Sequence) else [made]
        for plugin in built:
            for tag in plugin.start_tags:
                owner = starts.setdefault(tag, (key, tuple(members)))
                if owner[0] != key:
                    _clash(owner[1], tuple(members), tag, "a start tag of both")
            for tag in (*plugin.start_tags, plugin.end_tag):
                if tag:
                    call_tags.setdefault(tag, tuple(members))
        plugins.extend(built)
    for name in names:
        fmt = _THINKING.get(name)
        for pair in fmt.tags if fmt is not None else ():
            for tag in pair:
                if tag in call_tags:
                    how = "a thinking tag of the first, a call tag of the second"
                    _clash((name,), call_tags[tag], tag, how)
    return plugins


def _clash(first: tuple[str, ...], second: tuple[str, ...], tag: str, how: str) -> None:
    """Raise the error of two dialects whose markers cannot be told apart.

    Raises:
        ConfigError: always.
    """
    raise ConfigError(
        f"dialects {'/'.join(first)} and {'/'.join(second)} cannot be combined: {tag!r} is {how}"
    )
