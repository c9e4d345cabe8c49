"""protocol="auto" in @llm_function and @llm_chat: the dialect of the model's family."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from stream_parser import ConfigError, llm_chat, llm_function
from stream_parser.decorators.calls import AgentSettings, check_protocol
from stream_parser.llm import OpenAIChatModel
from stream_parser.testing import ScriptedModel
from stream_parser.tools import ToolRegistry, tool

from ..llm.sse_server import SSEServer, chunk, sse


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class ServedModel(ScriptedModel):
    """A scripted model that carries a served model's name, as OpenAIChatModel does."""

    def __init__(self, name: str, replies: list[str]) -> None:
        super().__init__(replies)
        self.model = name


QWEN3_CODER_CALL = (
    "<tool_call>\n<function=add>\n<parameter=a>\n2\n</parameter>\n"
    "<parameter=b>\n3\n</parameter>\n</function>\n</tool_call>"
)


def test_check_protocol_accepts_auto() -> None:
    assert check_protocol("auto", ToolRegistry(), "llm_function") == "auto"
    with pytest.raises(ConfigError, match="'result'"):
        check_protocol("auto", ToolRegistry([tool(lambda x: x, name="result")]), "llm_function")


def test_settings_find_the_dialect_when_decorating() -> None:
    settings = AgentSettings.check(
        "llm_function",
        model=ServedModel("Qwen/Qwen3-Coder-30B-A3B-Instruct", []),
        toolkit=[add],
        protocol="auto",
        options={"max_tool_calls": None, "max_iterations": 5, "language": "en"},
    )
    assert settings.model_dialect is not None
    assert settings.model_dialect.dialect == "qwen3_coder"
    agent = settings.agent(instructions=None, model=ScriptedModel([]))  # a nameless wrapper
    assert agent.parser_config.dialect == ("qwen3_coder",)


def test_llm_function_auto_runs_a_tool_in_the_model_s_dialect() -> None:
    model = ServedModel("qwen3-coder:30b", [QWEN3_CODER_CALL, '{"total": 5}'])

    @llm_function(model, toolkit=[add], protocol="auto")
    def total(a: int, b: int) -> dict[str, int]:
        """Add with the tool and report the total."""

    assert total(2, 3) == {"total": 5}
    assert model.requests[0].tools is None
    assert "<function=" in model.requests[0].messages[0]["content"]
    assert "protocol='auto'" in repr(total)


def test_llm_chat_auto() -> None:
    model = ServedModel("Qwen/Qwen3-Coder-30B-A3B-Instruct", [QWEN3_CODER_CALL, "It is 5."])

    @llm_chat(model, toolkit=[add], protocol="auto")
    def chat(message: str, history: list[dict[str, Any]]) -> None:
        """Use the tools."""

    pairs = list(chat.sync("2+3?", history=[]))
    assert "".join(c for c, _ in pairs).endswith("It is 5.")
    assert "<function=" in model.requests[0].messages[0]["content"]


@pytest.mark.parametrize("decorator", [llm_function, llm_chat])
def test_auto_without_a_name_says_what_to_pass(decorator: Any) -> None:
    with pytest.raises(ConfigError, match=r"needs the model's name.*name the dialect instead"):
        decorator(ScriptedModel([]), protocol="auto")


def test_auto_with_an_unknown_name() -> None:
    with pytest.raises(ConfigError, match=r"@llm_function: .*does not know the model 'x-7b'"):
        llm_function(ServedModel("x-7b", []), protocol="auto")


def test_auto_with_a_family_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    import stream_parser.dialects.detect as detect

    monkeypatch.setattr(detect, "dialect_names", lambda: ("xml", "hermes", "qwen3_coder"))
    with pytest.raises(ConfigError, match=r"dialect 'gpt_oss' for model 'gpt-oss:20b' is not"):
        llm_chat(ServedModel("gpt-oss:20b", []), protocol="auto")


class Total(BaseModel):
    total: int


def test_auto_through_the_sdk() -> None:
    pytest.importorskip("openai")
    reply = "<result><total>7</total></result>"
    with SSEServer() as server:
        server.script(
            sse([chunk(content=reply[:9]), chunk(content=reply[9:]), chunk(finish_reason="stop")])
        )

        async def main() -> Total:
            async with OpenAIChatModel("Qwen/Qwen3-8B", base_url=server.url, max_retries=0) as m:

                @llm_function(m, toolkit=[add], protocol="auto")
                async def total(a: int, b: int) -> Total:
                    """Report a total."""

                return await total(3, 4)

        assert asyncio.run(main()) == Total(total=7)
        body = server.requests[0].body
    assert "tools" not in body
    assert "<tool_call>" in body["messages"][0]["content"]  # hermes, Qwen3's format
