# ruff: noqa: RUF001, RUF002, RUF003  (the format's markers are fullwidth characters)
r"""The deepseek dialect: the tool-call formats of the DeepSeek models, read and written.

DeepSeek's models write their tool calls in one *section* per reply, in one of two
markups.  The markers are special tokens spelled with U+FF5C ``｜`` (fullwidth vertical
bar) and U+2581 ``▁`` (lower one-eighth block); a model writes each as one token.

**V3 / R1** (each call's type, its name on a line, the arguments in a JSON fence)::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file
    ```json
    {"path": "a.py"}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>

**V3.1** (the name, then the JSON arguments; the writer's default; one line, cut here)::

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read_file<｜tool▁sep｜>
    {"path": "a.py"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>

**V3.2 / V4 "DSML"** (XML-like tags, one per parameter; ``string="false"`` values are
JSON).  The section is ``function_calls`` (V3.2), ``tool_calls`` (V4) or `` calls``
(with a leading space, as later checkpoints write it; their ``invoke`` and
``parameter`` tags carry that space too, which the reader accepts on every tag)::

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="search">
    <｜DSML｜parameter name="query" string="true">tokyo</｜DSML｜parameter>
    <｜DSML｜parameter name="max_results" string="false">3</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

Parallel calls repeat the call (V3 writes a newline between them) inside one section.
Reasoning is ``<think>…</think>``; the chat templates of the thinking models write
``<think>`` into the prompt, so a reply starts inside reasoning and shows only
``</think>`` (the dialect's reasoning format says so: see :data:`DEEPSEEK_THINKING`).

Theory of operation
-------------------

Each section is one plugin block: :class:`DeepSeekToolCallsPlugin` reads the V3 and
V3.1 section (its calls are told apart by what comes before ``<｜tool▁sep｜>``:
``function`` followed by a name line is V3, anything else is V3.1's name), and
:class:`DsmlPlugin` reads a DSML section (one plugin per section name, since each has
its own end tag; the chat template's blank line before the section belongs to it).
A section that opens anywhere else than before ``<`` (rule 3), or an ``invoke`` written
without its section, is text: it is not a call.

The section's reader (:class:`ToolCallsReader`, :class:`DsmlReader`) is a small state
machine fed the content piece by piece.  It keeps a *hold*, the characters it cannot
decide yet (a marker cut by the end of a piece, a tag waiting for its ``>``, a closing
tag waiting for what follows it), bounded by the longest tag plus
``buffer_keep_size`` characters of whitespace, so every character is looked at a
bounded number of times (linear time) and nothing depends on how the text was cut.

* A call is announced (:class:`~stream_parser.core.events.ToolCallStartEvent`, for a
  registered tool) as soon as its name is complete, and reserves its ``call_index``
  when it opens.
* JSON arguments are followed by :class:`~stream_parser.core.json_scan.JsonScanner` and
  stream verbatim as :class:`~stream_parser.core.events.ToolArgumentsDeltaEvent`\ s; a
  ``<｜tool▁call▁end｜>`` inside a JSON string is content.  DSML values stream as
  :class:`~stream_parser.core.events.ToolParamDeltaEvent`\ s; as in rule 5 of the XML
  format, ``</｜DSML｜parameter>`` closes a value only when the next thing after it
  (whitespace aside) is a DSML tag, so a value that mentions the markup is read whole.
* When the section closes, each call becomes one outcome, whose span is the call's
  text (the section's markers and the whitespace between calls belong to the calls
  next to them, so the spans tile the input): a
  :class:`~stream_parser.core.events.ToolCallEvent`, or an error and the call's raw
  text.  ``unknown_tool`` for a name that is not registered; ``malformed_tool`` for a
  call that cannot be read (no name, arguments that are not a JSON object, text where
  markup belongs); ``invalid_params`` when the arguments fail the tool's model.
* A call whose end marker is missing but whose arguments are complete is read as the
  model meant when the section's end follows (and, in DSML, the next ``invoke``:
  DeepSeek V4 leaves out ``</｜DSML｜invoke>`` at times).
* A section the stream ends: the calls whose end marker arrived run; the open call
  gets ``unclosed_tool`` and its raw text (rule 9), unless its arguments are complete
  and the stream ended normally (``PluginBlock.cut`` is False: not ``finish_reason
  == "length"``, no stream error), the way a model ends its reply after its last
  call.  A section over ``max_tool_size`` (all its calls together) is
  ``tool_too_large`` and delivered as text; nothing in it runs.

Values: JSON arguments are validated by the tool's model (Pydantic's lax mode).  DSML
values go through the XML conversion
(:meth:`~stream_parser.core.xml_tools.XMLToolParser.build_instance`): ``string="true"``
values are the text itself (raw parameters byte-exact, others stripped and converted by
their field's type); ``string="false"`` values are JSON: ``null`` is None, a JSON string
is its text, anything else is converted by the field's type.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from pydantic_core import to_jsonable_python

from ..core.events import ErrorType, ParseEvent, Span
from ..core.kit import (
    CallContext,
    FastData,
    JsonScanner,
    ParsePlugin,
    PluginBlock,
    PluginContext,
    Reader,
    ThinkingFormat,
    ValueRun,
    call_too_large,
    failure,
    refuse_chunk,
    register,
    tag_stop,
    validate_arguments,
)
from ..errors import ConfigError
from ._base import Dialect

__all__ = [
    "CALLS_BEGIN",
    "CALLS_END",
    "CALL_BEGIN",
    "CALL_END",
    "DEEPSEEK_THINKING",
    "DSML_SECTIONS",
    "DeepSeekDialect",
    "DeepSeekToolCallsPlugin",
    "DsmlPlugin",
    "DsmlReader",
    "ToolCallsReader",
]

CALLS_BEGIN: Final = "<｜tool▁calls▁begin｜>"
CALLS_END: Final = "<｜tool▁calls▁end｜>"
CALL_BEGIN: Final = "<｜tool▁call▁begin｜>"
CALL_END: Final = "<｜tool▁call▁end｜>"
SEP: Final = "<｜tool▁sep｜>"
DSML: Final = "｜DSML｜"
DSML_SECTIONS: Final = ("function_calls", "tool_calls", " calls")
"""The DSML section names: V3.2, V4, and the later checkpoints (with a leading space)."""

_OPEN: Final = "<" + DSML
_CLOSE: Final = "</" + DSML
_DSML_TAG_START: Final = re.compile(r"</?｜DSML｜")
_INVOKE_OPEN: Final = re.compile(r'<｜DSML｜ ?invoke\s+name\s*=\s*"([^"<>\n]*)"\s*>\Z')
_INVOKE_CLOSE: Final = re.compile(r"</｜DSML｜ ?invoke\s*>\Z")
_PARAM_OPEN: Final = re.compile(r'<｜DSML｜ ?parameter((?:\s+\w+\s*=\s*"[^"<>\n]*")*)\s*>\Z')
_ATTRIBUTE: Final = re.compile(r'(\w+)\s*=\s*"([^"<>\n]*)"')
"""A parameter's attributes, ``name`` and ``string``, in either order."""
_PARAM_CLOSES: Final = ("</｜DSML｜parameter>", "</｜DSML｜ parameter>")
_TAG_MAX: Final = 512
"""The longest DSML tag read (its attributes included); a longer one is not markup."""
_NAME_MAX: Final = 256
_WS: Final = " \t\r\n"
_WS_RUN: Final = re.compile(r"[ \t\r\n]*")
_NAME_END: Final = re.compile(r"[\n`{\[]")
_DECODER: Final = json.JSONDecoder(strict=False)  # lenient: models write raw control chars


