r"""The llama dialect: Llama 3.x JSON calls and Llama 4 pythonic calls, as the whole reply.

Llama models write a tool call as the reply itself, with no tag around it:

* **Llama 3.x (JSON).**  ``{"name": "read_file", "parameters": {"path": "a.py"}}``
  (``"arguments"`` is accepted too), optionally after ``<|python_tag|>`` (or, from Llama
  4, inside ``<|python_start|>`` ... ``<|python_end|>``).  Several calls are objects
  separated by ``;`` and/or whitespace.
* **Llama 4 pythonic.**  ``[read_file(path='a.py'), search(query="x", max_results=3)]``:
  a Python list of calls with keyword arguments whose values are Python literals.

Theory of operation
-------------------

:class:`LlamaPlugin` claims ``{``, ``[``, ``<|python_tag|>`` and ``<|python_start|>``
with ``reply_start_only``: they open a block only when nothing but whitespace (and
thinking) came before them in the reply.  The block has no end tag; the plugin ends it
itself (``ends_at``), where the JSON object or the bracket list ends.  A JSON object is
followed by the core's :class:`~stream_parser.core.json_scan.JsonScanner`, which reports
where it ends; the pythonic list by its own tracking of Python strings (both quotes)
and brackets.  Both do constant work per character.  After a JSON call, whitespace and
``;`` stay in the block, and another ``{`` is the next parallel call; the first other
character ends the block and is read as ordinary input.  The end-of-message tokens
(``<|python_end|>``, ``<|eom_id|>``, ``<|eot_id|>``, Llama 4's ``<|eom|>`` and
``<|eot|>``) are framing wherever they come (:class:`LlamaEndMarkers`), never text.

Each JSON object is followed while it streams by a
:class:`~stream_parser.dialects.hermes.HermesReader` (the same JSON call object as
hermes), so the call is announced when its name is known and its arguments stream as
:class:`~stream_parser.core.events.ToolArgumentsDeltaEvent`\ s.  These events are held
until the object has shown both its name and an ``"arguments"``/``"parameters"`` key:
only then is it a call.  A pythonic call is announced when ``name(`` has arrived, and
the source of each keyword value streams verbatim as
:class:`~stream_parser.core.events.ToolParamDeltaEvent`\ s (``'a.py'``, quotes
included); the converted values come with the call.

**JSON is also an answer.**  A typed answer is JSON too, so a block is a call only when
it was opened by ``<|python_tag|>``/``<|python_start|>``, or when one of its objects has
a registered tool's name and an arguments key (for the pythonic list: one element calls
a registered tool).  Any other block is delivered as text, losslessly, without an error.
In a call block every object (or list element) has its own outcome: a
:class:`~stream_parser.core.events.ToolCallEvent` spanning it, or an error and its text
(``unknown_tool``, ``malformed_tool``, ``invalid_params``); tags, separators and end
markers are :class:`~stream_parser.core.events.FramingEvent`\ s.  A call block that the
stream ends inside is ``unclosed_tool`` and never runs.

Pythonic elements are parsed with :func:`ast.parse` once they are complete, and only
calls of a plain name with keyword arguments whose values are literals (strings,
numbers, ``True``/``False``/``None``, ``true``/``false``/``null``, lists, tuples, dicts,
a sign before a number) are accepted, to a bounded depth.  Nothing is ever evaluated.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from pydantic_core import to_jsonable_python

from ..core.events import (
    ErrorType,
    FramingEvent,
    ParseErrorEvent,
    ParseEvent,
    TextOutputEvent,
    ToolCallStartEvent,
    ToolParamDeltaEvent,
    shorten_context,
)
from ..core.kit import (
    CallContext,
    JsonScanner,
    ParsePlugin,
    PluginBlock,
    failure,
    register,
)
from ..errors import InternalError
from ..prompts.text import Templates, say
from ._base import Dialect
from .hermes import HermesReader

if TYPE_CHECKING:
    from ..core.events import Span
    from ..core.kit import FastData, PluginContext, ValueRun

__all__ = [
    "CALL_TAGS",
    "END_MARKERS",
    "LlamaDialect",
    "LlamaEndMarkers",
    "LlamaPlugin",
    "format_pythonic_call",
    "parse_pythonic_call",
]

CALL_TAGS: Final = ("<|python_tag|>", "<|python_start|>")
"""Special tokens that announce a call: what follows is a call, whatever its name."""

END_MARKERS: Final = ("<|python_end|>", "<|eom_id|>", "<|eot_id|>", "<|eom|>", "<|eot|>")
"""End-of-message tokens: framing wherever they come (:class:`LlamaEndMarkers`)."""

_MAX_DEPTH: Final = 64  # nesting of a pythonic argument value
_NAME_MAX: Final = 256
_PY_STOP: Final = re.compile(r"""["'{}\[\]()]""")
_VALUE_STOP: Final = re.compile(r"""["'{}\[\](),]""")  # a keyword value's end, too
_STOP_IN: Final = {'"': re.compile(r'["\\]'), "'": re.compile(r"['\\]")}
_WS: Final = frozenset(" \t\r\n")

