r"""Pythonic calls' syntax: one call ``name(param=value, ...)`` parsed whole, and written.

:func:`parse_pythonic_call` reads one call once its text is whole (Python literals only,
by ``ast``: nothing is evaluated); :func:`format_pythonic_call` writes one.  The
``llama`` and ``pythonic`` dialects share them (:mod:`.pythonic` streams the lists).
Models write what Python does not parse, and a call is read as they meant it: a raw line
break inside a string (``command='cat > f.py << EOF\n…'``) is the character, a parameter
named with a Python keyword (``memory_get(from=1)``) is that name, and a JSON call
object (``{"name": …, "arguments": {…}}``, which LFM2's lists and Llama 4 write at
times) is that call.

A tool's name is what is written before the ``(``: 1 to 256 letters, digits, ``_``,
``.``, ``-`` or ``/`` (:data:`PYTHONIC_NAME_PATTERN`), so MCP's names (``get-weather``,
``github.create_issue``), which Python would read as a subtraction or an attribute,
and every valid tool name read back as written: the name is split off and only the
argument list is parsed.  Other text before the ``(`` is parsed whole, as Python.

Theory of operation.  ``ast`` holds a string literal's source and value several times
over in its tokens and tree (about 12 bytes per byte of a large value), so the strings
are read apart first (:func:`_lift_strings`): each plain string literal is read by
JSON's decoder where Python and JSON read it alike (a double-quoted literal without
``\/`` or a surrogate's ``\u``), else by a table of Python's escapes; ``ast`` then
parses the call with a short name standing in for each string (the skeleton).  What
that path does not read exactly as ``ast`` would (a comment, a triple-quoted or
prefixed string, an octal, ``\N{…}``, ``\U…`` or line-continuation escape, a NUL or a
lone surrogate in the text) and every failure, for its message, goes through ``ast``
whole as before: the two paths give the same result, the first at a few bytes per byte.
"""

from __future__ import annotations

import ast
import json
import keyword
import re
from collections.abc import Mapping, Sequence
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any, Final

from pydantic_core import to_jsonable_python

from ...errors import ConfigError

__all__ = [
    "PYTHONIC_NAME_CHARS",
    "PYTHONIC_NAME_MAX",
    "PYTHONIC_NAME_PATTERN",
    "format_pythonic_call",
    "is_pythonic_name",
    "literal_value",
    "parse_pythonic_call",
]

PYTHONIC_NAME_CHARS: Final = "_.-/"
"""The characters a pythonic call's tool name may hold besides letters and digits."""

PYTHONIC_NAME_MAX: Final = 256
"""The longest tool name a pythonic call is read with."""

PYTHONIC_NAME_PATTERN: Final = rf"[\w.\-/]{{1,{PYTHONIC_NAME_MAX}}}"
"""A tool name a pythonic call carries, as a regular expression (without anchors)."""

_PYTHONIC_NAME: Final = re.compile(PYTHONIC_NAME_PATTERN + r"\Z")
# A call's head: its name, whitespace, the argument list's "(" (the name is group 1).
_CALL_HEAD: Final = re.compile(rf"({PYTHONIC_NAME_PATTERN})[ \t\r\n]*\(")
# What ``ast`` parses in the name's place: only the argument list is Python's.
_CALLEE: Final = "_callee_"

_MAX_DEPTH: Final = 64  # nesting of a pythonic argument value
_JSON_NAMES: Final[Mapping[str, object]] = {"true": True, "false": False, "null": None}

