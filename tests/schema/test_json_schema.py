"""JSON Schema -> argument model: each keyword, each error, names, text conversions."""

from __future__ import annotations

import keyword
import re
import sys
import typing
from pathlib import Path
from typing import Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from stream_parser.core.events import ParseErrorEvent, ToolCallEvent
from stream_parser.core.parser import StreamToolParser
from stream_parser.errors import ConfigError
from stream_parser.schema.json_schema import (
    ANNOTATION_KEYWORDS,
    UNENFORCED_KEYWORDS,
    ArgumentSchema,
    JsonSchemaArguments,
    compile_json_schema,
    field_names,
    model_from_json_schema,
)
from stream_parser.schema.typedesc import describe_parameters
from stream_parser.schema.validation import validate_arguments
from stream_parser.tools import Tool

ROOT = Path(__file__).resolve().parents[2]
# A parameter name the XML reader accepts as a tag (stream_parser.core.xml_tools).
XML_TAG = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")


def compiled(schema: dict[str, Any]) -> ArgumentSchema:
    return compile_json_schema(schema, tool="t")


def one(prop: Any) -> type[JsonSchemaArguments]:
    """The model of an object with one property, "v"."""
    return compiled({"type": "object", "properties": {"v": prop}}).model


def accepts(prop: Any, value: Any) -> bool:
    try:
        one(prop).model_validate({"v": value})
    except ValidationError:
        return False
    return True


def held(prop: Any, value: Any) -> Any:
    """The value the model holds after validating ``{"v": value}``."""
    return one(prop).model_validate({"v": value}).model_dump(by_alias=True)["v"]


def errors(prop: Any, value: Any) -> list[dict[str, Any]]:
    with pytest.raises(ValidationError) as caught:
        one(prop).model_validate({"v": value})
    return caught.value.errors(include_url=False)


# --- names -------------------------------------------------------------------------------


def test_names_that_are_identifiers_are_kept() -> None:
    assert field_names(["city", "days", "userId", "type", "match"]) == {
        "city": "city",
        "days": "days",
        "userId": "userId",
        "type": "type",
        "match": "match",
    }


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("q&a", "q_a"),
        ('say "hi"', "say_hi"),
        ("from", "from_"),
        ("class", "class_"),
        ("model_config", "model_config_"),
        ("model_dump", "model_dump_"),
        ("json", "json_"),
        ("$id", "id"),
        ("_private", "private"),
        ("__dunder__", "dunder"),
        ("user-id", "user_id"),
        ("a.b", "a_b"),
        ("città", "citta"),
        ("Größe", "Groe"),
        ("城市", "field"),
        ("", "field"),
        ("2fa", "field_2fa"),
        ("  spaced  out ", "spaced_out"),
    ],
)
def test_other_names_are_rewritten_readably(name: str, field: str) -> None:
    assert field_names([name]) == {name: field}


def test_rewritten_names_never_collide() -> None:
    assert field_names(["q&a", "q_a", "q-a"]) == {"q&a": "q_a_2", "q_a": "q_a", "q-a": "q_a_3"}
    assert field_names(["from", "from_"]) == {"from": "from_2", "from_": "from_"}
    assert field_names(["城市", "東京", "field"]) == {
        "城市": "field_2",
        "東京": "field_3",
        "field": "field",
    }


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=6), unique=True, max_size=6))
def test_field_names_are_distinct_identifiers_and_xml_tags(names: list[str]) -> None:
    fields = field_names(names)
    assert list(fields) == names
    assert len(set(fields.values())) == len(names)
    for name, field in fields.items():
        assert field.isidentifier() and field.isascii() and XML_TAG.fullmatch(field)
        assert not keyword.iskeyword(field) and not field.startswith("_")
        assert not hasattr(BaseModel, field)
        if name.isascii() and name.isidentifier() and field != name:
            # Only a keyword, a private name or a model attribute is rewritten.
            assert keyword.iskeyword(name) or name.startswith("_") or hasattr(BaseModel, name)


def test_the_schema_names_are_the_aliases() -> None:
    schema = {
        "type": "object",
        "properties": {
            "q&a": {"type": "string"},
            'say "hi"': {"type": "integer"},
            "from": {"type": "string"},
            "model_config": {"type": "string"},
            "$id": {"type": "string"},
            "plain": {"type": "string"},
        },
    }
    args = compiled(schema)
    data = {"q&a": "x", 'say "hi"': 1, "from": "me", "model_config": "c", "$id": "i", "plain": "p"}
    found = args.model.model_validate(data)
    assert found.model_dump(by_alias=True) == data
    assert (found.q_a, found.say_hi, found.from_, found.model_config_, found.id) == (
        "x",
        1,
        "me",
        "c",
        "i",
    )
    assert args.model.model_fields["plain"].alias is None
    assert args.model.model_fields["from_"].alias == "from"


def test_a_field_name_is_not_an_alias_of_its_property() -> None:
    """Only the schema's name is the property: a field name given is another key."""
    model = compiled(
        {
            "type": "object",
            "properties": {"from": {"type": "string"}},
            "additionalProperties": False,
        }
    ).model
    with pytest.raises(ValidationError, match="Extra inputs are not permitted"):
        model.model_validate({"from_": "me"})


