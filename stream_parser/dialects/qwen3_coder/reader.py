r"""The qwen3_coder reader: XML-like function and parameter tags inside ``<tool_call>``.

It reads one wire format, whose rules (a value ends by what follows its closing tag; a
missing ``</parameter>`` is recovered at a tag line) are one state machine: a cut would
be an artificial seam through the value's states, so it stays whole, under 600 lines.

Theory of operation.  :class:`Qwen3CoderReader` is a small state machine over the block's content:

``FUNCTION``
    Expects ``<function=NAME>`` (leading whitespace is skipped by the plugin).  Once the
    tag is complete the call is announced
    (:class:`~stream_parser.core.events.ToolCallStartEvent`, for a registered tool).
``BODY``
    Between parameters: whitespace, then ``<parameter=P>`` or ``</function>``.
``VALUE``
    Inside a parameter's value.  Its characters are streamed verbatim as
    :class:`~stream_parser.core.events.ToolParamDeltaEvent`\ s (for a parameter the tool
    has).  As in rule 5 of the XML format, a ``</parameter>`` closes the value only when
    what follows it, after optional whitespace, is ``<parameter=`` or ``</function>``;
    anything else makes it part of the value, so code that contains the tags is safe.

    A model sometimes leaves out a ``</parameter>``.  The value then ends, as the model
    meant, at

    * a line that starts (after at most ``buffer_keep_size`` spaces or tabs) with
      ``<parameter=NAME>`` for a parameter of the tool not given yet in this call (the
      start of the value counts as the start of a line): it opens that parameter;
    * ``</function>`` followed, after whitespace, by the ``</tool_call>`` that ends the
      block (:meth:`Qwen3CoderReader.accepts_end`).

    Other such markup makes the call ``malformed_tool``: a ``<parameter=`` line for a
    name the tool does not have or that was given already (the value it is in included),
    and ``</function>`` followed by ``<function=`` or ``<tool_call>``.  So a call never
    runs with one value swallowing the next, nor with a value that holds a tag line.
    Tags in the middle of a line are content (code mentions them), and so is
    ``</tool_call>`` anywhere else in a value.
``AFTER``
    After ``</function>``: only whitespace may follow before ``</tool_call>``, which is
    accepted as the end of the block only here, right after a ``</function>`` that ends
    a value, or once the block is known to be malformed.
``MALFORMED``
    Anything unexpected: the rest of the block is not interpreted, and the block comes
    out as a ``malformed_tool`` error and its raw text.

The reader keeps a small *hold*: characters it cannot decide yet (a tag cut by the end
of a piece, a ``</parameter>`` or ``</function>`` and the whitespace after it while it
waits for the next tag, or what may be a ``<parameter=`` tag at the start of a line).
The hold is bounded by the longest tag name plus ``buffer_keep_size`` characters of
whitespace, so every character is looked at a bounded number of times (linear time).
A line break and the indentation after it are value as they come: the reader only
remembers that a line has begun (the run's ``line``), and if the line then opens a parameter,
the value it ends loses that indentation (the line break stays, as the one the close
would have followed).
"""

from __future__ import annotations

import re
from typing import Final

from ...core.events import ErrorType, ParseEvent
from ...core.kit import (
    CallContext,
    FastData,
    PluginBlock,
    Reader,
    StateHandler,
    ValueRun,
    tag_stop,
)

