"""The one agent loop: what both agents share, written once.

An agent (:class:`~stream_parser.agent.ReActAgent` on the text protocol,
:class:`~stream_parser.agent.FunctionCallAgent` on native function calling) repeats one
*step*: send the conversation to the model, stream the reply through the parser (every
event is yielded as it arrives, marked with its step), run the validated calls, append
the reply and the answers to its calls to the history.  Only three things differ
between the agents, and they are the hooks of :class:`AgentLoop`: the system prompt,
the request (with or without OpenAI ``tools``), and the parser's configuration.  How a
reply goes into the history is shared too: native calls are answered by ``tool``
messages, calls written in the text by one ``user`` message of observations.

* :class:`AgentRun`: one run, both awaitable (``await run`` drives it to its end) and
  async-iterable (``async for event in run``); it keeps the record of the run
  (``output``, ``messages``, ``usage``, ``steps``, ``reason``, ``events``).
* :class:`AgentLoop`: the step loop, the tool runner (worker threads for sync tools,
  time limits, result size, approval, eager read-only tools, the run's call limit), and
  ``run`` / ``run_sync`` / ``stream_sync``.

History invariant: whenever a run stops (it ends, the model fails, it is cancelled or
closed, at any point), ``AgentRun.messages`` is a conversation a server accepts: every
reply that was recorded is followed by an answer to each of its calls, and a call that
did not run is answered as cancelled (or not executed, with the reason).  A reply with
neither text nor calls is not recorded (an assistant message needs one or the other).

End of turn by protocol: a reply ends the run only when its stream finished with no
call pending and nothing to correct; text before a call never ends it.

Logging goes to the ``stream_parser.agent`` logger (nothing is printed unless logging is
configured): each step and each tool call (duration, outcome) at ``INFO``, model errors
at ``INFO`` too (they are raised to the caller, who decides whether they deserve a
warning), the messages of each request at ``DEBUG``; every line starts with the run's id.

Each step builds a new parser (its spans and call indexes start at 0), which takes its
compiled tables (the tag table, the tools' parameter tables, the argument converter)
from the core's cache: compiled once per tool set and configuration, so a step costs
the same with 300 tools as with 2, and a tool added to the registry between two steps
is recognised from the next step on.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import copy
import dataclasses
import datetime
import inspect
import itertools
import logging
import threading
import time
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Generator,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from dataclasses import dataclass
from typing import Any, Final, Protocol, TypeAlias, TypeVar, cast

from pydantic import BaseModel

from ..core.chunks import ChatDelta
from ..core.config import ParserConfig
from ..core.events import (
    ErrorType,
    NoticeEvent,
    ParseErrorEvent,
    ParseEvent,
    TextOutputEvent,
    TokenUsageEvent,
    ToolCallEvent,
    ToolCallStartEvent,
)
from ..core.parser import StreamToolParser
from ..errors import ConfigError
from ..llm.base import (
    AssistantMessage,
    ChatModel,
    ContentPart,
    Message,
    ModelError,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from ..prompts import text as prompts
from ..prompts.templating import check_language, render
from ..tools import Tool, ToolLike, ToolRegistry, ToolResult, as_registry
from .events import (
    AgentDoneEvent,
    AgentEvent,
    StepStartEvent,
    StopReason,
    ToolResultEvent,
    with_step,
)

__all__ = [
    "AgentLoop",
    "AgentRun",
    "Approver",
    "call_sync",
    "iterate_sync",
    "ContextStep",
    "Deny",
    "Usage",
    "start_history",
    "tool_registry",
    "trim_history",
]

logger = logging.getLogger("stream_parser.agent")

# A call that was announced or attempted and did not run: the model is told why.
_NOT_RUN: Final = frozenset(
    {
        ErrorType.UNCLOSED_TOOL.value,
        ErrorType.MALFORMED_TOOL.value,
        ErrorType.INVALID_PARAMS.value,
        ErrorType.TOOL_TOO_LARGE.value,
        ErrorType.UNKNOWN_TOOL.value,
    }
)
# The call stands, but something in it was dropped: the model is told too.
_WARNINGS: Final = frozenset({ErrorType.UNKNOWN_PARAM.value, ErrorType.DUPLICATE_PARAM.value})
# About the reply as a whole.
_REPLY_ERRORS: Final = frozenset({ErrorType.TRUNCATED.value, ErrorType.STREAM_ERROR.value})

_run_ids = itertools.count(1)
T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


# --- approval -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Deny:
    """What an approver returns to refuse a call; the model reads ``reason``.

    Attributes:
        reason: why the call was refused, for the model.
    """

    reason: str = "the call was not approved"


Decision: TypeAlias = bool | Deny | BaseModel | ToolCallEvent | None
"""What an approver returns: ``True`` or ``None`` (run it), ``False`` or :class:`Deny`
(do not run it), or an edited call: an instance of the tool's argument model, or the
:class:`~stream_parser.ToolCallEvent` with another ``tool_instance``."""

Approver: TypeAlias = Callable[[ToolCallEvent], Decision | Awaitable[Decision]]
"""``approve=``: given each validated call before it runs (sync or async)."""


# --- usage ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Usage:
    """Tokens used by a run, summed over its steps (0 when the server reports none).

    Attributes:
        input_tokens: prompt tokens.
        output_tokens: completion tokens (reasoning included, as servers count them).
        reasoning_tokens: the reasoning part of the completion tokens.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    def add(self, report: object) -> None:
        """Add one usage report (OpenAI's ``usage`` dict or object)."""
        self.input_tokens += _count(report, "prompt_tokens", "input_tokens")
        self.output_tokens += _count(report, "completion_tokens", "output_tokens")
        details = _get(report, "completion_tokens_details") or _get(report, "output_tokens_details")
        self.reasoning_tokens += _count(details, "reasoning_tokens")

    def add_usage(self, other: Usage) -> None:
        """Add another :class:`Usage` (the usage of another run)."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.reasoning_tokens += other.reasoning_tokens


def _get(report: object, key: str) -> Any:
    if isinstance(report, Mapping):
        return report.get(key)
    return getattr(report, key, None)


def _count(report: object, *keys: str) -> int:
    for key in keys:
        value = _get(report, key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return 0


# --- the run --------------------------------------------------------------------------------


class AgentRun:
    """One run of an agent: await it for the result, or iterate it for the events.

    ``result = await agent.run(...)`` drives the run to its end and returns the run;
    ``async for event in agent.run(...)`` yields every event as it happens.  Nothing
    happens before either; a run is driven once.  ``messages`` is live: it grows as the
    run goes and is a valid conversation whenever the run stops.

    Attributes:
        run_id: a short id naming the run in the logs.
        messages: the conversation so far, in the OpenAI chat format.
        events: every event yielded so far.
        output: the visible text of the last reply, once the run is over.
        usage: the tokens used, summed over the steps.
        steps: how many steps have started.
        reason: why the run ended (see :data:`~stream_parser.agent.StopReason`), or
            None while it runs.
        tool_calls: how many tool calls have been run (or started).
    """

    def __init__(
        self, messages: list[Message], body: Callable[[AgentRun], AsyncIterator[AgentEvent]]
    ) -> None:
        self.run_id = f"run-{next(_run_ids)}"
        self.messages = messages
        self.events: list[AgentEvent] = []
        self.output = ""
        self.usage = Usage()
        self.steps = 0
        self.reason: StopReason | None = None
        self.tool_calls = 0
        self._body = body(self)
        # The task that drives the run and its loop, as of the latest step.
        self._task: asyncio.Task[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # Whether that task is inside the run (waiting for its next event), not in the
        # caller's code between two events.
        self._inside = False
        self._cancel_requested = False

    @property
    def done(self) -> bool:
        """Whether the run is over (``reason`` is set)."""
        return self.reason is not None

    def __aiter__(self) -> AgentRun:
        return self

    async def __anext__(self) -> AgentEvent:
        self._task = asyncio.current_task()
        self._loop = asyncio.get_running_loop()
        if self._cancel_requested and self.reason is None:
            # Asked while the run waited for no event (before it started, or between
            # two events): close it as an interruption would.
            self._cancel_requested = False
            await self.aclose()
            self.reason = "cancelled"
            raise asyncio.CancelledError
        self._inside = True
        try:
            event = await self._body.__anext__()
        finally:
            self._inside = False
        self.events.append(event)
        return event

    def __await__(self) -> Generator[Any, None, AgentRun]:
        return self._drive().__await__()

    async def _drive(self) -> AgentRun:
        async for _ in self:
            pass
        return self

    def cancel(self) -> None:
        """Cancel the run: the task driving it gets ``CancelledError`` from the run.

        The history is made consistent first (the model's stream is closed, running
        tools are cancelled, every call is answered).  Safe to call from any thread.
        While the run waits for its next event (for the model, for a tool), that wait
        is cancelled at once; otherwise (before the run starts, or while the caller's
        own code runs between two events) the run's next step closes it and raises
        ``CancelledError``.  Either way, no other ``await`` of the caller is cancelled.
        Once the run's last event is out, it does nothing.
        """
        if self.reason is not None:
            return  # over: the task that drove it may be doing something else now
        # Read at the next step, if the driving task is not interrupted in the run first.
        self._cancel_requested = True
        loop = self._loop
        if loop is None:
            return  # not started: the first step stops it
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            self._interrupt()
        else:
            # Decided on the run's loop, where the run cannot move meanwhile.
            with contextlib.suppress(RuntimeError):  # a closed loop drives nothing
                loop.call_soon_threadsafe(self._interrupt)

    def _interrupt(self) -> None:
        """Cancel the driving task if it waits inside the run (on the run's loop).

        The task then gets ``CancelledError`` where it waits, inside the run, which
        makes the history consistent and stops.  A task in the caller's code between
        two events (or one running this very call) is left alone: a cancellation
        there would strike the caller's own next ``await`` instead, even after the
        run has ended; the run's next step stops it.
        """
        task = self._task
        if (
            self.reason is None
            and self._inside
            and task is not None
            and task is not asyncio.current_task()
        ):
            task.cancel()

    async def aclose(self) -> None:
        """Stop the run early; the history is left consistent."""
        aclose = getattr(self._body, "aclose", None)
        if aclose is not None:
            await aclose()

    def __repr__(self) -> str:
        state = self.reason or "running"
        return f"<AgentRun {state}, {self.steps} step(s), {len(self.messages)} message(s)>"


# --- one reply ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Observed:
    """Something in a reply the model is told about, with the tool it concerns."""

    label: str
    event: ToolCallEvent | ParseErrorEvent
    position: int = -1  # for a call: its position among the reply's calls


class _NativeCall:
    """A native call as the model sent it: its id, name and arguments string."""

    __slots__ = ("arguments", "call_id", "name")

    def __init__(self) -> None:
        self.call_id: str | None = None
        self.name = ""
        self.arguments: list[str] = []


class Reply:
    """What the loop keeps of one reply while it streams: content, calls, failures."""

    def __init__(self, step: int) -> None:
        self.step = step
        self.content: list[str] = []
        self.visible: list[str] = []
        self.calls: list[ToolCallEvent] = []
        self.observed: list[_Observed] = []
        self.native: dict[int, _NativeCall] = {}
        self.failed = False
        self.finish_reason: str | None = None
        self.stream_error: str | None = None
        self.finished = False
        self._names: dict[int, str] = {}
        self._open: str | None = None

    async def record(self, source: AsyncIterator[ChatDelta]) -> AsyncIterator[ChatDelta]:
        """Pass the model's deltas on, keeping the content and native calls as sent."""
        async for delta in source:
            if delta.content:
                self.content.append(delta.content)
            if delta.tool_calls:
                for fragment in delta.tool_calls:
                    call = self.native.get(fragment.index)
                    if call is None:
                        call = self.native[fragment.index] = _NativeCall()
                    if fragment.id and call.call_id is None:
                        call.call_id = fragment.id
                    if fragment.name and fragment.name != call.name:
                        call.name += fragment.name
                    if fragment.arguments:
                        call.arguments.append(fragment.arguments)
            if delta.finish_reason is not None:
                self.finish_reason = delta.finish_reason
            if delta.error is not None:
                self.stream_error = delta.error
            yield delta

    @property
    def text(self) -> str:
        """The reply's content, verbatim."""
        return "".join(self.content)

    @property
    def visible_text(self) -> str:
        """The text events of the reply (no thinking, no tool markup)."""
        return "".join(self.visible)

    @property
    def cut(self) -> bool:
        """Whether the reply was cut by the model's length limit."""
        return self.finish_reason == "length"

    @property
    def needs_answer(self) -> bool:
        """Whether the model must hear back: a call, or a call that failed."""
        return bool(self.calls) or self.failed

    def take(self, event: ParseEvent) -> None:
        """Note one parse event of the reply."""
        if isinstance(event, TextOutputEvent):
            self.visible.append(event.text)
        elif isinstance(event, ToolCallStartEvent):
            self._names[event.call_index] = event.tool_name
            self._open = event.tool_name
        elif isinstance(event, ToolCallEvent):
            self.observed.append(_Observed(event.tool_name, event, len(self.calls)))
            self.calls.append(event)
            self._open = None
        elif isinstance(event, ParseErrorEvent):
            self._error(event)

    def _error(self, event: ParseErrorEvent) -> None:
        kind = event.error_type
        if kind in _NOT_RUN:
            self.observed.append(_Observed(self._label(event), event))
            self.failed = True
            self._open = None
        elif kind in _WARNINGS:
            self.observed.append(_Observed(self._label(event), event))
        elif kind in _REPLY_ERRORS:
            self.observed.append(_Observed("reply", event))
        # Other errors (an unclosed thinking block, a plugin's block) concern no call.

    def _label(self, event: ParseErrorEvent) -> str:
        if event.tool_name:
            return event.tool_name
        if event.call_index is not None and event.call_index in self._names:
            return self._names[event.call_index]
        return self._open or "tool call"

    # -- into the history -------------------------------------------------------------------

    def native_ids(self) -> dict[str, _NativeCall]:
        """The native calls by id (an id the server did not send is made up)."""
        calls: dict[str, _NativeCall] = {}
        for index, call in sorted(self.native.items()):
            if call.call_id is None:
                call.call_id = f"call_{self.step}_{index}"
            calls[call.call_id] = call
        return calls

    def messages(
        self,
        results: Mapping[int, ToolResult],
        not_run: Mapping[int, ToolResult],
        *,
        language: str = "en",
        templates: prompts.Templates = None,
    ) -> list[Message]:
        """The reply and the answers to its calls, as they go into the history.

        The assistant message carries the content verbatim (None without text when
        there are native calls) and the native calls as ``tool_calls``, exactly as the
        model sent them; then one ``tool`` message per native call in call order; then
        one ``user`` message with the images the native calls returned; then one
        ``user`` message with the observations of the calls written in the text.

        A reply with neither text nor native calls (empty, only reasoning, or failed,
        cut or cancelled before its first token) gives no message: it said nothing the
        model must see again, and an assistant message needs content or calls.

        Args:
            results: call position -> result, for the calls that ran.
            not_run: call position -> why it did not run (limit, denial, cut reply).
            language: the language of the observations, ``"en"`` or ``"zh"``.
            templates: replacement prompt templates by name.
        """
        say = (language, templates)
        native = self.native_ids()
        content = self.text
        if not content and not native:
            return []
        assistant = AssistantMessage(role="assistant", content=content)
        if native:
            assistant["content"] = content or None
            assistant["tool_calls"] = [
                ToolCall(
                    id=call_id,
                    type="function",
                    function={"name": call.name, "arguments": "".join(call.arguments)},
                )
                for call_id, call in native.items()
            ]
        out: list[Message] = [assistant]
        answers: dict[str, tuple[str, ToolResult | None]] = {}
        observations: list[tuple[str, ToolResult | None]] = []
        for item in self.observed:
            result: ToolResult | None = None
            if item.position >= 0:
                result = results.get(item.position) or not_run.get(item.position)
            call_id = item.event.call_id
            if call_id is not None and call_id in native:
                text = _native_text(item.event, result, *say)
                if call_id in answers:
                    # A warning about a call, then the call: one message says both.
                    earlier, _ = answers[call_id]
                    text = f"{earlier}\n\n{text}"
                answers[call_id] = (text, result)
            else:
                observations.append(
                    (_observation_text(item.label, item.event, result, *say), result)
                )
        images: list[ContentPart] = []
        for call_id, call in native.items():
            text, result = answers.get(call_id) or (prompts.say("native_cancelled", *say), None)
            out.append(ToolMessage(role="tool", tool_call_id=call_id, content=text, name=call.name))
            if result is not None and result.images:
                images.append(
                    {
                        "type": "text",
                        "text": render("images_note", *say, name=call.name, call_id=call_id),
                    }
                )
                images.extend(cast("list[ContentPart]", copy.deepcopy(list(result.images))))
        if images:
            out.append(UserMessage(role="user", content=images))
        # An error of the reply as a whole (cut, broken) is told along with its calls;
        # alone, it concerns no call and needs no answer.
        if any(label for label, _ in observations if not label.startswith("[reply]")):
            out.append(_observation_message(observations))
        return out


def _native_text(
    event: ToolCallEvent | ParseErrorEvent,
    result: ToolResult | None,
    language: str = "en",
    templates: prompts.Templates = None,
) -> str:
    """The content of the ``tool`` message that answers a native call."""
    say = (language, templates)
    if isinstance(event, ParseErrorEvent):
        text = _error_text(event, *say)
        if event.error_type in _WARNINGS:
            return prompts.warning_observation(
                event.tool_name or "tool", event.error_type, text, *say
            )
        return render("native_error", *say, code=event.error_type, text=text)
    if result is None:
        return prompts.say("native_cancelled", *say)
    if result.is_error and not result.text.startswith("Error"):
        # A tool's own error texts already say so; the agent's are prefixed here.
        return render("native_error", *say, code=result.error_type, text=result.text)
    return result.text


def _observation_text(
    label: str,
    event: ToolCallEvent | ParseErrorEvent,
    result: ToolResult | None,
    language: str = "en",
    templates: prompts.Templates = None,
) -> str:
    """What the model is told about one call (or error) written in the text of its reply."""
    say = (language, templates)
    if isinstance(event, ToolCallEvent):
        if result is None:
            return prompts.cancelled_observation(label, *say)
        if result.is_error:
            if result.error_type in (ErrorType.TOOL_CALL_LIMIT, ErrorType.DENIED, "truncated"):
                code = result.error_type or ""
                return prompts.not_executed_observation(label, code, result.text, *say)
            return prompts.error_observation(label, result.error_type, result.text, *say)
        return prompts.result_observation(label, result.text, *say)
    kind = event.error_type
    text = _error_text(event, *say)
    if kind in _WARNINGS:
        return prompts.warning_observation(label, kind, text, *say)
    if kind in _REPLY_ERRORS and event.call_index is None:
        return prompts.error_observation(label, kind, text, *say)
    return prompts.not_executed_observation(label, kind, text, *say)


def _error_text(
    event: ParseErrorEvent, language: str = "en", templates: prompts.Templates = None
) -> str:
    """What the model reads about a parse error, in its language, from its type and details."""
    return render(
        "parse_error",
        language,
        templates=templates,
        error_type=event.error_type,
        tool=event.tool_name or "",
        message=event.message,
        details=list(event.details),
    )


def _observation_message(entries: Sequence[tuple[str, ToolResult | None]]) -> UserMessage:
    """One user message with the observations; with images, a list of content parts."""
    if not any(result is not None and result.images for _, result in entries):
        return UserMessage(role="user", content="\n\n".join(text for text, _ in entries))
    parts: list[ContentPart] = []
    for text, result in entries:
        parts.append({"type": "text", "text": text})
        if result is not None:
            parts.extend(cast("list[ContentPart]", copy.deepcopy(list(result.images))))
    return UserMessage(role="user", content=parts)


# --- running tools --------------------------------------------------------------------------


def _refusal(call: ToolCallEvent, error_type: ErrorType, text: str) -> ToolResult:
    return ToolResult(
        tool_name=call.tool_name, text=text, is_error=True, error_type=error_type.value
    )


async def _in_thread(function: Callable[[], ToolResult]) -> ToolResult:
    """Run a sync tool in a daemon thread of its own.

    Not the loop's default executor: a tool that overruns its time limit keeps running
    in the background, and a daemon thread neither blocks the loop's shutdown nor the
    interpreter's exit.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[ToolResult] = loop.create_future()
    # The tool sees the context of the run (context variables such as a typed function's
    # trace id), as it would if it ran in the loop.
    context = contextvars.copy_context()

    def settle(value: ToolResult | None, error: BaseException | None) -> None:
        if future.done():
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(cast(ToolResult, value))

    def work() -> None:
        value: ToolResult | None = None
        error: BaseException | None = None
        try:
            value = context.run(function)
        except BaseException as exc:  # handed to the awaiting task
            error = exc
        # A closed loop means nobody waits for this call any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, value, error)

    threading.Thread(target=work, name="stream_parser-tool", daemon=True).start()
    return await future


# --- the loop -------------------------------------------------------------------------------


class AgentLoop:
    """The loop both agents run; subclasses give the prompt, the request and the parser.

    See :class:`~stream_parser.agent.FunctionCallAgent` for the arguments.
    """

    #: the parser configuration of a subclass when none is given
    _default_config: ParserConfig = ParserConfig()

    def __init__(
        self,
        model: ChatModel,
        tools: ToolRegistry | Iterable[ToolLike] | Mapping[str, ToolLike],
        *,
        system_prompt: str | None = None,
        max_iterations: int = 10,
        max_tool_calls: int | None = None,
        concurrent_tools: bool = False,
        tool_timeout: float | None = None,
        max_result_chars: int | None = 20_000,
        approve: Approver | None = None,
        eager_tools: bool = False,
        model_options: Mapping[str, Any] | None = None,
        parser_config: ParserConfig | None = None,
        language: str = "en",
        templates: Mapping[str, str] | None = None,
        instructions_role: str = "system",
        history_length: int | None = None,
        step_history_size: int = 3,
        show_time: bool = False,
        clock: Callable[[], datetime.datetime] | None = None,
    ) -> None:
        if not isinstance(model, ChatModel):
            raise ConfigError(f"model must be a ChatModel (with stream()), not {model!r}")
        self.model = model
        self.tools = tool_registry(tools)
        self.instructions = system_prompt
        self.language = check_language(language)
        """The language of the prompt text the agent writes, ``"en"`` or ``"zh"``."""
        self.templates: dict[str, str] | None = dict(templates) if templates else None
        """Replacement prompt templates by name (see ``docs/prompts.md``)."""
        if instructions_role not in ("system", "user"):
            raise ConfigError(
                f'instructions_role must be "system" or "user", got {instructions_role!r}'
            )
        self.instructions_role = instructions_role
        """Where the system prompt goes: a system message, or the first user message."""
        self.history_length = (
            None if history_length is None else _positive_int("history_length", history_length)
        )
        """The most turns sent to the model (None: all); the run's history keeps them all."""
        self.step_history_size = _positive_int("step_history_size", step_history_size, 0)
        """The most earlier steps a context block shows (the latest ones)."""
        self.show_time = bool(show_time)
        """Whether the user prompt tells the model the current time."""
        self.clock: Callable[[], datetime.datetime] = clock or _now
        """Where the time comes from (injectable for tests)."""
        self.max_iterations = _positive_int("max_iterations", max_iterations)
        self.max_tool_calls = (
            None if max_tool_calls is None else _positive_int("max_tool_calls", max_tool_calls, 0)
        )
        self.concurrent_tools = bool(concurrent_tools)
        if tool_timeout is not None and (
            isinstance(tool_timeout, bool)
            or not isinstance(tool_timeout, (int, float))
            or not tool_timeout > 0
        ):
            raise ConfigError(f"tool_timeout must be a number of seconds > 0, got {tool_timeout!r}")
        self.tool_timeout = tool_timeout
        self.max_result_chars = (
            None
            if max_result_chars is None
            else _positive_int("max_result_chars", max_result_chars)
        )
        if approve is not None and not callable(approve):
            raise ConfigError(f"approve must be a callable, not {approve!r}")
        self.approve = approve
        marked = [item.name for item in self.tools.tools if item.requires_approval]
        if marked and approve is None:
            raise ConfigError(
                f"tool(s) {', '.join(marked)} require approval: pass approve= to the agent"
            )
        # With some tools marked, only those are asked about; else every call is.
        self._ask_all = not marked
        self.eager_tools = bool(eager_tools)
        self.model_options = dict(model_options or {})
        if "concurrent_tools" in self.model_options:
            raise ConfigError("concurrent_tools is an agent argument, not a model option")
        base = parser_config if parser_config is not None else self._default_config
        if not isinstance(base, ParserConfig):
            raise ConfigError(f"parser_config must be a ParserConfig, not {base!r}")
        self.parser_config = self._configure(base)

    # -- hooks ------------------------------------------------------------------------------

    def _configure(self, config: ParserConfig) -> ParserConfig:
        """The parser configuration the agent uses, from the one given."""
        return config

    def system_prompt(self) -> str:
        """The system message of a new conversation (``""`` for none)."""
        return self.instructions or ""

    def _notices(self, reply: Reply) -> list[NoticeEvent]:
        """Notices about a whole reply, given after its last event (none by default)."""
        return []

    def _request(self, messages: Sequence[Message]) -> AsyncIterator[ChatDelta]:
        """Start one reply: the model's stream for the conversation."""
        return self.model.stream(messages, **self.model_options)

    def _parser(self) -> StreamToolParser:
        """A fresh parser for one reply; its compiled tables come from the core's cache."""
        return StreamToolParser(self.tools, config=self.parser_config)

    def context_prompt(
        self,
        context: Sequence[ContextStep | Mapping[str, Any]],
        reasoning: str | None = None,
    ) -> str:
        """The context block: the reasoning and the outputs of the last earlier steps.

        Without reasoning or steps it is the template's stated placeholder.
        """
        steps = [_context_step(step) for step in context]
        return render(
            "context",
            self.language,
            templates=self.templates,
            reasoning=reasoning or "",
            steps=[dataclasses.asdict(step) for step in steps],
            step_history_size=self.step_history_size,
        )

    def user_prompt(
        self,
        question: str,
        *,
        context: Sequence[ContextStep | Mapping[str, Any]] | None = None,
        reasoning: str | None = None,
    ) -> str:
        """The first user message: the question, with the time and a context block if asked.

        Example:
            >>> from stream_parser.testing import ScriptedModel
            >>> agent = AgentLoop(ScriptedModel([]), [])
            >>> agent.user_prompt("Hi?")
            'Hi?'
            >>> print(agent.user_prompt("Hi?", context=[]).splitlines()[-3:])
            ['<context>', 'No context.', '</context>']
        """
        block = None
        if context is not None or reasoning:
            block = self.context_prompt(context or (), reasoning)
        when = self.clock().isoformat(timespec="seconds") if self.show_time else None
        return render(
            "user_prompt",
            self.language,
            templates=self.templates,
            question=question,
            time=when,
            context=block,
        )

    def _note(self, kind: str, **details: Any) -> str:
        """A note the agent writes about a call (why it did not run, a cut result)."""
        return render("agent_note", self.language, templates=self.templates, kind=kind, **details)

    # -- running ----------------------------------------------------------------------------

    def run(
        self,
        input: str | Sequence[Message],
        *,
        history: Sequence[Message] | None = None,
        context: Sequence[ContextStep | Mapping[str, Any]] | None = None,
        reasoning: str | None = None,
    ) -> AgentRun:
        """Start a run: ``await`` the result for the finished run, iterate it for events.

        Args:
            input: the user's request (a string), or messages to add.
            history: an earlier conversation to continue (e.g. ``run.messages`` of an
                earlier run); the system prompt is put first unless it starts with a
                system or developer message.
            context: earlier steps of your own (:class:`ContextStep` or mappings with
                ``name``, ``description`` and ``output``): a string ``input`` is then
                sent with a context block (the ``context`` template) showing the last
                ``step_history_size`` of them.  None (the default): ``input`` is sent
                verbatim, unless ``show_time`` is on.
            reasoning: thinking to show in the context block.

        Returns:
            An :class:`AgentRun`, not started yet.

        Raises:
            TypeError: ``input`` or ``history`` is not a string or messages.
        """
        if isinstance(input, str) and (context is not None or reasoning or self.show_time):
            input = self.user_prompt(input, context=context, reasoning=reasoning)
        messages = start_history(input, history, self.system_prompt(), self.instructions_role)
        return AgentRun(messages, self._steps)

    def run_sync(
        self,
        input: str | Sequence[Message],
        *,
        history: Sequence[Message] | None = None,
        context: Sequence[ContextStep | Mapping[str, Any]] | None = None,
        reasoning: str | None = None,
    ) -> AgentRun:
        """:meth:`run` to its end, from synchronous code; works inside a running loop too.

        The run is driven on the library's background event-loop thread (one for the
        process, so a client bound to its loop keeps working across calls).
        """
        check_sync_tools(self.tools)
        run = self.run(input, history=history, context=context, reasoning=reasoning)
        finished: AgentRun = _background().call(run._drive())
        return finished

    def stream_sync(
        self,
        input: str | Sequence[Message],
        *,
        history: Sequence[Message] | None = None,
        context: Sequence[ContextStep | Mapping[str, Any]] | None = None,
        reasoning: str | None = None,
    ) -> Iterator[AgentEvent]:
        """The events of a run as a plain iterator, for scripts and notebooks.

        Leaving the loop early (``break``) closes the run, the history left consistent.
        """
        check_sync_tools(self.tools)
        run = self.run(input, history=history, context=context, reasoning=reasoning)
        return iterate_sync(run)

    # -- the loop ---------------------------------------------------------------------------

    async def _steps(self, run: AgentRun) -> AsyncIterator[AgentEvent]:
        messages = run.messages
        reply = Reply(0)
        log = logger
        for step in range(1, self.max_iterations + 1):
            run.steps = step
            log.info("%s step %d: %d message(s) to the model", run.run_id, step, len(messages))
            if log.isEnabledFor(logging.DEBUG):
                log.debug("%s step %d request: %r", run.run_id, step, messages)
            try:
                yield StepStartEvent(step=step)
            except GeneratorExit:
                run.reason = "cancelled"  # closed between two steps: nothing to answer
                raise
            reply = Reply(step)
            eager: dict[int, asyncio.Task[ToolResult]] = {}
            results: dict[int, ToolResult] = {}
            sent = trim_history(messages, self.history_length)
            if self.instructions_role == "user" and len(sent) < len(messages):
                # The turn that opened with the instructions was left out: the first turn
                # sent opens with them instead.
                sent = start_history(sent, None, self.system_prompt(), "user")
            source = self._request(sent)
            recorded = reply.record(source)
            events = self._parser().aparse_stream(recorded)
            try:
                async for event in events:
                    reply.take(event)
                    if isinstance(event, TokenUsageEvent):
                        run.usage.add(event.usage_info)
                    yield with_step(event, step)
                    if self.eager_tools and isinstance(event, ToolCallEvent):
                        self._start_eager(run, reply, eager, results)
                reply.finished = True
                for notice in self._notices(reply):
                    yield with_step(notice, step)
            except BaseException as exc:
                await _cancel_tasks(eager, results)
                messages.extend(
                    reply.messages(results, {}, language=self.language, templates=self.templates)
                )
                run.output = reply.visible_text
                run.reason = _interrupted(exc)
                if isinstance(exc, ModelError):
                    # INFO, not WARNING: the error is raised to the caller, who handles it.
                    log.info("%s step %d: model error: %s", run.run_id, step, exc)
                else:
                    log.info("%s step %d: interrupted mid-reply", run.run_id, step)
                raise
            finally:
                for iterator in (events, recorded, source):
                    aclose = getattr(iterator, "aclose", None)
                    if aclose is not None:
                        await aclose()

            if reply.stream_error is not None or reply.cut:
                # Nothing of a cut or broken reply runs: its calls may be incomplete in
                # ways the parser cannot see (a value cut short), and an eager one stops.
                await _cancel_tasks(eager, results)
                why = self._note("reply_cut" if reply.cut else "connection_failed")
                not_run = {
                    position: _refusal(call, ErrorType.TRUNCATED, why)
                    if reply.cut
                    else _refusal(call, ErrorType.CANCELLED, why)
                    for position, call in enumerate(reply.calls)
                    if position not in results
                }
                messages.extend(
                    reply.messages(
                        results, not_run, language=self.language, templates=self.templates
                    )
                )
                run.output = reply.visible_text
                if reply.stream_error is not None:
                    run.reason = "model_error"
                    log.info(  # raised just below: the caller has it
                        "%s step %d: the stream failed: %s", run.run_id, step, reply.stream_error
                    )
                    raise ModelError(f"the stream failed mid-reply: {reply.stream_error}")
                if not reply.needs_answer:
                    yield self._done(run, "length", reply)
                    return
                continue

            try:
                async for result_event in self._run_calls(run, reply, eager, results):
                    yield result_event
            except BaseException as exc:
                await _cancel_tasks(eager, results)
                messages.extend(
                    reply.messages(results, {}, language=self.language, templates=self.templates)
                )
                run.output = reply.visible_text
                run.reason = _interrupted(exc)
                log.info("%s step %d: interrupted while tools ran", run.run_id, step)
                raise
            limit_hit = any(
                result.error_type == ErrorType.TOOL_CALL_LIMIT for result in results.values()
            )
            messages.extend(
                reply.messages(results, {}, language=self.language, templates=self.templates)
            )
            if not reply.needs_answer:
                yield self._done(run, "done", reply)
                return
            if limit_hit:
                yield self._done(run, "max_tool_calls", reply)
                return
        yield self._done(run, "max_iterations", reply)

    def _done(self, run: AgentRun, reason: StopReason, reply: Reply) -> AgentDoneEvent:
        run.reason = reason
        run.output = reply.visible_text
        logger.info("%s ended: %s after %d step(s)", run.run_id, reason, run.steps)
        return AgentDoneEvent(
            reason=reason, messages=list(run.messages), output=run.output, steps=run.steps
        )

    # -- tools ------------------------------------------------------------------------------

    def _read_only(self, call: ToolCallEvent) -> bool:
        return call.tool_name in self.tools and self.tools.get_tool(call.tool_name).read_only

    def _start_eager(
        self,
        run: AgentRun,
        reply: Reply,
        eager: dict[int, asyncio.Task[ToolResult]],
        results: dict[int, ToolResult],
    ) -> None:
        """Start the reply's newest call now if it is read-only and nothing before it writes."""
        position = len(reply.calls) - 1
        call = reply.calls[position]
        if not self._read_only(call) or self._over_limit(run):
            return
        for earlier in range(position):
            if earlier in results:
                continue
            task = eager.get(earlier)
            if task is None or not self._read_only(reply.calls[earlier]):
                return  # an earlier call has not run yet: keep the order
        run.tool_calls += 1
        eager[position] = asyncio.ensure_future(self._execute(run, call))

    def _over_limit(self, run: AgentRun) -> bool:
        return self.max_tool_calls is not None and run.tool_calls >= self.max_tool_calls

    async def _run_calls(
        self,
        run: AgentRun,
        reply: Reply,
        tasks: dict[int, asyncio.Task[ToolResult]],
        results: dict[int, ToolResult],
    ) -> AsyncIterator[ToolResultEvent]:
        """Run the reply's calls (those not started eagerly), yielding each result in order.

        Concurrently, every call starts at once; else each starts when the one before it
        has finished.  Every running call is in ``tasks``, so that an interruption can
        cancel it.
        """
        if self.concurrent_tools:
            for position, call in enumerate(reply.calls):
                if position not in tasks:
                    self._start(run, call, position, tasks, results)
        for position, call in enumerate(reply.calls):
            if position not in results:
                if position not in tasks:
                    self._start(run, call, position, tasks, results)
                if position in tasks:
                    results[position] = await tasks[position]
            yield ToolResultEvent(
                tool_name=call.tool_name,
                result=results[position],
                call_index=call.call_index,
                step=reply.step,
                call_id=call.call_id,
            )

    def _start(
        self,
        run: AgentRun,
        call: ToolCallEvent,
        position: int,
        tasks: dict[int, asyncio.Task[ToolResult]],
        results: dict[int, ToolResult],
    ) -> None:
        """Start one call, or refuse it past the run's call limit."""
        if self._over_limit(run):
            results[position] = _refusal(
                call,
                ErrorType.TOOL_CALL_LIMIT,
                self._note("call_limit", limit=self.max_tool_calls),
            )
            return
        run.tool_calls += 1
        tasks[position] = asyncio.ensure_future(self._execute(run, call))

    async def _execute(self, run: AgentRun, call: ToolCallEvent) -> ToolResult:
        """Approve, run (with its time limit) and trim one call; never raises for the tool."""
        started = time.perf_counter()
        item = self.tools.get_tool(call.tool_name)
        instance: Any = call.tool_instance
        if self.approve is not None and (self._ask_all or item.requires_approval):
            decision = self.approve(call)
            if inspect.isawaitable(decision):
                decision = await decision
            if decision is False or isinstance(decision, Deny):
                reason = decision.reason if isinstance(decision, Deny) else Deny().reason
                logger.info("%s %s denied: %s", run.run_id, call.tool_name, reason)
                return _refusal(call, ErrorType.DENIED, reason)
            if isinstance(decision, ToolCallEvent):
                instance = decision.tool_instance
            elif isinstance(decision, BaseModel):
                instance = decision
            elif decision is not True and decision is not None:
                raise TypeError(
                    "approve must return True, None, False, Deny(...), an argument model "
                    f"instance or a ToolCallEvent, not {decision!r}"
                )
        result = await self._invoke(item, instance)
        if self.max_result_chars is not None and len(result.text) > self.max_result_chars:
            cut = len(result.text) - self.max_result_chars
            result = dataclasses.replace(
                result,
                text=f"{result.text[: self.max_result_chars]}\n{self._note('result_cut', cut=cut)}",
            )
        elapsed = (time.perf_counter() - started) * 1000
        logger.info(
            "%s tool %s (call %d): %s in %.1f ms",
            run.run_id,
            call.tool_name,
            call.call_index,
            result.error_type or "ok",
            elapsed,
        )
        return result

    async def _invoke(self, item: Tool[Any, Any], instance: Any) -> ToolResult:
        if item.is_async:
            work: Awaitable[ToolResult] = asyncio.ensure_future(item.aexecute(instance))
        else:
            work = _in_thread(lambda: item.execute(instance))
        if self.tool_timeout is None:
            return await work
        # wait_for raises asyncio.TimeoutError, which is the builtin TimeoutError only from
        # Python 3.11 on: catching the builtin one lets the timeout out of the run on 3.10.
        try:
            return await asyncio.wait_for(work, self.tool_timeout)
        except asyncio.TimeoutError:
            return ToolResult(
                tool_name=item.name,
                text=self._note(
                    "timeout",
                    name=item.name,
                    seconds=f"{self.tool_timeout:g}",
                    cancelled=item.is_async,
                ),
                is_error=True,
                error_type=ErrorType.TOOL_TIMEOUT.value,
            )


def _interrupted(exc: BaseException) -> StopReason | None:
    """The reason of a run an exception stopped; None for a bug in the caller's code."""
    if isinstance(exc, ModelError):
        return "model_error"
    if isinstance(exc, (asyncio.CancelledError, GeneratorExit, KeyboardInterrupt)):
        return "cancelled"
    return None


async def _cancel_tasks(
    tasks: Mapping[int, asyncio.Task[ToolResult]], results: dict[int, ToolResult]
) -> None:
    """Cancel the calls still running; keep the results of those that finished."""
    for position, task in tasks.items():
        if task.done() and not task.cancelled() and task.exception() is None:
            results.setdefault(position, task.result())
        elif not task.done():
            task.cancel()
    waiting = [task for task in tasks.values() if not task.done()]
    if waiting:
        # Shielded: this may run while our own task is being cancelled.
        await asyncio.shield(asyncio.gather(*waiting, return_exceptions=True))


# --- helpers --------------------------------------------------------------------------------


def start_history(
    input: str | Sequence[Message],
    history: Sequence[Message] | None,
    system_prompt: str,
    instructions_role: str = "system",
) -> list[Message]:
    r"""The conversation a run starts from: history, then the input, system prompt first.

    With ``instructions_role="user"`` the system prompt opens the first user message
    instead of being a system message of its own (once: a conversation that already
    opens with it is left as it is).  A conversation that starts with a system or
    developer message, or an empty system prompt, is left as it is too.

    Example:
        >>> start_history("Hi", None, "Be brief.", "user")
        [{'role': 'user', 'content': 'Be brief.\n\nHi'}]
    """
    messages: list[Message] = []
    for part in (history or (), input):
        if isinstance(part, str):
            messages.append(UserMessage(role="user", content=part))
            continue
        items = list(part)
        if not all(isinstance(message, dict) for message in items):
            raise TypeError("input and history must be a string or a sequence of message dicts")
        messages.extend(items)
    first_role = messages[0].get("role") if messages else None
    if not system_prompt or first_role in ("system", "developer"):
        return messages
    if instructions_role == "system":
        messages.insert(0, SystemMessage(role="system", content=system_prompt))
        return messages
    # Some chat templates drop or reject a system message: the instructions then open the
    # first user message (once: a continued conversation already starts with them).
    for index, message in enumerate(messages):
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            if not content.startswith(system_prompt):
                text = f"{system_prompt}\n\n{content}" if content else system_prompt
                messages[index] = cast("Message", {**message, "content": text})
        elif isinstance(content, list):
            first = content[0] if content else None
            if not (isinstance(first, dict) and first.get("text") == system_prompt):
                opening: dict[str, str] = {"type": "text", "text": system_prompt}
                messages[index] = cast("Message", {**message, "content": [opening, *content]})
        return messages
    messages.insert(0, UserMessage(role="user", content=system_prompt))
    return messages


@dataclass(frozen=True)
class ContextStep:
    """An earlier step of your own, shown in a context block.

    Attributes:
        name: the step's (tool's) name.
        description: what the step does.
        output: what it gave, as text.
    """

    name: str
    description: str
    output: str


def _context_step(step: ContextStep | Mapping[str, Any]) -> ContextStep:
    if isinstance(step, ContextStep):
        return step
    if isinstance(step, Mapping):
        try:
            return ContextStep(
                str(step["name"]), str(step.get("description", "")), str(step["output"])
            )
        except KeyError as exc:
            raise ConfigError(f"a context step needs a {exc.args[0]!r}: {step!r}") from None
    raise ConfigError(f"a context step is a ContextStep or a mapping, not {step!r}")


def _now() -> datetime.datetime:
    return datetime.datetime.now().astimezone()


def trim_history(messages: Sequence[Message], turns: int | None) -> list[Message]:
    """The last ``turns`` turns of a conversation, after its system message.

    A turn starts at a ``user`` message that does not follow a ``tool`` message (the
    user message with the images of native calls belongs to their turn), so an
    assistant message with calls is never separated from its ``tool`` messages.

    Args:
        messages: the conversation.
        turns: how many turns to keep; None keeps all.

    Example:
        >>> chat = [
        ...     {"role": "system", "content": "S"},
        ...     {"role": "user", "content": "a"},
        ...     {"role": "assistant", "content": None, "tool_calls": []},
        ...     {"role": "tool", "tool_call_id": "1", "content": "r"},
        ...     {"role": "assistant", "content": "done"},
        ...     {"role": "user", "content": "b"},
        ... ]
        >>> [m["content"] for m in trim_history(chat, 1)]
        ['S', 'b']
        >>> [m["content"] for m in trim_history(chat, 2)]
        ['S', 'a', None, 'r', 'done', 'b']
    """
    items = list(messages)
    if turns is None:
        return items
    head = 1 if items and items[0].get("role") in ("system", "developer") else 0
    starts = [
        index
        for index in range(head, len(items))
        if items[index].get("role") == "user"
        and (index == head or items[index - 1].get("role") != "tool")
    ]
    if len(starts) <= turns:
        return items
    return items[:head] + items[starts[-turns] :]


def _positive_int(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{name} must be an int, not {type(value).__name__}")
    if value < minimum:
        raise ConfigError(f"{name} must be >= {minimum}, got {value}")
    return value


def tool_registry(
    tools: ToolRegistry | Iterable[ToolLike] | Mapping[str, ToolLike],
) -> ToolRegistry:
    """The agent's registry: the tools in any form :func:`~stream_parser.tools.as_registry` takes.

    Raises:
        ConfigError: a form that is not accepted, a duplicate name, an invalid tool, or a
            schema-only tool (one without a function: an agent must be able to run
            every tool it offers).
    """
    registry = as_registry(tools)
    for item in registry.tools:
        if item.fn is None:
            raise ConfigError(
                f"tool {item.name!r} is schema-only: an agent cannot run it; give it a "
                f"handler: ToolRegistry(tools, handlers={{{item.name!r}: function}})"
            )
    return registry


class _BackgroundLoop:
    """One event loop in a daemon thread, for ``run_sync`` and ``stream_sync``."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="stream_parser-agent-loop", daemon=True
        )
        self.thread.start()

    def call(self, coroutine: Awaitable[Any]) -> Any:
        if threading.current_thread() is self.thread:
            cast("Any", coroutine).close()
            raise RuntimeError(
                "run_sync / stream_sync (or a sync typed function) cannot be called from "
                "a coroutine on the library's background loop (an agent's own loop): "
                "await the async form there"
            )
        future = asyncio.run_coroutine_threadsafe(_awaited(coroutine), self.loop)
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            raise
        except concurrent.futures.CancelledError:
            raise asyncio.CancelledError from None


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


_BACKGROUND: _BackgroundLoop | None = None
_BACKGROUND_LOCK = threading.Lock()


class _Closable(Protocol[T_co]):
    """An async iterator that can be closed early (an async generator, an AgentRun)."""

    def __anext__(self) -> Awaitable[T_co]: ...

    def aclose(self) -> Awaitable[None]: ...


def iterate_sync(items: _Closable[T]) -> Generator[T, None, None]:
    """The items of an async iterator as a plain generator, driven on the background loop.

    Leaving the loop early (``break``) closes the async iterator (a run closes with its
    history left consistent).
    """
    try:
        while True:
            try:
                yield call_sync(items.__anext__())
            except StopAsyncIteration:
                return
    finally:
        call_sync(items.aclose())


def call_sync(awaitable: Awaitable[T]) -> T:
    """Run an awaitable to its end from synchronous code, and return its result.

    It runs on the library's background event-loop thread (one for the process), so this
    works inside a running event loop too (a notebook, a web handler), and a client bound
    to that loop keeps working across calls.  The caller's context variables are not seen
    by the awaitable: pass what it needs.

    Raises:
        RuntimeError: called from a coroutine running on the background loop itself
            (it would wait for itself); await the async form there instead.
    """
    result: T = _background().call(awaitable)
    return result


def check_sync_tools(tools: ToolRegistry) -> None:
    """Refuse, before any request, a sync run whose tools it could not reach.

    A tool whose function has a ``check_sync_use(loop)`` method (an MCP tool's handler,
    whose session belongs to one event loop) is asked, with the background loop that
    will drive the run; it raises when that run could not call it.

    Raises:
        ConfigError: from a tool's check, saying to use the async form.
    """
    for item in tools.tools:
        check = getattr(item.fn, "check_sync_use", None)
        if callable(check):
            check(_background().loop)


def _background() -> _BackgroundLoop:
    global _BACKGROUND
    with _BACKGROUND_LOCK:
        if _BACKGROUND is None:
            _BACKGROUND = _BackgroundLoop()
        return _BACKGROUND