def test_the_xml_reader_takes_field_names_and_valid_schema_names_as_tags() -> None:
    schema = {
        "type": "object",
        "properties": {
            "q&a": {"type": "string"},
            "from": {"type": "integer"},
            "user-id": {"type": "integer"},
        },
    }
    tool = Tool.from_model(compiled(schema).model, name="annotate")
    reply = "<annotate>\n<q_a>why</q_a>\n<from>3</from>\n<user-id>7</user-id>\n</annotate>"
    parser = StreamToolParser([tool])
    calls = [e for e in [*parser.feed(reply), *parser.close()] if isinstance(e, ToolCallEvent)]
    assert calls[0].tool_instance.model_dump(by_alias=True) == {
        "q&a": "why",
        "from": 3,
        "user-id": 7,
    }


# --- each keyword ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prop", "good", "bad"),
    [
        ({"type": "string"}, ["", "x"], [3, None, True, [], {}]),
        ({"type": "integer"}, [3, -2, 3.0, 10**30], [3.5, True, None, [], "x"]),
        ({"type": "number"}, [3, 3.5, -1e300], [True, None, "x", {}]),
        ({"type": "boolean"}, [True, False], [1, 0, None, "x"]),
        ({"type": "null"}, [None], [0, False, "x", []]),
        ({"type": "array"}, [[], [1, "a"]], [{}, "x", None]),
        ({"type": "object"}, [{}, {"a": 1}], [[], "x", None]),
        ({"type": ["string", "integer"]}, ["a", 3], [3.5, None, True]),
        ({"type": "integer", "nullable": True}, [3, None], [3.5, "x"]),
        ({"type": ["integer", "null"], "nullable": True}, [3, None], ["x"]),
        ({}, [1, "a", None, [], {}], []),
        (True, [1, "a", None], []),
    ],
)
def test_type(prop: Any, good: list[Any], bad: list[Any]) -> None:
    for value in good:
        assert accepts(prop, value), value
    for value in bad:
        assert not accepts(prop, value), value


def test_false_schema_accepts_nothing() -> None:
    assert errors(False, 1)[0]["msg"] == "No value is allowed here"


def test_type_errors_are_pydantics_where_it_has_one() -> None:
    assert errors({"type": "integer"}, True)[0]["type"] == "int_type"
    assert errors({"type": "integer"}, 3.5)[0]["type"] == "int_from_float"
    assert errors({"type": "boolean"}, 1)[0]["type"] == "bool_type"
    assert errors({"type": "string"}, 3)[0]["msg"] == "Input should be a valid string"
    error = errors({"type": ["string", "null"]}, 3)[0]
    assert (error["type"], error["msg"]) == ("json_schema_type", "Input should be a string or null")
    assert errors({}, float("nan"))[0]["type"] == "finite_number"


def test_enum_and_const_compare_as_json() -> None:
    mixed = {"enum": [1, "one", None, {"a": [1]}]}
    for value in (1, 1.0, "one", None, {"a": [1.0]}):
        assert accepts(mixed, value), value
    for value in (True, 2, {"a": [True]}, [1]):
        assert not accepts(mixed, value), value
    assert accepts({"enum": [True]}, True) and not accepts({"enum": [True]}, 1)
    assert accepts({"const": {"x": 1, "y": [2]}}, {"y": [2], "x": 1})
    assert not accepts({"const": 0}, False)
    assert errors({"enum": ["celsius", "fahrenheit"]}, "kelvin")[0]["msg"] == (
        'Input should be "celsius" or "fahrenheit"'
    )
    assert errors({"const": "x"}, "y")[0]["msg"] == 'Input should be "x"'


@pytest.mark.parametrize(
    ("prop", "good", "bad", "error"),
    [
        ({"minimum": 1}, [1, 1.5, "x"], [0, 0.99], "greater_than_equal"),
        ({"maximum": 1}, [1, -3], [1.01], "less_than_equal"),
        ({"exclusiveMinimum": 1}, [1.01], [1], "greater_than"),
        ({"exclusiveMaximum": 1}, [0.99], [1], "less_than"),
        ({"minimum": 1, "exclusiveMinimum": True}, [2], [1], "greater_than"),  # draft-04
        ({"maximum": 1, "exclusiveMaximum": True}, [0], [1], "less_than"),
        ({"multipleOf": 3}, [0, 9, -3, 9.0], [4, 4.5], "multiple_of"),
        ({"multipleOf": 0.01}, [19.99, 0.3, 1], [0.001], "multiple_of"),
        ({"multipleOf": 0.1}, [0.3, 1e300], [0.35], "multiple_of"),
        ({"minLength": 2}, ["ab", "🐲🐲", 1], ["a", "🐲"], "string_too_short"),
        ({"maxLength": 1}, ["🐲", ""], ["ab"], "string_too_long"),
        (
            {"pattern": "^[A-Z]{3}$"},
            ["OSL", 3],
            ["OSLO", "osl", "OSL\n"],
            "string_pattern_mismatch",
        ),
        ({"pattern": "^\\d+$"}, ["123"], ["١٢٣"], "string_pattern_mismatch"),
        ({"pattern": "^(?=.*\\d)\\w+$"}, ["abc1"], ["abc"], "string_pattern_mismatch"),
        ({"pattern": "x"}, ["axb"], ["ab"], "string_pattern_mismatch"),  # a search
    ],
)
def test_numeric_and_string_constraints(
    prop: Any, good: list[Any], bad: list[Any], error: str
) -> None:
    for value in good:
        assert accepts(prop, value), value
    for value in bad:
        assert errors(prop, value)[0]["type"] == error, value


