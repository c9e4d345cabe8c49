r"""The hermes dialect: a JSON object inside ``<tool_call>`` tags.

Written by Hermes, Qwen 2.5, and many models whose chat templates follow them::

    <tool_call>
    {"name": "read_file", "arguments": {"path": "src/app.py"}}
    </tool_call>

Theory of operation
-------------------

:class:`HermesReader` follows the JSON structure of the block incrementally with the
core's :class:`~stream_parser.core.kit.JsonScanner`, so that no character is looked
at more than a bounded number of times (linear time):

* **String state.**  :meth:`HermesReader.accepts_end` answers from the scanner's
  :attr:`~stream_parser.core.kit.JsonScanner.in_string`: a ``</tool_call>`` inside
  a string is content, so ``{"content": "</tool_call>"}`` does not end the call.  Once
  the object has ended, or if the content is not an object, nothing more is followed.
* **Top-level members.**  The scanner reports each key of the object, where each value
  starts and where it ends.  The value of ``"name"`` (a string) is decoded when it
  ends: then the call is announced
  (:class:`~stream_parser.core.events.ToolCallStartEvent`, for a registered tool).  The
  value of ``"arguments"`` (or ``"parameters"``, as some templates write it) is streamed
  verbatim as :class:`~stream_parser.core.events.ToolArgumentsDeltaEvent`\ s, from its
  first character to its last, sliced from the pieces as they are fed (the scanner keeps
  no text); pieces that arrive before the name is known are held and announced with it,
  so the order of the keys does not matter.  A repeated ``"name"`` or ``"arguments"``
  key is not followed.

When the block closes, the whole content is parsed once as JSON (lenient
about raw control characters in strings, which models write) and the arguments are
validated by the tool's model.  The outcome is a
:class:`~stream_parser.core.events.ToolCallEvent`, or an error and the block's raw text.
There is one error for a call that cannot be read and one for arguments that were read
but are wrong:

* ``malformed_tool``: the arguments cannot be read.  The content is not valid JSON, or
  has text after its JSON object; it is not an object with a string ``"name"``;
  ``"name"`` or ``"arguments"`` is given twice; or ``"arguments"`` is not an object (a
  string holding a JSON object is accepted; missing or null means ``{}``);
* ``unknown_tool``: the name is not registered;
* ``invalid_params``: the arguments fail validation, with Pydantic's errors.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from pydantic_core import to_jsonable_python

from ..core.events import ErrorType, ParseEvent, ToolArgumentsDeltaEvent
from ..core.kit import (
    CallContext,
    FastData,
    JsonScanner,
    PluginBlock,
    Reader,
    ValueRun,
    failure,
    refuse_chunk,
    register,
)
from ._toolcall import ToolCallTagDialect

__all__ = ["ARGUMENT_KEYS", "HermesDialect", "HermesReader"]

ARGUMENT_KEYS: Final = frozenset({"arguments", "parameters"})
"""The top-level keys that hold a call's arguments."""


