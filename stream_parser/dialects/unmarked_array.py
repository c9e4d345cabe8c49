r"""The unmarked-array rule: a JSON array of calls written with no marker before it.

Some models write their calls as the reply itself, a bare
``[{"name": …, "arguments": {…}}, …]`` (xLAM), and a server that drops a special token
leaves an array format without its marker (Granite's ``<|tool_call|>``).  Nothing then
says that the array is a call: JSON is also an answer (a typed answer, a list of
records).  The rule is the one ``llama`` applies to a bare JSON object: the array is a
call only when one of its elements names a registered tool and has an
``"arguments"`` (or ``"parameters"``) key.  Anything else is text, delivered as it came,
with no error.

Theory of operation.  :class:`UnmarkedArrayReader` is the shared
:class:`~stream_parser.dialects.json_array.JsonArrayReader` with its elements read by
readers that keep their events (the call's start, its arguments as they stream) until
the element proves a call, and number the call only then.  Until some element proves
one, the block is undecided:

* an element whose first character cannot open a call object (a number, a string, a
  list) ends the block right there, as text: the reply goes on as ordinary text, at
  once;
* the stream ending inside the array, or the array closing, delivers the whole block as
  text; a block past ``max_tool_size`` is text too.

Once an element proves a call, the block is read as any array after a marker is: each
element its own call or error (``unknown_tool``, ``malformed_tool``, ``invalid_params``),
the array's markup framing, and a cut array ``unclosed_tool``, never run.

:attr:`~stream_parser.dialects.json_array.JsonArrayReader.until_end_tag`, the shared
reader's, serves a format that wraps the array in tags of its own (a Markdown fence):
after the array, whitespace belongs to the block and its plugin's end tag closes it; any
other text, or an end tag before the array closed, is a ``malformed_tool`` once an
element proved a call, and text while none did.  :class:`BareArrayPlugin` runs the
reader on a ``[`` that opens the reply.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar, Final

from ..core.events import ParseEvent, TextOutputEvent
from ..core.kit import CallContext, FastData, PluginBlock, ReaderPlugin
from .hermes import HermesReader
from .json_array import IN_ARRAY, JsonArrayReader

__all__ = ["BareArrayPlugin", "UnmarkedArrayReader"]

_WS: Final = " \t\r\n"


class _WaitingCall(HermesReader):
    """An element's reader whose events wait until the element proves a call.

    It proves one once it has shown a name and an arguments key (the hermes reader's
    ``is_call_shaped``); only a registered name gives events, so what it kept is then
    released, numbered with the index it reserves at that moment.
    """

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self._waiting: list[ParseEvent] | None = []  # None once released

    @property
    def proves_call(self) -> bool:
        """It names a registered tool and has an arguments key: the array is a call."""
        return self.is_call_shaped and self.name in self.call.tool_registry

    def feed(self, data: str, start: int, out: list[ParseEvent]) -> None:
        """Read ``data``; keep its events until the element is call-shaped."""
        waiting = self._waiting
        if waiting is None:
            super().feed(data, start, out)
            return
        super().feed(data, start, waiting)
        if self.is_call_shaped:
            self._waiting = None
            if waiting:  # events come only for a registered name: the element is a call
                index = self.call.reserve()
                out.extend(_numbered(event, index) for event in waiting)

    def fast_path(self) -> FastData | None:
        """None while events wait (a chunk must come through :meth:`feed`)."""
        return None if self._waiting is not None else super().fast_path()


def _numbered(event: ParseEvent, index: int) -> ParseEvent:
    """A kept event with the call index reserved once its element proved a call."""
    if hasattr(event, "call_index"):
        return dataclasses.replace(event, call_index=index)  # type: ignore[type-var]
    return event  # pragma: no cover - the reader keeps only call events


class UnmarkedArrayReader(JsonArrayReader):
    """Reads a JSON array that no marker announced: a call only if an element proves one.

    ``until_end_tag = True`` on a subclass reads an array that its plugin's tags wrap
    (:attr:`JsonArrayReader.until_end_tag`).
    """

    unmarked: ClassVar[bool] = True
    """The unmarked rule applies.  False reads the array as one after a marker, as
    :class:`JsonArrayReader` does."""

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self._array_step = self.handlers[IN_ARRAY]
        self.handlers[IN_ARRAY] = self._element_or_end
        self._waiting: list[_WaitingCall] = []

    def element_reader(self) -> HermesReader:
        """An element's reader: numbered once it proves a call (when the rule applies)."""
        if not self.unmarked:
            return super().element_reader()
        reader = _WaitingCall(CallContext.unreserved(self.call.plugin))
        self._waiting.append(reader)
        return reader

    @property
    def is_call(self) -> bool:
        """Whether the block is a call: marked, or an element proved one."""
        return not self.unmarked or any(reader.proves_call for reader in self._waiting)

    # --- streaming -----------------------------------------------------------------------

    def _element_or_end(
        self, data: str, i: int, base: int, out: list[ParseEvent]
    ) -> tuple[int, bool]:
        """The array's own step; an element that is no call object may end the block."""
        if self.unmarked and self.awaiting_element:
            c = data[i]
            if c not in _WS and c not in "{,]" and not self.is_call:
                self.end = base + i  # a list of values, not of calls: text from here on
                return i, True
        return self._array_step(data, i, base, out)

    # --- outcomes ------------------------------------------------------------------------

    def _text(self, block: PluginBlock) -> list[ParseEvent]:
        return [TextOutputEvent(text=block.raw, span=block.span)]

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """Text unless an element proved a call; then each element's outcome."""
        if not self.is_call:
            return self._text(block)
        for reader in self._waiting:
            reader.call.reserve()  # in the order of the elements
        return super().finish(block)

    def unclosed(self, block: PluginBlock) -> list[ParseEvent]:
        """Text unless an element proved a call; then a cut call, ``unclosed_tool``."""
        if not self.is_call:
            return self._text(block)
        return super().unclosed(block)

    def too_large(self, block: PluginBlock) -> list[ParseEvent]:
        """Text unless an element proved a call (the core delivers it), else the error."""
        if not self.is_call:
            return []
        return super().too_large(block)


class BareArrayPlugin(ReaderPlugin):
    """A ``[`` that opens the reply: an array of calls, or text (the unmarked rule).

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> class ReadFile(BaseModel):
        ...     path: str
        >>> def read(text: str) -> list[str]:
        ...     parser = StreamToolParser({"read_file": ReadFile}, plugins=[BareArrayPlugin()])
        ...     return [e.kind for e in parser.feed(text) + parser.close()]
        >>> read('[{"name": "read_file", "arguments": {"path": "a"}}]')
        ['tool_call_start', 'tool_arguments_delta', 'framing', 'tool_call', 'framing']
        >>> read('[{"name": "Ada", "age": 36}]')
        ['text']
    """

    name = "bare_array"
    start_tags: tuple[str, ...] = ("[",)
    end_tag = ""
    reply_start_only = True
    reader = UnmarkedArrayReader
    reserve_index = False  # each element reserves its index once it proves a call
