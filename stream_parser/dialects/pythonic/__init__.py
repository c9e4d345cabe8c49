r"""The pythonic dialect: calls written as Python, ``[f(a=1, b='x')]``, by LFM2 and OLMo 3.

Written by:

* **LFM2 and LFM2.5** (Liquid AI; SGLang's ``lfm2`` detector): a list of calls between
  special tokens, ``<|tool_call_start|>[get_weather(city="Paris"), f(x=1)]<|tool_call_end|>``.
  The list may hold JSON call objects instead (``[{"name": …, "arguments": {…}}]``, as
  llama.cpp's LFM2 template writes them), and LFM2.5's template writes strings in single
  quotes, as written (no escaping).  Where a server drops the markers (they are special
  tokens), a list that opens the reply is read as ``llama`` reads it.
* **OLMo 3** (Ai2; vLLM's ``olmo3`` parser): calls one per line, without brackets,
  inside ``<function_calls>…</function_calls>``; values may be ``true``, ``false`` or
  ``null``.

Theory of operation.  The list is read by the llama dialect's reader
(:class:`~stream_parser.dialects.llama.reader.LlamaReader`), which follows strings and
brackets as the text streams (a chunk inside a string taken whole), announces each call
at its ``name(`` and ends the block at the list's ``]``: :class:`ToolCallStartPlugin`
opens it at ``<|tool_call_start|>`` (whitespace after the marker is framing),
:class:`PythonicListPlugin` at a ``[`` that opens the reply; ``<|tool_call_end|>`` and
``<|im_end|>`` are framing wherever they come (:class:`PythonicEndMarkers`).
``<function_calls>`` blocks are read by :class:`~.function_calls.FunctionCallsReader`.
Every element is parsed once it is whole by
:func:`~stream_parser.dialects.llama.pythonic.parse_pythonic_call`: Python literals
through ``ast``, never ``eval``; a raw line break inside a string, a parameter named
with a Python keyword (``from=1``) and a JSON call object are read as the model meant.

Reasoning is ``<think>…</think>``.  LFM2.5 writes both tags; OLMo 3 Think's template
ends the prompt with ``<think>``, so its reply starts inside reasoning
(``dialect_for_model`` says so for its names).  Llama 4's names stay on ``llama``,
which reads both Llama 4 forms; ``ParserConfig(dialect="pythonic")`` reads a Llama 4
behind a pythonic template the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ...core.kit import ParsePlugin, ThinkingFormat, register
from .._base import Dialect
from ..llama import LlamaEndMarkers, LlamaPlugin, LlamaTaggedPlugin
from ..llama.pythonic import format_pythonic_call
from .function_calls import CALLS_END, CALLS_START, FunctionCallsPlugin, FunctionCallsReader

__all__ = [
    "CALLS_END",
    "CALLS_START",
    "CALL_END",
    "CALL_START",
    "PYTHONIC_THINKING",
    "FunctionCallsPlugin",
    "FunctionCallsReader",
    "PythonicDialect",
    "PythonicEndMarkers",
    "PythonicListPlugin",
    "ToolCallStartPlugin",
]

CALL_START: Final = "<|tool_call_start|>"
CALL_END: Final = "<|tool_call_end|>"
END_OF_TURN: Final = "<|im_end|>"

PYTHONIC_THINKING: Final = ThinkingFormat((("<think>", "</think>"),), bare_close=True)
"""``<think>…</think>``: written whole by LFM2.5, opened by OLMo 3 Think's template."""


class ToolCallStartPlugin(LlamaTaggedPlugin):
    """LFM2's ``<|tool_call_start|>`` and the list of calls after it, wherever it comes.

    The marker says a call follows, as llama's ``<|python_tag|>`` does: llama's tagged
    reader reads what follows it (the marker and whitespace after it are framing).
    """

    name = "pythonic_tool_call_start"
    start_tags = (CALL_START,)  # type: ignore[assignment]


class PythonicListPlugin(LlamaPlugin):
    """A list of calls that opens the reply, its markers dropped by the server."""

    name = "pythonic_list"
    start_tags: tuple[str, ...] = ("[",)


class PythonicEndMarkers(LlamaEndMarkers):
    """``<|tool_call_end|>`` and ``<|im_end|>``, wherever they come: framing, never text."""

    name = "pythonic_end"
    start_tags: tuple[str, ...] = (CALL_END, END_OF_TURN)  # type: ignore[assignment]


class PythonicDialect(Dialect):
    """``<|tool_call_start|>[f(a=1)]<|tool_call_end|>`` (LFM2), ``<function_calls>`` (OLMo 3).

    Example:
        >>> print(PythonicDialect().format_call("search", {"query": "a b", "max_results": 3}))
        <|tool_call_start|>[search(query="a b", max_results=3)]<|tool_call_end|>
    """

    name = "pythonic"
    title = "Python calls: [f(a=1)] between LFM2's tokens, or one a line in <function_calls>"
    plugin_key = "pythonic"
    thinking = PYTHONIC_THINKING
    # LFM2's markers are special tokens, which servers drop unless asked to keep them.
    # OLMo 3's <function_calls> is an added token that servers keep; asking does no harm.
    special_tokens = True

    def make_plugin(self, names: tuple[str, ...]) -> Sequence[ParsePlugin]:
        """The list's plugins, the ``<function_calls>`` plugin and the end markers."""
        return [
            ToolCallStartPlugin(),
            PythonicListPlugin(),
            FunctionCallsPlugin(),
            PythonicEndMarkers(),
        ]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write the call as LFM2's template renders one: a one-call list in its tokens.

        Values are Python literals; strings in double quotes with JSON's escapes (Python's
        too), so any text reads back and a reader follows a long one as a JSON string.
        """
        return self.format_calls([(tool_name, args)])

    def format_calls(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        """Write a turn's calls as LFM2's template renders them: one list in its tokens."""
        if not calls:  # no calls write nothing, not an empty list
            return ""
        return f"{CALL_START}{format_pythonic_call(calls, double_quoted=True)}{CALL_END}"

    def _instructions(self) -> str:
        return "pythonic_instructions"


register(PythonicDialect().record())
