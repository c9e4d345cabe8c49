"""Chat models for tests and demos: no network, fully deterministic.

:class:`ScriptedModel` replays a script of replies, one per request;
:class:`FunctionModel` computes each reply with a function of the messages.  Both
implement :class:`~stream_parser.llm.ChatModel`, record every request in ``.requests``
and stream a reply the way a real server does:

1. the reasoning text, cut into chunks (``ChatDelta(reasoning=...)``);
2. the content, cut into chunks (``ChatDelta(content=...)``);
3. each native tool call: a first fragment with its index, id and name, then its JSON
   arguments cut into pieces (calls one after the other, or interleaved by index);
4. ``ChatDelta(finish_reason=...)``: ``"tool_calls"`` when there are calls, else
   ``"stop"``, or the scripted one (e.g. ``"length"``);
5. ``ChatDelta(usage=...)`` if the reply has a usage report.

A reply scripted with ``error=...`` stops after step 3 with ``ChatDelta(error=...)`` and
no finish reason, the way a dropped connection looks.  A reply that is an exception is
raised when its stream is iterated, the way an HTTP error before the reply looks.

Chunks are ``chunk_size`` characters long, or, for ``chunk_size=(low, high)``, of random
lengths between ``low`` and ``high`` drawn from ``random.Random(seed)``: the same seed
gives the same cuts.
"""

from __future__ import annotations

import copy
import inspect
import json
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.chunks import ChatDelta, ToolCallDelta
from ..errors import ConfigError, StreamParserError
from ..llm.base import Message

__all__ = [
    "ChatRequest",
    "FunctionModel",
    "NativeCall",
    "Reply",
    "ScriptExhaustedError",
    "ScriptedModel",
    "ScriptedReply",
]


@dataclass(frozen=True)
class NativeCall:
    """A native tool call in a scripted reply.

    Attributes:
        name: the function name.
        arguments: a dict (sent as compact JSON, non-ASCII kept) or a string sent
            verbatim, which can script arguments that are not valid JSON.
        id: the call id; None gives ``"call_<request>_<index>"``.
    """

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def arguments_json(self) -> str:
        """The arguments string as it is streamed."""
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(dict(self.arguments), ensure_ascii=False)


@dataclass(frozen=True, kw_only=True)
class ScriptedReply:
    """A reply with everything a server can stream.

    Attributes:
        content: the visible text (it may hold thinking tags or XML tool calls).
        reasoning: reasoning text, streamed on its own channel before the content.
        tool_calls: native tool calls, streamed after the content.
        usage: a usage report, sent after the finish reason.
        finish_reason: None means ``"tool_calls"`` if there are calls, else ``"stop"``;
            give e.g. ``"length"`` to script a reply cut by its token limit.
        error: end the reply with ``ChatDelta(error=error)`` after the calls, with no
            finish reason and no usage (a dropped connection).
    """

    content: str = ""
    reasoning: str = ""
    tool_calls: Sequence[NativeCall] = ()
    usage: Mapping[str, Any] | None = None
    finish_reason: str | None = None
    error: str | None = None


Reply = str | Sequence[NativeCall] | ScriptedReply | BaseException
"""A scripted reply: text, a list of native calls, a full :class:`ScriptedReply`, or an
exception (e.g. :class:`~stream_parser.llm.ModelError`) raised when the stream is iterated."""


@dataclass(frozen=True)
class ChatRequest:
    """One request a test model received.

    The lists and the options are the request's own, and hold the messages and tool
    definitions that were sent, not copies of them: the agents and typed functions never
    change a message once it is sent (a test checks it), so a record costs the same at
    the 200th step as at the first.  Change a message you sent yourself, and the record
    shows the change.

    Attributes:
        messages: the messages sent.
        tools: the tool definitions sent, or None.
        options: the other keyword options (``temperature``, ``tool_choice``, ...).
    """

    messages: list[Message]
    tools: list[dict[str, Any]] | None
    options: dict[str, Any]


class ScriptExhaustedError(StreamParserError, RuntimeError):
    """A :class:`ScriptedModel` got more requests than it has replies."""


class _Chunker:
    """Cuts text into chunks of a fixed size or of seeded random sizes."""

    def __init__(self, chunk_size: int | tuple[int, int], seed: int | None) -> None:
        if isinstance(chunk_size, int):
            low = high = chunk_size
        else:
            try:
                low, high = chunk_size
            except (TypeError, ValueError):
                raise ConfigError(
                    f"chunk_size must be an int or a (low, high) pair, got {chunk_size!r}"
                ) from None
        if not (isinstance(low, int) and isinstance(high, int) and 1 <= low <= high):
            raise ConfigError(f"chunk_size must satisfy 1 <= low <= high, got {chunk_size!r}")
        self._low = low
        self._high = high
        self._random = random.Random(seed)

    def split(self, text: str) -> list[str]:
        pieces = []
        start = 0
        while start < len(text):
            size = (
                self._low
                if self._low == self._high
                else self._random.randint(self._low, self._high)
            )
            pieces.append(text[start : start + size])
            start += size
        return pieces


