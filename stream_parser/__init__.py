"""stream_parser: turn a live LLM token stream into typed events as it arrives.

Text, thinking and tool calls (validated Pydantic models) come out of
:class:`StreamToolParser`, a linear-time, lossless, sans-IO streaming parser.  See the
README and ``docs/`` for the guarantees and the event vocabulary.

Theory of operation.  The package is built in floors, each importing only from the
floors below it: ``errors``, ``schema`` (type coercion and descriptions), ``core`` (the
parser and its events), ``prompts`` (every sentence said to a model), ``dialects`` (tool
call formats), ``tools`` (functions a model can call), ``llm`` (chat models), ``agent``
(agent loops), ``encoders`` (events to JSON), ``testing`` (models without a network) and
the ``stream-parser`` command.  This module is the public face: the names a user
reaches for, from every floor.  Each subpackage lists its own, fuller ``__all__``.
"""

from __future__ import annotations

import importlib as _importlib
import logging as _logging
import typing as _typing

from .agent import (
    AgentDoneEvent,
    AgentRun,
    FunctionCallAgent,
    ReActAgent,
    StepStartEvent,
    ToolResultEvent,
)
from .core.chunks import ChatDelta, ToolCallDelta
from .core.config import ParserConfig
from .core.events import (
    CodeBlockDeltaEvent,
    CodeBlockEvent,
    ErrorType,
    Event,
    FramingEvent,
    ParseErrorEvent,
    ParseEvent,
    TextOutputEvent,
    ThinkingDeltaEvent,
    ThinkingEvent,
    TokenUsageEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolParamDeltaEvent,
)
from .core.parser import StreamToolParser, aparse_stream, parse_stream
from .core.plugins import FencedCodePlugin, ParsePlugin, PluginBlock, PluginContext
from .decorators import LLMCallResult, llm_chat, llm_function
from .encoders import AnyEvent, event_from_json, event_to_json
from .errors import (
    AnswerValidationError,
    ConfigError,
    InternalError,
    LLMFunctionError,
    ParserClosedError,
    RunLimitError,
    StreamParserError,
    StrictModeError,
    ToolError,
)
from .llm import ChatModel, ContextLengthError, ModelError, OpenAIChatModel
from .schema import ImgPath, ImgUrl, Text, allowed_image_roots
from .testing import ScriptedModel
from .tools import Tool, ToolRegistry, ToolResult, as_registry, tool

# The core does not import the layers above it; importing the dialects registers their
# plugin factories with the core, so that ParserConfig(dialect=...) knows every dialect.
from . import dialects  # noqa: F401  # isort: skip
from .dialects import dialect_for_model  # isort: skip

# A library logs, the application decides where to: this handler keeps the records of
# every ``stream_parser.*`` logger from Python's last-resort handler (which prints
# warnings to stderr) until the application configures logging.
_logging.getLogger(__name__).addHandler(_logging.NullHandler())

#: The package's version, declared here only: the build reads it from this line without
#: importing the package (pyproject.toml, ``[tool.setuptools.dynamic]``), so it stays a
#: plain string literal.
__version__ = "0.1.0"

__all__ = [
    "AgentDoneEvent",
    "AgentRun",
    "AnswerValidationError",
    "AnyEvent",
    "ChatDelta",
    "ChatModel",
    "CodeBlockDeltaEvent",
    "CodeBlockEvent",
    "ConfigError",
    "ContextLengthError",
    "ErrorType",
    "Event",
    "FencedCodePlugin",
    "FramingEvent",
    "FunctionCallAgent",
    "ImgPath",
    "ImgUrl",
    "InternalError",
    "LLMCallResult",
    "LLMFunctionError",
    "ModelError",
    "OpenAIChatModel",
    "ParseErrorEvent",
    "ParseEvent",
    "ParsePlugin",
    "ParserClosedError",
    "ParserConfig",
    "PluginBlock",
    "PluginContext",
    "ReActAgent",
    "RunLimitError",
    "ScriptedModel",
    "StepStartEvent",
    "StreamParserError",
    "StreamToolParser",
    "StrictModeError",
    "Text",
    "TextOutputEvent",
    "ThinkingDeltaEvent",
    "ThinkingEvent",
    "TokenUsageEvent",
    "Tool",
    "ToolArgumentsDeltaEvent",
    "ToolCallDelta",
    "ToolCallEvent",
    "ToolCallStartEvent",
    "ToolError",
    "ToolParamDeltaEvent",
    "ToolRegistry",
    "ToolResult",
    "ToolResultEvent",
    "__version__",
    "allowed_image_roots",
    "aparse_stream",
    "as_registry",
    "dialect_for_model",
    "event_from_json",
    "event_to_json",
    "llm_chat",
    "llm_function",
    "parse_stream",
    "tool",
]

# Names that were on the face before and stay reachable from it, though they belong to
# the core's own API (``stream_parser.core``): module -> names, loaded on first use.
_MORE: dict[str, tuple[str, ...]] = {
    "stream_parser.core.config": ("DEFAULT_THINKING_TAGS",),
    "stream_parser.core.state": ("ParseState", "ParseStateManager"),
    "stream_parser.core.xml_tool_parser": ("XMLToolParser",),
}
_MORE_FROM: dict[str, str] = {name: module for module, names in _MORE.items() for name in names}

if _typing.TYPE_CHECKING:  # what they are, for type checkers
    from .core.config import DEFAULT_THINKING_TAGS as DEFAULT_THINKING_TAGS
    from .core.state import ParseState as ParseState
    from .core.state import ParseStateManager as ParseStateManager
    from .core.xml_tool_parser import XMLToolParser as XMLToolParser


def __getattr__(name: str) -> object:
    """``stream_parser.ParseState`` and the other names of ``_MORE``, looked up on use.

    They are not cached in this module, so that they stay off its ``dir()``.
    """
    module = _MORE_FROM.get(name)
    if module is None:
        raise AttributeError(f"module 'stream_parser' has no attribute {name!r}")
    return getattr(_importlib.import_module(module), name)