def test_format_is_an_annotation() -> None:
    for fmt in ("email", "date", "uri", "uuid", "ipv4", "date-time"):
        assert accepts({"type": "string", "format": fmt}, "x")


@pytest.mark.parametrize(
    ("prop", "good", "bad"),
    [
        ({"items": {"type": "integer"}}, [[], [1, 2], "x"], [[1, "a"]]),
        (
            {"prefixItems": [{"type": "string"}, {"type": "integer"}]},
            [["a"], ["a", 1, None]],
            [[1]],
        ),
        ({"prefixItems": [{"type": "string"}], "items": False}, [["a"], []], [["a", 1]]),
        (
            {"prefixItems": [{"type": "string"}], "items": {"type": "null"}},
            [["a", None]],
            [["a", 1]],
        ),
        ({"minItems": 2}, [[1, 2]], [[1]]),
        ({"maxItems": 1}, [[1]], [[1, 2]]),
        ({"uniqueItems": True}, [[1, True], [{"a": 1}, {"a": 2}], [[1], [True]]], [[1, 1.0]]),
        ({"uniqueItems": True}, [[0, False]], [[{"a": 1, "b": 2}, {"b": 2, "a": 1}]]),
        ({"contains": {"type": "string"}}, [["a", 1]], [[1, 2], []]),
        ({"contains": {"type": "string"}, "minContains": 2}, [["a", "b"]], [["a", 1]]),
        ({"contains": {"type": "string"}, "maxContains": 1}, [["a", 1]], [["a", "b"]]),
        ({"contains": {"type": "string"}, "minContains": 0}, [[1], []], []),
    ],
)
def test_array_keywords(prop: Any, good: list[Any], bad: list[Any]) -> None:
    for value in good:
        assert accepts(prop, value), value
    for value in bad:
        assert not accepts(prop, value), value


def test_array_errors_point_at_the_item() -> None:
    error = errors({"items": {"type": "integer"}}, [1, "a"])[0]
    assert (error["loc"], error["type"]) == (("v", 1), "int_type")
    assert errors({"minItems": 2}, [1])[0]["msg"] == "List should have at least 2 item(s), not 1"
    assert errors({"uniqueItems": True}, [1, 2, 1])[0]["msg"] == (
        "List items should be unique (items 0 and 2 are equal)"
    )


@pytest.mark.parametrize(
    ("prop", "good", "bad"),
    [
        ({"properties": {"a": {"type": "integer"}}}, [{}, {"a": 1}, {"b": "x"}], [{"a": "x"}]),
        ({"required": ["a"]}, [{"a": None}], [{}, {"b": 1}]),
        ({"additionalProperties": False, "properties": {"a": {}}}, [{"a": 1}], [{"b": 1}]),
        ({"additionalProperties": {"type": "integer"}}, [{"a": 1}], [{"a": "x"}]),
        (
            {"patternProperties": {"^x_": {"type": "integer"}}},
            [{"x_a": 1, "y": "s"}],
            [{"x_a": "s"}],
        ),
        (
            {"patternProperties": {"^x_": {}}, "additionalProperties": False},
            [{"x_a": 1}],
            [{"y": 1}],
        ),
        ({"propertyNames": {"maxLength": 2}}, [{"ab": 1}], [{"abc": 1}]),
        ({"minProperties": 1}, [{"a": 1}], [{}]),
        ({"maxProperties": 1}, [{"a": 1}], [{"a": 1, "b": 2}]),
        (
            {"dependentRequired": {"card": ["address"]}},
            [{}, {"card": 1, "address": 2}],
            [{"card": 1}],
        ),
        (
            {"dependentSchemas": {"card": {"required": ["address"]}}},
            [{"address": 1}, {"card": 1, "address": 2}],
            [{"card": 1}],
        ),
        ({"dependencies": {"card": ["address"]}}, [{"card": 1, "address": 2}], [{"card": 1}]),
        ({"dependencies": {"card": {"required": ["cvv"]}}}, [{"card": 1, "cvv": 2}], [{"card": 1}]),
    ],
)
def test_object_keywords(prop: Any, good: list[Any], bad: list[Any]) -> None:
    for value in good:
        assert accepts(prop, value), value
    for value in bad:
        assert not accepts(prop, value), value


def test_object_errors() -> None:
    error = errors({"required": ["a"]}, {})[0]
    assert (error["loc"], error["type"]) == (("v", "a"), "missing")
    error = errors({"additionalProperties": False}, {"b": 1})[0]
    assert (error["loc"], error["type"]) == (("v", "b"), "extra_forbidden")
    error = errors({"dependentRequired": {"card": ["address"]}}, {"card": 1})[0]
    assert (error["loc"], error["msg"]) == (("v", "address"), 'Field required when "card" is given')
    error = errors({"propertyNames": {"pattern": "^[a-z]+$"}}, {"A": 1})[0]
    assert error["msg"] == "Key \"A\" is not allowed: String should match pattern '^[a-z]+$'"
    assert errors({"type": "object"}, {1: 2})[0]["msg"] == "Object keys should be strings"


