"""A JSON Schema, compiled into a validator with JSON Schema's meaning (draft 2020-12).

This is the validator behind :mod:`.json_schema`'s argument models.  Pydantic's types
cannot say what JSON Schema says (``oneOf`` means exactly one branch, ``true`` is no
integer, ``1`` and ``1.0`` are the same number but not ``true``, a ``pattern`` is
ECMA-262), so the schema is compiled into its own small evaluator.

Theory of operation.  :func:`compile_schema` checks the schema and compiles each
subschema into a :class:`Node`: the keyword values, read and checked once (an invalid
schema is a :class:`~stream_parser.errors.ConfigError` naming the tool and the place,
``#/properties/units/enum``), and the subschemas it applies, as nodes too.  A ``$ref``
becomes a link to the node it names, so recursive schemas are cyclic graphs; a loop of
``$ref`` / ``allOf``... that never moves into the value would never end, and is refused.
:meth:`Node.check` walks a value and the graph together, appending one error per
problem, each located by the schema's names (Pydantic's error shape, and Pydantic's own
error types where one says the same thing).

:func:`validate` runs the check; when the value is invalid, :func:`convert` proposes a
version in which text stands for what the schema wants there (``"3"`` for an integer,
``"true"`` for a boolean, JSON text for an object or an array, ``"null"`` for null), and
the check runs again on that.  So a valid value is never changed, and what is returned
is always valid: the conversion only proposes.

What is not enforced is listed: the keywords of :data:`UNENFORCED_KEYWORDS`, and each
``pattern`` that :func:`~.ecma_regex.compile_pattern` refuses (:class:`Unenforced`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import typing
from collections.abc import Iterable, Mapping
from decimal import Decimal
from fractions import Fraction
from types import MappingProxyType
from typing import Any, Final, Union
from urllib.parse import unquote

from pydantic import ValidationError
from pydantic_core import PydanticCustomError

from ..errors import ConfigError
from .coerce import FALSE_TOKENS, MAX_NESTED_DEPTH, NULL_TOKENS, TRUE_TOKENS
from .ecma_regex import PatternError, compile_pattern

__all__ = [
    "ANNOTATION_KEYWORDS",
    "JSON_TYPES",
    "NO_VALUE",
    "UNENFORCED_KEYWORDS",
    "Node",
    "Unenforced",
    "compile_schema",
    "convert",
    "validate",
]

UNENFORCED_KEYWORDS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "$dynamicRef": "not followed: the subschema it names is not applied",
        "$recursiveRef": "not followed (draft 2019-09): the subschema it names is not applied",
    }
)
"""The keywords that are not enforced, each with what happens instead.

A schema may use them; where it does, its model accepts more than the schema.  Besides
these, a ``pattern`` (or a ``patternProperties`` key) that
:func:`~stream_parser.schema.ecma_regex.compile_pattern` cannot run with ECMA-262's
meaning is not enforced in the schema that holds it (an :class:`Unenforced` says so)."""

ANNOTATION_KEYWORDS: Final[frozenset[str]] = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "format",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
        "$schema",
        "$id",
        "$anchor",
        "$dynamicAnchor",
        "$recursiveAnchor",
        "$vocabulary",
        "$defs",
        "definitions",
    }
)
"""Keywords that assert nothing in draft 2020-12, so that there is nothing to enforce.
``format`` is one: ``"x"`` is a valid value of a ``"format": "email"`` string."""

JSON_TYPES: Final = ("null", "boolean", "object", "array", "number", "string", "integer")
"""The values of ``type``."""

NO_VALUE: Final[Any] = object()
"""Stands for "no such keyword" where any JSON value (``null`` too) is a keyword's value."""

_OLD_DRAFTS: Final = ("draft-04", "draft-06", "draft-07")
_INT_TEXT: Final = re.compile(r"[+-]?[0-9]+")
_NUMBER_TEXT: Final = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_MAX_VALUE_DEPTH: Final = 128  # parts of a location: keys and indexes
# The order in which text is tried as a value where the schema allows any type.
_ANY_ORDER: Final = ("integer", "number", "boolean", "null", "object", "array")


@dataclasses.dataclass(frozen=True, slots=True)
class Unenforced:
    """A keyword of one schema that is not enforced.

    Attributes:
        keyword: the keyword (``pattern``, ``$dynamicRef``...).
        path: where it is, as a JSON pointer (``#/properties/code/pattern``).
        reason: why, and what is accepted instead.
    """

    keyword: str
    path: str
    reason: str


def pointer(path: str, *parts: object) -> str:
    """``path`` extended by JSON-pointer tokens (``~`` and ``/`` escaped)."""
    escaped = (str(part).replace("~", "~0").replace("/", "~1") for part in parts)
    return "/".join((path, *escaped))


# --- errors ------------------------------------------------------------------------------

_Error = dict[str, Any]  # a line error, as ValidationError.from_exception_data takes it
_Loc = tuple[str | int, ...]

# Errors that Pydantic has no type for: their messages, by kind.
_MESSAGES: Final = {
    "false": "No value is allowed here",
    "too_deep": "The value is nested too deeply",
    "type": "Input should be {expected}",
    "const": "Input should be {expected}",
    "too_short": "List should have at least {min} item(s), not {count}",
    "too_long": "List should have at most {max} item(s), not {count}",
    "unique_items": "List items should be unique (items {first} and {second} are equal)",
    "too_few_matching": "List should have at least {min} item(s) matching {where}, not {found}",
    "too_many_matching": "List should have at most {max} item(s) matching {where}, not {found}",
    "unevaluated_item": "Extra items are not permitted",
    "dict_keys": "Object keys should be strings",
    "missing_dependent": "Field required when {name} is given",
    "too_few_keys": "Object should have at least {min} key(s), not {count}",
    "too_many_keys": "Object should have at most {max} key(s), not {count}",
    "property_name": "Key {key} is not allowed: {reason}",
    "one_of": "Input should match exactly one schema of {where}, but matches {matched}",
    "no_branch": "Input should match a schema of {where} ({expected})",
    "not": "Input should not match the schema at {where}",
}
_TYPE_ERRORS: Final = {
    "string": "string_type",
    "integer": "int_type",
    "number": "float_type",
    "boolean": "bool_type",
    "null": "none_required",
    "array": "list_type",
    "object": "dict_type",
}
_TYPE_WORDS: Final = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
    "array": "a list",
    "object": "an object",
}


