"""``@llm_function(final_answer_at_limit=True)``: a typed function still answers at its limit."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import BaseModel

from stream_parser import RunLimitError, llm_function, tool
from stream_parser.testing import NativeCall, ScriptedModel

searches: list[str] = []


@tool
def search(query: str) -> str:
    """Search the web.

    Args:
        query: what to look for.
    """
    searches.append(query)
    return f"results for {query}"


class Answer(BaseModel):
    city: str
    population: int


def keeps_searching(final: str) -> ScriptedModel:
    return ScriptedModel(
        [
            [NativeCall("search", {"query": "largest city Norway"})],
            [NativeCall("search", {"query": "Oslo population"})],
            [NativeCall("search", {"query": "Oslo population 2024"})],
            final,
        ]
    )


def test_at_the_request_limit_the_function_answers_without_tools() -> None:
    searches.clear()
    model = keeps_searching('{"city": "Oslo", "population": 709000}')

    @llm_function(model, toolkit=[search], max_iterations=3, final_answer_at_limit=True)
    def largest_city(country: str) -> Answer:
        """Find the largest city of the country and its population."""

    assert largest_city("Norway") == Answer(city="Oslo", population=709000)
    assert len(searches) == 3  # every call the model made within the limit ran
    last = model.requests[-1]
    assert len(model.requests) == 4
    assert last.options.get("tool_choice") == "none"  # the last request runs no tool
    assert last.messages[-1]["role"] == "tool"


def test_at_the_tool_call_limit_too_and_in_an_async_function() -> None:
    searches.clear()
    model = keeps_searching("709000")

    @llm_function(model, toolkit=[search], max_tool_calls=2, final_answer_at_limit=True)
    async def population(city: str) -> int:
        """The population of the city."""

    assert asyncio.run(population("Oslo")) == 709000
    assert len(searches) == 2


def test_without_it_the_limit_raises() -> None:
    searches.clear()

    @llm_function(keeps_searching("709000"), toolkit=[search], max_iterations=3)
    def population(city: str) -> int:
        """The population of the city."""

    with pytest.raises(RunLimitError) as failure:
        population("Oslo")
    assert failure.value.reason == "max_iterations"