# The name a lifted string stands in for in the skeleton; a text holding it is read whole.
_LIFTED: Final = "_lifted_str_"
_OUTSIDE_STRINGS: Final = re.compile(r"""["'#]""")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
# An escape (after an even run of backslashes) that JSON reads otherwise than Python:
# JSON drops the backslash of ``\/`` and joins a surrogate pair's two ``\u`` escapes.
_JSON_APART: Final = re.compile(r"(?<!\\)(?:\\\\)*\\(?:/|u[dD][89a-fA-F])")
_SURROGATE_ESCAPE: Final = re.compile(r"\\u[dD][89a-fA-F]")  # a cheap first look for it
# An escape the table below does not read: left to ``ast``.
_AST_ESCAPE: Final = re.compile(
    r"(?<!\\)(?:\\\\)*\\(?:[0-7NU\n\r]|u(?![0-9a-fA-F]{4})|x(?![0-9a-fA-F]{2}))"
)
_AST_ESCAPE_LOOK: Final = re.compile(r"\\[0-7NU\n\rux]")  # a cheap first look for one
_WINDOW: Final = 1 << 16  # characters of a literal unescaped at a time
_ESCAPE: Final = re.compile(r"\\(u[0-9a-fA-F]{4}|x[0-9a-fA-F]{2}|.)", re.S)
_ESCAPED: Final[Mapping[str, str]] = {
    **{c: c for c in "\\'\""},
    **{"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"},
}


def parse_pythonic_call(text: str) -> tuple[str, dict[str, Any]] | str:
    """One pythonic call ``name(a=1, b='x')``: its name and arguments, or why not.

    The name is the text before the ``(`` when it is a name of
    :data:`PYTHONIC_NAME_PATTERN` (``get-weather``, ``github.create_issue``); the
    argument list is parsed with :func:`ast.parse` and read node by node: only literal
    values are accepted, nothing is evaluated.  String values are read apart (see the
    module), so a large one costs a few bytes per byte.

    Example:
        >>> parse_pythonic_call("search(query='a b', max_results=-3, tags=[True, None])")
        ('search', {'query': 'a b', 'max_results': -3, 'tags': [True, None]})
        >>> parse_pythonic_call("get-weather(city='Paris')")
        ('get-weather', {'city': 'Paris'})
        >>> parse_pythonic_call("search(__import__('os'))")
        'passes positional arguments'
    """
    text = text.strip()
    if text.startswith("{"):
        return _json_call(text)
    head = _CALL_HEAD.match(text)
    # A name before the "(" is split off: ``ast`` reads the arguments of a stand-in name.
    # Else the text is read whole, as Python (for ``ast``'s own words, mostly).
    begin, prefix = (0, "") if head is None else (head.end(), _CALLEE + "(")
    lifted = _lift_strings(text, begin, prefix)
    parsed = None if lifted is None else _read_call(*lifted)
    if parsed is None or isinstance(parsed, str):
        # Read by ``ast`` alone: what the skeleton cannot read, and a failure's own words.
        parsed = _read_call(prefix + text[begin:], {})
    return parsed if head is None or isinstance(parsed, str) else (head.group(1), parsed[1])


def is_pythonic_name(name: object) -> bool:
    """Whether a pythonic call can carry the tool name ``name`` (and read it back).

    Example:
        >>> is_pythonic_name("get-weather"), is_pythonic_name("github.create_issue")
        (True, True)
        >>> is_pythonic_name("get weather"), is_pythonic_name("")
        (False, False)
    """
    return isinstance(name, str) and _PYTHONIC_NAME.match(name) is not None


def _read_call(source: str, strings: Mapping[str, str]) -> tuple[str, dict[str, Any]] | str:
    """The call in ``source``, where the names in ``strings`` stand for those strings."""
    renamed: dict[str, str] = {}
    try:
        node = ast.parse(source, mode="eval").body
    except SyntaxError as exc:
        # What a model writes that Python does not parse: retried once, repaired.
        repaired, renamed = _repair(source)
        try:
            node = ast.parse(repaired, mode="eval").body
        except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError):
            return f"is not a Python call ({type(exc).__name__})"
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return f"is not a Python call ({type(exc).__name__})"
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return "is not a call of a tool name"
    if node.func.id in strings:  # a string called: ``'x'(a=1)``
        return "is not a call of a tool name"
    if node.args:
        return "passes positional arguments"
    arguments: dict[str, Any] = {}
    for argument in node.keywords:
        if argument.arg is None:
            return "unpacks arguments with **"
        if argument.arg in strings:  # a string as a keyword: ``f('a'=1)``
            return "names an argument with a string"
        name = renamed.get(argument.arg, argument.arg)
        if name in arguments:
            return f"gives {name!r} twice"
        try:
            arguments[name] = _literal(argument.value, 0, strings)
        except (ValueError, RecursionError) as exc:
            return f"gives {name!r} a value that is not a literal ({exc})"
    return node.func.id, arguments


