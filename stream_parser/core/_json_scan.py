r"""An incremental structural scanner of one JSON value, fed in chunks of any size.

Theory of operation
-------------------

:class:`JsonScanner` follows the *structure* of one JSON value as its text arrives; it
never decodes the whole document.  It keeps a little state -- inside a string or not,
after a backslash or not, the bracket depth, what the top level expects next -- and
jumps through the text with compiled regexes: inside a string to the next ``"`` or
``\``, inside a nested value to the next ``"``, ``{``, ``}``, ``[`` or ``]``, over a
literal (``true``, ``-12.5e3``) to the next structural character or whitespace.  Every
character is looked at a bounded number of times, so the total cost is linear in the
text, and the marks reported do not depend on how the text was cut into chunks.

It reports, as :class:`JsonMark`\ s with absolute offsets into all the text fed so far:

* ``start``: the top-level value begins (leading whitespace is skipped);
* ``key``: a top-level member's key closed (decoded leniently: raw control characters,
  as models write them, are accepted);
* ``value_start``: a top-level member's value, or a top-level element, begins;
* ``member`` / ``element``: that value ended; its raw text is ``text`` (when kept), ready
  for one ``json.loads``;
* ``end``: the top-level value ended; what follows it is not scanned;
* ``error``: the structure broke (see below).

Only the top level is checked.  Nested values are delimited by counting brackets outside
strings; their content (and the spelling of literals) is checked by whoever decodes the
slice.  At the top level, a character out of place (a ``:`` or ``,`` where none belongs,
a key that is not a string, a missing value, a trailing comma, a closing bracket of the
wrong kind) gives one ``error`` mark, at the first place the structure breaks; the
scanner then goes on *leniently*: it ignores stray characters, skips stray strings and
containers, so that :attr:`JsonScanner.in_string` and :attr:`JsonScanner.depth` stay
meaningful to a caller that still needs them (a reader deciding whether an end tag is
inside a string).  Marks after an error are best effort; a caller wanting the value
should fall back to reading the whole text.  A first character that cannot start JSON
is an ``error`` mark, and then the scanner stops.  Nothing raises: model output is data.

:meth:`JsonScanner.close` says the text has ended: it ends a literal at the top level
(``12`` is only known to be whole then) and reports a value cut short as an ``error``.

Memory: with ``keep_text=True`` only the text of the current top-level member or element
is held (in pieces, joined once when it ends); with ``keep_text=False`` only state (and
the text of the key being read, to decode it).

Example:
    >>> scanner = JsonScanner()
    >>> marks = scanner.feed('{"a": [1, 2], "b"') + scanner.feed(': "x\\"y"}')
    >>> [(m.kind, m.key, m.text) for m in marks if m.kind in ("member", "end")]
    [('member', 'a', '[1, 2]'), ('member', 'b', '"x\\"y"'), ('end', None, None)]
    >>> scanner.done
    True
    >>> [m.text for m in JsonScanner().feed('[true, {"k": 1}]') if m.kind == "element"]
    ['true', '{"k": 1}']
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["JsonMark", "JsonScanner", "MarkKind"]

MarkKind = Literal["start", "key", "value_start", "member", "element", "end", "error"]

_STRING_STOP: Final = re.compile(r'["\\]')
# A string's characters up to its closing quote: plain runs and escape pairs (the
# unrolled form, which never backtracks).  It stops at the quote, at the end, or at a
# backslash that ends the chunk.  ``skip`` reads a chunk with a quote in one match.
_STRING_RUN: Final = re.compile(r'[^"\\]*(?:\\.[^"\\]*)*', re.DOTALL)
_NESTED_STOP: Final = re.compile(r'["{}\[\]]')
# Any whitespace ends a literal (not only JSON's four): a stray no-break space after a
# number is then out of place rather than part of the number.
_LITERAL_END: Final = re.compile(r'[\s,:{}\[\]"]')
_NON_WS: Final = re.compile(r"[^ \t\r\n]")
_LITERAL_FIRST: Final = frozenset("-0123456789tfn")
_DECODER: Final = json.JSONDecoder(strict=False)  # lenient: models write raw control chars

# What the top level expects next.  In an object: the first key or "}", a key, ":",
# a value, "," or "}".  In an array: the first element or "]", an element, "," or "]".
_FIRST_KEY, _KEY, _COLON, _VALUE, _COMMA, _FIRST_ELEMENT, _ELEMENT = range(7)
# What the string being read is: skipped, a top-level key, a tracked value.
_SKIPPED, _KEY_STRING, _VALUE_STRING = range(3)
# The scanner as a whole.
_BEFORE, _SCANNING, _DONE, _STOPPED = range(4)


@dataclass(frozen=True, slots=True)
class JsonMark:
    """A point the scanner reached in the JSON text.

    Attributes:
        kind: what happened (see the module's docstring).
        start: absolute offset where the slice the mark is about begins (for ``start``,
            ``value_start`` and ``error`` marks, the offset of the character itself).
        end: absolute offset just after that slice (equal to ``start`` for point marks).
        key: the decoded key, for ``key``, ``value_start`` (of a member) and ``member``.
        text: the slice's raw JSON text (``whole_text[start:end]``): for ``key`` marks
            always; for ``member`` and ``element`` marks, and an ``end`` mark of a scalar
            top-level value, when the scanner keeps text.
        index: the member's or element's index, for ``key``, ``value_start``,
            ``member`` and ``element`` marks (``-1`` for other marks).
        reason: why, for an ``error`` mark.
    """

    kind: MarkKind
    start: int
    end: int
    key: str | None = None
    text: str | None = None
    index: int = -1
    reason: str = ""


class JsonScanner:
    """Follows one JSON value fed in chunks; reports where its top-level parts end.

    Args:
        keep_text: hand out the raw text of each member, element or scalar value.
    """

    __slots__ = (
        "_container",
        "_depth",
        "_error",
        "_escaped",
        "_expect",
        "_in_string",
        "_index",
        "_keep_text",
        "_key",
        "_literal",
        "_pieces",
        "_position",
        "_slice_from",
        "_slice_keep",
        "_start",
        "_state",
        "_string_role",
        "_tracked",
    )

    def __init__(self, *, keep_text: bool = True) -> None:
        self._keep_text = keep_text
        self._state = _BEFORE
        self._position = 0  # characters fed so far
        self._start = 0  # offset of the top-level value
        self._container = ""  # "{" or "[" for a top-level container
        self._depth = 0
        self._in_string = False
        self._escaped = False  # the last chunk ended with a backslash inside a string
        self._string_role = _SKIPPED
        self._literal = False  # inside a literal tracked at the top level
        self._tracked = False  # the current top-level member/element is being tracked
        self._expect = _FIRST_KEY
        self._index = 0  # index of the current member/element
        self._key: str | None = None  # the current member's key
        self._error = ""
        # The slice being held (a key, or the current value): its absolute start and
        # the pieces of it from earlier chunks.
        self._slice_from = -1
        self._slice_keep = False
        self._pieces: list[str] = []

    # --- state -------------------------------------------------------------------------

    @property
    def in_string(self) -> bool:
        """Whether the text fed so far ends inside a JSON string."""
        return self._in_string

    @property
    def escape_pending(self) -> bool:
        """Whether the text fed (or skipped) so far ends with a string's open escape.

        A backslash inside a string whose pair is the next character fed.

        Example:
            >>> scanner, backslash = JsonScanner(keep_text=False), chr(92)
            >>> _ = scanner.feed('"a')
            >>> scanner.skip("b"), scanner.escape_pending
            (True, False)
            >>> scanner.skip("c" + backslash), scanner.escape_pending
            (True, True)
            >>> scanner.skip('"'), scanner.escape_pending  # the quote is escaped: taken
            (True, False)
        """
        return self._in_string and self._escaped

    @property
    def depth(self) -> int:
        """How many containers are open (0 outside the value or in a scalar)."""
        return self._depth

    @property
    def done(self) -> bool:
        """Whether the top-level value has ended."""
        return self._state == _DONE

    @property
    def position(self) -> int:
        """The number of characters fed so far."""
        return self._position

    @property
    def error(self) -> str:
        """Why the structure broke (the first ``error`` mark's reason), or ``""``."""
        return self._error

    @property
    def holds_slice(self) -> bool:
        """Whether a slice is held (a key being read, or a kept value).

        :meth:`skip` then keeps the text it takes, which :meth:`follow` could not.
        """
        return self._slice_from >= 0 and self._slice_keep

    @property
    def retained(self) -> int:
        """The number of characters held from earlier chunks (the current slice)."""
        return sum(map(len, self._pieces))

    # --- feeding -----------------------------------------------------------------------

    @property
    def skips(self) -> bool:
        """Whether :meth:`skip` may take a chunk: inside a string or a nested container."""
        return self._state == _SCANNING and (self._in_string or self._depth > 1)

    def skip(self, chunk: str) -> bool:
        """Take ``chunk`` in one step if it cannot complete a mark; else do nothing.

        Inside a string, a chunk without a closing quote (escaped quotes are plain
        characters); inside a nested container, a chunk without quotes and brackets.
        Such a chunk changes nothing but the position, the pending escape of a string
        and a held slice, which this follows exactly as :meth:`feed` would; anything
        else is left to :meth:`feed`.

        Returns:
            True when the chunk was taken; False when it was not (nothing changed).

        Example:
            >>> scanner = JsonScanner()
            >>> marks = scanner.feed('{"a": "x')
            >>> scanner.skips, scanner.skip("yz"), scanner.skip('"}')
            (True, True, False)
            >>> scanner.feed('"}')[0].text
            '"xyz"'
        """
        if self._state != _SCANNING:
            return False
        n = len(chunk)
        if self._in_string:
            if '"' in chunk:
                # One match over plain characters and escape pairs: it stops at a closing
                # quote (not taken), or at a backslash that ends the chunk (its pair is
                # the next chunk's first character), or at the end.
                start = 1 if self._escaped else 0
                k = _STRING_RUN.match(chunk, start).end()  # type: ignore[union-attr]
                if k < n and chunk[k] == '"':
                    return False
                self._escaped = k < n
            elif n and chunk[-1] == "\\":
                # No quote: only the run of backslashes at the end matters.  The
                # character before it is no backslash, so the run pairs up on its own,
                # unless it is the whole chunk and a pending escape takes its first.
                run = n - len(chunk.rstrip("\\"))
                if run == n and self._escaped:
                    run += 1
                self._escaped = run % 2 == 1
            else:
                self._escaped = False
        elif self._depth <= 1 or _NESTED_STOP.search(chunk) is not None:
            return False
        self._position += n
        if self._slice_from >= 0 and self._slice_keep:
            self._pieces.append(chunk)
        return True

    def follow(self, leader: JsonScanner) -> bool:
        """Take what ``leader`` took with :meth:`skip` since the two were together.

        For two scanners fed the same text from the same start, one of which (the
        leader) went on alone, with :meth:`skip` only: a skip changes nothing but the
        position and the pending escape of a string, so this one takes the same
        characters without seeing them.  Not while this one :attr:`holds_slice`
        (the text would be needed), nor when the two are not in the same place of the
        same structure.

        Returns:
            True when this scanner is now where the leader is; False when it was not
            moved (nothing changed).

        Example:
            >>> a, b = JsonScanner(keep_text=False), JsonScanner(keep_text=False)
            >>> _ = a.feed('{"k": "x'), b.feed('{"k": "x')
            >>> a.skip("yz"), b.follow(a), b.position, b.feed('"}')[-1].kind
            (True, True, 10, 'end')
        """
        if leader is self or leader._position == self._position:
            return True
        if (
            leader._position < self._position
            or self._state != _SCANNING
            or leader._state != _SCANNING
            or self._in_string != leader._in_string
            or self._depth != leader._depth
            or (self._slice_from >= 0 and self._slice_keep)
        ):
            return False
        self._position = leader._position
        self._escaped = leader._escaped
        return True

    def feed(self, chunk: str) -> list[JsonMark]:
        """Scan the next chunk; return the marks it completed, in order."""
        marks: list[JsonMark] = []
        base = self._position
        n = len(chunk)
        self._position = base + n
        if self._state >= _DONE:
            return marks
        i = 0
        while i < n:
            if self._in_string:
                # The hot path (most of a tool call's text is inside strings), inline:
                # jump from one quote or backslash to the next.
                if self._escaped:
                    self._escaped = False
                    i += 1
                m = _STRING_STOP.search(chunk, i)
                if m is None:
                    break
                k = m.start()
                if chunk[k] == "\\":
                    if k + 1 == n:
                        self._escaped = True
                        break
                    i = k + 2
                    continue
                self._in_string = False
                i = k + 1
                if self._string_role != _SKIPPED:
                    self._string_end(chunk, i, base, marks)
                    if self._state == _DONE:  # a string at the top level ended
                        break
                continue
            if self._depth > 1:
                # Inside a nested value only strings and brackets matter.
                m = _NESTED_STOP.search(chunk, i)
                if m is None:
                    break
                k = m.start()
                c = chunk[k]
                i = k + 1
                if c == '"':
                    self._in_string = True
                    self._string_role = _SKIPPED
                elif c == "{" or c == "[":
                    self._depth += 1
                else:
                    self._depth -= 1
                    if self._depth == 1 and self._tracked:
                        self._value_end(chunk, i, base, marks)
                continue
            if self._literal:
                m = _LITERAL_END.search(chunk, i)
                if m is None:
                    break
                i = m.start()
                self._literal = False
                self._value_end(chunk, i, base, marks)
                if self._state == _DONE:
                    break
                continue
            m = _NON_WS.search(chunk, i)
            if m is None:
                break
            k = m.start()
            if self._state == _BEFORE:
                i = self._begin(chunk, k, base, marks)
            else:
                i = self._top(chunk, k, base, marks)
            if self._state >= _DONE:
                break
        if self._slice_from >= 0 and self._slice_keep:
            # Hold the rest of the current slice until it ends.
            begin = self._slice_from - base
            self._pieces.append(chunk[begin if begin > 0 else 0 :])
        return marks

    def close(self) -> list[JsonMark]:
        """The text has ended: end a top-level literal, or report a value cut short."""
        marks: list[JsonMark] = []
        if self._state == _SCANNING and self._literal and self._depth == 0:
            self._literal = False
            self._value_end("", 0, self._position, marks)
        elif self._state == _BEFORE:
            self._fail(self._position, "no JSON value", marks)
            self._state = _STOPPED
        elif self._state == _SCANNING:
            self._fail(self._position, "the JSON value is cut short", marks)
            self._state = _STOPPED
        return marks

    # --- the pieces of the loop ---------------------------------------------------------

    def _string_end(self, chunk: str, k: int, base: int, marks: list[JsonMark]) -> None:
        """A key or a tracked value string closed just before ``chunk[k]``."""
        if self._string_role == _KEY_STRING:
            text = self._take(chunk, k, base)
            key = _decode_key(text)
            self._key = key
            self._expect = _COLON
            end = base + k
            marks.append(JsonMark("key", end - len(text), end, key, text, self._index))
        else:
            self._value_end(chunk, k, base, marks)

    def _begin(self, chunk: str, k: int, base: int, marks: list[JsonMark]) -> int:
        """The first character of the value, at ``chunk[k]``."""
        c = chunk[k]
        offset = base + k
        self._start = offset
        if c == "{" or c == "[":
            self._state = _SCANNING
            marks.append(JsonMark("start", offset, offset))
            self._container = c
            self._depth = 1
            self._expect = _FIRST_KEY if c == "{" else _FIRST_ELEMENT
            return k + 1
        if c == '"' or c in _LITERAL_FIRST:
            # A scalar at the top level: tracked as a value of its own.
            self._state = _SCANNING
            marks.append(JsonMark("start", offset, offset))
            self._track(offset)
            if c == '"':
                self._in_string = True
                self._string_role = _VALUE_STRING
            else:
                self._literal = True
            return k + 1
        self._fail(offset, f"{c!r} cannot start a JSON value", marks)
        self._state = _STOPPED
        return len(chunk)

    def _top(self, chunk: str, k: int, base: int, marks: list[JsonMark]) -> int:
        """A character at depth 1 of the top-level container, at ``chunk[k]``."""
        c = chunk[k]
        offset = base + k
        expect = self._expect
        wants_value = expect in (_VALUE, _ELEMENT, _FIRST_ELEMENT)
        if c == '"':
            self._in_string = True
            if expect in (_FIRST_KEY, _KEY):
                self._string_role = _KEY_STRING
                self._slice_from = offset
                self._slice_keep = True
            elif wants_value:
                self._string_role = _VALUE_STRING
                self._value_start(offset, marks)
            else:
                self._string_role = _SKIPPED
                self._fail(offset, "a string out of place", marks)
        elif c == "{" or c == "[":
            self._depth = 2
            if wants_value:
                self._value_start(offset, marks)
            else:
                self._tracked = False
                self._fail(offset, f"{c!r} out of place", marks)
        elif c == "}" or c == "]":
            closes = "}" if self._container == "{" else "]"
            if c != closes:
                self._fail(offset, f"{c!r} closes a {self._container!r}", marks)
            elif expect not in (_COMMA, _FIRST_KEY, _FIRST_ELEMENT):
                self._fail(offset, f"{c!r} where a key or value is expected", marks)
            self._depth = 0
            self._state = _DONE
            marks.append(JsonMark("end", self._start, offset + 1))
        elif c == ":":
            if expect == _COLON:
                self._expect = _VALUE
            else:
                self._fail(offset, "':' out of place", marks)
        elif c == ",":
            if expect == _COMMA:
                self._expect = _KEY if self._container == "{" else _ELEMENT
                self._index += 1
            else:
                self._fail(offset, "',' out of place", marks)
        elif wants_value:
            self._literal = True
            self._value_start(offset, marks)
        else:
            self._fail(offset, f"{c!r} out of place", marks)
        return k + 1

    def _track(self, offset: int) -> None:
        """Start holding the slice of the value that begins at ``offset``."""
        self._tracked = True
        self._slice_from = offset
        self._slice_keep = self._keep_text

    def _value_start(self, offset: int, marks: list[JsonMark]) -> None:
        """A top-level member's value or an element begins at ``offset``."""
        self._track(offset)
        key = self._key if self._container == "{" else None
        marks.append(JsonMark("value_start", offset, offset, key, None, self._index))

    def _value_end(self, chunk: str, k: int, base: int, marks: list[JsonMark]) -> None:
        """The tracked value ended just before ``chunk[k]``."""
        start = self._slice_from
        text = None
        if self._slice_keep:
            text = self._take(chunk, k, base)
        else:
            self._slice_from = -1
        end = base + k
        self._tracked = False
        if self._depth == 0:  # a scalar at the top level
            self._state = _DONE
            marks.append(JsonMark("end", start, end, None, text))
            return
        self._expect = _COMMA
        if self._container == "{":
            marks.append(JsonMark("member", start, end, self._key, text, self._index))
        else:
            marks.append(JsonMark("element", start, end, None, text, self._index))

    def _take(self, chunk: str, k: int, base: int) -> str:
        """The held slice up to ``chunk[k]`` (exclusive), joined once; stop holding it."""
        begin = self._slice_from - base
        last = chunk[begin if begin > 0 else 0 : k]
        self._slice_from = -1
        if not self._pieces:
            return last
        self._pieces.append(last)
        text = "".join(self._pieces)
        self._pieces = []
        return text

    def _fail(self, offset: int, reason: str, marks: list[JsonMark]) -> None:
        """Report the first place the structure breaks (later ones are not reported)."""
        if not self._error:
            self._error = reason
            marks.append(JsonMark("error", offset, offset, reason=reason))


def _decode_key(text: str) -> str:
    """A key's value from its quoted text; its raw inner text if it does not decode."""
    try:
        value = _DECODER.decode(text)
    except ValueError:
        return text[1:-1]
    return value if isinstance(value, str) else text[1:-1]
