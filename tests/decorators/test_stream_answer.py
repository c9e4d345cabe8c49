"""Typed answers read as they stream: list items and model fields as they complete.

Every case is read whole, one character at a time, at every split into two pieces and
in pseudo-random chunks, and must give the same events each time.
"""

from __future__ import annotations

import contextlib
import json
import random
from collections.abc import Callable, Iterator
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import (
    AfterValidator,
    BaseModel,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from stream_parser.decorators.answer import InvalidAnswer, read_answer
from stream_parser.decorators.stream_answer import (
    MAX_RESTARTS,
    FieldDone,
    FieldInvalid,
    FieldReader,
    ItemDone,
    ItemInvalid,
    ItemReader,
)
from stream_parser.schema.answer_xml import ChildSplitter


class City(BaseModel):
    name: str
    population: int


class Country(BaseModel):
    name: str
    capital: City
    cities: list[City]
    tags: list[str] = []


# --- chunkings -------------------------------------------------------------------------


def chunkings(text: str) -> Iterator[list[str]]:
    """The text whole, one character at a time, split at every position, random chunks."""
    yield [text]
    yield list(text)
    for cut in range(1, len(text)):
        yield [text[:cut], text[cut:]]
    rng = random.Random(len(text))
    for _ in range(5):
        pieces, pos = [], 0
        while pos < len(text):
            size = rng.randint(1, 8)
            pieces.append(text[pos : pos + size])
            pos += size
        yield pieces


def read_items(text: str, item: Any, **kwargs: Any) -> tuple[list[Any], bool, bool]:
    """The events of every chunking of ``text`` (asserted equal), and found/complete."""
    outcomes = set()
    first: tuple[list[Any], bool, bool] | None = None
    for pieces in chunkings(text):
        reader = ItemReader(item, **kwargs)
        events: list[Any] = []
        for piece in pieces:
            events += reader.feed(piece)
        events += reader.close()
        outcome = (events, reader.found, reader.complete)
        if first is None:
            first = outcome
        assert outcome == first, pieces
        outcomes.add(repr(outcome))
    assert first is not None and len(outcomes) == 1
    return first


def read_fields(
    text: str, model: type[BaseModel], reset: Callable[[], None] | None = None
) -> tuple[list[Any], Any]:
    """The events and the closed value (or the InvalidAnswer) of every chunking."""
    first: tuple[list[Any], Any] | None = None
    for pieces in chunkings(text):
        if reset is not None:
            reset()
        reader = FieldReader(model)
        events: list[Any] = []
        for piece in pieces:
            events += reader.feed(piece)
        try:
            value: Any = reader.close()
        except InvalidAnswer as exc:
            value = ("invalid", exc.errors)
        if first is None:
            first = (events, value)
        assert (events, value) == first, pieces
    assert first is not None
    return first


def cities(*pairs: tuple[str, int]) -> list[City]:
    return [City(name=name, population=population) for name, population in pairs]


# --- items -----------------------------------------------------------------------------

CITY_ROWS = [("Oslo", 709000), ("Rome", 2873000), ("Riga", 605000)]
JSON_CITIES = json.dumps([{"name": n, "population": p} for n, p in CITY_ROWS])


@pytest.mark.parametrize(
    "text",
    [
        JSON_CITIES,
        f"Here are the cities you asked for:\n```json\n{JSON_CITIES}\n```\nAnything else?",
        f"Sure, see [the list] below.\n{JSON_CITIES}",
        "<result>\n"
        + "".join(
            f"<item><name>{n}</name><population> {p} </population></item>\n" for n, p in CITY_ROWS
        )
        + "</result>",
        f"<result>\n{JSON_CITIES}\n</result>",
    ],
    ids=["bare-json", "prose-fence", "prose-bracket", "result-items", "json-in-result"],
)
def test_items_of_a_list_answer(text: str) -> None:
    events, found, complete = read_items(text, City)
    assert events == [ItemDone(i, city) for i, city in enumerate(cities(*CITY_ROWS))]
    assert found and complete
    # the same items the whole-answer reader finds
    assert read_answer(text, list[City]) == [event.value for event in events]


def test_bare_items_complete_when_the_reply_ends_with_none_open() -> None:
    text = "Cities:\n<item>Oslo</item>\n<item> Rome </item>\nThat is all. 1 < 2"
    events, found, complete = read_items(text, str)
    assert events == [ItemDone(0, "Oslo"), ItemDone(1, " Rome ")]  # a str item keeps its text
    assert found and complete
    # cut inside the last item: found, not complete, the list broken at the open item
    events, found, complete = read_items("<item>1</item><item>2", int)
    assert events[0] == ItemDone(0, 1) and found and not complete
    assert isinstance(events[1], ItemInvalid) and events[1].index == 1


def test_an_array_cut_short_is_not_complete() -> None:
    events, found, complete = read_items("[1, 2, 3", int)
    assert events[:2] == [ItemDone(0, 1), ItemDone(1, 2)]
    assert isinstance(events[2], ItemInvalid) and events[2].index == 2  # "3" may be "35"
    assert found and not complete


TOKYO_JSON = '{"name": "Tokyo", "population": 1}'
TOKYO_XML = "<item><name>Tokyo</name><population>1</population></item>"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (f'[{TOKYO_JSON}, {{"name": "Delhi", "popul', "JSON array is closed"),
        (f"[{TOKYO_JSON}, ", "JSON array is closed"),
        (f"[{TOKYO_JSON}", "JSON array is closed"),
        (f'[{TOKYO_JSON}}}, {{"name": "Delhi", "population": 2}}]', "'}' closes a '['"),
        (f"[{TOKYO_JSON},]", "']' where a key or value is expected"),
        (f'[{TOKYO_JSON}, {{"name": "Delhi}}]', "JSON array is closed"),
        (f'<result>[{TOKYO_JSON}, {{"na', "JSON array is closed"),
        (f"<result>{TOKYO_XML}<item><name>Delhi</name>", "</result>"),
        (f"<result>{TOKYO_XML}<item><name>Delhi</name></result>", "still open"),
        (f"<result>{TOKYO_XML} </resu", "</result>"),
        (f"{TOKYO_XML}<item><name>Del", "<item> is closed"),
        (f"{TOKYO_XML}\n<ite", "<item> is closed"),
        (f'{TOKYO_XML}<item attr="x', "<item> is closed"),
    ],
    ids=[
        "json-cut-mid-item",
        "json-cut-after-a-comma",
        "json-cut-before-the-bracket",
        "json-stray-brace",
        "json-trailing-comma",
        "json-unclosed-string",
        "json-in-result-cut",
        "result-cut-mid-item",
        "result-unclosed-item",
        "result-cut-in-its-end-tag",
        "bare-cut-mid-item",
        "bare-cut-in-a-start-tag",
        "bare-cut-in-an-attribute",
    ],
)
def test_a_list_that_breaks_is_broken_at_the_first_item_it_lacks(text: str, why: str) -> None:
    events, found, complete = read_items(text, City, start_index=4)
    assert found and not complete
    assert events[0] == ItemDone(4, City(name="Tokyo", population=1))
    assert len(events) == 2 and isinstance(events[1], ItemInvalid)
    broken = events[1]
    assert broken.index == 5
    assert [(e["type"], e["loc"]) for e in broken.errors] == [("list_incomplete", [5])]
    assert why in broken.message and "5:" in broken.message
    json.dumps(broken.errors)  # JSON-safe


