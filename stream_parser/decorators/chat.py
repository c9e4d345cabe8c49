"""``@llm_chat``: a function's docstring and parameters become one turn of a conversation.

The decorated function (written ``def`` or ``async def``; its body never runs) becomes an
async generator of ``(chunk, history)`` pairs::

    async for chunk, history in chat("Hello!", history=history):
        print(chunk, end="")
    # the last pair is ("", history): the conversation with this turn, to pass back in

One call is one turn:

* the **system prompt** is the docstring, with the tool list before it (no system message
  when both are empty);
* the **history** comes from the parameter named ``history`` or ``chat_history``: its
  system messages are dropped (the docstring is the system prompt) and malformed items
  skipped, each with a warning;
* the **user message** is the other arguments, ``name: value`` lines, images as content
  parts (no user message when there are none);
* the agents' loop runs the turn (tools included), and what it yields depends on
  ``return_mode``: ``"text"`` the visible text as it streams, ``"raw"`` the model's
  :class:`~stream_parser.ChatDelta` items, ``"sdk"`` the ``openai`` SDK's own chunks
  (an :class:`~stream_parser.llm.OpenAIChatModel`'s), ``"events"`` the agent's events;
* the **last pair** is ``("", history)``: the history given, the user message and the
  assistant's reply, without the tool-call traffic.  Every pair before it carries the
  conversation as it was sent (the history and the user message).

There are no re-asks: a chat turn is whatever the model said.  ``.sync(...)`` gives the
same pairs as a plain generator, for scripts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from typing import Any, Final, Generic, Literal, ParamSpec, TypeAlias, cast

from ..agent._sync import check_sync_tools
from ..agent.history import start_history
from ..agent.loop import AgentLoop
from ..agent.options import AgentOptions, Unpack
from ..agent.react import ReActAgent
from ..agent.run import AgentRun
from ..core.chunks import ChatDelta
from ..core.events import TextOutputEvent
from ..errors import ConfigError
from ..llm.base import AssistantMessage, ChatModel, Message, UserMessage
from ..tools import ToolLike, ToolRegistry
from .calls import (
    AgentSettings,
    FunctionInfo,
    TraceLog,
    arguments_text,
    bind_call,
    current_trace_id,
    iterate_sync,
    logger,
    new_trace_id,
    read_function,
    traced_iteration,
)
from .prompt import (
    chat_system_prompt,
    chat_user_content,
    clean_history,
    history_parameter,
)

__all__ = ["LLMChat", "ReturnMode", "llm_chat"]

P = ParamSpec("P")

ReturnMode: TypeAlias = Literal["text", "raw", "sdk", "events"]
"""What the chunks of an :func:`llm_chat` turn are: text, the model's deltas, the provider
SDK's own chunks, or events."""

_RETURN_MODES: Final = ("text", "raw", "sdk", "events")
_SDK_STREAM: Final = "stream_with_chunks"  # the model's method that gives the SDK chunks

ChatItem: TypeAlias = tuple[Any, list[Message]]
"""One ``(chunk, history)`` pair of a chat turn."""


@dataclasses.dataclass(frozen=True, slots=True)
class _Settings:
    run: AgentSettings
    stream: bool
    return_mode: ReturnMode


class _Tee:
    """A chat model that also keeps what it streams, for the raw return modes.

    ``"raw"`` keeps every delta; ``"sdk"`` streams from the model's
    ``stream_with_chunks`` and keeps the SDK chunks it gives (every one, those that
    give no delta too), handing on the deltas.
    """

    def __init__(self, model: ChatModel, *, sdk: bool = False) -> None:
        self._model = model
        self._sdk = sdk
        self.deltas: list[Any] = []

    async def stream(
        self, messages: Sequence[Message], *, tools: Any = None, **options: Any
    ) -> AsyncIterator[ChatDelta]:
        if self._sdk:
            source = getattr(self._model, _SDK_STREAM)(messages, tools=tools, **options)
        else:
            source = self._model.stream(messages, tools=tools, **options)
        try:
            async for item in source:
                if not self._sdk:
                    self.deltas.append(item)
                elif not isinstance(item, ChatDelta):
                    self.deltas.append(item)  # an SDK chunk
                    continue
                yield item
        finally:
            aclose = getattr(source, "aclose", None)
            if aclose is not None:
                await aclose()


