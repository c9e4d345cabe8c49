"""Type descriptions for prompts: what a value of an annotation looks like.

A model told "return a ``list[Person]``" does better when it also sees what a ``Person``
is.  This module turns any annotation into text a prompt can carry:

* :func:`type_name` -- a compact name: ``list[Person]``, ``int | None``,
  ``Literal["a", "b"]``.
* :func:`describe_type` -- the name plus an expansion of every named type it reaches:
  Pydantic models, dataclasses and TypedDicts with their fields (type, required or
  default, description), enums with their values, and the multimodal types.
* :func:`describe_parameters` -- the fields of one model as a parameter list (what a
  tool's or a function's prompt shows), followed by the same expansions.
* :func:`describe_type_json` -- a JSON-shaped description: an object whose keys are the
  fields and whose leaves say type and meaning.
* :func:`example_value` -- a generated example value (JSON-compatible), using the
  fields' ``examples`` and defaults where there are any.
* :func:`type_prompt` -- the block a typed-return prompt uses: the readable description
  for simple types, JSON description plus example for structured ones.

Field descriptions come from ``Field(description=...)`` or, failing that, from the
``Attributes:`` section of the class docstring (Google, NumPy or reST style).  Recursive
models are expanded once.  Any annotation is accepted; what this module does not know is
shown by its name.  ``NewType`` and type aliases are described as the type they stand
for (:func:`~stream_parser.schema.classify.classify` looks through them).
"""

from __future__ import annotations

import collections.abc as cabc
import dataclasses
import datetime as dt
import decimal
import enum
import functools
import inspect
import json
import types
import typing
import uuid
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import docstring_parser
import typing_extensions
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined, to_jsonable_python

from .classify import CONTAINER_KINDS, STRUCTURED_KINDS, Kind, classify
from .multimodal import ImgPath, ImgUrl, Text

__all__ = [
    "MISSING",
    "FieldDoc",
    "describe_parameters",
    "describe_type",
    "describe_type_json",
    "example_value",
    "field_docs",
    "is_complex_type",
    "is_structured_type",
    "type_name",
    "type_prompt",
]


class _Missing(enum.Enum):
    MISSING = "MISSING"

    def __repr__(self) -> str:
        return "MISSING"


MISSING = _Missing.MISSING
"""Sentinel for :attr:`FieldDoc.default` when a field has no plain default value."""


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FieldDoc:
    """One field of a model, dataclass or TypedDict, as a prompt describes it.

    Attributes:
        name: the key a value must use (the field's alias if it has one).
        annotation: the field's type.
        required: whether the key must be present.
        default: the default value, or :data:`MISSING` (required, or a default factory).
        description: the field's description, or ``""``.
        examples: example values from ``Field(examples=...)``.
    """

    name: str
    annotation: Any
    required: bool
    default: Any = MISSING
    description: str = ""
    examples: tuple[Any, ...] = ()


# --- classification ----------------------------------------------------------------------

_UNION_ORIGINS: tuple[Any, ...] = (Union, types.UnionType)
_SEQUENCE_ORIGINS: frozenset[Any] = frozenset(
    {
        list,
        set,
        frozenset,
        typing.List,  # noqa: UP006
        typing.Set,  # noqa: UP006
        cabc.Sequence,
        cabc.MutableSequence,
        cabc.Set,
        cabc.MutableSet,
        cabc.Iterable,
        cabc.Collection,
    }
)
_MAPPING_ORIGINS: frozenset[Any] = frozenset(
    {
        dict,
        typing.Dict,  # noqa: UP006
        cabc.Mapping,
        cabc.MutableMapping,
    }
)
_MULTIMODAL_NOTES: dict[Any, str] = {
    Text: "plain text (a string)",
    ImgUrl: "an image URL (a string: http://, https:// or data:image/...)",
    ImgPath: "the path of a local image file (a string)",
}
# TypedDict qualifiers: classify looks through them; field_docs reads what they say.
_TYPED_DICT_WRAPPERS: tuple[Any, ...] = (
    typing_extensions.Required,
    typing_extensions.NotRequired,
    typing_extensions.ReadOnly,
)


