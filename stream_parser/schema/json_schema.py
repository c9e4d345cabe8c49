"""JSON Schema -> argument model: tools described by a schema (OpenAI, Anthropic, MCP).

A tool list from OpenAI (``parameters``), Anthropic (``input_schema``) or an MCP server
(``inputSchema``) describes each tool's arguments with a JSON Schema.  This module turns
such a schema into a Pydantic model that the parser fills like the argument model of any
other tool: one field per property, read from XML tags or from JSON.

Theory of operation.  :func:`compile_json_schema` works in two steps.

1. **Compile** (at once; pure Python, fast).  :mod:`.json_schema_check` checks the schema
   and compiles it into a validator with JSON Schema's meaning (draft 2020-12).  An
   invalid schema -- a ``$ref`` to nowhere, a ``type`` that is no type, an ``enum`` that
   is not a list -- is a :class:`~stream_parser.errors.ConfigError` naming the tool and
   the place (``#/properties/units/enum``).  Every keyword is enforced exactly except
   those of :data:`UNENFORCED_KEYWORDS`, and a ``pattern`` that cannot run with
   ECMA-262's meaning (:attr:`ArgumentSchema.unenforced` lists what a schema holds of
   these); there, the model accepts more than the schema, never less.
2. **Build** (on first use of :attr:`ArgumentSchema.model`).  ``pydantic.create_model``
   makes the model: a field per property, named by :func:`field_names` (an identifier
   and an XML tag) with the schema's name as its alias, annotated with a Python type
   derived from the property's schema (``str``, ``int``, ``Literal[...]``,
   ``list[...]``, a nested model for an object...).  The annotation describes the field,
   for prompts and for reading a parameter's text by type; Pydantic validates nothing by
   it.  One validator of the model runs the compiled schema on the whole argument
   object.

Values.  A valid value is kept as given.  An invalid one holding text where the schema
wants something else is converted by the schema and checked again: ``"3"`` for an
integer, ``"true"`` for a boolean, JSON text for an object or an array, ``"null"`` where
null is allowed (what Pydantic's lax mode and the parser's reading of text do).  A string
the schema takes as a string stays a string, and nothing else is converted: ``true`` is
no integer and ``1`` no boolean.  The fields hold plain JSON values (an object is a
dict); ``model_dump(by_alias=True)`` gives the schema's names, and the keys the schema
allows besides its properties are kept (``additionalProperties``).

Example:
    >>> schema = {
    ...     "type": "object",
    ...     "properties": {
    ...         "city": {"type": "string"},
    ...         "units": {"enum": ["celsius", "fahrenheit"]},
    ...         "from": {"type": "integer", "minimum": 0},
    ...     },
    ...     "required": ["city"],
    ... }
    >>> args = compile_json_schema(schema, tool="get_weather")
    >>> args.field_names
    {'city': 'city', 'units': 'units', 'from': 'from_'}
    >>> found = args.model.model_validate({"city": "Oslo", "from": "3"})
    >>> found.from_, found.model_dump(by_alias=True, exclude_unset=True)
    (3, {'city': 'Oslo', 'from': 3})
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import keyword
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Annotated, Any, ClassVar, Final, Literal, Union, cast

from pydantic import BaseModel, ConfigDict, Field, GetCoreSchemaHandler, create_model
from pydantic import model_validator as _model_validator
from pydantic_core import CoreSchema, core_schema
from typing_extensions import NotRequired, Required, TypedDict

from ..errors import ConfigError
from .coerce import MAX_NESTED_DEPTH
from .json_schema_check import (
    ANNOTATION_KEYWORDS,
    NO_VALUE,
    UNENFORCED_KEYWORDS,
    Node,
    Unenforced,
    compile_schema,
    node_types,
    validate,
)
from .signature import camel_case

__all__ = [
    "ANNOTATION_KEYWORDS",
    "UNENFORCED_KEYWORDS",
    "ArgumentSchema",
    "JsonSchemaArguments",
    "Unenforced",
    "compile_json_schema",
    "field_names",
    "model_from_json_schema",
]

_NAME_PART: Final = re.compile(r"[^A-Za-z0-9]+")


# --- names ---------------------------------------------------------------------------------


def _usable(name: str, reserved: Callable[[str], bool]) -> bool:
    """Whether a name can be a field name and an XML tag as it is."""
    return (
        name.isascii()
        and name.isidentifier()
        and not name.startswith("_")
        and not keyword.iskeyword(name)
        and not reserved(name)
    )


def _base_reserved(name: str) -> bool:
    return name in _reserved_names()


@functools.cache
def _reserved_names() -> frozenset[str]:
    """The attributes of the model class and its metaclass, which no field may shadow."""
    return frozenset(dir(JsonSchemaArguments)) | frozenset(dir(type(JsonSchemaArguments)))


def field_names(
    names: Iterable[str], *, reserved: Callable[[str], bool] | None = None
) -> dict[str, str]:
    """The field name of each property name: the name itself when it can be one.

    A property name is kept when it is an ASCII identifier that does not start with
    ``_``, is no Python keyword and no attribute of a Pydantic model.  Any other name is
    rewritten, readably: accents are dropped (``città`` -> ``citta``), every run of other
    characters becomes ``_`` and ``_`` at either end is removed (``q&a`` -> ``q_a``,
    ``say "hi"`` -> ``say_hi``, ``$id`` -> ``id``), a name starting with a digit gets
    ``field_`` in front (``2fa`` -> ``field_2fa``), an empty one becomes ``field``, and a
    keyword or a model attribute gets ``_`` after it (``from`` -> ``from_``,
    ``model_config`` -> ``model_config_``).  Names kept as they are come first; a
    rewritten name that is already taken gets ``_2``, ``_3``... (in the order given), so
    two properties never share a field.  The field name is both a Python identifier and
    an XML tag the parser reads.

    Args:
        names: the property names, in the schema's order.
        reserved: says whether a name is taken by the model class (default: an attribute
            of :class:`JsonSchemaArguments`).

    Returns:
        Property name -> field name, in the order given.

    Example:
        >>> field_names(["q&a", "q_a", "from", "model_config", "$id", "2fa"])
        {'q&a': 'q_a_2', 'q_a': 'q_a', 'from': 'from_', 'model_config': 'model_config_', \
'$id': 'id', '2fa': 'field_2fa'}
    """
    is_reserved = reserved if reserved is not None else _base_reserved
    ordered = list(names)
    kept = {name for name in ordered if _usable(name, is_reserved)}
    taken = set(kept)
    result: dict[str, str] = {}
    for name in ordered:
        if name in kept:
            result[name] = name
            continue
        base = _rewrite(name, is_reserved)
        candidate, count = base, 1
        while candidate in taken or not _usable(candidate, is_reserved):
            count += 1
            candidate = f"{base.rstrip('_')}_{count}"
        taken.add(candidate)
        result[name] = candidate
    return result


def _rewrite(name: str, reserved: Callable[[str], bool]) -> str:
    ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    base = _NAME_PART.sub("_", ascii_name).strip("_")
    if not base:
        base = "field"
    elif base[0].isdigit():
        base = f"field_{base}"
    if keyword.iskeyword(base) or reserved(base):
        base += "_"
    return base


# --- the model ---------------------------------------------------------------------------


class _SchemaChecked:
    """Field metadata: Pydantic takes the value as it is (the schema's validator has run).

    The field's annotation stays the derived Python type, for descriptions and for
    reading a parameter's text by type; Pydantic builds no validator from it.
    """

    __slots__ = ()

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> CoreSchema:
        return core_schema.any_schema()

    def __repr__(self) -> str:
        return "SchemaChecked"


class JsonSchemaArguments(BaseModel):
    """The base class of every argument model built from a JSON Schema.

    Validation runs the schema's validator on the whole argument object (with the text
    conversions of the module docstring) and stores the values as plain JSON; the
    fields' annotations only describe them.  ``model_json_schema()`` returns the schema
    the model was built from.
    """

    model_config = ConfigDict(extra="allow", protected_namespaces=(), defer_build=True)

    __argument_schema__: ClassVar[ArgumentSchema]

    @_model_validator(mode="before")
    @classmethod
    def _validate_by_schema(cls, data: Any) -> Any:
        if isinstance(data, cls):
            return data
        return cls.__argument_schema__.validate(data)

    @classmethod
    def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """The JSON Schema this model was built from (a copy; arguments are ignored)."""
        return copy.deepcopy(dict(cls.__argument_schema__.schema))


def _none() -> None:
    """The value of an optional property that was not given and has no default."""
    return None


def _literal(values: Sequence[Any]) -> Any:
    """``Literal[...]`` of scalar values, or None when a value cannot be a literal."""
    if not values or not all(
        value is None or isinstance(value, (str, int, float, bool)) for value in values
    ):
        return None
    return Literal[tuple(values)]


def _union(members: Sequence[Any]) -> Any:
    """The union of ``members``, ``str`` first: a string the schema takes stays a string.

    A parameter's text is read by trying the union's members in order; a schema's types
    have no order, and text that is a valid string is kept as the model wrote it.
    """
    unique: list[Any] = []
    for member in members:
        if member is Any:
            return Any
        if member not in unique:
            unique.append(member)
    if not unique:
        return Any
    if len(unique) == 1:
        return unique[0]
    unique.sort(key=lambda member: member is not str)  # (a stable sort: str, then the rest)
    return Union[tuple(unique)]  # noqa: UP007 -- a union built at run time


def _camel(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in _NAME_PART.split(text) if part)


@dataclasses.dataclass
class _Property:
    """A property as a field: every subschema that speaks of it, whether it is required."""

    nodes: list[Node]
    required: bool = False


def _collect(node: Node) -> dict[str, _Property]:
    """The properties of an object schema, its $ref and allOf/anyOf/oneOf branches included.

    A property is required when a part that must hold (the schema, its $ref, its allOf
    branches) requires it.
    """
    found: dict[str, _Property] = {}
    required: set[str] = set()
    seen: set[int] = set()

    def walk(current: Node, must: bool) -> None:
        if id(current) in seen and not must:
            return
        seen.add(id(current))
        for name, child in current.properties.items():
            found.setdefault(name, _Property([])).nodes.append(child)
        if must:
            required.update(current.required)
        for sub in (current.ref, *current.all_of):
            if sub is not None:
                walk(sub, must)
        for sub in (*current.any_of, *current.one_of, current.then, current.else_):
            if sub is not None:
                walk(sub, False)
        for sub in current.dependent_schemas.values():
            walk(sub, False)

    walk(node, True)
    for name in required:
        if name in found:
            found[name].required = True
    return found


def _annotation(node: Node, attribute: str) -> Any:
    """An annotation keyword of a subschema, else of the schema its $ref names."""
    current: Node | None = node
    for _ in range(MAX_NESTED_DEPTH):
        if current is None or not isinstance(current.schema, dict):
            return NO_VALUE
        if attribute in current.schema:
            return current.schema[attribute]
        current = current.ref
    return NO_VALUE


class _Builder:
    """Makes the classes of one schema: the argument model, and a shape per nested object."""

    def __init__(self, module: str) -> None:
        self.module = module
        self.shapes: dict[int, Any] = {}
        self.building: set[int] = set()

    def model(self, node: Node, name: str, names: Mapping[str, str]) -> type[JsonSchemaArguments]:
        fields: dict[str, Any] = {}
        for prop, info in _collect(node).items():
            # A marker of its own per field: typing caches ``Annotated[...]`` by its
            # arguments, and unions that differ only in order compare equal, so a shared
            # marker made ``int | str`` come back as an earlier field's ``str | int``.
            annotation = _annotated(
                self._property_shape(info, name + _camel(prop)), _SchemaChecked()
            )
            fields[names[prop]] = (annotation, _field(prop, names[prop], info))
        model = create_model(name, __base__=JsonSchemaArguments, __module__=self.module, **fields)
        if node.description:
            model.__doc__ = node.description
        return model

    def _property_shape(self, info: _Property, hint: str) -> Any:
        shapes = [self.shape(child, hint) for child in info.nodes]
        return _union([shape for shape in shapes if shape is not Any] or [Any])

    def shape(self, node: Node, hint: str) -> Any:
        """The Python annotation that describes a subschema's values."""
        key = id(node)
        if key in self.shapes:
            return self.shapes[key]
        if key in self.building:  # a recursive object: described without its fields
            return dict[str, Any]
        self.building.add(key)
        try:
            shape = self._shape(node, hint)
        finally:
            self.building.discard(key)
        self.shapes[key] = shape
        return shape

    def _shape(self, node: Node, hint: str) -> Any:
        if node.boolean is not None:
            return Any
        if node.enum is not None:
            return _literal(node.enum_values) or Any
        if node.const is not NO_VALUE:
            return _literal((node.const,)) or Any
        types = node.types
        if types is None:
            if node.ref is not None and not node.properties:
                target = node.ref.path.rsplit("/", 1)[-1]
                return self.shape(node.ref, _camel(target) or hint)
            branches = node.any_of or node.one_of
            if branches:
                return _union([self.shape(branch, hint) for branch in branches])
            if len(node.all_of) == 1 and not node.properties:
                return self.shape(node.all_of[0], hint)
            if node.properties:
                types = ("object",)
            elif node.items is not None or node.prefix:
                types = ("array",)
            else:
                return Any
        return _union([self._type_shape(node, kind, hint) for kind in types])

    def _type_shape(self, node: Node, kind: str, hint: str) -> Any:
        if kind in _SIMPLE_SHAPES:
            return _SIMPLE_SHAPES[kind]
        if kind == "array":
            if node.items is not None and not node.prefix:
                return list[self.shape(node.items, hint + "Item")]  # type: ignore[misc]
            return list[Any]
        properties = _collect(node)
        if properties:
            return self._typed_dict(node, hint, properties)
        if node.additional is not None and node.additional.boolean is None:
            return dict[str, self.shape(node.additional, hint + "Value")]  # type: ignore[misc]
        return dict[str, Any]

    def _typed_dict(self, node: Node, name: str, properties: dict[str, _Property]) -> Any:
        """A nested object as a TypedDict keyed by the schema's names.

        A TypedDict costs little to make (no Pydantic model is built), and the prompts
        and the parser's reading of nested values understand it as they do a model.
        """
        keys: dict[str, Any] = {}
        for prop, info in properties.items():
            extra = _field_extra(prop, prop, info)
            value = self._property_shape(info, name + _camel(prop))
            value = _annotated(value, Field(**extra)) if extra else value
            keys[prop] = Required[value] if info.required else NotRequired[value]
        made: Any = cast(Any, TypedDict)(name, keys)
        made.__doc__ = node.description or None
        made.__module__ = self.module
        return made


