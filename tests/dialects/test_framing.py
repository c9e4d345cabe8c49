"""Framing of the Qwen chat templates, and qwen3_coder calls without ``<tool_call>``.

The Qwen3 templates write ``<think>\\n…\\n</think>\\n\\n`` and ``\\n<tool_call>\\n…``; the
hermes and qwen3_coder dialects declare these strings, and they belong to the spans of
the blocks they frame.  Every stream goes through ``assert_all_splittings`` (whole, one
character at a time, split at every position), each run lossless.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream_parser import (
    CodeBlockEvent,
    FramingEvent,
    NoticeEvent,
    ParseEvent,
    ParsePlugin,
    ParserConfig,
    StreamToolParser,
    ThinkingEvent,
    ToolCallEvent,
)
from stream_parser.core._dialect_registry import (
    NO_FRAMING,
    QWEN3_FRAMING,
    Framing,
    dialect_framing,
)
from stream_parser.core.plugins import PluginBlock
from stream_parser.dialects import DIALECTS, BareFunctionPlugin, ToolCallPlugin
from stream_parser.testing import assert_lossless, merge_deltas
from tests.dialects.test_dialects import ALL, BOTH, HERMES, QWEN, check, factory
from tests.helpers import assert_all_splittings, feed_all
from tests.tools_fixture import TOOLS, ReadFile

HERMES_CALL = '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>'
QWEN_CALL = (
    "<tool_call>\n<function=read_file>\n<parameter=path>\na.py\n</parameter>\n</function>\n"
    "</tool_call>"
)
BARE_CALL = "<function=read_file>\n<parameter=path>\na.py\n</parameter>\n</function>"


def _spans(dialects: tuple[str, ...], text: str) -> list[tuple[str, object, tuple[int, int]]]:
    events = assert_all_splittings(factory(dialects), text)
    out: list[tuple[str, object, tuple[int, int]]] = []
    for e in events:
        if e.kind == "text":
            out.append(("text", e.text, e.span))  # type: ignore[attr-defined]
        elif isinstance(e, ThinkingEvent):
            out.append(("thinking", e.content, e.span))
        elif isinstance(e, ToolCallEvent):
            out.append(("call", e.tool_instance, e.span))
        elif e.kind == "error":
            out.append(("error", e.error_type, e.span))  # type: ignore[attr-defined]
    return out


# --- the declarations ----------------------------------------------------------------------


def test_the_dialects_declare_their_framing() -> None:
    assert DIALECTS["xml"].framing == NO_FRAMING
    assert DIALECTS["hermes"].framing == QWEN3_FRAMING
    assert DIALECTS["qwen3_coder"].framing == QWEN3_FRAMING
    assert (
        Framing(thinking_open="\n", thinking_close="\n", after_thinking="\n\n", before_call="\n")
        == QWEN3_FRAMING
    )
    assert dialect_framing(("xml",)) == NO_FRAMING
    assert dialect_framing(("xml", "hermes")) == QWEN3_FRAMING
    assert Framing(thinking_open="x").merge(QWEN3_FRAMING).thinking_open == "x"


def test_the_tool_call_plugin_opens_with_the_framing_too() -> None:
    parser = StreamToolParser(TOOLS, config=ParserConfig(dialect="hermes"))
    (plugin,) = parser.plugins
    assert isinstance(plugin, ToolCallPlugin)
    assert plugin.start_tags == ("<tool_call>", "\n<tool_call>")
    assert ToolCallPlugin().start_tags == ("<tool_call>",)


# --- thinking -------------------------------------------------------------------------------


def test_qwen3_thinking_framing_belongs_to_the_block() -> None:
    text = "<think>\nThe user wants a.py.\n</think>\n\nReading it."
    for dialects in (HERMES, QWEN, BOTH, ALL):
        assert _spans(dialects, text) == [
            ("thinking", "The user wants a.py.", (0, 39)),
            ("text", "Reading it.", (39, 50)),
        ]


def test_the_xml_dialect_has_no_framing() -> None:
    text = "<think>\nhm\n</think>\n\nok\n<tool_call>"
    check(
        ("xml",),
        text,
        [
            ("thinking_delta", "\nhm\n"),
            ("thinking", "\nhm\n", True),
            ("text", "\n\nok\n<tool_call>"),
        ],
    )


@pytest.mark.parametrize(
    ("text", "content", "after", "framing"),
    [
        ("<think>hm</think>ok", "hm", "ok", []),  # no framing: nothing to remove
        # One of each in the block's span; the line break left after it is framing too.
        ("<think>\n\nhm\n\n</think>\n\n\nok", "\nhm\n", "ok", ["\n"]),
        ("<think>\nhm</think>\nok", "hm", "ok", ["\n"]),  # a partial blank line
        ("<think>hm\n</think>ok", "hm", "ok", []),
        ("<think>\n</think>\n\n", "", "", []),
        ("<think></think>", "", "", []),
        ("<think>a\nb</think>\n", "a\nb", "", ["\n"]),
        ("<think>\r\nhm\r\n</think>", "\r\nhm\r", "", []),  # only the template's "\n"
    ],
)
def test_thinking_framing_is_exact(text: str, content: str, after: str, framing: list[str]) -> None:
    events = assert_all_splittings(factory(HERMES), text)
    thinking = next(e for e in events if isinstance(e, ThinkingEvent))
    assert thinking.content == content
    deltas = "".join(e.delta for e in events if e.kind == "thinking_delta")  # type: ignore[attr-defined]
    assert deltas == content
    assert "".join(e.text for e in events if e.kind == "text") == after  # type: ignore[attr-defined]
    assert [e.text for e in events if isinstance(e, FramingEvent)] == framing


def test_unclosed_thinking_keeps_its_last_newline() -> None:
    check(
        HERMES,
        "<think>\nstill thinking\n",
        [
            ("thinking_delta", "still thinking\n"),
            ("error", "unclosed_thinking"),
            ("thinking", "still thinking\n", False),
        ],
    )


def test_start_in_thinking_with_framing() -> None:
    text = "\nhm\n</think>\n\nok"
    events = assert_all_splittings(factory(QWEN, start_in_thinking=True), text)
    thinking = next(e for e in events if isinstance(e, ThinkingEvent))
    assert (thinking.content, thinking.span) == ("hm", (0, 14))


def test_thinking_deltas_do_not_wait_for_more_than_the_framing() -> None:
    parser = StreamToolParser(TOOLS, config=ParserConfig(dialect="hermes"))
    parser.feed("<think>\nline one\nline")
    assert parser.pending == ""
    events = parser.feed(" two\n")
    assert [e.delta for e in events] == [" two"]  # type: ignore[attr-defined]
    assert parser.pending == "\n"  # it may be the framing before </think>
    events = parser.feed("more")
    assert [e.delta for e in events] == ["\nmore"]  # type: ignore[attr-defined]


# --- the newline before a call --------------------------------------------------------------


def test_the_newline_before_a_call_belongs_to_it() -> None:
    text = f"Reading it.\n{HERMES_CALL}\n{HERMES_CALL}\nDone."
    assert _spans(HERMES, text) == [
        ("text", "Reading it.", (0, 11)),
        ("call", ReadFile(path="a.py"), (11, 11 + 1 + len(HERMES_CALL))),
        ("call", ReadFile(path="a.py"), (12 + len(HERMES_CALL), 13 + 2 * len(HERMES_CALL))),
        # The line break after the last call is framing (a FramingEvent, not shown).
        ("text", "Done.", (14 + 2 * len(HERMES_CALL), len(text))),
    ]


def test_qwen3_reply_as_the_template_writes_it() -> None:
    text = f"<think>\nI need a.py.\n</think>\n\nLet me read it.\n{QWEN_CALL}"
    assert [(kind, value) for kind, value, _ in _spans(QWEN, text)] == [
        ("thinking", "I need a.py."),
        ("text", "Let me read it."),
        ("call", ReadFile(path="a.py")),
    ]


def test_a_trailing_newline_is_held_only_while_a_call_may_follow() -> None:
    parser = StreamToolParser(TOOLS, config=ParserConfig(dialect="hermes"))
    assert [e.text for e in parser.feed("Hello.\n")] == ["Hello."]  # type: ignore[attr-defined]
    assert parser.pending == "\n"
    assert [e.text for e in parser.feed("Bye.")] == ["\nBye."]  # type: ignore[attr-defined]
    assert [e.text for e in parser.close()] == []  # type: ignore[attr-defined]
    # At the end of the stream the held newline is text.
    parser = StreamToolParser(TOOLS, config=ParserConfig(dialect="hermes"))
    events = parser.feed("Hello.\n") + parser.close()
    assert "".join(e.text for e in events) == "Hello.\n"  # type: ignore[attr-defined]
    # The XML dialect holds nothing.
    parser = StreamToolParser(TOOLS)
    assert [e.text for e in parser.feed("Hello.\n")] == ["Hello.\n"]  # type: ignore[attr-defined]


def test_prose_after_a_newline_is_text_with_its_newline() -> None:
    text = "Wrap calls like this:\n<tool_call> tags\nok"
    check(HERMES, text, [("text", text)])


def test_a_broken_framed_call_comes_back_whole() -> None:
    text = 'Oops.\n<tool_call>{"name": "nope", "arguments": {}}</tool_call>'
    assert _spans(HERMES, text) == [
        ("text", "Oops.", (0, 5)),
        ("error", "unknown_tool", (5, len(text))),
        ("text", text[5:], (5, len(text))),
    ]


# --- qwen3_coder calls without <tool_call> --------------------------------------------------


def test_bare_function_call_is_read() -> None:
    text = f"Reading it.\n{BARE_CALL}\n</tool_call>\nDone."
    check(
        QWEN,
        text,
        [
            ("text", "Reading it."),
            ("start", "read_file", 0),
            ("param", "path", "\na.py\n"),
            ("call", "read_file", ReadFile(path="a.py"), 0),
            ("framing",),
            ("text", "Done."),
        ],
    )
    call = next(e for e in assert_all_splittings(factory(QWEN), text) if e.kind == "tool_call")
    assert call.span == (11, len(text) - len("\nDone."))  # the stray </tool_call> included
    assert call.raw == text[11 : call.span[1]]  # type: ignore[attr-defined]


@pytest.mark.parametrize("after", ["", "\n", "</tool_call>", "\n</tool_call>", "\n\nok"])
def test_bare_function_call_at_the_start_and_what_follows(after: str) -> None:
    text = BARE_CALL + after
    events = assert_all_splittings(factory(QWEN), text)
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [c.tool_instance for c in calls] == [ReadFile(path="a.py")]
    stray = after if after.endswith("</tool_call>") else ""
    assert calls[0].span == (0, len(BARE_CALL) + len(stray))


def test_two_bare_calls_and_a_wrapped_one() -> None:
    text = f"{BARE_CALL}\n{BARE_CALL}\n</tool_call>\n{QWEN_CALL}"
    events = assert_all_splittings(factory(QWEN), text)
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    assert [(c.call_index, c.span[1]) for c in calls] == [
        (0, len(BARE_CALL)),
        (1, 2 * len(BARE_CALL) + 1 + len("\n</tool_call>")),
        (2, len(text)),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Call it with <function=read_file> and so on.",  # not at a line start
        "Write\n<function=read_file> to call it.",  # prose follows the tag
        "Write\n`<function=read_file>\n<parameter=path>`",  # after a backtick
        "Like this:\n<function=read file>\n<parameter=path>\na\n</parameter>\n</function>",
        "Like this:\n<function=>\n<parameter=path>\na\n</parameter>\n</function>",
        "<function=read_file>",  # cut without a line break: text
        "Also </function> and </tool_call> alone are text.",
    ],
)
def test_bare_function_prose_is_text(text: str) -> None:
    check(QWEN, text, [("text", text)])


def test_bare_function_only_with_qwen3_coder() -> None:
    check(HERMES, BARE_CALL, [("text", BARE_CALL)])
    check(("xml",), BARE_CALL, [("text", BARE_CALL)])


def test_bare_function_value_holding_the_end_tag() -> None:
    code = "print('</function>')"
    text = (
        "<function=write_to_file>\n<parameter=path>\na.py\n</parameter>\n"
        f"<parameter=content>\n{code}\n</parameter>\n</function>"
    )
    events = assert_all_splittings(factory(QWEN), text)
    call = next(e for e in events if isinstance(e, ToolCallEvent))
    assert call.tool_instance.content == code  # type: ignore[attr-defined]


def test_bare_function_missing_parameter_close() -> None:
    text = "<function=read_file>\n<parameter=path>\na.py\n</function>"
    events = assert_all_splittings(factory(QWEN), text)
    call = next(e for e in events if isinstance(e, ToolCallEvent))
    assert call.tool_instance == ReadFile(path="a.py")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("<function=nope>\n<parameter=x>\n1\n</parameter>\n</function>", "unknown_tool"),
        ("<function=read_file>\n<parameter=path>\na.py\n</parameter>\n", "unclosed_tool"),
        ("<function=read_file>\n", "unclosed_tool"),
        ("<function=read_file>\n<oops>\n</function>", "malformed_tool"),
        ("<function=search>\n<parameter=max_results>\nmany\n</parameter>\n</function>", None),
    ],
)
def test_bare_function_failures_come_back_as_text(text: str, error: str | None) -> None:
    events = assert_all_splittings(factory(QWEN), text)
    errors = [e.error_type for e in events if e.kind == "error"]  # type: ignore[attr-defined]
    assert errors == [error or "invalid_params"]
    assert not any(isinstance(e, ToolCallEvent) for e in events)
    assert events[-1].kind == "text"
    assert events[-1].text == text  # type: ignore[attr-defined]


def test_bare_function_plugin_needs_a_parser() -> None:
    from stream_parser.errors import ConfigError

    with pytest.raises(ConfigError):
        BareFunctionPlugin().on_start("<function=", (0, 10))


# --- properties -----------------------------------------------------------------------------

_PIECES = st.sampled_from(
    [
        "<think>",
        "</think>",
        "\n",
        "\n\n",
        " ",
        "x",
        "ok",
        "`",
        "<",
        "</",
        "<tool_call>",
        "</tool_call>",
        '{"name": "read_file", "arguments": {"path": "a"}}',
        "<function=read_file>",
        "<parameter=path>",
        "</parameter>",
        "</function>",
        "<function=",
        "read_file>",
    ]
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_PIECES, max_size=30).map("".join),
    st.integers(min_value=1, max_value=6),
    st.sampled_from([HERMES, QWEN, BOTH, ALL]),
)
def test_property_framing_never_loses_a_character(
    text: str, size: int, dialects: tuple[str, ...]
) -> None:
    cfg = ParserConfig(dialect=dialects)
    whole = feed_all(StreamToolParser(TOOLS, config=cfg), [text])
    chunks = [text[i : i + size] for i in range(0, len(text), size)]
    pieces = feed_all(StreamToolParser(TOOLS, config=cfg), chunks)
    chars = feed_all(StreamToolParser(TOOLS, config=cfg), list(text))
    assert_lossless(whole, text)
    assert_lossless(pieces, text)
    assert_lossless(chars, text)
    assert merge_deltas(whole) == merge_deltas(pieces) == merge_deltas(chars)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="ab \n`<>/", max_size=40), st.sampled_from([HERMES, QWEN]))
def test_property_framing_removes_only_framing(text: str, dialects: tuple[str, ...]) -> None:
    # Text and thinking content joined with the framing put back give the input.
    reply = f"<think>\n{text}\n</think>\n\n{text}"
    events = merge_deltas(
        feed_all(StreamToolParser(TOOLS, config=ParserConfig(dialect=dialects)), [reply])
    )
    assert_lossless(events, reply)
    thinking = [e for e in events if isinstance(e, ThinkingEvent)]
    if "</think>" not in text:
        assert thinking[0].content == text


@pytest.mark.parametrize("dialects", [HERMES, QWEN])
def test_tool_call_tag_cut_right_after_it_is_a_cut_call(dialects: tuple[str, ...]) -> None:
    text = "Checking\n<tool_call>\n"
    assert _spans(dialects, text) == [
        ("text", "Checking", (0, 8)),
        ("error", "unclosed_tool", (8, len(text))),
        ("text", "\n<tool_call>\n", (8, len(text))),
    ]
    # Without a line break too: the reply was cut right after the opener, not prose.
    # The cut call comes back as text with the space before it.
    text = "Checking <tool_call>"
    assert _spans(dialects, text) == [
        ("text", "Checking ", (0, 9)),
        ("error", "unclosed_tool", (9, len(text))),
        ("text", "<tool_call>", (9, len(text))),
    ]


# --- the plugin attributes behind it, on a plugin of one's own ------------------------------


class _Tagged(ParsePlugin):
    name = "tagged"
    start_tags = ("<v=", "\n<v=")
    end_tag = "</v>"
    line_start_only = True
    next_chars = "["
    named_start = True
    trailing = (";", ";;")

    def on_end(self, block: PluginBlock) -> list[ParseEvent]:
        return [CodeBlockEvent(code=block.raw, language=block.end_tag, span=block.span)]


def _tagged(text: str) -> list[tuple[object, ...]]:
    events = assert_all_splittings(lambda: StreamToolParser({}, plugins=[_Tagged()]), text)
    return [
        ("block", e.code, e.language) if isinstance(e, CodeBlockEvent) else ("text", e.text)  # type: ignore[attr-defined]
        for e in events
    ]


def test_a_plugin_with_a_named_start_tag_and_trailing_framing() -> None:
    assert _tagged("x\n<v=a> [1]</v>;;y") == [
        ("text", "x"),
        ("block", "\n<v=a> [1]</v>;;", "</v>;;"),
        ("text", "y"),
    ]
    assert _tagged("<v=a>[1]</v>;") == [("block", "<v=a>[1]</v>;", "</v>;")]
    assert _tagged("<v=a>[1]</v>") == [("block", "<v=a>[1]</v>", "</v>")]
    for prose in ["<v=a> 1</v>", "x <v=a>[1]</v>", "<v=>[1]</v>", "<v=a b>[1]</v>", "<v=a"]:
        assert _tagged(prose) == [("text", prose)]


# --- a reasoning close with nothing open -----------------------------------------------------


@pytest.mark.parametrize("dialects", [HERMES, QWEN])
def test_a_reasoning_close_with_nothing_open_is_framing_and_a_notice(
    dialects: tuple[str, ...],
) -> None:
    text = "plan</think>answer"
    events = assert_all_splittings(factory(dialects), text)
    assert [(e.kind, e.span) for e in events if not e.kind.endswith("_delta")] == [
        ("text", (0, 4)),
        ("framing", (4, 12)),
        ("notice", (4, 4)),
        ("text", (12, 18)),
    ]
    (notice,) = [e for e in events if isinstance(e, NoticeEvent)]
    assert notice.code == "reasoning_close_without_open"
    assert "start_in_thinking" in notice.message and "probably reasoning" in notice.message
    # Written as inline code, the tag is mentioned, not closed.
    check(dialects, "use `</think>` here", [("text", "use `</think>` here")])


def test_a_reasoning_close_stays_text_where_the_model_writes_no_such_tags() -> None:
    check(("xml",), "plan</think>answer", [("text", "plan</think>answer")])
    check(("llama",), "plan</think>answer", [("text", "plan</think>answer")])