def _strip(annotation: Any) -> Any:
    """The annotation without ``Annotated``, ``NewType``, alias or qualifier wrappers."""
    return classify(annotation).tp


def _kind(annotation: Any) -> Kind:
    return classify(annotation).kind


def is_structured_type(annotation: Any) -> bool:
    """Tell whether an annotation is a class with fields (model, dataclass, TypedDict).

    Args:
        annotation: a type annotation (``Annotated`` is looked through).

    Returns:
        True for Pydantic models, dataclasses and TypedDicts.
    """
    return _kind(annotation) in STRUCTURED_KINDS


def _union_args(tp: Any) -> tuple[Any, ...] | None:
    info = classify(tp)
    return info.args if info.kind is Kind.UNION else None


def is_complex_type(annotation: Any) -> bool:
    """Tell whether a value of this type is best shown as JSON with an example.

    Args:
        annotation: a type annotation.

    Returns:
        True for models, dataclasses, TypedDicts, lists, tuples, sets and dicts, and for
        unions that contain one of them; False for scalars, enums, literals and the
        multimodal types.
    """
    info = classify(annotation)
    if info.kind in STRUCTURED_KINDS or info.kind in CONTAINER_KINDS:
        return True
    return info.kind is Kind.UNION and any(is_complex_type(arg) for arg in info.args)


# --- fields ------------------------------------------------------------------------------


class _Undocumented(enum.Enum):
    # No docstring on purpose: its __doc__ is what this Python's enum machinery gives an
    # enum written without one ("An enumeration." on 3.10, None from 3.11 on).
    pass


_DEFAULT_ENUM_DOC = _Undocumented.__doc__


def _class_docstring(cls: type) -> str:
    """The docstring ``cls`` was written with, or ``""``.

    Inherited docstrings do not count, nor the one Python 3.10 gives every enum written
    without a docstring ("An enumeration."): it says nothing about the values and would
    reach the model as their description.
    """
    doc = cls.__dict__.get("__doc__")
    if not isinstance(doc, str) or not doc.strip():
        return ""
    if issubclass(cls, enum.Enum) and doc == _DEFAULT_ENUM_DOC:
        return ""
    return doc


@functools.lru_cache(maxsize=512)
def _docstring_attributes(cls: type) -> dict[str, str]:
    """Field descriptions from the ``Attributes`` section of a class docstring."""
    doc = _class_docstring(cls)
    if not doc:
        return {}
    try:
        parsed = docstring_parser.parse(inspect.cleandoc(doc))
    except docstring_parser.ParseError:
        return {}
    found = {p.arg_name: p.description or "" for p in parsed.params if p.arg_name}
    for meta in parsed.meta:  # reST ``:ivar name:`` / ``:var type name:`` fields
        if len(meta.args) >= 2 and meta.args[0] in _REST_ATTRIBUTE_KEYS:
            found.setdefault(meta.args[-1], meta.description or "")
    return found


_REST_ATTRIBUTE_KEYS = frozenset({"ivar", "var", "cvar", "attribute"})


def _class_summary(cls: type) -> str:
    """The description part of a class docstring (without its sections)."""
    doc = _class_docstring(cls)
    if not doc:
        return ""
    try:
        parsed = docstring_parser.parse(inspect.cleandoc(doc))
    except docstring_parser.ParseError:
        return inspect.cleandoc(doc)
    parts = [part for part in (parsed.short_description, parsed.long_description) if part]
    return "\n".join(parts)


def _metadata_field_info(annotation: Any) -> FieldInfo | None:
    if get_origin(annotation) is Annotated:
        for meta in get_args(annotation)[1:]:
            if isinstance(meta, FieldInfo):
                return meta
    return None