def test_required_top_level_properties_and_extra_keys() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
        "additionalProperties": False,
    }
    model = compiled(schema).model
    result = validate_arguments("forecast", model, {"days": "x", "town": "Oslo"})
    assert result.message == (
        "Invalid parameters for tool 'forecast' (3 errors); fix them and call the tool again:\n"
        "- city: Field required\n"
        '- days: Input should be a valid integer (got "x")\n'
        '- town: Extra inputs are not permitted (got "Oslo")\n'
        "Known parameters: city, days."
    )


def test_additional_properties_are_kept_when_allowed() -> None:
    model = compiled({"type": "object", "properties": {"a": {"type": "integer"}}}).model
    found = model.model_validate({"a": 1, "extra": {"kept": True}})
    assert found.model_extra == {"extra": {"kept": True}}
    assert found.model_dump(by_alias=True) == {"a": 1, "extra": {"kept": True}}


def test_nested_objects_hold_dicts_and_keep_their_extra_keys() -> None:
    schema = {
        "type": "object",
        "properties": {
            "location": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
                "required": ["city"],
            }
        },
    }
    found = compiled(schema).model.model_validate({"location": {"city": "Oslo", "x": 1}})
    assert found.location == {"city": "Oslo", "x": 1}  # type: ignore[attr-defined]
    with pytest.raises(ValidationError) as caught:
        compiled(schema).model.model_validate({"location": {"zip": "0150"}})
    assert caught.value.errors()[0]["loc"] == ("location", "city")


@pytest.mark.parametrize(
    ("prop", "good", "bad"),
    [
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, [1, "a"], [1.5, None]),
        ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, [1.5], [3, 3.0, "a"]),
        ({"oneOf": [{"minimum": 2}, {"maximum": 5}]}, [1, 6], [3, "x"]),  # "x" matches both
        ({"allOf": [{"type": "integer"}, {"minimum": 2}]}, [2], [1, 2.5]),
        ({"not": {"type": "string"}}, [1, None], ["a"]),
        ({"not": {"enum": ["admin", "root"]}}, ["ada"], ["root"]),
        (
            {"if": {"type": "integer"}, "then": {"minimum": 0}, "else": {"type": "string"}},
            [1, "a"],
            [-1, None],
        ),
        ({"if": {"type": "integer"}, "then": {"minimum": 0}}, [1, None], [-1]),
        ({"then": {"type": "integer"}}, ["a"], []),  # then without if means nothing
    ],
)
def test_applicators(prop: Any, good: list[Any], bad: list[Any]) -> None:
    for value in good:
        assert accepts(prop, value), value
    for value in bad:
        assert not accepts(prop, value), value


def test_applicator_errors() -> None:
    error = errors({"oneOf": [{"type": "integer"}, {"type": "number"}]}, 3)[0]
    assert error["type"] == "json_schema_one_of"
    assert error["msg"] == (
        "Input should match exactly one schema of #/properties/v/oneOf, but matches "
        "#/properties/v/oneOf/0, #/properties/v/oneOf/1"
    )
    # Of an optional integer, only the integer branch takes 0: its own error is shown.
    optional = {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]}
    assert errors(optional, 0)[0]["msg"] == "Input should be greater than or equal to 1"
    error = errors({"anyOf": [{"type": "integer"}, {"enum": ["a", "b"]}]}, 1.5)[0]
    assert error["msg"] == (
        'Input should match a schema of #/properties/v/anyOf (an integer; one of "a", "b")'
    )
    assert errors({"not": {"type": "string"}}, "a")[0]["msg"] == (
        "Input should not match the schema at #/properties/v/not"
    )


def test_refs_defs_definitions_anchors_and_ids() -> None:
    schema = {
        "$id": "https://example.com/tool",
        "type": "object",
        "properties": {
            "a": {"$ref": "#/$defs/Small"},
            "b": {"$ref": "#/definitions/Name"},
            "c": {"$ref": "#named"},
            "d": {"$ref": "https://example.com/tool#/$defs/Small"},
            "e": {"$ref": "item.json"},
            "f": {"$ref": "#/$defs/a~1b%25"},
        },
        "$defs": {
            "Small": {"type": "integer", "maximum": 9},
            "Anchored": {"$anchor": "named", "type": "boolean"},
            "Item": {"$id": "item.json", "type": "null"},
            "a/b%": {"const": "odd"},
        },
        "definitions": {"Name": {"type": "string"}},
    }
    model = compiled(schema).model
    model.model_validate({"a": 9, "b": "n", "c": True, "d": 1, "e": None, "f": "odd"})
    for bad in ({"a": 10}, {"b": 1}, {"c": 1}, {"d": 10}, {"e": 1}, {"f": "even"}):
        with pytest.raises(ValidationError):
            model.model_validate(bad)