def test_a_break_is_reported_where_it_is_seen() -> None:
    # A stray bracket breaks the list at once (the rest of the reply need not be read);
    # a cut only shows when the reply ends.
    reader = ItemReader(int)
    events = reader.feed("[1, 2}")
    assert [type(e).__name__ for e in events] == ["ItemDone", "ItemDone", "ItemInvalid"]
    assert reader.feed(", 3]") == [] and reader.close() == []
    reader = ItemReader(int)
    assert reader.feed("[1, 2, ") == [ItemDone(0, 1), ItemDone(1, 2)]
    closed = reader.close()
    assert len(closed) == 1 and isinstance(closed[0], ItemInvalid) and closed[0].index == 2
    assert reader.close() == []  # reported once


@pytest.mark.parametrize(
    "text",
    ["[1, 2]", "[]", "<result><item>1</item><item>2</item></result>", "<item>1</item> 3 < 4"],
)
def test_a_list_that_ends_properly_has_no_break(text: str) -> None:
    events, found, complete = read_items(text, int)
    assert found and complete
    assert all(isinstance(event, ItemDone) for event in events)


@pytest.mark.parametrize(
    "text",
    [
        '[{"name": "Oslo", "population": 1}, {"name": "Rome", "population": "many"},'
        ' {"name": "Riga", "population": 3}]',
        "<result><item><name>Oslo</name><population>1</population></item>"
        "<item><name>Rome</name><population>many</population></item>"
        "<item><name>Riga</name><population>3</population></item></result>",
    ],
    ids=["json", "xml"],
)
def test_an_invalid_item_in_the_middle(text: str) -> None:
    events, _, complete = read_items(text, City)
    assert complete
    assert events[0] == ItemDone(0, City(name="Oslo", population=1))
    assert events[2] == ItemDone(2, City(name="Riga", population=3))
    bad = events[1]
    assert isinstance(bad, ItemInvalid) and bad.index == 1
    assert [error["loc"] for error in bad.errors] == [[1, "population"]]
    assert "1.population" in bad.message and "'many'" in bad.message
    assert "many" in bad.text
    json.dumps(bad.errors)  # JSON-safe


