"""Prompt templates in ``str.format`` syntax beside Jinja2 ones."""

from __future__ import annotations

import pytest

from stream_parser import llm_function
from stream_parser.errors import ConfigError
from stream_parser.testing import ScriptedModel

SYSTEM = "{function_description}\nReturn: {return_type_description}"
USER = "Here are the parameters:\n{parameters}"


def test_str_format_templates_are_filled_as_such() -> None:
    model = ScriptedModel(["3"])

    @llm_function(model, system_prompt_template=SYSTEM, user_prompt_template=USER)
    def count(word: str, letter: str) -> int:
        """Count how often the letter occurs in the word."""

    assert count("banana", "a") == 3
    system, user = (message["content"] for message in model.requests[0].messages)
    assert system.startswith("Count how often the letter occurs in the word.\nReturn: Reply")
    assert "int" in system
    assert user == "Here are the parameters:\nword: banana\nletter: a"
    assert "{" not in system + user


def test_every_variable_of_the_jinja_templates_is_there() -> None:
    model = ScriptedModel(["ok"])

    @llm_function(
        model,
        system_prompt_template=(
            "{function_description}|{parameters_description}|{return_type_description}"
            "|{return_type!s:>5}"
        ),
        user_prompt_template="{parameters}|{arguments}",
    )
    def echo(text: str, times: int = 2) -> str:
        """Echo the text."""

    echo("hi")
    system, user = (message["content"] for message in model.requests[0].messages)
    description, parameters, returns, return_type = system.split("|")
    assert description == "Echo the text."
    assert parameters == "text: str\ntimes: int"
    assert returns.startswith("Reply")
    assert return_type == "  str"
    assert user == "text: hi\ntimes: 2|{'text': 'hi', 'times': '2'}"


def test_jinja_templates_and_plain_text_stay_jinja() -> None:
    model = ScriptedModel(["a", "b"])

    @llm_function(
        model,
        system_prompt_template="{{ function_description }} {# a comment #}",
        user_prompt_template='Reply as JSON like {"a": 1}.',
    )
    def first(text: str) -> str:
        """Say something."""

    first("x")
    system, user = (message["content"] for message in model.requests[0].messages)
    assert system == "Say something. "
    assert user == 'Reply as JSON like {"a": 1}.'


def test_the_agents_templates_option_reads_str_format_too() -> None:
    model = ScriptedModel(["ok"])

    @llm_function(model, templates={"function_user": "Input: {parameters}"})
    def echo(text: str) -> str:
        """Echo the text."""

    echo("hi")
    assert model.requests[0].messages[1]["content"] == "Input: text: hi"


@pytest.mark.parametrize(
    ("system", "user", "message"),
    [
        ("{function_description.upper}", None, "attribute or index access"),
        (None, "{arguments[text]}", "attribute or index access"),
        ("{function_description}\n{examples}", None, "nothing fills the placeholder {examples}"),
        (
            "{function_description}\n{parameters}",
            None,
            "nothing fills the placeholder {parameters}",
        ),
        (None, "{parameters} {function_description}", "placeholder {function_description}"),
        ("{function_description} and {}", None, "positional"),
        ("{function_description} {0}", None, "positional"),
        ('{function_description} like {"a": 1}', None, "not a field of a variable"),
        ("{function_description} {", None, "not a valid str.format template"),
        ("{function_description} {return_type:{width}}", None, "placeholder {width}"),
    ],
)
def test_a_placeholder_nothing_fills_is_refused_when_decorated(
    system: str | None, user: str | None, message: str
) -> None:
    model = ScriptedModel([])
    with pytest.raises(ConfigError, match=message.replace("{", r"\{").replace("[", r"\[")):
        llm_function(model, system_prompt_template=system, user_prompt_template=user)
    assert model.requests == []