def _type_hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception:  # unresolvable forward references: fall back to the raw strings
        return dict(getattr(cls, "__annotations__", {}))


def field_docs(annotation: Any) -> list[FieldDoc]:
    """List the fields of a Pydantic model, dataclass or TypedDict.

    Args:
        annotation: the class (``Annotated`` is looked through).

    Returns:
        The fields in declaration order; ``[]`` for any other type.
    """
    info = classify(annotation)
    if info.kind in (Kind.MODEL, Kind.ROOT):
        return _model_fields(info.tp)
    if info.kind is Kind.DATACLASS:
        return _dataclass_fields(info.tp)
    if info.kind is Kind.TYPEDDICT:
        return _typeddict_fields(info.tp)
    return []


def _model_fields(model: type[BaseModel]) -> list[FieldDoc]:
    attrs = _docstring_attributes(model)
    docs = []
    for name, info in model.model_fields.items():
        key = info.alias or name
        default = info.default if info.default is not PydanticUndefined else MISSING
        docs.append(
            FieldDoc(
                name=key,
                annotation=info.annotation,
                required=info.is_required(),
                default=MISSING if info.is_required() else default,
                description=info.description or attrs.get(name, ""),
                examples=tuple(info.examples or ()),
            )
        )
    return docs


def _dataclass_fields(cls: type) -> list[FieldDoc]:
    attrs = _docstring_attributes(cls)
    hints = _type_hints(cls)
    docs = []
    for field in dataclasses.fields(cls):
        annotation = hints.get(field.name, field.type)
        info = _metadata_field_info(annotation)
        default: Any = MISSING
        if isinstance(field.default, FieldInfo):
            info = field.default
            default = MISSING if field.default.default is PydanticUndefined else info.default
        elif field.default is not dataclasses.MISSING:
            default = field.default
        required = (
            default is MISSING
            and field.default_factory is dataclasses.MISSING
            and (info is None or info.is_required())
        )
        docs.append(
            FieldDoc(
                name=field.name,
                annotation=_strip(annotation),
                required=required,
                default=default,
                description=(info.description if info else None) or attrs.get(field.name, ""),
                examples=tuple((info.examples if info else None) or ()),
            )
        )
    return docs


def _typeddict_fields(cls: type) -> list[FieldDoc]:
    attrs = _docstring_attributes(cls)
    hints = _type_hints(cls)
    required_keys: frozenset[str] = getattr(cls, "__required_keys__", frozenset(hints))
    docs = []
    for name, annotation in hints.items():
        info = _metadata_field_info(_strip_typeddict_wrapper(annotation))
        # With string annotations the class cannot see NotRequired[...] when it is
        # created, so __required_keys__ may be wrong; the resolved hint is not.
        wrapper = get_origin(annotation)
        if wrapper is typing_extensions.NotRequired:
            required = False
        elif wrapper is typing_extensions.Required:
            required = True
        else:
            required = name in required_keys
        docs.append(
            FieldDoc(
                name=name,
                annotation=_strip(annotation),
                required=required,
                description=(info.description if info else None) or attrs.get(name, ""),
                examples=tuple((info.examples if info else None) or ()),
            )
        )
    return docs


def _strip_typeddict_wrapper(annotation: Any) -> Any:
    while get_origin(annotation) in _TYPED_DICT_WRAPPERS:
        annotation = get_args(annotation)[0]
    return annotation


# --- names -------------------------------------------------------------------------------


def _literal_text(value: Any) -> str:
    if isinstance(value, enum.Enum):
        value = value.value
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def _default_text(value: Any) -> str:
    try:
        return json.dumps(to_jsonable_python(value), ensure_ascii=False)
    except Exception:
        return repr(value)


