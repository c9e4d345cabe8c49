r"""Tool-call dialects: the formats in which models write tool calls.

``ParserConfig(dialect=...)`` names one or several.  Each dialect is one record on the
core's registry (:class:`~stream_parser.core.kit.DialectRecord`): its plugin factory,
framing, reasoning format, special tokens, model-name patterns, and the :class:`Dialect`
that writes its calls.  The built-in names and model patterns are known before any
dialect module is imported; a dialect's module is imported (and registers its record)
the first time it is used, so importing this package loads none of the families.

======================  ==============================================================
name                    format
======================  ==============================================================
``"xml"``               ``<read_file><path>a.py</path></read_file>`` (the core's own)
``"hermes"``            ``<tool_call>{"name": "read_file", "arguments": {...}}</tool_call>``
``"qwen3_coder"``       ``<tool_call><function=read_file><parameter=path>a.py</parameter>``
                        ``</function></tool_call>``
======================  ==============================================================

:data:`DIALECTS` maps each name to its :class:`Dialect` (a view of the registry: it
loads a dialect when its entry is read), which writes example calls and instructions for
prompts (:meth:`Dialect.format_call`, :meth:`Dialect.usage_instructions`).  hermes,
qwen3_coder and glm share one plugin, :class:`ToolCallPlugin`, because all open with
``<tool_call>``.  See ``docs/dialects.md``.
"""

from __future__ import annotations

import dataclasses
import importlib
from collections.abc import Iterator, MutableMapping
from typing import Any

from ..core.kit import (
    NO_FRAMING,
    QWEN3_FRAMING,
    Framing,
    ThinkingFormat,
    dialect_plugins,
    dialect_record,
    register,
    registered_records,
    unregister,
)
from ..errors import ConfigError
from ._base import Dialect, XmlDialect
from ._toolcall import ToolCallPlugin
from .detect import ModelDialect, dialect_for_model

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


class _DialectsView(MutableMapping[str, Dialect]):
    """Dialect names -> their :class:`Dialect`, read from the registry's records.

    Reading an entry loads a built-in dialect not loaded yet; setting one registers the
    dialect (:func:`add_dialect`), deleting one forgets it.  Names registered without a
    ``Dialect`` (``register_dialect``) have no entry.
    """

    def __getitem__(self, name: str) -> Dialect:
        records = registered_records()
        if name not in records:
            raise KeyError(name)
        try:
            dialect = dialect_record(name, writer=True).dialect
        except ConfigError:
            raise KeyError(name) from None
        if not isinstance(dialect, Dialect):
            raise KeyError(name)
        return dialect

    def __setitem__(self, name: str, dialect: Dialect) -> None:
        # Under another name than its own, the dialect's record is registered as ``name``.
        register(dataclasses.replace(dialect.record(), name=name))

    def __delitem__(self, name: str) -> None:
        if name not in self:
            raise KeyError(name)
        unregister(name)

    def _names(self) -> list[str]:
        # A built-in dialect not loaded yet (``module`` set) has a writer once it loads.
        return [
            name
            for name, record in registered_records().items()
            if record.module or isinstance(record.dialect, Dialect) or name == "xml"
        ]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self._names()

    def __repr__(self) -> str:
        return f"<dialects {', '.join(sorted(self._names()))}>"


DIALECTS: MutableMapping[str, Dialect] = _DialectsView()
"""Known dialect names -> the dialect (how to read it, how to write it): a view of the
registry."""


def get_dialect(name: str) -> Dialect:
    """The dialect of a name, e.g. to show its format in a prompt.

    Raises:
        ConfigError: the name is not a known dialect.
    """
    try:
        return DIALECTS[name]
    except KeyError:
        known = ", ".join(sorted(DIALECTS))
        raise ConfigError(f"unknown dialect {name!r} (known: {known})") from None


def add_dialect(dialect: Dialect) -> None:
    """Register a dialect's record (:meth:`Dialect.record`): its name is known from now on.

    A dialect registered under an existing name replaces it.
    """
    register(dialect.record())


add_dialect(XmlDialect())

# The classes of the families, loaded with their module when first named here.
_LAZY = {
    "BareFunctionPlugin": "qwen3_coder",
    "DeepSeekDialect": "deepseek",
    "ErnieDialect": "ernie",
    "Gemma4Dialect": "gemma4",
    "GlmDialect": "glm",
    "GptOssDialect": "gpt_oss",
    "GraniteDialect": "granite",
    "HermesDialect": "hermes",
    "HunyuanDialect": "hunyuan",
    "InternLMDialect": "internlm",
    "KimiDialect": "kimi",
    "LlamaDialect": "llama",
    "LongcatDialect": "longcat",
    "MiniMaxDialect": "minimax_m2",
    "MistralDialect": "mistral",
    "Phi4MiniDialect": "phi4_mini",
    "PythonicDialect": "pythonic",
    "Qwen3CoderDialect": "qwen3_coder",
    "SeedOssDialect": "seed_oss",
    "XlamDialect": "xlam",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
