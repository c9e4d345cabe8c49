"""A function's signature and docstring, read once into what a model needs to call it.

:func:`read_signature` is the pipeline behind ``@tool`` (and any decorator that turns a
Python function into something a model calls or fills in)::

    function ──► type hints (get_type_hints, with the defining code's locals as fallback)
             ──► docstring (Google, NumPy or reST: summary, Args, Returns)
             ──► one Pydantic field per parameter (default, description)
             ──► FunctionSignature(args_model, param_descriptions, description,
                                   returns_description, return_annotation)

The argument model rejects unknown arguments (``extra="forbid"``).  A parameter's
description comes from ``Field(description=...)`` (in ``Annotated`` or as the default)
when it has one, else from the docstring's ``Args`` entry.  What a parameter may be
annotated with is the caller's policy, passed as ``check`` (``@tool`` accepts only the
types a model can write); the rest of the rules are the signature's own: no ``*args`` or
``**kwargs``, every parameter annotated, none private (``_x``), none named like a
``BaseModel`` attribute.

Example:
    >>> def greet(name: str, times: int = 1) -> str:
    ...     '''Greet someone.
    ...
    ...     Args:
    ...         name: Who to greet.
    ...     '''
    ...     return "hi " * times + name
    >>> sig = read_signature(greet)
    >>> sig.description, sig.param_descriptions, sig.return_annotation
    ('Greet someone.', {'name': 'Who to greet.'}, <class 'str'>)
    >>> sig.args_model(name="Ada")
    GreetArgs(name='Ada', times=1)
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import re
import sys
import types
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import docstring_parser
from pydantic import BaseModel, ConfigDict, Field, create_model
from pydantic.fields import FieldInfo

from ..errors import ConfigError
from .classify import Kind, classify
from .multimodal import ImageRoots, ImgPath

__all__ = [
    "AnnotationCheck",
    "Docstring",
    "FunctionSignature",
    "camel_case",
    "parse_docstring",
    "pin_image_roots",
    "read_signature",
    "resolve_hints",
]

AnnotationCheck = Callable[[Any, str], None]
"""``check(annotation, where)``: raise :class:`~stream_parser.errors.ConfigError` for a
parameter type the caller does not accept (``where`` names the parameter)."""

_PACKAGE = __name__.split(".")[0]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Docstring:
    """What a docstring says, by section.

    Attributes:
        description: the summary and the body, without the sections.
        params: parameter (or attribute) name -> its description, for those that have one.
        returns: the ``Returns`` text, or ``""``.
    """

    description: str
    params: Mapping[str, str]
    returns: str


def parse_docstring(obj: object) -> Docstring:
    """Read the docstring of a function or class (Google, NumPy or reST style).

    Args:
        obj: anything with a docstring (``inspect.getdoc`` rules: inherited ones count).

    Returns:
        The sections; all empty when there is no docstring.  A docstring that cannot be
        parsed is all description.
    """
    raw = inspect.getdoc(obj) or ""
    if not raw.strip():
        return Docstring(description="", params={}, returns="")
    try:
        parsed = docstring_parser.parse(raw)
    except docstring_parser.ParseError:
        return Docstring(description=raw.strip(), params={}, returns="")
    text = "\n\n".join(
        part.strip() for part in (parsed.short_description, parsed.long_description) if part
    )
    params = {p.arg_name: p.description.strip() for p in parsed.params if p.description}
    returns = parsed.returns.description if parsed.returns else None
    return Docstring(description=text, params=params, returns=(returns or "").strip())


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class FunctionSignature:
    """A function, read for a model.

    Attributes:
        name: the function's own name (``__name__``).
        args_model: the Pydantic model of its arguments: one field per parameter, in
            order, defaults kept, unknown arguments rejected.
        param_descriptions: parameter name -> description (the docstring's, for
            parameters without a ``Field(description=...)``).
        description: the docstring's summary and body.
        returns_description: the docstring's ``Returns`` text, or ``""``.
        return_annotation: the resolved return annotation, or ``inspect.Signature.empty``
            when there is none.
        params: ``(name, positional_only)`` of each parameter, in order: how to call the
            function with a validated instance of ``args_model``.
    """

    name: str
    args_model: type[BaseModel]
    param_descriptions: dict[str, str]
    description: str
    returns_description: str
    return_annotation: Any
    params: tuple[tuple[str, bool], ...]


def read_signature(
    fn: Callable[..., Any],
    *,
    model_name: str | None = None,
    where: str | None = None,
    check: AnnotationCheck | None = None,
    image_roots: ImageRoots | None = None,
) -> FunctionSignature:
    """Read a function's signature and docstring into an argument model and its docs.

    Args:
        fn: a function, method, ``functools.partial`` or callable object.
        model_name: the name of the argument model; default ``<CamelName>Args``.
        where: how error messages name the function; default ``function 'name'``.
        check: called with each parameter's annotation; raises for types the caller
            does not accept.  Default: any annotation Pydantic accepts.
        image_roots: if given, every bare ``ImgPath`` in the parameters' annotations
            accepts only paths inside these roots (see :func:`pin_image_roots`).

    Returns:
        The signature.

    Raises:
        ConfigError: a parameter is ``*args`` / ``**kwargs``, unannotated, private,
            clashes with a ``BaseModel`` attribute or fails ``check``; an annotation
            cannot be resolved; or Pydantic cannot build the model.
    """
    target = fn.func if isinstance(fn, functools.partial) else fn
    name = str(getattr(target, "__name__", type(fn).__name__))
    where = where if where is not None else f"function {name!r}"
    doc = parse_docstring(fn)
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: cannot read the signature: {exc}") from exc
    hints = _resolve_hints(fn, where)
    fields: dict[str, Any] = {}
    params: list[tuple[str, bool]] = []
    for param in signature.parameters.values():
        fields[param.name] = _field(param, hints, doc, check, image_roots, where)
        params.append((param.name, param.kind is inspect.Parameter.POSITIONAL_ONLY))
    try:
        model = create_model(
            model_name if model_name is not None else f"{camel_case(name)}Args",
            __config__=ConfigDict(extra="forbid"),
            __module__=getattr(fn, "__module__", None) or __name__,
            **fields,
        )
    except Exception as exc:
        raise ConfigError(f"{where}: cannot build the argument model: {exc}") from exc
    return FunctionSignature(
        name=name,
        args_model=model,
        param_descriptions={k: v for k, v in doc.params.items() if k in fields},
        description=doc.description,
        returns_description=doc.returns,
        return_annotation=hints.get("return", inspect.Signature.empty),
        params=tuple(params),
    )


def camel_case(name: str) -> str:
    """``read_file`` -> ``ReadFile`` (for the names of generated models)."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[_\-]+", name) if part)


