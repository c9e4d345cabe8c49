"""@tool, Tool, ToolRegistry and ToolResult: definitions, schemas, execution, results."""

# The older typing spellings (Optional, List, Dict) are tested on purpose.
# ruff: noqa: UP006, UP007, UP035, UP045

from __future__ import annotations

import asyncio
import base64
import enum
import functools
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, Dict, List, Literal, Optional, TypeVar, Union

import pytest
from pydantic import BaseModel, Field, ValidationError

import stream_parser.tools as tools_module
from stream_parser.core.events import ParseErrorEvent, ToolCallEvent
from stream_parser.errors import ConfigError, StreamParserError, ToolError
from stream_parser.schema.multimodal import ImgPath, ImgUrl, Text
from stream_parser.schema.typedesc import example_value
from stream_parser.tools import XML_PREFACE, Tool, ToolRegistry, ToolResult, tool

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
PNG_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory (the default image root) with images in it, a secret outside."""
    (tmp_path / "work" / "images").mkdir(parents=True)
    (tmp_path / "work" / "cat.png").write_bytes(PNG)
    (tmp_path / "work" / "images" / "example.png").write_bytes(PNG)
    (tmp_path / "secret.png").write_bytes(PNG)
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path / "work"


# --- tools used across the tests ---------------------------------------------------------


@tool
def get_weather(
    city: str, days: int = 1, unit: Literal["celsius", "fahrenheit"] = "celsius"
) -> str:
    """Get the weather forecast for a city.

    Args:
        city: Name of the city.
        days: Number of days to forecast.
        unit: Temperature unit.
    """
    return f"{city}: sunny for {days} day(s), 21 degrees {unit}"


class Box(BaseModel):
    """A rectangle, in pixels."""

    x: int
    y: int
    width: int = Field(gt=0)
    height: int = Field(gt=0)


class Mode(enum.Enum):
    FAST = "fast"
    BEST = "best"


@tool(name="crop_image", description="Crop an image to a box.")
async def crop(
    image: ImgPath, box: Box, mode: Mode = Mode.FAST, labels: Optional[list[str]] = None
) -> tuple[str, ImgPath]:
    """Ignored summary: the description is given explicitly.

    Args:
        image: The image to crop.
        box: The region to keep.
    """
    await asyncio.sleep(0)
    return (f"cropped to {box.width}x{box.height} ({mode.value}, labels={labels})", image)


@tool
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b


GET_WEATHER_OPENAI = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the weather forecast for a city.",
        "parameters": {
            "additionalProperties": False,
            "properties": {
                "city": {"description": "Name of the city.", "type": "string"},
                "days": {
                    "default": 1,
                    "description": "Number of days to forecast.",
                    "type": "integer",
                },
                "unit": {
                    "default": "celsius",
                    "description": "Temperature unit.",
                    "enum": ["celsius", "fahrenheit"],
                    "type": "string",
                },
            },
            "required": ["city"],
            "type": "object",
        },
    },
}

CROP_OPENAI = {
    "type": "function",
    "function": {
        "name": "crop_image",
        "description": "Crop an image to a box.",
        "parameters": {
            "$defs": {
                "Box": {
                    "description": "A rectangle, in pixels.",
                    "properties": {
                        "x": {"type": "integer"},
                        "y": {"type": "integer"},
                        "width": {"exclusiveMinimum": 0, "type": "integer"},
                        "height": {"exclusiveMinimum": 0, "type": "integer"},
                    },
                    "required": ["x", "y", "width", "height"],
                    "title": "Box",
                    "type": "object",
                },
                "Mode": {"enum": ["fast", "best"], "title": "Mode", "type": "string"},
            },
            "additionalProperties": False,
            "properties": {
                "image": {"description": "The image to crop.", "type": "string"},
                "box": {"$ref": "#/$defs/Box", "description": "The region to keep."},
                "mode": {"$ref": "#/$defs/Mode", "default": "fast"},
                "labels": {
                    "anyOf": [{"items": {"type": "string"}, "type": "array"}, {"type": "null"}],
                    "default": None,
                },
            },
            "required": ["image", "box"],
            "type": "object",
        },
    },
}

GET_WEATHER_XML = """\
## get_weather
Get the weather forecast for a city.

Parameters:
- city (str, required): Name of the city.
- days (int, optional, default: 1): Number of days to forecast.
- unit (Literal["celsius", "fahrenheit"], optional, default: "celsius"): Temperature unit.

Example call:
<get_weather>
<city>example</city>
<days>1</days>
<unit>celsius</unit>
</get_weather>"""

CROP_XML = """\
## crop_image
Crop an image to a box.

Parameters:
- image (ImgPath, required): The image to crop.
- box (Box, required): The region to keep.
- mode (Mode, optional, default: "fast")
- labels (list[str] | None, optional, default: null)

