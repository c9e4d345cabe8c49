r"""The glm dialect: ``<arg_key>``/``<arg_value>`` pairs after the tool's name in ``<tool_call>``.

Written by the GLM-4.5, 4.6, 4.7 and 5.x models (vLLM's ``glm45`` and ``glm47``
parsers, SGLang's ``glm45``/``glm47``, llama.cpp's GLM 4.5 format).  GLM-4.5 puts each
part on a line of its own, GLM-4.7 and later write them compact; both read alike::

    <tool_call>get_weather
    <arg_key>city</arg_key>
    <arg_value>Beijing</arg_value>
    </tool_call>

    <tool_call>get_weather<arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call>

A value is written as the chat template renders it: a string as it is (never quoted),
anything else as JSON.  Reasoning is ``<think>…</think>``; the templates often open it
themselves, so the reply may hold only the closing tag.

Theory of operation
-------------------

glm opens with the ``<tool_call>`` of hermes (``{`` follows) and qwen3_coder
(``<function=`` follows), so it joins their shared plugin
(:class:`~stream_parser.dialects._toolcall.ToolCallPlugin`) as the format of the blocks
whose first non-whitespace character starts a name.  :class:`GlmReader` is a small
state machine over the block's content:

``NAME``
    The tool's name, up to the first ``<arg_key>`` (or the end of the block: a tool
    without arguments).  Whitespace around it is framing; a name with whitespace or
    ``<`` inside, or longer than 256 characters, makes the call malformed.  Once the
    name is complete the call is announced (``ToolCallStartEvent``, registered tool).
``BODY``
    Between pairs: whitespace, then ``<arg_key>`` or the end of the block.
``KEY``
    The argument's name, up to ``</arg_key>``; then whitespace and ``<arg_value>``.
``VALUE``
    The value, streamed as it arrives (``ToolParamDeltaEvent`` for a parameter of a
    registered tool).  ``</arg_value>`` closes it only when what follows it, after at
    most ``buffer_keep_size`` characters of whitespace, is ``<arg_key>`` or the block's
    ``</tool_call>``; anywhere else the tag is content, and so is ``</tool_call>``
    (code that talks about the format is safe).  Until it is decided the reader holds
    the candidate tag and the whitespace after it (a bounded hold: linear time).
``MALFORMED``
    Anything else (a missing ``<arg_value>``, a stray ``</arg_key>``, text between the
    pairs): the rest of the block is not interpreted; the block comes out as a
    ``malformed_tool`` error and its raw text, and never runs.

When the block closes each value is converted by its field's type: a ``str`` field
takes the text exactly as written (never JSON-decoded), a field that admits a string
among other types is converted by :func:`~stream_parser.schema.coerce.coerce_value`
(``null`` is None when the field admits it), any other field reads the text as JSON,
and text that is not JSON is converted by ``coerce_value``; then the tool's model
validates the arguments (``invalid_params`` when it refuses them).  A key the tool does
not have gives ``unknown_param`` and is dropped; one given twice gives
``duplicate_param`` and the last value wins.
"""

from __future__ import annotations

import json
import re
import types
import typing
from collections.abc import Mapping
from typing import Any, Final

from pydantic import BaseModel

from ..core.events import ErrorType, ParseEvent
from ..core.kit import (
    CallContext,
    FastData,
    Framing,
    PluginBlock,
    Reader,
    StateHandler,
    ThinkingFormat,
    ValueRun,
    field_annotation,
    register,
    tag_stop,
)
from ..schema.coerce import coerce_value
from ._base import value_text
from ._toolcall import ToolCallTagDialect

__all__ = ["GLM_FRAMING", "GLM_THINKING", "GlmDialect", "GlmReader"]

