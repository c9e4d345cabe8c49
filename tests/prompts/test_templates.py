"""The prompt templates: every one in every language, strict variables, a sandbox."""

from __future__ import annotations

from typing import Any

import pytest

from stream_parser.agent import FunctionCallAgent, ReActAgent
from stream_parser.errors import ConfigError
from stream_parser.prompts.templating import LANGUAGES, TEMPLATE_NAMES, render, template_source
from stream_parser.testing import NativeCall, ScriptedModel
from stream_parser.tools import tool

# Every variable of every template, each holding Jinja syntax: data is never run.
JINJA = "{{ 7 * 7 }} {% if true %}x{% endif %}"
VARIABLES: dict[str, dict[str, Any]] = {
    "call_rules": {},
    "gemma4_instructions": {},
    "seed_oss_instructions": {},
    "phi4_mini_instructions": {},
    "internlm_instructions": {},
    "minimax_m2_instructions": {},
    "pythonic_instructions": {},
    "glm_instructions": {},
    "gpt_oss_instructions": {},
    "hermes_instructions": {},
    "hunyuan_instructions": {},
    "deepseek_instructions": {},
    "kimi_instructions": {},
    "mistral_instructions": {},
    "granite_instructions": {},
    "llama_instructions": {},
    "longcat_instructions": {},
    "ernie_instructions": {},
    "qwen3_coder_instructions": {},
    "xlam_instructions": {},
    "xml_instructions": {},
    "xml_preface": {},
    "tools_heading": {},
    "native_cancelled": {},
    "tool_heading": {"name": JINJA},
    "parameters_block": {"description": JINJA},
    "returns_line": {"description": JINJA},
    "example_call_block": {"call": JINJA},
    "native_error": {"code": "invalid_params", "text": JINJA},
    "images_note": {"name": "crop", "call_id": JINJA},
    "observation": {"label": "crop", "status": "error", "code": "x", "text": JINJA},
    "context": {
        "reasoning": JINJA,
        "steps": [{"name": "search", "description": "Search.", "output": JINJA}],
        "step_history_size": 3,
    },
    "agent_note": {
        "kind": "timeout",
        "name": JINJA,
        "seconds": "2",
        "cancelled": True,
        "limit": 3,
        "cut": 4,
    },
    "parse_error": {
        "error_type": "unknown_tool",
        "tool": JINJA,
        "message": JINJA,
        "details": [{"tool": JINJA, "closest": [JINJA]}],
    },
    "user_prompt": {"question": JINJA, "time": "2026-01-02T03:04:05", "context": JINJA},
    "function_system": {
        "function_description": JINJA,
        "parameters_description": JINJA,
        "return_type_description": JINJA,
        "return_type": "int",
        "parameters": [{"name": "a", "type": "int"}],
    },
    "function_returns": {
        "kind": "json",
        "type": JINJA,
        "details": "",
        "choices": [],
        "shape": JINJA,
        "example": JINJA,
    },
    "function_user": {"parameters": JINJA, "arguments": {"a": JINJA}},
    "function_retry": {"problem": JINJA},
    "function_empty": {},
    "final_answer": {},
    "function_continue": {"problem": JINJA, "number": 3},
    "chat_tools": {"tools": [{"name": JINJA, "description": JINJA}]},
}


def test_every_template_is_listed() -> None:
    assert set(VARIABLES) == set(TEMPLATE_NAMES)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_every_template_renders_with_its_variables(name: str, language: str) -> None:
    text = render(name, language, **VARIABLES[name])
    assert text and not text.endswith("\n")
    if VARIABLES[name] and name != "returns_line":
        assert JINJA in text  # verbatim: the data was not rendered
    assert "49" not in text


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", [name for name, values in VARIABLES.items() if values])
def test_a_missing_variable_is_an_error_naming_it(name: str, language: str) -> None:
    values = dict(VARIABLES[name])
    missing = sorted(values)[-1]
    del values[missing]
    with pytest.raises(ConfigError, match=f"{name}.*'{missing}' is undefined"):
        render(name, language, **values)


def test_languages_differ_and_unknown_language_is_an_error() -> None:
    assert render("tools_heading", "en") == "# Tools"
    assert render("tools_heading", "zh") == "# 工具"
    with pytest.raises(ConfigError, match="language"):
        render("tools_heading", "fr")
    with pytest.raises(ConfigError, match="no prompt template"):
        render("nothing", "en")


def test_observation_statuses_in_both_languages() -> None:
    assert render(
        "observation", "en", label="a", status="not_executed", code="denied", text="t"
    ) == ("[a] not executed (denied):\nt")
    assert render("observation", "zh", label="a", status="cancelled", code=None, text="") == (
        "[a] 已取消:\n调用在完成之前被取消。"
    )


def test_replacement_templates_by_name_or_text() -> None:
    by_name = {"tools_heading": "zh/tools_heading"}
    assert render("tools_heading", "en", templates=by_name) == "# 工具"
    by_text = {"tool_heading": "### {{ name | upper }}"}
    assert render("tool_heading", "en", templates=by_text, name="{{x}}") == "### {{X}}"
    assert template_source("tool_heading", "zh") == "## {{ name }}\n"


def test_replacement_templates_are_sandboxed() -> None:
    unsafe = {"tool_heading": "{{ name.__class__.__mro__ }}"}
    with pytest.raises(ConfigError, match="unsafe"):
        render("tool_heading", "en", templates=unsafe, name="x")
    with pytest.raises(ConfigError, match="tool_heading"):
        render("tool_heading", "en", templates={"tool_heading": "{{ name"}, name="x")


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def test_react_agent_speaks_chinese() -> None:
    model = ScriptedModel(["<add><a>2</a><b>3</b></add>", "5"])
    agent = ReActAgent(model, [add], language="zh")
    assert agent.system_prompt().startswith("# 工具\n\n调用工具时")
    run = agent.run_sync("2 + 3?")
    assert run.messages[-2]["content"] == "[add] 结果:\n5"
    assert "## add" in ReActAgent(model, [add], dialect="hermes", language="zh").system_prompt()


def test_function_call_agent_speaks_chinese() -> None:
    model = ScriptedModel([[NativeCall("nope", {})], "ok"])
    run = FunctionCallAgent(model, [add], language="zh").run_sync("?")
    assert run.messages[2]["content"].startswith("错误 (unknown_tool)")


def test_agents_reject_an_unknown_language() -> None:
    with pytest.raises(ConfigError, match="language"):
        ReActAgent(ScriptedModel([]), [add], language="fr")
