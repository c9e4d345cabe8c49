"""Tools: :func:`tool` and :class:`Tool`, a Python function that a model can call.

``@tool`` turns a function into a :class:`Tool`.  What it reads of the function -- the
argument model, the per-parameter docs, the description, the return annotation -- comes
from :func:`~stream_parser.schema.signature.read_signature`; this module adds what makes
it a *tool*: a checked name (:mod:`stream_parser.schema.names`), parameter types a model
can write (:func:`check_tool_annotation`), and from the one argument model

* the OpenAI ``tools`` entry (:meth:`Tool.to_openai`), with a JSON Schema by Pydantic;
* the text-protocol description for a prompt (:meth:`Tool.xml_usage`), whose example
  call is in the XML format :class:`~stream_parser.core.parser.StreamToolParser` parses;
* validated, converted arguments for a call (:meth:`Tool.call`, :meth:`Tool.acall`).

Errors follow the library's two worlds.  A bad *definition* (an unsupported annotation,
``*args``, an invalid name) raises :class:`~stream_parser.errors.ConfigError` when the
tool is defined.  Anything caused by the model or by the tool's own code at run time --
invalid arguments, an exception inside the tool (or inside its argument model's own
validators), a result that cannot be serialised -- comes back from :meth:`Tool.execute`
as an error :class:`~stream_parser.tools.result.ToolResult` whose text the model can
read and act on.  That holds for every exception but the four that steer the program
(``KeyboardInterrupt``, ``SystemExit``, ``GeneratorExit``, ``asyncio.CancelledError``),
and whatever the exception's ``__str__`` and ``__repr__`` do (see
:mod:`~stream_parser.tools.result`).
"""

from __future__ import annotations

import asyncio
import collections.abc as cabc
import copy
import functools
import inspect
import json
import os
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeAlias, TypeVar, overload

from pydantic import BaseModel, ValidationError
from pydantic.json_schema import GenerateJsonSchema

from ..core.xml_tools import parameter_tag
from ..core.xml_write import write_call
from ..errors import ConfigError, ToolError
from ..prompts import text as prompt_text
from ..prompts.text import XML_PREFACE
from ..schema.classify import Kind, classify
from ..schema.multimodal import ImageRoots
from ..schema.names import check_tool_name, native_name, tool_name_from_class
from ..schema.signature import camel_case, parse_docstring, read_signature
from ..schema.typedesc import describe_parameters, example_value, field_docs, type_name
from .result import ToolResult, _is_control_flow

if TYPE_CHECKING:
    from ..schema.json_schema import ArgumentSchema

__all__ = ["XML_PREFACE", "Arguments", "Tool", "check_tool_annotation", "tool"]

P = ParamSpec("P")
R = TypeVar("R")

_PathLike: TypeAlias = "str | os.PathLike[str]"

Arguments: TypeAlias = Mapping[str, Any] | BaseModel | str | bytes | None
"""Tool arguments as :meth:`Tool.validate` accepts them: a mapping, a model instance, a
JSON object string, or None."""


# --- JSON Schema -------------------------------------------------------------------------


