"""The gemma4 call syntax: its values read and written (``call:NAME{key:<|"|>text<|"|>}``).

Kept apart from the reader (:mod:`stream_parser.dialects.gemma4`), which streams a
call's arguments and asks this module for the whole call once the block is closed
(:func:`parse_call`), and from the dialect, which writes calls with :func:`write_value`.
The syntax is JSON's, with bare keys, ``<|"|>`` around strings and bare scalars.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any, Final

from pydantic import BaseModel

from ..schema.coerce import coerce_value

__all__ = ["CALL_END", "CALL_START", "STRING_DELIMITER", "convert", "parse_call", "write_value"]

CALL_START: Final = "<|tool_call>"
"""The token that opens a call."""
CALL_END: Final = "<tool_call|>"
"""The token that closes a call."""
STRING_DELIMITER: Final = '<|"|>'
"""The token on both sides of a string value."""
_KEEP: Final = len(STRING_DELIMITER) - 1
"""How many of the last characters fed are kept, for a delimiter cut between pieces."""
_RUN_STOP: Final = "<"
"""The first character of every token: a chunk without it holds none."""
CHANNEL_START: Final = "<|channel>"
"""The token that opens reasoning (``<|channel>thought\\n``)."""
CHANNEL_END: Final = "<channel|>"
"""The token that closes reasoning."""
TOOL_RESPONSE: Final = "<|tool_response>"
"""What the chat template writes after a turn's calls (the model's stop token)."""

_MAX_HEAD: Final = 256  # longest "call:NAME" followed while streaming
_MAX_DEPTH: Final = 64  # deepest nesting of objects and arrays read
_WS: Final = " \t\r\n"
_NUMBER: Final = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_KEYWORDS: Final[Mapping[str, object]] = {
    "true": True,
    "false": False,
    "null": None,
    # The chat template renders Python's own spellings when it is given them.
    "True": True,
    "False": False,
    "None": None,
}
_NAME: Final = re.compile(r"[^\s{}()\[\]<>:,\"']+")
_KEY_FORBIDDEN: Final = frozenset('{}[],:"')


class _Malformed(Exception):
    """Internal: the content is not in the syntax (never escapes this module)."""


class _Scalar:
    """A bare value with its text, so that a ``str`` field can take the text itself."""

    __slots__ = ("text", "value")

    def __init__(self, text: str, value: object) -> None:
        self.text = text
        self.value = value


class _ValueReader:
    """Reads Gemma's value syntax from a complete string, left to right, once."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def skip_ws(self) -> None:
        text, pos, n = self.text, self.pos, len(self.text)
        while pos < n and text[pos] in _WS:
            pos += 1
        self.pos = pos

    def value(self, depth: int, keep_scalars: bool = False) -> object:
        """The value at the current position (whitespace before it skipped)."""
        if depth > _MAX_DEPTH:
            raise _Malformed(f"values are nested more than {_MAX_DEPTH} deep")
        self.skip_ws()
        text, pos = self.text, self.pos
        if text.startswith(STRING_DELIMITER, pos):
            return self.string()
        if pos >= len(text):
            raise _Malformed("a value is missing at the end")
        char = text[pos]
        if char == "{":
            return self.read_object(depth)
        if char == "[":
            return self.read_array(depth)
        scalar = self.scalar()
        return scalar if keep_scalars else scalar.value

    def string(self) -> str:
        start = self.pos + len(STRING_DELIMITER)
        end = self.text.find(STRING_DELIMITER, start)
        if end < 0:
            raise _Malformed(f"a string has no closing {STRING_DELIMITER}")
        self.pos = end + len(STRING_DELIMITER)
        return self.text[start:end]

    def scalar(self) -> _Scalar:
        text, start, n = self.text, self.pos, len(self.text)
        pos = start
        while pos < n and text[pos] not in ",}]" and not text.startswith("<|", pos):
            pos += 1
        token = text[start:pos].strip(_WS)
        self.pos = pos
        if token in _KEYWORDS:
            return _Scalar(token, _KEYWORDS[token])
        if _NUMBER.fullmatch(token):
            number = json.loads(token)
            if isinstance(number, float) and not math.isfinite(number):
                raise _Malformed(f"the number {token!r} is out of range")
            return _Scalar(token, number)
        shown = token if len(token) <= 30 else token[:30] + "..."
        raise _Malformed(
            f"{shown!r} is not a value (strings are written between {STRING_DELIMITER} tokens)"
        )

    def key(self) -> str:
        self.skip_ws()
        text, pos = self.text, self.pos
        if text.startswith(STRING_DELIMITER, pos):
            key = self.string()
            self.skip_ws()
        else:
            colon = text.find(":", pos)
            end = len(text) if colon < 0 else colon
            key = text[pos:end].strip(_WS)
            if colon < 0 or not key or any(c in _KEY_FORBIDDEN for c in key) or "<|" in key:
                shown = text[pos : pos + 30]
                raise _Malformed(f"expected a key and ':' at {shown!r}")
            self.pos = end
        if not text.startswith(":", self.pos):
            raise _Malformed(f"the key {key!r} is not followed by ':'")
        self.pos += 1
        return key

    def read_object(self, depth: int, scalars: dict[str, str] | None = None) -> dict[str, object]:
        """An object; ``scalars`` (top level) receives the text of bare values by key."""
        self.pos += 1  # "{"
        result: dict[str, object] = {}
        self.skip_ws()
        if self.text.startswith("}", self.pos):
            self.pos += 1
            return result
        while True:
            key = self.key()
            if key in result:
                raise _Malformed(f"the key {key!r} is given twice")
            value = self.value(depth + 1, keep_scalars=scalars is not None)
            if isinstance(value, _Scalar):
                if scalars is not None:
                    scalars[key] = value.text
                value = value.value
            result[key] = value
            self.skip_ws()
            char = self.text[self.pos : self.pos + 1]
            self.pos += 1
            if char == "}":
                return result
            if char != ",":
                raise _Malformed("an object's members must be separated by ',' and end with '}'")

    def read_array(self, depth: int) -> list[object]:
        self.pos += 1  # "["
        result: list[object] = []
        self.skip_ws()
        if self.text.startswith("]", self.pos):
            self.pos += 1
            return result
        while True:
            result.append(self.value(depth + 1))
            self.skip_ws()
            char = self.text[self.pos : self.pos + 1]
            self.pos += 1
            if char == "]":
                return result
            if char != ",":
                raise _Malformed("an array's elements must be separated by ',' and end with ']'")