def test_recursive_refs() -> None:
    schema = {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
                "required": ["name"],
                "additionalProperties": False,
            }
        },
    }
    model = compiled(schema).model
    deep: dict[str, Any] = {"name": "leaf"}
    for level in range(40):
        deep = {"name": f"n{level}", "children": [deep]}
    assert model.model_validate({"tree": deep}).tree == deep  # type: ignore[attr-defined]
    with pytest.raises(ValidationError) as caught:
        model.model_validate({"tree": {"name": "a", "children": [{"nom": "b"}]}})
    assert [e["loc"] for e in caught.value.errors()] == [
        ("tree", "children", 0, "name"),
        ("tree", "children", 0, "nom"),
    ]
    # Recursive to the root, too.
    root = {"type": "object", "properties": {"next": {"$ref": "#"}, "n": {"type": "integer"}}}
    compiled(root).model.model_validate({"n": 1, "next": {"n": 2, "next": {}}})
    with pytest.raises(ValidationError):
        compiled(root).model.model_validate({"next": {"next": {"n": "x1"}}})


def test_a_value_nested_too_deeply_is_an_error_not_a_crash() -> None:
    schema = {"type": "object", "properties": {"v": {"$ref": "#/$defs/L"}}}
    schema["$defs"] = {"L": {"type": "array", "items": {"$ref": "#/$defs/L"}}}
    value: list[Any] = []
    for _ in range(300):
        value = [value]
    with pytest.raises(ValidationError, match="nested too deeply"):
        compiled(schema).model.model_validate({"v": value})


def test_ref_siblings_apply_from_2019_on_and_not_before() -> None:
    defs = {"Int": {"type": "integer"}}
    new = {
        "type": "object",
        "properties": {"v": {"$ref": "#/$defs/Int", "minimum": 5}},
        "$defs": defs,
    }
    compiled(new).model.model_validate({"v": 9})
    with pytest.raises(ValidationError):
        compiled(new).model.model_validate({"v": 1})
    old = {**new, "$schema": "http://json-schema.org/draft-07/schema#"}
    compiled(old).model.model_validate({"v": 1})


def test_draft_07_forms() -> None:
    schema = {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {
            "pair": {"items": [{"type": "string"}, {"type": "integer"}], "additionalItems": False}
        },
    }
    model = compiled(schema).model
    model.model_validate({"pair": ["a", 1]})
    for bad in (["a", "b"], ["a", 1, 2]):
        with pytest.raises(ValidationError):
            model.model_validate({"pair": bad})


# --- unenforced keywords -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("prop", "good", "bad"),
    [
        (
            {"allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": False},
            [{"a": 1}, {}],
            [{"b": 1}],
        ),
        (
            {
                "properties": {"a": {}},
                "anyOf": [
                    {"properties": {"b": {}}, "required": ["b"]},
                    {"properties": {"c": {}}, "required": ["c"]},
                ],
                "unevaluatedProperties": False,
            },
            [{"a": 1, "b": 2}, {"c": 1}, {"b": 1, "c": 2}],
            [{"b": 1, "d": 3}, {"a": 1}],
        ),
        (
            {"properties": {"a": {"type": "string"}}, "unevaluatedProperties": {"type": "integer"}},
            [{"a": "x", "b": 1}],
            [{"b": "x"}],
        ),
        (
            {
                "if": {"properties": {"kind": {"const": "x"}}, "required": ["kind"]},
                "then": {"properties": {"x": {}}},
                "else": {"properties": {"y": {}}},
                "unevaluatedProperties": False,
            },
            [{"kind": "x", "x": 1}, {"y": 1}],
            [{"kind": "x", "y": 1}, {"x": 1}],
        ),
        (
            {
                "properties": {"a": {}},
                "dependentSchemas": {"a": {"properties": {"b": {}}}},
                "unevaluatedProperties": False,
            },
            [{"a": 1, "b": 2}],
            [{"b": 2}],
        ),
        (
            {"properties": {"n": {"properties": {"a": {}}, "unevaluatedProperties": False}}},
            [{"n": {"a": 1}}],
            [{"n": {"b": 1}}],
        ),
        ({"prefixItems": [{"type": "string"}], "unevaluatedItems": False}, [["a"], []], [["a", 1]]),
        (
            {"prefixItems": [{}], "allOf": [{"prefixItems": [{}, {}]}], "unevaluatedItems": False},
            [[1, 2]],
            [[1, 2, 3]],
        ),
        (
            {"contains": {"type": "string"}, "unevaluatedItems": {"type": "integer"}},
            [["a", 1, "b"]],
            [["a", None]],
        ),
        (
            {
                "anyOf": [{"prefixItems": [{"type": "string"}]}, {"prefixItems": [{}, {}]}],
                "unevaluatedItems": False,
            },
            [["a"], [1], [1, 2]],
            [[1, 2, 3]],
        ),
        ({"items": {}, "unevaluatedItems": False}, [[1, 2]], []),
    ],
)
def test_unevaluated_properties_and_items(prop: Any, good: list[Any], bad: list[Any]) -> None:
    for value in good:
        assert accepts(prop, value), value
    for value in bad:
        assert not accepts(prop, value), value


