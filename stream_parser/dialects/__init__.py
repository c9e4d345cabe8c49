"""Tool-call dialects: the formats in which models write tool calls, as plugins.

``ParserConfig(dialect=...)`` names one or several; :func:`dialect_plugins` builds the
plugins for them.  ``"xml"`` is the core's own format and needs no plugin.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..errors import ConfigError
from ..plugins import ParsePlugin

__all__ = ["DIALECTS", "dialect_plugins"]

DIALECTS: dict[str, Callable[[], ParsePlugin] | None] = {
    "xml": None,  # handled by the core itself
}
"""Known dialect names -> factory of the plugin that reads them (None: the core)."""


def dialect_plugins(names: Sequence[str]) -> list[ParsePlugin]:
    """New plugin instances for the named dialects.

    Raises:
        ConfigError: a name is not a known dialect.
    """
    plugins: list[ParsePlugin] = []
    for name in names:
        if name not in DIALECTS:
            known = ", ".join(sorted(DIALECTS))
            raise ConfigError(f"unknown dialect {name!r} (known: {known})")
        factory = DIALECTS[name]
        if factory is not None:
            plugins.append(factory())
    return plugins
