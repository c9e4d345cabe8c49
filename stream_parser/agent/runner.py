"""The tool runner: approval, time limits, call limits, eager tools and sync tools.

:class:`ToolRunner` is the part of the loop that runs a reply's validated calls, mixed
into :class:`~stream_parser.agent.loop.AgentLoop`.  Each call is asked about (``approve``),
run with its time limit, and its result cut to ``max_result_chars``; a tool never
raises into the run (its failure is a :class:`~stream_parser.tools.ToolResult` with
``is_error``).  Calls run one after the other, or all at once with
``concurrent_tools``; with ``eager_tools`` a read-only call starts while the reply
still streams.  Sync tools run on worker threads (``_threads.py``) so that the loop
keeps streaming; the sync calls of a step that run one after the other with nothing to
ask about in between are handed to one worker together.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import logging
import time
from collections.abc import (
    AsyncGenerator,
    Awaitable,
    Iterable,
    Mapping,
)
from typing import Any, Final, TypeAlias

from pydantic import BaseModel

from ..core.events import (
    ErrorType,
    ToolCallEvent,
)
from ..errors import ConfigError
from ..tools import Tool, ToolLike, ToolRegistry, ToolResult, as_registry
from ._threads import TOOL_THREADS, CallBatch, in_thread
from .events import (
    ToolResultEvent,
)
from .options import AgentConfig, Defer, Deny
from .reply import Reply
from .run import AgentRun

__all__ = ["DEFERRED", "TOOL_THREADS", "ToolRunner", "deferred", "tool_registry"]

logger = logging.getLogger("stream_parser.agent")


# --- approval -------------------------------------------------------------------------------

DEFERRED: Final = "deferred"
"""The error type of the marker a deferred call gets instead of a result (never sent)."""


def deferred(call: ToolCallEvent) -> ToolResult:
    """The marker of a call an approver deferred: the loop pauses on it."""
    return ToolResult(tool_name=call.tool_name, text="deferred", error_type=DEFERRED)


# The decision of a call whose approver is still to be asked (when it runs).
_ASK: Final = object()

# Where a sync call waits for its result in a batch handed to one worker: the batch and
# the call's place in it.
_Slot: TypeAlias = "tuple[CallBatch, int]"


# --- running tools --------------------------------------------------------------------------


def _refusal(call: ToolCallEvent, error_type: ErrorType | str, text: str) -> ToolResult:
    code = error_type.value if isinstance(error_type, ErrorType) else error_type
    return ToolResult(tool_name=call.tool_name, text=text, is_error=True, error_type=code)


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
    ) -> AsyncGenerator[ToolResultEvent, None]:
        """Run the reply's calls (those not started eagerly), yielding each result in order.

        Concurrently, every call starts at once; else each starts when the one before it
        has finished.  Every running call is in ``tasks``, so that an interruption can
        cancel it.  In a run driven to its end, sync calls with nothing to ask about in
        between are handed to one worker together (:meth:`_batch`): it starts each as
        soon as the one before it has finished; an interruption stops it, and the
        results it made are kept.
        """
        timings = self.config.timings
        decided: dict[int, object] = {}
        if self._pause_refused is not None and self.config.approve is not None:
            decided = await self._decide_first(run, reply, tasks, results)
        if self.config.concurrent_tools:
            for position in range(len(reply.calls)):
                if position not in tasks:
                    self._start(run, reply, position, tasks, results, decided.get(position, _ASK))
        batched: dict[int, _Slot] = {}
        reached = 0  # the calls before it have been counted
        try:
            for position, call in enumerate(reply.calls):
                reached = position
                if position not in results:
                    if position in tasks:
                        results[position] = await tasks[position]
                    else:
                        # One call at a time: awaited here, without a task of its own (an
                        # interruption reaches it through the run's own task).
                        if position not in batched:
                            batched.update(self._batch(run, reply, position, decided, results))
                        decision = decided.get(position, _ASK)
                        results[position] = await self._run_now(
                            run, reply, position, decision, batched.get(position)
                        )
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
        except BaseException:
            self._harvest(run, reply, batched, results, reached)
            raise

    def _batch(
        self,
        run: AgentRun,
        reply: Reply,
        position: int,
        decided: Mapping[int, object],
        results: Mapping[int, ToolResult],
    ) -> dict[int, _Slot]:
        """Hand the sync calls from ``position`` on to one worker together.

        They are the calls that would run one after the other with nothing to wait for
        in between: sync tools, nobody to ask (no approver, a tool it is not asked
        about, or a call it approved already), within the call limit, in a run driven
        to its end (``await run``, ``run_sync``).  A run whose events a consumer
        iterates hands over one call at a time: each starts when the consumer asks for
        the event after the result before it, as an async call would.  See
        :class:`~stream_parser.agent._threads.CallBatch`.

        Returns:
            Call position -> its slot in the batch; empty if the call at ``position``
            is not such a call.
        """
        approve = self.config.approve
        room = self._room(run)
        chosen: list[tuple[int, Tool[Any, Any], Any]] = []
        for later in range(position, len(reply.calls)):
            call = reply.calls[later]
            if later in results or call.tool_name not in self.tools:
                break
            if room is not None and len(chosen) >= room:
                break
            item = self.tools.get_tool(call.tool_name)
            if item.is_async:
                break
            asked = approve is not None and (self._ask_all or item.requires_approval)
            if asked and decided.get(later, _ASK) not in (None, True):
                break  # the approver is still to be asked, or changed the call
            chosen.append((later, item, call.tool_instance))
        if not chosen:
            return {}
        if not run._driven:
            # A consumer sees each result before the next call starts, so that leaving
            # the loop there stops the calls after it: one call at a time.
            chosen = chosen[:1]
        batch = CallBatch([functools.partial(item.execute, args) for _, item, args in chosen])
        batch.start()
        return {later: (batch, index) for index, (later, _, _) in enumerate(chosen)}

    def _harvest(
        self,
        run: AgentRun,
        reply: Reply,
        batched: Mapping[int, _Slot],
        results: dict[int, ToolResult],
        reached: int,
    ) -> None:
        """On an interruption: stop the batches, keep the results their calls made.

        A batched call may have run before the loop came to it: its result goes into
        the history, not "cancelled".  A call past ``reached`` that the worker started
        is counted here (the loop counted the others).
        """
        for position, (batch, index) in batched.items():
            batch.stop()
            if position > reached and batch.started(index):
                run.tool_calls += 1
            future = batch.take(index)
            if position in results or future is None or not future.done():
                continue
            if not future.cancelled() and future.exception() is None:
                call = reply.calls[position]
                results[position] = self._finish(run, call, future.result(), 0.0)

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
        self,
        run: AgentRun,
        reply: Reply,
        position: int,
        decision: object = _ASK,
        slot: _Slot | None = None,
    ) -> ToolResult:
        """Run one call in the caller's task, or refuse it past the run's call limit."""
        call = reply.calls[position]
        if self._over_limit(run):
            return self._limit_refusal(run, call)
        run.tool_calls += 1
        return await self._execute(run, call, reply, position, decision, slot)

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
        slot: _Slot | None = None,
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
            slot: where a sync call handed to a worker with others waits.
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
            return await self._carry_out(run, call, item, decision, slot)
        finally:
            seconds = time.perf_counter() - started
            reply.tool_seconds[position] = seconds
            run.tool_seconds += seconds

    async def _carry_out(
        self,
        run: AgentRun,
        call: ToolCallEvent,
        item: Tool[Any, Any] | None,
        decision: object,
        slot: _Slot | None = None,
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
        result = await self._invoke(item, instance, slot)
        return self._finish(run, call, result, (time.perf_counter() - started) * 1000)

    def _finish(
        self, run: AgentRun, call: ToolCallEvent, result: ToolResult, elapsed: float
    ) -> ToolResult:
        """A call's result as the model gets it (cut to ``max_result_chars``), logged."""
        keep = self.config.max_result_chars
        if keep is not None and len(result.text) > keep:
            cut = len(result.text) - keep
            result = dataclasses.replace(
                result, text=f"{result.text[:keep]}\n{self._note('result_cut', cut=cut)}"
            )
        logger.info(
            "%s tool %s (call %d): %s in %.1f ms",
            run.run_id,
            call.tool_name,
            call.call_index,
            result.error_type or "ok",
            elapsed,
        )
        return result

    async def _invoke(
        self, item: Tool[Any, Any], instance: Any, slot: _Slot | None = None
    ) -> ToolResult:
        """Run the tool (a sync one on a worker, or in its batch's), with its time limit."""
        work: Awaitable[ToolResult] | None = None
        if item.is_async:
            work = asyncio.ensure_future(item.aexecute(instance))
        elif slot is not None:
            work = slot[0].take(slot[1])  # None: the batch stopped before this call
        if work is None:
            work = in_thread(lambda: item.execute(instance))
        if self.config.tool_timeout is None:
            return await work
        # wait_for raises asyncio.TimeoutError, which is the builtin TimeoutError only from
        # Python 3.11 on: catching the builtin one lets the timeout out of the run on 3.10.
        try:
            return await asyncio.wait_for(work, self.config.tool_timeout)
        except asyncio.TimeoutError:
            if slot is not None:
                slot[0].stop()  # the worker is held: the calls left run on others
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
