"""Both decorators through the real ``openai`` SDK against the loopback SSE server."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from stream_parser import llm_chat, llm_function, tool
from stream_parser.llm import OpenAIChatModel
from stream_parser.testing import assert_valid_history

from ..llm.sse_server import SSEServer, chunk, sse, tool_fragment

pytest.importorskip("openai")


class Total(BaseModel):
    total: int
    note: str


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@pytest.fixture
def server() -> Iterator[SSEServer]:
    with SSEServer() as running:
        yield running


def streamed(text: str, size: int = 3) -> Any:
    pieces = [chunk(content=text[i : i + size]) for i in range(0, len(text), size)]
    usage = chunk(usage={"prompt_tokens": 20, "completion_tokens": 9}, no_choices=True)
    return sse([*pieces, chunk(finish_reason="stop"), usage])


def test_llm_function_with_a_tool_and_a_re_ask(server: SSEServer) -> None:
    server.script(
        sse(
            [
                chunk(role="assistant"),
                chunk(tool_calls=[tool_fragment(0, id="call_1", name="add", arguments='{"a": 2')]),
                chunk(tool_calls=[tool_fragment(0, arguments=', "b": 3}')]),
                chunk(finish_reason="tool_calls"),
            ]
        )
    )
    server.script(streamed('{"total": "five", "note": "added"}'))
    server.script(streamed('Done:\n```json\n{"total": 5, "note": "added"}\n```'))

    async def main() -> Any:
        async with OpenAIChatModel("test-model", base_url=server.url, max_retries=0) as model:

            @llm_function(model, toolkit=[add])
            async def total(a: int, b: int) -> Total:
                """Add the numbers with the tool; report the total and a note."""

            return await total.with_details(2, 3)

    result = asyncio.run(main())
    assert result.value == Total(total=5, note="added")
    assert result.answers == 2
    assert result.usage.input_tokens == 40
    bodies = [request.body for request in server.requests]
    assert len(bodies) == 3
    assert bodies[0]["tools"][0]["function"]["name"] == "add"
    tool_message = bodies[1]["messages"][3]
    assert (tool_message["role"], tool_message["tool_call_id"], tool_message["content"]) == (
        "tool",
        "call_1",
        "5",
    )
    assert "total" in bodies[2]["messages"][-1]["content"]  # the re-ask names the field
    for body in bodies:
        assert_valid_history(body["messages"])


def test_a_sync_llm_function_in_the_xml_protocol(server: SSEServer) -> None:
    server.script(streamed("<result><total>7</total><note>a & b < c</note></result>"))
    model = OpenAIChatModel("test-model", base_url=server.url, max_retries=0)

    @llm_function(model, toolkit=[add], protocol="xml")
    def total(a: int, b: int) -> Total:
        """Report a total."""

    assert total(3, 4) == Total(total=7, note="a & b < c")
    body = server.requests[0].body
    assert "tools" not in body
    assert "## add" in body["messages"][0]["content"]


def test_llm_chat_streams_a_turn(server: SSEServer) -> None:
    server.script(streamed("Hello, Ada! Nice to meet you.", size=4))
    model = OpenAIChatModel("test-model", base_url=server.url, max_retries=0)

    @llm_chat(model)
    def chat(message: str, history: list[dict[str, Any]]) -> None:
        """You are friendly."""

    pairs = list(chat.sync("Hi, I am Ada.", history=[]))
    assert len(pairs) > 3
    assert "".join(c for c, _ in pairs) == "Hello, Ada! Nice to meet you."
    history = pairs[-1][1]
    assert history[-1] == {"role": "assistant", "content": "Hello, Ada! Nice to meet you."}
    sent = server.requests[0].body["messages"]
    assert sent[0] == {"role": "system", "content": "You are friendly."}
    assert_valid_history([*sent, history[-1]])


def test_items_stream_through_the_sdk(server: SSEServer) -> None:
    items = [{"total": n, "note": f"n{n}"} for n in range(5)]
    server.script(streamed("Sure:\n" + json.dumps(items), size=2))
    model = OpenAIChatModel("test-model", base_url=server.url, max_retries=0)

    @llm_function(model)
    def totals(count: int) -> Iterator[Total]:
        """Some totals."""

    assert [t.total for t in totals(5)] == [0, 1, 2, 3, 4]
    assert "Total" in server.requests[0].body["messages"][0]["content"]


def test_llm_function_with_instructions_in_the_first_user_message(server: SSEServer) -> None:
    server.script(streamed("42"))
    model = OpenAIChatModel("test-model", base_url=server.url, max_retries=0)

    @llm_function(model, instructions_role="user")
    def answer(question: str) -> int:
        """Answer the question with a number."""

    assert answer("What is six times seven?") == 42
    sent = server.requests[0].body["messages"]
    assert [m["role"] for m in sent] == ["user"]
    content = sent[0]["content"]
    assert content.startswith("You act as the Python function described below.")
    assert "Answer the question with a number." in content
    assert content.endswith("question: What is six times seven?")


def test_llm_chat_with_instructions_in_the_first_user_message(server: SSEServer) -> None:
    server.script(streamed("Hello, Ada!"), streamed("Bye, Ada!"))
    model = OpenAIChatModel("test-model", base_url=server.url, max_retries=0)

    @llm_chat(model, instructions_role="user")
    def chat(message: str, history: list[dict[str, Any]]) -> None:
        """You are friendly."""

    first = list(chat.sync("Hi, I am Ada.", history=[]))
    history = first[-1][1]
    list(chat.sync("Bye.", history=history))
    for request in server.requests:
        sent = request.body["messages"]
        assert "system" not in [m["role"] for m in sent]
        assert sent[0]["role"] == "user" and sent[0]["content"].startswith("You are friendly.")
        assert sent[0]["content"].count("You are friendly.") == 1
    # The history handed back holds the user's words, not the instructions.
    assert history[0]["role"] == "user" and "You are friendly." not in history[0]["content"]


def test_an_unknown_instructions_role_is_refused_when_decorating() -> None:
    from stream_parser.errors import ConfigError
    from stream_parser.testing import ScriptedModel

    with pytest.raises(ConfigError, match="instructions_role"):

        @llm_function(ScriptedModel(["1"]), instructions_role="developer")
        def answer(question: str) -> int:
            """Answer."""
