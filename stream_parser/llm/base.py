"""The model side of the library: the :class:`ChatModel` protocol and its message types.

A chat model, for this library, is anything that takes a conversation in the OpenAI chat
format and streams back its reply as :class:`~stream_parser.core.chunks.ChatDelta` items: the
provider-neutral shape the parser's drivers understand (visible text, reasoning text,
native tool-call fragments, usage and the finish reason).  The OpenAI-compatible client
(:class:`~stream_parser.llm.OpenAIChatModel`) and the test models in
:mod:`stream_parser.testing` implement it; so can any adapter of your own.

Errors follow the library's two worlds (see :mod:`stream_parser.errors`):

* Before a reply exists (the request cannot be sent, the server answers 4xx / 5xx,
  refuses the connection, times out), :meth:`ChatModel.stream` raises
  :class:`ModelError` when it is first iterated.
* Once a reply is streaming, nothing raises: a failure (dropped connection, malformed
  Server-Sent Events, an error the server sends in the stream, a reply that runs out
  of time) ends the stream with a final ``ChatDelta(error="...")``, and everything
  received before it has been delivered.  The parser turns it into a ``stream_error``
  event.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal, Protocol, TypedDict, runtime_checkable

from ..core.chunks import ChatDelta
from ..errors import StreamParserError

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
    "SystemMessage",
    "TextContentPart",
    "ToolCall",
    "ToolMessage",
    "UserMessage",
]


# --- content parts (multimodal user content) ------------------------------------------------
#
# TypedDicts with optional keys are written as a required base plus a ``total=False``
# subclass, which works on Python 3.10 without ``typing_extensions.NotRequired``.


class TextContentPart(TypedDict):
    """A text part of a message's content: ``{"type": "text", "text": "..."}``."""

    type: Literal["text"]
    text: str


class _ImageURLBase(TypedDict):
    url: str


class ImageURL(_ImageURLBase, total=False):
    """The ``image_url`` object of an image part.

    Attributes:
        url: an ``https://`` URL or a ``data:image/png;base64,...`` URL.
        detail: the resolution the model should look at the image with.
    """

    detail: Literal["auto", "low", "high"]


class ImageContentPart(TypedDict):
    """An image part: ``{"type": "image_url", "image_url": {"url": "..."}}``."""

    type: Literal["image_url"]
    image_url: ImageURL


class InputAudio(TypedDict):
    """The ``input_audio`` object of an audio part (base64 data and its format)."""

    data: str
    format: Literal["wav", "mp3"]


class AudioContentPart(TypedDict):
    """An audio part: ``{"type": "input_audio", "input_audio": {"data": ..., "format": ...}}``."""

    type: Literal["input_audio"]
    input_audio: InputAudio


ContentPart = TextContentPart | ImageContentPart | AudioContentPart
"""One part of a multimodal user message."""


# --- messages -------------------------------------------------------------------------------


class _SystemBase(TypedDict):
    role: Literal["system"]
    content: str | list[TextContentPart]


class SystemMessage(_SystemBase, total=False):
    """``{"role": "system", "content": ...}``: instructions for the model."""

    name: str


class _DeveloperBase(TypedDict):
    role: Literal["developer"]
    content: str | list[TextContentPart]


class DeveloperMessage(_DeveloperBase, total=False):
    """``{"role": "developer", ...}``: OpenAI's newer name for system instructions.

    Many OpenAI-compatible servers only know ``"system"``; prefer it for them.
    """

    name: str


class _UserBase(TypedDict):
    role: Literal["user"]
    content: str | list[ContentPart]


class UserMessage(_UserBase, total=False):
    """``{"role": "user", "content": ...}``; the content may be a list of parts."""

    name: str


class FunctionCall(TypedDict):
    """The ``function`` of an assistant tool call: its name and JSON arguments string."""

    name: str
    arguments: str


class ToolCall(TypedDict):
    """One entry of an assistant message's ``tool_calls``."""

    id: str
    type: Literal["function"]
    function: FunctionCall


class _AssistantBase(TypedDict):
    role: Literal["assistant"]


