"""The output of ``stream-parser parse``: each event written and flushed as it comes.

Theory of operation.  A writer takes one event at a time and writes it at once; the
command flushes the output after the events of each input chunk (the events of one chunk
are decided together), so that a reader at the other end of a pipe sees each event as
soon as the parser has decided it.  Nothing is kept: memory does not grow with the input.

* ``jsonl``: one JSON object per line (:func:`~stream_parser.encoders.event_to_json`).
* ``sse``: one Server-Sent Events frame per event, named by its ``kind``
  (:func:`~stream_parser.encoders.event_to_sse`).
* ``pretty``: for a person.  Text as it streams, thinking dimmed, each tool call filling
  in parameter by parameter, errors in red; styled by ``rich`` when it is installed and
  standard output is a terminal.  Otherwise it is the same view without colours, and a
  note on standard error says why (colour codes would only garble a file or a pipe).
"""

from __future__ import annotations

import importlib
from typing import Any, Literal, TextIO

from ..core.events import Event
from ..demo._render import Renderer
from ..encoders import event_to_json, event_to_sse

__all__ = ["EventWriter", "Format", "make_writer"]

Format = Literal["jsonl", "sse", "pretty"]
"""The ``--format`` values (``_argv.FORMATS`` lists them for the command line)."""


class EventWriter:
    """Writes events to ``out`` as JSON lines; the base of the other formats."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def write(self, event: Event) -> None:
        """Write one event (:meth:`flush` sends it on)."""
        self._out.write(event_to_json(event) + "\n")

    def flush(self) -> None:
        """Send on what was written: called after the events of each input chunk."""
        self._out.flush()

    def close(self) -> None:
        """Finish the output (nothing to do for a stream of records)."""


class SSEWriter(EventWriter):
    """Writes each event as one Server-Sent Events frame."""

    def write(self, event: Event) -> None:
        """Write one frame (:meth:`flush` sends it on)."""
        self._out.write(event_to_sse(event))


class PrettyRenderer(Renderer):
    """The demo's live view of a reply, extended to every parse event and to block-only input.

    With ``--blocks-only`` no delta arrives: a thinking block, a code block or a call is
    then shown whole when its block event comes.
    """

    def __init__(self, out: TextIO, console: Any = None) -> None:
        super().__init__(out, "en", console)
        self._thinking_streamed = False
        self._code_streamed = False
        self._call_open = False

    def event(self, event: Event) -> None:
        """Show one parse event."""
        kind = event.kind
        e: Any = event
        if kind == "thinking_delta":
            if not self._thinking_streamed:
                self._end_line()  # thinking on lines of its own, apart from the text
            self._thinking_streamed = True
        elif kind == "thinking":
            if not self._thinking_streamed:
                self._end_line()
                self._write(e.content, "dim italic")
            self._thinking_streamed = False
        elif kind == "tool_call_start":
            self._call_open = True
        elif kind == "tool_call":
            if not self._call_open:
                # Blocks only: the call was not announced; its summary line stands alone.
                self._line(f"-> call {e.tool_name}", "bold magenta")
            self._call_open = False
        elif kind in ("code_block_delta", "code_block"):
            self._code(e)
            return
        elif kind == "usage":
            self._line(f"usage: {e.usage_info}", "dim")
            return
        super().event(event)

    def _code(self, e: Any) -> None:
        if not self._code_streamed:
            self._line(f"```{e.language}", "dim")
        if e.kind == "code_block_delta":
            self._code_streamed = True
            self._write(e.delta, "green")
            return
        if not self._code_streamed:
            self._write(e.code, "green")
        self._code_streamed = False
        self._line("```", "dim")

    def close(self) -> None:
        """End the last line, so that a shell prompt starts on its own."""
        self._end_line()


class PrettyWriter(EventWriter):
    """Writes events for a person (see :class:`PrettyRenderer`)."""

    def __init__(self, out: TextIO, console: Any = None) -> None:
        super().__init__(out)
        self._renderer = PrettyRenderer(out, console)

    def write(self, event: Event) -> None:
        """Show one event (the renderer flushes each piece)."""
        self._renderer.event(event)

    def close(self) -> None:
        """End the last line."""
        self._renderer.close()


def _is_terminal(out: TextIO) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


def make_writer(fmt: Format, out: TextIO, err: TextIO) -> EventWriter:
    """The writer of ``fmt`` over ``out``; notes on ``err`` when ``pretty`` has no colours."""
    if fmt == "jsonl":
        return EventWriter(out)
    if fmt == "sse":
        return SSEWriter(out)
    reason = None
    console = None
    if not _is_terminal(out):
        reason = "standard output is not a terminal"
    else:
        try:
            # Imported by name: rich is an optional extra (``[cli]``), not a dependency.
            console_module = importlib.import_module("rich.console")
        except ImportError:
            reason = "rich is not installed (python -m pip install rich)"
        else:
            # soft_wrap: the text arrives in small pieces; leave wrapping to the terminal.
            console = console_module.Console(file=out, soft_wrap=True)
    if reason is not None:
        err.write(f"stream-parser: note: --format pretty prints plain text: {reason}\n")
        err.flush()
    return PrettyWriter(out, console)
