"""The one rule for tool names, the names each format can carry, and the safe names.

A tool is named as the software that describes it names it.  MCP asks for 1 to 128
letters, digits, ``_``, ``-`` and ``.``, and servers also send ``/``
(``github/create_issue``): that is the rule, checked here by everything that takes a
tool name (the parser's registry, ``@tool``, ``ToolRegistry``, the CLI), so a name
accepted by one is accepted by all.

Not every format can carry every such name:

* an XML tag (the xml dialect's calls) is letters, digits, ``_``, ``-`` and ``.``,
  starting with a letter or ``_``: :func:`is_xml_tool_name`.  A dialect that cannot
  carry a name refuses the tool when its parser or agent is made;
* native function calling (OpenAI, Anthropic) takes ``^[a-zA-Z0-9_-]{1,64}$``.  A tool
  whose name is outside it is sent under its *safe name* (:func:`native_name`: each
  ``.`` or ``/`` becomes ``__``, ``github/create_issue`` -> ``github__create_issue``; a
  name longer than 64 is cut and ends with a hash of the whole), and a call of the safe
  name is read back as the tool's own name.  Two tools with one safe name are refused
  (:func:`native_names`).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Final

from ..errors import ConfigError

__all__ = [
    "NATIVE_NAME_PATTERN",
    "TOOL_NAME_PATTERN",
    "XML_TOOL_NAME_PATTERN",
    "XML_TOOL_NAME_RULE",
    "check_tool_name",
    "is_native_name",
    "is_tool_name",
    "is_xml_tool_name",
    "native_name",
    "native_names",
    "tool_name_from_class",
]

TOOL_NAME_PATTERN: Final = r"[A-Za-z0-9_.\-/]{1,128}"
"""A valid tool name, as a regular expression (without anchors)."""

XML_TOOL_NAME_PATTERN: Final = r"[A-Za-z_][A-Za-z0-9_.\-]{0,127}"
"""A tool name that can be an XML tag (the xml dialect's calls)."""

NATIVE_NAME_PATTERN: Final = r"[a-zA-Z0-9_-]{1,64}"
"""A function name native function calling takes (OpenAI, Anthropic)."""

XML_TOOL_NAME_RULE: Final = "letters, digits, '_', '-' or '.', starting with a letter or '_'"
"""The rule of :data:`XML_TOOL_NAME_PATTERN`, in words."""

_TOOL_NAME: Final = re.compile(TOOL_NAME_PATTERN + r"\Z")
_XML_TOOL_NAME: Final = re.compile(XML_TOOL_NAME_PATTERN + r"\Z")
_NATIVE_NAME: Final = re.compile(NATIVE_NAME_PATTERN + r"\Z")
_NOT_NATIVE: Final = re.compile(r"[^a-zA-Z0-9_-]")
# Word boundaries of a CamelCase name: lower/digit -> upper ("ReadFile"), and the last
# capital of an acronym before a capitalised word ("HTTPGet" -> "HTTP_Get").
_WORD_BOUNDARY: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def is_tool_name(name: object) -> bool:
    """Whether ``name`` is a valid tool name.

    Example:
        >>> is_tool_name("read_file"), is_tool_name("weather.get"), is_tool_name("a b")
        (True, True, False)
    """
    return isinstance(name, str) and _TOOL_NAME.match(name) is not None


def is_xml_tool_name(name: object) -> bool:
    """Whether ``name`` is a tool name that can be an XML tag.

    Example:
        >>> is_xml_tool_name("weather.get"), is_xml_tool_name("github/create_issue")
        (True, False)
    """
    return isinstance(name, str) and _XML_TOOL_NAME.match(name) is not None


def is_native_name(name: object) -> bool:
    """Whether native function calling takes ``name`` as it is."""
    return isinstance(name, str) and _NATIVE_NAME.match(name) is not None


def check_tool_name(name: object) -> str:
    """Return ``name`` if it is a valid tool name.

    Raises:
        ConfigError: it is not (the message shows the rule).
    """
    if not is_tool_name(name):
        raise ConfigError(
            f"invalid tool name {name!r}: use 1-128 letters, digits, '_', '-', '.' or '/' "
            "(for example 'read_file' or 'github/create_issue')"
        )
    assert isinstance(name, str)
    return name


def native_name(name: str) -> str:
    """The name a tool is sent under to native function calling: its own when it can be.

    Example:
        >>> native_name("get_weather"), native_name("github/create_issue")
        ('get_weather', 'github__create_issue')
    """
    if _NATIVE_NAME.match(name):
        return name
    safe = _NOT_NATIVE.sub("__", name)
    if len(safe) > 64:
        digest = hashlib.sha256(name.encode()).hexdigest()[:8]
        safe = f"{safe[:55]}_{digest}"
    return safe


def native_names(names: Iterable[str]) -> dict[str, str]:
    """Each tool's name -> its :func:`native_name`, checked to name one tool each.

    Raises:
        ConfigError: two tools would be sent under one name.
    """
    found: dict[str, str] = {}
    owner: dict[str, str] = {}
    for name in names:
        safe = native_name(name)
        if safe in owner and owner[safe] != name:
            raise ConfigError(
                f"tools {owner[safe]!r} and {name!r} would both be sent to native function "
                f"calling as {safe!r}: rename one of them"
            )
        owner[safe] = name
        found[name] = safe
    return found


def tool_name_from_class(class_name: str) -> str:
    """The tool name of a class: its name in snake_case, acronyms kept whole.

    Example:
        >>> tool_name_from_class("ReadFile"), tool_name_from_class("HTTPGet")
        ('read_file', 'http_get')
    """
    return _WORD_BOUNDARY.sub("_", class_name).lower()
