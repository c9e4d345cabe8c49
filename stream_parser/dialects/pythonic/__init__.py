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

Theory of operation.  The list is read by the llama dialect's pythonic reader
(:class:`~stream_parser.dialects.llama.reader.LlamaPlugin`), which follows strings and
brackets as the text streams, announces each call at its ``name(`` and ends the block
at the list's ``]``: :class:`ToolCallStartPlugin` opens it at ``<|tool_call_start|>``
(whitespace after the marker is framing), :class:`PythonicListPlugin` at a ``[`` that
opens the reply; ``<|tool_call_end|>`` and ``<|im_end|>`` are framing wherever they come
(:class:`PythonicEndMarkers`).  ``<function_calls>`` blocks are read by
:class:`~.function_calls.FunctionCallsReader`.  Every element is parsed once it is whole
by :func:`~stream_parser.dialects.llama.pythonic.parse_pythonic_call`: Python literals
through ``ast``, never ``eval``; a raw line break inside a string, a parameter named
with a Python keyword (``from=1``) and a JSON call object are read as the model meant.

Reasoning is ``<think>…</think>``.  LFM2.5 writes both tags; OLMo 3 Think's template
ends the prompt with ``<think>``, so its reply starts inside reasoning
(``dialect_for_model`` says so for its names).  Llama 4's names stay on ``llama``,
which reads both Llama 4 forms; ``ParserConfig(dialect="pythonic")`` reads a Llama 4
behind a pythonic template the same way.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ...core.events import ParseEvent
from ...core.kit import (
    CallContext,
    FastData,
    JsonScanner,
    ParsePlugin,
    ThinkingFormat,
    ValueRun,
    register,
)
from .._base import Dialect
from ..llama import LlamaEndMarkers, LlamaTaggedPlugin
from ..llama.pythonic import format_pythonic_call
from ..llama.reader import _LIST, CALL_TAGS, LlamaPlugin
from .function_calls import CALLS_END, CALLS_START, FunctionCallsPlugin, FunctionCallsReader

if TYPE_CHECKING:
    from ...core.events import Span

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


_STRING_MARKS: Final = {"'": re.compile(r"['\\]"), '"': re.compile(r'["\\]')}
_TRAILING_BACKSLASH: Final = re.compile(r"\\\Z")


class _StringFastPath(LlamaPlugin):
    """The fast path of a list's string values: a chunk that does not end the string.

    Such a chunk is all string: the llama reader would take it whole and stream it as
    the open keyword value's delta.  :meth:`_in_string` takes such chunks, following the
    escapes (a backslash escapes the next character, in this chunk or the next), and
    leaves a chunk that ends the string to the reader.  The core streams most chunks of
    an announced call's value itself (a :class:`ValueRun`): in a double-quoted string,
    whose escapes are JSON's, every chunk a JSON scanner inside that string takes whole
    (``JsonScanner.skip``); in a single-quoted one, a chunk without the quote and not
    ending with a backslash (that chunk goes the usual way, which keeps the escape).
    """

    def __init__(self) -> None:
        super().__init__()
        self._string_run = ValueRun()
        self._call: CallContext | None = None  # the announced call whose value streams

    def fast_path(self) -> FastData | None:
        """Inside a string of the list: only what may end it needs the reader."""
        if self._mode != _LIST or not self._quote:
            return super().fast_path()
        self._arm()
        pattern = None if self._string_run.scanner is not None else _TRAILING_BACKSLASH
        return pattern, self._in_string, False

    def value_run(self) -> ValueRun | None:
        """The open string value, streamed by the core while it is armed."""
        if self._mode != _LIST or not self._quote:
            return super().value_run()
        return self._string_run

    def _arm(self) -> None:
        """Arm the run for the open string, as the reader stands now."""
        run = self._string_run
        index = self._elem_index
        run.armed = False
        run.scanner = None
        if not self._param or index is None:
            return
        run.open(self._elem_tool, self._param, index, 0)
        if self._quote == '"':
            scanner = JsonScanner(keep_text=False)
            scanner.feed('"\\' if self._escaped else '"')
            run.scanner, run.stop = scanner, ""
        elif self._escaped:
            return  # the next character is escaped: the reader's function takes it
        else:
            run.stop = self._quote
        run.armed = True

    def _in_string(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        run = self._string_run
        if run.armed and run.scanner is not None:
            # The scanner took the chunks since the run was armed; this one it did not.
            self._escaped = run.scanner.escape_pending
            run.armed = False
        marks = _STRING_MARKS[self._quote]
        n = len(data)
        # A backslash that ended the last chunk escapes this chunk's first character.
        pos, escaped = (1, False) if self._escaped else (0, False)
        while pos < n:
            m = marks.search(data, pos)
            if m is None:
                break
            k = m.start()
            if data[k] != "\\":
                return False  # the string ends in this chunk: the reader decides
            if k + 1 == n:
                escaped = True
                break
            pos = k + 2
        self._escaped = escaped
        index = self._elem_index
        if self._param and index is not None and self.context.config.emit_deltas:
            call = self._call
            if call is None or call.call_index != index:
                call = self._call = CallContext(self.context, index)
            out.append(call.param_delta(self._elem_tool, self._param, data, (start, start + n)))
        self._arm()
        return True


class ToolCallStartPlugin(_StringFastPath, LlamaTaggedPlugin):
    """LFM2's ``<|tool_call_start|>`` and the list of calls after it, wherever it comes."""

    name = "pythonic_tool_call_start"
    start_tags: tuple[str, ...] = (CALL_START,)  # type: ignore[assignment]

    def on_start(self, tag: str, span: Span) -> list[ParseEvent]:
        """The marker says a call follows, as llama's ``<|python_tag|>`` does."""
        return super().on_start(CALL_TAGS[0], span)


class PythonicListPlugin(_StringFastPath):
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
    special_tokens = True  # LFM2's markers are special tokens: servers drop them unless asked

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
        return (
            f"{CALL_START}{format_pythonic_call([(tool_name, args)], double_quoted=True)}{CALL_END}"
        )

    def _instructions(self) -> str:
        return "pythonic_instructions"


register(PythonicDialect().record())
