"""The readers: one per kind of block, run by the driver in :mod:`..parser`.

The driver (:class:`~stream_parser.core.parser.StreamToolParser`) keeps the pending
tail, glues it to each chunk, and runs the reader of the current state over the buffer;
the reader consumes what it can decide and emits events.  The split follows h11's and
markdown-it's: the loop knows nothing of tags, each reader knows only its own block.

================  ===================================  ==================================
state             reader                               open block
================  ===================================  ==================================
``TEXT``          :class:`~.text.TextReader`           none: text and start tags
``THINKING``      :class:`~.thinking.ThinkingReader`   :class:`~.thinking.ThinkingBlock`
``TOOL``          :class:`~.tool.ToolReader`           :class:`~.tool_block.ToolBlock`
``PLUGIN``        :class:`~.plugin.PluginReader`       :class:`~.plugin.OpenPluginBlock`
================  ===================================  ==================================

With ``report_unknown_tools``, the TEXT reader's text goes through an
:class:`~.unknown.UnknownToolWatch` (calls of tools that are not registered).  The
contract every reader follows, the shared :class:`~.base.Cursor` (stream position
and event helpers) and the one size guard of tool and plugin blocks are in
:mod:`.base`.  The TEXT reader opens blocks by calling the other readers' ``open``; a
reader that closes its block moves the state back to ``TEXT`` itself.
"""

from __future__ import annotations

from .base import Cursor, Reader, Stopped
from .plugin import PluginReader
from .text import TextReader
from .thinking import ThinkingReader
from .tool import ToolReader
from .tool_block import ToolSpec, ToolTable

__all__ = [
    "Cursor",
    "PluginReader",
    "Reader",
    "Stopped",
    "TextReader",
    "ThinkingReader",
    "ToolReader",
    "ToolSpec",
    "ToolTable",
]
