"""Agent loops above the core: a model, tools, and the parser between them.

Theory of operation.  An agent repeats one *step*: send the conversation to the model,
stream the reply through a :class:`~stream_parser.StreamToolParser` (yielding every event
as it arrives), run the validated calls, and append the reply and the answers to its
calls to the history.  The loop is written once, one concern a module: the steps
(``loop.py``), the run handle (``run.py``), what a run uses, its budget and the record
of each request (``usage.py``), a reply and the history it
writes (``reply.py``), running the calls (``runner.py``), the conversation a run starts
from (``history.py``), and the background event loop of the sync forms (``_sync.py``).
The two agents differ only in how the tools reach the model:

* :class:`FunctionCallAgent` (``function_call.py``): native function calling, the tools
  sent as OpenAI ``tools``, the history in the exact OpenAI format;
* :class:`ReActAgent` (``react.py``): the text protocol, the tools described in the
  system prompt in the dialect the model speaks (``"xml"``, ``"hermes"``,
  ``"qwen3_coder"``), the observations sent back as a user message.

``agent.run(...)`` returns an :class:`AgentRun`, both awaitable (the finished run:
``output``, ``messages``, ``usage``, ``steps``, ``reason``) and async-iterable (the
events).  The agent's own events (``events.py``) are yielded between the parser's:
:class:`StepStartEvent`, :class:`ToolResultEvent`, :class:`AgentDoneEvent`, and with
the ``timings`` option :class:`RequestDoneEvent`
(:data:`AgentEvent` is the union of all of them and the parser's events).  They share
the parser's event base and are encoded like them; their ``span`` is None.  The parse
events come out as the parser made them: each belongs to the step of the
:class:`StepStartEvent` before it.  Logging goes to the ``stream_parser.agent`` logger.

Both agents and the typed-function decorators take the same keyword options, declared
once as :class:`AgentOptions` (``options.py``) and checked into an :class:`AgentConfig`.

See ``docs/agent.md`` and ``docs/agents-tutorial.md``.
"""

from __future__ import annotations

from .events import (
    AgentDoneEvent,
    AgentEvent,
    RequestDoneEvent,
    StepStartEvent,
    StopReason,
    ToolResultEvent,
)
from .function_call import FunctionCallAgent
from .history import ContextStep, trim_history
from .options import AgentConfig, AgentOptions, Approver, Defer, Deny
from .pause import PausedRun, PendingCall
from .react import ReActAgent
from .run import AgentRun
from .usage import LimitHit, RequestRecord, Usage, UsageLimits

__all__ = [
    "AgentConfig",
    "AgentDoneEvent",
    "AgentEvent",
    "AgentOptions",
    "AgentRun",
    "Approver",
    "ContextStep",
    "Defer",
    "Deny",
    "FunctionCallAgent",
    "LimitHit",
    "PausedRun",
    "PendingCall",
    "ReActAgent",
    "RequestDoneEvent",
    "RequestRecord",
    "StepStartEvent",
    "trim_history",
    "StopReason",
    "ToolResultEvent",
    "Usage",
    "UsageLimits",
]