_FUNCTION_OPEN: Final = "<function="
_FUNCTION_CLOSE: Final = "</function>"
_PARAM_OPEN: Final = "<parameter="
_PARAM_CLOSE: Final = "</parameter>"
_TOOL_CALL_OPEN: Final = "<tool_call>"
_TOOL_CALL_CLOSE: Final = "</tool_call>"
_NAME_MAX: Final = 256
"""The longest function or parameter name read; a longer one makes the call malformed."""
_BAD_NAME_CHARS: Final = re.compile(r"[<>\r\n]")
_WS_RUN: Final = re.compile(r"[ \t\r\n]*")
_INDENT: Final = re.compile(r"[ \t]*")
_VALUE_MARK: Final = re.compile(r"</parameter>|</function>|\n(?=[ \t]*(?:<|\Z))")
"""What can end a value: a close tag, or a line (which may hold a ``<parameter=`` tag)."""
_VALUE_STOP: Final = re.compile(r"</parameter>|</function>|\n[ \t]*<")
"""What a value's text must not hold for the fast path: a closing tag, or a line that
opens with a tag (a cut one is held, as on the slow path)."""
_FAST_STOP: Final = re.compile(r"</(?:parameter|function)>")
"""The closing tags of :data:`_VALUE_STOP`, which the parser looks for in each chunk.
Every match begins with ``<``, so a chunk without one is not searched at all; the lines
that open with a tag, which can begin with a line break too, are left to
:meth:`Qwen3CoderReader._plain`, which looks for them only in a chunk that holds both."""
_LINE_OPEN: Final = re.compile(r"\n[ \t]*<")
_RUN_STOP: Final = "<"
"""A value's chunk without it is all value, taken by the core (:class:`ValueRun`), which
also follows the line breaks and indentation that may begin a tag line."""
_CUT_CLOSE: Final = tag_stop((_PARAM_CLOSE, _FUNCTION_CLOSE))
"""In a chunk without closing tags: the start of one cut by its end."""

_FUNCTION, _BODY, _VALUE, _AFTER, _MALFORMED = range(5)
_WAIT: Final = -1  # an open tag's answer: the buffer ends before it can be decided
_NO: Final = -2  # ... or it is not that tag
# What a </function> inside a value is, by what follows it:
_CONTENT, _UNDECIDED, _BLOCK_END, _ANOTHER_CALL = range(4)


def _cut_close(buf: str, pos: int) -> int:
    """Length of a ``</parameter>`` or ``</function>`` cut by the end of ``buf[pos:]``.

    One pass for both tags (they start alike), over the last characters only.
    """
    n = len(buf)
    i = buf.find("<", max(pos, n - len(_PARAM_CLOSE) + 1))
    while i >= 0:
        tail = buf[i:]
        if _PARAM_CLOSE.startswith(tail) or _FUNCTION_CLOSE.startswith(tail):
            return n - i
        i = buf.find("<", i + 1)
    return 0


def _open_tag(buf: str, pos: int, prefix: str) -> tuple[int, str]:
    """Is ``prefix NAME>`` at ``buf[pos:]``?

    Returns:
        ``(end, name)`` for a whole tag; ``(_WAIT, "")`` when the buffer ends inside
        something that may still become one; ``(_NO, "")`` otherwise.
    """
    n = len(buf)
    if not buf.startswith(prefix, pos):
        rest = buf[pos : pos + len(prefix)]
        return (_WAIT, "") if pos + len(rest) == n and prefix.startswith(rest) else (_NO, "")
    first = pos + len(prefix)
    gt = buf.find(">", first, first + _NAME_MAX + 1)
    if gt < 0:
        body = buf[first : first + _NAME_MAX + 1]
        if len(body) <= _NAME_MAX and first + len(body) == n and not _BAD_NAME_CHARS.search(body):
            return _WAIT, ""
        return _NO, ""
    name = buf[first:gt]
    if _BAD_NAME_CHARS.search(name) or not name.strip():
        return _NO, ""
    return gt + 1, name.strip()