def _error(kind: str, loc: _Loc, value: Any, **ctx: Any) -> _Error:
    """One error: a Pydantic error type, or one of :data:`_MESSAGES` (``json_schema_*``)."""
    error: _Error = {"loc": loc, "input": value}
    message = _MESSAGES.get(kind)
    if message is not None:
        error["type"] = PydanticCustomError(f"json_schema_{kind}", message, ctx or None)
    else:
        error["type"] = kind
        if ctx:
            error["ctx"] = ctx
    return error


def _show(value: Any) -> str:
    """A value as JSON, shortened, for a message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _message(error: _Error) -> str:
    """The message of an error made by :func:`_error`."""
    kind = error["type"]
    if isinstance(kind, PydanticCustomError):
        return kind.message()
    made = ValidationError.from_exception_data("value", [error])  # type: ignore[list-item]
    return str(made.errors()[0]["msg"])


# --- JSON values -------------------------------------------------------------------------


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def json_type(value: Any) -> str | None:
    """The JSON type of a value (``"integer"`` for a whole number), None if it has none."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return None


def _has_type(value: Any, types: frozenset[str]) -> bool:
    kind = json_type(value)
    return kind is not None and (kind in types or (kind == "integer" and "number" in types))


def _canonical(value: Any) -> Any:
    """A hashable form in which JSON-equal values are equal (1 == 1.0, true != 1)."""
    if isinstance(value, bool):
        return ("b", value)
    if _is_number(value):
        return ("n", value)  # 1 == 1.0, and hash(1) == hash(1.0)
    if isinstance(value, str):
        return ("s", value)
    if value is None:
        return ("z",)
    if isinstance(value, list):
        return ("a", tuple(_canonical(item) for item in value))
    if isinstance(value, dict):
        return ("o", frozenset((key, _canonical(item)) for key, item in value.items()))
    return ("x", id(value))  # not JSON: equal to nothing else


def _decimal(number: int | float) -> Fraction:
    """A number as the decimal its shortest form writes: 19.99 is 1999/100, not binary."""
    if isinstance(number, float):
        return Fraction(Decimal(repr(number)))
    return Fraction(number)


# --- nodes -------------------------------------------------------------------------------


