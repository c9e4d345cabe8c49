"""An empty answer is asked again, up to ``retry_times``, for every return type but None."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from stream_parser import AnswerValidationError, llm_function
from stream_parser.testing import ScriptedModel, ScriptedReply


class Person(BaseModel):
    name: str
    age: int


def test_a_str_function_answered_empty_asks_again_and_returns_the_next_answer() -> None:
    model = ScriptedModel(["", "Bonjour"])

    @llm_function(model)
    def translate(text: str, language: str) -> str:
        """Translate the text into the language."""

    assert translate("Hello", "French") == "Bonjour"
    assert len(model.requests) == 2
    # The same conversation goes on: the empty reply left no message, a note asks again.
    second = model.requests[1].messages
    assert [message["role"] for message in second] == ["system", "user", "user"]
    assert second[:2] == model.requests[0].messages


@pytest.mark.parametrize(
    ("annotation", "answers", "expected"),
    [
        (str, ["  \n", "ok"], "ok"),
        (int, ["", "42"], 42),
        (Person, ["", '{"name": "Ada", "age": 36}'], Person(name="Ada", age=36)),
        (list[str], ["\t", '["a", "b"]'], ["a", "b"]),
        (str | None, ["", "null"], None),
        (Any, ["", "text"], "text"),
    ],
)
def test_every_return_type_but_none_asks_again_on_an_empty_answer(
    annotation: Any, answers: list[str], expected: Any
) -> None:
    model = ScriptedModel(answers)

    @llm_function(model)
    def answer(question: str) -> annotation:  # type: ignore[valid-type]
        """Answer the question."""

    assert answer("?") == expected
    assert len(model.requests) == 2


def test_an_answer_still_empty_after_retry_times_raises() -> None:
    model = ScriptedModel(["", " ", ScriptedReply(content="", reasoning="thinking only")])

    @llm_function(model, retry_times=2)
    async def summarize(text: str) -> str:
        """Summarize the text."""

    with pytest.raises(AnswerValidationError) as failure:
        asyncio.run(summarize("a long text"))
    assert len(model.requests) == 3  # the first answer and retry_times re-asks
    assert failure.value.answer == ""
    assert failure.value.errors[0]["type"] == "answer_empty"
    assert isinstance(failure.value, ValueError)


def test_a_none_function_takes_an_empty_answer_as_it_is() -> None:
    model = ScriptedModel([""])

    @llm_function(model)
    def notify(message: str) -> None:
        """Send the message."""

    assert notify("hi") is None
    assert len(model.requests) == 1
