# ruff: noqa: RUF001, RUF002  (the format's markers are fullwidth characters)
r"""DeepSeek's markers and the section reader its two markups share.

A reply holds its calls in one *section* (``<｜tool▁calls▁begin｜>`` or a DSML
``function_calls`` element).  :class:`_SectionReader`, on the kit's one reader base,
follows the section's calls, each with its own call index (reserved when its begin
marker comes), and gives every call's outcome; :class:`_SectionPlugin` is the kit's
reader plugin between the section's tags.  :mod:`.v3` and :mod:`.dsml` fill the state
table with the markup of the calls inside.  See the package.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Final

from ...core.events import ErrorType, ParseEvent, Span
from ...core.kit import (
    CallContext,
    PluginBlock,
    Reader,
    ReaderPlugin,
    ValueRun,
    failure,
    tag_stop,
)

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


_INVOKE_OPEN: Final = re.compile(r'<｜DSML｜ ?invoke\s+name\s*=\s*"([^"<>\n]*)"\s*(/?)>\Z')


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


class _SectionReader(Reader):
    """What both section readers share: the calls, and the outcomes.

    A subclass fills the state table (``handlers``) with the markup of its calls; the
    base's hold loop runs it.
    """

    #: Whether a call whose arguments are complete runs at the normal end of the stream
    #: without its end marker.  True where the arguments end by themselves (a JSON
    #: object's ``}``); a list of parameters does not, so another one may have been
    #: coming: such a call runs only when the section's end tag follows.
    runs_at_stream_end: ClassVar[bool] = True

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self.context = call.plugin
        self.calls: list[_Call] = []
        self.current: _Call | None = None
        # A call's JSON arguments, which the core streams (``fast_path`` arms it).  The
        # run's end is not read: the JSON's last character, a mark the scanner does not
        # skip, is always read by the reader, which sets the call's ``args_to`` there.
        self._run = ValueRun(arguments=True)

    # --- streaming -----------------------------------------------------------------------

    def value_run(self) -> ValueRun | None:
        """The open call's arguments, which the core streams (``ParsePlugin.value_run``)."""
        return self._run

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

    def _finish_open_call(self, at_end_tag: bool, cut: bool, end: int) -> None:
        """The section ended, at its end tag or with the stream (``cut`` or not).

        A call whose arguments are complete runs without its end marker when the
        section's end tag follows, or the normal end of the stream where its arguments
        end by themselves (:attr:`runs_at_stream_end`); otherwise the stream's end
        leaves it unclosed.  At the end tag, any other open call is malformed.
        """
        call = self.current
        if call is None:
            return
        if self._body_complete():
            if at_end_tag or (not cut and self.runs_at_stream_end):
                self._complete()
                call.end = end
        elif at_end_tag:
            self._fail("the tool call is not complete where the section ends")
            call.end = end
        self.current = None

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """The section closed: every call's outcome, their spans tiling the block."""
        return self._outcome(block, unclosed=False)

    def unclosed(self, block: PluginBlock) -> list[ParseEvent]:
        """The stream ended in the section: complete calls run, the cut one does not."""
        return self._outcome(block, unclosed=True)

    def _outcome(self, block: PluginBlock, unclosed: bool) -> list[ParseEvent]:
        """Every call's outcome, their spans tiling the block."""
        # Everything up to the end of the content was fed (a cut stream's held end tag
        # matters only to a call that then stays unclosed).
        fed = block.span[0] + len(block.start_tag) + len(block.content)
        self._finish_open_call(at_end_tag=not unclosed, cut=block.cut, end=fed)
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


class _SectionPlugin(ReaderPlugin):
    """A plugin whose block is one section of calls, read by a section reader."""

    next_chars = "<"  # the first call's marker follows the section's; else it is prose
    # vLLM's DeepSeek V3.2/V4 parsers and llama.cpp end reasoning at the section's start.
    ends_reasoning = "<"
    reserve_index = False  # each call reserves its own when its begin marker comes
