"""Whitespace around blocks is framing, in every dialect but XML, as one rule of the core.

The rule (the text reader's "Whitespace framing"): a run of whitespace is framing when a
block opens right after it, and, after the reply's start or a block's end, when the
stream ends after it or prose follows it (up to its last line break).  A block that
turns out to be text (a cut call) takes the whitespace before it back as text.  Text
holds back only its trailing whitespace while the next character decides; a run longer
than ``buffer_keep_size`` is text whatever follows.  The XML dialect keeps its rule 1:
whitespace between blocks is text.  Every stream here is read under every chunking
(:func:`~stream_parser.testing.check_chunkings`), each run lossless.
"""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_parser import (
    FramingEvent,
    ParseEvent,
    ParserConfig,
    StreamToolParser,
    TextOutputEvent,
    ToolCallEvent,
)
from stream_parser.dialects import DIALECTS, get_dialect
from stream_parser.testing import check_chunkings
from stream_parser.testing.fixtures import TOOLS

FRAMED = sorted(name for name in DIALECTS if name != "xml")
"""Every built-in dialect whose whitespace around blocks is framing."""


def _read(dialect: str, text: str, **config: Any) -> list[ParseEvent]:
    parser_config = ParserConfig(dialect=dialect, **config)
    return check_chunkings(functools.partial(StreamToolParser, TOOLS, config=parser_config), text)


def _call(dialect: str) -> str:
    return get_dialect(dialect).format_call("read_file", {"path": "a.py"})


def _texts(events: list[ParseEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, TextOutputEvent)]


def _framing(events: list[ParseEvent]) -> list[str]:
    return [e.text for e in events if isinstance(e, FramingEvent)]


def _calls(events: list[ParseEvent]) -> int:
    return sum(isinstance(e, ToolCallEvent) for e in events)


@pytest.mark.parametrize("dialect", FRAMED)
def test_whitespace_before_and_after_a_call_is_framing(dialect: str) -> None:
    events = _read(dialect, " \n" + _call(dialect) + "\n\nDone.")
    assert _calls(events) == 1
    assert _texts(events) == ["Done."]
    assert "".join(_framing(events)).startswith(" \n")  # before the call


# llama and xlam write an unmarked call, which is a call only where it opens the reply.
@pytest.mark.parametrize("dialect", [d for d in FRAMED if d not in ("llama", "xlam")])
def test_the_space_between_prose_and_a_call_is_framing(dialect: str) -> None:
    events = _read(dialect, "I'll check. " + _call(dialect))
    assert _calls(events) == 1
    assert _texts(events) == ["I'll check."]
    assert _framing(events)[0] == " "


@pytest.mark.parametrize("dialect", FRAMED)
def test_a_reply_of_whitespace_only_is_one_framing_event(dialect: str) -> None:
    events = _read(dialect, " \n\t\n ")
    assert [(e.kind, e.span) for e in events] == [("framing", (0, 5))]


# kimi: the section's opening marker is a block of its own (framing), which stands.
@pytest.mark.parametrize("dialect", [d for d in FRAMED if d not in ("llama", "kimi")])
def test_a_cut_call_comes_back_with_the_whitespace_before_it(dialect: str) -> None:
    call = _call(dialect)
    events = _read(dialect, "Checking. " + call[: len(call) // 2])
    assert _calls(events) == 0
    assert "".join(_texts(events)) == "Checking. " + call[: len(call) // 2]


def test_the_xml_dialect_keeps_whitespace_as_text() -> None:
    text = " \n" + _call("xml") + "\n\nDone. "
    events = _read("xml", text)
    assert _calls(events) == 1 and not _framing(events)
    assert _texts(events) == [" \n", "\n\nDone. "]
    assert _texts(_read("xml", " \n\t ")) == [" \n\t "]


def test_after_a_block_only_line_breaks_are_framing() -> None:
    # The indentation of the prose's first line, and a space on the block's own line,
    # are the prose's.
    call = _call("hermes")
    events = _read("hermes", call + "\n\n    indented")
    assert (_framing(events), _texts(events)) == (["\n\n"], ["    indented"])
    events = _read("hermes", call + " same line")
    assert (_framing(events), _texts(events)) == ([], [" same line"])
    events = _read("hermes", "<think>plan</think>\r\nAnswer.")
    assert (_framing(events), _texts(events)) == (["\r\n"], ["Answer."])


def test_whitespace_inside_and_at_the_end_of_prose_is_text() -> None:
    events = _read("hermes", "One  two\n\nthree.\n")
    assert _texts(events) == ["One  two\n\nthree.\n"] and not _framing(events)


def test_a_run_longer_than_the_hold_is_text() -> None:
    # Past buffer_keep_size the run is text whatever follows, however it was cut.
    call = _call("hermes")
    events = _read("hermes", "Look." + " " * 9 + call, buffer_keep_size=8)
    assert _texts(events) == ["Look." + " " * 9] and _calls(events) == 1
    events = _read("hermes", "Look." + " " * 8 + call, buffer_keep_size=8)
    assert _texts(events) == ["Look."] and _framing(events)[0] == " " * 8


_PROSE = st.text(alphabet="ab.,\u00e9 \t\n\r", max_size=24)


@settings(max_examples=60, deadline=None)
@given(_PROSE, st.sampled_from(FRAMED))
def test_text_holds_only_its_trailing_whitespace(prose: str, dialect: str) -> None:
    # Fed one character at a time, everything but the trailing run of whitespace is
    # delivered at once; the run waits for the character that decides it.
    parser = StreamToolParser(TOOLS, config=ParserConfig(dialect=dialect))
    delivered = 0
    for i, char in enumerate(prose, 1):
        for event in parser.feed(char):
            if event.TILES:
                delivered = max(delivered, event.span[1])
        trailing = len(prose[:i]) - len(prose[:i].rstrip(" \t\n\r"))
        assert parser.pending == prose[i - trailing : i]
        assert delivered == i - trailing


@settings(max_examples=30, deadline=None)
@given(_PROSE)
def test_the_xml_dialect_holds_no_whitespace(prose: str) -> None:
    parser = StreamToolParser(TOOLS)
    for char in prose:
        parser.feed(char)
        assert parser.pending == ""
