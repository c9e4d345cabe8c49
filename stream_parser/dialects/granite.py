r"""The granite dialect: IBM Granite's calls, 3.x's JSON array and 4.0's ``<tool_call>``.

Granite 3.x instruct models write a marker and one JSON array of calls, as their chat
template's system prompt asks ("respond only with <|tool_call|> followed by a JSON list of
tools used"); 3.1's template names the marker ``<tool_call>``, a plain string::

    <|tool_call|>[{"name": "get_weather", "arguments": {"location": "Paris"}}]
    <tool_call>[{"name": "get_weather", "arguments": {"location": "Paris"}}]

Granite 4.0 writes hermes' blocks, one per call, whose tags are special tokens::

    <tool_call>
    {"name": "get_weather", "arguments": {"location": "Paris"}}
    </tool_call>

Theory of operation.  The array is the one every array format writes, so
:class:`GraniteReader` is the shared :class:`~stream_parser.dialects.json_array.JsonArrayReader`
(each element a call of its own, its arguments streamed as they come) and
:class:`GranitePlugin` claims ``<|tool_call|>`` with no end tag: the block ends just
after the array's ``]`` and what follows is read as ordinary input.  ``<|tool_call|>``
is a special token, so a server drops it unless asked to keep it
(``skip_special_tokens=False``); an array left without it that opens the reply is read
by the unmarked-array rule (:class:`GraniteArrayPlugin`): a call only when an element
names a registered tool and has ``"arguments"``, else the answer, as text.

:class:`GraniteToolCallPlugin` claims ``<tool_call>`` and tells the two forms apart by
the block's first non-whitespace character, as the shared ``<tool_call>`` plugin tells
hermes from qwen3_coder: ``[`` is 3.1's array (read by :class:`GraniteArrayReader`: the
block ends after its ``]``, or, when whitespace then ``</tool_call>`` follows, with that
tag as framing; 3.1's template writes no end tag, but a model trained on 4.0's blocks
may), ``{`` is 4.0's call object, read by :class:`GraniteCallReader`
(hermes' reader) up to ``</tool_call>``.  Granite 4.0's arguments sometimes come as a
JSON string holding the object, which hermes' reader reads as that object, and sometimes
with extra closing braces after the object, which :class:`GraniteCallReader` forgives.

Reasoning is ``<think>…</think>`` (3.2 and 3.3 with ``thinking=True``), the answer then
in ``<response>…</response>``: both response tags are framing wherever they come, and
so is ``<|end_of_text|>``, the end of each message (:class:`GraniteFraming`).  A bare
``name(k=v)`` line with no marker is text: nothing in the template asks for it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Final

from ..core.kit import CallContext, ParsePlugin, Reader, ReaderPlugin, ThinkingFormat, register
from ._base import Dialect
from .hermes import HermesReader
from .json_array import JsonArrayReader, call_object, calls_array
from .llama import LlamaEndMarkers
from .unmarked_array import BareArrayPlugin

__all__ = [
    "END_OF_TEXT",
    "GRANITE_THINKING",
    "RESPONSE_TAGS",
    "TOOL_CALL",
    "TOOL_CALL_TAGS",
    "GraniteArrayPlugin",
    "GraniteArrayReader",
    "GraniteCallReader",
    "GraniteDialect",
    "GraniteFraming",
    "GranitePlugin",
    "GraniteReader",
    "GraniteToolCallPlugin",
]

TOOL_CALL: Final = "<|tool_call|>"
TOOL_CALL_TAGS: Final = ("<tool_call>", "</tool_call>")
"""Granite 4.0's call tags (special tokens), and 3.1's marker before its array."""
END_OF_TEXT: Final = "<|end_of_text|>"
RESPONSE_TAGS: Final = ("<response>", "</response>")

GRANITE_THINKING: Final = ThinkingFormat((("<think>", "</think>"),))
"""Granite 3.2 and 3.3's reasoning with ``thinking=True``: ``<think>…</think>``."""


class GraniteReader(JsonArrayReader):
    """Reads the JSON array after ``<|tool_call|>``, element by element."""

    expected: ClassVar[str] = (
        TOOL_CALL + '[{"name": "NAME", "arguments": {"key": "value"}}] (3.1: <tool_call>[…])'
    )


class GraniteArrayReader(GraniteReader):
    """Reads Granite 3.1's ``<tool_call>[…]``, with or without ``</tool_call>`` after it.

    The array's end ends the block, unless whitespace then ``</tool_call>`` follows: that
    end tag is then the block's, framing (:attr:`~JsonArrayReader.end_tag_optional`).
    A ``</tool_call>`` anywhere else is text.
    """

    end_tag_optional: ClassVar[bool] = True