_SIMPLE_SHAPES: Final[dict[str, Any]] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "null": type(None),
}


def _annotated(annotation: Any, metadata: Any) -> Any:
    """``Annotated[annotation, metadata]``, built at run time.

    Subscripted through ``Any``: a type checker takes the subscript for a type expression,
    and ``Annotated.__class_getitem__`` is gone from Python 3.13 (a special form there).
    """
    annotated: Any = Annotated
    return annotated[annotation, metadata]


def _field_extra(prop: str, field: str, info: _Property) -> dict[str, Any]:
    """The alias, description and examples of a field, as ``Field`` takes them."""
    extra: dict[str, Any] = {}
    if field != prop:
        extra["alias"] = prop
    for child in info.nodes:
        description = _annotation(child, "description")
        if isinstance(description, str):
            extra["description"] = description
            break
    notes = [note for child in info.nodes for note in _inner_descriptions(child)]
    if notes:
        own = extra.get("description", "")
        extra["description"] = " ".join([own, *notes]) if own else " ".join(notes)
    for child in info.nodes:
        examples = _annotation(child, "examples")
        if isinstance(examples, list) and examples:
            extra["examples"] = examples
            break
    return extra


def _inner_descriptions(node: Node) -> list[str]:
    """What a property's inner schemas describe that no named type will show.

    A nested object becomes a type whose own description and fields a prompt explains;
    the description of an array's plain items, or of a branch of ``anyOf`` / ``oneOf``
    that is no object, would otherwise be lost, so it is added to the field's own.
    """
    notes: list[str] = []
    items = node.items
    if items is not None and not _collect(items):
        described = _annotation(items, "description")
        if isinstance(described, str) and described:
            notes.append(f"Each item: {described}")
    branches = [
        text
        for branch in (*node.any_of, *node.one_of)
        if not _collect(branch)
        and isinstance(text := _annotation(branch, "description"), str)
        and text
    ]
    if branches:
        notes.append("One of: " + " | ".join(branches))
    return notes