class _TestModel:
    """What both test models share: request recording and streaming a reply."""

    def __init__(
        self,
        *,
        chunk_size: int | tuple[int, int],
        seed: int | None,
        interleave_tool_calls: bool,
    ) -> None:
        self._chunker = _Chunker(chunk_size, seed)
        self._interleave = interleave_tool_calls
        self.requests: list[ChatRequest] = []
        """Every request received, oldest first."""

    def _record(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] | None,
        options: Mapping[str, Any],
    ) -> ChatRequest:
        request = ChatRequest(
            messages=list(messages),
            tools=None if tools is None else list(tools),
            options=dict(options),
        )
        self.requests.append(request)
        return request

    def _deltas(self, reply: Reply, request_number: int) -> Iterator[ChatDelta]:
        """The deltas of one reply (the exception replies are raised by the caller)."""
        scripted = _as_scripted_reply(reply)
        split = self._chunker.split
        for piece in split(scripted.reasoning):
            yield ChatDelta(reasoning=piece)
        for piece in split(scripted.content):
            yield ChatDelta(content=piece)
        yield from self._call_deltas(scripted.tool_calls, request_number)
        if scripted.error is not None:
            yield ChatDelta(error=scripted.error)
            return
        finish_reason = scripted.finish_reason or ("tool_calls" if scripted.tool_calls else "stop")
        yield ChatDelta(finish_reason=finish_reason)
        if scripted.usage is not None:
            yield ChatDelta(usage=dict(scripted.usage))

    def _call_deltas(self, calls: Sequence[NativeCall], request_number: int) -> Iterator[ChatDelta]:
        streams: list[list[ToolCallDelta]] = []
        for index, call in enumerate(calls):
            call_id = call.id if call.id is not None else f"call_{request_number}_{index}"
            fragments = [ToolCallDelta(index=index, id=call_id, name=call.name)]
            fragments += [
                ToolCallDelta(index=index, arguments=piece)
                for piece in self._chunker.split(call.arguments_json())
            ]
            streams.append(fragments)
        if self._interleave:
            # Round-robin: one fragment of each call in turn, as parallel calls arrive.
            longest = max((len(fragments) for fragments in streams), default=0)
            order = [
                fragments[position]
                for position in range(longest)
                for fragments in streams
                if position < len(fragments)
            ]
        else:
            order = [fragment for fragments in streams for fragment in fragments]
        for fragment in order:
            yield ChatDelta(tool_calls=(fragment,))


class ScriptedModel(_TestModel):
    """A :class:`~stream_parser.llm.ChatModel` that replays scripted replies in order.

    Example:
        >>> import asyncio
        >>> model = ScriptedModel(["Hello, world!"], chunk_size=5)
        >>> async def main():
        ...     return [d.content async for d in model.stream([{"role": "user", "content": "hi"}])]
        >>> asyncio.run(main())
        ['Hello', ', wor', 'ld!', None]

    Args:
        replies: one reply per request: a string (content), a list of
            :class:`NativeCall`, a :class:`ScriptedReply`, or an exception to raise.
        chunk_size: chunk length, or a ``(low, high)`` range of random lengths.
        seed: the seed of the random chunk lengths.
        interleave_tool_calls: stream the fragments of several calls round-robin
            instead of one call after the other.

    Raises:
        ConfigError: for an invalid ``chunk_size``.

    Attributes:
        requests: every :class:`ChatRequest` received, oldest first.
    """

    def __init__(
        self,
        replies: Sequence[Reply] = (),
        *,
        chunk_size: int | tuple[int, int] = 4,
        seed: int | None = None,
        interleave_tool_calls: bool = False,
    ) -> None:
        super().__init__(
            chunk_size=chunk_size, seed=seed, interleave_tool_calls=interleave_tool_calls
        )
        self._replies: list[Reply] = list(replies)
        self._total = len(self._replies)

    @property
    def remaining(self) -> int:
        """How many scripted replies are left."""
        return len(self._replies)

    def add_replies(self, *replies: Reply) -> None:
        """Append replies to the script."""
        self._replies.extend(replies)
        self._total += len(replies)

    def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        **options: Any,
    ) -> AsyncIterator[ChatDelta]:
        """Record the request and stream the next scripted reply.

        Args:
            messages: the conversation (recorded, not interpreted).
            tools: tool definitions (recorded, not interpreted).
            **options: any options (recorded, not interpreted).

        Returns:
            The reply's deltas.

        Raises:
            ScriptExhaustedError: at once, if every scripted reply was used.
        """
        self._record(messages, tools, options)
        number = len(self.requests)
        if not self._replies:
            last = messages[-1] if messages else None
            raise ScriptExhaustedError(
                f"ScriptedModel ran out of replies: it had {self._total} and got request "
                f"#{number} (last message: {_preview(last)})"
            )
        return self._play(self._replies.pop(0), number)

    async def _play(self, reply: Reply, number: int) -> AsyncIterator[ChatDelta]:
        if isinstance(reply, BaseException):
            raise reply
        for delta in self._deltas(reply, number):
            yield delta


