"""Tool names as sources write them: ``weather.get``, ``github/create_issue``.

Every format that can carry a name reads it; one that cannot (an XML tag holds no ``/``)
is refused by a parser or an agent reading it, unless the calls come natively; native
function calling sends a safe name and reads calls of it back as the tool's own.
"""

from __future__ import annotations

from typing import Any

import pytest

from stream_parser import (
    FunctionCallAgent,
    ReActAgent,
    StreamToolParser,
    llm_function,
    parse_stream,
)
from stream_parser.core.chunks import ChatDelta, ToolCallDelta
from stream_parser.core.config import ParserConfig
from stream_parser.core.events import ToolCallEvent
from stream_parser.errors import ConfigError
from stream_parser.schema.names import (
    check_tool_name,
    is_xml_tool_name,
    native_name,
    native_names,
)
from stream_parser.testing import NativeCall, ScriptedModel
from stream_parser.tools import Tool, ToolRegistry

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"title": {"type": "string"}},
    "required": ["title"],
}


def registry(*names: str) -> ToolRegistry:
    return ToolRegistry(
        [{"name": name, "inputSchema": SCHEMA} for name in names],
        handlers={name: (lambda args, name=name: f"{name}: {args['title']}") for name in names},
    )


def replies(name: str) -> dict[str, str]:
    return {
        "xml": f"<{name}>\n<title>Bug</title>\n</{name}>",
        "hermes": (
            f'<tool_call>\n{{"name": "{name}", "arguments": {{"title": "Bug"}}}}\n</tool_call>'
        ),
        "qwen3_coder": (
            f"<tool_call>\n<function={name}>\n<parameter=title>\nBug\n</parameter>\n"
            "</function>\n</tool_call>"
        ),
    }


def calls(reply: str, tools: object, dialect: str) -> list[ToolCallEvent]:
    config = ParserConfig(dialect=dialect)
    return [e for e in parse_stream([reply], tools, config=config) if isinstance(e, ToolCallEvent)]


def test_the_rule_is_mcps_with_slashes() -> None:
    for name in ("read_file", "weather.get", "github/create_issue", "2fa", "a" * 128):
        assert check_tool_name(name) == name
    for bad in ("", "a b", "tool>", "a:b", "a" * 129, "città"):
        with pytest.raises(ConfigError, match="invalid tool name"):
            check_tool_name(bad)
    assert is_xml_tool_name("weather.get") and not is_xml_tool_name("github/create_issue")
    assert not is_xml_tool_name("2fa")  # an XML tag starts with a letter or "_"


def test_safe_names() -> None:
    assert native_name("get_weather") == "get_weather"
    assert native_name("weather.get") == "weather__get"
    assert native_name("github/create_issue") == "github__create_issue"
    long = "server/" + "x" * 80
    assert len(native_name(long)) == 64 and native_name(long) != native_name(long + "y")
    with pytest.raises(ConfigError, match=r"would both be sent .* as 'a__b'"):
        native_names(["a.b", "a__b"])


@pytest.mark.parametrize("dialect", ["xml", "hermes", "qwen3_coder"])
def test_a_dotted_name_parses_in_every_dialect(dialect: str) -> None:
    found = calls(replies("weather.get")[dialect], registry("weather.get"), dialect)
    assert [c.tool_name for c in found] == ["weather.get"]


@pytest.mark.parametrize("dialect", ["hermes", "qwen3_coder"])
def test_a_slashed_name_parses_where_the_format_carries_it(dialect: str) -> None:
    tools = registry("github/create_issue")
    found = calls(replies("github/create_issue")[dialect], tools, dialect)
    assert [c.tool_name for c in found] == ["github/create_issue"]
    assert tools.execute(found[0].tool_name, found[0].tool_instance).text == (
        "github/create_issue: Bug"
    )
    ReActAgent(ScriptedModel(["x"]), tools, dialect=dialect)  # accepted


@pytest.mark.parametrize("dialect", ["xml", "mistral"])
@pytest.mark.parametrize("where", ["agent", "parser", "parse_stream"])
def test_a_dialect_that_cannot_carry_a_name_refuses_the_tool(dialect: str, where: str) -> None:
    tools = registry("weather_now", "github/create_issue")
    with pytest.raises(ConfigError) as caught:
        if where == "agent":
            ReActAgent(ScriptedModel(["x"]), tools, dialect=dialect)
        elif where == "parser":
            StreamToolParser(tools, config=ParserConfig(dialect=dialect))
        else:
            list(parse_stream(["hi"], tools, config=ParserConfig(dialect=dialect)))
    message = str(caught.value)
    assert message.startswith(
        f"tool 'github/create_issue' cannot be called in the {dialect} dialect: its format needs"
    )
    assert "native_tools=True" in message