class LLMChat(Generic[P]):
    """A function decorated with :func:`llm_chat`: each call streams one chat turn."""

    def __init__(self, info: FunctionInfo, settings: _Settings, history_name: str | None) -> None:
        self._info = info
        self._settings = settings
        self._history_name = history_name
        functools.update_wrapper(cast(Any, self), info.fn)

    def __repr__(self) -> str:
        return f"<llm_chat {self._info.name} protocol={self._settings.run.protocol!r}>"

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> AsyncGenerator[ChatItem, None]:
        """Start a turn: an async generator of ``(chunk, history)`` pairs."""
        return self._turn(args, dict(kwargs), current_trace_id())

    def sync(self, *args: P.args, **kwargs: P.kwargs) -> Iterator[ChatItem]:
        """The same turn as a plain generator (driven on the library's background loop).

        Leaving the loop early (``break``) closes the turn.
        """
        check_sync_tools(self._settings.run.tools)
        return iterate_sync(self._turn(args, dict(kwargs), current_trace_id()))

    def _turn(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], parent: str | None
    ) -> AsyncGenerator[ChatItem, None]:
        arguments, _ = bind_call(self._info, args, kwargs)
        trace_id = new_trace_id(self._info.name, parent)
        return traced_iteration(trace_id, self._pairs(arguments, TraceLog(trace_id)))

    async def _pairs(self, arguments: dict[str, Any], log: TraceLog) -> AsyncIterator[ChatItem]:
        info, settings = self._info, self._settings
        where = f"@llm_chat {info.name!r}"
        log.info("%s called with %s", info.name, arguments_text(arguments))
        history: list[Message] = []
        if self._history_name is not None:
            history = clean_history(arguments.get(self._history_name), where=where)
        exclude = {self._history_name} if self._history_name else set()
        content = chat_user_content(
            arguments, info.hints, exclude, language=settings.run.config.language
        )
        turn: list[Message] = [*history]
        if content is not None:
            turn.append(UserMessage(role="user", content=content))
        tee = _Tee(settings.run.model, sdk=settings.return_mode == "sdk")
        agent = settings.run.agent(instructions=None, model=tee)
        system = self._system_prompt(agent)
        run = agent.run(start_history(turn, None, system, settings.run.config.instructions_role))
        collected: list[Any] = []
        try:
            async with contextlib.aclosing(self._chunks(run, tee)) as chunks:
                async for chunk in chunks:
                    if settings.stream:
                        yield chunk, list(turn)
                    else:
                        collected.append(chunk)
        finally:
            # When the caller stops (its loop left early, an error), close the model's
            # stream now: a run is in a reference cycle, so left to itself it would stay
            # open until a garbage collection.
            await run.aclose()
        if not settings.stream:
            whole: Any = "".join(collected) if settings.return_mode == "text" else collected
            yield whole, list(turn)
        if run.reason != "done":
            log.warning("the turn ended on %s", run.reason)
        log.info(
            "%s replied; tokens in %d, out %d",
            info.name,
            run.usage.input_tokens,
            run.usage.output_tokens,
        )
        # A reply that said nothing (empty, thinking only, failed before its first token)
        # adds no message, as in an agent's history: an empty assistant message is one
        # that servers refuse when the history is sent again.
        said = [AssistantMessage(role="assistant", content=run.output)] if run.output else []
        yield "", [*turn, *said]

    def _system_prompt(self, agent: AgentLoop) -> str:
        """The docstring with the tools before it (a text protocol shows its call format)."""
        settings = self._settings
        if isinstance(agent, ReActAgent):
            parts = [agent.tools_prompt(), self._info.docstring]
            return "\n\n".join(part for part in parts if part)
        tools = [(item.name, item.description) for item in settings.run.tools.tools]
        return chat_system_prompt(
            self._info.docstring, tools, language=settings.run.config.language
        )

    async def _chunks(self, run: AgentRun, tee: _Tee) -> AsyncGenerator[Any, None]:
        """The run's chunks in the settings' return mode."""
        mode = self._settings.return_mode
        async for event in run:
            if mode == "events":
                yield event
            elif mode in ("raw", "sdk"):
                # The deltas (or chunks) the parser has read so far: they came before
                # this event.
                for delta in tee.deltas:
                    yield delta
                tee.deltas.clear()
            elif isinstance(event, TextOutputEvent) and event.text:
                yield event.text
        if mode in ("raw", "sdk"):
            for delta in tee.deltas:
                yield delta
            tee.deltas.clear()


