r"""The gemma4 dialect: Gemma 4's own call syntax between ``<|tool_call>`` tokens.

Written by Gemma 4 (its chat template renders history calls the same way)::

    <|tool_call>call:write_file{content:<|"|>print("hi")<|"|>,mode:420}<tool_call|>

After ``call:`` and the tool's name comes one object in Gemma's value syntax: keys are
bare (``path:``), strings sit between two ``<|"|>`` tokens and hold anything else raw
(quotes, braces, newlines, even ``<tool_call|>``), numbers, ``true``, ``false`` and
``null`` are bare, objects ``{k:v,...}`` and arrays ``[a,b]`` nest in the same syntax.
Several calls follow each other without separators.  Reasoning is written as
``<|channel>thought\n...\n<channel|>``: the dialect registers ``<|channel>`` and
``<channel|>`` as its thinking tags (:data:`GEMMA4_THINKING`, used unless
``ParserConfig.thinking_tags`` is set) and ``thought\n`` and the ``\n`` before the
closing token as framing (:data:`GEMMA4_FRAMING`), so the thinking content is what the
model meant.

Theory of operation
-------------------

:class:`Gemma4Plugin` claims ``<|tool_call>`` (a special token, so it opens a block
wherever it appears) and ``<tool_call|>``; each block is one call, read by a
:class:`Gemma4Reader`:

* **Strings.**  Outside strings the syntax has no ``<|"|>`` of its own, so the reader is
  inside a string exactly when it has seen an odd number of ``<|"|>`` tokens.  It counts
  them as the pieces arrive, keeping the last four characters of the previous piece so
  that a token cut between two pieces is counted once (the token cannot overlap
  itself).  :meth:`Gemma4Reader.accepts_end` answers from that count: a
  ``<tool_call|>`` inside a string is content.
* **Name.**  The characters up to the first ``{`` are the head, ``call:NAME``.  When the
  ``{`` arrives the call is announced
  (:class:`~stream_parser.core.events.ToolCallStartEvent`, for a registered tool); a
  head longer than 256 characters is not followed.
* **Arguments.**  From that ``{`` on, the content is streamed verbatim as
  :class:`~stream_parser.core.events.ToolArgumentsDeltaEvent`\ s.

Every character is looked at a bounded number of times while streaming, and once more
when the block closes: then the whole content is parsed once (a recursive descent that
never backtracks, nested at most 64 deep) into Python values, converted by the tool's
field types and validated by its model.  The outcome is a
:class:`~stream_parser.core.events.ToolCallEvent`, or an error and the block's raw text:

* ``malformed_tool``: the content is not ``call:NAME{...}`` in this syntax: a string
  without its closing ``<|"|>``, a bare value that is not a number, ``true``, ``false``
  or ``null``, a key given twice, text after the object, the round form
  ``call:NAME(...)`` some models write, an opener without ``call``;
* ``unknown_tool``: the name is not registered;
* ``invalid_params``: the arguments fail validation.

Values are converted by the tool's fields at the top level: a bare scalar given for a
``str`` field is its text (``zip:02139`` reads ``"02139"``, not ``2139``), and a string
given for a field of another type is converted by that type
(:func:`~stream_parser.schema.coerce.coerce_value`: ``<|"|>[1, 2]<|"|>`` for a list).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from ..core.dialect_registry import Framing, ThinkingFormat
from ..core.events import (
    ErrorType,
    ParseEvent,
    Span,
    ToolArgumentsDeltaEvent,
    ToolCallStartEvent,
    _fast_arguments_delta,
)
from ..core.kit import register
from ..core.plugins import FastData, ParsePlugin, PluginBlock
from ..core.value_run import ValueRun
from ..schema.coerce import coerce_value
from ._base import BlockReader, CallContext, Dialect, call_event, failure, validate_arguments
from ._toolcall import ReaderPlugin

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = [
    "CALL_END",
    "CALL_START",
    "CHANNEL_END",
    "CHANNEL_START",
    "GEMMA4_FRAMING",
    "GEMMA4_THINKING",
    "STRING_DELIMITER",
    "Gemma4Dialect",
    "Gemma4Plugin",
    "Gemma4Reader",
    "parse_call",
]

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


def _convert(model: type[BaseModel], arguments: dict[str, object], scalars: dict[str, str]) -> None:
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


class Gemma4Reader(BlockReader):
    """Reads one ``<|tool_call>`` block: ``call:NAME{...}``."""

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self._tail = ""  # the last characters fed, for a <|"|> cut between pieces
        self._in_string = False
        self._head: list[str] = []  # "call:NAME" before the "{"
        self._head_size = 0
        self._head_start = -1
        self._phase = 0  # 0 head, 1 arguments, 2 not followed
        self._name = ""
        self._deltas = call.emit_deltas
        # Fixed while the fast path runs (see fast_path): whether its chunks stream as
        # deltas (the call's index is the run's).
        self._stream = False
        # The arguments, which the core streams itself while a chunk without "<" cannot
        # hold a <|"|> token: armed when they stream and the tail holds no "<".
        self._run = ValueRun(_RUN_STOP, arguments=True)

    def feed(self, data: str, start: int, out: list[ParseEvent]) -> None:
        """Count string tokens; announce the call at its ``{``; stream the arguments."""
        text = self._tail + data
        if text.count(STRING_DELIMITER) % 2:
            self._in_string = not self._in_string
        self._tail = text[-_KEEP:]
        if self._phase == 1:
            self._delta(data, start, out)
            return
        if self._phase != 0:
            return
        if self._head_start < 0:
            self._head_start = start
        brace = data.find("{")
        head = data if brace < 0 else data[:brace]
        self._head.append(head)
        self._head_size += len(head)
        if self._head_size > _MAX_HEAD:
            self._phase = 2
            return
        if brace < 0:
            return
        self._phase = 1
        self._announce((self._head_start, start + brace), out)
        self._run.open(self._name, "", self.call.call_index, start + brace)
        self._delta(data[brace:], start + brace, out)

    def fast_path(self) -> FastData | None:
        """In the arguments, every chunk is a delta; only string tokens are counted.

        Inside a string, ``<tool_call|>`` is content (:meth:`accepts_end`) as long as
        the string goes on: a chunk that ends it is left to the slow path.
        """
        if self._phase != 1:
            return None
        self._stream = self.announced and self._deltas
        self._arm()
        if self._in_string:
            return None, self._plain_in_string, True
        return None, self._plain, False

    def _plain_in_string(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`_plain` inside a string, for a chunk that does not end it."""
        tail = self._tail
        # A delimiter cut between the pieces begins in the tail, with its "<".
        if STRING_DELIMITER in data or ("<" in tail and STRING_DELIMITER in tail + data):
            return False
        self._tail = data[-_KEEP:] if len(data) >= _KEEP else (tail + data)[-_KEEP:]
        if self._stream:
            span = (start, start + len(data))
            out.append(_fast_arguments_delta(self._name, data, self._run.call_index, None, span))
        self._arm()
        return True

    def value_run(self) -> ValueRun | None:
        """The arguments: the core streams their chunks without ``<`` while it is armed."""
        return self._run

    def _arm(self) -> None:
        """Arm the run: a chunk without ``<`` holds no token and streams as it is.

        Unless the tail holds the start of a ``<|"|>`` cut between the pieces.  The run
        leaves the tail as it is: without a ``<`` it cannot begin a token, as if empty.
        """
        self._run.armed = self._stream and "<" not in self._tail

    def _plain(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`feed` in the arguments."""
        text = self._tail + data
        if text.count(STRING_DELIMITER) % 2:
            self._in_string = not self._in_string
        self._tail = text[-_KEEP:]
        if self._stream:
            span = (start, start + len(data))
            out.append(_fast_arguments_delta(self._name, data, self._run.call_index, None, span))
        self._arm()
        return True

    def _announce(self, span: Span, out: list[ParseEvent]) -> None:
        head = "".join(self._head).strip(_WS)
        self._head = []
        if not head.startswith("call:"):
            return
        name = head[len("call:") :].strip(_WS)
        if name not in self.call.tool_registry or not _NAME.fullmatch(name):
            return
        self._name = name
        self.announced = True
        out.append(ToolCallStartEvent(tool_name=name, call_index=self.call.call_index, span=span))

    def _delta(self, piece: str, start: int, out: list[ParseEvent]) -> None:
        if piece and self.announced and self.call.emit_deltas:
            out.append(
                ToolArgumentsDeltaEvent(
                    tool_name=self._name,
                    delta=piece,
                    call_index=self.call.call_index,
                    span=(start, start + len(piece)),
                )
            )

    def accepts_end(self) -> bool:
        """A ``<tool_call|>`` inside a string is content; anywhere else it ends the call."""
        return not self._in_string

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """Parse the content once and validate the arguments with the tool's model."""
        try:
            name, arguments, scalars = parse_call(block.content)
        except ValueError as exc:
            return failure(
                ErrorType.MALFORMED_TOOL,
                f"{exc}; expected {_EXPECTED}; the call is not executed",
                block,
                call_index=self.error_index,
            )
        model = self.call.tool_registry.get(name)
        if model is None:
            known = ", ".join(sorted(self.call.tool_registry)) or "none"
            return failure(
                ErrorType.UNKNOWN_TOOL,
                f"unknown tool {name!r} (registered: {known}); the call is not executed",
                block,
            )
        _convert(model, arguments, scalars)
        result = validate_arguments(
            name, model, arguments, validate=self.call.config.enable_xml_validation
        )
        return call_event(self.call, name, result, block)


_EXPECTED: Final = f"call:NAME{{key:{STRING_DELIMITER}text{STRING_DELIMITER},n:1}}"


class Gemma4Plugin(ReaderPlugin):
    """Reads Gemma 4's ``<|tool_call>call:NAME{...}<tool_call|>`` blocks.

    ``ParserConfig(dialect="gemma4")`` registers one for you.  ``<|tool_response>``
    right after a call (the chat template's marker, the model's stop token, when a
    server leaves it in the text) belongs to the call's span.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> parser = StreamToolParser({"read_file": ReadFile}, plugins=[Gemma4Plugin()])
        >>> text = '<|tool_call>call:read_file{path:<|"|>a.py<|"|>}<tool_call|>'
        >>> [e.kind for e in parser.feed(text) + parser.close()]
        ['tool_call_start', 'tool_arguments_delta', 'tool_call']
    """

    name = "gemma4"
    start_tags: tuple[str, ...] = (CALL_START,)
    end_tag = CALL_END
    trailing: tuple[str, ...] = (TOOL_RESPONSE,)

    reader = Gemma4Reader


# --- writing ---------------------------------------------------------------------------------


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


def _write_value(value: Any) -> str:
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
        members = (f"{_write_key(k)}:{_write_value(v)}" for k, v in _sorted_items(value))
        return "{" + ",".join(members) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_write_value(item) for item in value) + "]"
    raise ValueError(f"{type(value).__name__} cannot be written in the gemma4 format")


#: The framing of the Gemma 4 chat template around reasoning:
#: ``<|channel>thought\n…\n<channel|>``.
GEMMA4_FRAMING: Final = Framing(thinking_open="thought\n", thinking_close="\n")


#: The reasoning format of Gemma 4: ``<|channel>`` ... ``<channel|>`` (its framing above).
GEMMA4_THINKING: Final = ThinkingFormat(((CHANNEL_START, CHANNEL_END),))


class Gemma4Dialect(Dialect):
    """``<|tool_call>call:NAME{key:<|"|>text<|"|>,n:1}<tool_call|>`` (Gemma 4).

    Example:
        >>> print(Gemma4Dialect().format_call("read_file", {"path": "a.py", "limit": 10}))
        <|tool_call>call:read_file{limit:10,path:<|"|>a.py<|"|>}<tool_call|>
    """

    name = "gemma4"
    title = "call:NAME{key:value} between <|tool_call> and <tool_call|> tokens (Gemma 4)"
    plugin_key = "gemma4"
    framing = GEMMA4_FRAMING
    thinking = GEMMA4_THINKING
    special_tokens = True  # its markers are special tokens: servers drop them unless asked

    def make_plugin(self, names: tuple[str, ...]) -> Sequence[ParsePlugin]:
        """A :class:`Gemma4Plugin`."""
        return [Gemma4Plugin()]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write the call as the Gemma 4 chat template renders it.

        Members sorted by key (case ignored), keys bare at every depth, strings between
        ``<|"|>`` tokens, no whitespace.  Values that are not JSON types (models, enums,
        paths, dates) are written as their JSON form; None as ``null``.

        Raises:
            ValueError: the tool's name is not a plain name, or a string holds
                ``<|"|>`` (which would end it), or a number is not finite.
        """
        if not _NAME.fullmatch(tool_name):
            raise ValueError(f"the tool name {tool_name!r} cannot be written in the gemma4 format")
        jsonable = to_jsonable_python(dict(args), by_alias=True)
        return f"{CALL_START}call:{tool_name}{_write_value(jsonable)}{CALL_END}"

    def _instructions(self) -> str:
        return "gemma4_instructions"


register(Gemma4Dialect().record())
