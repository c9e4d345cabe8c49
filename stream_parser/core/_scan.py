"""Tag tables: find the next place where a tag may start, and decide what is there.

A :class:`TagTable` is compiled once from every tag the TEXT state must recognise
(thinking start tags, tool start tags, plugin start tags, the fence marker).  It answers
two questions in time bounded by the longest tag, independent of how much text came
before:

* :meth:`TagTable.next_candidate`: where is the next character that begins some tag?
  One compiled character-class regex, like markdown-it's ``terminator_re``.
* :meth:`TagTable.match_at`: at that position, is there a whole tag, a proper prefix of
  one that the next chunk may complete (:data:`PARTIAL`), or nothing?

The fast path of ``feed()`` asks a cheaper question of each chunk: may anything in it
begin a tag?  :func:`stop_pattern` answers it with one regex search, and
:func:`stop_char` gives the one character every match begins with when there is one
(``<`` for XML tags), so that a chunk without that character, most chunks, is let
through by a plain ``in`` test without the search.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

from ..errors import ConfigError

if TYPE_CHECKING:
    from .plugins import ParsePlugin

__all__ = [
    "PARTIAL",
    "TagKind",
    "TagSpec",
    "TagTable",
    "exact_stop_pattern",
    "is_cut",
    "longest_prefix_suffix",
    "stop_char",
    "stop_pattern",
]


class TagKind(enum.Enum):
    """What a recognised tag opens."""

    THINKING = "thinking"
    THINKING_CLOSE = "thinking_close"  # a reasoning close with no reasoning open
    TOOL = "tool"
    PLUGIN = "plugin"
    FENCE = "fence"


@dataclass(frozen=True, slots=True)
class TagSpec:
    """One tag of the table and what it means."""

    tag: str
    kind: TagKind
    end_tag: str = ""
    tool_name: str = ""
    plugin: ParsePlugin | None = None
    line_start_only: bool = False
    next_chars: str = ""
    """If set, the tag opens its block only when the next non-whitespace character is
    one of these (rule 3); otherwise it is text."""


class _Partial:
    """Marker: a proper prefix of a tag reaches the end of the buffer."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "PARTIAL"


PARTIAL: Final = _Partial()


class TagTable:
    """Compiled lookup structures for a set of tags."""

    __slots__ = (
        "_angle_fast",
        "_angle_max",
        "_candidates",
        "_lengths",
        "_max_by_first",
        "_prefixes",
        "_tags",
        "max_len",
    )

    def __init__(self, specs: Iterable[TagSpec]) -> None:
        tags: dict[str, TagSpec] = {}
        for spec in specs:
            if not spec.tag:
                raise ConfigError("a tag must not be empty")
            if spec.tag in tags:
                raise ConfigError(
                    f"tag {spec.tag!r} is claimed twice ({tags[spec.tag].kind.value} "
                    f"and {spec.kind.value})"
                )
            tags[spec.tag] = spec
        self._tags = tags
        self._prefixes = frozenset(tag[:k] for tag in tags for k in range(1, len(tag)))
        by_first: dict[str, set[int]] = {}
        for tag in tags:
            by_first.setdefault(tag[0], set()).add(len(tag))
        self._lengths = {c: tuple(sorted(ls, reverse=True)) for c, ls in by_first.items()}
        self._max_by_first = {c: ls[0] for c, ls in self._lengths.items()}
        self.max_len = max((len(t) for t in tags), default=0)
        self._candidates = (
            re.compile("[" + "".join(re.escape(c) for c in sorted(by_first)) + "]")
            if by_first
            else None
        )
        # Fast path for the common case: every tag that starts with '<' ends at its first
        # '>'.  Then the tag at a '<' is simply everything up to the next '>' (one find and
        # one dict lookup), instead of one lookup per distinct tag length.
        angle = [t for t in tags if t[0] == "<"]
        self._angle_fast = all(t.find(">") == len(t) - 1 for t in angle)
        self._angle_max = max((len(t) for t in angle), default=0)

    def with_plugins(self, plugins: Mapping[str, ParsePlugin]) -> TagTable:
        """A copy whose plugin tags open the blocks of the given plugin instances.

        A table compiled once for many parsers holds its ``PLUGIN`` specs without a
        plugin (plugins keep per-parser state); each parser binds its own instances
        here.  The compiled lookup structures are shared, not rebuilt.

        Args:
            plugins: tag -> the plugin whose block it opens; every tag must be a
                ``PLUGIN`` tag of the table.

        Raises:
            ConfigError: a tag is not a plugin tag of the table.
        """
        tags = dict(self._tags)
        for tag, plugin in plugins.items():
            spec = tags.get(tag)
            if spec is None or spec.kind is not TagKind.PLUGIN:
                raise ConfigError(f"{tag!r} is not a plugin tag of this table")
            tags[tag] = replace(spec, plugin=plugin)
        # An empty table (cheap to build) filled attribute by attribute, not
        # ``__new__`` and ``__slots__``: mypyc compiles this class into a native one,
        # whose ``__new__`` runs ``__init__`` and which has no ``__slots__`` to read.
        table = TagTable(())
        table._angle_fast = self._angle_fast
        table._angle_max = self._angle_max
        table._candidates = self._candidates
        table._lengths = self._lengths
        table._max_by_first = self._max_by_first
        table._prefixes = self._prefixes
        table.max_len = self.max_len
        table._tags = tags
        return table

    @property
    def tags(self) -> tuple[str, ...]:
        """Every tag of the table."""
        return tuple(self._tags)

    def __contains__(self, tag: str) -> bool:
        return tag in self._tags

    def next_candidate(self, buf: str, pos: int) -> int:
        """Index of the next character at or after ``pos`` that may begin a tag, or -1."""
        if self._candidates is None:
            return -1
        m = self._candidates.search(buf, pos)
        return -1 if m is None else m.start()

    def match_at(self, buf: str, i: int) -> TagSpec | _Partial | None:
        """What is at ``buf[i:]``: a whole tag, :data:`PARTIAL`, or None.

        The longest tag wins; while the buffer ends inside something that may still grow
        into a longer tag, the answer is :data:`PARTIAL`, so that the decision does not
        depend on where the chunks were cut.
        """
        first = buf[i]
        rest = len(buf) - i
        if first == "<" and self._angle_fast:
            close = buf.find(">", i + 1, i + self._angle_max)
            if close >= 0:
                return self._tags.get(buf[i : close + 1])
            if rest < self._angle_max and buf[i:] in self._prefixes:
                return PARTIAL
            return None
        longest = self._max_by_first.get(first)
        if longest is None:
            return None
        if rest < longest and buf[i:] in self._prefixes:
            return PARTIAL
        for length in self._lengths[first]:
            if length <= rest:
                spec = self._tags.get(buf[i : i + length])
                if spec is not None:
                    return spec
        return None


