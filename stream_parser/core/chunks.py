"""Stream items from chat APIs, in a provider-neutral shape.

The parser's drivers accept, per stream item, a ``str``, a ``(content, metadata)`` tuple
(a ``metadata`` carrying ``usage`` becomes a :class:`TokenUsageEvent`) or a
:class:`ChatDelta`: one streamed chunk of a chat completion, as produced by the adapters in
:mod:`stream_parser.llm`.  This module only defines the shapes; it imports nothing from
the LLM layer, so the core stays free of HTTP and SDKs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["ChatDelta", "StreamItem", "ToolCallDelta"]

StreamItem = Any
"""A stream item: ``str``, ``bytes``, ``(content, metadata)``, :class:`ChatDelta` or a chat
completion chunk (the ``openai`` SDK's ``ChatCompletionChunk``, or a dict of its JSON)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallDelta:
    """A fragment of a natively streamed tool call (OpenAI ``delta.tool_calls[i]``).

    Fragments with the same ``index`` belong to the same call; ``id`` and ``name``
    usually come with the first fragment, ``arguments`` is a piece of a JSON string.
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatDelta:
    """One streamed chunk of a chat reply.

    Attributes:
        content: visible text (may itself contain thinking tags or XML tool calls).
        reasoning: reasoning text sent on a separate channel (``reasoning_content``).
        tool_calls: native tool-call fragments.
        usage: a usage report (provider object or dict), usually in the last chunk.
        finish_reason: why the reply ended (``"stop"``, ``"tool_calls"``, ``"length"``...).
        error: set when the transport failed mid-reply (dropped connection, bad SSE); the
            reply ends here.
    """

    content: str | None = None
    reasoning: str | None = None
    tool_calls: tuple[ToolCallDelta, ...] = ()
    usage: Any = None
    finish_reason: str | None = None
    error: str | None = None
