"""A run paused for approval: what it holds, its JSON form, and the decisions that resume it.

Theory of operation.  When an approver defers a call (``Defer()``, or
``approve="defer"``), the loop runs the reply's other calls and stops with the reason
``"paused"``.  Nothing waits in memory: the run's messages end with the assistant
message that holds the calls, and a :class:`PausedRun` keeps the rest (the calls
waiting for a decision, the answers already made, with a placeholder where each
pending call's answer goes, the step and call counts and the usage).  Its JSON form is
versioned, so that another process, later, can read it back and resume:
``agent.resume(paused, decisions)`` checks the decisions (one per pending call, by
``call_id``) before anything runs, carries each out, fills the placeholders, appends
the answers in call order and goes on with the next request.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Final, cast

from pydantic import BaseModel

from ..errors import ConfigError
from ..llm.base import Message
from ..tools import ToolResult
from .options import Deny
from .usage import Usage

__all__ = ["PAUSE_VERSION", "PausedRun", "PendingCall", "check_decisions"]

PAUSE_VERSION: Final = 1
"""The version of :meth:`PausedRun.to_json`'s document; another version is refused."""

_KIND: Final = "stream_parser.paused_run"


@dataclass(frozen=True, slots=True)
class PendingCall:
    """A call waiting for a decision at a pause.

    Attributes:
        call_id: the provider's id of a native call, or the one the agent gave a call
            written in text; ``decisions`` are keyed by it.
        name: the tool's name.
        arguments: the validated arguments, as JSON values.
        call_index: the call's index among the reply's calls (the parser's).
        native: whether it is a native call (answered by a ``tool`` message) or written
            in text (answered in the observation message).
    """

    call_id: str
    name: str
    arguments: dict[str, Any]
    call_index: int = 0
    native: bool = True

    @property
    def placeholder(self) -> str:
        """Where its answer goes in the answers kept at the pause."""
        return f"\x00pending:{self.call_id}\x00"


