"""Compiled tables, shared by the parsers of one tool set.

What a parser compiles from its tools (the argument converter,
the tools' lookup data) and from its tags (the tag table of the TEXT state, its stop
pattern) depends only on the tools' names and models, the configuration and the tags
the plugins declare.  An agent builds a new parser for every reply with the same
tools, so those tables are compiled once and kept in two small caches (least recently
used first out, safe to share between threads): one keyed by the tools' *content* and
the configuration, so that a registry changed between two parsers is seen, and one
keyed by those tables and the plugins' tag declarations.  Plugins keep per-stream state,
so each parser still creates and binds its own; the shared tag table is copied with
the parser's own plugins bound to their tags.  The cost of a new parser is then a few
allocations plus one look-up whose key covers the tools' names and models, not a
compilation that grows with the number of tools.

:func:`tool_tables` and :func:`tag_tables` are what :class:`~.parser.StreamToolParser`
calls; the caches themselves are private.
"""

from __future__ import annotations

import dataclasses
import re
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from typing import Any, Final, Generic, TypeVar, cast

from ..errors import ConfigError
from ..schema.names import is_xml_tool_name
from ._dialect_registry import check_tool_names, dialect_thinking
from ._readers import ToolSpec, ToolTable
from ._readers.tool_base import WholeCall
from ._scan import TagKind, TagSpec, TagTable, stop_pattern
from ._toolset import ToolModels, tool_models
from .config import ParserConfig
from .plugins import ParsePlugin
from .xml_tools import XMLArgumentConverter

__all__ = ["PluginTags", "TagTables", "ToolTables", "plugin_tags", "tag_tables", "tool_tables"]

_K = TypeVar("_K", bound=Hashable)
_V = TypeVar("_V")


class _LRU(Generic[_K, _V]):
    """A bounded map that drops its least recently used entry first; thread-safe.

    Two threads that miss the same key both compile and the second ``put`` wins: the
    results are equal, so that costs time once, never correctness.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        # key -> (the key as stored, value): moving an entry by its stored key finds it
        # by identity, without comparing a large key once more.
        self._entries: OrderedDict[_K, tuple[_K, _V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: _K) -> _V | None:
        """The value of ``key`` (now the most recently used), or None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(entry[0])
            return entry[1]

    def put(self, key: _K, value: _V) -> None:
        """Store ``value``, dropping the least recently used entries past the size."""
        with self._lock:
            self._entries.pop(key, None)
            self._entries[key] = (key, value)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        """Drop every entry."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


class _Key:
    """A cache key whose hash is computed once: it covers every tool, so it is long.

    Raises:
        TypeError: a part is not hashable.
    """

    __slots__ = ("_hash", "parts")

    def __init__(self, *parts: object) -> None:
        self.parts = parts
        self._hash = hash(parts)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Key) and self._hash == other._hash and self.parts == other.parts


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class ToolTables:
    """What a parser compiles from its tools and configuration; read-only, shared.

    Compared and hashed by identity: the tag cache uses it as part of its key.
    """

    models_are_input: bool
    """:func:`tool_models` returned the mapping it was given (all values are models).

    The tools themselves are not kept: a registry in the cache would outlive its use.
    """
    xml_parser: XMLArgumentConverter
    whole_call: WholeCall | None
    """The converter's own ``parse_tool_xml``, when its class overrides the built-in one."""
    tools: ToolTable
    names: frozenset[str]
    specs: tuple[TagSpec, ...]
    """The thinking and tool tags of the TEXT state's table (plugins' tags come later)."""


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class TagTables:
    """The TEXT state's tag table for one set of tools and plugin tag declarations."""

    table: TagTable
    """Its plugin tags have no plugin: each parser binds its own instances."""
    stop: re.Pattern[str] | None
    reserved: frozenset[str]
    later: TagTable
    """The table once the reply has started: without the tags of ``reply_start_only``
    plugins, which count only before (their first characters, a space or a ``{``, are
    not looked for in the rest of the reply)."""
    later_stop: re.Pattern[str] | None