def _field(prop: str, field: str, info: _Property) -> Any:
    """The ``Field`` of a top-level property."""
    extra = _field_extra(prop, field, info)
    if info.required:
        return Field(..., **extra)
    for child in info.nodes:
        default = _annotation(child, "default")
        if default is not NO_VALUE:  # Pydantic copies a list or dict for each instance
            return Field(default, **extra)
    # No default: the field reads None, and a prompt shows no default.
    return Field(default_factory=_none, **extra)


# --- the public face ---------------------------------------------------------------------


class ArgumentSchema:
    """A tool's argument schema, checked and compiled; its model is built on first need.

    Make one with :func:`compile_json_schema`.

    Attributes:
        tool: the tool's name (error messages name it).
        schema: the schema (a private copy, not to be changed).
        unenforced: the keywords of this schema the model does not enforce (it accepts
            more than the schema there): those of :data:`UNENFORCED_KEYWORDS` it uses,
            and each ``pattern`` or ``patternProperties`` key that cannot be run with
            ECMA-262's meaning.
        field_names: property name -> field name, for the top-level properties
            (:func:`field_names`).
        model_name: the name of the model class.
    """

    def __init__(
        self,
        *,
        tool: str,
        schema: dict[str, Any],
        root: Node,
        unenforced: tuple[Unenforced, ...],
        model_name: str,
    ) -> None:
        self.tool = tool
        self.schema: Mapping[str, Any] = schema
        self.unenforced = unenforced
        self.model_name = model_name
        self._root = root
        self._properties = _collect(root)
        self.field_names: dict[str, str] = field_names(self._properties)
        self._model: type[JsonSchemaArguments] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ArgumentSchema(tool={self.tool!r}, fields={list(self.field_names.values())})"

    @property
    def model(self) -> type[JsonSchemaArguments]:
        """The argument model, a :class:`JsonSchemaArguments`; built on first use, then kept."""
        model = self._model
        if model is None:
            with self._lock:
                model = self._model
                if model is None:
                    model = self._build()
                    self._model = model
        return model

    def _build(self) -> type[JsonSchemaArguments]:
        model = _Builder(__name__).model(self._root, self.model_name, self.field_names)
        model.__argument_schema__ = self
        return model

    def validate(self, data: Any) -> Any:
        """Check arguments against the schema, converting text where the schema says so.

        This is what the model's validation runs.

        Args:
            data: the arguments: a dict of schema names to values (or JSON text of one).

        Returns:
            ``data`` itself when it is valid as it is, else the converted arguments.

        Raises:
            pydantic.ValidationError: the arguments are invalid, even once converted;
                one error per problem, located by the schema's names.
        """
        return validate(self._root, data, self.model_name)

    def arguments(self, instance: BaseModel) -> dict[str, Any]:
        """The arguments of a validated instance, as a tool's handler takes them.

        Args:
            instance: an instance of :attr:`model`.

        Returns:
            The schema's names and the values given (converted), the schema's default
            for each top-level property not given, and the other keys given.
        """
        given = instance.model_dump(by_alias=True, exclude_unset=True)
        for prop, info in self._properties.items():
            if prop in given or info.required:
                continue
            for node in info.nodes:
                default = _annotation(node, "default")
                if default is not NO_VALUE:
                    given[prop] = copy.deepcopy(default)
                    break
        return given


