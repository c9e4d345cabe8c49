"""The answer contract: a model's final answer read as a value of the return annotation.

One test (or case) per row of the table in ``docs/answers.md`` and per form a value may
come in: bare JSON, fenced JSON, JSON embedded in prose, and ``<result>`` XML.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import inspect
import json
import pickle
from decimal import Decimal
from typing import Annotated, Any, Literal, NewType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, Field, RootModel, field_validator
from typing_extensions import TypedDict

from stream_parser.decorators import answer as answer_module
from stream_parser.decorators.answer import (
    MAX_EMBEDDED_ATTEMPTS,
    AnswerReader,
    InvalidAnswer,
    expects_text,
    read_answer,
    reader_for,
)


class City(BaseModel):
    name: str
    population: int


class Country(BaseModel):
    name: str
    cities: list[City]


class Person(BaseModel):
    name: str
    age: int
    nickname: str | None = None


class Closed(BaseModel):
    model_config = ConfigDict(extra="forbid")
    a: int


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Point(TypedDict):
    x: int
    y: int


@dataclasses.dataclass
class Agent:
    code: str
    rank: int


def invalid(text: str, annotation: Any) -> InvalidAnswer:
    with pytest.raises(InvalidAnswer) as caught:
        read_answer(text, annotation)
    return caught.value


# --- str and no annotation -------------------------------------------------------------

VERBATIM = [
    "  padded  \n",
    '"quoted"',
    "42",
    '```json\n{"a": 1}\n```',
    "<result>x</result>",
    "null",
]


@pytest.mark.parametrize("text", VERBATIM)
@pytest.mark.parametrize("annotation", [str, inspect.Signature.empty, inspect.Parameter.empty])
def test_str_and_no_annotation_keep_the_answer_exactly(text: str, annotation: Any) -> None:
    assert read_answer(text, annotation) == text


def test_constrained_str_keeps_the_text_and_its_checks() -> None:
    short = Annotated[str, Field(max_length=5)]
    assert read_answer(" ab ", short) == " ab "
    error = invalid("much too long", short)
    assert error.errors[0]["type"] == "string_too_long"
    assert not error.empty


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (str, True),
        (inspect.Signature.empty, True),
        (Annotated[str, "doc"], True),
        (NewType("Name", str), True),
        (int, False),
        (str | None, False),
        (list[str], False),
        (None, False),
    ],
)
def test_expects_text(annotation: Any, expected: bool) -> None:
    assert expects_text(annotation) is expected


# --- None ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "done", '{"a": 1}', "null"])
@pytest.mark.parametrize("annotation", [None, type(None)])
def test_none_returns_none_whatever_the_reply(text: str, annotation: Any) -> None:
    assert read_answer(text, annotation) is None


# --- scalars ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "annotation", "expected"),
    [
        ("42", int, 42),
        ("  42 \n", int, 42),
        ('"42"', int, 42),
        ("```json\n42\n```", int, 42),
        ("```\n42\n```", int, 42),
        ("<result>42</result>", int, 42),
        ("<result>\n  42\n</result>", int, 42),
        ('<result>"42"</result>', int, 42),
        ("Yes", bool, True),
        ("False", bool, False),
        ("true", bool, True),
        ("42", float, 42.0),
        ("3.5", float, 3.5),
        ("red", Color, Color.RED),
        ('"green"', Color, Color.GREEN),
        ("2", Level, Level.HIGH),
        ("b", Literal["a", "b"], "b"),
        ("3.10", Decimal, Decimal("3.10")),
        ("2024-05-06", dt.date, dt.date(2024, 5, 6)),
        ("null", int | None, None),
        ("7", int | None, 7),
        ("```json\nnull\n```", int | None, None),
    ],
)
def test_scalars(text: str, annotation: Any, expected: Any) -> None:
    result = read_answer(text, annotation)
    assert result == expected
    assert type(result) is type(expected)


def test_float_reads_an_integer_as_a_float() -> None:
    result = read_answer("42", float)
    assert result == 42.0
    assert isinstance(result, float)


@pytest.mark.parametrize(
    ("text", "annotation"),
    [("3.5", int), ("many", int), ("maybe", bool), ("c", Literal["a", "b"]), ("blue", Color)],
)
def test_scalars_that_do_not_convert(text: str, annotation: Any) -> None:
    error = invalid(text, annotation)
    assert not error.empty
    assert error.errors
    assert repr(text) in error.message  # the value given is quoted back


def test_an_enum_member_is_also_found_by_name() -> None:
    assert read_answer("RED", Color) is Color.RED


# --- empty answers ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "annotation",
    [
        int,
        float,
        bool,
        Color,
        Person,
        list[int],
        dict[str, int],
        int | None,
        str,
        inspect.Signature.empty,
        int | str,
        str | None,
        Any,
        Annotated[str, Field(max_length=9)],
    ],
)
@pytest.mark.parametrize("text", ["", "  \n\t "])
def test_an_empty_answer_is_invalid_and_says_so(text: str, annotation: Any) -> None:
    error = invalid(text, annotation)
    assert error.empty
    assert error.errors[0]["type"] == "answer_empty"
    assert "empty" in error.message


# --- structured: the four forms --------------------------------------------------------

CITY = City(name="Oslo", population=709000)
CITY_JSON = '{"name": "Oslo", "population": 709000}'

CITY_FORMS = {
    "bare": CITY_JSON,
    "bare, padded": f"\n  {CITY_JSON}  \n",
    "fenced json": f"Here it is:\n```json\n{CITY_JSON}\n```\nAnything else?",
    "fenced bare": f"```\n{CITY_JSON}\n```",
    "fenced, one line": f"```{CITY_JSON}```",
    "embedded": f"Here you go: {CITY_JSON} Hope it helps",
    "xml": "<result><name>Oslo</name><population>709000</population></result>",
    "xml in prose": (
        "Sure.\n<result>\n  <name>Oslo</name>\n  <population> 709000 </population>\n</result>\n"
        "Let me know."
    ),
    "xml holding json": f"<result>{CITY_JSON}</result>",
}


@pytest.mark.parametrize("text", CITY_FORMS.values(), ids=CITY_FORMS.keys())
def test_a_model_in_every_form(text: str) -> None:
    assert read_answer(text, City) == CITY


COUNTRY = Country(
    name="Norway",
    cities=[City(name="Oslo", population=709000), City(name="Bergen", population=291000)],
)
COUNTRY_XML = """<result>
<name>Norway</name>
<cities>
  <item><name>Oslo</name><population>709000</population></item>
  <item><name>Bergen</name><population>291000</population></item>
