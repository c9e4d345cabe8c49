r"""Tool-call dialects: the formats in which models write tool calls.

``ParserConfig(dialect=...)`` names one or several.  Importing this package registers
each dialect's plugin factory with the core
(:mod:`stream_parser.core.dialect_registry`), which builds the plugins for a parser's
configuration; the core itself never imports the dialects.

======================  ==============================================================
name                    format
======================  ==============================================================
``"xml"``               ``<read_file><path>a.py</path></read_file>`` (the core's own)
``"hermes"``            ``<tool_call>{"name": "read_file", "arguments": {...}}</tool_call>``
``"qwen3_coder"``       ``<tool_call><function=read_file><parameter=path>a.py</parameter>``
                        ``</function></tool_call>``
======================  ==============================================================

Each dialect is a :class:`Dialect` in :data:`DIALECTS`: it builds the plugin that reads
it, and writes example calls and instructions for prompts (:meth:`Dialect.format_call`,
:meth:`Dialect.usage_instructions`).  hermes and qwen3_coder share one plugin,
:class:`ToolCallPlugin`, because both open with ``<tool_call>``; qwen3_coder adds
:class:`BareFunctionPlugin` for its calls written without ``<tool_call>``.  Both
dialects declare the framing of the Qwen chat templates
(:data:`~stream_parser.core.dialect_registry.QWEN3_FRAMING`: ``<think>\\n…\\n</think>\\n\\n``,
``\\n<tool_call>``), which belongs to the blocks' spans.  See ``docs/dialects.md``.
"""

from __future__ import annotations

from ..core.dialect_registry import (
    NO_FRAMING,
    QWEN3_FRAMING,
    Framing,
    ThinkingFormat,
    dialect_plugins,
    register_dialect,
)
from ..errors import ConfigError
from ._base import Dialect, XmlDialect
from ._toolcall import ToolCallPlugin
from .deepseek import DeepSeekDialect
from .detect import ModelDialect, dialect_for_model
from .gemma4 import Gemma4Dialect
from .glm import GlmDialect
from .gpt_oss import GptOssDialect
from .hermes import HermesDialect
from .kimi import KimiDialect
from .llama import LlamaDialect
from .mistral import MistralDialect
from .qwen3_coder import BareFunctionPlugin, Qwen3CoderDialect

__all__ = [
    "DIALECTS",
    "NO_FRAMING",
    "QWEN3_FRAMING",
    "BareFunctionPlugin",
    "Dialect",
    "Framing",
    "HermesDialect",
    "ModelDialect",
    "Qwen3CoderDialect",
    "ThinkingFormat",
    "ToolCallPlugin",
    "XmlDialect",
    "add_dialect",
    "dialect_for_model",
    "dialect_plugins",
    "get_dialect",
]

DIALECTS: dict[str, Dialect] = {
    dialect.name: dialect for dialect in (XmlDialect(), HermesDialect(), Qwen3CoderDialect())
}
"""Known dialect names -> the dialect (how to read it, how to write it)."""


def get_dialect(name: str) -> Dialect:
    """The dialect of a name, e.g. to show its format in a prompt.

    Raises:
        ConfigError: the name is not a known dialect.
    """
    dialect = DIALECTS.get(name)
    if dialect is None:
        known = ", ".join(sorted(DIALECTS))
        raise ConfigError(f"unknown dialect {name!r} (known: {known})")
    return dialect


def add_dialect(dialect: Dialect) -> None:
    """Add a dialect to :data:`DIALECTS` and make its name known to ``ParserConfig``.

    A dialect registered under an existing name replaces it.
    """
    DIALECTS[dialect.name] = dialect
    register_dialect(
        dialect.name,
        dialect.plugin_key,
        dialect.make_plugin,
        dialect.framing,
        thinking=dialect.thinking,
        tool_names=dialect.tool_names,
    )


for _dialect in tuple(DIALECTS.values()):
    add_dialect(_dialect)
# The model families, each in its module (docs/dialects.md).
for _family in (
    DeepSeekDialect(),
    Gemma4Dialect(),
    GlmDialect(),
    GptOssDialect(),
    KimiDialect(),
    LlamaDialect(),
    MistralDialect(),
):
    add_dialect(_family)