PluginTags = tuple[tuple[str, ...], str, bool, str, bool]
"""What a plugin declares that the tag table depends on (see :func:`_plugin_tags`)."""

_CACHE_SIZE: Final = 32
_TOOL_TABLES: _LRU[_Key, ToolTables] = _LRU(_CACHE_SIZE)
_TAG_TABLES: _LRU[Hashable, TagTables] = _LRU(2 * _CACHE_SIZE)


def tool_tables(
    tools: object, config: ParserConfig, xml_parser: XMLArgumentConverter | None
) -> tuple[ToolModels, ToolTables]:
    """The parser's tools (as :func:`tool_models` gives them) and their compiled tables.

    The cache key is the tools' content (every name and value, in order), the
    configuration and the converter given, if any: a registry that gained a tool since
    the last parser gets new tables, and an equal one, even another object, the same.
    A mapping is read without being checked, which costs far less than the check; the
    check runs when its content is compiled, and equal content passes it equally.
    """
    models: ToolModels | None = None
    if isinstance(tools, Mapping):
        mapping: Mapping[Any, Any] = tools
    else:
        # Other forms (a list of tools, functions) are converted first: their content is
        # the converted registry's.
        mapping = models = tool_models(tools)
    # The names and the values as two flat tuples: cheaper to build, hash and compare
    # than pairs.  A dict gives its values in C; any other mapping through __getitem__.
    names = tuple(mapping)
    values = tuple(
        mapping.values() if isinstance(mapping, dict) else map(mapping.__getitem__, names)
    )
    key: _Key | None
    try:
        # The thinking pairs in effect, too: unset, they depend on the dialect registry.
        key = _Key(names, values, config, config.thinking_pairs, xml_parser)
    except TypeError:  # an unhashable value or configuration: compiled for this parser
        key, tables = None, None
    else:
        tables = _TOOL_TABLES.get(key)
    if tables is None:
        if models is None:
            models = tool_models(tools)
        tables = _compile_tools(models, models is tools, config, xml_parser)
        if key is not None:
            _TOOL_TABLES.put(key, tables)
    elif models is None:
        # As tool_models() would: the mapping itself when its values are all models.
        models = cast(ToolModels, tools) if tables.models_are_input else tool_models(tools)
    return models, tables


def _compile_tools(
    models: ToolModels,
    models_are_input: bool,
    config: ParserConfig,
    xml_parser: XMLArgumentConverter | None,
) -> ToolTables:
    converter = (
        xml_parser if xml_parser is not None else XMLArgumentConverter(models, config=config)
    )
    if not config.native_tools:
        # A tool the text formats cannot name would never be read: refused, unless its
        # calls may come natively (a function-calling loop reads them from the side channel).
        check_tool_names(config.dialects, models)
    tools = {name: ToolSpec(name, converter.param_names(name)) for name in models}
    pairs = config.thinking_pairs
    specs = [TagSpec(start, TagKind.THINKING, end_tag=end) for start, end in pairs]
    if "xml" not in config.dialects and (
        config.thinking_tags is not None or dialect_thinking(config.dialects) is not None
    ):
        # A reasoning close with nothing open is framing, with a notice (the text before
        # it was probably reasoning the template opened).  Under XML it is text (rule 2),
        # and so it is in a dialect whose model writes no such tags (llama).
        starts = {start for start, _ in pairs}
        specs += [
            TagSpec(end, TagKind.THINKING_CLOSE)
            for end in dict.fromkeys(end for _, end in pairs)
            if end not in starts
        ]
    if "xml" in config.dialects:
        # A name that cannot be an XML tag (github/create_issue) has no XML calls: such a
        # tool is here only when its calls come natively (ParserConfig.native_tools).
        specs += [
            TagSpec(f"<{name}>", TagKind.TOOL, tool_name=name, next_chars="<")
            for name in models
            if is_xml_tool_name(name)
        ]
    return ToolTables(
        models_are_input=models_are_input,
        xml_parser=converter,
        whole_call=_whole_call(converter),
        tools=ToolTable(tools),
        names=frozenset(models),
        specs=tuple(specs),
    )


