"""The agents' options are declared once (``AgentOptions``) and checked by name and value."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import stream_parser.agent
import stream_parser.decorators
from stream_parser.agent import (
    AgentConfig,
    AgentOptions,
    Deny,
    FunctionCallAgent,
    ReActAgent,
)
from stream_parser.agent.options import agent_config
from stream_parser.decorators import llm_chat, llm_function
from stream_parser.errors import ConfigError
from stream_parser.testing import NativeCall, ScriptedModel
from stream_parser.tools import tool

ROOT = Path(__file__).resolve().parent.parent.parent
OPTIONS = set(AgentOptions.__annotations__)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _functions(module: Any) -> Iterator[tuple[str, Callable[..., Any]]]:
    """Every function and method written in ``module`` (not imported into it)."""
    for name, value in vars(module).items():
        if inspect.isfunction(value) and value.__module__ == module.__name__:
            yield name, value
        elif inspect.isclass(value) and value.__module__ == module.__name__:
            for attribute, member in vars(value).items():
                member = getattr(member, "__func__", member)  # classmethod, staticmethod
                if inspect.isfunction(member) and member.__module__ == module.__name__:
                    yield f"{name}.{attribute}", member


def _modules(package: Any) -> Iterator[Any]:
    yield package
    for info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
        yield importlib.import_module(info.name)


# The functions that write text for the model take the language and templates they write
# with: values handed down from the config, not options declared again.
RENDERERS = {"stream_parser.decorators.prompt", "stream_parser.agent.reply"}
RENDERED_WITH = {"language", "templates"}


def test_no_signature_spells_out_an_option() -> None:
    found = []
    checked = 0
    for package in (stream_parser.agent, stream_parser.decorators):
        for module in _modules(package):
            for name, function in _functions(module):
                if name.startswith("AgentConfig."):
                    continue  # the record of the options: its fields are their names
                checked += 1
                spelled = OPTIONS & set(inspect.signature(function).parameters)
                if module.__name__ in RENDERERS or name == "tools_prompt":
                    spelled -= RENDERED_WITH
                if spelled:
                    found.append(f"{module.__name__}.{name}: {sorted(spelled)}")
    assert checked > 100  # the walk saw the modules' functions
    assert found == []


def test_the_agents_and_decorators_take_the_options() -> None:
    for function in (FunctionCallAgent.__init__, ReActAgent.__init__, llm_function, llm_chat):
        parameter = inspect.signature(function).parameters["options"]
        assert parameter.kind is inspect.Parameter.VAR_KEYWORD
        assert "Unpack[AgentOptions]" in str(parameter.annotation)


def test_the_record_has_a_field_for_each_option() -> None:
    assert [field.name for field in dataclasses.fields(AgentConfig)] == list(
        AgentOptions.__annotations__
    )


def test_the_docs_table_names_the_options() -> None:
    text = (ROOT / "docs" / "agent.md").read_text(encoding="utf-8")
    section = text.split("\n## Options\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(\w+)` \|", section, re.M)
    assert rows == list(AgentOptions.__annotations__)


def test_the_docstring_describes_each_option() -> None:
    doc = inspect.getdoc(AgentOptions) or ""
    described = re.findall(r"^    (\w+): ", doc, re.M)
    assert described == list(AgentOptions.__annotations__)


@pytest.mark.parametrize(
    "build",
    [
        lambda **kw: FunctionCallAgent(ScriptedModel([]), [add], **kw),
        lambda **kw: ReActAgent(ScriptedModel([]), [add], **kw),
        lambda **kw: llm_function(ScriptedModel([]), **kw),
        lambda **kw: llm_chat(ScriptedModel([]), **kw),
    ],
    ids=["FunctionCallAgent", "ReActAgent", "llm_function", "llm_chat"],
)
def test_an_unknown_option_names_the_closest(build: Callable[..., object]) -> None:
    with pytest.raises(
        ConfigError, match="unknown option 'max_iteration'; did you mean 'max_iterations'"
    ):
        build(max_iteration=3)
    with pytest.raises(
        ConfigError, match="unknown option 'tool_timout'; did you mean 'tool_timeout'"
    ):
        build(tool_timout=3)


@pytest.mark.parametrize("agent", [FunctionCallAgent, ReActAgent])
def test_an_agent_lists_its_options_when_none_is_close(agent: Callable[..., object]) -> None:
    # (The decorators pass such a keyword to the model: see tests/compat.)
    with pytest.raises(ConfigError, match=r"unknown option 'zzz' \(the options: .*clock"):
        agent(ScriptedModel([]), [add], zzz=1)


def test_defaults_and_checks() -> None:
    config = FunctionCallAgent(ScriptedModel([]), []).config
    assert config == AgentConfig()
    assert config.max_iterations == 10 and config.max_result_chars == 20_000
    assert config.model_options == {} and callable(config.clock)
    assert agent_config("x", {"model_options": None, "clock": None}) == AgentConfig()
    for options, message in [
        ({"max_iterations": 0}, "max_iterations must be >= 1"),
        ({"max_iterations": True}, "max_iterations must be an int"),
        ({"max_tool_calls": -1}, "max_tool_calls must be >= 0"),
        ({"tool_timeout": 0}, "tool_timeout must be a number"),
        ({"approve": 3}, "approve must be a callable"),
        ({"language": "fr"}, "fr"),
        ({"instructions_role": "tool"}, "instructions_role"),
        ({"model_options": {"concurrent_tools": True}}, "concurrent_tools is an agent"),
        ({"parser_config": {}}, "parser_config must be a ParserConfig"),
        ({"clock": "now"}, "clock must be a callable"),
        ({"system_prompt": 3}, "system_prompt must be a string"),
    ]:
        with pytest.raises(ConfigError, match=message):
            agent_config("FunctionCallAgent", options)


def test_the_record_is_frozen_and_copies_what_it_is_given() -> None:
    given = {"temperature": 0.5}
    config = agent_config("x", {"model_options": given})
    given["temperature"] = 1.0
    assert config.model_options == {"temperature": 0.5}
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.max_iterations = 3  # type: ignore[misc]
    assert AgentConfig(**config.options()) == config


def test_the_decorators_pass_every_option_to_their_agent() -> None:
    asked = []

    def deny(call: Any) -> Deny:
        asked.append(call.tool_name)
        return Deny("not today")

    model = ScriptedModel([[NativeCall("add", {"a": 1, "b": 2})], "3"])

    @llm_function(model, toolkit=[add], approve=deny, max_result_chars=100)
    def total(a: int, b: int) -> int:
        """Add a and b."""

    assert total(1, 2) == 3
    assert asked == ["add"]
    tool_message = model.requests[1].messages[-1]
    assert tool_message["role"] == "tool" and "not today" in str(tool_message["content"])


def test_the_decorators_refuse_a_system_prompt() -> None:
    with pytest.raises(ConfigError, match="docstring is the instructions"):
        llm_function(ScriptedModel([]), system_prompt="Be brief.")
    with pytest.raises(ConfigError, match="docstring is the instructions"):
        llm_chat(ScriptedModel([]), system_prompt="Be brief.")


@pytest.mark.slow
def test_mypy_flags_an_unknown_option_on_the_lowest_python(tmp_path: Path) -> None:
    source = tmp_path / "uses_options.py"
    source.write_text(
        textwrap.dedent(
            """
            from stream_parser.agent import FunctionCallAgent, ReActAgent
            from stream_parser.decorators import llm_function
            from stream_parser.testing import ScriptedModel

            FunctionCallAgent(ScriptedModel([]), [], max_iteration=3)
            ReActAgent(ScriptedModel([]), [], max_iterations="3")
            llm_function(ScriptedModel([]), tool_timeout=2.0, languag="en")
            FunctionCallAgent(ScriptedModel([]), [], max_iterations=3, tool_timeout=1.5)
            """
        )
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--python-version",
            "3.10",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-error-summary",
            str(source),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in errors] == ["6", "7", "8"], done.stdout
    assert 'Unexpected keyword argument "max_iteration"' in errors[0]
    assert 'did you mean "max_iterations"' in errors[0]
    assert '"max_iterations"' in errors[1] and 'incompatible type "str"' in errors[1]
    assert 'Unexpected keyword argument "languag"' in errors[2]