def llm_chat(
    model: ChatModel,
    *,
    toolkit: ToolRegistry | Iterable[ToolLike] | Mapping[str, ToolLike] | None = None,
    protocol: str = "native",
    stream: bool = True,
    return_mode: ReturnMode = "text",
    **options: Unpack[AgentOptions],
) -> Callable[[Callable[P, Any]], LLMChat[P]]:
    """Turn a function's docstring and parameters into a streamed chat turn.

    Args:
        model: the chat model.
        toolkit: tools the model may call during the turn.
        protocol: ``"native"``, a dialect's name (calls written in the text), or
            ``"auto"``: the dialect of the model's family, from its name.
        stream: yield chunks as they arrive (True), or one item with the whole reply:
            the text, or the list of deltas or events (False).
        return_mode: ``"text"`` (visible text deltas, ``str``), ``"raw"`` (the model's
            :class:`~stream_parser.ChatDelta` items), ``"sdk"`` (the ``openai`` SDK's
            own ``ChatCompletionChunk`` objects, one per event the server sent, for an
            :class:`~stream_parser.llm.OpenAIChatModel`) or ``"events"`` (the agent's
            events).
        **options: the agent's options (:class:`~stream_parser.agent.AgentOptions`:
            ``max_iterations`` and ``max_tool_calls`` of the turn, ``language``,
            ``model_options``, ``instructions_role``, ``approve``...), all but
            ``system_prompt`` (the docstring is the instructions).  A keyword that is
            a request option of the model (``temperature=0.2``) is added to
            ``model_options``, as for :func:`~stream_parser.decorators.llm_function`.

    Returns:
        The decorator; the decorated function is an :class:`LLMChat`.

    Raises:
        ConfigError: a model that is not a ``ChatModel``, an unknown protocol or return
            mode, ``"sdk"`` for a model without SDK chunks, a bad toolkit, an unknown
            option (the closest one is named) or a bad value.

    Example:
        >>> from stream_parser.testing import ScriptedModel
        >>> @llm_chat(ScriptedModel(["Hello, Ada!"]))
        ... def chat(message: str, history: list[dict[str, object]]) -> None:
        ...     '''You are a friendly assistant.'''
        >>> pairs = list(chat.sync("Hi, I am Ada.", history=[]))
        >>> "".join(chunk for chunk, _ in pairs)
        'Hello, Ada!'
        >>> [m["role"] for m in pairs[-1][1]]
        ['user', 'assistant']
    """
    run = AgentSettings.check(
        "llm_chat",
        model=model,
        toolkit=toolkit,
        protocol=protocol,
        options=options,
    )
    if return_mode not in _RETURN_MODES:
        raise ConfigError(f"return_mode must be one of {_RETURN_MODES!r}, got {return_mode!r}")
    if return_mode == "sdk" and not callable(getattr(model, _SDK_STREAM, None)):
        raise ConfigError(
            f'@llm_chat: return_mode="sdk" yields the provider SDK\'s own chunks, and '
            f"{type(model).__name__} has none (it has no {_SDK_STREAM}(); "
            'OpenAIChatModel has); use return_mode="raw" for the model\'s ChatDelta items'
        )
    settings = _Settings(run=run, stream=bool(stream), return_mode=return_mode)

    def decorate(fn: Callable[P, Any]) -> LLMChat[P]:
        info = read_function(fn, "llm_chat")
        name = history_parameter([name for name, _ in info.parameters])
        if name is None:
            logger.warning(
                "@llm_chat %r has no 'history' or 'chat_history' parameter: each call starts "
                "a new conversation",
                info.name,
            )
        return LLMChat(info, settings, name)

    return decorate
