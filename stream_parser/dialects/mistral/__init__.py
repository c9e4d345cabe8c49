r"""The mistral dialect: tool calls after the ``[TOOL_CALLS]`` token, with no end tag.

Mistral's models write their calls in one of two layouts, both opened by the special
token ``[TOOL_CALLS]`` (``[ARGS]``, ``[CALL_ID]``, ``[THINK]`` and ``[/THINK]`` are
special tokens too):

* **v3** (Mistral 7B v0.3, Mixtral, Nemo, Small up to 3.1, Large 2): a JSON array of
  call objects, ``[TOOL_CALLS] [{"name": "f", "arguments": {...}, "id": "a1b2c3d4e"}]``;
* **v11 and later** (Small 3.2, Magistral, Devstral, Ministral 3): one token per call,
  ``[TOOL_CALLS]f[ARGS]{...}``, optionally with an id,
  ``[TOOL_CALLS]f[CALL_ID]a1b2c3d4e[ARGS]{...}``; parallel calls repeat the whole.

Neither has an end tag: a call ends where its JSON ends, and text may follow.  Reasoning
(Magistral) is written between ``[THINK]`` and ``[/THINK]``, or between ``<think>`` and
``</think>`` as some checkpoints write it; the dialect registers both pairs as its
thinking tags (:data:`MISTRAL_THINKING`, used unless ``ParserConfig.thinking_tags`` is
set).

Theory of operation
-------------------

:class:`MistralPlugin` (the kit's reader plugin) claims ``[TOOL_CALLS]`` with no end tag
(``end_tag = ""``); its :class:`~stream_parser.dialects.mistral.reader.MistralReader`, on
the kit's one reader base, ends each block itself (``Reader.end``) at the character where
its JSON closes.  The first
character after the token (whitespace skipped) tells the layouts apart: ``[`` opens a v3
array, ``{`` a single v3 call object written without its array, anything else is the
name of a v11 call.  Every character is looked at a bounded number of times:

* **Structure.**  The core's :class:`~stream_parser.core.kit.JsonScanner` follows
  the JSON (strings and their escapes, even when a piece ends between a backslash and
  the character it escapes, and the depth of objects and arrays) and reports where the
  top-level value ends.  A bracket or a ``[TOOL_CALLS]`` inside a string is content.
  In a v3 array, an element that is an object is followed by its own reader's scanner
  (and its plain chunks by the core's fast path); after it, a piece is fed up to each
  ``,`` it holds, so that a comma left at the array's own level (outside strings, at
  depth 1) is known as the end of the element.
* **v11.**  The name runs up to ``[ARGS]`` (or ``[CALL_ID]`` and an id, or a ``{`` right
  after the name, as some converted templates write); then the call is announced
  (:class:`~stream_parser.core.events.ToolCallStartEvent`, for a registered tool) and the
  arguments stream verbatim as
  :class:`~stream_parser.core.events.ToolArgumentsDeltaEvent`\ s from their ``{`` to the
  ``}`` that closes them, where the block ends.
* **v3.**  Each element of the array is handed as it arrives to a
  :class:`~stream_parser.dialects.hermes.HermesReader` (the same call object as hermes
  writes in ``<tool_call>``), which announces the call once its name is read and
  streams its ``"arguments"``.  The block ends after the ``]`` that closes the array;
  its markup (``[TOOL_CALLS] [``, the commas, ``]``) comes as
  :class:`~stream_parser.core.events.FramingEvent`\ s and each element as its own call.

A character that cannot continue the layout (a space or a quote in a name, a token
other than ``[ARGS]`` after it, arguments that are not an object) ends the block right
there: the block is a ``malformed_tool`` and its text is delivered as text, and the rest
of the stream is read as usual.  When a block closes, its JSON is parsed once and the
arguments validated by the tool's model.  The outcome is a
:class:`~stream_parser.core.events.ToolCallEvent`, or an error and the raw text:

* ``malformed_tool``: the layout is broken (above), the JSON cannot be read, the
  arguments are not an object, a v3 array is empty or has an empty element;
* ``unknown_tool``: the name is not registered;
* ``invalid_params``: the arguments fail validation;
* ``unclosed_tool``: the stream ended before the JSON closed (a v3 array runs none of its
  calls then, complete ones included);
* ``tool_too_large``: the block passed ``max_tool_size``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pydantic_core import to_jsonable_python

from ...core.kit import (
    ParsePlugin,
    ThinkingFormat,
    ToolNameRule,
    register,
)
from .._base import Dialect
from .reader import (
    _MAX_NAME,
    _NAME_CHARS,
    ARGS,
    CALL_ID,
    THINK_END,
    THINK_START,
    TOOL_CALLS,
    MistralPlugin,
)

__all__ = [
    "ARGS",
    "CALL_ID",
    "MISTRAL_THINKING",
    "THINK_END",
    "THINK_START",
    "TOOL_CALLS",
    "MistralDialect",
    "MistralPlugin",
]


#: The reasoning format of Mistral's reasoning models: ``[THINK]`` ... ``[/THINK]``, and
#: ``<think>`` ... ``</think>`` as Magistral-Small-2506's system prompt asks for it (and
#: vLLM's mistral parser reads for v11 tokenizers, ``reasoning_encoding="text"``).
MISTRAL_THINKING: Final = ThinkingFormat(((THINK_START, THINK_END), ("<think>", "</think>")))


def _json(value: Any) -> str:
    """A value as the chat templates' ``tojson`` writes it (``", "`` and ``": "``)."""
    return json.dumps(to_jsonable_python(value, by_alias=True), ensure_ascii=False)


