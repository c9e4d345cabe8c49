"""Reasoning formats: the thinking tags each dialect's model writes.

A dialect's record (:class:`~stream_parser.core._dialect_registry.DialectRecord`) holds
its format; ``ParserConfig`` resolves its unset reasoning options
(``thinking_tags=None``, ``start_in_thinking=None``) from the configured dialects'
(:func:`~stream_parser.core._dialect_registry.dialect_thinking`) when asked, not when the
configuration is made, so that a copy with other dialects gets theirs.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ThinkingFormat"]


@dataclass(frozen=True, slots=True)
class ThinkingFormat:
    r"""A dialect's reasoning format: how its model writes thinking in the reply.

    Attributes:
        tags: the ``(start, end)`` thinking tag pairs (``(("[THINK]", "[/THINK]"),)``).
        prefilled: the chat template writes the opening tag itself, so the reply starts
            inside reasoning (``ParserConfig.start_in_thinking`` unless set).
        bare_close: the model's template may open reasoning in the prompt, so a reply
            told to start inside reasoning (``start_in_thinking``, set from
            ``dialect_for_model``) takes an opening tag written at its very start as
            that block's own opening (``<think>a</think>b`` and ``a</think>b`` read
            alike).  It does not start the reply inside reasoning by itself.

    Example:
        >>> ThinkingFormat((("[THINK]", "[/THINK]"),)).tags[0][1]
        '[/THINK]'
    """

    tags: tuple[tuple[str, str], ...]
    prefilled: bool = False
    bare_close: bool = False
