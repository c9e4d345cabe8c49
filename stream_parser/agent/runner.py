"""The tool runner: approval, time limits, call limits, eager tools and sync tools.

:class:`ToolRunner` is the part of the loop that runs a reply's validated calls, mixed
into :class:`~stream_parser.agent.loop.AgentLoop`.  Each call is asked about (``approve``),
run with its time limit, and its result cut to ``max_result_chars``; a tool never
raises into the run (its failure is a :class:`~stream_parser.tools.ToolResult` with
``is_error``).  Calls run one after the other, or all at once with
``concurrent_tools``; with ``eager_tools`` a read-only call starts while the reply
still streams.  Sync tools run in a worker thread so that the loop keeps streaming.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import functools
import inspect
import logging
import os
import queue
import threading
import time
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
)
from typing import Any, Final, TypeAlias, cast

from pydantic import BaseModel

from ..core.events import (
    ErrorType,
    ToolCallEvent,
)
from ..errors import ConfigError
from ..tools import Tool, ToolLike, ToolRegistry, ToolResult, as_registry
from .events import (
    ToolResultEvent,
)
from .options import AgentConfig, Defer, Deny
from .reply import Reply
from .run import AgentRun

__all__ = ["DEFERRED", "ToolRunner", "deferred", "tool_registry"]

logger = logging.getLogger("stream_parser.agent")


# --- approval -------------------------------------------------------------------------------

DEFERRED: Final = "deferred"
"""The error type of the marker a deferred call gets instead of a result (never sent)."""


def deferred(call: ToolCallEvent) -> ToolResult:
    """The marker of a call an approver deferred: the loop pauses on it."""
    return ToolResult(tool_name=call.tool_name, text="deferred", error_type=DEFERRED)


# The decision of a call whose approver is still to be asked (when it runs).
_ASK: Final = object()


# --- running tools --------------------------------------------------------------------------


def _refusal(call: ToolCallEvent, error_type: ErrorType | str, text: str) -> ToolResult:
    code = error_type.value if isinstance(error_type, ErrorType) else error_type
    return ToolResult(tool_name=call.tool_name, text=text, is_error=True, error_type=code)


TOOL_THREADS: Final = 16
"""The most worker threads kept for sync tools, for the whole process (see :class:`_Workers`)."""

# How long an idle worker waits for a call before it ends (the pool shrinks back).
_IDLE_SECONDS: Final = 60.0


# A job runs a call and gives back what hands its outcome over, which never raises.
_Job: TypeAlias = "Callable[[], Callable[[], None]]"
# A worker's inbox: each job, with the event it sets when it starts the job.
_Inbox: TypeAlias = "queue.SimpleQueue[tuple[_Job, threading.Event | None]]"


class _Workers:
    """A bounded pool of reused daemon threads for sync tools, shared by every agent.

    Starting a thread costs about a quarter of a millisecond; a worker that waits for
    the next call is woken in a few microseconds.  Why not the loop's default executor
    (or any ``ThreadPoolExecutor``): a tool past its time limit keeps its thread until it
    returns, and the executor's threads are joined at the loop's shutdown and at the
    interpreter's exit, so one stuck tool would block both.  Here every thread is a
    daemon, nothing joins it, and a call never waits for a worker: with all
    :data:`TOOL_THREADS` of them held (by tools past their time limit, say), the call
    gets a thread of its own, which ends with it.  An idle worker ends after a minute.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._idle: list[_Inbox] = []  # the inbox of each idle worker
        self._count = 0
        # A forked child has none of its parent's threads: it starts with an empty pool.
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._lock = threading.Lock()
        self._idle = []
        self._count = 0

    def submit(self, job: _Job) -> None:
        """Run ``job`` on an idle worker, a new worker, or past the bound a thread of its own."""
        with self._lock:
            inbox: _Inbox | None = self._idle.pop() if self._idle else None
            pooled = inbox is None and self._count < self._size
            if pooled:
                self._count += 1
        if inbox is not None:
            # Wait until the worker runs it, as Thread.start() waits for a new thread: the
            # call starts now, not when this thread next lets go of the GIL.
            started = threading.Event()
            inbox.put((job, started))
            started.wait()
            return
        if pooled:
            new: _Inbox = queue.SimpleQueue()
            new.put((job, None))
            target: Callable[[], None] = functools.partial(self._work, new)
            name = "stream_parser-tool"
        else:
            target, name = functools.partial(_run_once, job), "stream_parser-tool-extra"
        threading.Thread(target=target, name=name, daemon=True).start()

    def _work(self, inbox: _Inbox) -> None:
        while True:
            try:
                job, started = inbox.get(timeout=_IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if inbox in self._idle:  # nobody is handing it a call: end
                        self._idle.remove(inbox)
                        self._count -= 1
                        return
                job, started = inbox.get()  # taken off the idle list just now: it comes
            if started is not None:
                started.set()
            deliver = job()  # never raises: the outcome is in ``deliver``
            # Idle again before the outcome is handed over: the next call, which may
            # follow at once, finds this worker instead of starting another.
            with self._lock:
                self._idle.append(inbox)
            deliver()


def _run_once(job: _Job) -> None:
    job()()


_WORKERS: Final = _Workers(TOOL_THREADS)


async def _in_thread(function: Callable[[], ToolResult]) -> ToolResult:
    """Run a sync tool on a worker thread (:class:`_Workers`), the loop free meanwhile.

    A tool that overruns its time limit keeps running in the background; its daemon
    thread neither blocks the loop's shutdown nor the interpreter's exit.
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

    def work() -> Callable[[], None]:
        value: ToolResult | None = None
        error: BaseException | None = None
        try:
            value = context.run(function)
        except BaseException as exc:  # handed to the awaiting task
            error = exc

        def deliver() -> None:
            # A closed loop means nobody waits for this call any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(settle, value, error)

        return deliver

    _WORKERS.submit(work)
    return await future


class ToolRunner:
    """Runs a reply's calls; mixed into the agent loop, which sets these attributes."""

    tools: ToolRegistry
    config: AgentConfig
    _ask_all: bool
    _pause_refused: str | None = None
    """Set where a run cannot pause (a typed function): the error an approver's
    ``Defer()`` raises.  Every approval of a reply is then asked before any of its calls
    runs, eager ones included, so that the error comes before any tool has run."""

    def _note(self, kind: str, **details: Any) -> str:
        raise NotImplementedError

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
        if self._pause_refused is not None and self.config.approve is not None:
            return  # every approval comes first, at the reply's end (see _pause_refused)
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
        eager[position] = asyncio.ensure_future(self._execute(run, call, reply, position))

    def _over_limit(self, run: AgentRun) -> bool:
        if run._tools_closed:
            return True
        limit = self.config.call_limit[1]
        return limit is not None and run.tool_calls >= limit

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
        timings = self.config.timings
        decided: dict[int, object] = {}
        if self._pause_refused is not None and self.config.approve is not None:
            decided = await self._decide_first(run, reply, tasks, results)
        if self.config.concurrent_tools:
            for position in range(len(reply.calls)):
                if position not in tasks:
                    self._start(run, reply, position, tasks, results, decided.get(position, _ASK))
        for position, call in enumerate(reply.calls):
            if position not in results:
                if position in tasks:
                    results[position] = await tasks[position]
                else:
                    # One call at a time: awaited here, without a task of its own (an
                    # interruption reaches it through the run's own task).
                    decision = decided.get(position, _ASK)
                    results[position] = await self._run_now(run, reply, position, decision)
            if results[position].error_type == DEFERRED:
                continue  # no result yet: the run pauses on it
            yield ToolResultEvent(
                tool_name=call.tool_name,
                result=results[position],
                call_index=call.call_index,
                step=reply.step,
                call_id=call.call_id,
                duration_s=reply.tool_seconds.get(position) if timings else None,
            )

    async def _decide_first(
        self,
        run: AgentRun,
        reply: Reply,
        tasks: Mapping[int, asyncio.Task[ToolResult]],
        results: Mapping[int, ToolResult],
    ) -> dict[int, object]:
        """Ask the approver about each call to run, in call order, before any runs.

        Used where a run cannot pause (:attr:`_pause_refused`): a ``Defer()`` raises
        its ``ConfigError`` here, before any call of the reply has run.  The calls that
        the run's call limit will refuse are not asked about.

        Returns:
            Call position -> the approver's decision (None for a call not asked about).
        """
        decided: dict[int, object] = {}
        room = self._room(run)
        for position, call in enumerate(reply.calls):
            if position in results or position in tasks:
                continue
            if room is not None:
                if room <= 0:
                    break  # this call and the ones after it are refused at the limit
                room -= 1
            decision = await self._ask(call, self.tools.get_tool(call.tool_name))
            if isinstance(decision, Defer):
                raise ConfigError(self._pause_refused)
            decided[position] = decision
        return decided

    def _room(self, run: AgentRun) -> int | None:
        """How many more calls the run's call limit lets run (None: no limit)."""
        if run._tools_closed:
            return 0
        limit = self.config.call_limit[1]
        return None if limit is None else max(0, limit - run.tool_calls)

    async def _ask(self, call: ToolCallEvent, item: Tool[Any, Any]) -> object:
        """The approver's decision about a call; None for a call it is not asked about."""
        approve = self.config.approve
        if approve is None or not (self._ask_all or item.requires_approval):
            return None
        if approve == "defer":
            return Defer()
        decision: object = approve(call)
        if inspect.isawaitable(decision):
            decision = await decision
        return decision

    async def _run_now(
        self, run: AgentRun, reply: Reply, position: int, decision: object = _ASK
    ) -> ToolResult:
        """Run one call in the caller's task, or refuse it past the run's call limit."""
        call = reply.calls[position]
        if self._over_limit(run):
            return self._limit_refusal(run, call)
        run.tool_calls += 1
        return await self._execute(run, call, reply, position, decision)

    def _limit_refusal(self, run: AgentRun, call: ToolCallEvent) -> ToolResult:
        if run._tools_closed:  # a call in the last answer at a limit
            note = self._note("tools_closed")
        else:
            note = self._note("call_limit", limit=self.config.call_limit[1])
        return _refusal(call, ErrorType.TOOL_CALL_LIMIT, note)

    def _start(
        self,
        run: AgentRun,
        reply: Reply,
        position: int,
        tasks: dict[int, asyncio.Task[ToolResult]],
        results: dict[int, ToolResult],
        decision: object = _ASK,
    ) -> None:
        """Start one call of the reply, or refuse it past the run's call limit."""
        call = reply.calls[position]
        if self._over_limit(run):
            results[position] = self._limit_refusal(run, call)
            return
        run.tool_calls += 1
        tasks[position] = asyncio.ensure_future(self._execute(run, call, reply, position, decision))

    async def _execute(
        self,
        run: AgentRun,
        call: ToolCallEvent,
        reply: Reply,
        position: int,
        decision: object = _ASK,
    ) -> ToolResult:
        """Approve, run (with its time limit) and trim one call; never raises for the tool.

        A call the approver defers is not run: its result is the :data:`DEFERRED`
        marker, which the loop turns into a pause.  It keeps its place under the run's
        call limit.  How long it took is kept in
        ``reply.tool_seconds`` and ``run.tool_seconds``.

        Args:
            run: the run.
            call: the call.
            reply: the reply that holds it.
            position: its position among the reply's calls.
            decision: the approver's decision if it was asked already, else it is
                asked here.
        """
        started = time.perf_counter()
        try:
            item = self.tools.get_tool(call.tool_name)
            if decision is _ASK:
                decision = await self._ask(call, item)
            if isinstance(decision, Defer):
                if self._pause_refused is not None:
                    raise ConfigError(self._pause_refused)
                # Counted when it started, as a call that runs or is refused is: it keeps
                # its place under the call limit, and the resume does not count it again.
                logger.info("%s %s deferred", run.run_id, call.tool_name)
                return deferred(call)
            return await self._carry_out(run, call, item, decision)
        finally:
            seconds = time.perf_counter() - started
            reply.tool_seconds[position] = seconds
            run.tool_seconds += seconds

    async def _carry_out(
        self, run: AgentRun, call: ToolCallEvent, item: Tool[Any, Any] | None, decision: object
    ) -> ToolResult:
        """Do what was decided about a call: run it (as edited), refuse it, or take a result.

        ``item`` None is a tool no longer registered (a call resumed after it was
        removed): a call to run is answered ``unknown_tool``.
        """
        if decision is False or isinstance(decision, Deny):
            reason = decision.reason if isinstance(decision, Deny) else Deny().reason
            logger.info("%s %s denied: %s", run.run_id, call.tool_name, reason)
            return _refusal(call, ErrorType.DENIED, reason)
        if isinstance(decision, ToolResult):
            return decision
        if isinstance(decision, str):
            return ToolResult(tool_name=call.tool_name, text=decision)
        instance: Any = call.tool_instance
        if isinstance(decision, ToolCallEvent):
            instance = decision.tool_instance
        elif isinstance(decision, (BaseModel, Mapping)):
            instance = decision
        elif decision is not True and decision is not None:
            raise TypeError(
                "approve must return True, None, False, Deny(...), Defer(), an argument "
                f"model instance or a ToolCallEvent, not {decision!r}"
            )
        if item is None:
            return _refusal(
                call, ErrorType.UNKNOWN_TOOL, f"there is no tool named {call.tool_name!r}"
            )
        started = time.perf_counter()
        result = await self._invoke(item, instance)
        keep = self.config.max_result_chars
        if keep is not None and len(result.text) > keep:
            cut = len(result.text) - keep
            result = dataclasses.replace(
                result, text=f"{result.text[:keep]}\n{self._note('result_cut', cut=cut)}"
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
        if self.config.tool_timeout is None:
            return await work
        # wait_for raises asyncio.TimeoutError, which is the builtin TimeoutError only from
        # Python 3.11 on: catching the builtin one lets the timeout out of the run on 3.10.
        try:
            return await asyncio.wait_for(work, self.config.tool_timeout)
        except asyncio.TimeoutError:
            return ToolResult(
                tool_name=item.name,
                text=self._note(
                    "timeout",
                    name=item.name,
                    seconds=f"{self.config.tool_timeout:g}",
                    cancelled=item.is_async,
                ),
                is_error=True,
                error_type=ErrorType.TOOL_TIMEOUT.value,
            )


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
