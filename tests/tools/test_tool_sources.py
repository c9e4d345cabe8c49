"""Tools from other software's tool lists: OpenAI, Anthropic and MCP descriptions.

Each form is read into a tool whose JSON Schema is its argument model; the parser reads
its calls in every dialect, the agents and the decorators run them through handlers,
and the schema goes back out unchanged.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from stream_parser import FunctionCallAgent, ReActAgent, llm_chat, llm_function, parse_stream
from stream_parser.core.config import ParserConfig
from stream_parser.core.events import ToolCallEvent
from stream_parser.errors import ConfigError
from stream_parser.testing import NativeCall, ScriptedModel
from stream_parser.tools import Tool, ToolRegistry, as_registry
from tests.schema.json_schema_corpus import mcp_tool_lists

WEATHER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name."},
        "days": {"type": "integer", "minimum": 1, "description": "How many days."},
        "units": {"enum": ["celsius", "fahrenheit"], "default": "celsius"},
    },
    "required": ["city"],
    "additionalProperties": False,
}
DESCRIPTION = "Get the weather forecast."


class McpToolV1(BaseModel):
    """Stands for the mcp 1.x SDK's ``Tool``: camelCase fields, read by their aliases."""

    model_config = ConfigDict(populate_by_name=True)

    name: str
    description: str | None = None
    input_schema: dict[str, Any] = Field(alias="inputSchema")
    output_schema: dict[str, Any] | None = Field(default=None, alias="outputSchema")


class McpToolV2:
    """Stands for an object read by attribute only, as mcp 2.x names them."""

    def __init__(self, name: str, description: str, input_schema: dict[str, Any]) -> None:
        self.name = name
        self.description = description
        self.input_schema = input_schema


def forms() -> dict[str, object]:
    """Every accepted description of the same tool, by source."""
    return {
        "openai": {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": DESCRIPTION,
                "parameters": WEATHER,
                "strict": False,
            },
        },
        "responses": {
            "type": "function",
            "name": "get_weather",
            "description": DESCRIPTION,
            "parameters": WEATHER,
        },
        "bare": {"name": "get_weather", "description": DESCRIPTION, "parameters": WEATHER},
        "anthropic": {"name": "get_weather", "description": DESCRIPTION, "input_schema": WEATHER},
        "mcp": {
            "name": "get_weather",
            "title": "Weather",
            "description": DESCRIPTION,
            "inputSchema": WEATHER,
            "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": True},
        },
        "mcp_sdk_1": McpToolV1(name="get_weather", description=DESCRIPTION, inputSchema=WEATHER),
        "mcp_sdk_2": McpToolV2("get_weather", DESCRIPTION, WEATHER),
        "from_json_schema": Tool.from_json_schema("get_weather", WEATHER, description=DESCRIPTION),
    }


FORMS = list(forms())

REPLIES = {
    "xml": "Looking.\n<get_weather>\n<city>Oslo</city>\n<days>3</days>\n</get_weather>",
    "hermes": (
        'Looking.\n<tool_call>\n{"name": "get_weather", "arguments": '
        '{"city": "Oslo", "days": "3"}}\n</tool_call>'
    ),
    "qwen3_coder": (
        "Looking.\n<tool_call>\n<function=get_weather>\n<parameter=city>\nOslo\n</parameter>\n"
        "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"
    ),
}


def calls(reply: str, tools: object, dialect: str) -> list[ToolCallEvent]:
    config = None if dialect == "xml" else ParserConfig(dialect=dialect)
    chunks = [reply[i : i + 5] for i in range(0, len(reply), 5)]
    return [e for e in parse_stream(chunks, tools, config=config) if isinstance(e, ToolCallEvent)]


@pytest.mark.parametrize("dialect", list(REPLIES))
@pytest.mark.parametrize("form", FORMS)
def test_every_form_parses_in_every_dialect(form: str, dialect: str) -> None:
    found = calls(REPLIES[dialect], [forms()[form]], dialect)
    assert [c.tool_name for c in found] == ["get_weather"]
    args = found[0].tool_instance.model_dump(by_alias=True, exclude_unset=True)
    assert args == {"city": "Oslo", "days": 3}  # "3" converted by the schema