</cities>
</result>"""


@pytest.mark.parametrize(
    "text",
    [
        COUNTRY.model_dump_json(),
        f"```json\n{COUNTRY.model_dump_json(indent=2)}\n```",
        f"The answer: {COUNTRY.model_dump_json()}.",
        COUNTRY_XML,
    ],
    ids=["bare", "fenced", "embedded", "xml"],
)
def test_nested_models(text: str) -> None:
    assert read_answer(text, Country) == COUNTRY


@pytest.mark.parametrize(
    "text",
    [
        json.dumps([c.model_dump() for c in COUNTRY.cities]),
        f"```json\n{json.dumps([c.model_dump() for c in COUNTRY.cities])}\n```",
        f"Cities: {json.dumps([c.model_dump() for c in COUNTRY.cities])} -- done",
        "<result><item><name>Oslo</name><population>709000</population></item>"
        "<item><name>Bergen</name><population>291000</population></item></result>",
    ],
    ids=["bare", "fenced", "embedded", "xml"],
)
def test_a_list_of_models(text: str) -> None:
    assert read_answer(text, list[City]) == COUNTRY.cities


@pytest.mark.parametrize(
    ("text", "annotation", "expected"),
    [
        ("[1, 2, 3]", list[int], [1, 2, 3]),
        ("<result><item>1</item><item> 2 </item></result>", list[int], [1, 2]),
        ("<result></result>", list[int], []),
        ('Numbers: ["1", 2] ok', list[int], [1, 2]),
        ('[1, "a"]', tuple[int, str], (1, "a")),
        ("<result><item>1</item><item>a</item></result>", tuple[int, str], (1, "a")),
        ("[1, 2, 2]", set[int], {1, 2}),
        ('{"a": 1, "b": 2}', dict[str, int], {"a": 1, "b": 2}),
        ("<result><a>1</a><b>2</b></result>", dict[str, int], {"a": 1, "b": 2}),
        ('{"x": 1, "y": "2"}', Point, {"x": 1, "y": 2}),
        ("<result><x>1</x><y>2</y></result>", Point, {"x": 1, "y": 2}),
        ('{"code": "007", "rank": 3}', Agent, Agent(code="007", rank=3)),
        ("<result><code>007</code><rank>3</rank></result>", Agent, Agent(code="007", rank=3)),
    ],
)
def test_containers_typeddicts_and_dataclasses(text: str, annotation: Any, expected: Any) -> None:
    result = read_answer(text, annotation)
    assert result == expected
    assert type(result) is type(expected)


def test_a_list_field_may_repeat_its_tag() -> None:
    text = "<result><name>N</name><cities><name>A</name><population>1</population></cities>"
    text += "<cities><name>B</name><population>2</population></cities></result>"
    assert read_answer(text, Country).cities == [
        City(name="A", population=1),
        City(name="B", population=2),
    ]


# --- structured: null, extra fields, several values ------------------------------------


@pytest.mark.parametrize("text", ["null", " null\n", "```json\nnull\n```", "<result>null</result>"])
def test_null_is_none_for_an_optional_model(text: str) -> None:
    assert read_answer(text, City | None) is None


def test_an_optional_model_still_reads_the_model() -> None:
    assert read_answer(f"Result: {CITY_JSON}", City | None) == CITY


def test_null_for_a_model_that_is_not_optional_is_invalid() -> None:
    error = invalid("null", City)
    assert error.errors[0]["type"] == "model_type"


@pytest.mark.parametrize(
    "text",
    [
        '{"name": "Oslo", "population": 709000, "country": "Norway"}',
        "<result><name>Oslo</name><country>Norway</country><population>709000</population>"
        "</result>",
    ],
)
def test_extra_fields_are_ignored(text: str) -> None:
    assert read_answer(text, City) == CITY


def test_extra_fields_follow_the_models_own_config() -> None:
    error = invalid('{"a": 1, "b": 2}', Closed)
    assert error.errors[0]["type"] == "extra_forbidden"
    assert error.errors[0]["loc"] == ["b"]


def test_the_first_embedded_value_that_validates_wins() -> None:
    text = (
        'First I tried {"name": "Oslo"} but that lacks the population; '
        'so: {"name": "Bergen", "population": 291000}, and also {"name": "X", "population": 1}.'
    )
    assert read_answer(text, City) == City(name="Bergen", population=291000)


def test_the_first_fence_that_validates_wins() -> None:
    text = (
        '```json\n{"name": "Oslo"}\n```\nCorrected:\n'
        '```json\n{"name": "Oslo", "population": 709000}\n```'
    )
    assert read_answer(text, City) == CITY


def test_when_no_fence_validates_the_first_ones_errors_are_reported() -> None:
    text = '```json\n{"name": "Oslo"}\n```\n```json\n{"population": "many"}\n```'
    error = invalid(text, City)
    assert [e["loc"] for e in error.errors] == [["population"]]
    assert error.errors[0]["type"] == "missing"


def test_a_fence_that_is_not_json_is_reported_as_such() -> None:
    error = invalid("```json\n{name: Oslo}\n```", City)
    assert error.errors[0]["type"] == "json_invalid"


def test_a_value_inside_a_rejected_value_is_not_tried() -> None:
    # Skipping past each decoded value keeps the scan linear; the inner object is part
    # of the outer one, which is what the model offered.
    text = 'Data: {"wrapper": {"name": "Oslo", "population": 709000}}'
    assert invalid(text, City).errors[0]["loc"] == ["name"]


# --- the lenient XML -------------------------------------------------------------------


def test_raw_ampersand_and_angle_bracket_are_kept() -> None:
    text = "<result><name>a < b & c</name><age>3</age></result>"
    assert read_answer(text, Person).name == "a < b & c"


def test_entities_are_not_decoded() -> None:
    text = "<result><name>&lt;b&gt; &amp; &#65;</name><age>3</age></result>"
    assert read_answer(text, Person).name == "&lt;b&gt; &amp; &#65;"


def test_cdata_is_taken_verbatim() -> None:
    text = "<result><name><![CDATA[<age>9</age> & ]]]]></name><age>3</age></result>"
    person = read_answer(text, Person)
    assert person == Person(name="<age>9</age> & ]]", age=3)


def test_a_str_field_keeps_its_text() -> None:
    text = "<result><code> 007 </code><rank>1</rank></result>"
    assert read_answer(text, Agent) == Agent(code=" 007 ", rank=1)
    assert read_answer("<result><code>007</code><rank>1</rank></result>", Agent).code == "007"


def test_a_str_leaf_loses_one_newline_each_side_only() -> None:
    text = "<result><name>\nline1\nline2\n</name><age>1</age></result>"
    assert read_answer(text, Person).name == "line1\nline2"
    text = "<result><name>\n\n  line1\n\n</name><age>1</age></result>"
    assert read_answer(text, Person).name == "\n  line1\n"


def test_tags_inside_a_str_field_are_text() -> None:
    text = "<result><name>use <b>bold</b> here</name><age>1</age></result>"
    assert read_answer(text, Person).name == "use <b>bold</b> here"


def test_an_unclosed_tag_inside_a_value_is_text() -> None:
    text = "<result><name>x <y z</name><age>1</age></result>"
    assert read_answer(text, Person).name == "x <y z"


def test_an_empty_optional_str_element() -> None:
    text = "<result><name>A</name><age>1</age><nickname/></result>"
    assert read_answer(text, Person).nickname == ""


# --- unions ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("42", 42),
        (" 42 ", 42),
        ("hello", "hello"),
        ("3.5", "3.5"),
        ("  spaced out \n", "  spaced out \n"),
        ("42 apples", "42 apples"),
    ],
)
def test_union_of_int_and_str(text: str, expected: Any) -> None:
    result = read_answer(text, int | str)
    assert result == expected
    assert type(result) is type(expected)


def test_union_of_a_model_and_str() -> None:
    assert read_answer(f"Here: {CITY_JSON}", City | str) == CITY
    assert read_answer("I do not know.", City | str) == "I do not know."


def test_union_of_models_picks_the_one_that_validates() -> None:
    assert read_answer('{"x": 1, "y": 2}', City | Point) == {"x": 1, "y": 2}
    xml = "<result><x>1</x><y>2</y></result>"
    assert read_answer(xml, City | Point) == {"x": 1, "y": 2}


# --- error messages --------------------------------------------------------------------


def test_errors_name_the_field_path() -> None:
    data = COUNTRY.model_dump()
    data["cities"][1]["population"] = "many"
    error = invalid(json.dumps(data), Country)
    assert [e["loc"] for e in error.errors] == [["cities", 1, "population"]]
    assert "cities.1.population: Input should be a valid integer" in error.message
    assert "(got 'many')" in error.message
    assert "Country" in error.message.splitlines()[0]
    json.dumps(error.errors)  # JSON-safe
    assert set(error.errors[0]) >= {"type", "loc", "msg", "input"}


def test_xml_errors_name_the_field_path_too() -> None:
    text = COUNTRY_XML.replace("291000", "lots")
    error = invalid(text, Country)
    assert "cities.1.population" in error.message


def test_no_value_at_all_is_said_plainly() -> None:
    error = invalid("I could not find that person.", Person)
    assert error.errors[0]["type"] == "answer_missing"
    assert (
        "expected a JSON object (or a <result> element) for Person; the answer has none"
        in error.message
    )
    assert "JSON array" in invalid("none", list[int]).message
    assert not invalid("none", list[int]).empty


def test_user_validator_errors_become_invalid_answers() -> None:
    class Even(BaseModel):
        n: int

        @field_validator("n")
        @classmethod
        def even(cls, value: int) -> int:
            if value % 2:
                raise ValueError("must be even")
            return value

    error = invalid('{"n": 3}', Even)
    assert "n: Value error, must be even" in error.message


# --- readers ---------------------------------------------------------------------------


def test_a_reader_is_built_once_per_annotation() -> None:
    annotation = list[Person]
    assert reader_for(annotation) is reader_for(annotation)
    assert isinstance(reader_for(annotation), AnswerReader)


def test_an_unhashable_annotation_gets_a_reader() -> None:
    annotation = Annotated[int, ["unhashable metadata"]]
    with pytest.raises(TypeError):
        hash(annotation)
    assert reader_for(annotation) is reader_for(annotation)
    assert read_answer(" 7 ", annotation) == 7


# --- growth ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "prose",
    [
        "All work and no play. " * 9_000,
        "{ not json } " * 16_000,
        "[x] " * 50_000,
        "{" * 200_000,
    ],
    ids=["words", "braces", "brackets", "open braces"],
)
def test_prose_without_json_costs_a_bounded_number_of_decode_attempts(
    prose: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert len(prose) >= 195_000
    calls = []
    decode = answer_module._decode_at

    def counting(text: str, pos: int) -> Any:
        calls.append(pos)
        return decode(text, pos)

    monkeypatch.setattr(answer_module, "_decode_at", counting)
    error = invalid(prose, dict[str, int])
    assert error.errors[0]["type"] == "answer_missing"
    assert len(calls) <= MAX_EMBEDDED_ATTEMPTS + 1


def test_decoded_values_are_skipped_not_rescanned(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    decode = answer_module._decode_at

    def counting(text: str, pos: int) -> Any:
        calls.append(pos)
        return decode(text, pos)

    monkeypatch.setattr(answer_module, "_decode_at", counting)
    text = "x " + json.dumps({"deep": [{"a": [1, 2, {"b": {}}]}] * 2000})
    invalid(text, City)
    assert len(calls) == 2  # the whole answer, then the one embedded value


# --- property: JSON, fenced JSON and XML read back -------------------------------------


class Record(BaseModel):
    title: str
    count: int
    ratio: float
    done: bool
    tags: list[str]
    owner: Person | None = None


_leaf = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="<"),
    max_size=20,
).map(str.strip)
_person = st.builds(Person, name=_leaf, age=st.integers(-1000, 1000), nickname=st.none() | _leaf)
_records = st.builds(
    Record,
    title=_leaf,
    count=st.integers(-(10**6), 10**6),
    ratio=st.floats(allow_nan=False, allow_infinity=False, width=32),
    done=st.booleans(),
    tags=st.lists(_leaf, max_size=4),
    owner=st.none() | _person,
)


def _xml(record: Record) -> str:
    def leaf(tag: str, value: Any) -> str:
        if isinstance(value, bool):
            value = "true" if value else "false"
        return f"<{tag}>{value}</{tag}>"

    parts = [
        leaf("title", record.title),
        leaf("count", record.count),
        leaf("ratio", repr(record.ratio)),
        leaf("done", record.done),
        "<tags>" + "".join(leaf("item", tag) for tag in record.tags) + "</tags>",
    ]
    if record.owner is not None:
        owner = record.owner
        inner = leaf("name", owner.name) + leaf("age", owner.age)
        if owner.nickname is not None:
            inner += leaf("nickname", owner.nickname)
        parts.append(f"<owner>{inner}</owner>")
    return "Here:\n<result>\n" + "\n".join(parts) + "\n</result>\nDone."


@settings(max_examples=60, deadline=None)
@given(record=_records, form=st.sampled_from(["json", "fenced", "embedded", "xml"]))
def test_generated_records_read_back(record: Record, form: str) -> None:
    as_json = record.model_dump_json()
    text = {
        "json": as_json,
        "fenced": f"Result:\n```json\n{as_json}\n```\n",
        "embedded": f"The record is {as_json} as requested.",
        "xml": _xml(record),
    }[form]
    assert read_answer(text, Record) == record


def test_a_root_model_reads_its_root() -> None:
    class Numbers(RootModel[list[int]]):
        pass

    assert read_answer("Numbers: [1, 2] done", Numbers) == Numbers([1, 2])
    assert read_answer("<result><item>3</item></result>", Numbers) == Numbers([3])


def test_invalid_answer_survives_pickling() -> None:
    error = pickle.loads(pickle.dumps(invalid(" ", int)))
    assert isinstance(error, InvalidAnswer)
    assert error.empty
    assert error.errors[0]["type"] == "answer_empty"
    assert error.message == str(error)