_CLOSE_STOP: Final = tag_stop((_CLOSE,))
"""Where a DSML closing tag may begin in a value (or be cut by the end of a chunk)."""


def _partial(buf: str, pos: int, markers: Sequence[str]) -> int:
    """Length of the longest end of ``buf[pos:]`` that begins one of ``markers``."""
    longest = 0
    for marker in markers:
        k = Reader.cut_marker(buf, pos, marker)
        if k > longest:
            longest = k
    return longest


@dataclass(slots=True)
class _Call:
    """One call of a section: where it is, what was read, and why it failed (if so)."""

    start: int  # absolute offset of its first marker
    call: CallContext
    name: str | None = None
    end: int = -1  # absolute offset after its end marker (-1: not closed)
    why: str = ""  # why it cannot be read ("" while it can)
    # Where its text is in the stream (absolute offsets), taken from the call's text when
    # it is built, so that nothing is kept a second time while it streams: the JSON
    # arguments' start and end; DSML values' start, end and ``string=`` attribute.
    args_from: int = 0
    args_to: int = 0
    params: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    announced: bool = False


class _SectionReader:
    """What both section readers share: the hold, the calls, and the outcomes."""

    def __init__(self, context: PluginContext) -> None:
        self.context = context
        self.calls: list[_Call] = []
        self.current: _Call | None = None
        self._hold = ""
        self._hold_start = 0
        # A call's JSON arguments, which the core streams (``fast_path`` arms it).  The
        # run's end is not read: the JSON's last character, a mark the scanner does not
        # skip, is always read by the reader, which sets the call's ``args_to`` there.
        self._run = ValueRun(arguments=True)

    # --- streaming -----------------------------------------------------------------------

    def value_run(self) -> ValueRun | None:
        """The open call's arguments, which the core streams (``ParsePlugin.value_run``)."""
        return self._run

    def feed(self, data: str, start: int) -> list[ParseEvent]:
        """Run the state machine over the hold and ``data``; keep what is undecided."""
        if self._hold:
            buf, base = self._hold + data, self._hold_start
        else:
            buf, base = data, start
        out: list[ParseEvent] = []
        pos, n = 0, len(buf)
        wait = False
        while pos < n and not wait:
            pos, wait = self._step(buf, pos, base, out)
        self._hold = buf[pos:]
        self._hold_start = base + pos
        return out

    def _step(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """Consume what can be decided from ``pos``; say whether to wait for more."""
        raise NotImplementedError

    def accepts_end(self) -> bool:
        """Whether the section's end tag, after what was fed, closes the section."""
        raise NotImplementedError

    def fast_path(self) -> FastData | None:
        """The fast path for the next piece (``ParsePlugin.fast_path``), or None."""
        return None

    def _open_call(self, at: int) -> _Call:
        context = self.context
        call = _Call(
            start=at,
            call=CallContext(context),
        )
        self.calls.append(call)
        self.current = call
        return call

    def _announce(self, name: str, span: Span, out: list[ParseEvent]) -> None:
        call = self.current
        assert call is not None
        call.name = name
        if name in call.call.tool_registry:
            call.announced = True
            out.append(call.call.start(name, span))

    def _close_call(self, end: int) -> None:
        if self.current is not None:
            self.current.end = end
            self.current = None

    def _fail(self, why: str) -> None:
        if self.current is not None and not self.current.why:
            self.current.why = why

    # --- the outcome ---------------------------------------------------------------------

    def _body_complete(self) -> bool:
        """Whether the open call has all its arguments (only its end marker is missing)."""
        raise NotImplementedError

    def _complete(self) -> None:
        """Take what the hold still has of the open call's arguments."""

    def _finish_open_call(self, at_end_tag: bool, cut: bool) -> None:
        """The section ended, at its end tag or with the stream (``cut`` or not).

        A call whose arguments are complete runs without its end marker when the
        section's end tag or the normal end of the stream follows; a stream that was cut
        leaves it unclosed (rule 9).  At the end tag, any other open call is malformed.
        """
        call = self.current
        if call is None:
            return
        end = self._hold_start + len(self._hold)
        if self._body_complete():
            if at_end_tag or not cut:
                self._complete()
                call.end = end
        elif at_end_tag:
            self._fail("the tool call is not complete where the section ends")
            call.end = end
        self.current = None

    def outcome(self, block: PluginBlock, unclosed: bool) -> list[ParseEvent]:
        """Every call's outcome, their spans tiling the block."""
        self._finish_open_call(at_end_tag=not unclosed, cut=block.cut)
        self._hold = ""
        raw = block.raw
        first, last = block.span
        calls = self.calls
        if not calls:
            if unclosed:
                return _unclosed(block, None)
            return failure(
                ErrorType.MALFORMED_TOOL,
                "the tool-call section holds no call; it is delivered as text",
                block,
            )
        out: list[ParseEvent] = []
        pos = first
        for k, call in enumerate(calls):
            # The section's markers and the whitespace between calls go with the calls.
            end = last if k == len(calls) - 1 or call.end < 0 else call.end
            tile = PluginBlock(
                start_tag="",
                end_tag="",
                content=raw[pos - first : end - first],
                span=(pos, end),
            )
            if call.end < 0 and unclosed:
                out += _unclosed(tile, call)
            else:
                out += self._call_outcome(call, tile)
            pos = end
            if end == last:
                break
        return out

    def _call_outcome(self, call: _Call, tile: PluginBlock) -> list[ParseEvent]:
        index = call.call.call_index if call.announced else None
        if call.why:
            return failure(
                ErrorType.MALFORMED_TOOL,
                f"malformed tool call: {call.why}; it is not executed and its text is "
                "delivered as text",
                tile,
                call_index=index,
            )
        name = call.name or ""
        registry = call.call.tool_registry
        if name not in registry:
            known = ", ".join(sorted(registry)) or "none"
            return failure(
                ErrorType.UNKNOWN_TOOL,
                f"unknown tool {name!r} (registered: {known}); the call is not executed",
                tile,
            )
        return self._build(call, tile)

    def _build(self, call: _Call, tile: PluginBlock) -> list[ParseEvent]:
        raise NotImplementedError


def _unclosed(block: PluginBlock, call: _Call | None) -> list[ParseEvent]:
    return failure(
        ErrorType.UNCLOSED_TOOL,
        "the stream ended inside a tool call; it is not executed and its text is delivered as text",
        block,
        call_index=call.call.call_index if call is not None and call.announced else None,
    )


# --- V3 / V3.1 ---------------------------------------------------------------------------------

_GAP, _HEAD, _TYPED, _NAME, _PRE, _ARGS, _POST, _BAD = range(8)


class ToolCallsReader(_SectionReader):
    """Reads a ``<｜tool▁calls▁begin｜>`` section: V3 and V3.1 calls, told apart per call."""

    def __init__(self, context: PluginContext) -> None:
        super().__init__(context)
        self._state = _GAP
        self._scanner = JsonScanner(keep_text=False)
        self._scan_base = 0  # absolute offset of the first character fed to the scanner
        self._fence = False  # the arguments opened with a ``` fence line
        self._head_span: Span = (0, 0)  # where "function" was, for a tool of that name
        self._deltas = context.config.emit_deltas

    def _step(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        state = self._state
        n = len(buf)
        if state == _GAP:
            i = buf.find(CALL_BEGIN, pos)
            if i < 0:
                return n - _partial(buf, pos, (CALL_BEGIN,)), True
            self._open_call(base + i)
            self._state = _HEAD
            self._fence = False
            return i + len(CALL_BEGIN), False
        if state == _BAD:
            i = buf.find(CALL_END, pos)
            if i < 0:
                return n - _partial(buf, pos, (CALL_END,)), True
            self._close_call(base + i + len(CALL_END))
            self._state = _GAP
            return i + len(CALL_END), False
        if state == _HEAD:
            return self._head(buf, pos, base, out)
        if state == _TYPED:
            k = _WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
            if k == n:
                return k, True
            if buf[k] in "{[":  # V3.1 with a tool named "function"
                self._announce("function", self._head_span, out)
                self._state = _PRE
                return pos, False
            self._state = _NAME
            return pos, False
        if state == _NAME:
            return self._name(buf, pos, base, out)
        if state == _PRE:
            return self._pre(buf, pos, base)
        if state == _ARGS:
            return self._args(buf, pos, base, out)
        return self._post(buf, pos, base)

    def _bad(self, why: str) -> None:
        self._fail(why)
        self._state = _BAD

    def _head(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """Between ``<｜tool▁call▁begin｜>`` and ``<｜tool▁sep｜>``: a type or a name."""
        n = len(buf)
        j = buf.find(SEP, pos, pos + _NAME_MAX + len(SEP))
        e = buf.find(CALL_END, pos, pos + _NAME_MAX + len(CALL_END))
        if j < 0 or (0 <= e < j):
            if e >= 0 or n - pos > _NAME_MAX + len(SEP):
                self._bad("expected the tool's name and <｜tool▁sep｜>")
                return pos, False
            return pos, True
        head = buf[pos:j].strip(_WS)
        if not head or any(c in head for c in "<>\n"):
            self._bad("expected the tool's name before <｜tool▁sep｜>")
            return pos, False
        if head == "function":  # V3: the call's type; the name follows on its own line
            self._head_span = (base + pos, base + j)
            self._state = _TYPED
        else:
            self._announce(head, (base + pos, base + j), out)
            self._state = _PRE
        return j + len(SEP), False

    def _name(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """V3: the name after ``function<｜tool▁sep｜>``, up to the end of its line."""
        m = _NAME_END.search(buf, pos, pos + _NAME_MAX + 1)
        if m is None:
            if len(buf) - pos > _NAME_MAX or "<" in buf[pos:]:
                self._bad("expected the tool's name on the line after <｜tool▁sep｜>")
                return pos, False
            return pos, True
        k = m.start()
        name = buf[pos:k].strip(_WS)
        if not name or "<" in name:
            self._bad("expected the tool's name on the line after <｜tool▁sep｜>")
            return pos, False
        self._announce(name, (base + pos, base + k), out)
        self._state = _PRE
        return k, False

    def _pre(self, buf: str, pos: int, base: int) -> tuple[int, bool]:
        """Before the JSON arguments: whitespace and at most one ```json fence line."""
        n = len(buf)
        k = _WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
        if k == n:
            return k, True
        if buf.startswith("```", k) and not self._fence:
            nl = buf.find("\n", k)
            if nl < 0:
                if n - k > 64:
                    self._bad("the fence before the arguments does not end its line")
                    return k, False
                return k, True
            self._fence = True
            return nl + 1, False
        rest = buf[k : k + len(CALL_END)]
        if k + len(rest) == n and ("```".startswith(rest) or CALL_END.startswith(rest)):
            return k, True
        if buf[k] != "{":
            self._bad("the arguments must be a JSON object")
            return k, False
        self._scanner = JsonScanner(keep_text=False)
        self._scan_base = base + k
        call = self.current
        if call is not None:
            call.args_from = call.args_to = base + k
        self._state = _ARGS
        return k, False

    def _args(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """Inside the JSON arguments: stream them; find where they end."""
        n = len(buf)
        scanner = self._scanner
        search = pos
        while True:
            e = buf.find(CALL_END, search)
            stop = e if e >= 0 else n - _partial(buf, search, (CALL_END,))
            for mark in scanner.feed(buf[search:stop]):
                if mark.kind == "end":
                    end = mark.end + self._scan_base - base
                    self._take(buf, pos, end, base, out)
                    self._state = _POST
                    return end, False
            if e < 0:
                self._take(buf, pos, stop, base, out)
                return stop, True
            if not scanner.in_string:
                # The call's end marker before the JSON value ended: cut short.
                self._take(buf, pos, e, base, out)
                self._bad("the JSON arguments end before they are complete")
                return e, False
            # The marker is inside a JSON string: it is content.
            scanner.feed(CALL_END)
            search = e + len(CALL_END)

    def _take(self, buf: str, start: int, end: int, base: int, out: list[ParseEvent]) -> None:
        call = self.current
        if start >= end or call is None:
            return
        call.args_to = base + end
        if call.announced and call.call.emit_deltas:
            piece = buf[start:end]
            span = (base + start, base + end)
            out.append(call.call.arguments_delta(call.name or "", piece, span))

    def fast_path(self) -> FastData | None:
        """Inside the JSON arguments (a string, a nested value), nothing is held."""
        self._run.armed = False
        if self._state != _ARGS or self._hold or self.current is None:
            return None
        scanner = self._scanner
        if not scanner.skips:
            return None
        # Inside a string the section's end tag is content (see accepts_end).
        call = self.current
        if call.announced and self._deltas:
            self._run.arm_json(scanner, call.name or "", call.call.call_index)
            return None, refuse_chunk, scanner.in_string  # the run takes what it can
        return None, self._plain, scanner.in_string

    def _plain(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`_args` for a chunk the scanner skips: the chunk is arguments.

        Only for a call whose arguments do not stream (those that do are the run's).
        The call's end marker cannot be in it: the plugin's end tag, which the core
        looks for, begins the same way.
        """
        if not self._scanner.skip(data):
            return False
        call = self.current
        assert call is not None  # fast_path offers this only inside a call
        call.args_to = start + len(data)
        return True

    def _post(self, buf: str, pos: int, base: int) -> tuple[int, bool]:
        """After the arguments: the closing fence, then ``<｜tool▁call▁end｜>``."""
        n = len(buf)
        k = _WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
        if buf.startswith(CALL_END, k):
            self._close_call(base + k + len(CALL_END))
            self._state = _GAP
            self._fence = False
            return k + len(CALL_END), False
        if self._fence and buf.startswith("```", k):
            self._fence = False
            return k + 3, False
        rest = buf[k:]
        if k == n or (
            len(rest) < len(CALL_END)
            and (CALL_END.startswith(rest) or (self._fence and "```".startswith(rest)))
        ):
            return k, True
        self._bad("unexpected text after the JSON arguments")
        return k, False

    def accepts_end(self) -> bool:
        """``<｜tool▁calls▁end｜>`` ends the section, except inside a JSON string."""
        return not (self._state == _ARGS and self._scanner.in_string)

    def _body_complete(self) -> bool:
        return self._state == _POST and self._hold.strip(_WS) in ("", "```")

    def _build(self, call: _Call, tile: PluginBlock) -> list[ParseEvent]:
        name = call.name or ""
        text = tile.between(call.args_from, call.args_to)
        try:
            arguments = _DECODER.decode(text)
        except (ValueError, RecursionError) as exc:
            return self._malformed(call, tile, f"the arguments are not valid JSON ({exc})")
        if not isinstance(arguments, dict):
            return self._malformed(call, tile, "the arguments must be a JSON object")
        model = call.call.tool_registry[name]
        result = validate_arguments(
            name, model, arguments, validate=call.call.config.enable_xml_validation
        )
        return call.call.call(name, result, tile)

    def _malformed(self, call: _Call, tile: PluginBlock, why: str) -> list[ParseEvent]:
        call.why = why
        return self._call_outcome(call, tile)


# --- V3.2 / V4 DSML ----------------------------------------------------------------------------

_D_GAP, _D_BODY, _D_VALUE, _D_BAD = range(4)


class DsmlReader(_SectionReader):
    """Reads a DSML section: ``invoke`` elements holding ``parameter`` elements."""

    def __init__(self, context: PluginContext) -> None:
        super().__init__(context)
        self._state = _D_GAP
        self._ws_cap = context.config.buffer_keep_size
        self._param = ""
        self._string = ""
        self._param_known = False
        self._value_from = 0  # where the open value begins ...
        self._value_to = 0  # ... and where what was taken of it ends
        self._known: frozenset[str] = frozenset()

    def _tag(self, buf: str, k: int) -> tuple[int, str]:
        """The DSML tag at ``buf[k:]``: ``(end, text)``; ``end`` -1: wait, -2: no tag."""
        n = len(buf)
        m = _DSML_TAG_START.match(buf, k)
        if m is None:
            rest = buf[k : k + len(_CLOSE)]
            if k + len(rest) == n and (_OPEN.startswith(rest) or _CLOSE.startswith(rest)):
                return -1, ""
            return -2, ""
        gt = buf.find(">", m.end(), k + _TAG_MAX)
        # A "<" before the tag's ">" starts another tag: this one is no tag, whether its
        # ">" has arrived yet or not (so the reading does not depend on the chunking).
        if buf.find("<", m.end(), gt if gt >= 0 else min(n, k + _TAG_MAX)) >= 0:
            return -2, ""
        if gt < 0:
            return (-1, "") if n - k < _TAG_MAX else (-2, "")
        return gt + 1, buf[k : gt + 1]

    def _step(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        state = self._state
        if state == _D_VALUE:
            return self._in_value(buf, pos, base, out)
        n = len(buf)
        if state in (_D_GAP, _D_BAD):
            i = buf.find(_CLOSE if state == _D_BAD else _OPEN, pos)
            if i < 0:
                return n - _partial(buf, pos, (_OPEN, _CLOSE)), True
            end, tag = self._tag(buf, i)
            if end == -1:
                return i, True
            if end == -2:
                return i + 1, False
            if state == _D_BAD:
                if _INVOKE_CLOSE.match(tag):
                    self._close_call(base + end)
                    self._state = _D_GAP
                return end, False
            m = _INVOKE_OPEN.match(tag)
            if m is not None:
                self._start_invoke(m.group(1), i, end, base, out)
            return end, False
        # _D_BODY: between parameters.
        k = _WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
        if k == n:
            return k, True
        end, tag = self._tag(buf, k)
        if end == -1:
            return k, True
        if end == -2:
            self._fail(f"unexpected text in the call of {self.current_name()!r}")
            self._state = _D_BAD
            return k, False
        if _INVOKE_CLOSE.match(tag):
            self._close_call(base + end)
            self._state = _D_GAP
            return end, False
        m = _INVOKE_OPEN.match(tag)
        if m is not None:  # the previous call's </｜DSML｜invoke> is missing
            self._close_call(base + k)
            self._start_invoke(m.group(1), k, end, base, out)
            return end, False
        m = _PARAM_OPEN.match(tag)
        attributes = dict(_ATTRIBUTE.findall(m.group(1))) if m is not None else {}
        name = attributes.get("name", "").strip()
        if not name:
            self._fail(f"unexpected markup in the call of {self.current_name()!r}")
            self._state = _D_BAD
            return k, False
        self._open_param(name, attributes.get("string", ""), (base + k, base + end), out)
        return end, False

    def current_name(self) -> str:
        """The name of the open call ("" when none)."""
        call = self.current
        return "" if call is None or call.name is None else call.name

    def _start_invoke(self, name: str, at: int, end: int, base: int, out: list[ParseEvent]) -> None:
        self._open_call(base + at)
        name = name.strip()
        if not name:
            self._fail("the invoke tag names no tool")
            self._state = _D_BAD
            return
        self._announce(name, (base + at, base + end), out)
        call = self.current
        assert call is not None
        self._known = call.call.xml_parser.param_names(name) if call.announced else frozenset()
        self._state = _D_BODY

    def _open_param(self, name: str, string: str, span: Span, out: list[ParseEvent]) -> None:
        call = self.current
        assert call is not None
        self._param = name
        self._string = string
        self._value_from = self._value_to = span[1]
        self._state = _D_VALUE
        self._param_known = known = name in self._known
        if not call.announced:
            return
        if not known:
            out.append(
                call.call.side_error(
                    ErrorType.UNKNOWN_PARAM,
                    f"tool {call.name!r} has no parameter {name!r}; it is ignored "
                    f"(parameters: {', '.join(sorted(self._known)) or 'none'})",
                    span,
                    f'parameter name="{name}"',
                )
            )
        elif name in call.params:
            out.append(
                call.call.side_error(
                    ErrorType.DUPLICATE_PARAM,
                    f"parameter {name!r} of tool {call.name!r} is given twice; the last value wins",
                    span,
                    f'parameter name="{name}"',
                )
            )

    def _in_value(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        n = len(buf)
        search = pos
        while True:
            c = buf.find(_CLOSE, search)
            if c < 0:
                stop = n - _partial(buf, search, (_CLOSE,))
                self._take(buf, pos, stop, base, out)
                return stop, True
            close = next((t for t in _PARAM_CLOSES if buf.startswith(t, c)), "")
            if not close:
                rest = buf[c:]
                if any(t.startswith(rest) for t in _PARAM_CLOSES):
                    self._take(buf, pos, c, base, out)
                    return c, True
                search = c + 1  # another DSML closing tag in a value is content
                continue
            j = c + len(close)
            k = _WS_RUN.match(buf, j).end()  # type: ignore[union-attr]
            if k - j <= self._ws_cap:
                if k == n:
                    self._take(buf, pos, c, base, out)
                    return c, True  # wait for what follows the close
                nxt = buf[k : k + len(_CLOSE)]
                if _DSML_TAG_START.match(buf, k):
                    self._take(buf, pos, c, base, out)
                    self._end_value()
                    self._state = _D_BODY
                    return j, False
                if k + len(nxt) == n and (_OPEN.startswith(nxt) or _CLOSE.startswith(nxt)):
                    self._take(buf, pos, c, base, out)
                    return c, True
            search = j  # not followed by markup: the close is content

    def fast_path(self) -> FastData | None:
        """Inside a value, only where a DSML closing tag may begin matters."""
        if self._state != _D_VALUE or self._hold:
            return None
        return _CLOSE_STOP, self._plain, True  # the section's end tag is content here

    def _plain(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`_in_value` for a chunk without the start of a closing tag."""
        self._take(data, 0, len(data), start, out)
        return True

    def _take(self, buf: str, start: int, end: int, base: int, out: list[ParseEvent]) -> None:
        call = self.current
        if start >= end or call is None or not self._param_known:
            return
        self._value_to = base + end
        if call.announced and call.call.emit_deltas:
            out.append(
                call.call.param_delta(
                    call.name or "", self._param, buf[start:end], (base + start, base + end)
                )
            )

    def _end_value(self) -> None:
        call = self.current
        if call is not None and self._param_known:
            call.params[self._param] = (self._value_from, self._value_to, self._string)

    def _pending_close(self) -> bool:
        """The hold is a value's closing tag and whitespace, waiting for what follows."""
        hold = self._hold
        close = next((t for t in _PARAM_CLOSES if hold.startswith(t)), "")
        return bool(close) and not hold[len(close) :].strip(_WS)

    def accepts_end(self) -> bool:
        """The section's end tag ends it, except inside a value (where it is content)."""
        return self._state != _D_VALUE or self._pending_close()

    def _body_complete(self) -> bool:
        return self._state == _D_BODY or (self._state == _D_VALUE and self._pending_close())

    def _complete(self) -> None:
        if self._state == _D_VALUE:
            self._end_value()  # the value's close waited for what follows: nothing did

    def _build(self, call: _Call, tile: PluginBlock) -> list[ParseEvent]:
        name = call.name or ""
        xml_parser = call.call.xml_parser
        values: dict[str, str | None] = {}
        for param, (start, end, string) in call.params.items():
            raw = tile.between(start, end)
            value: str | None = raw
            if string.strip().lower() == "false":
                try:
                    decoded = _DECODER.decode(raw.strip(_WS))
                except (ValueError, RecursionError):
                    decoded = raw  # not JSON: converted by the field's type, or refused
                if decoded is None:
                    value = None
                elif isinstance(decoded, str):
                    value = decoded
            if value is not None and xml_parser.is_raw_param(name, param):
                # build_instance takes one newline off each side of a raw value (the XML
                # rule); frame it with one of each so that it arrives byte-exact.
                value = f"\n{value}\r\n"
            values[param] = value
        result = xml_parser.build_instance(name, values)
        return call.call.call(name, result, tile)


# --- the plugins -------------------------------------------------------------------------------


class _SectionPlugin(ParsePlugin):
    """A plugin whose block is one section of calls, read by a section reader."""

    next_chars = "<"  # the first call's marker follows the section's; else it is prose

    def __init__(self) -> None:
        self._context: PluginContext | None = None
        self._reader: _SectionReader | None = None

    def bind(self, context: PluginContext) -> None:
        """Keep the parser's registry, converter, configuration and call counter."""
        self._context = context

    def _new_reader(self, context: PluginContext) -> _SectionReader:
        raise NotImplementedError

    def on_start(self, tag: str, span: Span) -> list[ParseEvent]:
        """A section opens: a new reader for its calls."""
        if self._context is None:
            raise ConfigError(f"{type(self).__name__} was not registered with a parser")
        self._reader = self._new_reader(self._context)
        return []

    def on_data(self, data: str, span: Span) -> list[ParseEvent]:
        """Hand the content to the reader."""
        assert self._reader is not None
        return self._reader.feed(data, span[0])

    def accepts_end(self) -> bool:
        """Ask the reader (the end tag inside a string or a value is content)."""
        reader = self._reader
        return reader is None or reader.accepts_end()

    def fast_path(self) -> FastData | None:
        """The reader's fast path."""
        reader = self._reader
        return None if reader is None else reader.fast_path()

    def value_run(self) -> ValueRun | None:
        """The reader's open call's arguments, asked with its fast path."""
        reader = self._reader
        return None if reader is None else reader.value_run()

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:
        """The section's calls, each a call or an error and its raw text."""
        reader, self._reader = self._reader, None
        assert reader is not None
        return reader.outcome(block, unclosed=False)

    def on_too_large(self, block: PluginBlock) -> list[ParseEvent]:
        """A ``tool_too_large`` error; the core delivers the section as text."""
        self._reader = None
        return call_too_large(block, None, self._context)

    def on_unclosed(self, block: PluginBlock) -> list[ParseEvent]:
        """The stream ended in the section: complete calls run, the cut one does not."""
        reader, self._reader = self._reader, None
        if reader is None:
            return _unclosed(block, None)
        return reader.outcome(block, unclosed=True)


class DeepSeekToolCallsPlugin(_SectionPlugin):
    """Reads the V3 / V3.1 section ``<｜tool▁calls▁begin｜>`` … ``<｜tool▁calls▁end｜>``.

    ``ParserConfig(dialect="deepseek")`` registers one.
    """

    name = "deepseek_tool_calls"
    start_tags: tuple[str, ...] = (CALLS_BEGIN,)
    end_tag = CALLS_END

    def _new_reader(self, context: PluginContext) -> _SectionReader:
        return ToolCallsReader(context)


class DsmlPlugin(_SectionPlugin):
    r"""Reads one DSML section: ``<｜DSML｜NAME>`` … ``</｜DSML｜NAME>``.

    Args:
        section: the section's name, one of :data:`DSML_SECTIONS`.

    The blank line the chat template writes before the section belongs to it.
    ``ParserConfig(dialect="deepseek")`` registers one per section name.
    """

    def __init__(self, section: str = "function_calls") -> None:
        super().__init__()
        if section not in DSML_SECTIONS:
            raise ConfigError(f"unknown DSML section {section!r} (known: {DSML_SECTIONS})")
        tag = f"<{DSML}{section}>"
        self.name = f"deepseek_dsml_{section.strip()}"
        self.start_tags = (tag, "\n\n" + tag)
        self.end_tag = f"</{DSML}{section}>"

    def _new_reader(self, context: PluginContext) -> _SectionReader:
        return DsmlReader(context)


# --- the dialect -------------------------------------------------------------------------------

DEEPSEEK_THINKING: Final = ThinkingFormat((("<think>", "</think>"),), bare_close=True)
"""DeepSeek's reasoning: ``<think>…</think>``, the opening tag usually in the prompt.

The thinking models' chat templates end the prompt with ``<think>`` (R1, and V3.1 /
V3.2 in thinking mode), so the reply starts inside reasoning and shows only
``</think>``; a reply that writes ``<think>`` itself reads the same.  For a model in
non-thinking mode (its template writes ``</think>`` into the prompt), and for a server
that moves the reasoning out of the content (a reasoning parser), set
``ParserConfig(start_in_thinking=False)``: otherwise the whole content, which has no
``</think>``, is read as reasoning and its calls do not run.
"""

Variant = Literal["v3", "v3.1", "dsml"]


class DeepSeekDialect(Dialect):
    r"""DeepSeek's tool calls: V3 / R1, V3.1 and V3.2 / V4 (DSML), read alike.

    Args:
        variant: the form :meth:`format_call` writes: ``"v3.1"`` (the default: the
            shortest, and what V3.1 and later models read in their history), ``"v3"``
            (the typed call with a JSON fence) or ``"dsml"`` (V3.2's
            ``function_calls`` section).

    Example:
        >>> text = DeepSeekDialect().format_call("read_file", {"path": "a.py"})
        >>> print(text.replace("><", ">\n<"))  # one line, shown a marker a line
        <｜tool▁calls▁begin｜>
        <｜tool▁call▁begin｜>read_file<｜tool▁sep｜>{"path": "a.py"}<｜tool▁call▁end｜>
        <｜tool▁calls▁end｜>
    """

    name = "deepseek"
    title = "DeepSeek's special-token tool calls (V3, V3.1) and DSML (V3.2, V4)"
    plugin_key = "deepseek"
    thinking = DEEPSEEK_THINKING
    special_tokens = True  # its markers are special tokens: servers drop them unless asked

    def __init__(self, variant: Variant = "v3.1") -> None:
        if variant not in ("v3", "v3.1", "dsml"):
            raise ConfigError(f"unknown deepseek variant {variant!r} (v3, v3.1 or dsml)")
        self.variant = variant

    def make_plugin(self, names: tuple[str, ...]) -> list[ParsePlugin]:
        """The V3 / V3.1 section plugin and one DSML plugin per section name."""
        return [DeepSeekToolCallsPlugin(), *(DsmlPlugin(s) for s in DSML_SECTIONS)]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write one call as the DeepSeek chat templates render it, in :attr:`variant`.

        Raises:
            ValueError: (dsml) a string value holds ``</｜DSML｜parameter>`` followed by
                DSML markup, which the reader would take for the value's end.
        """
        if self.variant == "dsml":
            return _format_dsml(tool_name, args)
        arguments = json.dumps(to_jsonable_python(dict(args), by_alias=True), ensure_ascii=False)
        if self.variant == "v3":
            call = f"function{SEP}{tool_name}\n```json\n{arguments}\n```"
        else:
            call = f"{tool_name}{SEP}{arguments}"
        return f"{CALLS_BEGIN}{CALL_BEGIN}{call}{CALL_END}{CALLS_END}"

    def _instructions(self) -> str:
        return "deepseek_instructions"


_AMBIGUOUS: Final = re.compile(r"</｜DSML｜ ?parameter>[ \t\r\n]*</?｜DSML｜")


def _format_dsml(tool_name: str, args: Mapping[str, Any]) -> str:
    lines = [f"<{DSML}function_calls>", f'<{DSML}invoke name="{tool_name}">']
    for param, value in args.items():
        if isinstance(value, str):
            text, string = value, "true"
        else:
            text = json.dumps(to_jsonable_python(value, by_alias=True), ensure_ascii=False)
            string = "false"
        # The writer's own closing tag follows the value: a value that ends with a
        # closing tag (and whitespace) would end before it.
        if _AMBIGUOUS.search(text + _PARAM_CLOSES[0]):
            raise ValueError(
                f"parameter {param!r} of {tool_name!r} cannot be written in DSML: its value "
                "holds </｜DSML｜parameter> followed by DSML markup"
            )
        lines.append(f'<{DSML}parameter name="{param}" string="{string}">{text}</{DSML}parameter>')
    lines += [f"</{DSML}invoke>", f"</{DSML}function_calls>"]
    return "\n".join(lines)


register(DeepSeekDialect().record())
