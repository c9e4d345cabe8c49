"""The incremental JSON scanner: the same marks however the text is cut, linear work."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_parser.core import COMPILED
from stream_parser.core import _json_scan as json_scan
from stream_parser.core._json_scan import JsonMark, JsonScanner
from tests.helpers import splits


def scan(chunks: list[str], *, keep_text: bool = True) -> list[JsonMark]:
    scanner = JsonScanner(keep_text=keep_text)
    marks: list[JsonMark] = []
    for chunk in chunks:
        marks.extend(scanner.feed(chunk))
    marks.extend(scanner.close())
    return marks


def scan_all_ways(text: str, *, keep_text: bool = True) -> list[JsonMark]:
    """Marks of ``text`` fed whole; checks every other cut gives the same."""
    reference = scan([text], keep_text=keep_text)
    assert scan(list(text), keep_text=keep_text) == reference, "one char at a time differs"
    for cut in range(len(text) + 1):
        got = scan(splits(text, [cut]), keep_text=keep_text)
        assert got == reference, f"split at {cut} differs"
    if len(text) < 30:
        for a in range(1, len(text)):
            for b in range(a + 1, len(text)):
                got = scan(splits(text, [a, b]), keep_text=keep_text)
                assert got == reference, f"split {a},{b} differs"
    for mark in reference:
        if mark.text is not None:
            assert mark.text == text[mark.start : mark.end]
    return reference


def kinds(marks: list[JsonMark]) -> list[str]:
    return [m.kind for m in marks]


def parts(marks: list[JsonMark]) -> list[tuple[str | None, Any]]:
    """(key, decoded value) of each member / element."""
    return [
        (m.key, json.loads(m.text or "null", strict=False))
        for m in marks
        if m.kind in ("member", "element")
    ]


OBJECTS = [
    (
        '{"a": 1, "b": "x\\"y", "c": [1, {"d": "]}"}], "e": true}',
        [("a", 1), ("b", 'x"y'), ("c", [1, {"d": "]}"}]), ("e", True)],
    ),
    ('{"back\\\\": "\\\\", "u": "\\u00e9\\ud83d\\ude00"}', [("back\\", "\\"), ("u", "é😀")]),
    ('{"n": -12.5e3,"t":false,"z":null}', [("n", -12.5e3), ("t", False), ("z", None)]),
    (' \n{ "a" :\t{ } , "b" : [ ] }\r\n', [("a", {}), ("b", [])]),
    ('{"raw": "line\nbreak", "k\\u0041": 2}', [("raw", "line\nbreak"), ("kA", 2)]),
]


@pytest.mark.parametrize(("text", "expected"), OBJECTS)
def test_members_of_an_object(text: str, expected: list[tuple[str, Any]]) -> None:
    marks = scan_all_ways(text)
    assert parts(marks) == expected
    assert kinds(marks)[0] == "start" and kinds(marks)[-1] == "end"
    assert [m.key for m in marks if m.kind == "key"] == [k for k, _ in expected]
    assert [m.index for m in marks if m.kind == "member"] == list(range(len(expected)))
    end = marks[-1]
    assert text[end.start] == "{" and text[end.end - 1] == "}"
    assert not any(m.kind == "error" for m in marks)


def test_value_start_comes_before_its_member_at_the_value() -> None:
    text = '{"name": "f", "arguments": {"p": "a"}}'
    marks = scan_all_ways(text)
    starts = [m for m in marks if m.kind == "value_start"]
    assert [(m.key, text[m.start]) for m in starts] == [("name", '"'), ("arguments", "{")]
    members = [m for m in marks if m.kind == "member"]
    assert [m.start for m in members] == [m.start for m in starts]
    assert marks.index(starts[1]) < marks.index(members[1])


def test_elements_of_an_array() -> None:
    text = '[1, "a,]", [2, [3]], {"k": "}"}, true , null]'
    marks = scan_all_ways(text)
    assert [v for _, v in parts(marks)] == json.loads(text)
    assert all(k is None for k, _ in parts(marks))
    assert kinds(marks).count("value_start") == 6


@pytest.mark.parametrize("text", ["{}", "[]", " { } ", "[\n]"])
def test_empty_containers(text: str) -> None:
    marks = scan_all_ways(text)
    assert kinds(marks) == ["start", "end"]
    assert text[marks[-1].end - 1] in "}]"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("true", True),
        ("  12.5e3 ", 12.5e3),
        ("7\u00a0", 7),
        ('"a\\"b"', 'a"b'),
        ("null\n", None),
        ("-0", 0),
    ],
)
def test_a_scalar_at_the_top_level(text: str, value: object) -> None:
    marks = scan_all_ways(text)
    assert kinds(marks) == ["start", "end"]
    assert json.loads(marks[-1].text or "") == value


def test_what_follows_the_value_is_not_scanned() -> None:
    scanner = JsonScanner()
    marks = scanner.feed('{"a": 1} {"b": "')
    assert kinds(marks)[-1] == "end" and marks[-1].end == 8
    assert scanner.done and not scanner.in_string
    assert scanner.feed('"x') == []
    assert scanner.position == len('{"a": 1} {"b": "') + 2


def test_in_string_and_depth_follow_the_text() -> None:
    scanner = JsonScanner()
    states = []
    for c in '{"a\\"": ["}", {"b": 1}]}':
        scanner.feed(c)
        states.append((scanner.in_string, scanner.depth))
    assert states[1] == (True, 1)  # after the opening quote of the key
    assert states[4] == (True, 1)  # after the escaped quote
    assert states[5] == (False, 1)
    assert states[9] == (True, 2)  # after the quote before "}"
    assert states[10] == (True, 2)  # "}" inside the string does not close
    assert max(d for _, d in states) == 3
    assert scanner.done and scanner.depth == 0


def test_a_backslash_at_the_end_of_a_chunk() -> None:
    scanner = JsonScanner()
    assert scanner.feed('{"k": "a\\') == [
        JsonMark("start", 0, 0),
        JsonMark("key", 1, 4, "k", '"k"', 0),
        JsonMark("value_start", 6, 6, "k", None, 0),
    ]
    assert scanner.in_string
    marks = scanner.feed('"b"}')
    assert scanner.done
    assert marks[0] == JsonMark("member", 6, 12, "k", '"a\\"b"', 0)


def test_a_literal_cut_by_a_chunk() -> None:
    assert scan(["[tr", "ue,fa", "lse]"]) == scan(["[true,false]"])
    assert parts(scan(["[tr", "ue,fa", "lse]"])) == [(None, True), (None, False)]
    # A literal at the top level ends with the text.
    assert scan(["12", "3"])[-1] == JsonMark("end", 0, 3, text="123")


def test_without_text() -> None:
    text = '{"a": [1, 2], "b": "x"}'
    marks = scan_all_ways(text, keep_text=False)
    with_text = scan([text])
    assert [(m.kind, m.start, m.end, m.key) for m in marks] == [
        (m.kind, m.start, m.end, m.key) for m in with_text
    ]
    assert all(m.text is None for m in marks if m.kind != "key")


@pytest.mark.parametrize(
    ("text", "at"),
    [
        ("x", 0),
        ("  <a>", 2),
        ('{"a" 1}', 5),
        ('{"a": 1,}', 8),
        ('{"a": 1 "b": 2}', 8),
        ('{"a": 1]', 7),
        ("[1,,2]", 3),
        ("[1 2]", 3),
        ('{1: "a"}', 1),
        ('{"a"::1}', 5),
        ('{"a": }', 6),
        ("[1, {]", None),  # cut short: reported when the text ends
    ],
)
def test_malformed_json_never_raises(text: str, at: int | None) -> None:
    marks = scan_all_ways(text)
    errors = [m for m in marks if m.kind == "error"]
    assert len(errors) == 1 and errors[0].reason
    assert errors[0].start == (len(text) if at is None else at)


def test_the_scanner_stops_on_what_cannot_start_json() -> None:
    scanner = JsonScanner()
    assert kinds(scanner.feed(' <x "')) == ["error"]
    assert scanner.error and not scanner.in_string
    assert scanner.feed('{"a": 1}') == [] and not scanner.done


def test_after_an_error_strings_are_still_followed() -> None:
    scanner = JsonScanner()
    scanner.feed('{"a" "}')
    assert scanner.error and scanner.in_string and not scanner.done
    scanner.feed('" }')
    assert scanner.done


def test_close() -> None:
    assert kinds(scan([""])) == ["error"]
    assert kinds(scan(['{"a": "b'])) == ["start", "key", "value_start", "error"]
    assert scan(["  "])[0].reason == "no JSON value"
    scanner = JsonScanner()
    scanner.feed("[]")
    assert scanner.close() == []


# --- generated values ----------------------------------------------------------------------

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(10**6), 10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(_VALUES, max_size=5) | st.dictionaries(st.text(max_size=6), _VALUES, max_size=5),
    st.booleans(),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_generated_values_in_random_chunks(
    value: list[Any] | dict[str, Any], indent: bool, ascii_only: bool, rnd: random.Random
) -> None:
    text = json.dumps(value, indent=2 if indent else None, ensure_ascii=ascii_only)
    cuts = sorted(rnd.sample(range(1, len(text)), min(len(text) - 1, rnd.randint(0, 12))))
    marks = scan(splits(text, cuts))
    assert marks == scan([text])
    got = parts(marks)
    if isinstance(value, dict):
        assert got == list(value.items())
    else:
        assert [v for _, v in got] == value
    assert kinds(marks)[-1] == "end" and marks[-1].end == len(text)
    assert not any(m.kind == "error" for m in marks)


# --- linear work ---------------------------------------------------------------------------


class _CountingPattern:
    """Wraps a compiled regex and counts its searches."""

    def __init__(self, pattern: Any, counter: list[int]) -> None:
        self._pattern = pattern
        self._counter = counter

    def search(self, text: str, pos: int = 0) -> Any:
        self._counter[0] += 1
        return self._pattern.search(text, pos)


def _document(members: int) -> str:
    value = {
        f"k{i}": {"s": 'a "quoted" \\ value}' * 3, "l": [i, True, None, {"x": "]"}]}
        for i in range(members)
    }
    return json.dumps(value)


def _chunks(text: str, seed: int) -> list[str]:
    rnd = random.Random(seed)
    out, i = [], 0
    while i < len(text):
        step = rnd.randint(1, 8)
        out.append(text[i : i + step])
        i += step
    return out


def _searches(text: str, monkeypatch: pytest.MonkeyPatch) -> int:
    counter = [0]
    for name in ("_STRING_STOP", "_NESTED_STOP", "_LITERAL_END", "_NON_WS"):
        pattern = getattr(json_scan, name)
        monkeypatch.setattr(json_scan, name, _CountingPattern(pattern, counter))
    marks = scan(_chunks(text, 1))
    monkeypatch.undo()
    assert kinds(marks)[-1] == "end"
    return counter[0]


@pytest.mark.skipif(
    COMPILED, reason="counts the searches by patching the module, which a compiled one forbids"
)
def test_the_work_grows_linearly(monkeypatch: pytest.MonkeyPatch) -> None:
    small, large = _document(20), _document(200)
    ratio = _searches(large, monkeypatch) / _searches(small, monkeypatch)
    size_ratio = len(large) / len(small)
    assert 0.8 * size_ratio < ratio < 1.2 * size_ratio


def test_only_the_current_member_is_held() -> None:
    text = json.dumps({f"k{i}": "v" * (i % 50) + '\\"' for i in range(25_000)})
    assert len(text) > 1_000_000
    scanner = JsonScanner()
    largest_held = 0
    for chunk in _chunks(text, 2):
        scanner.feed(chunk)
        largest_held = max(largest_held, scanner.retained)
    assert scanner.done
    assert largest_held <= 60


# --- skipped chunks --------------------------------------------------------------------------


def scan_plain(chunks: list[str], *, keep_text: bool = True) -> tuple[list[JsonMark], int]:
    """Like :func:`scan`, but each chunk that ``skip`` takes is not fed."""
    scanner = JsonScanner(keep_text=keep_text)
    marks: list[JsonMark] = []
    plain = 0
    for chunk in chunks:
        if scanner.skip(chunk):
            plain += 1
        else:
            marks.extend(scanner.feed(chunk))
    marks.extend(scanner.close())
    return marks, plain


@settings(max_examples=80, deadline=None)
@given(
    st.lists(_VALUES, max_size=5) | st.dictionaries(st.text(max_size=6), _VALUES, max_size=5),
    st.booleans(),
    st.randoms(use_true_random=False),
)
def test_skipped_chunks_scan_as_fed(
    value: list[Any] | dict[str, Any], keep_text: bool, rnd: random.Random
) -> None:
    text = json.dumps(value, ensure_ascii=False)
    cuts = sorted(rnd.sample(range(1, len(text)), min(len(text) - 1, rnd.randint(0, 20))))
    chunks = splits(text, cuts)
    marks, _ = scan_plain(chunks, keep_text=keep_text)
    assert marks == scan([text], keep_text=keep_text)


# Documents with runs of backslashes, escaped quotes and brackets inside strings.
BACKSLASH_DOCUMENTS = [
    r'{"a": "x\\\"y\\ and some more", "b": [{"c": "\\ plain"}, "] plain"], "d": "text"}',
    r'["\\\\\\ abc", {"k": "v\"}\" long enough"}, "end\\ of it"]',
]


@pytest.mark.parametrize("text", BACKSLASH_DOCUMENTS)
def test_skipped_chunks_around_backslashes(text: str) -> None:
    json.loads(text)  # a valid document
    reference = scan_all_ways(text)
    for size in range(1, 6):
        chunks = [text[i : i + size] for i in range(0, len(text), size)]
        marks, plain = scan_plain(chunks)
        assert marks == reference
        assert plain > 0  # some chunks were skipped
    assert scan_plain(list(text))[0] == reference


# --- a scanner that follows another one's skips ------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(
    st.lists(_VALUES, max_size=5) | st.dictionaries(st.text(max_size=6), _VALUES, max_size=5),
    st.randoms(use_true_random=False),
)
def test_a_follower_scans_as_its_leader(
    value: list[Any] | dict[str, Any], rnd: random.Random
) -> None:
    text = json.dumps(value, ensure_ascii=False)
    cuts = sorted(rnd.sample(range(1, len(text)), min(len(text) - 1, rnd.randint(0, 20))))
    leader, follower = JsonScanner(keep_text=False), JsonScanner(keep_text=False)
    leader_marks: list[JsonMark] = []
    follower_marks: list[JsonMark] = []
    for chunk in splits(text, cuts):
        # A follower holding a slice is shown every chunk; another one some chunks.
        shown = follower.holds_slice or rnd.random() < 0.3
        if shown:
            assert follower.follow(leader)  # first what it was not shown
        if leader.skip(chunk):
            if shown:
                assert follower.skip(chunk)
            continue  # else the follower never sees it
        assert follower.follow(leader)
        assert follower.position == leader.position
        leader_marks += leader.feed(chunk)
        follower_marks += follower.feed(chunk)
    assert follower.follow(leader)
    leader_marks += leader.close()
    follower_marks += follower.close()
    assert follower_marks == leader_marks == scan([text], keep_text=False)


def follow_marks(chunks: list[str]) -> list[JsonMark]:
    """The marks of a scanner shown only the chunks its leader cannot skip."""
    leader, follower = JsonScanner(keep_text=False), JsonScanner(keep_text=False)
    marks: list[JsonMark] = []
    for chunk in chunks:
        if follower.holds_slice:
            assert follower.follow(leader)
            if leader.skip(chunk):
                assert follower.skip(chunk)
                continue
        elif leader.skip(chunk):
            continue
        assert follower.follow(leader)
        leader.feed(chunk)
        marks += follower.feed(chunk)
    assert follower.follow(leader)
    return marks + follower.close()


@pytest.mark.parametrize("text", BACKSLASH_DOCUMENTS)
def test_a_follower_around_backslashes(text: str) -> None:
    json.loads(text)  # a valid document
    reference = scan([text], keep_text=False)
    for size in range(1, 6):
        assert follow_marks([text[i : i + size] for i in range(0, len(text), size)]) == reference


def test_a_scanner_holding_a_key_does_not_follow() -> None:
    leader, follower = JsonScanner(keep_text=False), JsonScanner(keep_text=False)
    for scanner in (leader, follower):
        scanner.feed('{"ke')
    assert follower.holds_slice
    assert leader.skip("y")
    assert not follower.follow(leader)  # the key's text would be missing
    assert follower.position == 4
    assert follower.skip("y") and follower.follow(leader)
    assert follower.feed('": 1}') == leader.feed('": 1}')


def test_scanners_in_different_places_do_not_follow() -> None:
    a, b = JsonScanner(keep_text=False), JsonScanner(keep_text=False)
    a.feed('{"k": "x')
    b.feed('{"k": [')
    assert a.skip("yz")
    assert not b.follow(a)  # one is in a string, the other in a list
    assert b.position == 7
    assert not a.follow(b)  # nor does a scanner follow one behind it
