r"""The phi4_mini dialect: Phi-4-mini's ``functools`` marker and one JSON array of calls.

Written by Microsoft's Phi-4-mini (and Phi-4-multimodal) instruct models, as the tool
chat template's system prompt asks ("prefix function calls with functools marker (no
closing marker required)")::

    functools[{"name": "get_weather", "arguments": {"location": "Paris"}}]

Theory of operation.  The array is the one every array format writes, so
:class:`Phi4MiniReader` is the shared
:class:`~stream_parser.dialects.json_array.JsonArrayReader` (each element a call of its
own, its arguments streamed as they come, a ``]`` inside a value is content) and
:class:`Phi4MiniPlugin` claims ``functools[`` with no end tag: the block ends just
after the array's ``]`` and what follows is read as ordinary input.

``functools`` is an ordinary word, not a special token (it is Python's standard
module, too): the tokenizer streams it as plain text, in pieces, and servers never drop
it.  So the marker counts only as the template writes it, ``functools[`` followed by the
first call's ``{`` (whitespace aside), and not right after a backtick.
``import functools``, ``functools.partial``, an empty ``functools[]`` or prose in the
brackets stay text.  The reader starts inside the array: the marker ends with its ``[``.

Phi-4-mini does not reason in tags.  ``<|end|>``, the end of each message, is a special
token that a server drops by default; where it is kept it is framing
(:class:`Phi4MiniEndMarker`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

from ..core.events import ParseEvent, Span
from ..core.kit import ParsePlugin, ReaderPlugin, register
from ._base import Dialect
from .json_array import JsonArrayReader, calls_array
from .llama import LlamaEndMarkers

__all__ = [
    "END",
    "MARKER",
    "Phi4MiniDialect",
    "Phi4MiniEndMarker",
    "Phi4MiniPlugin",
    "Phi4MiniReader",
]

MARKER: Final = "functools"
"""The word before the array of calls (plain text, not a special token)."""
END: Final = "<|end|>"
"""The end of each message in Phi-4-mini's chat format (a special token)."""


class Phi4MiniReader(JsonArrayReader):
    """Reads the JSON array after ``functools``, element by element.

    The block's start tag, ``functools[``, holds the array's opening bracket: the
    reader starts inside the array.
    """

    expected: ClassVar[str] = MARKER + '[{"name": "NAME", "arguments": {"key": "value"}}]'

    def begin(self, tag: str, span: Span, out: list[ParseEvent]) -> None:
        """The tag ends with the array's ``[``: the elements come next."""
        self.open_array()


class Phi4MiniPlugin(ReaderPlugin):
    """Reads Phi-4-mini's ``functools[…]``, to the array's end.

    ``ParserConfig(dialect="phi4_mini")`` registers one for you.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> parser = StreamToolParser({"read_file": ReadFile}, plugins=[Phi4MiniPlugin()])
        >>> text = 'functools[{"name": "read_file", "arguments": {"path": "a"}}] import functools'
        >>> events = parser.feed(text) + parser.close()
        >>> "".join(e.text for e in events if e.kind == "text")
        ' import functools'
        >>> [e.tool_instance for e in events if e.kind == "tool_call"]
        [ReadFile(path='a')]
    """

    name = "phi4_mini"
    start_tags: tuple[str, ...] = (MARKER + "[",)
    end_tag = ""
    # A plain word: it opens a call only before the first call object, not in prose.
    next_chars = "{"
    reader = Phi4MiniReader
    reserve_index = False  # each element of the array has its own call index


class Phi4MiniEndMarker(LlamaEndMarkers):
    """``<|end|>``, wherever it comes: framing, never text."""

    name = "phi4_mini_end"
    start_tags: tuple[str, ...] = (END,)  # type: ignore[assignment]


class Phi4MiniDialect(Dialect):
    """``functools[{"name": NAME, "arguments": {...}}, ...]`` (Phi-4-mini).

    Example:
        >>> print(Phi4MiniDialect().format_call("read_file", {"path": "a.py"}))
        functools[{"name": "read_file", "arguments": {"path": "a.py"}}]
    """

    name = "phi4_mini"
    title = 'functools[{"name": ..., "arguments": {...}}] (Phi-4-mini)'
    plugin_key = "phi4_mini"
    # "functools" is plain text; only <|end|> is a special token, and it is framing.
    special_tokens = False

    def make_plugin(self, names: tuple[str, ...]) -> Sequence[ParsePlugin]:
        """A :class:`Phi4MiniPlugin` and the ``<|end|>`` framing."""
        return [Phi4MiniPlugin(), Phi4MiniEndMarker()]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write one call: ``functools`` and a one-element array.

        Values that are not JSON types (models, enums, paths, dates) are written as
        their JSON form.  For several calls, use :meth:`format_calls`.
        """
        return self.format_calls([(tool_name, args)])

    def format_calls(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        """Write several calls as the one array the model writes after ``functools``."""
        if not calls:  # no calls write nothing, not an empty array
            return ""
        return MARKER + calls_array(calls)

    def _instructions(self) -> str:
        return "phi4_mini_instructions"


register(Phi4MiniDialect().record())
