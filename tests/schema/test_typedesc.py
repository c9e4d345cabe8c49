"""Type descriptions for prompts: names, readable text, JSON description, example values."""

# The older typing spellings (Optional, Union, List, Dict) are tested on purpose.
# ruff: noqa: UP006, UP007, UP035, UP045

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import json
import typing
import uuid
from decimal import Decimal
from typing import Annotated, Any, Dict, List, Literal, Optional, Tuple, Union

import pytest
from pydantic import BaseModel, Field, TypeAdapter
from typing_extensions import NotRequired, TypedDict

from stream_parser.schema import typedesc
from stream_parser.schema.multimodal import ImageRoots, ImgPath, ImgUrl, Text
from stream_parser.schema.typedesc import (
    MISSING,
    FieldDoc,
    describe_parameters,
    describe_type,
    describe_type_json,
    example_value,
    field_docs,
    is_complex_type,
    is_structured_type,
    type_name,
    type_prompt,
)


class Color(enum.Enum):
    """A colour."""

    RED = "red"
    GREEN = "green"


class Priority(enum.IntEnum):
    LOW = 1
    HIGH = 2


class Address(BaseModel):
    """A postal address.

    Attributes:
        city: City name.
        zip: Postal code.
    """

    city: str
    zip: Optional[str] = None


class Person(BaseModel):
    """A person."""

    name: str = Field(description="Full name")
    age: int = 0
    color: Color = Color.RED
    address: Optional[Address] = None
    tags: list[str] = []
    nick: str = Field("bob", examples=["robert"])


class Node(BaseModel):
    """A tree node."""

    value: int
    children: list[Node] = []
    parent: Optional[Node] = None


@dataclasses.dataclass
class Point:
    """A point.

    Attributes:
        x: Horizontal.
    """

    x: float
    y: float = 0.0
    label: Annotated[str, Field(description="Label")] = "p"
    extra: list[int] = dataclasses.field(default_factory=list)


class Movie(TypedDict):
    """A movie.

    Attributes:
        title: The title.
    """

    title: str
    year: NotRequired[int]


# --- type_name ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (str, "str"),
        (int, "int"),
        (float, "float"),
        (bool, "bool"),
        (None, "None"),
        (type(None), "None"),
        (Any, "Any"),
        (list[int], "list[int]"),
        (List[int], "list[int]"),
        (list, "list"),
        (dict[str, int], "dict[str, int]"),
        (Dict[str, List[Person]], "dict[str, list[Person]]"),
        (dict, "dict"),
        (typing.Mapping[str, int], "dict[str, int]"),
        (typing.Sequence[str], "list[str]"),
        (set[int], "set[int]"),
        (frozenset[str], "frozenset[str]"),
        (tuple[int, ...], "tuple[int, ...]"),
        (Tuple[int, str], "tuple[int, str]"),
        (Optional[int], "int | None"),
        (Union[int, str, None], "int | str | None"),
        (int | None, "int | None"),
        (Literal["a", "b"], 'Literal["a", "b"]'),
        (Literal[1, True, None], "Literal[1, true, null]"),
        (Literal[Color.RED], 'Literal["red"]'),
        (Color, "Color"),
        (Person, "Person"),
        (Point, "Point"),
        (Movie, "Movie"),
        (Text, "Text"),
        (ImgUrl, "ImgUrl"),
        (list[ImgPath], "list[ImgPath]"),
        (Annotated[int, Field(gt=0)], "int"),
        (Annotated[ImgPath, ImageRoots(".")], "ImgPath"),
        (dt.datetime, "datetime"),
        (Decimal, "Decimal"),
        ("Forward", "Forward"),
    ],
)
def test_type_name(annotation: Any, expected: str) -> None:
    assert type_name(annotation) == expected


# --- readable descriptions ---------------------------------------------------------------

PERSON_BLOCKS = """\
Person: A person.
  - name (str, required): Full name
  - age (int, optional, default: 0)
  - color (Color, optional, default: "red")
  - address (Address | None, optional, default: null)
  - tags (list[str], optional, default: [])
  - nick (str, optional, default: "bob")

Color: A colour. one of "red", "green"

Address: A postal address.
  - city (str, required): City name.
  - zip (str | None, optional, default: null): Postal code."""


def test_describe_simple_types() -> None:
    assert describe_type(int) == "int"
    assert describe_type(Optional[list[str]]) == "list[str] | None"
    assert describe_type(Literal["x", "y"]) == 'Literal["x", "y"]'


