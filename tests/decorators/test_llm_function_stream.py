"""@llm_function answers that stream: list items and model fields as they complete."""

from __future__ import annotations

import asyncio
import gc
import json
import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, field_validator, model_validator

from stream_parser import AnswerValidationError, ChatDelta, ConfigError, llm_function, tool
from stream_parser.decorators import FieldDone
from stream_parser.testing import NativeCall, ScriptedModel
from tests.helpers import EndlessModel

CHUNKS = (1, 3, 7, 10_000)


class City(BaseModel):
    name: str
    population: int


CITIES = [City(name="Paris", population=2100000), City(name="Rome", population=2800000)]
JSON_LIST = "Here they are:\n```json\n" + json.dumps([c.model_dump() for c in CITIES]) + "\n```"
XML_LIST = (
    "<result>\n"
    + "".join(
        f"<item><name>{c.name}</name><population>{c.population}</population></item>\n"
        for c in CITIES
    )
    + "</result>"
)


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("answer", [JSON_LIST, XML_LIST], ids=["json", "xml"])
def test_items_are_yielded_as_they_complete(answer: str, chunk_size: int) -> None:
    model = ScriptedModel([answer], chunk_size=chunk_size)

    @llm_function(model)
    def cities(country: str) -> Iterator[City]:
        """The largest cities of the country."""

    got = []
    requests_before_first_item = None
    for city in cities("Europe"):
        if requests_before_first_item is None:
            requests_before_first_item = len(model.requests)
        got.append(city)
    assert got == CITIES
    # The prompt asks for a list of the item type.
    assert "City" in model.requests[0].messages[0]["content"]


class GatedModel:
    """Streams the first part of a reply, then waits until the test lets it go on."""

    def __init__(self, first: str, rest: str) -> None:
        self.first, self.rest = first, rest
        self.release = threading.Event()
        self.timed_out = False

    async def stream(
        self, messages: Any, *, tools: Any = None, **options: Any
    ) -> AsyncIterator[ChatDelta]:
        yield ChatDelta(content=self.first)
        for _ in range(1000):  # at most about 5 s
            if self.release.is_set():
                break
            await asyncio.sleep(0.005)
        else:
            self.timed_out = True
        yield ChatDelta(content=self.rest)
        yield ChatDelta(finish_reason="stop")


def test_the_first_item_arrives_before_the_reply_ends() -> None:
    text = json.dumps([c.model_dump() for c in CITIES])
    cut = text.index("}") + 2  # the first item and its comma
    model = GatedModel(text[:cut], text[cut:])

    @llm_function(model)
    def cities() -> Iterator[City]:
        """Cities."""

    iterator = cities()
    assert next(iterator) == CITIES[0]  # while the model still holds the rest back
    model.release.set()
    assert list(iterator) == CITIES[1:]
    assert not model.timed_out


@pytest.mark.parametrize("chunk_size", CHUNKS)
def test_a_failing_item_is_re_asked_from_where_it_failed_without_duplicates(
    chunk_size: int,
) -> None:
    first = (
        '[{"name": "A", "population": 1}, {"name": "B", "population": "many"}, '
        '{"name": "C", "population": 3}]'
    )
    second = '[{"name": "B", "population": 2}, {"name": "C", "population": 3}]'
    model = ScriptedModel([first, second], chunk_size=chunk_size)

    @llm_function(model)
    def cities() -> Iterator[City]:
        """Cities."""

    got = [(c.name, c.population) for c in cities()]
    assert got == [("A", 1), ("B", 2), ("C", 3)]
    assert len(model.requests) == 2
    reask = model.requests[1].messages[-1]["content"]
    assert "2" in reask and "population" in reask
    # The first reply was cut at the failed item: what came after it was not read.
    cut = model.requests[1].messages[-2]
    assert cut["role"] == "assistant"
    if chunk_size < 10:
        assert '"C"' not in cut["content"]


def test_items_re_asks_are_limited() -> None:
    bad = '[{"name": "A", "population": "x"}]'
    model = ScriptedModel([bad, bad], chunk_size=5)

    @llm_function(model, retry_times=1)
    def cities() -> Iterator[City]:
        """Cities."""

    with pytest.raises(AnswerValidationError) as info:
        list(cities())
    assert info.value.errors