def test_an_item_that_is_not_json() -> None:
    events, _, complete = read_items('[1, {"a": nope}, 3]', Any)
    assert events[0] == ItemDone(0, 1) and events[2] == ItemDone(2, 3)
    assert isinstance(events[1], ItemInvalid)
    assert events[1].errors[0]["type"] == "json_invalid" and events[1].errors[0]["loc"] == [1]
    assert complete


def test_start_index_numbers_a_continued_list() -> None:
    events, _, _ = read_items('["4", "x", "6"]', int, start_index=3)
    assert [event.index for event in events] == [3, 4, 5]
    assert events[0] == ItemDone(3, 4) and events[2] == ItemDone(5, 6)
    assert isinstance(events[1], ItemInvalid) and events[1].errors[0]["loc"] == [4]
    events, _, _ = read_items("<item>7</item><item>8</item>", int, start_index=10)
    assert events == [ItemDone(10, 7), ItemDone(11, 8)]


def test_no_list_in_the_reply() -> None:
    events, found, complete = read_items("I could not find any city <b>sorry</b>.", City)
    assert events == [] and not found and not complete
    events, found, complete = read_items("<result/>", City)
    assert events == [] and found and complete


def test_brackets_in_prose_are_given_up_a_bounded_number_of_times() -> None:
    prose = "[a] " * (MAX_RESTARTS + 2)
    reader = ItemReader(int)
    events = reader.feed(prose + "[1, 2]") + reader.close()
    # the first brackets are given up; the next one is taken as the list, whatever it holds
    assert len(events) == 1 and isinstance(events[0], ItemInvalid)
    assert events[0].text == "a" and reader.found and reader.complete
    events, _, _ = read_items("[a] " * MAX_RESTARTS + "[1, 2]", int)
    assert events == [ItemDone(0, 1), ItemDone(1, 2)]


# --- fields ----------------------------------------------------------------------------