@pytest.mark.parametrize("form", FORMS)
def test_every_form_describes_the_same_tool(form: str) -> None:
    registry = ToolRegistry([forms()[form]])
    item = registry.get_tool("get_weather")
    assert item.description == DESCRIPTION
    assert item.fn is None  # schema-only until given a handler
    assert registry.to_anthropic() == [
        {"name": "get_weather", "description": DESCRIPTION, "input_schema": WEATHER}
    ]
    assert item.param_descriptions == {"city": "City name.", "days": "How many days."}


def test_the_schema_travels_unchanged() -> None:
    mcp = {**forms()["mcp"], "name": "weather"}  # type: ignore[dict-item]
    registry = ToolRegistry([forms()["openai"], mcp])
    # Each registered schema is sent as it was given (not regenerated), strict included.
    openai = registry.to_openai()
    assert openai[0] == forms()["openai"]
    assert "strict" not in openai[1]["function"]
    assert openai[1]["function"]["parameters"] == WEATHER
    assert registry.to_mcp()[1] == mcp
    # What is handed back is a copy: changing it changes nothing.
    openai[0]["function"]["parameters"]["properties"].clear()
    assert registry.to_openai()[0] == forms()["openai"]


def test_the_schema_given_is_copied() -> None:
    schema = copy.deepcopy(WEATHER)
    registry = ToolRegistry([{"name": "get_weather", "input_schema": schema}])
    schema["properties"].clear()
    assert registry.to_anthropic()[0]["input_schema"] == WEATHER


def test_a_missing_description_is_the_schemas_own() -> None:
    schema = {**WEATHER, "description": "From the schema."}
    assert ToolRegistry([{"name": "w", "inputSchema": schema}]).get_tool("w").description == (
        "From the schema."
    )
    assert Tool.from_json_schema("w", WEATHER).description == ""


def test_an_openai_function_without_parameters_takes_none() -> None:
    registry = as_registry([{"type": "function", "function": {"name": "now"}}])
    found = calls("<now>\n</now>", registry, "xml")
    assert [c.tool_name for c in found] == ["now"]
    assert registry.to_openai()[0]["function"]["parameters"] == {
        "type": "object",
        "properties": {},
    }


# --- handlers ---------------------------------------------------------------------------


def test_a_handler_gets_the_keys_the_model_wrote_by_the_schemas_names() -> None:
    seen: list[dict[str, Any]] = []

    def weather(args: dict[str, Any]) -> str:
        seen.append(args)
        return f"{args['city']}: sunny"

    schema = {
        "type": "object",
        "properties": {"from": {"type": "integer"}, **WEATHER["properties"]},
    }
    registry = ToolRegistry(
        [{"name": "get_weather", "input_schema": schema}], handlers={"get_weather": weather}
    )
    found = calls("<get_weather><city>Oslo</city><from>2</from></get_weather>", registry, "xml")
    result = registry.execute("get_weather", found[0].tool_instance)
    assert result.text == "Oslo: sunny"
    # No default added ("units"), "days" not invented; "from" under the schema's name.
    assert seen == [{"city": "Oslo", "from": 2}]


def test_an_async_handler_runs() -> None:
    async def weather(args: dict[str, Any]) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"city": args["city"], "sky": "clear"}

    registry = ToolRegistry([forms()["anthropic"]], handlers={"get_weather": weather})
    result = asyncio.run(registry.aexecute("get_weather", '{"city": "Oslo"}'))
    assert result.text == '{"city":"Oslo","sky":"clear"}'
    assert registry.execute("get_weather", {"city": "Oslo", "days": 0}).error_type == (
        "invalid_params"
    )


