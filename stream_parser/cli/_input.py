"""The input of ``stream-parser parse``: a file or standard input, read as it arrives.

Theory of operation.  The input is read in blocks of whatever is available, never whole:
``read1`` on a buffered binary stream returns the bytes already there (at most
:data:`BLOCK`), waiting only when there are none, so a model piped into the command is
parsed while it writes.  Bytes are decoded by an incremental UTF-8 decoder with
``errors="replace"``: a character cut between two blocks is joined, and bytes that are not
UTF-8 become U+FFFD, the same for a file and for standard input.  Line ends are kept as
they are (no newline translation), so the events' spans index the decoded text exactly.

A NUL byte in the first :data:`SNIFF` bytes marks the input as binary: it is parsed all
the same, and the caller is told once (``on_binary``) so that it can warn.

``--chunk-size`` re-cuts the decoded text into chunks of N characters, or of random sizes
between A and B drawn from a random number generator started from the ``--seed``
option's number, to show how the parser behaves on a stream cut anywhere; the cuts are
the same for the same text and ``--seed`` number however it was read.
"""

from __future__ import annotations

import codecs
import random
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

__all__ = ["BLOCK", "SNIFF", "chunked", "decoded", "read_blocks"]

BLOCK = 64 * 1024
"""The most bytes read at once: large enough to keep per-read costs small, small enough
that the parser's events for one block stay few."""

SNIFF = 8 * 1024
"""How many bytes at the start of the input are checked for NUL (binary data)."""


def read_blocks(stream: IO[Any]) -> Iterator[bytes | str]:
    """The blocks of ``stream`` as they become available, until its end.

    A binary stream with ``read1`` (``sys.stdin.buffer``, a file opened ``"rb"``) gives
    what is there without waiting for a full block; any other stream (a text stream that
    stands in for standard input, as in tests) is read in blocks of characters.
    """
    read = getattr(stream, "read1", None) or stream.read
    while True:
        block = read(BLOCK)
        if not block:
            return
        yield block


def decoded(blocks: Iterable[bytes | str], on_binary: Callable[[], None]) -> Iterator[str]:
    r"""``blocks`` as text: bytes decoded as UTF-8 (invalid bytes replaced), text as it is.

    Calls ``on_binary()`` once if a NUL byte appears in the first :data:`SNIFF` bytes.

    Example:
        >>> list(decoded([b"caf\xc3", b"\xa9 \xff!"], lambda: None))
        ['caf', 'é �!']
    """
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    sniffed = 0
    for block in blocks:
        if isinstance(block, str):
            text = block
        else:
            if sniffed < SNIFF:
                head = block[: SNIFF - sniffed]
                sniffed += len(head)
                if b"\0" in head:
                    on_binary()
                    sniffed = SNIFF  # once is enough
            text = decoder.decode(block)
        if text:
            yield text
    tail = decoder.decode(b"", final=True)
    if tail:
        yield tail


def chunked(pieces: Iterable[str], sizes: tuple[int, int] | None, seed: int) -> Iterator[str]:
    """``pieces`` re-cut into chunks of a size drawn between ``sizes`` (inclusive).

    With ``sizes`` None the pieces pass as they come.  The last chunk may be shorter.

    Example:
        >>> list(chunked(["abcde", "fg"], (3, 3), seed=0))
        ['abc', 'def', 'g']
    """
    if sizes is None:
        yield from pieces
        return
    rng = random.Random(seed)
    step = rng.randint(*sizes)
    held = ""
    for piece in pieces:
        held += piece
        pos = 0
        while len(held) - pos >= step:
            yield held[pos : pos + step]
            pos += step
            step = rng.randint(*sizes)
        held = held[pos:]
    if held:
        yield held