class _ToolJsonSchema(GenerateJsonSchema):
    """Pydantic's generator without per-field titles (noise for a model reading it)."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def _parameters_schema(model: type[BaseModel]) -> dict[str, Any]:
    schema = model.model_json_schema(schema_generator=_ToolJsonSchema)
    schema.pop("title", None)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


# --- annotations -------------------------------------------------------------------------

# Kinds a model can write as a tool argument, whatever their arguments.
_LEAF_KINDS = frozenset(
    {
        Kind.STR,
        Kind.BOOL,
        Kind.INT,
        Kind.FLOAT,
        Kind.NONE,
        Kind.SCALAR,
        Kind.MULTIMODAL,
        Kind.ENUM,
        Kind.LITERAL,
        Kind.MODEL,
        Kind.ROOT,
        Kind.TYPEDDICT,
        Kind.DATACLASS,
    }
)
# Containers Pydantic validates eagerly into a value (not Iterable, which it makes lazy).
_CONTAINERS: frozenset[Any] = frozenset(
    {
        list,
        dict,
        set,
        frozenset,
        tuple,
        cabc.Sequence,
        cabc.MutableSequence,
        cabc.Set,
        cabc.MutableSet,
        cabc.Mapping,
        cabc.MutableMapping,
    }
)

_SUPPORTED_TEXT = (
    "str, int, float, bool, None, bytes, datetime, date, time, timedelta, Decimal, UUID, "
    "Path, Literal[...], Enum subclasses, list/tuple/set/dict of supported types, "
    "Optional/Union, Annotated, NewType, type aliases, Pydantic models, dataclasses, "
    "TypedDicts, Text, ImgUrl and ImgPath"
)


def check_tool_annotation(annotation: Any, where: str) -> None:
    """Raise unless a model can write a value of ``annotation`` as a tool argument.

    ``Annotated``, ``NewType`` and type aliases are looked through (by
    :func:`~stream_parser.schema.classify.classify`, as coercion and descriptions do);
    unions and containers are checked member by member.

    Args:
        annotation: a parameter's annotation.
        where: how the message names the parameter.

    Raises:
        ConfigError: the type is not supported (the message lists the supported ones).
    """
    info = classify(annotation)
    if info.tp is Any or info.kind in _LEAF_KINDS:
        return
    if info.kind is Kind.JSON:
        check_tool_annotation(info.tp, where)
        return
    if info.kind is Kind.UNION or (
        info.kind in (Kind.SEQUENCE, Kind.MAPPING, Kind.TUPLE) and info.cls in _CONTAINERS
    ):
        for arg in info.args:
            if arg is not Ellipsis and arg != ():
                check_tool_annotation(arg, where)
        return
    raise ConfigError(
        f"{where} has an unsupported type {type_name(annotation)!r}; "
        f"a tool argument must be one of: {_SUPPORTED_TEXT}"
    )


# --- the Tool ----------------------------------------------------------------------------


class Tool(Generic[P, R]):
    """A function (or a Pydantic model) that a model can call.

    Build one with :func:`tool`, ``Tool(fn)``, or :meth:`Tool.from_model`.  Calling the
    ``Tool`` object itself calls the wrapped function directly, unchanged.

    Args:
        fn: a sync or async function whose parameters are all annotated with supported
            types (see :func:`tool`).
        name: the tool name; default ``fn.__name__``.
        description: default: the docstring's summary and body (without its sections).
        image_roots: if given, every ``ImgPath`` in the parameters accepts only paths
            inside these directories (see :class:`~stream_parser.schema.multimodal.ImageRoots`).
        requires_approval: see the attribute.
        read_only: see the attribute.

    Raises:
        ConfigError: if the name is invalid, a parameter is ``*args`` / ``**kwargs``,
            unannotated, private (``_x``), clashes with a ``BaseModel`` attribute, or has
            an unsupported type.

    Attributes:
        name: the tool name (an XML tag name and an OpenAI function name).
        description: what the tool does, for the model.
        args_model: the Pydantic model of the arguments (its fields are the parameters).
        param_descriptions: parameter name -> description, from the docstring.
        returns_description: the docstring's ``Returns`` text, or ``""``.
        return_annotation: the function's return annotation (``inspect.Signature.empty``
            when it has none, and for a tool made from a model).
        fn: the wrapped function (or the handler of a tool made from a model or a JSON
            Schema), or None for a schema-only tool.
        is_async: whether calling ``fn`` gives an awaitable.
        strict: OpenAI's ``strict`` flag of a tool read from a tool list, sent back
            unchanged by :meth:`to_openai`; None when it was not given.
        requires_approval: an agent asks its ``approve=`` callable before running a
            call of this tool (see ``docs/agent.md``).
        read_only: the tool changes nothing, so an agent with ``eager_tools=True`` may
            start it while the reply still streams.
    """

    name: str
    description: str
    param_descriptions: dict[str, str]
    returns_description: str
    return_annotation: Any
    fn: Callable[P, R] | None
    is_async: bool
    requires_approval: bool = False
    read_only: bool = False
    strict: bool | None = None
    # Set for a tool made from a JSON Schema: the compiled schema (its model is built on
    # first need) and what an MCP description holds besides it, for to_mcp().
    _argument_schema: ArgumentSchema | None = None
    _args_model: type[BaseModel] | None = None
    _mcp_extra: Mapping[str, Any] = {}

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        image_roots: Iterable[_PathLike] | None = None,
        requires_approval: bool = False,
        read_only: bool = False,
    ) -> None:
        if isinstance(fn, Tool):
            raise ConfigError(f"{fn!r} is already a tool; use with_name() to rename it")
        if not callable(fn) or isinstance(fn, type):
            raise ConfigError(f"a tool needs a function, not {fn!r}")
        default_name = getattr(
            fn.func if isinstance(fn, functools.partial) else fn, "__name__", None
        )
        tool_name = check_tool_name(name if name is not None else default_name)
        signature = read_signature(
            fn,
            model_name=f"{camel_case(tool_name)}Args",
            where=f"tool {tool_name!r}",
            check=check_tool_annotation,
            image_roots=ImageRoots(*image_roots) if image_roots is not None else None,
        )
        self._setup(
            fn=fn,
            name=tool_name,
            description=signature.description if description is None else description,
            model=signature.args_model,
            param_descriptions=signature.param_descriptions,
            returns=signature.returns_description,
            params=signature.params,
            handler=False,
        )
        self.return_annotation = signature.return_annotation
        self.requires_approval = bool(requires_approval)
        self.read_only = bool(read_only)
        for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
            if hasattr(fn, attr):
                setattr(self, attr, getattr(fn, attr))
        self.__wrapped__ = fn

    @classmethod
    def from_model(
        cls,
        model: type[BaseModel],
        fn: Callable[[Any], Any] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
    ) -> Tool[..., Any]:
        """Make a tool whose arguments are an existing Pydantic model.

        Args:
            model: the argument model; its fields are the parameters.
            fn: an optional handler, called with the validated model instance (sync or
                async).  Without it the tool is schema-only: it can be described and
                parsed, but not executed.
            name: the tool name; default the class name in snake_case, acronyms kept
                whole (``WriteToFile`` -> ``write_to_file``, ``HTTPGet`` -> ``http_get``;
                :func:`~stream_parser.schema.names.tool_name_from_class`).
            description: default: the class docstring's summary and body.

        Returns:
            The tool.

        Raises:
            ConfigError: if ``model`` is not a Pydantic model class, the name is invalid,
                or its JSON Schema cannot be generated.
        """
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise ConfigError(f"not a Pydantic model class: {model!r}")
        doc = parse_docstring(model)
        self: Tool[..., Any] = cls.__new__(cls)
        self._setup(
            fn=fn,
            name=check_tool_name(
                name if name is not None else tool_name_from_class(model.__name__)
            ),
            description=doc.description if description is None else description,
            model=model,
            param_descriptions={
                key: info.description or doc.params.get(key, "")
                for key, info in model.model_fields.items()
                if info.description or doc.params.get(key)
            },
            returns="",
            params=(),
            handler=True,
        )
        self.return_annotation = inspect.Signature.empty
        return self

    @classmethod
    def from_json_schema(
        cls,
        name: str,
        schema: Mapping[str, Any],
        *,
        description: str | None = None,
        handler: Callable[[dict[str, Any]], Any] | None = None,
        strict: bool | None = None,
    ) -> Tool[..., Any]:
        """Make a tool whose arguments are described by a JSON Schema.

        The schema is checked and compiled at once; the argument model is built the
        first time it is needed (:mod:`stream_parser.schema.json_schema`).  The schema
        is kept as given: :meth:`to_openai`, :meth:`to_anthropic` and :meth:`to_mcp`
        send it back unchanged.

        Args:
            name: the tool name.
            schema: the JSON Schema of the arguments (an object schema).
            description: what the tool does; default the schema's own ``description``.
            handler: an optional function (sync or async) that runs a call.  It gets one
                argument: a dict of the arguments by the schema's names, holding only the
                keys the model wrote (converted and checked; the schema's defaults are
                not added, so a handler that forwards the call, to an MCP server say,
                sends what the model wrote).  Without it the tool is schema-only.
            strict: OpenAI's ``strict`` flag, sent back by :meth:`to_openai`.

        Returns:
            The tool.

        Raises:
            ConfigError: an invalid name, an invalid schema (the message names the tool
                and the place in the schema), or a handler that is not callable.
        """
        # Imported here: a program whose tools are all Python never loads the compiler.
        from ..schema.json_schema import compile_json_schema

        tool_name = check_tool_name(name)
        compiled = compile_json_schema(schema, tool=tool_name)
        if description is None:
            found = compiled.schema.get("description")
            description = found if isinstance(found, str) else ""
        if not isinstance(description, str):
            raise ConfigError(f"tool {tool_name!r}: the description must be a string")
        if handler is not None and not callable(handler):
            raise ConfigError(f"tool {tool_name!r}: the handler must be callable, not {handler!r}")
        if strict is not None and not isinstance(strict, bool):
            raise ConfigError(f"tool {tool_name!r}: 'strict' must be true or false")
        self: Tool[..., Any] = cls.__new__(cls)
        self.fn = handler
        self.name = tool_name
        self.description = description
        self._args_model = None
        self._argument_schema = compiled
        self.param_descriptions = _property_descriptions(compiled.schema)
        self.returns_description = ""
        self.return_annotation = inspect.Signature.empty
        self.is_async = _is_async(handler)
        self._params = ()
        self._handler = True
        self._schema = dict(compiled.schema)
        self.strict = strict
        return self

    @property
    def args_model(self) -> type[BaseModel]:
        """The Pydantic model of the arguments (its fields are the parameters).

        For a tool made from a JSON Schema it is built the first time it is asked for.
        """
        model = self._args_model
        if model is None:
            assert self._argument_schema is not None
            model = self._argument_schema.model
            self._args_model = model
        return model

    @property
    def argument_schema(self) -> ArgumentSchema | None:
        """The compiled JSON Schema of a tool made from one, else None."""
        return self._argument_schema

    def with_handler(self, handler: Callable[..., Any]) -> Tool[..., Any]:
        """Return a copy of this schema-only tool that runs its calls with ``handler``.

        Args:
            handler: a sync or async function.  For a tool made from a JSON Schema it
                gets the arguments as a dict (see :meth:`from_json_schema`); for one made
                from a model, the validated model instance.

        Returns:
            A new ``Tool``.

        Raises:
            ConfigError: the tool already has a function, or ``handler`` is not callable.
        """
        if self.fn is not None:
            raise ConfigError(f"tool {self.name!r} already has a function; it takes no handler")
        if not callable(handler):
            raise ConfigError(f"tool {self.name!r}: the handler must be callable, not {handler!r}")
        clone: Tool[..., Any] = copy.copy(self)
        clone.fn = handler
        clone.is_async = _is_async(handler)
        return clone

    def _setup(
        self,
        *,
        fn: Callable[..., Any] | None,
        name: str,
        description: str,
        model: type[BaseModel],
        param_descriptions: dict[str, str],
        returns: str,
        params: tuple[tuple[str, bool], ...],
        handler: bool,
    ) -> None:
        self.fn = fn
        self.name = name
        self.description = description
        self._args_model = model
        self.param_descriptions = param_descriptions
        self.returns_description = returns
        self.is_async = _is_async(fn)
        self._params = params
        self._handler = handler
        try:
            self._schema = _parameters_schema(model)
        except Exception as exc:
            raise ConfigError(f"tool {name!r}: cannot generate the JSON Schema: {exc}") from exc

    def with_name(self, name: str) -> Tool[P, R]:
        """Return a copy of this tool registered under another name.

        Args:
            name: the new name.

        Returns:
            A new ``Tool`` sharing the function and the argument model.
        """
        clone = copy.copy(self)
        clone.name = check_tool_name(name)
        return clone

    # -- calling ----------------------------------------------------------------------------

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call the wrapped function directly, without validation."""
        if self.fn is None:
            raise ToolError(f"tool {self.name!r} is schema-only: it has no function")
        return self.fn(*args, **kwargs)

    def validate(self, args: Arguments = None) -> BaseModel:
        """Validate and convert arguments into an ``args_model`` instance.

        Args:
            args: a mapping of parameter values, a JSON object string (as native function
                calls send it), an instance of ``args_model`` (returned as is, e.g. a
                ``ToolCallEvent.tool_instance``), another model instance (re-validated
                from its fields), or None for no arguments.

        Returns:
            The validated instance.

        Raises:
            pydantic.ValidationError: if the arguments are invalid.
            ToolError: if ``args`` is of none of the accepted kinds.
        """
        self._check_arguments_kind(args)
        model = self.args_model
        if args is None:
            return model.model_validate({})
        if isinstance(args, model):
            return args
        if isinstance(args, BaseModel):
            return model.model_validate(dict(args))
        if isinstance(args, (str, bytes)):
            return model.model_validate_json(args)
        return model.model_validate(dict(args))  # a Mapping (checked above)

    def _check_arguments_kind(self, args: object) -> None:
        """Raise for arguments of no accepted kind: the caller's mistake, not the model's."""
        if args is None or isinstance(args, (BaseModel, str, bytes, Mapping)):
            return
        raise ToolError(
            f"arguments of tool {self.name!r} must be a mapping, a model instance or a JSON "
            f"string, not {type(args).__name__}"
        )

    def _validate_for_execute(self, args: Arguments) -> BaseModel | ToolResult:
        """Validate for :meth:`execute`: an error result instead of any exception."""
        self._check_arguments_kind(args)
        try:
            return self.validate(args)
        except ValidationError as exc:
            return ToolResult.from_validation_error(self.name, exc, self._param_names())
        except BaseException as exc:
            # A validator of the argument model is the tool's own code: whatever else it
            # raises is reported like an exception inside the tool.
            if _is_control_flow(exc):
                raise
            return ToolResult.from_exception(self.name, exc)

    def _function(self) -> Callable[..., Any]:
        if self.fn is None:
            raise ToolError(f"tool {self.name!r} is schema-only: it has no function to run")
        return self.fn

    def _bind(self, instance: BaseModel) -> tuple[list[Any], dict[str, Any]]:
        if self._argument_schema is not None:
            # The schema's names, and only the keys the model wrote.
            return [instance.model_dump(by_alias=True, exclude_unset=True)], {}
        if self._handler:
            return [instance], {}
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for pname, positional in self._params:
            value = getattr(instance, pname)
            if positional:
                args.append(value)
            else:
                kwargs[pname] = value
        return args, kwargs

    def _ensure_no_running_loop(self) -> None:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        raise ToolError(
            f"tool {self.name!r} is async and an event loop is running; use acall() or aexecute()"
        )

    def _run_sync(self, instance: BaseModel) -> Any:
        args, kwargs = self._bind(instance)
        value = self._function()(*args, **kwargs)
        if inspect.isawaitable(value):
            self._ensure_no_running_loop()
            outcome = asyncio.run(_settle(value))
            if outcome.error is not None:
                raise outcome.error
            return outcome.value
        return value

    async def _run_async(self, instance: BaseModel) -> Any:
        args, kwargs = self._bind(instance)
        value = self._function()(*args, **kwargs)
        if inspect.isawaitable(value):
            value = await value
        return value

    def call(self, **kwargs: Any) -> Any:
        """Validate and convert the arguments, then call the tool and return its value.

        An async tool is run with :func:`asyncio.run` (only when no event loop is running;
        inside one, use :meth:`acall`).

        Args:
            **kwargs: the arguments, as a model would give them (strings are converted:
                ``"3"`` for an ``int``, a path string for an ``ImgPath``...).

        Returns:
            What the function returns.

        Raises:
            pydantic.ValidationError: if the arguments are invalid.
            ToolError: for a schema-only tool, or an async tool inside a running loop.
            Exception: whatever the function raises.
        """
        self._function()
        if self.is_async:
            self._ensure_no_running_loop()
        return self._run_sync(self.validate(kwargs))

    async def acall(self, **kwargs: Any) -> Any:
        """Async :meth:`call`: validate, call, and await the result if it is awaitable.

        A sync tool is called directly in the event loop's thread; wrap it with
        :func:`asyncio.to_thread` yourself if it blocks.

        Args:
            **kwargs: the arguments.

        Returns:
            What the function returns (awaited).

        Raises:
            pydantic.ValidationError: if the arguments are invalid.
            ToolError: for a schema-only tool.
            Exception: whatever the function raises.
        """
        self._function()
        return await self._run_async(self.validate(kwargs))

    def execute(self, args: Arguments = None) -> ToolResult:
        """Validate the arguments, run the tool and convert its result.

        Never raises for anything the model or the tool's own code does.

        Args:
            args: see :meth:`validate`.

        Returns:
            The result; an error result for invalid arguments, an exception raised by the
            tool (any ``BaseException`` but ``KeyboardInterrupt``, ``SystemExit``,
            ``GeneratorExit`` and ``asyncio.CancelledError``, whatever its ``__str__`` and
            ``__repr__`` do), or a return value that cannot be serialised.

        Raises:
            ToolError: only for programmer errors: a schema-only tool, an async tool called
                while an event loop is running (use :meth:`aexecute`), or ``args`` of an
                unaccepted kind.
        """
        self._function()
        if self.is_async:
            self._ensure_no_running_loop()
        instance = self._validate_for_execute(args)
        if isinstance(instance, ToolResult):
            return instance
        try:
            value = self._run_sync(instance)
        except BaseException as exc:
            if _is_control_flow(exc):
                raise
            return ToolResult.from_exception(self.name, exc)
        return ToolResult.from_value(self.name, value)

    async def aexecute(self, args: Arguments = None) -> ToolResult:
        """Async :meth:`execute`: works for sync and async tools.

        Args:
            args: see :meth:`validate`.

        Returns:
            The result, an error result as in :meth:`execute`.

        Raises:
            ToolError: only for a schema-only tool or ``args`` of an unaccepted kind.
        """
        self._function()
        instance = self._validate_for_execute(args)
        if isinstance(instance, ToolResult):
            return instance
        try:
            value = await self._run_async(instance)
        except BaseException as exc:
            if _is_control_flow(exc):
                raise
            return ToolResult.from_exception(self.name, exc)
        return ToolResult.from_value(self.name, value)

    def _param_names(self) -> list[str]:
        return [field.name for field in field_docs(self.args_model)]

    # -- describing -------------------------------------------------------------------------

    def json_schema(self) -> dict[str, Any]:
        """Return the JSON Schema of the arguments (an ``object`` schema).

        Field titles are left out; nested models stay in ``$defs`` and are referenced with
        ``$ref``, so recursive models work.
        """
        return copy.deepcopy(self._schema)

    def native_name(self, *, exact: bool = False) -> str:
        """The name native function calling knows the tool by.

        Args:
            exact: refuse a name native function calling does not take, instead of
                sending the tool under its safe name.

        Returns:
            The tool's name, or for a name outside ``^[a-zA-Z0-9_-]{1,64}$`` its safe
            name (:func:`~stream_parser.schema.names.native_name`:
            ``github/create_issue`` -> ``github__create_issue``); the parser reads a
            call of the safe name as a call of the tool.

        Raises:
            ConfigError: ``exact`` and the name is not one native calling takes.
        """
        safe = native_name(self.name)
        if exact and safe != self.name:
            raise ConfigError(
                f"tool {self.name!r} cannot be sent to native function calling under its "
                f"own name (it takes 1-64 letters, digits, '_' or '-'); without exact=True "
                f"it is sent as {safe!r}"
            )
        return safe

    def to_openai(self, *, exact: bool = False) -> dict[str, Any]:
        """Return the OpenAI ``tools`` entry.

        Args:
            exact: refuse a name OpenAI does not take instead of sending the safe name
                (see :meth:`native_name`).

        Returns:
            ``{"type": "function", "function": {"name", "description", "parameters"}}``.

        Raises:
            ConfigError: ``exact`` and the name is not one OpenAI takes.
        """
        function: dict[str, Any] = {
            "name": self.native_name(exact=exact),
            "description": self.description,
            "parameters": self.json_schema(),
        }
        if self.strict is not None:
            function["strict"] = self.strict
        return {"type": "function", "function": function}

    def to_anthropic(self, *, exact: bool = False) -> dict[str, Any]:
        """Return the Anthropic ``tools`` entry.

        Args:
            exact: refuse a name Anthropic does not take instead of sending the safe
                name (see :meth:`native_name`).

        Returns:
            ``{"name", "description", "input_schema"}``.

        Raises:
            ConfigError: ``exact`` and the name is not one Anthropic takes.
        """
        return {
            "name": self.native_name(exact=exact),
            "description": self.description,
            "input_schema": self.json_schema(),
        }

    def to_mcp(self) -> dict[str, Any]:
        """Return the tool as an MCP ``tools/list`` entry.

        Returns:
            ``{"name", "description", "inputSchema"}``, and whatever else a tool read
            from an MCP description held (``title``, ``outputSchema``, ``annotations``,
            ``execution``...), unchanged.
        """
        entry: dict[str, Any] = {"name": self.name}
        if "title" in self._mcp_extra:
            entry["title"] = copy.deepcopy(self._mcp_extra["title"])
        entry["description"] = self.description
        entry["inputSchema"] = self.json_schema()
        for key, value in self._mcp_extra.items():
            entry.setdefault(key, copy.deepcopy(value))
        return entry

    def xml_example(self) -> str:
        """Return an example call in the parser's XML format, with generated values.

        Written by :func:`~stream_parser.core.xml_write.write_call`: one element per
        parameter, values verbatim (no entity escaping, CDATA only where the parser would
        otherwise read a value differently); lists, dicts and models as JSON; booleans as
        ``true`` / ``false``.  Values come from the fields'
        ``examples``, else their defaults, else
        :func:`~stream_parser.schema.typedesc.example_value`.
        """
        example = example_value(self.args_model)
        args: dict[str, str] = {}
        if isinstance(example, dict):
            tags = self.xml_tags()
            args = {
                tags.get(str(key), str(key)): _xml_text(value)
                for key, value in example.items()
                if value is not None
            }
        if not args:
            return f"<{self.name}>\n</{self.name}>"
        return write_call(self.name, args)

    def xml_usage(self, *, language: str = "en", templates: prompt_text.Templates = None) -> str:
        """Describe the tool for a text-protocol prompt.

        Args:
            language: the language of the headings, ``"en"`` or ``"zh"``.
            templates: replacement prompt templates by name (see
                :func:`~stream_parser.prompts.templating.render`).

        Returns:
            A block: ``## name``, the description, the parameters (type, required or
            default, description; nested models, enums and multimodal types explained
            below them), the ``Returns`` text if documented, and an example call::

                ## get_weather
                Get the weather for a city.

                Parameters:
                - city (str, required): City name.

                Example call:
                <get_weather>
                <city>example</city>
                </get_weather>
        """
        say = (language, templates)
        parts = [prompt_text.tool_heading(self.name, *say)]
        if self.description:
            parts.append(self.description)
        parts.append("")
        parts.append(
            prompt_text.parameters_block(
                describe_parameters(self.args_model, names=self.xml_tags()), *say
            )
        )
        if self.returns_description:
            parts.append("")
            parts.append(prompt_text.returns_line(self.returns_description, *say))
        parts.append("")
        parts.append(prompt_text.example_call_block(self.xml_example(), *say))
        return "\n".join(parts)

    def xml_tags(self) -> dict[str, str]:
        """Each parameter's key (its alias, else its name) -> the tag an XML call uses.

        The alias when it can be an XML tag, else the field name: the tag the parser
        reads and the prompts show (a JSON Schema's ``say "hi"`` is ``<say_hi>``).
        """
        return {
            info.alias or field: parameter_tag(field, info.alias)
            for field, info in self.args_model.model_fields.items()
        }

    def __repr__(self) -> str:
        params = ", ".join(self.args_model.model_fields)
        kind = "async " if self.is_async else ""
        return f"<{kind}Tool {self.name}({params})>"


