"""Tool descriptions from other software: OpenAI, Anthropic and MCP tool lists.

Most software describes a tool as a name, a description and a JSON Schema of its
arguments, each in its own wrapping.  :func:`tool_from_description` reads one entry of
such a list into a schema-only :class:`~stream_parser.tools.Tool`
(:meth:`~stream_parser.tools.Tool.from_json_schema`); a
:class:`~stream_parser.tools.ToolRegistry` gives it a handler (``handlers=``).

The forms, told apart by their keys:

==========================  ==========================================================
OpenAI Chat Completions     ``{"type": "function", "function": {"name", "description",
                            "parameters", "strict"}}``
OpenAI Responses            ``{"type": "function", "name", "description", "parameters",
                            "strict"}``
bare                        ``{"name", "description", "parameters"}``
Anthropic                   ``{"name", "description", "input_schema"}`` (``type`` and
                            ``cache_control`` are ignored)
MCP ``tools/list``          ``{"name", "title", "description", "inputSchema",
                            "outputSchema", "annotations"}``
MCP SDK ``Tool`` objects    read through their JSON form (``model_dump(by_alias=True)``),
                            or their attributes (``inputSchema`` in mcp 1.x,
                            ``input_schema`` in 2.x); ``mcp`` itself is never imported
==========================  ==========================================================

A missing ``parameters`` (OpenAI allows it) is a tool without arguments.  An Anthropic
server tool (``{"type": "web_search_20250305", "name": "web_search"}``) runs on
Anthropic's side and cannot be parsed or run here: a
:class:`~stream_parser.errors.ConfigError` says so, as it does for any dict of no known
form (naming its keys).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError
from .definition import Tool

__all__ = ["is_description_object", "tool_from_description"]

_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}

# Anthropic's own tools whose schema is built into Claude: they run on the caller's side,
# but no schema comes with them to read.
_ANTHROPIC_SCHEMALESS = ("bash_", "text_editor_", "computer_", "memory_")


def is_description_object(item: object) -> bool:
    """Whether ``item`` is a tool description object, such as the mcp SDK's ``Tool``.

    Such an object has a ``name`` and an ``inputSchema`` (mcp 1.x) or ``input_schema``
    (mcp 2.x) attribute.
    """
    return isinstance(getattr(item, "name", None), str) and (
        hasattr(item, "inputSchema") or hasattr(item, "input_schema")
    )


def _object_entry(item: object) -> dict[str, Any]:
    """A description object as the dict of its JSON form."""
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        try:
            dumped = dump(by_alias=True, exclude_none=True, mode="json")
        except Exception:  # not a Pydantic model's model_dump after all: read attributes
            dumped = None
        if isinstance(dumped, Mapping):
            return dict(dumped)
    entry: dict[str, Any] = {}
    for key, names in (
        ("name", ("name",)),
        ("title", ("title",)),
        ("description", ("description",)),
        ("inputSchema", ("inputSchema", "input_schema")),
        ("outputSchema", ("outputSchema", "output_schema")),
        ("annotations", ("annotations",)),
    ):
        for attr in names:
            value = getattr(item, attr, None)
            if value is not None:
                entry[key] = value
                break
    annotations = entry.get("annotations")
    dump = getattr(annotations, "model_dump", None)
    if callable(dump):
        entry["annotations"] = dump(by_alias=True, exclude_none=True, mode="json")
    return entry


def _keys(entry: Mapping[Any, Any]) -> str:
    return ", ".join(repr(key) for key in entry) or "none"


def tool_from_description(item: object) -> Tool[..., Any]:
    """Read one tool description (a dict of a known form, or an mcp ``Tool`` object).

    Args:
        item: the entry of a tool list (see the module docstring for the forms).

    Returns:
        A schema-only tool, its schema kept as given.

    Raises:
        ConfigError: a dict of no known form (the message names its keys), an Anthropic
            server tool, a missing or invalid name, or an invalid schema (the message
            names the tool and the place in the schema).
    """
    entry: Mapping[str, Any] = item if isinstance(item, Mapping) else _object_entry(item)
    kind = entry.get("type")
    function = entry.get("function")
    if kind == "function" and isinstance(function, Mapping):
        return _make(function, "parameters", "an OpenAI tool", strict=True)
    if kind == "function" and "name" in entry:
        return _make(entry, "parameters", "an OpenAI Responses tool", strict=True)
    if "input_schema" in entry:
        return _make(entry, "input_schema", "an Anthropic tool")
    if "inputSchema" in entry:
        made = _make(entry, "inputSchema", "an MCP tool")
        # Everything else the entry says (title, outputSchema, annotations, icons,
        # execution, _meta...) goes back out with to_mcp(), unread.
        made._mcp_extra = {
            key: value
            for key, value in entry.items()
            if key not in ("name", "description", "inputSchema") and value is not None
        }
        return made
    if "parameters" in entry and "name" in entry:
        return _make(entry, "parameters", "a tool description")
    if isinstance(kind, str) and isinstance(entry.get("name"), str):
        if kind.startswith(_ANTHROPIC_SCHEMALESS):
            raise ConfigError(
                f"tool {entry['name']!r} (type {kind!r}) is one of Anthropic's built-in "
                "tools, whose schema only Claude knows: describe it with an input_schema "
                "to use it here"
            )
        raise ConfigError(
            f"tool {entry['name']!r} (type {kind!r}) is an Anthropic server tool: it runs "
            "on Anthropic's side, so it cannot be parsed or run here; send it to "
            "Anthropic's API yourself, and give here the tools that have an input_schema"
        )
    raise ConfigError(
        f"a tool description of no known form (keys: {_keys(entry)}); give OpenAI tools "
        "({'type': 'function', 'function': {'name', 'description', 'parameters'}}), "
        "Anthropic tools ({'name', 'description', 'input_schema'}) or MCP tools "
        "({'name', 'description', 'inputSchema'})"
    )


def _make(entry: Mapping[str, Any], key: str, form: str, *, strict: bool = False) -> Tool[..., Any]:
    name = entry.get("name")
    if not isinstance(name, str):
        raise ConfigError(f"{form} needs a 'name' string (keys: {_keys(entry)})")
    schema = entry.get(key)
    if schema is None and key == "parameters":
        schema = _EMPTY_OBJECT  # OpenAI: a function without parameters takes none
    if not isinstance(schema, Mapping):
        raise ConfigError(
            f"tool {name!r}: {key!r} must be a JSON object (the JSON Schema of the "
            f"arguments), not {type(schema).__name__}"
        )
    description = entry.get("description")
    if description is not None and not isinstance(description, str):
        raise ConfigError(f"tool {name!r}: the description must be a string")
    return Tool.from_json_schema(
        name,
        schema,
        description=description,
        strict=entry.get("strict") if strict else None,
    )
