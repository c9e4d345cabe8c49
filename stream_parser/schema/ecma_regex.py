r"""JSON Schema's ``pattern``: ECMA-262 regular expressions, run by Python's ``re``.

JSON Schema says a ``pattern`` is an ECMA-262 (JavaScript) regular expression, matched
anywhere in the string (a search, not a full match).  Python's ``re`` reads most of the
same syntax with other meanings: ``\d`` and ``\w`` match any Unicode digit or letter
(ECMA-262: ASCII only), ``$`` also matches before a final newline, ``.`` matches a
carriage return, ``\s`` misses some of ECMA-262's white space, ``[]`` is not the empty
class.  Pydantic's own engine (Rust ``regex``) refuses look-around at build time.

Theory of operation.  :func:`compile_pattern` reads the pattern with ECMA-262's grammar
and writes an equivalent Python pattern, character by character: every literal is
written as an escape, every construct whose meaning differs is rewritten (``\d`` under
``re.ASCII``, ``$`` as ``\Z``, ``\B`` as ``(?!\b)``, ``.`` as "anything but a line
terminator", ``\s`` as ECMA-262's list of white space, ``[]`` as "nothing", ``[^]`` as
"anything").  A pattern is read as with ECMA-262's ``u`` flag (on code points,
``\u{1F600}``, a surrogate pair ``\uD83D\uDE00`` as one character); a construct the
``u`` flag refuses but the web-compatibility grammar (ECMA-262 Annex B) reads as a
literal -- ``]``, a ``{`` that starts no quantifier, ``\-`` or ``\@`` outside a class --
is that literal.

What Python cannot run with ECMA-262's meaning is refused with :class:`PatternError`,
never guessed: back-references (ECMA-262 matches an unset group as empty and resets a
group on each repetition; Python does neither), Unicode property escapes (``\p{L}``),
group modifiers (``(?i:...)``), look-behind of varying width, and escapes of letters
that ECMA-262 does not define.  A syntax error is refused the same way.

Example:
    >>> compile_pattern(r"^\d+$").search("١٢٣") is None  # Arabic-Indic digits
    True
    >>> compile_pattern(r"^(?=.*\d)\w+$").search("abc1") is not None
    True
"""

from __future__ import annotations

import functools
import re
from typing import Final

__all__ = ["PatternError", "compile_pattern", "translate_pattern"]


class PatternError(ValueError):
    """A pattern that cannot be run with ECMA-262's meaning (the message says why)."""


# ECMA-262's SyntaxCharacter, and "/": the characters the u flag lets one escape.
_SYNTAX: Final = frozenset("^$\\.*+?()[]{}|/")
# ECMA-262's WhiteSpace and LineTerminator (what \s matches), as the inside of a class.
_WHITE_SPACE: Final = (
    r"\t\n\x0b\x0c\r\x20\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
# What "." matches: anything but a line terminator.
_DOT: Final = r"[^\n\r\u2028\u2029]"
_QUANTIFIER: Final = re.compile(r"\{([0-9]+)(,([0-9]*))?\}")
_HEX4: Final = re.compile(r"[0-9A-Fa-f]{4}")
_HEX2: Final = re.compile(r"[0-9A-Fa-f]{2}")
_BRACED_HEX: Final = re.compile(r"\{([0-9A-Fa-f]+)\}")
_GROUP_NAME: Final = re.compile(r"(?:[$_]|[^\W\d])[$\w]*")
_SIMPLE_ESCAPES: Final = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}
_MAX_CODE_POINT: Final = 0x10FFFF


def _literal(code: int) -> str:
    """A code point as a Python pattern atom that means exactly that character."""
    char = chr(code)
    if char.isascii() and char.isalnum():
        return char
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


# A class item: a code point range (lo, hi), or one of the class escapes d D w W s S.
_Item = tuple[int, int] | str