class Node:
    """One compiled subschema: it says whether a value is valid there, and why not.

    The attributes hold the keywords, read and checked (None or empty: absent); the
    subschemas it applies are nodes too.  Built by :func:`compile_schema` only.
    """

    def __init__(self, schema: Any, path: str) -> None:
        self.schema: Any = schema
        self.path = path
        # True / False for a boolean schema, None for an object.
        self.boolean: bool | None = schema if isinstance(schema, bool) else None
        self.description = ""
        self.types: tuple[str, ...] | None = None
        self.type_set: frozenset[str] = frozenset()
        self.enum: frozenset[Any] | None = None
        self.enum_values: tuple[Any, ...] = ()
        self.const: Any = NO_VALUE
        # Numbers: (bound, exclusive); draft-04's boolean exclusiveMinimum makes it so.
        self.minimum: tuple[int | float, bool] | None = None
        self.maximum: tuple[int | float, bool] | None = None
        self.exclusive_minimum: int | float | None = None
        self.exclusive_maximum: int | float | None = None
        self.multiple_of: Fraction | None = None
        self.min_length: int | None = None
        self.max_length: int | None = None
        self.pattern: tuple[str, re.Pattern[str]] | None = None
        self.min_items: int | None = None
        self.max_items: int | None = None
        self.unique_items = False
        self.prefix: tuple[Node, ...] = ()
        self.items: Node | None = None
        self.contains: Node | None = None
        self.min_contains = 1
        self.max_contains: int | None = None
        self.properties: dict[str, Node] = {}
        # A key pattern that cannot run is None: it may match any key.
        self.pattern_properties: list[tuple[re.Pattern[str] | None, Node]] = []
        self.additional: Node | None = None
        self.required: tuple[str, ...] = ()
        self.dependent_required: dict[str, tuple[str, ...]] = {}
        self.dependent_schemas: dict[str, Node] = {}
        self.property_names: Node | None = None
        self.min_properties: int | None = None
        self.max_properties: int | None = None
        self.unevaluated_properties: Node | None = None
        self.unevaluated_items: Node | None = None
        self.ref: Node | None = None
        self.all_of: tuple[Node, ...] = ()
        self.any_of: tuple[Node, ...] = ()
        self.one_of: tuple[Node, ...] = ()
        self.not_: Node | None = None
        self.if_: Node | None = None
        self.then: Node | None = None
        self.else_: Node | None = None

    def __repr__(self) -> str:
        return f"Node({self.path!r})"

    def in_place(self) -> list[Node]:
        """The subschemas applied to the same value as this one."""
        found: list[Node] = [self.ref] if self.ref is not None else []
        found.extend((*self.all_of, *self.any_of, *self.one_of))
        found.extend(node for node in (self.not_, self.if_, self.then, self.else_) if node)
        found.extend(self.dependent_schemas.values())
        return found

    def valid(self, value: Any) -> bool:
        """Whether ``value`` is valid here."""
        errors: list[_Error] = []
        self.check(value, (), errors)
        return not errors

    def check(self, value: Any, loc: _Loc, out: list[_Error]) -> None:
        """Append to ``out`` one error per way in which ``value`` is invalid here."""
        if self.boolean is not None:
            if not self.boolean:
                out.append(_error("false", loc, value))
            return
        if len(loc) > _MAX_VALUE_DEPTH:
            out.append(_error("too_deep", loc, value))
            return
        if isinstance(value, float) and not math.isfinite(value):  # no JSON number
            out.append(_error("finite_number", loc, value))
            return
        if self.types is not None and not _has_type(value, self.type_set):
            out.append(_type_error(self.types, loc, value))
            return  # the other keywords would only add noise
        if self.enum is not None and _canonical(value) not in self.enum:
            expected = " or ".join(_show(item) for item in self.enum_values)
            out.append(_error("literal_error", loc, value, expected=expected))
        if self.const is not NO_VALUE and _canonical(value) != _canonical(self.const):
            out.append(_error("const", loc, value, expected=_show(self.const)))
        if isinstance(value, str):
            self._check_string(value, loc, out)
        elif _is_number(value):
            self._check_number(value, loc, out)
        elif isinstance(value, list):
            self._check_array(value, loc, out)
        elif isinstance(value, dict):
            self._check_object(value, loc, out)
        self._check_applicators(value, loc, out)
        # After the applicators: what they evaluate is not "unevaluated".
        if self.unevaluated_properties is not None and isinstance(value, dict):
            self._check_unevaluated_properties(value, loc, out)
        if self.unevaluated_items is not None and isinstance(value, list):
            self._check_unevaluated_items(value, loc, out)

    def _check_string(self, value: str, loc: _Loc, out: list[_Error]) -> None:
        # len() counts code points, as JSON Schema does.
        if self.min_length is not None and len(value) < self.min_length:
            out.append(_error("string_too_short", loc, value, min_length=self.min_length))
        if self.max_length is not None and len(value) > self.max_length:
            out.append(_error("string_too_long", loc, value, max_length=self.max_length))
        if self.pattern is not None and self.pattern[1].search(value) is None:
            out.append(_error("string_pattern_mismatch", loc, value, pattern=self.pattern[0]))

    def _check_number(self, value: int | float, loc: _Loc, out: list[_Error]) -> None:
        # Python compares ints and floats exactly, so no bound is rounded.
        if self.minimum is not None:
            bound, exclusive = self.minimum
            if exclusive and value <= bound:
                out.append(_error("greater_than", loc, value, gt=bound))
            elif value < bound:
                out.append(_error("greater_than_equal", loc, value, ge=bound))
        if self.exclusive_minimum is not None and value <= self.exclusive_minimum:
            out.append(_error("greater_than", loc, value, gt=self.exclusive_minimum))
        if self.maximum is not None:
            bound, exclusive = self.maximum
            if exclusive and value >= bound:
                out.append(_error("less_than", loc, value, lt=bound))
            elif value > bound:
                out.append(_error("less_than_equal", loc, value, le=bound))
        if self.exclusive_maximum is not None and value >= self.exclusive_maximum:
            out.append(_error("less_than", loc, value, lt=self.exclusive_maximum))
        multiple = self.multiple_of
        if multiple is not None and (_decimal(value) / multiple).denominator != 1:
            shown = multiple.numerator if multiple.denominator == 1 else float(multiple)
            out.append(_error("multiple_of", loc, value, multiple_of=shown))

    def _check_array(self, value: list[Any], loc: _Loc, out: list[_Error]) -> None:
        count = len(value)
        if self.min_items is not None and count < self.min_items:
            out.append(_error("too_short", loc, value, min=self.min_items, count=count))
        if self.max_items is not None and count > self.max_items:
            out.append(_error("too_long", loc, value, max=self.max_items, count=count))
        for index, item in enumerate(value):
            node = self.prefix[index] if index < len(self.prefix) else self.items
            if node is None:
                break  # no items keyword: the rest is free
            if node.boolean is False:  # "items": false after prefixItems
                out.append(_error("too_long", loc, value, max=index, count=count))
                break
            node.check(item, (*loc, index), out)
        if self.unique_items:
            seen: dict[Any, int] = {}
            for index, item in enumerate(value):
                first = seen.setdefault(_canonical(item), index)
                if first != index:
                    out.append(_error("unique_items", loc, value, first=first, second=index))
                    break
        if self.contains is not None:
            found = sum(1 for item in value if self.contains.valid(item))
            where = self.contains.path
            if found < self.min_contains:
                kind, bound = "too_few_matching", {"min": self.min_contains}
                out.append(_error(kind, loc, value, where=where, found=found, **bound))
            if self.max_contains is not None and found > self.max_contains:
                kind, bound = "too_many_matching", {"max": self.max_contains}
                out.append(_error(kind, loc, value, where=where, found=found, **bound))

    def _check_object(self, value: dict[Any, Any], loc: _Loc, out: list[_Error]) -> None:
        if not all(isinstance(key, str) for key in value):
            out.append(_error("dict_keys", loc, value))
            return
        for name in self.required:
            if name not in value:
                out.append(_error("missing", (*loc, name), value))
        for name, needed in self.dependent_required.items():
            if name in value:
                for other in needed:
                    if other not in value:
                        where = (*loc, other)
                        out.append(_error("missing_dependent", where, value, name=_show(name)))
        count = len(value)
        if self.min_properties is not None and count < self.min_properties:
            out.append(_error("too_few_keys", loc, value, min=self.min_properties, count=count))
        if self.max_properties is not None and count > self.max_properties:
            out.append(_error("too_many_keys", loc, value, max=self.max_properties, count=count))
        for key, item in value.items():
            self._check_entry(key, item, (*loc, key), out)
        for name, node in self.dependent_schemas.items():
            if name in value:
                node.check(value, loc, out)

    def _check_entry(self, key: str, item: Any, where: _Loc, out: list[_Error]) -> None:
        node = self.properties.get(key)
        matched = node is not None
        if node is not None:
            node.check(item, where, out)
        for regex, child in self.pattern_properties:
            if regex is None:
                matched = True
            elif regex.search(key) is not None:
                matched = True
                child.check(item, where, out)
        if not matched and self.additional is not None:
            if self.additional.boolean is False:
                out.append(_error("extra_forbidden", where, item))
            else:
                self.additional.check(item, where, out)
        if self.property_names is not None:
            problems: list[_Error] = []
            self.property_names.check(key, where, problems)
            if problems:
                reason = _message(problems[0])
                out.append(_error("property_name", where, key, key=_show(key), reason=reason))

    def _check_applicators(self, value: Any, loc: _Loc, out: list[_Error]) -> None:
        if self.ref is not None:
            self.ref.check(value, loc, out)
        for node in self.all_of:
            node.check(value, loc, out)
        if self.any_of and not any(node.valid(value) for node in self.any_of):
            _no_branch(self.any_of, value, loc, out)
        if self.one_of:
            matching = [node.path for node in self.one_of if node.valid(value)]
            if not matching:
                _no_branch(self.one_of, value, loc, out)
            elif len(matching) > 1:
                where = pointer(self.path, "oneOf")
                out.append(_error("one_of", loc, value, where=where, matched=", ".join(matching)))
        if self.not_ is not None and self.not_.valid(value):
            out.append(_error("not", loc, value, where=self.not_.path))
        if self.if_ is not None:
            branch = self.then if self.if_.valid(value) else self.else_
            if branch is not None:
                branch.check(value, loc, out)

    # -- unevaluatedProperties / unevaluatedItems ----------------------------------------

    def _check_unevaluated_properties(
        self, value: dict[Any, Any], loc: _Loc, out: list[_Error]
    ) -> None:
        node = self.unevaluated_properties
        if node is None or not all(isinstance(key, str) for key in value):
            return
        evaluated = self.evaluated_keys(value, own=False)
        for key, item in value.items():
            if key in evaluated:
                continue
            if node.boolean is False:
                out.append(_error("extra_forbidden", (*loc, key), item))
            else:
                node.check(item, (*loc, key), out)

    def _check_unevaluated_items(self, value: list[Any], loc: _Loc, out: list[_Error]) -> None:
        node = self.unevaluated_items
        if node is None:
            return
        evaluated = self.evaluated_items(value, own=False)
        for index, item in enumerate(value):
            if index in evaluated:
                continue
            if node.boolean is False:
                out.append(_error("unevaluated_item", (*loc, index), item))
            else:
                node.check(item, (*loc, index), out)

    def _passing(self, value: Any) -> list[Node]:
        """The subschemas applied in place whose results count for ``value``.

        JSON Schema keeps what a subschema evaluated only when it holds: the anyOf and
        oneOf branches that match, ``if`` and the branch it picks when they match, the
        dependent schemas that apply.  ``$ref`` and ``allOf`` always count (when one of
        them fails, so does this schema).
        """
        found = [sub for sub in (self.ref, *self.all_of) if sub is not None]
        found.extend(sub for sub in (*self.any_of, *self.one_of) if sub.valid(value))
        if self.if_ is not None:
            if self.if_.valid(value):
                found.append(self.if_)
                branch = self.then
            else:
                branch = self.else_
            if branch is not None and branch.valid(value):
                found.append(branch)
        if isinstance(value, dict):
            found.extend(
                sub
                for name, sub in self.dependent_schemas.items()
                if name in value and sub.valid(value)
            )
        return found

    def evaluated_keys(self, value: dict[str, Any], *, own: bool = True) -> set[str]:
        """The keys of ``value`` this schema evaluates (for ``unevaluatedProperties``).

        Args:
            value: an object.
            own: count this schema's own ``unevaluatedProperties`` (which evaluates every
                key left); False while that keyword itself is being checked.
        """
        if self.boolean is not None:
            return set()
        if self.additional is not None or (own and self.unevaluated_properties is not None):
            return set(value)  # they take whatever the rest leaves
        found = {key for key in value if key in self.properties}
        for regex, _ in self.pattern_properties:
            found.update(key for key in value if regex is None or regex.search(key))
        for sub in self._passing(value):
            found |= sub.evaluated_keys(value)
        return found

    def evaluated_items(self, value: list[Any], *, own: bool = True) -> set[int]:
        """The indexes of ``value`` this schema evaluates (for ``unevaluatedItems``).

        Args:
            value: an array.
            own: count this schema's own ``unevaluatedItems``; False while that keyword
                itself is being checked.
        """
        if self.boolean is not None:
            return set()
        if self.items is not None or (own and self.unevaluated_items is not None):
            return set(range(len(value)))
        found = set(range(min(len(self.prefix), len(value))))
        if self.contains is not None:
            found.update(i for i, item in enumerate(value) if self.contains.valid(item))
        for sub in self._passing(value):
            found |= sub.evaluated_items(value)
        return found


