r"""The internlm dialect: InternLM 2 and 2.5's ``<|action_start|><|plugin|>`` calls.

Written by InternLM2 and InternLM2.5 chat models (InternLM's own chat format, and the
tool chat template vLLM serves them with)::

    Sure, I will look it up.<|action_start|><|plugin|>
    {"name": "get_weather", "parameters": {"location": "Shanghai"}}<|action_end|>

Theory of operation.  The inside of a block is hermes' JSON call object, so
:class:`InternLMPlugin` runs the hermes reader
(:class:`~stream_parser.dialects.hermes.HermesReader`) between ``<|action_start|>``
``<|plugin|>`` and ``<|action_end|>``: the name is announced once its string closes, the
arguments stream as they come, and the closed block is parsed once and validated.  The
model writes the arguments under ``"parameters"`` (its own chat format); the template's
history writes ``"arguments"``: the hermes reader counts both
(:data:`~stream_parser.dialects.hermes.ARGUMENT_KEYS`).  The newline after
``<|plugin|>`` is JSON whitespace inside the block.  The model writes one call per
reply; a second block is read as a call of its own.

All the markers are special tokens, which servers drop unless asked to keep them
(vLLM's parser asks, ``skip_special_tokens=False``).  ``<|action_start|>`` followed by
``<|interpreter|>`` is InternLM's code interpreter, not a tool: it is text.
``<|im_end|>``, the end of each message, is framing (:class:`InternLMEndMarker`).
InternLM 2 and 2.5 do not reason in tags.
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
    "ACTION_END",
    "ACTION_START",
    "END_OF_MESSAGE",
    "PLUGIN",
    "InternLMDialect",
    "InternLMEndMarker",
    "InternLMPlugin",
]

ACTION_START: Final = "<|action_start|>"
PLUGIN: Final = "<|plugin|>"
ACTION_END: Final = "<|action_end|>"
END_OF_MESSAGE: Final = "<|im_end|>"


class InternLMPlugin(ReaderPlugin):
    r"""Reads InternLM's ``<|action_start|><|plugin|>{…}<|action_end|>`` blocks.

    ``ParserConfig(dialect="internlm")`` registers one for you.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> parser = StreamToolParser({"read_file": ReadFile}, plugins=[InternLMPlugin()])
        >>> text = '<|action_start|><|plugin|>\n{"name": "read_file", "parameters": {"path": "a"}}'
        >>> events = parser.feed(text + "<|action_end|>") + parser.close()
        >>> events[-1].tool_instance
        ReadFile(path='a')
    """

    name = "internlm"
    start_tags: tuple[str, ...] = (ACTION_START + PLUGIN,)
    end_tag = ACTION_END
    reader = HermesReader


class InternLMEndMarker(LlamaEndMarkers):
    """``<|im_end|>``, wherever it comes: framing, never text."""

    name = "internlm_end"
    start_tags: tuple[str, ...] = (END_OF_MESSAGE,)  # type: ignore[assignment]


class InternLMDialect(Dialect):
    """``<|action_start|><|plugin|>{"name": NAME, "parameters": {...}}<|action_end|>``.

    Example:
        >>> print(InternLMDialect().format_call("read_file", {"path": "a.py"}))
        <|action_start|><|plugin|>
        {"name": "read_file", "parameters": {"path": "a.py"}}<|action_end|>
    """

    name = "internlm"
    title = '<|action_start|><|plugin|>{"name": ..., "parameters": {...}}<|action_end|> (InternLM)'
    call_separator = ""  # the template writes a turn's blocks one after another
    plugin_key = "internlm"
    special_tokens = True  # every marker is a special token: servers drop them unless asked
    markers = (ACTION_START, PLUGIN)  # two tokens: check_dialect streams each as one

    def make_plugin(self, names: tuple[str, ...]) -> Sequence[ParsePlugin]:
        """An :class:`InternLMPlugin` and the ``<|im_end|>`` framing."""
        return [InternLMPlugin(), InternLMEndMarker()]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write one call as the model does: its arguments under ``"parameters"``.

        Values that are not JSON types (models, enums, paths, dates) are written as
        their JSON form.
        """
        call = {"name": tool_name, "parameters": to_jsonable_python(dict(args), by_alias=True)}
        return f"{ACTION_START}{PLUGIN}\n{json.dumps(call, ensure_ascii=False)}{ACTION_END}"

    def _instructions(self) -> str:
        return "internlm_instructions"


register(InternLMDialect().record())
