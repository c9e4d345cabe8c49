r"""The ernie dialect: ERNIE 4.5 Thinking's calls, hermes' ``<tool_call>`` after its reasoning.

Written by Baidu's ERNIE-4.5-21B-A3B-Thinking, whose chat template ends the prompt with
``<|im_start|>assistant\n<think>\n``: the reply starts inside reasoning and shows only its
close, then either an answer between ``<response>`` tags or calls in hermes' blocks::

    The user wants the weather.
    </think>

    <response>
    It is sunny.
    </response>

    The user wants the weather.
    </think>


    <tool_call>
    {"name": "get_weather", "arguments": {"location": "Paris"}}
    </tool_call>

Theory of operation.  A call block is hermes' (``<tool_call>`` and a JSON call object),
so :class:`ErnieDialect` is a ``<tool_call>`` format on the shared plugin, read by
:class:`~stream_parser.dialects.hermes.HermesReader` (``ParserConfig(dialect=("hermes",
"ernie"))`` reads both with one plugin).  ``<response>``, ``</response>`` and
``<|im_end|>`` (the end of each message in the template) are framing wherever they come
(:class:`ErnieResponseTags`, the dialect's companion plugin, so it is there in any
combination), and so are the newline before ``</think>``, the newlines after it and
around the response tags: what lies between the response tags is the reply as the model
meant it.  A call written inside the reasoning is part of it and never runs (the
servers read calls from the content only).

``dialect_for_model`` says that ERNIE 4.5 Thinking replies start inside reasoning; told
nothing, the ``</think>`` is framing with a ``reasoning_close_without_open`` notice and
what follows reads the same.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from pydantic_core import to_jsonable_python

from ..core.kit import Framing, ThinkingFormat, register
from ._toolcall import ToolCallTagDialect
from .hermes import HermesReader
from .llama import LlamaEndMarkers

__all__ = [
    "END_OF_MESSAGE",
    "ERNIE_FRAMING",
    "ERNIE_THINKING",
    "RESPONSE_TAGS",
    "ErnieDialect",
    "ErnieResponseTags",
]

RESPONSE_TAGS: Final = ("<response>", "</response>")
END_OF_MESSAGE: Final = "<|im_end|>"

ERNIE_THINKING: Final = ThinkingFormat((("<think>", "</think>"),), bare_close=True)
"""``<think>…</think>``, the opening tag in the prompt (``dialect_for_model`` says so)."""

ERNIE_FRAMING: Final = Framing(thinking_open="\n", thinking_close="\n")
"""The template's newline after ``<think>`` and the model's before ``</think>``."""


class ErnieResponseTags(LlamaEndMarkers):
    """``<response>``, ``</response>`` and ``<|im_end|>``, wherever they come: framing.

    The dialect's companion plugin: built with the ``<tool_call>`` plugin whichever
    ``<tool_call>`` format is configured first (it takes that format's framing, which
    it does not need).
    """

    name = "ernie_response"
    start_tags: tuple[str, ...] = (*RESPONSE_TAGS, END_OF_MESSAGE)  # type: ignore[assignment]

    def __init__(self, framing: Framing | None = None) -> None:
        super().__init__()


class ErnieDialect(ToolCallTagDialect):
    """``</think>`` then ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (ERNIE 4.5).

    Example:
        >>> print(ErnieDialect().format_call("read_file", {"path": "a.py"}))
        <tool_call>
        {"name": "read_file", "arguments": {"path": "a.py"}}
        </tool_call>
    """

    name = "ernie"
    title = "a JSON object in <tool_call> tags after </think>, answers in <response> tags"
    block_reader = HermesReader  # claims no first character: reads what others do not
    framing = ERNIE_FRAMING
    thinking: ClassVar[ThinkingFormat | None] = ERNIE_THINKING
    companion = ErnieResponseTags
    # special_tokens stays False: vLLM's ERNIE parsers find <think>, <response> and
    # <tool_call> in the text with the server's default decoding.

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write ``<tool_call>``, the JSON object on its own line, ``</tool_call>``."""
        call = {"name": tool_name, "arguments": to_jsonable_python(dict(args))}
        return f"<tool_call>\n{json.dumps(call, ensure_ascii=False)}\n</tool_call>"

    def _instructions(self) -> str:
        return "ernie_instructions"


register(ErnieDialect().record())