# What the plugin expects next.
_TAG, _JSON, _LIST, _AFTER = range(4)
_OPEN: Final = frozenset("{[(")
_CLOSE: Final = frozenset("}])")


class _Object:
    """One JSON object of a block: a scanner finds its end, a hermes reader reads it."""

    __slots__ = ("held", "reader", "scanner", "start")

    def __init__(self, reader: HermesReader, start: int) -> None:
        self.reader = reader
        # The reader has a scanner of its own, but it cannot say where in a piece the
        # object ended; this one is fed the same text and reports it.
        self.scanner = JsonScanner(keep_text=False)
        self.start = start
        self.held: list[ParseEvent] = []  # events held until the object is a call

    def caught_up(self) -> JsonScanner:
        """The scanner, once it has taken the chunks of the fast path.

        The reader's fast-path function skipped them with the reader's scanner; this
        one, fed the same text from the same start, never saw them and follows it.
        """
        scanner = self.scanner
        if not scanner.follow(self.reader.scanner):
            raise InternalError("the object's scanners disagree about the fast path")
        return scanner

    @property
    def call_shaped(self) -> bool:
        """It has shown a name and an arguments key: it is a call, not an answer."""
        return self.reader.is_call_shaped

    @property
    def name(self) -> str | None:
        return self.reader.name