class _Outcome:
    """What an awaited tool gave: its value, or the exception it raised.

    Its ``repr`` shows neither: ``asyncio.run`` may format its main task, and so the
    task's result, on its way out (when it checks its SIGINT handler), and a value or an
    exception whose ``repr`` raises would then replace the tool's own outcome and leave
    asyncio's SIGINT handler installed.
    """

    __slots__ = ("error", "value")

    def __init__(self, value: Any = None, error: BaseException | None = None) -> None:
        self.value = value
        self.error = error

    def __repr__(self) -> str:
        return "<tool outcome>"


async def _settle(value: Awaitable[Any]) -> _Outcome:
    """Await ``value`` for :func:`asyncio.run` without handing it a raised exception.

    Exceptions that steer the program still go through ``asyncio.run`` as they are.
    """
    try:
        return _Outcome(await value)
    except BaseException as exc:
        if _is_control_flow(exc):
            raise
        return _Outcome(error=exc)


def _is_async(fn: object) -> bool:
    """Whether calling ``fn`` gives an awaitable (an async function or callable object)."""
    return fn is not None and (
        inspect.iscoroutinefunction(fn)
        or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004
    )


def _property_descriptions(schema: Mapping[str, Any]) -> dict[str, str]:
    """The descriptions of a schema's top-level properties, by the schema's names."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return {}
    return {
        name: sub["description"]
        for name, sub in properties.items()
        if isinstance(sub, Mapping) and isinstance(sub.get("description"), str)
    }


def _xml_text(value: Any) -> str:
    """An example value as text: JSON with spaces, which reads better in a prompt."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, ensure_ascii=False)


