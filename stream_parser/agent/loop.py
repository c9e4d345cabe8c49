"""The one agent loop: what both agents share, written once.

An agent (:class:`~stream_parser.agent.ReActAgent` on the text protocol,
:class:`~stream_parser.agent.FunctionCallAgent` on native function calling) repeats one
*step*: send the conversation to the model, stream the reply through the parser (a
:class:`~stream_parser.agent.StepStartEvent`, then every parse event as it arrives,
unchanged), run the validated calls, append the reply and the answers to its calls to
the history.  Only three things differ
between the agents, and they are the hooks of :class:`AgentLoop`: the system prompt,
the request (with or without OpenAI ``tools``), and the parser's configuration.  How a
reply goes into the history is shared too: native calls are answered by ``tool``
messages, calls written in the text by one ``user`` message of observations.

* :class:`AgentLoop` (this module): the step loop, its hooks, and ``run`` /
  ``run_sync`` / ``stream_sync``; it reads its options from an
  :class:`~stream_parser.agent.AgentConfig` (``options.py``);
* the run handle, :class:`~stream_parser.agent.AgentRun` (``run.py``); a reply and the
  history it writes (``reply.py``); mixed in, one above the other: the tool runner
  (``runner.py``: worker threads for sync tools, time limits, result size, approval,
  eager read-only tools, the run's call limit), the ends of a step (``step_end.py``),
  pause and resume (``resume.py``); the limits a run ends at (``limits.py``); the
  conversation a run starts from (``history.py``); the background loop of the sync
  forms (``_sync.py``).

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
import dataclasses
import logging
import time
from collections.abc import AsyncIterator, Iterable, Iterator, Mapping, Sequence
from typing import Any

from ..core.chunks import ChatDelta
from ..core.config import ParserConfig
from ..core.events import NoticeEvent, TokenUsageEvent, ToolCallEvent
from ..core.parser import StreamToolParser
from ..errors import ConfigError
from ..llm.base import ChatModel, Message, ModelError
from ..prompts.templating import render
from ..tools import ToolLike, ToolRegistry, ToolResult
from ._sync import _background, check_sync_tools, iterate_sync
from .events import AgentEvent, RequestDoneEvent, StepStartEvent
from .history import ContextStep, _context_step, start_history, trim_history
from .limits import USAGE_LIMIT as USAGE_LIMIT  # where it was first defined
from .limits import (
    _call_limit_hit,
    _limit_before_request,
    _reason_of,
    _reply_end,
    _token_limit,
    _usage_unreported,
)
from .options import AgentOptions, Unpack, agent_config
from .reply import Reply
from .resume import PauseResume
from .run import AgentRun
from .runner import DEFERRED, tool_registry
from .usage import LimitHit, Usage

__all__ = ["AgentLoop"]

logger = logging.getLogger("stream_parser.agent")


# --- the loop -------------------------------------------------------------------------------


class AgentLoop(PauseResume):
    """The loop both agents run; subclasses give the prompt, the request and the parser.

    Args:
        model: the chat model (any :class:`~stream_parser.llm.ChatModel`).
        tools: a :class:`~stream_parser.tools.ToolRegistry`, or tools and plain functions
            to make one of.  Every tool must have a function to run.
        **options: the options of :class:`~stream_parser.agent.AgentOptions`.

    Raises:
        ConfigError: an unknown option (the closest one is named) or a bad value, a
            schema-only or duplicate tool, a tool that requires approval without
            ``approve``, or a model that is not a ``ChatModel``.
    """

    #: the parser configuration of a subclass when none is given
    _default_config: ParserConfig = ParserConfig()

    def __init__(
        self,
        model: ChatModel,
        tools: ToolRegistry | Iterable[ToolLike] | Mapping[str, ToolLike],
        **options: Unpack[AgentOptions],
    ) -> None:
        if not isinstance(model, ChatModel):
            raise ConfigError(f"model must be a ChatModel (with stream()), not {model!r}")
        self.model = model
        self.tools = tool_registry(tools)
        self.config = agent_config(type(self).__name__, options)
        """The options, checked and with their defaults (see :class:`AgentOptions`)."""
        marked = [item.name for item in self.tools.tools if item.requires_approval]
        if marked and self.config.approve is None:
            raise ConfigError(
                f"tool(s) {', '.join(marked)} require approval: pass approve= to the agent"
            )
        # With some tools marked, only those are asked about; else every call is.
        self._ask_all = not marked
        given = self.config.parser_config
        self.parser_config = self._configure(given if given is not None else self._default_config)
        """The parser configuration of every step (the one given, as the agent needs it)."""

    # -- hooks ------------------------------------------------------------------------------

    def _configure(self, config: ParserConfig) -> ParserConfig:
        """The parser configuration the agent uses, from the one given."""
        return config

    def system_prompt(self) -> str:
        """The system message of a new conversation (``""`` for none)."""
        return self.config.system_prompt or ""

    def _notices(self, reply: Reply) -> list[NoticeEvent]:
        """Notices about a whole reply, given after its last event (none by default)."""
        return []

    def _request(self, messages: Sequence[Message]) -> AsyncIterator[ChatDelta]:
        """Start one reply: the model's stream for the conversation."""
        return self.model.stream(messages, **self.config.model_options)

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
            self.config.language,
            templates=self.config.templates,
            reasoning=reasoning or "",
            steps=[dataclasses.asdict(step) for step in steps],
            step_history_size=self.config.step_history_size,
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
        when = self.config.clock().isoformat(timespec="seconds") if self.config.show_time else None
        return render(
            "user_prompt",
            self.config.language,
            templates=self.config.templates,
            question=question,
            time=when,
            context=block,
        )

    def _note(self, kind: str, **details: Any) -> str:
        """A note the agent writes about a call (why it did not run, a cut result)."""
        config = self.config
        return render(
            "agent_note", config.language, templates=config.templates, kind=kind, **details
        )

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
        if isinstance(input, str) and (context is not None or reasoning or self.config.show_time):
            input = self.user_prompt(input, context=context, reasoning=reasoning)
        role = self.config.instructions_role
        messages = start_history(input, history, self.system_prompt(), role)
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

    async def _steps(
        self, run: AgentRun, last_answer: LimitHit | None = None, output: str = ""
    ) -> AsyncIterator[AgentEvent]:
        """The steps of a run; a resumed run goes on with the state its pause left.

        Args:
            run: the run.
            last_answer: the limit at which one last answer is asked for
                (``final_answer_at_limit``), if it was reached already.
            output: the visible text of the latest reply (a resumed run's), the run's
                output if a limit ends it before another reply.
        """
        messages = run.messages
        config = self.config
        reply = Reply(run.steps)
        if output:
            reply.visible.append(output)
        log = logger
        usage = run.usage
        limits = config.usage_limits
        token_limits = limits.token_limits if limits is not None else {}
        step = run.steps  # a resumed run counts on from its pause
        while True:
            hit, last_answer = _limit_before_request(config, usage, token_limits, last_answer)
            if hit is not None:
                yield self._done(run, _reason_of(hit), reply, hit)
                return
            if last_answer is not None:
                run._tools_closed = True  # the last answer's calls are not run
            step += 1
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
            sent = self._messages_to_send(messages)
            usage.requests += 1
            started_at, started = time.time(), time.perf_counter()
            source = self._final_request(sent) if last_answer else self._request(sent)
            parser = self._parser()
            reply_usage = Usage(requests=1)
            reported = False
            try:
                take, eager_tools = reply.take, config.eager_tools
                note, feed, next_delta = reply.note, parser.feed_item, aiter(source).__anext__
                ended = False
                while not ended:
                    # Each delta is noted and fed to the parser here, rather than through
                    # the parser's async driver and a recording generator around the
                    # model's stream: two async generators less for every delta.
                    try:
                        delta = await next_delta()
                    except StopAsyncIteration:
                        ended = True
                        made = parser.close()
                    else:
                        note(delta)
                        made = feed(delta)
                    for event in made:
                        take(event)
                        if isinstance(event, TokenUsageEvent):
                            usage.add(event.usage_info)
                            reply_usage.add(event.usage_info)
                            reported = True
                        yield event
                        if eager_tools and isinstance(event, ToolCallEvent):
                            self._start_eager(run, reply, eager, results)
                reply.finished = True
                for notice in self._notices(reply):
                    yield notice
                if not reported and token_limits and not run._usage_notice_given:
                    run._usage_notice_given = True
                    yield _usage_unreported(token_limits, _reply_end(run.events))
                record = self._record(run, reply, reply_usage, reported, started_at, started)
                if config.timings:
                    yield RequestDoneEvent(
                        step=step,
                        started_at=record.started_at,
                        first_token_s=record.first_token_s,
                        duration_s=record.duration_s,
                        usage=record.usage,
                        usage_reported=record.usage_reported,
                    )
            except BaseException as exc:
                if len(run.requests) < usage.requests:  # not recorded yet
                    self._record(run, reply, reply_usage, reported, started_at, started)
                await self._stop_interrupted(run, reply, eager, results, exc)
                if isinstance(exc, ModelError):
                    # INFO, not WARNING: the error is raised to the caller, who handles it.
                    log.info("%s step %d: model error: %s", run.run_id, step, exc)
                else:
                    log.info("%s step %d: interrupted mid-reply", run.run_id, step)
                raise
            finally:
                aclose = getattr(source, "aclose", None)
                if aclose is not None:
                    await aclose()

            if reply.stream_error is not None or reply.cut:
                done = await self._end_broken_reply(run, reply, eager, results, last_answer)
                if done is None:
                    continue
                yield done
                return
            # After each reply: the tokens, with its usage added.
            crossed = _token_limit(usage, token_limits, reached=False)
            if crossed is not None:
                yield await self._end_over_budget(run, reply, eager, results, crossed)
                return

            calls = self._run_calls(run, reply, eager, results)
            try:
                async for result_event in calls:
                    yield result_event
            except BaseException as exc:
                await calls.aclose()  # it stops its calls, keeping the results they made
                await self._stop_interrupted(run, reply, eager, results, exc)
                log.info("%s step %d: interrupted while tools ran", run.run_id, step)
                raise
            waiting = sorted(
                position for position, result in results.items() if result.error_type == DEFERRED
            )
            if waiting:
                yield self._pause(run, reply, results, waiting)
                return
            limit_hit = _call_limit_hit(result.error_type for result in results.values())
            messages.extend(
                reply.messages(results, {}, language=config.language, templates=config.templates)
            )
            if not reply.needs_answer:
                yield self._done(run, "done", reply, last_answer)
                return
            if last_answer is not None:
                # The last answer called tools again: they were not run.
                yield self._done(run, _reason_of(last_answer), reply, last_answer)
                return
            if limit_hit:
                hit = self._call_limit(run)
                if not config.final_answer_at_limit:
                    yield self._done(run, _reason_of(hit), reply, hit)
                    return
                last_answer = hit

    def _messages_to_send(self, messages: Sequence[Message]) -> list[Message]:
        """The conversation sent with a request: the history, cut to ``history_length``."""
        sent = trim_history(messages, self.config.history_length)
        if self.config.instructions_role == "user" and len(sent) < len(messages):
            # The turn that opened with the instructions was left out: the first turn
            # sent opens with them instead.
            sent = start_history(sent, None, self.system_prompt(), "user")
        return sent

    def _final_request(self, messages: Sequence[Message]) -> AsyncIterator[ChatDelta]:
        """The request for a last answer at a limit (the tools no longer callable).

        By default, the usual request; each agent says in its own way that tools are
        over (``tool_choice="none"``, or a note after the observations).
        """
        return self._request(messages)