class LlamaPlugin(ParsePlugin):
    """Reads Llama's tool calls: JSON objects or a pythonic list, as the reply itself."""

    name = "llama"
    start_tags = ("{", "[", *CALL_TAGS)
    end_tag = ""
    reply_start_only = True

    def bind(self, context: PluginContext) -> None:  # noqa: D102
        self.context = context
        self._reset()

    def _reset(self) -> None:
        self._mode = _TAG
        self._tagged = False
        # The pythonic list's structure (a JSON object's is its scanner's): the bracket
        # depth, the open string's quote ("" outside strings), a backslash at a piece's end.
        self._depth = 0
        self._quote = ""
        self._escaped = False
        self._end: int | None = None
        # The block's parts in order, (kind, start, end): "framing", "object", "element".
        self._segments: list[tuple[str, int, int]] = []
        self._objects: list[_Object] = []
        self._object: _Object | None = None
        self._pythonic = False
        # The open pythonic element: its start, end, name so far, call index.
        self._elem_start = -1
        self._elem_end = -1
        self._elem_name: list[str] = []
        self._elem_plain = True  # only name characters so far
        self._elem_index: int | None = None
        self._elements: list[tuple[int, int, int | None]] = []
        self._elem_tool = ""
        self._kw: list[str] = []  # a keyword's name being read
        self._param = ""  # the keyword whose value is open
        self._registered_seen = False

    # --- streaming -----------------------------------------------------------------------

    def on_start(self, tag: str, span: Span) -> list[ParseEvent]:  # noqa: D102
        self._reset()
        out: list[ParseEvent] = []
        if tag in CALL_TAGS:
            self._tagged = True
            self._frame(span[0], span[1])
            return out
        self._begin(tag, span[0], out)
        return out

    def _begin(self, c: str, at: int, out: list[ParseEvent]) -> None:
        """``{`` or ``[`` at ``at`` opens the call(s)."""
        if c == "{":
            self._mode = _JSON
            self._open_object(at, out)
        else:
            self._depth = 1
            self._mode = _LIST
            self._pythonic = True
            self._frame(at, at + 1)

    def _frame(self, start: int, end: int) -> None:
        """Structure of the block from ``start`` to ``end``, joined to adjacent structure."""
        segments = self._segments
        if segments and segments[-1][0] == "framing" and segments[-1][2] == start:
            segments[-1] = ("framing", segments[-1][1], end)
        else:
            segments.append(("framing", start, end))

    def _open_object(self, at: int, out: list[ParseEvent]) -> None:
        call = CallContext(self.context, -1)
        self._object = _Object(HermesReader(call), at)
        self._object.scanner.feed("{")
        self._feed_object("{", at, out)

    def _feed_object(self, data: str, at: int, out: list[ParseEvent]) -> None:
        obj = self._object
        assert obj is not None
        obj.reader.feed(data, at, obj.held)
        if obj.held and obj.call_shaped:
            reader = obj.reader
            if reader.call.call_index < 0:
                reader.call.call_index = self.context.next_call_index()
                obj.held = [_indexed(e, reader.call.call_index) for e in obj.held]
            out.extend(obj.held)
            obj.held = []

    def on_data(self, data: str, span: Span) -> list[ParseEvent]:  # noqa: D102
        out: list[ParseEvent] = []
        base = span[0]
        i, n = 0, len(data)
        while i < n and self._end is None:
            mode = self._mode
            if mode == _JSON:
                i = self._json(data, i, base, out)
            elif mode == _LIST:
                i = self._list(data, i, base, out)
            elif mode == _TAG:
                c = data[i]
                if c in _WS:
                    self._frame(base + i, base + i + 1)
                    i += 1
                elif c in "{[":
                    self._begin(c, base + i, out)
                    i += 1
                else:  # a tag that announces no call we read: the block is the tag
                    self._end = base + i
            else:
                i = self._after(data, i, base, out)
        return out

    def _json(self, data: str, i: int, base: int, out: list[ParseEvent]) -> int:
        """Follow a JSON object from ``i``; feed its characters to its reader."""
        obj = self._object
        assert obj is not None
        scanner = obj.caught_up()
        piece = data[i:]
        for mark in scanner.feed(piece):
            if mark.kind == "end":  # the bracket that closes the object, at depth 0
                j = i + mark.end - (scanner.position - len(piece))
                self._feed_object(data[i:j], base + i, out)
                self._close_object(base + j)
                return j
        self._feed_object(piece, base + i, out)
        return len(data)

    def fast_path(self) -> FastData | None:
        """Inside an announced call's object, where its reader has a fast path of its own."""
        obj = self._object
        if self._mode != _JSON or obj is None or obj.held or obj.reader.call.call_index < 0:
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
        """The arguments' run of the object's reader, asked with its fast path."""
        obj = self._object
        return None if obj is None else obj.reader.value_run()

    def _close_object(self, end: int) -> None:
        obj = self._object
        assert obj is not None
        self._object = None
        self._objects.append(obj)
        self._segments.append(("object", obj.start, end))
        shaped = obj.call_shaped
        if shaped and obj.name in self.context.tool_registry:
            self._registered_seen = True
        if not shaped:
            obj.held = []
        self._mode = _AFTER
        if not shaped and len(self._objects) == 1 and not self._tagged:
            self._end = end  # an answer, not a call: nothing more belongs to it

    def _string(self, data: str, j: int) -> int:
        """Inside a string from ``j``: where scanning goes on."""
        n = len(data)
        if self._escaped:
            self._escaped = False
            j += 1
        while j < n:
            m = _STOP_IN[self._quote].search(data, j)
            if m is None:
                return n
            k = m.start()
            if data[k] == "\\":
                if k + 1 == n:
                    self._escaped = True
                    return n
                j = k + 2
                continue
            self._quote = ""
            return k + 1
        return j

    def _list(self, data: str, i: int, base: int, out: list[ParseEvent]) -> int:
        """Follow a pythonic list from ``i``: its elements, their names, its end."""
        n = len(data)
        # Where the piece of an open keyword value begins in ``data`` (streamed at the
        # value's end or at the end of ``data``), or -1.
        vfrom = i if self._param else -1
        while i < n:
            if self._quote:
                i = self._string(data, i)
                if not self._quote and self._depth == 1:
                    self._elem_end = base + i
                continue
            depth = self._depth
            if depth == 2 and self._elem_index is not None and not self._param:
                # Between the keyword arguments of an announced call: read their names.
                c = data[i]
                i += 1
                if c == "=" and self._kw:
                    self._param = "".join(self._kw)
                    self._kw = []
                    vfrom = i
                elif c.isalnum() or c == "_":
                    if len(self._kw) < _NAME_MAX:
                        self._kw.append(c)
                elif c not in _WS:
                    self._kw = []
                    if c in "\"'":
                        self._quote = c
                    elif c in _OPEN:
                        self._depth += 1
                    elif c in _CLOSE:
                        self._depth -= 1
                        self._elem_end = base + i
                continue
            if depth > 1:
                m = (_VALUE_STOP if depth == 2 and self._param else _PY_STOP).search(data, i)
                if m is None:
                    i = n
                    break
                k = m.start()
                c = data[k]
                i = k + 1
                if c in "\"'":
                    self._quote = c
                elif c in _OPEN:
                    self._depth += 1
                elif c == "," and depth == 2 and self._param:
                    vfrom = self._value_end(data, vfrom, k, base, out)
                elif c in _CLOSE:
                    if depth == 2 and self._param:
                        vfrom = self._value_end(data, vfrom, k, base, out)
                    self._depth -= 1
                    if self._depth == 1:
                        self._elem_end = base + i
                continue
            # Depth 1: between and inside the list's elements.
            c = data[i]
            at = base + i
            i += 1
            if c in _WS:
                continue
            if c == "," or c == "]":
                self._end_element()
                if c == "]":
                    self._depth = 0
                    self._frame(at, at + 1)
                    self._mode = _AFTER
                    return i
                continue
            if self._elem_start < 0:
                self._elem_start = at
                self._elem_name = []
                self._elem_plain = True
                self._elem_index = None
            self._elem_end = at + 1
            if c in "\"'":
                self._quote = c
                self._elem_plain = False
            elif c in _OPEN:
                if c == "(" and self._elem_plain:
                    self._announce("".join(self._elem_name), (self._elem_start, at), out)
                    self._kw = []
                self._elem_plain = False
                self._depth += 1
            elif c in _CLOSE:  # unbalanced: the list cannot be read; let it end here
                self._elem_plain = False
            elif self._elem_plain:
                if len(self._elem_name) < _NAME_MAX and (c.isalnum() or c in "_.-"):
                    self._elem_name.append(c)
                else:
                    self._elem_plain = False
        if self._param and vfrom >= 0:
            self._param_delta(data, vfrom, i, base, out)
        return i

    def _value_end(self, data: str, vfrom: int, k: int, base: int, out: list[ParseEvent]) -> int:
        """The open keyword value ends before ``data[k]``: stream its last piece."""
        self._param_delta(data, vfrom, k, base, out)
        self._param = ""
        return -1

    def _param_delta(
        self, data: str, begin: int, end: int, base: int, out: list[ParseEvent]
    ) -> None:
        """Stream ``data[begin:end]``, a piece of a keyword value's source, verbatim."""
        index = self._elem_index
        if begin < end and index is not None and self.context.config.emit_deltas:
            out.append(
                ToolParamDeltaEvent(
                    tool_name=self._elem_tool,
                    param=self._param,
                    delta=data[begin:end],
                    call_index=index,
                    span=(base + begin, base + end),
                )
            )

    def _announce(self, name: str, span: Span, out: list[ParseEvent]) -> None:
        if name not in self.context.tool_registry:
            return
        self._registered_seen = True
        index = self.context.next_call_index()
        self._elem_index = index
        self._elem_tool = name
        out.append(ToolCallStartEvent(tool_name=name, call_index=index, span=span))

    def _end_element(self) -> None:
        if self._elem_start >= 0:
            self._elements.append((self._elem_start, self._elem_end, self._elem_index))
            self._segments.append(("element", self._elem_start, self._elem_end))
            self._elem_start = -1

    def _after(self, data: str, i: int, base: int, out: list[ParseEvent]) -> int:
        """After a call: separators, the next JSON call, or the block's end."""
        c = data[i]
        at = base + i
        if c in _WS or (c == ";" and not self._pythonic):
            self._frame(at, at + 1)
            return i + 1
        if c == "{" and not self._pythonic:
            self._mode = _JSON
            self._open_object(at, out)
            return i + 1
        self._end = at
        return i

    def ends_at(self) -> int | None:  # noqa: D102
        return self._end

    # --- outcomes ------------------------------------------------------------------------

    def _is_call(self) -> bool:
        """Whether the block is a call (else: an answer, delivered as text)."""
        return self._tagged or self._registered_seen

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:  # noqa: D102
        if not self._is_call():
            return [TextOutputEvent(text=block.raw, span=block.span)]
        if self._mode in (_JSON, _LIST) or self._object is not None:  # pragma: no cover
            # The plugin ends its blocks only between calls; never inside one.
            return self._unclosed(block)
        return self._outcomes(block)

    def on_unclosed(self, block: PluginBlock) -> list[ParseEvent]:  # noqa: D102
        complete = self._mode == _AFTER and self._object is None
        obj = self._object
        if obj is not None and obj.call_shaped and obj.name in self.context.tool_registry:
            self._registered_seen = True
        if not self._is_call():
            return [TextOutputEvent(text=block.raw, span=block.span)]
        if not complete:
            return self._unclosed(block)
        return self._outcomes(block)

    def on_too_large(self, block: PluginBlock) -> list[ParseEvent]:  # noqa: D102
        obj = self._object
        if obj is not None and obj.call_shaped and obj.name in self.context.tool_registry:
            self._registered_seen = True
        if not self._is_call():
            return []  # an answer: the core delivers it as text
        return [
            ParseErrorEvent(
                error_type=ErrorType.TOOL_TOO_LARGE.value,
                message="a llama tool call is longer than max_tool_size; it is not executed",
                context=shorten_context(block.raw),
                span=block.span,
            )
        ]

    def _unclosed(self, block: PluginBlock) -> list[ParseEvent]:
        index = None
        if self._object is not None and self._object.reader.call.call_index >= 0:
            index = self._object.reader.call.call_index
        elif self._elem_index is not None:
            index = self._elem_index
        cut = " (the stream was cut)" if block.cut else ""
        return failure(
            ErrorType.UNCLOSED_TOOL,
            f"the stream ended inside a llama tool call{cut}; the call is not executed",
            block,
            call_index=index,
        )

    def _outcomes(self, block: PluginBlock) -> list[ParseEvent]:
        """The events of a complete call block, one outcome per object or element."""
        raw, origin = block.raw, block.span[0]
        objects = iter(self._objects)
        elements = iter(self._elements)
        out: list[ParseEvent] = []
        last = origin
        for kind, start, end in self._segments:
            if last < start:  # between a list's elements: ", " is structure
                self._framing(out, raw[last - origin : start - origin], last, start)
            last = end
            text = raw[start - origin : end - origin]
            if kind == "framing":
                self._framing(out, text, start, end)
            elif kind == "object":
                out.extend(self._object_outcome(next(objects), text, (start, end)))
            else:
                _, _, index = next(elements)
                out.extend(self._element_outcome(text, (start, end), index))
        # Whatever lies between the segments and the block's end (nothing, normally).
        if last < block.span[1]:
            out.append(TextOutputEvent(text=raw[last - origin :], span=(last, block.span[1])))
        return out

    @staticmethod
    def _framing(out: list[ParseEvent], text: str, start: int, end: int) -> None:
        """Structure of the block (tags, separators, end markers), joined when adjacent."""
        prev = out[-1] if out else None
        if isinstance(prev, FramingEvent) and prev.span[1] == start:
            out[-1] = FramingEvent(text=prev.text + text, span=(prev.span[0], end))
        else:
            out.append(FramingEvent(text=text, span=(start, end)))

    def _object_outcome(self, obj: _Object, text: str, span: Span) -> list[ParseEvent]:
        call = obj.reader.call
        if call.call_index < 0:
            call.call_index = self.context.next_call_index()
        return obj.reader.finish(PluginBlock("", "", text, span))

    def _element_outcome(self, text: str, span: Span, index: int | None) -> list[ParseEvent]:
        piece = PluginBlock("", "", text, span)
        parsed = parse_pythonic_call(text)
        if isinstance(parsed, str):
            return failure(
                ErrorType.MALFORMED_TOOL,
                f"the tool call {parsed}; expected name(param=value, ...); "
                "the call is not executed",
                piece,
                call_index=index,
            )
        name, arguments = parsed
        call = CallContext(self.context, -1 if index is None else index)
        model = call.tool_registry.get(name)
        if model is None:
            return call.unknown_tool(name, piece)
        if call.call_index < 0:  # pragma: no cover - a registered name( is always announced
            call.call_index = self.context.next_call_index()
        return call.call(name, call.validate(name, model, arguments), piece)


