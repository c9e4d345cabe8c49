"""String -> value of an annotated type: how tool parameters get their types.

The core hands :class:`~stream_parser.core.xml_tools.XMLToolParser` one raw string per
parameter; this module turns each string into a Python value shaped for the field's
annotation, and Pydantic then validates it.  Conversion is *best effort and total*:
:func:`coerce_value` never raises on model text.  When a string cannot be converted it
comes back unchanged, so the error the model sees is Pydantic's field-level error
("Input should be a valid integer..."), which names the field and the reason.

What is converted (rule 10 of the core's rules, ``docs/rules.md``):

* ``str`` (and ``Any``, and types this module does not know, such as ``datetime`` or
  ``Decimal``): the string as is; Pydantic's lax mode parses the unknown ones.
* ``bool``: ``true/false``, ``yes/no``, ``on/off``, ``1/0``, case-insensitive.
* ``int`` (an optional sign and ASCII digits) and ``float`` (anything ``float()`` reads).
* ``Enum``: by value (``"1"`` finds the member whose value is ``1``), then by name, then
  case-insensitively when that is unambiguous.
* ``Literal``: the literal whose text matches.
* ``Optional`` / ``Union``: ``null`` / ``None`` (any case) and the empty string become
  ``None`` when the union allows ``None`` and has no ``str`` member; otherwise the
  members are tried in order and the first one that converts wins (``int | str`` reads
  ``"42"`` as ``42``; ``str | int`` keeps ``"42"``).
* ``list`` / ``tuple`` / ``set`` / ``dict`` / nested ``BaseModel`` / dataclass /
  ``TypedDict`` (and ``RootModel``): from JSON when the text starts with ``[`` or ``{``,
  else from nested XML elements -- ``<item>a</item><item>b</item>`` for a list (any tag
  name), ``<a>1</a><b>2</b>`` for a dict or model -- recursively.
* ``Annotated[...]``, ``NewType``, type aliases, ``Required`` / ``NotRequired``: unwrapped
  (:func:`~stream_parser.schema.classify.classify` says what an annotation is).

Nested XML is real XML, read by lxml: the predefined entities (``&amp;``...) and
character references are decoded and ``<![CDATA[...]]>`` sections are taken verbatim;
leaf values are stripped, attributes are ignored.  (The *parameter* text itself is never
entity-decoded: that is the core's rule 1.  JSON is the way to pass nested strings that
must stay byte-exact.)  The parser is configured so that nothing outside the text is
ever read: no entity is resolved, no DTD is loaded, no network is
touched, lxml's size limits stay on, and text containing ``<!DOCTYPE`` or ``<!ENTITY``
or longer than :data:`MAX_NESTED_XML_CHARS` is not treated as XML at all.

:func:`serialize_value` is the inverse used by
:meth:`~stream_parser.core.xml_tools.XMLToolParser.reconstruct_tool_xml`.
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import re
import threading
import typing
from typing import Any, Final, NamedTuple

from lxml import etree
from pydantic import AliasChoices, BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python

from .classify import Kind as _Kind
from .classify import classify, is_json_marker

__all__ = [
    "FALSE_TOKENS",
    "MAX_NESTED_DEPTH",
    "MAX_NESTED_XML_CHARS",
    "NULL_TOKENS",
    "TRUE_TOKENS",
    "FieldEntry",
    "coerce_value",
    "field_entries",
    "fields_of",
    "serialize_value",
    "serialize_with_kind",
]

TRUE_TOKENS: Final[frozenset[str]] = frozenset({"true", "yes", "on", "1"})
"""Lower-cased strings read as ``True`` for a ``bool`` annotation."""

FALSE_TOKENS: Final[frozenset[str]] = frozenset({"false", "no", "off", "0"})
"""Lower-cased strings read as ``False`` for a ``bool`` annotation."""

NULL_TOKENS: Final[frozenset[str]] = frozenset({"null", "none", ""})
"""Lower-cased (stripped) strings read as ``None`` where ``None`` is allowed and ``str`` is not."""

MAX_NESTED_XML_CHARS: Final[int] = 1_048_576
"""Text longer than this (in characters) is never parsed as nested XML."""

MAX_NESTED_DEPTH: Final[int] = 64
"""Nesting depth (JSON or XML) past which values are left for Pydantic as they are."""

# Sentinel returned by the internal converters when a string does not fit a type.
# It never escapes this module: coerce_value turns it back into the input string.
_FAIL: Final[Any] = object()

_INT_RE: Final = re.compile(r"[+-]?[0-9]+")
_ROOT_TAG: Final = "stream_parser_fragment"
_FORBIDDEN_XML_RE: Final = re.compile(r"<!\s*(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_NONE_TYPE: Final = type(None)


# Kinds whose values are JSON arrays / objects or nested XML elements.
_LIST_KINDS: Final = frozenset({_Kind.SEQUENCE, _Kind.TUPLE})
_OBJECT_KINDS: Final = frozenset({_Kind.MAPPING, _Kind.MODEL, _Kind.TYPEDDICT, _Kind.DATACLASS})
_STRUCTURED_KINDS: Final = _LIST_KINDS | _OBJECT_KINDS
# Kinds whose values are strings to this module: Pydantic parses them (datetime, Decimal,
# ImgPath...) or leaves them (a class this library does not know).
_PASS_KINDS: Final = frozenset({_Kind.SCALAR, _Kind.MULTIMODAL, _Kind.OTHER})
# Kinds that take a string as it is (a Json[...] field decodes the text itself).
_STR_KINDS: Final = frozenset({_Kind.STR, _Kind.JSON})
_TEXT_KINDS: Final = _STR_KINDS | _PASS_KINDS | {_Kind.ANY}


class FieldEntry(NamedTuple):
    """One field of a model-like type, as nested values address it.

    Attributes:
        name: the attribute name.
        key: the key under which validation expects the value (the alias when the
            model validates by alias, else the name).
        annotation: the declared type.
    """

    name: str
    key: str
    annotation: Any


# --- public API ------------------------------------------------------------------------


def coerce_value(raw: str, annotation: Any) -> Any:
    """Convert a raw parameter string into a value for ``annotation``.

    The string is expected to be whitespace-handled already (the core's rule 6); scalar
    conversions strip it again, ``str`` keeps it verbatim.  The result is meant for
    Pydantic validation, not a final value: containers hold converted items, models
    become dicts.

    Args:
        raw: the parameter text.
        annotation: the declared type of the field (anything Pydantic accepts).

    Returns:
        The converted value, or ``raw`` itself when it does not fit ``annotation``, so
        that Pydantic reports a field-level error.  Never raises.

    Examples:
        >>> coerce_value("42", int)
        42
        >>> coerce_value("<item>a</item><item>b</item>", list[str])
        ['a', 'b']
        >>> coerce_value("abc", int)
        'abc'
    """
    try:
        result = _convert(raw, annotation, 0, False)
    except Exception:  # model text never raises
        # A user type's __eq__/__hash__ or an unforeseen annotation shape may throw;
        # falling back to the raw string lets Pydantic report the problem instead.
        return raw
    return raw if result is _FAIL else result


def serialize_value(value: Any, annotation: Any = Any) -> str:
    """Write a value as parameter text that :func:`coerce_value` reads back.

    ``str`` values are returned verbatim, ``bool`` as ``true`` / ``false``, ``None`` as
    ``null``, numbers with ``str`` / ``repr``, enum members as their value, and
    everything else (models, lists, dicts, sets, dataclasses...) as compact JSON made by
    :func:`pydantic_core.to_jsonable_python` (``by_alias=True, round_trip=True``).  A
    value whose JSON form is a string (``datetime``, ``UUID``, ``Decimal``, ``Path``...)
    is written as that string.

    Args:
        value: the value to write.
        annotation: the declared type of the field.  Not consulted at present (the
            runtime type of ``value`` decides); accepted for symmetry with
            :func:`coerce_value` and for serializers that will need it.

    Returns:
        The text, without any XML escaping (the core decodes no entities).

    Raises:
        pydantic_core.PydanticSerializationError: the value cannot be made JSON.
    """
    del annotation  # the runtime type decides; see the docstring
    return serialize_with_kind(value)[0]


def serialize_with_kind(value: Any) -> tuple[str, bool]:
    """:func:`serialize_value`, plus whether the text is a JSON array or object.

    The XML writer needs the second part: a JSON array or object is written as the
    parameter's text as it is, where any other text may need escaping.

    Example:
        >>> serialize_with_kind([1, 2])
        ('[1,2]', True)
        >>> serialize_with_kind("[1, 2]")
        ('[1, 2]', False)
    """
    if value is None:
        return "null", False
    if isinstance(value, bool):
        return ("true" if value else "false"), False
    if isinstance(value, enum.Enum):
        return serialize_with_kind(value.value)
    if isinstance(value, str):
        return value, False
    if isinstance(value, int):
        return str(value), False
    if isinstance(value, float):
        return repr(value), False
    jsonable = to_jsonable_python(value, by_alias=True, round_trip=True)
    if isinstance(jsonable, str):
        return jsonable, False
    text = json.dumps(jsonable, ensure_ascii=False, separators=(",", ":"))
    return text, isinstance(jsonable, (list, dict))


# --- annotations -----------------------------------------------------------------------


def _root_annotation(tp: Any) -> Any:
    field = tp.model_fields.get("root")
    return Any if field is None else field.annotation


def field_entries(model: type[BaseModel]) -> list[tuple[FieldEntry, list[str]]]:
    """Each field of a model with its plain-string aliases (preferred first).

    The ``key`` is what ``model_validate`` expects: the preferred alias when the model
    validates by alias (Pydantic's default), else the field name.  The XML argument
    converter builds its parameter tags from these.

    Example:
        >>> from pydantic import BaseModel, Field
        >>> class Args(BaseModel):
        ...     path: str = Field(alias="file")
        >>> field_entries(Args)
        [(FieldEntry(name='path', key='file', annotation=<class 'str'>), ['file'])]
    """
    by_alias = model.model_config.get("validate_by_alias", True)
    entries: list[tuple[FieldEntry, list[str]]] = []
    for name, info in model.model_fields.items():
        aliases = [alias for alias in _string_aliases(info) if alias != name]
        key = aliases[0] if (aliases and by_alias) else name
        entries.append((FieldEntry(name, key, _field_annotation(info)), aliases))
    return entries


def _field_annotation(info: FieldInfo) -> Any:
    """The annotation to convert a field's text by.

    A ``Json[...]`` field parses JSON text itself, so its value stays a string.
    """
    if any(is_json_marker(item) for item in info.metadata):
        return str
    return info.annotation


def _model_fields(model: type[BaseModel]) -> dict[str, FieldEntry]:
    """Map every name a model field answers to (its name and string aliases) to it."""
    table: dict[str, FieldEntry] = {}
    for entry, _ in field_entries(model):
        table[entry.name] = entry
    for entry, aliases in field_entries(model):
        for alias in aliases:
            table.setdefault(alias, entry)
    return table


def _string_aliases(info: FieldInfo) -> list[str]:
    """The plain-string aliases a field is validated under, preferred one first."""
    found: list[str] = []
    validation_alias = info.validation_alias
    if isinstance(validation_alias, str):
        found.append(validation_alias)
    elif isinstance(validation_alias, AliasChoices):
        found.extend(choice for choice in validation_alias.choices if isinstance(choice, str))
    if validation_alias is None and isinstance(info.alias, str):
        found.append(info.alias)
    return found


@functools.lru_cache(maxsize=512)
def _structured_fields(tp: Any) -> dict[str, FieldEntry]:
    """The fields of a model, TypedDict or dataclass, keyed by every accepted name."""
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return _model_fields(tp)
    try:
        hints = typing.get_type_hints(tp)
    except Exception:  # unresolvable forward references
        hints = dict(getattr(tp, "__annotations__", {}))
    if dataclasses.is_dataclass(tp):
        names = [f.name for f in dataclasses.fields(tp)]
    else:
        names = list(hints)
    return {name: FieldEntry(name, name, hints.get(name, Any)) for name in names}


def fields_of(tp: Any) -> dict[str, FieldEntry]:
    """The fields of a model, TypedDict or dataclass, keyed by every name they answer to.

    A Pydantic model's fields answer to their name and their plain-string aliases; a
    TypedDict's or a dataclass's to their name.  Streamed answers find a field by the
    tag the model wrote with this table.

    Example:
        >>> from typing import TypedDict
        >>> class Point(TypedDict):
        ...     x: int
        >>> fields_of(Point)
        {'x': FieldEntry(name='x', key='x', annotation=<class 'int'>)}
    """
    try:
        return _structured_fields(tp)
    except TypeError:  # unhashable annotation (a parametrised generic with odd args)
        return _structured_fields.__wrapped__(tp)


def _args(tp: Any) -> tuple[Any, ...]:
    return typing.get_args(tp)


# --- strings -> values -----------------------------------------------------------------


def _convert(text: str, tp: Any, depth: int, picky: bool) -> Any:
    """Convert ``text`` for ``tp``; ``_FAIL`` when it does not fit.

    ``picky`` is set while trying the members of a union: a model then only accepts
    nested elements that are all its fields, so the next member gets its chance.
    """
    info = classify(tp)
    tp, kind = info.tp, info.kind
    if kind in _TEXT_KINDS:
        return text
    stripped = text.strip()
    if kind is _Kind.BOOL:
        lowered = stripped.lower()
        if lowered in TRUE_TOKENS:
            return True
        if lowered in FALSE_TOKENS:
            return False
        return _FAIL
    if kind is _Kind.INT:
        if _INT_RE.fullmatch(stripped):
            try:
                return int(stripped)
            except ValueError:  # more digits than sys.get_int_max_str_digits()
                return _FAIL
        return _FAIL
    if kind is _Kind.FLOAT:
        try:
            return float(stripped)
        except ValueError:
            return _FAIL
    if kind is _Kind.ENUM:
        return _enum_member(stripped, tp)
    if kind is _Kind.LITERAL:
        return _literal(text, stripped, tp)
    if kind is _Kind.NONE:
        return None if stripped.lower() in NULL_TOKENS else _FAIL
    if depth >= MAX_NESTED_DEPTH:
        return _FAIL
    if kind is _Kind.UNION:
        return _union(text, stripped, tp, depth)
    if kind is _Kind.ROOT:
        return _convert(text, _root_annotation(tp), depth + 1, picky)
    # Structured: JSON first, then nested XML elements.
    if stripped.startswith(("[", "{")):
        try:
            decoded = json.loads(stripped)
        except (ValueError, RecursionError):
            return _FAIL
        if isinstance(decoded, list) and kind in _LIST_KINDS:
            return _adjust_json(decoded, tp, depth + 1)
        if isinstance(decoded, dict) and kind in _OBJECT_KINDS:
            return _adjust_json(decoded, tp, depth + 1)
        return _FAIL
    if stripped.startswith("<"):
        root = _parse_fragment(stripped)
        if root is None or not _is_element_list(root):
            return _FAIL
        return _from_children(root, tp, kind, depth + 1, picky)
    return _FAIL


def _enum_member(stripped: str, cls: type[enum.Enum]) -> Any:
    """Find an enum member by value, by name, then case-insensitively if unambiguous."""
    members = list(cls)
    for member in members:
        if member.value == stripped:
            return member
    for member in members:
        if str(member.value) == stripped:
            return member
    if stripped in cls.__members__:
        return cls.__members__[stripped]
    folded = stripped.casefold()
    matches = {
        member
        for member in members
        if str(member.value).casefold() == folded or member.name.casefold() == folded
    }
    if len(matches) == 1:
        return matches.pop()
    return _FAIL


def _literal(text: str, stripped: str, tp: Any) -> Any:
    """Find the literal value whose text matches: exact strings first, then str(value)."""
    values = _args(tp)
    for value in values:
        if isinstance(value, str) and value in (text, stripped):
            return value
    lowered = stripped.lower()
    for value in values:
        if isinstance(value, bool):
            if (value and lowered in TRUE_TOKENS) or (not value and lowered in FALSE_TOKENS):
                return value
        elif value is None:
            if lowered in NULL_TOKENS:
                return None
        elif isinstance(value, enum.Enum):
            if stripped in (str(value.value), value.name):
                return value
        elif not isinstance(value, str) and str(value) == stripped:
            return value
    return _FAIL


def _union(text: str, stripped: str, tp: Any, depth: int) -> Any:
    """Try the members of a union in order; see the module docstring for ``None``."""
    infos = [classify(member) for member in _args(tp)]
    members = [info.tp for info in infos]
    kinds = [info.kind for info in infos]
    allows_none = _Kind.NONE in kinds
    if (
        allows_none
        and stripped.lower() in NULL_TOKENS
        and not any(kind in _STR_KINDS or kind is _Kind.ANY for kind in kinds)
    ):
        return None
    passthrough = False
    for member, kind in zip(members, kinds, strict=True):
        if kind is _Kind.NONE:
            continue
        if kind in _PASS_KINDS:
            # Unknown types (datetime, Decimal...) take any string; let the members we
            # do understand claim it first, and Pydantic sort out the rest.
            passthrough = True
            continue
        result = _convert(text, member, depth + 1, True)
        if result is not _FAIL:
            return result
    return text if passthrough else _FAIL


def _hashable_key(key: str, tp: Any, depth: int) -> Any:
    """Convert a mapping key, keeping the string when the result cannot be a key."""
    converted = _convert(key, tp, depth, False)
    if converted is _FAIL:
        return key
    try:
        hash(converted)
    except TypeError:
        return key
    return converted


def _adjust_json(obj: Any, tp: Any, depth: int) -> Any:
    """Convert the strings inside decoded JSON by the annotation, recursively.

    Numbers, booleans and nulls are left for Pydantic.  Model-like objects get their
    keys renamed to the keys validation expects (a field name becomes its alias).
    """
    info = classify(tp)
    tp, kind = info.tp, info.kind
    if depth >= MAX_NESTED_DEPTH or kind is _Kind.ANY or kind in _PASS_KINDS:
        return obj
    if isinstance(obj, str):
        if kind in _STR_KINDS:
            return obj
        converted = _convert(obj, tp, depth, False)
        return obj if converted is _FAIL else converted
    if kind is _Kind.ROOT:
        return _adjust_json(obj, _root_annotation(tp), depth + 1)
    if kind is _Kind.UNION:
        member = _json_member(obj, tp)
        return obj if member is None else _adjust_json(obj, member, depth + 1)
    if isinstance(obj, list):
        if kind is _Kind.SEQUENCE:
            args = _args(tp)
            item = args[0] if args else Any
            return [_adjust_json(value, item, depth + 1) for value in obj]
        if kind is _Kind.TUPLE:
            return [
                _adjust_json(value, item, depth + 1)
                for value, item in zip(obj, _tuple_items(tp, len(obj)), strict=False)
            ]
        return obj
    if isinstance(obj, dict):
        if kind is _Kind.MAPPING:
            key_tp, value_tp = _mapping_args(tp)
            return {
                _hashable_key(str(key), key_tp, depth + 1): _adjust_json(value, value_tp, depth + 1)
                for key, value in obj.items()
            }
        if kind in (_Kind.MODEL, _Kind.TYPEDDICT, _Kind.DATACLASS):
            fields = fields_of(tp)
            adjusted: dict[Any, Any] = {}
            for key, value in obj.items():
                field = fields.get(key)
                if field is None:
                    adjusted[key] = value
                else:
                    adjusted[field.key] = _adjust_json(value, field.annotation, depth + 1)
            return adjusted
    return obj


def _json_member(obj: Any, tp: Any) -> Any:
    """The union member a decoded JSON list or object belongs to, if any."""
    for member in _args(tp):
        info = classify(member)
        member, kind = info.tp, info.kind
        if kind is _Kind.ROOT:
            return member
        if isinstance(obj, list) and kind in _LIST_KINDS:
            return member
        if isinstance(obj, dict) and kind is _Kind.MAPPING:
            return member
        if (
            isinstance(obj, dict)
            and kind in (_Kind.MODEL, _Kind.TYPEDDICT, _Kind.DATACLASS)
            and set(obj) <= set(fields_of(member))
        ):
            return member
    return None


def _tuple_items(tp: Any, count: int) -> list[Any]:
    """Per-position annotations of a tuple type for ``count`` values."""
    args = _args(tp)
    if not args:
        return [Any] * count
    if len(args) == 2 and args[1] is Ellipsis:
        return [args[0]] * count
    return [*args[:count], *([Any] * (count - len(args)))]


def _mapping_args(tp: Any) -> tuple[Any, Any]:
    args = _args(tp)
    key_tp = args[0] if args else Any
    value_tp = args[1] if len(args) > 1 else Any
    return key_tp, value_tp


# --- nested XML --------------------------------------------------------------------------

_local = threading.local()


def _xml_parser() -> etree.XMLParser:
    """The safe lxml parser, one per thread (lxml parsers must not be shared across threads).

    * ``resolve_entities=False``: entity references are never expanded (XXE, billion
      laughs).
    * ``load_dtd=False``, ``dtd_validation=False``: no DTD is read, internal or external.
    * ``no_network=True``: libxml2 never opens a URL.
    * ``huge_tree=False``: libxml2's limits on depth and text size stay on.
    """
    parser: etree.XMLParser | None = getattr(_local, "parser", None)
    if parser is None:
        parser = etree.XMLParser(
            resolve_entities=False,
            no_network=True,
            load_dtd=False,
            dtd_validation=False,
            huge_tree=False,
            recover=False,
            remove_comments=True,
            remove_pis=True,
            strip_cdata=True,
            collect_ids=False,
        )
        _local.parser = parser
    return parser


def _parse_fragment(text: str) -> etree._Element | None:
    """Parse a run of elements under a synthetic root; None when it is not safe XML.

    Text carrying a document type or entity declaration, or longer than
    :data:`MAX_NESTED_XML_CHARS`, is refused before lxml sees it; anything lxml rejects
    (not well-formed, undefined entity, NUL characters...) is "not XML" too.
    """
    if len(text) > MAX_NESTED_XML_CHARS or _FORBIDDEN_XML_RE.search(text):
        return None
    try:
        return etree.fromstring(f"<{_ROOT_TAG}>{text}</{_ROOT_TAG}>", _xml_parser())
    except Exception:  # whatever lxml rejects is simply not XML
        return None


def _children(element: etree._Element) -> list[etree._Element]:
    return [child for child in element if isinstance(child.tag, str)]


def _tag(element: etree._Element) -> str:
    return etree.QName(element).localname


def _is_element_list(element: etree._Element) -> bool:
    """True if ``element`` holds only child elements and whitespace between them."""
    if (element.text or "").strip():
        return False
    children = _children(element)
    return bool(children) and not any((child.tail or "").strip() for child in children)


def _inner_markup(element: etree._Element) -> str:
    """The content of an element as XML text (for a str value written with tags inside)."""
    pieces = [_escape(element.text or "")]
    pieces.extend(etree.tostring(child, encoding="unicode", with_tail=True) for child in element)
    return "".join(pieces).strip()


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _from_children(element: etree._Element, tp: Any, kind: _Kind, depth: int, picky: bool) -> Any:
    """Build a list / dict from the child elements of ``element`` for ``tp``."""
    children = _children(element)
    if kind is _Kind.SEQUENCE:
        args = _args(tp)
        item = args[0] if args else Any
        return [_from_node(child, item, depth + 1) for child in children]
    if kind is _Kind.TUPLE:
        return [
            _from_node(child, item, depth + 1)
            for child, item in zip(children, _tuple_items(tp, len(children)), strict=False)
        ]
    if kind is _Kind.MAPPING:
        key_tp, value_tp = _mapping_args(tp)
        return {
            _hashable_key(_tag(child), key_tp, depth + 1): _from_node(child, value_tp, depth + 1)
            for child in children
        }
    if kind in (_Kind.MODEL, _Kind.TYPEDDICT, _Kind.DATACLASS):
        fields = fields_of(tp)
        if picky and any(_tag(child) not in fields for child in children):
            return _FAIL
        values: dict[str, Any] = {}
        for child in children:
            field = fields.get(_tag(child))
            if field is None:  # left for the model's `extra` policy
                values[_tag(child)] = _from_node(child, Any, depth + 1)
            else:
                values[field.key] = _from_node(child, field.annotation, depth + 1)
        return values
    if kind is _Kind.ANY:
        return _generic(element, depth)
    return _FAIL


def _from_node(element: etree._Element, tp: Any, depth: int) -> Any:
    """The value of one nested element for ``tp``; falls back to its text, never fails."""
    info = classify(tp)
    tp, kind = info.tp, info.kind
    children = _children(element)
    if not children:
        text = (element.text or "").strip()
        if kind in _TEXT_KINDS or depth >= MAX_NESTED_DEPTH:
            return text
        converted = _convert(text, tp, depth, False)
        return text if converted is _FAIL else converted
    if depth >= MAX_NESTED_DEPTH or not _is_element_list(element):
        return _inner_markup(element)
    if kind is _Kind.ANY:
        return _generic(element, depth)
    if kind is _Kind.ROOT:
        return _from_node(element, _root_annotation(tp), depth + 1)
    if kind is _Kind.UNION:
        for member in _args(tp):
            info = classify(member)
            member, member_kind = info.tp, info.kind
            if member_kind in _STRUCTURED_KINDS:
                result = _from_children(element, member, member_kind, depth, True)
                if result is not _FAIL:
                    return result
        return _inner_markup(element)
    if kind in _STRUCTURED_KINDS:
        result = _from_children(element, tp, kind, depth, False)
        return _inner_markup(element) if result is _FAIL else result
    return _inner_markup(element)


def _generic(element: etree._Element, depth: int) -> Any:
    """An element for ``Any``: its text, or a dict of its children (repeats make lists)."""
    children = _children(element)
    if not children or depth >= MAX_NESTED_DEPTH:
        return (element.text or "").strip() if not children else _inner_markup(element)
    values: dict[str, Any] = {}
    for child in children:
        value = _generic(child, depth + 1)
        tag = _tag(child)
        if tag not in values:
            values[tag] = value
        elif isinstance(values[tag], _Repeated):
            values[tag].append(value)
        else:
            values[tag] = _Repeated([values[tag], value])
    return {
        tag: list(value) if isinstance(value, _Repeated) else value for tag, value in values.items()
    }


class _Repeated(list[Any]):
    """Marks values collected from a repeated tag (distinct from a value that is a list)."""
