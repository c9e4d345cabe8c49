"""What the family dialect tests share: the token split, checked events and their summaries.

Every family test reads a text under every chunking through the library's own helper
(:func:`stream_parser.testing.check_chunkings`, the reader of
:func:`~stream_parser.testing.check_dialect`), with its tokenizer's split besides, and
then asks the same questions of the merged events: which calls ran, which errors were
reported, what text came out. A tokenizer streams each special marker as one token; the
text between markers arrives either word by word or in short runs, and each family test
picks the split its tokenizer resembles.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel

from stream_parser import (
    ParseErrorEvent,
    ParseEvent,
    ParserConfig,
    StreamToolParser,
    TextOutputEvent,
    ToolCallEvent,
)
from stream_parser.testing import check_chunkings, merge_deltas
from stream_parser.testing.fixtures import TOOLS


def tokens(markers: re.Pattern[str], text: str, *, words: bool = False) -> list[str]:
    """``text`` cut as a tokenizer would: each match of ``markers`` one token.

    The text between markers is cut word by word (each non-word character alone) when
    ``words`` is true, else in runs of three characters.

    >>> tokens(re.compile(r"<m>"), "ab cd<m>efgh")
    ['ab ', 'cd', '<m>', 'efg', 'h']
    >>> tokens(re.compile(r"<m>"), "ab cd<m>efgh", words=True)
    ['ab', ' ', 'cd', '<m>', 'efgh']
    """
    out: list[str] = []
    pos = 0

    def rest(piece: str) -> None:
        if words:
            out.extend(t for t in re.split(r"(\W)", piece) if t)
        else:
            out.extend(piece[i : i + 3] for i in range(0, len(piece), 3))

    for m in markers.finditer(text):
        rest(text[pos : m.start()])
        if m.group():
            out.append(m.group())
        pos = m.end()
    rest(text[pos:])
    return out


def checked_events(
    make: Callable[[], Any],
    text: str,
    pieces: list[str],
    message: str = "token-level split differs",
) -> list[ParseEvent]:
    """Merged events of ``text``, the same under every chunking and ``pieces``; spans checked."""
    return check_chunkings(make, text, more=[(f"({message})", pieces)])


def calls(events: list[ParseEvent]) -> list[tuple[str, Any]]:
    """The calls that ran: name and validated instance, in order."""
    return [(e.tool_name, e.tool_instance) for e in events if isinstance(e, ToolCallEvent)]


def errors(events: list[ParseEvent]) -> list[str]:
    """The error types reported, in order."""
    return [e.error_type for e in events if isinstance(e, ParseErrorEvent)]


def text_of(events: list[ParseEvent]) -> str:
    """All text output, joined."""
    return "".join(e.text for e in events if isinstance(e, TextOutputEvent))


# The tools the rendered family fixtures call: the shared ones, and the two that the chat
# templates' own examples use.
class GetWeather(BaseModel):
    location: str
    unit: str | None = None


class GetCurrentTime(BaseModel):
    pass


FAMILY_TOOLS: dict[str, type[BaseModel]] = {
    **TOOLS,
    "get_weather": GetWeather,
    "get_current_time": GetCurrentTime,
}
"""``stream_parser.testing.fixtures.TOOLS`` with ``get_weather`` and ``get_current_time``."""


def read(
    dialect: str | tuple[str, ...],
    text: str,
    *,
    tools: Mapping[str, type[BaseModel]] = FAMILY_TOOLS,
    **config: Any,
) -> list[ParseEvent]:
    """The merged events of ``text`` fed whole to a parser of ``dialect`` (and ``config``)."""
    parser = StreamToolParser(dict(tools), config=ParserConfig(dialect=dialect, **config))
    return merge_deltas(parser.feed(text) + parser.close())


def read_calls(
    dialect: str | tuple[str, ...],
    text: str,
    *,
    tools: Mapping[str, type[BaseModel]] = FAMILY_TOOLS,
    **config: Any,
) -> list[tuple[str, dict[str, Any]]]:
    """The calls that ran in ``text`` read whole: name and arguments as a dict, in order."""
    return [
        (e.tool_name, e.tool_instance.model_dump())
        for e in read(dialect, text, tools=tools, **config)
        if isinstance(e, ToolCallEvent)
    ]