class _Reader:
    """Recursive descent over one pattern, writing the Python pattern as it goes."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.pos = 0
        self.group_names: set[str] = set()

    # -- helpers -------------------------------------------------------------------------

    def peek(self, offset: int = 0) -> str:
        index = self.pos + offset
        return self.source[index] if index < len(self.source) else ""

    def fail(self, reason: str) -> PatternError:
        return PatternError(f"{reason} (at offset {self.pos})")

    def starts_quantifier(self) -> bool:
        char = self.peek()
        if char in ("*", "+", "?"):
            return True
        return char == "{" and _QUANTIFIER.match(self.source, self.pos) is not None

    # -- the grammar ---------------------------------------------------------------------

    def pattern(self) -> str:
        out = self.disjunction()
        if self.pos < len(self.source):  # only an unmatched ")" stops a disjunction early
            raise self.fail("unmatched ')'")
        return out

    def disjunction(self) -> str:
        parts = [self.alternative()]
        while self.peek() == "|":
            self.pos += 1
            parts.append(self.alternative())
        return "|".join(parts)

    def alternative(self) -> str:
        out: list[str] = []
        while self.pos < len(self.source) and self.peek() not in ("|", ")"):
            out.append(self.term())
        return "".join(out)

    def term(self) -> str:
        char = self.peek()
        quantifiable = True
        if char == "^":
            self.pos += 1
            atom, quantifiable = "^", False  # no MULTILINE: the start only, as in ECMA-262
        elif char == "$":
            self.pos += 1
            atom, quantifiable = r"\Z", False  # Python's "$" also matches before a final \n
        elif char == "\\" and self.peek(1) in ("b", "B"):
            # Word boundaries by ASCII \w under re.ASCII.  Python's \B never matches an
            # empty text; "not at a boundary" does, as ECMA-262's \B.
            atom, quantifiable = (r"\b" if self.peek(1) == "b" else r"(?!\b)"), False
            self.pos += 2
        elif char == "(":
            atom, quantifiable = self.group()
        elif char == ".":
            self.pos += 1
            atom = _DOT
        elif char == "[":
            atom = self.character_class()
        elif char == "\\":
            atom = self.atom_escape()
        elif self.starts_quantifier():
            raise self.fail("nothing to repeat")
        else:  # a literal; "]", "}" and a "{" that starts no quantifier included (Annex B)
            self.pos += 1
            atom = _literal(ord(char))
        quantifier = self.quantifier()
        if quantifier and not quantifiable:
            raise self.fail("an assertion cannot be repeated")
        return atom + quantifier

    def quantifier(self) -> str:
        char = self.peek()
        if char in ("*", "+", "?"):
            self.pos += 1
            out = char
        elif char == "{":
            match = _QUANTIFIER.match(self.source, self.pos)
            if match is None:
                return ""  # a literal "{" (Annex B), read by the next term
            low = int(match.group(1))
            high = match.group(3)
            if high and int(high) < low:
                raise self.fail("numbers out of order in a {} quantifier")
            self.pos = match.end()
            out = match.group(0)
        else:
            return ""
        if self.peek() == "?":  # lazy
            self.pos += 1
            out += "?"
        # "a*+" is an error in ECMA-262 but possessive in Python 3.11+: refuse it here.
        if self.starts_quantifier():
            raise self.fail("nothing to repeat")
        return out

    def group(self) -> tuple[str, bool]:
        """A group from its "(": the Python text, and whether it may be quantified."""
        self.pos += 1
        head, quantifiable = "(?:", True
        if self.peek() == "?":
            rest = self.source[self.pos + 1 : self.pos + 3]
            if rest.startswith(":"):
                self.pos += 2
            elif rest.startswith(("=", "!")):
                head, quantifiable = "(?" + rest[0], False
                self.pos += 2
            elif rest in ("<=", "<!"):
                # Python requires a fixed width; re.compile says so if it is not.
                head, quantifiable = "(?" + rest, False
                self.pos += 3
            elif rest.startswith("<"):
                match = _GROUP_NAME.match(self.source, self.pos + 2)
                if match is None or self.source[match.end() : match.end() + 1] != ">":
                    raise self.fail("invalid group name")
                if match.group(0) in self.group_names:
                    raise self.fail("duplicate group name")
                self.group_names.add(match.group(0))
                # Captures are never referred to (back-references are refused), so a
                # named group is an ordinary group; its name need not suit Python.
                self.pos = match.end() + 1
            else:
                raise self.fail("group modifiers such as (?i:...) are not supported")
        body = self.disjunction()
        if self.peek() != ")":
            raise self.fail("missing ')'")
        self.pos += 1
        return f"{head}{body})", quantifiable

    # -- escapes -------------------------------------------------------------------------

    def atom_escape(self) -> str:
        r"""``\`` outside a class, up to the end of the escape."""
        item = self.escape(in_class=False)
        if isinstance(item, str):
            return _class_escape_atom(item)
        return _literal(item[0])

    def escape(self, *, in_class: bool) -> _Item:
        r"""Read ``\x``: a character (as a one-point range) or a class escape letter."""
        self.pos += 1  # the backslash
        char = self.peek()
        if not char:
            raise self.fail("a pattern cannot end with '\\'")
        self.pos += 1
        if char in "dDwWsS":
            return char
        if char in _SIMPLE_ESCAPES:
            code = _SIMPLE_ESCAPES[char]
        elif char == "b" and in_class:
            code = 0x08  # backspace, inside a class only
        elif char == "0":
            if self.peek().isdigit():
                raise self.fail("legacy octal escapes are not supported")
            code = 0
        elif char in "123456789" or char == "k":
            raise self.fail("back-references are not supported")
        elif char in ("p", "P"):
            raise self.fail("Unicode property escapes (\\p{...}) are not supported")
        elif char == "c":
            letter = self.peek()
            if not (letter.isascii() and letter.isalpha()):
                raise self.fail("'\\c' must be followed by a letter")
            self.pos += 1
            code = ord(letter) % 32
        elif char == "x":
            match = _HEX2.match(self.source, self.pos)
            if match is None:
                raise self.fail("'\\x' must be followed by two hexadecimal digits")
            self.pos = match.end()
            code = int(match.group(0), 16)
        elif char == "u":
            code = self.unicode_escape()
        elif char == "-" or char in _SYNTAX or not (char.isascii() and char.isalnum()):
            code = ord(char)  # an identity escape: the character itself
        else:
            raise self.fail(f"unknown escape '\\{char}'")
        return (code, code)

    def unicode_escape(self) -> int:
        r"""After ``\u``: four hex digits (a surrogate pair joined) or ``{hex}``."""
        braced = _BRACED_HEX.match(self.source, self.pos)
        if braced is not None:
            code = int(braced.group(1), 16)
            if code > _MAX_CODE_POINT:
                raise self.fail("code point out of range")
            self.pos = braced.end()
            return code
        match = _HEX4.match(self.source, self.pos)
        if match is None:
            raise self.fail("'\\u' must be followed by four hexadecimal digits or {...}")
        self.pos = match.end()
        code = int(match.group(0), 16)
        if 0xD800 <= code <= 0xDBFF and self.source.startswith("\\u", self.pos):
            low = _HEX4.match(self.source, self.pos + 2)
            if low is not None and 0xDC00 <= int(low.group(0), 16) <= 0xDFFF:
                self.pos = low.end()
                return 0x10000 + ((code - 0xD800) << 10) + (int(low.group(0), 16) - 0xDC00)
        return code

    # -- classes -------------------------------------------------------------------------

    def character_class(self) -> str:
        self.pos += 1  # "["
        negated = self.peek() == "^"
        if negated:
            self.pos += 1
        items: list[_Item] = []
        while True:
            char = self.peek()
            if not char:
                raise self.fail("missing ']'")
            if char == "]":
                self.pos += 1
                break
            low = self.class_atom()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                self.pos += 1
                high = self.class_atom()
                if isinstance(low, str) or isinstance(high, str):
                    # "[\d-z]": a class escape cannot bound a range; Annex B reads the
                    # "-" as itself.
                    items.extend((low, (0x2D, 0x2D), high))
                    continue
                if high[0] < low[0]:
                    raise self.fail("range out of order in character class")
                items.append((low[0], high[0]))
            else:
                items.append(low)
        return _class_text(items, negated)

    def class_atom(self) -> _Item:
        char = self.peek()
        if char == "\\":
            return self.escape(in_class=True)
        self.pos += 1
        return (ord(char), ord(char))


def _class_escape_atom(letter: str) -> str:
    r"""``\d`` and the like outside a class."""
    if letter == "s":
        return f"[{_WHITE_SPACE}]"
    if letter == "S":
        return f"[^{_WHITE_SPACE}]"
    return "\\" + letter  # d D w W: ASCII under re.ASCII, as in ECMA-262


def _class_text(items: list[_Item], negated: bool) -> str:
    r"""A class as Python text; ``\S`` inside a class needs a look-ahead."""
    body: list[str] = []
    not_space = False
    for item in items:
        if item == "S":
            not_space = True
        elif item == "s":
            body.append(_WHITE_SPACE)
        elif isinstance(item, str):
            body.append("\\" + item)
        else:
            low, high = item
            body.append(_literal(low) if low == high else f"{_literal(low)}-{_literal(high)}")
    inside = "".join(body)
    if not not_space:
        if not inside:  # "[]" matches nothing, "[^]" any character
            return "(?s:.)" if negated else "(?!)"
        return f"[{'^' if negated else ''}{inside}]"
    # The class holds \S: "[a\S]" is "not white space, or a"; "[^a\S]" is "white
    # space, but not a".
    if negated:
        return f"(?:(?![{inside}])[{_WHITE_SPACE}])" if inside else f"[{_WHITE_SPACE}]"
    return f"(?:[^{_WHITE_SPACE}]|[{inside}])" if inside else f"[^{_WHITE_SPACE}]"


def translate_pattern(pattern: str) -> str:
    """Write an ECMA-262 pattern as a Python pattern with the same meaning.

    The result is meant for ``re.compile(result, re.ASCII)``; :func:`compile_pattern`
    does that.

    Args:
        pattern: the ECMA-262 pattern, as a JSON Schema ``pattern`` holds it.

    Returns:
        The Python pattern.

    Raises:
        PatternError: the pattern is not valid ECMA-262, or uses what Python cannot run
            with ECMA-262's meaning (see the module docstring).
    """
    try:
        return _Reader(pattern).pattern()
    except RecursionError:
        raise PatternError("the pattern is nested too deeply") from None


@functools.lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """Compile an ECMA-262 pattern into a Python regular expression with its meaning.

    Use ``search`` on the result: a JSON Schema ``pattern`` matches anywhere.

    Args:
        pattern: the ECMA-262 pattern.

    Returns:
        The compiled expression (cached per pattern).

    Raises:
        PatternError: see :func:`translate_pattern`; also when Python refuses the
            translation (a look-behind of varying width, a repetition count too large).
    """
    translated = translate_pattern(pattern)
    try:
        return re.compile(translated, re.ASCII)
    except (re.error, OverflowError, RecursionError) as exc:
        raise PatternError(str(exc)) from None