_BUILTIN_WHOLE_CALL: Final = "XMLToolParser.parse_tool_xml"
"""The qualified name of the built-in ``parse_tool_xml``, which parses like the parser."""
_PRIVATE_HOOKS: Final = ("_extract_parameters", "_convert_parameter_types")
"""Methods a converter might define expecting the parser to call them; it never does."""


def _whole_call(converter: XMLArgumentConverter) -> WholeCall | None:
    """The converter's ``parse_tool_xml`` when its class overrides the built-in one.

    A parser given such a converter builds each call's model with it, from the call's
    whole text, at its end tag.  A class that defines :data:`_PRIVATE_HOOKS` instead
    would be silently ignored: that is refused.

    Raises:
        ConfigError: the converter's class defines a private hook and no ``parse_tool_xml``.
    """
    if getattr(converter, "_whole_call_off", False):
        return None  # the built-in parse_tool_xml's own parser (see there)
    cls = type(converter)
    method = getattr(cls, "parse_tool_xml", None)
    # The built-in one is known by its name: xml_tool_parser imports the parser, which
    # imports this module, so it cannot be imported here.
    builtin = getattr(method, "__qualname__", "") == _BUILTIN_WHOLE_CALL and getattr(
        method, "__module__", ""
    ) == __name__.replace("_tables", "xml_tool_parser")
    if method is not None and not builtin:
        return cast(WholeCall, converter.parse_tool_xml)  # type: ignore[attr-defined]
    hooks = [name for name in _PRIVATE_HOOKS if hasattr(cls, name)]
    if hooks:
        raise ConfigError(
            f"{cls.__name__} defines {' and '.join(hooks)}, which the parser never calls: "
            "override parse_tool_xml(xml_content, tool_name) instead, which the parser "
            "calls with each call's whole text and whose result becomes tool_instance"
        )
    return None


def plugin_tags(plugin: ParsePlugin) -> PluginTags:
    """What of a plugin goes into the tag table: its tags and how they open a block."""
    return (
        tuple(plugin.start_tags),
        plugin.end_tag,
        plugin.line_start_only,
        plugin.next_chars,
        plugin.reply_start_only,
    )


def tag_tables(
    tools: ToolTables, config: ParserConfig, plugins: tuple[PluginTags, ...]
) -> TagTables:
    """The tag table of ``tools`` and ``plugins``' tags, compiled or from the cache.

    Raises:
        ConfigError: a tag is claimed twice.
    """
    key = (tools, plugins)
    tables = _TAG_TABLES.get(key)
    if tables is None:
        claimed = {tag for starts, _, _, _, _ in plugins for tag in starts}
        # A plugin's tag wins over a reasoning close with the same text.
        specs = [
            s for s in tools.specs if s.kind is not TagKind.THINKING_CLOSE or s.tag not in claimed
        ]
        start_only: set[str] = set()
        for starts, end_tag, line_start_only, next_chars, reply_start_only in plugins:
            if reply_start_only:
                start_only.update(starts)
            specs += [
                TagSpec(
                    tag,
                    TagKind.PLUGIN,
                    end_tag=end_tag,
                    line_start_only=line_start_only,
                    next_chars=next_chars,
                )
                for tag in starts
            ]
        if config.fence_aware and not any(s.tag == "```" for s in specs):
            specs.append(TagSpec("```", TagKind.FENCE, line_start_only=True))
        table = TagTable(specs)
        stop = stop_pattern(table.tags)
        later, later_stop = table, stop
        if start_only:
            later = TagTable([s for s in specs if s.tag not in start_only])
            later_stop = stop_pattern(later.tags)
        tables = TagTables(table, stop, frozenset(table.tags), later, later_stop)
        _TAG_TABLES.put(key, tables)
    return tables
