r"""The minimax_m2 dialect: MiniMax-M2's ``invoke`` and ``parameter`` tags in a tool-call block.

Written by MiniMax-M2, M2.1 and M2.5 (its chat template renders history calls the same
way)::

    <minimax:tool_call>
    <invoke name="search_web">
    <parameter name="query_tag">["technology", "events"]</parameter>
    <parameter name="query_list">["OpenAI"]</parameter>
    </invoke>
    </minimax:tool_call>

Theory of operation.  The shape is DeepSeek's DSML without its ``string=`` attribute:
``invoke`` elements, each holding ``parameter`` elements, several in one block.  So
:class:`MiniMaxReader` is the DSML reader (:class:`~.deepseek.dsml.DsmlReader`) given
MiniMax's tag names (:data:`MINIMAX_MARKUP`): a ``</parameter>`` closes a value only
when a tag of the format follows it (whitespace aside), so a value that mentions the
markup is read whole; a tag cut between pieces is held until it can be decided; a call
whose ``</invoke>`` is missing runs when the block's end tag follows (at the
stream's end it is cut: another parameter may have been coming).  The name may be in
double or single quotes.  Each value loses its framing, one newline after its opening
tag and one before ``</parameter>``, and nothing else; then the field's type decides:
a string field takes the text as written, any other field reads it as JSON (``null``
is None) and converts it by its type.  :class:`MiniMaxToolCallPlugin` runs the reader
between ``<minimax:tool_call>`` and ``</minimax:tool_call>``; each ``invoke`` is a call
of its own, with its own outcome.

Reasoning is ``<think>…</think>``.  The template ends the prompt with
``]~b]ai\n<think>\n``, so the reply starts inside reasoning and shows only
``</think>`` (llama.cpp writes ``</think>\n\n`` into the prompt when thinking is off):
``dialect_for_model`` marks the ``minimax-m2`` names ``prefilled_reasoning``; without
it a bare ``</think>`` is framing with a notice.  The template's newlines around the
reasoning and before the block are framing (:data:`~stream_parser.core.kit.QWEN3_FRAMING`
has the same), and so is ``[e~[``, its end-of-message token, wherever it comes, with
the newline the template writes before it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from ..core.kit import (
    QWEN3_FRAMING,
    CallContext,
    FastData,
    ParsePlugin,
    ThinkingFormat,
    ValueRun,
    register,
    tag_stop,
)
from ._base import Dialect, value_text
from .deepseek.dsml import DsmlMarkup, DsmlReader
from .deepseek.section import _SectionPlugin
from .llama import LlamaEndMarkers

if TYPE_CHECKING:
    from ..core.events import ParseEvent

__all__ = [
    "CALL_END",
    "CALL_START",
    "END_OF_MESSAGE",
    "MINIMAX_MARKUP",
    "MINIMAX_THINKING",
    "MiniMaxDialect",
    "MiniMaxEndMarker",
    "MiniMaxReader",
    "MiniMaxToolCallPlugin",
]

CALL_START: Final = "<minimax:tool_call>"
CALL_END: Final = "</minimax:tool_call>"
END_OF_MESSAGE: Final = "[e~["

_PARAM_CLOSE: Final = "</parameter>"
_CLOSE_WHOLE: Final = re.compile(re.escape(_PARAM_CLOSE))
_QUOTED: Final = r"""(?:"[^"<>\n]*"|'[^'<>\n]*'|[^\s"'<>/]+)"""
_ATTRIBUTE: Final = re.compile(r"""(\w+)\s*=\s*(?:"([^"<>\n]*)"|'([^'<>\n]*)'|([^\s"'<>/]+))""")


def _attributes(text: str) -> dict[str, str]:
    """A tag's attributes, each value in double, single or no quotes."""
    return {key: a or b or c for key, a, b, c in _ATTRIBUTE.findall(text)}


MINIMAX_MARKUP: Final = DsmlMarkup(
    heads=("<invoke", "</invoke", "<parameter", "</parameter"),
    open_head="<",
    close_head="</",
    value_close=_PARAM_CLOSE,
    tag_start=re.compile(r"</?(?:invoke|parameter)(?![\w:-])"),
    invoke_open=re.compile(r"""<invoke\s+name\s*=\s*["']?([^"'<>\n]*?)["']?\s*(/?)>\Z"""),
    invoke_close=re.compile(r"</invoke\s*>\Z"),
    param_open=re.compile(rf"<parameter((?:\s+\w+\s*=\s*{_QUOTED})*)\s*>\Z"),
    attributes=_attributes,
    param_closes=(_PARAM_CLOSE,),
    close_stop=tag_stop((_PARAM_CLOSE,)),
)
"""MiniMax-M2's tags: DSML's shape with plain ``invoke`` and ``parameter`` names."""

