# ruff: noqa: RUF001, RUF002  (the template's label, "assistant:", ends with a fullwidth colon)
r"""The hunyuan dialect: Hunyuan-A13B's ``<tool_calls>`` and one JSON array of calls.

Written by Tencent's Hunyuan-A13B, as the system prompt of its chat template asks
("format it as ``<tool_calls>[{"name": …, "arguments": {…}}, …]</tool_calls>``"), inside
the answer of its reply::

    <think>
    The user wants the weather.
    </think>
    <answer>
    <tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</tool_calls>
    </answer>

Theory of operation.  The array is the one every array format writes, so
:class:`HunyuanReader` is the shared
:class:`~stream_parser.dialects.json_array.JsonArrayReader` (each element a call of its
own, its arguments streamed as they come; a single call written as a bare object is read
too) between two markers (its ``until_end_tag``): the block ends at ``</tool_calls>``,
not at the array's ``]``.  A ``</tool_calls>`` inside a JSON string is content;
whitespace between the array and the end marker is framing; anything else there makes
the block ``malformed_tool`` (as hermes treats text after its object).  A reply that
ends right after the whole array, without ``</tool_calls>`` (a stop sequence), still
makes its calls, unless the stream was cut.  The markers are ordinary text for the
tokenizer, not special tokens, so a ``<tool_calls>`` opens a block only when ``[`` or
``{`` follows it and not right after a backtick (rule 3): prose may mention it.

Reasoning is ``<think>\n…\n</think>``, which the model opens itself (with
``enable_thinking=False`` the template writes ``<think>\n\n</think>\n`` into the prompt,
so the reply starts with the answer).  The answer is wrapped in ``<answer>\n…\n</answer>``:
both tags are framing wherever they come, and so is ``<|eos|>``, the end of each message
(:class:`HunyuanFraming`); the newlines around them are framing by the whitespace rule.

With tools, the template's system prompt asks the model to begin every reply in natural
language with ``助手：`` ("assistant:"), and writes that prefix itself before the content
of each earlier assistant message that has no calls: it is the template's role label,
not the content.  So at the start of the reply (after reasoning and ``<answer>``) it is
framing (:class:`AssistantPrefix`); anywhere else it is text.  vLLM removes its first
occurrence anywhere in a reply without calls; here a reply that quotes it keeps it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

from ..core.events import ParseEvent
from ..core.kit import (
    Framing,
    ParsePlugin,
    PluginBlock,
    ReaderPlugin,
    ThinkingFormat,
    register,
)
from ._base import Dialect
from .json_array import JsonArrayReader, calls_array
from .llama import LlamaEndMarkers

__all__ = [
    "ANSWER_TAGS",
    "ASSISTANT_PREFIX",
    "EOS",
    "HUNYUAN_FRAMING",
    "HUNYUAN_THINKING",
    "TOOL_CALLS",
    "TOOL_CALLS_END",
    "AssistantPrefix",
    "HunyuanDialect",
    "HunyuanFraming",
    "HunyuanPlugin",
    "HunyuanReader",
]

TOOL_CALLS: Final = "<tool_calls>"
TOOL_CALLS_END: Final = "</tool_calls>"
ANSWER_TAGS: Final = ("<answer>", "</answer>")
EOS: Final = "<|eos|>"
ASSISTANT_PREFIX: Final = "助手："
"""The role label the template's system prompt asks a reply in words to begin with."""

HUNYUAN_THINKING: Final = ThinkingFormat((("<think>", "</think>"),))
"""Hunyuan-A13B's reasoning: ``<think>…</think>``, opened by the model itself."""

HUNYUAN_FRAMING: Final = Framing(thinking_open="\n", thinking_close="\n", after_thinking="\n")
r"""The newlines of ``<think>\n…\n</think>\n`` (vLLM's reasoning parser reads the same)."""