ImgPath: the path of a local image file (a string)

Box: A rectangle, in pixels.
  - x (int, required)
  - y (int, required)
  - width (int, required)
  - height (int, required)

Mode: one of "fast", "best"

Example call:
<crop_image>
<image>images/example.png</image>
<box>{"x": 123, "y": 123, "width": 123, "height": 123}</box>
<mode>fast</mode>
<labels>["example"]</labels>
</crop_image>"""


# --- definition --------------------------------------------------------------------------


def test_tool_basics() -> None:
    assert isinstance(get_weather, Tool)
    assert get_weather.name == "get_weather"
    assert get_weather.description == "Get the weather forecast for a city."
    assert get_weather.param_descriptions == {
        "city": "Name of the city.",
        "days": "Number of days to forecast.",
        "unit": "Temperature unit.",
    }
    assert not get_weather.is_async
    assert crop.is_async
    assert crop.name == "crop_image"
    assert crop.description == "Crop an image to a box."
    # The Tool is still the function: direct calls skip validation.
    assert get_weather("Paris", 2) == "Paris: sunny for 2 day(s), 21 degrees celsius"
    assert get_weather.__name__ == "get_weather"
    assert get_weather.__wrapped__.__doc__ == get_weather.__doc__
    assert repr(get_weather) == "<Tool get_weather(city, days, unit)>"
    assert repr(crop) == "<async Tool crop_image(image, box, mode, labels)>"


def test_args_model() -> None:
    model = get_weather.args_model
    assert issubclass(model, BaseModel)
    assert list(model.model_fields) == ["city", "days", "unit"]
    assert model.model_fields["city"].is_required()
    assert model.model_fields["days"].default == 1
    assert model(city="Oslo", days="3").days == 3
    with pytest.raises(ValidationError):
        model(city="Oslo", unit="kelvin")
    with pytest.raises(ValidationError, match="Extra inputs"):
        model(city="Oslo", color="red")


@pytest.mark.parametrize("style", ["google", "numpy", "rest"])
def test_docstring_styles(style: str) -> None:
    docs = {
        "google": """Search the web.

            Returns the best pages first.

            Args:
                query: What to look for.
                limit: How many results.

            Returns:
                The result titles.
            """,
        "numpy": """Search the web.

            Returns the best pages first.

            Parameters
            ----------
            query : str
                What to look for.
            limit : int
                How many results.

            Returns
            -------
            list
                The result titles.
            """,
        "rest": """Search the web.

            Returns the best pages first.

            :param query: What to look for.
            :param limit: How many results.
            :returns: The result titles.
            """,
    }

    def search(query: str, limit: int = 5) -> list[str]:
        return [query] * limit

    search.__doc__ = docs[style]
    made = tool(search)
    assert made.description == "Search the web.\n\nReturns the best pages first."
    assert made.param_descriptions == {"query": "What to look for.", "limit": "How many results."}
    assert made.returns_description == "The result titles."
    props = made.json_schema()["properties"]
    assert props["query"]["description"] == "What to look for."
    assert "Returns: The result titles." in made.xml_usage()


def test_no_docstring_and_explicit_field_descriptions() -> None:
    @tool
    def bare(a: int, b: Annotated[str, Field(description="from Field")] = "x") -> str:
        return b * a

    assert bare.description == ""
    assert bare.json_schema()["properties"]["b"]["description"] == "from Field"

    @tool
    def documented(a: int = Field(2, description="from default"), b: int = 0) -> int:
        """Add.

        Args:
            a: from docstring
            b: from docstring too
        """
        return a + b

    props = documented.json_schema()["properties"]
    assert props["a"]["description"] == "from default"
    assert props["b"]["description"] == "from docstring too"
    assert documented.call() == 2


def test_local_annotations_are_resolved() -> None:
    class Local(BaseModel):
        n: int

    @tool
    def local_tool(item: Local, items: list[Local]) -> int:
        return item.n + sum(i.n for i in items)

    assert local_tool.call(item={"n": 1}, items=[{"n": 2}]) == 3
    registry = ToolRegistry()

    def other(item: Local) -> int:
        return item.n

    assert registry.add(other).call(item={"n": 5}) == 5


def test_positional_only_parameters() -> None:
    @tool
    def pos(a: int, /, b: int) -> int:
        return a - b

    assert pos.call(a=5, b="2") == 3
    assert pos.execute({"a": 1, "b": 1}).text == "0"


class Arbitrary:
    pass


T = TypeVar("T")


def _args_fn(*items: int) -> int:
    return 0


def _kwargs_fn(**options: str) -> int:
    return 0


def _plain_class(thing: Arbitrary) -> int:
    return 0


def _nested_plain_class(things: list[Arbitrary]) -> int:
    return 0


def _optional_plain_class(thing: Optional[Dict[str, Arbitrary]]) -> int:
    return 0


def _unannotated(thing) -> int:  # type: ignore[no-untyped-def]
    return 0


def _callable_param(fn: Callable[[int], int]) -> int:
    return 0


def _typevar_param(x: T) -> T:
    return x


def _private_param(_x: int) -> int:
    return 0


def _shadowing_param(json: str) -> int:
    return 0


def _unresolvable(x: NoSuchType) -> int:  # type: ignore[name-defined]  # noqa: F821
    return 0


@pytest.mark.parametrize(
    ("fn", "message"),
    [
        (_args_fn, r"\*items is not supported"),
        (_kwargs_fn, r"\*\*options is not supported"),
        (_plain_class, "parameter 'thing' has an unsupported type 'Arbitrary'"),
        (_nested_plain_class, "unsupported type 'Arbitrary'"),
        (_optional_plain_class, "unsupported type 'Arbitrary'"),
        (_unannotated, "parameter 'thing' has no type annotation"),
        (_callable_param, "unsupported type"),
        (_typevar_param, "unsupported type 'T'"),
        (_private_param, "is private"),
        (_shadowing_param, "clashes with a pydantic BaseModel attribute"),
        (_unresolvable, "cannot resolve an annotation"),
    ],
)
def test_unsupported_definitions_fail_at_decoration(fn: Callable[..., Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        tool(fn)


def test_bad_names_and_objects() -> None:
    with pytest.raises(ConfigError, match="invalid tool name"):
        tool(lambda x: x)
    with pytest.raises(ConfigError, match="invalid tool name"):
        tool(name="two words")(get_weather.__wrapped__)
    with pytest.raises(ConfigError, match="invalid tool name"):
        tool(name="x" * 129)(get_weather.__wrapped__)
    with pytest.raises(ConfigError, match="needs a function"):
        Tool(Box)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="not a Pydantic model"):
        Tool.from_model(dict)  # type: ignore[arg-type]
    assert issubclass(ConfigError, StreamParserError)
    assert issubclass(ConfigError, ValueError)


def test_partials_and_callable_objects() -> None:
    def power(base: int, exponent: int) -> int:
        return base**exponent

    square = tool(functools.partial(power, exponent=2), name="square")
    assert list(square.args_model.model_fields) == ["base", "exponent"]
    assert square.call(base="3") == 9
    assert tool(functools.partial(power, 2)).name == "power"

    class Counter:
        def __call__(self, step: int = 1) -> int:
            return step

    assert tool(Counter(), name="count").call(step="4") == 4
    with pytest.raises(ConfigError, match="invalid tool name"):
        tool(Counter())
    with pytest.raises(ConfigError, match="already a tool"):
        tool(get_weather)


def test_method_needs_binding() -> None:
    class Service:
        def __init__(self) -> None:
            self.base = 10

        def add(self, n: int) -> int:
            return self.base + n

    assert tool(Service().add).call(n=1) == 11
    with pytest.raises(ConfigError, match="decorate a bound method"):
        tool(Service.add)


# --- schemas -----------------------------------------------------------------------------


def test_to_openai_exact() -> None:
    assert get_weather.to_openai() == GET_WEATHER_OPENAI
    assert crop.to_openai() == CROP_OPENAI


def test_schema_is_a_copy() -> None:
    schema = get_weather.to_openai()
    schema["function"]["parameters"]["properties"].clear()
    assert get_weather.to_openai() == GET_WEATHER_OPENAI


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return found + [ref for value in node.values() for ref in _refs(value)]
    if isinstance(node, list):
        return [ref for value in node for ref in _refs(value)]
    return []


class TreeNode(BaseModel):
    value: int
    children: list[TreeNode] = []


@tool
def walk(tree: TreeNode, depth: int = 1) -> int:
    """Walk a tree."""
    return depth


@pytest.mark.parametrize("made", [get_weather, crop, divide, walk])
def test_schemas_are_valid_json_schema(made: Tool[..., Any], workdir: Path) -> None:
    schema = made.json_schema()
    for ref in _refs(schema):
        assert ref.startswith("#/$defs/")
        assert ref.removeprefix("#/$defs/") in schema["$defs"]
    import jsonschema

    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(example_value(made.args_model), schema)


def test_xml_usage_exact() -> None:
    assert get_weather.xml_usage() == GET_WEATHER_XML
    assert crop.xml_usage() == CROP_XML


def test_xml_example_values_are_verbatim() -> None:
    @tool
    def write_file(
        path: str, content: str = Field(examples=['if a < b && c > d: print("&amp;")'])
    ) -> str:
        """Write a file."""
        return path

    assert write_file.xml_example() == (
        "<write_file>\n"
        "<path>example</path>\n"
        '<content>if a < b && c > d: print("&amp;")</content>\n'
        "</write_file>"
    )

    @tool
    def flags(on: bool, names: dict[str, int], nothing: Optional[int] = None) -> str:
        return ""

    assert flags.xml_example() == (
        '<flags>\n<on>true</on>\n<names>{"key": 123}</names>\n<nothing>123</nothing>\n</flags>'
    )

    @tool
    def no_params() -> str:
        """Ping."""
        return "pong"

    assert no_params.xml_example() == "<no_params>\n</no_params>"
    assert "Parameters:\n(none)" in no_params.xml_usage()


# --- calling -----------------------------------------------------------------------------


def test_call_validates_and_converts() -> None:
    assert get_weather.call(city="Rome", days="2") == "Rome: sunny for 2 day(s), 21 degrees celsius"
    with pytest.raises(ValidationError):
        get_weather.call(days=2)
    assert asyncio.run(get_weather.acall(city="Rome")).startswith("Rome")


def test_async_tool_call_and_acall(workdir: Path) -> None:
    box = {"x": 0, "y": 0, "width": 2, "height": 3}
    text, image = crop.call(image="cat.png", box=box)
    assert text == "cropped to 2x3 (fast, labels=None)"
    assert image == ImgPath(workdir / "cat.png")

    async def main() -> Any:
        with pytest.raises(ToolError, match="use acall"):
            crop.call(image="cat.png", box=box)
        return await crop.acall(image="cat.png", box=box, mode="best")

    assert asyncio.run(main())[0] == "cropped to 2x3 (best, labels=None)"


def test_validate_accepts_every_argument_form() -> None:
    model = get_weather.args_model
    instance = model(city="A")
    assert get_weather.validate(instance) is instance
    assert get_weather.validate({"city": "A"}) == instance
    assert get_weather.validate('{"city": "A"}') == instance
    assert get_weather.validate(b'{"city": "A"}') == instance

    class Other(BaseModel):
        city: str

    assert get_weather.validate(Other(city="A")) == instance
    with pytest.raises(ValidationError):
        get_weather.validate(None)
    assert divide.validate('{"a": 1, "b": 2}').model_dump() == {"a": 1.0, "b": 2.0}
    with pytest.raises(ToolError, match="must be a mapping"):
        get_weather.validate(["A"])  # type: ignore[arg-type]


# --- every documented type as an argument --------------------------------------------------


class Address(BaseModel):
    city: str
    zip: Optional[str] = None


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


ARGUMENT_CASES: list[tuple[str, Any, str, Any]] = [
    # (id, annotation, XML text the model writes, expected Python value)
    ("str", str, "hello world", "hello world"),
    ("int", int, "42", 42),
    ("float", float, "2.5", 2.5),
    ("bool", bool, "true", True),
    ("List[int]", List[int], "[1, 2, 3]", [1, 2, 3]),
    ("list[str]", list[str], '["a", "b"]', ["a", "b"]),
    ("Dict[str, int]", Dict[str, int], '{"a": 1}', {"a": 1}),
    ("dict[str, list[int]]", dict[str, list[int]], '{"a": [1, 2]}', {"a": [1, 2]}),
    ("Optional[int] value", Optional[int], "7", 7),
    ("Optional[int] null", Optional[int], "null", None),
    ("int | None", int | None, "8", 8),
    ("Literal", Literal["a", "b"], "b", "b"),
    ("Enum", Color, "blue", Color.BLUE),
    ("BaseModel", Address, '{"city": "Oslo"}', Address(city="Oslo")),
    (
        "List[BaseModel]",
        List[Address],
        '[{"city": "Oslo", "zip": "0150"}]',
        [Address(city="Oslo", zip="0150")],
    ),
    ("Text", Text, "some text", Text("some text")),
    ("ImgUrl", ImgUrl, "https://example.com/a.png", ImgUrl("https://example.com/a.png")),
    ("ImgUrl data", ImgUrl, PNG_URL, ImgUrl(PNG_URL)),
    ("ImgPath", ImgPath, "cat.png", "<cat.png>"),
    ("List[Text]", List[Text], '["a", "b"]', [Text("a"), Text("b")]),
    ("List[ImgUrl]", List[ImgUrl], '["https://e.com/1.png"]', [ImgUrl("https://e.com/1.png")]),
    ("List[ImgPath]", List[ImgPath], '["cat.png", "images/example.png"]', "<cat+example>"),
    ("Optional[List[ImgPath]]", Optional[List[ImgPath]], '["cat.png"]', "<[cat.png]>"),
    (
        "Union[ImgUrl, ImgPath] url",
        Union[ImgUrl, ImgPath],
        "https://e.com/x.png",
        ImgUrl("https://e.com/x.png"),
    ),
    ("Union[ImgUrl, ImgPath] path", Union[ImgUrl, ImgPath], "cat.png", "<cat.png>"),
]


def _expected(value: Any, workdir: Path) -> Any:
    paths = {
        "<cat.png>": ImgPath(workdir / "cat.png"),
        "<cat+example>": [
            ImgPath(workdir / "cat.png"),
            ImgPath(workdir / "images" / "example.png"),
        ],
        "<[cat.png]>": [ImgPath(workdir / "cat.png")],
    }
    return paths.get(value, value) if isinstance(value, str) else value


def _probe(annotation: Any) -> Tool[..., Any]:
    def probe(value: Any) -> str:
        return type(value).__name__

    probe.__annotations__ = {"value": annotation, "return": str}
    return tool(probe)


@pytest.mark.parametrize(
    ("annotation", "xml_text", "expected"),
    [case[1:] for case in ARGUMENT_CASES],
    ids=[case[0] for case in ARGUMENT_CASES],
)
def test_seed_types_as_arguments(
    annotation: Any, xml_text: str, expected: Any, workdir: Path
) -> None:
    """Each documented argument type, from the text a model writes to a typed value."""
    from stream_parser.core.parser import StreamToolParser

    probe = _probe(annotation)
    expected = _expected(expected, workdir)
    registry = ToolRegistry([probe])
    call = f"Calling.\n<probe>\n<value>{xml_text}</value>\n</probe>\nDone."
    parser = StreamToolParser(registry)
    events = [*parser.feed(call), *parser.close()]
    calls = [event for event in events if isinstance(event, ToolCallEvent)]
    assert len(calls) == 1, events
    assert calls[0].tool_instance.value == expected
    result = registry.execute(calls[0].tool_name, calls[0].tool_instance)
    assert not result.is_error
    assert result.text == type(expected).__name__
    # Native function calls send JSON arguments.
    as_json = probe.args_model(value=expected).model_dump_json()
    assert probe.validate(as_json).value == expected


# --- results -----------------------------------------------------------------------------


class Report(BaseModel):
    title: str
    score: float


def _result_of(value: Any) -> ToolResult:
    def produce() -> Any:
        return value

    return tool(produce).execute()


def test_string_and_json_results() -> None:
    assert _result_of("plain text").text == "plain text"
    assert _result_of(42).text == "42"
    assert _result_of(2.5).text == "2.5"
    assert _result_of(True).text == "true"
    assert _result_of(None).text == "null"
    assert _result_of({"a": [1, "é"]}).text == '{"a":[1,"é"]}'
    assert _result_of([1, 2]).text == "[1,2]"
    assert _result_of(["a", "b"]).text == '["a","b"]'
    assert _result_of(Report(title="t", score=0.5)).text == '{"title":"t","score":0.5}'
    assert _result_of(Color.RED).text == '"red"'
    result = _result_of({"a": 1})
    assert result.value == {"a": 1}
    assert result.images == ()
    assert result.content == '{"a":1}'
    assert not result.is_error and result.error_type is None
    assert str(result) == '{"a":1}'


def test_multimodal_results(workdir: Path) -> None:
    text = _result_of(Text("from Text"))
    assert (text.text, text.images) == ("from Text", ())

    url = _result_of(ImgUrl("https://e.com/a.png", detail="low"))
    assert url.text == "Tool 'produce' returned an image."
    assert url.images == (
        {"type": "image_url", "image_url": {"url": "https://e.com/a.png", "detail": "low"}},
    )

    path = _result_of(ImgPath("cat.png"))
    assert path.images == ({"type": "image_url", "image_url": {"url": PNG_URL, "detail": "auto"}},)

    pair = _result_of(("A cat.", ImgPath("cat.png")))
    assert pair.text == "A cat."
    assert pair.content == [
        {"type": "text", "text": "A cat."},
        {"type": "image_url", "image_url": {"url": PNG_URL, "detail": "auto"}},
    ]
    pair_url = _result_of(("Remote.", ImgUrl("https://e.com/b.png")))
    assert pair_url.content_parts() == [
        {"type": "text", "text": "Remote."},
        {"type": "image_url", "image_url": {"url": "https://e.com/b.png", "detail": "auto"}},
    ]
    several = _result_of([Text("one"), "two", ImgUrl("https://e.com/1.png"), ImgPath("cat.png")])
    assert several.text == "one\ntwo"
    assert len(several.images) == 2


def test_openai_messages_for_results(workdir: Path) -> None:
    plain = _result_of("ok")
    assert plain.to_openai_messages("call_1") == [
        {"role": "tool", "tool_call_id": "call_1", "content": "ok"}
    ]
    pair = _result_of(("A cat.", ImgPath("cat.png")))
    assert pair.to_openai_messages("call_2") == [
        {"role": "tool", "tool_call_id": "call_2", "content": "A cat."},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Image(s) returned by tool 'produce':"},
                {"type": "image_url", "image_url": {"url": PNG_URL, "detail": "auto"}},
            ],
        },
    ]


def test_unserialisable_results_are_errors(workdir: Path) -> None:
    result = _result_of(Arbitrary())
    assert result.is_error
    assert result.error_type == "invalid_result"
    assert result.text.startswith("Error: tool 'produce' returned a value that cannot be sent back")
    assert "Arbitrary" in result.text
    assert isinstance(result.value, Arbitrary)

    gone = ImgPath("cat.png")
    (workdir / "cat.png").unlink()
    missing = _result_of(gone)
    assert missing.is_error and missing.error_type == "invalid_result"


# --- errors as results -------------------------------------------------------------------


def test_tool_exception_becomes_an_error_result() -> None:
    result = divide.execute({"a": 1, "b": 0})
    assert result.is_error
    assert result.error_type == "tool_exception"
    assert result.exception_type == "ZeroDivisionError"
    assert result.text == "Error: tool 'divide' raised ZeroDivisionError: float division by zero"
    assert isinstance(result.exception, ZeroDivisionError)

    @tool
    def fails() -> None:
        raise RuntimeError

    assert fails.execute().text == "Error: tool 'fails' raised RuntimeError"

    @tool
    async def async_fails(path: str) -> str:
        raise FileNotFoundError(f"no such file: {path}")

    result = asyncio.run(async_fails.aexecute({"path": "x.txt"}))
    assert result.text == "Error: tool 'async_fails' raised FileNotFoundError: no such file: x.txt"
    assert async_fails.execute({"path": "y"}).exception_type == "FileNotFoundError"


def test_cancellation_is_not_swallowed() -> None:
    @tool
    async def slow() -> str:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(slow.aexecute())


def test_validation_errors_name_the_field_and_the_reason(workdir: Path) -> None:
    result = get_weather.execute({"days": "many", "unit": "kelvin"})
    assert result.is_error
    assert result.error_type == "invalid_params"
    assert result.text == (
        "Invalid parameters for tool 'get_weather' (3 errors); fix them and call the tool"
        " again:\n"
        "- city: Field required\n"
        "- days: Input should be a valid integer, unable to parse string as an integer"
        ' (got "many")\n'
        "- unit: Input should be 'celsius' or 'fahrenheit' (got \"kelvin\")"
    )
    assert [d["loc"] for d in result.details] == [["city"], ["days"], ["unit"]]
    assert [d["type"] for d in result.details] == ["missing", "int_parsing", "literal_error"]
    json.dumps(result.details)

    nested = crop.execute(
        {"image": "cat.png", "box": {"x": 0, "y": 0, "width": 0, "height": 1}, "labels": ["a", 3]}
    )
    assert "- box.width: Input should be greater than 0 (got 0)" in nested.text
    assert "- labels[1]: Input should be a valid string (got 3)" in nested.text

    extra = get_weather.execute({"city": "A", "color": "red"})
    assert "- color: Extra inputs are not permitted" in extra.text
    assert "Known parameters: city, days, unit." in extra.text

    bad_json = get_weather.execute('{"city": ')
    assert bad_json.error_type == "invalid_params"
    assert "- (the call as a whole): Invalid JSON" in bad_json.text

    escape = crop.execute(
        {"image": "../secret.png", "box": {"x": 0, "y": 0, "width": 1, "height": 1}}
    )
    assert "- image: Value error, image path '../secret.png' is outside" in escape.text


def test_per_tool_image_roots(workdir: Path) -> None:
    from stream_parser.schema.multimodal import allowed_image_roots

    @tool(image_roots=["images"])
    def gallery(
        cover: ImgPath, pages: tuple[ImgPath, ...] = (), back: Optional[ImgPath] = None
    ) -> list[str]:
        """Make a gallery."""
        return [p.path.name for p in [cover, *pages, *([back] if back else [])]]

    assert gallery.call(cover="example.png", pages=["example.png"]) == ["example.png"] * 2
    (workdir / "link.png").symlink_to(workdir.parent / "secret.png")
    (workdir / "images" / "link.png").symlink_to(workdir.parent / "secret.png")
    for args in (
        {"cover": "../cat.png"},  # inside the working directory, outside the tool's root
        {"cover": "example.png", "pages": ["../../secret.png"]},
        {"cover": "example.png", "back": "/etc/passwd"},
        {"cover": "link.png"},  # a symlink out of the root
    ):
        result = gallery.execute(args)
        assert result.error_type == "invalid_params", args
        assert "outside the allowed image directories" in result.text
    with allowed_image_roots(workdir.parent):  # the ambient setting does not widen the pin
        assert gallery.execute({"cover": str(workdir.parent / "secret.png")}).is_error
    assert gallery.json_schema()["properties"]["cover"] == {
        "description": "Path of a local image file",
        "type": "string",
    }


def test_programmer_errors_raise() -> None:
    class Command(BaseModel):
        """Run a shell command."""

        command: str

    schema_only = Tool.from_model(Command)
    assert schema_only.name == "command"
    with pytest.raises(ToolError, match="schema-only"):
        schema_only.execute({"command": "ls"})
    with pytest.raises(ToolError, match="schema-only"):
        schema_only()

    async def main() -> None:
        with pytest.raises(ToolError, match="use acall"):
            crop.execute({})
        assert (await crop.aexecute({})).error_type == "invalid_params"

    asyncio.run(main())
    assert issubclass(ToolError, StreamParserError)


def test_sync_and_async_execution() -> None:
    assert get_weather.execute({"city": "Nice"}).text.startswith("Nice:")
    assert asyncio.run(get_weather.aexecute({"city": "Nice"})).text.startswith("Nice:")

    @tool
    async def add(a: int, b: int) -> int:
        await asyncio.sleep(0)
        return a + b

    assert add.execute({"a": 1, "b": 2}).text == "3"
    assert asyncio.run(add.aexecute('{"a": 2, "b": 2}')).text == "4"

    async def gathered() -> list[str]:
        results = await asyncio.gather(*(add.aexecute({"a": i, "b": i}) for i in range(5)))
        return [r.text for r in results]

    assert asyncio.run(gathered()) == ["0", "2", "4", "6", "8"]


# --- model-based tools -------------------------------------------------------------------


class WriteToFile(BaseModel):
    """Write content to a file.

    Attributes:
        path: Where to write.
    """

    path: str
    content: str = Field(description="The text to write.")


def test_model_tools() -> None:
    made = Tool.from_model(WriteToFile)
    assert made.name == "write_to_file"
    assert made.description == "Write content to a file."
    assert made.param_descriptions == {"path": "Where to write.", "content": "The text to write."}
    assert made.args_model is WriteToFile
    assert made.fn is None
    seen: list[WriteToFile] = []
    handled = Tool.from_model(WriteToFile, seen.append, name="save")
    assert handled.execute({"path": "a", "content": "b"}).text == "null"
    assert seen == [WriteToFile(path="a", content="b")]

    async def handler(args: WriteToFile) -> str:
        return f"wrote {len(args.content)} chars to {args.path}"

    async_handled = Tool.from_model(WriteToFile, handler)
    assert async_handled.is_async
    assert asyncio.run(async_handled.aexecute({"path": "p", "content": "xyz"})).text == (
        "wrote 3 chars to p"
    )


# --- the registry ------------------------------------------------------------------------


def test_registry_is_a_mapping_of_models() -> None:
    registry = ToolRegistry([get_weather, crop, WriteToFile])
    assert isinstance(registry, Mapping)
    assert list(registry) == ["get_weather", "crop_image", "write_to_file"]
    assert len(registry) == 3
    assert registry["get_weather"] is get_weather.args_model
    assert registry["write_to_file"] is WriteToFile
    assert dict(registry) == {
        "get_weather": get_weather.args_model,
        "crop_image": crop.args_model,
        "write_to_file": WriteToFile,
    }
    assert "crop_image" in registry and "crop" not in registry
    assert registry.get_tool("crop_image") is crop
    assert registry.tools[0] is get_weather
    assert repr(registry) == "ToolRegistry(['get_weather', 'crop_image', 'write_to_file'])"
    with pytest.raises(KeyError, match="no tool named 'nope'"):
        registry.get_tool("nope")
    with pytest.raises(KeyError):
        registry["nope"]


def test_registry_from_functions_mapping_and_decorator() -> None:
    def ping() -> str:
        """Ping."""
        return "pong"

    registry = ToolRegistry({"renamed_weather": get_weather, "check": ping, "save": WriteToFile})
    assert list(registry) == ["renamed_weather", "check", "save"]
    assert registry.get_tool("renamed_weather").fn is get_weather.fn
    assert get_weather.name == "get_weather"  # the original is untouched
    assert registry.execute("check").text == "pong"

    @registry.add
    def later(n: int) -> int:
        """Added with a decorator."""
        return n * 2

    assert isinstance(later, Tool)
    assert registry.execute("later", {"n": 4}).text == "8"


def test_registry_duplicates_and_bad_items() -> None:
    with pytest.raises(ConfigError, match="duplicate tool name 'get_weather'"):
        ToolRegistry([get_weather, get_weather])
    registry = ToolRegistry([get_weather])
    with pytest.raises(ConfigError, match="duplicate"):
        registry.add(get_weather.fn)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="not a tool"):
        registry.add(42)  # type: ignore[call-overload]
    with pytest.raises(ConfigError, match="not a tool"):
        registry.add(Arbitrary)  # type: ignore[call-overload]


def test_registry_schemas() -> None:
    registry = ToolRegistry([get_weather, crop])
    assert registry.to_openai() == [GET_WEATHER_OPENAI, CROP_OPENAI]
    assert registry.xml_usage() == "\n\n".join([XML_PREFACE, GET_WEATHER_XML, CROP_XML])
    assert registry.xml_usage(preface=False) == GET_WEATHER_XML + "\n\n" + CROP_XML
    assert ToolRegistry().xml_usage(preface=False) == ""


def test_registry_execute() -> None:
    registry = ToolRegistry([get_weather, divide])
    assert registry.execute("divide", {"a": 1, "b": 4}).text == "0.25"
    unknown = registry.execute("delete_everything", {})
    assert unknown.is_error and unknown.error_type == "unknown_tool"
    assert unknown.text == (
        "Error: there is no tool named 'delete_everything'. Available tools: get_weather, divide."
    )
    assert asyncio.run(registry.aexecute("nope")).error_type == "unknown_tool"
    assert asyncio.run(registry.aexecute("divide", '{"a": 3, "b": 2}')).text == "1.5"
    assert registry.execute("divide", {"a": 1, "b": 0}).exception_type == "ZeroDivisionError"


# --- with the streaming core -------------------------------------------------------------

REPLY = """\
I'll check the weather first.
<get_weather>
<city>São Paulo</city>
<days>3</days>
</get_weather>
Then crop the picture:
<crop_image>
<image>cat.png</image>
<box>{"x": 1, "y": 2, "width": 30, "height": 40}</box>
<mode>best</mode>
</crop_image>
And this one must not run:
<crop_image>
<image>/etc/passwd</image>
<box>{"x": 1, "y": 2, "width": 30, "height": 40}</box>
</crop_image>
Done."""


def test_tool_calls_parsed_from_a_stream_are_executed(workdir: Path) -> None:
    from stream_parser.core.parser import StreamToolParser

    registry = ToolRegistry([get_weather, crop])
    parser = StreamToolParser(tool_registry=registry)
    events = []
    for start in range(0, len(REPLY), 5):  # a token stream, five characters at a time
        events.extend(parser.feed(REPLY[start : start + 5]))
    events.extend(parser.close())

    calls = [event for event in events if isinstance(event, ToolCallEvent)]
    assert [call.tool_name for call in calls] == ["get_weather", "crop_image"]
    weather_args = calls[0].tool_instance
    assert isinstance(weather_args, get_weather.args_model)
    assert weather_args.model_dump() == {"city": "São Paulo", "days": 3, "unit": "celsius"}
    crop_args = calls[1].tool_instance
    assert crop_args.box == Box(x=1, y=2, width=30, height=40)
    assert crop_args.mode is Mode.BEST
    assert crop_args.image == ImgPath(workdir / "cat.png")

    # The /etc/passwd call failed validation in the parser and was never a call.
    errors = [event for event in events if isinstance(event, ParseErrorEvent)]
    assert [error.error_type for error in errors] == ["invalid_params"]
    assert "outside the allowed image directories" in errors[0].message

    weather = registry.execute(calls[0].tool_name, calls[0].tool_instance)
    assert weather.text == "São Paulo: sunny for 3 day(s), 21 degrees celsius"
    cropped = asyncio.run(registry.aexecute(calls[1].tool_name, calls[1].tool_instance))
    assert cropped.text == "cropped to 30x40 (best, labels=None)"
    assert cropped.images == (
        {"type": "image_url", "image_url": {"url": PNG_URL, "detail": "auto"}},
    )


def test_xml_examples_parse_back_to_the_example_values(workdir: Path) -> None:
    """The example call in xml_usage() is one the core parses, to the generated values."""
    from stream_parser.core.parser import StreamToolParser

    registry = ToolRegistry([get_weather, crop, divide, walk])
    for made in registry.tools:
        parser = StreamToolParser(registry)
        events = [*parser.feed(made.xml_example()), *parser.close()]
        calls = [event for event in events if isinstance(event, ToolCallEvent)]
        assert len(calls) == 1, (made.name, events)
        expected = made.args_model.model_validate(example_value(made.args_model))
        assert calls[0].tool_instance == expected


# --- docs --------------------------------------------------------------------------------


def test_module_all() -> None:
    for name in tools_module.__all__:
        assert getattr(tools_module, name) is not None
    for name in ("Tool", "ToolRegistry", "ToolResult", "tool"):
        assert getattr(tools_module, name).__doc__
