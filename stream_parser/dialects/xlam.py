r"""The xlam dialect: Salesforce xLAM-2's calls, one JSON array that is the whole reply.

Written by the xLAM-2 function-calling models (``Llama-xLAM-2-8b-fc-r``,
``xLAM-2-32b-fc-r``...), as their chat template renders an assistant turn with calls::

    [{"name": "get_weather", "arguments": {"location": "Paris"}}, {"name": …}]

There is no marker: the array is the reply.  vLLM's ``xlam`` parser also takes the array
in a Markdown fence (```` ```json ````), after ``[TOOL_CALLS]``, inside
``<tool_call>…</tool_call>``, and after ``</think>``, so a reply may come in any of those
forms, with prose before the wrapped ones.

Theory of operation.  Every form is the one array, read by the shared
:class:`~stream_parser.dialects.json_array.JsonArrayReader` (each element a call of its
own, started and streamed as it arrives); each form is a plugin around it:

* a ``[`` that opens the reply (:class:`XlamArrayPlugin`, whitespace, reasoning and
  framing before it allowed) is read by the unmarked-array rule
  (:class:`~stream_parser.dialects.unmarked_array.UnmarkedArrayReader`): it is a call
  only when an element names a registered tool and has ``"arguments"``; any other JSON is
  the answer, text exactly as it came.  After prose, a bare array is text;
* a fence (:class:`XlamFencePlugin`, ```` ```json ```` or ```` ``` ```` followed by
  ``[``) anywhere: the same rule (a fence of JSON is often an answer), the closing
  ```` ``` ```` ends the block;
* ``[TOOL_CALLS]`` followed by ``[`` (:class:`XlamMarkerPlugin`) and ``<tool_call>``
  followed by ``[`` or ``{`` (:class:`XlamToolCallPlugin`) anywhere: a marker says a call
  follows, so the block is read as calls (an unknown name is ``unknown_tool``, a broken
  array ``malformed_tool``); ``</tool_call>`` ends its block.

The fence's and the tags' markup, the array's brackets and commas are framing.  None of
these markers is a special token of the xLAM tokenizers (Llama 3.1's and Qwen 2.5's),
so servers keep them; prose that mentions them (after a backtick, or not followed by
the array) is text.  The end of a message, ``<|eot_id|>`` (the Llama-based models) and
``<|im_end|>`` (the Qwen-based ones), is framing wherever it comes
(:class:`XlamEndMarkers`).  The templates write no reasoning; ``<think>…</think>`` is
read as reasoning (:data:`XLAM_THINKING`), and a ``</think>`` with nothing opened is
framing with a notice, after which a bare array still opens the reply.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

from ..core.kit import ParsePlugin, ReaderPlugin, ThinkingFormat, register
from ._base import Dialect
from .json_array import JsonArrayReader, calls_array
from .llama import LlamaEndMarkers
from .unmarked_array import BareArrayPlugin, UnmarkedArrayReader

__all__ = [
    "END_MARKERS",
    "FENCE_END",
    "FENCE_STARTS",
    "TOOL_CALLS",
    "TOOL_CALL_TAGS",
    "XLAM_THINKING",
    "XlamArrayPlugin",
    "XlamDialect",
    "XlamEndMarkers",
    "XlamFencePlugin",
    "XlamFencedReader",
    "XlamMarkerPlugin",
    "XlamMarkedReader",
    "XlamTaggedReader",
    "XlamToolCallPlugin",
]

TOOL_CALLS: Final = "[TOOL_CALLS]"
TOOL_CALL_TAGS: Final = ("<tool_call>", "</tool_call>")
FENCE_STARTS: Final = ("```json", "```")
FENCE_END: Final = "```"
END_MARKERS: Final = ("<|eot_id|>", "<|im_end|>")
"""The end of a message in the Llama-based and the Qwen-based xLAM-2 templates."""

XLAM_THINKING: Final = ThinkingFormat((("<think>", "</think>"),))
"""``<think>…</think>``: not in the templates, but vLLM reads a call after ``</think>``."""

_EXPECTED: Final = '[{"name": "NAME", "arguments": {"key": "value"}}]'


class XlamMarkedReader(JsonArrayReader):
    """The array after ``[TOOL_CALLS]``: a marker said a call follows."""

    expected: ClassVar[str] = TOOL_CALLS + _EXPECTED


class XlamTaggedReader(JsonArrayReader):
    """The array (or a lone call object) inside ``<tool_call>…</tool_call>``: a marked one."""

    until_end_tag: ClassVar[bool] = True
    expected: ClassVar[str] = f"{TOOL_CALL_TAGS[0]}{_EXPECTED}{TOOL_CALL_TAGS[1]}"


class XlamFencedReader(UnmarkedArrayReader):
    """The array inside a Markdown fence: a call only if an element proves one."""

    until_end_tag: ClassVar[bool] = True
    expected: ClassVar[str] = f"```json\n{_EXPECTED}\n```"


class XlamArrayPlugin(BareArrayPlugin):
    """A ``[`` that opens the reply: the xLAM array, or an answer (the unmarked rule).

    ``ParserConfig(dialect="xlam")`` registers one for you, with the other forms.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> parser = StreamToolParser({"read_file": ReadFile}, plugins=[XlamArrayPlugin()])
        >>> text = '[{"name": "read_file", "arguments": {"path": "a"}}]'
        >>> events = parser.feed(text) + parser.close()
        >>> [e.tool_instance for e in events if e.kind == "tool_call"]
        [ReadFile(path='a')]
    """

    name = "xlam"


class XlamFencePlugin(ReaderPlugin):
    """The array in a Markdown fence (```` ```json ```` or ```` ``` ```` then ``[``), anywhere."""

    name = "xlam_fence"
    start_tags: tuple[str, ...] = FENCE_STARTS
    end_tag = FENCE_END
    next_chars = "["
    reader = XlamFencedReader
    reserve_index = False  # each element reserves its index once it proves a call


class XlamMarkerPlugin(ReaderPlugin):
    """``[TOOL_CALLS]`` and the array after it, wherever it comes; the array ends the block."""

    name = "xlam_tool_calls"
    start_tags: tuple[str, ...] = (TOOL_CALLS,)
    end_tag = ""
    next_chars = "["
    reader = XlamMarkedReader
    reserve_index = False  # each element of the array has its own call index


class XlamToolCallPlugin(ReaderPlugin):
    """``<tool_call>[…]</tool_call>`` (or one call object inside), wherever it comes."""

    name = "xlam_tool_call"
    start_tags: tuple[str, ...] = (TOOL_CALL_TAGS[0],)
    end_tag = TOOL_CALL_TAGS[1]
    next_chars = "[{"
    reader = XlamTaggedReader
    reserve_index = False


class XlamEndMarkers(LlamaEndMarkers):
    """``<|eot_id|>`` and ``<|im_end|>``, wherever they come: framing, never text."""

    name = "xlam_end"
    start_tags: tuple[str, ...] = END_MARKERS  # type: ignore[assignment]


class XlamDialect(Dialect):
    """``[{"name": NAME, "arguments": {...}}, ...]``, the whole reply (Salesforce xLAM-2).

    Example:
        >>> print(XlamDialect().format_call("read_file", {"path": "a.py"}))
        [{"name": "read_file", "arguments": {"path": "a.py"}}]
    """

    name = "xlam"
    title = 'the reply is one JSON array of calls, [{"name": ..., "arguments": {...}}] (xLAM)'
    plugin_key = "xlam"
    thinking = XLAM_THINKING
    shared_rules = False  # a call is the whole reply: its own instructions say so

    def make_plugin(self, names: tuple[str, ...]) -> Sequence[ParsePlugin]:
        """The bare array's plugin, the wrapped forms' and the end markers."""
        return [
            XlamArrayPlugin(),
            XlamFencePlugin(),
            XlamMarkerPlugin(),
            XlamToolCallPlugin(),
            XlamEndMarkers(),
        ]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write one call as the template renders it: a one-element array.

        Values that are not JSON types (models, enums, paths, dates) are written as
        their JSON form.  For several calls, use :meth:`format_calls`: the model writes
        them in one array, the whole reply.
        """
        return self.format_calls([(tool_name, args)])

    def format_calls(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        """Write several calls as the one array the template renders."""
        if not calls:  # no calls write nothing, not an empty array
            return ""
        return calls_array(calls)

    def _instructions(self) -> str:
        return "xlam_instructions"


register(XlamDialect().record())
