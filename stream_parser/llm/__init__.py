"""Chat models: the :class:`ChatModel` protocol, OpenAI-format messages, an OpenAI client.

* :class:`ChatModel`: ``stream(messages, *, tools=None, **options)`` yields
  :class:`~stream_parser.core.chunks.ChatDelta` items, which the parser's drivers accept.
* :class:`OpenAIChatModel`: any OpenAI-compatible server, on the ``openai`` SDK (the
  ``stream-parser[openai]`` extra; the SDK is imported only when a model is created).
* :class:`ModelError`: raised when a reply cannot be started (HTTP error, no connection,
  no answer within ``reply_timeout``, a request that cannot be sent).  Once a reply has
  started nothing raises: whatever goes wrong ends it with a final
  ``ChatDelta(error=...)``, which the parser reports as a ``stream_error`` event.
  :class:`ContextLengthError`, a subclass, says the conversation is too long for the
  model's context, so that an agent can shorten it and try again.
* The message types (:data:`Message` and its parts) describe the OpenAI chat format.

Test doubles that implement :class:`ChatModel` without a network are in
:mod:`stream_parser.testing`.
"""

from __future__ import annotations

from .base import (
    AssistantMessage,
    AudioContentPart,
    ChatModel,
    ContentPart,
    ContextLengthError,
    DeveloperMessage,
    FunctionCall,
    ImageContentPart,
    ImageURL,
    InputAudio,
    Message,
    ModelError,
    SystemMessage,
    TextContentPart,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from .openai import OpenAIChatModel

__all__ = [
    "AssistantMessage",
    "AudioContentPart",
    "ChatModel",
    "ContentPart",
    "ContextLengthError",
    "DeveloperMessage",
    "FunctionCall",
    "ImageContentPart",
    "ImageURL",
    "InputAudio",
    "Message",
    "ModelError",
    "OpenAIChatModel",
    "SystemMessage",
    "TextContentPart",
    "ToolCall",
    "ToolMessage",
    "UserMessage",
]
