"""Testing helpers: scripted models that need no network, and event utilities.

* :func:`merge_deltas`, :func:`assert_lossless`, :func:`tiling_events` compare and check
  event sequences.
* :class:`ScriptedModel` and :class:`FunctionModel` implement
  :class:`~stream_parser.llm.ChatModel` without a network.
* :func:`validate_history` and :func:`assert_valid_history` check that an OpenAI-format
  chat history is one a server accepts (every tool call answered once, directly after
  its assistant message, in order; roles in a valid order).
* :func:`check_dialect` reads a dialect's fixture cases whole, one character at a time,
  split at every position and with each marker as one token, and checks that they read
  alike, tile, and make their calls (:mod:`stream_parser.testing.dialects`);
  :func:`dialect_markers` lists those markers, for :func:`check_chunkings`.
* :mod:`stream_parser.testing.fixtures`: example tool models (a Cline-like tool set:
  ``read_file``, ``write_to_file``, ``execute_command``...) for tests and examples.
"""

from __future__ import annotations

from .dialects import check_chunkings, check_dialect, dialect_markers
from .events import assert_lossless, merge_deltas, tiling_events
from .history import assert_valid_history, validate_history
from .models import (
    ChatRequest,
    FunctionModel,
    NativeCall,
    Reply,
    ScriptedModel,
    ScriptedReply,
    ScriptExhaustedError,
)

__all__ = [
    "ChatRequest",
    "FunctionModel",
    "NativeCall",
    "Reply",
    "ScriptExhaustedError",
    "ScriptedModel",
    "ScriptedReply",
    "assert_lossless",
    "assert_valid_history",
    "check_chunkings",
    "check_dialect",
    "dialect_markers",
    "merge_deltas",
    "tiling_events",
    "validate_history",
]
