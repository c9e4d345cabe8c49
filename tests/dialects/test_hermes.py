"""hermes: one error vocabulary, whatever follows or breaks the JSON object."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_parser import (
    ChatDelta,
    ParseErrorEvent,
    ParseEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
)
from stream_parser.core.config import ParserConfig
from stream_parser.core.kit import CallContext
from stream_parser.dialects.hermes import HermesReader
from stream_parser.testing import check_dialect, merge_deltas
from tests.dialects.test_dialects import HERMES, check_spans, factory
from tests.helpers import assert_all_splittings, feed_all, splits
from tests.tools_fixture import ReadFile

_CALL = '{"name": "read_file", "arguments": {"path": "a"}}'
_SOME = settings(max_examples=60, deadline=None)


def _errors(text: str) -> list[str]:
    events = assert_all_splittings(factory(HERMES), text)
    check_spans(events, text)
    assert not any(isinstance(e, ToolCallEvent) for e in events)
    return [e.error_type for e in events if isinstance(e, ParseErrorEvent)]


@_SOME
@given(st.text(alphabet=st.characters(blacklist_characters="<"), min_size=1, max_size=8))
def test_anything_after_the_object_is_malformed(junk: str) -> None:
    if not junk.strip(" \t\r\n"):
        return  # whitespace before </tool_call> is fine
    assert _errors(f"<tool_call>{_CALL}{junk}</tool_call>") == ["malformed_tool"]


@_SOME
@given(st.integers(min_value=1, max_value=len(_CALL) - 1), st.sampled_from(["", "x", ",", "]"]))
def test_a_cut_or_broken_object_is_malformed(cut: int, insert: str) -> None:
    # The object cut short (with something put in its place) is never valid JSON: the
    # call cannot be read.  (Cut inside a string, the end tag is content of the string
    # and the call stays open.)
    body = _CALL[:cut] + insert
    assert _errors(f"<tool_call>{body}</tool_call>") in (["malformed_tool"], ["unclosed_tool"])


def test_a_call_too_large_is_reported_the_same_however_cut() -> None:
    # The size limit falls on "</" inside a string: the error's span and the text are the
    # same whether the "</" came alone (held as a possible end tag) or with what follows.
    make = factory(HERMES, max_tool_size=40)
    text = '<tool_call>\r\n{"parameters": {"path": "</a'
    events = assert_all_splittings(make, text)
    assert [(e.error_type, e.span) for e in events if isinstance(e, ParseErrorEvent)] == [
        ("tool_too_large", (0, 38))
    ]
    # An end tag that the limit cuts ends the too-large call, and the call after it is read
    # however the stream is cut.
    after = '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>'
    text = '<tool_call>\r\n{"parameters": {"path": "' + "x" * 40 + "</tool_call>then" + after
    events = assert_all_splittings(factory(HERMES, max_tool_size=80), text)
    check_spans(events, text)
    assert [e.tool_name for e in events if isinstance(e, ToolCallEvent)] == ["read_file"]


def test_a_stream_error_follows_the_text_before_it_however_cut() -> None:
    # The "<" at the end is held back when it comes with the text before it (it may begin
    # </tool_call>), and taken at once when it comes alone (inside a string, the end tag
    # is content): the stream error comes after its delta either way, at the end.
    text = '<tool_call>{"name": "write_to_file", "arguments": {"path": "a.py", "content": "<'
    end = ChatDelta(error="connection reset")
    events = assert_all_splittings(factory(HERMES), text, end=end)
    kinds = [e.error_type if isinstance(e, ParseErrorEvent) else e.kind for e in events]
    assert kinds == [
        "tool_call_start",
        "tool_arguments_delta",
        "stream_error",
        "unclosed_tool",
        "text",
    ]
    assert events[2].span == (len(text), len(text))


# --- the structure followed while streaming ---------------------------------------------------


def _events(text: str) -> list[ParseEvent]:
    events = assert_all_splittings(factory(HERMES), text)
    check_spans(events, text)
    return events


def test_content_that_is_not_an_object_is_not_followed() -> None:
    # Not an object: its strings are not followed, so the first end tag closes the call.
    text = '<tool_call>["</tool_call>"]</tool_call>'
    events = _events(text)
    error = next(e for e in events if isinstance(e, ParseErrorEvent))
    assert error.error_type == "malformed_tool"
    assert error.span[1] == text.index("</tool_call>") + len("</tool_call>")


def test_nothing_after_the_object_is_followed() -> None:
    text = f'<tool_call>{_CALL} "</tool_call>"</tool_call>'
    events = _events(text)
    error = next(e for e in events if isinstance(e, ParseErrorEvent))
    assert error.error_type == "malformed_tool"
    assert error.span[1] == text.index("</tool_call>") + len("</tool_call>")
    assert not any(isinstance(e, ToolCallEvent) for e in events)


def test_only_the_first_arguments_are_streamed() -> None:
    text = (
        '<tool_call>{"name": "read_file", "arguments": {"path": "a"}, '
        '"parameters": {"path": "</tool_call>"}}</tool_call>'
    )
    events = _events(text)
    deltas = [e.delta for e in events if isinstance(e, ToolArgumentsDeltaEvent)]
    assert deltas == ['{"path": "a"}']
    assert [e.error_type for e in events if isinstance(e, ParseErrorEvent)] == ["malformed_tool"]
    # The end tag inside the second value's string did not end the call.
    assert events[-1].span[1] == len(text)


@settings(max_examples=40, deadline=None)
@given(
    st.text(alphabet='ab"\\{}[]:,</>tool_call \n\u00e9', max_size=24),
    st.booleans(),
    st.lists(st.integers(min_value=1, max_value=200), max_size=6),
)
def test_generated_arguments_stream_verbatim(path: str, name_first: bool, cuts: list[int]) -> None:
    arguments = json.dumps({"path": path, "n": [1, {"k": path}]})
    members = [f'"name": {json.dumps("read_file")}', f'"arguments": {arguments}']
    if not name_first:
        members.reverse()
    text = "<tool_call>{" + ", ".join(members) + "}</tool_call>"
    chunks = splits(text, sorted({c for c in cuts if c < len(text)}))
    events = merge_deltas(feed_all(factory(HERMES)(), chunks))
    check_spans(events, text)
    deltas = [e.delta for e in events if isinstance(e, ToolArgumentsDeltaEvent)]
    assert deltas == [arguments]
    call = next(e for e in events if isinstance(e, ToolCallEvent))
    assert call.tool_instance == ReadFile(path=path)


# --- what the reader has read (its public accessors) --------------------------------------------


def _reader() -> HermesReader:
    # The converter is never used: only the structure is followed while streaming.
    return HermesReader(CallContext.of({"read_file": ReadFile}, ParserConfig(), 0))


@pytest.mark.parametrize(
    ("pieces", "name", "shaped"),
    [
        (['{"name": "read_fi', "le"], None, False),  # the name's string is still open
        (['{"name": "read_file"'], "read_file", False),  # no arguments key yet
        (['{"name": "re\\u0061d", "parameters": '], "read", True),  # escapes decoded
        (['{"arguments": {"path": "a"}, "na', 'me": "x"'], "x", True),  # any key order
        (['{"arguments": {"name": "inner"}}'], None, False),  # a nested name is not it
        (['{"nam": "x", "argument": {}}'], None, False),
        (['["name", "arguments"]'], None, False),  # not an object
    ],
)
def test_name_and_call_shape_as_the_object_streams(
    pieces: list[str], name: str | None, shaped: bool
) -> None:
    reader = _reader()
    fed = 0
    for piece in pieces:
        reader.feed(piece, fed, [])
        fed += len(piece)
    assert reader.name == name
    assert reader.is_call_shaped is shaped


FIXTURES = Path(__file__).parent.parent / "fixtures" / "dialects"


def test_the_recorded_replies_read_alike_under_every_chunking() -> None:
    events = check_dialect("hermes", FIXTURES / "hermes")
    assert len(events) >= 2
