"""A set of tools: :class:`ToolRegistry`, and :func:`as_registry` for every accepted form.

A :class:`ToolRegistry` is a ``Mapping`` of tool name -> argument model, the form the
core's parser takes, and also holds the :class:`~stream_parser.tools.Tool` objects, so
it can describe the tools (OpenAI ``tools`` list, prompt text) and run their calls.

Wherever the library takes tools -- the parser, the agents -- it takes them in any form
:func:`as_registry` understands: a registry, a list of tools, plain functions,
Pydantic model classes or tool descriptions from other software (OpenAI, Anthropic and
MCP tool lists: :mod:`~stream_parser.tools.sources`), or a mapping of name to a tool,
function or model class.  Importing this module
registers :func:`as_registry` with the core
(:func:`stream_parser.core.kit.register_tool_converter`), so that the parser, which
must not import this layer, accepts those forms too.
"""

from __future__ import annotations

import collections.abc as cabc
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, ParamSpec, TypeAlias, TypeVar, cast, overload

from pydantic import BaseModel

from ..core.kit import register_tool_converter
from ..errors import ConfigError
from ..prompts.text import Templates, say
from ..schema.names import check_tool_name, native_names
from .definition import Arguments, Tool
from .result import ToolResult
from .sources import is_description_object, tool_from_description

__all__ = ["ToolLike", "ToolRegistry", "as_registry"]

P = ParamSpec("P")
R = TypeVar("R")

_ACCEPTED = (
    "give a ToolRegistry, a list of tools (Tool objects, functions, Pydantic model "
    "classes, or OpenAI, Anthropic or MCP tool descriptions), or a mapping of tool name "
    "to a Tool, function or model class, e.g. [read_file, WriteToFile] or {'read': read_file}"
)

ToolLike: TypeAlias = Tool[Any, Any] | Callable[..., Any] | type[BaseModel] | Mapping[str, Any]
"""What a :class:`ToolRegistry` accepts: a Tool, a plain function, a Pydantic model, or a
tool description (an OpenAI, Anthropic or MCP dict; an mcp SDK ``Tool`` object is read
too)."""


