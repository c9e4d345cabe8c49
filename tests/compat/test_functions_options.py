"""Request options given to the decorators as keywords (``temperature=0.2``)."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stream_parser import llm_chat, llm_function
from stream_parser.errors import ConfigError
from stream_parser.llm import OpenAIChatModel
from stream_parser.testing import ScriptedModel

from ..llm.sse_server import SSEServer, chunk, sse

pytest.importorskip("openai")

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def server() -> Iterator[SSEServer]:
    with SSEServer() as running:
        yield running


def reply(text: str) -> Any:
    return sse([chunk(role="assistant"), chunk(content=text), chunk(finish_reason="stop")])


def test_a_test_model_gets_the_keywords_with_every_request() -> None:
    model = ScriptedModel(["many", "3"])

    @llm_function(model, temperature=0.2, top_k=5, max_iterations=3)
    def count(word: str, letter: str) -> int:
        """Count how often the letter occurs in the word."""

    assert count("banana", "a") == 3
    # The re-ask carries them too.
    assert [request.options for request in model.requests] == [
        {"temperature": 0.2, "top_k": 5},
        {"temperature": 0.2, "top_k": 5},
    ]


def test_llm_chat_passes_them_beside_model_options() -> None:
    model = ScriptedModel(["Hi!"])

    @llm_chat(model, temperature=0.7, model_options={"max_tokens": 50})
    def chat(message: str, history: list[dict[str, Any]]) -> None:
        """You are friendly."""

    pairs = list(chat.sync("Hello", history=[]))
    assert pairs[-1][0] == "" and "".join(text for text, _ in pairs) == "Hi!"
    assert model.requests[0].options == {"max_tokens": 50, "temperature": 0.7}


@pytest.mark.parametrize(
    ("keyword", "closest"),
    [("max_iteration", "max_iterations"), ("tool_timout", "tool_timeout"), ("languag", "language")],
)
@pytest.mark.parametrize("decorator", [llm_function, llm_chat])
def test_a_misspelled_agent_option_is_refused_naming_it(
    decorator: Any, keyword: str, closest: str
) -> None:
    model = ScriptedModel([])
    with pytest.raises(ConfigError, match=f"unknown option '{keyword}'; did you mean '{closest}'"):
        decorator(model, **{keyword: 3})


def test_a_keyword_also_in_model_options_is_refused() -> None:
    with pytest.raises(ConfigError, match="'temperature' is given both as a keyword and in"):
        llm_function(ScriptedModel([]), temperature=0.2, model_options={"temperature": 0.5})


def test_the_openai_model_sends_the_sdks_own_parameters(server: SSEServer) -> None:
    server.script(reply("3"), reply("Hello!"))

    async def main() -> tuple[int, str]:
        async with OpenAIChatModel("test-model", base_url=server.url, max_retries=0) as model:

            @llm_function(
                model,
                temperature=0.2,
                max_tokens=64,
                seed=7,
                extra_headers={"X-Trace": "on"},
                reply_timeout=30,
                raw_output=True,
            )
            async def count(word: str, letter: str) -> int:
                """Count how often the letter occurs in the word."""

            @llm_chat(model, top_p=0.5, extra_body={"top_k": 20})
            async def chat(message: str) -> None:
                """You are friendly."""

            number = await count("banana", "a")
            text = "".join([piece async for piece, _ in chat("Hi")])
            return number, text

    assert asyncio.run(main()) == (3, "Hello!")
    first, second = (request.body for request in server.requests)
    assert (first["temperature"], first["max_tokens"], first["seed"]) == (0.2, 64, 7)
    assert first["skip_special_tokens"] is False  # raw_output
    assert "reply_timeout" not in first and "raw_output" not in first
    assert server.requests[0].headers["x-trace"] == "on"
    assert (second["top_p"], second["top_k"]) == (0.5, 20)
    assert "temperature" not in second


def test_the_openai_model_refuses_what_is_neither_naming_the_closest() -> None:
    model = OpenAIChatModel("test-model", base_url="http://127.0.0.1:9/v1", max_retries=0)
    assert {
        "temperature",
        "reply_timeout",
        "raw_output",
        "extra_body",
    } <= model.request_option_names
    with pytest.raises(ConfigError, match="'temprature'; did you mean 'temperature'"):
        llm_function(model, temprature=0.2)
    with pytest.raises(ConfigError, match="'max_iteration'; did you mean 'max_iterations'"):
        llm_chat(model, max_iteration=2)
    listing = r"'zzz' \(the options: approve, clock, .*; the model's request options: .*top_p"
    with pytest.raises(ConfigError, match=listing + ".*extra_body"):
        llm_function(model, zzz=1)


@pytest.mark.slow
def test_type_checkers_see_the_agent_options_only(tmp_path: Path) -> None:
    source = tmp_path / "uses_request_options.py"
    source.write_text(
        textwrap.dedent(
            """
            from stream_parser import llm_function
            from stream_parser.testing import ScriptedModel

            llm_function(ScriptedModel([]), max_iterations=3)
            llm_function(ScriptedModel([]), temperature=0.2)
            llm_function(ScriptedModel([]), model_options={"temperature": 0.2})
            """
        )
    )
    done = subprocess.run(
        [
            *(sys.executable, "-m", "mypy", "--strict", "--no-error-summary"),
            *("--cache-dir", str(tmp_path / "cache"), str(source)),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    errors = [line for line in done.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in errors] == ["6"], done.stdout
    assert 'Unexpected keyword argument "temperature"' in errors[0]
