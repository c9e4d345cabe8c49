# ruff: noqa: RUF001, RUF002, RUF003  (the format's markers are fullwidth characters)
r"""DeepSeek V3.2 / V4 "DSML": XML-like tags, one per parameter.

:class:`DsmlReader` reads the ``invoke`` elements of a DSML section, each parameter's
value streamed up to its closing tag (``string="false"`` values are JSON); the writer
refuses a value that would read back as the format's structure.  See the package.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final

from pydantic_core import to_jsonable_python

from ...core.events import ErrorType, ParseEvent, Span
from ...core.kit import (
    CallContext,
    FastData,
    PluginBlock,
)
from ...errors import ConfigError
from .section import (
    _ATTRIBUTE,
    _CLOSE,
    _CLOSE_STOP,
    _DECODER,
    _DSML_TAG_START,
    _INVOKE_CLOSE,
    _INVOKE_OPEN,
    _OPEN,
    _PARAM_CLOSES,
    _PARAM_OPEN,
    _TAG_MAX,
    _WS,
    _WS_RUN,
    DSML,
    DSML_SECTIONS,
    _Call,
    _partial,
    _SectionPlugin,
    _SectionReader,
)

_D_GAP, _D_BODY, _D_VALUE, _D_BAD = range(4)


@dataclass(frozen=True, slots=True)
class DsmlMarkup:
    """The tags of a format shaped as DSML: ``invoke`` elements of ``parameter`` elements.

    DeepSeek's (:data:`DSML_MARKUP`) is the default; MiniMax-M2 writes the same shape
    with plain tag names.

    Attributes:
        heads: what every tag of the format begins with (a cut one is held).
        open_head: what an opening tag begins with (looked for between calls).
        close_head: what a closing tag begins with (looked for in a broken call).
        value_close: what a value's closing tag begins with (looked for in a value).
        tag_start: a tag's head, matched where a tag may begin.
        invoke_open: a whole opening ``invoke`` tag; group 1 the name, group 2 ``/``
            for a call without parameters.
        invoke_close: a whole closing ``invoke`` tag.
        param_open: a whole opening ``parameter`` tag; group 1 its attributes.
        attributes: the attributes' text -> name to value.
        param_closes: the closing ``parameter`` tags.
        close_stop: where a value's closing tag may begin in a chunk (the fast path).
    """

    heads: tuple[str, ...]
    open_head: str
    close_head: str
    value_close: str
    tag_start: re.Pattern[str]
    invoke_open: re.Pattern[str]
    invoke_close: re.Pattern[str]
    param_open: re.Pattern[str]
    attributes: Callable[[str], dict[str, str]]
    param_closes: tuple[str, ...]
    close_stop: re.Pattern[str]


DSML_MARKUP: Final = DsmlMarkup(
    heads=(_OPEN, _CLOSE),
    open_head=_OPEN,
    close_head=_CLOSE,
    value_close=_CLOSE,
    tag_start=_DSML_TAG_START,
    invoke_open=_INVOKE_OPEN,
    invoke_close=_INVOKE_CLOSE,
    param_open=_PARAM_OPEN,
    attributes=lambda text: dict(_ATTRIBUTE.findall(text)),
    param_closes=_PARAM_CLOSES,
    close_stop=_CLOSE_STOP,
)
"""DeepSeek's DSML: every tag begins with ``<｜DSML｜`` or ``</｜DSML｜``."""


