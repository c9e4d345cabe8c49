r"""CDATA in parameter values: how the core reads it, and how the writer produces it.

A parameter value is verbatim text; CDATA is the one escape.  A value that is nothing but
CDATA sections back to back (whitespace around them ignored) is unwrapped: the sections'
contents, joined.  Any other CDATA markup is part of the value as written.  Several
sections are needed because a section cannot hold ``]]>``: the writer splits it across
two, ``]]`` ending one and ``>`` starting the next, as XML does.

Example:
    >>> wrap_cdata("a]]>b")
    '<![CDATA[a]]]]><![CDATA[>b]]>'
    >>> unwrap_cdata(wrap_cdata("a]]>b"))
    'a]]>b'
    >>> unwrap_cdata("x <![CDATA[y]]>")
    'x <![CDATA[y]]>'
"""

from __future__ import annotations

from typing import Final

__all__ = ["CDATA_CLOSE", "CDATA_OPEN", "cdata_content", "unwrap_cdata", "wrap_cdata"]

CDATA_OPEN: Final = "<![CDATA["
CDATA_CLOSE: Final = "]]>"


def cdata_content(text: str) -> str | None:
    """The joined contents if ``text`` is one or more CDATA sections back to back, else None.

    Linear in ``len(text)``: each section is found by one forward search.
    """
    if not text.startswith(CDATA_OPEN):
        return None
    pieces: list[str] = []
    pos = 0
    while pos < len(text):
        if not text.startswith(CDATA_OPEN, pos):
            return None
        start = pos + len(CDATA_OPEN)
        end = text.find(CDATA_CLOSE, start)
        if end < 0:
            return None
        pieces.append(text[start:end])
        pos = end + len(CDATA_CLOSE)
    return "".join(pieces)


def unwrap_cdata(value: str) -> str:
    """Unwrap a value made only of CDATA sections (whitespace around them ignored).

    The sections' contents are returned verbatim, joined; any other value comes back
    unchanged.
    """
    if CDATA_OPEN not in value:  # the common case, without stripping a copy
        return value
    content = cdata_content(value.strip())
    return value if content is None else content


def wrap_cdata(text: str) -> str:
    """``text`` as CDATA that :func:`unwrap_cdata` reads back unchanged (``]]>`` split)."""
    return CDATA_OPEN + text.replace(CDATA_CLOSE, _SPLIT_CLOSE) + CDATA_CLOSE


# "]]>" inside a section: "]]" ends this section, ">" starts the next.
_SPLIT_CLOSE: Final = "]]" + CDATA_CLOSE + CDATA_OPEN + ">"