_KEY_OPEN: Final = "<arg_key>"
_KEY_CLOSE: Final = "</arg_key>"
_VALUE_OPEN: Final = "<arg_value>"
_VALUE_CLOSE: Final = "</arg_value>"
_END: Final = "</tool_call>"  # the block's end; in a value, content unless the stream ends
_VALUE_STOP: Final = tag_stop((_VALUE_CLOSE,))
"""Where ``</arg_value>`` is in a value, or begins and is cut by the end of a chunk."""
_VALUE_CLOSE_RE: Final = re.compile(re.escape(_VALUE_CLOSE))
_RUN_STOP: Final = "<"
"""A value's chunk without it is all value, unless a cut closing tag is held before it."""
_NAME_MAX: Final = 256
"""The longest tool or argument name read; a longer one makes the call malformed."""
_WS: Final = " \t\r\n"
_WS_RUN: Final = re.compile(r"[ \t\r\n]*")
_HAS_WS: Final = re.compile(r"[ \t\r\n]")

_NAME, _BODY, _KEY, _BETWEEN, _VALUE, _MALFORMED = range(6)

GLM_FRAMING: Final = Framing(after_thinking="\n", before_call="\n")
"""The GLM-4.5 template: ``<think>…</think>\n`` before the text, ``\n<tool_call>``."""

GLM_THINKING: Final = ThinkingFormat((("<think>", "</think>"),), bare_close=True)
"""``<think>…</think>``; a bare ``</think>`` closes reasoning the template opened."""


def _tag_at(buf: str, k: int, tag: str) -> bool | None:
    """Is ``tag`` at ``buf[k:]``?  None when the buffer ends inside what may become it."""
    if buf.startswith(tag, k):
        return True
    rest = buf[k : k + len(tag)]
    if k + len(rest) == len(buf) and tag.startswith(rest):
        return None
    return False


def _cut_close(buf: str, pos: int) -> int:
    """Length of a ``</arg_value>`` cut by the end of ``buf[pos:]`` (0 if none)."""
    n = len(buf)
    i = buf.find("<", max(pos, n - len(_VALUE_CLOSE) + 1))
    while i >= 0:
        if _VALUE_CLOSE.startswith(buf[i:]):
            return n - i
        i = buf.find("<", i + 1)
    return 0