def test_fields_from_json_in_any_order() -> None:
    text = (
        "Here:\n```json\n"
        '{"cities": [{"name": "Bergen", "population": 285000}], "extra": {"x": [1]},'
        ' "name": "Norway", "capital": {"name": "Oslo", "population": "709000"}}\n```'
    )
    events, value = read_fields(text, Country)
    assert events == [
        FieldDone("cities", cities(("Bergen", 285000))),
        FieldDone("name", "Norway"),
        FieldDone("capital", City(name="Oslo", population=709000)),
    ]
    assert value == read_answer(text, Country)
    assert value.tags == [] and value.model_fields_set == {"cities", "name", "capital"}


def test_fields_from_result_xml_in_any_order() -> None:
    text = (
        "<result>\n<capital><name>Oslo</name><population>709000</population></capital>\n"
        "<tags>north</tags><tags>cold</tags>\n<unknown>x</unknown>\n"
        "<cities><item><name>Bergen</name><population>285000</population></item></cities>\n"
        "<name>\nNorway\n</name>\n</result>"
    )
    events, value = read_fields(text, Country)
    assert events == [
        FieldDone("capital", City(name="Oslo", population=709000)),
        # a list field written as its tag repeated is complete when another field follows
        FieldDone("tags", ["north", "cold"]),
        FieldDone("cities", cities(("Bergen", 285000))),
        FieldDone("name", "Norway"),
    ]
    assert value == read_answer(text, Country)


def test_an_invalid_field_is_reported_and_fails_at_close() -> None:
    text = '{"name": "Norway", "capital": {"name": "Oslo", "population": "lots"}, "cities": []}'
    events, value = read_fields(text, Country)
    assert events[0] == FieldDone("name", "Norway") and events[2] == FieldDone("cities", [])
    bad = events[1]
    assert isinstance(bad, FieldInvalid) and bad.name == "capital"
    assert bad.errors[0]["loc"] == ["capital", "population"]
    assert "capital.population" in bad.message and "lots" in bad.text
    assert value[0] == "invalid" and value[1] == bad.errors


def test_a_missing_required_field_fails_at_close() -> None:
    events, value = read_fields('{"name": "Norway", "cities": []}', Country)
    assert [event.name for event in events] == ["name", "cities"]
    assert value == ("invalid", ({"type": "missing", "loc": ["capital"], "msg": "Field required"},))
    with pytest.raises(InvalidAnswer, match="capital: Field required"):
        reader = FieldReader(Country)
        reader.feed("<result><name>Norway</name><cities></cities></result>")
        reader.close()


def test_no_object_in_the_reply() -> None:
    reader = FieldReader(City)
    assert reader.feed("I do not know [sorry].") == []
    with pytest.raises(InvalidAnswer) as info:
        reader.close()
    assert info.value.errors[0]["type"] == "answer_missing"


def test_aliases() -> None:
    class Person(BaseModel):
        full_name: str = Field(alias="fullName")
        age: int = Field(validation_alias="years")

    events, value = read_fields('{"fullName": "Ann", "years": "41"}', Person)
    assert events == [FieldDone("full_name", "Ann"), FieldDone("age", 41)]
    assert value == Person.model_validate({"fullName": "Ann", "years": 41})
    events, value = read_fields(
        "<result><years>41</years><fullName>Ann</fullName></result>", Person
    )
    assert events == [FieldDone("age", 41), FieldDone("full_name", "Ann")]


class Counters:
    field: dict[str, int]
    model = 0


COUNTS = Counters()


def _reset() -> None:
    COUNTS.field = {}
    COUNTS.model = 0


def _count(name: str) -> None:
    COUNTS.field[name] = COUNTS.field.get(name, 0) + 1


def _upper(value: str) -> str:
    _count("code")
    return value.upper()


class Checked(BaseModel):
    name: str
    code: Annotated[str, AfterValidator(_upper)]
    size: int = 1

    @field_validator("name", "size")
    @classmethod
    def _seen(cls, value: Any, info: ValidationInfo) -> Any:
        assert cls is Checked  # the model's own validator, bound to the model
        _count(info.field_name or "")
        return value

    @model_validator(mode="after")
    def _whole(self) -> Checked:
        COUNTS.model += 1
        if self.name == "bad":
            raise ValueError("name may not be 'bad'")
        return self


