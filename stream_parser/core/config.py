"""ParserConfig: the knobs of the streaming parser (keyword-only, frozen)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import ConfigError
from ._dialect_registry import check_dialect_names, dialect_thinking

__all__ = ["DEFAULT_THINKING_TAGS", "ParserConfig"]

DEFAULT_THINKING_TAGS: tuple[tuple[str, str], ...] = (
    ("<thinking>", "</thinking>"),
    ("<think>", "</think>"),
)
"""The thinking tag pairs recognised unless configured otherwise."""


@dataclass(frozen=True, kw_only=True)
class ParserConfig:
    """Configuration of a :class:`~stream_parser.StreamToolParser`.

    Attributes:
        thinking_tags: ``(start, end)`` pairs that open and close a thinking block.  A
            block opened by a start tag is closed only by its own end tag.  Unset
            (None), it is the reasoning format of the configured dialects, else
            :data:`DEFAULT_THINKING_TAGS` (:attr:`thinking_pairs` gives the pairs in
            effect).
        thinking_start_tag: with ``thinking_end_tag``, a shorthand that replaces
            ``thinking_tags`` by that single pair.
        thinking_end_tag: see ``thinking_start_tag``.
        start_in_thinking: begin the stream inside a thinking block, for models whose
            chat template writes the opening ``<think>`` itself; any configured end tag
            closes it.  Unset (None), it is True when a configured dialect's reasoning
            format says so (prefilled, or closed by a bare closing tag); see
            :attr:`starts_in_thinking`.  Left unset, reasoning that arrives on its own
            channel (``ChatDelta.reasoning``, a chunk's ``reasoning_content``) before
            any content ends that block: the server took the reasoning out of the
            content, which then starts as the reply.  So it does when the value came
            from the model's chat template (``start_from_template``), not from you.
        start_from_template: ``start_in_thinking`` was set from what the model's chat
            template writes (by :func:`~stream_parser.dialects.detect.with_reasoning`,
            from ``dialect_for_model``), not chosen by you.  Reasoning on its own
            channel then still ends the opened block, as when ``start_in_thinking`` is
            unset; only your own ``start_in_thinking=True`` keeps the content inside it.
        buffer_keep_size: how much whitespace the parser may hold back while a decision
            waits on the next non-whitespace character (after a tool's start tag, or
            after a parameter's closing tag).  Past it the decision is "no".
        enable_xml_validation: validate tool arguments with Pydantic (the default).  When
            False, instances are built with ``model_construct`` from the converted
            values, without validation.
        max_tool_size: the largest tool or plugin block, in characters, that is
            buffered.  A larger block gives a ``tool_too_large`` (``block_too_large``
            for a plugin's own blocks) error and continues as text; it never runs.
        max_thinking_size: the largest thinking content, in characters, that is kept
            for the closing ``ThinkingEvent``.  Past it, one ``thinking_too_large``
            error; the rest still streams as ``ThinkingDeltaEvent`` but is not kept, and
            the ``ThinkingEvent`` holds the head with ``truncated=True``.
        raw_params: parameter names whose values keep their inner whitespace (only one
            leading and one trailing newline are removed).  A field can also opt in
            with ``json_schema_extra={"raw": True}``.
        fence_aware: when True, tool tags inside a fenced code block (a line starting
            with three backticks opens and closes one) are text.  Off by default
            because some models fence their calls.
        emit_deltas: emit streaming delta events (thinking, tool parameters); turn off
            if only whole blocks are wanted.
        dialect: the tool-call format(s) the model writes: ``"xml"`` (the default, the
            core's own format), ``"hermes"``, ``"qwen3_coder"``, or several at once as a
            tuple.  Stored normalised as a tuple of names (see ``stream_parser.dialects``).
            Each name must be known when the configuration is made: built in, or
            registered before (``stream_parser.dialects.add_dialect``).  ``"auto"`` is
            not a name here: it needs the model's name, which ``ReActAgent(dialect=
            "auto")``, ``protocol="auto"`` and ``dialect_for_model`` have.
        report_unknown_tools: report a call of a tool that is not registered, written in
            the XML format (``<open_doc><path>a.md</path></open_doc>``), with an
            ``unknown_tool`` error when its end tag arrives.  Its text is delivered as
            text all the same, as it streams, and nothing runs.  HTML elements and
            ``<result>`` never count.  Off by default; the agents turn it on, so that
            the model learns which tools exist.
        tool_tag_pattern: a regular expression (text or compiled) of the unknown tools'
            names worth reporting: set, it turns ``report_unknown_tools`` on and limits it
            to the calls whose start tag (``<open_doc>``) or bare name (``open_doc``) the
            pattern matches in full; ``r"<([a-zA-Z0-9_]+)>"`` matches every name.  A block
            must still be shaped like a call, so HTML and prose never count.  The
            pattern is tried on each such start tag once (at most 67 characters),
            never on the stream: the parser stays linear in the stream and holds
            nothing back.  What one try costs is the pattern's own: a pattern that
            backtracks badly (``(a|a)*Z`` on a long name) can take seconds on one tag, so keep it
            plain.  Stored compiled.
        native_tools: the tools also go to the model as native function definitions
            (OpenAI ``tools``), and their calls may come back as native calls
            (``delta.tool_calls``).  A tool whose name a configured dialect cannot carry
            (``github/create_issue`` as an XML tag) is then read from native calls only.
            Off (the default), the parser refuses such a tool with a
            :class:`~stream_parser.errors.ConfigError` naming the tool, the dialect and
            its rule.  ``FunctionCallAgent`` turns it on.
        strict: raise :class:`~stream_parser.errors.StrictModeError` instead of emitting
            a :class:`~stream_parser.core.events.ParseErrorEvent`.  For tests and tooling;
            production code should leave it off.
    """

    thinking_tags: tuple[tuple[str, str], ...] | None = None
    thinking_start_tag: str | None = None
    thinking_end_tag: str | None = None
    start_in_thinking: bool | None = None
    start_from_template: bool = False
    buffer_keep_size: int = 128
    enable_xml_validation: bool = True
    max_tool_size: int = 1_048_576
    max_thinking_size: int = 4 * 1024 * 1024
    raw_params: frozenset[str] = field(default_factory=lambda: frozenset({"content", "diff"}))
    fence_aware: bool = False
    emit_deltas: bool = True
    dialect: str | tuple[str, ...] = "xml"
    report_unknown_tools: bool = False
    tool_tag_pattern: str | re.Pattern[str] | None = None
    native_tools: bool = False
    strict: bool = False

    def __post_init__(self) -> None:
        names = (self.dialect,) if isinstance(self.dialect, str) else tuple(self.dialect)
        if (self.thinking_start_tag is None) != (self.thinking_end_tag is None):
            raise ConfigError("thinking_start_tag and thinking_end_tag must be given together")
        if self.thinking_start_tag is not None and self.thinking_end_tag is not None:
            object.__setattr__(
                self, "thinking_tags", ((self.thinking_start_tag, self.thinking_end_tag),)
            )
        pairs: tuple[tuple[str, ...], ...]
        if self.thinking_tags is None:  # unset: resolved from the dialects when used
            pairs = DEFAULT_THINKING_TAGS
        else:
            pairs = tuple(tuple(pair) for pair in self.thinking_tags)
            object.__setattr__(self, "thinking_tags", pairs)
        for pair in pairs:
            if len(pair) != 2 or not all(isinstance(tag, str) and tag for tag in pair):
                raise ConfigError(f"thinking tag pair must be two non-empty strings: {pair!r}")
        starts = [start for start, _ in pairs]
        if len(set(starts)) != len(starts):
            raise ConfigError(f"duplicate thinking start tags: {starts!r}")
        if self.start_in_thinking and not pairs:
            raise ConfigError("start_in_thinking needs at least one thinking tag pair")
        if self.buffer_keep_size < 0:
            raise ConfigError("buffer_keep_size must be >= 0")
        if self.max_tool_size <= 0:
            raise ConfigError("max_tool_size must be > 0")
        if self.max_thinking_size <= 0:
            raise ConfigError("max_thinking_size must be > 0")
        if isinstance(self.raw_params, str) or not isinstance(self.raw_params, Iterable):
            raise ConfigError("raw_params must be a collection of parameter names")
        object.__setattr__(self, "raw_params", frozenset(self.raw_params))
        if not names or not all(isinstance(n, str) and n for n in names):
            raise ConfigError(f"dialect must be a name or a tuple of names: {self.dialect!r}")
        if len(set(names)) != len(names):
            raise ConfigError(f"dialect names repeat: {names!r}")
        check_dialect_names(names)
        object.__setattr__(self, "dialect", names)
        pattern = self.tool_tag_pattern
        if pattern is not None:
            if isinstance(pattern, str):
                try:
                    pattern = re.compile(pattern)
                except re.error as exc:
                    raise ConfigError(
                        f"tool_tag_pattern is not a regular expression: {exc}"
                    ) from None
            elif not isinstance(pattern, re.Pattern) or not isinstance(pattern.pattern, str):
                raise ConfigError(
                    f"tool_tag_pattern must be a str or a compiled str pattern, not {pattern!r}"
                )
            object.__setattr__(self, "tool_tag_pattern", pattern)
            object.__setattr__(self, "report_unknown_tools", True)

    @property
    def dialects(self) -> tuple[str, ...]:
        """The configured dialect names, as a tuple."""
        return self.dialect if isinstance(self.dialect, tuple) else (self.dialect,)

    @property
    def thinking_pairs(self) -> tuple[tuple[str, str], ...]:
        """The thinking tag pairs in effect.

        ``thinking_tags`` when set; otherwise the reasoning format of the configured
        dialects (:func:`~stream_parser.core._reasoning.dialect_thinking`), else
        :data:`DEFAULT_THINKING_TAGS`.  Resolved when asked, so that a configuration
        copied with other dialects (``dataclasses.replace``) gets theirs.

        Example:
            >>> ParserConfig().thinking_pairs == DEFAULT_THINKING_TAGS
            True
        """
        if self.thinking_tags is not None:
            return self.thinking_tags
        fmt = dialect_thinking(self.dialects)
        return DEFAULT_THINKING_TAGS if fmt is None else fmt.tags

    @property
    def starts_in_thinking(self) -> bool:
        """Whether the stream starts inside a thinking block.

        ``start_in_thinking`` when set; otherwise True when a configured dialect's
        reasoning format is ``prefilled`` (its template always opens reasoning).  A
        ``bare_close`` format no longer starts there by itself: a reply starts as the
        reply unless its model's template opens reasoning (``dialect_for_model``) or
        you say so.
        """
        if self.start_in_thinking is not None:
            return self.start_in_thinking
        fmt = dialect_thinking(self.dialects)
        return fmt is not None and fmt.prefilled