TOKYO = City(name="Tokyo", population=1)
DELHI = City(name="Delhi", population=2)
TOKYO_JSON = '{"name": "Tokyo", "population": 1}'
TOKYO_XML = "<item><name>Tokyo</name><population>1</population></item>"
# Answers whose list breaks after its first item, one per way a list breaks.
BROKEN_LISTS = {
    "json-cut-mid-item": f'[{TOKYO_JSON}, {{"name": "Delhi", "popul',
    "json-cut-after-a-comma": f"[{TOKYO_JSON}, ",
    "json-cut-before-the-bracket": f"[{TOKYO_JSON}",
    "json-stray-brace": f'[{TOKYO_JSON}}}, {{"name": "Delhi", "population": 2}}]',
    "json-unclosed-string": f'[{TOKYO_JSON}, {{"name": "Delhi}}]',
    "json-cut-in-a-fence": f'```json\n[{TOKYO_JSON}, {{"name": "Del\n```',
    "result-cut-mid-item": f"<result>{TOKYO_XML}<item><name>Delhi</name>",
    "result-unclosed-item": f"<result>{TOKYO_XML}<item><name>Delhi</name></result>",
    "result-unclosed": f"<result>{TOKYO_XML}",
    "bare-cut-mid-item": f"{TOKYO_XML}<item><name>Del",
    "bare-cut-in-a-start-tag": f"{TOKYO_XML}<ite",
}


@pytest.mark.parametrize("chunk_size", (1, 7, 10_000))
@pytest.mark.parametrize("answer", BROKEN_LISTS.values(), ids=BROKEN_LISTS.keys())
def test_a_broken_list_is_re_asked_from_where_it_broke(answer: str, chunk_size: int) -> None:
    model = ScriptedModel([answer, json.dumps([DELHI.model_dump()])], chunk_size=chunk_size)

    @llm_function(model)
    def cities() -> Iterator[City]:
        """Cities."""

    assert list(cities()) == [TOKYO, DELHI]
    assert len(model.requests) == 2
    reask = model.requests[1].messages[-1]["content"]
    assert "Item 2" in reask and "from item 2 on" in reask


@pytest.mark.parametrize("answer", BROKEN_LISTS.values(), ids=BROKEN_LISTS.keys())
def test_a_list_that_keeps_breaking_raises_as_a_list_does(answer: str) -> None:
    as_list_model, as_iter_model = ScriptedModel([answer] * 3), ScriptedModel([answer] * 3)

    @llm_function(as_list_model, retry_times=2)
    def as_list() -> list[City]:
        """Cities."""

    @llm_function(as_iter_model, retry_times=2)
    def as_iter() -> Iterator[City]:
        """Cities."""

    with pytest.raises(AnswerValidationError):
        as_list()
    got: list[City] = []
    with pytest.raises(AnswerValidationError) as info:
        for city in as_iter():
            got.append(city)
    # Each re-ask continues the list from where it broke: its Tokyo is the next item.
    assert got == [TOKYO] * 3
    assert len(as_iter_model.requests) == len(as_list_model.requests) == 3
    assert [(e["type"], e["loc"]) for e in info.value.errors] == [("list_incomplete", [3])]
    # The answer as read: up to the break when it was seen mid-reply (a stray brace).
    assert "Tokyo" in info.value.answer and answer.startswith(info.value.answer)


def test_a_list_breaking_mid_reply_stops_reading_the_reply() -> None:
    rest = ", ".join([TOKYO_JSON] * 50) + "]"
    model = ScriptedModel([f"[{TOKYO_JSON}}} {rest}", "[]"], chunk_size=3)

    @llm_function(model)
    def cities() -> Iterator[City]:
        """Cities."""

    assert list(cities()) == [TOKYO]
    cut = model.requests[1].messages[-2]
    assert cut["role"] == "assistant" and cut["content"].count("Tokyo") < 5


