"""``parse --tools FILE.json``: tool descriptions from other software, run as a user would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .command import events, run

WEATHER: dict[str, Any] = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    "required": ["city"],
}
OPENAI = [
    {
        "type": "function",
        "function": {"name": "get_weather", "description": "Weather.", "parameters": WEATHER},
    }
]
ANTHROPIC = [{"name": "get_weather", "description": "Weather.", "input_schema": WEATHER}]
MCP_RESULT = {"tools": [{"name": "get_weather", "inputSchema": WEATHER}], "nextCursor": None}

REPLY = "Looking.\n<get_weather>\n<city>Oslo</city>\n<days>3</days>\n</get_weather>"
HERMES = (
    '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Oslo", "days": 3}}\n</tool_call>'
)


@pytest.mark.parametrize(
    "content", [OPENAI, ANTHROPIC, MCP_RESULT], ids=["openai", "anthropic", "mcp"]
)
def test_a_json_tool_list_is_read(tmp_path: Path, content: object) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps(content), encoding="utf-8")
    found = [
        e
        for e in events(run("parse", "-", "--tools", tools, input=REPLY.encode()))
        if e["kind"] == "tool_call"
    ]
    assert [(c["tool_name"], c["tool_instance"]) for c in found] == [
        ("get_weather", {"city": "Oslo", "days": 3})
    ]
    hermes = events(
        run("parse", "-", "--tools", tools, "--dialect", "hermes", input=HERMES.encode())
    )
    assert [e["tool_name"] for e in hermes if e["kind"] == "tool_call"] == ["get_weather"]


def test_invalid_json_is_one_line_with_its_line_and_column(tmp_path: Path) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text('[\n  {"name": "a",\n   "input_schema": {}\n  "x": 1}\n]\n', encoding="utf-8")
    result = run("parse", "-", "--tools", tools, input=b"hi")
    assert result.returncode == 2
    assert result.stdout == b""
    assert result.stderr.decode() == (
        f"stream-parser: error: tools file {tools} is not valid JSON: "
        "Expecting ',' delimiter at line 4, column 3\n"
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"name": "a"}', "must hold a list of tool descriptions"),
        ('[{"type": "web_search_20250305", "name": "web_search"}]', "runs on Anthropic's side"),
        ('[{"name": "a", "input_schema": {"type": "nothing"}}]', "invalid JSON Schema at #/type"),
        ("[]", "holds no tools"),
    ],
)
def test_a_json_file_that_is_no_tool_list_is_one_error_line(
    tmp_path: Path, content: str, message: str
) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(content, encoding="utf-8")
    result = run("parse", "-", "--tools", tools, input=b"hi")
    assert result.returncode == 2
    err = result.stderr.decode()
    assert err.startswith("stream-parser: error: ") and err.count("\n") == 1
    assert message in err
