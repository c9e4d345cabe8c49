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

Importing the package loads none of its floors: each name here is imported from its
module the first time it is used (:func:`__getattr__`, :pep:`562`), then kept.  So
``stream-parser --version`` answers at once, and a program that only parses never loads
the agents, the OpenAI SDK, Jinja2 or asyncio.  Type checkers and IDEs read the real
imports below ``TYPE_CHECKING``.
"""

from __future__ import annotations

import importlib as _importlib
import logging as _logging
import typing as _typing

#: The package's version, declared here only: the build reads it from this line without
#: importing the package (pyproject.toml, ``[tool.setuptools.dynamic]``), so it stays a
#: plain string literal.
__version__ = "0.1.0"

# No log record of the library reaches standard error unless the application
# configures logging (the library's loggers are all below this one).
_logging.getLogger(__name__).addHandler(_logging.NullHandler())

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
    "CustomTagPlugin",
    "DEFAULT_THINKING_TAGS",
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
    "NoticeEvent",
    "OpenAIChatModel",
    "ParseErrorEvent",
    "ParseEvent",
    "ParsePlugin",
    "ParseState",
    "ParseStateManager",
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
    "TagDeltaEvent",
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
    "XMLToolParser",
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

# The face's names by the module that defines them, imported on first use.
_FACE: dict[str, tuple[str, ...]] = {
    "stream_parser.agent": (
        "AgentDoneEvent",
        "AgentRun",
        "FunctionCallAgent",
        "ReActAgent",
        "StepStartEvent",
        "ToolResultEvent",
    ),
    "stream_parser.core.chunks": (
        "ChatDelta",
        "ToolCallDelta",
    ),
    "stream_parser.core.config": (
        "DEFAULT_THINKING_TAGS",
        "ParserConfig",
    ),
    "stream_parser.core.events": (
        "CodeBlockDeltaEvent",
        "CodeBlockEvent",
        "ErrorType",
        "Event",
        "FramingEvent",
        "NoticeEvent",
        "ParseErrorEvent",
        "ParseEvent",
        "TagDeltaEvent",
        "TextOutputEvent",
        "ThinkingDeltaEvent",
        "ThinkingEvent",
        "TokenUsageEvent",
        "ToolArgumentsDeltaEvent",
        "ToolCallEvent",
        "ToolCallStartEvent",
        "ToolParamDeltaEvent",
    ),
    "stream_parser.core.parser": (
        "StreamToolParser",
        "aparse_stream",
        "parse_stream",
    ),
    "stream_parser.core.plugins": (
        "CustomTagPlugin",
        "FencedCodePlugin",
        "ParsePlugin",
        "PluginBlock",
        "PluginContext",
    ),
    "stream_parser.core.state": (
        "ParseState",
        "ParseStateManager",
    ),
    "stream_parser.core.xml_tool_parser": ("XMLToolParser",),
    "stream_parser.decorators": (
        "LLMCallResult",
        "llm_chat",
        "llm_function",
    ),
    "stream_parser.dialects": ("dialect_for_model",),
    "stream_parser.encoders": (
        "AnyEvent",
        "event_from_json",
        "event_to_json",
    ),
    "stream_parser.errors": (
        "AnswerValidationError",
        "ConfigError",
        "InternalError",
        "LLMFunctionError",
        "ParserClosedError",
        "RunLimitError",
        "StreamParserError",
        "StrictModeError",
        "ToolError",
    ),
    "stream_parser.llm": (
        "ChatModel",
        "ContextLengthError",
        "ModelError",
        "OpenAIChatModel",
    ),
    "stream_parser.schema": (
        "ImgPath",
        "ImgUrl",
        "Text",
        "allowed_image_roots",
    ),
    "stream_parser.testing": ("ScriptedModel",),
    "stream_parser.tools": (
        "Tool",
        "ToolRegistry",
        "ToolResult",
        "as_registry",
        "tool",
    ),
}
_FACE_FROM: dict[str, str] = {name: module for module, names in _FACE.items() for name in names}

if _typing.TYPE_CHECKING:  # what the names are, for type checkers and IDEs
    from .agent import AgentDoneEvent as AgentDoneEvent
    from .agent import AgentRun as AgentRun
    from .agent import FunctionCallAgent as FunctionCallAgent
    from .agent import ReActAgent as ReActAgent
    from .agent import StepStartEvent as StepStartEvent
    from .agent import ToolResultEvent as ToolResultEvent
    from .core.chunks import ChatDelta as ChatDelta
    from .core.chunks import ToolCallDelta as ToolCallDelta
    from .core.config import DEFAULT_THINKING_TAGS as DEFAULT_THINKING_TAGS
    from .core.config import ParserConfig as ParserConfig
    from .core.events import CodeBlockDeltaEvent as CodeBlockDeltaEvent
    from .core.events import CodeBlockEvent as CodeBlockEvent
    from .core.events import ErrorType as ErrorType
    from .core.events import Event as Event
    from .core.events import FramingEvent as FramingEvent
    from .core.events import NoticeEvent as NoticeEvent
    from .core.events import ParseErrorEvent as ParseErrorEvent
    from .core.events import ParseEvent as ParseEvent
    from .core.events import TagDeltaEvent as TagDeltaEvent
    from .core.events import TextOutputEvent as TextOutputEvent
    from .core.events import ThinkingDeltaEvent as ThinkingDeltaEvent
    from .core.events import ThinkingEvent as ThinkingEvent
    from .core.events import TokenUsageEvent as TokenUsageEvent
    from .core.events import ToolArgumentsDeltaEvent as ToolArgumentsDeltaEvent
    from .core.events import ToolCallEvent as ToolCallEvent
    from .core.events import ToolCallStartEvent as ToolCallStartEvent
    from .core.events import ToolParamDeltaEvent as ToolParamDeltaEvent
    from .core.parser import StreamToolParser as StreamToolParser
    from .core.parser import aparse_stream as aparse_stream
    from .core.parser import parse_stream as parse_stream
    from .core.plugins import CustomTagPlugin as CustomTagPlugin
    from .core.plugins import FencedCodePlugin as FencedCodePlugin
    from .core.plugins import ParsePlugin as ParsePlugin
    from .core.plugins import PluginBlock as PluginBlock
    from .core.plugins import PluginContext as PluginContext
    from .core.state import ParseState as ParseState
    from .core.state import ParseStateManager as ParseStateManager
    from .core.xml_tool_parser import XMLToolParser as XMLToolParser
    from .decorators import LLMCallResult as LLMCallResult
    from .decorators import llm_chat as llm_chat
    from .decorators import llm_function as llm_function
    from .dialects import dialect_for_model as dialect_for_model
    from .encoders import AnyEvent as AnyEvent
    from .encoders import event_from_json as event_from_json
    from .encoders import event_to_json as event_to_json
    from .errors import AnswerValidationError as AnswerValidationError
    from .errors import ConfigError as ConfigError
    from .errors import InternalError as InternalError
    from .errors import LLMFunctionError as LLMFunctionError
    from .errors import ParserClosedError as ParserClosedError
    from .errors import RunLimitError as RunLimitError
    from .errors import StreamParserError as StreamParserError
    from .errors import StrictModeError as StrictModeError
    from .errors import ToolError as ToolError
    from .llm import ChatModel as ChatModel
    from .llm import ContextLengthError as ContextLengthError
    from .llm import ModelError as ModelError
    from .llm import OpenAIChatModel as OpenAIChatModel
    from .schema import ImgPath as ImgPath
    from .schema import ImgUrl as ImgUrl
    from .schema import Text as Text
    from .schema import allowed_image_roots as allowed_image_roots
    from .testing import ScriptedModel as ScriptedModel
    from .tools import Tool as Tool
    from .tools import ToolRegistry as ToolRegistry
    from .tools import ToolResult as ToolResult
    from .tools import as_registry as as_registry
    from .tools import tool as tool


def __getattr__(name: str) -> object:
    """A name of the face, imported from its module on first use and kept here.

    Raises:
        AttributeError: the package has no such name.
    """
    module = _FACE_FROM.get(name)
    if module is None:
        raise AttributeError(f"module 'stream_parser' has no attribute {name!r}")
    value = getattr(_importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's attributes and every name of the face, loaded or not."""
    return sorted(set(globals()) | set(__all__))
