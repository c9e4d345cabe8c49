"""Qwen3-Coder calls written without ``<tool_call>``: a bare ``<function=NAME>`` block.

:class:`BareFunctionPlugin` runs the qwen3_coder reader between ``<function=`` (at the
start of a line) and ``</function>``, with the same rules as inside ``<tool_call>``.
"""

from __future__ import annotations

from ...core.events import ParseEvent, Span
from ...core.kit import (
    FastData,
    Framing,
    PluginBlock,
    ReaderPlugin,
)
from .reader import _FUNCTION_CLOSE, _FUNCTION_OPEN, _TOOL_CALL_CLOSE, Qwen3CoderReader


class BareFunctionPlugin(ReaderPlugin):
    """Reads a qwen3_coder call written without ``<tool_call>``: ``<function=NAME>``....

    Qwen3-Coder models sometimes leave out the ``<tool_call>`` line.  Such a call opens
    at a ``<function=NAME>`` that starts a line, when the next non-whitespace character
    is ``<`` (the guard of rule 3 against prose that mentions the tag; not right after
    a backtick either), and closes with its ``</function>``; a stray ``</tool_call>``
    right after it (on the next line, say) belongs to it.  The content is read by
    :class:`Qwen3CoderReader`, with the same rules as inside ``<tool_call>``.
    ``ParserConfig(dialect="qwen3_coder")`` registers one.

    Args:
        framing: the dialect's framing; its ``before_call`` opens the block too.
    """

    name = "qwen3_coder_function"
    start_tags: tuple[str, ...] = (_FUNCTION_OPEN,)
    end_tag = _FUNCTION_CLOSE
    line_start_only = True
    next_chars = "<"
    named_start = True
    trailing = (_TOOL_CALL_CLOSE, "\n" + _TOOL_CALL_CLOSE)

    reader = Qwen3CoderReader

    def __init__(self, framing: Framing | None = None) -> None:
        super().__init__()
        if framing is not None and framing.before_call:
            self.start_tags = (_FUNCTION_OPEN, framing.before_call + _FUNCTION_OPEN)

    def on_start(self, tag: str, span: Span) -> list[ParseEvent]:
        """Reserve the call's index; the reader reads ``<function=`` as it would inside."""
        super().on_start(tag, span)
        assert self._reader is not None
        out: list[ParseEvent] = []
        self._reader.feed(_FUNCTION_OPEN, span[1] - len(_FUNCTION_OPEN), out)
        return out

    def accepts_end(self) -> bool:
        """Whether ``</function>`` ends the call (:meth:`Qwen3CoderReader.function_ends`)."""
        reader = self._reader
        return reader is None or (isinstance(reader, Qwen3CoderReader) and reader.function_ends())

    def fast_path(self) -> FastData | None:
        """The reader's fast path; ``</function>`` may end a value (see ``accepts_end``)."""
        fast = super().fast_path()
        return None if fast is None else (fast[0], fast[1], False)

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:
        """The call, or an error event and the block's raw text."""
        if self._reader is not None:
            # The reader reads the end tag as it would inside <tool_call>.
            self._reader.feed(_FUNCTION_CLOSE, block.span[1] - len(block.end_tag), [])
        return super().on_end(block)
