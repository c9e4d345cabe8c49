r"""The llama reader: a reply that is a bare JSON call, or a list of pythonic calls.

:class:`LlamaReader` (the pythonic list reader of :mod:`.pythonic`, with a state for
JSON objects) reads the call that opens a reply: ``{"name": ..., "parameters": ...}``
(each object followed with the hermes reader; whitespace and ``;`` between objects are
framing) or ``[name(...), ...]``; :class:`LlamaPlugin` runs it.  See the package for the
format.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from ...core.events import ParseEvent
from ...core.kit import CallContext, PluginBlock, ReaderPlugin
from ..hermes import HermesReader
from .json_call import _indexed, _Object
from .pythonic import AFTER, PythonicReader

if TYPE_CHECKING:
    from ...core.events import Span
    from ...core.kit import FastData, ValueRun

CALL_TAGS: Final = ("<|python_tag|>", "<|python_start|>")
"""Special tokens that announce a call: what follows is a call, whatever its name."""

_JSON: Final = AFTER + 1  # the state inside a JSON object


class LlamaReader(PythonicReader):
    """Reads one llama block: JSON call objects, or a pythonic list (see the package)."""

    opens = "{["

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self.handlers[_JSON] = self._json
        self._objects: list[_Object] = []
        self._object: _Object | None = None
        self._pythonic = False

    # --- streaming -----------------------------------------------------------------------

    def open(self, c: str, at: int, out: list[ParseEvent]) -> None:
        """``{`` opens a JSON call object, ``[`` a pythonic list."""
        if c == "{":
            self.state = _JSON
            self._open_object(at, out)
        else:
            self._pythonic = True
            super().open(c, at, out)

    def _open_object(self, at: int, out: list[ParseEvent]) -> None:
        self._object = _Object(HermesReader(CallContext.unreserved(self.context)), at)
        self._object.scanner.feed("{")
        self._feed_object("{", at, out)

    def _feed_object(self, data: str, at: int, out: list[ParseEvent]) -> None:
        obj = self._object
        assert obj is not None
        obj.reader.feed(data, at, obj.held)
        if obj.held and obj.call_shaped:
            reader = obj.reader
            if reader.call.call_index < 0:
                index = reader.call.reserve()
                obj.held = [_indexed(e, index) for e in obj.held]
            out.extend(obj.held)
            obj.held = []

    def _json(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """Follow a JSON object from ``i``; feed its characters to its reader."""
        obj = self._object
        assert obj is not None
        scanner = obj.caught_up()
        piece = data[i:]
        for mark in scanner.feed(piece):
            if mark.kind == "end":  # the bracket that closes the object, at depth 0
                j = i + mark.end - (scanner.position - len(piece))
                self._feed_object(data[i:j], base + i, out)
                return j, self._close_object(base + j)
        self._feed_object(piece, base + i, out)
        return len(data), False

    def fast_path(self) -> FastData | None:
        """In an announced call's object, its reader's fast path; in a list, a string's."""
        obj = self._object
        if self.state != _JSON:
            return super().fast_path()  # a pythonic list's string
        if obj is None or obj.held or obj.reader.call.call_index < 0:
            return None
        scanner = obj.caught_up()
        # While the object's scanner reads a key of the object (a few characters), it
        # must see them: they go through on_data.
        if not scanner.skips or scanner.holds_slice:
            return None
        fast = obj.reader.fast_path()
        if fast is None or fast[0] is not None:
            return None
        # The reader's own function, with no call of ours around it: the object's scanner
        # follows the reader's when it is next needed (caught_up).
        return None, fast[1], False  # no end tag

    def value_run(self) -> ValueRun | None:
        """The arguments' run of the object's reader (or a list's string), with its fast path."""
        obj = self._object
        if self.state != _JSON:
            return super().value_run()
        return None if obj is None else obj.reader.value_run()

    def _close_object(self, end: int) -> bool:
        """The object closed at ``end``; whether that ends the block (an answer)."""
        obj = self._object
        assert obj is not None
        self._object = None
        self._objects.append(obj)
        self.segments.append(("object", obj.start, end))
        shaped = obj.call_shaped
        if shaped and obj.name in self.context.tool_registry:
            self.registered_seen = True
        if not shaped:
            obj.held = []
        self.state = AFTER
        if not shaped and len(self._objects) == 1 and not self.tagged:
            self.end = end  # an answer, not a call: nothing more belongs to it
            return True
        return False

    def _after(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """After a call: separators, the next JSON call, or the block's end."""
        c = data[i]
        if not self._pythonic:
            at = base + i
            if c == ";":
                self.frame(at, at + 1)
                return i + 1, False
            if c == "{":
                self.state = _JSON
                self._open_object(at, out)
                return i + 1, False
        return super()._after(data, i, base, out)

    # --- outcomes ------------------------------------------------------------------------

    def _open_call_seen(self) -> None:
        """The open object names a registered tool with arguments: the block is a call."""
        obj = self._object
        if obj is not None and obj.call_shaped and obj.name in self.context.tool_registry:
            self.registered_seen = True

    @property
    def error_index(self) -> int | None:
        """The open object's call index, else the open pythonic element's."""
        if self._object is not None and self._object.reader.call.call_index >= 0:
            return self._object.reader.call.call_index
        return super().error_index

    def unclosed(self, block: PluginBlock) -> list[ParseEvent]:  # noqa: D102
        self._open_call_seen()
        return super().unclosed(block)

    def too_large(self, block: PluginBlock) -> list[ParseEvent]:  # noqa: D102
        self._open_call_seen()
        return super().too_large(block)

    def segment_outcome(self, kind: str, text: str, span: Span) -> list[ParseEvent]:
        """A JSON object's outcome (its reader's), numbered once it proves a call."""
        obj = self._objects.pop(0)
        obj.reader.call.reserve()
        return obj.reader.finish(PluginBlock("", "", text, span))


class LlamaPlugin(ReaderPlugin):
    """Reads Llama's tool calls: JSON objects or a pythonic list, as the reply itself."""

    name = "llama"
    start_tags: tuple[str, ...] = ("{", "[")
    end_tag = ""
    reply_start_only = True
    reader = LlamaReader
    reserve_index = False  # each object or element reserves its own, once it is a call
