"""The limits a run ends at: which one was reached, and the reason the run ends with.

Theory of operation.  The loop asks these questions of a run's :class:`Usage` and of a
reply's results, around each request: before it, whether a token limit is already
reached, then whether the requests made are at their limit
(:func:`_limit_before_request`); after the reply, whether its usage crossed a token
limit (:func:`_token_limit`); after its calls, whether one was refused at the call
limit (:func:`_call_limit_hit`).  The limit found becomes the run's reason to stop
(:func:`_reason_of`).  A server that reports no usage cannot be held to a token limit:
the run says so once, with a notice (:func:`_usage_unreported`), and goes on under its
other limits.  An agent's repr shows the limits in force (:func:`_limits_repr`).

Pure functions of their arguments: nothing here holds state or imports the loop.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Final

from ..core.events import ErrorType, NoticeEvent, TokenUsageEvent
from .events import AgentEvent, StepStartEvent, StopReason
from .options import AgentConfig
from .usage import LimitHit, Usage

__all__ = ["USAGE_LIMIT"]


#: The error type of a call not run because a reply crossed a token limit of the budget.
USAGE_LIMIT: Final = "usage_limit"

# The reason a run ends with at each limit.
_REASONS: Final[Mapping[str, StopReason]] = {
    "max_iterations": "max_iterations",
    "max_tool_calls": "max_tool_calls",
}


def _call_limit_hit(error_types: Iterable[str | None]) -> bool:
    """Whether a call of a reply was refused at the run's call limit."""
    return ErrorType.TOOL_CALL_LIMIT.value in error_types


def _reason_of(hit: LimitHit) -> StopReason:
    return _REASONS.get(hit.name, "usage_limit")


def _token_limit(usage: Usage, limits: Mapping[str, int], *, reached: bool) -> LimitHit | None:
    """The first token limit reached (``reached``) or crossed (else) by ``usage``."""
    for name, limit in limits.items():
        used: int = getattr(usage, name)
        if used > limit or (reached and used == limit):
            return LimitHit(name, limit, used)
    return None


def _limit_before_request(
    config: AgentConfig,
    usage: Usage,
    token_limits: Mapping[str, int],
    last_answer: LimitHit | None,
) -> tuple[LimitHit | None, LimitHit | None]:
    """Before each request: the limit that ends the run here, and a last answer's.

    The tokens used so far are checked first (a token limit already reached would be
    crossed by any request; no last answer is asked for past it), then the requests
    made.

    Returns:
        The limit the run ends at before this request (None: the request is made), and
        the limit at which this request asks for a last answer (None: none).
    """
    hit = _token_limit(usage, token_limits, reached=True)
    step_name, step_limit = config.step_limit
    if hit is None and last_answer is None and usage.requests >= step_limit:
        hit = LimitHit(step_name, step_limit, usage.requests)
        if config.final_answer_at_limit:
            last_answer, hit = hit, None
    return hit, last_answer


def _reply_end(events: Sequence[AgentEvent]) -> int:
    """Where the latest reply ends: the end of its last parse event's span (0 if none).

    Looked up in ``run.events`` once, when a notice needs it, rather than noted at every
    event.
    """
    for event in reversed(events):
        if isinstance(event, StepStartEvent):
            break
        if event.span is not None and not isinstance(event, TokenUsageEvent):
            return event.span[1]
    return 0


def _usage_unreported(limits: Mapping[str, int], offset: int) -> NoticeEvent:
    """The notice that the server reports no usage, so the token limits cannot hold."""
    named = ", ".join(f"{name}={limit}" for name, limit in limits.items())
    message = (
        f"the server reported no token usage for this reply, so the token limits "
        f"({named}) cannot be enforced; the other limits still hold"
    )
    return NoticeEvent(code="usage_unreported", message=message, span=(offset, offset))


def _limits_repr(config: AgentConfig) -> str:
    """The limits that govern a run, for an agent's repr.

    ``max_iterations`` unless ``usage_limits`` sets ``requests`` in its place,
    ``max_tool_calls`` when set, and the budget with the limits it sets.
    """
    limits = config.usage_limits
    shown = []
    if limits is None or limits.requests is None:
        shown.append(f"max_iterations={config.max_iterations}")
    if config.max_tool_calls is not None:
        shown.append(f"max_tool_calls={config.max_tool_calls}")
    if limits is not None:
        budget = ", ".join(
            f"{field.name}={getattr(limits, field.name)}"
            for field in dataclasses.fields(limits)
            if getattr(limits, field.name) is not None
        )
        shown.append(f"usage_limits=UsageLimits({budget})")
    return ", ".join(shown)