def _field(
    param: inspect.Parameter,
    hints: Mapping[str, Any],
    doc: Docstring,
    check: AnnotationCheck | None,
    image_roots: ImageRoots | None,
    where: str,
) -> tuple[Any, Any]:
    """The ``create_model`` field definition of one parameter."""
    pname = param.name
    if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
        star = "*" if param.kind is inspect.Parameter.VAR_POSITIONAL else "**"
        raise ConfigError(
            f"{where}: {star}{pname} is not supported; declare each parameter explicitly"
        )
    if pname not in hints:
        hint = " (decorate a bound method or a plain function)" if pname == "self" else ""
        raise ConfigError(f"{where}: parameter {pname!r} has no type annotation{hint}")
    if pname.startswith("_"):
        raise ConfigError(f"{where}: parameter {pname!r} is private (starts with '_')")
    if hasattr(BaseModel, pname):
        raise ConfigError(
            f"{where}: parameter {pname!r} clashes with a pydantic BaseModel attribute; rename it"
        )
    annotation = hints[pname]
    if check is not None:
        check(annotation, f"{where}: parameter {pname!r}")
    if image_roots is not None:
        annotation = pin_image_roots(annotation, image_roots)
    text = doc.params.get(pname, "")
    default = param.default
    if isinstance(default, FieldInfo):
        if text and not default.description:
            default = copy.copy(default)
            default.description = text
        return (annotation, default)
    meta_info = [
        meta
        for meta in getattr(annotation, "__metadata__", ())
        if isinstance(meta, FieldInfo) and meta.description
    ]
    extra: dict[str, Any] = {"description": text} if text and not meta_info else {}
    if default is inspect.Parameter.empty:
        return (annotation, Field(..., **extra))
    return (annotation, Field(default, **extra))


