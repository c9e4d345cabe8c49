"""The one array reader on its own: a plugin that runs it after a marker of its own.

Every stream goes through ``assert_all_splittings`` (whole, one character at a time,
split at every position).  A cut or broken array never yields a ``ToolCallEvent``, and
its raw text is always delivered.
"""

from __future__ import annotations

import pytest

from stream_parser import (
    FramingEvent,
    ParseErrorEvent,
    ParseEvent,
    StreamToolParser,
    TextOutputEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
)
from stream_parser.core.kit import ReaderPlugin
from stream_parser.dialects.json_array import JsonArrayReader
from tests.helpers import assert_all_splittings, feed_all
from tests.tools_fixture import TOOLS, ReadFile


class _ArrayPlugin(ReaderPlugin):
    """The array after ``<calls>``, no end marker: the reader ends the block."""

    name = "array_test"
    start_tags: tuple[str, ...] = ("<calls>",)
    end_tag = ""
    reader = JsonArrayReader
    reserve_index = False


def _parser() -> StreamToolParser:
    return StreamToolParser(TOOLS, plugins=[_ArrayPlugin()])


def test_two_elements_are_two_calls_with_the_text_after_them() -> None:
    text = (
        '<calls>[{"name": "read_file", "arguments": {"path": "a"}}, '
        '{"name": "read_file", "arguments": {"path": "b,]"}}] ok'
    )
    events = assert_all_splittings(_parser, text)
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [c.tool_instance for c in calls] == [ReadFile(path="a"), ReadFile(path="b,]")]
    assert [c.call_index for c in calls] == [0, 1]
    assert isinstance(events[-1], TextOutputEvent)
    assert events[-1].text.strip() == "ok"
    assert any(isinstance(e, FramingEvent) and e.text.strip() == "," for e in events)


def test_a_lone_object_is_one_call() -> None:
    text = '<calls> {"name": "read_file", "arguments": {"path": "x"}}'
    events = assert_all_splittings(_parser, text)
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [c.tool_instance for c in calls] == [ReadFile(path="x")]


def test_a_trailing_comma_is_one_error_and_no_call() -> None:
    text = '<calls>[{"name": "read_file", "arguments": {"path": "a"}},] after'
    events = assert_all_splittings(_parser, text)
    assert not [e for e in events if isinstance(e, ToolCallEvent)]
    errors = [e for e in events if isinstance(e, ParseErrorEvent)]
    assert len(errors) == 1
    assert "empty element" in errors[0].message


@pytest.mark.parametrize(
    ("array", "why"),
    [("[]", "the array is empty"), ("[ ]", "the array is empty"), ("[,]", "empty element")],
)
def test_an_empty_array_says_so(array: str, why: str) -> None:
    events = assert_all_splittings(_parser, f"<calls>{array} after")
    assert not [e for e in events if isinstance(e, ToolCallEvent)]
    errors = [e for e in events if isinstance(e, ParseErrorEvent)]
    assert len(errors) == 1
    assert why in errors[0].message


def test_anything_but_an_array_after_the_marker_is_an_error_with_its_text() -> None:
    events = assert_all_splittings(_parser, "<calls>read_file now")
    assert not [e for e in events if isinstance(e, ToolCallEvent)]
    errors = [e for e in events if isinstance(e, ParseErrorEvent)]
    assert len(errors) == 1
    assert "JSON array" in errors[0].message


def test_an_unknown_tool_is_an_error_and_the_known_one_still_runs() -> None:
    text = (
        '<calls>[{"name": "nope", "arguments": {}}, '
        '{"name": "read_file", "arguments": {"path": "a"}}]'
    )
    events = assert_all_splittings(_parser, text)
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [c.tool_instance for c in calls] == [ReadFile(path="a")]
    assert len([e for e in events if isinstance(e, ParseErrorEvent)]) == 1


def _pieces_read(repeats: int, monkeypatch: pytest.MonkeyPatch) -> int:
    """How many pieces reach the array reader, for a value of ``repeats`` times a phrase."""
    fed: list[str] = []
    feed = JsonArrayReader.feed

    def counting(self: JsonArrayReader, data: str, start: int, out: list[ParseEvent]) -> None:
        fed.append(data)
        feed(self, data, start, out)

    path = "plain words, [brackets] and {braces} " * repeats
    text = (
        f'<calls>[{{"name": "read_file", "arguments": {{"path": "{path}"}}}}, '
        '{"name": "read_file", "arguments": {"path": "b"}}] ok'
    )
    with monkeypatch.context() as patch:
        patch.setattr(JsonArrayReader, "feed", counting)
        events = feed_all(_parser(), [text[i : i + 4] for i in range(0, len(text), 4)])
    calls = [e.tool_instance for e in events if isinstance(e, ToolCallEvent)]
    assert calls == [ReadFile(path=path), ReadFile(path="b")]
    deltas = [e for e in events if isinstance(e, ToolArgumentsDeltaEvent) and e.call_index == 0]
    assert "".join(e.delta for e in deltas) == f'{{"path": "{path}"}}'
    return len(fed)


