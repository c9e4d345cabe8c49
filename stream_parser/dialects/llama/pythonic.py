r"""Llama's pythonic calls: ``[name(param=value, ...)]``, read and written.

:func:`parse_pythonic_call` reads one call once its text is whole (Python literals
only, by ``ast``: nothing is evaluated); :func:`format_pythonic_call` writes one.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pydantic_core import to_jsonable_python

__all__ = ["format_pythonic_call", "literal_value", "parse_pythonic_call"]

_MAX_DEPTH: Final = 64  # nesting of a pythonic argument value
_JSON_NAMES: Final[Mapping[str, object]] = {"true": True, "false": False, "null": None}


def parse_pythonic_call(text: str) -> tuple[str, dict[str, Any]] | str:
    """One pythonic call ``name(a=1, b='x')``: its name and arguments, or why not.

    Parsed with :func:`ast.parse` and read node by node: only literal values are
    accepted, nothing is evaluated.

    Example:
        >>> parse_pythonic_call("search(query='a b', max_results=-3, tags=[True, None])")
        ('search', {'query': 'a b', 'max_results': -3, 'tags': [True, None]})
        >>> parse_pythonic_call("search(__import__('os'))")
        'passes positional arguments'
    """
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return f"is not a Python call ({type(exc).__name__})"
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return "is not a call of a tool name"
    if node.args:
        return "passes positional arguments"
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            return "unpacks arguments with **"
        if keyword.arg in arguments:
            return f"gives {keyword.arg!r} twice"
        try:
            arguments[keyword.arg] = _literal(keyword.value, 0)
        except (ValueError, RecursionError) as exc:
            return f"gives {keyword.arg!r} a value that is not a literal ({exc})"
    return node.func.id, arguments


def literal_value(text: str) -> Any:
    """A Python literal's value (``True``, ``['a', 'b']``, ``None``), read by ``ast``.

    The same literals a pythonic call's values may be; nothing is evaluated.

    Raises:
        ValueError: the text is not one such literal.

    Example:
        >>> literal_value("{'a': [True, None], 'b': -1.5}")
        {'a': [True, None], 'b': -1.5}
    """
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        raise ValueError(f"not a Python literal ({type(exc).__name__})") from None
    try:
        return _literal(node, 0)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _literal(node: ast.expr, depth: int) -> Any:
    """The value of a literal node (never evaluated); ValueError for anything else."""
    if depth > _MAX_DEPTH:
        raise ValueError("nested too deeply")
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, (str, bool, int, float)):
            return value
        raise ValueError(type(value).__name__)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_literal(item, depth + 1) for item in node.elts]
    if isinstance(node, ast.Dict):
        result: dict[Any, Any] = {}
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            if key_node is None:
                raise ValueError("** in a dict")
            key = _literal(key_node, depth + 1)
            if isinstance(key, (list, dict)):
                raise ValueError("a dict key that is not a scalar")
            result[key] = _literal(value_node, depth + 1)
        return result
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float))
        and not isinstance(node.operand.value, bool)
    ):
        number = node.operand.value
        return -number if isinstance(node.op, ast.USub) else number
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    raise ValueError(type(node).__name__)


def _python_literal(value: Any) -> str:
    """A JSON-able value as Python source: what :func:`_literal` reads back."""
    if isinstance(value, dict):
        items = ", ".join(f"{_python_literal(k)}: {_python_literal(v)}" for k, v in value.items())
        return "{" + items + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_python_literal(v) for v in value) + "]"
    return repr(value)  # str, int, float, bool, None


def format_pythonic_call(calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """Write calls as a Llama 4 pythonic list, ``[f(a=1), g(b='x')]``.

    Example:
        >>> print(format_pythonic_call([("search", {"query": "x", "max_results": 3})]))
        [search(query='x', max_results=3)]
    """
    written = []
    for name, args in calls:
        values = to_jsonable_python(dict(args))
        params = ", ".join(f"{key}={_python_literal(value)}" for key, value in values.items())
        written.append(f"{name}({params})")
    return "[" + ", ".join(written) + "]"