def _check_name(tool_name: str) -> None:
    if not _NAME_CHARS.fullmatch(tool_name) or len(tool_name) > _MAX_NAME:
        raise ValueError(f"the tool name {tool_name!r} cannot be written in the mistral format")


class MistralDialect(Dialect):
    """``[TOOL_CALLS]NAME[ARGS]{...}`` (v11+), and the v3 array ``[TOOL_CALLS] [{...}]``.

    Both layouts are read; calls are written in the current one (v11+), as the chat
    templates of Mistral Small 3.2, Magistral and Devstral render them.

    Example:
        >>> print(MistralDialect().format_call("read_file", {"path": "a.py"}))
        [TOOL_CALLS]read_file[ARGS]{"path": "a.py"}
        >>> print(MistralDialect().format_calls_v3([("read_file", {"path": "a.py"})]))
        [TOOL_CALLS] [{"name": "read_file", "arguments": {"path": "a.py"}}]
    """

    name = "mistral"
    title = "[TOOL_CALLS]NAME[ARGS]{json} or [TOOL_CALLS] [{json}, ...] (Mistral)"
    call_separator = ""  # v11: each call opens with [TOOL_CALLS], one after another
    plugin_key = "mistral"
    thinking = MISTRAL_THINKING
    tool_names = ToolNameRule(_NAME_CHARS.pattern, "letters, digits, '_', '-', '.' or ':'")
    special_tokens = True  # its markers are special tokens: servers drop them unless asked
    markers = (ARGS, CALL_ID)

    def make_plugin(self, names: tuple[str, ...]) -> Sequence[ParsePlugin]:
        """A :class:`MistralPlugin`."""
        return [MistralPlugin()]

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        """Write ``[TOOL_CALLS]NAME[ARGS]`` and the arguments as one JSON object.

        Values that are not JSON types (models, enums, paths, dates) are written as
        their JSON form.  Parallel calls are these strings one after the other.

        Raises:
            ValueError: the tool's name holds characters a name cannot (the reader ends
                a name at ``[``, ``{``, whitespace or a quote).
        """
        _check_name(tool_name)
        return f"{TOOL_CALLS}{tool_name}{ARGS}{_json(dict(args))}"

    def format_calls_v3(
        self, calls: Sequence[tuple[str, Mapping[str, Any]]], ids: Sequence[str] = ()
    ) -> str:
        """Write calls in the v3 layout: ``[TOOL_CALLS] [{"name": ..., "arguments": ...}]``.

        Args:
            calls: (tool name, arguments) pairs, in order.
            ids: the calls' ids (the v3 templates write nine alphanumeric characters),
                one per call, or none.

        Returns:
            The text of the calls; ``""`` for no calls (as :meth:`format_calls`).

        Raises:
            ValueError: a tool name cannot be written, or ``ids`` does not match ``calls``.
        """
        if ids and len(ids) != len(calls):
            raise ValueError("give one id per call, or none")
        if not calls:  # no calls write nothing, not an empty array
            return ""
        items = []
        for index, (tool_name, args) in enumerate(calls):
            _check_name(tool_name)
            item = f'{{"name": {_json(tool_name)}, "arguments": {_json(dict(args))}'
            if ids:
                item += f', "id": {_json(ids[index])}'
            items.append(item + "}")
        return f"{TOOL_CALLS} [{', '.join(items)}]"

    def _instructions(self) -> str:
        return "mistral_instructions"


register(MistralDialect().record())
