"""ToolCallPlugin: the one plugin for the dialects that open with ``<tool_call>``.

hermes, qwen3_coder, glm (and any dialect whose record names a ``block_reader``) wrap a
call in ``<tool_call>`` ... ``</tool_call>``, and the tag table lets a tag be claimed
only once, so one plugin reads them all: the kit's
:class:`~stream_parser.core.kit.ReaderPlugin`, which chooses a block's reader by the
block's first non-whitespace character (enough, and it depends on nothing but the text).
Each format's record claims the first characters it reads (``first_chars``: ``"<["``,
or ``"^{<["`` for "anything else", a name); a block goes to the first configured format
that claims its first character, else to the first that claims none (hermes: ``{``),
else to the first configured format, whose reader reports a block it cannot read as
malformed:

* ``{`` -> hermes (when enabled);
* ``<`` or ``[`` -> qwen3_coder (when enabled), whose reader expects ``<function=``;
* a name -> a format that claims it (glm writes ``<tool_call>NAME<arg_key>...``).

The plugin's ``next_chars`` (what may follow ``<tool_call>`` for it to open a block) are
those of every enabled format: ``{[<``, and whatever the formats claim.  A block longer
than ``ParserConfig.max_tool_size`` is a ``tool_too_large`` error and the rest of it is
text; an unclosed block at the end of the stream is an ``unclosed_tool`` error and its
raw text; neither is ever executed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar, cast

from ..core.config import DEFAULT_THINKING_TAGS
from ..core.kit import (
    QWEN3_FRAMING,
    CallContext,
    ParsePlugin,
    Reader,
    ReaderPlugin,
    ThinkingFormat,
    call_too_large,
    call_unclosed,
    dialect_record,
    registered_records,
)
from ..errors import ConfigError
from ._base import Dialect

__all__ = [
    "ReaderPlugin",
    "ToolCallPlugin",
    "ToolCallTagDialect",
    "call_too_large",
    "call_unclosed",
]


def _claims(chars: str, first: str) -> bool:
    """Whether the claim ``chars`` (a set, or ``^`` and a complement) covers ``first``."""
    if chars.startswith("^"):
        return first not in chars[1:]
    return first in chars


def _next_chars(claims: Sequence[str]) -> str:
    """The union of ``{[<`` and the formats' claims, in the same notation."""
    return _union(["{[<", *claims])


class ToolCallTagDialect(Dialect):
    """A dialect whose calls sit in ``<tool_call>`` blocks; all such share one plugin.

    Their models use the Qwen chat templates, whose framing
    (:data:`~stream_parser.core.kit.QWEN3_FRAMING`) the dialects declare.
    """

    plugin_key = "tool_call"
    framing = QWEN3_FRAMING
    # The usual tags, declared so that they stay when combined with a family of its own.
    thinking: ClassVar[ThinkingFormat | None] = ThinkingFormat(DEFAULT_THINKING_TAGS)

    def make_plugin(self, names: tuple[str, ...]) -> list[ParsePlugin]:
        """A :class:`ToolCallPlugin` for ``names``, and their companions."""
        plugins: list[ParsePlugin] = [ToolCallPlugin(names, before_call=self.framing.before_call)]
        for name in names:
            companion = dialect_record(name).companion
            if companion is not None:
                plugins.append(cast(ParsePlugin, companion(self.framing)))
        return plugins


class ToolCallPlugin(ReaderPlugin):
    r"""Reads ``<tool_call>`` blocks in the formats of the configured dialects.

    ``ParserConfig(dialect="hermes")`` (or ``"qwen3_coder"``, ``"glm"``, several) registers
    one for you; build one yourself only to add it to a parser with
    :meth:`StreamToolParser.use`.

    Args:
        formats: the dialects to read, whose records name a ``block_reader``, in order
            of preference (see the module docstring for how a block's format is chosen).
        before_call: framing written before ``<tool_call>`` (``"\n"`` for the Qwen
            templates): it then belongs to the block's span, so the text before a call
            does not end with it.

    Raises:
        ConfigError: no format, or one that is not known.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> parser = StreamToolParser({"read_file": ReadFile}, plugins=[ToolCallPlugin()])
        >>> text = '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>'
        >>> [e.kind for e in parser.feed(text) + parser.close()]
        ['tool_call_start', 'tool_arguments_delta', 'tool_call']
    """

    name = "tool_call"
    start_tags: tuple[str, ...] = ("<tool_call>",)
    end_tag = "</tool_call>"
    # A call's body starts with "{" (hermes) or "<function=" (qwen3_coder); "[" is taken
    # too, so that a JSON array is reported as a malformed call.  A "<tool_call>" followed
    # by anything else, or right after a backtick, is prose (rule 3).
    next_chars = "{[<"
    choose_at_first_char = True

    def __init__(
        self, formats: Sequence[str] = ("hermes", "qwen3_coder"), *, before_call: str = ""
    ) -> None:
        super().__init__()
        if before_call:
            self.start_tags = ("<tool_call>", before_call + "<tool_call>")
        formats = tuple(formats)
        if not formats:
            raise ConfigError("ToolCallPlugin needs at least one format")
        readers: list[tuple[str, Callable[[CallContext], Reader]]] = []
        for fmt in formats:
            try:
                record = dialect_record(fmt)
            except ConfigError:
                record = None
            if record is None or record.block_reader is None:
                raise ConfigError(f"ToolCallPlugin cannot read {fmt!r} (known: {_known()})")
            readers.append((record.first_chars, record.block_reader))
        self.formats = formats
        self.next_chars = _next_chars([chars for chars, _ in readers])
        # Inside reasoning, only the formats whose servers run such a call may end it
        # (qwen3_coder, glm): a hermes JSON call there is a draft, and stays thinking.
        guards = [_reasoning_guard(fmt) for fmt in formats]
        self.ends_reasoning = _union([g for g in guards if g])
        # Claimed first characters first, in configuration order; then the first format
        # that claims none; else the first format, which reports what it cannot read.
        claimed = [(chars, reader) for chars, reader in readers if chars]
        fallback = next((reader for chars, reader in readers if not chars), readers[0][1])
        self._claimed = claimed
        self._fallback = fallback

    def reader_for(self, first: str) -> Callable[[CallContext], Reader]:
        """The reader of the first format that claims ``first`` (see the module)."""
        for chars, reader in self._claimed:
            if _claims(chars, first):
                return reader
        return self._fallback


def _reasoning_guard(fmt: str) -> str:
    """The ``reasoning_guard`` of the dialect ``fmt`` ("" when it has none)."""
    dialect = dialect_record(fmt).dialect
    guard = getattr(dialect, "reasoning_guard", "")
    return guard if isinstance(guard, str) else ""


def _union(claims: Sequence[str]) -> str:
    """The union of the claims ``claims`` (sets, or ``^`` and a complement); "" for none."""
    if not claims:
        return ""
    positive: set[str] = set()
    excluded: set[str] | None = None
    for chars in claims:
        if chars.startswith("^"):
            rest = set(chars[1:])
            excluded = rest if excluded is None else excluded & rest
        else:
            positive |= set(chars)
    if excluded is None:
        return "".join(sorted(positive))
    return "^" + "".join(sorted(excluded - positive))


def _known() -> str:
    """The loaded dialects whose records name a ``<tool_call>`` reader, for messages."""
    return ", ".join(sorted(n for n, r in registered_records().items() if r.block_reader))
