r"""A lenient reader for the XML a model writes as a typed answer.

Theory of operation.  A model asked for a structured value may answer with a
``<result>`` element holding one child element per field (``<name>Ann</name>``), list
items as repeated ``<item>`` elements and nested values as nested elements.  What it
writes is rarely well-formed XML: a note like ``a < b & c`` carries a raw ``<`` and a
raw ``&``.  A strict parser (lxml) refuses such text, and the library never decodes
entities in model text anyway, so this module reads it its own way:

* One pass over the text finds the tag-like tokens: start tags (``<name ...>``), end
  tags (``</name>``), empty elements (``<name/>``) and CDATA sections.  Anything else --
  a ``<`` not followed by a name, a ``&``, an entity -- is text, kept as written.
* Start and end tags are paired with a stack: an end tag closes the nearest open element
  of its name; open elements it skips over are unmatched, so their start tags are text.
  An end tag with no open element of its name is text too.  Each token is handled once,
  so reading is linear in the text.
* ``<![CDATA[...]]>`` hides tags: its content is taken verbatim.  Nothing is decoded, no
  DTD is read, nothing outside the text is touched.

:func:`find_element` returns the first element of a tag name (``result``), and
:func:`element_value` turns an element into a plain value shaped for an annotation (dicts
for models, lists for sequences, converted leaves), for Pydantic to validate.  Leaves
of a scalar type are stripped; a ``str`` leaf keeps its text, less one leading and one
trailing newline (``<bio>\nline1\nline2\n</bio>`` is ``"line1\nline2"``).

:class:`ChildSplitter` finds the same elements as text streams in: the child elements
of a ``<result>`` (or bare ``<item>`` elements), each handed out once, as soon as its end
tag arrives.

Example:
    >>> element = find_element("Sure: <result><note>a < b & c</note></result>")
    >>> element_value(element, dict[str, str])
    {'note': 'a < b & c'}
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Final, Literal

from .classify import Kind, classify
from .coerce import (
    MAX_NESTED_DEPTH,
    NULL_TOKENS,
    _mapping_args,
    _root_annotation,
    _tuple_items,
    coerce_value,
    fields_of,
)

__all__ = [
    "ChildSplitter",
    "Element",
    "element_value",
    "find_element",
    "parse_elements",
    "scalar_text",
    "str_text",
]

_CDATA_OPEN: Final = "<![CDATA["
_CDATA_CLOSE: Final = "]]>"
# A start tag, an end tag or an empty element (attributes allowed and ignored), or the
# opening of a CDATA section.  ``[^<>]*`` stops at the next bracket, so a failed match
# costs no more than the run of text up to it.
_TOKEN: Final = re.compile(r"<(?:(/?)([A-Za-z_][\w.:-]*)((?:\s[^<>]*?)?)(/?)>|!\[CDATA\[)")
_SEQUENCE_KINDS: Final = frozenset({Kind.SEQUENCE, Kind.TUPLE})
_FIELD_KINDS: Final = frozenset({Kind.MODEL, Kind.TYPEDDICT, Kind.DATACLASS})
_STRUCTURED: Final = _SEQUENCE_KINDS | _FIELD_KINDS | {Kind.MAPPING}


@dataclasses.dataclass(frozen=True, slots=True)
class Element:
    """One matched element: its tag, where its content lies, and its child elements.

    Attributes:
        tag: the tag name, as written.
        source: the whole text the element was found in.
        start: where its content begins in ``source`` (after the start tag).
        end: where its content ends (at the end tag).
        children: the matched elements directly inside it, in order.
    """

    tag: str
    source: str
    start: int
    end: int
    children: tuple[Element, ...]

    @property
    def raw(self) -> str:
        """The content exactly as written, tags and CDATA markup included."""
        return self.source[self.start : self.end]


@dataclasses.dataclass(slots=True)
class _Open:
    tag: str
    token_start: int
    content_start: int
    children: list[Element]


def parse_elements(text: str) -> list[Element]:
    """Find the matched elements of ``text`` (the outermost ones; the rest are their children).

    Never raises; linear in ``len(text)``.

    Example:
        >>> [e.tag for e in parse_elements("x <a><b>1</b> <c> </a> <d>")]
        ['a']
        >>> [c.tag for c in parse_elements("<a><b>1</b> <c> </a>")[0].children]
        ['b']
    """
    roots: list[Element] = []
    stack: list[_Open] = []
    open_counts: dict[str, int] = {}
    pos = 0
    while True:
        match = _TOKEN.search(text, pos)
        if match is None:
            break
        pos = match.end()
        name = match.group(2)
        if name is None:  # a CDATA section: skip its content
            close = text.find(_CDATA_CLOSE, pos)
            if close < 0:  # unterminated: the rest is text
                break
            pos = close + len(_CDATA_CLOSE)
            continue
        siblings = stack[-1].children if stack else roots
        if match.group(1):  # an end tag
            if match.group(4) or match.group(3).strip() or not open_counts.get(name):
                continue  # not a usable end tag: text
            index = len(stack) - 1
            while stack[index].tag != name:
                index -= 1
            frame = stack[index]
            # Elements left open inside are not elements: their children move up.
            for skipped in stack[index + 1 :]:
                frame.children.extend(skipped.children)
                open_counts[skipped.tag] -= 1
            del stack[index:]
            open_counts[name] -= 1
            element = Element(name, text, frame.content_start, match.start(), tuple(frame.children))
            (stack[-1].children if stack else roots).append(element)
        elif match.group(4):  # an empty element
            siblings.append(Element(name, text, pos, pos, ()))
        else:
            stack.append(_Open(name, match.start(), pos, []))
            open_counts[name] = open_counts.get(name, 0) + 1
    for frame in stack:  # never closed: their children belong to the level above
        roots.extend(frame.children)
    return roots


def find_element(text: str, tag: str = "result") -> Element | None:
    """The first matched element named ``tag`` in ``text`` (outermost first), or None.

    Example:
        >>> find_element("<result>42</result>").raw
        '42'
        >>> find_element("no element here") is None
        True
    """
    pending = list(reversed(parse_elements(text)))
    while pending:  # depth first, in document order, without recursion
        element = pending.pop()
        if element.tag == tag:
            return element
        pending.extend(reversed(element.children))
    return None


def _only_sections(text: str) -> str | None:
    """The joined contents if ``text`` is CDATA sections back to back, else None."""
    pieces: list[str] = []
    pos = 0
    while pos < len(text):
        if not text.startswith(_CDATA_OPEN, pos):
            return None
        close = text.find(_CDATA_CLOSE, pos + len(_CDATA_OPEN))
        if close < 0:
            return None
        pieces.append(text[pos + len(_CDATA_OPEN) : close])
        pos = close + len(_CDATA_CLOSE)
    return "".join(pieces)


def _unwrap_cdata(raw: str) -> str:
    """``raw`` with each CDATA section replaced by its content (verbatim).

    A value that is only CDATA sections (whitespace around them aside) is their content.
    """
    if _CDATA_OPEN not in raw:
        return raw
    content = _only_sections(raw.strip())
    return _unwrap_cdata_inline(raw) if content is None else content


def _unwrap_cdata_inline(raw: str) -> str:
    pieces: list[str] = []
    pos = 0
    while True:
        start = raw.find(_CDATA_OPEN, pos)
        close = raw.find(_CDATA_CLOSE, start + len(_CDATA_OPEN)) if start >= 0 else -1
        if close < 0:
            pieces.append(raw[pos:])
            return "".join(pieces)
        pieces.append(raw[pos:start])
        pieces.append(raw[start + len(_CDATA_OPEN) : close])
        pos = close + len(_CDATA_CLOSE)


def _trim_newline(raw: str) -> str:
    """Remove one leading and one trailing line break (the ones around a block value)."""
    for lead in ("\r\n", "\n"):
        if raw.startswith(lead):
            raw = raw[len(lead) :]
            break
    for tail in ("\r\n", "\n"):
        if raw.endswith(tail):
            raw = raw[: -len(tail)]
            break
    return raw


def str_text(element: Element) -> str:
    """The value of a ``str`` leaf: as written, less one newline each side, CDATA unwrapped."""
    return _unwrap_cdata(_trim_newline(element.raw))


def scalar_text(element: Element) -> str:
    """The value of a scalar leaf: CDATA unwrapped, then stripped."""
    return _unwrap_cdata(element.raw).strip()


def element_value(element: Element, annotation: Any) -> Any:
    """An element's content as a plain value for ``annotation``, for Pydantic to validate.

    Models, TypedDicts, dataclasses and dicts become dicts of their child elements (by
    tag), sequences and tuples lists of them (any tag, ``<item>`` by convention), and
    leaves are converted like tool parameters
    (:func:`~stream_parser.schema.coerce.coerce_value`).  What does not fit is left as
    text, so that validation reports it.  Never raises on model text.
    """
    try:
        return _value(element, annotation, 0)
    except RecursionError:  # absurd annotations; the text lets validation speak
        return str_text(element)


def _value(element: Element, tp: Any, depth: int) -> Any:
    info = classify(tp)
    kind, tp = info.kind, info.tp
    if kind in (Kind.STR, Kind.JSON):
        return str_text(element)
    if depth >= MAX_NESTED_DEPTH:
        return scalar_text(element)
    if kind is Kind.ROOT:
        return _value(element, _root_annotation(tp), depth + 1)
    if kind is Kind.ANY:
        return _generic(element, depth) if element.children else scalar_text(element)
    if kind is Kind.UNION:
        return _union(element, tp, depth)
    if kind in _STRUCTURED:
        if element.children:
            return _structured(element, tp, kind, depth)
        text = scalar_text(element)
        if not text and kind in _SEQUENCE_KINDS:
            return []
        if not text and kind is Kind.MAPPING:
            return {}
        return coerce_value(text, tp) if text else {}
    if kind is Kind.NONE:
        text = scalar_text(element)
        return None if text.lower() in NULL_TOKENS else text
    return coerce_value(scalar_text(element), tp)


def _union(element: Element, tp: Any, depth: int) -> Any:
    members = [classify(member) for member in classify(tp).args]
    if element.children:
        tags = {child.tag for child in element.children}
        for member in members:
            if member.kind in _FIELD_KINDS and not tags <= set(fields_of(member.tp)):
                continue  # the next member gets its chance
            if member.kind in _STRUCTURED or member.kind in (Kind.ROOT, Kind.ANY):
                return _value(element, member.tp, depth + 1)
        return str_text(element)
    has_str = any(member.kind is Kind.STR for member in members)
    text = str_text(element) if has_str else scalar_text(element)
    allows_none = any(member.kind is Kind.NONE for member in members)
    if not has_str and allows_none and text.lower() in NULL_TOKENS:
        return None
    return coerce_value(text, tp)


def _structured(element: Element, tp: Any, kind: Kind, depth: int) -> Any:
    children = element.children
    if kind is Kind.SEQUENCE:
        args = getattr(tp, "__args__", ())
        item = args[0] if args else Any
        return [_value(child, item, depth + 1) for child in children]
    if kind is Kind.TUPLE:
        items = _tuple_items(tp, len(children))
        pairs = zip(children, items, strict=False)
        return [_value(child, item, depth + 1) for child, item in pairs]
    if kind is Kind.MAPPING:
        key_tp, value_tp = _mapping_args(tp)
        values: dict[Any, Any] = {}
        for child in children:
            key = coerce_value(child.tag, key_tp)
            try:
                hash(key)
            except TypeError:
                key = child.tag
            values[key] = _value(child, value_tp, depth + 1)
        return values
    fields = fields_of(tp)
    counts: dict[str, int] = {}
    for child in children:
        counts[child.tag] = counts.get(child.tag, 0) + 1
    result: dict[str, Any] = {}
    for child in children:
        field = fields.get(child.tag)
        if field is None:  # left for the type's own policy on extra keys
            result.setdefault(child.tag, _value(child, Any, depth + 1))
            continue
        field_kind = classify(field.annotation)
        if counts[child.tag] > 1 and field_kind.kind is Kind.SEQUENCE:
            # A list field written as the same tag repeated, one item each.
            args = getattr(field_kind.tp, "__args__", ())
            item = _value(child, args[0] if args else Any, depth + 1)
            result.setdefault(field.key, []).append(item)
        else:  # a repeated tag for a single value: the first one counts
            result.setdefault(field.key, _value(child, field.annotation, depth + 1))
    return result


def _generic(element: Element, depth: int) -> Any:
    """An element for ``Any``: a dict of its children (a repeated tag makes a list)."""
    values: dict[str, Any] = {}
    repeated: set[str] = set()
    for child in element.children:
        value = (
            _generic(child, depth + 1)
            if child.children and depth < MAX_NESTED_DEPTH
            else scalar_text(child)
        )
        if child.tag not in values:
            values[child.tag] = value
        elif child.tag in repeated:
            values[child.tag].append(value)
        else:
            values[child.tag] = [values[child.tag], value]
            repeated.add(child.tag)
    return values


# --- streaming --------------------------------------------------------------------------

_MAX_TAG: Final = 256
"""A ``<`` with no ``>`` within this many characters is text, not the start of a tag."""


class ChildSplitter:
    r"""Finds the child elements of a container as its text arrives in chunks.

    Start it *inside* the container (after ``<result>``), or before bare elements.  Each
    completed child comes out once, as an :class:`Element` whose ``source`` is only its
    own content, with its children parsed by :func:`parse_elements`.

    Rules, the streaming counterparts of :func:`parse_elements`'s: a child starts at a
    start tag (of ``child_tag`` only, when given; any tag otherwise) and ends at the end
    tag of its name that balances it (nested elements of the same name are counted);
    ``<tag/>`` is an empty child; CDATA sections hide tags; a ``<`` that does not begin
    a tag is text.  The end tag ``</end_tag>`` outside a child ends the container (one
    inside an unclosed child ends it too, and the child, never closed, is dropped:
    :attr:`dropped` says so).  Text between children is ignored.

    Cost: each character is examined a bounded number of times; only the current
    child's content and a partial tag (at most a few hundred characters) are held.

    Args:
        end_tag: the container's tag (``"result"``), or None for bare elements.
        child_tag: the only tag children may have (``"item"``), or None for any.

    Example:
        >>> splitter = ChildSplitter("result")
        >>> found = splitter.feed("<item>1</it") + splitter.feed("em> <item>2</item></result>")
        >>> [element.raw for element in found], splitter.done
        (['1', '2'], True)
    """

    __slots__ = (
        "_buf",
        "_cdata",
        "_child",
        "_child_tag",
        "_depth",
        "_end_tag",
        "_pieces",
        "done",
        "dropped",
    )

    def __init__(self, end_tag: str | None = "result", child_tag: str | None = None) -> None:
        self._end_tag = end_tag
        self._child_tag = child_tag
        self._buf = ""  # text not yet resolved (a partial tag), or the child's latest part
        self._pieces: list[str] = []  # the current child's content before ``_buf``
        self._child: str | None = None  # the tag of the child being read
        self._depth = 0  # open elements of the child's name, the child included
        self._cdata = False
        self.done = False
        self.dropped = False  # the container closed over a child never closed

    @property
    def in_child(self) -> bool:
        """Whether a child element is open (its end tag has not arrived)."""
        return self._child is not None

    @property
    def held(self) -> str:
        """Between children, the text held back: a ``<`` that may begin a tag, or ``""``."""
        return "" if self._child is not None else self._buf

    @property
    def retained(self) -> int:
        """How many characters are held (the open child's content and a partial tag)."""
        return len(self._buf) + sum(map(len, self._pieces))

    def feed(self, chunk: str) -> list[Element]:
        """Read the next chunk; return the children it completed, in order."""
        found: list[Element] = []
        if self.done or not chunk:
            return found
        buf = self._buf + chunk
        scan = 0
        while not self.done:
            if self._cdata:
                close = buf.find(_CDATA_CLOSE, scan)
                if close < 0:  # keep two characters: "]]" may be completed by the next chunk
                    scan = max(scan, len(buf) - len(_CDATA_CLOSE) + 1)
                    break
                scan = close + len(_CDATA_CLOSE)
                self._cdata = False
                continue
            at = buf.find("<", scan)
            if at < 0:
                scan = len(buf)
                break
            if buf.startswith(_CDATA_OPEN, at):
                self._cdata = True
                scan = at + len(_CDATA_OPEN)
                continue
            rest = len(buf) - at
            if rest < len(_CDATA_OPEN) and _CDATA_OPEN.startswith(buf[at:]):
                scan = at  # maybe the start of a CDATA section: wait
                break
            match = _TOKEN.match(buf, at)
            if match is None:
                window = buf[at + 1 : at + 1 + _MAX_TAG]
                if "<" not in window and ">" not in window and rest <= _MAX_TAG:
                    scan = at  # maybe a tag not yet complete: wait for more
                    break
                scan = at + 1  # a "<" that begins no tag: text
                continue
            scan = match.end()
            outcome = self._token(match, buf, at)
            if outcome is not None:  # a child began or ended: its content is cut from here
                if outcome is not True:
                    found.append(outcome)
                buf, scan = buf[scan:], 0
        if self.done:
            self._buf, self._pieces = "", []
        elif self._child is None:
            self._buf = buf[scan:]  # between children only a partial tag is kept
        else:
            # Resolved content moves to the pieces: it is never scanned again.
            if scan:
                self._pieces.append(buf[:scan])
            self._buf = buf[scan:]
        return found

    def _token(self, match: re.Match[str], buf: str, at: int) -> Element | Literal[True] | None:
        """Act on one tag: the child it completed, True if it began one, else None."""
        closing, name, attrs, empty = match.group(1), match.group(2), match.group(3), match.group(4)
        if self._child is None:
            if closing:
                if name == self._end_tag and not empty and not attrs.strip():
                    self.done = True
                return None
            if self._child_tag is not None and name != self._child_tag:
                return None
            if empty:
                return Element(name, "", 0, 0, ())
            self._child, self._depth = name, 1
            self._pieces = []
            return True
        if empty or (closing and attrs.strip()):
            return None
        if name == self._child:
            self._depth += -1 if closing else 1
            if self._depth == 0:
                content = "".join(self._pieces) + buf[:at]
                tag, self._child, self._pieces = self._child, None, []
                return Element(tag, content, 0, len(content), tuple(parse_elements(content)))
        elif closing and name == self._end_tag:
            self.done = self.dropped = True  # the container closed over an unclosed child
            self._child, self._pieces = None, []
        return None
