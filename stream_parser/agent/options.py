"""The agents' options, declared once: :class:`AgentOptions` and its record, :class:`AgentConfig`.

Both agents (``FunctionCallAgent(model, tools, **options)``, ``ReActAgent``) and the
typed-function decorators (``@llm_function``, ``@llm_chat``) take the same keyword
options.  They are declared once, as the :class:`AgentOptions` ``TypedDict``, and
every signature takes them as ``**options: Unpack[AgentOptions]``: an IDE completes
them and mypy checks their names and types, as it would for keyword parameters.

At run time :func:`agent_config` turns the options given into an :class:`AgentConfig`:
a name that is not an option is refused with the closest one named (what Python's own
``TypeError`` said when each signature spelled them out), the defaults are filled in,
each value is checked, and the result is a frozen record that the loop reads.
:class:`AgentConfig`'s fields are :class:`AgentOptions`'s keys (a test keeps them the
same); the defaults live there.  The type of the ``approve`` option, :data:`Approver`,
and what it returns (:data:`Decision`, :class:`Deny`) are declared here too.
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias, cast

from pydantic import BaseModel

from ..core.config import ParserConfig
from ..core.events import ToolCallEvent
from ..errors import ConfigError
from ..prompts.templating import check_language
from .usage import UsageLimits

if sys.version_info >= (3, 11):
    from typing import TypedDict, Unpack
else:  # Python 3.10: PEP 692's Unpack for **kwargs comes from typing_extensions
    from typing_extensions import TypedDict, Unpack

__all__ = [
    "AgentConfig",
    "AgentOptions",
    "Approver",
    "Decision",
    "Defer",
    "Deny",
    "Unpack",
    "agent_config",
]


@dataclass(frozen=True, slots=True)
class Deny:
    """What an approver returns to refuse a call; the model reads ``reason``.

    Attributes:
        reason: why the call was refused, for the model.
    """

    reason: str = "the call was not approved"


@dataclass(frozen=True, slots=True)
class Defer:
    """What an approver returns to decide later: the run pauses with the call pending.

    The run ends with the reason ``"paused"`` once the reply's other calls have run;
    ``run.pending_calls`` lists the deferred calls, ``run.pause_state()`` gives a
    :class:`~stream_parser.agent.PausedRun` to keep (as JSON), and
    ``agent.resume(paused, decisions)`` goes on from there, in this process or another.
    """


Decision: TypeAlias = bool | Deny | Defer | BaseModel | ToolCallEvent | None
"""What an approver returns: ``True`` or ``None`` (run it), ``False`` or :class:`Deny`
(do not run it), :class:`Defer` (decide later: the run pauses), or an edited call: an
instance of the tool's argument model, or the :class:`~stream_parser.ToolCallEvent`
with another ``tool_instance``."""

Approver: TypeAlias = Callable[[ToolCallEvent], Decision | Awaitable[Decision]]
"""``approve=``: given each validated call before it runs (sync or async)."""


class AgentOptions(TypedDict, total=False):
    """The keyword options of both agents and of ``@llm_function`` / ``@llm_chat``.

    Every option may be left out; :class:`AgentConfig` gives its default.

    Attributes:
        system_prompt: your instructions (``ReActAgent`` adds the tools' description
            after them).  Default None.  The decorators write their own from the
            function's docstring and refuse this option.
        max_iterations: the most model requests (steps) in one run.  Default 10
            (not applied when ``usage_limits`` sets ``requests``).
        max_tool_calls: the most tool calls over the whole run; past it, calls are
            answered ``tool_call_limit`` and the run ends with ``"max_tool_calls"``.
            Default None (no limit).
        usage_limits: a budget, :class:`~stream_parser.agent.UsageLimits`: requests,
            tool calls, input, output and total tokens; a run past it ends with
            ``"usage_limit"``.  Its ``requests`` and ``tool_calls`` take the place of
            ``max_iterations`` and ``max_tool_calls`` (giving both is an error).
            Default None.
        final_answer_at_limit: at a request or tool-call limit, with calls answered
            and the model still to speak, make one more request (tools no longer
            callable) and end with its answer.  Default False.
        timings: yield a :class:`~stream_parser.agent.RequestDoneEvent` after each
            reply and time each call (``ToolResultEvent.duration_s``).  ``run.requests``
            and ``run.tool_seconds`` are kept either way.  Default False.
        concurrent_tools: run one reply's calls at once rather than in order (the
            results still go into the history in call order).  Never sent to the
            server: OpenAI's own ``parallel_tool_calls`` goes in ``model_options``.
            Default False.
        tool_timeout: seconds one call may take; past it the model is told
            ``tool_timeout``, an async tool is cancelled and a sync tool's thread is
            left to finish in the background.  Default None (no limit).
        max_result_chars: a result's text longer than this is cut, with a note
            ``[… N characters cut]``.  Default 20 000 (None: no limit).
        approve: a callable (sync or async) given each validated call before it runs;
            it returns ``True`` / ``None`` (run it), ``False`` or
            :class:`~stream_parser.agent.Deny` (do not; the model reads the reason), or
            an edited call, or :class:`~stream_parser.agent.Defer` (decide later: the
            run pauses).  ``"defer"`` defers every call that needs approval.  When some
            tools are marked ``@tool(requires_approval=True)`` only their calls are
            asked about.  Default None.
        eager_tools: start a call of a ``@tool(read_only=True)`` tool as soon as it is
            complete and valid, while the reply still streams, when every earlier call
            of the reply is read-only or finished.  Default False.
        model_options: options for every request (``temperature``, ``max_tokens``,
            ``parallel_tool_calls``, ``tool_choice``...).  Default None.
        parser_config: parser settings (thinking tags, sizes...).  Default None (the
            agent's own).
        language: the language of everything the agent writes to the model
            (observations, notes, tool instructions): ``"en"`` or ``"zh"``.
            Default ``"en"``.
        templates: your own prompt templates, by the name of the one each replaces
            (see ``docs/prompts.md``).  Default None.
        instructions_role: ``"system"`` (the system prompt is a system message) or
            ``"user"`` (it opens the first user message, for chat templates that drop
            or reject system messages).  Default ``"system"``.
        history_length: the most turns sent with each request; whole turns are left
            out, oldest first, never a reply's calls apart from their answers
            (``run.messages`` keeps all).  Default None (all).
        step_history_size: the most earlier steps a context block shows.  Default 3.
        show_time: start the user message with the current time.  Default False.
        clock: where that time comes from.  Default None (the local time now).
    """

    system_prompt: str | None
    max_iterations: int
    max_tool_calls: int | None
    usage_limits: UsageLimits | None
    final_answer_at_limit: bool
    timings: bool
    concurrent_tools: bool
    tool_timeout: float | None
    max_result_chars: int | None
    approve: Approver | Literal["defer"] | None
    eager_tools: bool
    model_options: Mapping[str, Any] | None
    parser_config: ParserConfig | None
    language: str
    templates: Mapping[str, str] | None
    instructions_role: str
    history_length: int | None
    step_history_size: int
    show_time: bool
    clock: Callable[[], datetime.datetime] | None


def _now() -> datetime.datetime:
    return datetime.datetime.now().astimezone()


@dataclass(frozen=True)
class AgentConfig:
    """The options of an agent, with their defaults, checked (see :class:`AgentOptions`).

    Build one with :func:`agent_config`; the meaning of each field is in
    :class:`AgentOptions`.  ``model_options`` is a dict and ``clock`` a callable even
    when the option was given as None.

    Raises:
        ConfigError: a value of the wrong type or out of range.
    """

    system_prompt: str | None = None
    max_iterations: int = 10
    max_tool_calls: int | None = None
    usage_limits: UsageLimits | None = None
    final_answer_at_limit: bool = False
    timings: bool = False
    concurrent_tools: bool = False
    tool_timeout: float | None = None
    max_result_chars: int | None = 20_000
    approve: Approver | Literal["defer"] | None = None
    eager_tools: bool = False
    model_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    parser_config: ParserConfig | None = None
    language: str = "en"
    templates: Mapping[str, str] | None = None
    instructions_role: str = "system"
    history_length: int | None = None
    step_history_size: int = 3
    show_time: bool = False
    clock: Callable[[], datetime.datetime] = _now

    def __post_init__(self) -> None:
        fix = object.__setattr__  # frozen: the checked values are written once, here
        if self.system_prompt is not None and not isinstance(self.system_prompt, str):
            raise ConfigError(f"system_prompt must be a string, not {self.system_prompt!r}")
        _positive_int("max_iterations", self.max_iterations)
        if self.max_tool_calls is not None:
            _positive_int("max_tool_calls", self.max_tool_calls, 0)
        limits = self.usage_limits
        if limits is not None and not isinstance(limits, UsageLimits):
            raise ConfigError(f"usage_limits must be a UsageLimits, not {limits!r}")
        if limits is not None and limits.tool_calls is not None and self.max_tool_calls is not None:
            raise ConfigError(
                "max_tool_calls and usage_limits.tool_calls are the same limit: give one"
            )
        fix(self, "final_answer_at_limit", bool(self.final_answer_at_limit))
        fix(self, "timings", bool(self.timings))
        fix(self, "concurrent_tools", bool(self.concurrent_tools))
        timeout = self.tool_timeout
        if timeout is not None and (
            isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
        ):
            raise ConfigError(f"tool_timeout must be a number of seconds > 0, got {timeout!r}")
        if self.max_result_chars is not None:
            _positive_int("max_result_chars", self.max_result_chars)
        if self.approve is not None and self.approve != "defer" and not callable(self.approve):
            raise ConfigError(f'approve must be a callable or "defer", not {self.approve!r}')
        fix(self, "eager_tools", bool(self.eager_tools))
        if self.model_options is not None and not isinstance(self.model_options, Mapping):
            raise ConfigError(f"model_options must be a mapping, not {self.model_options!r}")
        model_options = dict(self.model_options or {})
        if "concurrent_tools" in model_options:
            raise ConfigError("concurrent_tools is an agent argument, not a model option")
        fix(self, "model_options", model_options)
        if self.parser_config is not None and not isinstance(self.parser_config, ParserConfig):
            raise ConfigError(f"parser_config must be a ParserConfig, not {self.parser_config!r}")
        fix(self, "language", check_language(self.language))
        if self.templates is not None and not isinstance(self.templates, Mapping):
            raise ConfigError(f"templates must be a mapping, not {self.templates!r}")
        fix(self, "templates", dict(self.templates) if self.templates else None)
        if self.instructions_role not in ("system", "user"):
            raise ConfigError(
                f'instructions_role must be "system" or "user", got {self.instructions_role!r}'
            )
        if self.history_length is not None:
            _positive_int("history_length", self.history_length)
        _positive_int("step_history_size", self.step_history_size, 0)
        fix(self, "show_time", bool(self.show_time))
        clock: object = self.clock  # None (given as such) means the default
        if clock is None:
            fix(self, "clock", _now)
        elif not callable(clock):
            raise ConfigError(f"clock must be a callable, not {clock!r}")

    @property
    def step_limit(self) -> tuple[str, int]:
        """The most requests of a run, and the limit's name (``usage_limits`` first)."""
        limits = self.usage_limits
        if limits is not None and limits.requests is not None:
            return "requests", limits.requests
        return "max_iterations", self.max_iterations

    @property
    def call_limit(self) -> tuple[str, int | None]:
        """The most tool calls of a run (None: no limit), and the limit's name."""
        limits = self.usage_limits
        if limits is not None and limits.tool_calls is not None:
            return "tool_calls", limits.tool_calls
        return "max_tool_calls", self.max_tool_calls

    def options(self) -> AgentOptions:
        """These options as keyword arguments (to build another agent with them)."""
        options = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        limits = self.usage_limits
        if limits is not None and limits.requests is not None:
            del options["max_iterations"]  # not in force, and refused beside it
        return cast("AgentOptions", options)


OPTION_NAMES: frozenset[str] = frozenset(AgentOptions.__annotations__)


def agent_config(owner: str, options: Mapping[str, Any]) -> AgentConfig:
    """Check ``options`` (keyword options given to ``owner``) and make their record.

    Args:
        owner: who was given them, for the error messages (``"FunctionCallAgent"``).
        options: the keyword options.

    Raises:
        ConfigError: a name that is not an option (the closest one is named), or a bad
            value.

    Example:
        >>> agent_config("FunctionCallAgent", {"max_iterations": 3}).max_iterations
        3
        >>> agent_config("FunctionCallAgent", {"max_iteration": 3})  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        stream_parser.errors.ConfigError: FunctionCallAgent got an unknown option 'max_iteration'...
    """
    unknown = [name for name in options if name not in OPTION_NAMES]
    if unknown:
        name = unknown[0]
        close = difflib.get_close_matches(name, sorted(OPTION_NAMES), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f" (the options: {_listing()})"
        raise ConfigError(f"{owner} got an unknown option {name!r}{hint}")
    limits = options.get("usage_limits")
    if (
        isinstance(limits, UsageLimits)
        and limits.requests is not None
        and "max_iterations" in options
    ):
        raise ConfigError(
            f"{owner}: max_iterations and usage_limits.requests are the same limit: give one"
        )
    return AgentConfig(**options)


def _listing() -> str:
    return ", ".join(sorted(OPTION_NAMES))


def _positive_int(name: str, value: object, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{name} must be an int, not {type(value).__name__}")
    if value < minimum:
        raise ConfigError(f"{name} must be >= {minimum}, got {value}")
    return value