@pytest.mark.parametrize(
    "text",
    [
        'Answer: {"code": "ab", "name": "n", "size": 3}',
        "<result><code>ab</code><size>3</size><name>n</name></result>",
    ],
)
def test_each_validator_runs_once(text: str) -> None:
    events, value = read_fields(text, Checked, reset=_reset)
    assert value == Checked(name="n", code="ab", size=3)  # this one counts too, so last
    assert {event.name: event.value for event in events} == {"code": "AB", "name": "n", "size": 3}
    _reset()
    reader = FieldReader(Checked)
    for char in text:
        reader.feed(char)
        if char != ">" and char != "}":
            assert COUNTS.model == 0
    assert COUNTS.field == {"code": 1, "name": 1, "size": 1}
    reader.close()
    assert COUNTS.field == {"code": 1, "name": 1, "size": 1} and COUNTS.model == 1


def test_a_default_is_not_validated_and_an_after_model_validator_may_fail() -> None:
    _reset()
    reader = FieldReader(Checked)
    reader.feed('{"name": "bad", "code": "x"}')
    with pytest.raises(InvalidAnswer, match="name may not be 'bad'") as info:
        reader.close()
    assert info.value.errors[0]["type"] == "value_error"
    assert COUNTS.field == {"name": 1, "code": 1} and COUNTS.model == 1


class Before(BaseModel):
    a: int
    b: int

    @field_validator("a")
    @classmethod
    def _seen(cls, value: int) -> int:
        _count("a")
        return value

    @model_validator(mode="before")
    @classmethod
    def _swap(cls, data: Any) -> Any:
        COUNTS.model += 1
        if isinstance(data, dict) and data.get("b") == 0:
            data = {**data, "b": data["a"]}
        return data


def test_a_before_model_validator_validates_the_whole_model_at_the_end() -> None:
    events, value = read_fields('{"a": 5, "b": 0}', Before, reset=_reset)
    # The stream's events are previews; the model's own validation has the last word.
    assert events == [FieldDone("a", 5), FieldDone("b", 0)]
    assert value == Before(a=5, b=5)
    _reset()
    reader = FieldReader(Before)
    reader.feed('{"a": 5, "b": 0}')
    assert COUNTS.field == {"a": 1} and COUNTS.model == 0
    reader.close()
    # documented: the field validators run again in the whole validation
    assert COUNTS.field == {"a": 2} and COUNTS.model == 1


class Needs(BaseModel):
    password: str
    repeat: str

    @field_validator("repeat")
    @classmethod
    def _same(cls, value: str, info: ValidationInfo) -> str:
        _count("repeat")
        if value != info.data.get("password"):
            raise ValueError("passwords differ")
        return value


@pytest.mark.parametrize("order", ["declared", "reversed"])
def test_a_field_validator_sees_the_earlier_fields_in_info_data(order: str) -> None:
    pairs = [("password", "x"), ("repeat", "x")]
    if order == "reversed":
        pairs.reverse()
    text = json.dumps(dict(pairs))
    events, value = read_fields(text, Needs, reset=_reset)
    # "repeat" waits for "password", declared before it, whatever the order written
    assert events == [FieldDone("password", "x"), FieldDone("repeat", "x")]
    assert value == Needs(password="x", repeat="x")
    _reset()
    reader = FieldReader(Needs)
    reader.feed(text.replace('"x"}', '"y"}'))
    with pytest.raises(InvalidAnswer, match="passwords differ"):
        reader.close()
    assert COUNTS.field == {"repeat": 1}