class AssistantMessage(_AssistantBase, total=False):
    """A reply of the model, as it goes back into the history.

    Attributes:
        content: the visible text; ``None`` when the reply only called tools.
        tool_calls: the native tool calls of the reply, each answered later by a
            :class:`ToolMessage` with the same ``tool_call_id``.
        name: an optional participant name.
    """

    content: str | list[TextContentPart] | None
    tool_calls: list[ToolCall]
    name: str


class _ToolBase(TypedDict):
    role: Literal["tool"]
    tool_call_id: str
    content: str | list[TextContentPart]


class ToolMessage(_ToolBase, total=False):
    """The result of one tool call: ``tool_call_id`` must match the assistant's call id.

    Attributes:
        name: the tool's name; not part of OpenAI's schema but accepted (and used) by
            several compatible servers.
    """

    name: str


Message = SystemMessage | DeveloperMessage | UserMessage | AssistantMessage | ToolMessage
"""A chat message in the OpenAI format."""


# --- errors ---------------------------------------------------------------------------------


class ModelError(StreamParserError):
    """The model could not start a reply: HTTP error, no connection, timeout, bad request.

    Raised by :meth:`ChatModel.stream` before the first delta (also when the request
    could not be built or sent), never once a reply is streaming (a failure mid-reply
    is a final ``ChatDelta(error=...)`` instead).  With the OpenAI client it is raised
    after the SDK's own retries are used up.

    Attributes:
        message: what went wrong, as reported by the server or the transport.
        status_code: the HTTP status (e.g. 429, 500), or None when no HTTP answer came
            (connection refused, timeout).
        body: the decoded error body the server sent, if any.
        retry_after: seconds the server asked to wait (``Retry-After``), if it said.
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        body: object = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message if status_code is None else f"{status_code}: {message}")
        self.message = message
        self.status_code = status_code
        self.body = body
        self.retry_after = retry_after


class ContextLengthError(ModelError):
    """The server refused the request because it does not fit in the model's context.

    The conversation (with the room asked for the reply, ``max_tokens``) is longer than
    the context length the server runs the model with.  Sending it again will fail
    again: shorten the history (drop or summarise old turns, cut long tool results) or
    ask for fewer ``max_tokens``.  An agent can catch this subclass to do so; any other
    code sees a :class:`ModelError` like the others.

    :attr:`message` says so plainly and ends with the server's own words.  Servers say
    it in their own ways: OpenAI with the code ``context_length_exceeded``, vLLM with
    "This model's maximum context length is ...", llama.cpp with the type
    ``exceed_context_size_error`` ("... exceeds the available context size ...").
    """


# --- the protocol ---------------------------------------------------------------------------


@runtime_checkable
class ChatModel(Protocol):
    """Anything that streams a chat reply as :class:`~stream_parser.core.chunks.ChatDelta` items.

    Implementations: :class:`~stream_parser.llm.OpenAIChatModel` (any OpenAI-compatible
    server) and, for tests, ``ScriptedModel`` and ``FunctionModel`` from
    :mod:`stream_parser.testing`.  Feed the stream to the parser::

        async for event in parser.aparse_stream(model.stream(messages, tools=tools)):
            ...

    Optional members, outside the protocol, are read when a model has them:

    * ``request_option_names``: the names of the request options :meth:`stream` takes
      (a ``frozenset[str]``).  ``@llm_function`` and ``@llm_chat`` pass a keyword of
      that list to every request; a model without it takes any keyword that is not a
      (misspelled) option of the agents.
    * ``stream_with_chunks(messages, *, tools=None, **options)``: the deltas of
      :meth:`stream`, each after the provider SDK's own chunk it came from (every
      chunk, those that give no delta too), for ``@llm_chat(return_mode="sdk")``.
    """

    def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        **options: Any,
    ) -> AsyncIterator[ChatDelta]:
        """Stream one reply to ``messages``.

        Args:
            messages: the conversation so far, in the OpenAI chat format.
            tools: tool definitions in the OpenAI ``tools`` format
                (``{"type": "function", "function": {...}}``), for native tool calls.
            **options: request options (``temperature``, ``max_tokens``, ...); each
                implementation documents which ones it understands.

        Returns:
            An async iterator of deltas.  The last one normally carries the
            ``finish_reason`` (a usage report may follow it); a transport failure
            mid-reply ends it with a ``ChatDelta(error=...)`` instead.

        Raises:
            ModelError: when iterated, if no reply could be started.
        """
        ...
