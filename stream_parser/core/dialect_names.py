"""Which dialect names exist, known before any dialect is loaded.

``ParserConfig(dialect=...)`` checks its names when it is made
(:func:`~stream_parser.core.dialect_registry.check_dialect_names`), so that a misspelt
name is a ``ConfigError`` then, not at the first parser.  The built-in dialects live in the
``dialects`` layer above the core, which registers their plugins, framing and reasoning
formats with the core (:mod:`~stream_parser.core.dialect_registry`) when it is imported.
Importing that layer costs time that a program which never names a dialect should not
pay, and ``import stream_parser`` does not do it.  So the core keeps the built-in names
here, as plain strings, and :func:`load_dialects` imports a built-in dialect's module the
first time its plugin, framing or reasoning format is asked for.

The core never imports the layer by a statement: :func:`load_dialects` imports it by
name, so the floors keep pointing downward.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Iterable, Mapping
from types import MappingProxyType
from typing import Final

from ..errors import ConfigError

__all__ = ["BUILTIN_DIALECTS", "check_dialect_names", "dialect_names", "load_dialects"]

BUILTIN_DIALECTS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "xml": "",  # the core's own format: nothing to load
        "deepseek": "deepseek",
        "gemma4": "gemma4",
        "glm": "glm",
        "gpt_oss": "gpt_oss",
        "hermes": "hermes",
        "kimi": "kimi",
        "llama": "llama",
        "mistral": "mistral",
        "qwen3_coder": "qwen3_coder",
    }
)
"""The built-in dialect names -> their module in ``stream_parser.dialects`` ("" for
the core's own XML format)."""


#: The names registered with the core.  The registry
#: (:mod:`~stream_parser.core.dialect_registry`) puts its own lookup here when it loads:
#: it imports this module, so this module cannot import it.  Until then only the core's
#: own format is registered.
def _only_the_core() -> Collection[str]:
    return ("xml",)


registered: Callable[[], Collection[str]] = _only_the_core


def dialect_names() -> tuple[str, ...]:
    """Every known dialect name, sorted: the built-in ones and those registered."""
    return tuple(sorted(set(BUILTIN_DIALECTS).union(registered())))


def check_dialect_names(names: Iterable[str]) -> None:
    """Raise the error of a name that is not a known dialect (none is loaded).

    Known are the built-in names, whether loaded yet or not, and the names registered
    so far.

    Raises:
        ConfigError: a name is ``"auto"`` (which needs a model's name), or unknown; the
            message lists the known names.
    """
    for name in names:
        if name in BUILTIN_DIALECTS or name in registered():
            continue
        if name == "auto":
            raise ConfigError(
                "dialect 'auto' needs the model's name, which a parser configuration does "
                "not have: use ReActAgent(model, tools, dialect='auto') or "
                "@llm_function(protocol='auto') / @llm_chat(protocol='auto'), which read "
                "it from the model, or find the dialect with "
                "stream_parser.dialect_for_model('<model name>').dialect"
            )
        raise ConfigError(f"unknown dialect {name!r} (known: {', '.join(dialect_names())})")


# ``stream_parser.dialects``, spelt from this module's own name.
_DIALECTS_PACKAGE: Final = __name__.rsplit(".", 2)[0] + ".dialects"


def load_dialects(names: Iterable[str]) -> None:
    """Import the modules of the named built-in dialects (once: later calls are lookups).

    Importing a dialect's module registers its plugin, framing and reasoning format.
    Other names are left alone: the caller reports the unknown ones.
    """
    for name in names:
        module = BUILTIN_DIALECTS.get(name)
        if module:
            importlib.import_module(f"{_DIALECTS_PACKAGE}.{module}")
