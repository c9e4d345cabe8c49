r"""The llama dialect: Llama 3.x JSON calls and Llama 4 pythonic calls, as the whole reply.

Llama models write a tool call as the reply itself, with no tag around it:

* **Llama 3.x (JSON).**  ``{"name": "read_file", "parameters": {"path": "a.py"}}``
  (``"arguments"`` is accepted too), optionally after ``<|python_tag|>`` (or, from Llama
  4, inside ``<|python_start|>`` ... ``<|python_end|>``).  Several calls are objects
  separated by ``;`` and/or whitespace.
* **Llama 4 pythonic.**  ``[read_file(path='a.py'), search(query="x", max_results=3)]``:
  a Python list of calls with keyword arguments whose values are Python literals.

Theory of operation
-------------------

:class:`LlamaPlugin` claims ``{`` and ``[`` with ``reply_start_only``: they open a block
only when nothing but whitespace (and thinking) came before them in the reply.
:class:`LlamaTaggedPlugin` claims ``<|python_tag|>`` and ``<|python_start|>`` wherever
they come: the special token says that a call follows, prose before it or not. Both are
the kit's reader plugin running a :class:`LlamaReader`: the block has no end tag, and
the reader ends it itself (``Reader.end``) where the JSON object or the bracket list
ends. A JSON object is followed by the core's
:class:`~stream_parser.core.kit.JsonScanner`, which reports where it ends; the
pythonic list by :class:`~stream_parser.dialects.llama.pythonic.PythonicReader` (which
:class:`LlamaReader` extends with JSON objects), tracking Python strings (both quotes)
and brackets. Both do constant work per character. After a JSON call, whitespace and
``;`` stay in the block, and another ``{`` is the next parallel call; the first other
character ends the block and is read as ordinary input. The end-of-message tokens
(``<|python_end|>``, ``<|eom_id|>``, ``<|eot_id|>``, Llama 4's ``<|eom|>`` and
``<|eot|>``) are framing wherever they come (:class:`LlamaEndMarkers`), never text.

Each JSON object is followed while it streams by a
:class:`~stream_parser.dialects.hermes.HermesReader` (the same JSON call object as
hermes), so the call is announced when its name is known and its arguments stream as
:class:`~stream_parser.core.events.ToolArgumentsDeltaEvent`\ s.  These events are held
until the object has shown both its name and an ``"arguments"``/``"parameters"`` key:
only then is it a call.  A pythonic call is announced when ``name(`` has arrived, and
the source of each keyword value streams verbatim as
:class:`~stream_parser.core.events.ToolParamDeltaEvent`\ s (``'a.py'``, quotes
included); the converted values come with the call.

**JSON is also an answer.**  A typed answer is JSON too, so a block is a call only when
it was opened by ``<|python_tag|>``/``<|python_start|>``, or when one of its objects has
a registered tool's name and an arguments key (for the pythonic list: one element calls
a registered tool).  Any other block is delivered as text, losslessly, without an error.
In a call block every object (or list element) has its own outcome: a
:class:`~stream_parser.core.events.ToolCallEvent` spanning it, or an error and its text
(``unknown_tool``, ``malformed_tool``, ``invalid_params``); tags, separators and end
markers are :class:`~stream_parser.core.events.FramingEvent`\ s.  A call block that the
stream ends inside is ``unclosed_tool`` and never runs.

Pythonic elements are parsed with :func:`ast.parse` once they are complete, the tool's
name split off first (so ``get-weather(...)`` and ``github.create_issue(...)`` call those
tools; see :func:`is_pythonic_name`), and only calls of a name with keyword arguments
whose values are literals (strings, numbers, ``True``/``False``/``None``,
``true``/``false``/``null``, lists, tuples, dicts, a sign before a number) are accepted,
to a bounded depth.  Nothing is ever evaluated.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from pydantic_core import to_jsonable_python

from ...core.events import (
    FramingEvent,
    ParseEvent,
)
from ...core.kit import (
    ParsePlugin,
    PluginBlock,
    register,
)
from .._base import Dialect

if TYPE_CHECKING:
    from ...core.events import Span
from .pythonic import (
    PythonicReader,
    format_pythonic_call,
    is_pythonic_name,
    parse_pythonic_call,
)
from .reader import CALL_TAGS, LlamaPlugin, LlamaReader

__all__ = [
    "CALL_TAGS",
    "END_MARKERS",
    "LlamaDialect",
    "LlamaEndMarkers",
    "LlamaPlugin",
    "LlamaReader",
    "LlamaTaggedPlugin",
    "PythonicReader",
    "format_pythonic_call",
    "is_pythonic_name",
    "parse_pythonic_call",
]


END_MARKERS: Final = ("<|python_end|>", "<|eom_id|>", "<|eot_id|>", "<|eom|>", "<|eot|>")
"""End-of-message tokens: framing wherever they come (:class:`LlamaEndMarkers`)."""


class LlamaTaggedPlugin(LlamaPlugin):
    """Reads the call after ``<|python_tag|>`` or ``<|python_start|>``, wherever it comes.

    The special token says that a call follows, so prose may come before it (a Llama 3
    reply may be ``I will look it up.<|python_tag|>{...}``); a bare ``{`` or ``[`` opens
    a call only at the start of the reply (:class:`LlamaPlugin`).
    """

    name = "llama_tagged"
    start_tags = CALL_TAGS
    reply_start_only = False


class LlamaEndMarkers(ParsePlugin):
    """Llama's end-of-message tokens, wherever they come: framing, never text.

    Each block is its marker alone (``ends_at`` right after the start tag), read as a
    :class:`~stream_parser.core.events.FramingEvent`; being framing, it does not end
    the start of the reply.
    """

    name = "llama_end"
    start_tags = END_MARKERS
    end_tag = ""
    is_framing = True

    def __init__(self) -> None:
        self._end: int | None = None

    def on_start(self, tag: str, span: Span) -> list[ParseEvent]:  # noqa: D102
        self._end = span[1]
        return []

    def ends_at(self) -> int | None:  # noqa: D102
        return self._end

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:  # noqa: D102
        return [FramingEvent(text=block.raw, span=block.span)]


class LlamaDialect(Dialect):
    """Llama's calls: ``{"name": ..., "parameters": {...}}`` or ``[f(a=1)]``, the whole reply.

    Example:
        >>> print(LlamaDialect().format_call("read_file", {"path": "a.py"}))
        {"name": "read_file", "parameters": {"path": "a.py"}}
    """

    name = "llama"
    title = "the reply is a JSON call (Llama 3.x) or a pythonic list of calls (Llama 4)"
    plugin_key = "llama"
    special_tokens = True  # <|python_tag|> and the end markers are special tokens
    shared_rules = False  # a call is the whole reply: its own instructions say so

    def make_plugin(self, names: tuple[str, ...]) -> list[ParsePlugin]:  # noqa: D102
        return [LlamaPlugin(), LlamaTaggedPlugin(), LlamaEndMarkers()]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write the call as the Llama 3.1 chat template renders one (``tojson`` arguments)."""
        arguments = json.dumps(to_jsonable_python(dict(args)), ensure_ascii=False)
        return f'{{"name": "{tool_name}", "parameters": {arguments}}}'

    def _instructions(self) -> str:
        return "llama_instructions"


register(LlamaDialect().record())
