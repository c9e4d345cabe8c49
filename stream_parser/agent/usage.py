"""What a run uses, the budgets it may use, and the record of each request.

Theory of operation.  A run counts what it uses in one :class:`Usage`: the requests it
made and the tokens the server reported for them (0 when it reported none).  A budget,
:class:`UsageLimits`, caps any of these counts and the run's tool calls; the loop checks
it before each request (the requests made, the tokens used so far) and after each reply
(the tokens, with that reply's usage added).  The limit that ended a run, or that a last
answer was asked at, is a :class:`LimitHit`.  Each request leaves a
:class:`RequestRecord` (when it started, how long until its first token and in all, its
usage), whether or not the ``timings`` option turns it into events.

Nothing here imports the loop: the events, the options and the run handle all read
these records.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from ..errors import ConfigError

__all__ = ["LimitHit", "RequestRecord", "Usage", "UsageLimits"]


# --- usage ----------------------------------------------------------------------------------


@dataclass(slots=True)
class Usage:
    """Requests made and tokens used, summed over a run's steps (0 when none are reported).

    Attributes:
        input_tokens: prompt tokens.
        output_tokens: completion tokens (reasoning included, as servers count them).
        reasoning_tokens: the reasoning part of the completion tokens.
        requests: model requests made.
        total_tokens: the server's total (input and output tokens when it gives none).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    requests: int = 0
    total_tokens: int = 0

    def add(self, report: object) -> None:
        """Add one usage report (OpenAI's ``usage`` dict or object)."""
        input_tokens = _count(report, "prompt_tokens", "input_tokens")
        output_tokens = _count(report, "completion_tokens", "output_tokens")
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        details = _get(report, "completion_tokens_details") or _get(report, "output_tokens_details")
        self.reasoning_tokens += _count(details, "reasoning_tokens")
        self.total_tokens += _count(report, "total_tokens") or input_tokens + output_tokens

    def add_usage(self, other: Usage) -> None:
        """Add another :class:`Usage` (the usage of another run)."""
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.reasoning_tokens += other.reasoning_tokens
        self.requests += other.requests
        self.total_tokens += other.total_tokens


def _get(report: object, key: str) -> Any:
    if isinstance(report, Mapping):
        return report.get(key)
    return getattr(report, key, None)


def _count(report: object, *keys: str) -> int:
    for key in keys:
        value = _get(report, key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return 0


# --- budgets --------------------------------------------------------------------------------

#: The token fields of :class:`UsageLimits`, each a field of :class:`Usage` too.
TOKEN_LIMITS = ("input_tokens", "output_tokens", "total_tokens")


@dataclass(frozen=True, slots=True)
class UsageLimits:
    """A run's budget (the ``usage_limits`` option); every limit is None (none) by default.

    Reaching ``requests`` or ``tool_calls``, or crossing a token limit, ends the run with
    the reason ``"usage_limit"`` (``run.limit`` says which).  ``requests`` takes the
    place of ``max_iterations`` and ``tool_calls`` that of ``max_tool_calls`` when given.
    Token limits hold only when the server reports usage (the run says so with a
    ``usage_unreported`` notice when it does not).

    Attributes:
        requests: the most model requests in a run.
        tool_calls: the most tool calls in a run (0: none at all); calls past it are
            answered ``tool_call_limit`` without running.
        input_tokens: the most prompt tokens, summed over the requests.
        output_tokens: the most completion tokens, summed over the requests.
        total_tokens: the most tokens in all.

    Raises:
        ConfigError: a limit that is not an integer of at least 1 (0 for
            ``tool_calls``).

    Example:
        >>> UsageLimits(requests=3, output_tokens=2000).token_limits
        {'output_tokens': 2000}
        >>> UsageLimits(requests=0)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        stream_parser.errors.ConfigError: UsageLimits.requests must be an integer >= 1, got 0
    """

    requests: int | None = None
    tool_calls: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None

    def __post_init__(self) -> None:
        for field in fields(self):
            value = getattr(self, field.name)
            if value is None:
                continue
            minimum = 0 if field.name == "tool_calls" else 1
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ConfigError(
                    f"UsageLimits.{field.name} must be an integer >= {minimum}, got {value!r}"
                )

    @property
    def token_limits(self) -> dict[str, int]:
        """The token limits that are set, by name."""
        limits = {name: getattr(self, name) for name in TOKEN_LIMITS}
        return {name: limit for name, limit in limits.items() if limit is not None}


@dataclass(frozen=True, slots=True)
class LimitHit:
    """The limit a run ended on (or was given a last answer at).

    Attributes:
        name: the limit: ``"max_iterations"``, ``"max_tool_calls"``, or a field of
            :class:`UsageLimits` (``"requests"``, ``"tool_calls"``, ``"input_tokens"``,
            ``"output_tokens"``, ``"total_tokens"``).
        limit: its value.
        used: what the run had used of it when it ended (past the limit for a token
            limit a reply crossed).
    """

    name: str
    limit: int
    used: int


@dataclass(frozen=True, slots=True)
class RequestRecord:
    """One model request of a run, timed (``run.requests``; the ``request_done`` event).

    Attributes:
        step: the step that made the request.
        started_at: when it was sent, in seconds since the epoch (``time.time()``).
        first_token_s: seconds from sending it to the first text, reasoning or call
            fragment of the reply; None when none came.
        duration_s: seconds from sending it to the reply's end.
        usage: the tokens the server reported for it (``requests`` is 1).
        usage_reported: whether the server reported usage for it (without a report,
            ``usage`` holds no tokens).
    """

    step: int
    started_at: float
    first_token_s: float | None
    duration_s: float
    usage: Usage
    usage_reported: bool
