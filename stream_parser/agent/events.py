"""The agent's own events, yielded between the parser's events of each reply.

They derive from :class:`~stream_parser.core.events.Event`, the base of every event of
the library, and carry a ``kind`` like the parser's events, so that one ``kind`` test (or
one ``match``) reads a whole run, and :func:`stream_parser.event_to_json` encodes them
like any other event.  Unlike the parse events they are not about a place in the text:
their ``span`` is always None (a run's replies each count offsets from their own start).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from ..core.events import Event, ParseEvent
from ..llm.base import Message
from ..tools import ToolResult

__all__ = [
    "AgentDoneEvent",
    "AgentEvent",
    "StepStartEvent",
    "StopReason",
    "ToolResultEvent",
]

StopReason: TypeAlias = Literal[
    "done", "max_iterations", "max_tool_calls", "length", "model_error", "cancelled"
]
"""Why a run ended:

* ``"done"``: a reply finished with no pending call and nothing to correct: the answer;
* ``"max_iterations"``: the step limit was reached (the last reply's calls were run);
* ``"max_tool_calls"``: the run's limit on tool calls was reached;
* ``"length"``: a reply without calls was cut by the model's length limit;
* ``"model_error"``: the model failed, before or during a reply (the
  :class:`~stream_parser.llm.ModelError` is raised after the history is made consistent);
* ``"cancelled"``: the run was cancelled (``CancelledError`` propagates).
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
        span: always None (not about a place in the text).
    """

    tool_name: str
    result: ToolResult
    call_index: int
    step: int
    call_id: str | None = None
    span: None = None
    kind: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentDoneEvent(Event):
    """The run ended; always the last event of a run that was not interrupted.

    Attributes:
        reason: why it ended, see :data:`StopReason`.
        messages: the whole conversation, system prompt included (a copy).
        output: the visible text of the last reply (thinking and tool markup left out).
        steps: how many steps ran.
        span: always None (not about a place in the text).
    """

    reason: StopReason
    messages: list[Message]
    output: str
    steps: int
    span: None = None
    kind: Literal["agent_done"] = "agent_done"


AgentEvent: TypeAlias = ParseEvent | StepStartEvent | ToolResultEvent | AgentDoneEvent
"""What an agent run yields: the parser's events and the agent's own."""