def test_a_list_breaking_before_its_first_item_is_read_whole() -> None:
    # "<item>" in prose opens no list that ends: the answer is read by the contract.
    answer = f"The <item> tag is not used here.\n```json\n[{TOKYO_JSON}]\n```"
    model = ScriptedModel([answer], chunk_size=4)

    @llm_function(model)
    def cities() -> Iterator[City]:
        """Cities."""

    assert list(cities()) == [TOKYO]
    assert len(model.requests) == 1


def test_a_re_ask_for_the_whole_answer_numbers_its_list_from_the_start() -> None:
    whole = json.dumps([c.model_dump() for c in [TOKYO, DELHI, *CITIES]])
    broken = f'[{TOKYO_JSON}, {{"name": "Delhi", "population": "many"}}]'
    model = ScriptedModel([broken, "Sorry, I have no list.", whole])

    @llm_function(model)
    def cities() -> Iterator[City]:
        """Cities."""

    assert list(cities()) == [TOKYO, DELHI, *CITIES]  # Tokyo is not yielded twice
    assert "Write the whole answer again" in model.requests[2].messages[-1]["content"]


def test_with_details_of_a_streamed_list_gives_the_whole_list() -> None:
    @llm_function(ScriptedModel([JSON_LIST]))
    def cities() -> Iterator[City]:
        """Cities."""

    assert cities.with_details().value == CITIES


def test_an_answer_in_another_form_is_read_whole() -> None:
    # A one-item list written as a bare object is no list to stream: the contract reads it.
    model = ScriptedModel(["no list here", json.dumps([CITIES[0].model_dump()])])

    @llm_function(model)
    def cities() -> Iterator[City]:
        """Cities."""

    assert list(cities()) == [CITIES[0]]
    assert len(model.requests) == 2


def test_items_after_a_tool_call() -> None:
    @tool
    def lookup(country: str) -> str:
        """Look the cities up."""
        return "Paris, Rome"

    model = ScriptedModel([[NativeCall("lookup", {"country": "EU"})], JSON_LIST])

    @llm_function(model, toolkit=[lookup])
    def cities() -> Iterator[City]:
        """Cities."""

    assert list(cities()) == CITIES


def test_an_async_function_gives_an_async_iterator() -> None:
    @llm_function(ScriptedModel([JSON_LIST], chunk_size=2))
    async def cities() -> AsyncIterator[City]:
        """Cities."""

    async def main() -> list[City]:
        return [city async for city in cities()]

    assert asyncio.run(main()) == CITIES


def test_breaking_out_of_the_items_stops_the_call() -> None:
    model = ScriptedModel([JSON_LIST], chunk_size=1)

    @llm_function(model)
    def cities() -> Iterator[City]:
        """Cities."""

    for city in cities():
        assert city == CITIES[0]
        break
    assert len(model.requests) == 1


def _city(number: int) -> str:
    return json.dumps({"name": f"c{number}", "population": 1}) + ", "


