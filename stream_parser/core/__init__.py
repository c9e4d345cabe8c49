"""The core: a sans-IO streaming parser of LLM output into typed events.

Theory of operation.  Text arrives in chunks cut anywhere.  The parser keeps a short
tail of what could still become a tag, runs the reader of its current state (text,
thinking, a tool call, a plugin's block) over tail + chunk, and emits every event that
the characters seen so far decide.  A decision never depends on where the chunks were
cut, so the events are the same for any chunking; every character ends up in exactly
one block event's span, so nothing is lost; and no character is scanned more than a
bounded number of times, so the work per chunk does not grow with the stream.

The core knows nothing of LLMs, HTTP, asyncio or templates, and imports nothing from
the layers above it (``tools``, ``dialects``, ``llm``, ``agent``...).  Those layers plug
into it: dialects register plugin factories (``_dialect_registry.py``), the tools layer
registers a converter of its tool sets (``_toolset.py``), and plugins see the parser only
through a :class:`~stream_parser.core.plugins.PluginContext`.

The border.  Public means "in ``__all__``".  The modules a user or a plugin author needs
are public: ``parser``, ``events``, ``config``, ``chunks``, ``state``, ``plugins``,
``value_run``, ``kit`` and the XML converter (``xml_tools``, ``xml_write``,
``xml_tool_parser``).  The rest (``_readers/``, ``_scan``, ``_tables``, ``_drivers``...) is
the core's own and may change in any release; the other floors reach what they need of
it through :mod:`~stream_parser.core.kit`, and ``tests/test_layers.py`` holds them to
that.  This module's ``__all__`` lists the names a user reaches for.

Floors inside the core, bottom up: events, config, _scan, state, xml_tools (the argument
converter), plugins, _dialect_registry and _toolset; the readers (``_readers/``); the
driver (``parser.py``, with ``_drivers.py`` and ``_native.py``); and ``xml_tool_parser.py``,
whose whole-call conveniences run the parser.
"""

from __future__ import annotations

from . import _scan
from .chunks import ChatDelta, ToolCallDelta
from .config import DEFAULT_THINKING_TAGS, ParserConfig
from .events import (
    AnyParseEvent,
    CodeBlockDeltaEvent,
    CodeBlockEvent,
    ErrorType,
    Event,
    FramingEvent,
    NoticeEvent,
    ParseErrorEvent,
    ParseEvent,
    Span,
    TagDeltaEvent,
    TextOutputEvent,
    ThinkingDeltaEvent,
    ThinkingEvent,
    TokenUsageEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolParamDeltaEvent,
)
from .parser import StreamItem, StreamToolParser, aparse_stream, parse_stream
from .plugins import CustomTagPlugin, FencedCodePlugin, ParsePlugin, PluginBlock, PluginContext
from .state import ParseState, ParseStateManager
from .value_run import ValueRun
from .xml_tool_parser import XMLToolParser
from .xml_tools import XMLArgumentConverter

#: True when the driver, its readers, the scanners and the state machine run as
#: mypyc-compiled extensions (a wheel built with ``STREAM_PARSER_COMPILE=1``, see
#: ``docs/performance.md``); False for the default pure-Python build.  Behaviour is the
#: same either way.
#:
#: >>> isinstance(COMPILED, bool)
#: True
COMPILED: bool = not str(getattr(_scan, "__file__", "") or "").endswith(".py")

__all__ = [
    "COMPILED",
    "DEFAULT_THINKING_TAGS",
    "AnyParseEvent",
    "ChatDelta",
    "CodeBlockDeltaEvent",
    "CodeBlockEvent",
    "ErrorType",
    "Event",
    "CustomTagPlugin",
    "FencedCodePlugin",
    "FramingEvent",
    "NoticeEvent",
    "ParseErrorEvent",
    "ParseEvent",
    "ParsePlugin",
    "ParseState",
    "ParseStateManager",
    "ParserConfig",
    "PluginBlock",
    "PluginContext",
    "Span",
    "StreamItem",
    "StreamToolParser",
    "TagDeltaEvent",
    "TextOutputEvent",
    "ThinkingDeltaEvent",
    "ThinkingEvent",
    "TokenUsageEvent",
    "ToolArgumentsDeltaEvent",
    "ToolCallDelta",
    "ToolCallEvent",
    "ToolCallStartEvent",
    "ToolParamDeltaEvent",
    "ValueRun",
    "XMLArgumentConverter",
    "XMLToolParser",
    "aparse_stream",
    "parse_stream",
]