class GlmReader(Reader):
    """Reads one glm block: ``NAME<arg_key>k</arg_key><arg_value>v</arg_value>…``."""

    malformed_state = _MALFORMED

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self.state = _NAME
        self._ws_cap = call.config.buffer_keep_size
        self._name: list[str] = []
        self._name_len = 0
        self._tool = ""
        self._registered = False
        self._known: frozenset[str] = frozenset()
        self._key: list[str] = []
        self._key_len = 0
        self._key_at = 0
        self._param = ""
        self._param_known = False
        self._deltas = False  # the fast path's: a known parameter's deltas are wanted
        # Each value, as its offsets in the stream: taken from the block's text when the
        # block closes, so that it is not kept a second time while it streams.
        self._args: dict[str, tuple[int, int]] = {}
        self._value_from = 0  # where the open value begins; the run has where it ends
        # The open value (its tool, name, call index and end), which the core streams
        # itself while it is plain: armed only for a known parameter, nothing held.
        self._run = ValueRun(_RUN_STOP)
        self.handlers: dict[int, StateHandler] = {
            _NAME: self._in_name,
            _BODY: self._in_body,
            _KEY: self._in_key,
            _BETWEEN: self._in_between,
            _VALUE: self._in_value,
        }

    # --- streaming -----------------------------------------------------------------------

    def _in_name(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        lt = buf.find("<", pos)
        stop = len(buf) if lt < 0 else lt
        piece = buf[pos:stop]
        self._name.append(piece)
        self._name_len += len(piece)
        if self._name_len > _NAME_MAX:
            return self.malformed("the tool's name is too long")
        if lt < 0:
            return stop, True
        found = _tag_at(buf, lt, _KEY_OPEN)
        if found is None:
            return lt, True
        if not found:
            return self.malformed("expected <arg_key> after the tool's name")
        if not self._take_name():
            return self.malformed("the tool's name is empty or holds whitespace")
        if self._registered:
            self.announced = True
            raw = "".join(self._name)
            end = base + lt - (len(raw) - len(raw.rstrip(_WS)))  # the name's last character
            out.append(self.call.start(self._tool, (end - len(self._tool), end)))
        self._open_key(base + lt)
        return lt + len(_KEY_OPEN), False

    def _take_name(self) -> bool:
        """The name read so far, stripped, becomes the tool's; False if it is not a name."""
        name = "".join(self._name).strip(_WS)
        if not name or _HAS_WS.search(name):
            return False
        self._tool = name
        self._registered = name in self.call.tool_registry
        if self._registered:
            self._known = self.call.xml_parser.param_names(name)
        return True

    def _in_body(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        k = _WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
        if k == len(buf):
            return k, True
        found = _tag_at(buf, k, _KEY_OPEN)
        if found is None:
            return k, True
        if not found:
            return self.malformed(f"expected <arg_key> in the call of {self._tool!r}")
        self._open_key(base + k)
        return k + len(_KEY_OPEN), False

    def _open_key(self, at: int) -> None:
        """An ``<arg_key>`` tag starts at offset ``at``: read the argument's name."""
        self._key, self._key_len = [], 0
        self._key_at = at
        self.state = _KEY

    def _in_key(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        lt = buf.find("<", pos)
        stop = len(buf) if lt < 0 else lt
        piece = buf[pos:stop]
        self._key.append(piece)
        self._key_len += len(piece)
        if self._key_len > _NAME_MAX:
            return self.malformed("an argument's name is too long")
        if lt < 0:
            return stop, True
        found = _tag_at(buf, lt, _KEY_CLOSE)
        if found is None:
            return lt, True
        if not found:
            return self.malformed("expected </arg_key> after an argument's name")
        key = "".join(self._key).strip(_WS)
        if not key:
            return self.malformed("an argument's name is empty")
        self._param = key
        self.state = _BETWEEN
        end = lt + len(_KEY_CLOSE)
        if self._registered:
            self._check_key(key, (self._key_at, base + end), out)
        return end, False

    def _check_key(self, key: str, span: tuple[int, int], out: list[ParseEvent]) -> None:
        """Report a key the tool does not have (it is ignored) or one given again."""
        tag = f"{_KEY_OPEN}{key}{_KEY_CLOSE}"
        if key not in self._known:
            known = ", ".join(sorted(self._known)) or "none"
            why = (
                f"tool {self._tool!r} has no parameter {key!r}; it is ignored (parameters: {known})"
            )
            out.append(self.call.side_error(ErrorType.UNKNOWN_PARAM, why, span, tag))
        elif key in self._args:
            why = f"parameter {key!r} of tool {self._tool!r} is given twice; the last value wins"
            out.append(self.call.side_error(ErrorType.DUPLICATE_PARAM, why, span, tag))

    def _in_between(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        k = _WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
        if k == len(buf):
            return k, True
        found = _tag_at(buf, k, _VALUE_OPEN)
        if found is None:
            return k, True
        if not found:
            return self.malformed(f"expected <arg_value> after the argument {self._param!r}")
        self._value_from = start = base + k + len(_VALUE_OPEN)
        self._run.open(self._tool, self._param, self.call.call_index, start)
        self._param_known = self._registered and self._param in self._known
        self.state = _VALUE
        return k + len(_VALUE_OPEN), False

    def _in_value(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        n = len(buf)
        s = buf.find(_VALUE_CLOSE, pos)
        while s >= 0:
            j = s + len(_VALUE_CLOSE)
            k = _WS_RUN.match(buf, j).end()  # type: ignore[union-attr]
            if k - j <= self._ws_cap:
                if k == n:
                    # Only whitespace follows so far: the block's end tag would close it.
                    self._take(buf, pos, s, base, out)
                    self._pending_end = True
                    return s, True
                found = _tag_at(buf, k, _KEY_OPEN)
                if found is None:
                    self._take(buf, pos, s, base, out)
                    return s, True
                if found:
                    self._take(buf, pos, s, base, out)
                    self._end_value()
                    self.state = _BODY
                    return k, False
            s = buf.find(_VALUE_CLOSE, s + 1)
        stop = n - _cut_close(buf, pos)
        self._take(buf, pos, stop, base, out)
        return stop, True

    def _take(self, buf: str, start: int, end: int, base: int, out: list[ParseEvent]) -> None:
        """``buf[start:end]`` belongs to the open value."""
        if start < end:
            self._run.end = base + end
            if self._param_known and self.call.emit_deltas:
                out.append(
                    self.call.param_delta(
                        self._tool, self._param, buf[start:end], (base + start, base + end)
                    )
                )

    def fast_path(self) -> FastData | None:
        """Inside a value, only ``</arg_value>`` matters (whole, or cut and held)."""
        if self.state != _VALUE or self._pending_end:
            return None
        if self.held and _cut_close(self.held, 0) != len(self.held):
            return None
        self._deltas = self._param_known and self.call.emit_deltas  # fixed while it runs
        self._run.armed = self._param_known and not self.held
        return _VALUE_CLOSE_RE, self._plain, True  # </tool_call> in a value is content

    def value_run(self) -> ValueRun | None:
        """The open value: the core streams its chunks without ``<`` while it is armed."""
        return self._run

    def _plain(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`feed` for a value's chunk without ``</arg_value>``.

        As on the slow path, the start of a ``</arg_value>`` cut by the end of the
        chunk is held; the chunk is left to the slow path when it completes one.
        """
        held = self.held
        if held:
            buf = held + data
            if _VALUE_CLOSE in buf:
                return False
            base = start - len(held)  # the hold is the text right before the chunk
        elif "<" in data:
            buf, base = data, start
        else:  # nothing held, nothing to hold (the run takes these when it is armed)
            self._run.end = end = start + len(data)
            if self._deltas:
                out.append(self.call.param_delta(self._tool, self._param, data, (start, end)))
            return True
        cut = _VALUE_STOP.search(buf)
        end = len(buf) if cut is None else cut.start()
        self._take(buf, 0, end, base, out)
        if held or end < len(buf):
            self.hold(buf[end:], base + end)
            self._run.armed = self._param_known and end == len(buf)
        return True

    def _end_value(self) -> None:
        """The open value is complete: keep it (a key given twice: the last wins).

        For a registered tool only its parameters are kept (an unknown one was
        reported); for an unknown tool nothing is built, so nothing needs keeping.
        """
        if self._param_known:
            self._args[self._param] = (self._value_from, self._run.end)

    def accepts_end(self) -> bool:
        """``</tool_call>`` ends the block, except inside a value that is not closed."""
        return self.state != _VALUE or self._pending_end

    def finish_unclosed(self, block: PluginBlock) -> list[ParseEvent] | None:
        """The call, when the stream ended right after ``</tool_call>`` in the last value."""
        written = block.content.rstrip(_WS)
        end = block.span[1] - (len(block.content) - len(written)) - len(_END)
        if self.state != _VALUE or self._pending_end or not written.endswith(_END):
            return None
        if _VALUE_CLOSE in block.between(self._value_from, end):
            return None  # the close is there, with text after it: not a missing close
        self._run.end, self.state = end, _BODY  # (nothing held: it ends with </tool_call>)
        self._end_value()
        return self.finish(block)

    # --- the outcome ---------------------------------------------------------------------

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """The call, or an error event and the block's raw text."""
        state = self.state
        if state == _VALUE and self._pending_end:
            self._end_value()  # "</arg_value></tool_call>": the last value is complete
            self.drop_hold()
            state = _BODY
        elif state == _NAME and not self.held:
            state = _BODY if self._take_name() else _MALFORMED
            if state == _MALFORMED:
                self.why = "the tool's name is empty or holds whitespace"
        if state != _BODY or (self.held.strip(_WS) and state != _MALFORMED):
            why = self.why or f"the call of {self._tool or 'a tool'!r} is not complete"
            return self.malformed_call(why, block)
        model = self.call.tool_registry.get(self._tool)
        if model is None:
            return self.call.unknown_tool(self._tool, block)
        arguments = {
            key: _convert(model, key, block.between(start, end))
            for key, (start, end) in self._args.items()
        }
        result = self.call.validate(self._tool, model, arguments)
        return self.call.call(self._tool, result, block)


# === values =============================================================================


def _union_members(annotation: Any) -> tuple[Any, ...]:
    """The members of a union annotation (``X | Y``, ``Optional[X]``); () otherwise."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        return typing.get_args(annotation)
    return ()


def _convert(model: type[BaseModel], key: str, raw: str) -> Any:
    """A value as the template wrote it, by its field's type (see the module's notes).

    Example:
        >>> class Weather(BaseModel):
        ...     city: str
        ...     days: int
        >>> _convert(Weather, "city", "10001"), _convert(Weather, "days", " 3 ")
        ('10001', 3)
    """
    annotation = field_annotation(model, key)
    if annotation is str:
        return raw
    members = _union_members(annotation)
    if str in members:
        if raw.strip(_WS) == "null" and type(None) in members:
            return None
        return coerce_value(raw, annotation)
    if raw.strip(_WS):
        try:
            return json.loads(raw)
        except (ValueError, RecursionError):
            pass
    if annotation is Any:
        return raw
    return coerce_value(raw, annotation)


# === the dialect ========================================================================

_AMBIGUOUS: Final = re.compile(r"</arg_value>[ \t\r\n]*(?:<arg_key>|</tool_call>)")


class GlmDialect(ToolCallTagDialect):
    """``<tool_call>NAME<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>``.

    Example:
        >>> print(GlmDialect().format_call("read_file", {"path": "a.py", "limit": 10}))
        <tool_call>read_file<arg_key>path</arg_key><arg_value>a.py</arg_value><arg_key>limit</arg_key><arg_value>10</arg_value></tool_call>
    """

    name = "glm"
    title = "<arg_key> and <arg_value> tags after the tool's name in <tool_call> tags (GLM)"
    call_separator = ""  # GLM-4.7's template writes a turn's calls one after another
    framing = GLM_FRAMING
    thinking = GLM_THINKING
    block_reader = GlmReader
    first_chars = "^{<["  # a name: anything but what hermes and qwen3_coder read
    reasoning_guard = first_chars  # SGLang and vLLM run a call written in reasoning
    markers = (_KEY_OPEN, _KEY_CLOSE, _VALUE_OPEN, _VALUE_CLOSE)

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write the call compact, as the GLM-4.7 and 5.x chat templates render it.

        Strings verbatim, other values as JSON (None is ``null``).

        Raises:
            ValueError: the tool's or an argument's name holds markup or whitespace, or
                a value holds ``</arg_value>`` followed by ``<arg_key>`` or
                ``</tool_call>``: the reader would take it for the call's structure.
        """
        if not tool_name or re.search(r"[<>\s]", tool_name):
            raise ValueError(f"{tool_name!r} cannot be written as a glm tool name")
        parts = [f"<tool_call>{tool_name}"]
        for param, value in args.items():
            if not param or re.search(r"[<>\s]", param):
                raise ValueError(f"{param!r} cannot be written as a glm argument name")
            text = value_text(value)
            if _AMBIGUOUS.search(text):
                raise ValueError(
                    f"parameter {param!r} of {tool_name!r} cannot be written in the glm "
                    "format: its value holds </arg_value> followed by <arg_key> or </tool_call>"
                )
            parts.append(f"{_KEY_OPEN}{param}{_KEY_CLOSE}{_VALUE_OPEN}{text}{_VALUE_CLOSE}")
        parts.append("</tool_call>")
        return "".join(parts)

    def _instructions(self) -> str:
        return "glm_instructions"


register(GlmDialect().record())