class ToolRegistry(cabc.Mapping[str, type[BaseModel]]):
    """A set of tools with unique names; a ``Mapping`` of tool name -> ``args_model``.

    Pass it as ``tool_registry=`` to :class:`~stream_parser.core.parser.StreamToolParser`
    (add the tools before creating the parser: the parser reads the registry once).

    Args:
        tools: :class:`Tool` objects, plain functions (made into tools with
            :func:`~stream_parser.tools.tool`), Pydantic model classes (schema-only
            tools, named by :func:`~stream_parser.schema.names.tool_name_from_class`:
            ``HTTPGet`` -> ``http_get``), or tool descriptions: OpenAI, Anthropic and
            MCP dicts and mcp SDK ``Tool`` objects (schema-only tools, read by
            :func:`~stream_parser.tools.sources.tool_from_description`); or a mapping of
            name -> a tool, function or model class, which sets the names.
            :func:`as_registry` takes the same forms and returns an existing registry
            as it is.
        handlers: tool name -> the function that runs its calls, for schema-only tools
            (a tool description or a model class).  A handler (sync or async) of a
            tool described by a JSON Schema gets one dict: the arguments by the
            schema's names, only the keys the model wrote; one of a model class gets
            the validated instance.

    Raises:
        ConfigError: on a duplicate or invalid name, an invalid tool or schema, a
            mapping of names to descriptions, or a handler for no schema-only tool.
    """

    def __init__(
        self,
        tools: Iterable[ToolLike | object] | Mapping[str, ToolLike] = (),
        *,
        handlers: Mapping[str, Callable[..., Any]] | None = None,
    ) -> None:
        self._tools: dict[str, Tool[Any, Any]] = {}
        if isinstance(tools, Mapping):
            _check_tool_mapping(tools)
            for key, item in tools.items():
                self.add(item, name=key)
        else:
            # Any: add() checks each item's kind itself, whatever the list is typed as.
            for item in cast("Iterable[Any]", tools):
                self.add(item)
        for name, handler in (handlers or {}).items():
            found = self._tools.get(name)
            if found is None:
                known = ", ".join(self._tools) or "none"
                raise ConfigError(f"handlers: there is no tool named {name!r} (tools: {known})")
            self._tools[name] = found.with_handler(handler)

    @overload
    def add(self, item: Tool[P, R], *, name: str | None = None) -> Tool[P, R]: ...

    @overload
    def add(self, item: type[BaseModel], *, name: str | None = None) -> Tool[..., Any]: ...

    @overload
    def add(self, item: Mapping[str, Any], *, name: str | None = None) -> Tool[..., Any]: ...

    @overload
    def add(self, item: Callable[P, R], *, name: str | None = None) -> Tool[P, R]: ...

    def add(self, item: ToolLike | object, *, name: str | None = None) -> Tool[Any, Any]:
        """Register a tool; usable as a decorator (``@registry.add``).

        Args:
            item: a :class:`Tool`, a function, a Pydantic model class, or a tool
                description (an OpenAI, Anthropic or MCP dict, an mcp ``Tool`` object).
            name: register under this name instead of the item's own.

        Returns:
            The registered :class:`Tool`.

        Raises:
            ConfigError: if the name is already taken or the item cannot be a tool.
        """
        if isinstance(item, Tool):
            new = item if name is None or name == item.name else item.with_name(name)
        elif isinstance(item, type) and issubclass(item, BaseModel):
            new = Tool.from_model(item, name=name)
        elif isinstance(item, Mapping) or is_description_object(item):
            new = tool_from_description(item)
            if name is not None and name != new.name:
                new = new.with_name(name)
        elif callable(item) and not isinstance(item, type):
            new = Tool(item, name=name)
        else:
            raise ConfigError(
                f"not a tool, function or Pydantic model class: {item!r}; {_ACCEPTED}"
            )
        if new.name in self._tools:
            raise ConfigError(
                f"duplicate tool name {new.name!r}{_origins(self._tools[new.name], new)}"
            )
        self._tools[new.name] = new
        return new

    # Mapping[str, type[BaseModel]]: what the streaming parser needs.
    def __getitem__(self, name: str) -> type[BaseModel]:
        return self._tools[name].args_model

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __repr__(self) -> str:
        return f"ToolRegistry({list(self._tools)!r})"

    @property
    def tools(self) -> tuple[Tool[Any, Any], ...]:
        """The registered tools, in registration order."""
        return tuple(self._tools.values())

    def get_tool(self, name: str) -> Tool[Any, Any]:
        """Return the tool registered under ``name``.

        Raises:
            KeyError: if there is none.
        """
        try:
            return self._tools[name]
        except KeyError:
            raise KeyError(f"no tool named {name!r}") from None

    def to_openai(self, *, exact: bool = False) -> list[dict[str, Any]]:
        """Return the OpenAI ``tools`` list (one :meth:`Tool.to_openai` entry per tool).

        A tool read from a JSON Schema is sent with that schema, unchanged (``strict``
        included).  A name OpenAI does not take is sent as its safe name
        (:meth:`Tool.native_name`), unless ``exact`` refuses it.

        Raises:
            ConfigError: two tools would be sent under one name, or ``exact`` and a name
                OpenAI does not take.
        """
        native_names(self._tools)
        return [item.to_openai(exact=exact) for item in self._tools.values()]

    def to_anthropic(self, *, exact: bool = False) -> list[dict[str, Any]]:
        """Return the Anthropic ``tools`` list (one :meth:`Tool.to_anthropic` entry per tool).

        Raises:
            ConfigError: as :meth:`to_openai`.
        """
        native_names(self._tools)
        return [item.to_anthropic(exact=exact) for item in self._tools.values()]

    def to_mcp(self) -> list[dict[str, Any]]:
        """Return the tools as an MCP ``tools/list`` result's ``tools`` (:meth:`Tool.to_mcp`)."""
        return [item.to_mcp() for item in self._tools.values()]

    def xml_usage(
        self, *, preface: bool = True, language: str = "en", templates: Templates = None
    ) -> str:
        """Describe all tools for a text-protocol prompt.

        Args:
            preface: start with a short explanation of the XML call format.
            language: the language of the prompt text, ``"en"`` or ``"zh"``.
            templates: replacement prompt templates by name (see
                :func:`~stream_parser.prompts.templating.render`).

        Returns:
            The preface (if asked) and each tool's :meth:`Tool.xml_usage`, separated by
            blank lines.
        """
        blocks = [say("xml_preface", language, templates)] if preface else []
        blocks.extend(
            item.xml_usage(language=language, templates=templates) for item in self._tools.values()
        )
        return "\n\n".join(blocks)

    def execute(self, name: str, args: Arguments = None) -> ToolResult:
        """Run a tool by name (see :meth:`Tool.execute`); an unknown name is an error result.

        Args:
            name: the tool name, e.g. ``ToolCallEvent.tool_name``.
            args: the arguments, e.g. ``ToolCallEvent.tool_instance`` or a JSON string.

        Returns:
            The result.

        Raises:
            ToolError: only for programmer errors, as in :meth:`Tool.execute`.
        """
        found = self._tools.get(name)
        if found is None:
            return ToolResult.unknown_tool(name, self._tools)
        return found.execute(args)

    async def aexecute(self, name: str, args: Arguments = None) -> ToolResult:
        """Async :meth:`execute` (for sync and async tools).

        Args:
            name: the tool name.
            args: the arguments.

        Returns:
            The result.

        Raises:
            ToolError: only for programmer errors, as in :meth:`Tool.aexecute`.
        """
        found = self._tools.get(name)
        if found is None:
            return ToolResult.unknown_tool(name, self._tools)
        return await found.aexecute(args)


