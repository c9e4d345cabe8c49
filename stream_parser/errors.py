"""Exceptions raised by stream_parser.

Model output never raises: whatever a model or a server sends becomes events
(:class:`~stream_parser.core.events.ParseErrorEvent` for what could not be parsed),
with the raw text still delivered.  The exceptions below are for *programmer*
errors, that is mistakes in how the library is called or configured::

    StreamParserError                 base class of everything raised here
    ├── ConfigError (ValueError)      bad ParserConfig, registry, plugin or tool definition
    ├── ParserClosedError (RuntimeError)
    │                                 feed() after close()
    ├── StrictModeError               a parse error while ParserConfig(strict=True)
    ├── ToolError                     a tool definition or call is misused by the caller
    ├── LLMFunctionError              a typed LLM function got no valid answer
    │   ├── AnswerValidationError (ValueError)
    │   │                             the answers did not fit the return type, re-asks spent
    │   └── RunLimitError             the run ended on a limit before an answer
    └── InternalError (AssertionError)
                                      a bug in stream_parser itself; please report it

Catch ``StreamParserError`` to handle all of them.  The two failures of a typed function
(``@llm_function``) are not programmer errors but the honest end of a call whose model never
gave a usable answer: the call cannot return a value of its declared type, so it raises, and
the exception carries what happened (the answer, the errors, the conversation).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "AnswerValidationError",
    "ConfigError",
    "InternalError",
    "LLMFunctionError",
    "ParserClosedError",
    "RunLimitError",
    "StreamParserError",
    "StrictModeError",
    "ToolError",
]


class StreamParserError(Exception):
    """Base class of every exception stream_parser raises."""


class ConfigError(StreamParserError, ValueError):
    """A configuration, registry, plugin or tool definition is invalid."""


class ParserClosedError(StreamParserError, RuntimeError):
    """``feed()`` was called on a parser that was already closed."""


class StrictModeError(StreamParserError):
    """Raised instead of emitting a parse error when ``ParserConfig(strict=True)``.

    Attributes:
        event: the :class:`~stream_parser.core.events.ParseErrorEvent` that would have
            been emitted.  (Typed loosely because this module sits below the events:
            nothing in ``errors`` imports the rest of the package.)
    """

    def __init__(self, event: Any) -> None:
        super().__init__(f"{event.error_type}: {event.message}")
        self.event = event


class ToolError(StreamParserError):
    """A tool is defined or called in a way that cannot work (a programmer error)."""


class LLMFunctionError(StreamParserError):
    """A typed LLM function (``@llm_function``) could not produce a value of its type."""


class AnswerValidationError(LLMFunctionError, ValueError):
    """Every answer failed to fit the return type, and the re-asks are spent.

    It is also a ``ValueError`` (a value of the return type could not be made), so code
    that catches ``ValueError`` around a typed call catches it too.

    Attributes:
        answer: the last answer, exactly as the model wrote it.
        errors: what was wrong with it: Pydantic-shaped error dicts (``type``, ``loc``,
            ``msg``, ``input``), JSON-safe.
        messages: the whole conversation, re-asks included (OpenAI chat format).
    """

    def __init__(
        self, message: str, *, answer: str, errors: Sequence[Any], messages: Sequence[Any]
    ) -> None:
        super().__init__(message)
        self.answer = answer
        self.errors: tuple[Any, ...] = tuple(errors)
        self.messages: list[Any] = list(messages)


class RunLimitError(LLMFunctionError):
    """The tool loop ended on a limit (steps, tool calls, the reply's length) without an answer.

    Attributes:
        run: the :class:`~stream_parser.agent.AgentRun` that ended (its ``reason``,
            ``messages``, ``usage``, ``events``).  Typed loosely: nothing in ``errors``
            imports the layers above.
        reason: why it ended: ``"max_iterations"``, ``"max_tool_calls"``,
            ``"usage_limit"`` or ``"length"``.
        limit: the limit it ended on (a :class:`~stream_parser.agent.LimitHit`: its
            ``name``, ``limit`` and ``used``), None for ``"length"``.
    """

    def __init__(self, message: str, *, run: Any, reason: str, limit: Any = None) -> None:
        super().__init__(message)
        self.run = run
        self.reason = reason
        self.limit = limit


class InternalError(StreamParserError, AssertionError):
    """A bug in stream_parser: an impossible state was reached."""
