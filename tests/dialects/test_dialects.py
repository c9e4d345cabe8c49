"""Dialects: hermes and qwen3_coder tool calls, with the same guarantees as the XML core.

Every stream goes through ``assert_all_splittings``: whole, one character at a time and
split at every position (every pair of positions for short inputs), each run lossless.
``check`` also verifies that every delta's span points at exactly its characters and that
every call's ``raw`` is its span's text.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, field_validator

from stream_parser import (
    ChatDelta,
    ConfigError,
    ErrorType,
    ParseErrorEvent,
    ParseEvent,
    ParserConfig,
    StreamToolParser,
    StrictModeError,
    TextOutputEvent,
    ToolArgumentsDeltaEvent,
    ToolCallEvent,
    ToolCallStartEvent,
    ToolParamDeltaEvent,
)
from stream_parser.dialects import (
    DIALECTS,
    BareFunctionPlugin,
    Dialect,
    HermesDialect,
    Qwen3CoderDialect,
    ToolCallPlugin,
    XmlDialect,
    deepseek,
    dialect_plugins,
    get_dialect,
    kimi,
)
from stream_parser.dialects.deepseek import DeepSeekDialect
from stream_parser.dialects.gemma4 import Gemma4Dialect
from stream_parser.dialects.glm import GlmDialect
from stream_parser.dialects.gpt_oss import GptOssDialect
from stream_parser.dialects.kimi import KimiDialect
from stream_parser.dialects.llama import LlamaDialect
from stream_parser.dialects.mistral import MistralDialect
from stream_parser.testing import assert_lossless, check_dialect, merge_deltas
from stream_parser.testing.dialects import load_cases
from tests.helpers import ENDINGS, assert_all_splittings, feed_all, run, splits
from tests.tools_fixture import TOOLS, ExecuteCommand, ReadFile, Search, WriteToFile, summary

HERMES = ("hermes",)
QWEN = ("qwen3_coder",)
BOTH = ("hermes", "qwen3_coder")
ALL = ("xml", "hermes", "qwen3_coder")


def factory(dialects: tuple[str, ...], tools: Any = TOOLS, **config: Any) -> Any:
    cfg = ParserConfig(dialect=dialects, **config)
    return lambda: StreamToolParser(tools, config=cfg)


def describe(events: list[ParseEvent]) -> list[tuple[object, ...]]:
    out: list[tuple[object, ...]] = []
    for e in events:
        if isinstance(e, ToolCallStartEvent):
            out.append(("start", e.tool_name, e.call_index))
        elif isinstance(e, ToolArgumentsDeltaEvent):
            out.append(("args", e.delta))
        elif isinstance(e, ToolCallEvent):
            out.append(("call", e.tool_name, e.tool_instance, e.call_index))
        else:
            out.extend(summary([e]))
    return out


def check_spans(events: list[ParseEvent], text: str) -> None:
    for e in events:
        raw = text[e.span[0] : e.span[1]]
        if isinstance(e, (ToolArgumentsDeltaEvent, ToolParamDeltaEvent)):
            assert raw == e.delta, e
        elif isinstance(e, ToolCallEvent):
            assert raw == e.raw, e
        elif isinstance(e, ToolCallStartEvent):
            assert e.span[0] < e.span[1] and raw, e


def check(
    dialects: tuple[str, ...], text: str, expected: list[tuple[object, ...]], **config: Any
) -> list[ParseEvent]:
    events = assert_all_splittings(factory(dialects, **config), text)
    check_spans(events, text)
    assert describe(events) == expected
    return events


# --- hermes ---------------------------------------------------------------------------------


def test_hermes_call_with_text_around() -> None:
    text = (
        "Let me read it.\n<tool_call>\n"
        '{"name": "read_file", "arguments": {"path": "src/app.py"}}\n'
        "</tool_call>\nDone."
    )
    events = check(
        HERMES,
        text,
        [
            # The newline before <tool_call> is the template's framing: the call's span.
            ("text", "Let me read it."),
            ("start", "read_file", 0),
            ("args", '{"path": "src/app.py"}'),
            ("call", "read_file", ReadFile(path="src/app.py"), 0),
            ("framing",),  # the line break after the call
            ("text", "Done."),
        ],
    )
    call = next(e for e in events if isinstance(e, ToolCallEvent))
    assert call.span == (15, len(text) - len("\nDone."))
    start = next(e for e in events if isinstance(e, ToolCallStartEvent))
    assert text[start.span[0] : start.span[1]] == '"read_file"'


def test_hermes_arguments_before_name_are_held_until_the_name() -> None:
    text = (
        '<tool_call>{"arguments": {"command": "ls -l", "requires_approval": true}, '
        '"name": "execute_command"}</tool_call>'
    )
    check(
        HERMES,
        text,
        [
            ("start", "execute_command", 0),
            ("args", '{"command": "ls -l", "requires_approval": true}'),
            ("call", "execute_command", ExecuteCommand(command="ls -l", requires_approval=True), 0),
        ],
    )


def test_hermes_several_calls_and_text_between() -> None:
    one = '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>'
    two = (
        '<tool_call>\n{"name":"search","arguments":{"query":"x","max_results":3,'
        '"tags":["a","b"]}}\n</tool_call>'
    )
    check(
        HERMES,
        f"A {one} B {two} C",
        [
            # The space before each call is framing, told once the call tiles; a space
            # after a call, on its line, is the prose's.
            ("text", "A"),
            ("start", "read_file", 0),
            ("args", '{"path": "a"}'),
            ("framing",),
            ("call", "read_file", ReadFile(path="a"), 0),
            ("text", " B"),
            ("start", "search", 1),
            ("args", '{"query":"x","max_results":3,"tags":["a","b"]}'),
            ("framing",),
            ("call", "search", Search(query="x", max_results=3, tags=["a", "b"]), 1),
            ("text", " C"),
        ],
    )


def test_hermes_markers_inside_json_strings() -> None:
    content = 'x = "</tool_call>"\n<tool_call>{"name": "y"}\\ \u00e9'
    args = (
        '{"path": "t.py", "content": "x = \\"</tool_call>\\"\\n<tool_call>'
        '{\\"name\\": \\"y\\"}\\\\ \\u00e9"}'
    )
    text = f'<tool_call>{{"name": "write_to_file", "arguments": {args}}}</tool_call>after'
    check(
        HERMES,
        text,
        [
            ("start", "write_to_file", 0),
            ("args", args),
            ("call", "write_to_file", WriteToFile(path="t.py", content=content), 0),
            ("text", "after"),
        ],
    )


def test_hermes_name_with_escapes_and_extra_keys() -> None:
    text = (
        '<tool_call>{"id": "c1", "name": "read\\u005ffile", "parameters": {"path": "p"}, '
        '"x": [1, {"y": null}]}</tool_call>'
    )
    check(
        HERMES,
        text,
        [
            ("start", "read_file", 0),
            ("args", '{"path": "p"}'),
            ("call", "read_file", ReadFile(path="p"), 0),
        ],
    )


def test_hermes_arguments_as_a_json_string_or_missing() -> None:
    text = '<tool_call>{"name": "read_file", "arguments": "{\\"path\\": \\"a\\"}"}</tool_call>'
    check(
        HERMES,
        text,
        [
            ("start", "read_file", 0),
            ("args", '"{\\"path\\": \\"a\\"}"'),
            ("call", "read_file", ReadFile(path="a"), 0),
        ],
    )

    class NoArgs(BaseModel):
        verbose: bool = False

    events = assert_all_splittings(
        factory(HERMES, {"status": NoArgs}), '<tool_call>{"name": "status"}</tool_call>'
    )
    assert describe(events) == [("start", "status", 0), ("call", "status", NoArgs(), 0)]


def test_hermes_unknown_tool() -> None:
    text = '<tool_call>{"name": "rm_rf", "arguments": {"path": "/"}}</tool_call>ok'
    check(HERMES, text, [("error", "unknown_tool"), ("text", text)])


@pytest.mark.parametrize(
    "body",
    [
        '{"name": "read_file", "arguments": {"path": "a"}',  # truncated object
        '{"name": "read_file", "arguments": {"path": "a"}} {"name": "read_file"}',
        '{"name": "read_file", "arguments": {"path": "a"},}',
        '{"name": "read_file", "arguments": {"path": "a"}} trailing',
        '{"name": "read_file", "arguments": {"path": "a"}}}',
        '{"name": "read_file", "arguments": {"path": "a"}}\n<tool_call>',
    ],
)
def test_hermes_arguments_that_cannot_be_read_are_malformed(body: str) -> None:
    # Invalid JSON, or complete JSON followed by anything but </tool_call>: the call
    # cannot be read, which is malformed_tool (never invalid_params).
    text = f"<tool_call>{body}</tool_call>"
    events = check(
        HERMES, text, [*_start_if_named(body), ("error", "malformed_tool"), ("text", text)]
    )
    assert isinstance(_error(events).context, str)
    assert "not executed" in _error(events).message


def _start_if_named(body: str) -> list[tuple[object, ...]]:
    if body.startswith('{"name": "read_file"'):
        return [("start", "read_file", 0), ("args", '{"path": "a"}')]
    return []


def _error(events: list[ParseEvent]) -> ParseErrorEvent:
    return next(e for e in events if isinstance(e, ParseErrorEvent))


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ('{"arguments": {"path": "a"}}', "malformed_tool"),
        ('{"name": 3, "arguments": {}}', "malformed_tool"),
        ('["read_file", {"path": "a"}]', "malformed_tool"),
        ('{"name": "read_file", "arguments": ["a"]}', "malformed_tool"),
        ('{"name": "read_file", "arguments": "not json"}', "malformed_tool"),
        ('{"name": "read_file", "arguments": "[1]"}', "malformed_tool"),
        ('{"name": "read_file", "arguments": 3}', "malformed_tool"),
        ('{"name": "read_file", "arguments": {"path": "a"}} x', "malformed_tool"),
        ('{"name": "read_file", "arguments": {}}', "invalid_params"),
        ('{"name": "read_file", "arguments": {"path": ["a"]}}', "invalid_params"),
        (
            '{"name": "search", "arguments": {"query": "q", "max_results": "many"}}',
            "invalid_params",
        ),
    ],
)
def test_hermes_calls_that_are_not_executed(body: str, error: str) -> None:
    text = f"<tool_call>\n{body}\n</tool_call>"
    events = assert_all_splittings(factory(HERMES), text)
    check_spans(events, text)
    assert not any(isinstance(e, ToolCallEvent) for e in events)
    kinds = describe(events)
    assert kinds[-2:] == [("error", error), ("text", text)]
    if error == "invalid_params":
        assert _error(events).details


def test_hermes_repeated_name_is_malformed() -> None:
    text = (
        '<tool_call>{"name": "read_file", "arguments": {"path": "a"}, "name": "search"}</tool_call>'
    )
    check(
        HERMES,
        text,
        [
            ("start", "read_file", 0),
            ("args", '{"path": "a"}'),
            ("error", "malformed_tool"),
            ("text", text),
        ],
    )


def test_hermes_unclosed_call_is_not_executed() -> None:
    text = 'ok <tool_call>{"name": "read_file", "arguments": {"path": "a"}}'
    check(
        HERMES,
        text,
        [
            # The space before the call is framing only if the call stands: a call
            # that comes back as text comes with it.
            ("text", "ok"),
            ("start", "read_file", 0),
            ("args", '{"path": "a"}'),
            ("text", " "),
            ("error", "unclosed_tool"),
            ("text", text[3:]),
        ],
    )
    # The end tag inside an unterminated string does not close the call.
    text = '<tool_call>{"name": "read_file", "arguments": {"path": "a</tool_call> b'
    check(
        HERMES,
        text,
        [
            ("start", "read_file", 0),
            ("args", '{"path": "a</tool_call> b'),
            ("error", "unclosed_tool"),
            ("text", text),
        ],
    )


def test_empty_and_blank_tool_calls() -> None:
    for dialects in (HERMES, QWEN, BOTH):
        for text in ("<tool_call></tool_call>", "<tool_call> \n </tool_call>"):
            check(dialects, text, [("error", "malformed_tool"), ("text", text)])


def test_hermes_without_deltas() -> None:
    text = '<tool_call>{"arguments": {"path": "a"}, "name": "read_file"}</tool_call>'
    check(
        HERMES,
        text,
        [("start", "read_file", 0), ("call", "read_file", ReadFile(path="a"), 0)],
        emit_deltas=False,
    )


def test_hermes_xml_tags_are_text_unless_xml_is_enabled() -> None:
    xml = "<read_file><path>a</path></read_file>"
    hermes = '<tool_call>{"name": "read_file", "arguments": {"path": "b"}}</tool_call>'
    check(
        HERMES,
        xml + hermes,
        [
            ("text", xml),
            ("start", "read_file", 0),
            ("args", '{"path": "b"}'),
            ("call", "read_file", ReadFile(path="b"), 0),
        ],
    )
    check(
        ("xml", "hermes"),
        xml + hermes,
        [
            ("start", "read_file", 0),
            ("param", "path", "a"),
            ("call", "read_file", ReadFile(path="a"), 0),
            ("start", "read_file", 1),
            ("args", '{"path": "b"}'),
            ("call", "read_file", ReadFile(path="b"), 1),
        ],
    )


def test_tool_call_inside_thinking_is_not_executed() -> None:
    inner = '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>'
    check(
        BOTH,
        f"<think>{inner}</think>",
        [("thinking_delta", inner), ("thinking", inner, True)],
    )


def test_hermes_too_large() -> None:
    text = (
        '<tool_call>{"name": "read_file", "arguments": {"path": "abcdefghijklmnopqrstuvwxyz"}}'
        "</tool_call>z"
    )
    # The core cuts the block 60 characters after its start: 49 characters of content
    # are read, then the block goes on as text and is never executed.
    check(
        HERMES,
        text,
        [
            ("start", "read_file", 0),
            ("args", '{"path": "abcd'),
            ("error", "tool_too_large"),
            ("text", text),
        ],
        max_tool_size=60,
    )


# --- qwen3_coder ----------------------------------------------------------------------------

QWEN_CALL = (
    "<tool_call>\n<function=search>\n<parameter=query>\nstream parser\n</parameter>\n"
    '<parameter=max_results>\n5\n</parameter>\n<parameter=tags>\n["a", "b"]\n</parameter>\n'
    "</function>\n</tool_call>"
)


def test_qwen3_call_with_text_around_and_typed_values() -> None:
    events = check(
        QWEN,
        f"Searching.\n{QWEN_CALL}\nDone.",
        [
            ("text", "Searching."),  # the newline before the call is its framing
            ("start", "search", 0),
            ("param", "query", "\nstream parser\n"),
            ("param", "max_results", "\n5\n"),
            ("param", "tags", '\n["a", "b"]\n'),
            ("call", "search", Search(query="stream parser", max_results=5, tags=["a", "b"]), 0),
            ("framing",),
            ("text", "Done."),
        ],
    )
    start = next(e for e in events if isinstance(e, ToolCallStartEvent))
    assert start.span == (23, 40)  # the <function=search> tag


def test_qwen3_several_calls_and_raw_content() -> None:
    write = (
        "<tool_call><function=write_to_file><parameter=path>a.py</parameter>"
        "<parameter=content>\n  x = 1\n\n</parameter></function></tool_call>"
    )
    read = (
        "<tool_call>\n<function=read_file>\n<parameter=path> b.py </parameter>\n</function>\n"
        "</tool_call>"
    )
    check(
        QWEN,
        f"{write} then {read}.",
        [
            ("start", "write_to_file", 0),
            ("param", "path", "a.py"),
            ("param", "content", "\n  x = 1\n\n"),
            ("call", "write_to_file", WriteToFile(path="a.py", content="  x = 1\n"), 0),
            ("text", " then"),
            ("start", "read_file", 1),
            ("param", "path", " b.py "),
            ("framing",),
            ("call", "read_file", ReadFile(path=" b.py "), 1),
            ("text", "."),
        ],
    )


def test_qwen3_markers_inside_a_value() -> None:
    code = (
        'print("</parameter>")\n'
        "s = '</tool_call>'\n"
        "t = '</function>'\n"
        "u = '<parameter=path>'\n"
        "</parameter>x\n"
        "</parameter> </tool_call>\n"
    )
    text = (
        "<tool_call>\n<function=write_to_file>\n<parameter=content>\n"
        f"{code}</parameter>\n<parameter=path>\nf.py\n</parameter>\n</function>\n</tool_call>"
    )
    check(
        QWEN,
        text,
        [
            ("start", "write_to_file", 0),
            ("param", "content", f"\n{code}"),
            ("param", "path", "\nf.py\n"),
            # A raw parameter loses one leading and one trailing newline (rule 6).
            ("call", "write_to_file", WriteToFile(path="f.py", content=code[:-1]), 0),
        ],
    )


def test_qwen3_parameter_cannot_be_injected() -> None:
    # The first </parameter> is followed by text, so it is content: no injected path.
    text = (
        "<tool_call><function=write_to_file><parameter=path>ok.txt</parameter>"
        "<parameter=content>x</parameter>y<parameter=path>evil</parameter>z</parameter>"
        "</function></tool_call>"
    )
    check(
        QWEN,
        text,
        [
            ("start", "write_to_file", 0),
            ("param", "path", "ok.txt"),
            ("param", "content", "x</parameter>y<parameter=path>evil</parameter>z"),
            (
                "call",
                "write_to_file",
                WriteToFile(
                    path="ok.txt", content="x</parameter>y<parameter=path>evil</parameter>z"
                ),
                0,
            ),
        ],
    )


def test_qwen3_whitespace_after_close_is_capped() -> None:
    pad = " " * 5
    text = (
        "<tool_call><function=read_file><parameter=path>a</parameter>"
        f"{pad}</parameter></function></tool_call>"
    )
    check(
        QWEN,
        text,
        [
            ("start", "read_file", 0),
            ("param", "path", f"a</parameter>{pad}"),
            ("call", "read_file", ReadFile(path=f"a</parameter>{pad}"), 0),
        ],
        buffer_keep_size=4,
    )


def test_qwen3_unknown_and_repeated_parameters() -> None:
    text = (
        "<tool_call><function=read_file><parameter=mode>fast</parameter>"
        "<parameter=path>a</parameter><parameter=path>b</parameter></function></tool_call>"
    )
    check(
        QWEN,
        text,
        [
            ("start", "read_file", 0),
            ("error", "unknown_param"),
            ("param", "path", "a"),
            ("error", "duplicate_param"),
            ("param", "path", "b"),
            ("call", "read_file", ReadFile(path="b"), 0),
        ],
    )


def test_qwen3_unknown_tool_gives_no_start() -> None:
    text = "<tool_call><function=rm_rf><parameter=path>/</parameter></function></tool_call>"
    check(QWEN, text, [("error", "unknown_tool"), ("text", text)])


def test_qwen3_invalid_params() -> None:
    text = (
        "<tool_call><function=execute_command><parameter=command>ls</parameter>"
        "<parameter=requires_approval>perhaps</parameter></function></tool_call>"
    )
    events = check(
        QWEN,
        text,
        [
            ("start", "execute_command", 0),
            ("param", "command", "ls"),
            ("param", "requires_approval", "perhaps"),
            ("error", "invalid_params"),
            ("text", text),
        ],
    )
    assert _error(events).details[0]["loc"] == ["requires_approval"]


@pytest.mark.parametrize(
    "body",
    [
        "<function read_file>",
        "<function=read_file>junk<parameter=path>a</parameter></function>",
        "<function=read_file><parameter=path>a</parameter></function>trailing",
        "<function=read_file>\n",
        "<function=read_file><parameter=path>a</parameter><parameter=>b</parameter></function>",
        '{"name": "read_file"}',
    ],
)
def test_qwen3_malformed(body: str) -> None:
    text = f"<tool_call>{body}</tool_call>after"
    events = assert_all_splittings(factory(QWEN), text)
    check_spans(events, text)
    assert not any(isinstance(e, ToolCallEvent) for e in events)
    assert describe(events)[-2:] == [("error", "malformed_tool"), ("text", text)]


def test_qwen3_end_tag_inside_an_unconfirmed_value_keeps_the_call_open() -> None:
    # </parameter> followed by </tool_call> (no </function>) is not a close: the value,
    # and with it the call, runs on to the end of the stream.
    text = "<tool_call><function=read_file><parameter=path>a</parameter></tool_call> bye"
    check(
        QWEN,
        text,
        [
            ("start", "read_file", 0),
            ("param", "path", "a</parameter></tool_call> bye"),
            ("error", "unclosed_tool"),
            ("text", text),
        ],
    )


def test_qwen3_unclosed() -> None:
    text = "<tool_call>\n<function=read_file>\n<parameter=path>\na.py\n</parameter>\n</function>\n"
    check(
        QWEN,
        text,
        [
            ("start", "read_file", 0),
            ("param", "path", "\na.py\n"),
            ("error", "unclosed_tool"),
            ("text", text),
        ],
    )


# --- both formats, and the plugin -----------------------------------------------------------


def test_both_formats_in_one_stream() -> None:
    hermes = '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>'
    qwen = "<tool_call><function=read_file><parameter=path>b</parameter></function></tool_call>"
    check(
        BOTH,
        f"{hermes}\n{qwen}\n<read_file><path>c</path></read_file>",
        [
            ("start", "read_file", 0),
            ("args", '{"path": "a"}'),
            ("call", "read_file", ReadFile(path="a"), 0),
            # The newline between the calls frames the second one (in its span).
            ("start", "read_file", 1),
            ("param", "path", "b"),
            ("call", "read_file", ReadFile(path="b"), 1),
            ("framing",),  # the line break after a call; no xml: the tags are text
            ("text", "<read_file><path>c</path></read_file>"),
        ],
    )


def test_all_dialects_at_once() -> None:
    text = (
        "<read_file><path>x</path></read_file>"
        '<tool_call> {"name": "read_file", "arguments": {"path": "y"}}</tool_call>'
        "<tool_call> <function=read_file><parameter=path>z</parameter></function></tool_call>"
    )
    events = assert_all_splittings(factory(ALL), text)
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [(c.tool_instance.path, c.call_index) for c in calls] == [("x", 0), ("y", 1), ("z", 2)]


def test_one_plugin_for_both_tool_call_dialects() -> None:
    # One <tool_call> plugin for both; qwen3_coder adds the reader of its calls
    # written without <tool_call> (a bare <function=NAME>).
    plugins = dialect_plugins(("qwen3_coder", "xml", "hermes"))
    assert len(plugins) == 2
    plugin = plugins[0]
    assert isinstance(plugin, ToolCallPlugin)
    assert plugin.formats == ("qwen3_coder", "hermes")
    assert isinstance(plugins[1], BareFunctionPlugin)
    assert dialect_plugins(("xml",)) == []
    assert [type(p) for p in dialect_plugins(("hermes",))] == [ToolCallPlugin]
    parser = StreamToolParser(TOOLS, config=ParserConfig(dialect=BOTH))
    assert [p.name for p in parser.plugins] == ["tool_call", "qwen3_coder_function"]


def test_configuration_errors() -> None:
    with pytest.raises(ConfigError, match="unknown dialect"):
        StreamToolParser(TOOLS, config=ParserConfig(dialect="no_such_dialect"))
    with pytest.raises(ConfigError, match="unknown dialect"):
        get_dialect("no_such_dialect")
    with pytest.raises(ConfigError):
        ToolCallPlugin(())
    with pytest.raises(ConfigError, match="cannot read"):
        ToolCallPlugin(("llama",))
    with pytest.raises(ConfigError, match="already registered"):
        StreamToolParser(TOOLS, config=ParserConfig(dialect="hermes"), plugins=[ToolCallPlugin()])

    class Other(ToolCallPlugin):
        name = "other"

    with pytest.raises(ConfigError, match="claimed twice"):
        StreamToolParser(TOOLS, config=ParserConfig(dialect="hermes"), plugins=[Other()])


def test_plugin_can_be_added_by_hand() -> None:
    parser = StreamToolParser(TOOLS).use(ToolCallPlugin(("hermes",)))
    text = (
        'a<tool_call>{"name": "read_file", "arguments": {"path": "q"}}</tool_call>'
        "<read_file><path>r</path></read_file>"
    )
    events = feed_all(parser, [text])
    assert_lossless(events, text)
    paths = [e.tool_instance.path for e in events if isinstance(e, ToolCallEvent)]
    assert paths == ["q", "r"]


def test_strict_mode_raises_on_dialect_errors() -> None:
    parser = StreamToolParser(TOOLS, config=ParserConfig(dialect=BOTH, strict=True))
    with pytest.raises(StrictModeError):
        feed_all(parser, ['<tool_call>{"name": "nope"}</tool_call>'])
    parser = StreamToolParser(TOOLS, config=ParserConfig(dialect=BOTH, strict=True))
    with pytest.raises(StrictModeError):
        parser.feed("<tool_call><function=read_file><parameter=bogus>1</parameter>")


def test_validation_disabled_builds_without_validating() -> None:
    text = '<tool_call>{"name": "search", "arguments": {"query": 3}}</tool_call>'
    events = feed_all(
        StreamToolParser(TOOLS, config=ParserConfig(dialect=HERMES, enable_xml_validation=False)),
        [text],
    )
    call = next(e for e in events if isinstance(e, ToolCallEvent))
    assert call.tool_instance.query == 3


def test_a_validator_that_raises_is_reported() -> None:
    class Picky(BaseModel):
        x: int

        @field_validator("x")
        @classmethod
        def boom(cls, value: int) -> int:
            raise RuntimeError("bug in the validator")

    text = '<tool_call>{"name": "picky", "arguments": {"x": 1}}</tool_call>'
    events = feed_all(
        StreamToolParser({"picky": Picky}, config=ParserConfig(dialect=HERMES)), [text]
    )
    assert _error(events).error_type == "invalid_params"
    assert isinstance(events[-1], TextOutputEvent) and events[-1].text == text


@pytest.mark.parametrize(
    ("dialects", "text"),
    [
        (
            HERMES,
            '<tool_call>{"name": "read_file", "arguments": {"path": ["\\ud800"]}}</tool_call>',
        ),
        (HERMES, '<tool_call>{"name": "read_file", "arguments": {"\\ud800": 1}}</tool_call>'),
        (HERMES, '<tool_call>{"name": "\\ud800"}</tool_call>'),
        (QWEN, "<tool_call><function=search><parameter=max_results>\ud800</parameter></function>"),
    ],
)
def test_lone_surrogates_do_not_raise(dialects: tuple[str, ...], text: str) -> None:
    # Found while writing these tests: exc.json() cannot encode a lone surrogate that
    # JSON text escaped as \ud800, so Pydantic's errors are converted another way.
    events = assert_all_splittings(factory(dialects), text)
    assert not any(isinstance(e, ToolCallEvent) for e in events)
    assert describe(events)[-1] == ("text", text)


def test_deeply_nested_arguments_do_not_raise() -> None:
    # Found while writing these tests: JSON nested nearly as deep as the recursion limit
    # parses, but serialising Pydantic's errors (which hold it as "input") overflowed.
    def nest(frames: int, text: str) -> list[ParseEvent]:
        if frames:
            return nest(frames - 1, text)
        return feed_all(StreamToolParser(TOOLS, config=ParserConfig(dialect=HERMES)), [text])

    for frames in (0, 25):
        for depth in range(940, 1000):
            text = (
                '<tool_call>{"name": "read_file", "arguments": {"path": '
                + "[" * depth
                + "]" * depth
                + "}}</tool_call>"
            )
            events = nest(frames, text)
            assert describe(events)[-1] == ("text", text)
            assert isinstance(events[-2], ParseErrorEvent)


@pytest.mark.parametrize(
    ("dialects", "text", "index"),
    [
        (HERMES, '<tool_call>{"name": "read_file", "arguments": {}}</tool_call>', 0),
        (HERMES, '<tool_call>{"name": "read_file", "arguments": {"path": "a"}', 0),
        (HERMES, '<tool_call>{"name": "nope", "arguments": {}}</tool_call>', None),
        (HERMES, "<tool_call>{oops</tool_call>", None),
        (QWEN, "<tool_call><function=read_file><parameter=x>1</parameter></function>", 0),
        (QWEN, "<tool_call><function=read_file></tool_call>", 0),
        (QWEN, "<tool_call><function=nope></function></tool_call>", None),
    ],
)
def test_errors_name_the_call_they_belong_to(
    dialects: tuple[str, ...], text: str, index: int | None
) -> None:
    """An error event carries the call_index of a call that was announced, else None."""
    events = feed_all(StreamToolParser(TOOLS, config=ParserConfig(dialect=dialects)), [text])
    errors = [e for e in events if isinstance(e, ParseErrorEvent)]
    assert errors and all(e.call_index == index for e in errors)
    starts = [e.call_index for e in events if isinstance(e, ToolCallStartEvent)]
    assert starts == ([] if index is None else [index])


@pytest.mark.parametrize(
    "text",
    [
        "Use `<tool_call>` to call tools.",
        "Wrap each call in <tool_call> tags.",
        "<tool_call>read_file(path='a')</tool_call> is not a format we read.",
        'In backticks: `<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>`',
    ],
)
def test_prose_mentioning_the_tag_is_text(text: str) -> None:
    # Rule 3 for the <tool_call> tag: it opens a call only when "{", "[" or "<" follows
    # (after optional whitespace) and no backtick precedes it; otherwise it is prose and
    # streams on at once, in every dialect combination.
    for dialect in (HERMES, QWEN, BOTH):
        check(dialect, text, [("text", text)])


# --- describing a dialect for prompts -------------------------------------------------------


@pytest.mark.parametrize("name", ["xml", "hermes", "qwen3_coder"])
def test_format_call_reads_back(name: str) -> None:
    dialect = get_dialect(name)
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search", {"query": "a < b && c", "max_results": 3, "tags": ["x", "</tool_call>"]}),
        ("write_to_file", {"path": "a.py", "content": 'if a < b:\n    print("</tool_call>")\n'}),
        ("execute_command", {"command": "echo '</function>'", "requires_approval": True}),
    ]
    text = "\n".join(dialect.format_call(tool, args) for tool, args in calls)
    events = feed_all(StreamToolParser(TOOLS, config=ParserConfig(dialect=name)), [text])
    assert_lossless(events, text)
    got = [e.tool_instance for e in events if isinstance(e, ToolCallEvent)]
    assert got == [TOOLS[tool].model_validate(args) for tool, args in calls]


def test_usage_instructions_show_the_format() -> None:
    assert {"xml", "hermes", "qwen3_coder"} <= set(DIALECTS)
    for name, dialect in DIALECTS.items():
        assert isinstance(dialect, Dialect) and dialect.name == name and dialect.title
        text = dialect.usage_instructions("read_file", {"path": "a.py"})
        assert dialect.format_call("read_file", {"path": "a.py"}) in text
        assert "parameter_name" in dialect.usage_instructions()
    assert "<tool_call>" in HermesDialect().usage_instructions()
    assert "<function=" in Qwen3CoderDialect().usage_instructions()
    assert repr(get_dialect("hermes")) == "<HermesDialect 'hermes'>"


def test_format_call_refuses_values_it_cannot_write() -> None:
    with pytest.raises(ValueError, match="qwen3_coder"):
        Qwen3CoderDialect().format_call("f", {"p": "a</parameter>\n<parameter=q>"})
    # Markup that would end a value whose </parameter> is missing, or make it malformed.
    for value in (
        "<parameter=q>",
        "a\n  <parameter=q>",
        "a</function>\n</tool_call>",
        "</function><function=g>",
        "</function> <tool_call>",
    ):
        with pytest.raises(ValueError, match="qwen3_coder"):
            Qwen3CoderDialect().format_call("f", {"p": value})
    # Mid-line tags, and </function> before anything else, are written as they are.
    for value in ("a <parameter=q>", "</function> x", "</function>\n</parameter>"):
        assert value in Qwen3CoderDialect().format_call("f", {"p": value})
    # The xml dialect never refuses: it falls back to CDATA.
    assert XmlDialect().format_call("f", {"p": "a</p>"}) == "<f>\n<p><![CDATA[a</p>]]></p>\n</f>"
    with pytest.raises(NotImplementedError):
        Dialect().format_call("f", {})


# --- every dialect: a reply that is cut -----------------------------------------------------

_GPT_OSS = GptOssDialect()
# Each dialect in every form it writes, and the marker that closes its call (for a format
# whose call ends where its JSON ends, the JSON's last brace).
_CLOSED_CALLS: list[tuple[str, Callable[[str, dict[str, Any]], str], str]] = [
    ("xml", XmlDialect().format_call, "</read_file>"),
    ("hermes", HermesDialect().format_call, "</tool_call>"),
    ("qwen3_coder", Qwen3CoderDialect().format_call, "</function>\n</tool_call>"),
    ("glm", GlmDialect().format_call, "</tool_call>"),
    ("deepseek", DeepSeekDialect("v3.1").format_call, deepseek.CALL_END),
    ("deepseek", DeepSeekDialect("v3").format_call, deepseek.CALL_END),
    ("deepseek", DeepSeekDialect("dsml").format_call, f"</{deepseek.DSML}invoke>"),
    ("gemma4", Gemma4Dialect().format_call, "<tool_call|>"),
    ("gpt_oss", _GPT_OSS.format_call, "<|call|>"),
    ("gpt_oss", lambda *a: _GPT_OSS.format_call(*a).replace("<|call|>", "<|end|>"), "<|end|>"),
    (
        "gpt_oss",
        lambda *a: _GPT_OSS.format_call(*a).replace("<|call|>", "<|return|>"),
        "<|return|>",
    ),
    ("kimi", KimiDialect("k2").format_call, kimi.CALL_END),
    ("kimi", KimiDialect("k3").format_call, f"{kimi.CLOSE}call{kimi.SEP}"),
    ("llama", LlamaDialect().format_call, "}"),
    ("mistral", MistralDialect().format_call, "}"),
]


@pytest.mark.parametrize(
    ("dialect", "write", "marker"), _CLOSED_CALLS, ids=[f"{d}-{m}" for d, _, m in _CLOSED_CALLS]
)
def test_a_call_whose_closing_marker_is_cut_never_runs_in_a_cut_reply(
    dialect: str, write: Callable[[str, dict[str, Any]], str], marker: str
) -> None:
    # Cut anywhere in its closing marker (or right before it) by the length limit or a
    # stream error, the call is unclosed_tool: code that runs the parser's ToolCallEvents
    # itself must never run a cut call.  Whole, the same reply runs the call.
    make = factory((dialect,), start_in_thinking=False)
    call = write("read_file", {"path": "a.py"})
    at = call.rindex(marker)
    for end in ENDINGS[1:]:
        assert [c.tool_name for c in run(make, [call], end) if isinstance(c, ToolCallEvent)] == [
            "read_file"
        ]
        for cut in range(at, at + len(marker)):
            text = call[:cut]
            for chunks in ([text], list(text), [text[:at], text[at:]]):
                events = run(make, chunks, end)
                assert not [e for e in events if isinstance(e, ToolCallEvent)], (cut, end, chunks)
                errors = [e.error_type for e in events if isinstance(e, ParseErrorEvent)]
                assert "unclosed_tool" in errors, (text, end, errors)


# --- properties -----------------------------------------------------------------------------

FRAGMENTS = [
    "<tool_call>",
    "</tool_call>",
    "<tool_",
    "{",
    "}",
    "[",
    "]",
    '"',
    "\\",
    '\\"',
    ":",
    ",",
    '"name"',
    '"arguments"',
    '"read_file"',
    '"path"',
    "<function=",
    "<function=read_file>",
    "<function=search>",
    "</function>",
    "<parameter=",
    "<parameter=path>",
    "<parameter=query>",
    "</parameter>",
    "<read_file>",
    "<path>",
    "</path>",
    "</read_file>",
    "<think>",
    "</think>",
    "<",
    ">",
    "\n",
    " ",
    "a",
    "null",
    "1",
    "\ud800",
    "\\ud800",
]

_WRITERS: list[Dialect] = [
    *DIALECTS.values(),
    DeepSeekDialect("v3"),
    DeepSeekDialect("dsml"),
    KimiDialect("k3"),
]
_PIECE = re.compile(r"(<[^<>]*>|\[/?[A-Z_]+\]|[{}\[\]\"',:=\n ])")  # a marker, punctuation
_MARK = re.compile(r"[<\[{]")  # where a marker may begin


def _fragments_of(name: str) -> list[str]:
    """Pieces of a dialect's own markup, to build random texts of.

    Its calls whole and cut into markers and punctuation, its markers cut in half (as
    the end of a stream may cut them), the tags of its plugins and its reasoning tags.
    """
    pieces: set[str] = set()
    for plugin in dialect_plugins((name,)):
        pieces.update((*plugin.start_tags, plugin.end_tag))
    for dialect in _WRITERS:
        if dialect.name != name:
            continue
        for call in (
            dialect.format_call("read_file", {"path": "a.py"}),
            dialect.format_call("search", {"query": "x", "max_results": 3}),
        ):
            pieces.add(call)
            for piece in _PIECE.split(call):
                pieces.update((piece, piece[: len(piece) // 2]))
    thinking = get_dialect(name).thinking
    for pair in thinking.tags if thinking is not None else ():
        pieces.update(pair)
    pieces.discard("")
    return sorted(pieces)


_DIALECT_FRAGMENTS = {name: _fragments_of(name) for name in DIALECTS}
_CHOICES: list[tuple[str, ...]] = [*((name,) for name in sorted(DIALECTS)), BOTH, ALL]
_OPTIONS: list[dict[str, Any]] = [
    {},
    {"max_tool_size": 40, "buffer_keep_size": 2},
    {"emit_deltas": False},
    {"start_in_thinking": False},
    {"max_thinking_size": 8},
]


@st.composite
def streams(draw: st.DrawFn) -> tuple[str, ParserConfig]:
    """A configuration of one dialect (or several) and a text of its markup and noise.

    The text is noise (fragments of the dialect's markup and random characters) around
    a call the dialect writes, with markup in its content; the call may be cut anywhere,
    often at or just after the start of a marker, where the end of the stream leaves a
    tag undecided.  Some configurations put the size limit there too.
    """
    dialects = draw(st.sampled_from(_CHOICES))
    pool = sorted({*FRAGMENTS, *(f for name in dialects for f in _DIALECT_FRAGMENTS[name])})
    noise = st.lists(st.one_of(st.sampled_from(pool), st.text(max_size=2)), max_size=16)
    writer = draw(st.sampled_from([w for w in _WRITERS if w.name in dialects]))
    content = "".join(draw(st.lists(st.sampled_from(pool), max_size=6)))
    try:
        call = writer.format_call("write_to_file", {"path": "a.py", "content": content})
    except ValueError:  # a content this format cannot hold
        call = writer.format_call("read_file", {"path": "a.py"})
    marks = [m.start() for m in _MARK.finditer(call)]
    near_mark = st.sampled_from(marks).flatmap(lambda at: st.integers(at, at + 3))
    options = dict(draw(st.sampled_from(_OPTIONS)))
    if draw(st.booleans()):
        options["max_tool_size"] = max(1, draw(near_mark))
    how = draw(st.sampled_from(["whole", "cut", "cut at a marker"]))
    if how == "cut":
        call = call[: draw(st.integers(0, len(call)))]
    elif how == "cut at a marker":
        call = call[: draw(near_mark)]
    text = "".join(draw(noise)) + call + ("".join(draw(noise)) if how == "whole" else "")
    return text, ParserConfig(dialect=dialects, **options)


PROPS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@settings(PROPS, max_examples=300)
@given(streams(), st.lists(st.integers(min_value=0), max_size=8), st.sampled_from(ENDINGS))
def test_chunking_invariance_and_lossless(
    stream: tuple[str, ParserConfig], cuts: list[int], end: ChatDelta | None
) -> None:
    # Every dialect, however the reply ends: whole, cut at random and a character at a
    # time, the events are the same, error events and every span included.
    text, config = stream

    def run(chunks: list[str]) -> list[ParseEvent]:
        events = feed_all(StreamToolParser(TOOLS, config=config), chunks, end)
        assert_lossless(events, text)
        return merge_deltas(events)

    whole = run([text])
    check_spans(whole, text)
    # One error vocabulary: every error type is an ErrorType (a call that cannot be read
    # is malformed_tool; invalid_params is only for arguments that were read).
    vocabulary = {t.value for t in ErrorType}
    assert all(e.error_type in vocabulary for e in whole if isinstance(e, ParseErrorEvent))
    points = sorted({c % (len(text) + 1) for c in cuts})
    assert run(splits(text, points)) == whole
    assert run(list(text)) == whole


_hostile = st.lists(
    st.sampled_from(
        [
            "a",
            " ",
            "\n",
            '"',
            "\\",
            "<",
            ">",
            "/",
            "{",
            "}",
            "</tool_call>",
            "</parameter>",
            "<parameter=path>",
            "</function>",
            "é",
            "\t",
        ]
    ),
    max_size=30,
).map("".join)


@PROPS
@given(
    st.sampled_from(["hermes", "qwen3_coder"]),
    st.text(alphabet="abc./_", min_size=1, max_size=10),
    _hostile,
)
def test_any_written_call_reads_back(name: str, path: str, content: str) -> None:
    dialect = get_dialect(name)
    assume(not content.endswith("\r"))
    try:
        text = dialect.format_call("write_to_file", {"path": path, "content": content})
    except ValueError:
        assume(False)
        raise
    events = feed_all(StreamToolParser(TOOLS, config=ParserConfig(dialect=name)), [f"x{text}y"])
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [c.tool_instance for c in calls] == [WriteToFile(path=path, content=content)]


_prose = st.lists(
    st.sampled_from(["a", " ", "\n", "<", ">", "{", '"', "</tool_call>", "<tool_", "`", "é"]),
    max_size=6,
).map("".join)


@st.composite
def replies(draw: st.DrawFn) -> tuple[str, int]:
    """A reply of prose and calls in either format; some calls cut short or mangled.

    Returns the text and how many valid calls it holds at least (none are promised
    after a mangled call: an unterminated string in it may swallow the rest).
    """
    parts: list[str] = []
    complete = 0
    clean = True
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        # A backtick right before <tool_call> would make it prose (rule 3): avoid it here.
        parts.append(draw(_prose).replace("<tool_", "<tool").rstrip("`"))
        name = draw(st.sampled_from(["hermes", "qwen3_coder"]))
        args = {"path": draw(st.sampled_from(["a.py", "b c", "é"])), "content": draw(_hostile)}
        if name == "qwen3_coder" and _would_misread(args["content"]):
            continue
        call = get_dialect(name).format_call("write_to_file", args)
        how = draw(st.sampled_from(["whole", "whole", "cut", "mangle"]))
        if how == "cut":
            call = call[: draw(st.integers(min_value=0, max_value=len(call) - 1))]
            parts.append(call)
            break  # the rest of the stream belongs to the unclosed call
        if how == "mangle":
            i = draw(st.integers(min_value=len("<tool_call>"), max_value=len(call) - 1))
            call = call[:i] + draw(st.sampled_from(["}", '"', "<", "</parameter>", "x"])) + call[i:]
            clean = False
        else:
            complete += 1
        parts.append(call)
    return "".join(parts), complete if clean else 0


def _would_misread(content: str) -> bool:
    try:
        Qwen3CoderDialect().format_call("f", {"content": content})
    except ValueError:
        return True
    return False


@PROPS
@given(replies(), st.lists(st.integers(min_value=0), max_size=8))
def test_replies_with_calls_are_read_the_same_however_cut(
    reply: tuple[str, int], cuts: list[int]
) -> None:
    text, complete = reply

    def run(chunks: list[str]) -> list[ParseEvent]:
        events = feed_all(StreamToolParser(TOOLS, config=ParserConfig(dialect=BOTH)), chunks)
        assert_lossless(events, text)
        return merge_deltas(events)

    whole = run([text])
    check_spans(whole, text)
    assert run(splits(text, sorted({c % (len(text) + 1) for c in cuts}))) == whole
    assert run(list(text)) == whole
    assert sum(isinstance(e, ToolCallEvent) for e in whole) >= complete


# --- linear time ----------------------------------------------------------------------------


def _time_per_size(make: Any, sizes: tuple[int, int]) -> list[float]:
    times = []
    for n in sizes:
        text = make(n)
        chunks = [text[i : i + 16] for i in range(0, len(text), 16)]
        best = float("inf")
        for _ in range(3):
            parser = StreamToolParser(TOOLS, config=ParserConfig(dialect=BOTH))
            t0 = time.perf_counter()
            events = feed_all(parser, chunks)
            best = min(best, time.perf_counter() - t0)
        assert isinstance(
            next(e for e in events if isinstance(e, (ToolCallEvent, ParseErrorEvent))),
            ToolCallEvent,
        )
        times.append(best)
    return times


def _hermes_big(n: int) -> str:
    body = ('x = \\"</tool_call>\\"\\n' * (n // 22 + 1))[:n].rstrip("\\")
    args = f'{{"path": "a", "content": "{body}"}}'
    return f'<tool_call>{{"name": "write_to_file", "arguments": {args}}}</tool_call>'


def _qwen_big(n: int) -> str:
    body = ("</parameter>x</tool_call>\n" * (n // 26 + 1))[:n]
    return (
        "<tool_call><function=write_to_file><parameter=path>a</parameter><parameter=content>"
        f"{body}</parameter></function></tool_call>"
    )


@pytest.mark.slow
@pytest.mark.parametrize("make", [_hermes_big, _qwen_big], ids=["hermes", "qwen3_coder"])
def test_time_is_linear_in_the_size_of_a_call(make: Any) -> None:
    small, large = _time_per_size(make, (40_000, 160_000))
    # Linear: about 4x.  Quadratic would be about 16x.
    assert large < 8 * small + 0.02, (small, large)


@pytest.mark.parametrize("family", ["mistral", "gpt_oss", "gemma4"])
@pytest.mark.parametrize("usual", ["xml", "hermes", "qwen3_coder"])
def test_the_usual_thinking_tags_stay_when_combined_with_a_family(family: str, usual: str) -> None:
    config = ParserConfig(dialect=(usual, family))
    pairs = dict(config.thinking_pairs)
    assert pairs["<think>"] == "</think>"
    assert len(pairs) > 2  # the family's own format too


def test_xml_fixture_cases_read_under_every_chunking() -> None:
    """The XML dialect's fixtures: its rules on whitespace, stray tags and cut replies."""
    folder = Path(__file__).parent.parent / "fixtures" / "dialects" / "xml"
    events = check_dialect("xml", folder)
    assert list(events) == [case["name"] for case in load_cases(folder)]