class LlamaEndMarkers(ParsePlugin):
    """Llama's end-of-message tokens, wherever they come: framing, never text.

    Each block is its marker alone (``ends_at`` right after the start tag), read as a
    :class:`~stream_parser.core.events.FramingEvent`; being framing, it does not end
    the start of the reply.
    """

    name = "llama_end"
    start_tags = END_MARKERS
    end_tag = ""
    is_framing = True

    def __init__(self) -> None:
        self._end: int | None = None

    def on_start(self, tag: str, span: Span) -> list[ParseEvent]:  # noqa: D102
        self._end = span[1]
        return []

    def ends_at(self) -> int | None:  # noqa: D102
        return self._end

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:  # noqa: D102
        return [FramingEvent(text=block.raw, span=block.span)]


def _indexed(event: ParseEvent, index: int) -> ParseEvent:
    """A held event with the call index reserved when the object proved a call."""
    if hasattr(event, "call_index"):
        return dataclasses.replace(event, call_index=index)  # type: ignore[type-var]
    return event  # pragma: no cover - the reader holds only call events


_JSON_NAMES: Final[Mapping[str, object]] = {"true": True, "false": False, "null": None}


def parse_pythonic_call(text: str) -> tuple[str, dict[str, Any]] | str:
    """One pythonic call ``name(a=1, b='x')``: its name and arguments, or why not.

    Parsed with :func:`ast.parse` and read node by node: only literal values are
    accepted, nothing is evaluated.

    Example:
        >>> parse_pythonic_call("search(query='a b', max_results=-3, tags=[True, None])")
        ('search', {'query': 'a b', 'max_results': -3, 'tags': [True, None]})
        >>> parse_pythonic_call("search(__import__('os'))")
        'passes positional arguments'
    """
    try:
        node = ast.parse(text.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return f"is not a Python call ({type(exc).__name__})"
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name):
        return "is not a call of a tool name"
    if node.args:
        return "passes positional arguments"
    arguments: dict[str, Any] = {}
    for keyword in node.keywords:
        if keyword.arg is None:
            return "unpacks arguments with **"
        if keyword.arg in arguments:
            return f"gives {keyword.arg!r} twice"
        try:
            arguments[keyword.arg] = _literal(keyword.value, 0)
        except (ValueError, RecursionError) as exc:
            return f"gives {keyword.arg!r} a value that is not a literal ({exc})"
    return node.func.id, arguments