def test_a_held_field_is_validated_at_close_when_the_earlier_one_never_comes() -> None:
    reader = FieldReader(Needs)
    assert reader.feed('{"repeat": "x"}') == []  # held: "password" may still come
    with pytest.raises(InvalidAnswer) as info:
        reader.close()
    assert {error["loc"][0] for error in info.value.errors} == {"repeat", "password"}


def test_a_field_validator_failing_outside_validation_falls_back_to_the_whole_model() -> None:
    class Odd(BaseModel):
        a: int
        b: int

        @field_validator("b")
        @classmethod
        def _odd(cls, value: int) -> int:
            if value == 13:
                raise LookupError("unlucky")  # not a validation error
            return value

    events, value = read_fields('{"a": 1, "b": 2}', Odd)
    assert events == [FieldDone("a", 1), FieldDone("b", 2)] and value == Odd(a=1, b=2)
    reader = FieldReader(Odd)
    assert reader.feed('{"a": 1, "b": 13}') == [FieldDone("a", 1)]  # no event for b
    with pytest.raises(LookupError):  # the whole validation raises what the model raises
        reader.close()


# --- never raises ----------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet='<>/[]{}",:\\ itemresultname0123 \n`!CDATA', max_size=80))
def test_model_text_never_raises(text: str) -> None:
    items = ItemReader(City)
    fields = FieldReader(Country)
    for piece in (text[:7], text[7:]):
        items.feed(piece)
        fields.feed(piece)
    items.close()
    with contextlib.suppress(InvalidAnswer):
        fields.close()


@settings(max_examples=80, deadline=None)
@given(st.text(alphabet='<>/[]{}",:\\ itemresult0123 \n`', max_size=60), st.integers(0, 60))
def test_a_list_found_is_complete_or_broken_once(text: str, cut: int) -> None:
    whole = ItemReader(int)
    expected = whole.feed(text) + whole.close()
    reader = ItemReader(int)
    events = reader.feed(text[:cut]) + reader.feed(text[cut:]) + reader.close()
    assert events == expected and (reader.found, reader.complete) == (whole.found, whole.complete)
    breaks = [
        event
        for event in events
        if isinstance(event, ItemInvalid) and event.errors[0]["type"] == "list_incomplete"
    ]
    if reader.found and not reader.complete:
        assert breaks == [events[-1]]  # reported once, and nothing after it
    else:
        assert breaks == []


# --- growth ----------------------------------------------------------------------------


class Counted(BaseModel):
    name: str
    note: str

    @model_validator(mode="after")
    def _count(self) -> Counted:
        COUNTS.model += 1
        return self


def _feed_randomly(reader: ItemReader, text: str) -> tuple[list[Any], int]:
    rng = random.Random(7)
    events: list[Any] = []
    peak = pos = 0
    while pos < len(text):
        size = rng.randint(1, 8)
        events += reader.feed(text[pos : pos + size])
        peak = max(peak, reader.retained)
        pos += size
    return events + reader.close(), peak


@pytest.mark.slow
@pytest.mark.parametrize("form", ["json", "xml"])
def test_a_megabyte_list_keeps_the_reader_small(form: str) -> None:
    rows = [{"name": f"city {i}", "note": "x < y & z " * (i % 7)} for i in range(16000)]
    if form == "json":
        pieces = [json.dumps(row) for row in rows]
        text = "Here they are:\n```json\n[" + ",\n".join(pieces) + "]\n```"
    else:
        pieces = [f"<item><name>{r['name']}</name><note>{r['note']}</note></item>" for r in rows]
        text = "<result>\n" + "\n".join(pieces) + "\n</result>"
    assert len(text) > 1_000_000
    _reset()
    reader = ItemReader(Counted)
    events, peak = _feed_randomly(reader, text)
    validations = COUNTS.model
    assert len(events) == len(rows) and all(isinstance(e, ItemDone) for e in events)
    assert events[-1] == ItemDone(len(rows) - 1, Counted(**rows[-1]))
    assert reader.complete
    assert validations == len(rows)  # each item validated once
    assert peak <= 3 * max(map(len, pieces)) + 64