def _split_head(content: str) -> tuple[str, int]:
    """The tool name of ``call:NAME{`` and where its ``{`` is.

    Raises:
        _Malformed: the content does not open with ``call:NAME{``.
    """
    brace = content.find("{")
    head = content[: len(content) if brace < 0 else brace].strip(_WS)
    if not head.startswith("call:"):
        raise _Malformed("a call must start with 'call:' and the tool's name")
    name = head[len("call:") :].strip(_WS)
    if brace < 0 or not _NAME.fullmatch(name):
        raise _Malformed(f"a call must be 'call:NAME{{...}}', got {head[:40]!r}")
    return name, brace


def parse_call(content: str) -> tuple[str, dict[str, object], dict[str, str]]:
    """Read the content of one call block: ``call:NAME{key:value,...}``.

    Args:
        content: the text between ``<|tool_call>`` and ``<tool_call|>``.

    Returns:
        The tool's name, its arguments as Python values, and the text of the arguments
        given as bare values (numbers, ``true``...) by key, for fields that want text.

    Raises:
        ValueError: the content is not in the syntax; the message says why.

    Example:
        >>> parse_call('call:search{query:<|"|>a, b<|"|>,limit:5}')[:2]
        ('search', {'query': 'a, b', 'limit': 5})
    """
    try:
        name, brace = _split_head(content)
        reader = _ValueReader(content)
        reader.pos = brace
        scalars: dict[str, str] = {}
        arguments = reader.read_object(0, scalars)
        reader.skip_ws()
        if reader.pos < len(content):
            rest = content[reader.pos : reader.pos + 20]
            raise _Malformed(f"the call has text after its arguments: {rest!r}")
    except _Malformed as exc:
        raise ValueError(str(exc)) from None
    return name, arguments, scalars


def _field_types(model: type[BaseModel]) -> dict[str, Any]:
    """Argument name (and alias) -> the field's annotation."""
    types: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        types[name] = info.annotation
        if info.alias:
            types[info.alias] = info.annotation
    return types


def convert(model: type[BaseModel], arguments: dict[str, object], scalars: dict[str, str]) -> None:
    """Convert top-level values by the fields' types, in place (see the module's notes)."""
    types = _field_types(model)
    for key, value in arguments.items():
        annotation = types.get(key)
        if annotation is None or annotation is Any:
            continue
        if annotation is str:
            if key in scalars and value is not None:
                arguments[key] = scalars[key]
        elif isinstance(value, str):
            try:
                arguments[key] = coerce_value(value, annotation)
            except Exception:  # a value that cannot be converted is validated as it is
                continue


def _sorted_items(mapping: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """Members in the chat template's order (``dictsort``: keys, case ignored)."""
    return sorted(mapping.items(), key=lambda item: str(item[0]).lower())


def _write_key(key: object) -> str:
    """A key bare, as the template writes it; between string tokens when it must be."""
    text = str(key)
    if STRING_DELIMITER in text:
        raise ValueError(f"the key {text!r} holds {STRING_DELIMITER}, which ends a string")
    bare = (
        text
        and text == text.strip(_WS)
        and "<|" not in text
        and not any(c in _KEY_FORBIDDEN for c in text)
    )
    return text if bare else f"{STRING_DELIMITER}{text}{STRING_DELIMITER}"


def write_value(value: Any) -> str:
    """A JSON-compatible value in Gemma's syntax."""
    if isinstance(value, str):
        if STRING_DELIMITER in value:
            raise ValueError(
                f"a string holding {STRING_DELIMITER} cannot be written in the gemma4 "
                "format: the token ends the string"
            )
        return f"{STRING_DELIMITER}{value}{STRING_DELIMITER}"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"{value!r} cannot be written in the gemma4 format")
        return json.dumps(value)
    if isinstance(value, Mapping):
        members = (f"{_write_key(k)}:{write_value(v)}" for k, v in _sorted_items(value))
        return "{" + ",".join(members) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(write_value(item) for item in value) + "]"
    raise ValueError(f"{type(value).__name__} cannot be written in the gemma4 format")