def _origins(first: Tool[Any, Any], second: Tool[Any, Any]) -> str:
    """Where two tools of one name come from, when a server gave them (MCP tools)."""
    servers = [getattr(item.fn, "server_name", None) for item in (first, second)]
    if not any(isinstance(server, str) for server in servers):
        return ""
    shown = " and ".join(
        f"MCP server {server!r}" if isinstance(server, str) else "a local tool"
        for server in servers
    )
    return (
        f", from {shown}; give mcp_tools(session, prefix=...) to tell them apart "
        "(prefix='gh.' gives 'gh.<name>')"
    )


def _check_tool_mapping(tools: Mapping[Any, Any]) -> None:
    """A mapping of tools is name -> tool: refuse one holding descriptions or strings.

    A lone tool description (a dict) is a mapping too, and so is a dict of names to
    descriptions: both are told to use the list form rather than read as something else.
    """
    if not any(isinstance(value, (str, Mapping)) for value in tools.values()):
        return
    if "name" in tools or "function" in tools:
        raise ConfigError(
            "tools: this is one tool description, not a list of them: pass it in a "
            "list, e.g. [{'type': 'function', 'function': {...}}]"
        )
    raise ConfigError(
        "tools: a mapping of tools is tool name -> Tool, function or model class, and this "
        "one holds dicts or strings; pass tool descriptions in a list, e.g. "
        "[{'name': 'get_weather', 'description': '...', 'input_schema': {...}}]"
    )


def as_registry(tools: object) -> ToolRegistry:
    """Turn tools in any accepted form into a :class:`ToolRegistry`.

    Args:
        tools: a :class:`ToolRegistry` (returned as it is); an iterable (a list, a
            tuple...) of :class:`Tool` objects, plain functions, Pydantic model
            classes or tool descriptions (OpenAI, Anthropic, MCP); or a mapping of tool
            name to a tool, function or model class, whose keys name the tools (a key
            beats a function's or a tool's own name).

    Returns:
        The registry.

    Raises:
        ConfigError: another form (a single function, a string...), an item that cannot
            be a tool, an invalid or duplicate name; the message shows an accepted form.

    Example:
        >>> def read_file(path: str) -> str:
        ...     return path
        >>> list(as_registry([read_file])), list(as_registry({"read": read_file}))
        (['read_file'], ['read'])
    """
    if isinstance(tools, ToolRegistry):
        return tools
    if isinstance(tools, Mapping):
        _check_tool_mapping(tools)
        for key in tools:
            check_tool_name(key)
        return ToolRegistry(tools)
    if isinstance(tools, Iterable) and not isinstance(tools, (str, bytes, bytearray, BaseModel)):
        return ToolRegistry(tools)
    if isinstance(tools, Tool) or callable(tools):
        shown = getattr(tools, "name", None) or getattr(tools, "__name__", repr(tools))
        raise ConfigError(f"tools must be a collection: pass [{shown}], not {shown} alone")
    raise ConfigError(f"tools cannot be a {type(tools).__name__}: {_ACCEPTED}")


register_tool_converter(as_registry)