class GraniteCallReader(HermesReader):
    """Reads Granite 4.0's call object in ``<tool_call>``: hermes' reader, more forgiving.

    Granite 4.0 sometimes writes extra closing braces after the object
    (``{"name": …, "arguments": {…}}}``); they are read as the end of the object, as
    mlx-lm's Granite parser reads them.  Anything else after the object is still an
    error.
    """

    def read_content(self, content: str) -> tuple[object, str]:
        """The call object, with any extra closing braces after it forgiven."""
        data, unreadable = super().read_content(content)
        if not unreadable or self.json_end < 0:
            return data, unreadable
        # The reader was fed the content from its first character that is no whitespace.
        end = len(content) - len(content.lstrip(_JSON_WS)) + self.json_end
        if content[end:].strip(_JSON_WS + "}"):
            return data, unreadable
        return super().read_content(content[:end])


_JSON_WS: Final = " \t\r\n"


def _call_reader(call: CallContext) -> Reader:
    """Granite 4.0's one call per block: its index is the next of the stream."""
    call.reserve()
    return GraniteCallReader(call)


class GraniteToolCallPlugin(ReaderPlugin):
    """Reads ``<tool_call>``: 4.0's ``{…}</tool_call>``, or 3.1's ``[…]`` to its end.

    The block's first non-whitespace character chooses: ``[`` is an array of calls, read
    to its ``]`` (each element a call of its own) and to a ``</tool_call>`` that follows
    it after whitespace only (framing); anything else is one call object, read
    up to ``</tool_call>``.  ``<tool_call>`` followed by anything but ``{`` or ``[`` is
    prose.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> parser = StreamToolParser({"read_file": ReadFile}, plugins=[GraniteToolCallPlugin()])
        >>> text = '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>'
        >>> events = parser.feed(text) + parser.close()
        >>> events[-1].tool_instance
        ReadFile(path='a')
    """

    name = "granite_tool_call"
    start_tags: tuple[str, ...] = (TOOL_CALL_TAGS[0],)
    end_tag = TOOL_CALL_TAGS[1]
    next_chars = "{["
    choose_at_first_char = True
    reserve_index = False  # an array's elements number themselves; one object reserves

    def reader_for(self, first: str) -> Callable[[CallContext], Reader]:
        """3.1's array for ``[``, 4.0's call object otherwise."""
        return GraniteArrayReader if first == "[" else _call_reader


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


class GraniteArrayPlugin(BareArrayPlugin):
    """A ``[`` that opens the reply without ``<|tool_call|>``: calls, or an answer.

    A server drops the special token ``<|tool_call|>`` unless asked to keep it
    (``skip_special_tokens=False``), which leaves the array bare.  It is read by the
    unmarked-array rule: a call only when an element names a registered tool and has
    ``"arguments"``; any other JSON is the answer, text exactly as it came.
    """

    name = "granite_array"


class GraniteFraming(LlamaEndMarkers):
    """``<|end_of_text|>``, ``<response>`` and ``</response>``, wherever they come: framing."""

    name = "granite_framing"
    start_tags: tuple[str, ...] = (END_OF_TEXT, *RESPONSE_TAGS)  # type: ignore[assignment]


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
        """The call plugins (3.x's marker, its bare array, ``<tool_call>``) and the framing."""
        return [GranitePlugin(), GraniteArrayPlugin(), GraniteToolCallPlugin(), GraniteFraming()]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write one call: ``<|tool_call|>`` and a one-element array.

        Values that are not JSON types (models, enums, paths, dates) are written as
        their JSON form.  For several calls, use :meth:`format_calls`.
        """
        return self.format_calls([(tool_name, args)])

    def format_calls(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        """Write several calls as the one array the model writes after ``<|tool_call|>``."""
        if not calls:  # no calls write nothing, not an empty array
            return ""
        return TOOL_CALL + calls_array(calls)

    def format_call_4(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write one call as Granite 4.0's template does: a ``<tool_call>`` block.

        Example:
            >>> print(GraniteDialect().format_call_4("read_file", {"path": "a.py"}))
            <tool_call>
            {"name": "read_file", "arguments": {"path": "a.py"}}
            </tool_call>
        """
        return f"{TOOL_CALL_TAGS[0]}\n{call_object(tool_name, args)}\n{TOOL_CALL_TAGS[1]}"

    def _instructions(self) -> str:
        return "granite_instructions"


register(GraniteDialect().record())
