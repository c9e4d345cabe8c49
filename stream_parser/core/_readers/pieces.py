"""A growing block's text, kept in a few bytes per character however it was chunked.

A block (a tool call, a thinking block, a plugin's block) arrives in chunks that may be
a character or two long.  Kept as a list of small strings, each chunk would cost a string
object and a list slot (about 15 bytes per input byte for a parameter kept twice, as raw
text and as value).  :class:`Pieces` is the list of the recent chunks, folded into one
string appended to ``segments`` every :data:`FOLD_SIZE` characters: the text then costs
about one byte per byte of ASCII, plus at most :data:`FOLD_SIZE` characters of small
pieces.  The hot paths (a value, thinking content, a plugin's block) ``append`` and
compare the chunk's end offset with the block's next fold offset, one comparison merged
with the block's size limit; the other paths call :meth:`Pieces.add`, which folds every
:data:`FOLD` pieces.

A part of the text (a parameter's value) is taken with :meth:`Pieces.slice` from
offsets, not kept a second time; :meth:`Pieces.text` joins the whole text once and keeps
that string as the only segment, so the joined text and the pieces are not both held.
"""

from __future__ import annotations

from typing import Final

__all__ = ["FOLD", "FOLD_SIZE", "Pieces"]

FOLD_SIZE: Final = 65_536
"""On the hot paths, the pieces are folded every this many characters (an offset
comparison costs less than counting pieces)."""

FOLD: Final = 8192
"""How many pieces :meth:`Pieces.add` holds before it folds them into one string."""


class Pieces(list[str]):
    """Text kept as folded segments, then the pieces since the last fold (the list).

    Attributes:
        segments: the folded text, in order.

    Example:
        >>> text = Pieces()
        >>> for c in "hello, world":
        ...     text.add(c)
        >>> text.slice(7, 12), text.text()
        ('world', 'hello, world')
    """

    __slots__ = ("segments",)

    def __init__(self) -> None:
        super().__init__()
        self.segments: list[str] = []

    def add(self, piece: str) -> None:
        """Append ``piece`` to the text."""
        self.append(piece)
        if len(self) >= FOLD:
            self.fold()

    def fold(self) -> None:
        """Join the pending pieces into one segment."""
        if self:
            self.segments.append("".join(self))
            self.clear()

    def text(self) -> str:
        """The whole text, joined once; it stays the only segment."""
        if not self.segments:
            return "".join(self)  # a small block: no segment was ever made
        self.fold()
        if len(self.segments) > 1:
            self.segments = ["".join(self.segments)]
        return self.segments[0]

    def slice(self, start: int, end: int) -> str:
        """``text()[start:end]``, without joining the rest of the text.

        The pieces are folded first (one join in C), so that the walk is over a few
        segments, not over thousands of small pieces.
        """
        self.fold()
        parts: list[str] = []
        pos = 0
        for part in self.segments:
            nxt = pos + len(part)
            if nxt > start:
                if pos >= end:
                    break
                # A whole part is not copied: a full slice of a str is the str.
                parts.append(part[max(start - pos, 0) : end - pos])
            pos = nxt
        return "".join(parts)
