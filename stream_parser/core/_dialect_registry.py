"""The dialect registry: one record per dialect, on one table the core owns.

Theory of operation.  ``ParserConfig(dialect=...)`` names the tool-call formats a model
writes.  The core reads its own XML format itself; every other format is read by a
:class:`~stream_parser.core.plugins.ParsePlugin` that the ``dialects`` layer defines.  The
core must not import that layer (it sits above the core), so each dialect module
*registers* a :class:`DialectRecord` here when it is imported: its name, the factory of
its plugins, its framing, its reasoning format, whether its markers are special tokens,
the model names that speak it, and the ``Dialect`` object that writes its calls.  Every
question about a dialect -- which plugins a parser needs (:func:`dialect_plugins`), its
framing (:func:`dialect_framing`), its reasoning (:func:`dialect_thinking`), which
dialect a model speaks (:func:`model_patterns`), which tool names it carries
(:func:`check_tool_names`) -- reads that one table.

The built-in dialects are known before any of them is loaded: the table starts with a
*stub* record per built-in name, which holds its module and its model-name patterns
(:data:`BUILTIN_DIALECTS`).  The first question that needs more imports the module by
name (:func:`load_dialects`), and the module's own record takes the stub's place; so
``import stream_parser`` pays for no dialect, and the core never imports the layer by a
statement (the floors keep pointing downward).

Dialects whose blocks open with the same tag (hermes, qwen3_coder and glm all open with
``<tool_call>``) share one plugin, because a tag can be claimed only once: their records
give the same ``plugin_key``, and the factory of the first configured one builds the
plugin for all of them.  Dialects are combined only when their markers cannot be
confused: two plugins of different keys that claim one start tag, or a dialect's
thinking tag that is another dialect's call tag, make :func:`dialect_plugins` raise a
``ConfigError`` naming both dialects.  Registering a name again replaces its record.

A dialect's *framing* (:class:`Framing`) is the strings its chat template writes
around blocks, such as the newline after ``<think>`` of the Qwen3 templates; it belongs
to the span of the block it frames, so text and thinking carry what the model meant and
nothing is lost.  The XML dialect declares none, so the default configuration reads
every character as it is.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from types import MappingProxyType
from typing import Any, Final, Protocol, TypeAlias

from ..errors import ConfigError
from ..schema.names import XML_TOOL_NAME_PATTERN, XML_TOOL_NAME_RULE
from ._reasoning import ThinkingFormat

__all__ = [
    "BUILTIN_DIALECTS",
    "NO_FRAMING",
    "QWEN3_FRAMING",
    "XML_TOOL_NAMES",
    "DialectPlugin",
    "DialectRecord",
    "Framing",
    "ModelPattern",
    "PluginFactory",
    "ThinkingFormat",
    "ToolNameRule",
    "check_dialect_names",
    "check_tool_names",
    "dialect_framing",
    "dialect_names",
    "dialect_plugins",
    "dialect_record",
    "dialect_thinking",
    "load_dialects",
    "model_patterns",
    "register",
    "register_dialect",
    "registered_records",
    "unregister",
]


class DialectPlugin(Protocol):
    """What the registry reads of a plugin (a :class:`~stream_parser.core.plugins.ParsePlugin`).

    The registry does not import the plugin interface, which depends on the
    configuration, which depends on the registry.
    """

    @property
    def start_tags(self) -> tuple[str, ...]: ...

    @property
    def end_tag(self) -> str: ...


PluginFactory: TypeAlias = (
    "Callable[[tuple[str, ...]], DialectPlugin | Sequence[DialectPlugin] | None]"
)
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


NO_FRAMING: Final = Framing()
"""No framing: every character is read as it is (the XML dialect)."""

QWEN3_FRAMING: Final = Framing(
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


XML_TOOL_NAMES: Final = ToolNameRule(
    XML_TOOL_NAME_PATTERN, "an XML tag name: " + XML_TOOL_NAME_RULE
)
"""The names the xml dialect carries: its calls are XML tags named after the tool."""


@dataclass(frozen=True, slots=True)
class ModelPattern:
    r"""A model name that speaks a dialect, and how that model writes its reasoning.

    Names nest across families (``deepseek-r1-distill-qwen`` is a DeepSeek model,
    ``hermes-3-llama-3.1`` a Hermes one), so every pattern has an explicit priority:
    :func:`model_patterns` tries the higher first, and among equal ones the earlier
    registered.

    Attributes:
        pattern: a regular expression searched in the lowercased last path segment of
            the model's name.
        priority: the order in which patterns are tried, highest first.  The built-in
            patterns use 100 to 2,100; 0 (the default) tries a pattern after them all.
        reasoning: the ``(start, end)`` tags of the model's reasoning, or None.
        prefilled: the chat template writes the opening tag itself.

    Example:
        >>> ModelPattern(r"my-?model", 3000).priority
        3000
    """

    pattern: str
    priority: int = 0
    reasoning: tuple[str, str] | None = None
    prefilled: bool = False


@dataclass(frozen=True, slots=True)
class DialectRecord:
    """Everything the package knows of one dialect, registered once (:func:`register`).

    Attributes:
        name: the name used in ``ParserConfig(dialect=...)``.
        plugins: builds the plugins of the configured dialects of its ``plugin_key``
            (:data:`PluginFactory`); None when the core reads the dialect itself.
        plugin_key: dialects with the same key share one plugin (their blocks open with
            the same tag); defaults to the name.
        framing: the strings its chat template writes around blocks.
        thinking: its reasoning format; None keeps the defaults.
        special_tokens: its markers are special tokens of the model's tokenizer, which
            servers drop from the text unless asked not to.
        tool_names: the names its format can carry, when not every valid one.
        model_patterns: the model names that speak it (:func:`model_patterns`).
        dialect: the ``Dialect`` object that writes its calls (for prompts), or None.
        block_reader: for a format read inside ``<tool_call>``: builds the reader of
            one block (a :class:`~stream_parser.core.kit.Reader`); None otherwise.
        first_chars: the first non-whitespace characters of the ``<tool_call>`` blocks
            its reader reads: a set (``"<["``), a complement (``"^{<["``: a name), or
            "" for what no other configured format claims.
        companion: for a ``<tool_call>`` format, a plugin that reads its calls written
            without ``<tool_call>`` (qwen3_coder's bare ``<function=NAME>``).
        markers: the format's markers inside its blocks that the model's tokenizer
            streams as one token each (``[ARGS]``, ``<arg_key>``), besides its
            plugins' tags: ``stream_parser.testing.check_dialect`` streams each as one.
        module: for a built-in dialect not loaded yet, the module of
            ``stream_parser.dialects`` whose import registers its full record.
    """

    name: str
    plugins: PluginFactory | None = None
    plugin_key: str | None = None
    framing: Framing = NO_FRAMING
    thinking: ThinkingFormat | None = None
    special_tokens: bool = False
    tool_names: ToolNameRule | None = None
    model_patterns: tuple[ModelPattern, ...] = ()
    dialect: Any = None
    block_reader: Callable[[Any], Any] | None = None
    first_chars: str = ""
    companion: Callable[[Framing], DialectPlugin] | None = None
    markers: tuple[str, ...] = ()
    module: str = field(default="", repr=False)

    @property
    def key(self) -> str | None:
        """The plugin key of the dialect, None when it needs no plugin."""
        if self.plugins is None:
            return None
        return self.plugin_key or self.name


_SEP: Final = r"[-_. ]?"  # between a family's name and its version: "llama3.1", "llama-3.1"
_THINK: Final = ("<think>", "</think>")


def _patterns(*entries: tuple[int, str, tuple[str, str] | None, bool]) -> tuple[ModelPattern, ...]:
    return tuple(
        ModelPattern(pattern.replace("~", _SEP), priority, reasoning, prefilled)
        for priority, pattern, reasoning, prefilled in entries
    )


# The built-in dialects: module in ``stream_parser.dialects`` and model names, known
# before any is loaded.  The priorities keep the order in which names nest: DeepSeek's R1
# distills carry "qwen" and "llama" but were trained on DeepSeek's template, Qwen3.5 and
# later write Qwen3-Coder's format, Hermes-3-Llama is a Hermes model.
_BUILTIN: Final[Mapping[str, tuple[str, tuple[ModelPattern, ...]]]] = {
    "xml": ("", ()),
    "deepseek": (
        "deepseek",
        _patterns(
            (2100, r"deepseek~r1", _THINK, True),
            # V3.2 and V4: thinking on unless turned off, so the template writes <think>.
            (2050, r"deepseek~v(?:3[._]2|[4-9])(?![0-9])", _THINK, True),
            (2000, r"deepseek", _THINK, False),
        ),
    ),
    "gpt_oss": ("gpt_oss", _patterns((1900, r"gpt~oss", None, False))),
    # Hunyuan-A13B opens <think> itself; the other Hunyuan models' templates are not read.
    "hunyuan": ("hunyuan", _patterns((1920, r"hunyuan~a13b", _THINK, False))),
    # OLMo 3 Think's template ends the prompt with "<think>"; LFM2.5 writes both tags.
    "pythonic": (
        "pythonic",
        _patterns(
            (1990, r"olmo~3.*think", _THINK, True),
            (1980, r"olmo~3(?![0-9])", None, False),
            (1970, r"lfm~2(?![0-9])", _THINK, False),
        ),
    ),
    # M2, M2.1 and M2.5 (whose repository keeps M2's syntax): the template ends the
    # prompt with "<think>\n".  M1 writes another form; M3 is not read yet.
    "minimax_m2": ("minimax_m2", _patterns((1960, r"minimax~m2(?![0-9])", _THINK, True))),
    # The model opens <seed:think> itself (the generation prompt is "assistant\n").
    "seed_oss": (
        "seed_oss",
        _patterns((1950, r"seed~oss", ("<seed:think>", "</seed:think>"), False)),
    ),
    # Granite 3.x and 4 (not granite-20b-functioncalling, which writes another format,
    # nor the guardian and embedding models).  3.2 and 3.3 reason only with
    # thinking=True; 4.0 writes hermes' <tool_call>{...}</tool_call>, which granite reads.
    "granite": (
        "granite",
        _patterns(
            (1940, r"granite~3(?![0-9])(?!.*(?:guardian|embedding))", _THINK, False),
            (1930, r"granite~4(?![0-9])(?!.*(?:guardian|embedding))", None, False),
        ),
    ),
    # xLAM-2, on Llama 3.1 or Qwen 2.5 ("Llama-xLAM-2-8b-fc-r" holds "llama"): the reply
    # is one JSON array; its templates write no reasoning.  xLAM v1 ("xLAM-7b-fc-r")
    # writes {"tool_calls": [...]} and is not this dialect.
    "xlam": ("xlam", _patterns((1930, r"xlam~2(?![0-9])", None, False))),
    # ERNIE 4.5 Thinking: the template ends the prompt with "<think>\n". The VL models'
    # templates are another's.
    "ernie": ("ernie", _patterns((1945, r"ernie~4[._]5(?:(?!vl).)*thinking", _THINK, True))),
    # LongCat-Flash-Chat: no reasoning tags. Its later models write another call format.
    "longcat": ("longcat", _patterns((1942, r"longcat~flash~chat", None, False))),
    "qwen3_coder": (
        "qwen3_coder",
        _patterns(
            (1800, r"qwen3~coder", None, False),
            # Qwen3.5 and later: the template ends the prompt with "<think>\n".
            (1700, r"qwen3[._][5-9](?![0-9])", _THINK, True),
        ),
    ),
    "hermes": (
        "hermes",
        _patterns(
            (1600, r"qwen3.*thinking", _THINK, True),
            (1500, r"qwen3.*instruct~2507", None, False),
            (1400, r"qwq", _THINK, True),
            (1300, r"qwen3", _THINK, False),
            (1200, r"qwen~2", None, False),
            (1100, r"hermes~4", _THINK, False),
            (1000, r"hermes~(?:2~pro|3)", None, False),
        ),
    ),
    "gemma4": (
        "gemma4",
        _patterns((900, r"gemma~4(?![0-9])", ("<|channel>thought", "<channel|>"), False)),
    ),
    "kimi": (
        "kimi",
        _patterns(
            (800, r"kimi~k2.*thinking", _THINK, True),
            (700, r"kimi~k2", None, False),
            (
                600,
                r"kimi~k[3-9](?![0-9])",
                ("<|open|>think<|sep|>", "<|close|>think<|sep|>"),
                True,  # thinking on by default: the template opens it
            ),
        ),
    ),
    # Phi-4-mini (and Phi-4-multimodal, which calls tools the same way); not the
    # reasoning models, which call no tools.
    "phi4_mini": (
        "phi4_mini",
        _patterns((1920, r"phi~4~(?:mini|multimodal)(?!.*reasoning)", None, False)),
    ),
    # InternLM 2 and 2.5 (not the XComposer vision models, whose names put it apart).
    "internlm": ("internlm", _patterns((1910, r"internlm~2(?![0-9])", None, False))),
    "glm": (
        "glm",
        _patterns(
            # GLM-4.7 and 5: the generation prompt is "<|assistant|><think>".
            (550, r"glm~(?:4[-_.]?[7-9](?![0-9b])|[5-9](?![0-9b]))", _THINK, True),
            (500, r"glm~(?:4[-_.]?[5-6](?![0-9b])|z1)", _THINK, False),
            (400, r"glm~4", None, False),
        ),
    ),
    "mistral": (
        "mistral",
        _patterns(
            (300, r"magistral", ("[THINK]", "[/THINK]"), False),
            (200, r"mistral|ministral|mixtral|devstral|codestral", None, False),
        ),
    ),
    "llama": ("llama", _patterns((100, r"llama~(?:3|4)(?![0-9])", None, False))),
}

BUILTIN_DIALECTS: Final[Mapping[str, str]] = MappingProxyType(
    {name: module for name, (module, _) in _BUILTIN.items()}
)
"""The built-in dialect names -> their module in ``stream_parser.dialects`` ("" for the
core's own XML format)."""


# name -> record.  "xml" is the core's own format and needs no plugin: its record is
# whole even when the dialects layer was never imported (the core used on its own).
def _builtin_record(name: str) -> DialectRecord:
    """A built-in dialect's record before its module loads (xml's is whole already)."""
    if name == "xml":
        return DialectRecord("xml", tool_names=XML_TOOL_NAMES)
    module, patterns = _BUILTIN[name]
    return DialectRecord(name, model_patterns=patterns, module=module)


_DIALECTS: dict[str, DialectRecord] = {name: _builtin_record(name) for name in _BUILTIN}
# The record each built-in module registered when it loaded (a module loads once).
_LOADED: dict[str, DialectRecord] = {}

# The package of the built-in dialects, spelt from this module's own name.
_DIALECTS_PACKAGE: Final = __name__.rsplit(".", 2)[0] + ".dialects"


def register(record: DialectRecord) -> None:
    """Register a dialect's record: its name is known to ``ParserConfig`` from now on.

    Registering a name again replaces its record.  A record of a built-in name that
    gives no model patterns keeps the built-in ones.

    Example:
        >>> register(DialectRecord("plain_example"))
        >>> "plain_example" in dialect_names()
        True
    """
    if not record.name:
        raise ConfigError("a dialect record needs a name")
    if not record.model_patterns and record.name in _BUILTIN:
        record = replace(record, model_patterns=_BUILTIN[record.name][1])
    record = replace(record, module="")
    old = _DIALECTS.get(record.name)
    if old is not None and old.module:
        _LOADED[record.name] = record
    _DIALECTS[record.name] = record
    _sorted_patterns.cache_clear()


def register_dialect(
    name: str,
    plugin_key: str | None,
    factory: PluginFactory,
    framing: Framing = NO_FRAMING,
    *,
    thinking: ThinkingFormat | None = None,
    tool_names: ToolNameRule | None = None,
) -> None:
    """Register a dialect by its parts (:func:`register` with a :class:`DialectRecord`).

    Args:
        name: the dialect's name.
        plugin_key: dialects with the same key share one plugin; None when the dialect
            needs no plugin (the factory is then never called).
        factory: builds the plugin (see :data:`PluginFactory`).
        framing: the strings its chat template writes around blocks.
        thinking: its reasoning format; None keeps the defaults.
        tool_names: the names its format can carry, when not every valid one.
    """
    register(
        DialectRecord(
            name,
            plugins=None if plugin_key is None else factory,
            plugin_key=plugin_key,
            framing=framing,
            thinking=thinking,
            tool_names=tool_names,
        )
    )


def unregister(name: str) -> None:
    """Forget a registered dialect (a built-in one gets back its module's own record)."""
    _DIALECTS.pop(name, None)
    if name in _BUILTIN:
        _DIALECTS[name] = _LOADED.get(name) or _builtin_record(name)
    _sorted_patterns.cache_clear()


def load_dialects(names: Iterable[str]) -> None:
    """Import the modules of the named built-in dialects not loaded yet.

    Importing a dialect's module registers its record.  Other names are left alone: the
    caller reports the unknown ones.
    """
    registry = _DIALECTS
    for name in names:
        record = registry.get(name)
        if record is not None and record.module:
            importlib.import_module(f"{_DIALECTS_PACKAGE}.{record.module}")


def dialect_record(name: str, *, writer: bool = False) -> DialectRecord:
    """The record of a dialect, its module loaded first when it is a built-in one.

    Args:
        name: the dialect's name.
        writer: the record must hold the ``Dialect`` that writes its calls (the xml
            dialect's is defined in the ``dialects`` layer, loaded then).

    Raises:
        ConfigError: the name is not a known dialect, or a built-in module did not
            register it.
    """
    load_dialects((name,))
    record = _DIALECTS.get(name)
    if record is not None and writer and record.dialect is None and name in _BUILTIN:
        importlib.import_module(_DIALECTS_PACKAGE)
        record = _DIALECTS.get(name)
    if record is None:
        check_dialect_names((name,))
    if record is None or record.module:
        raise ConfigError(f"dialect {name!r} did not register itself when it was loaded")
    return record


def registered_records() -> Mapping[str, DialectRecord]:
    """Every record, read-only (built-in ones not loaded yet are stubs: ``module`` set)."""
    return MappingProxyType(_DIALECTS)


def dialect_names() -> tuple[str, ...]:
    """Every known dialect name, sorted: the built-in ones and those registered."""
    return tuple(sorted(_DIALECTS))


def check_dialect_names(names: Iterable[str]) -> None:
    """Raise the error of a name that is not a known dialect (none is loaded).

    Raises:
        ConfigError: a name is ``"auto"`` (which needs a model's name), or unknown; the
            message lists the known names.
    """
    for name in names:
        if name in _DIALECTS:
            continue
        if name == "auto":
            raise ConfigError(
                "dialect 'auto' needs the model's name, which a parser configuration does "
                "not have: use ReActAgent(model, tools, dialect='auto') or "
                "@llm_function(protocol='auto') / @llm_chat(protocol='auto'), which read "
                "it from the model, or find the dialect with "
                "stream_parser.dialect_for_model('<model name>').dialect"
            )
        raise ConfigError(f"unknown dialect {name!r} (known: {', '.join(dialect_names())})")


def model_patterns() -> tuple[tuple[re.Pattern[str], str, ModelPattern], ...]:
    """Every model-name pattern, in the order they are tried: ``(compiled, dialect, pattern)``.

    Highest priority first; among equal priorities, the earlier registered dialect and
    its earlier pattern.  Built-in patterns are known without loading their dialects.
    """
    return _sorted_patterns(tuple((n, r.model_patterns) for n, r in _DIALECTS.items()))


@functools.lru_cache(maxsize=8)
def _sorted_patterns(
    entries: tuple[tuple[str, tuple[ModelPattern, ...]], ...],
) -> tuple[tuple[re.Pattern[str], str, ModelPattern], ...]:
    flat = [(name, p) for name, patterns in entries for p in patterns]
    flat.sort(key=lambda item: -item[1].priority)  # stable: registration order in a tie
    return tuple((re.compile(p.pattern), name, p) for name, p in flat)


def check_tool_names(dialects: Sequence[str], names: Iterable[str]) -> None:
    """Refuse a tool whose name a dialect's format cannot carry.

    A parser calls this when it compiles its tools, unless its calls may also come
    natively (``ParserConfig(native_tools=True)``); a ``ReActAgent`` calls it when it is
    made, so that the error comes before the first request.

    Raises:
        ConfigError: naming the tool, the dialect and its rule.
    """
    load_dialects(dialects)
    registry = _DIALECTS
    rules = tuple(
        (d, rule)
        for d in dialects
        if (record := registry.get(d)) is not None and (rule := record.tool_names) is not None
    )
    if rules:
        _check_names(rules, tuple(names))


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


def dialect_framing(names: Sequence[str]) -> Framing:
    """The framing active for the named dialects: the first declared one of each kind.

    Raises:
        ConfigError: a name is not a registered dialect.
    """
    framing = NO_FRAMING
    for name in names:
        framing = framing.merge(dialect_record(name).framing)
    return framing


def dialect_thinking(names: Sequence[str]) -> ThinkingFormat | None:
    """The reasoning format of the named dialects, or None when none declares one.

    The tag pairs of every declaring dialect, in configuration order (a start tag
    declared twice keeps its first pair); ``prefilled`` and ``bare_close`` when any of
    them says so.  Unknown names are skipped: the parser reports them.
    """
    load_dialects(names)
    registry = _DIALECTS
    formats = [
        fmt
        for name in names
        if (record := registry.get(name)) is not None and (fmt := record.thinking) is not None
    ]
    if not formats:
        return None
    pairs: dict[str, str] = {}
    for fmt in formats:
        for start, end in fmt.tags:
            pairs.setdefault(start, end)
    return ThinkingFormat(
        tuple(pairs.items()),
        prefilled=any(f.prefilled for f in formats),
        bare_close=any(f.bare_close for f in formats),
    )


def dialect_plugins(names: Sequence[str]) -> list[DialectPlugin]:
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
    records = [dialect_record(name) for name in names]
    for record in records:
        key = record.key
        if key is not None and record.plugins is not None:
            groups.setdefault(key, []).append(record.name)
            factories.setdefault(key, record.plugins)
    plugins: list[DialectPlugin] = []
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
    for record in records:
        fmt = record.thinking
        for pair in fmt.tags if fmt is not None else ():
            for tag in pair:
                if tag in call_tags:
                    how = "a thinking tag of the first, a call tag of the second"
                    _clash((record.name,), call_tags[tag], tag, how)
    return plugins


def _clash(first: tuple[str, ...], second: tuple[str, ...], tag: str, how: str) -> None:
    """Raise the error of two dialects whose markers cannot be told apart.

    Raises:
        ConfigError: always.
    """
    raise ConfigError(
        f"dialects {'/'.join(first)} and {'/'.join(second)} cannot be combined: {tag!r} is {how}"
    )