def _lift_strings(text: str, begin: int = 0, prefix: str = "") -> tuple[str, dict[str, str]] | None:
    """``text``'s skeleton (each string literal a name) and the names' strings, or None.

    The skeleton is ``prefix`` then ``text[begin:]``'s (a call's argument list after
    its stand-in name, without copying the text first).

    None where the skeleton could read otherwise than ``ast`` reads ``text`` whole: a
    comment or a triple-quoted, prefixed or unterminated string (whose quotes only
    Python's tokenizer places), an escape that :func:`_string_at` leaves to ``ast``,
    a NUL or a lone surrogate (``ast`` refuses both), or the stand-in name itself.  Each
    name stands between spaces, so it never joins a neighbouring token.
    """
    if "\x00" in text or _LIFTED in text or (not text.isascii() and _SURROGATE.search(text)):
        return None
    pieces: list[str] = [prefix]
    strings: dict[str, str] = {}
    pos = begin
    while (found := _OUTSIDE_STRINGS.search(text, pos)) is not None:
        start = found.start()
        quote = text[start]
        if quote == "#" or text.startswith(quote * 3, start):
            return None
        if start and (text[start - 1].isalnum() or text[start - 1] == "_"):
            return None  # r'…', b'…', f'…' (or no string at all)
        read = _string_at(text, start)
        if read is None:
            return None
        value, end = read
        name = f"{_LIFTED}{len(strings)}"
        strings[name] = value
        pieces += (text[pos:start], " ", name, " ")
        pos = end
    pieces.append(text[pos:])
    return "".join(pieces).strip(), strings


def _string_at(text: str, start: int) -> tuple[str, int] | None:
    r"""The value of the literal opening at ``text[start]`` and where it ends, or None.

    A raw line break inside is the character (as :func:`_repair` makes it).  None for
    an unterminated literal and for an escape left to ``ast``: octal, ``\N{…}``,
    ``\U…``, a line continuation, or a ``\x``/``\u`` without its hex digits.
    """
    if text[start] == '"':
        try:  # the common case, read in place by JSON's decoder, which finds its end too
            value, end = scanstring(text, start + 1, False)
        except ValueError:
            pass  # an escape JSON does not know (``\\'``, ``\\x41``, ``\\a``): the table
        else:
            if not _json_reads_apart(text, start + 1, end - 1):
                return value, end
    end = _string_end(text, start)
    if end < 0:
        return None
    body_start, body_end = start + 1, end - 1
    if text.find("\\", body_start, body_end) < 0:
        return text[body_start:body_end], end
    if (
        _AST_ESCAPE_LOOK.search(text, body_start, body_end) is not None
        and _AST_ESCAPE.search(text, body_start, body_end) is not None
    ):
        return None
    # By windows cut before an escape: a window's pieces (two per escape, about 4 bytes
    # per byte of a value dense with escapes) are joined before the next is split.
    windows: list[str] = []
    at = body_start
    while at < body_end:
        cut = _escape_at_or_after(text, min(at + _WINDOW, body_end), body_end)
        pieces = _ESCAPE.split(text[at:cut])  # text, escape, text, ..., text
        pieces[1::2] = [_ESCAPED.get(code) or _unescape(code) for code in pieces[1::2]]
        windows.append("".join(pieces))
        at = cut
    return "".join(windows), end


