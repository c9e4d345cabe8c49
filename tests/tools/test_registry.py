"""as_registry: every accepted form of a tool set, the core's hook, names, one error wording."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from stream_parser.agent.runner import tool_registry
from stream_parser.core._toolset import tool_models
from stream_parser.core.xml_tool_parser import XMLToolParser
from stream_parser.errors import ConfigError
from stream_parser.tools import Tool, ToolRegistry, as_registry, tool


def read_file(path: str) -> str:
    """Read a file."""
    return path


@tool
def echo(text: str) -> str:
    """Echo."""
    return text


class HTTPGet(BaseModel):
    """Fetch a URL."""

    url: str


def test_forms() -> None:
    registry = ToolRegistry([echo])
    assert as_registry(registry) is registry
    made = as_registry([read_file, echo, HTTPGet])
    assert list(made) == ["read_file", "echo", "http_get"]
    assert made["http_get"] is HTTPGet
    assert isinstance(made.get_tool("read_file"), Tool)
    assert list(as_registry(t for t in [echo])) == ["echo"]
    assert list(as_registry([])) == []


def test_a_mapping_key_beats_the_own_name() -> None:
    made = as_registry({"read": read_file, "say": echo, "get": HTTPGet})
    assert list(made) == ["read", "say", "get"]
    assert made.get_tool("say").fn is echo.fn
    assert echo.name == "echo"  # the original tool is not renamed


@pytest.mark.parametrize(
    ("tools", "message"),
    [
        (read_file, r"pass \[read_file\]"),
        (echo, r"pass \[echo\]"),
        ("read_file", "e.g. \\[read_file, WriteToFile\\]"),
        (42, "tools cannot be a int"),
        ([42], "not a tool, function or Pydantic model class"),
        ({"bad name": read_file}, "invalid tool name"),
        ({1: read_file}, "invalid tool name"),
        ([echo, echo], "duplicate tool name 'echo'"),
    ],
)
def test_other_forms_are_config_errors(tools: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        as_registry(tools)


def test_registered_with_the_core() -> None:
    models = tool_models([read_file, HTTPGet])
    assert isinstance(models, ToolRegistry)
    assert dict(models) == {"read_file": models["read_file"], "http_get": HTTPGet}
    with pytest.raises(ConfigError, match="tools must be a collection"):
        tool_models(read_file)


def test_agent_registry_takes_the_same_forms() -> None:
    assert list(tool_registry({"read": read_file})) == ["read"]
    with pytest.raises(ConfigError, match="schema-only"):
        tool_registry([HTTPGet])
    with pytest.raises(ConfigError, match="tools must be a collection"):
        tool_registry(read_file)  # type: ignore[arg-type]


def test_class_names_become_tool_names_by_one_rule() -> None:
    assert Tool.from_model(HTTPGet).name == "http_get"
    assert ToolRegistry([HTTPGet]).tools[0].name == "http_get"
    with pytest.raises(ConfigError, match="invalid tool name"):
        Tool.from_model(HTTPGet, name="http get")
    with pytest.raises(ConfigError, match="invalid tool name"):
        echo.with_name("2fa!")


def test_invalid_params_are_worded_once() -> None:
    """The parser's invalid_params message and the tool's result text are the same."""

    @tool
    def add(a: int, b: int = 0) -> int:
        return a + b

    result = add.execute({"a": "x", "c": 1})
    built = XMLToolParser({"add": add.args_model}).build_instance("add", {"a": "x"})
    assert result.text == (
        "Invalid parameters for tool 'add' (2 errors); fix them and call the tool again:\n"
        "- a: Input should be a valid integer, unable to parse string as an integer"
        ' (got "x")\n'
        "- c: Extra inputs are not permitted (got 1)\n"
        "Known parameters: a, b."
    )
    assert built.message == (
        "Invalid parameters for tool 'add' (1 error); fix them and call the tool again:\n"
        "- a: Input should be a valid integer, unable to parse string as an integer"
        ' (got "x")'
    )
