"""A model answer may name its XML root after the model (``<Person>``), or ``<result>``."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel, RootModel

from stream_parser import AnswerValidationError, llm_function
from stream_parser.decorators import FieldDone
from stream_parser.testing import ScriptedModel


class Person(BaseModel):
    name: str
    age: int


class Tags(RootModel[list[str]]):
    pass


PERSON_XML = "<Person>\n  <name>Ada Lovelace</name>\n  <age>36</age>\n</Person>"
ADA = Person(name="Ada Lovelace", age=36)


@pytest.mark.parametrize("chunk_size", [1, 7, 1000])
@pytest.mark.parametrize(
    "answer",
    [
        PERSON_XML,
        f"Here is the person:\n{PERSON_XML}\nAnything else?",
        "<result><name>Ada Lovelace</name><age>36</age></result>",
        '{"name": "Ada Lovelace", "age": 36}',
    ],
    ids=["model root", "model root in prose", "result root", "json"],
)
def test_a_model_answer_is_read_under_its_own_name_or_result(answer: str, chunk_size: int) -> None:
    @llm_function(ScriptedModel([answer], chunk_size=chunk_size))
    def extract_person(text: str) -> Person:
        """Extract the person the text is about."""

    assert extract_person("Ada Lovelace died at 36.") == ADA


def test_an_optional_model_and_a_root_model_read_their_own_names() -> None:
    @llm_function(ScriptedModel([PERSON_XML]))
    async def maybe_person(text: str) -> Person | None:
        """Extract the person, if there is one."""

    @llm_function(ScriptedModel(["<Tags><item>math</item><item>poetry</item></Tags>"]))
    def tags(text: str) -> Tags:
        """Tag the text."""

    assert asyncio.run(maybe_person("Ada Lovelace died at 36.")) == ADA
    assert tags("Ada wrote notes on the engine.") == Tags(["math", "poetry"])


def test_a_model_root_with_a_wrong_field_is_asked_again() -> None:
    model = ScriptedModel(["<Person><name>Ada</name><age>old</age></Person>", PERSON_XML])

    @llm_function(model)
    def extract_person(text: str) -> Person:
        """Extract the person the text is about."""

    assert extract_person("Ada Lovelace died at 36.") == ADA
    assert "age" in str(model.requests[1].messages[-1]["content"])


def test_another_models_name_is_not_a_root() -> None:
    @llm_function(
        ScriptedModel(["<Animal><name>Rex</name><age>3</age></Animal>"] * 2), retry_times=1
    )
    def extract_person(text: str) -> Person:
        """Extract the person the text is about."""

    with pytest.raises(AnswerValidationError):
        extract_person("Rex is three.")


def test_streaming_a_model_rooted_in_its_name_ends_with_the_object() -> None:
    @llm_function(ScriptedModel([PERSON_XML], chunk_size=3))
    def extract_person(text: str) -> Person:
        """Extract the person the text is about."""

    parts = list(extract_person.stream("Ada Lovelace died at 36."))
    assert parts[-1] == ADA
    assert {part.name for part in parts[:-1] if isinstance(part, FieldDone)} == {"name", "age"}