class HermesReader(Reader):
    """Reads one hermes block: ``{"name": ..., "arguments": {...}}``."""

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        # Only the structure is needed: the arguments are streamed from the fed pieces,
        # the name is held here.
        self._scanner = JsonScanner(keep_text=False)
        self._following = True  # False once the content is not an object, or after it
        self._role = ""  # "name" / "arguments" for the current member's value, else ""
        self._seen: set[str] = set()  # "name" / "arguments" keys met at depth 1
        self._duplicate = ""
        self._name: str | None = None
        self._name_from = -1  # where the name's string begins in the piece being fed
        self._name_pieces: list[str] = []
        # The arguments value: 0 not yet, 1 streaming, 2 done.
        self._capture = 0
        self._held: list[str] = []  # argument pieces that came before the name
        self._held_start = 0
        self._held_end = 0
        # What the fast path of the arguments reads (see ``fast_path``): the core streams
        # the chunks the scanner takes whole, armed while the arguments stream as deltas.
        self._deltas = call.emit_deltas
        self._run = ValueRun(scanner=self._scanner, arguments=True)
        self._json_end = -1  # where the object ended, in the content fed (see json_end)

    # --- what has been read ------------------------------------------------------------

    @property
    def name(self) -> str | None:
        """The call's ``"name"``, once its string has closed; ``None`` before.

        Example:
            >>> from stream_parser.core.config import ParserConfig
            >>> reader = HermesReader(CallContext.of({}, ParserConfig(), 0))
            >>> reader.feed('{"name": "read_fi', 0, [])
            >>> reader.name is None
            True
            >>> reader.feed('le", "arguments": {', 17, [])
            >>> reader.name, reader.is_call_shaped
            ('read_file', True)
        """
        return self._name

    @property
    def scanner(self) -> JsonScanner:
        """The scanner that follows the block's JSON (read it; do not feed it)."""
        return self._scanner

    @property
    def json_end(self) -> int:
        """Where the JSON object ended (just after its ``}``), or -1 while it goes on.

        An offset into all the content fed so far.  A reader that holds the object among
        other text (an element of an array) learns from it where the object stops.

        Example:
            >>> from stream_parser.core.config import ParserConfig
            >>> reader = HermesReader(CallContext.of({}, ParserConfig(), 0))
            >>> reader.feed('{"name": "f", "a', 0, [])
            >>> reader.json_end
            -1
            >>> reader.feed('rguments": {}}, {"name"', 16, [])
            >>> reader.json_end
            30
        """
        return self._json_end

    @property
    def is_call_shaped(self) -> bool:
        """Whether the object has shown a name and an ``"arguments"``/``"parameters"`` key.

        A JSON object with both reads as a tool call rather than as, say, a JSON answer
        that happens to have a ``"name"``; the arguments need not have arrived yet.
        """
        return self._name is not None and "arguments" in self._seen

    # --- streaming -----------------------------------------------------------------------

    def feed(self, data: str, start: int, out: list[ParseEvent]) -> None:
        """Follow the JSON structure of ``data``; stream the arguments once the name is known."""
        if not self._following:
            return
        base = self._scanner.position  # offset of ``data`` in the block's content
        capture_from = 0  # where the arguments piece of this data begins (if streaming)
        for mark in self._scanner.feed(data):
            kind = mark.kind
            if kind == "key":
                self._key(mark.key or "")
            elif kind == "value_start":
                i = mark.start - base
                if self._role == "arguments" and self._capture == 0:
                    self._capture = 1
                    self._held_start = self._held_end = start + i
                    capture_from = i
                elif self._role == "name" and self._name is None and data[i] == '"':
                    self._name_from = i
            elif kind == "member":
                end = mark.end - base
                if self._capture == 1 and self._role == "arguments":
                    self._capture = 2
                    self._arguments(data, capture_from, end, start, out)
                elif self._name_from >= 0:
                    self._name_pieces.append(data[self._name_from : end])
                    self._name_from = -1
                    raw = "".join(self._name_pieces)
                    self._name_pieces = []
                    self._name = _decode(raw[1:-1])
                    self._announce((start + end - len(raw), start + end), out)
                self._role = ""
            elif kind == "start":
                if data[mark.start - base] != "{":
                    self._following = False  # not an object: nothing more to follow
                    return
            elif kind == "end":
                self._following = False
                self._json_end = mark.end
        n = len(data)
        if self._capture == 1 and capture_from < n:
            self._arguments(data, capture_from, n, start, out)
        if self._name_from >= 0:
            self._name_pieces.append(data[self._name_from :])
            self._name_from = 0

    def fast_path(self) -> FastData | None:
        """Inside a string or a nested value, the scanner takes a chunk in one step.

        Inside a string, ``</tool_call>`` is content (:meth:`accepts_end`).
        """
        run = self._run
        run.armed = False
        if not self._following:
            return None, _ignore, False  # nothing more is followed: only the end tag matters
        scanner = self._scanner
        if not scanner.skips:
            return None
        if self._capture == 1 and self.announced and self._name_from < 0 and self._deltas:
            # (llama numbers a call once it is one: the index is read here.)
            run.arm_json(scanner, self._name or "", self.call.call_index)
            return None, refuse_chunk, scanner.in_string  # the run takes what it can
        return None, self._plain, scanner.in_string

    def value_run(self) -> ValueRun | None:
        """The arguments, which the core streams while the scanner takes a chunk whole."""
        return self._run

    def _plain(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`feed` for a chunk that completes no mark, or False."""
        if not self._scanner.skip(data):
            return False
        if self._capture == 1:
            self._arguments(data, 0, len(data), start, out)
        if self._name_from >= 0:
            self._name_pieces.append(data)
        return True

    def _key(self, key: str) -> None:
        """A key of the call object closed: which value follows it."""
        role = "arguments" if key in ARGUMENT_KEYS else key
        self._role = ""
        if role in ("name", "arguments"):
            if role in self._seen:
                # A repeated key is not followed while streaming; the call fails.
                self._duplicate = self._duplicate or key
            else:
                self._role = role
            self._seen.add(role)

    def _arguments(
        self, data: str, begin: int, end: int, start: int, out: list[ParseEvent]
    ) -> None:
        """Stream ``data[begin:end]``, a piece of the arguments value (or hold it)."""
        if begin >= end or not self.call.emit_deltas:
            return
        piece = data[begin:end]
        if self.announced:
            out.append(
                self.call.arguments_delta(self._name or "", piece, (start + begin, start + end))
            )
        elif self._name is None:
            self._held.append(piece)
            self._held_end = start + end

    def _announce(self, span: tuple[int, int], out: list[ParseEvent]) -> None:
        """The name is known: start the call (if registered) and release held arguments."""
        name = self._name
        if name is None or name not in self.call.tool_registry:
            self._held = []
            return
        self.announced = True
        call = self.call
        out.append(call.start(name, span))
        if self._held:
            out.append(
                ToolArgumentsDeltaEvent(
                    tool_name=name,
                    delta="".join(self._held),
                    call_index=call.call_index,
                    span=(self._held_start, self._held_end),
                )
            )
            self._held = []

    def accepts_end(self) -> bool:
        """A ``</tool_call>`` inside a JSON string is content; anywhere else it ends."""
        return not (self._following and self._scanner.in_string)

    # --- the outcome ---------------------------------------------------------------------

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """Parse the whole block once and validate the arguments with the tool's model."""
        data, unreadable = _read_call(block.content)
        if unreadable:
            return self._malformed(f"the tool call {unreadable}", block)
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            return self._malformed(
                'the tool call must be a JSON object with a string "name" and an object '
                '"arguments"',
                block,
            )
        if self._duplicate:
            return self._malformed(f"the tool call gives {self._duplicate!r} more than once", block)
        name: str = data["name"]
        model = self.call.tool_registry.get(name)
        if model is None:
            return self.call.unknown_tool(name, block)
        arguments = _arguments_of(data)
        if not isinstance(arguments, dict):
            return self._malformed(
                f"the arguments of tool call {name!r} must be a JSON object, "
                f"got {_json_type(arguments)}",
                block,
            )
        return self.call.call(name, self.call.validate(name, model, arguments), block)

    def _malformed(self, why: str, block: PluginBlock) -> list[ParseEvent]:
        """A call whose arguments cannot be read: ``malformed_tool``, never executed."""
        return failure(
            ErrorType.MALFORMED_TOOL,
            f"{why}; expected {_EXPECTED}; the call is not executed",
            block,
            call_index=self.error_index,
        )


def _ignore(data: str, start: int, out: list[ParseEvent]) -> bool:
    """The fast path of a reader that no longer follows its content: takes any chunk."""
    return True


_EXPECTED: Final = '{"name": "<tool>", "arguments": {...}}'
_JSON_WS: Final = " \t\r\n"
_DECODER: Final = json.JSONDecoder(strict=False)  # lenient: models write raw control chars


def _read_call(content: str) -> tuple[object, str]:
    """The block's JSON value, or why it cannot be read (invalid JSON, or text after it)."""
    start = len(content) - len(content.lstrip(_JSON_WS))
    try:
        data, end = _DECODER.raw_decode(content, start)
    except (ValueError, RecursionError) as exc:
        return None, f"is not valid JSON ({exc})"
    rest = content[end:].strip(_JSON_WS)
    if rest:
        return None, f"has text after its JSON object: {rest[:20]!r}"
    return data, ""


def _json_type(value: object) -> str:
    """The JSON name of a decoded value's type, for messages."""
    if isinstance(value, str):
        return "a string that does not hold a JSON object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return type(value).__name__


def _decode(raw: str) -> str:
    """A JSON string's text from its raw characters between the quotes."""
    try:
        value = json.loads(f'"{raw}"', strict=False)
    except ValueError:
        return raw
    return value if isinstance(value, str) else raw


def _arguments_of(data: dict[str, Any]) -> object:
    """The call's arguments: missing or null is ``{}``; a string holding JSON is decoded."""
    key = next((k for k in ("arguments", "parameters") if k in data), None)
    arguments = None if key is None else data[key]
    if arguments is None:
        return {}
    if isinstance(arguments, str):
        try:
            decoded = json.loads(arguments, strict=False) if arguments.strip() else {}
        except (ValueError, RecursionError):
            return arguments
        return decoded
    return arguments


class HermesDialect(ToolCallTagDialect):
    """``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` (Hermes, Qwen 2.5).

    Example:
        >>> print(HermesDialect().format_call("read_file", {"path": "a.py"}))
        <tool_call>
        {"name": "read_file", "arguments": {"path": "a.py"}}
        </tool_call>
    """

    name = "hermes"
    title = "a JSON object with the tool's name and arguments in <tool_call> tags"
    block_reader = HermesReader  # claims no first character: reads what others do not

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write ``<tool_call>``, the JSON object on one line, ``</tool_call>``."""
        call = {"name": tool_name, "arguments": to_jsonable_python(dict(args))}
        return f"<tool_call>\n{json.dumps(call, ensure_ascii=False)}\n</tool_call>"

    def _instructions(self) -> str:
        return "hermes_instructions"


register(HermesDialect().record())