def _type_error(types: tuple[str, ...], loc: _Loc, value: Any) -> _Error:
    if isinstance(value, float) and "integer" in types and "number" not in types:
        return _error("int_from_float", loc, value)
    if len(types) == 1:
        return _error(_TYPE_ERRORS[types[0]], loc, value)
    words = [_TYPE_WORDS[kind] for kind in types]
    return _error("type", loc, value, expected=", ".join(words[:-1]) + " or " + words[-1])


def _no_branch(branches: tuple[Node, ...], value: Any, loc: _Loc, out: list[_Error]) -> None:
    """No branch of an anyOf / oneOf matches: say why, as precisely as one can."""
    fitting = [node for node in branches if _takes_type(node, value)]
    if len(fitting) == 1:
        # One branch only takes a value of this type (of "an integer or null", say):
        # its own errors say best what is wrong.
        fitting[0].check(value, loc, out)
        return
    where = branches[0].path.rsplit("/", 1)[0]
    expected = "; ".join(_describe(node) for node in branches)
    out.append(_error("no_branch", loc, value, where=where, expected=expected))


def _takes_type(node: Node, value: Any) -> bool:
    """Whether a value of this type may be valid at ``node`` (its enum counts too)."""
    types = node_types(node)
    return types is None or _has_type(value, frozenset(types))