class DsmlReader(_SectionReader):
    """Reads a DSML section: ``invoke`` elements holding ``parameter`` elements.

    A format of the same shape subclasses it (MiniMax-M2's reader does) and changes
    what it needs through these hooks, each a method it may override:

    * :meth:`unframe_value`: what of a value's text is framing, not value.
    * :meth:`decode_value`: how a value's text becomes what its field is built from.
    * :meth:`value_opened`: a value starts (a reader that streams values itself
      opens its run there).
    * :meth:`value_end`: where the open value's text ends when its close is read.

    and these, which it calls: :meth:`take_value` (a piece of the open value) and
    :attr:`value_known` (whether the open parameter is one of the tool's).

    Args:
        call: the call's context.
        markup: the format's tags (DeepSeek's by default).

    Attributes:
        value_known: whether the open parameter is one of the tool's fields (the
            value of an unknown one is read past, never taken).
    """

    # Another parameter may follow the last one read: without ``</invoke>``, only the
    # section's end tag says the call is complete.
    runs_at_stream_end: ClassVar[bool] = False

    def __init__(self, call: CallContext, markup: DsmlMarkup = DSML_MARKUP) -> None:
        super().__init__(call)
        self.markup = markup
        self._head_len = max(len(head) for head in markup.heads)
        self.state = _D_GAP
        self.handlers = {
            _D_GAP: self._between_calls,
            _D_BAD: self._between_calls,
            _D_BODY: self._body,
            _D_VALUE: self._in_value,
        }
        self._ws_cap = call.config.buffer_keep_size
        self._param = ""
        self._string = ""
        self.value_known = False
        self._value_from = 0  # where the open value begins ...
        self._value_to = 0  # ... and where what was taken of it ends
        self._known: frozenset[str] = frozenset()

    def _tag(self, buf: str, k: int) -> tuple[int, str]:
        """The DSML tag at ``buf[k:]``: ``(end, text)``; ``end`` -1: wait, -2: no tag."""
        n = len(buf)
        m = self.markup.tag_start.match(buf, k)
        if m is None:
            rest = buf[k : k + self._head_len]
            if k + len(rest) == n and any(h.startswith(rest) for h in self.markup.heads):
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

    def _between_calls(
        self, buf: str, pos: int, base: int, out: list[ParseEvent]
    ) -> tuple[int, bool]:
        """Up to the next ``invoke`` (or, after a call that cannot be read, its close)."""
        state = self.state
        n = len(buf)
        markup = self.markup
        i = buf.find(markup.close_head if state == _D_BAD else markup.open_head, pos)
        if i < 0:
            return n - _partial(buf, pos, markup.heads), True
        end, tag = self._tag(buf, i)
        if end == -1:
            return i, True
        if end == -2:
            return i + 1, False
        if state == _D_BAD:
            if markup.invoke_close.match(tag):
                self._close_call(base + end)
                self.state = _D_GAP
            return end, False
        m = markup.invoke_open.match(tag)
        if m is not None:
            self._start_invoke(m, i, end, base, out)
        return end, False

    def _body(self, buf: str, pos: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """Between the parameters of a call."""
        n = len(buf)
        k = _WS_RUN.match(buf, pos).end()  # type: ignore[union-attr]
        if k == n:
            return k, True
        end, tag = self._tag(buf, k)
        if end == -1:
            return k, True
        if end == -2:
            self._fail(f"unexpected text in the call of {self.current_name()!r}")
            self.state = _D_BAD
            return k, False
        markup = self.markup
        if markup.invoke_close.match(tag):
            self._close_call(base + end)
            self.state = _D_GAP
            return end, False
        m = markup.invoke_open.match(tag)
        if m is not None:  # the previous call's </｜DSML｜invoke> is missing
            self._close_call(base + k)
            self._start_invoke(m, k, end, base, out)
            return end, False
        m = markup.param_open.match(tag)
        attributes = markup.attributes(m.group(1)) if m is not None else {}
        name = attributes.get("name", "").strip()
        if not name:
            self._fail(f"unexpected markup in the call of {self.current_name()!r}")
            self.state = _D_BAD
            return k, False
        self._open_param(name, attributes.get("string", ""), (base + k, base + end), out)
        return end, False

    def current_name(self) -> str:
        """The name of the open call ("" when none)."""
        call = self.current
        return "" if call is None or call.name is None else call.name

    def _start_invoke(
        self, tag: re.Match[str], at: int, end: int, base: int, out: list[ParseEvent]
    ) -> None:
        self._open_call(base + at)
        name = tag.group(1).strip()
        if not name:
            self._fail("the invoke tag names no tool")
            self.state = _D_BAD
            return
        self._announce(name, (base + at, base + end), out)
        call = self.current
        assert call is not None
        self._known = call.call.xml_parser.param_names(name) if call.announced else frozenset()
        self.state = _D_BODY
        if tag.group(2):  # <｜DSML｜invoke name="f"/>: a call without parameters
            self._close_call(base + end)
            self.state = _D_GAP

    def _open_param(self, name: str, string: str, span: Span, out: list[ParseEvent]) -> None:
        call = self.current
        assert call is not None
        self._param = name
        self._string = string
        self._value_from = self._value_to = span[1]
        self.state = _D_VALUE
        self.value_known = known = name in self._known
        self.value_opened(name, span[1])
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
        markup = self.markup
        while True:
            c = buf.find(markup.value_close, search)
            if c < 0:
                stop = n - _partial(buf, search, (markup.value_close,))
                self.take_value(buf, pos, stop, base, out)
                return stop, True
            close = next((t for t in markup.param_closes if buf.startswith(t, c)), "")
            if not close:
                rest = buf[c:]
                if any(t.startswith(rest) for t in markup.param_closes):
                    self.take_value(buf, pos, c, base, out)
                    return c, True
                search = c + 1  # another DSML closing tag in a value is content
                continue
            j = c + len(close)
            k = _WS_RUN.match(buf, j).end()  # type: ignore[union-attr]
            if k - j <= self._ws_cap:
                if k == n:
                    self.take_value(buf, pos, c, base, out)
                    return c, True  # wait for what follows the close
                nxt = buf[k : k + self._head_len]
                if markup.tag_start.match(buf, k):
                    self.take_value(buf, pos, c, base, out)
                    self._end_value()
                    self.state = _D_BODY
                    return j, False
                if k + len(nxt) == n and any(h.startswith(nxt) for h in markup.heads):
                    self.take_value(buf, pos, c, base, out)
                    return c, True
            search = j  # not followed by markup: the close is content

    @property
    def in_value(self) -> bool:
        """Whether the reader is inside a parameter's value."""
        return self.state == _D_VALUE

    def fast_path(self) -> FastData | None:
        """Inside a value, only where a DSML closing tag may begin matters."""
        if self.state != _D_VALUE or self.held:
            return None
        return self.markup.close_stop, self._plain, True  # the section's end tag: content

    def _plain(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """:meth:`_in_value` for a chunk without the start of a closing tag."""
        self.take_value(data, 0, len(data), start, out)
        return True

    def take_value(self, buf: str, start: int, end: int, base: int, out: list[ParseEvent]) -> None:
        """Take ``buf[start:end]`` (at stream offset ``base + start``) as the open value's.

        It streams as a parameter delta when the call is announced and the parameter
        known; the value's text is read from the stream when the call is built.
        """
        call = self.current
        if start >= end or call is None or not self.value_known:
            return
        self._value_to = base + end
        if call.announced and call.call.emit_deltas:
            out.append(
                call.call.param_delta(
                    call.name or "", self._param, buf[start:end], (base + start, base + end)
                )
            )

    def value_opened(self, param: str, at: int) -> None:
        """Hook: the value of ``param`` starts at stream offset ``at`` (its tag read).

        Called for every parameter of an open call, known or not; the default does
        nothing.
        """

    def value_end(self) -> int:
        """Hook: the stream offset where the open value's text ends, as its close is read.

        By default, where the last piece given to :meth:`take_value` ends; a reader
        whose values the core also streams (``value_run``) takes the later of the two.
        """
        return self._value_to

    def _end_value(self) -> None:
        call = self.current
        if call is not None and self.value_known:
            call.params[self._param] = (self._value_from, self.value_end(), self._string)

    def _pending_close(self) -> bool:
        """The hold is a value's closing tag and whitespace, waiting for what follows."""
        hold = self.held
        close = next((t for t in self.markup.param_closes if hold.startswith(t)), "")
        return bool(close) and not hold[len(close) :].strip(_WS)

    def accepts_end(self) -> bool:
        """The section's end tag ends it, except inside a value (where it is content)."""
        return self.state != _D_VALUE or self._pending_close()

    def _body_complete(self) -> bool:
        return self.state == _D_BODY or (self.state == _D_VALUE and self._pending_close())

    def _complete(self) -> None:
        if self.state == _D_VALUE:
            self._end_value()  # the value's close waited for what follows: nothing did

    def unframe_value(self, raw: str) -> str:
        """Hook: a value's text without its framing, what the format writes around it.

        ``raw`` is everything between the parameter's tags.  DSML frames a value with
        nothing, so the default returns it whole.
        """
        return raw

    def decode_value(self, text: str, string: str) -> tuple[str | None, bool]:
        """Hook: a value's text (unframed) as its field is built from it.

        Args:
            text: the value's text.
            string: the tag's ``string=`` attribute ("" when it has none).

        Returns:
            The value (None for a JSON ``null``: None where the field admits it) and
            whether it is a string, which a string field takes as written.  DSML's
            ``string="false"`` value is JSON: a JSON string is that string, any other
            text is left to the field's type; every other value is a string.
        """
        if string.strip().lower() != "false":
            return text, True
        try:
            decoded = _DECODER.decode(text.strip(_WS))
        except (ValueError, RecursionError):
            return text, False  # not JSON: converted by the field's type, or refused
        if decoded is None:
            return None, False
        if isinstance(decoded, str):
            return decoded, True  # a JSON string is never trimmed
        return text, False

    def _build(self, call: _Call, tile: PluginBlock) -> list[ParseEvent]:
        name = call.name or ""
        xml_parser = call.call.xml_parser
        values: dict[str, str | None] = {}
        verbatim: list[str] = []
        for param, (start, end, string) in call.params.items():
            value, is_string = self.decode_value(
                self.unframe_value(tile.between(start, end)), string
            )
            if value is not None and (
                xml_parser.is_raw_param(name, param)
                or (is_string and xml_parser.is_string_param(name, param))
            ):
                # A string is the model's string: the format delimits it by its tags
                # (and its framing, which unframe_value removed), so nothing else is.
                verbatim.append(param)
            values[param] = value
        result = xml_parser.build_instance(name, values, verbatim=verbatim)
        return call.call.call(name, result, tile)


class DsmlPlugin(_SectionPlugin):
    r"""Reads one DSML section: ``<｜DSML｜NAME>`` … ``</｜DSML｜NAME>``.

    Args:
        section: the section's name, one of :data:`DSML_SECTIONS`.

    The blank line the chat template writes before the section belongs to it.
    ``ParserConfig(dialect="deepseek")`` registers one per section name.
    """

    reader = DsmlReader

    def __init__(self, section: str = "function_calls") -> None:
        super().__init__()
        if section not in DSML_SECTIONS:
            raise ConfigError(f"unknown DSML section {section!r} (known: {DSML_SECTIONS})")
        tag = f"<{DSML}{section}>"
        self.name = f"deepseek_dsml_{section.strip()}"
        self.start_tags = (tag, "\n\n" + tag)
        self.end_tag = f"</{DSML}{section}>"


_AMBIGUOUS: Final = re.compile(r"</｜DSML｜ ?parameter>[ \t\r\n]*</?｜DSML｜")


def _format_dsml(calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """The calls as one ``function_calls`` block, one ``invoke`` each."""
    lines = [f"<{DSML}function_calls>"]
    for tool_name, args in calls:
        lines += _dsml_invoke(tool_name, args)
    lines.append(f"</{DSML}function_calls>")
    return "\n".join(lines)


def _dsml_invoke(tool_name: str, args: Mapping[str, Any]) -> list[str]:
    lines = [f'<{DSML}invoke name="{tool_name}">']
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
    lines.append(f"</{DSML}invoke>")
    return lines