def test_a_parser_of_several_dialects_refuses_what_one_of_them_cannot_carry() -> None:
    with pytest.raises(ConfigError, match="cannot be called in the xml dialect"):
        StreamToolParser(
            registry("github/create_issue"), config=ParserConfig(dialect=("hermes", "xml"))
        )


def test_native_tools_reads_such_a_name_from_native_calls_only() -> None:
    # The xml text format cannot name the tool; its native calls still come through.
    tools = registry("github/create_issue")
    config = ParserConfig(native_tools=True)
    reply = replies("github/create_issue")["xml"]
    for pieces in ([reply], list(reply), *([reply[:i], reply[i:]] for i in range(len(reply)))):
        events = list(parse_stream(pieces, tools, config=config))
        assert not [e for e in events if isinstance(e, ToolCallEvent)]
        assert "".join(getattr(e, "text", "") for e in events) == reply  # nothing lost
    native = ChatDelta(
        tool_calls=(
            ToolCallDelta(
                index=0, id="c1", name="github/create_issue", arguments='{"title": "Bug"}'
            ),
        ),
        finish_reason="tool_calls",
    )
    found = [
        e for e in parse_stream([native], tools, config=config) if isinstance(e, ToolCallEvent)
    ]
    assert [(c.tool_name, c.call_id) for c in found] == [("github/create_issue", "c1")]


def test_function_call_agent_takes_such_a_name_with_its_xml_parser() -> None:
    agent = FunctionCallAgent(ScriptedModel(["x"]), registry("github/create_issue"))
    assert agent.parser_config.dialects == ("xml",) and agent.parser_config.native_tools
    StreamToolParser(agent.tools, config=agent.parser_config)  # accepted


def test_native_calling_sends_safe_names_and_reads_them_back() -> None:
    tools = registry("github/create_issue", "weather.get", "plain")
    assert [t["function"]["name"] for t in tools.to_openai()] == [
        "github__create_issue",
        "weather__get",
        "plain",
    ]
    assert [t["name"] for t in tools.to_anthropic()] == [
        "github__create_issue",
        "weather__get",
        "plain",
    ]
    assert tools.to_mcp()[0]["name"] == "github/create_issue"  # MCP carries the name itself
    sent = "without exact=True it is sent as 'github__create_issue'"
    with pytest.raises(ConfigError, match=sent):
        tools.to_openai(exact=True)
    assert registry("plain").to_openai(exact=True)[0]["function"]["name"] == "plain"

    model = ScriptedModel(
        [
            [
                NativeCall("github__create_issue", {"title": "Bug"}),
                NativeCall("weather__get", {"title": "Oslo"}),
            ],
            "Done.",
        ]
    )
    run = FunctionCallAgent(model, tools).run_sync("File it.")
    assert run.output == "Done."
    found = [e for e in run.events if isinstance(e, ToolCallEvent)]
    assert [e.tool_name for e in found] == ["github/create_issue", "weather.get"]
    history = model.requests[1].messages
    # The history keeps the names the model called, as the provider requires.
    assert [c["function"]["name"] for c in history[-3]["tool_calls"]] == [
        "github__create_issue",
        "weather__get",
    ]
    assert [m["content"] for m in history[-2:]] == ["github/create_issue: Bug", "weather.get: Oslo"]


def test_two_tools_with_one_safe_name_are_refused_for_native_calling() -> None:
    tools = registry("a.b", "a__b")
    with pytest.raises(ConfigError, match=r"'a\.b' and 'a__b' would both be sent"):
        tools.to_openai()
    with pytest.raises(ConfigError, match="would both be sent"):
        FunctionCallAgent(ScriptedModel(["x"]), tools)


def test_llm_function_native_reads_a_safe_name_back() -> None:
    model = ScriptedModel([[NativeCall("github__create_issue", {"title": "Crash"})], "filed"])

    @llm_function(model, toolkit=registry("github/create_issue"), protocol="native")
    def report(problem: str) -> str:
        """File the problem."""

    assert report("it crashes") == "filed"
    assert model.requests[0].tools is not None
    assert model.requests[0].tools[0]["function"]["name"] == "github__create_issue"
    assert model.requests[1].messages[-1]["content"] == "github/create_issue: Crash"


def test_a_python_tool_may_have_such_a_name() -> None:
    def get(city: str) -> str:
        return city

    item = Tool(get, name="weather.get")
    assert item.to_openai()["function"]["name"] == "weather__get"
    assert item.native_name() == "weather__get"


def test_a_decorated_function_speaking_xml_refuses_such_a_tool_when_decorated() -> None:
    with pytest.raises(ConfigError, match="cannot be called in the xml dialect"):

        @llm_function(ScriptedModel(["x"]), toolkit=registry("github/create_issue"), protocol="xml")
        def report(problem: str) -> str:
            """File the problem."""
