"""``Dialect.format_calls``: a turn's calls, written as the model writes them, read back.

For every built-in dialect (and each writer variant: DeepSeek V3, V3.1 and DSML, Kimi
K2 and K3), the text ``format_calls`` writes reads back as exactly those calls, in
order, with nothing around or between them but framing: no text, no error, no thinking.
A fixed three-call turn runs under every chunking (``check_chunkings``) in the fast
suite; the hypothesis property runs whole here, and under every chunking when slow.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from stream_parser import (
    FramingEvent,
    ParseEvent,
    ParserConfig,
    StreamToolParser,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolParamDeltaEvent,
)
from stream_parser.dialects import DIALECTS, Dialect, deepseek, get_dialect
from stream_parser.dialects.deepseek import DeepSeekDialect
from stream_parser.dialects.kimi import KimiDialect, format_k2_calls, format_k3_calls
from stream_parser.dialects.mistral import MistralDialect
from stream_parser.testing import check_chunkings, dialect_markers
from tests.tools_fixture import TOOLS

Calls = Sequence[tuple[str, Mapping[str, Any]]]

# Each writer, under the dialect name whose parser reads it.
WRITERS: dict[str, tuple[str, Dialect]] = {
    **{name: (name, get_dialect(name)) for name in sorted(DIALECTS)},
    "deepseek v3": ("deepseek", DeepSeekDialect("v3")),
    "deepseek dsml": ("deepseek", DeepSeekDialect("dsml")),
    "kimi k3": ("kimi", KimiDialect("k3")),
}

# Events a written turn may make besides its calls.
_CALL_PARTS = (ToolCallStartEvent, ToolArgumentsDeltaEvent, ToolParamDeltaEvent, ToolCallEvent)


def _parser(name: str) -> Callable[[], StreamToolParser]:
    return functools.partial(StreamToolParser, TOOLS, config=ParserConfig(dialect=name))


def _check_read_back(name: str, calls: Calls, events: list[ParseEvent]) -> None:
    others = [e for e in events if not isinstance(e, (*_CALL_PARTS, FramingEvent))]
    assert others == [], f"{name}: more than calls and framing: {others}"
    got = [(e.tool_name, e.tool_instance) for e in events if isinstance(e, ToolCallEvent)]
    assert got == [(tool, TOOLS[tool].model_validate(args)) for tool, args in calls]


def _read_whole(name: str, text: str) -> list[ParseEvent]:
    parser = _parser(name)()
    return [*parser.feed(text), *parser.close()]


TURN: list[tuple[str, dict[str, Any]]] = [
    ("read_file", {"path": "a.py"}),
    ("search", {"query": "x y", "max_results": 3, "tags": ["t"]}),
    ("read_file", {"path": "b"}),
]


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_a_turn_of_calls_reads_back_under_every_chunking(writer: str) -> None:
    name, dialect = WRITERS[writer]
    text = dialect.format_calls(TURN)
    make = _parser(name)
    events = check_chunkings(make, text, markers=dialect_markers(ParserConfig(dialect=name)))
    _check_read_back(writer, TURN, events)


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_one_call_is_written_as_format_call_writes_it(writer: str) -> None:
    _, dialect = WRITERS[writer]
    assert dialect.format_calls([TURN[0]]) == dialect.format_call(*TURN[0])


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_no_calls_write_nothing(writer: str) -> None:
    name, dialect = WRITERS[writer]
    assert dialect.format_calls([]) == ""
    assert _read_whole(name, dialect.format_calls([])) == []


def test_the_other_writers_of_a_turn_write_nothing_for_no_calls() -> None:
    assert format_k2_calls([]) == "" and format_k3_calls([]) == ""
    assert MistralDialect().format_calls_v3([]) == ""
    assert MistralDialect().format_calls_v3(TURN[:1]).startswith("[TOOL_CALLS] [")


def test_the_default_joins_the_calls_by_the_separator() -> None:
    hermes = get_dialect("hermes")
    assert type(hermes).format_calls is Dialect.format_calls
    assert hermes.format_calls(TURN) == "\n".join(hermes.format_call(*c) for c in TURN)
    gpt_oss = get_dialect("gpt_oss")
    assert gpt_oss.call_separator == ""
    assert gpt_oss.format_calls(TURN) == "".join(gpt_oss.format_call(*c) for c in TURN)


def test_formats_of_one_structure_write_the_turn_in_it() -> None:
    two = TURN[:2]
    assert get_dialect("xlam").format_calls(two).count("[{") == 1
    kimi = get_dialect("kimi").format_calls(two)
    assert kimi.count("<|tool_calls_section_begin|>") == 1
    assert "functions.read_file:0" in kimi and "functions.search:1" in kimi
    k3 = KimiDialect("k3").format_calls(two)
    assert k3.count("<|open|>tools") == 1 and 'index="2"' in k3
    assert get_dialect("deepseek").format_calls(two).count(deepseek.CALLS_BEGIN) == 1
    assert DeepSeekDialect("dsml").format_calls(two).count("function_calls>") == 2
    assert get_dialect("minimax_m2").format_calls(two).count("<minimax:tool_call>") == 1
    assert get_dialect("pythonic").format_calls(two).count("<|tool_call_start|>") == 1


# Values of the test tools' arguments: short, with the characters formats quote or mark.
_text = st.text(alphabet="ab é\"'{}[],:<>/\\", min_size=1, max_size=8).filter(
    lambda s: s.strip() == s
)
_call = st.one_of(
    st.builds(lambda path: ("read_file", {"path": path}), _text),
    st.builds(
        lambda query, count, tags: (
            "search",
            {"query": query, "max_results": count, "tags": tags},
        ),
        _text,
        st.integers(min_value=-5, max_value=10**6),
        st.lists(_text, max_size=2),
    ),
    st.builds(
        lambda command, ask: ("execute_command", {"command": command, "requires_approval": ask}),
        _text,
        st.booleans(),
    ),
)
_turns = st.lists(_call, min_size=1, max_size=3)


def _written(dialect: Dialect, calls: Calls) -> str:
    try:
        return dialect.format_calls(calls)
    except ValueError:  # a value the format cannot carry: refused, not written wrong
        assume(False)
        raise


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.parametrize("writer", sorted(WRITERS))
@given(calls=_turns)
def test_any_turn_reads_back_whole(writer: str, calls: Calls) -> None:
    name, dialect = WRITERS[writer]
    _check_read_back(writer, calls, _read_whole(name, _written(dialect, calls)))


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@pytest.mark.parametrize("writer", sorted(WRITERS))
@given(calls=_turns)
def test_any_turn_reads_back_under_every_chunking(writer: str, calls: Calls) -> None:
    name, dialect = WRITERS[writer]
    text = _written(dialect, calls)
    markers = dialect_markers(ParserConfig(dialect=name))
    _check_read_back(writer, calls, check_chunkings(_parser(name), text, markers=markers))
