r"""XMLArgumentConverter: a closed tool block's raw parameters -> a typed model, and back.

The streaming core (:mod:`stream_parser.core.parser`) finds tool blocks and splits each body
into raw parameter strings (rule 5).  When a block closes it calls
:meth:`XMLArgumentConverter.build_instance`, which applies the value rules and builds the model:

1. **Whitespace** (rule 6).  Scalar values are stripped.  Raw parameters (those in
   ``ParserConfig.raw_params``, ``content`` and ``diff`` by default, or fields marked
   ``json_schema_extra={"raw": True}``) lose exactly one leading and one trailing
   newline (``\n`` or ``\r\n``) and nothing else.
2. **CDATA.**  A value made only of ``<![CDATA[...]]>`` sections back to back, ignoring
   the whitespace around them, is unwrapped verbatim (the sections' contents joined, so
   that ``]]>`` can be split across two).  Any other CDATA markup stays in the value as
   written (:mod:`.cdata`).
3. **Types** (rule 10): :func:`~stream_parser.schema.coerce.coerce_value` by the field's
   annotation, then ``model_validate`` (or ``model_construct`` when
   ``ParserConfig.enable_xml_validation`` is False).

Model text never raises here: a validation failure is a :class:`ToolBuildResult` with
no instance, Pydantic's errors as JSON-safe dicts, and a message written for the model
that made the call, so it can correct itself.

**Parameter names.**  A field is addressed by its name and by each plain-string alias
it validates under (``Field(alias="filePath")``); both are accepted in XML and both
appear in :meth:`XMLArgumentConverter.param_names`.  Aliases that are not valid tag names are
not accepted in XML (the field name still is).  :meth:`~XMLArgumentConverter.reconstruct_tool_xml`
writes the alias when there is a valid one, else the field name.

:meth:`XMLArgumentConverter.reconstruct_tool_xml` is the inverse (rule 11): it writes XML
that the core parses back to an equal instance, verbatim, without entity escaping (the
core decodes no entities), using CDATA only where a verbatim value would be read
differently.  The writing itself is :mod:`.xml_write`'s, shared with the xml dialect and
the tools' example calls.

This module does not run the parser (the parser uses it).  The whole-block conveniences
``parse_tool_xml`` and ``extract_parameters``, which do, are added by the subclass
:class:`~stream_parser.core.xml_tool_parser.XMLToolParser`, the class users meet.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from pydantic import BaseModel

from ..errors import ConfigError, ToolError
from ..schema.classify import Kind, classify
from ..schema.coerce import coerce_value, field_entries
from ..schema.names import check_tool_name
from ..schema.validation import ToolBuildResult, validate_arguments
from ._cdata import unwrap_cdata as _unwrap_cdata
from .config import ParserConfig
from .xml_write import write_call

__all__ = ["ToolBuildResult", "XMLArgumentConverter", "parameter_tag"]

# Parameter names: tags, with a rule of their own (wider than the tool-name rule).
_NAME_RE: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")


def parameter_tag(field: str, alias: str | None) -> str:
    """The tag a parameter is written with: its alias when that can be a tag, else its name.

    The same choice the converter makes when it writes a call, so that a prompt shows
    the tag the parser reads (``say "hi"`` cannot be a tag: its field name is shown).

    Example:
        >>> parameter_tag("from_", "from"), parameter_tag("say_hi", 'say "hi"')
        ('from', 'say_hi')
    """
    return alias if alias is not None and _NAME_RE.fullmatch(alias) else field


@dataclass(frozen=True, slots=True)
class _Param:
    """One accepted XML parameter name of a tool."""

    field: str  # the model's field name
    key: str  # the key model_validate expects (alias or name)
    annotation: Any
    raw: bool  # keeps inner whitespace (rule 6)


@dataclass(frozen=True, slots=True)
class _Spec:
    """Everything about one registered tool, compiled once."""

    model: type[BaseModel]
    params: Mapping[str, _Param]  # every accepted XML name -> its field
    names: frozenset[str]
    tags: Mapping[str, str]  # field name -> the tag written by reconstruct_tool_xml


class XMLArgumentConverter:
    """Converts tool parameters to Pydantic models and models back to tool XML.

    Args:
        tool_registry: tool name -> Pydantic model class of its arguments.  Names follow
            :func:`~stream_parser.schema.names.check_tool_name`.
        config: the parser configuration (``raw_params``, ``enable_xml_validation``);
            defaults to ``ParserConfig()``.

    Raises:
        ConfigError: a tool name is invalid, a value is not a ``BaseModel`` subclass, a
            field alias collides with another field's name, or ``config`` is not a
            :class:`~stream_parser.core.config.ParserConfig`.

    Example:
        >>> from pydantic import BaseModel
        >>> class ReadFile(BaseModel):
        ...     path: str
        ...     line: int = 1
        >>> xml_parser = XMLArgumentConverter({"read_file": ReadFile})
        >>> xml_parser.build_instance("read_file", {"path": " a.py ", "line": "3"}).instance
        ReadFile(path='a.py', line=3)
        >>> print(xml_parser.reconstruct_tool_xml(ReadFile(path="a.py", line=3)))
        <read_file>
        <path>a.py</path>
        <line>3</line>
        </read_file>
    """

    def __init__(
        self,
        tool_registry: Mapping[str, type[BaseModel]],
        *,
        config: ParserConfig | None = None,
    ) -> None:
        if config is None:
            config = ParserConfig()
        elif not isinstance(config, ParserConfig):
            raise ConfigError(f"config must be a ParserConfig, not {type(config).__name__}")
        if not isinstance(tool_registry, Mapping):
            raise ConfigError("tool_registry must map tool names to Pydantic model classes")
        registry: dict[str, type[BaseModel]] = {}
        for name, model in tool_registry.items():
            check_tool_name(name)
            if not (isinstance(model, type) and issubclass(model, BaseModel)):
                raise ConfigError(f"tool {name!r}: {model!r} is not a Pydantic BaseModel subclass")
            registry[name] = model
        self.config: ParserConfig = config
        self.tool_registry: Mapping[str, type[BaseModel]] = MappingProxyType(registry)
        self._specs = {name: self._compile(name, model) for name, model in registry.items()}

    def _compile(self, tool: str, model: type[BaseModel]) -> _Spec:
        raw_params = self.config.raw_params
        params: dict[str, _Param] = {}
        tags: dict[str, str] = {}
        entries = field_entries(model)
        field_names = {entry.name for entry, _ in entries}
        for entry, aliases in entries:
            extra = model.model_fields[entry.name].json_schema_extra
            marked = isinstance(extra, dict) and extra.get("raw") is True
            valid_aliases = [alias for alias in aliases if _NAME_RE.fullmatch(alias)]
            for xml_name in (entry.name, *valid_aliases):
                owner = params.get(xml_name)
                if (xml_name in field_names and xml_name != entry.name) or owner is not None:
                    raise ConfigError(
                        f"tool {tool!r}: the parameter name {xml_name!r} would mean two "
                        f"fields ({entry.name!r} has it as an alias)"
                    )
                raw = marked or entry.name in raw_params or xml_name in raw_params
                params[xml_name] = _Param(entry.name, entry.key, entry.annotation, raw)
            # Written as its (first valid) alias, like Pydantic's by-alias schema.
            tags[entry.name] = valid_aliases[0] if valid_aliases else entry.name
        return _Spec(model, MappingProxyType(params), frozenset(params), MappingProxyType(tags))

    def _spec(self, tool_name: str) -> _Spec:
        spec = self._specs.get(tool_name)
        if spec is None:
            known = ", ".join(sorted(self._specs)) or "none"
            raise ToolError(f"unknown tool {tool_name!r} (registered: {known})")
        return spec

    # --- queries used by the core -------------------------------------------------------

    def param_names(self, tool_name: str) -> frozenset[str]:
        """The XML parameter names of a tool: its field names and their valid aliases.

        Args:
            tool_name: a registered tool name.

        Returns:
            Every tag the tool accepts as a parameter (rule 4).

        Raises:
            ToolError: the tool is not registered.
        """
        return self._spec(tool_name).names

    def is_raw_param(self, tool_name: str, param: str) -> bool:
        """Whether a parameter keeps its inner whitespace (rule 6).

        A parameter is raw when its XML name or its field name is in
        ``config.raw_params``, or its field has ``json_schema_extra={"raw": True}``.

        Args:
            tool_name: a registered tool name.
            param: an XML parameter name (for a name the tool does not know, only
                ``config.raw_params`` decides).

        Returns:
            True for a raw parameter.

        Raises:
            ToolError: the tool is not registered.
        """
        entry = self._spec(tool_name).params.get(param)
        if entry is None:
            return param in self.config.raw_params
        return entry.raw

    def is_string_param(self, tool_name: str, param: str) -> bool:
        """Whether a parameter's field holds a string: ``str``, or ``str | None``.

        A format that delimits its values gives such a field the model's string as
        written (its own framing removed, nothing else): see ``verbatim`` of
        :meth:`build_instance`.

        Args:
            tool_name: a registered tool name.
            param: an XML parameter name (False for a name the tool does not know).

        Returns:
            True when the field takes a string and nothing else but None.

        Raises:
            ToolError: the tool is not registered.

        Example:
            >>> from pydantic import BaseModel
            >>> class Search(BaseModel):
            ...     query: str
            ...     limit: int | None = None
            >>> converter = XMLArgumentConverter({"search": Search})
            >>> converter.is_string_param("search", "query")
            True
            >>> converter.is_string_param("search", "limit")
            False
        """
        entry = self._spec(tool_name).params.get(param)
        return entry is not None and _takes_only_strings(entry.annotation)

    # --- raw strings -> instance ------------------------------------------------------

    def build_instance(
        self,
        tool_name: str,
        raw_params: Mapping[str, str | None],
        *,
        verbatim: Collection[str] = (),
    ) -> ToolBuildResult:
        """Build a tool's model instance from its raw parameter strings.

        Applies the whitespace rule, the CDATA rule and type conversion (see the module
        docstring), then validates.  Parameters the tool does not know are passed on
        as stripped strings, so the model's ``extra`` setting decides about them (the
        core has already dropped them with an ``unknown_param`` error).

        Args:
            tool_name: a registered tool name.
            raw_params: XML parameter name -> raw text between its tags, exactly as in
                the stream (CDATA markers and surrounding newlines included).  None
                stands for a ``null`` that a format which writes None so has read
                (qwen3_coder): the field gets None when its type admits None, even
                beside ``str``; otherwise the text ``null``.
            verbatim: parameter names whose text is the model's string as it is: a
                format that delimits its values removed its own framing, and nothing
                is trimmed or unwrapped here (the type conversion still applies).

        Returns:
            The instance, or None with the validation errors and a message.  Never
            raises for model text; an exception raised inside a user validator is
            reported as an error of type ``"exception"``.

        Raises:
            ToolError: the tool is not registered (a programmer error).
        """
        spec = self._spec(tool_name)
        validate = self.config.enable_xml_validation
        data: dict[str, Any] = {}
        for name, raw in raw_params.items():
            entry = spec.params.get(name)
            if raw is None:
                if entry is not None and _admits_none(entry.annotation):
                    data[entry.key if validate else entry.field] = None
                    continue
                raw = "null"
            if entry is None:
                data[name] = _unwrap_cdata(raw.strip())
                continue
            if name in verbatim:
                text = raw  # the format removed its own framing already
            else:
                text = _unwrap_cdata(_trim_one_newline(raw) if entry.raw else raw.strip())
            data[entry.key if validate else entry.field] = coerce_value(text, entry.annotation)
        return validate_arguments(tool_name, spec.model, data, validate=validate)

    # --- instance -> XML --------------------------------------------------------------

    def reconstruct_tool_xml(self, tool_instance: BaseModel, tool_name: str | None = None) -> str:
        r"""Write a tool call that the core parses back to an equal instance (rule 11).

        The layout is one parameter per line, in field order::

            <write_to_file>
            <path>src/app.py</path>
            <content>
            ...the file, verbatim...
            </content>
            </write_to_file>

        The XML is written by :func:`~stream_parser.core.xml_write.write_call`: values
        verbatim by :func:`~stream_parser.schema.coerce.serialize_value` (no entity
        escaping); raw parameters, and values with a line break, on lines of their own.
        A value that would be read differently if written as is -- a scalar with
        surrounding whitespace, a raw value ending in ``\r``, a value containing a
        ``</param>`` that rule 5 could take for the close, or CDATA markup -- is
        wrapped in CDATA (``]]>`` split across sections); JSON values (lists, dicts,
        models) are instead made unambiguous by writing ``<`` as ``\u003c`` inside
        their strings.  Fields whose value is None and whose default is None are
        omitted.  Time is linear in the size of the values.

        What does not round-trip: a ``str`` inside a union whose earlier member claims
        its text (``int | str`` holding ``"42"``), ``None`` in a field that also accepts
        ``str`` and whose default is not None (written ``null``, read as ``"null"``),
        ``Any`` fields holding non-strings, and extra (non-field) attributes.

        Args:
            tool_instance: an instance of a registered tool model.
            tool_name: the tool to write; defaults to the registry key whose model is
                ``type(tool_instance)``.

        Returns:
            The XML, without a trailing newline.

        Raises:
            ToolError: no tool (or more than one) is registered for the instance's
                type, or ``tool_instance`` is not an instance of ``tool_name``'s model.
        """
        name = self._tool_name_for(tool_instance, tool_name)
        spec = self._specs[name]
        args: dict[str, Any] = {}
        for field, info in spec.model.model_fields.items():
            if field not in tool_instance.__dict__:
                continue  # a model_construct instance without this field
            value = tool_instance.__dict__[field]
            if value is None and info.default is None and info.default_factory is None:
                continue
            args[spec.tags.get(field, field)] = value
        raw = {tag for tag, param in spec.params.items() if param.raw}
        return write_call(name, args, raw=raw, params=spec.names)

    def _tool_name_for(self, instance: BaseModel, tool_name: str | None) -> str:
        if tool_name is not None:
            model = self._spec(tool_name).model
            if not isinstance(instance, model):
                raise ToolError(
                    f"tool {tool_name!r} takes {model.__name__}, not {type(instance).__name__}"
                )
            return tool_name
        names = [name for name, spec in self._specs.items() if spec.model is type(instance)]
        if len(names) != 1:
            which = "no tool is" if not names else f"several tools ({', '.join(names)}) are"
            raise ToolError(
                f"{which} registered for {type(instance).__name__}; pass tool_name explicitly"
            )
        return names[0]


# --- value rules -------------------------------------------------------------------------


def _admits_none(annotation: Any) -> bool:
    """Whether None is a value of ``annotation`` (``None``, ``X | None``, through aliases)."""
    info = classify(annotation)
    if info.kind is Kind.UNION:
        return any(_admits_none(member) for member in info.args)
    return info.kind is Kind.NONE


def _takes_only_strings(annotation: Any) -> bool:
    """Whether ``annotation`` is ``str``, or a union of ``str`` with nothing but None."""
    info = classify(annotation)
    if info.kind is Kind.UNION:
        kinds = [classify(member).kind for member in info.args]
        return Kind.STR in kinds and all(kind in (Kind.STR, Kind.NONE) for kind in kinds)
    return info.kind is Kind.STR


def _trim_one_newline(value: str) -> str:
    r"""Remove exactly one leading and one trailing newline (``\n`` or ``\r\n``)."""
    if value.startswith("\r\n"):
        value = value[2:]
    elif value.startswith("\n"):
        value = value[1:]
    if value.endswith("\r\n"):
        value = value[:-2]
    elif value.endswith("\n"):
        value = value[:-1]
    return value


# --- messages ----------------------------------------------------------------------------
