r"""Writing tool calls in the core's XML format, so that the parser reads them back unchanged.

One writer for everything that writes a call: :meth:`XMLToolParser.reconstruct_tool_xml
<stream_parser.core.xml_tools.XMLToolParser.reconstruct_tool_xml>` (an instance back to
XML), the xml dialect's ``format_call`` and the example calls of tools.  The layout::

    <write_to_file>
    <path>src/app.py</path>
    <content>
    ...a value with a line break, on lines of its own...
    </content>
    </write_to_file>

Values are verbatim: the core decodes no entities, so nothing is escaped.  A value that
the parser would *not* read back unchanged is wrapped in CDATA (``]]>`` split across
sections, see :mod:`.cdata`).  That is a value with whitespace the reading would remove,
one that is itself made of CDATA sections or opens one that it does not close, one
holding its own closing tag where rule 5 could take it for the close (``</p>`` followed,
after optional whitespace, by the tool's end tag, any start tag, or the end of the
value), and one holding the tool's end tag after its own closing tag (a malformed call)
or before a start tag (a call cut short).  The check errs on the side of wrapping, which
costs only a CDATA section.
Non-string values are written by :func:`~stream_parser.schema.coerce.serialize_value`;
JSON (lists, dicts, models) is made unambiguous by writing ``<`` as ``\u003c`` in its
strings rather than by CDATA.

Every check is one forward scan of the value: writing is linear in its length, however
many CDATA sections or look-alike tags it holds.

Example:
    >>> print(write_call("write_to_file", {"path": "a</path>", "content": "x\ny"}))
    <write_to_file>
    <path><![CDATA[a</path>]]></path>
    <content>
    x
    y
    </content>
    </write_to_file>
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, Final

from ..schema.coerce import serialize_with_kind
from ._cdata import CDATA_CLOSE, CDATA_OPEN, cdata_content, wrap_cdata

__all__ = ["needs_cdata", "value_xml", "write_call"]

# Any start tag: after a value's closing tag, a parameter or an undeclared element that
# can lead to the close being confirmed (rule 5); after the tool's end tag, a call.
_ANY_START_TAG: Final = r"<[A-Za-z_][A-Za-z0-9_.\-]*>"
_scans: dict[tuple[str, str], re.Pattern[str]] = {}
_SCAN_CACHE_LIMIT: Final = 1024


def write_call(
    tool: str,
    args: Mapping[str, Any],
    *,
    raw: Collection[str] | None = None,
    params: Collection[str] | None = None,
) -> str:
    """Write one call: ``<tool>``, one element per argument, ``</tool>``.

    Args:
        tool: the tool name.
        args: parameter tag -> value, in the order to write them.  Strings are written
            verbatim; other values by
            :func:`~stream_parser.schema.coerce.serialize_value`.
        raw: the parameters the reader keeps whitespace of (rule 6).  None when that is
            not known: values are then written so that both readings give them back.
        params: every parameter tag of the tool.  Accepted for compatibility: since
            rule 5 reads undeclared elements after a close, any start tag counts.

    Returns:
        The XML, without a trailing newline.
    """
    lines = [f"<{tool}>"]
    for tag, value in args.items():
        is_raw = None if raw is None else tag in raw
        text = value_xml(value, tag, tool, raw=is_raw, params=params)
        if is_raw or "\n" in text:
            # Rule 6 removes exactly these newlines again (a raw value keeps the rest).
            lines.append(f"<{tag}>\n{text}\n</{tag}>")
        else:
            lines.append(f"<{tag}>{text}</{tag}>")
    lines.append(f"</{tool}>")
    return "\n".join(lines)


def value_xml(
    value: Any,
    tag: str,
    tool: str,
    *,
    raw: bool | None = False,
    params: Collection[str] | None = None,
) -> str:
    """The text of one parameter: verbatim, JSON-escaped or in CDATA, whichever reads back.

    Args:
        value: the value (a string is taken as it is).
        tag: the parameter's tag.
        tool: the tool's name.
        raw: whether the reader keeps the value's whitespace; None if not known.
        params: every parameter tag of the tool (accepted for compatibility).

    Returns:
        The text to put between ``<tag>`` and ``</tag>``.
    """
    if isinstance(value, str):
        text, is_json = value, False
    else:
        text, is_json = serialize_with_kind(value)
    if not needs_cdata(text, tag, tool, raw=raw, params=params):
        return text
    if is_json:
        # Inside JSON, '<' only occurs in strings, where \u003c means the same.
        escaped = text.replace("<", "\\u003c")
        if not needs_cdata(escaped, tag, tool, raw=raw, params=params):
            return escaped
    return wrap_cdata(text)


def needs_cdata(
    text: str,
    tag: str,
    tool: str,
    *,
    raw: bool | None = False,
    params: Collection[str] | None = None,
) -> bool:
    r"""Would ``text``, written verbatim as the value of ``tag``, be read as something else?

    Mirrors the core's reading of a value: whitespace (rule 6), CDATA unwrapping, and
    rule 5's search for the close with CDATA sections opaque, with the tool's end tag
    inside a value (malformed after a rejected close, a cut call before another call's
    start tag).  Errs on the side of "yes" (any Unicode whitespace, any start tag, a
    close at the very end).

    Args:
        text: the value as it would be written.
        tag: the parameter's tag.
        tool: the tool's name.
        raw: whether the reader keeps the value's whitespace; None if not known.
        params: every parameter tag of the tool (accepted for compatibility).

    Returns:
        True when the value must be wrapped in CDATA.
    """
    if raw is not False and text.endswith("\r"):
        return True  # "\r" + the layout's "\n" would be trimmed as one "\r\n"
    if raw is not True and text != text.strip():
        return True
    close = f"</{tag}>"
    end_tag = f"</{tool}>"
    if CDATA_OPEN not in text and close not in text and end_tag not in text:
        return False  # the common case, decided without a scan
    if cdata_content(text.strip()) is not None:
        return True  # the reader would unwrap it
    names = None if params is None else frozenset(params)
    scan = _scan_pattern(tag, tool)
    pos = 0
    rejected = ended = False  # a close rejected before; the tool's end tag seen before
    while True:
        found = scan.search(text, pos)
        if found is None:
            return False
        token = found.group()
        pos = found.end()
        if token.startswith(CDATA_OPEN):
            end = text.find(CDATA_CLOSE, pos)
            if end < 0:
                return True  # an unclosed section would swallow the value's closing tag
            pos = end + len(CDATA_CLOSE)
        elif token == close:
            pos = _pending(text, pos, close, end_tag, names, ended)
            if pos < 0:
                return True  # a close that rule 5 could take for the value's own
            rejected = True
        elif token == end_tag:
            if rejected:
                return True  # the reader would end the call there as malformed
            ended = True
        elif ended:
            return True  # a start tag after the tool's end tag could cut the call


_WS: Final = re.compile(r"[ \t\r\n]*")
_START_TAG: Final = re.compile(r"<([A-Za-z_][A-Za-z0-9_.\-]*)>")


def _pending(
    text: str, pos: int, close: str, end_tag: str, names: frozenset[str] | None, ended: bool
) -> int:
    """Rule 5 after a close ``</tag>`` that ends at ``pos``: where is it rejected?

    Mirrors the reader's pending close: whitespace and undeclared elements
    ``<x>...</x>`` are read; the tool's end tag or a declared parameter's start tag
    confirms it, and so, conservatively, does the end of the value (-1: wrap).  Text,
    other markup, this parameter's closing tag again (a new pending close), or an
    element's content holding the closing tag or a nested start tag rejects it: the
    position to scan on from.  The tool's end tag in an element's content rejects it and
    then makes the call malformed (-1); after the tool's end tag (``ended``), any start
    tag could cut the call (-1).
    """
    n = len(text)
    while True:
        j = _WS.match(text, pos).end()  # type: ignore[union-attr]
        if j == n or text.startswith(end_tag, j):
            return -1  # (at the end of the value: conservatively)
        m = _START_TAG.match(text, j)
        if m is None:
            return j
        name = m.group(1)
        if ended or names is None or name in names or f"</{name}>" == close:
            return -1
        elem_close = f"</{name}>"
        k = m.end()
        while True:
            k = text.find("<", k)
            if k < 0:
                return n
            if text.startswith(elem_close, k):
                break
            if text.startswith(close, k) or text.startswith(m.group(0), k):
                return k
            if text.startswith(end_tag, k) or (ended and _START_TAG.match(text, k)):
                return -1  # malformed, or perhaps a call's start after the end tag
            k += 1
        pos = k + len(elem_close)


def _scan_pattern(tag: str, tool: str) -> re.Pattern[str]:
    """What matters in a value: CDATA, ``</tag>``, ``</tool>``, a start tag."""
    key = (tag, tool)
    pattern = _scans.get(key)
    if pattern is None:
        pattern = re.compile(
            rf"{re.escape(CDATA_OPEN)}|{re.escape(f'</{tag}>')}|{re.escape(f'</{tool}>')}"
            rf"|{_ANY_START_TAG}"
        )
        if len(_scans) >= _SCAN_CACHE_LIMIT:
            _scans.clear()
        _scans[key] = pattern
    return pattern