def test_unevaluated_errors() -> None:
    closed = {"allOf": [{"properties": {"a": {}}}], "unevaluatedProperties": False}
    error = errors(closed, {"a": 1, "b": 2})[0]
    assert (error["loc"], error["type"]) == (("v", "b"), "extra_forbidden")
    error = errors({"prefixItems": [{}], "unevaluatedItems": False}, [1, 2])[0]
    assert (error["loc"], error["msg"]) == (("v", 1), "Extra items are not permitted")


def test_unenforced_keywords_are_listed_and_accept_more() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$dynamicRef": "#meta"}},
        "$defs": {"old": {"$recursiveRef": "#"}},
    }
    args = compiled(schema)
    assert [(u.keyword, u.path) for u in args.unenforced] == [
        ("$dynamicRef", "#/properties/a/$dynamicRef"),
        ("$recursiveRef", "#/$defs/old/$recursiveRef"),
    ]
    assert args.unenforced[0].reason == UNENFORCED_KEYWORDS["$dynamicRef"]
    args.model.model_validate({"a": "anything"})


def test_a_pattern_that_cannot_run_is_listed_not_a_crash() -> None:
    schema = {
        "type": "object",
        "properties": {
            "word": {"type": "string", "pattern": "^(\\w)\\1$"},
            "tags": {
                "type": "object",
                "patternProperties": {"\\p{L}": {"type": "integer"}},
                "additionalProperties": False,
            },
        },
    }
    args = compiled(schema)
    assert [(u.keyword, u.path) for u in args.unenforced] == [
        ("pattern", "#/properties/word/pattern"),
        ("patternProperties", "#/properties/tags/patternProperties/\\p{L}"),
    ]
    assert "back-references are not supported" in args.unenforced[0].reason
    args.model.model_validate({"word": "ab", "tags": {"x": "any"}})


def test_the_unenforced_list_is_the_one_in_the_docs() -> None:
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import make_unenforced_table
    finally:
        sys.path.pop(0)
    doc = (ROOT / "docs" / "tools.md").read_text(encoding="utf-8")
    assert make_unenforced_table.render(doc) == doc, (
        "run: python docs/make_unenforced_table.py --write"
    )
    for name in UNENFORCED_KEYWORDS:
        assert f"`{name}`" in doc
    assert "format" in ANNOTATION_KEYWORDS


# --- invalid schemas ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        (
            {"properties": {"units": {"$ref": "#/$defs/Nope"}}},
            "invalid JSON Schema at #/properties/units/$ref: $ref '#/$defs/Nope' points to nothing",
        ),
        (
            {"properties": {"units": {"type": "text"}}},
            "invalid JSON Schema at #/properties/units/type: 'type' must be one of null, boolean, "
            'object, array, number, string, integer or a list of them, not "text"',
        ),
        (
            {"properties": {"units": {"enum": "celsius"}}},
            "invalid JSON Schema at #/properties/units/enum: 'enum' must be a list, not a string",
        ),
        (
            {"properties": {"a": {"$ref": "https://example.com/other.json"}}},
            "cannot resolve $ref 'https://example.com/other.json': only references inside",
        ),
        ({"properties": {"a": {"$ref": "#nope"}}}, "$ref '#nope' names no $anchor"),
        ({"properties": {"a": 3}}, "at #/properties/a: a schema must be an object or a boolean"),
        ({"properties": []}, "at #/properties: 'properties' must be an object"),
        ({"required": "a"}, "at #/required: must be a list of strings"),
        ({"required": [1]}, "at #/required: must be a list of strings"),
        ({"properties": {"a": {"type": ["string", "string"]}}}, "at #/properties/a/type"),
        ({"properties": {"a": {"type": []}}}, "at #/properties/a/type"),
        ({"properties": {"a": {"minLength": -1}}}, "'minLength' must be a non-negative integer"),
        ({"properties": {"a": {"maxItems": 1.5}}}, "'maxItems' must be a non-negative integer"),
        ({"properties": {"a": {"minimum": "1"}}}, "'minimum' must be a number"),
        ({"properties": {"a": {"multipleOf": 0}}}, "'multipleOf' must be above 0"),
        ({"properties": {"a": {"anyOf": []}}}, "'anyOf' must be a non-empty list"),
        ({"properties": {"a": {"allOf": {}}}}, "'allOf' must be a non-empty list"),
        ({"properties": {"a": {"pattern": 3}}}, "'pattern' must be a string"),
        ({"properties": {"a": {"uniqueItems": "yes"}}}, "'uniqueItems' must be a boolean"),
        ({"properties": {"a": {"nullable": 1}}}, "'nullable' must be a boolean"),
        ({"properties": {"a": {"$ref": 1}}}, "'$ref' must be a string"),
        ({"properties": {"a": {"$dynamicRef": 1}}}, "'$dynamicRef' must be a string"),
        ({"unevaluatedProperties": 1}, "at #/unevaluatedProperties: a schema must be"),
        ({"dependentRequired": {"a": "b"}}, "at #/dependentRequired/a: must be a list of strings"),
        ({"$defs": {"unused": {"type": "text"}}}, "at #/$defs/unused/type"),
        (
            {"properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {"$ref": "#/$defs/x"}}},
            "at #/$defs/x: it applies itself to the same value without end",
        ),
        (
            {"allOf": [{"$ref": "#"}]},
            "it applies itself to the same value without end",
        ),
        ({"type": "string"}, "at #: the arguments are an object, but the schema takes string"),
        ({"type": "object", "allOf": [{"type": "array"}]}, "the schema takes nothing"),
    ],
)
def test_an_invalid_schema_is_a_config_error_naming_the_tool_and_place(
    schema: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        compile_json_schema(schema, tool="get_weather")
    assert str(caught.value).startswith("tool 'get_weather': ")
    assert message in str(caught.value)


def test_a_schema_that_is_not_a_mapping_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="tool 'x': the arguments schema must be a JSON object"):
        compile_json_schema([], tool="x")  # type: ignore[arg-type]