def test_describe_nested_model() -> None:
    assert describe_type(Person) == PERSON_BLOCKS


def test_describe_container_of_models() -> None:
    assert describe_type(list[Person]) == "list[Person]\n\n" + PERSON_BLOCKS
    assert describe_type(dict[str, Address]) == (
        "dict[str, Address]\n\n"
        "Address: A postal address.\n"
        "  - city (str, required): City name.\n"
        "  - zip (str | None, optional, default: null): Postal code."
    )


def test_describe_recursive_model_expands_once() -> None:
    assert describe_type(Node) == (
        "Node: A tree node.\n"
        "  - value (int, required)\n"
        "  - children (list[Node], optional, default: [])\n"
        "  - parent (Node | None, optional, default: null)"
    )


def test_describe_enum_and_multimodal() -> None:
    assert describe_type(Priority) == "Priority: one of 1, 2"
    assert describe_type(list[ImgPath]) == (
        "list[ImgPath]\n\nImgPath: the path of a local image file (a string)"
    )
    assert describe_type(Union[Text, ImgUrl]) == (
        "Text | ImgUrl\n\n"
        "Text: plain text (a string)\n\n"
        "ImgUrl: an image URL (a string: http://, https:// or data:image/...)"
    )


class Mode(str, enum.Enum):
    FAST = "fast"
    BEST = "best"


class Switches(enum.Flag):
    A = 1
    B = 2


class Job(BaseModel):
    mode: Mode


def test_an_enum_without_a_docstring_is_described_by_its_values_alone() -> None:
    # Python 3.10 gives such an enum the docstring "An enumeration.", which is not the
    # author's and must not reach the model as a description.
    assert describe_type(Mode) == 'Mode: one of "fast", "best"'
    assert describe_type(Switches) == "Switches: one of 1, 2"
    assert describe_type(Priority) == "Priority: one of 1, 2"
    assert "enumeration" not in describe_parameters(Job)


def test_an_enum_docstring_the_author_wrote_is_kept() -> None:
    assert describe_type(Color) == 'Color: A colour. one of "red", "green"'


def test_describe_dataclass_and_typeddict() -> None:
    assert describe_type(Point) == (
        "Point: A point.\n"
        "  - x (float, required): Horizontal.\n"
        "  - y (float, optional, default: 0.0)\n"
        '  - label (str, optional, default: "p"): Label\n'
        "  - extra (list[int], optional)"
    )
    assert describe_type(Movie) == (
        "Movie: A movie.\n  - title (str, required): The title.\n  - year (int, optional)"
    )


def test_describe_parameters() -> None:
    assert describe_parameters(Address) == (
        "- city (str, required): City name.\n"
        "- zip (str | None, optional, default: null): Postal code."
    )
    expected = PERSON_BLOCKS.split("\n\n", 1)[1]
    lines = "\n".join(line.strip() for line in PERSON_BLOCKS.split("\n\n", 1)[0].splitlines()[1:])
    assert describe_parameters(Person) == lines + "\n\n" + expected

    class Empty(BaseModel):
        pass

    assert describe_parameters(Empty) == "(none)"
    assert describe_type(Empty) == "Empty:\n  (no fields)"


def test_field_docs() -> None:
    assert field_docs(Address) == [
        FieldDoc(name="city", annotation=str, required=True, description="City name."),
        FieldDoc(
            name="zip",
            annotation=Optional[str],
            required=False,
            default=None,
            description="Postal code.",
        ),
    ]
    nick = field_docs(Person)[-1]
    assert nick.examples == ("robert",)
    assert field_docs(int) == []
    point = {f.name: f for f in field_docs(Point)}
    assert point["extra"].default is MISSING and not point["extra"].required

    class Aliased(BaseModel):
        file_path: str = Field(alias="filePath")

    assert [f.name for f in field_docs(Aliased)] == ["filePath"]


def test_docstring_styles_for_attributes() -> None:
    class NumpyStyle(BaseModel):
        """Numpy documented.

        Attributes
        ----------
        a : int
            The a.
        """

        a: int

    class RestStyle(BaseModel):
        """Rest documented.

        :ivar a: The a.
        """

        a: int

    assert field_docs(NumpyStyle)[0].description == "The a."
    assert field_docs(RestStyle)[0].description == "The a."
    assert describe_type(NumpyStyle).startswith("NumpyStyle: Numpy documented.\n")