def test_handlers_must_name_a_schema_only_tool() -> None:
    with pytest.raises(ConfigError, match="handlers: there is no tool named 'nope'"):
        ToolRegistry([forms()["bare"]], handlers={"nope": print})
    with pytest.raises(ConfigError, match="the handler must be callable"):
        ToolRegistry([forms()["bare"]], handlers={"get_weather": 3})  # type: ignore[dict-item]

    def ping() -> str:
        return "pong"

    with pytest.raises(ConfigError, match="'ping' already has a function"):
        ToolRegistry([ping], handlers={"ping": ping})


# --- agents and decorators ----------------------------------------------------------------


def weather_handler(args: dict[str, Any]) -> str:
    return f"{args['city']}: sunny for {args.get('days', 1)} day(s)"


@pytest.mark.parametrize("form", ["openai", "anthropic", "mcp"])
def test_react_agent_runs_a_described_tool(form: str) -> None:
    model = ScriptedModel([REPLIES["xml"], "Sunny."])
    agent = ReActAgent(
        model, ToolRegistry([forms()[form]], handlers={"get_weather": weather_handler})
    )
    run = agent.run_sync("Weather in Oslo?")
    assert run.output == "Sunny."
    assert "Oslo: sunny for 3 day(s)" in str(model.requests[1].messages[-1]["content"])
    assert "City name." in agent.system_prompt()


@pytest.mark.parametrize("form", ["openai", "anthropic", "mcp"])
def test_function_call_agent_runs_a_described_tool(form: str) -> None:
    model = ScriptedModel([[NativeCall("get_weather", {"city": "Oslo", "days": 2})], "Sunny."])
    agent = FunctionCallAgent(
        model, ToolRegistry([forms()[form]], handlers={"get_weather": weather_handler})
    )
    run = agent.run_sync("Weather in Oslo?")
    assert run.output == "Sunny."
    assert model.requests[0].tools is not None
    assert model.requests[0].tools[0]["function"]["parameters"] == WEATHER
    assert model.requests[1].messages[-1]["content"] == "Oslo: sunny for 2 day(s)"


def test_agents_and_decorators_refuse_a_schema_only_tool_showing_handlers() -> None:
    model = ScriptedModel(["x"])
    shown = r"handlers=\{'get_weather': function\}"
    with pytest.raises(ConfigError, match=shown):
        ReActAgent(model, [forms()["openai"]])
    with pytest.raises(ConfigError, match=shown):
        FunctionCallAgent(model, [forms()["mcp"]])
    with pytest.raises(ConfigError, match=shown):

        @llm_function(model, toolkit=[forms()["anthropic"]])
        def answer(question: str) -> str:
            """Answer."""

    with pytest.raises(ConfigError, match=shown):

        @llm_chat(model, toolkit=[forms()["bare"]])
        def chat(message: str, history: list[dict[str, Any]]) -> None:
            """Chat."""


def test_llm_function_runs_a_described_tool() -> None:
    model = ScriptedModel([[NativeCall("get_weather", {"city": "Oslo"})], "sunny"])
    tools = ToolRegistry([forms()["anthropic"]], handlers={"get_weather": weather_handler})

    @llm_function(model, toolkit=tools)
    def forecast(city: str) -> str:
        """Say the weather."""

    assert forecast("Oslo") == "sunny"
    assert model.requests[1].messages[-1]["content"] == "Oslo: sunny for 1 day(s)"


def test_llm_chat_runs_a_described_tool() -> None:
    model = ScriptedModel([REPLIES["xml"], "It is sunny."])
    tools = ToolRegistry([forms()["mcp"]], handlers={"get_weather": weather_handler})

    @llm_chat(model, toolkit=tools, protocol="xml")
    def chat(message: str, history: list[dict[str, Any]]) -> None:
        """Use the tools."""

    pairs = list(chat.sync("Weather?", history=[]))
    assert "".join(c for c, _ in pairs).endswith("It is sunny.")
    assert "Oslo: sunny for 3 day(s)" in str(model.requests[1].messages)


