"""Reasoning formats: the thinking tags each dialect's model writes.

Kept apart from the dialect registry so that ``ParserConfig`` can resolve its unset
reasoning options (``thinking_tags=None``, ``start_in_thinking=None``) from the
configured dialects (``ParserConfig.thinking_pairs``, ``starts_in_thinking``) without
depending on the plugin interface.  They are resolved when asked, not when the
configuration is made, so that a copy with other dialects gets theirs.  The dialects register
their formats through :func:`~stream_parser.core.dialect_registry.register_dialect`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .dialect_names import load_dialects

__all__ = ["ThinkingFormat", "dialect_thinking"]


@dataclass(frozen=True, slots=True)
class ThinkingFormat:
    r"""A dialect's reasoning format: how its model writes thinking in the reply.

    Attributes:
        tags: the ``(start, end)`` thinking tag pairs (``(("[THINK]", "[/THINK]"),)``).
        prefilled: the chat template writes the opening tag itself, so the reply starts
            inside reasoning (``ParserConfig.start_in_thinking`` unless set).
        bare_close: a closing tag without an opening one closes reasoning that started
            at the reply's start.  The reply is then read as starting inside reasoning,
            and an opening tag written at its very start is taken as that block's own
            opening (``<think>a</think>b`` and ``a</think>b`` read alike).

    Example:
        >>> ThinkingFormat((("[THINK]", "[/THINK]"),)).tags[0][1]
        '[/THINK]'
    """

    tags: tuple[tuple[str, str], ...]
    prefilled: bool = False
    bare_close: bool = False


# name -> reasoning format, for the dialects that declare one (see register_dialect).
_THINKING: dict[str, ThinkingFormat] = {}


def dialect_thinking(names: Sequence[str]) -> ThinkingFormat | None:
    """The reasoning format of the named dialects, or None when none declares one.

    The tag pairs of every declaring dialect, in configuration order (a start tag
    declared twice keeps its first pair); ``prefilled`` and ``bare_close`` when any of
    them says so.  A built-in dialect not loaded yet is loaded first (its module
    registers its format).  Unknown names are skipped: the parser reports them.
    """
    load_dialects(names)
    formats = [_THINKING[name] for name in names if name in _THINKING]
    if not formats:
        return None
    pairs: dict[str, str] = {}
    for fmt in formats:
        for start, end in fmt.tags:
            pairs.setdefault(start, end)
    return ThinkingFormat(
        tuple(pairs.items()),
        prefilled=any(f.prefilled for f in formats),
        bare_close=any(f.bare_close for f in formats),
    )