def _literal(node: ast.expr, depth: int) -> Any:
    """The value of a literal node (never evaluated); ValueError for anything else."""
    if depth > _MAX_DEPTH:
        raise ValueError("nested too deeply")
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or isinstance(value, (str, bool, int, float)):
            return value
        raise ValueError(type(value).__name__)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [_literal(item, depth + 1) for item in node.elts]
    if isinstance(node, ast.Dict):
        result: dict[Any, Any] = {}
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            if key_node is None:
                raise ValueError("** in a dict")
            key = _literal(key_node, depth + 1)
            if isinstance(key, (list, dict)):
                raise ValueError("a dict key that is not a scalar")
            result[key] = _literal(value_node, depth + 1)
        return result
    if (
        isinstance(node, ast.UnaryOp)
        and isinstance(node.op, (ast.USub, ast.UAdd))
        and isinstance(node.operand, ast.Constant)
        and isinstance(node.operand.value, (int, float))
        and not isinstance(node.operand.value, bool)
    ):
        number = node.operand.value
        return -number if isinstance(node.op, ast.USub) else number
    if isinstance(node, ast.Name) and node.id in _JSON_NAMES:
        return _JSON_NAMES[node.id]
    raise ValueError(type(node).__name__)


def _python_literal(value: Any) -> str:
    """A JSON-able value as Python source: what :func:`_literal` reads back."""
    if isinstance(value, dict):
        items = ", ".join(f"{_python_literal(k)}: {_python_literal(v)}" for k, v in value.items())
        return "{" + items + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_python_literal(v) for v in value) + "]"
    return repr(value)  # str, int, float, bool, None