# --- JSON description --------------------------------------------------------------------


def test_describe_type_json() -> None:
    assert describe_type_json(list[Person]) == [
        {
            "name": "str, required: Full name",
            "age": "int, optional, default: 0",
            "color": 'Color (one of "red", "green"), optional, default: "red"',
            "address": {
                "city": "str, required: City name.",
                "zip": "str | None, optional, default: null: Postal code.",
            },
            "tags": ["str"],
            "nick": 'str, optional, default: "bob"',
        }
    ]
    assert describe_type_json(dict[str, tuple[int, str]]) == {"<str>": ["int", "str"]}
    assert describe_type_json(int) == "int"
    assert describe_type_json(Node) == {
        "value": "int, required",
        "children": ["Node (same structure as above)"],
        "parent": "Node (same structure as above), optional, default: null",
    }
    assert describe_type_json(Union[Address, list[int]]) == {
        "one of": [
            {
                "city": "str, required: City name.",
                "zip": "str | None, optional, default: null: Postal code.",
            },
            ["int"],
        ]
    }
    json.dumps(describe_type_json(Person))  # JSON-serialisable


# --- example values ----------------------------------------------------------------------


def test_example_values() -> None:
    assert example_value(str) == "example"
    assert example_value(int) == 123
    assert example_value(float) == 1.23
    assert example_value(bool) is True
    assert example_value(None) is None
    assert example_value(Optional[int]) == 123
    assert example_value(Literal["x", "y"]) == "x"
    assert example_value(Color) == "red"
    assert example_value(Priority) == 1
    assert example_value(list[int]) == [123]
    assert example_value(dict[str, int]) == {"key": 123}
    assert example_value(dict[int, bool]) == {"123": True}
    assert example_value(tuple[int, str]) == [123, "example"]
    assert example_value(ImgPath) == "images/example.png"
    assert example_value(ImgUrl) == "https://example.com/image.png"
    assert example_value(Text) == "example text"
    assert example_value(Person) == {
        "name": "example",
        "age": 0,
        "color": "red",
        "address": {"city": "example", "zip": "example"},
        "tags": ["example"],
        "nick": "robert",
    }
    assert example_value(Node) == {"value": 123, "children": [], "parent": None}


def test_example_uses_non_empty_defaults() -> None:
    class Opts(BaseModel):
        unit: Literal["c", "f"] = "f"
        days: int = 3
        name: str = ""
        note: Optional[str] = None

    assert example_value(Opts) == {"unit": "f", "days": 3, "name": "example", "note": "example"}


@pytest.mark.parametrize(
    "annotation",
    [
        str,
        int,
        float,
        bool,
        list[int],
        dict[str, list[float]],
        Optional[Address],
        Person,
        list[Person],
        Node,
        Point,
        Movie,
        Color,
        Priority,
        Literal["a", 2],
        tuple[int, ...],
        set[str],
        Union[int, Address],
        dt.datetime,
        dt.date,
        dt.time,
        dt.timedelta,
        uuid.UUID,
        Decimal,
        Text,
        ImgUrl,
        list[Text],
    ],
)
def test_example_values_validate_as_their_type(annotation: Any) -> None:
    example = example_value(annotation)
    json.dumps(example)
    TypeAdapter(annotation).validate_json(json.dumps(example))


# --- prompts -----------------------------------------------------------------------------


def test_is_complex_type() -> None:
    for complex_type in (Person, list[int], dict[str, int], Optional[Address], Point, Movie):
        assert is_complex_type(complex_type), complex_type
    for simple in (str, int, Optional[int], Color, Literal["a"], ImgPath, Text):
        assert not is_complex_type(simple), simple
    assert is_structured_type(Annotated[Person, "x"])
    assert not is_structured_type(list[Person])


def test_type_prompt() -> None:
    assert type_prompt(int) == "int"
    assert type_prompt(Color) == 'Color: A colour. one of "red", "green"'
    assert type_prompt(Address) == (
        "Type description (JSON):\n"
        "{\n"
        '  "city": "str, required: City name.",\n'
        '  "zip": "str | None, optional, default: null: Postal code."\n'
        "}\n"
        "\n"
        "Example JSON:\n"
        "{\n"
        '  "city": "example",\n'
        '  "zip": "example"\n'
        "}"
    )


def test_module_all() -> None:
    for name in typedesc.__all__:
        if name != "MISSING":
            assert getattr(typedesc, name).__doc__, name
