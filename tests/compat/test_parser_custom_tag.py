"""``CustomTagPlugin``: any ``<tag>...</tag>`` as an event of the user's choosing.

Each input runs whole, one character at a time and split at every position.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import pytest

from stream_parser import (
    CodeBlockEvent,
    ConfigError,
    CustomTagPlugin,
    ParseEvent,
    ParserConfig,
    StreamToolParser,
    TagDeltaEvent,
    TextOutputEvent,
)
from stream_parser.core.events import Span
from tests.helpers import assert_all_splittings, feed_all
from tests.tools_fixture import TOOLS, ReadFile, summary


@dataclass(frozen=True, slots=True, kw_only=True)
class NoteEvent(ParseEvent):
    """The user's own block event."""

    TILES: ClassVar[bool] = True
    content: str
    span: Span = (0, 0)
    kind: Literal["note"] = "note"


def note(content: str, span: Span) -> NoteEvent:
    return NoteEvent(content=content.strip(), span=span)


def parser(**config: Any) -> StreamToolParser:
    plugin = CustomTagPlugin("note", event_factory=note)
    return StreamToolParser(TOOLS, config=ParserConfig(**config), plugins=[plugin])


def test_a_tag_becomes_the_users_event_with_deltas() -> None:
    text = "a <note> remember a < b </note> c"
    events = assert_all_splittings(parser, text)
    assert events == [
        TextOutputEvent(text="a ", span=(0, 2)),
        TagDeltaEvent(tag="note", delta=" remember a < b ", span=(8, 24)),
        NoteEvent(content="remember a < b", span=(2, 31)),
        TextOutputEvent(text=" c", span=(31, 33)),
    ]


def test_without_deltas() -> None:
    text = "<note>x</note>"
    assert assert_all_splittings(lambda: parser(emit_deltas=False), text) == [
        NoteEvent(content="x", span=(0, 14))
    ]
    plugin = CustomTagPlugin("<note>", event_factory=note, emit_deltas=False)
    events = feed_all(StreamToolParser(TOOLS, plugins=[plugin]), [text])
    assert events == [NoteEvent(content="x", span=(0, 14))]


def test_beside_tool_calls_and_an_unclosed_block() -> None:
    text = "<note>1</note><read_file><path>p</path></read_file><note>cut"
    events = assert_all_splittings(parser, text)
    assert summary(events) == [
        ("tag_delta",),
        ("note",),
        ("start", "read_file"),
        ("param", "path", "p"),
        ("call", "read_file", ReadFile(path="p")),
        ("tag_delta",),
        ("error", "unclosed_block"),
        ("text", "<note>cut"),
    ]


def test_two_tags_and_a_builtin_event() -> None:
    plugins = [
        CustomTagPlugin("note", event_factory=note),
        CustomTagPlugin(
            "sql", event_factory=lambda c, s: CodeBlockEvent(code=c, language="sql", span=s)
        ),
    ]
    text = "<sql>select 1</sql><note>n</note>"
    events = assert_all_splittings(lambda: StreamToolParser(TOOLS, plugins=plugins), text)
    assert [e.kind for e in events] == ["tag_delta", "code_block", "tag_delta", "note"]
    assert events[1] == CodeBlockEvent(code="select 1", language="sql", span=(0, 19))


def test_an_event_with_another_span_is_a_config_error_naming_the_tag() -> None:
    plugin = CustomTagPlugin("note", event_factory=lambda c, s: NoteEvent(content=c))
    p = StreamToolParser(TOOLS, plugins=[plugin])
    with pytest.raises(ConfigError, match="'note'"):
        p.feed("<note>x</note>")


@pytest.mark.parametrize("tag", ["", "two words", "<a", "a>b", "1x"])
def test_a_tag_that_is_not_a_name(tag: str) -> None:
    with pytest.raises(ConfigError):
        CustomTagPlugin(tag, event_factory=note)


def test_a_tag_claimed_twice() -> None:
    with pytest.raises(ConfigError):
        StreamToolParser(TOOLS, plugins=[CustomTagPlugin("read_file", event_factory=note)])
