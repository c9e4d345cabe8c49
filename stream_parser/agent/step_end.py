"""How a step ends: the record of its request, and the end of the run it may bring.

Theory of operation.  :class:`StepEnds` is the part of the agent loop that closes a
step, mixed in between the tool runner and the loop.  Whatever ends a step leaves the
history consistent: an interruption cancels the calls still running and answers every
call of the reply (:meth:`~StepEnds._stop_interrupted`); a reply cut at its length limit
or broken off mid-stream runs none of its calls (:meth:`~StepEnds._end_broken_reply`); a
reply that crossed a token limit ends the run with its calls answered as not run
(:meth:`~StepEnds._end_over_budget`).  :meth:`~StepEnds._done` is the one place a run
ends: it sets the run's reason, limit and output, logs it, and makes the
:class:`~stream_parser.agent.AgentDoneEvent`.  Each request leaves a
:class:`~stream_parser.agent.RequestRecord` (:meth:`~StepEnds._record`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping

from ..core.events import ErrorType
from ..llm.base import ModelError
from ..tools import ToolResult
from .events import AgentDoneEvent, StopReason
from .limits import USAGE_LIMIT, _reason_of
from .reply import Reply
from .run import AgentRun, _interrupted
from .runner import ToolRunner, _refusal
from .usage import LimitHit, RequestRecord, Usage

__all__ = ["StepEnds"]

logger = logging.getLogger("stream_parser.agent")


class StepEnds(ToolRunner):
    """Ends a step, and the run when the step ends it; mixed into the agent loop."""

    def _call_limit(self, run: AgentRun) -> LimitHit:
        """The run's call limit, reached."""
        call_name, call_limit = self.config.call_limit
        return LimitHit(call_name, call_limit or 0, run.tool_calls)

    async def _stop_interrupted(
        self,
        run: AgentRun,
        reply: Reply,
        eager: dict[int, asyncio.Task[ToolResult]],
        results: dict[int, ToolResult],
        exc: BaseException,
    ) -> None:
        """Stop the step on an interruption, the history left consistent.

        The calls still running are cancelled; every call of the reply is answered, the
        unfinished ones as cancelled.
        """
        await _cancel_tasks(eager, results)
        config = self.config
        run.messages.extend(
            reply.messages(results, {}, language=config.language, templates=config.templates)
        )
        run.output = reply.visible_text
        run.reason = _interrupted(exc)

    async def _end_broken_reply(
        self,
        run: AgentRun,
        reply: Reply,
        eager: dict[int, asyncio.Task[ToolResult]],
        results: dict[int, ToolResult],
        last_answer: LimitHit | None,
    ) -> AgentDoneEvent | None:
        """End the step of a reply cut at its length limit or broken off mid-stream.

        Nothing of such a reply runs: its calls may be incomplete in ways the parser
        cannot see (a value cut short), and an eager one stops.

        Returns:
            The end of the run, or None when the model is asked again (a cut reply
            whose calls were answered as not run).

        Raises:
            ModelError: the stream failed mid-reply.
        """
        config = self.config
        await _cancel_tasks(eager, results)
        why = self._note("reply_cut" if reply.cut else "connection_failed")
        not_run = {
            position: _refusal(call, ErrorType.TRUNCATED, why)
            if reply.cut
            else _refusal(call, ErrorType.CANCELLED, why)
            for position, call in enumerate(reply.calls)
            if position not in results
        }
        run.messages.extend(
            reply.messages(results, not_run, language=config.language, templates=config.templates)
        )
        run.output = reply.visible_text
        if reply.stream_error is not None:
            run.reason = "model_error"
            logger.info(  # raised just below: the caller has it
                "%s step %d: the stream failed: %s", run.run_id, reply.step, reply.stream_error
            )
            raise ModelError(f"the stream failed mid-reply: {reply.stream_error}")
        if not reply.needs_answer:
            return self._done(run, "length", reply)
        if last_answer is not None:
            return self._done(run, _reason_of(last_answer), reply, last_answer)
        return None

    async def _end_over_budget(
        self,
        run: AgentRun,
        reply: Reply,
        eager: dict[int, asyncio.Task[ToolResult]],
        results: dict[int, ToolResult],
        crossed: LimitHit,
    ) -> AgentDoneEvent:
        """End the run at the reply that crossed a token limit.

        The reply is recorded; its calls are answered as not run (those started early
        while it streamed finish first).
        """
        config = self.config
        try:
            for position, task in eager.items():
                results[position] = await task
        except BaseException as exc:
            await self._stop_interrupted(run, reply, eager, results, exc)
            raise
        why = self._note("usage_limit", limit=f"{crossed.name}={crossed.limit}")
        not_run = {
            position: _refusal(call, USAGE_LIMIT, why)
            for position, call in enumerate(reply.calls)
            if position not in results
        }
        run.messages.extend(
            reply.messages(results, not_run, language=config.language, templates=config.templates)
        )
        return self._done(run, "usage_limit", reply, crossed)

    def _record(
        self,
        run: AgentRun,
        reply: Reply,
        usage: Usage,
        reported: bool,
        started_at: float,
        started: float,
    ) -> RequestRecord:
        """Keep the record of one request (``run.requests``), its reply over."""
        now = time.perf_counter()
        first = reply.first_token
        record = RequestRecord(
            step=reply.step,
            started_at=started_at,
            first_token_s=None if first is None else first - started,
            duration_s=now - started,
            usage=usage,
            usage_reported=reported,
        )
        run.requests.append(record)
        return record

    def _done(
        self, run: AgentRun, reason: StopReason, reply: Reply, limit: LimitHit | None = None
    ) -> AgentDoneEvent:
        """End the run: its reason, limit and output set, and the event that says so."""
        run.reason = reason
        run.limit = limit
        run.output = reply.visible_text
        if limit is None:
            logger.info("%s ended: %s after %d step(s)", run.run_id, reason, run.steps)
        else:
            logger.info(
                "%s ended: %s after %d step(s), at %s=%d (used %d)",
                run.run_id,
                reason,
                run.steps,
                limit.name,
                limit.limit,
                limit.used,
            )
        return AgentDoneEvent(
            reason=reason,
            messages=list(run.messages),
            output=run.output,
            steps=run.steps,
            limit=limit,
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
