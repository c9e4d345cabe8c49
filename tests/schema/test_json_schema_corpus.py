"""Models built from real-looking tool schemas accept exactly what jsonschema accepts.

For each schema of ``json_schema_corpus.CORPUS``, hypothesis draws instances -- values
made from the schema, mutations of them (a leaf replaced, its text put in its place, a
key dropped or added) and arbitrary JSON -- and checks, against
``jsonschema.Draft202012Validator`` (``Draft7Validator`` for a draft-07 schema):

* whatever jsonschema accepts, the model accepts, and keeps as it is;
* whatever the model accepts is, as the model holds it, valid for jsonschema, and
  differs from what was given only where text was given (the conversions of text by the
  schema: ``"3"`` for an integer).

So on JSON-typed instances (no text where the schema wants something else) the model
accepts exactly when jsonschema does.  jsonschema runs ``pattern`` with Python's ``re``;
here it runs ECMA-262 patterns with ``regress`` (a Rust ECMA-262 engine), as JSON Schema
says.  The corpus uses no keyword the models leave unenforced (checked below).
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from stream_parser.schema.json_schema import ArgumentSchema, compile_json_schema

from .json_schema_corpus import CORPUS

regress = pytest.importorskip("regress")
jsonschema = pytest.importorskip("jsonschema")

FAST = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
# The fast suite's look at the oracle's agreement: the slow test draws 300 per schema.
QUICK = settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
LONG = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))


# --- the oracle: jsonschema, with ECMA-262 patterns ------------------------------------------


@functools.cache
def ecma(pattern: str) -> Any:
    return regress.Regex(pattern)


def _matches(pattern: str, text: str) -> bool:
    return ecma(pattern).find(text) is not None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and not _matches(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _matches(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, additional: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    properties = schema.get("properties", {})
    patterns = schema.get("patternProperties", {})
    extras = [
        key
        for key in instance
        if key not in properties and not any(_matches(p, key) for p in patterns)
    ]
    if additional is False:
        if extras:
            yield jsonschema.ValidationError(f"extra keys {extras!r}")
        return
    for key in extras:
        yield from validator.descend(instance[key], additional, path=key)


_ECMA_KEYWORDS = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}


def oracle(schema: dict[str, Any]) -> Any:
    base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    base.check_schema(schema)
    return jsonschema.validators.extend(base, _ECMA_KEYWORDS)(schema)


# --- instances ---------------------------------------------------------------------------

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=8)
LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | TEXT
)
ANY_JSON = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=6,
)


def no_surrogate(text: str) -> bool:
    """regress reads UTF-8: a lone surrogate cannot reach it (nor a model's JSON)."""
    return not any(0xD800 <= ord(char) <= 0xDFFF for char in text)


def _resolve(root: dict[str, Any], ref: str) -> Any:
    target: Any = root
    for token in ref.lstrip("#").split("/")[1:]:
        target = target[token.replace("~1", "/").replace("~0", "~")]
    return target


def _merged(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    """The schema with its $ref and allOf branches folded in (good enough to draw from)."""
    merged = {key: value for key, value in schema.items() if key not in ("$ref", "allOf")}
    parts = [_resolve(root, schema["$ref"])] if "$ref" in schema else []
    parts.extend(schema.get("allOf", ()))
    for part in parts:
        part = _merged(part, root)
        merged["properties"] = {**part.get("properties", {}), **merged.get("properties", {})}
        merged["required"] = [*merged.get("required", ()), *part.get("required", ())]
        for key, value in part.items():
            merged.setdefault(key, value)
    return merged


def values(schema: Any, root: dict[str, Any], depth: int = 0) -> st.SearchStrategy[Any]:
    """Values drawn from a schema, most of them valid."""
    if not isinstance(schema, dict) or depth > 4:
        return ANY_JSON
    schema = _merged(schema, root)
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches and ("properties" in schema or "type" in schema):
        # Branches that add to an object: the object with one branch folded in.
        rest = {key: value for key, value in schema.items() if key not in ("anyOf", "oneOf")}
        return st.sampled_from(branches).flatmap(
            lambda branch: values({**rest, "allOf": [branch]}, root, depth + 1)
        )
    if branches:
        return st.one_of([values(branch, root, depth + 1) for branch in branches])
    kinds = schema.get("type")
    if kinds is None:
        kinds = "object" if "properties" in schema else ("array" if "items" in schema else None)
    if kinds is None:
        return ANY_JSON
    kinds = [kinds] if isinstance(kinds, str) else kinds
    return st.one_of([_typed(kind, schema, root, depth) for kind in kinds])


def _typed(kind: str, schema: dict[str, Any], root: dict[str, Any], depth: int) -> Any:
    if kind == "null":
        return st.none()
    if kind == "boolean":
        return st.booleans()
    if kind == "string":
        if "pattern" in schema:
            # Python's \d draws any digit (a near miss for ECMA-262's ASCII \d), so ASCII
            # digits are drawn too, for values that match.
            pattern = schema["pattern"]
            ascii_digits = pattern.replace("\\d", "[0-9]")
            drawn = st.from_regex(ascii_digits, fullmatch=True) | st.from_regex(pattern)
            return drawn.filter(no_surrogate)
        return st.text(
            st.characters(exclude_categories=("Cs",)),
            min_size=schema.get("minLength", 0),
            max_size=schema.get("maxLength", 8),
        )
    if kind in ("integer", "number"):
        low = schema.get("minimum", schema.get("exclusiveMinimum", -1000))
        high = schema.get("maximum", schema.get("exclusiveMaximum", 1000))
        if "multipleOf" in schema:
            step = schema["multipleOf"]
            return st.integers(math.ceil(low / step), math.floor(high / step)).map(
                lambda k: k * step
            )
        whole = st.integers(math.ceil(low), math.floor(high))
        if kind == "integer":
            return whole | whole.map(float)
        return whole | st.floats(low, high, allow_nan=False)
    if kind == "array":
        prefix = [values(item, root, depth + 1) for item in schema.get("prefixItems", ())]
        if isinstance(schema.get("items"), list):
            prefix = [values(item, root, depth + 1) for item in schema["items"]]
            rest = values(schema.get("additionalItems", {}), root, depth + 1)
        elif "items" in schema:
            rest = values(schema["items"], root, depth + 1)
        else:
            kinds = [schema[key] for key in ("contains", "unevaluatedItems") if key in schema]
            rest = st.one_of([values(kind, root, depth + 1) for kind in kinds] or [ANY_JSON])
        longest = 0 if schema.get("items") is False else 3
        return st.tuples(*prefix).flatmap(
            lambda head: st.lists(rest, max_size=longest).map(lambda tail: [*head, *tail])
        )
    return _objects(schema, root, depth)


def _objects(schema: dict[str, Any], root: dict[str, Any], depth: int) -> Any:
    properties = schema.get("properties", {})
    required = [name for name in schema.get("required", ()) if name in properties]
    optional = [name for name in properties if name not in required]
    extra_keys = list(schema.get("patternProperties", {}))
    extras: Any = st.just({})
    if schema.get("additionalProperties", True) is not False or extra_keys:
        key = st.one_of([st.from_regex(p) for p in extra_keys]) if extra_keys else TEXT
        additional = schema.get("additionalProperties")
        extra_values = values(additional, root, depth + 1) if additional else ANY_JSON
        extras = st.dictionaries(key, extra_values, max_size=2)

    @st.composite
    def build(draw: Any) -> dict[str, Any]:
        chosen = (
            required + draw(st.lists(st.sampled_from(optional), unique=True))
            if optional
            else required
        )
        found = dict(draw(extras))
        for name in chosen:
            found[name] = draw(values(properties[name], root, depth + 1))
        return found

    return build()


@st.composite
def mutated(draw: Any, value: Any) -> Any:
    """``value`` with one part changed: replaced, written as text, dropped or added to."""
    if isinstance(value, (dict, list)) and value and draw(st.booleans()):
        if isinstance(value, dict):
            key = draw(st.sampled_from(sorted(value)))
            return {**value, key: draw(mutated(value[key]))}
        index = draw(st.integers(0, len(value) - 1))
        return [*value[:index], draw(mutated(value[index])), *value[index + 1 :]]
    change = draw(st.sampled_from(["replace", "text", "drop", "add"]))
    if change == "replace":
        return draw(ANY_JSON)
    if change == "text":
        return value if isinstance(value, str) else json.dumps(value)
    if change == "drop" and isinstance(value, dict) and value:
        key = draw(st.sampled_from(sorted(value)))
        return {name: item for name, item in value.items() if name != key}
    if change == "drop" and isinstance(value, list) and value:
        return value[1:]
    if isinstance(value, dict):
        return {**value, draw(TEXT): draw(ANY_JSON)}
    if isinstance(value, list):
        return [*value, draw(ANY_JSON)]
    return draw(ANY_JSON)


def instances(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    made = values(schema, schema)
    names = sorted(schema.get("properties", {})) or ["x"]
    keyed = st.dictionaries(st.sampled_from(names), ANY_JSON, max_size=4)
    return st.one_of(made, made.flatmap(mutated), keyed, ANY_JSON)


# --- the properties ----------------------------------------------------------------------


def same_json(first: Any, second: Any) -> bool:
    """JSON equality: 1 == 1.0, but true is not 1, and types must match otherwise."""
    if isinstance(first, bool) or isinstance(second, bool):
        return type(first) is type(second) and first == second
    if isinstance(first, (int, float)) and isinstance(second, (int, float)):
        return first == second
    if isinstance(first, dict) and isinstance(second, dict):
        return first.keys() == second.keys() and all(same_json(first[k], second[k]) for k in first)
    if isinstance(first, list) and isinstance(second, list):
        return len(first) == len(second) and all(map(same_json, first, second))
    return type(first) is type(second) and first == second


def changed_only_text(given: Any, held: Any) -> bool:
    """Whether ``held`` differs from ``given`` only where ``given`` holds text."""
    if isinstance(given, str):
        return True
    if isinstance(given, dict) and isinstance(held, dict):
        return given.keys() == held.keys() and all(
            changed_only_text(given[k], held[k]) for k in given
        )
    if isinstance(given, list) and isinstance(held, list):
        return len(given) == len(held) and all(map(changed_only_text, given, held))
    return same_json(given, held)


@functools.cache
def compiled(name: str) -> tuple[ArgumentSchema, Any]:
    schema = CORPUS[name]
    return compile_json_schema(schema, tool=name), oracle(schema)


def agree(name: str, instance: Any) -> None:
    argument_schema, validator = compiled(name)
    expected = validator.is_valid(instance)
    try:
        held = argument_schema.model.model_validate(instance)
    except ValidationError:
        assert not expected, f"the model refused what the schema accepts: {instance!r}"
        return
    dumped = held.model_dump(by_alias=True, exclude_unset=True)
    if expected:
        assert same_json(dumped, instance), f"a valid instance was changed: {instance!r}"
    assert validator.is_valid(dumped), f"the model accepted what the schema refuses: {dumped!r}"
    assert changed_only_text(instance, dumped), f"{instance!r} became {dumped!r}"


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_the_corpus_uses_only_enforced_keywords(name: str) -> None:
    assert compiled(name)[0].unenforced == ()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_the_model_accepts_what_jsonschema_accepts(name: str) -> None:
    @QUICK
    @given(instances(CORPUS[name]))
    def check(instance: Any) -> None:
        agree(name, instance)

    check()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_the_model_accepts_what_jsonschema_accepts_long(name: str) -> None:
    @LONG
    @given(instances(CORPUS[name]))
    def check(instance: Any) -> None:
        agree(name, instance)

    check()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_the_model_accepts_the_values_drawn_from_its_schema(name: str) -> None:
    """Not a vacuous check: the values drawn from a schema include valid ones, and the
    model takes them (how many are valid depends on the draws, which differ between
    Hypothesis versions: only their presence is checked)."""
    schema = CORPUS[name]
    validator = compiled(name)[1]
    accepted = []

    # The same draws on every run of one Hypothesis version.
    @settings(FAST, derandomize=True)
    @given(values(schema, schema))
    def check(instance: Any) -> None:
        agree(name, instance)
        accepted.append(validator.is_valid(instance))

    check()
    assert any(accepted), f"none of {len(accepted)} drawn values is valid"
