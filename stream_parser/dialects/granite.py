r"""The granite dialect: IBM Granite 3.x's ``<|tool_call|>`` and one JSON array of calls.

Written by Granite 3.x instruct models, as their chat template's system prompt asks
("respond only with <|tool_call|> followed by a JSON list of tools used")::

    <|tool_call|>[{"name": "get_weather", "arguments": {"location": "Paris"}}]

Theory of operation.  The array is the one every array format writes, so
:class:`GraniteReader` is the shared :class:`~stream_parser.dialects.json_array.JsonArrayReader`
(each element a call of its own, its arguments streamed as they come) and
:class:`GranitePlugin` claims ``<|tool_call|>`` with no end tag: the block ends just
after the array's ``]`` and what follows is read as ordinary input.  ``<|tool_call|>``
is a special token, so a server drops it unless asked to keep it
(``skip_special_tokens=False``); without it the array is text.

Reasoning is ``<think>…</think>`` (3.2 and 3.3 with ``thinking=True``), the answer then
in ``<response>…</response>``: both response tags are framing wherever they come, and
so is ``<|end_of_text|>``, the end of each message (:class:`GraniteFraming`).  A bare
``name(k=v)`` line with no marker is text: nothing in the template asks for it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

from pydantic_core import to_jsonable_python

from ..core.kit import ParsePlugin, ReaderPlugin, ThinkingFormat, register
from ._base import Dialect
from .json_array import JsonArrayReader
from .llama import LlamaEndMarkers

__all__ = [
    "END_OF_TEXT",
    "GRANITE_THINKING",
    "RESPONSE_TAGS",
    "TOOL_CALL",
    "GraniteDialect",
    "GraniteFraming",
    "GranitePlugin",
    "GraniteReader",
]

TOOL_CALL: Final = "<|tool_call|>"
END_OF_TEXT: Final = "<|end_of_text|>"
RESPONSE_TAGS: Final = ("<response>", "</response>")

GRANITE_THINKING: Final = ThinkingFormat((("<think>", "</think>"),))
"""Granite 3.2 and 3.3's reasoning with ``thinking=True``: ``<think>…</think>``."""


class GraniteReader(JsonArrayReader):
    """Reads the JSON array after ``<|tool_call|>``, element by element."""

    expected: ClassVar[str] = TOOL_CALL + '[{"name": "NAME", "arguments": {"key": "value"}}]'


class GranitePlugin(ReaderPlugin):
    """Reads Granite 3.x's ``<|tool_call|>[…]``, to the array's end.

    ``ParserConfig(dialect="granite")`` registers one for you.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> parser = StreamToolParser({"read_file": ReadFile}, plugins=[GranitePlugin()])
        >>> text = '<|tool_call|>[{"name": "read_file", "arguments": {"path": "a"}}]'
        >>> events = parser.feed(text) + parser.close()
        >>> [e.tool_instance for e in events if e.kind == "tool_call"]
        [ReadFile(path='a')]
    """

    name = "granite"
    start_tags: tuple[str, ...] = (TOOL_CALL,)
    end_tag = ""
    reader = GraniteReader
    reserve_index = False  # each element of the array has its own call index


class GraniteFraming(LlamaEndMarkers):
    """``<|end_of_text|>``, ``<response>`` and ``</response>``, wherever they come: framing."""

    name = "granite_framing"
    start_tags: tuple[str, ...] = (END_OF_TEXT, *RESPONSE_TAGS)  # type: ignore[assignment]


def _json(value: Any) -> str:
    """A value as the template's ``tojson`` writes it (``", "`` and ``": "``)."""
    return json.dumps(to_jsonable_python(value, by_alias=True), ensure_ascii=False)


class GraniteDialect(Dialect):
    """``<|tool_call|>[{"name": NAME, "arguments": {...}}, ...]`` (IBM Granite 3.x).

    Example:
        >>> print(GraniteDialect().format_call("read_file", {"path": "a.py"}))
        <|tool_call|>[{"name": "read_file", "arguments": {"path": "a.py"}}]
    """

    name = "granite"
    title = '<|tool_call|>[{"name": ..., "arguments": {...}}] (IBM Granite 3.x)'
    plugin_key = "granite"
    thinking = GRANITE_THINKING
    special_tokens = True  # <|tool_call|> is a special token: servers drop it unless asked

    def make_plugin(self, names: tuple[str, ...]) -> Sequence[ParsePlugin]:
        """A :class:`GranitePlugin` and the framing markers."""
        return [GranitePlugin(), GraniteFraming()]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write one call: ``<|tool_call|>`` and a one-element array.

        Values that are not JSON types (models, enums, paths, dates) are written as
        their JSON form.  For several calls, use :meth:`format_calls`.
        """
        return self.format_calls([(tool_name, args)])

    def format_calls(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        """Write several calls as the one array the model writes after ``<|tool_call|>``."""
        items = [
            f'{{"name": {_json(tool_name)}, "arguments": {_json(dict(args))}}}'
            for tool_name, args in calls
        ]
        return f"{TOOL_CALL}[{', '.join(items)}]"

    def _instructions(self) -> str:
        return "granite_instructions"


register(GraniteDialect().record())
