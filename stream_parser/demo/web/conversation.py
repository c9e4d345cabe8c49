"""One browser's conversation with the demo's agent, whatever carries its messages.

Theory of operation.  A :class:`Conversation` is one WebSocket connection of the web
demo, without the WebSocket: the endpoint hands it every text message as it arrives
(:meth:`Conversation.handle`) and gives it a coroutine function that sends one text
message back.  It knows nothing of HTTP, so the protocol is read and written here once.

Reading never waits for a run.  A ``message`` starts the agent's run as a task of its
own and returns at once, so that while the reply streams the next messages are read:
``approve`` and ``deny`` settle the future an approval waits on, ``cancel`` cancels the
run (:meth:`~stream_parser.agent.AgentRun.cancel`, which leaves the history valid).  A
``message`` while a run is going is refused with an ``error``, never queued: the page
shows one run at a time.  A message that is not JSON, or of an unknown type, gets an
``error`` too, and the conversation goes on.

Every event of a run goes out as :func:`~stream_parser.event_to_json` writes it, with
the run's current step added as ``step`` (read from the last ``step_start``): the events
stay the library's own, and the page needs no second vocabulary.  Three messages of the
demo's own go with them: ``hello`` once, ``approval`` when a call waits for the person,
and ``run_end`` after every run, however it ended (an ``agent_done`` event exists only
for a run that was not interrupted).

One conversation is one history: each run continues from the messages of the run before
(``run.messages``, valid even after a cancel or a model error).  When the browser goes
away, :meth:`Conversation.close` cancels the run, which closes the model's stream at
once, and closes the model's HTTP client.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final

from ...agent import Deny, StepStartEvent
from ...agent.run import AgentRun
from ...core.events import ToolCallEvent
from ...encoders.json import event_to_json
from ...llm.base import ChatModel, Message, ModelError
from .. import DemoOptions, make_agent, make_model
from .._failure import model_failure
from .._script import task
from .._tools import make_tools

__all__ = ["MODES", "REACT_PROTOCOLS", "Conversation", "Send"]

logger = logging.getLogger("stream_parser.demo")

Send = Callable[[str], Awaitable[None]]
"""Sends one text message to the browser."""

MODES: Final = ("function_call", "react", "simple")
"""A ``message``'s ``mode``: native function calling, the text protocol (ReAct), or one
native request whose calls run once (no second request)."""

REACT_PROTOCOLS: Final = ("xml", "hermes", "qwen3_coder")
"""A ``message``'s ``protocol`` in the ``react`` mode: the dialect the model writes."""

# The longest request a person can type; the WebSocket's own limit (1 MB a message) is
# the server's, this one keeps a pasted file from going to the model by accident.
MAX_CONTENT_CHARS: Final = 100_000