class HunyuanReader(JsonArrayReader):
    """Reads the JSON array (or the lone call object) between ``<tool_calls>`` and its end.

    The shared reader with :attr:`~JsonArrayReader.until_end_tag`: the block goes on
    after the array, through whitespace only, to ``</tool_calls>``.
    """

    expected: ClassVar[str] = (
        TOOL_CALLS + '[{"name": "NAME", "arguments": {"key": "value"}}]' + TOOL_CALLS_END
    )
    until_end_tag: ClassVar[bool] = True

    def finish_unclosed(self, block: PluginBlock) -> list[ParseEvent] | None:
        """A reply that ended (not cut) right after the whole array still makes its calls."""
        if self.closed and not self.why:
            return self.array_outcome(block)
        return None


class HunyuanPlugin(ReaderPlugin):
    """Reads Hunyuan-A13B's ``<tool_calls>[…]</tool_calls>``.

    ``ParserConfig(dialect="hunyuan")`` registers one for you.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> parser = StreamToolParser({"read_file": ReadFile}, plugins=[HunyuanPlugin()])
        >>> text = '<tool_calls>[{"name": "read_file", "arguments": {"path": "a"}}]</tool_calls>'
        >>> [e.tool_instance for e in parser.feed(text) + parser.close() if e.kind == "tool_call"]
        [ReadFile(path='a')]
    """

    name = "hunyuan"
    start_tags: tuple[str, ...] = (TOOL_CALLS,)
    end_tag = TOOL_CALLS_END
    next_chars = "[{"  # plain text for the tokenizer: prose may mention the marker
    reader = HunyuanReader
    reserve_index = False  # each element of the array has its own call index


class HunyuanFraming(LlamaEndMarkers):
    """``<answer>``, ``</answer>`` and ``<|eos|>``, wherever they come: framing."""

    name = "hunyuan_framing"
    start_tags: tuple[str, ...] = (*ANSWER_TAGS, EOS)  # type: ignore[assignment]


class AssistantPrefix(LlamaEndMarkers):
    """``助手：`` at the start of the reply (after reasoning and ``<answer>``): framing.

    The template writes it before an earlier reply's content itself, and its system
    prompt asks the model to begin a reply in words with it.  Anywhere else it is text.
    """

    name = "hunyuan_assistant"
    start_tags: tuple[str, ...] = (ASSISTANT_PREFIX,)  # type: ignore[assignment]
    reply_start_only = True


class HunyuanDialect(Dialect):
    """``<tool_calls>[{"name": NAME, "arguments": {...}}, ...]</tool_calls>`` (Hunyuan-A13B).

    Example:
        >>> print(HunyuanDialect().format_call("read_file", {"path": "a.py"}))
        <tool_calls>[{"name": "read_file", "arguments": {"path": "a.py"}}]</tool_calls>
    """

    name = "hunyuan"
    title = '<tool_calls>[{"name": ..., "arguments": {...}}]</tool_calls> (Hunyuan-A13B)'
    plugin_key = "hunyuan"
    framing = HUNYUAN_FRAMING
    thinking = HUNYUAN_THINKING

    def make_plugin(self, names: tuple[str, ...]) -> Sequence[ParsePlugin]:
        """A :class:`HunyuanPlugin`, the answer and end markers, the reply's role label."""
        return [HunyuanPlugin(), HunyuanFraming(), AssistantPrefix()]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write one call: a one-element array between ``<tool_calls>`` tags.

        Values that are not JSON types (models, enums, paths, dates) are written as
        their JSON form.  For several calls, use :meth:`format_calls`.
        """
        return self.format_calls([(tool_name, args)])

    def format_calls(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        """Write several calls as the one array the template writes, ``", "`` between."""
        if not calls:  # no calls write nothing, not an empty array
            return ""
        return TOOL_CALLS + calls_array(calls) + TOOL_CALLS_END

    def _instructions(self) -> str:
        return "hunyuan_instructions"


register(HunyuanDialect().record())
