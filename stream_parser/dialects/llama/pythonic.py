r"""Pythonic calls: ``[name(param=value, ...)]``, read as they stream, and written.

Theory of operation.  :class:`PythonicReader`, on the kit's one reader base, follows a
list of calls from its ``[`` to its ``]`` with constant work per character: the bracket
depth, Python strings (both quotes, with their escapes), each element's name (announced
at its ``(``) and, inside an announced call, each keyword's name and the source of its
value (streamed verbatim as parameter deltas).  The list has no end marker: the reader
ends the block at the first character after the list that is not whitespace.  A block
may open with the list's ``[`` or with a marker its plugin chooses (``<|python_start|>``,
say: framing, then the list), so the reader serves any format that writes this syntax.
When the block closes each element is parsed once, whole, by :func:`parse_pythonic_call`
(Python literals only, by ``ast``: nothing is evaluated) and validated by its tool's
model; :func:`format_pythonic_call` writes calls.  A list with no element naming a
registered tool, opened without a marker, is not a call: its text is text.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pydantic_core import to_jsonable_python

from ...core.events import ErrorType, FramingEvent, ParseEvent, Span, TextOutputEvent
from ...core.kit import CallContext, PluginBlock, Reader, call_too_large, failure

__all__ = ["PythonicReader", "format_pythonic_call", "parse_pythonic_call"]

_MAX_DEPTH: Final = 64  # nesting of a pythonic argument value
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


_NAME_MAX: Final = 256
_PY_STOP: Final = re.compile(r"""["'{}\[\]()]""")
_VALUE_STOP: Final = re.compile(r"""["'{}\[\](),]""")  # a keyword value's end, too
_STOP_IN: Final = {'"': re.compile(r'["\\]'), "'": re.compile(r"['\\]")}
_WS: Final = frozenset(" \t\r\n")
_OPEN: Final = frozenset("{[(")
_CLOSE: Final = frozenset("}])")

# What the reader expects next (a subclass adds its own states after these).
TAG, LIST, AFTER = range(3)


