# ruff: noqa: RUF001, RUF002  (the format's markers are fullwidth characters)
r"""DeepSeek V3 / R1 and V3.1: calls of special tokens, the arguments one JSON object.

Both write ``<｜tool▁call▁begin｜>`` ... ``<｜tool▁call▁end｜>`` inside
``<｜tool▁calls▁begin｜>``; V3/R1 puts ``function<｜tool▁sep｜>NAME`` and a JSON fence,
V3.1 ``NAME<｜tool▁sep｜>`` and the bare JSON.  One reader reads both, each call by what
follows its begin marker (a reply may mix them): :class:`ToolCallsReader`.  See the
package.

Why V3 and V3.1 are one module, not a V3 reader and a V3.1 reader the section hands
each call to: they differ only in the few characters between the call's begin marker
and its JSON (``function<｜tool▁sep｜>NAME`` and a fence line, against
``NAME<｜tool▁sep｜>``), and which of the two a call is becomes known only there, after
``<｜tool▁sep｜>`` and, for a tool named ``function``, after the whitespace that follows
it (V3's name line, or V3.1's ``{``).  Everything after that -- the JSON arguments and
their scanner, the fence, the end marker, the outcome -- is the same.  Two body readers
would share all of it and hand over in the middle of a call, so the difference is two
states (``_TYPED``, ``_NAME``) of one table.
"""

from __future__ import annotations

from ...core.events import ParseEvent, Span
from ...core.kit import (
    CallContext,
    FastData,
    JsonScanner,
    PluginBlock,
    refuse_chunk,
    validate_arguments,
)
from .section import (
    _DECODER,
    _NAME_END,
    _NAME_MAX,
    _WS,
    _WS_RUN,
    CALL_BEGIN,
    CALL_END,
    CALLS_BEGIN,
    CALLS_END,
    SEP,
    _Call,
    _partial,
    _SectionPlugin,
    _SectionReader,
)

_GAP, _HEAD, _TYPED, _NAME, _PRE, _ARGS, _POST, _BAD = range(8)


class ToolCallsReader(_SectionReader):
    """Reads a ``<｜tool▁calls▁begin｜>`` section: V3 and V3.1 calls, told apart per call."""

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self.state = _GAP
        self.handlers = {
            _GAP: self._gap,
            _BAD: self._skip_bad,
            _HEAD: self._head,
            _TYPED: self._typed,
            _NAME: self._name,
            _PRE: self._pre,
            _ARGS: self._args,
            _POST: self._post,
        }
        self._scanner = JsonScanner(keep_text=False)
        self._scan_base = 0  # absolute offset of the first character fed to the scanner
        self._fence = False  # the arguments opened with a ``` fence line
        self._head_span: Span = (0, 0)  # where "function" was, for a tool of that name
        self._deltas = call.emit_deltas

    def _gap(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """Between calls: up to the next ``<｜tool▁call▁begin｜>``."""
        i = buf.find(CALL_BEGIN, pos)
        if i < 0:
            return len(buf) - _partial(buf, pos, (CALL_BEGIN,)), True
        self._open_call(base + i)
        self.state = _HEAD
        self._fence = False
        return i + len(CALL_BEGIN), False

    def _skip_bad(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """A call that cannot be read: up to its ``<｜tool▁call▁end｜>``."""
        i = buf.find(CALL_END, pos)
        if i < 0:
            return len(buf) - _partial(buf, pos, (CALL_END,)), True
        self._close_call(base + i + len(CALL_END))
        self.state = _GAP
        return i + len(CALL_END), False

    def _typed(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """After ``function<｜tool▁sep｜>``: V3's name, or V3.1's arguments of a tool so named."""
        k = _WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
        if k == len(buf):
            return k, True
        if buf[k] in "{[":  # V3.1 with a tool named "function"
            self._announce("function", self._head_span, out)
            self.state = _PRE
            return pos, False
        self.state = _NAME
        return pos, False

    def _bad(self, why: str) -> None:
        self._fail(why)
        self.state = _BAD

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
            self.state = _TYPED
        else:
            self._announce(head, (base + pos, base + j), out)
            self.state = _PRE
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
        self.state = _PRE
        return k, False

    def _pre(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
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
        self.state = _ARGS
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
                    self.state = _POST
                    return end, False
            if e < 0:
                if stop < n and scanner.in_string:
                    # Inside a string even a whole end marker is content: what may begin
                    # one is arguments now, as the fast path takes it.
                    scanner.feed(buf[stop:n])
                    stop = n
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
        if self.state != _ARGS or self.held or self.current is None:
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

    def _post(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """After the arguments: the closing fence, then ``<｜tool▁call▁end｜>``."""
        n = len(buf)
        k = _WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
        if buf.startswith(CALL_END, k):
            self._close_call(base + k + len(CALL_END))
            self.state = _GAP
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
        return not (self.state == _ARGS and self._scanner.in_string)

    def _body_complete(self) -> bool:
        return self.state == _POST and self.held.strip(_WS) in ("", "```")

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


class DeepSeekToolCallsPlugin(_SectionPlugin):
    """Reads the V3 / V3.1 section ``<｜tool▁calls▁begin｜>`` … ``<｜tool▁calls▁end｜>``.

    ``ParserConfig(dialect="deepseek")`` registers one.
    """

    name = "deepseek_tool_calls"
    start_tags: tuple[str, ...] = (CALLS_BEGIN,)
    end_tag = CALLS_END
    reader = ToolCallsReader
