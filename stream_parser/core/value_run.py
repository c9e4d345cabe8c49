"""ValueRun: a plugin's open parameter value, streamed by the parser while it is plain.

Inside a long value a plugin's fast path does the same thing for almost every chunk: it
checks that the chunk does not hold the one character that may begin markup (a ``<``),
emits a :class:`ToolParamDeltaEvent` (or, for a format whose call streams as one
arguments text, a :class:`ToolArgumentsDeltaEvent`) and notes where the value now
ends.  A plugin that hands the parser a :class:`ValueRun` (``ParsePlugin.value_run``)
lets the parser do exactly that itself while the run is ``armed``: one test and one
event per chunk, without a call into the plugin.  Chunks that hold the run's ``stop``
still go to the plugin's fast-path function, which keeps ``armed`` true only while a
chunk without it would be all value (nothing held, nothing pending).

A format whose arguments are JSON has no such character: inside a string, or a nested
value, a chunk is plain when the plugin's :class:`~stream_parser.core._json_scan.JsonScanner`
can take it in one step (``JsonScanner.skip``).  A run made with ``scanner=`` asks the
scanner instead of looking for ``stop``.

Some formats have markup that counts only at the start of a line (a ``<parameter=``
line that ends a value whose closing tag is missing).  With ``indent_cap`` the run also
follows the line the value ends with (:meth:`ValueRun.follow`): ``line`` is the
indentation of a line that holds nothing else yet, so that the plugin, given the next
chunk with a ``<``, knows whether the ``<`` opens the line.

The run is the plugin's own record of its open value: the plugin sets the names and the
call index when the value opens, reads ``end`` when it closes, and moves ``end`` (and
``line``) itself for the chunks it takes.  This module is compiled in the compiled
build, so that the parser reads the run's fields as C struct members.
"""

from __future__ import annotations

from ..errors import ConfigError
from ._json_scan import JsonScanner

__all__ = ["ValueRun"]


class ValueRun:
    r"""The open value of a plugin's tool call, for the parser's fast path.

    Attributes:
        stop: the character that needs the plugin (usually ``<``, which may begin a
            tag): a chunk that holds it goes to the plugin's fast-path function.
        scanner: for JSON arguments, instead of ``stop``: the plugin's scanner, and a
            chunk is the run's when the scanner takes it (``JsonScanner.skip``).  A run
            with neither takes nothing until :meth:`arm_json` gives it a scanner.
        indent_cap: for a format whose markup counts only at the start of a line: the
            most indentation such a line may have (the run then keeps ``line``); -1
            for a format without such markup.
        arguments: the value is the call's whole arguments text, streamed as
            :class:`ToolArgumentsDeltaEvent` (``param`` is unused); False for one
            parameter's value, streamed as :class:`ToolParamDeltaEvent`.
        armed: True while a chunk without ``stop`` is all value (the plugin keeps it
            right whenever its own state changes).
        tool_name: the call's tool, for the deltas.
        param: the parameter, for the deltas.
        call_index: the call's index, for the deltas.
        call_id: the call's id, for arguments deltas (a format that numbers its calls).
        end: the absolute offset where the value taken so far ends.
        line: with ``indent_cap``: the value taken so far ends with a line break and
            this many characters of indentation (spaces and tabs, at most
            ``indent_cap``), so the line may still open with markup; -1 when it does not.

    Example:
        >>> run = ValueRun("<", indent_cap=8)
        >>> run.open("write_file", "content", 0, 42)
        >>> run.follow("plain words\n  ")
        >>> run.line
        2
        >>> run.follow("more")
        >>> run.line
        -1
    """

    __slots__ = (
        "arguments",
        "armed",
        "call_id",
        "call_index",
        "end",
        "indent_cap",
        "line",
        "param",
        "scanner",
        "stop",
        "tool_name",
    )

    def __init__(
        self,
        stop: str = "",
        indent_cap: int = -1,
        arguments: bool = False,
        scanner: JsonScanner | None = None,
    ) -> None:
        """A run with ``stop`` (one character) or ``scanner``, not armed, of no value yet.

        Raises:
            ConfigError: ``stop`` is longer than one character, or both are given.
        """
        if len(stop) > 1:
            raise ConfigError(f"a value run's stop is one character, not {stop!r}")
        if scanner is not None and stop:
            raise ConfigError("a value run has a stop character or a scanner, not both")
        self.stop = stop
        self.scanner = scanner
        self.indent_cap = indent_cap
        self.arguments = arguments
        self.armed = False
        self.tool_name = ""
        self.param = ""
        self.call_index = 0
        self.call_id: str | None = None
        self.end = 0
        self.line = -1

    def open(
        self, tool_name: str, param: str, call_index: int, start: int, call_id: str | None = None
    ) -> None:
        """A value of ``param`` opens at absolute offset ``start`` (the run is not armed)."""
        self.tool_name = tool_name
        self.param = param
        self.call_index = call_index
        self.call_id = call_id
        self.end = start
        self.line = -1
        self.armed = False

    def arm_json(
        self, scanner: JsonScanner, tool_name: str, call_index: int, call_id: str | None = None
    ) -> None:
        """Arm the run for JSON arguments: the chunks ``scanner`` takes whole are the run's.

        For a run made with a scanner (``arguments=True``), from a plugin's
        ``fast_path`` when the arguments of an announced call stream as deltas.
        """
        self.scanner = scanner
        self.tool_name = tool_name
        self.call_index = call_index
        self.call_id = call_id
        self.armed = True

    def follow(self, chunk: str) -> None:
        """Follow the line breaks and indentation of ``chunk``, taken as value (``line``).

        The parser calls it (with ``indent_cap``) for a chunk that holds a line break,
        or while a line holds only indentation.
        """
        line = self.line
        begin = chunk.rfind("\n") + 1  # where the chunk's last line begins
        if begin:
            line = 0
        if line >= 0:
            n = len(chunk)
            k = begin
            while k < n and (chunk[k] == " " or chunk[k] == "\t"):
                k += 1
            line = line + k - begin if k == n else -1
            if line > self.indent_cap:
                line = -1  # deeper indentation makes no markup line
        self.line = line

    def __repr__(self) -> str:
        return (
            f"ValueRun(stop={self.stop!r}, armed={self.armed}, tool_name={self.tool_name!r}, "
            f"param={self.param!r}, call_index={self.call_index}, end={self.end}, "
            f"line={self.line})"
        )