ReplyFunction = Callable[..., Reply | Awaitable[Reply]]


class FunctionModel(_TestModel):
    """A :class:`~stream_parser.llm.ChatModel` whose replies a function computes.

    The function gets the messages, and also the tools if it takes two positional
    parameters: ``fn(messages)`` or ``fn(messages, tools)``.  It may be sync or
    async and returns a reply in any form :class:`ScriptedModel` accepts (an exception
    it returns or raises comes out of the stream's iteration).

    Example:
        >>> import asyncio
        >>> model = FunctionModel(lambda messages: messages[-1]["content"].upper())
        >>> async def main():
        ...     deltas = model.stream([{"role": "user", "content": "echo"}])
        ...     return "".join([d.content or "" async for d in deltas])
        >>> asyncio.run(main())
        'ECHO'

    Args:
        fn: computes the reply; it is called when the stream is first iterated, with a
            copy of the messages.
        chunk_size: chunk length, or a ``(low, high)`` range of random lengths.
        seed: the seed of the random chunk lengths.
        interleave_tool_calls: stream the fragments of several calls round-robin.

    Attributes:
        requests: every :class:`ChatRequest` received, oldest first.
    """

    def __init__(
        self,
        fn: ReplyFunction,
        *,
        chunk_size: int | tuple[int, int] = 4,
        seed: int | None = None,
        interleave_tool_calls: bool = False,
    ) -> None:
        super().__init__(
            chunk_size=chunk_size, seed=seed, interleave_tool_calls=interleave_tool_calls
        )
        self._fn = fn
        self._pass_tools = _takes_two_arguments(fn)

    def stream(
        self,
        messages: Sequence[Message],
        *,
        tools: Sequence[dict[str, Any]] | None = None,
        **options: Any,
    ) -> AsyncIterator[ChatDelta]:
        """Record the request and stream the reply the function computes.

        Args:
            messages: the conversation, passed (as a copy) to the function.
            tools: tool definitions, passed to a two-parameter function.
            **options: any options (recorded only).

        Returns:
            The reply's deltas.
        """
        request = self._record(messages, tools, options)
        return self._play(request, len(self.requests))

    async def _play(self, request: ChatRequest, number: int) -> AsyncIterator[ChatDelta]:
        messages = copy.deepcopy(request.messages)
        if self._pass_tools:
            result = self._fn(messages, copy.deepcopy(request.tools))
        else:
            result = self._fn(messages)
        reply: Reply = await result if inspect.isawaitable(result) else result
        if isinstance(reply, BaseException):
            raise reply
        for delta in self._deltas(reply, number):
            yield delta


def _as_scripted_reply(reply: object) -> ScriptedReply:
    """Any non-exception reply form as a :class:`ScriptedReply`."""
    if isinstance(reply, ScriptedReply):
        return reply
    if isinstance(reply, str):
        return ScriptedReply(content=reply)
    if isinstance(reply, Sequence) and all(isinstance(call, NativeCall) for call in reply):
        return ScriptedReply(tool_calls=list(reply))
    raise TypeError(
        "a reply must be a str, a list of NativeCall, a ScriptedReply or an exception, "
        f"got {reply!r}"
    )


def _takes_two_arguments(fn: Callable[..., object]) -> bool:
    """Whether ``fn`` accepts a second positional argument (the tools)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = 0
    for parameter in parameters:
        if parameter.kind is parameter.VAR_POSITIONAL:
            return True
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            positional += 1
    return positional >= 2


def _preview(message: object, limit: int = 80) -> str:
    """A short ``repr`` of a message for error texts."""
    text = repr(message)
    return text if len(text) <= limit else text[: limit - 3] + "..."
