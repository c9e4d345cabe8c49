"""mistral: ``[TOOL_CALLS]NAME[ARGS]{...}`` (v11+) and ``[TOOL_CALLS] [{...}]`` (v3).

Every stream goes through ``assert_all_splittings`` (whole, one character at a time,
split at every position) and a token-level split where each of the format's markers
is one token, as Mistral's tokenizers stream them.  No cut or malformed call ever
yields a ``ToolCallEvent``.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from stream_parser import (
    ChatDelta,
    FramingEvent,
    ParseErrorEvent,
    ParseEvent,
    ParserConfig,
    StreamToolParser,
    ThinkingEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
)
from stream_parser.agent import ReActAgent
from stream_parser.dialects import get_dialect
from stream_parser.dialects.mistral import MistralDialect
from stream_parser.testing import ScriptedModel, check_dialect
from stream_parser.tools import tool
from tests.dialects import support
from tests.dialects.test_dialects import check_spans
from tests.helpers import ENDINGS, run, splits
from tests.tools_fixture import TOOLS, ReadFile

MISTRAL = MistralDialect()
_SOME = settings(max_examples=30, deadline=None)
_MARKERS = re.compile(r"\[TOOL_CALLS\]|\[ARGS\]|\[CALL_ID\]|\[THINK\]|\[/THINK\]")


class GetWeather(BaseModel):
    location: str
    unit: str = "celsius"


class AddNumbers(BaseModel):
    a: int
    b: int


FIXTURE_TOOLS: dict[str, type[BaseModel]] = {
    **TOOLS,
    "get_weather": GetWeather,
    "add_numbers": AddNumbers,
}


def factory(**config: Any) -> Any:
    cfg = ParserConfig(dialect="mistral", **config)
    return lambda: StreamToolParser(FIXTURE_TOOLS, config=cfg)


def tokens(text: str) -> list[str]:
    """The text as a Mistral tokenizer streams it: each marker one token, else 3 chars."""
    return support.tokens(_MARKERS, text)


def events_of(text: str, **config: Any) -> list[ParseEvent]:
    """Merged events, the same under every chunking and the token split; spans checked."""
    return support.checked_events(
        factory(**config), text, tokens(text), "the token-level split differs"
    )


def calls(events: list[ParseEvent]) -> list[tuple[str, BaseModel, int]]:
    return [
        (e.tool_name, e.tool_instance, e.call_index) for e in events if isinstance(e, ToolCallEvent)
    ]


errors = support.errors


text_of = support.text_of


# --- v11 and later: [TOOL_CALLS]NAME[ARGS]{...} ------------------------------------------


def test_v11_call_with_text_before_and_after() -> None:
    text = 'Let me look.[TOOL_CALLS]read_file[ARGS]{"path": "src/app.py"} Done.'
    events = events_of(text)
    assert [e.kind for e in events] == [
        "text",
        "tool_call_start",
        "tool_arguments_delta",
        "tool_call",
        "text",
    ]
    assert calls(events) == [("read_file", ReadFile(path="src/app.py"), 0)]
    assert text_of(events) == "Let me look. Done."
    start = next(e for e in events if isinstance(e, ToolCallStartEvent))
    assert text[start.span[0] : start.span[1]] == "read_file"
    delta = next(e for e in events if isinstance(e, ToolArgumentsDeltaEvent))
    assert delta.delta == '{"path": "src/app.py"}'
    call = next(e for e in events if isinstance(e, ToolCallEvent))
    assert call.raw == '[TOOL_CALLS]read_file[ARGS]{"path": "src/app.py"}'


def test_v11_parallel_calls_with_ids_and_text_between() -> None:
    text = (
        '[TOOL_CALLS]get_weather[CALL_ID]a1b2c3d4e[ARGS]{"location": "Paris"}'
        " and "
        '[TOOL_CALLS]get_weather[CALL_ID]f5g6h7i8j[ARGS]{"location": "Lyon", "unit": "F"}'
    )
    events = events_of(text)
    assert calls(events) == [
        ("get_weather", GetWeather(location="Paris"), 0),
        ("get_weather", GetWeather(location="Lyon", unit="F"), 1),
    ]
    assert [e.call_id for e in events if isinstance(e, ToolCallEvent)] == [
        "a1b2c3d4e",
        "f5g6h7i8j",
    ]
    assert [e.call_id for e in events if isinstance(e, ToolCallStartEvent)] == [
        "a1b2c3d4e",
        "f5g6h7i8j",
    ]
    assert text_of(events) == " and"  # the space before the second call is framing


def test_v11_name_followed_by_its_object_directly() -> None:
    events = events_of('[TOOL_CALLS]add_numbers{"a": 1, "b": 2}')
    assert calls(events) == [("add_numbers", AddNumbers(a=1, b=2), 0)]


def test_v11_markers_and_brackets_inside_strings_are_content() -> None:
    path = 'x[TOOL_CALLS]y[ARGS]{"z": ]}\\"[/THINK]'
    text = f"[TOOL_CALLS]read_file[ARGS]{json.dumps({'path': path})}tail"
    events = events_of(text)
    assert calls(events) == [("read_file", ReadFile(path=path), 0)]
    assert text_of(events) == "tail"


def test_v11_unknown_tool_is_delivered_as_text() -> None:
    text = '[TOOL_CALLS]delete_all[ARGS]{"force": true} ok'
    events = events_of(text)
    assert errors(events) == ["unknown_tool"]
    assert calls(events) == []
    assert text_of(events) == text
    assert not any(isinstance(e, ToolCallStartEvent) for e in events)


def test_v11_invalid_arguments() -> None:
    text = '[TOOL_CALLS]add_numbers[ARGS]{"a": "one", "b": 2}'
    events = events_of(text)
    assert errors(events) == ["invalid_params"]
    assert calls(events) == []
    assert text_of(events) == text
    error = next(e for e in events if isinstance(e, ParseErrorEvent))
    assert error.call_index == 0 and error.details


@pytest.mark.parametrize(
    ("text", "rest"),
    [
        ('[TOOL_CALLS]read file[ARGS]{"path": "a"}', ' file[ARGS]{"path": "a"}'),
        ('[TOOL_CALLS]read_file[ARG]{"path": "a"}', ']{"path": "a"}'),
        ("[TOOL_CALLS]read_file[ARGS]hello", "hello"),
        ('[TOOL_CALLS]read_file[CALL_ID]ab[CALL_ID]{"path": "a"}', "C"),
        ('[TOOL_CALLS]"read_file"[ARGS]{}', '"read_file"[ARGS]{}'),
    ],
)
def test_v11_broken_layout_is_malformed_and_ends_the_block(text: str, rest: str) -> None:
    events = events_of(text)
    assert errors(events) == ["malformed_tool"]
    assert calls(events) == []
    assert text_of(events) == text
    # The block ends at the first character that cannot continue the layout.
    error = next(e for e in events if isinstance(e, ParseErrorEvent))
    assert text[error.span[1] :].startswith(rest[:1])


def test_v11_invalid_json_is_malformed() -> None:
    text = '[TOOL_CALLS]read_file[ARGS]{"path": tru}'
    events = events_of(text)
    assert errors(events) == ["malformed_tool"]
    assert calls(events) == []


def test_a_v11_call_cut_anywhere_never_runs() -> None:
    whole = '[TOOL_CALLS]read_file[CALL_ID]a1b2c3d4e[ARGS]{"path": "a}b"}'
    for cut in range(len("[TOOL_CALLS]") + 1, len(whole)):
        prefix = whole[:cut]
        events = events_of(prefix) if cut % 7 == 0 else run(factory(), [prefix])
        assert calls(events) == [], prefix
        assert errors(events) == ["unclosed_tool"], prefix
        assert text_of(events) == prefix


# --- v3: [TOOL_CALLS] [{...}, ...] ----------------------------------------------------------


def test_v3_parallel_calls_in_one_array() -> None:
    text = (
        "[TOOL_CALLS] ["
        '{"name": "get_weather", "arguments": {"location": "Paris"}, "id": "a1b2c3d4e"}, '
        '{"name": "add_numbers", "arguments": {"a": 2, "b": 40}, "id": "f5g6h7i8j"}]'
        "\nThat is all."
    )
    events = events_of(text)
    assert calls(events) == [
        ("get_weather", GetWeather(location="Paris"), 0),
        ("add_numbers", AddNumbers(a=2, b=40), 1),
    ]
    framing = [e.text for e in events if isinstance(e, FramingEvent)]
    assert framing == ["[TOOL_CALLS] [", ", ", "]", "\n"]  # and the line break after the calls
    assert text_of(events) == "That is all."
    deltas = [e.delta for e in events if isinstance(e, ToolArgumentsDeltaEvent)]
    assert deltas == ['{"location": "Paris"}', '{"a": 2, "b": 40}']


def test_v3_lone_object_without_its_array() -> None:
    text = '[TOOL_CALLS] {"name": "read_file", "arguments": {"path": "a.py"}}'
    events = events_of(text)
    assert calls(events) == [("read_file", ReadFile(path="a.py"), 0)]


def test_v3_brackets_and_markers_inside_strings() -> None:
    path = '], [TOOL_CALLS] {"name": "x"}'
    text = f'[TOOL_CALLS][{{"name": "read_file", "arguments": {json.dumps({"path": path})}}}]'
    events = events_of(text)
    assert calls(events) == [("read_file", ReadFile(path=path), 0)]
    assert text_of(events) == ""


def test_v3_each_element_has_its_own_outcome() -> None:
    text = (
        '[TOOL_CALLS] [{"name": "nope", "arguments": {}}, '
        '{"name": "add_numbers", "arguments": {"a": 1}}, '
        '{"name": "add_numbers", "arguments": {"a": 1, "b": 2}}]'
    )
    events = events_of(text)
    assert errors(events) == ["unknown_tool", "invalid_params"]
    assert calls(events) == [("add_numbers", AddNumbers(a=1, b=2), 2)]
    assert text_of(events) == (
        '{"name": "nope", "arguments": {}}{"name": "add_numbers", "arguments": {"a": 1}}'
    )


@pytest.mark.parametrize(
    "text",
    [
        "[TOOL_CALLS] []",
        '[TOOL_CALLS] [{"name": "read_file", "arguments": {"path": "a"}},]',
        '[TOOL_CALLS] [, {"name": "read_file", "arguments": {"path": "a"}}]',
    ],
)
def test_v3_broken_array_is_malformed_and_runs_nothing(text: str) -> None:
    events = events_of(text)
    assert errors(events) == ["malformed_tool"]
    assert calls(events) == []
    assert text_of(events) == text


def test_v3_an_element_that_is_not_a_call_is_malformed() -> None:
    text = '[TOOL_CALLS] [{"name": "read_file", "arguments": [1]}] x'
    events = events_of(text)
    assert errors(events) == ["malformed_tool"]
    assert calls(events) == []


def test_v3_commas_inside_strings_and_nested_values_do_not_end_an_element() -> None:
    path = 'a, "b", [c, d], {e: f}\\'
    first = {"name": "read_file", "arguments": {"path": path}, "id": "x,y"}
    second = '{"name": "add_numbers", "arguments": {"a": 1, "b": 2}, "tags": [[1, 2], {"k": ","}]}'
    text = f"[TOOL_CALLS] [{json.dumps(first)},{second}]"
    events = events_of(text)
    assert calls(events) == [
        ("read_file", ReadFile(path=path), 0),
        ("add_numbers", AddNumbers(a=1, b=2), 1),
    ]
    assert [e.text for e in events if isinstance(e, FramingEvent)] == ["[TOOL_CALLS] [", ",", "]"]
    spans = [e.span for e in events if isinstance(e, ToolCallEvent)]
    assert [text[a:b] for a, b in spans] == [json.dumps(first), second]


def test_v3_text_between_an_element_and_its_comma_belongs_to_the_element() -> None:
    # What follows an element up to the comma at the array's own level is part of it
    # (strings and brackets in it included), so the element is malformed; the next one runs.
    first = '{"name": "read_file", "arguments": {"path": "a"}} junk "x, y" {"k": [1, 2]}'
    text = f'[TOOL_CALLS] [{first}, {{"name": "add_numbers", "arguments": {{"a": 1, "b": 2}}}}]'
    events = events_of(text)
    assert errors(events) == ["malformed_tool"]
    assert calls(events) == [("add_numbers", AddNumbers(a=1, b=2), 1)]
    assert text_of(events) == first


def test_a_v3_array_cut_anywhere_runs_none_of_its_calls() -> None:
    whole = (
        '[TOOL_CALLS] [{"name": "read_file", "arguments": {"path": "a"}}, '
        '{"name": "read_file", "arguments": {"path": "b]"}}]'
    )
    for cut in range(len("[TOOL_CALLS] ") + 1, len(whole)):
        prefix = whole[:cut]
        events = run(factory(), [prefix])
        assert calls(events) == [], prefix
        assert errors(events) == ["unclosed_tool"], prefix
        assert text_of(events) == prefix
    events_of(whole[:70])


# --- both ------------------------------------------------------------------------------------


def test_reply_that_is_only_reasoning() -> None:
    text = "[THINK]The user only says hi; no tool is needed.[/THINK]"
    events = events_of(text)
    thinking = [e.content for e in events if isinstance(e, ThinkingEvent)]
    assert thinking == ["The user only says hi; no tool is needed."]
    assert text_of(events) == "" and calls(events) == []


def test_reasoning_then_calls_of_both_layouts() -> None:
    text = (
        "[THINK]a plan: read a, then b[/THINK]"
        '[TOOL_CALLS]read_file[ARGS]{"path": "a"}'
        '[TOOL_CALLS] [{"name": "read_file", "arguments": {"path": "b"}}]'
    )
    events = events_of(text)
    assert [e.content for e in events if isinstance(e, ThinkingEvent)] == ["a plan: read a, then b"]
    assert calls(events) == [
        ("read_file", ReadFile(path="a"), 0),
        ("read_file", ReadFile(path="b"), 1),
    ]


def test_user_thinking_tags_replace_the_dialects() -> None:
    cfg = ParserConfig(dialect="mistral", thinking_tags=(("<think>", "</think>"),))
    parser = StreamToolParser(FIXTURE_TOOLS, config=cfg)
    events = parser.feed("[THINK]x[/THINK]<think>y</think>") + parser.close()
    assert [e.content for e in events if isinstance(e, ThinkingEvent)] == ["y"]


def test_a_marker_in_prose_stays_text() -> None:
    text = "Mistral writes `[TOOL_CALLS]` before its calls."
    events = events_of(text)
    assert text_of(events) == text and errors(events) == []


def test_a_call_over_max_tool_size() -> None:
    text = '[TOOL_CALLS]read_file[ARGS]{"path": "' + "a" * 80 + '"} after'
    events = events_of(text, max_tool_size=40)
    assert "tool_too_large" in errors(events)
    assert calls(events) == []


# --- writing ---------------------------------------------------------------------------------


def test_format_call_writes_the_v11_template_layout() -> None:
    assert MISTRAL.format_call("get_weather", {"location": "Paris"}) == (
        '[TOOL_CALLS]get_weather[ARGS]{"location": "Paris"}'
    )
    with pytest.raises(ValueError):
        MISTRAL.format_call("get weather", {})


def test_format_calls_v3_writes_the_array() -> None:
    text = MISTRAL.format_calls_v3([("add_numbers", {"a": 1, "b": 2})], ids=["a1b2c3d4e"])
    assert text == (
        '[TOOL_CALLS] [{"name": "add_numbers", "arguments": {"a": 1, "b": 2}, "id": "a1b2c3d4e"}]'
    )
    assert calls(events_of(text)) == [("add_numbers", AddNumbers(a=1, b=2), 0)]
    with pytest.raises(ValueError):
        MISTRAL.format_calls_v3([("add_numbers", {})], ids=["a", "b"])


@_SOME
@given(st.text(max_size=12), st.integers(), st.integers())
def test_round_trip(path: str, a: int, b: int) -> None:
    text = MISTRAL.format_call("read_file", {"path": path}) + MISTRAL.format_call(
        "add_numbers", {"a": a, "b": b}
    )
    events = run(factory(), [text])
    assert calls(events) == [
        ("read_file", ReadFile(path=path), 0),
        ("add_numbers", AddNumbers(a=a, b=b), 1),
    ]
    assert run(factory(), tokens(text)) == events
    v3 = MISTRAL.format_calls_v3([("read_file", {"path": path}), ("add_numbers", {"a": a, "b": b})])
    assert calls(run(factory(), list(v3))) == calls(events)


def test_usage_instructions() -> None:
    dialect = get_dialect("mistral")
    assert dialect is not None and dialect.name == "mistral"
    en = dialect.usage_instructions("read_file", {"path": "a.py"})
    assert '[TOOL_CALLS]read_file[ARGS]{"path": "a.py"}' in en and "[ARGS]" in en.split("\n")[0]
    zh = dialect.usage_instructions("read_file", {"path": "a.py"}, language="zh")
    assert zh != en and '[TOOL_CALLS]read_file[ARGS]{"path": "a.py"}' in zh


def test_format_call_reads_back_values_full_of_markup() -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search", {"query": "a < b && c", "max_results": 3, "tags": ["x", "[TOOL_CALLS]"]}),
        ("write_to_file", {"path": "a.py", "content": 'x = {"a": [1]}\nprint("[ARGS]}")\n'}),
        ("execute_command", {"command": "echo '[/THINK]\\'", "requires_approval": True}),
    ]
    text = "\n".join(MISTRAL.format_call(tool, args) for tool, args in calls)
    got = [e.tool_instance for e in events_of(text) if isinstance(e, ToolCallEvent)]
    assert got == [FIXTURE_TOOLS[tool].model_validate(args) for tool, args in calls]
    v3 = MISTRAL.format_calls_v3(calls)
    got = [e.tool_instance for e in run(factory(), tokens(v3)) if isinstance(e, ToolCallEvent)]
    assert got == [FIXTURE_TOOLS[tool].model_validate(args) for tool, args in calls]


_PIECES = [
    "[TOOL_CALLS]",
    "[ARGS]",
    "[CALL_ID]",
    "[THINK]",
    "[/THINK]",
    "read_file",
    '"name": "read_file"',
    '"arguments": ',
    '{"path": "a"}',
    "{",
    "}",
    "[",
    "]",
    '"',
    "\\",
    ",",
    " ",
    "\n",
    "`",
    "x",
    "7",
]


@_SOME
@given(
    st.lists(st.sampled_from(_PIECES), max_size=14),
    st.lists(st.integers(0, 200), max_size=3),
    st.sampled_from(ENDINGS),
)
def test_any_mix_of_markup_is_read_the_same_however_cut(
    pieces: list[str], cuts: list[int], end: ChatDelta | None
) -> None:
    # Nothing raises, nothing is lost, and the chunking changes nothing, whatever the
    # model wrote and however the reply ends; every call that runs is a whole block of
    # its text.
    text = "".join(pieces)
    whole = run(factory(), [text], end)
    check_spans(whole, text)
    assert run(factory(), list(text), end) == whole
    cut = sorted({c % (len(text) + 1) for c in cuts})
    assert run(factory(), splits(text, cut), end) == whole
    for event in whole:
        if isinstance(event, ToolCallEvent):
            assert event.tool_name in FIXTURE_TOOLS


def _v11_big(n: int) -> str:
    body = ('x = \\"]}[TOOL_CALLS]\\"\\n' * (n // 24 + 1))[:n].rstrip("\\")
    return MISTRAL.format_call("write_to_file", {"path": "a", "content": "c"}).replace(
        '"c"', f'"{body}"'
    )


def _v3_many(n: int) -> str:
    return MISTRAL.format_calls_v3([("read_file", {"path": "a]"})] * (n // 50))


@pytest.mark.slow
@pytest.mark.parametrize("make", [_v11_big, _v3_many], ids=["v11_long_value", "v3_many_calls"])
def test_time_is_linear_in_the_size_of_the_calls(make: Any) -> None:
    times = []
    for n in (40_000, 160_000):
        text = make(n)
        chunks = [text[i : i + 16] for i in range(0, len(text), 16)]
        best = float("inf")
        for _ in range(3):
            parser = factory()()
            t0 = time.perf_counter()
            events = [e for chunk in chunks for e in parser.feed(chunk)] + parser.close()
            best = min(best, time.perf_counter() - t0)
        assert any(isinstance(e, ToolCallEvent) for e in events) and not errors(events)
        times.append(best)
    small, large = times
    # Linear: about 4x.  Quadratic would be about 16x.
    assert large < 8 * small + 0.02, (small, large)


def test_an_agent_runs_a_mistral_reply() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    model = ScriptedModel(['[THINK]Sum them.[/THINK][TOOL_CALLS]add[ARGS]{"a": 2, "b": 3}', "5"])
    agent = ReActAgent(model, [add], dialect="mistral")
    assert '[TOOL_CALLS]example_tool[ARGS]{"parameter_name": "value"}' in agent.system_prompt()
    run = agent.run_sync("2 + 3?")
    assert "5" in str(run.messages[-2]["content"])
    assert run.messages[-1]["content"] == "5"


# --- fixtures: replies as the chat templates render them, and the servers' failure cases -----

_CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).parent.parent / "fixtures" / "dialects" / "mistral" / "cases.json").read_text(
        encoding="utf-8"
    )
)


@pytest.mark.parametrize("case", _CASES, ids=[c["name"] for c in _CASES])
def test_fixture_cases(case: dict[str, Any]) -> None:
    assert case["source"]
    check_dialect("mistral", [case], tools=FIXTURE_TOOLS)
