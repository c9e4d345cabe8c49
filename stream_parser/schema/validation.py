"""Validating tool arguments, and validation errors safe to put in events and JSON.

Shared by every path that turns a model's tool call into a Pydantic instance: the XML
core (``core/xml_tools.py``), the JSON dialects (``dialects/``), native calls
(``core/_native.py``) and the tools' own validation (``tools/``).  A validation failure is
worded for the model once, by :func:`describe_errors`.  None of it raises for what a
model wrote.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from pydantic import BaseModel, ValidationError

__all__ = ["ToolBuildResult", "describe_errors", "json_safe_errors", "validate_arguments"]

_GOT_CHARS: Final = 80
_MAX_LISTED_ERRORS: Final = 20


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolBuildResult:
    """The outcome of building a tool's arguments from what a model wrote.

    Attributes:
        instance: the tool's model instance, or None when the arguments are invalid.
        message: empty on success; otherwise a readable explanation naming each bad
            parameter and the reason, suitable to send back to the model.
        errors: Pydantic's error dicts, JSON-safe (``type``, ``loc``, ``msg``, ``input``,
            ``ctx``), without URLs.
    """

    instance: BaseModel | None
    message: str = ""
    errors: tuple[dict[str, Any], ...] = ()

    @property
    def ok(self) -> bool:
        """True when an instance was built."""
        return self.instance is not None


def json_safe_errors(exc: ValidationError) -> tuple[dict[str, Any], ...]:
    """Pydantic's errors as plain, JSON-serialisable dicts.

    ``exc.json()`` cannot encode every string a model may send (a lone surrogate makes it
    raise), and ``exc.errors()`` may hold exception objects in ``ctx``.  This goes through
    Python's ``json`` module, which escapes any string and turns odd objects into their
    ``str``.  Input nested nearly as deep as the recursion limit can be validated but not
    serialised again; then the ``input`` of each error is left out.
    """
    try:
        return tuple(json.loads(json.dumps(exc.errors(include_url=False), default=str)))
    except (RecursionError, ValueError):
        errors = exc.errors(include_url=False, include_input=False)
        return tuple(json.loads(json.dumps(errors, default=str)))


def _loc(loc: Any) -> str:
    """``("items", 1, "name")`` -> ``items[1].name``."""
    out = ""
    for part in loc if isinstance(loc, list | tuple) else (loc,):
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _got(value: Any) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (RecursionError, ValueError):
        text = "..."
    if len(text) > _GOT_CHARS:
        text = text[: _GOT_CHARS - 1] + "…"
    return text


# Errors whose input says nothing useful: a missing field has none, an exception in a
# validator is not about the input, and invalid JSON's input is the whole argument text.
_NO_INPUT_TYPES: Final = frozenset({"missing", "exception", "json_invalid"})


def describe_errors(
    tool: str, errors: tuple[dict[str, Any], ...], known_params: Iterable[str] = ()
) -> str:
    """Word validation errors for the model that made the call, so it can correct it.

    This is the one wording of invalid arguments: the parser's ``invalid_params`` errors
    and the tools' ``invalid_params`` results both use it.

    Args:
        tool: the tool called.
        errors: Pydantic's error dicts (as :func:`json_safe_errors` gives them).
        known_params: the tool's parameter names, listed when an unknown one was given.

    Returns:
        A first line saying how many errors there are, one line per error naming the
        parameter and the reason (and the value given, shortened), at most
        20 of them, then the known parameters if an unknown one was given.

    Example:
        >>> missing = {"loc": ["n"], "msg": "Field required", "type": "missing"}
        >>> print(describe_errors("f", (missing,)))
        Invalid parameters for tool 'f' (1 error); fix them and call the tool again:
        - n: Field required
    """
    count = len(errors)
    lines = [
        f"Invalid parameters for tool {tool!r} "
        f"({count} error{'s' if count != 1 else ''}); fix them and call the tool again:"
    ]
    for error in errors[:_MAX_LISTED_ERRORS]:
        where = _loc(error.get("loc", ())) or "(the call as a whole)"
        line = f"- {where}: {error.get('msg', 'invalid')}"
        if error.get("type") not in _NO_INPUT_TYPES and "input" in error:
            line += f" (got {_got(error['input'])})"
        lines.append(line)
    if count > _MAX_LISTED_ERRORS:
        lines.append(f"- ... and {count - _MAX_LISTED_ERRORS} more")
    known = list(known_params)
    if known and any(error.get("type") == "extra_forbidden" for error in errors):
        lines.append("Known parameters: " + ", ".join(known) + ".")
    return "\n".join(lines)


def validate_arguments(
    tool_name: str, model: type[BaseModel], data: dict[str, Any], *, validate: bool = True
) -> ToolBuildResult:
    """Validate arguments with the tool's model (``model_construct`` if not ``validate``).

    Never raises for model text: a validation failure, or an exception raised inside a
    user validator (reported as an error of type ``"exception"``), comes back as a result
    without an instance.
    """
    try:
        instance = model.model_validate(data) if validate else model.model_construct(**data)
    except ValidationError as exc:
        errors = json_safe_errors(exc)
        known = [info.alias or name for name, info in model.model_fields.items()]
        return ToolBuildResult(
            instance=None, message=describe_errors(tool_name, errors, known), errors=errors
        )
    except Exception as exc:  # model text never raises: a user validator's bug is reported
        error: dict[str, Any] = {
            "type": "exception",
            "loc": [],
            "msg": f"{type(exc).__name__}: {exc}",
            "input": None,
        }
        return ToolBuildResult(
            instance=None, message=describe_errors(tool_name, (error,)), errors=(error,)
        )
    return ToolBuildResult(instance=instance)