def format_pythonic_call(calls: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """Write calls as a Llama 4 pythonic list, ``[f(a=1), g(b='x')]``.

    Example:
        >>> print(format_pythonic_call([("search", {"query": "x", "max_results": 3})]))
        [search(query='x', max_results=3)]
    """
    written = []
    for name, args in calls:
        values = to_jsonable_python(dict(args))
        params = ", ".join(f"{key}={_python_literal(value)}" for key, value in values.items())
        written.append(f"{name}({params})")
    return "[" + ", ".join(written) + "]"


class LlamaDialect(Dialect):
    """Llama's calls: ``{"name": ..., "parameters": {...}}`` or ``[f(a=1)]``, the whole reply.

    Example:
        >>> print(LlamaDialect().format_call("read_file", {"path": "a.py"}))
        {"name": "read_file", "parameters": {"path": "a.py"}}
    """

    name = "llama"
    title = "the reply is a JSON call (Llama 3.x) or a pythonic list of calls (Llama 4)"
    plugin_key = "llama"
    special_tokens = True  # <|python_tag|> and the end markers are special tokens

    def make_plugin(self, names: tuple[str, ...]) -> list[ParsePlugin]:  # noqa: D102
        return [LlamaPlugin(), LlamaEndMarkers()]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write the call as the Llama 3.1 chat template renders one (``tojson`` arguments)."""
        arguments = json.dumps(to_jsonable_python(dict(args)), ensure_ascii=False)
        return f'{{"name": "{tool_name}", "parameters": {arguments}}}'

    def _instructions(self) -> str:
        return "llama_instructions"

    def usage_instructions(  # noqa: D102
        self,
        example_tool: str = "tool_name",
        example_args: Mapping[str, Any] | None = None,
        *,
        language: str = "en",
        templates: Templates = None,
    ) -> str:
        # The format's own rules replace the generic ones: a call is the whole reply.
        example = self.format_call(
            example_tool, {"parameter_name": "value"} if example_args is None else example_args
        )
        return f"{say(self._instructions(), language, templates)}\n\n{example}"


register(LlamaDialect().record())
