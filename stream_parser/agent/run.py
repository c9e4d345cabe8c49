"""The run handle: its history, usage, limits and cancellation.

An :class:`AgentRun` is what ``agent.run(...)`` returns: awaitable (the finished run)
and async-iterable (the events).  It wraps the async generator of the loop's steps and
adds what a caller holds on to: the live history, the usage summed over the steps, the
step and call counts, the reason the run ended, and cancellation from any thread (the
run's own task is cancelled only while it waits inside the run, never in the caller's
code between two events).  :func:`_interrupted` names the reason of a run an exception
stopped.  The limits themselves are options (``options.py``), counted here; what a run
uses and each request's record are in ``usage.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import (
    AsyncIterator,
    Callable,
    Generator,
)
from typing import Any

from ..errors import ConfigError
from ..llm.base import (
    Message,
    ModelError,
)
from .events import (
    AgentEvent,
    StopReason,
)
from .pause import PausedRun, PendingCall
from .usage import LimitHit, RequestRecord, Usage

__all__ = ["AgentRun", "Usage"]


_run_ids = itertools.count(1)

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
        usage: the requests made and the tokens used, summed over the steps.
        steps: how many steps have started.
        reason: why the run ended (see :data:`~stream_parser.agent.StopReason`), or
            None while it runs.
        limit: the limit the run ended on, was given a last answer at, or (paused)
            will end on once resumed (see :class:`~stream_parser.agent.LimitHit`); None
            otherwise.
        tool_calls: how many tool calls have been run (or started), refused by the
            approver, or deferred (a deferred call keeps its place under the limit).
        requests: one :class:`~stream_parser.agent.RequestRecord` per request (its
            timings and usage), whatever the ``timings`` option.
        tool_seconds: seconds the tool calls took, summed (calls run at once count
            each).
        pending_calls: at a pause (``reason == "paused"``), the calls waiting for a
            decision, each with its ``call_id``; else empty.
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
        self.limit: LimitHit | None = None
        self.tool_calls = 0
        self.requests: list[RequestRecord] = []
        self.tool_seconds = 0.0
        self.pending_calls: list[PendingCall] = []
        self._paused: PausedRun | None = None
        # Past a limit, while a last answer is asked for: no call runs any more.
        self._tools_closed = False
        self._usage_notice_given = False
        self._body = body(self)
        # The task that drives the run and its loop, as of the latest step.
        self._task: asyncio.Task[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # Whether that task is inside the run (waiting for its next event), not in the
        # caller's code between two events.
        self._inside = False
        self._cancel_requested = False
        # Driven to its end by ``await`` (or a sync form), nobody seeing its events in
        # between: a step's sync calls may then run back to back, none waiting for the
        # event of the one before it to be taken (see ToolRunner._batch).
        self._driven = False

    @property
    def done(self) -> bool:
        """Whether the run is over (``reason`` is set)."""
        return self.reason is not None

    def pause_state(self) -> PausedRun:
        """What the paused run keeps, to resume it: ``agent.resume(paused, decisions)``.

        Its ``to_json()`` outlives the process; ``PausedRun.from_json`` reads it back.

        Raises:
            ConfigError: the run is not paused.
        """
        if self._paused is None:
            raise ConfigError(
                f"only a paused run has a pause state; this one is {self.reason or 'running'}"
            )
        return self._paused

    def __aiter__(self) -> AgentRun:
        return self

    async def __anext__(self) -> AgentEvent:
        # The task driving the run, for cancel(): looked up on the run's loop once known
        # (one lookup less per event), found again should another loop drive it.
        loop = self._loop
        task = None if loop is None else asyncio.current_task(loop)
        if task is None:
            loop = self._loop = asyncio.get_running_loop()
            task = asyncio.current_task(loop)
        self._task = task
        if self._cancel_requested and self.reason is None:
            await self._cancel_now()
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
        """Run to the end; what :meth:`__anext__` does for each event, written once.

        The driving task is this one throughout, so it is looked up once, and each event
        is taken from the body without a coroutine of :meth:`__anext__` around it (a
        step of a few dozen events costs tens of µs less).
        """
        self._driven = True
        loop = self._loop = asyncio.get_running_loop()
        self._task = asyncio.current_task(loop)
        events = self.events
        take = self._body.__anext__
        while True:
            if self._cancel_requested and self.reason is None:
                await self._cancel_now()
            self._inside = True
            try:
                event = await take()
            except StopAsyncIteration:
                return self
            finally:
                self._inside = False
            events.append(event)

    async def _cancel_now(self) -> None:
        """Close the run on a cancel asked while it waited for no event.

        That is before it started or between two events: it closes as an interruption
        would, then raises ``CancelledError``.
        """
        self._cancel_requested = False
        await self.aclose()
        self.reason = "cancelled"
        raise asyncio.CancelledError

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


def _interrupted(exc: BaseException) -> StopReason | None:
    """The reason of a run an exception stopped; None for a bug in the caller's code."""
    if isinstance(exc, ModelError):
        return "model_error"
    if isinstance(exc, (asyncio.CancelledError, GeneratorExit, KeyboardInterrupt)):
        return "cancelled"
    return None