class Conversation:
    """The protocol of one connection: messages in, events and replies out.

    Args:
        options: the demo's options (model, language, limits); ``protocol`` gives the
            default mode: ``"native"`` is ``function_call``, a dialect is ``react`` in it.
        send: sends one text message to the browser.
        root: the sandbox folder the tools work in (one per connection).
    """

    def __init__(self, options: DemoOptions, send: Send, root: Path) -> None:
        self.options = options
        self._send_text = send
        self._tools = make_tools(root)
        self.history: list[Message] | None = None
        """The conversation so far (None before the first run)."""
        self._run: AgentRun | None = None
        self._task: asyncio.Task[None] | None = None
        self._approvals: dict[str, asyncio.Future[bool | Deny]] = {}
        self._server_model: ChatModel | None = None
        self._gone = False

    @property
    def running(self) -> bool:
        """Whether a run is going."""
        return self._task is not None and not self._task.done()

    @property
    def default_mode(self) -> str:
        """The mode of a ``message`` that names none, from the demo's ``--protocol``."""
        return "function_call" if self.options.protocol == "native" else "react"

    @property
    def default_protocol(self) -> str:
        """The dialect of a ``react`` message that names none."""
        return "xml" if self.options.protocol == "native" else self.options.protocol

    # -- the protocol --------------------------------------------------------------------------

    async def start(self, model_label: str) -> None:
        """Greet the page: what runs, and what it may send."""
        await self._send(
            {
                "type": "hello",
                "language": self.options.language,
                "model": model_label,
                "task": task(self.options.language),
                "mode": self.default_mode,
                "protocol": self.default_protocol,
                "modes": list(MODES),
                "protocols": list(REACT_PROTOCOLS),
            }
        )

    async def handle(self, text: str) -> None:
        """Read one message from the browser and act on it; never raises for its content."""
        try:
            data = json.loads(text)
        except ValueError:
            await self.error("a message must be JSON: " + _excerpt(text))
            return
        if not isinstance(data, dict) or not isinstance(data.get("type"), str):
            await self.error('a message must be a JSON object with a "type"')
            return
        kind = data["type"]
        if kind == "message":
            await self._message(data)
        elif kind in ("approve", "deny"):
            await self._decide(data, approve=kind == "approve")
        elif kind == "cancel":
            await self._cancel()
        else:
            await self.error(
                f"unknown message type {_excerpt(kind)}: send message, approve, deny or cancel"
            )

    async def error(self, message: str) -> None:
        """Send an ``error`` message (the connection stays usable)."""
        await self._send({"type": "error", "message": message})

    async def close(self) -> None:
        """The browser went away: cancel the run (closing the model's stream), end the model."""
        self._gone = True
        if self.running:
            assert self._run is not None and self._task is not None
            started = time.perf_counter()
            self._run.cancel()
            await asyncio.wait({self._task})
            logger.info(
                "the browser went away: run cancelled, the model's stream closed in %.0f ms",
                (time.perf_counter() - started) * 1000,
            )
        if self._server_model is not None:
            aclose = getattr(self._server_model, "aclose", None)
            if aclose is not None:
                await aclose()

    # -- messages ------------------------------------------------------------------------------

    async def _message(self, data: dict[str, Any]) -> None:
        if self.running:
            await self.error("a run is going: wait for its end, or send cancel")
            return
        content = data.get("content")
        if not isinstance(content, str) or not content.strip():
            await self.error('"content" must be a non-empty string')
            return
        if len(content) > MAX_CONTENT_CHARS:
            await self.error(f'"content" is longer than {MAX_CONTENT_CHARS:,} characters')
            return
        mode = data.get("mode", self.default_mode)
        if mode not in MODES:
            await self.error(f'unknown "mode" {_excerpt(mode)}: use one of {", ".join(MODES)}')
            return
        protocol = data.get("protocol", self.default_protocol)
        if mode == "react" and protocol not in REACT_PROTOCOLS:
            await self.error(
                f'unknown "protocol" {_excerpt(protocol)}: use one of {", ".join(REACT_PROTOCOLS)}'
            )
            return
        dialect = protocol if mode == "react" else "native"
        agent = make_agent(
            self.options,
            self._model(dialect),
            self._tools,
            self._approve,
            protocol=dialect,
            # simple: one request, its calls run once, no second request.
            max_iterations=1 if mode == "simple" else 10,
        )
        run = agent.run(content, history=self.history)
        self._run = run
        logger.info("%s: %s run started (%s)", run.run_id, mode, dialect)
        self._task = asyncio.create_task(self._drive(run))

    async def _decide(self, data: dict[str, Any], *, approve: bool) -> None:
        call_id = data.get("call_id")
        if not isinstance(call_id, str):
            await self.error('"call_id" must be a string: the call_id of an approval message')
            return
        waiting = self._approvals.get(call_id)
        if waiting is None or waiting.done():
            await self.error(f"no call {_excerpt(call_id)} waits for approval")
            return
        if approve:
            waiting.set_result(True)
            return
        reason = data.get("reason")
        if isinstance(reason, str) and reason.strip():
            waiting.set_result(Deny(reason.strip()))
        else:
            waiting.set_result(Deny())

    async def _cancel(self) -> None:
        if not self.running:
            await self.error("no run to cancel")
            return
        assert self._run is not None
        self._run.cancel()

    # -- the run -------------------------------------------------------------------------------

    def _model(self, dialect: str) -> ChatModel:
        """The model of a run in ``dialect``.

        The scripted model is made anew for each run (its script starts over); the
        server's is one per conversation (its HTTP client is reused from run to run).
        """
        if self.options.base_url is None:
            return make_model(self.options, dialect)[0]
        if self._server_model is None:
            self._server_model = make_model(self.options)[0]
        return self._server_model

    async def _drive(self, run: AgentRun) -> None:
        started = time.perf_counter()
        step = 0
        try:
            async for event in run:
                if isinstance(event, StepStartEvent):
                    step = event.step
                await self._send_text_checked(event_to_json(event, step=step))
        except asyncio.CancelledError:
            # Stop was pressed, or the browser went away: the run has made its history
            # valid; the conversation goes on from it.
            pass
        except ModelError as exc:
            await self.error(model_failure(exc, self.options.base_url, self.options.timeout))
        except Exception as exc:  # a bug: the page hears of it, the server goes on
            logger.exception("%s failed", run.run_id)
            await self.error(f"the run failed: {type(exc).__name__}: {exc}")
        finally:
            for waiting in self._approvals.values():
                waiting.cancel()
            self._approvals.clear()
            self.history = run.messages
        seconds = time.perf_counter() - started
        logger.info(
            "%s ended: %s after %d step(s), %.1f s", run.run_id, run.reason, run.steps, seconds
        )
        await self._send(
            {
                "type": "run_end",
                "reason": run.reason,
                "steps": run.steps,
                "seconds": round(seconds, 3),
                "usage": {
                    "input_tokens": run.usage.input_tokens,
                    "output_tokens": run.usage.output_tokens,
                    "reasoning_tokens": run.usage.reasoning_tokens,
                },
            }
        )

    async def _approve(self, call: ToolCallEvent) -> bool | Deny:
        """Ask the page about a call and wait for its answer (approve= of the agent)."""
        assert self._run is not None
        step = self._run.steps
        call_id = call.call_id or f"step-{step}-call-{call.call_index}"
        waiting: asyncio.Future[bool | Deny] = asyncio.get_running_loop().create_future()
        self._approvals[call_id] = waiting
        arguments = call.tool_instance.model_dump(mode="json")
        await self._send(
            {
                "type": "approval",
                "call_id": call_id,
                "step": step,
                "call_index": call.call_index,
                "tool_name": call.tool_name,
                "arguments": arguments,
            }
        )
        try:
            return await waiting
        finally:
            self._approvals.pop(call_id, None)

    # -- sending -------------------------------------------------------------------------------

    async def _send(self, message: dict[str, Any]) -> None:
        await self._send_text_checked(json.dumps(message, ensure_ascii=False))

    async def _send_text_checked(self, text: str) -> None:
        if self._gone:
            return
        try:
            await self._send_text(text)
        except Exception:  # the browser is gone: the endpoint sees it and closes us
            self._gone = True
            logger.debug("a message could not be sent: the connection is closed")


def _excerpt(value: object, limit: int = 40) -> str:
    """A short quote of what the browser sent, for an error message."""
    text = value if isinstance(value, str) else json.dumps(value, default=repr)
    return repr(text if len(text) <= limit else text[:limit] + "...")