def test_the_splitter_keeps_only_the_open_child() -> None:
    splitter = ChildSplitter("result", "item")
    peak = 0
    for i in range(2000):
        for char in f"junk {i} <b>x</b> <item>{'v' * 20}</item>":
            splitter.feed(char)
            peak = max(peak, splitter.retained)
    assert peak <= 30
    assert splitter.feed("</result>") == [] and splitter.done


def test_the_splitter_at_every_chunking() -> None:
    text = (
        "\n<item><name>A<![CDATA[</item> <item>]]></name><item>x</item></item>"
        " a < b & c <item/><item>last</item>\n</result> after <item>no</item>"
    )
    outcomes = set()
    for pieces in chunkings(text):
        splitter = ChildSplitter("result")
        found = [
            (element.tag, element.raw, tuple(child.tag for child in element.children))
            for piece in pieces
            for element in splitter.feed(piece)
        ]
        outcomes.add((tuple(found), splitter.done, splitter.in_child))
    assert outcomes == {
        (
            (
                # CDATA hides the end tag; a nested element of the same name is counted
                (
                    "item",
                    "<name>A<![CDATA[</item> <item>]]></name><item>x</item>",
                    ("name", "item"),
                ),
                ("item", "", ()),
                ("item", "last", ()),
            ),
            True,
            False,
        )
    }


def test_the_container_closing_over_an_open_child_drops_it() -> None:
    splitter = ChildSplitter("result", "item")
    found = splitter.feed("<item>1</item><other>2</other><item>3</result><item>4</item>")
    assert [element.raw for element in found] == ["1"]  # <other> is not an item
    assert splitter.done and not splitter.in_child and splitter.retained == 0
    assert splitter.dropped  # the open <item>3 was dropped
    whole = ChildSplitter("result", "item")
    whole.feed("<item>1</item></result>")
    assert whole.done and not whole.dropped


def test_fields_as_json_inside_result() -> None:
    events, value = read_fields('<result>\n{"population": 3, "name": "Vik"}\n</result>', City)
    assert events == [FieldDone("population", 3), FieldDone("name", "Vik")]
    assert value == City(name="Vik", population=3)


class Shapes(BaseModel):
    low: int
    high: int
    label: str = "none"

    @field_validator("low", mode="wrap")
    @classmethod
    def _wrapped(cls, value: Any, handler: Any, info: ValidationInfo) -> Any:
        _count(f"wrap:{info.field_name}")
        return handler(value) * 10

    @field_validator("label", mode="plain")
    @classmethod
    def _plain(cls, value: Any) -> str:
        _count("plain")
        return f"<{value}>"

    @model_validator(mode="after")
    def _ordered(self, info: ValidationInfo) -> Shapes:
        COUNTS.model += 1
        assert info.context is None
        if self.low > self.high:
            raise ValueError("low is above high")
        return self


def test_wrap_and_plain_field_validators_and_an_after_validator_with_info() -> None:
    events, value = read_fields('{"label": "a", "high": 100, "low": 2}', Shapes, reset=_reset)
    assert events == [FieldDone("label", "<a>"), FieldDone("high", 100), FieldDone("low", 20)]
    assert value == Shapes.model_validate({"label": "a", "high": 100, "low": 2})
    _reset()
    reader = FieldReader(Shapes)
    reader.feed("<result><low>50</low><high>100</high></result>")
    with pytest.raises(InvalidAnswer, match="low is above high"):
        reader.close()
    assert COUNTS.field == {"wrap:low": 1} and COUNTS.model == 1


def test_the_benchmark_script_runs() -> None:
    """The streamed-answer benchmark stays runnable (smallest size, one run, no baseline)."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_stream_answer.py"
    spec = importlib.util.spec_from_file_location("bench_stream_answer", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--sizes", "10KB", "--repeat", "1", "--baseline-budget", "0"]) == 0
