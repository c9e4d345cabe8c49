"""The blocks of the TOOL reader: a tool's compiled lookup data and the open tool call."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

from ..events import ParseEvent
from ..state import ToolPhase
from .base import BoundedBlock
from .pieces import FOLD_SIZE, Pieces

__all__ = ["Step", "ToolBlock", "ToolSpec", "ToolTable"]

Step = Callable[["ToolBlock", str, int, list[ParseEvent]], int]
"""A phase step of the TOOL reader: ``(block, buf, pos, out) -> position reached``."""


class ToolSpec:
    """Per-tool lookup data, compiled once per parser.

    Attributes:
        name: the tool's name.
        params: its parameter names (field names and valid aliases).
        start_tag: ``<name>``.
        close_tag: ``</name>``.
        value_stops: a declared parameter's name -> the stop pattern of the fast path in
            its value (:func:`~stream_parser.core._scan.exact_stop_pattern`), compiled
            when a value of the parameter first grows long.  Shared by the parsers of
            the tool set; bounded by ``params``.
    """

    __slots__ = ("close_tag", "name", "params", "start_tag", "value_stops")

    def __init__(self, name: str, params: frozenset[str]) -> None:
        self.name = name
        self.params = params
        self.start_tag = f"<{name}>"
        self.close_tag = f"</{name}>"
        self.value_stops: dict[str, re.Pattern[str]] = {}


class ToolTable:
    """The lookup data of a whole tool set, compiled once and shared by many parsers.

    Nothing in it changes after it is built, so the parsers of every step of an agent
    (each with its own readers and blocks) can read the same table.

    Attributes:
        specs: tool name -> :class:`ToolSpec`.
        start_tags: every tool's start tag (watched for inside a value, rule 3).
        start_prefixes: the proper prefixes of those tags (one may be cut by a chunk).
        start_max: the length of the longest start tag (0 without tools).
    """

    __slots__ = ("specs", "start_max", "start_prefixes", "start_tags")

    def __init__(self, specs: Mapping[str, ToolSpec]) -> None:
        self.specs = specs
        self.start_tags = frozenset(spec.start_tag for spec in specs.values())
        self.start_prefixes = frozenset(
            tag[:k] for tag in self.start_tags for k in range(1, len(tag))
        )
        self.start_max = max((len(tag) for tag in self.start_tags), default=0)


class ToolBlock(BoundedBlock):
    """The tool call being read.

    Attributes:
        spec: the tool.
        name: the tool's name (``spec.name``, one attribute access less per chunk).
        call_index: the index reserved for the call.
        raw: the block's text so far (:class:`~.pieces.Pieces`: a value is a slice of it).
        fold_at: absolute offset past which the value's paths fold ``raw`` (every
            :data:`~.pieces.FOLD_SIZE` characters); in a value, never past ``limit``
            less ``window``, so that the fast path checks both with one comparison.
        params: the closed parameters' raw values.
        param: the open parameter's name.
        param_close: its closing tag.
        param_known: whether the tool has it (an unknown one is read and dropped).
        value_start: where the open parameter's value begins in ``raw`` (it runs up to
            the pending close, or to the end of ``raw``).
        phase: where the reader is inside the block.
        step: the reader's step for ``phase``.
        window: how far a tag that matters inside the value can reach.
        stop: the exact stop pattern of the open parameter's value, once it is known
            (see ``ToolSpec.value_stops``); None before.
        cut_short: the proper prefixes of those tags (one may be cut by a chunk's end).
        rejected: a close of the open parameter was rejected (text followed it), so the
            tool's end tag, if it comes without a pending close, makes the call malformed.
        watch: absolute offset just past the first tool end tag held in the open value
            (where the call is cut if a call starts later in the value); -1 when none.
        quiet_start: absolute offset of that end tag: the value's deltas pause there.
        quiet: the value's pieces from ``quiet_start`` on, their deltas not sent yet.
        pend: the pending region (the closing tag and what followed it), as pieces.
        pend_start: absolute offset of the pending closing tag.
        elements: the undeclared elements read in the pending region, as
            ``(name, start, end)`` of their start tags.
        elem_open: the start tag of the undeclared element being read; empty between
            elements.
        elem_close: its closing tag; empty between elements.
    """

    __slots__ = (
        "call_index",
        "cut_short",
        "elem_close",
        "elem_open",
        "elements",
        "fold_at",
        "name",
        "param",
        "param_close",
        "param_known",
        "params",
        "pend",
        "pend_start",
        "phase",
        "quiet",
        "quiet_start",
        "raw",
        "rejected",
        "spec",
        "step",
        "stop",
        "value_start",
        "watch",
        "window",
    )

    def __init__(self, spec: ToolSpec, start: int, call_index: int, max_size: int) -> None:
        super().__init__(start, max_size)
        self.spec = spec
        self.name = spec.name
        self.call_index = call_index
        self.raw = Pieces()
        self.fold_at = min(self.limit, start + FOLD_SIZE)
        self.params: dict[str, str] = {}
        self.param = ""
        self.param_close = ""
        self.param_known = False
        self.value_start = 0
        self.phase = ToolPhase.BODY
        self.step: Step
        self.window = 0
        self.stop: re.Pattern[str] | None = None
        self.cut_short: frozenset[str] = frozenset()
        self.rejected = False
        self.watch = -1
        self.quiet_start = 0
        self.quiet: list[str] = []
        self.pend: list[str] = []
        self.pend_start = 0
        self.elements: list[tuple[str, int, int]] = []
        self.elem_open = ""
        self.elem_close = ""

    def reset_value(self) -> None:
        """Forget the state of the parameter value just ended (or never begun)."""
        self.rejected = False
        self.watch = -1
        self.quiet = []
        self.pend = []
        self.elements = []
        self.elem_open = ""
        self.elem_close = ""
