# ruff: noqa: RUF001, RUF003  (the format's markers are fullwidth characters)
"""deepseek: V3, V3.1 and DSML tool-call sections, read with the guarantees of the core.

Every stream goes through ``assert_all_splittings`` (whole, one character at a time,
split at every position) and a token-level split where each marker is one token, each
run lossless; spans are checked against the text.
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
    NoticeEvent,
    ParseErrorEvent,
    ParseEvent,
    ParserConfig,
    StreamToolParser,
    TextOutputEvent,
    ThinkingEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
)
from stream_parser.dialects import DIALECTS, get_dialect
from stream_parser.dialects.deepseek import (
    CALL_BEGIN,
    CALL_END,
    CALLS_BEGIN,
    CALLS_END,
    DEEPSEEK_THINKING,
    DeepSeekDialect,
    DsmlPlugin,
)
from stream_parser.testing import assert_lossless, check_dialect, merge_deltas
from tests.dialects import support
from tests.dialects.test_dialects import check_spans, describe
from tests.helpers import ENDINGS, assert_all_splittings, feed_all, run, splits
from tests.tools_fixture import TOOLS, ExecuteCommand, ReadFile, Search, WriteToFile

DS = ("deepseek",)
SEP = "<｜tool▁sep｜>"
FIXTURES = Path(__file__).parent.parent / "fixtures" / "dialects" / "deepseek"
_MARKER = re.compile(r"<｜[^｜<>]*｜>|</?｜DSML｜")


def factory(tools: Any = TOOLS, **config: Any) -> Any:
    config.setdefault("start_in_thinking", False)
    cfg = ParserConfig(dialect=DS, **config)
    return lambda: StreamToolParser(tools, config=cfg)


def tokens(text: str) -> list[str]:
    """``text`` cut as a tokenizer would: each marker one token, the rest in short pieces."""
    return support.tokens(_MARKER, text)


def read(text: str, tools: Any = TOOLS, **config: Any) -> list[ParseEvent]:
    """The merged events of ``text``, the same however it is cut; spans checked."""
    return support.checked_events(
        factory(tools, **config), text, tokens(text), "the token-level split differs"
    )


def outcome(events: list[ParseEvent]) -> list[tuple[object, ...]]:
    """Calls, errors and text, in order."""
    out: list[tuple[object, ...]] = []
    for e in events:
        if isinstance(e, ToolCallEvent):
            out.append(("call", e.tool_instance))
        elif isinstance(e, ParseErrorEvent):
            out.append(("error", e.error_type))
        elif isinstance(e, TextOutputEvent):
            out.append(("text", e.text))
    return out


def _json(args: str | dict[str, Any]) -> str:
    return args if isinstance(args, str) else json.dumps(args)


def v31(name: str, args: str | dict[str, Any]) -> str:
    return f"{CALL_BEGIN}{name}{SEP}{_json(args)}{CALL_END}"


def v3(name: str, args: str | dict[str, Any]) -> str:
    return f"{CALL_BEGIN}function{SEP}{name}\n```json\n{_json(args)}\n```{CALL_END}"


def dsml(name: str, *params: tuple[str, str, str], section: str = "function_calls") -> str:
    body = "\n".join(
        f'<｜DSML｜parameter name="{k}" string="{s}">{v}</｜DSML｜parameter>' for k, v, s in params
    )
    return f'<｜DSML｜invoke name="{name}">\n{body}\n</｜DSML｜invoke>'


def section(*calls: str, name: str = "function_calls") -> str:
    return f"\n\n<｜DSML｜{name}>\n" + "\n".join(calls) + f"\n</｜DSML｜{name}>"


# --- V3.1 ---------------------------------------------------------------------------------------


def test_v31_call_with_text_before_and_after() -> None:
    text = f"Reading.{CALLS_BEGIN}{v31('read_file', dict(path='a.py'))}{CALLS_END}Done."
    events = read(text)
    assert describe(events) == [
        ("text", "Reading."),
        ("start", "read_file", 0),
        ("args", '{"path": "a.py"}'),
        ("call", "read_file", ReadFile(path="a.py"), 0),
        ("text", "Done."),
    ]
    # The section's markers belong to the call's span: nothing of them is text.
    call = next(e for e in events if isinstance(e, ToolCallEvent))
    assert call.raw == text[len("Reading.") : -len("Done.")]


def test_v31_parallel_calls_and_markers_inside_strings() -> None:
    tricky = f"a{CALL_END}{CALLS_END}b"
    text = (
        f"{CALLS_BEGIN}{v31('search', json.dumps({'query': tricky, 'max_results': 2}))}"
        f"{v31('read_file', dict(path='b'))}{CALLS_END}"
    )
    events = read(text)
    assert outcome(events) == [
        ("call", Search(query=tricky, max_results=2)),
        ("call", ReadFile(path="b")),
    ]
    assert [e.call_index for e in events if isinstance(e, ToolCallEvent)] == [0, 1]


def test_a_tool_named_function_is_a_v31_call() -> None:
    tools = {"function": ReadFile}
    text = f"{CALLS_BEGIN}{v31('function', dict(path='x'))}{CALLS_END}"
    assert outcome(read(text, tools)) == [("call", ReadFile(path="x"))]


# --- V3 -----------------------------------------------------------------------------------------


def test_v3_calls_with_json_fences() -> None:
    text = (
        f"Let me look.{CALLS_BEGIN}{v3('read_file', dict(path='a.py'))}\n"
        f"{v3('execute_command', dict(command='ls', requires_approval=True))}{CALLS_END}"
    )
    events = read(text)
    assert describe(events) == [
        ("text", "Let me look."),
        ("start", "read_file", 0),
        ("args", '{"path": "a.py"}'),
        ("start", "execute_command", 1),
        ("args", '{"command": "ls", "requires_approval": true}'),
        ("call", "read_file", ReadFile(path="a.py"), 0),
        ("call", "execute_command", ExecuteCommand(command="ls", requires_approval=True), 1),
    ]


def test_v3_and_v31_calls_in_one_section() -> None:
    text = f"{CALLS_BEGIN}{v3('read_file', dict(path='a'))}{v31('read_file', dict(path='b'))}"
    text += CALLS_END
    assert outcome(read(text)) == [("call", ReadFile(path="a")), ("call", ReadFile(path="b"))]


# --- DSML ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["function_calls", "tool_calls", " calls"])
def test_dsml_sections_of_every_version(name: str) -> None:
    call = dsml("search", ("query", "tokyo", "true"), ("max_results", "3", "false"))
    text = "Searching." + section(call, name=name) + "\nDone."
    events = read(text)
    assert describe(events) == [
        ("text", "Searching."),
        ("start", "search", 0),
        ("param", "query", "tokyo"),
        ("param", "max_results", "3"),
        ("call", "search", Search(query="tokyo", max_results=3), 0),
        ("framing",),  # the line break after the section
        ("text", "Done."),
    ]


def test_dsml_string_false_values_are_json() -> None:
    call = dsml(
        "search",
        ("query", '"quoted"', "false"),
        ("tags", '["a", "</｜DSML｜parameter>"]', "false"),
    )
    assert outcome(read(section(call))) == [
        ("call", Search(query="quoted", tags=["a", "</｜DSML｜parameter>"]))
    ]


def test_dsml_values_keep_markup_that_does_not_end_them() -> None:
    content = "x = '</｜DSML｜parameter>' + '</｜DSML｜invoke>'\n</｜DSML｜function_calls> y\n"
    call = dsml("write_to_file", ("path", "a.py", "true"), ("content", content, "true"))
    assert outcome(read(section(call))) == [("call", WriteToFile(path="a.py", content=content))]


def test_dsml_parallel_calls_and_a_missing_invoke_close() -> None:
    # DeepSeek V4 at times leaves out </｜DSML｜invoke> before the next call or the end.
    first = dsml("read_file", ("path", "a", "true")).removesuffix("\n</｜DSML｜invoke>")
    second = dsml("read_file", ("path", "b", "true")).removesuffix("\n</｜DSML｜invoke>")
    assert outcome(read(section(first, second))) == [
        ("call", ReadFile(path="a")),
        ("call", ReadFile(path="b")),
    ]


def test_dsml_attributes_in_either_order_and_without_string() -> None:
    call = (
        '<｜DSML｜invoke name="search">\n'
        '<｜DSML｜parameter string="false" name="max_results">4</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="query">q</｜DSML｜parameter>\n</｜DSML｜invoke>'
    )
    assert outcome(read(section(call))) == [("call", Search(query="q", max_results=4))]


def test_an_invoke_without_its_section_is_text() -> None:
    text = dsml("execute_command", ("command", "rm -rf /", "true"))
    assert outcome(read(text)) == [("text", text)]


def test_dsml_unknown_and_repeated_parameters() -> None:
    call = dsml("read_file", ("path", "a", "true"), ("mode", "r", "true"), ("path", "b", "true"))
    events = read(section(call))
    assert outcome(events) == [
        ("error", "unknown_param"),
        ("error", "duplicate_param"),
        ("call", ReadFile(path="b")),
    ]


# --- failures: never run ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (v31("delete_all", "{}"), "unknown_tool"),
        (v31("search", '{"query": 1, "max_results": "many"}'), "invalid_params"),
        (v31("search", '["query"]'), "malformed_tool"),
        (v31("search", '{"query": "a"} trailing'), "malformed_tool"),
        (v31("search", '{"query": "a",}'), "malformed_tool"),
        (v31("search", '{"query": "a"'), "malformed_tool"),
        (f"{CALL_BEGIN}search{CALL_END}", "malformed_tool"),
        (v3("", "{}"), "malformed_tool"),
    ],
)
def test_calls_that_are_not_executed(body: str, error: str) -> None:
    text = f"{CALLS_BEGIN}{body}{CALLS_END}"
    events = read(text)
    assert not any(isinstance(e, ToolCallEvent) for e in events)
    assert [e.error_type for e in events if isinstance(e, ParseErrorEvent)] == [error]
    # The raw text of the failed call is delivered.
    assert "".join(e.text for e in events if isinstance(e, TextOutputEvent)) == text


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (dsml("nope", ("a", "b", "true")), "unknown_tool"),
        (dsml("search", ("max_results", "x", "false")), "invalid_params"),
        ('<｜DSML｜invoke name="search">\njunk\n</｜DSML｜invoke>', "malformed_tool"),
        ('<｜DSML｜invoke name="">\n</｜DSML｜invoke>', "malformed_tool"),
    ],
)
def test_dsml_calls_that_are_not_executed(call: str, error: str) -> None:
    events = read(section(call))
    assert not any(isinstance(e, ToolCallEvent) for e in events)
    assert [e.error_type for e in events if isinstance(e, ParseErrorEvent)] == [error]


def test_a_failed_call_does_not_stop_its_neighbours() -> None:
    text = f"{CALLS_BEGIN}{v31('nope', {})}{v31('read_file', dict(path='a'))}{CALLS_END}"
    events = read(text)
    assert [o[0] for o in outcome(events)] == ["error", "text", "call"]


def test_a_broken_v3_call_leaves_the_next_one_whole() -> None:
    broken = f"{CALL_BEGIN}function{SEP}read_file\n```json\n[1]\n```{CALL_END}"
    text = f"{CALLS_BEGIN}{broken}\n{v3('read_file', dict(path='b'))}{CALLS_END}"
    events = read(text)
    assert [o[0] for o in outcome(events)] == ["error", "text", "call"]
    assert outcome(events)[-1] == ("call", ReadFile(path="b"))


def test_a_call_cut_by_the_end_of_the_stream_never_runs() -> None:
    first, second = v31("read_file", dict(path="a")), v31("search", dict(query="b"))
    whole = f"{CALLS_BEGIN}{first}{second}{CALLS_END}"
    for cut in range(1, len(whole)):
        text = whole[:cut]
        for finish in (None, "length"):
            parser = factory()()
            events = parser.feed(text)
            if finish:
                events += parser.feed_delta(ChatDelta(finish_reason=finish))
            events = merge_deltas(events + parser.close())
            assert_lossless(events, text)
            ran = [e.tool_instance for e in events if isinstance(e, ToolCallEvent)]
            # A call runs once its end marker arrived; without it only when the stream
            # ended normally (not cut) right after its complete arguments.
            full = [CALLS_BEGIN + first, CALLS_BEGIN + first + second]
            n = sum(text.startswith(d) for d in full)
            if not finish and n < 2 and text == full[n][: -len(CALL_END)]:
                n += 1
            expected = [ReadFile(path="a"), Search(query="b")][:n]
            assert ran == expected, (text, finish)


def test_a_dsml_call_without_its_invoke_close_runs_only_when_the_section_ends() -> None:
    call = section(dsml("read_file", ("path", "a", "true")))
    closed = call.replace("\n</｜DSML｜invoke>", "")
    assert outcome(read(closed)) == [("call", ReadFile(path="a"))]
    # At the stream's end another parameter may have been coming: a list of parameters
    # does not end by itself, so the call is cut, however the stream ended.
    text = closed.removesuffix("\n</｜DSML｜function_calls>")
    assert ("error", "unclosed_tool") in outcome(read(text))
    for end in ENDINGS:
        events = assert_all_splittings(factory(), text, end=end)
        assert "unclosed_tool" in [e.error_type for e in events if isinstance(e, ParseErrorEvent)]
        assert not any(isinstance(e, ToolCallEvent) for e in events)


def test_too_large_section_is_text() -> None:
    text = f"{CALLS_BEGIN}{v31('read_file', json.dumps({'path': 'x' * 300}))}{CALLS_END}"
    events = merge_deltas(feed_all(factory(max_tool_size=100)(), [text]))
    assert_lossless(events, text)
    assert [e.error_type for e in events if isinstance(e, ParseErrorEvent)] == ["tool_too_large"]
    assert not any(isinstance(e, ToolCallEvent) for e in events)


def test_prose_that_mentions_the_markers_is_text() -> None:
    for text in (
        f"the `{CALLS_BEGIN}` token",
        f"write {CALLS_BEGIN} then a call",
        "`<｜DSML｜function_calls>` opens a section",
    ):
        assert outcome(read(text)) == [("text", text)]


# --- reasoning ----------------------------------------------------------------------------------


def test_the_reply_starts_inside_reasoning_when_the_template_opened_it() -> None:
    assert get_dialect("deepseek").thinking is DEEPSEEK_THINKING
    call = f"{CALLS_BEGIN}{v31('read_file', dict(path='a'))}{CALLS_END}"
    for reply in (f"Plan it.</think>Reading.{call}", f"<think>Plan it.</think>Reading.{call}"):
        events = assert_all_splittings(
            lambda: StreamToolParser(
                TOOLS, config=ParserConfig(dialect="deepseek", start_in_thinking=True)
            ),
            reply,
        )
        thinking = [e for e in events if isinstance(e, ThinkingEvent)]
        assert [t.content for t in thinking] == ["Plan it."]
        assert outcome(events) == [("text", "Reading."), ("call", ReadFile(path="a"))]


def test_a_reply_that_is_only_reasoning() -> None:
    events = assert_all_splittings(
        lambda: StreamToolParser(
            TOOLS, config=ParserConfig(dialect="deepseek", start_in_thinking=True)
        ),
        "Hmm.</think>",
    )
    assert [e.content for e in events if isinstance(e, ThinkingEvent)] == ["Hmm."]
    assert not [e for e in events if isinstance(e, (TextOutputEvent, ToolCallEvent))]


def test_a_call_inside_reasoning_ends_it_and_runs() -> None:
    # As DeepSeek's servers read it: the section's start ends the reasoning, the call
    # runs, and the model's late </think> is framing, with no notice.
    reply = f"Plan.{CALLS_BEGIN}{v31('read_file', dict(path='a'))}{CALLS_END}</think>ok"
    events = assert_all_splittings(
        lambda: StreamToolParser(
            TOOLS, config=ParserConfig(dialect="deepseek", start_in_thinking=True)
        ),
        reply,
    )
    assert [e.content for e in events if isinstance(e, ThinkingEvent)] == ["Plan."]
    assert [e.tool_instance for e in events if isinstance(e, ToolCallEvent)] == [ReadFile(path="a")]
    assert [e.text for e in events if isinstance(e, FramingEvent)] == ["</think>"]
    assert not [e for e in events if isinstance(e, NoticeEvent)]


# --- writing ------------------------------------------------------------------------------------

CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search", {"query": f"a < b {CALL_END}", "max_results": 3, "tags": ["x", CALLS_END]}),
    ("write_to_file", {"path": "a.py", "content": 'if a:\n    print("</｜DSML｜invoke>")\n'}),
    ("execute_command", {"command": "echo '<｜DSML｜parameter>'", "requires_approval": True}),
]


@pytest.mark.parametrize("variant", ["v3", "v3.1", "dsml"])
def test_format_call_reads_back(variant: Any) -> None:
    dialect = DeepSeekDialect(variant)
    for tool, args in CALLS:
        text = dialect.format_call(tool, args)
        events = read(text)
        assert outcome(events) == [("call", TOOLS[tool].model_validate(args))]


def test_format_call_writes_the_chat_templates_forms() -> None:
    args = {"path": "a.py"}
    assert DeepSeekDialect().format_call("read_file", args) == (
        f'{CALLS_BEGIN}{CALL_BEGIN}read_file{SEP}{{"path": "a.py"}}{CALL_END}{CALLS_END}'
    )
    assert DeepSeekDialect("v3").format_call("read_file", args) == (
        f'{CALLS_BEGIN}{CALL_BEGIN}function{SEP}read_file\n```json\n{{"path": "a.py"}}\n```'
        f"{CALL_END}{CALLS_END}"
    )
    assert DeepSeekDialect("dsml").format_call("search", {"query": "q", "max_results": 2}) == (
        "<｜DSML｜function_calls>\n"
        '<｜DSML｜invoke name="search">\n'
        '<｜DSML｜parameter name="query" string="true">q</｜DSML｜parameter>\n'
        '<｜DSML｜parameter name="max_results" string="false">2</｜DSML｜parameter>\n'
        "</｜DSML｜invoke>\n"
        "</｜DSML｜function_calls>"
    )
    with pytest.raises(ValueError, match="DSML"):
        DeepSeekDialect("dsml").format_call("f", {"p": "a</｜DSML｜parameter>\n"})
    with pytest.raises(Exception, match="variant"):
        DeepSeekDialect("v9")  # type: ignore[arg-type]


def test_usage_instructions_show_the_format() -> None:
    dialect = DIALECTS["deepseek"]
    for language in ("en", "zh"):
        text = dialect.usage_instructions("read_file", {"path": "a.py"}, language=language)
        assert dialect.format_call("read_file", {"path": "a.py"}) in text


def test_one_dsml_plugin_per_section() -> None:
    with pytest.raises(Exception, match="section"):
        DsmlPlugin("calls")
    assert DsmlPlugin(" calls").end_tag == "</｜DSML｜ calls>"


@settings(max_examples=40, deadline=None)
@given(
    st.text(alphabet='ab"\\{}<>/｜▁\n DSML', max_size=20),
    st.sampled_from(["v3", "v3.1", "dsml"]),
    st.lists(st.integers(min_value=1, max_value=300), max_size=5),
)
def test_any_written_call_reads_back_however_cut(
    content: str, variant: Any, cuts: list[int]
) -> None:
    try:
        text = DeepSeekDialect(variant).format_call(
            "write_to_file", {"path": "p", "content": content}
        )
    except ValueError:
        return  # a value the format cannot hold unambiguously
    text = f"Writing.{text}\nDone."
    chunks = splits(text, sorted({c for c in cuts if c < len(text)}))
    events = merge_deltas(feed_all(factory()(), chunks))
    assert_lossless(events, text)
    check_spans(events, text)
    calls = [e.tool_instance for e in events if isinstance(e, ToolCallEvent)]
    assert calls == [WriteToFile(path="p", content=content)]


# --- any text: nothing raises, the same events however cut --------------------------------------

FRAGMENTS = [
    CALLS_BEGIN,
    CALLS_END,
    CALL_BEGIN,
    CALL_END,
    SEP,
    "function",
    "read_file",
    "\n```json\n",
    "```",
    '{"path": "a"}',
    '{"path": "',
    '"}',
    "\\",
    "\n\n<｜DSML｜function_calls>",
    "</｜DSML｜function_calls>",
    '<｜DSML｜invoke name="read_file">',
    "</｜DSML｜invoke>",
    '<｜DSML｜parameter name="path" string="true">',
    '<｜DSML｜ parameter name="path" string="false">',
    "</｜DSML｜parameter>",
    "<｜DSML｜",
    "</think>",
    "<think>",
    " ",
    "\n",
    "x",
    "<",
    "｜",
]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.sampled_from(FRAGMENTS), max_size=14),
    st.lists(st.integers(min_value=1, max_value=400), max_size=6),
    st.booleans(),
    st.sampled_from(ENDINGS),
)
def test_any_text_reads_the_same_however_cut(
    parts: list[str], cuts: list[int], thinking: bool, end: ChatDelta | None
) -> None:
    text = "".join(parts)
    make = factory(start_in_thinking=thinking)
    reference = run(make, [text], end)
    check_spans(reference, text)
    assert run(make, splits(text, sorted({c for c in cuts if c < len(text)})), end) == reference
    assert run(make, tokens(text), end) == reference
    assert run(make, list(text), end) == reference


# --- linear time ------------------------------------------------------------------------------


def _v31_big(n: int) -> str:
    content = (f"x = '{CALL_END}{CALLS_END}<'\n" * (n // 20 + 1))[:n]
    return CALLS_BEGIN + v31("write_to_file", {"path": "a", "content": content}) + CALLS_END


def _dsml_big(n: int) -> str:
    content = ("</｜DSML｜parameter>x</｜DSML｜invoke><\n" * (n // 30 + 1))[:n]
    return section(dsml("write_to_file", ("path", "a", "true"), ("content", content, "true")))


def _seconds(text: str) -> float:
    chunks = [text[i : i + 7] for i in range(0, len(text), 7)]
    best = float("inf")
    for _ in range(3):
        parser = factory()()
        t0 = time.perf_counter()
        events = feed_all(parser, chunks)
        best = min(best, time.perf_counter() - t0)
    assert any(isinstance(e, ToolCallEvent) for e in events)
    return best


@pytest.mark.slow
@pytest.mark.parametrize("make", [_v31_big, _dsml_big], ids=["v3.1", "dsml"])
def test_time_is_linear_in_the_size_of_a_call(make: Any) -> None:
    small, large = _seconds(make(30_000)), _seconds(make(120_000))
    # Linear: about 4x.  Quadratic would be about 16x.
    assert large < 8 * small + 0.02, (small, large)


# --- fixtures: replies as the chat templates render them, and known failure cases ---------------


def _cases() -> list[dict[str, Any]]:
    return json.loads((FIXTURES / "cases.json").read_text(encoding="utf-8"))["cases"]  # type: ignore[no-any-return]


class ListFiles(BaseModel):
    """A tool without parameters: DSML writes its call as one self-closing invoke."""


FIXTURE_TOOLS = {**TOOLS, "list_files": ListFiles}


@pytest.mark.parametrize("case", _cases(), ids=lambda c: c["name"])
def test_fixture(case: dict[str, Any]) -> None:
    # A case without a configuration is read without reasoning at the start.
    config = case.get("config", {"start_in_thinking": False})
    check_dialect(
        "deepseek",
        [{**case, "config": config, "errors": case.get("errors", [])}],
        tools=FIXTURE_TOOLS,
    )


def test_the_fixtures_name_their_sources() -> None:
    cases = _cases()
    failures = [c for c in cases if c.get("kind") == "failure"]
    assert len(failures) >= 3
    assert all(c["source"].startswith("https://github.com/") for c in failures)


# --- the agents ---------------------------------------------------------------------------------


def test_an_agent_speaking_deepseek_runs_its_calls() -> None:
    from stream_parser.agent import ReActAgent
    from stream_parser.testing import ScriptedModel
    from stream_parser.tools import tool

    @tool
    def read_file(path: str) -> str:
        """Read a text file.

        Args:
            path: The file's path.
        """
        return f"contents of {path}"

    for variant in ("v3", "v3.1", "dsml"):
        call = DeepSeekDialect(variant).format_call("read_file", {"path": "b.txt"})
        reply = f"<think>I need the file.</think>Reading.{call}"
        model = ScriptedModel([reply, "<think>Got it.</think>Done."], chunk_size=(1, 7), seed=3)
        agent = ReActAgent(model, [read_file], dialect="deepseek")
        assert CALLS_BEGIN in agent.system_prompt()  # the format is shown to the model
        run = agent.run_sync("b.txt?")
        assert run.reason == "done" and run.output == "Done."
        assert model.requests[1].messages[-1]["content"] == "[read_file] result:\ncontents of b.txt"


def test_a_dsml_tag_holding_the_start_of_another_reads_the_same_however_cut() -> None:
    # "<｜DSML｜" then a whole invoke tag: the first is no tag (a "<" comes before its
    # ">"), whether or not that ">" has arrived when it is read.
    text = '\n\n<｜DSML｜function_calls><｜DSML｜<｜DSML｜invoke name="read_file">'
    events = assert_all_splittings(factory(start_in_thinking=False), text)
    assert [e.kind for e in events] == ["tool_call_start", "error", "text"]


def test_a_marker_s_first_character_ending_a_cut_string_reads_the_same_in_any_chunking() -> None:
    # Inside a JSON string even a whole end marker is content, so what may begin one is
    # arguments at once, whole or one character at a time.
    text = f'{CALLS_BEGIN}{CALL_BEGIN}write_to_file{SEP}{{"path": "a.py", "content": "<'
    config = ParserConfig(dialect="deepseek")
    events = assert_all_splittings(lambda: StreamToolParser(TOOLS, config=config), text)
    deltas = [e.delta for e in events if isinstance(e, ToolArgumentsDeltaEvent)]
    assert "".join(deltas).endswith('"content": "<')