def _json_reads_apart(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` holds an escape that JSON reads otherwise than Python."""
    if text.find("\\/", start, end) < 0 and _SURROGATE_ESCAPE.search(text, start, end) is None:
        return False  # neither written: no need to pair the backslashes
    return _JSON_APART.search(text, start, end) is not None


def _string_end(text: str, start: int) -> int:
    """Where the string literal opening at ``text[start]`` ends (after its quote), or -1.

    Its quotes are found with ``str.find``, each checked for the backslashes before it
    (an odd run escapes it): a step per escaped quote, not per escape, and nothing kept.
    """
    quote = text[start]
    at = start
    while (at := text.find(quote, at + 1)) >= 0:
        backslash = at
        while text[backslash - 1] == "\\":
            backslash -= 1
        if (at - backslash) % 2 == 0:
            return at + 1
    return -1


def _escape_at_or_after(text: str, at: int, end: int) -> int:
    """The first backslash from ``at`` that starts an escape (or ``end``): a safe cut."""
    found = text.find("\\", at, end)
    if found < 0:
        return end
    run = found
    while text[run - 1] == "\\":
        run -= 1
    # An odd run before it: this backslash is escaped, and the escape ends after it.
    return found if (found - run) % 2 == 0 else found + 1


def _unescape(code: str) -> str:
    r"""The escape ``\<code>``'s character, where the table has none.

    ``uXXXX`` and ``xXX`` are their code points; an escape Python does not know (``\d``)
    keeps its backslash.
    """
    if len(code) > 1:
        return chr(int(code[1:], 16))
    return "\\" + code


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

    The same literals a pythonic call's values may be, read the same way (a raw line
    break inside a string is the character); nothing is evaluated.

    Raises:
        ValueError: the text is not one such literal.

    Example:
        >>> literal_value("{'a': [True, None], 'b': -1.5}")
        {'a': [True, None], 'b': -1.5}
    """
    text = text.strip()
    lifted = _lift_strings(text)
    if lifted is not None:
        try:
            return _literal_source(*lifted)
        except ValueError:
            pass  # read whole below, for the failure's own words
    return _literal_source(text, {})


def _literal_source(source: str, strings: Mapping[str, str]) -> Any:
    """The literal in ``source``, where the names in ``strings`` stand for those strings."""
    try:
        try:
            node = ast.parse(source, mode="eval").body
        except SyntaxError:  # a raw line break inside a string: the character
            node = ast.parse(_repair(source)[0], mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        raise ValueError(f"not a Python literal ({type(exc).__name__})") from None
    try:
        return _literal(node, 0, strings)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _literal(node: ast.expr, depth: int, strings: Mapping[str, str]) -> Any:
    """The value of a literal node (never evaluated); ValueError for anything else."""
    if depth > _MAX_DEPTH:
        raise ValueError("nested too deeply")
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, (str, bool, int, float)):
            return value
        raise ValueError(type(value).__name__)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_literal(item, depth + 1, strings) for item in node.elts]
    if isinstance(node, ast.Dict):
        result: dict[Any, Any] = {}
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            if key_node is None:
                raise ValueError("** in a dict")
            key = _literal(key_node, depth + 1, strings)
            if isinstance(key, (list, dict)):
                raise ValueError("a dict key that is not a scalar")
            result[key] = _literal(value_node, depth + 1, strings)
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
    if isinstance(node, ast.Name):
        if node.id in strings:
            return strings[node.id]
        if node.id in _JSON_NAMES:
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
    which a reader follows as a JSON string; else as ``repr`` writes them.  Names are
    written as they are (``get-weather(...)``), and :func:`parse_pythonic_call` reads
    them back.

    Raises:
        ConfigError: a tool name that a pythonic call cannot carry
            (:func:`is_pythonic_name`: a space, a bracket, a quote, nothing at all).

    Example:
        >>> print(format_pythonic_call([("search", {"query": "x", "max_results": 3})]))
        [search(query='x', max_results=3)]
        >>> print(format_pythonic_call([("search", {"query": "it's"})], double_quoted=True))
        [search(query="it's")]
    """
    written = []
    for name, args in calls:
        if not is_pythonic_name(name):
            raise ConfigError(
                f"tool {name!r} cannot be written as a pythonic call: a name there is "
                f"1 to {PYTHONIC_NAME_MAX} letters, digits, '_', '.', '-' or '/'"
            )
        values = to_jsonable_python(dict(args))
        params = ", ".join(
            f"{key}={_python_literal(value, double_quoted)}" for key, value in values.items()
        )
        written.append(f"{name}({params})")
    return "[" + ", ".join(written) + "]"
