r"""The longcat dialect: LongCat-Flash's calls, hermes' JSON object in ``<longcat_tool_call>``.

Written by Meituan's LongCat-Flash-Chat, whose model card asks for each call in its own
block, the blocks placed one after another::

    <longcat_tool_call>
    {"name": "get_weather", "arguments": {"location": "Paris"}}
    </longcat_tool_call><longcat_tool_call>
    {"name": "get_time", "arguments": {}}
    </longcat_tool_call>

Theory of operation.  The inside of a block is hermes' call object, so
:class:`LongcatToolCallPlugin` runs the hermes reader
(:class:`~stream_parser.dialects.hermes.HermesReader`) between ``<longcat_tool_call>``
and ``</longcat_tool_call>``: the name announced once its string closes, the arguments
streamed as they come, a ``</longcat_tool_call>`` inside a JSON string read as content,
the whole object parsed once when the block closes (raw line breaks inside strings
accepted) and validated by the tool's model.  The markers are plain vocabulary that a
model may also write in prose, so ``<longcat_tool_call>`` opens a call only when ``{``
follows it (whitespace aside) and not right after a backtick.  ``</longcat_s>``, the
end of each reply, is framing wherever it comes (:class:`LongcatEndMarker`).

LongCat-Flash-Chat does not reason in tags, so a stray ``</think>`` is text.  The later
LongCat models (Flash-Thinking-2601, Flash-Lite) write another call format, a name and
``<longcat_arg_key>``/``<longcat_arg_value>`` pairs inside the same marker; that format
is not this dialect's, and such a block stays text (nothing runs).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pydantic_core import to_jsonable_python

from ..core.kit import ParsePlugin, ReaderPlugin, register
from ._base import Dialect
from .hermes import HermesReader
from .llama import LlamaEndMarkers

__all__ = [
    "CALL_END",
    "CALL_START",
    "END_OF_REPLY",
    "LongcatDialect",
    "LongcatEndMarker",
    "LongcatToolCallPlugin",
]

CALL_START: Final = "<longcat_tool_call>"
CALL_END: Final = "</longcat_tool_call>"
END_OF_REPLY: Final = "</longcat_s>"


class LongcatToolCallPlugin(ReaderPlugin):
    """Reads LongCat's ``<longcat_tool_call>`` blocks with the hermes reader.

    ``ParserConfig(dialect="longcat")`` registers one for you.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> parser = StreamToolParser({"read_file": ReadFile}, plugins=[LongcatToolCallPlugin()])
        >>> text = '<longcat_tool_call>{"name": "read_file", "arguments": {"path": "a"}}'
        >>> events = parser.feed(text + "</longcat_tool_call>") + parser.close()
        >>> events[-1].tool_instance
        ReadFile(path='a')
    """

    name = "longcat"
    start_tags: tuple[str, ...] = (CALL_START,)
    end_tag = CALL_END
    next_chars = "{"  # plain vocabulary: prose may mention the marker
    reader = HermesReader


class LongcatEndMarker(LlamaEndMarkers):
    """``</longcat_s>``, the end of each reply, wherever it comes: framing, never text."""

    name = "longcat_end"
    start_tags: tuple[str, ...] = (END_OF_REPLY,)  # type: ignore[assignment]


class LongcatDialect(Dialect):
    """``<longcat_tool_call>{"name": ..., "arguments": {...}}</longcat_tool_call>``.

    Example:
        >>> print(LongcatDialect().format_call("read_file", {"path": "a.py"}))
        <longcat_tool_call>
        {"name": "read_file", "arguments": {"path": "a.py"}}
        </longcat_tool_call>
    """

    name = "longcat"
    title = "a JSON object with the tool's name and arguments in <longcat_tool_call> tags"
    call_separator = ""  # the template places a turn's calls one after another
    plugin_key = "longcat"
    # </longcat_s> is the tokenizer's end-of-sequence token; vLLM's LongCat parser (the
    # hermes one, other markers) asks its server to keep special tokens. Asking does no
    # harm where the call markers are plain vocabulary.
    special_tokens = True

    def make_plugin(self, names: tuple[str, ...]) -> Sequence[ParsePlugin]:
        """The ``<longcat_tool_call>`` plugin and the ``</longcat_s>`` framing."""
        return [LongcatToolCallPlugin(), LongcatEndMarker()]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write the call as the model card shows one: the JSON object on its own line."""
        call = {"name": tool_name, "arguments": to_jsonable_python(dict(args))}
        return f"{CALL_START}\n{json.dumps(call, ensure_ascii=False)}\n{CALL_END}"

    def _instructions(self) -> str:
        return "longcat_instructions"


register(LongcatDialect().record())
