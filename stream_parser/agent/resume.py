"""Pausing a run on deferred calls, and resuming it once they are decided.

Theory of operation.  When an approver defers a call (``Defer()``), the step finishes
the reply's other calls and the run ends ``"paused"`` (:meth:`~PauseResume._pause`): the
reply goes into the history, and what is still to be written (the answers to its calls,
with a placeholder for each pending one) goes into a
:class:`~stream_parser.agent.PausedRun` (``pause.py``), with the counts the run's limits
need.  :meth:`~PauseResume.resume` checks the decisions before anything runs; the
resumed run (:meth:`~PauseResume._resumed`) carries out each decision in call order,
fills the placeholders, and goes on with the loop's steps where the pause left them,
its steps, limits and usage counting on.  An interruption while the decisions run
answers the calls not carried out as cancelled, so the history stays one a server
accepts.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, cast

from pydantic import BaseModel

from ..core.events import ToolCallEvent
from ..errors import ConfigError
from ..llm.base import ContentPart
from ..prompts import text as prompts
from ..tools import ToolResult
from ._sync import _background, check_sync_tools
from .events import AgentDoneEvent, AgentEvent, ToolResultEvent
from .limits import _call_limit_hit, _reason_of
from .pause import PausedRun, PendingCall, check_decisions
from .reply import Reply, answer_images, answer_text, fill_answers
from .run import AgentRun, _interrupted
from .step_end import StepEnds
from .usage import LimitHit

__all__ = ["PauseResume"]


class PauseResume(StepEnds):
    """Pauses a run and resumes it; mixed into the agent loop, which gives ``_steps``."""

    if TYPE_CHECKING:

        def _steps(
            self, run: AgentRun, last_answer: LimitHit | None = None, output: str = ""
        ) -> AsyncIterator[AgentEvent]: ...

    def _pause(
        self, run: AgentRun, reply: Reply, results: Mapping[int, ToolResult], waiting: list[int]
    ) -> AgentDoneEvent:
        """End the run paused: the reply goes into the history, its answers into the record."""
        config = self.config
        native = reply.native_ids()
        pending: list[PendingCall] = []
        for position in waiting:
            call = reply.calls[position]
            is_native = call.call_id is not None and call.call_id in native
            instance = call.tool_instance
            arguments = (
                instance.model_dump(mode="json")
                if isinstance(instance, BaseModel)
                else dict(instance or {})
            )
            pending.append(
                PendingCall(
                    call_id=cast(str, call.call_id)
                    if is_native
                    else f"call_{reply.step}_t{position}",
                    name=call.tool_name,
                    arguments=arguments,
                    call_index=call.call_index,
                    native=is_native,
                )
            )
        made = {position: result for position, result in results.items() if position not in waiting}
        placeholders = {
            position: call.placeholder for position, call in zip(waiting, pending, strict=True)
        }
        written = reply.messages(
            made,
            {},
            language=config.language,
            templates=config.templates,
            pending=placeholders,
        )
        run.messages.extend(written[:1])
        run.pending_calls = pending
        run._paused = PausedRun(
            messages=list(run.messages),
            pending=pending,
            answers=written[1:],
            results=[
                {
                    "name": result.tool_name,
                    "text": result.text,
                    "is_error": result.is_error,
                    "error_type": result.error_type,
                }
                for _, result in sorted(made.items())
            ],
            step=reply.step,
            tool_calls=run.tool_calls,
            usage=dataclasses.replace(run.usage),
            tool_seconds=run.tool_seconds,
            output=reply.visible_text,
        )
        # A call of this reply was refused at the call limit: the run ends there once the
        # pending calls are answered (see _resumed); the pause says so already.
        limit_hit = _call_limit_hit(result.error_type for result in made.values())
        return self._done(run, "paused", reply, self._call_limit(run) if limit_hit else None)

    def resume(self, paused: PausedRun | str | bytes, decisions: Mapping[str, object]) -> AgentRun:
        """Go on with a paused run, its pending calls decided: ``await`` it or iterate it.

        Each pending call's decision is carried out first, in call order, and its answer
        appended (``tool`` messages for native calls, one observation message for calls
        written in text); then the run goes on with its next request.  Steps, limits and
        usage count on from the pause.

        Args:
            paused: ``run.pause_state()``, or its JSON (``PausedRun.to_json()``).
            decisions: each pending call's id -> ``True`` (run it), ``False`` or
                :class:`~stream_parser.agent.Deny` (do not; the model reads the
                reason), a result given by hand (``str`` or
                :class:`~stream_parser.tools.ToolResult`), or edited arguments (an
                instance of the tool's argument model, or a mapping).

        Returns:
            An :class:`AgentRun`, not started yet.

        Raises:
            ConfigError: a damaged JSON document or one of another version, a missing
                or unknown call id, or a decision of another kind; raised here, before
                anything runs.
        """
        if isinstance(paused, (str, bytes)):
            paused = PausedRun.from_json(paused)
        if not isinstance(paused, PausedRun):
            raise ConfigError(f"resume takes a PausedRun or its JSON, not {paused!r}")
        paused.check()
        checked = check_decisions(paused.pending, decisions)
        state = paused

        def body(run: AgentRun) -> AsyncIterator[AgentEvent]:
            return self._resumed(run, state, checked)

        run = AgentRun(list(paused.messages), body)
        run.steps = paused.step
        run.tool_calls = paused.tool_calls
        run.usage = dataclasses.replace(paused.usage)
        run.tool_seconds = paused.tool_seconds
        return run

    def resume_sync(
        self, paused: PausedRun | str | bytes, decisions: Mapping[str, object]
    ) -> AgentRun:
        """:meth:`resume` to its end, from synchronous code (as :meth:`run_sync` runs).

        Raises:
            ConfigError: as :meth:`resume`, before anything runs.
        """
        check_sync_tools(self.tools)
        run = self.resume(paused, decisions)
        finished: AgentRun = _background().call(run._drive())
        return finished

    async def _resumed(
        self, run: AgentRun, paused: PausedRun, decisions: Mapping[str, object]
    ) -> AsyncIterator[AgentEvent]:
        """Carry out the decisions, append the answers, then go on with the steps."""
        config = self.config
        say = (config.language, config.templates)
        texts: dict[str, str] = {}
        images: dict[str, list[ContentPart]] = {}
        try:
            for pending in paused.pending:
                call = ToolCallEvent(
                    tool_name=pending.name,
                    tool_instance=pending.arguments,
                    raw=json.dumps(pending.arguments),
                    call_index=pending.call_index,
                    call_id=pending.call_id if pending.native else None,
                )
                decision = decisions[pending.call_id]
                item = self.tools.get_tool(pending.name) if pending.name in self.tools else None
                started = time.perf_counter()
                # Not counted again, nor refused at the call limit: the call was counted
                # when it was deferred, within the limit.
                result = await self._carry_out(run, call, item, decision)
                seconds = time.perf_counter() - started
                run.tool_seconds += seconds
                texts[pending.placeholder] = answer_text(pending.native, pending.name, result, *say)
                images.update(
                    answer_images(
                        pending.native,
                        pending.name,
                        pending.call_id,
                        pending.placeholder,
                        result,
                        *say,
                    )
                )
                yield ToolResultEvent(
                    tool_name=pending.name,
                    result=result,
                    call_index=pending.call_index,
                    step=paused.step,
                    call_id=call.call_id,
                    duration_s=seconds if config.timings else None,
                )
        except BaseException as exc:
            run.reason = _interrupted(exc)
            raise
        finally:
            # Every pending call is answered, those an interruption left as cancelled.
            for pending in paused.pending:
                if pending.placeholder not in texts:
                    texts[pending.placeholder] = (
                        prompts.say("native_cancelled", *say)
                        if pending.native
                        else prompts.cancelled_observation(pending.name, *say)
                    )
            run.messages.extend(fill_answers(paused.answers, texts, images))
        # The step goes on as it would have, its calls decided at once: a call refused at
        # the call limit ends the run there (or asks for a last answer).
        last_answer = None
        if _call_limit_hit(result.get("error_type") for result in paused.results):
            hit = self._call_limit(run)
            if not config.final_answer_at_limit:
                reply = Reply(paused.step)
                reply.visible.append(paused.output)
                yield self._done(run, _reason_of(hit), reply, hit)
                return
            last_answer = hit
        async for event in self._steps(run, last_answer, paused.output):
            yield event