# --- bad input ----------------------------------------------------------------------------


def test_a_lone_description_or_a_mapping_of_descriptions_shows_the_list_form() -> None:
    with pytest.raises(ConfigError, match="one tool description, not a list of them"):
        as_registry(forms()["openai"])
    with pytest.raises(ConfigError, match="pass tool descriptions in a list"):
        as_registry({"get_weather": WEATHER})
    with pytest.raises(ConfigError, match="pass tool descriptions in a list"):
        ToolRegistry({"get_weather": "get the weather"})  # type: ignore[dict-item]


def test_an_unknown_dict_names_its_keys() -> None:
    with pytest.raises(ConfigError, match="no known form \\(keys: 'title', 'schema'\\)"):
        as_registry([{"title": "x", "schema": {}}])


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"type": "web_search_20250305", "name": "web_search", "max_uses": 5},
            "Anthropic server tool: it runs on Anthropic's side",
        ),
        ({"type": "bash_20250124", "name": "bash"}, "whose schema only Claude knows"),
    ],
)
def test_an_anthropic_tool_without_a_schema_is_refused(entry: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        as_registry([forms()["anthropic"], entry])


def test_an_invalid_schema_names_the_tool_and_the_place() -> None:
    bad = {"type": "object", "properties": {"units": {"enum": "celsius"}}}
    with pytest.raises(ConfigError) as caught:
        as_registry([{"name": "forecast", "inputSchema": bad}])
    assert str(caught.value) == (
        "tool 'forecast': invalid JSON Schema at #/properties/units/enum: "
        "'enum' must be a list, not a string"
    )


def test_a_duplicate_name_and_a_bad_name_are_refused() -> None:
    with pytest.raises(ConfigError, match="duplicate tool name 'get_weather'"):
        as_registry([forms()["openai"], forms()["mcp"]])
    with pytest.raises(ConfigError, match="needs a 'name' string"):
        as_registry([{"input_schema": WEATHER}])
    with pytest.raises(ConfigError, match="invalid tool name"):
        as_registry([{"name": "get weather", "input_schema": WEATHER}])


# --- prompts --------------------------------------------------------------------------------


def test_xml_usage_shows_tags_the_parser_reads_and_every_description() -> None:
    schema = {
        "type": "object",
        "properties": {
            'say "hi"': {"type": "string", "description": "The greeting."},
            "from": {"type": "string"},
            "options": {
                "type": "object",
                "description": "How to greet.",
                "properties": {"loud": {"type": "boolean", "description": "Shout it."}},
            },
        },
        "required": ['say "hi"'],
    }
    item = Tool.from_json_schema("greet", schema, description="Greet someone.")
    usage = item.xml_usage()
    assert "- say_hi (str, required): The greeting." in usage
    assert "<say_hi>example</say_hi>" in usage
    assert "<from>" in usage  # a valid tag: the schema's own name
    assert "How to greet." in usage and "Shout it." in usage
    # The tags it shows are what the parser reads.
    reply = "<greet><say_hi>hello</say_hi><from>me</from></greet>"
    found = calls(reply, [item], "xml")
    assert found[0].tool_instance.model_dump(by_alias=True, exclude_unset=True) == {
        'say "hi"': "hello",
        "from": "me",
    }


@pytest.mark.parametrize(
    ("dialect", "label"),
    [("xml", "- say_hi (str"), ("qwen3_coder", "- say_hi (str"), ("hermes", '- say "hi" (str')],
)
def test_react_prompts_name_parameters_as_the_dialect_writes_them(dialect: str, label: str) -> None:
    schema = {
        "type": "object",
        "properties": {'say "hi"': {"type": "string", "description": "Greeting."}},
    }
    item = Tool.from_json_schema("greet", schema, handler=lambda args: args)
    prompt = ReActAgent(ScriptedModel(["x"]), [item], dialect=dialect).system_prompt()
    assert f"{label}, optional): Greeting." in prompt


def test_prompts_show_the_descriptions_of_items_and_branches() -> None:
    schema = {
        "type": "object",
        "properties": {
            "tags": {
                "type": "array",
                "description": "Tags.",
                "items": {"type": "string", "description": "A tag."},
            },
            "mode": {
                "description": "The mode.",
                "anyOf": [
                    {"type": "string", "description": "A mode name."},
                    {"type": "integer", "description": "A mode number."},
                ],
            },
        },
    }
    item = Tool.from_json_schema("tag", schema, handler=lambda args: args)
    usage = item.xml_usage()
    assert "- tags (list[str], optional): Tags. Each item: A tag." in usage
    assert "- mode (str | int, optional): The mode. One of: A mode name. | A mode number." in usage
    react = ReActAgent(ScriptedModel(["x"]), [item]).system_prompt()
    assert "Each item: A tag." in react and "A mode number." in react
    assert item.to_openai()["function"]["parameters"] == schema  # the schema itself unchanged


# --- text values, converted by the schema ---------------------------------------------------

TYPED: dict[str, Any] = {
    "type": "object",
    "properties": {
        "count": {"type": "integer"},
        "ratio": {"type": "number"},
        "flag": {"type": "boolean"},
        "code": {"type": "string"},
        "either": {"type": ["integer", "string"]},
        "maybe": {"type": ["integer", "null"]},
        "point": {"type": "object", "properties": {"x": {"type": "integer"}}},
        "names": {"type": "array", "items": {"type": "string"}},
    },
    "additionalProperties": False,
}


@pytest.mark.parametrize("dialect", ["xml", "qwen3_coder"])
def test_text_values_are_converted_by_the_schema(dialect: str) -> None:
    values = {
        "count": "3",
        "ratio": "2.5",
        "flag": "true",
        "code": "007",
        "either": "42",
        "maybe": "null",
        "point": '{"x": 1}',
        "names": '["a", "b"]',
    }
    if dialect == "xml":
        body = "".join(f"<{k}>{v}</{k}>" for k, v in values.items())
        reply = f"<typed>{body}</typed>"
    else:
        body = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in values.items())
        reply = f"<tool_call>\n<function=typed>\n{body}</function>\n</tool_call>"
    found = calls(reply, [{"name": "typed", "inputSchema": TYPED}], dialect)
    assert found[0].tool_instance.model_dump(by_alias=True, exclude_unset=True) == {
        "count": 3,
        "ratio": 2.5,
        "flag": True,
        "code": "007",  # a string field keeps its string
        "either": "42",  # a string is a valid value: kept as given
        "maybe": None,
        "point": {"x": 1},
        "names": ["a", "b"],
    }


