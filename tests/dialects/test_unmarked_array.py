"""The unmarked-array rule: an array with no marker is a call only if an element proves one.

Every stream goes through ``assert_all_splittings`` (whole, one character at a time,
split at every position).  An array that proves no call is text, exactly as it came,
with no error; one that does is read as any array of calls, and a cut one never runs.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from hypothesis import given, settings
from hypothesis import strategies as st

from stream_parser import (
    FramingEvent,
    ParseErrorEvent,
    ParserConfig,
    StreamToolParser,
    TextOutputEvent,
    ToolCallEvent,
    ToolCallStartEvent,
)
from stream_parser.core.kit import ReaderPlugin
from stream_parser.dialects.unmarked_array import BareArrayPlugin, UnmarkedArrayReader
from tests.helpers import ENDINGS, assert_all_splittings, feed_all, run, splits
from tests.tools_fixture import TOOLS, ReadFile

CALL_A = '{"name": "read_file", "arguments": {"path": "a"}}'
CALL_B = '{"name": "read_file", "arguments": {"path": "b"}}'


def _parser(**config: Any) -> StreamToolParser:
    return StreamToolParser(TOOLS, config=ParserConfig(**config), plugins=[BareArrayPlugin()])


def _calls(events: list[Any]) -> list[ToolCallEvent]:
    return [e for e in events if isinstance(e, ToolCallEvent)]


def _errors(events: list[Any]) -> list[str]:
    return [e.error_type for e in events if isinstance(e, ParseErrorEvent)]


def _text(events: list[Any]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextOutputEvent))


def test_an_array_of_calls_is_read_element_by_element() -> None:
    text = f"[{CALL_A}, {CALL_B}]\nDone."
    events = assert_all_splittings(_parser, text)
    calls = _calls(events)
    assert [c.tool_instance for c in calls] == [ReadFile(path="a"), ReadFile(path="b")]
    assert [c.call_index for c in calls] == [0, 1]
    starts = [e for e in events if isinstance(e, ToolCallStartEvent)]
    assert [s.call_index for s in starts] == [0, 1]
    assert [e.text for e in events if isinstance(e, FramingEvent)] == ["[", ", ", "]"]
    assert _text(events).strip() == "Done."
    assert not _errors(events)


def test_json_that_is_an_answer_is_text_with_no_error() -> None:
    for text in (
        '[{"name": "Ada", "age": 36}, {"name": "Alan"}]',
        '[{"name": "nope", "arguments": {}}]',  # not a registered tool
        '[{"title": "x", "arguments": {"path": "a"}}]',  # no name
        "[]",
        '[{"name": "read_file", "path": "a"}]',  # a name, but no arguments key
    ):
        events = assert_all_splittings(_parser, text)
        assert not _calls(events) and not _errors(events), text
        assert _text(events) == text


def test_a_list_of_values_is_text_at_once() -> None:
    parser = _parser()
    events = parser.feed("[1, 2, 3")
    assert _text(events) == "[1, 2, 3"  # not held until the array closes
    events += parser.feed("] and [Click here](https://example.com)") + parser.close()
    assert not _errors(events) and not _calls(events)
    events = assert_all_splittings(_parser, "[Click here](https://example.com) for more.")
    assert _text(events) == "[Click here](https://example.com) for more."


def test_an_array_after_prose_is_text() -> None:
    text = f"Here it is: [{CALL_A}]"
    events = assert_all_splittings(_parser, text)
    assert not _calls(events) and _text(events) == text


def test_once_an_element_proves_a_call_every_element_has_its_outcome() -> None:
    text = f'[{{"a": 1}}, {CALL_A}, {{"name": "nope", "arguments": {{}}}}]'
    events = assert_all_splittings(_parser, text)
    assert [c.tool_instance for c in _calls(events)] == [ReadFile(path="a")]
    assert _errors(events) == ["malformed_tool", "unknown_tool"]
    text = f"[{CALL_A}, 42]"
    events = assert_all_splittings(_parser, text)
    assert [c.tool_instance for c in _calls(events)] == [ReadFile(path="a")]
    assert _errors(events) == ["malformed_tool"]


def test_a_cut_call_array_never_runs_and_a_cut_answer_is_text() -> None:
    for end in ENDINGS:
        events = run(_parser, [f"[{CALL_A}, " + '{"name": "read_file", "argu'], end)
        assert not _calls(events)
        assert "unclosed_tool" in _errors(events)  # (and the reply's own cut, if any)
        events = run(_parser, ['[{"name": "Ada", "tags": ["a'], end)
        assert not _calls(events) and "unclosed_tool" not in _errors(events)
        assert _text(events) == '[{"name": "Ada", "tags": ["a'


def test_an_oversized_answer_is_text_and_an_oversized_call_an_error() -> None:
    answer = '[{"name": "Ada", "bio": "' + "x" * 300 + '"}]'
    events = run(lambda: _parser(max_tool_size=100), splits(answer, [50, 150]))
    assert not _errors(events) and _text(events) == answer
    call = '[{"name": "read_file", "arguments": {"path": "' + "x" * 300 + '"}}]'
    events = run(lambda: _parser(max_tool_size=100), splits(call, [50, 150]))
    assert not _calls(events)
    assert _errors(events) == ["tool_too_large"]


class _Fenced(UnmarkedArrayReader):
    until_end_tag: ClassVar[bool] = True


class _Tagged(UnmarkedArrayReader):
    unmarked: ClassVar[bool] = False
    until_end_tag: ClassVar[bool] = True


class _FencePlugin(ReaderPlugin):
    name = "fence_test"
    start_tags: tuple[str, ...] = ("<calls>",)
    end_tag = "</calls>"
    next_chars = "[{"
    reader = _Fenced
    reserve_index = False


class _TagPlugin(_FencePlugin):
    name = "tag_test"
    reader = _Tagged


def _fenced() -> StreamToolParser:
    return StreamToolParser(TOOLS, plugins=[_FencePlugin()])


def _tagged() -> StreamToolParser:
    return StreamToolParser(TOOLS, plugins=[_TagPlugin()])


def test_an_array_closed_by_an_end_tag() -> None:
    value = '{"name": "read_file", "arguments": {"path": "</calls>"}}'
    for factory in (_fenced, _tagged):
        events = assert_all_splittings(factory, f"Go. <calls>\n[{value}]\n</calls> ok")
        assert [c.tool_instance for c in _calls(events)] == [ReadFile(path="</calls>")]
        assert not _errors(events)


def test_text_after_the_array_or_an_early_end_tag() -> None:
    for text in (f"<calls>[{CALL_A}] and more</calls>", f"<calls>[{CALL_A}, </calls>"):
        events = assert_all_splittings(_tagged, text)
        assert not _calls(events) and _errors(events) == ["malformed_tool"]
        assert _text(events) == text
    events = assert_all_splittings(_fenced, '<calls>[{"a": 1}] note</calls>')
    assert not _errors(events) and _text(events) == '<calls>[{"a": 1}] note</calls>'


# --- the property: JSON that makes no call comes back as text, exactly ------------------

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
_KEYS = st.sampled_from(["name", "arguments", "parameters", "path", "x"]) | st.text(max_size=5)
_NAMES = st.sampled_from(["read_file", "search", "nope", "Ada"])
_VALUES = st.recursive(
    _SCALARS | _NAMES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)


def _proves_a_call(element: object) -> bool:
    if not isinstance(element, dict):
        return False
    has_arguments = "arguments" in element or "parameters" in element
    name = element.get("name")
    return has_arguments and isinstance(name, str) and name in TOOLS


@settings(max_examples=60, deadline=None)
@given(
    elements=st.lists(_VALUES, max_size=4),
    indent=st.sampled_from([None, 1]),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=4),
    after=st.sampled_from(["", " Done.", "\n[1]"]),
)
def test_json_that_makes_no_call_is_text_exactly(
    elements: list[Any], indent: int | None, cuts: list[int], after: str
) -> None:
    if any(_proves_a_call(e) for e in elements):
        return
    text = json.dumps(elements, indent=indent) + after
    for chunks in (splits(text, sorted(c for c in cuts if c <= len(text))), list(text)):
        events = feed_all(_parser(), chunks)
        assert not _calls(events) and not _errors(events)
        assert _text(events) == text