def _describe(node: Node) -> str:
    """A few words on what a subschema takes."""
    if node.boolean is not None:
        return "any value" if node.boolean else "no value"
    if node.enum is not None:
        return "one of " + ", ".join(_show(item) for item in node.enum_values)
    if node.const is not NO_VALUE:
        return _show(node.const)
    if node.types is not None:
        return " or ".join(_TYPE_WORDS[kind] for kind in node.types)
    if node.ref is not None:
        return _describe(node.ref)
    return "as " + node.path


# --- compiling ---------------------------------------------------------------------------

# Keywords whose value is a subschema, a list of them, or a map of name -> subschema.
_ONE_SCHEMA: Final = (
    "additionalProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "additionalItems",
    "unevaluatedProperties",
    "unevaluatedItems",
)
_SCHEMA_LISTS: Final = ("allOf", "anyOf", "oneOf", "prefixItems")
_SCHEMA_MAPS: Final = (
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
)


def _subschemas(schema: Mapping[str, Any], path: str) -> Iterable[tuple[Any, str]]:
    """Every direct subschema of a schema object, with its path (not checked)."""
    for name in _ONE_SCHEMA:
        if name in schema:
            yield schema[name], pointer(path, name)
    items = schema.get("items")
    if isinstance(items, list):  # draft-07's list form
        for index, item in enumerate(items):
            yield item, pointer(path, "items", index)
    elif items is not None:
        yield items, pointer(path, "items")
    for name in _SCHEMA_LISTS:
        value = schema.get(name)
        if isinstance(value, list):
            for index, item in enumerate(value):
                yield item, pointer(path, name, index)
    for name in (*_SCHEMA_MAPS, "dependencies"):
        value = schema.get(name)
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(item, list):  # draft-07 dependencies may list names
                    yield item, pointer(path, name, key)


