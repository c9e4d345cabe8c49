"""Both decorators against a real endpoint; skipped unless one is configured.

Set ``STREAM_PARSER_LIVE_BASE_URL`` and ``STREAM_PARSER_LIVE_MODEL`` (plus
``STREAM_PARSER_LIVE_API_KEY`` if needed) and run ``pytest -m live``.  The assertions are
about the protocol, not what the model says: a small local model may say anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from pydantic import BaseModel

from stream_parser import AnswerValidationError, RunLimitError, llm_chat, llm_function
from stream_parser.agent._sync import call_sync
from tests.live import API_KEY, BASE_URL, MODEL, live_marks

pytestmark = live_marks()

OPTIONS = {"temperature": 0, "max_tokens": 64}


@pytest.fixture
def model() -> Iterator[Any]:
    from stream_parser.llm import OpenAIChatModel

    assert BASE_URL and MODEL
    client = OpenAIChatModel(MODEL, base_url=BASE_URL, api_key=API_KEY, max_retries=1, timeout=120)
    yield client
    # The sync calls ran on the library's background loop: close the client there.
    call_sync(client.aclose())


def test_a_text_function(model: Any) -> None:
    @llm_function(model, model_options=OPTIONS)
    def greet(name: str) -> str:
        """Write a one-line greeting for the person."""

    try:
        details = greet.with_details("Ada")
    except RunLimitError as failure:
        # A small model may ramble past max_tokens: the cut reply is not an answer.
        assert failure.reason == "length" and failure.run.messages[-1]["role"] == "assistant"
    else:
        assert isinstance(details.value, str)
        assert details.messages[-1] == {"role": "assistant", "content": details.value}


class Person(BaseModel):
    name: str
    age: int


def test_a_typed_function_answers_or_fails_in_the_documented_way(model: Any) -> None:
    @llm_function(model, model_options=OPTIONS, retry_times=1)
    def person(text: str) -> Person:
        """Extract the person."""

    try:
        value = person("Ada Lovelace was 36.")
    except (AnswerValidationError, RunLimitError) as failure:
        assert failure.args[0]
    else:
        assert isinstance(value, Person)


def test_a_chat_turn(model: Any) -> None:
    @llm_chat(model, model_options=OPTIONS)
    def chat(message: str, history: list[dict[str, Any]]) -> None:
        """You are a friendly assistant."""

    pairs = list(chat.sync("Hello!", history=[]))
    final = pairs[-1]
    assert final[0] == ""
    assert [m["role"] for m in final[1]] == ["user", "assistant"]
    assert final[1][-1]["content"] == "".join(chunk for chunk, _ in pairs)