def test_an_elements_value_streams_without_the_array_reader(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Inside an element's string the element's own reader (and the core) take the chunks:
    # the pieces the array reader reads do not grow with the value.  (Chunks of 4, and
    # values of a length divisible by 4: the same cuts around them.)
    assert _pieces_read(8, monkeypatch) == _pieces_read(80, monkeypatch)


class _MarkedArrayPlugin(ReaderPlugin):
    """The array between ``<calls>`` and ``</calls>``: the end marker may close it early."""

    name = "marked_array_test"
    start_tags: tuple[str, ...] = ("<calls>",)
    end_tag = "</calls>"
    reader = JsonArrayReader
    reserve_index = False


def test_an_end_marker_inside_a_string_is_content() -> None:
    text = '<calls>[{"name": "read_file", "arguments": {"path": "a</calls>b"}}] ok'
    events = assert_all_splittings(
        lambda: StreamToolParser(TOOLS, plugins=[_MarkedArrayPlugin()]), text
    )
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [c.tool_instance for c in calls] == [ReadFile(path="a</calls>b")]


def test_an_end_marker_outside_the_strings_ends_the_block() -> None:
    text = '<calls>[{"name": "read_file", "arguments": {"path": "a"}}</calls> ok'
    events = assert_all_splittings(
        lambda: StreamToolParser(TOOLS, plugins=[_MarkedArrayPlugin()]), text
    )
    assert not any(isinstance(e, ToolCallEvent) for e in events)
    assert [e.error_type for e in events if isinstance(e, ParseErrorEvent)] == ["malformed_tool"]
    assert "".join(e.text for e in events if isinstance(e, TextOutputEvent)).endswith("</calls> ok")


class _BetweenMarkers(JsonArrayReader):
    until_end_tag = True


class _BetweenMarkersPlugin(_MarkedArrayPlugin):
    """The array between ``<calls>`` and ``</calls>``: the end marker closes the block."""

    name = "between_markers_test"
    reader = _BetweenMarkers


def _between() -> StreamToolParser:
    return StreamToolParser(TOOLS, plugins=[_BetweenMarkersPlugin()])


def _kinds(events: list[ParseEvent]) -> list[tuple[str, str]]:
    """Each whole-block event: its kind and text (framing, text) or path (a call)."""
    out = []
    for e in events:
        if isinstance(e, ToolCallEvent):
            out.append(("call", e.tool_instance.path))
        elif isinstance(e, (FramingEvent, TextOutputEvent)):
            out.append((e.kind, e.text))
    return out


def test_until_end_tag_the_block_goes_on_to_its_end_marker() -> None:
    # The array (or a lone object) closes; whitespace after it, and the end marker, are
    # the block's framing; what follows the end marker is text.
    call = '{"name": "read_file", "arguments": {"path": "a"}}'
    for body, framing in (
        (f"[{call}] \n", "<calls>[] \n</calls>"),
        (f"{call}\n", "<calls>\n</calls>"),
    ):
        events = assert_all_splittings(_between, f"<calls>{body}</calls> ok")
        assert not [e for e in events if isinstance(e, ParseErrorEvent)]
        assert "".join(text for kind, text in _kinds(events) if kind == "framing") == framing
        assert [c for kind, c in _kinds(events) if kind == "call"] == ["a"]
        assert _kinds(events)[-1] == ("text", " ok")


def test_until_end_tag_the_end_marker_inside_a_string_is_content() -> None:
    text = '<calls>[{"name": "read_file", "arguments": {"path": "</calls>]"}}]</calls>'
    events = assert_all_splittings(_between, text)
    assert [c for kind, c in _kinds(events) if kind == "call"] == ["</calls>]"]


@pytest.mark.parametrize(
    "text",
    [
        # text between the array and the end marker
        '<calls>[{"name": "read_file", "arguments": {"path": "a"}}] and</calls> ok',
        # the end marker before the array closed
        '<calls>[{"name": "read_file", "arguments": {"path": "a"}}</calls> ok',
        # neither an array nor an object: malformed up to the end marker, not before
        "<calls>read_file</calls> ok",
    ],
)
def test_until_end_tag_a_broken_block_is_one_error_with_its_text(text: str) -> None:
    events = assert_all_splittings(_between, text)
    assert not any(isinstance(e, ToolCallEvent) for e in events)
    errors = [e for e in events if isinstance(e, ParseErrorEvent)]
    assert [e.error_type for e in errors] == ["malformed_tool"]
    assert errors[0].span == (0, len(text) - len(" ok"))  # the block ends at its end marker
    assert "".join(e.text for e in events if isinstance(e, TextOutputEvent)) == text
