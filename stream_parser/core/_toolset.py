"""What the core accepts as a set of tools, and the hook that widens it.

The core needs one thing of the tools: a mapping of tool name to the Pydantic model of
its arguments.  Users hold tools in richer forms (a ``ToolRegistry``, a list of
``Tool`` objects, plain functions), and those forms are defined by the ``tools`` layer,
above the core.  So the core owns a hook and the tools layer fills it when it is
imported (``import stream_parser`` imports it): :func:`tool_models` turns a plain
mapping of name to model into the core's form itself, and hands anything else to the
registered converter.  The core never imports the layer that converts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeAlias

from pydantic import BaseModel

from ..errors import ConfigError
from ..schema.names import check_tool_name

__all__ = ["ToolModels", "register_tool_converter", "tool_models"]

ToolModels: TypeAlias = Mapping[str, type[BaseModel]]
"""The core's view of a tool set: tool name -> Pydantic model of its arguments."""

_converter: Callable[[object], ToolModels] | None = None

_ACCEPTED = (
    "a mapping of tool name to Pydantic model class, a ToolRegistry, or a list of tools, "
    "functions or Pydantic model classes"
)


def register_tool_converter(converter: Callable[[object], ToolModels]) -> None:
    """Install the function that turns any other accepted form into ``ToolModels``.

    The tools layer calls this once when it is imported; a later call replaces it.
    """
    global _converter
    _converter = converter


def tool_models(tools: object) -> ToolModels:
    """The tools as a mapping of name to argument model, checked.

    A mapping whose values are all Pydantic model classes is used as it is (a
    ``ToolRegistry`` is one); ``None`` is no tools; anything else goes to the converter
    that the tools layer registered.

    Raises:
        ConfigError: a name breaks the tool-name rule, or the form is not accepted.
    """
    if tools is None:
        return {}
    if isinstance(tools, Mapping) and all(_is_model_class(v) for v in tools.values()):
        for name in tools:
            check_tool_name(name)
        return tools
    if _converter is None:
        raise ConfigError(f"tools must be {_ACCEPTED}, not {type(tools).__name__}")
    return _converter(tools)


def _is_model_class(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)
