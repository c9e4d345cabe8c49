"""The kimi markers, reasoning format and the helpers K2 and K3 share."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Final

from ...core.kit import (
    ThinkingFormat,
    tag_stop,
)

if TYPE_CHECKING:
    pass


# --- K2 markers ------------------------------------------------------------------------
SECTION_BEGIN: Final = "<|tool_calls_section_begin|>"


SECTION_END: Final = "<|tool_calls_section_end|>"


# The singular spelling: some K2 checkpoints and servers write it.
SECTION_BEGIN_SINGULAR: Final = "<|tool_call_section_begin|>"


SECTION_END_SINGULAR: Final = "<|tool_call_section_end|>"


CALL_BEGIN: Final = "<|tool_call_begin|>"


ARGUMENT_BEGIN: Final = "<|tool_call_argument_begin|>"


CALL_END: Final = "<|tool_call_end|>"


# --- K3 markers ------------------------------------------------------------------------
OPEN: Final = "<|open|>"


CLOSE: Final = "<|close|>"


SEP: Final = "<|sep|>"


K3_CALL_OPEN: Final = OPEN + "call"


K3_CALL_CLOSE: Final = CLOSE + "call" + SEP


_ARG_OPEN: Final = OPEN + "argument"


_ARG_CLOSE: Final = CLOSE + "argument" + SEP


_JSON_OPEN: Final = OPEN + "json"


_JSON_CLOSE: Final = CLOSE + "json" + SEP


# What an element's value must not hold for the fast path: its closing marker, whole or
# cut by the end of the chunk.
_ARG_CLOSE_STOP: Final = tag_stop((_ARG_CLOSE,))


_JSON_CLOSE_STOP: Final = tag_stop((_JSON_CLOSE,))


_K3_RUN_STOP: Final = "<"
"""Every marker begins with it: a value's chunk without one is all value."""


K2_FRAMING_TAGS: Final = (
    SECTION_BEGIN,
    SECTION_END,
    SECTION_BEGIN_SINGULAR,
    SECTION_END_SINGULAR,
    "<|im_end|>",
)
"""K2 markup that is neither text nor a call: the tool-call section and the end of turn.

A section is read whole, its calls included, by ``KimiK2SectionPlugin``; an end marker
that no opener came before is framing by itself.
"""


K3_FRAMING_TAGS: Final = (
    OPEN + "tools" + SEP,
    CLOSE + "tools" + SEP,
    OPEN + "response" + SEP,
    CLOSE + "response" + SEP,
    CLOSE + "message" + SEP,
    "<|end_of_msg|>",
)
"""K3 channel markup around the reply's text and calls, and the end of the message.

``<|open|>tools<|sep|>`` is read by ``KimiK3SectionPlugin`` (a cut call when nothing follows it).
"""


KIMI_THINKING: Final = ThinkingFormat(
    (("<think>", "</think>"), (OPEN + "think" + SEP, CLOSE + "think" + SEP)),
    bare_close=True,
)
"""K2's ``<think>…</think>`` and K3's think channel; the template may open either."""


MAX_HEADER: Final = 1024
"""The longest call header (K2 id, K3 attributes) read before the call is malformed."""


_WS: Final = " \t\r\n"


_DECODER: Final = json.JSONDecoder(strict=False)  # lenient: models write raw control chars


_ATTR: Final = re.compile(r'([A-Za-z_][\w.-]*)="([^"]*)"')


_INDEX: Final = re.compile(r"[0-9]+")


_SANITISED: Final = re.compile(r"functions_([A-Za-z0-9_.-]+?)_[0-9]+")


def _unescape(value: str) -> str:
    """An XTML attribute value: the template escapes ``"`` and ``&`` only."""
    return value.replace("&quot;", '"').replace("&amp;", "&")


def _escape(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;")


def k2_tool_name(header: str) -> str | None:
    r"""The tool a K2 call header names, or None when it names none.

    Example:
        >>> k2_tool_name(" functions.read_file:3 \n"), k2_tool_name("read_file:0")
        ('read_file', 'read_file')
        >>> k2_tool_name("functions_read_file_3")
        'read_file'
        >>> k2_tool_name("functions.a b:0") is None
        True
    """
    name = header.strip(_WS)
    sanitised = _SANITISED.fullmatch(name)
    if sanitised:  # functions_NAME_IDX: an id a client rewrote, echoed back by the model
        return sanitised.group(1)
    if name.startswith("functions."):
        name = name[len("functions.") :]
    head, colon, index = name.rpartition(":")
    if colon and _INDEX.fullmatch(index):
        name = head
    if not name or any(c in name for c in " \t\r\n<>\"'{}"):
        return None
    return name


_NOT_WS: Final = re.compile(r"[^ \t\r\n]")


def _decode_json(text: str, start: int = 0) -> tuple[object, str]:
    """One JSON value and nothing else in ``text[start:]``, or why not.

    Read in place (no copy of the text: a 1 MB argument is not held twice).
    """
    first = _NOT_WS.search(text, start)
    try:
        value, end = _DECODER.raw_decode(text, len(text) if first is None else first.start())
    except (ValueError, RecursionError) as exc:
        return None, f"is not valid JSON ({exc})"
    rest = _NOT_WS.search(text, end)
    if rest is not None:
        return None, f"has text after its JSON value: {text[rest.start() : rest.start() + 20]!r}"
    return value, ""