def longest_prefix_suffix(buf: str, start: int, tag: str) -> int:
    """Length of the longest suffix of ``buf[start:]`` that is a proper prefix of ``tag``.

    Looks only at the last ``len(tag) - 1`` characters, so the cost does not depend on
    the length of ``buf``.
    """
    n = len(buf)
    lo = max(start, n - len(tag) + 1)
    first = tag[0]
    i = buf.find(first, lo)
    while i >= 0:
        if tag.startswith(buf[i:]):
            return n - i
        i = buf.find(first, i + 1)
    return 0


def stop_pattern(tags: Iterable[str]) -> re.Pattern[str] | None:
    """A pattern that finds every place in a chunk where one of ``tags`` may begin.

    A chunk without a match cannot contain any of the tags, nor a prefix of one cut by
    its end, so all of it can be handled as plain content without looking further.  Two
    characters are checked (``<`` followed by ``/``, say), which lets chunks of code full
    of ``a < b`` through.  None when there are no tags at all.

    The end of the chunk after a tag's first character is the pattern's only group
    (:func:`is_cut`), so that a match can tell a tag cut by the end of the chunk.
    """
    seconds: dict[str, set[str]] = {}
    for tag in tags:
        seconds.setdefault(tag[0], set()).add(tag[1:2])
    if not seconds:
        return None
    alternatives = []
    for first, nexts in sorted(seconds.items()):
        if "" in nexts:  # a one-character tag: the first character alone decides
            alternatives.append(re.escape(first))
        else:
            chars = "".join(re.escape(c) for c in sorted(nexts))
            alternatives.append(f"{re.escape(first)}(?:[{chars}]|(\\Z))")
    return re.compile("|".join(alternatives))


def stop_char(pattern: re.Pattern[str] | None) -> str:
    """The one character every match of ``pattern`` begins with, or ``""`` if none.

    A chunk without that character has no match, so ``stop_char(p) not in chunk`` is a
    cheaper first test than ``p.search(chunk) is None`` (an ``in`` test costs about a
    quarter of a regex search on a short chunk).  It is read from the pattern's text,
    matched case-sensitively: a literal character that is not repeated, or a group (not
    repeated) that begins with one, and alternatives when each begins with the same.
    ``""`` (which every string contains, so the search still runs) for any other
    pattern, such as one of alternatives that begin differently, and for None.

    Example:
        >>> stop_char(stop_pattern(["</", "<![CDATA["]))
        '<'
        >>> stop_char(stop_pattern(["<think>", "```"]))
        ''
        >>> stop_char(re.compile("(?:<a|<b(?:c|$))|<d")), stop_char(re.compile("(?:<a)?b"))
        ('<', '')
    """
    if pattern is None or pattern.flags & (re.IGNORECASE | re.VERBOSE):
        return ""
    return _first_char(pattern.pattern)