def test_a_schema_nested_too_deeply_is_a_config_error() -> None:
    schema: dict[str, Any] = {"type": "object"}
    for _ in range(5000):
        schema = {"type": "object", "properties": {"a": schema}}
    with pytest.raises(ConfigError, match="nested too deeply"):
        compile_json_schema(schema, tool="x")


# --- text -> values ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("prop", "text", "value"),
    [
        ({"type": "integer"}, "3", 3),
        ({"type": "integer"}, " +3 ", 3),
        ({"type": "integer"}, "3.0", 3),
        ({"type": "integer"}, "1e3", 1000),
        ({"type": "number"}, "3.5", 3.5),
        ({"type": "number"}, "-2", -2),
        ({"type": "boolean"}, "true", True),
        ({"type": "boolean"}, "No", False),
        ({"type": "boolean"}, "1", True),
        ({"type": "null"}, "null", None),
        ({"type": ["integer", "null"]}, "null", None),
        ({"type": ["integer", "null"]}, "", None),
        ({"anyOf": [{"type": "integer"}, {"type": "null"}]}, "None", None),
        ({"type": "array", "items": {"type": "integer"}}, '[1, "2"]', [1, 2]),
        ({"type": "object", "properties": {"n": {"type": "integer"}}}, '{"n": "4"}', {"n": 4}),
        ({"enum": [1, 2]}, "2", 2),
        ({"const": True}, "yes", True),
        ({"anyOf": [{"type": "string", "maxLength": 2}, {"type": "integer"}]}, "123", 123),
        ({"type": "integer", "minimum": 5}, "7", 7),
        # A string the schema takes stays a string.
        ({"type": "string"}, "3", "3"),
        ({"type": ["integer", "string"]}, "3", "3"),
        ({"oneOf": [{"type": "integer"}, {"type": "string"}]}, "3", "3"),
        ({"enum": ["1", 1]}, "1", "1"),
        ({}, "3", "3"),
    ],
)
def test_text_is_converted_by_the_schema(prop: Any, text: str, value: Any) -> None:
    result = held(prop, text)
    assert result == value and type(result) is type(value)


@pytest.mark.parametrize(
    ("prop", "text"),
    [
        ({"type": "integer"}, "3.5"),
        ({"type": "integer"}, "three"),
        ({"type": "number"}, "nan"),
        ({"type": "number"}, "1e400"),
        ({"type": "number"}, "1_000"),
        ({"type": "boolean"}, "maybe"),
        ({"type": "integer"}, "null"),  # null only where null is allowed
        ({"type": "integer", "minimum": 5}, "3"),
        ({"type": "array"}, "{}"),
        ({"type": "object"}, "[1]"),
        ({"type": "object"}, "{not json"),
        ({"oneOf": [{"type": "integer"}, {"type": "number"}]}, "3"),  # both match 3
    ],
)
def test_text_that_stands_for_no_valid_value_is_refused(prop: Any, text: str) -> None:
    assert not accepts(prop, text)


@pytest.mark.parametrize(
    ("prop", "value"),
    [
        ({"type": "integer"}, True),
        ({"type": "number"}, False),
        ({"type": "boolean"}, 1),
        ({"type": "boolean"}, 0.0),
        ({"type": "string"}, 3),
        ({"type": "null"}, 0),
        ({"type": "array"}, {"0": 1}),
    ],
)
def test_nothing_but_text_is_converted(prop: Any, value: Any) -> None:
    assert not accepts(prop, value)


def test_the_arguments_may_be_json_text() -> None:
    model = one({"type": "integer"})
    assert model.model_validate('{"v": "3"}').model_dump() == {"v": 3}
    assert model.model_validate_json('{"v": "3"}').model_dump() == {"v": 3}


def test_xml_parameters_are_converted_by_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "days": {"type": "integer", "minimum": 1},
            "units": {"enum": ["celsius", "fahrenheit"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "where": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "zip": {"type": "integer"}},
            },
            "note": {"type": ["string", "null"]},
            "limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        },
    }
    tool = Tool.from_model(compiled(schema).model, name="forecast")
    reply = (
        "<forecast>\n<days>3</days>\n<units>celsius</units>\n"
        "<tags><item>a</item><item>b</item></tags>\n"
        "<where><city>Oslo</city><zip>150</zip></where>\n"
        "<note>null</note>\n<limit>null</limit>\n</forecast>"
    )
    parser = StreamToolParser([tool])
    events = [*parser.feed(reply), *parser.close()]
    call = next(e for e in events if isinstance(e, ToolCallEvent))
    assert call.tool_instance.model_dump(by_alias=True) == {
        "days": 3,
        "units": "celsius",
        "tags": ["a", "b"],
        "where": {"city": "Oslo", "zip": 150},
        "note": "null",  # a string the schema takes stays a string
        "limit": None,
    }
    parser = StreamToolParser([tool])
    events = [*parser.feed("<forecast>\n<days>0</days>\n</forecast>"), *parser.close()]
    error = next(e for e in events if isinstance(e, ParseErrorEvent))
    assert "days: Input should be greater than or equal to 1" in error.message