class _Compiler:
    """Checks one schema and compiles it into nodes."""

    def __init__(self, root: dict[str, Any], tool: str) -> None:
        self.root = root
        self.tool = tool
        self.nodes: dict[int, Node] = {}
        self.unenforced: list[Unenforced] = []
        declared = root.get("$schema")
        self.old_draft = isinstance(declared, str) and any(d in declared for d in _OLD_DRAFTS)
        self.ids: dict[str, tuple[Any, str]] = {}
        self.anchors: dict[str, tuple[Any, str]] = {}
        root_id = root.get("$id")
        self.base = root_id.rstrip("#") if isinstance(root_id, str) else ""
        self._index(root, "#", 0)

    def invalid(self, path: str, reason: str) -> ConfigError:
        return ConfigError(f"tool {self.tool!r}: invalid JSON Schema at {path}: {reason}")

    def _index(self, schema: Any, path: str, depth: int) -> None:
        """Record each ``$id`` and ``$anchor``, which a ``$ref`` may name."""
        if not isinstance(schema, dict) or depth > MAX_NESTED_DEPTH:
            return
        found = schema.get("$id")
        if isinstance(found, str) and found.rstrip("#"):
            self.ids.setdefault(found.rstrip("#"), (schema, path))
        anchor = schema.get("$anchor")
        if isinstance(anchor, str):
            self.anchors.setdefault(anchor, (schema, path))
        for sub, sub_path in _subschemas(schema, path):
            self._index(sub, sub_path, depth + 1)

    # -- reading keyword values ----------------------------------------------------------

    def node(self, schema: Any, path: str) -> Node:
        if isinstance(schema, bool):
            return Node(schema, path)
        if not isinstance(schema, dict):
            reason = f"a schema must be an object or a boolean, not {_json_name(schema)}"
            raise self.invalid(path, reason)
        found = self.nodes.get(id(schema))
        if found is not None:
            return found
        node = Node(schema, path)
        self.nodes[id(schema)] = node  # before its subschemas: a $ref back finds it
        self._fill(node, schema, path)
        return node

    def _sub(self, schema: dict[str, Any], name: str, path: str) -> Node:
        return self.node(schema[name], pointer(path, name))

    def _list(self, schema: dict[str, Any], name: str, path: str) -> tuple[Node, ...]:
        value = schema[name]
        if not isinstance(value, list) or not value:
            raise self.invalid(pointer(path, name), f"{name!r} must be a non-empty list")
        return tuple(self.node(item, pointer(path, name, i)) for i, item in enumerate(value))

    def _map(self, schema: dict[str, Any], name: str, path: str) -> dict[str, Node]:
        value = schema[name]
        if not isinstance(value, dict):
            raise self.invalid(pointer(path, name), f"{name!r} must be an object")
        return {key: self.node(item, pointer(path, name, key)) for key, item in value.items()}

    def _count(self, schema: dict[str, Any], name: str, path: str) -> int:
        value = schema[name]
        if _is_number(value) and float(value).is_integer() and value >= 0:
            return int(value)
        raise self.invalid(pointer(path, name), f"{name!r} must be a non-negative integer")

    def _number(self, schema: dict[str, Any], name: str, path: str) -> int | float:
        value = schema[name]
        if not _is_number(value) or (isinstance(value, float) and not math.isfinite(value)):
            raise self.invalid(pointer(path, name), f"{name!r} must be a number")
        return typing.cast(int | float, value)

    def _names(self, value: Any, path: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.invalid(path, "must be a list of strings")
        return tuple(value)

    def _not_enforced(self, name: str, path: str, reason: str) -> None:
        self.unenforced.append(Unenforced(name, pointer(path, name), reason))

    # -- filling a node ------------------------------------------------------------------

    def _fill(self, node: Node, schema: dict[str, Any], path: str) -> None:
        if isinstance(schema.get("description"), str):
            node.description = schema["description"]
        if "$ref" in schema:
            ref = schema["$ref"]
            if not isinstance(ref, str):
                raise self.invalid(pointer(path, "$ref"), "'$ref' must be a string")
            node.ref = self.resolve(ref, pointer(path, "$ref"))
            if self.old_draft:  # before 2019-09, the keywords beside a $ref are ignored
                return
        self._fill_generic(node, schema, path)
        self._fill_numbers(node, schema, path)
        self._fill_strings(node, schema, path)
        self._fill_arrays(node, schema, path)
        self._fill_objects(node, schema, path)
        self._fill_applicators(node, schema, path)
        for name in ("$defs", "definitions"):
            if name in schema:  # compiled now, so that an error in them shows now
                self._map(schema, name, path)
        if "unevaluatedProperties" in schema:
            node.unevaluated_properties = self._sub(schema, "unevaluatedProperties", path)
        if "unevaluatedItems" in schema:
            node.unevaluated_items = self._sub(schema, "unevaluatedItems", path)
        for name, reason in UNENFORCED_KEYWORDS.items():
            if name in schema:
                if not isinstance(schema[name], str):
                    raise self.invalid(pointer(path, name), f"{name!r} must be a string")
                self._not_enforced(name, path, reason)

    def _fill_generic(self, node: Node, schema: dict[str, Any], path: str) -> None:
        if "type" in schema:
            declared = schema["type"]
            listed = [declared] if isinstance(declared, str) else declared
            if (
                not isinstance(listed, list)
                or not listed
                or any(item not in JSON_TYPES for item in listed)
                or len(set(listed)) != len(listed)
            ):
                raise self.invalid(
                    pointer(path, "type"),
                    f"'type' must be one of {', '.join(JSON_TYPES)} or a list of them, "
                    f"not {_show(declared)}",
                )
            types = list(listed)
            if schema.get("nullable") is True and "null" not in types:
                types.append("null")  # OpenAPI 3.0's nullable: null besides the type
            node.types = tuple(types)
            node.type_set = frozenset(types)
        if "nullable" in schema and not isinstance(schema["nullable"], bool):
            raise self.invalid(pointer(path, "nullable"), "'nullable' must be a boolean")
        if "enum" in schema:
            values = schema["enum"]
            if not isinstance(values, list):
                reason = f"'enum' must be a list, not {_json_name(values)}"
                raise self.invalid(pointer(path, "enum"), reason)
            node.enum_values = tuple(values)
            node.enum = frozenset(_canonical(value) for value in values)
        if "const" in schema:
            node.const = schema["const"]

    def _fill_numbers(self, node: Node, schema: dict[str, Any], path: str) -> None:
        for name, flag_name in (("minimum", "exclusiveMinimum"), ("maximum", "exclusiveMaximum")):
            if name in schema:
                bound = (self._number(schema, name, path), schema.get(flag_name) is True)
                if name == "minimum":
                    node.minimum = bound
                else:
                    node.maximum = bound
            if flag_name in schema and not isinstance(schema[flag_name], bool):
                if flag_name == "exclusiveMinimum":
                    node.exclusive_minimum = self._number(schema, flag_name, path)
                else:
                    node.exclusive_maximum = self._number(schema, flag_name, path)
        if "multipleOf" in schema:
            divisor = self._number(schema, "multipleOf", path)
            if divisor <= 0:
                raise self.invalid(pointer(path, "multipleOf"), "'multipleOf' must be above 0")
            node.multiple_of = _decimal(divisor)

    def _fill_strings(self, node: Node, schema: dict[str, Any], path: str) -> None:
        if "minLength" in schema:
            node.min_length = self._count(schema, "minLength", path)
        if "maxLength" in schema:
            node.max_length = self._count(schema, "maxLength", path)
        if "pattern" in schema:
            pattern = schema["pattern"]
            if not isinstance(pattern, str):
                raise self.invalid(pointer(path, "pattern"), "'pattern' must be a string")
            try:
                node.pattern = (pattern, compile_pattern(pattern))
            except PatternError as exc:
                self._not_enforced("pattern", path, f"not enforced ({exc}): any string matches")

    def _fill_arrays(self, node: Node, schema: dict[str, Any], path: str) -> None:
        if "prefixItems" in schema:
            node.prefix = self._list(schema, "prefixItems", path)
        items = schema.get("items")
        if isinstance(items, list):  # draft-07: one schema per item, then additionalItems
            where = pointer(path, "items")
            node.prefix = tuple(self.node(s, pointer(where, i)) for i, s in enumerate(items))
            if "additionalItems" in schema:
                node.items = self._sub(schema, "additionalItems", path)
        elif "items" in schema:
            node.items = self._sub(schema, "items", path)
        if "contains" in schema:
            node.contains = self._sub(schema, "contains", path)
            if "minContains" in schema:
                node.min_contains = self._count(schema, "minContains", path)
            if "maxContains" in schema:
                node.max_contains = self._count(schema, "maxContains", path)
        if "minItems" in schema:
            node.min_items = self._count(schema, "minItems", path)
        if "maxItems" in schema:
            node.max_items = self._count(schema, "maxItems", path)
        if "uniqueItems" in schema:
            if not isinstance(schema["uniqueItems"], bool):
                raise self.invalid(pointer(path, "uniqueItems"), "'uniqueItems' must be a boolean")
            node.unique_items = schema["uniqueItems"]

    def _fill_objects(self, node: Node, schema: dict[str, Any], path: str) -> None:
        if "properties" in schema:
            node.properties = self._map(schema, "properties", path)
        if "patternProperties" in schema:
            for key, child in self._map(schema, "patternProperties", path).items():
                node.pattern_properties.append((self._key_pattern(key, path), child))
        if "additionalProperties" in schema:
            node.additional = self._sub(schema, "additionalProperties", path)
        if "required" in schema:
            node.required = self._names(schema["required"], pointer(path, "required"))
        for name in ("dependentRequired", "dependencies"):
            if name not in schema:
                continue
            value, where = schema[name], pointer(path, name)
            if not isinstance(value, dict):
                raise self.invalid(where, f"{name!r} must be an object")
            for key, item in value.items():
                if name == "dependentRequired" or isinstance(item, list):
                    node.dependent_required[key] = self._names(item, pointer(where, key))
                else:  # draft-07 dependencies: a schema
                    node.dependent_schemas[key] = self.node(item, pointer(where, key))
        if "dependentSchemas" in schema:
            node.dependent_schemas.update(self._map(schema, "dependentSchemas", path))
        if "propertyNames" in schema:
            node.property_names = self._sub(schema, "propertyNames", path)
        if "minProperties" in schema:
            node.min_properties = self._count(schema, "minProperties", path)
        if "maxProperties" in schema:
            node.max_properties = self._count(schema, "maxProperties", path)

    def _key_pattern(self, key: str, path: str) -> re.Pattern[str] | None:
        try:
            return compile_pattern(key)
        except PatternError as exc:
            reason = (
                f"not enforced ({exc}): the keys it would match are not checked, and "
                "additionalProperties beside it does not apply"
            )
            where = pointer(path, "patternProperties", key)
            self.unenforced.append(Unenforced("patternProperties", where, reason))
            return None

    def _fill_applicators(self, node: Node, schema: dict[str, Any], path: str) -> None:
        if "allOf" in schema:
            node.all_of = self._list(schema, "allOf", path)
        if "anyOf" in schema:
            node.any_of = self._list(schema, "anyOf", path)
        if "oneOf" in schema:
            node.one_of = self._list(schema, "oneOf", path)
        if "not" in schema:
            node.not_ = self._sub(schema, "not", path)
        if "if" in schema:
            node.if_ = self._sub(schema, "if", path)
        if "then" in schema:
            node.then = self._sub(schema, "then", path)
        if "else" in schema:
            node.else_ = self._sub(schema, "else", path)
        if node.if_ is None:  # then and else mean nothing without if
            node.then = node.else_ = None

    # -- references ----------------------------------------------------------------------

    def resolve(self, ref: str, path: str) -> Node:
        """The node a ``$ref`` names: a JSON pointer, an anchor, or a ``$id``."""
        base, _, fragment = ref.partition("#")
        if base and base != self.base:
            found = self.ids.get(base)
            if found is None:
                reason = (
                    f"cannot resolve $ref {ref!r}: only references inside the schema are followed"
                )
                raise self.invalid(path, reason)
            document, document_path = found
        else:
            document, document_path = self.root, "#"
        fragment = unquote(fragment)  # a URI fragment: %25 is %
        if not fragment:
            return self.node(document, document_path)
        if not fragment.startswith("/"):
            anchored = self.anchors.get(fragment)
            if anchored is None:
                raise self.invalid(path, f"$ref {ref!r} names no $anchor of the schema")
            return self.node(*anchored)
        target: Any = document
        for token in fragment[1:].split("/"):
            token = token.replace("~1", "/").replace("~0", "~")
            if isinstance(target, dict) and token in target:
                target = target[token]
            elif isinstance(target, list) and token.isdigit() and int(token) < len(target):
                target = target[int(token)]
            else:
                raise self.invalid(path, f"$ref {ref!r} points to nothing")
        return self.node(target, document_path + fragment)

    def check_loops(self) -> None:
        """Refuse a loop of subschemas applied to one value: checking it would never end."""
        state: dict[int, bool] = {}  # False: being visited; True: done

        def visit(node: Node) -> None:
            done = state.get(id(node))
            if done:
                return
            if done is False:
                raise self.invalid(
                    node.path,
                    "it applies itself to the same value without end (a loop of $ref, "
                    "allOf, anyOf, oneOf, not or if)",
                )
            state[id(node)] = False
            for child in node.in_place():
                visit(child)
            state[id(node)] = True

        for node in list(self.nodes.values()):
            visit(node)


def _json_name(value: Any) -> str:
    kind = json_type(value)
    if kind is None:
        return type(value).__name__
    return "a number" if kind == "integer" else _TYPE_WORDS[kind]


def compile_schema(schema: dict[str, Any], tool: str) -> tuple[Node, tuple[Unenforced, ...]]:
    """Check a schema and compile it.

    Args:
        schema: a JSON Schema object (not copied: do not change it afterwards).
        tool: the tool's name, for error messages.

    Returns:
        The root node, and what it does not enforce.

    Raises:
        ConfigError: the schema is not valid JSON Schema; the message names the tool and
            the place.
    """
    compiler = _Compiler(schema, tool)
    try:
        root = compiler.node(schema, "#")
        compiler.check_loops()
    except RecursionError:
        raise ConfigError(f"tool {tool!r}: the JSON Schema is nested too deeply") from None
    return root, tuple(compiler.unenforced)


def validate(root: Node, data: Any, title: str) -> Any:
    """Check a value, converting text where the schema wants something else.

    Args:
        root: the schema.
        data: the value.
        title: the title of the ``ValidationError`` (the model's name).

    Returns:
        ``data`` itself if it is valid, else the converted value, which is valid.

    Raises:
        pydantic.ValidationError: the value is invalid, converted or not; the errors are
            those of the converted value.
    """
    errors: list[_Error] = []
    try:
        root.check(data, (), errors)
        if not errors:
            return data
        converted = convert(root, data)
        errors.clear()
        root.check(converted, (), errors)
    except RecursionError:  # a value nested deeper than Python can follow
        errors = [_error("too_deep", (), data)]
    else:
        if not errors:
            return converted
    raise ValidationError.from_exception_data(title, errors)  # type: ignore[arg-type]


# --- text -> values, by the schema ---------------------------------------------------------

# What governs a value: a node, or nodes that must all hold ("all": the allOf branches,
# the schema's properties and patternProperties) or of which one will ("any": anyOf and
# oneOf branches, then / else).
_Group = tuple[str, tuple[Union[Node, "_Group"], ...]]


def node_types(node: Node) -> tuple[str, ...] | None:
    """The types a value valid at ``node`` can have, in the schema's order (None: any)."""
    if node.boolean is not None:
        return None if node.boolean else ()
    found = node.types
    if node.enum is not None:
        found = _meet(found, _join((_value_type(value),) for value in node.enum_values))
    if node.const is not NO_VALUE:
        found = _meet(found, (_value_type(node.const),))
    for sub in (node.ref, *node.all_of):
        if sub is not None:
            found = _meet(found, node_types(sub))
    for branches in (node.any_of, node.one_of):
        if branches:
            found = _meet(found, _join(node_types(branch) for branch in branches))
    return found


def _value_type(value: Any) -> str:
    return json_type(value) or "string"


def _meet(first: tuple[str, ...] | None, second: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The types both allow (None: any); an integer is a number."""
    if first is None:
        return second
    if second is None:
        return first
    both = [kind for kind in first if kind in second or (kind == "integer" and "number" in second)]
    if "number" in first and "integer" in second and "integer" not in both:
        both.append("integer")
    return tuple(both)


def _join(options: Iterable[tuple[str, ...] | None]) -> tuple[str, ...] | None:
    """The types either allows (None: any)."""
    joined: list[str] = []
    for option in options:
        if option is None:
            return None
        joined.extend(kind for kind in option if kind not in joined)
    return tuple(joined)


def _group_valid(group: Node | _Group, value: Any) -> bool:
    if isinstance(group, Node):
        return group.valid(value)
    kind, members = group
    test = all if kind == "all" else any
    return test(_group_valid(member, value) for member in members)


def _group_types(group: Node | _Group) -> tuple[str, ...] | None:
    if isinstance(group, Node):
        return node_types(group)
    kind, members = group
    if kind == "any":
        return _join(_group_types(member) for member in members)
    found: tuple[str, ...] | None = None
    for member in members:
        found = _meet(found, _group_types(member))
    return found


def _child(group: Node | _Group, key: str | None, index: int) -> Node | _Group | None:
    """What governs the value under ``key`` of an object, or at ``index`` of an array."""
    if not isinstance(group, Node):
        kind, members = group
        found = [child for member in members if (child := _child(member, key, index))]
        return (kind, tuple(found)) if found else None
    node = group
    if node.boolean is not None:
        return None
    parts: list[Node | _Group] = []
    if key is not None:
        direct = node.properties.get(key)
        if direct is not None:
            parts.append(direct)
        patterned = [sub for regex, sub in node.pattern_properties if regex and regex.search(key)]
        parts.extend(patterned)
        if direct is None and not patterned:
            rest = node.additional or node.unevaluated_properties
            if rest is not None:
                parts.append(rest)
    else:
        item = node.prefix[index] if index < len(node.prefix) else node.items
        item = item or node.unevaluated_items
        if item is not None:
            parts.append(item)
    for sub in (node.ref, *node.all_of):
        if sub is not None and (governs := _child(sub, key, index)) is not None:
            parts.append(governs)
    for branches in (node.any_of, node.one_of, (node.then, node.else_)):
        options = [
            governs for branch in branches if branch and (governs := _child(branch, key, index))
        ]
        if options:
            parts.append(("any", tuple(options)))
    return ("all", tuple(parts)) if parts else None


def _from_text(text: str, types: tuple[str, ...] | None) -> list[Any]:
    """The values a text may stand for, by the types allowed there, in their order."""
    stripped = text.strip()
    lowered = stripped.lower()
    found: list[Any] = []
    for kind in types if types is not None else _ANY_ORDER:
        if kind == "null" and lowered in NULL_TOKENS:
            found.append(None)
        elif kind == "boolean" and (lowered in TRUE_TOKENS or lowered in FALSE_TOKENS):
            found.append(lowered in TRUE_TOKENS)
        elif kind in ("integer", "number"):
            number = _number_text(stripped, whole=kind == "integer")
            if number is not None:
                found.append(number)
        elif kind in ("object", "array") and stripped.startswith("{" if kind == "object" else "["):
            try:
                decoded = json.loads(stripped)
            except (ValueError, RecursionError):
                continue
            if isinstance(decoded, dict if kind == "object" else list):
                found.append(decoded)
    return found


def _number_text(text: str, *, whole: bool) -> int | float | None:
    """The number a text writes (digits, a decimal point, an exponent), or None."""
    try:
        if _INT_TEXT.fullmatch(text):
            return int(text)
        if _NUMBER_TEXT.fullmatch(text):
            number = float(text)
            if math.isfinite(number) and number.is_integer():
                return int(number)
            return number if math.isfinite(number) and not whole else None
    except ValueError:  # more digits than int() takes
        return None
    return None


def convert(root: Node, value: Any) -> Any:
    """Propose a version of ``value`` in which text stands for what the schema wants.

    A part that is valid as it is stays as it is (a string the schema takes stays a
    string).  Text elsewhere becomes the first value it stands for (by the types the
    schema allows there, in its order) that makes its part valid; objects and arrays are
    converted entry by entry.  The caller checks the result: this only proposes.

    Args:
        root: the schema.
        value: the value.

    Returns:
        The proposed value (``value`` itself when nothing was converted).
    """
    return _convert(root, value, 0)


def _convert(group: Node | _Group | None, value: Any, depth: int) -> Any:
    if group is None or depth > MAX_NESTED_DEPTH or _group_valid(group, value):
        return value
    if isinstance(value, str):
        for candidate in _from_text(value, _group_types(group)):
            if isinstance(candidate, (dict, list)):
                candidate = _convert(group, candidate, depth + 1)
            if _group_valid(group, candidate):
                return candidate
        return value
    if isinstance(value, dict):
        return {
            key: _convert(_child(group, key, 0), item, depth + 1) if isinstance(key, str) else item
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_convert(_child(group, None, i), item, depth + 1) for i, item in enumerate(value)]
    return value