def type_name(annotation: Any) -> str:
    """Return a compact, Python-like name for an annotation.

    Args:
        annotation: any type annotation.

    Returns:
        E.g. ``"str"``, ``"list[Person]"``, ``"dict[str, int]"``, ``"int | None"``,
        ``'Literal["a", "b"]'``, ``"tuple[int, ...]"``.
    """
    tp = _strip(annotation)
    if tp is None or tp is type(None):
        return "None"
    if tp is Any:
        return "Any"
    if isinstance(tp, str):
        return tp
    if isinstance(tp, typing.ForwardRef):
        return tp.__forward_arg__
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is Literal:
        return "Literal[" + ", ".join(_literal_text(arg) for arg in args) + "]"
    if origin in _UNION_ORIGINS:
        return " | ".join(type_name(arg) for arg in args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return f"tuple[{type_name(args[0])}, ...]"
        return "tuple[" + ", ".join(type_name(arg) for arg in args) + "]"
    if origin in _SEQUENCE_ORIGINS:
        container = origin.__name__ if origin in (set, frozenset) else "list"
        return f"{container}[{type_name(args[0])}]" if args else container
    if origin in _MAPPING_ORIGINS:
        if len(args) == 2:
            return f"dict[{type_name(args[0])}, {type_name(args[1])}]"
        return "dict"
    if origin is not None:
        inner = ", ".join(type_name(arg) for arg in args)
        return f"{getattr(origin, '__name__', repr(origin))}[{inner}]"
    if isinstance(tp, type):
        return tp.__name__
    return getattr(tp, "__name__", repr(tp))


# --- readable description ----------------------------------------------------------------


def _is_named(tp: Any) -> bool:
    """Types that get an expansion block of their own."""
    return is_structured_type(tp) or _kind(tp) is Kind.ENUM or tp in _MULTIMODAL_NOTES


def _referenced(annotation: Any, found: dict[Any, None], *, include_self: bool = True) -> None:
    """Collect, depth-first and once each, the named types reachable from an annotation."""
    tp = _strip(annotation)
    if get_origin(tp) is Literal:
        return
    if _is_named(tp):
        if tp in found:
            return
        if include_self:
            found[tp] = None
        for field in field_docs(tp):
            _referenced(field.annotation, found)
        return
    for arg in get_args(tp):
        if arg is not Ellipsis:
            _referenced(arg, found)


def _field_status(field: FieldDoc) -> str:
    if field.required:
        return "required"
    if field.default is MISSING:
        return "optional"
    return f"optional, default: {_default_text(field.default)}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _field_line(field: FieldDoc, indent: str) -> str:
    line = f"{indent}- {field.name} ({type_name(field.annotation)}, {_field_status(field)})"
    if field.description:
        line += ": " + _one_line(field.description)
    return line


def _expansion(tp: Any) -> str:
    if tp in _MULTIMODAL_NOTES:
        return f"{tp.__name__}: {_MULTIMODAL_NOTES[tp]}"
    if _kind(tp) is Kind.ENUM:
        values = ", ".join(_literal_text(member.value) for member in tp)
        summary = _class_summary(tp)
        head = f"{tp.__name__}: {summary} " if summary else f"{tp.__name__}: "
        return f"{head}one of {values}"
    summary = _class_summary(tp)
    head = f"{tp.__name__}: {' '.join(summary.split())}" if summary else f"{tp.__name__}:"
    fields = field_docs(tp)
    if not fields:
        return f"{head}\n  (no fields)"
    return "\n".join([head, *(_field_line(field, "  ") for field in fields)])


def describe_type(annotation: Any) -> str:
    """Describe an annotation in readable text, expanding the named types it uses.

    Args:
        annotation: any type annotation.

    Returns:
        The type's name, then a block for each model, dataclass, TypedDict, enum and
        multimodal type it reaches (each once, in order of first use), separated by blank
        lines.  A named type on its own starts directly with its block.  For example::

            list[Person]

            Person: A person.
              - name (str, required): Full name.
              - address (Address | None, optional, default: null)

            Address:
              - city (str, required)
    """
    found: dict[Any, None] = {}
    _referenced(annotation, found)
    blocks = [_expansion(tp) for tp in found]
    if _is_named(_strip(annotation)):
        return "\n\n".join(blocks)
    return "\n\n".join([type_name(annotation), *blocks])


def describe_parameters(model: Any, *, names: Mapping[str, str] | None = None) -> str:
    """Describe the fields of a model (or dataclass, TypedDict) as a parameter list.

    Args:
        model: the class whose fields are the parameters, e.g. a tool's ``args_model``.
        names: the label of a parameter by its key (alias or field name), where the
            prompt must show another one (an XML prompt shows a tag the parser reads).

    Returns:
        One ``- name (type, required): description`` line per field (``(none)`` if there
        are none), then a blank line and the expansion of every other named type the
        fields use.
    """
    fields = field_docs(model)
    if names:
        fields = [dataclasses.replace(f, name=names.get(f.name, f.name)) for f in fields]
    lines = [_field_line(field, "") for field in fields] or ["(none)"]
    found: dict[Any, None] = {}
    _referenced(model, found, include_self=False)
    found.pop(_strip(model), None)
    blocks = ["\n".join(lines), *(_expansion(tp) for tp in found)]
    return "\n\n".join(blocks)


# --- JSON description --------------------------------------------------------------------


def _leaf_text(annotation: Any) -> str:
    tp = _strip(annotation)
    if _kind(tp) is Kind.ENUM:
        return f"{tp.__name__} (one of " + ", ".join(_literal_text(m.value) for m in tp) + ")"
    if tp in _MULTIMODAL_NOTES:
        return f"{tp.__name__}: {_MULTIMODAL_NOTES[tp]}"
    return type_name(tp)


def _json_description(annotation: Any, stack: tuple[Any, ...]) -> Any:
    tp = _strip(annotation)
    if is_structured_type(tp):
        if tp in stack:
            return f"{type_name(tp)} (same structure as above)"
        result: dict[str, Any] = {}
        for field in field_docs(tp):
            node = _json_description(field.annotation, (*stack, tp))
            if isinstance(node, str):
                node = f"{node}, {_field_status(field)}"
                if field.description:
                    node += ": " + _one_line(field.description)
            result[field.name] = node
        return result
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return [_json_description(args[0], stack)]
        return [_json_description(arg, stack) for arg in args]
    if origin in _SEQUENCE_ORIGINS and args:
        return [_json_description(args[0], stack)]
    if origin in _MAPPING_ORIGINS and len(args) == 2:
        return {f"<{type_name(args[0])}>": _json_description(args[1], stack)}
    members = _union_args(tp)
    if members is not None and any(is_complex_type(arg) for arg in members):
        present = [arg for arg in members if arg is not type(None)]
        if len(present) == 1:  # Optional[structure]: describe the structure
            return _json_description(present[0], stack)
        return {"one of": [_json_description(arg, stack) for arg in present]}
    return _leaf_text(tp)


def describe_type_json(annotation: Any) -> Any:
    """Describe an annotation as a JSON-shaped structure.

    Objects become dicts keyed by field name, lists a one-item list, dicts
    ``{"<key type>": value}``; leaves are strings with the type, whether the field is
    required (or its default) and its description, e.g.
    ``{"name": "str, required: Full name", "tags": ["str"]}``.

    Args:
        annotation: any type annotation.

    Returns:
        A JSON-serialisable value.
    """
    return _json_description(annotation, ())


# --- example values ----------------------------------------------------------------------

_SCALAR_EXAMPLES: dict[Any, Any] = {
    str: "example",
    int: 123,
    float: 1.23,
    bool: True,
    bytes: "example",
    decimal.Decimal: "1.23",
    dt.datetime: "2024-01-01T12:00:00",
    dt.date: "2024-01-01",
    dt.time: "12:00:00",
    dt.timedelta: "PT1H",
    uuid.UUID: "123e4567-e89b-12d3-a456-426614174000",
    Path: "path/to/file",
    PurePath: "path/to/file",
    Text: "example text",
    ImgUrl: "https://example.com/image.png",
    ImgPath: "images/example.png",
}


def _jsonable(value: Any) -> Any:
    try:
        return to_jsonable_python(value)
    except Exception:
        return str(value)


def _is_plain_default(value: Any) -> bool:
    """A default worth showing as the example: not missing, None or an empty container."""
    if value is MISSING or value is None:
        return False
    return not (isinstance(value, (list, dict, tuple, set, frozenset, str)) and not value)


def _example(annotation: Any, stack: tuple[Any, ...]) -> Any:
    tp = _strip(annotation)
    if tp in _SCALAR_EXAMPLES:
        return _SCALAR_EXAMPLES[tp]
    if tp is None or tp is type(None):
        return None
    if _kind(tp) is Kind.ENUM:
        first = next(iter(tp), None)
        return None if first is None else _jsonable(first.value)
    if is_structured_type(tp):
        if tp in stack:
            return {}
        result: dict[str, Any] = {}
        for field in field_docs(tp):
            if field.examples:
                result[field.name] = _jsonable(field.examples[0])
            elif _is_plain_default(field.default):
                result[field.name] = _jsonable(field.default)
            else:
                result[field.name] = _example(field.annotation, (*stack, tp))
        return result
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is Literal:
        return _jsonable(args[0]) if args else None
    members = _union_args(tp)
    if members is not None:
        present = [arg for arg in members if arg is not type(None)]
        # Prefer an alternative that does not recurse into a type being expanded.
        fresh = [arg for arg in present if _strip(arg) not in stack]
        if fresh:
            return _example(fresh[0], stack)
        return None
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return [_example(args[0], stack)]
        return [_example(arg, stack) for arg in args if arg != ()]
    if origin in _SEQUENCE_ORIGINS:
        if not args or _strip(args[0]) in stack:
            return []
        return [_example(args[0], stack)]
    if origin in _MAPPING_ORIGINS:
        if len(args) != 2:
            return {"key": "value"}
        key = _example(args[0], stack)
        key_text = key if isinstance(key, str) else json.dumps(key)
        return {key_text if args[0] is not str else "key": _example(args[1], stack)}
    if tp in (list, set, frozenset, tuple):
        return []
    if tp is dict:
        return {"key": "value"}
    if tp is Any or tp is object:
        return "example"
    return None


def example_value(annotation: Any) -> Any:
    """Generate an example value of an annotation, as JSON-compatible Python data.

    Scalars get fixed examples (``"example"``, ``123``, ``1.23``, ``True``); enums and
    literals their first value; lists one item; dicts one entry; models, dataclasses and
    TypedDicts every field, taken from the field's ``examples`` if any, else its default
    if that is a non-empty value, else generated.  Recursion stops at a type already being
    expanded (an empty list, ``None`` or ``{}``).

    Args:
        annotation: any type annotation.

    Returns:
        A value that ``json.dumps`` accepts.
    """
    return _example(annotation, ())


def type_prompt(annotation: Any) -> str:
    """Return the prompt block that tells a model what type to produce.

    Simple types (scalars, enums, literals, multimodal) get :func:`describe_type`;
    complex ones (see :func:`is_complex_type`) get the JSON description and an example::

        Type description (JSON):
        {...}

        Example JSON:
        {...}

    Args:
        annotation: the expected type.

    Returns:
        The text block.
    """
    if not is_complex_type(annotation):
        return describe_type(annotation)
    return (
        "Type description (JSON):\n"
        + json.dumps(describe_type_json(annotation), ensure_ascii=False, indent=2)
        + "\n\nExample JSON:\n"
        + json.dumps(example_value(annotation), ensure_ascii=False, indent=2)
    )