@pytest.fixture
def no_gc() -> Iterator[None]:
    """The collector off: what is closed is closed by the code, not by a collection."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@pytest.mark.parametrize("how", ["call", "stream"])
@pytest.mark.usefixtures("no_gc")
def test_breaking_out_of_the_items_closes_the_model_stream_at_once(how: str) -> None:
    model = EndlessModel(_city, head="[")

    @llm_function(model)
    def cities() -> Iterator[City]:
        """Cities."""

    for city in cities() if how == "call" else cities.stream():
        assert city.name == "c0"
        break
    assert model.closed.is_set()


@pytest.mark.usefixtures("no_gc")
def test_breaking_out_of_async_items_closes_the_model_stream() -> None:
    model = EndlessModel(_city, head="[")

    @llm_function(model)
    async def cities() -> AsyncIterator[City]:
        """Cities."""

    async def main() -> bool:
        async for city in cities():
            assert city.name == "c0"
            break
        # The async generator left behind is closed by the event loop, on its next turns.
        for _ in range(200):
            if model.closed.is_set():
                return True
            await asyncio.sleep(0.01)
        return False

    assert asyncio.run(main())


def test_the_stream_kind_must_match_the_def() -> None:
    def sync_async() -> AsyncIterator[City]:
        """No."""

    async def async_sync() -> Iterator[City]:
        """No."""

    for fn in (sync_async, async_sync):
        with pytest.raises(ConfigError, match="Iterator"):
            llm_function(ScriptedModel([]))(fn)


# --- field events ---------------------------------------------------------------------------


class Checked(BaseModel):
    title: str
    score: int
    tags: list[str]

    calls: ClassVar[dict[str, int]] = {}  # validator calls, counted by name

    @field_validator("title", "score", "tags")
    @classmethod
    def count_field(cls, value: Any, info: Any) -> Any:
        Checked.calls[info.field_name] = Checked.calls.get(info.field_name, 0) + 1
        return value

    @model_validator(mode="after")
    def count_model(self) -> Checked:
        Checked.calls["model"] = Checked.calls.get("model", 0) + 1
        return self


CHECKED_JSON = '{"title": "Report", "score": 7, "tags": ["a", "b"]}'
CHECKED_XML = (
    "<result><title>Report</title><score>7</score><tags><item>a</item><item>b</item></tags>"
    "</result>"
)


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize("answer", [CHECKED_JSON, CHECKED_XML], ids=["json", "xml"])
def test_fields_stream_then_the_object(answer: str, chunk_size: int) -> None:
    Checked.calls.clear()

    @llm_function(ScriptedModel([answer], chunk_size=chunk_size))
    def review(text: str) -> Checked:
        """Review the text."""

    parts = list(review.stream("some text"))
    # Each field validator ran once, when its field closed; the model validator once.
    assert Checked.calls == {"title": 1, "score": 1, "tags": 1, "model": 1}
    assert parts[:-1] == [
        FieldDone(name="title", value="Report"),
        FieldDone(name="score", value=7),
        FieldDone(name="tags", value=["a", "b"]),
    ]
    assert parts[-1] == Checked(title="Report", score=7, tags=["a", "b"])


def test_field_validators_run_once_per_field_during_a_call() -> None:
    Checked.calls.clear()

    @llm_function(ScriptedModel([CHECKED_JSON], chunk_size=1))
    def review(text: str) -> Checked:
        """Review the text."""

    result = list(review.stream("x"))[-1]
    assert isinstance(result, Checked)
    assert Checked.calls == {"title": 1, "score": 1, "tags": 1, "model": 1}


def test_a_field_re_ask_does_not_repeat_fields() -> None:
    model = ScriptedModel(
        [
            '{"title": "Report", "score": "high", "tags": []}',
            '{"title": "Report", "score": 9, "tags": []}',
        ]
    )

    @llm_function(model)
    def review(text: str) -> Checked:
        """Review the text."""

    parts = list(review.stream("x"))
    names = [p.name for p in parts if isinstance(p, FieldDone)]
    assert sorted(names) == ["score", "tags", "title"]
    assert parts[-1].score == 9
    assert "score" in model.requests[1].messages[-1]["content"]


def test_stream_of_another_type_gives_the_value() -> None:
    @llm_function(ScriptedModel(["42"]))
    def n() -> int:
        """A number."""

    assert list(n.stream()) == [42]


def test_async_field_stream() -> None:
    @llm_function(ScriptedModel([CHECKED_JSON], chunk_size=4))
    async def review() -> Checked:
        """Review."""

    async def main() -> list[Any]:
        return [part async for part in review.stream()]

    parts = asyncio.run(main())
    assert [p.name for p in parts[:-1]] == ["title", "score", "tags"]
    assert isinstance(parts[-1], Checked)


def test_bare_item_elements_in_a_text_protocol_are_the_answer() -> None:
    @tool
    def lookup(country: str) -> str:
        """Look up."""
        return "x"

    answer = "".join(
        f"<item>\n<name>{c.name}</name>\n<population>{c.population}</population>\n</item>\n"
        for c in CITIES
    )
    model = ScriptedModel([answer], chunk_size=2)

    @llm_function(model, toolkit=[lookup], protocol="xml")
    def cities() -> Iterator[City]:
        """Cities."""

    assert list(cities()) == CITIES
    assert len(model.requests) == 1  # <item> was not taken for an unknown tool
