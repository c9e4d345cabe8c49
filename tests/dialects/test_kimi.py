"""kimi: K2 special-token sections and K3 XTML calls, read under every chunking."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_parser import (
    ChatDelta,
    ParseEvent,
    ParserConfig,
    StreamToolParser,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolParamDeltaEvent,
)
from stream_parser.core._readers.plugin import PluginReader
from stream_parser.core.events import FramingEvent
from stream_parser.dialects import get_dialect
from stream_parser.dialects.kimi import (
    K2_FRAMING_TAGS,
    K3_FRAMING_TAGS,
    KimiDialect,
    format_k2_call,
    format_k3_call,
    k2_tool_name,
)
from stream_parser.testing import check_dialect, merge_deltas
from tests.dialects import support
from tests.helpers import ENDINGS, feed_all, run
from tests.tools_fixture import TOOLS, ReadFile, Search, WriteToFile, summary

KIMI = ("kimi",)
FIXTURES = Path(__file__).parent.parent / "fixtures" / "dialects" / "kimi"
_SOME = settings(max_examples=30, deadline=None)

# Every marker of both formats: a tokenizer emits each as one token.
MARKERS = (
    *K2_FRAMING_TAGS,
    *K3_FRAMING_TAGS,
    "<|tool_call_begin|>",
    "<|tool_call_argument_begin|>",
    "<|tool_call_end|>",
    "<think>",
    "</think>",
    "<|open|>",
    "<|close|>",
    "<|sep|>",
)
_TOKEN = re.compile("(" + "|".join(re.escape(m) for m in sorted(MARKERS, key=len)[::-1]) + ")")


def tokens(text: str) -> list[str]:
    """``text`` cut as a tokenizer would: each marker one token, other text in threes."""
    return support.tokens(_TOKEN, text)


def factory(**config: Any) -> Any:
    """Parsers of the kimi dialect; without reasoning at the start unless told."""
    config.setdefault("start_in_thinking", False)
    cfg = ParserConfig(dialect=KIMI, **config)
    return lambda: StreamToolParser(TOOLS, config=cfg)


def events_of(text: str, **config: Any) -> list[ParseEvent]:
    """Merged events, the same under every chunking, tokens included; spans checked."""
    return support.checked_events(
        factory(**config), text, tokens(text), "the token-level split differs"
    )


def kinds(events: list[ParseEvent]) -> list[tuple[object, ...]]:
    """The summary without framing (which tiles but carries no text) nor thinking deltas."""
    out: list[tuple[object, ...]] = []
    for event, line in zip(events, summary(events), strict=True):
        if isinstance(event, ToolArgumentsDeltaEvent):
            out.append(("args", event.delta))
        elif not isinstance(event, FramingEvent) and event.kind != "thinking_delta":
            out.append(line)
    return out


def read_cut(text: str, cuts: list[int], end: ChatDelta | None) -> list[ParseEvent]:
    """Merged events of ``text``, the same whole, cut at ``cuts`` and one char at a time."""
    whole = run(factory(), [text], end)
    bounds = sorted({min(c, len(text)) for c in cuts})
    chunks = [text[a:b] for a, b in zip([0, *bounds], [*bounds, len(text)], strict=True)]
    assert run(factory(), chunks, end) == whole
    assert run(factory(), list(text), end) == whole
    return whole


errors = support.errors


def k2(name: str, arguments: str, index: int = 0) -> str:
    return (
        f"<|tool_call_begin|>functions.{name}:{index}<|tool_call_argument_begin|>"
        f"{arguments}<|tool_call_end|>"
    )


def section(*calls: str) -> str:
    return "<|tool_calls_section_begin|>" + "".join(calls) + "<|tool_calls_section_end|>"


def k3_call(name: str, index: int, *arguments: tuple[str, str, str]) -> str:
    body = "".join(
        f'<|open|>argument key="{key}" type="{kind}"<|sep|>{value}<|close|>argument<|sep|>'
        for key, kind, value in arguments
    )
    return f'<|open|>call tool="{name}" index="{index}"<|sep|>{body}<|close|>call<|sep|>'


def tools(*calls: str) -> str:
    return "<|open|>tools<|sep|>" + "".join(calls) + "<|close|>tools<|sep|>"


# --- K2 ---------------------------------------------------------------------------------


def test_k2_call_with_text_around() -> None:
    text = "Let me read it." + section(k2("read_file", '{"path": "a.py"}')) + " Done."
    events = events_of(text)
    assert kinds(events) == [
        ("text", "Let me read it."),
        ("start", "read_file"),
        ("args", '{"path": "a.py"}'),
        ("call", "read_file", ReadFile(path="a.py")),
        ("text", " Done."),
    ]
    call = next(e for e in events if isinstance(e, ToolCallEvent))
    assert call.call_id == "functions.read_file:0"
    assert call.raw == k2("read_file", '{"path": "a.py"}')
    framing = [e.text for e in events if isinstance(e, FramingEvent)]
    assert framing == ["<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"]


def test_k2_parallel_calls_keep_their_order_and_ids() -> None:
    text = "A" + section(
        k2("read_file", '{"path": "a"}', 0),
        k2("search", '{"query": "x", "max_results": 2}', 1),
    )
    text += "B" + section(k2("read_file", '{"path": "b"}', 2)) + "C"
    events = events_of(text)
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [(c.tool_instance, c.call_index, c.call_id) for c in calls] == [
        (ReadFile(path="a"), 0, "functions.read_file:0"),
        (Search(query="x", max_results=2), 1, "functions.search:1"),
        (ReadFile(path="b"), 2, "functions.read_file:2"),
    ]
    assert [t for t in kinds(events) if t[0] == "text"] == [
        ("text", "A"),
        ("text", "B"),
        ("text", "C"),
    ]


@pytest.mark.parametrize(
    "header",
    ["read_file:0", "functions.read_file:0\n", " functions.read_file:7 ", "functions.read_file"],
)
def test_k2_header_spellings(header: str) -> None:
    text = (
        f'<|tool_call_begin|>{header}<|tool_call_argument_begin|>{{"path": "p"}}<|tool_call_end|>'
    )
    events = events_of(text)
    assert kinds(events)[-1] == ("call", "read_file", ReadFile(path="p"))


def test_k2_markers_inside_string_values_are_content() -> None:
    content = "a<|tool_call_end|>b<|tool_calls_section_end|>c<|tool_call_begin|>d"
    text = section(k2("write_to_file", json.dumps({"path": "f", "content": content})))
    events = events_of(text)
    assert kinds(events)[-1] == ("call", "write_to_file", WriteToFile(path="f", content=content))


def test_k2_call_without_arguments_and_empty_object() -> None:
    for arguments in ("", "{}", " {} "):
        events = events_of(section(k2("read_file", arguments)))
        assert errors(events) == ["invalid_params"]  # path is required: read, then invalid


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (k2("delete_everything", '{"path": "/"}'), "unknown_tool"),
        (k2("read_file", '{"path": 3}'), "invalid_params"),
        (k2("read_file", '{"path": "a"} trailing'), "malformed_tool"),
        (k2("read_file", '["a"]'), "malformed_tool"),
        (k2("read_file", '{"path": "a",}'), "malformed_tool"),
        (
            '<|tool_call_begin|>functions.read_file:0{"path": "a"}<|tool_call_end|>',
            "malformed_tool",
        ),
        (
            "<|tool_call_begin|>functions.read file:0"
            "<|tool_call_argument_begin|>{}<|tool_call_end|>",
            "malformed_tool",
        ),
    ],
)
def test_k2_calls_that_do_not_run(body: str, error: str) -> None:
    text = "x" + section(body) + "y"
    events = events_of(text)
    assert errors(events) == [error]
    assert not any(isinstance(e, ToolCallEvent) for e in events)
    # The failed call is delivered as text (lossless), the framing is not text.
    assert "".join(e.text for e in events if e.kind == "text") == "x" + body + "y"  # type: ignore[attr-defined]


@pytest.mark.parametrize("cut", [1, 25, 40, 60, 75, 80])
def test_k2_call_cut_by_the_end_of_the_stream_never_runs(cut: int) -> None:
    full = section(k2("read_file", '{"path": "a.py"}'))
    text = "ok " + full[: len("<|tool_calls_section_begin|>") + cut]
    if not text.endswith("|>") and "<|tool_call_begin|>" not in text:
        return  # only the section marker's start: plain text
    events = events_of(text)
    assert not any(isinstance(e, ToolCallEvent) for e in events)
    if "<|tool_call_begin|>" in text:
        assert errors(events) == ["unclosed_tool"]


def test_k2_arguments_stream_as_they_arrive() -> None:
    text = section(k2("search", '{"query": "a b", "tags": ["x"]}'))
    parser = factory()()
    deltas: list[str] = []
    for piece in tokens(text):
        deltas += [e.delta for e in parser.feed(piece) if isinstance(e, ToolArgumentsDeltaEvent)]
    assert len(deltas) > 3  # in pieces, before the call closed
    assert "".join(deltas) == '{"query": "a b", "tags": ["x"]}'


def test_k2_a_section_streams_its_calls_and_ends_them_with_it() -> None:
    # Each call is announced and its arguments stream while it is written; the calls'
    # outcomes come with the section's end marker, which tells its stray text apart.
    text = section(k2("read_file", '{"path": "a"}'), " x ", k2("read_file", '{"path": "b"}', 1))
    parser = factory()()
    seen: list[tuple[str, str]] = []
    for piece in tokens(text):
        seen += [(piece, e.kind) for e in parser.feed(piece) if e.kind != "tool_arguments_delta"]
    seen += [("", e.kind) for e in parser.close()]
    assert [kind for _, kind in seen].count("tool_call_start") == 2
    assert seen.index(("<|tool_call_argument_begin|>", "tool_call_start")) == 0
    ended = [piece for piece, kind in seen if kind == "tool_call"]
    assert ended == ["<|tool_calls_section_end|>"] * 2
    framing = [e.text for e in events_of(text) if isinstance(e, FramingEvent)]
    assert framing == ["<|tool_calls_section_begin|>", " x ", "<|tool_calls_section_end|>"]


def test_k2_nested_arguments_read_the_same_with_and_without_the_fast_path(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Outside a string, a nested value's chunks are the scanner's: the call's end marker
    # must still stop them (the section's block has no end tag of its own).
    content = "a <|tool_call_end|> <|tool_calls_section_end|> b"
    nested = '"deep": [[1, 2], {"k": [3]}]'
    arguments = '{"path": "p", ' + nested + ', "content": ' + json.dumps(content) + "}"
    good = "go " + section(k2("write_to_file", arguments), "stray") + " after"
    # A call cut inside a nested list: its end marker ends it there (malformed).
    cut = section(k2("read_file", '{"path": "a", "x": [1, 2 '), k2("read_file", '{"path": "b"}'))
    for text, failed in ((good, []), (cut, ["malformed_tool"])):
        whole = run(factory(), [text])
        assert errors(whole) == failed and kinds(whole)[-1][0] in ("text", "call")
        with monkeypatch.context() as patch:
            patch.setattr(PluginReader, "fast_path", lambda self: (None, None))
            assert run(factory(), [text]) == whole
        for size in (1, 2, 3, 5, 8):
            chunks = [text[i : i + size] for i in range(0, len(text), size)]
            assert run(factory(), chunks) == whole, size


_STRAY = st.lists(
    st.sampled_from(
        [" ", "\n", "text", "<", "|", ">", "<|", "|>", "<|tool_call", "_end|>", "<b>", "`"]
    ),
    max_size=6,
).map("".join)


@_SOME
@given(
    st.lists(st.tuples(_STRAY, st.text(max_size=4)), min_size=1, max_size=3),
    _STRAY,
    st.lists(st.integers(min_value=0, max_value=300), max_size=4),
    st.sampled_from(ENDINGS),
)
def test_k2_whatever_a_section_holds_besides_its_calls_is_framing(
    parts: list[tuple[str, str]], tail: str, cuts: list[int], end: ChatDelta | None
) -> None:
    calls = [k2("read_file", json.dumps({"path": path}), i) for i, (_, path) in enumerate(parts)]
    body = "".join(stray + call for (stray, _), call in zip(parts, calls, strict=True)) + tail
    text = "Go." + section(body) + "Done."
    whole = read_cut(text, cuts, end)
    got = [e.tool_instance for e in whole if isinstance(e, ToolCallEvent)]
    assert got == [ReadFile(path=path) for _, path in parts]
    assert "".join(e.text for e in whole if e.kind == "text") == "Go.Done."  # type: ignore[attr-defined]
    framing = "".join(e.text for e in whole if isinstance(e, FramingEvent))
    assert framing == section("".join(stray for stray, _ in parts) + tail)


def test_k2_a_section_past_max_tool_size_runs_nothing_of_what_it_read() -> None:
    # The section is one block: its calls count together.  What follows the cut is read
    # as ordinary input, so a call written whole after it still runs.
    big = k2("write_to_file", json.dumps({"path": "f", "content": "x" * 300}), 1)
    text = section(k2("read_file", '{"path": "a"}'), big, k2("read_file", '{"path": "b"}', 2))
    events = events_of(text, max_tool_size=200)
    assert errors(events) == ["tool_too_large"]
    assert support.calls(events) == [("read_file", ReadFile(path="b"))]


# --- K3 ---------------------------------------------------------------------------------


def test_k3_typed_arguments() -> None:
    call = k3_call(
        "search",
        1,
        ("query", "string", " two  words "),
        ("max_results", "number", "3"),
        ("tags", "array", '["a", "b"]'),
    )
    text = "Searching." + tools(call) + "<|close|>message<|sep|>"
    events = events_of(text)
    assert kinds(events) == [
        ("text", "Searching."),
        ("start", "search"),
        ("param", "query", " two  words "),
        ("param", "max_results", "3"),
        ("param", "tags", '["a", "b"]'),
        ("call", "search", Search(query=" two  words ", max_results=3, tags=["a", "b"])),
    ]
    start = next(e for e in events if isinstance(e, ToolCallStartEvent))
    assert start.call_id == "search:1"


def test_k3_parallel_calls_and_the_response_channel() -> None:
    text = (
        "<|open|>response<|sep|>Two reads.<|close|>response<|sep|>"
        + tools(
            k3_call("read_file", 1, ("path", "string", "a")),
            k3_call("read_file", 2, ("path", "string", "b")),
        )
        + "<|close|>message<|sep|><|end_of_msg|>"
    )
    events = events_of(text)
    assert [e.tool_instance for e in events if isinstance(e, ToolCallEvent)] == [
        ReadFile(path="a"),
        ReadFile(path="b"),
    ]
    assert "".join(e.text for e in events if e.kind == "text") == "Two reads."  # type: ignore[attr-defined]


def test_k3_string_values_are_raw_and_may_hold_markup() -> None:
    content = '  line "one" &amp;\n<|close|>call<|sep|><|close|>tools<|sep|>\n'
    text = tools(
        k3_call("write_to_file", 1, ("path", "string", "f"), ("content", "string", content))
    )
    events = events_of(text)
    assert kinds(events)[-1] == ("call", "write_to_file", WriteToFile(path="f", content=content))


def test_k3_json_element_and_attribute_escapes() -> None:
    text = tools(
        '<|open|>call tool="read_file" index="1"<|sep|><|open|>json type="object"<|sep|>'
        '{"path": "say &quot;hi&quot;"}<|close|>json<|sep|><|close|>call<|sep|>'
    )
    events = events_of(text)
    assert kinds(events)[-1] == ("call", "read_file", ReadFile(path="say &quot;hi&quot;"))
    escaped = tools(
        k3_call("read_file", 1, ("path", "string", "x")).replace("read_file", "read&amp;file")
    )
    assert errors(events_of(escaped)) == ["unknown_tool"]


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (k3_call("rm_rf", 1, ("path", "string", "/")), "unknown_tool"),
        (
            k3_call("search", 1, ("query", "string", "q"), ("max_results", "number", "many")),
            "invalid_params",
        ),
        (
            '<|open|>call tool="read_file" index="1"<|sep|>junk<|close|>call<|sep|>',
            "malformed_tool",
        ),
        ('<|open|>call index="1"<|sep|><|close|>call<|sep|>', "malformed_tool"),
        (
            '<|open|>call tool="read_file"<|sep|><|open|>argument key="path" type="string"<|sep|>a'
            '<|close|>argument<|sep|><|open|>json type="object"<|sep|>{}<|close|>json<|sep|>'
            "<|close|>call<|sep|>",
            "malformed_tool",
        ),
        (
            '<|open|>call tool="read_file"<|sep|><|open|>json type="object"<|sep|>[1]'
            "<|close|>json<|sep|><|close|>call<|sep|>",
            "malformed_tool",
        ),
    ],
)
def test_k3_calls_that_do_not_run(call: str, error: str) -> None:
    events = events_of(tools(call))
    assert errors(events) == [error]
    assert not any(isinstance(e, ToolCallEvent) for e in events)


def test_k3_unknown_and_repeated_arguments() -> None:
    call = k3_call(
        "read_file", 1, ("path", "string", "a"), ("mode", "string", "r"), ("path", "string", "b")
    )
    events = events_of(tools(call))
    assert errors(events) == ["unknown_param", "duplicate_param"]
    assert kinds(events)[-1] == ("call", "read_file", ReadFile(path="b"))
    assert [e.delta for e in events if isinstance(e, ToolParamDeltaEvent)] == ["a", "b"]


def test_k3_header_without_sep_is_malformed() -> None:
    text = tools('<|open|>call tool="read_file" ' + "x" * 1100 + "<|close|>call<|sep|>")
    assert errors(events_of(text)) == ["malformed_tool"]


def test_k3_call_cut_by_the_end_of_the_stream_never_runs() -> None:
    full = tools(k3_call("read_file", 1, ("path", "string", "a.py")))
    opened = full.index("<|open|>call") + len("<|open|>call t")
    for end in range(opened, len(full) - len("<|close|>tools<|sep|>")):
        events = feed_all(factory()(), [full[:end]])
        assert not any(isinstance(e, ToolCallEvent) for e in events)
        assert errors(events) == ["unclosed_tool"], full[:end]


def test_a_call_marker_quoted_in_prose_is_text() -> None:
    text = "Kimi writes `<|tool_call_begin|>` and `<|open|>call` in its calls."
    assert kinds(events_of(text)) == [("text", text)]


# --- reasoning --------------------------------------------------------------------------


def test_reasoning_prefilled_by_the_template() -> None:
    text = "I should read it.</think>" + section(k2("read_file", '{"path": "a"}'))
    events = events_of(text, start_in_thinking=True)  # the template opened reasoning
    assert kinds(events)[:1] == [("thinking", "I should read it.", True)]
    assert kinds(events)[-1] == ("call", "read_file", ReadFile(path="a"))
    # Written with its opening tag, the reply reads the same.
    same = events_of("<think>" + text, start_in_thinking=True)
    assert kinds(same) == kinds(events)


def test_a_reply_that_is_only_reasoning() -> None:
    for text in ("<think>Nothing to do.</think>", "Nothing to do.<|close|>think<|sep|>"):
        events = events_of(text, start_in_thinking=True)
        assert kinds(events) == [("thinking", "Nothing to do.", True)]


def test_k3_reasoning_then_response_then_call() -> None:
    text = (
        "Need the file.<|close|>think<|sep|><|open|>response<|sep|>Reading.<|close|>response<|sep|>"
        + tools(k3_call("read_file", 1, ("path", "string", "a")))
        + "<|close|>message<|sep|>"
    )
    events = events_of(text, start_in_thinking=True)
    assert kinds(events) == [
        ("thinking", "Need the file.", True),
        ("text", "Reading."),
        ("start", "read_file"),
        ("param", "path", "a"),
        ("call", "read_file", ReadFile(path="a")),
    ]


# --- writing ----------------------------------------------------------------------------

_VALUES = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["<|tool_call_end|>", '"}', "<|close|>call<|sep|>", "\\", " padded "]
)


@_SOME
@given(path=_VALUES, content=_VALUES, variant=st.sampled_from(["k2", "k3"]))
def test_round_trip(path: str, content: str, variant: str) -> None:
    args = {"path": path, "content": content}
    text = KimiDialect(variant).format_call("write_to_file", args)  # type: ignore[arg-type]
    events = merge_deltas(feed_all(factory()(), [text]))
    assert events == run(factory(), tokens(text))
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [c.tool_instance for c in calls] == [WriteToFile(**args)]


def test_round_trip_of_typed_values() -> None:
    args = {"query": "q", "max_results": 7, "tags": ["a", "b"]}
    for variant in ("k2", "k3"):
        text = KimiDialect(variant).format_call("search", args)  # type: ignore[arg-type]
        assert kinds(events_of(text))[-1] == ("call", "search", Search(**args))


def test_writer_refuses_what_cannot_read_back() -> None:
    with pytest.raises(ValueError, match="argument"):
        format_k3_call("write_to_file", {"path": "a<|close|>argument<|sep|>b"})


def test_writers_follow_the_templates() -> None:
    assert format_k2_call("search", {"query": "q"}, index=3) == (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.search:3"
        '<|tool_call_argument_begin|>{"query": "q"}<|tool_call_end|><|tool_calls_section_end|>'
    )
    assert format_k3_call("search", {"query": 'a"b', "max_results": 2, "x": None, "y": True}) == (
        '<|open|>tools<|sep|><|open|>call tool="search" index="1"<|sep|>'
        '<|open|>argument key="query" type="string"<|sep|>a"b<|close|>argument<|sep|>'
        '<|open|>argument key="max_results" type="number"<|sep|>2<|close|>argument<|sep|>'
        '<|open|>argument key="x" type="null"<|sep|>null<|close|>argument<|sep|>'
        '<|open|>argument key="y" type="boolean"<|sep|>true<|close|>argument<|sep|>'
        "<|close|>call<|sep|><|close|>tools<|sep|>"
    )


@pytest.mark.parametrize("language", ["en", "zh"])
def test_usage_instructions(language: str) -> None:
    text = get_dialect("kimi").usage_instructions("read_file", {"path": "a"}, language=language)
    assert format_k2_call("read_file", {"path": "a"}) in text


def test_k2_tool_name() -> None:
    assert k2_tool_name("functions.mcp.fs-read:12") == "mcp.fs-read"
    assert k2_tool_name("functions.:0") is None


def test_too_large_call_is_not_run() -> None:
    text = section(k2("write_to_file", json.dumps({"path": "f", "content": "x" * 300})))
    events = events_of(text, max_tool_size=100)
    assert errors(events) == ["tool_too_large"]
    assert not any(isinstance(e, ToolCallEvent) for e in events)


# --- fixtures: replies as the templates render them, and servers' known failures ----------


def _cases() -> list[dict[str, Any]]:
    return list(json.loads((FIXTURES / "cases.json").read_text(encoding="utf-8")))


@pytest.mark.parametrize("case", _cases(), ids=lambda c: str(c["name"]))
def test_fixture(case: dict[str, Any]) -> None:
    case = {**case, "errors": case.get("errors", [])}
    if "file" in case:
        case["text"] = (FIXTURES / case["file"]).read_text(encoding="utf-8")
    config = {"start_in_thinking": False}  # unless the case says otherwise
    events = check_dialect("kimi", [case], tools=TOOLS, config=config)[case["name"]]
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    deltas = [e for e in events if isinstance(e, (ToolArgumentsDeltaEvent, ToolParamDeltaEvent))]
    assert all(d.call_index in {c.call_index for c in calls} or errors(events) for d in deltas)


_PROSE = st.lists(
    st.sampled_from(["a", " ", "\n", "<", "|", ">", "<|", "|>", "open", "call", "`", "think"]),
    max_size=8,
).map("".join)
# Prose may hold a marker's fragments, but not a whole reasoning tag: "<think>" really
# opens reasoning, which holds the calls after it.
_PROSE = _PROSE.filter(lambda prose: "<think>" not in prose)


@_SOME
@given(
    st.lists(st.tuples(_PROSE, st.sampled_from(["k2", "k3"]), st.text(max_size=6)), max_size=3),
    _PROSE,
    st.lists(st.integers(min_value=0, max_value=400), max_size=4),
    st.sampled_from(ENDINGS),
)
def test_calls_among_prose(
    parts: list[tuple[str, str, str]], tail: str, cuts: list[int], end: ChatDelta | None
) -> None:
    # Prose made of marker fragments never opens a call nor breaks the calls around it,
    # however the reply ends.
    text = "".join(
        prose + KimiDialect(variant).format_call("read_file", {"path": path})  # type: ignore[arg-type]
        for prose, variant, path in parts
    )
    text += tail
    whole = read_cut(text, cuts, end)
    got = [e.tool_instance for e in whole if isinstance(e, ToolCallEvent)]
    assert got == [ReadFile(path=path) for _, _, path in parts]
