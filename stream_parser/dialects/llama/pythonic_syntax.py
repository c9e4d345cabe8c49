r"""Pythonic calls' syntax: one call ``name(param=value, ...)`` parsed whole, and written.

:func:`parse_pythonic_call` reads one call once its text is whole (Python literals only,
by ``ast``: nothing is evaluated); :func:`format_pythonic_call` writes one.  The
``llama`` and ``pythonic`` dialects share them (:mod:`.pythonic` streams the lists).
Models write what Python does not parse, and a call is read as they meant it: a raw line
break inside a string (``command='cat > f.py << EOF\n…'``) is the character, a parameter
named with a Python keyword (``memory_get(from=1)``) is that name, and a JSON call
object (``{"name": …, "arguments": {…}}``, which LFM2's lists and Llama 4 write at
times) is that call.
"""

from __future__ import annotations

import ast
import json
import keyword
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
    text = text.strip()
    if text.startswith("{"):
        return _json_call(text)
    renamed: dict[str, str] = {}
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        # What a model writes that Python does not parse: retried once, repaired.
        repaired, renamed = _repair(text)
        try:
            node = ast.parse(repaired, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return f"is not a Python call ({type(exc).__name__})"
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return f"is not a Python call ({type(exc).__name__})"
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return "is not a call of a tool name"
    if node.args:
        return "passes positional arguments"
    arguments: dict[str, Any] = {}
    for argument in node.keywords:
        if argument.arg is None:
            return "unpacks arguments with **"
        name = renamed.get(argument.arg, argument.arg)
        if name in arguments:
            return f"gives {name!r} twice"
        try:
            arguments[name] = _literal(argument.value, 0)
        except (ValueError, RecursionError) as exc:
            return f"gives {name!r} a value that is not a literal ({exc})"
    return node.func.id, arguments


def _json_call(text: str) -> tuple[str, dict[str, Any]] | str:
    """A JSON call object ``{"name": …, "arguments": {…}}`` (or ``"parameters"``)."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        try:
            value = literal_value(text)
        except ValueError:
            return "is neither a Python call nor a JSON call object"
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return "is a JSON object without a tool name"
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):  # arguments given as a JSON string
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return "gives arguments that are not a JSON object"
    if not isinstance(arguments, dict):
        return "gives arguments that are not an object"
    return value["name"], arguments


def _repair(text: str) -> tuple[str, dict[str, str]]:
    """``text`` with raw line breaks in strings escaped and keyword names renamed.

    A single-quoted or double-quoted string cannot hold a raw line break in Python,
    and a keyword cannot name an argument; models write both.  One pass outside and
    inside strings (a backslash escapes the next character); returns the repaired text
    and the new names -> the names written.
    """
    out: list[str] = []
    renamed: dict[str, str] = {}
    quote = ""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\" and i + 1 < n:
                out.append(text[i : i + 2])
                i += 2
                continue
            if c == quote:
                quote = ""
            out.append({"\n": "\\n", "\r": "\\r"}.get(c, c))
            i += 1
            continue
        if c in "\"'":
            if text.startswith(c * 3, i):  # a triple-quoted string may hold line breaks
                end = text.find(c * 3, i + 3)
                end = n if end < 0 else end + 3
                out.append(text[i:end])
                i = end
                continue
            quote = c
        elif c.isalpha() or c == "_":
            j = i
            while j < n and (text[j].isalnum() or text[j] == "_"):
                j += 1
            word = text[i:j]
            k = j
            while k < n and text[k] in " \t":
                k += 1
            if keyword.iskeyword(word) and text.startswith("=", k) and not text.startswith("==", k):
                new = f"_kw_{word}_"
                renamed[new] = word
                word = new
            out.append(word)
            i = j
            continue
        out.append(c)
        i += 1
    return "".join(out), renamed


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


def _python_literal(value: Any, double_quoted: bool = False) -> str:
    """A JSON-able value as Python source: what :func:`_literal` reads back."""
    if isinstance(value, dict):
        items = ", ".join(
            f"{_python_literal(k, double_quoted)}: {_python_literal(v, double_quoted)}"
            for k, v in value.items()
        )
        return "{" + items + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_python_literal(v, double_quoted) for v in value) + "]"
    if double_quoted and isinstance(value, str):
        # JSON's escapes are Python's too; a lone surrogate cannot be written as itself.
        lone = any("\ud800" <= c <= "\udfff" for c in value) if not value.isascii() else False
        return json.dumps(value, ensure_ascii=lone)
    return repr(value)  # str, int, float, bool, None


def format_pythonic_call(
    calls: Sequence[tuple[str, Mapping[str, Any]]], *, double_quoted: bool = False
) -> str:
    """Write calls as a Llama 4 pythonic list, ``[f(a=1), g(b='x')]``.

    ``double_quoted``: strings in double quotes with JSON's escapes (also Python's),
    which a reader follows as a JSON string; else as ``repr`` writes them.

    Example:
        >>> print(format_pythonic_call([("search", {"query": "x", "max_results": 3})]))
        [search(query='x', max_results=3)]
        >>> print(format_pythonic_call([("search", {"query": "it's"})], double_quoted=True))
        [search(query="it's")]
    """
    written = []
    for name, args in calls:
        values = to_jsonable_python(dict(args))
        params = ", ".join(
            f"{key}={_python_literal(value, double_quoted)}" for key, value in values.items()
        )
        written.append(f"{name}({params})")
    return "[" + ", ".join(written) + "]"