def pin_image_roots(annotation: Any, marker: ImageRoots) -> Any:
    """Rewrite every bare ``ImgPath`` in an annotation to ``Annotated[ImgPath, marker]``.

    Looks through ``Annotated``, ``NewType``, type aliases, unions and containers; an
    ``ImgPath`` that already has its own :class:`ImageRoots` keeps it.  Fields of nested
    models are not rewritten.

    Args:
        annotation: a parameter's annotation.
        marker: the roots to pin.

    Returns:
        The annotation, rewritten where needed (the same object when nothing changed).
    """
    if annotation is ImgPath:
        return Annotated[ImgPath, marker]
    origin = get_origin(annotation)
    args = get_args(annotation)
    if origin is Annotated:
        base, metadata = args[0], annotation.__metadata__
        if base is ImgPath and any(isinstance(meta, ImageRoots) for meta in metadata):
            return annotation
        # Subscripted through Any: Annotated.__class_getitem__ is gone from Python 3.13.
        annotated: Any = Annotated
        pinned = (pin_image_roots(base, marker), *metadata)
        return annotated[pinned]
    if not args and origin is None:
        info = classify(annotation)
        if info.tp is not annotation and info.kind is not Kind.JSON:
            # A NewType or alias: pin what it stands for, if that changes anything.
            unwrapped = pin_image_roots(info.tp, marker)
            return annotation if unwrapped is info.tp else unwrapped
        return annotation
    if origin is Literal or not args:
        return annotation
    new_args = tuple(
        arg if arg is Ellipsis or arg == () else pin_image_roots(arg, marker) for arg in args
    )
    if all(new is old for new, old in zip(new_args, args, strict=True)):
        return annotation
    if origin is Union or origin is types.UnionType:
        return Union[new_args]  # noqa: UP007 -- building a union at run time
    return origin[new_args]


def resolve_hints(fn: Callable[..., Any], where: str) -> dict[str, Any]:
    """A function's resolved annotations (``include_extras``), unannotated names absent.

    Args:
        fn: a function, method, ``functools.partial`` or callable object.
        where: how error messages name the function.

    Raises:
        ConfigError: an annotation cannot be resolved.
    """
    return _resolve_hints(fn, where)


def _resolve_hints(fn: Callable[..., Any], where: str) -> dict[str, Any]:
    """``get_type_hints`` with a fallback to the namespace of the code defining ``fn``.

    With ``from __future__ import annotations`` every annotation is a string.  Names
    defined at module level resolve through the function's globals; for names local to
    the function that defines ``fn`` (common in tests and notebooks), the locals of the
    first caller frame outside this library are tried too.
    """
    while isinstance(fn, functools.partial):
        fn = fn.func
    target = fn if inspect.isroutine(fn) else type(fn).__call__
    try:
        return typing.get_type_hints(target, include_extras=True)
    except NameError:
        pass
    except Exception as exc:
        raise ConfigError(f"{where}: cannot read the annotations: {exc}") from exc
    try:
        return typing.get_type_hints(target, localns=_caller_locals(), include_extras=True)
    except Exception as exc:
        raise ConfigError(
            f"{where}: cannot resolve an annotation ({exc}); define the types it uses at "
            "module level"
        ) from exc


def _caller_locals() -> dict[str, Any]:
    """The locals of the innermost frame whose code is not this library's."""
    frame = sys._getframe(1)
    while frame.f_back is not None and _in_package(frame.f_globals.get("__name__")):
        frame = frame.f_back
    return dict(frame.f_locals)


def _in_package(module: object) -> bool:
    return isinstance(module, str) and (module == _PACKAGE or module.startswith(_PACKAGE + "."))