class PythonicReader(Reader):
    """Reads one block holding a pythonic list of calls (see the module).

    Run it with a :class:`~stream_parser.core.kit.ReaderPlugin` whose ``end_tag`` is
    ``""`` and ``reserve_index`` False (each element reserves its own call index when
    it names a registered tool); its start tags are ``[`` (the list opens the block) or
    any markers the format writes before the list.

    Example:
        >>> from pydantic import BaseModel
        >>> from stream_parser import StreamToolParser
        >>> from stream_parser.core.kit import ReaderPlugin
        >>> class Search(BaseModel):
        ...     query: str
        >>> class Pythonic(ReaderPlugin):
        ...     name, start_tags, end_tag = "pythonic", ("<calls>",), ""
        ...     reader, reserve_index = PythonicReader, False
        >>> parser = StreamToolParser({"search": Search}, plugins=[Pythonic()])
        >>> events = parser.feed("<calls>[search(query='a b')] done") + parser.close()
        >>> [(e.kind, e.text if e.kind in ("text", "framing") else "") for e in events]
        ... # doctest: +NORMALIZE_WHITESPACE
        [('tool_call_start', ''), ('tool_param_delta', ''), ('framing', '<calls>['),
         ('tool_call', ''), ('framing', '] '), ('text', 'done')]
    """

    opens: str = "["
    """The characters that open what the reader reads after a marker."""

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self.context = call.plugin
        self.state = TAG
        self.handlers = {TAG: self._tag, LIST: self._list, AFTER: self._after}
        self.tagged = False  # a marker opened the block: it is a call, whatever it names
        self.registered_seen = False  # an element (or object) names a registered tool
        # The block's parts in order, (kind, start, end): "framing", "element", and a
        # subclass's own.
        self.segments: list[tuple[str, int, int]] = []
        # The list's structure: the bracket depth, the open string's quote ("" outside
        # strings), a backslash at a piece's end.
        self._depth = 0
        self._quote = ""
        self._escaped = False
        # The open element: its start, end, name so far, and call (once announced).
        self._elem_start = -1
        self._elem_end = -1
        self._elem_name: list[str] = []
        self._elem_plain = True  # only name characters so far
        self._elem_call: CallContext | None = None
        self._elem_tool = ""
        self._elements: list[tuple[int, int, CallContext | None]] = []
        self._kw: list[str] = []  # a keyword's name being read
        self._param = ""  # the keyword whose value is open

    # --- streaming -----------------------------------------------------------------------

    def begin(self, tag: str, span: Span, out: list[ParseEvent]) -> None:
        """The list's ``[`` opens it; any other tag is a marker, framing before it."""
        if len(tag) == 1 and tag in self.opens:
            self.open(tag, span[0], out)
        else:
            self.tagged = True
            self.frame(span[0], span[1])

    def open(self, c: str, at: int, out: list[ParseEvent]) -> None:
        """``c`` (one of :attr:`opens`) at ``at`` opens what the reader reads."""
        self._depth = 1
        self.state = LIST
        self.frame(at, at + 1)

    def frame(self, start: int, end: int) -> None:
        """Structure of the block from ``start`` to ``end``, joined to adjacent structure."""
        segments = self.segments
        if segments and segments[-1][0] == "framing" and segments[-1][2] == start:
            segments[-1] = ("framing", segments[-1][1], end)
        else:
            segments.append(("framing", start, end))

    def _tag(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """After a marker: whitespace, then what the reader reads."""
        c = data[i]
        if c in _WS:
            self.frame(base + i, base + i + 1)
            return i + 1, False
        if c in self.opens:
            self.open(c, base + i, out)
            return i + 1, False
        self.end = base + i  # a marker that announces no call we read: the block is it
        return i, True

    def _after(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """After the list: whitespace is the block's; the first other character ends it."""
        c = data[i]
        if c in _WS:
            self.frame(base + i, base + i + 1)
            return i + 1, False
        self.end = base + i
        return i, True

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

    def _list(self, data: str, i: int, base: int, out: list[ParseEvent]) -> tuple[int, bool]:
        """Follow the list from ``i``: its elements, their names, its end."""
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
            if depth == 2 and self._elem_call is not None and not self._param:
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
                    self.frame(at, at + 1)
                    self.state = AFTER
                    return i, False
                continue
            if self._elem_start < 0:
                self._elem_start = at
                self._elem_name = []
                self._elem_plain = True
                self._elem_call = None
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
        return i, False

    def _value_end(self, data: str, vfrom: int, k: int, base: int, out: list[ParseEvent]) -> int:
        """The open keyword value ends before ``data[k]``: stream its last piece."""
        self._param_delta(data, vfrom, k, base, out)
        self._param = ""
        return -1

    def _param_delta(
        self, data: str, begin: int, end: int, base: int, out: list[ParseEvent]
    ) -> None:
        """Stream ``data[begin:end]``, a piece of a keyword value's source, verbatim."""
        call = self._elem_call
        if begin < end and call is not None and call.emit_deltas:
            span = (base + begin, base + end)
            out.append(call.param_delta(self._elem_tool, self._param, data[begin:end], span))

    def _announce(self, name: str, span: Span, out: list[ParseEvent]) -> None:
        if name not in self.context.tool_registry:
            return
        self.registered_seen = True
        call = self._elem_call = CallContext(self.context)
        self._elem_tool = name
        out.append(call.start(name, span))

    def _end_element(self) -> None:
        if self._elem_start >= 0:
            self._elements.append((self._elem_start, self._elem_end, self._elem_call))
            self.segments.append(("element", self._elem_start, self._elem_end))
            self._elem_start = -1

    # --- outcomes ------------------------------------------------------------------------

    def is_call(self) -> bool:
        """Whether the block is a call (else: an answer, delivered as text)."""
        return self.tagged or self.registered_seen

    def complete(self) -> bool:
        """Whether the block read so far ends after whole calls (the stream may end there)."""
        return self.state == AFTER

    @property
    def error_index(self) -> int | None:
        """The index of the open element's call, once announced."""
        call = self._elem_call
        return None if call is None else call.call_index

    def finish(self, block: PluginBlock) -> list[ParseEvent]:
        """A call block's outcomes (one per element), or an answer's text."""
        if not self.is_call():
            return [TextOutputEvent(text=block.raw, span=block.span)]
        if self.state not in (TAG, AFTER):  # pragma: no cover - it ends only between calls
            return self.cut_call(block)
        return self.outcomes(block)

    def unclosed(self, block: PluginBlock) -> list[ParseEvent]:
        """The stream ended: whole calls run (not cut), an open one is ``unclosed_tool``."""
        if not self.is_call():
            return [TextOutputEvent(text=block.raw, span=block.span)]
        if not self.complete():
            return self.cut_call(block)
        return self.outcomes(block)

    def too_large(self, block: PluginBlock) -> list[ParseEvent]:
        """A call past ``max_tool_size``: ``tool_too_large``; an answer is only text."""
        if not self.is_call():
            return []  # an answer: the core delivers it as text
        return call_too_large(block, None, self.context)

    def cut_call(self, block: PluginBlock) -> list[ParseEvent]:
        """The stream ended inside a call: ``unclosed_tool``, and nothing in it runs."""
        cut = " (the stream was cut)" if block.cut else ""
        return failure(
            ErrorType.UNCLOSED_TOOL,
            f"the stream ended inside a tool call{cut}; the call is not executed",
            block,
            call_index=self.error_index,
        )

    def outcomes(self, block: PluginBlock) -> list[ParseEvent]:
        """The events of a complete call block, one outcome per segment."""
        raw, origin = block.raw, block.span[0]
        elements = iter(self._elements)
        out: list[ParseEvent] = []
        last = origin
        for kind, start, end in self.segments:
            if last < start:  # between a list's elements: ", " is structure
                _framing(out, raw[last - origin : start - origin], last, start)
            last = end
            text = raw[start - origin : end - origin]
            if kind == "framing":
                _framing(out, text, start, end)
            elif kind == "element":
                _, _, call = next(elements)
                out.extend(self._element_outcome(text, (start, end), call))
            else:
                out.extend(self.segment_outcome(kind, text, (start, end)))
        # Whatever lies between the segments and the block's end (nothing, normally).
        if last < block.span[1]:
            out.append(TextOutputEvent(text=raw[last - origin :], span=(last, block.span[1])))
        return out

    def segment_outcome(self, kind: str, text: str, span: Span) -> list[ParseEvent]:
        """The outcome of a subclass's own kind of segment."""
        raise NotImplementedError(kind)

    def _element_outcome(self, text: str, span: Span, call: CallContext | None) -> list[ParseEvent]:
        piece = PluginBlock("", "", text, span)
        parsed = parse_pythonic_call(text)
        index = None if call is None else call.call_index
        if isinstance(parsed, str):
            return failure(
                ErrorType.MALFORMED_TOOL,
                f"the tool call {parsed}; expected name(param=value, ...); "
                "the call is not executed",
                piece,
                call_index=index,
            )
        name, arguments = parsed
        if call is None:
            call = CallContext.unreserved(self.context)
        model = call.tool_registry.get(name)
        if model is None:
            return call.unknown_tool(name, piece)
        call.reserve()  # a registered name( is always announced; reserved then
        return call.call(name, call.validate(name, model, arguments), piece)


def _framing(out: list[ParseEvent], text: str, start: int, end: int) -> None:
    """Structure of the block (tags, separators, end markers), joined when adjacent."""
    prev = out[-1] if out else None
    if isinstance(prev, FramingEvent) and prev.span[1] == start:
        out[-1] = FramingEvent(text=prev.text + text, span=(prev.span[0], end))
    else:
        out.append(FramingEvent(text=text, span=(start, end)))
