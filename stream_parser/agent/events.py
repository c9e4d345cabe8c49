"""The agent's own events, yielded between the parser's events of each reply.

They derive from :class:`~stream_parser.core.events.Event`, the base of every event of
the library, and carry a ``kind`` like the parser's events, so that one ``kind`` test (or
one ``match``) reads a whole run, and :func:`stream_parser.event_to_json` encodes them
like any other event.  Unlike the parse events they are not about a place in the text:
their ``span`` is always None (a run's replies each count offsets from their own start).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast, get_args

from ..core.events import Event, ParseEvent
from ..llm.base import Message
from ..tools import ToolResult
from .usage import LimitHit, Usage

__all__ = [
    "AgentDoneEvent",
    "AgentEvent",
    "RequestDoneEvent",
    "StepStartEvent",
    "StopReason",
    "ToolResultEvent",
]

StopReason: TypeAlias = Literal[
    "done",
    "max_iterations",
    "max_tool_calls",
    "usage_limit",
    "length",
    "model_error",
    "cancelled",
    "paused",
]
"""Why a run ended:

* ``"done"``: a reply finished with no pending call and nothing to correct: the answer;
* ``"max_iterations"``: the step limit was reached (the last reply's calls were run);
* ``"max_tool_calls"``: the run's limit on tool calls was reached;
* ``"usage_limit"``: a limit of the run's :class:`~stream_parser.agent.UsageLimits` was
  reached (requests, tool calls) or crossed (tokens); ``run.limit`` names it;
* ``"length"``: a reply without calls was cut by the model's length limit;
* ``"model_error"``: the model failed, before or during a reply (the
  :class:`~stream_parser.llm.ModelError` is raised after the history is made consistent);
* ``"cancelled"``: the run was cancelled (``CancelledError`` propagates);
* ``"paused"``: an approver deferred a call (:class:`~stream_parser.agent.Defer`, or
  ``approve="defer"``): the reply's other calls have run, ``run.pending_calls`` waits
  for decisions, and ``agent.resume(run.pause_state(), decisions)`` goes on.
"""


@dataclass(frozen=True, slots=True, kw_only=True)
class StepStartEvent(Event):
    """A step begins: the conversation is sent to the model.

    The parser events of the reply follow, as the parser made them: every event up to
    the next ``StepStartEvent`` belongs to this step, and their spans and ``call_index``
    count from the start of this reply.  (The JSON-lines and SSE encoders write this
    step on each of them.)

    Attributes:
        step: the step number, from 1.
        span: always None (not about a place in the text).
    """

    step: int
    span: None = None
    kind: Literal["step_start"] = "step_start"

    @classmethod
    def _from_json_object(cls, obj: dict[str, Any]) -> Event:
        return cast(Event, _validator("events").validate_python(obj))


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResultEvent(Event):
    """A tool call of the reply has run.

    Attributes:
        tool_name: the tool called.
        result: what the tool gave back (``result.is_error`` for a failure, which is an
            observation for the model, not an exception).
        call_index: the call's ``call_index`` in its reply (see
            :class:`~stream_parser.core.events.ToolCallEvent`).
        step: the step whose reply made the call.
        call_id: the provider's call id for native calls, else None.
        duration_s: seconds the call took (approval included), with the ``timings``
            option on; None when it is off or the call did not run.
        span: always None (not about a place in the text).
    """

    tool_name: str
    result: ToolResult
    call_index: int
    step: int
    call_id: str | None = None
    duration_s: float | None = None
    span: None = None
    kind: Literal["tool_result"] = "tool_result"

    @classmethod
    def _from_json_object(cls, obj: dict[str, Any]) -> Event:
        return cast(Event, _validator("events").validate_python(obj))


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentDoneEvent(Event):
    """The run ended; always the last event of a run that was not interrupted.

    Attributes:
        reason: why it ended, see :data:`StopReason`.
        messages: the whole conversation, system prompt included (a copy).
        output: the visible text of the last reply (thinking and tool markup left out).
        steps: how many steps ran.
        limit: the limit the run ended on, or (reason ``"done"``) the limit at which a
            last answer was asked for (``final_answer_at_limit``), or (reason
            ``"paused"``) the call limit a call of the paused reply reached, at which the
            resumed run ends; None otherwise.
        span: always None (not about a place in the text).
    """

    reason: StopReason
    messages: list[Message]
    output: str
    steps: int
    limit: LimitHit | None = None
    span: None = None
    kind: Literal["agent_done"] = "agent_done"

    @classmethod
    def _from_json_object(cls, obj: dict[str, Any]) -> Event:
        reason: Any = obj.get("reason")
        output, steps = obj.get("output"), obj.get("steps")
        if (
            reason not in get_args(StopReason)
            or not isinstance(output, str)
            or not isinstance(steps, int)
            or isinstance(steps, bool)
            or obj.get("span") is not None
        ):
            raise ValueError("not a valid agent_done event")
        # The messages are the OpenAI chat format's TypedDicts, which Pydantic cannot
        # validate on every supported Python: they are checked as JSON objects instead.
        messages: Any = _validator("messages").validate_python(obj.get("messages"))
        limit = obj.get("limit")
        return AgentDoneEvent(
            reason=reason,
            messages=messages,
            output=output,
            steps=steps,
            limit=None if limit is None else _validator("limit").validate_python(limit),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestDoneEvent(Event):
    """A request's reply has ended: its timings and usage (with the ``timings`` option).

    It follows the reply's last parse event (notices included), before its calls run.
    The same record is kept in ``run.requests`` whether the option is on or off.

    Attributes:
        step: the step that made the request.
        started_at: when it was sent, in seconds since the epoch.
        first_token_s: seconds until the first text, reasoning or call fragment; None
            when none came.
        duration_s: seconds until the reply's end.
        usage: the tokens the server reported for this request.
        usage_reported: False when the server sent no usage (``usage`` is then empty).
        span: always None (not about a place in the text).
    """

    step: int
    started_at: float
    first_token_s: float | None
    duration_s: float
    usage: Usage
    usage_reported: bool
    span: None = None
    kind: Literal["request_done"] = "request_done"

    @classmethod
    def _from_json_object(cls, obj: dict[str, Any]) -> Event:
        return cast(Event, _validator("events").validate_python(obj))


_VALIDATORS: dict[str, Any] = {}
"""The validators of the agent events' JSON forms, made on first use."""


def _validator(name: str) -> Any:
    """The Pydantic validator ``name``: ``events``, ``messages`` or ``limit``.

    ``events`` validates the step and result events.  ToolResult holds the tool's
    exception, a Python object that Pydantic only accepts with ``arbitrary_types_allowed``
    (it is never in the JSON, so it comes back as its default, None), which a validator
    of one dataclass cannot be given: one of the union of the three can.
    """
    validator = _VALIDATORS.get(name)
    if validator is None:
        from pydantic import ConfigDict, TypeAdapter

        if name == "events":
            validator = TypeAdapter(
                StepStartEvent | RequestDoneEvent | ToolResultEvent,
                config=ConfigDict(arbitrary_types_allowed=True),
            )
        elif name == "messages":
            validator = TypeAdapter(list[dict[str, Any]])
        else:
            validator = TypeAdapter(LimitHit)
        _VALIDATORS[name] = validator
    return validator


AgentEvent: TypeAlias = (
    ParseEvent | StepStartEvent | RequestDoneEvent | ToolResultEvent | AgentDoneEvent
)
"""What an agent run yields: the parser's events and the agent's own."""
