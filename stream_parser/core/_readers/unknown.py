"""Calls of tools the model invented: ``ParserConfig(report_unknown_tools=True)``.

A model sometimes calls a tool that does not exist, in the XML format:
``<open_doc><path>a.md</path></open_doc>``.  Such a block is text (only registered tools
run), but the agent should learn that the model tried, so that it can tell the model.
:class:`UnknownToolWatch` watches the text the TEXT reader emits, and reports a block
*shaped like a call* whose name is not registered with an ``unknown_tool`` error when
its end tag arrives.  Shaped like a call means:

* its start tag is where rule 3 would open a call: ``<name>`` with a valid tool name,
  no attributes, not right after a backtick (nor in a fenced block with
  ``fence_aware``), and the next non-whitespace character (within
  ``buffer_keep_size``) is ``<``;
* the first thing inside is a plain element, ``<child>``, whose name is not a
  registered tool either;
* it closes with its own end tag, ``</name>``, before any block opens.

HTML5 element names (``<ul><li>``, ``<table><tr>``...), ``result`` (the root of typed
answers) and ``item`` (an item of a typed list answer) never count.  A wrapper around
registered calls is not reported: the call opens a block, which ends the watch, and the
call runs.

The watch never holds text back: the text is delivered as it streams, and the error
follows the text that holds the end tag.  It keeps only bounded state of its own (a
start tag and its first child while they are cut by the end of a piece, and the last
characters of a piece while an end tag may be cut), so each character is looked at a
bounded number of times.

``ParserConfig.tool_tag_pattern`` narrows the names that count: a shaped block is
reported only when the pattern matches its whole start tag (``<open_doc>``) or its bare
name.  The pattern is tried once per shaped start tag that the watch has found, never on
the stream itself, so it adds no holding back and no re-scan, whatever it is.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection
from typing import Final

from ...schema.names import is_xml_tool_name as is_tool_name
from ..events import ErrorType, ParseEvent, _fast_text
from .base import Cursor

__all__ = ["HTML_ELEMENTS", "UnknownToolWatch"]

_HTML_NAMES: Final = """
    a abbr acronym address area article aside audio b base basefont bdi bdo big blink
    blockquote body br button canvas caption center cite code col colgroup data datalist
    dd del details dfn dialog dir div dl dt em embed fieldset figcaption figure font
    footer form frame frameset h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe img
    input ins kbd label legend li link main map mark marquee math menu meta meter nav
    nobr noembed noframes noscript object ol optgroup option output p param picture
    plaintext pre progress q rb rp rt rtc ruby s samp script search section select slot
    small source span strike strong style sub summary sup svg table tbody td template
    textarea tfoot th thead time title tr track tt u ul var video wbr xmp
    """
HTML_ELEMENTS: Final = frozenset(_HTML_NAMES.split())
"""Element names of HTML (the living standard, and obsolete ones models still write)."""

_NOT_TOOLS: Final = HTML_ELEMENTS | {"result", "item"}
"""Names that never make an unknown tool (compared in lower case)."""

_NAME: Final = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,64}")
_NAME_MAX: Final = 64
_WS: Final = re.compile(r"[ \t\r\n]*")
_FENCE: Final = "```"
_UNDECIDED: Final = -1
_NOT_A_CALL: Final = -2


def _matches(pattern: re.Pattern[str], name: str) -> bool:
    """Whether a tool tag pattern takes ``name``: the whole start tag, or the bare name.

    The pattern only ever sees one start tag the watch has found (``<name>``, a name of
    at most 65 characters), never the stream: it cannot make the parser hold text back
    or read anything twice.
    """
    return pattern.fullmatch(f"<{name}>") is not None or pattern.fullmatch(name) is not None


class UnknownToolWatch:
    """Watches the TEXT state's text for calls of unregistered tools.

    Args:
        cur: the shared cursor (configuration, error events).
        registered: the registered tool names.
        reserved: the start tags the TEXT state recognises (thinking, plugin tags):
            such a tag is not an unknown tool.
    """

    __slots__ = (
        "_before",
        "_close",
        "_cur",
        "_fence_aware",
        "_in_fence",
        "_name",
        "_next",
        "_pattern",
        "_pending",
        "_registered",
        "_reserved",
        "_start",
    )

    def __init__(self, cur: Cursor, registered: Collection[str], reserved: Collection[str]) -> None:
        self._cur = cur
        # frozenset() of a frozenset is that same set: free for the parser's shared sets.
        self._registered = frozenset(registered)
        self._reserved = frozenset(reserved)
        self._fence_aware = cur.config.fence_aware
        # ParserConfig.tool_tag_pattern, compiled: a name counts only if it matches.
        self._pattern: re.Pattern[str] | None = cur.config.tool_tag_pattern  # type: ignore[assignment]
        self._next = -1  # the offset the next piece must start at to continue the text
        self._pending = ""  # a cut start tag (and first child), or the end of a piece
        self._before = "\n"  # the character before the pending text (or the next piece)
        self._name = ""  # the unknown tool whose end tag is awaited ("" for none)
        self._close = ""
        self._start = 0
        self._in_fence = False

    def reset(self) -> None:
        """A block opened: the text is interrupted, nothing pending counts."""
        self._next = -1
        self._pending = ""
        self._name = ""

    def feed(self, buf: str, start: int, end: int, base: int, out: list[ParseEvent]) -> None:
        """Emit the text ``buf[start:end]`` (at offset ``base + start``), watched.

        The text is emitted at once; an unknown tool's error follows the text that ends
        with its end tag (the text event is cut there, so that the events do not depend
        on where the chunks were cut).
        """
        at = base + start
        if at != self._next:  # not the continuation of the text watched so far
            self.reset()
            self._before = self._cur.before[-1] if start == 0 else buf[start - 1]
            self._in_fence = self._in_fence and self._fence_aware
        self._next = base + end
        if self._pending:
            text = self._pending + buf[start:end]
            text_base = at - len(self._pending)
        else:
            text = buf[start:end]
            text_base = at
        self._pending = ""
        shift = start - (at - text_base)  # text index -> buf index
        reports: list[tuple[int, str, int]] = []
        self._scan(text, text_base, reports)
        emitted = start
        for stop, name, block_start in reports:
            cut = stop + shift
            out.append(_fast_text(buf[emitted:cut], (base + emitted, base + cut)))
            emitted = cut
            self._report(name, block_start, base + cut, out)
        if emitted < end:
            out.append(_fast_text(buf[emitted:end], (base + emitted, base + end)))

    def _scan(self, text: str, base: int, reports: list[tuple[int, str, int]]) -> None:
        """Find calls' shapes and their end tags in ``text``; keep what is cut."""
        pos = 0
        n = len(text)
        while pos < n:
            if self._name:
                k = text.find(self._close, pos)
                if k < 0:
                    keep = max(pos, n - len(self._close) + 1)
                    self._keep(text, keep)
                    return
                end = k + len(self._close)
                reports.append((end, self._name, self._start))
                self._name = ""
                pos = end
                continue
            k = text.find("<", pos)
            if self._fence_aware:
                self._fences(text, pos, n if k < 0 else k)
            if k < 0:
                self._before = text[-1]
                return
            if self._in_fence or (text[k - 1] if k else self._before) == "`":
                pos = k + 1
                continue
            verdict, name = self._shape(text, k)
            if verdict == _UNDECIDED:
                self._keep(text, k)
                return
            if verdict >= 0:  # a call's shape: wait for its end tag
                self._name = name
                self._close = f"</{name}>"
                self._start = base + k
                pos = verdict
                continue
            pos = k + 1
        if n:  # the loop ended at the end of the text (an end tag, or a "<", was last)
            self._before = text[-1]

    def _keep(self, text: str, k: int) -> None:
        """Keep ``text[k:]`` for the next piece (bounded by the callers)."""
        self._before = text[k - 1] if k else self._before
        self._pending = text[k:]

    def _fences(self, text: str, pos: int, stop: int) -> None:
        """Follow fenced blocks (a line starting with three backticks) in ``text[pos:stop]``."""
        k = text.find(_FENCE, pos, stop)
        while k >= 0:
            if (text[k - 1] if k else self._before) == "\n":
                self._in_fence = not self._in_fence
            k = text.find(_FENCE, k + len(_FENCE), stop)

    def _shape(self, text: str, k: int) -> tuple[int, str]:
        """Is ``<name>``, whitespace and ``<child>`` at ``text[k:]``, name unregistered?

        Returns:
            ``(end, name)`` (``end`` after the child's tag) for an unknown tool's call;
            ``(_UNDECIDED, "")`` when the end of ``text`` cuts it; ``(_NOT_A_CALL, "")``.
        """
        n = len(text)
        e = _NAME.match(text, k + 1)
        if e is None:
            return (_UNDECIDED, "") if k + 1 == n else (_NOT_A_CALL, "")
        i = e.end()
        name = text[k + 1 : i]
        if i == n:
            return (_UNDECIDED, "") if len(name) <= _NAME_MAX else (_NOT_A_CALL, "")
        if text[i] != ">" or not self._unknown(name) or f"<{name}>" in self._reserved:
            return _NOT_A_CALL, ""
        j = i + 1
        w = _WS.match(text, j).end()  # type: ignore[union-attr]
        if w - j > self._cur.ws_cap:
            return _NOT_A_CALL, ""
        if w == n:
            return _UNDECIDED, ""
        if text[w] != "<":
            return _NOT_A_CALL, ""
        c = _NAME.match(text, w + 1)
        if c is None:
            return (_UNDECIDED, "") if w + 1 == n else (_NOT_A_CALL, "")
        ce = c.end()
        child = text[w + 1 : ce]
        if ce == n:
            return (_UNDECIDED, "") if len(child) <= _NAME_MAX else (_NOT_A_CALL, "")
        if text[ce] != ">" or child in self._registered or not is_tool_name(child):
            return _NOT_A_CALL, ""
        return ce + 1, name

    def _unknown(self, name: str) -> bool:
        """A name that could be an invented tool's (and that the tool tag pattern matches)."""
        if not (
            is_tool_name(name) and name not in self._registered and name.lower() not in _NOT_TOOLS
        ):
            return False
        pattern = self._pattern
        return pattern is None or _matches(pattern, name)

    def _report(self, name: str, start: int, end: int, out: list[ParseEvent]) -> None:
        closest = difflib.get_close_matches(name, sorted(self._registered), n=3, cutoff=0.6)
        if closest:
            hint = f"closest registered: {', '.join(closest)}"
        elif self._registered:
            hint = f"registered: {', '.join(sorted(self._registered))}"
        else:
            hint = "no tools are registered"
        self._cur.error(
            out,
            ErrorType.UNKNOWN_TOOL,
            f"unknown tool {name!r} ({hint}); the call is not executed and its text was "
            "delivered as text",
            (start, end),
            context=f"<{name}>",
            details=({"tool": name, "closest": closest},),
            tool_name=name,
        )