@dataclass(slots=True)
class PausedRun:
    """What a paused run keeps, to resume it here or in another process.

    Attributes:
        messages: the conversation, ending with the assistant message of the calls.
        pending: the calls waiting for a decision, in call order.
        answers: the messages that answer that reply's calls (``tool`` messages, the
            observation message), made for the calls that ran, with a placeholder
            where each pending call's answer goes, and where its images go (a result
            given by hand may bring images, as a tool's result does).
        results: the results already made, as ``{"name", "text", "is_error",
            "error_type"}``, in call order (for the record; the model reads ``answers``).
            A call refused there at the run's call limit (``tool_call_limit``) makes the
            resumed run end at that limit once the pending calls are answered.
        step: the step of the reply that holds the calls.
        tool_calls: the tool calls counted so far: those run or refused, and the
            pending ones, each of which keeps its place under the run's call limit.
        usage: the requests made and the tokens used so far.
        tool_seconds: seconds the tool calls took so far.
        output: the visible text of the reply that holds the calls (the run's output
            if it ends before another reply).
    """

    messages: list[Message]
    pending: list[PendingCall]
    answers: list[Message] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    step: int = 0
    tool_calls: int = 0
    usage: Usage = field(default_factory=Usage)
    tool_seconds: float = 0.0
    output: str = ""

    def to_json(self) -> str:
        """The versioned JSON document :meth:`from_json` reads back."""
        document = {
            "kind": _KIND,
            "version": PAUSE_VERSION,
            "messages": self.messages,
            "pending": [
                {
                    "call_id": call.call_id,
                    "name": call.name,
                    "arguments": call.arguments,
                    "call_index": call.call_index,
                    "native": call.native,
                }
                for call in self.pending
            ],
            "answers": self.answers,
            "results": self.results,
            "step": self.step,
            "tool_calls": self.tool_calls,
            "usage": {item.name: getattr(self.usage, item.name) for item in fields(Usage)},
            "tool_seconds": self.tool_seconds,
            "output": self.output,
        }
        return json.dumps(document, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str | bytes) -> PausedRun:
        """Read a document :meth:`to_json` wrote.

        Raises:
            ConfigError: not JSON (a truncated file), not such a document, another
                version, or a field missing or of the wrong type, or a pending call
                whose placeholder is missing from the answers (an edited call id).
        """
        try:
            document = json.loads(text)
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"a paused run's JSON cannot be read (damaged?): {exc}") from None
        if not isinstance(document, dict) or document.get("kind") != _KIND:
            raise ConfigError(
                "this JSON is not a paused run (no 'kind': 'stream_parser.paused_run')"
            )
        version = document.get("version")
        if version != PAUSE_VERSION:
            raise ConfigError(
                f"a paused run of version {version!r} cannot be read: this version of "
                f"stream_parser reads version {PAUSE_VERSION}"
            )
        try:
            pending = [
                PendingCall(
                    call_id=_typed(call, "call_id", str),
                    name=_typed(call, "name", str),
                    arguments=_typed(call, "arguments", dict),
                    call_index=_typed(call, "call_index", int),
                    native=_typed(call, "native", bool),
                )
                for call in _typed(document, "pending", list)
            ]
            usage = _typed(document, "usage", dict)
            paused = cls(
                messages=_messages(_typed(document, "messages", list)),
                pending=pending,
                answers=_messages(_typed(document, "answers", list)),
                results=_typed(document, "results", list),
                step=_typed(document, "step", int),
                tool_calls=_typed(document, "tool_calls", int),
                usage=Usage(**{item.name: int(usage.get(item.name, 0)) for item in fields(Usage)}),
                tool_seconds=float(_typed(document, "tool_seconds", (int, float))),
                output=_typed(document, "output", str),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(f"a paused run's JSON is damaged: {exc}") from None
        paused.check()
        return paused

    def check(self) -> None:
        """Check that the pending calls and the kept answers belong together.

        Raises:
            ConfigError: no pending call, an id given twice, or a pending call whose
                placeholder is not in the answers (an id edited by hand).
        """
        if not self.pending:
            raise ConfigError("a paused run has at least one pending call; this one has none")
        ids = [call.call_id for call in self.pending]
        if len(set(ids)) != len(ids):
            raise ConfigError(f"a paused run's pending calls repeat an id: {ids}")
        kept = json.dumps(self.answers)
        for call in self.pending:
            if json.dumps(call.placeholder)[1:-1] not in kept:
                raise ConfigError(
                    f"pending call {call.call_id!r} ({call.name}) has no place among the "
                    "answers kept at the pause: was its id edited?"
                )


def _typed(document: Mapping[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
    if key not in document:
        raise KeyError(f"no {key!r}")
    value = document[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise TypeError(f"{key!r} is {type(value).__name__}")
    return value


def _messages(items: Sequence[Any]) -> list[Message]:
    if not all(isinstance(item, dict) and "role" in item for item in items):
        raise TypeError("a message is not an object with a role")
    return cast("list[Message]", list(items))


def check_decisions(pending: Sequence[PendingCall], decisions: object) -> dict[str, object]:
    """The decisions, checked against the pending calls before anything runs.

    Raises:
        ConfigError: ``decisions`` not a mapping, a pending call without a decision, an
            id that is not pending, or a decision of another kind than ``True``,
            ``False``, ``Deny``, a result (``str`` / ``ToolResult``) or edited
            arguments (an argument model instance or a mapping).
    """
    if not isinstance(decisions, Mapping):
        raise ConfigError(f"decisions map each pending call id to a decision, not {decisions!r}")
    ids = [call.call_id for call in pending]
    unknown = [key for key in decisions if key not in ids]
    if unknown:
        raise ConfigError(
            f"decision(s) for unknown call id(s) {unknown}; the pending calls are {ids}"
        )
    missing = [f"{call.call_id} ({call.name})" for call in pending if call.call_id not in decisions]
    if missing:
        raise ConfigError(f"no decision for pending call(s): {', '.join(missing)}")
    for key, decision in decisions.items():
        if not (isinstance(decision, (bool, Deny, str, ToolResult, BaseModel, Mapping))):
            raise ConfigError(
                f"the decision for {key!r} must be True, False, Deny(reason), a result "
                f"(str or ToolResult) or edited arguments, not {decision!r}"
            )
    return dict(decisions)