class Qwen3CoderReader(Reader):
    """Reads one qwen3_coder block: ``<function=NAME><parameter=P>v</parameter></function>``."""

    malformed_state = _MALFORMED
    call_open: str = _TOOL_CALL_OPEN  # after a </function> in a value: another call

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self.state = _FUNCTION
        self._ws_cap = call.config.buffer_keep_size
        self._deltas = call.emit_deltas
        self._tool = ""
        self._registered = False
        self._known: frozenset[str] = frozenset()
        # Each value, as its offsets in the stream: taken from the block's text when the
        # block closes, so that it is not kept a second time while it streams.
        self._params: dict[str, tuple[int, int]] = {}
        self._param = ""
        self._param_known = False
        self._value_from = 0  # where the open value begins; the run has where it ends
        # The open value (its tool, name, call index and end), which the core streams
        # itself while it is plain: armed only in a value with nothing held or pending.
        # Its ``line``: the value taken so far ends with a line break and this many
        # characters of indentation (-1: it does not), so the line may still open with a
        # tag.
        self._run = ValueRun(_RUN_STOP, indent_cap=self._ws_cap)
        self._given: set[str] = set()  # every parameter opened in this call
        # The value has just opened: its start counts as the start of a line.
        self._fresh = False
        self._bad_at = 0  # where in the stream the block became malformed (``why``)
        self.handlers: dict[int, StateHandler] = {
            _FUNCTION: self._in_function,
            _BODY: self._in_body,
            _VALUE: self._in_value,
            _AFTER: self._in_after,
        }

    # --- streaming -----------------------------------------------------------------------

    def _in_after(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        n = len(buf)
        k = _WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
        if k < n:
            self._malformed("unexpected text after </function>", base + k)
        return n, True

    def _malformed(self, why: str, at: int) -> None:
        """The block cannot be read: ``why``, at offset ``at`` (shown in the message)."""
        self.malformed(why)
        self._bad_at = at

    def _in_function(
        self, buf: str, pos: int, base: int, out: list[ParseEvent]
    ) -> tuple[int, bool]:
        end, name = _open_tag(buf, pos, _FUNCTION_OPEN)
        if end == _WAIT:
            return pos, True
        if end == _NO:
            self._malformed("expected <function=NAME>", base + pos)
            return len(buf), True
        self._tool = name
        call = self.call
        self._registered = name in call.tool_registry
        if self._registered:
            self._known = call.xml_parser.param_names(name)
            self.announced = True
            out.append(call.start(name, (base + pos, base + end)))
        self.state = _BODY
        return end, False

    def _in_body(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        n = len(buf)
        k = _WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
        if k == n:
            return n, True
        end, name = _open_tag(buf, k, _PARAM_OPEN)
        if end >= 0:
            self._open_param(name, (base + k, base + end), out)
            return end, False
        if buf.startswith(_FUNCTION_CLOSE, k):
            self.state = _AFTER
            return k + len(_FUNCTION_CLOSE), False
        if end == _WAIT or (n - k < len(_FUNCTION_CLOSE) and _FUNCTION_CLOSE.startswith(buf[k:])):
            return k, True
        self._malformed(
            f"expected <parameter=NAME> or </function> in the body of {self._tool!r}", base + k
        )
        return n, True

    def _open_param(self, name: str, span: tuple[int, int], out: list[ParseEvent]) -> None:
        self._param = name
        self._value_from = span[1]
        self._run.open(self._tool, name, self.call.call_index, span[1])
        self.state = _VALUE
        self._fresh = True
        self._given.add(name)
        self._param_known = known = name in self._known
        if not self._registered:
            return
        tool = self._tool
        if not known:
            out.append(
                self.call.side_error(
                    ErrorType.UNKNOWN_PARAM,
                    f"tool {tool!r} has no parameter {name!r}; it is ignored "
                    f"(parameters: {', '.join(sorted(self._known)) or 'none'})",
                    span,
                    f"<parameter={name}>",
                )
            )
        elif name in self._params:
            out.append(
                self.call.side_error(
                    ErrorType.DUPLICATE_PARAM,
                    f"parameter {name!r} of tool {tool!r} is given twice; the last value wins",
                    span,
                    f"<parameter={name}>",
                )
            )

    def _in_value(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        n = len(buf)
        if self._fresh:
            # A <parameter= tag right at the start of the value (a close is missing).
            end, at, name = self._tag_line(buf, pos)
            if end == _WAIT:
                return pos, True
            self._fresh = False
            if end >= 0:
                return self._line_tag(buf, at, end, name, base, out)
        line = self._run.line
        if line >= 0:
            # A line began in an earlier piece, with ``line`` characters of indentation.
            end, at, name = self._tag_line(buf, pos, line)
            if end == _WAIT:  # more indentation, or what may be the tag, cut
                self._take(buf, pos, at, base, out)
                self._run.line = line + at - pos
                return at, True
            self._run.line = -1
            if end >= 0:
                # Its indentation is taken as it would have been in another chunking;
                # the value loses all of it.
                self._take(buf, pos, at, base, out)
                return self._line_tag(buf, at, end, name, base, out, line + at - pos)
        m = _VALUE_MARK.search(buf, pos)
        while m is not None:
            s = m.start()
            mark = m.group()
            if mark == "\n":
                end, at, name = self._tag_line(buf, s + 1)
                if end == _WAIT:
                    # The line so far is indentation (or what may be the tag, cut): the
                    # line break and the indentation are taken, the line waits.
                    self._take(buf, pos, at, base, out)
                    self._run.line = at - s - 1
                    return at, True
                if end >= 0:
                    # The newline ends the value (it is the one before the missing close);
                    # the indentation is streamed as in any chunking, and not kept.
                    self._take(buf, pos, at, base, out)
                    return self._line_tag(buf, at, end, name, base, out, at - s - 1)
            elif mark == _PARAM_CLOSE:
                verdict = self._close_verdict(buf, s + len(_PARAM_CLOSE))
                if verdict is True:
                    self._take(buf, pos, s, base, out)
                    self._end_value()
                    self.state = _BODY
                    return s + len(_PARAM_CLOSE), False
                if verdict is None:  # wait for what follows the candidate
                    self._take(buf, pos, s, base, out)
                    return s, True
            else:
                follows = self._function_close_verdict(buf, s + len(_FUNCTION_CLOSE))
                if follows != _CONTENT:
                    self._take(buf, pos, s, base, out)
                    if follows == _ANOTHER_CALL:
                        self._malformed(
                            f"the value of {self._param!r} is not closed and another call "
                            "follows </function>",
                            base + s,
                        )
                        return n, True
                    self._pending_end = follows == _BLOCK_END
                    return s, True
            m = _VALUE_MARK.search(buf, s + 1)
        # Keep a close tag cut by the end of the buffer; the rest is the value.
        stop = n - _cut_close(buf, pos)
        self._take(buf, pos, stop, base, out)
        return stop, True

    def _tag_line(self, buf: str, k: int, indent: int = 0) -> tuple[int, int, str]:
        """Does the line that goes on at ``k`` open with a ``<parameter=NAME>`` tag?

        ``indent`` characters of its indentation came before ``k`` (in earlier pieces).

        Returns:
            ``(end, at, name)``: the tag's end, start and name; or ``_WAIT`` / ``_NO`` as
            ``end`` (see :func:`_open_tag`).  Indentation longer than
            ``buffer_keep_size`` makes it an ordinary line (the hold stays bounded).
        """
        j = _INDENT.match(buf, k).end()  # type: ignore[union-attr]
        if j - k + indent > self._ws_cap:
            return _NO, j, ""
        if j == len(buf):
            return _WAIT, j, ""
        end, name = _open_tag(buf, j, _PARAM_OPEN)
        return end, j, name

    def _line_tag(
        self,
        buf: str,
        at: int,
        end: int,
        name: str,
        base: int,
        out: list[ParseEvent],
        indent: int = 0,
    ) -> tuple[int, bool]:
        """A ``<parameter=NAME>`` line inside a value whose ``</parameter>`` is missing.

        For a parameter of the tool that was not given yet it ends the value and opens
        the next one, as the model meant; any other name makes the call malformed, so
        that a call never runs with a value that holds its own markup.  ``indent``
        characters of the line's indentation were taken as value (in earlier pieces):
        the value loses them.
        """
        if name not in self._given and (not self._registered or name in self._known):
            self._end_value(indent)
            self._open_param(name, (base + at, base + end), out)
            return end, False
        reason = "is given already" if name in self._given else "is not a parameter of the tool"
        self._malformed(
            f"the value of {self._param!r} is not closed and the <parameter={name}> line "
            f"that follows {reason}",
            base + at,
        )
        return len(buf), True

    def _end_value(self, indent: int = 0) -> None:
        """The open value is complete: keep it (for a parameter the tool has).

        Its last ``indent`` characters are the indentation of a tag line that ends it.
        """
        if self._param_known:
            self._params[self._param] = (self._value_from, self._run.end - indent)

    def _function_close_verdict(self, buf: str, j: int) -> int:
        """What the ``</function>`` inside a value that ends at ``j`` is.

        Returns:
            ``_BLOCK_END`` when only whitespace follows so far (the end tag, if it comes
            next, ends the value and the call), ``_ANOTHER_CALL`` when ``<function=`` or
            ``<tool_call>`` follows, ``_UNDECIDED`` when the buffer ends inside one of
            those, ``_CONTENT`` otherwise (code that mentions the tag).
        """
        n = len(buf)
        k = _WS_RUN.match(buf, j).end()  # type: ignore[union-attr]
        if k - j > self._ws_cap:
            return _CONTENT
        if k == n:
            return _BLOCK_END
        call_open = self.call_open
        if buf.startswith(_FUNCTION_OPEN, k) or buf.startswith(call_open, k):
            return _ANOTHER_CALL
        rest = buf[k : k + len(call_open)]
        if k + len(rest) == n and (_FUNCTION_OPEN.startswith(rest) or call_open.startswith(rest)):
            return _UNDECIDED
        return _CONTENT

    def _close_verdict(self, buf: str, j: int) -> bool | None:
        """Is the ``</parameter>`` that ends at ``j`` the close?  None: not decidable yet."""
        n = len(buf)
        k = _WS_RUN.match(buf, j).end()  # type: ignore[union-attr]
        if k - j > self._ws_cap:
            return False
        if k == n:
            return None
        if buf.startswith(_PARAM_OPEN, k) or buf.startswith(_FUNCTION_CLOSE, k):
            return True
        rest = buf[k:]
        if len(rest) < len(_PARAM_OPEN) and (
            _PARAM_OPEN.startswith(rest) or _FUNCTION_CLOSE.startswith(rest)
        ):
            return None
        return False

    def _take(self, buf: str, start: int, end: int, base: int, out: list[ParseEvent]) -> None:
        """``buf[start:end]`` belongs to the open parameter's value."""
        if start < end and self._param_known:
            self._run.end = base + end
            if self.call.emit_deltas:
                out.append(
                    self.call.param_delta(
                        self._tool, self._param, buf[start:end], (base + start, base + end)
                    )
                )

    def fast_path(self) -> FastData | None:
        """Inside a value, only closing tags and lines that open with a tag matter.

        What the value's reader holds must be what the fast path holds too: a closing
        tag cut by the end of the last chunk (what may be a tag at the start of a line
        is left to the slow path).
        """
        if self.state != _VALUE or self._fresh or self._pending_end:
            return None
        hold = self.held
        if hold and (self._run.line >= 0 or _cut_close(hold, 0) != len(hold)):
            return None
        self._arm()
        return _FAST_STOP, self._plain, True  # </tool_call> in a value is content

    def value_run(self) -> ValueRun | None:
        """The open value: the core streams its plain chunks (armed by :meth:`_arm`)."""
        return self._run

    def _arm(self) -> None:
        """A chunk without ``<`` is all value, unless a cut closing tag is held."""
        self._run.armed = self._param_known and not self.held

    def _plain(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`feed` for a value's chunk that holds no closing tag and no tag line."""
        if self.held:
            return self._plain_held(data, start, out)
        run = self._run
        if "<" in data:
            # A line that opens with a tag, begun here or in an earlier chunk: the slow
            # path decides (deeper indentation than buffer_keep_size makes no tag line).
            if run.line >= 0:
                k = len(data) - len(data.lstrip(" \t"))
                if k < len(data) and data[k] == "<" and run.line + k <= self._ws_cap:
                    return False
            if "\n" in data and _LINE_OPEN.search(data):
                return False
        if run.line >= 0 or "\n" in data:
            run.follow(data)  # the line the value now ends with, which may open with a tag
        if "<" in data and _CUT_CLOSE.search(data):
            return self._plain_held(data, start, out)  # a closing tag cut: hold it
        # All of it is value.
        if self._param_known:
            run.end = end = start + len(data)
            if self._deltas:
                out.append(self.call.param_delta(self._tool, self._param, data, (start, end)))
        self._arm()
        return True

    def _plain_held(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`_plain` with a closing tag cut before the chunk, or to hold after it.

        Held before it, the cut tag and the chunk are read together (unless they make a
        closing tag or a line that opens with a tag: the slow path decides those).
        """
        if self.held:
            if _VALUE_STOP.search(self.held + data) is not None:
                return False
            buf, base = self.take_hold(data, start)
            return self._plain(buf, base, out)  # (which arms the run)
        # Nothing held: the chunk ends with the start of a closing tag, which waits.
        cut = _CUT_CLOSE.search(data).start()  # type: ignore[union-attr]
        if cut and self._param_known:  # _take, inline
            run = self._run
            run.end = end = start + cut
            if self._deltas:
                piece = data[:cut]
                out.append(self.call.param_delta(self._tool, self._param, piece, (start, end)))
        self.hold(data[cut:], start + cut)
        self._run.armed = False  # the next chunk is read with the held text
        return True

    def accepts_end(self) -> bool:
        """``</tool_call>`` ends the block, except inside a value.

        In a value it ends the block only right after ``</function>`` and whitespace:
        the value's ``</parameter>`` is missing.
        """
        return self.state != _VALUE or self._pending_end

    def function_ends(self) -> bool:
        """Whether a ``</function>`` after the content fed so far ends the call.

        For a call written without ``<tool_call>`` (:class:`BareFunctionPlugin`): in a
        value it does only after a ``</parameter>`` that waits for what follows, or at
        the start of a line (the value's ``</parameter>`` is missing); elsewhere in a
        value it is content.
        """
        if self.state != _VALUE:
            return True
        hold = self.held
        if hold.startswith(_PARAM_CLOSE):
            hold = hold[len(_PARAM_CLOSE) :]
            return not hold.strip(_WS)
        return self._run.line >= 0 and not hold

    # --- the outcome ---------------------------------------------------------------------

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """Build the instance from the raw parameters, as for an XML tool call."""
        state = self.state
        if state == _VALUE and self._pending_end:
            # "</function></tool_call>" ended a value whose </parameter> is missing.
            self._end_value()
            state = _AFTER
        if state != _AFTER:
            if state == _MALFORMED:
                # The text where reading stopped, taken from the block (not from the
                # pieces it came in, so that the message does not depend on chunking).
                why = f"{self.why}, found {block.between(self._bad_at, self._bad_at + 20)!r}"
            elif state == _FUNCTION:
                why = "expected <function=NAME>"
            else:
                why = f"</function> is missing in the call of {self._tool!r}"
            return self.malformed_call(why, block)
        if not self._registered:
            return self.call.unknown_tool(self._tool, block)
        xml_parser, tool, values, verbatim = self.call.xml_parser, self._tool, {}, []
        for name, (value_from, value_to) in self._params.items():
            string = xml_parser.is_raw_param(tool, name) or xml_parser.is_string_param(tool, name)
            value = self.value_text(block.between(value_from, value_to), string)
            values[name] = value  # a string stays as it is; any other value is trimmed
            if string and value is not None:
                verbatim.append(name)
        result = xml_parser.build_instance(tool, values, verbatim=verbatim)
        return self.call.call(self._tool, result, block)

    def value_text(self, raw: str, string: bool) -> str | None:
        """A value as written -> the text its field converts (``string``: as it is).

        Its two framing newlines go; ``null`` is None (where the field admits it).
        """
        value = _unframe(raw)
        return None if value.strip(_WS) == "null" else value


_WS: Final = " \t\r\n"


def _unframe(raw: str) -> str:
    r"""A value without the format's framing newlines, and nothing else removed.

    The framing: the newline (``\n`` or ``\r\n``) after ``<parameter=NAME>`` and the
    one before ``</parameter>``, when they are there: ``"\n  x()\n\n"`` is ``"  x()\n"``.
    """
    if raw.startswith("\r\n"):
        raw = raw[2:]
    elif raw.startswith("\n"):
        raw = raw[1:]
    if raw.endswith("\r\n"):
        return raw[:-2]
    if raw.endswith("\n"):
        return raw[:-1]
    return raw