# --- the decorator -----------------------------------------------------------------------


@overload
def tool(
    fn: Callable[P, R],
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    image_roots: Iterable[_PathLike] | None = None,
    requires_approval: bool = False,
    read_only: bool = False,
) -> Tool[P, R]: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    image_roots: Iterable[_PathLike] | None = None,
    requires_approval: bool = False,
    read_only: bool = False,
) -> Callable[[Callable[P, R]], Tool[P, R]]: ...


def tool(
    fn: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    image_roots: Iterable[_PathLike] | None = None,
    requires_approval: bool = False,
    read_only: bool = False,
) -> Tool[P, R] | Callable[[Callable[P, R]], Tool[P, R]]:
    """Make a :class:`Tool` of a function; use as ``@tool`` or ``@tool(name=...)``.

    ``tool(fn, name=...)`` works too.

    Every parameter needs an annotation of a supported type: ``str``, ``int``,
    ``float``, ``bool``, ``None``, ``Literal``, ``Enum``, ``list`` / ``tuple`` / ``set`` /
    ``dict`` of supported types, ``Optional`` / unions, Pydantic models, dataclasses,
    TypedDicts, ``Text``, ``ImgUrl``, ``ImgPath`` (also ``datetime``, ``date``, ``time``,
    ``timedelta``, ``Decimal``, ``UUID``, ``Path``, ``bytes``).  ``Annotated[T, Field(...)]``
    and ``= Field(...)`` defaults work as in Pydantic.  The function may be sync or async.

    Args:
        fn: the function (when used bare, as ``@tool``).
        name: the tool name; default the function's name.
        description: default: the docstring's summary and body.
        image_roots: directories that the tool's ``ImgPath`` parameters may point into,
            overriding the ambient setting (see :mod:`stream_parser.schema.multimodal`).
        requires_approval: an agent asks its ``approve=`` callable before each call.
        read_only: the tool changes nothing (an agent may start it early, see
            ``eager_tools`` in ``docs/agent.md``).

    Returns:
        The tool, or a decorator that makes one.

    Raises:
        ConfigError: when the function cannot be a tool (see :class:`Tool`).
    """
    flags = {"requires_approval": requires_approval, "read_only": read_only}
    if fn is not None:
        return Tool(fn, name=name, description=description, image_roots=image_roots, **flags)

    def decorate(func: Callable[P, R]) -> Tool[P, R]:
        return Tool(func, name=name, description=description, image_roots=image_roots, **flags)

    return decorate
