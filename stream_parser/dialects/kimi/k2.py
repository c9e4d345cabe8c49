r"""Kimi K2: a call of special tokens whose arguments are one JSON object.

``<|tool_call_begin|>functions.NAME:IDX<|tool_call_argument_begin|>{...}<|tool_call_end|>``:
:class:`KimiK2Reader` reads the header (bounded) up to the argument marker, announces
the call, then follows the arguments with the kit's ``JsonScanner`` and streams them
verbatim; the call's end marker inside a JSON string is content.  See the package.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic_core import to_jsonable_python

from ...core.events import (
    ErrorType,
    ParseEvent,
    Span,
    ToolArgumentsDeltaEvent,
)
from ...core.kit import (
    CallContext,
    FastData,
    JsonScanner,
    PluginBlock,
    Reader,
    ReaderPlugin,
    ValueRun,
    failure,
    refuse_chunk,
)

if TYPE_CHECKING:
    pass
from .markers import (
    _NOT_WS,
    _WS,
    ARGUMENT_BEGIN,
    CALL_BEGIN,
    CALL_END,
    MAX_HEADER,
    SECTION_BEGIN,
    SECTION_END,
    _decode_json,
    k2_tool_name,
)


class KimiK2Reader(Reader):
    """Reads one K2 call: ``functions.NAME:IDX<|tool_call_argument_begin|>{...}``."""

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self._header: list[str] = []  # the header's pieces while it is read
        self._in_args = False
        self._too_long = False
        self._name = ""
        self._call_id: str | None = None
        self._scanner = JsonScanner(keep_text=False)
        self._streaming = False  # inside the JSON value
        self._deltas = call.emit_deltas
        # The JSON's chunks that the scanner takes whole, streamed by the core.
        self._run = ValueRun(scanner=self._scanner, arguments=True)

    def feed(self, data: str, start: int, out: list[ParseEvent]) -> None:
        """Read the header until the argument marker, then follow the JSON."""
        if not self._in_args:
            if self._too_long:
                return
            # The header is bounded (MAX_HEADER), so joining it again costs constant time.
            prev = "".join(self._header)
            full = prev + data
            found = full.find(ARGUMENT_BEGIN, max(0, len(prev) - len(ARGUMENT_BEGIN) + 1))
            if found < 0:
                self._header.append(data)
                self._too_long = len(full) > MAX_HEADER
                return
            self._header = []
            self._in_args = True
            after = found + len(ARGUMENT_BEGIN) - len(prev)  # in ``data``
            self._announce(full[:found], (start - len(prev), start + after), out)
            data, start = data[after:], start + after
        self._follow(data, start, out)

    def _announce(self, header: str, span: Span, out: list[ParseEvent]) -> None:
        name = k2_tool_name(header)
        if name is None:
            return
        self._name = name
        self._call_id = header.strip(_WS)
        if name in self.call.tool_registry:
            self.announced = True
            out.append(self.call.start(name, span, self._call_id))

    def _follow(self, data: str, start: int, out: list[ParseEvent]) -> None:
        """Follow the JSON structure; stream the value's text while it lasts."""
        if not data or self._scanner.done:
            return
        base = self._scanner.position  # the scanner's offset of data[0]
        begin = 0 if self._streaming else -1
        end = len(data)
        for mark in self._scanner.feed(data):
            if mark.kind == "start":
                begin = mark.start - base
                self._streaming = True
            elif mark.kind == "end":
                end = mark.end - base
                self._streaming = False
                break
        if begin >= 0 and begin < end and self.announced and self.call.emit_deltas:
            out.append(
                ToolArgumentsDeltaEvent(
                    tool_name=self._name,
                    delta=data[begin:end],
                    call_index=self.call.call_index,
                    call_id=self._call_id,
                    span=(start + begin, start + end),
                )
            )

    def fast_path(self) -> FastData | None:
        """Inside the JSON value (a string, a nested value), a chunk is skipped whole."""
        self._run.armed = False
        if not (self._streaming and self._scanner.skips):
            return None
        if self.announced and self._deltas:
            self._run.arm_json(self._scanner, self._name, self.call.call_index, self._call_id)
            return None, refuse_chunk, self._scanner.in_string  # the run takes what it can
        return None, self._plain, self._scanner.in_string  # a string holds the end tag

    def value_run(self) -> ValueRun | None:
        """The JSON, which the core streams while the scanner takes a chunk whole."""
        return self._run

    def _plain(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`_follow` for a chunk the scanner skips: all of it is arguments."""
        return self._scanner.skip(data)

    def accepts_end(self) -> bool:
        """``<|tool_call_end|>`` inside a JSON string is content."""
        scanner = self._scanner
        return not (self._in_args and not scanner.done and scanner.in_string)

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """Parse the closed call once: its header, then its JSON arguments."""
        # The arguments are read in place, not cut out: a 1 MB value is not copied again.
        content = block.content
        at = content.find(ARGUMENT_BEGIN)
        if at < 0:
            return self._malformed(f"{ARGUMENT_BEGIN} is missing", block)
        header, arguments_from = content[:at], at + len(ARGUMENT_BEGIN)
        name = k2_tool_name(header)
        if name is None:
            return self._malformed(f"the call id {header.strip(_WS)[:40]!r} names no tool", block)
        model = self.call.tool_registry.get(name)
        if model is None:
            return self.call.unknown_tool(name, block)
        if _NOT_WS.search(content, arguments_from) is not None:
            value, unreadable = _decode_json(content, arguments_from)
            if unreadable:
                return self._malformed(f"the arguments of {name!r} {unreadable}", block)
        else:
            value = {}  # a call without arguments
        if not isinstance(value, dict):
            return self._malformed(f"the arguments of {name!r} are not a JSON object", block)
        result = self.call.validate(name, model, value)
        return self.call.call(name, result, block, header.strip(_WS))

    def _malformed(self, why: str, block: PluginBlock) -> list[ParseEvent]:
        return failure(
            ErrorType.MALFORMED_TOOL,
            f"malformed tool call: {why}; expected {CALL_BEGIN}functions.NAME:IDX"
            f"{ARGUMENT_BEGIN}{{...}}{CALL_END}; it is not executed",
            block,
            call_index=self.error_index,
        )


class KimiK2Plugin(ReaderPlugin):
    """Reads K2 calls: ``<|tool_call_begin|>`` ... ``<|tool_call_end|>``.

    ``ParserConfig(dialect="kimi")`` registers one.  A call written without its section
    markers is read all the same.
    """

    name = "kimi_k2"
    start_tags = (CALL_BEGIN,)
    end_tag = CALL_END
    # Any first character but a backtick: a marker quoted in prose is text (rule 3).
    next_chars = "^`"
    reader = KimiK2Reader


def format_k2_call(tool_name: str, args: Mapping[str, Any], index: int = 0) -> str:
    """One call as the K2 chat template renders it, section markers included.

    Example:
        >>> format_k2_call("read_file", {"path": "a.py"}) == (
        ...     "<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0"
        ...     '<|tool_call_argument_begin|>{"path": "a.py"}'
        ...     "<|tool_call_end|><|tool_calls_section_end|>"
        ... )
        True
    """
    return f"{SECTION_BEGIN}{_k2_call(tool_name, args, index)}{SECTION_END}"


def format_k2_calls(calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """Several calls as the K2 chat template renders a turn's calls: one section.

    The calls are numbered from 0, as the template's ids (``functions.NAME:INDEX``) are.
    No calls write ``""``, not an empty section.

    Example:
        >>> format_k2_calls([("read_file", {"path": "a.py"}), ("now", {})]) == (
        ...     "<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0"
        ...     '<|tool_call_argument_begin|>{"path": "a.py"}<|tool_call_end|>'
        ...     "<|tool_call_begin|>functions.now:1<|tool_call_argument_begin|>{}"
        ...     "<|tool_call_end|><|tool_calls_section_end|>"
        ... )
        True
    """
    if not calls:  # no calls write nothing, not an empty section
        return ""
    inner = "".join(_k2_call(name, args, index) for index, (name, args) in enumerate(calls))
    return f"{SECTION_BEGIN}{inner}{SECTION_END}"


def _k2_call(tool_name: str, args: Mapping[str, Any], index: int) -> str:
    arguments = json.dumps(to_jsonable_python(dict(args), by_alias=True), ensure_ascii=False)
    return f"{CALL_BEGIN}functions.{tool_name}:{index}{ARGUMENT_BEGIN}{arguments}{CALL_END}"