# --- the model ---------------------------------------------------------------------------

WEATHER = {
    "type": "object",
    "description": "Get the weather forecast.",
    "properties": {
        "city": {"type": "string", "description": "City name."},
        "units": {"enum": ["celsius", "fahrenheit"], "default": "celsius"},
        "days": {"type": "integer", "examples": [3]},
        "where": {
            "type": "object",
            "description": "A place.",
            "properties": {"lat": {"type": "number"}, "lon": {"type": "number"}},
            "required": ["lat"],
        },
        "tags": {"type": "array", "items": {"type": "string"}, "default": []},
        "note": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    },
    "required": ["city"],
}


def test_annotations_describe_the_fields() -> None:
    model = compiled(WEATHER).model
    assert model.__name__ == "TArgs"
    assert model.__doc__ == "Get the weather forecast."
    fields = model.model_fields
    assert fields["city"].annotation is str and fields["city"].is_required()
    assert fields["units"].annotation == Literal["celsius", "fahrenheit"]
    assert fields["units"].default == "celsius"
    assert fields["days"].examples == [3]
    assert fields["note"].annotation == str | None
    assert describe_parameters(model) == (
        "- city (str, required): City name.\n"
        '- units (Literal["celsius", "fahrenheit"], optional, default: "celsius")\n'
        "- days (int, optional)\n"
        "- where (TArgsWhere, optional): A place.\n"
        "- tags (list[str], optional, default: [])\n"
        "- note (str | None, optional)\n"
        "\n"
        "TArgsWhere: A place.\n"
        "  - lat (float, required)\n"
        "  - lon (float, optional)"
    )


def test_absent_optional_properties_and_defaults() -> None:
    args = compiled(WEATHER)
    found = args.model.model_validate({"city": "Oslo", "extra": 1})
    assert found.model_dump(by_alias=True, exclude_unset=True) == {"city": "Oslo", "extra": 1}
    assert (found.units, found.days, found.tags) == ("celsius", None, [])  # type: ignore[attr-defined]
    assert args.arguments(found) == {"city": "Oslo", "extra": 1, "units": "celsius", "tags": []}


def test_model_json_schema_is_the_schema_it_was_built_from() -> None:
    model = compiled(WEATHER).model
    assert model.model_json_schema() == WEATHER
    assert model.model_json_schema() is not model.model_json_schema()
    tool = Tool.from_model(model, name="forecast")
    expected = {key: value for key, value in WEATHER.items()}
    assert tool.to_openai()["function"]["parameters"] == expected


def test_the_schema_is_copied() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    args = compile_json_schema(schema, tool="t")
    schema["properties"]["a"]["type"] = "string"
    args.model.model_validate({"a": 1})
    assert args.schema["properties"]["a"]["type"] == "integer"


def test_the_model_is_built_once_on_first_use() -> None:
    args = compile_json_schema(WEATHER, tool="forecast", model_name="Forecast")
    assert "fields=['city'" in repr(args)
    first = args.model
    assert first is args.model and first.__name__ == "Forecast"
    assert first.__argument_schema__ is args
    assert model_from_json_schema(WEATHER, tool="forecast").__name__ == "ForecastArgs"


def test_an_instance_is_returned_as_it_is_and_can_be_copied() -> None:
    model = compiled(WEATHER).model
    found = model.model_validate({"city": "Oslo"})
    assert model.model_validate(found) is found
    assert found.model_copy(update={"days": 2}).days == 2  # type: ignore[attr-defined]


def test_a_field_reads_by_its_own_union_whatever_was_built_before() -> None:
    # Unions that differ only in order compare equal, and typing caches what is built
    # from them: each field keeps its own order, or text would be read by an earlier
    # tool's ("3" as 3.0 for integer-or-number).
    first = one({"type": ["number", "integer"]}).model_fields["v"].annotation
    second = one({"type": ["integer", "number"]}).model_fields["v"].annotation
    assert typing.get_args(first) == (float, int)
    assert typing.get_args(second) == (int, float)


@pytest.mark.parametrize("types", [["integer", "string"], ["string", "integer"]])
def test_text_that_is_a_string_the_schema_takes_stays_a_string(types: list[str]) -> None:
    tool = Tool.from_json_schema(
        "t", {"type": "object", "properties": {"v": {"type": types}}}, handler=lambda a: a
    )
    parser = StreamToolParser([tool])
    (call,) = [e for e in parser.feed("<t><v>42</v></t>") + parser.close() if e.kind == "tool_call"]
    assert call.tool_instance.model_dump()["v"] == "42"