def test_text_that_is_no_value_of_the_schema_is_an_error_event() -> None:
    reply = "<typed><count>three</count></typed>"
    events = list(parse_stream([reply], [{"name": "typed", "inputSchema": TYPED}]))
    assert not [e for e in events if isinstance(e, ToolCallEvent)]
    errors = [e for e in events if getattr(e, "error_type", None) == "invalid_params"]
    assert errors and "count" in errors[0].message


# --- real MCP servers' tool lists -----------------------------------------------------------


@pytest.mark.parametrize("server", sorted(mcp_tool_lists()))
def test_a_real_mcp_servers_tool_list_is_read_and_goes_back_unchanged(server: str) -> None:
    listing = mcp_tool_lists()[server]
    registry = ToolRegistry(listing["tools"])
    assert registry.to_mcp() == listing["tools"]
    for item in registry.tools:
        assert item.xml_usage().startswith(f"## {item.name}")
    first = registry.tools[0]
    reply = f'<tool_call>\n{{"name": "{first.name}", "arguments": {{}}}}\n</tool_call>'
    events = list(parse_stream([reply], registry, config=ParserConfig(dialect="hermes")))
    # A call the schema refuses (a required argument missing) is an error event, never a crash.
    assert any(isinstance(e, ToolCallEvent) or getattr(e, "error_type", None) for e in events)
