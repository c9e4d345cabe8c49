"""Tools: Python functions a model can call.

Theory of operation.  :func:`tool` reads a function once
(:func:`~stream_parser.schema.signature.read_signature`: signature and docstring) and
builds a :class:`Tool` (``definition.py``): a checked name, a description, a Pydantic
model of its arguments (which the core's parser validates calls against), JSON Schema
for native function calling and usage text for prompts.  A :class:`ToolRegistry`
(``registry.py``) is a mapping of name to argument model, so it can be handed straight
to the parser; :func:`as_registry` makes one of any accepted form (a list of tools,
functions, model classes or tool descriptions from OpenAI, Anthropic and MCP tool lists
-- ``sources.py`` reads those, their JSON Schema becoming the argument model -- or a
mapping of name to a tool, function or model class), and importing this package
registers it with the core so that the parser accepts those forms too.
:func:`mcp_tools` (``mcp.py``) gives an MCP server's tools handlers that call it.
Executing a tool turns whatever happens, exceptions included, into a
:class:`ToolResult` (``result.py``) for the model.
"""

from __future__ import annotations

from .definition import XML_PREFACE, Arguments, Tool, check_tool_annotation, tool
from .mcp import MCPToolHandler, mcp_tools
from .registry import ToolLike, ToolRegistry, as_registry
from .result import ToolResult

__all__ = [
    "XML_PREFACE",
    "Arguments",
    "MCPToolHandler",
    "Tool",
    "ToolLike",
    "ToolRegistry",
    "ToolResult",
    "as_registry",
    "check_tool_annotation",
    "mcp_tools",
    "tool",
]