MINIMAX_THINKING: Final = ThinkingFormat((("<think>", "</think>"),), bare_close=True)
"""MiniMax-M2's reasoning: ``<think>…</think>``, the opening tag in the prompt.

``dialect_for_model`` (or ``start_in_thinking=True``) says that the reply starts inside
reasoning; then a reply that writes ``<think>`` itself reads the same (``bare_close``).
"""

_WS: Final = " \t\r\n"


def _unframe(raw: str) -> str:
    r"""A value without its framing: one newline after the tag, one before the close."""
    if raw.startswith("\r\n"):
        raw = raw[2:]
    elif raw.startswith("\n"):
        raw = raw[1:]
    if raw.endswith("\r\n"):
        return raw[:-2]
    return raw[:-1] if raw.endswith("\n") else raw


def _cut_close(held: str) -> bool:
    """Whether ``held`` is the start of a ``</parameter>`` cut by a chunk's end."""
    return len(held) < len(_PARAM_CLOSE) and _PARAM_CLOSE.startswith(held)


class MiniMaxReader(DsmlReader):
    """Reads one ``<minimax:tool_call>`` block: the DSML reader with MiniMax's tags."""

    def __init__(self, call: CallContext) -> None:
        super().__init__(call, MINIMAX_MARKUP)
        # The open value, which the core streams itself while a chunk holds no "<".
        self._value = ValueRun("<")

    def value_opened(self, param: str, at: int) -> None:
        """A value starts: the core may stream it (see :meth:`fast_path`)."""
        call = self.current
        if call is not None:
            self._value.open(call.name or "", param, call.call.call_index, at)

    def fast_path(self) -> FastData | None:
        """In a value, only a whole ``</parameter>`` needs the reader.

        A chunk without ``<`` is streamed by the core; :meth:`_take_chunk` takes any
        other one, and holds a ``</parameter>`` cut by the chunk's end itself.
        """
        held = self.held
        if not self.in_value or (held and not _cut_close(held)):
            return None  # outside a value, or the hold is more than a cut close
        call = self.current
        self._value.armed = not held and self.value_known and call is not None and call.announced
        return _CLOSE_WHOLE, self._take_chunk, True

    def _take_chunk(self, data: str, start: int, out: list[ParseEvent]) -> bool:
        """A value's chunk without a whole ``</parameter>``: all value but a cut close.

        What is held (a cut close) comes first; when it and the chunk make a whole
        close, the chunk is left to the reader.  A close cut by the chunk's end begins
        at its last "<" (the tag holds no other one) and is held until the next chunk
        says whether it closes the value; the core streams no chunk meanwhile.
        """
        held = self.held
        if held and _PARAM_CLOSE in held + data:
            return False  # the reader reads the hold and the chunk
        buf, base = self.take_hold(data, start)
        n = len(buf)
        i = buf.rfind("<", max(n - len(_PARAM_CLOSE) + 1, 0))
        end = i if i >= 0 and _PARAM_CLOSE.startswith(buf[i:]) else n
        self.take_value(buf, 0, end, base, out)
        if end < n:
            self.hold(buf[end:], base + end)
            self._value.armed = False
        else:
            call = self.current
            self._value.armed = self.value_known and call is not None and call.announced
        return True

    def value_run(self) -> ValueRun | None:
        """The open value (armed by :meth:`fast_path`)."""
        return self._value

    def value_end(self) -> int:
        """The value ends where the reader or the core (its chunks) took it last."""
        return max(super().value_end(), self._value.end)

    def unframe_value(self, raw: str) -> str:
        r"""One newline after the opening tag and one before ``</parameter>`` are framing."""
        return _unframe(raw)

    def decode_value(self, text: str, string: str) -> tuple[str | None, bool]:
        """``null`` is None (where the field admits it, else "null"); the rest a string.

        A string field takes the text as written; any other type reads it as JSON.
        """
        if text.strip(_WS) == "null":
            return None, False
        return text, True