@functools.lru_cache(maxsize=256)
def _first_char(source: str) -> str:
    """:func:`stop_char` of a pattern's text.

    Top-level alternatives (``A|B``) have one when each of them has the same; a
    sequence, when it begins with a literal character that is not repeated, or with a
    group (not repeated) whose alternatives do.  Cached: the driver asks each time its
    fast path changes pattern, which may be at every parameter of every call.
    """
    alternatives = _top_level_split(source)
    if len(alternatives) > 1:
        firsts = {_first_char(alternative) for alternative in alternatives}
        return firsts.pop() if len(firsts) == 1 else ""
    if not source:
        return ""
    first = source[0]
    size = 1
    if first == "(":
        # A group: "(?:...)" or a capturing "(...)"; lookarounds and named groups are
        # left alone (a lookahead consumes nothing).
        inner = 3 if source.startswith("(?:") else 1
        if inner == 1 and source[1:2] == "?":
            return ""
        end = _group_end(source)
        if end < 0 or source[end + 1 : end + 2] in _QUANTIFIERS:
            return ""
        return _first_char(source[inner:end])
    if first == "\\":
        # An escaped character is a literal only when it is not a letter or a digit
        # (those are classes and anchors: \d, \w, \A...); re.escape writes no other.
        if len(source) < 2 or source[1].isalnum():
            return ""
        first, size = source[1], 2
    elif first in _SPECIAL:
        return ""
    if source[size : size + 1] in _QUANTIFIERS:
        return ""
    return first


_SPECIAL: Final = frozenset(".^$*+?{}[]|()")
_QUANTIFIERS: Final = frozenset("*+?{")


def _skip_class(source: str, i: int) -> int:
    """The index of the ``]`` that closes the character class opened at ``source[i]``.

    Reads it as the re module does (a ``]`` first in a class is literal).
    """
    n = len(source)
    i += 1
    if i < n and source[i] == "^":
        i += 1
    if i < n and source[i] == "]":
        i += 1
    while i < n and source[i] != "]":
        i += 2 if source[i] == "\\" else 1
    return i


def _structure(source: str) -> Iterator[tuple[int, str, int]]:
    """Each ``(``, ``)`` and ``|`` of ``source`` outside escapes and character classes.

    Yields ``(index, character, depth)``, ``depth`` being the group depth once the
    character is read (a ``(`` counts itself, a ``)`` no longer does).
    """
    depth = 0
    i, n = 0, len(source)
    while i < n:
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if c == "[":
            i = _skip_class(source, i)
        elif c == "(":
            depth += 1
            yield i, c, depth
        elif c == ")":
            depth -= 1
            yield i, c, depth
        elif c == "|":
            yield i, c, depth
        i += 1


def _top_level_split(source: str) -> list[str]:
    """``source`` cut at each ``|`` outside every group and character class."""
    parts: list[str] = []
    start = 0
    for i, c, depth in _structure(source):
        if c == "|" and depth == 0:
            parts.append(source[start:i])
            start = i + 1
    parts.append(source[start:])
    return parts


def _group_end(source: str) -> int:
    """The index of the ``)`` that closes the group opened at ``source[0]``; -1 if none."""
    for i, c, depth in _structure(source):
        if c == ")" and depth == 0:
            return i
    return -1


def is_cut(match: re.Match[str]) -> bool:
    """Whether a stop pattern's match is a tag cut by the end of the chunk.

    That is a proper prefix of a tag that runs to the end of the chunk, not a whole tag
    (for a pattern made by :func:`stop_pattern` or :func:`exact_stop_pattern`).

    Example:
        >>> p = exact_stop_pattern(["</content>"])
        >>> is_cut(p.search("a </con")), is_cut(p.search("a </content>"))
        (True, False)
    """
    return match.lastindex is not None


_EXACT_MAX: Final = 64


def exact_stop_pattern(tags: Iterable[str]) -> re.Pattern[str]:
    """A pattern that finds each of ``tags``, and a proper prefix of one at the end.

    The precise twin of :func:`stop_pattern`, for a state where a few long tags matter
    and other tags alike in their first two characters are frequent (the closing tags
    of HTML inside a parameter's value, ``</div>`` beside ``</content>``): a chunk
    without a match holds none of the tags and does not end inside one.  Compiled once
    per set of tags by its caller (it costs more than :func:`stop_pattern`).  With a tag
    longer than 64 characters it is :func:`stop_pattern`'s pattern, which stops at more.

    Example:
        >>> p = exact_stop_pattern(["</content>", "<![CDATA["])
        >>> [bool(p.search(s)) for s in ("a</div>", "a</content>", "a</con", "a<!x")]
        [False, True, True, False]
    """
    tags = sorted(set(tags))
    if max(map(len, tags)) > _EXACT_MAX:
        # One nested group per character: keep the regex small and shallow.
        coarse = stop_pattern(tags)
        assert coarse is not None
        return coarse
    return re.compile(_trie(tags))


def _trie(tags: list[str]) -> str:
    """The regex of :func:`exact_stop_pattern` for ``tags`` (sorted, distinct, not empty)."""
    by_first: dict[str, list[str]] = {}
    for tag in tags:
        by_first.setdefault(tag[0], []).append(tag[1:])
    alternatives = []
    for first, rests in by_first.items():
        if "" in rests:  # a whole tag ends here: any longer one begins with it
            alternatives.append(re.escape(first))
        else:
            alternatives.append(f"{re.escape(first)}(?:{_trie(rests)}|(\\Z))")
    return "|".join(alternatives)