def compile_json_schema(
    schema: Mapping[str, Any], *, tool: str, model_name: str | None = None
) -> ArgumentSchema:
    """Check and compile a tool's JSON Schema; the model is built on first use.

    Args:
        schema: the JSON Schema of the arguments (an object schema: OpenAI's
            ``parameters``, Anthropic's ``input_schema``, MCP's ``inputSchema``).  It is
            copied; changing it later changes nothing.
        tool: the tool's name, for error messages.
        model_name: the model's class name; default ``<CamelName>Args``.

    Returns:
        The compiled schema.

    Raises:
        ConfigError: the schema is not a valid JSON Schema of an object; the message
            names the tool and the place (``#/properties/units/enum``).
    """
    if not isinstance(schema, Mapping):
        raise ConfigError(
            f"tool {tool!r}: the arguments schema must be a JSON object, "
            f"not {type(schema).__name__}"
        )
    try:
        copied = _copy_json(schema)
    except RecursionError:
        raise ConfigError(f"tool {tool!r}: the JSON Schema is nested too deeply") from None
    root, unenforced = compile_schema(copied, tool)
    types = node_types(root)
    if types is not None and "object" not in types:
        raise ConfigError(
            f"tool {tool!r}: invalid JSON Schema at #: the arguments are an object, "
            f"but the schema takes {', '.join(types) or 'nothing'}"
        )
    return ArgumentSchema(
        tool=tool,
        schema=copied,
        root=root,
        unenforced=unenforced,
        model_name=model_name if model_name is not None else f"{camel_case(tool)}Args",
    )


def _copy_json(value: Any) -> Any:
    """A copy of JSON data (dicts and lists copied, the rest shared: it is immutable)."""
    if isinstance(value, Mapping):
        return {key: _copy_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_copy_json(item) for item in value]
    return value


def model_from_json_schema(
    schema: Mapping[str, Any], *, tool: str, model_name: str | None = None
) -> type[JsonSchemaArguments]:
    """Build the argument model of a tool's JSON Schema now.

    The same as ``compile_json_schema(schema, tool=tool).model``.

    Raises:
        ConfigError: see :func:`compile_json_schema`.
    """
    return compile_json_schema(schema, tool=tool, model_name=model_name).model