class MiniMaxToolCallPlugin(_SectionPlugin):
    r"""Reads MiniMax-M2's ``<minimax:tool_call>`` blocks, each ``invoke`` a call.

    ``ParserConfig(dialect="minimax_m2")`` registers one for you.  The newline the chat
    template writes before the block belongs to it.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> parser = StreamToolParser({"read_file": ReadFile}, plugins=[MiniMaxToolCallPlugin()])
        >>> text = '<minimax:tool_call><invoke name="read_file"><parameter name="path">a'
        >>> events = parser.feed(text + "</parameter></invoke></minimax:tool_call>")
        >>> (events + parser.close())[-1].tool_instance
        ReadFile(path='a')
    """

    name = "minimax_m2"
    start_tags: tuple[str, ...] = (CALL_START, "\n" + CALL_START)
    end_tag = CALL_END
    # vLLM's MiniMax-M2 parser ends reasoning at <minimax:tool_call> and runs the call;
    # the opener counts there only where an <invoke> follows (rule 3's guard).
    ends_reasoning = "<"

    reader = MiniMaxReader


class MiniMaxEndMarker(LlamaEndMarkers):
    """``[e~[``, MiniMax's end-of-message token, wherever it comes: framing, never text.

    The newline the template writes before it (after a tool-call block) is framing too.
    """

    name = "minimax_m2_end"
    start_tags: tuple[str, ...] = (END_OF_MESSAGE, "\n" + END_OF_MESSAGE)  # type: ignore[assignment]


_AMBIGUOUS: Final = re.compile(r"</parameter>[ \t\r\n]*</?(?:invoke|parameter)(?![\w:-])")


def _ambiguous(text: str) -> bool:
    """Would the reader end the value inside ``text`` (read with what the writer adds)?"""
    written = text + _PARAM_CLOSE + "\n</invoke>"
    return any(m.start() < len(text) for m in _AMBIGUOUS.finditer(written))


class MiniMaxDialect(Dialect):
    """``<minimax:tool_call><invoke name="NAME"><parameter name="P">v</parameter>…`` (MiniMax-M2).

    Example:
        >>> print(MiniMaxDialect().format_call("search", {"query": "a b", "max_results": 3}))
        <minimax:tool_call>
        <invoke name="search">
        <parameter name="query">a b</parameter>
        <parameter name="max_results">3</parameter>
        </invoke>
        </minimax:tool_call>
    """

    name = "minimax_m2"
    title = "<invoke> and <parameter> tags in <minimax:tool_call> tags (MiniMax-M2)"
    plugin_key = "minimax_m2"
    framing = QWEN3_FRAMING
    thinking = MINIMAX_THINKING
    # special_tokens stays False: <minimax:tool_call> and <think> are added vocabulary,
    # not special tokens (servers keep them when they skip special tokens); only ]~b] and
    # [e~[ are special, and neither is read as a call.

    def make_plugin(self, names: tuple[str, ...]) -> Sequence[ParsePlugin]:
        """A :class:`MiniMaxToolCallPlugin` and the ``[e~[`` framing."""
        return [MiniMaxToolCallPlugin(), MiniMaxEndMarker()]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write the call as the MiniMax-M2 chat template renders it.

        Strings verbatim, other values as JSON (``tojson``), each right between its
        tags; a string that begins or ends with a line break is written on lines of its
        own (the reader removes one newline on each side).

        Raises:
            ValueError: the name holds a quote or markup, or a value holds
                ``</parameter>`` followed by a tag of the format, which the reader would
                take for the value's end.
        """
        return self.format_calls([(tool_name, args)])

    def format_calls(self, calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
        """Write a turn's calls as the template renders them: one ``invoke`` each, in one block.

        Raises:
            ValueError: as :meth:`format_call`.
        """
        if not calls:  # no calls write nothing, not an empty block
            return ""
        lines = [CALL_START]
        for tool_name, args in calls:
            lines += _invoke_lines(tool_name, args)
        lines.append(CALL_END)
        return "\n".join(lines)

    def _instructions(self) -> str:
        return "minimax_m2_instructions"


def _invoke_lines(tool_name: str, args: Mapping[str, Any]) -> list[str]:
    """One call's ``invoke`` element, line by line."""
    if not tool_name or any(c in tool_name for c in "\"'<>\n"):
        raise ValueError(f"the tool name {tool_name!r} cannot be written in minimax_m2")
    lines = [f'<invoke name="{tool_name}">']
    for param, value in args.items():
        text = value_text(value)
        if _ambiguous(text):
            raise ValueError(
                f"parameter {param!r} of {tool_name!r} cannot be written in minimax_m2: "
                "its value holds </parameter> followed by a tag of the format"
            )
        if text.startswith(("\n", "\r\n")) or text.endswith("\n"):
            text = f"\n{text}\n"
        lines.append(f'<parameter name="{param}">{text}</parameter>')
    lines.append("</invoke>")
    return lines


register(MiniMaxDialect().record())
