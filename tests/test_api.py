"""Public API: drivers, stream item kinds, configuration and programmer errors."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from pydantic import BaseModel

import stream_parser
from stream_parser import (
    ChatDelta,
    ConfigError,
    ParseErrorEvent,
    ParserClosedError,
    ParserConfig,
    ParseState,
    StreamParserError,
    StreamToolParser,
    StrictModeError,
    TextOutputEvent,
    ThinkingEvent,
    TokenUsageEvent,
    ToolCallEvent,
    aparse_stream,
    event_from_json,
    event_to_json,
    parse_stream,
)
from stream_parser.testing import merge_deltas
from tests.helpers import feed_all, run_async
from tests.tools_fixture import TOOLS, ReadFile, summary

ROOT = Path(__file__).resolve().parent.parent

REPLY = (
    "<think>Need the file.</think>Let me read it.\n"
    "<read_file>\n<path>a.py</path>\n</read_file>\n"
    "Then run:\n<execute_command><command>pytest -q</command></execute_command>"
)


def test_exported_members_match_all() -> None:
    """Like httpx's test: __all__ lists exactly the public, non-module attributes."""
    public = {
        name
        for name in dir(stream_parser)
        if not name.startswith("_") and type(getattr(stream_parser, name)).__name__ != "module"
    }
    public.discard("annotations")  # from __future__
    assert set(stream_parser.__all__) - {"__version__"} == public
    assert stream_parser.__all__ == sorted(stream_parser.__all__)


# The face: what a user reaches for, from every floor of the package.
FACE = {
    # the parser, its drivers, configuration and input items
    "StreamToolParser",
    "parse_stream",
    "aparse_stream",
    "ParserConfig",
    "ChatDelta",
    "ToolCallDelta",
    # the core's state machine, thinking tags and whole-call conveniences
    "ParseState",
    "ParseStateManager",
    "DEFAULT_THINKING_TAGS",
    "XMLToolParser",
    # the events, the parser's and the agent's, and their JSON form
    "Event",
    "ParseEvent",
    "ErrorType",
    "TextOutputEvent",
    "ThinkingDeltaEvent",
    "ThinkingEvent",
    "ToolCallStartEvent",
    "ToolParamDeltaEvent",
    "ToolArgumentsDeltaEvent",
    "ToolCallEvent",
    "ParseErrorEvent",
    "TokenUsageEvent",
    "NoticeEvent",
    "CodeBlockDeltaEvent",
    "TagDeltaEvent",
    "CodeBlockEvent",
    "FramingEvent",
    "StepStartEvent",
    "ToolResultEvent",
    "AgentDoneEvent",
    "AnyEvent",
    "event_to_json",
    "event_from_json",
    # tools and multimodal values
    "tool",
    "Tool",
    "ToolRegistry",
    "ToolResult",
    "as_registry",
    "Text",
    "ImgUrl",
    "ImgPath",
    "allowed_image_roots",
    # plugins
    "ParsePlugin",
    "CustomTagPlugin",
    "PluginBlock",
    "PluginContext",
    "FencedCodePlugin",
    # models and the agent
    "ChatModel",
    "OpenAIChatModel",
    "ModelError",
    "ContextLengthError",
    "ScriptedModel",
    "ReActAgent",
    "FunctionCallAgent",
    "AgentRun",
    "dialect_for_model",
    # typed LLM functions
    "llm_function",
    "llm_chat",
    "LLMCallResult",
    # errors
    "StreamParserError",
    "LLMFunctionError",
    "AnswerValidationError",
    "RunLimitError",
    "ConfigError",
    "ParserClosedError",
    "StrictModeError",
    "ToolError",
    "InternalError",
    "__version__",
}


def test_the_public_face() -> None:
    assert set(stream_parser.__all__) == FACE


def test_the_core_names_are_ordinary_names_of_the_package() -> None:
    """The core's state machine, thinking tags and XMLToolParser, served like every name."""
    import stream_parser.core as core
    from stream_parser import DEFAULT_THINKING_TAGS, ParseState, ParseStateManager, XMLToolParser

    served = {
        "DEFAULT_THINKING_TAGS": DEFAULT_THINKING_TAGS,
        "ParseState": ParseState,
        "ParseStateManager": ParseStateManager,
        "XMLToolParser": XMLToolParser,
    }
    for name, value in served.items():
        assert value is getattr(core, name)
        assert name in core.__all__
        assert name in stream_parser.__all__
        assert name in dir(stream_parser)
    assert not hasattr(stream_parser, "_MORE")  # no table of older names left
    assert ParseStateManager().current_state is ParseState.TEXT
    assert "<think>" in dict(DEFAULT_THINKING_TAGS)
    call = "<read_file><path>a.py</path></read_file>"
    assert XMLToolParser(TOOLS).parse_tool_xml(call, "read_file") == ReadFile(path="a.py")
    with pytest.raises(AttributeError, match="no_such_name"):
        stream_parser.no_such_name  # type: ignore[attr-defined]  # noqa: B018


def test_import_works_without_the_openai_sdk() -> None:
    """``openai`` is an optional extra: it is imported when an OpenAIChatModel is made."""
    lazy = "import sys, stream_parser\nassert 'openai' not in sys.modules\n"
    subprocess.run([sys.executable, "-c", lazy], check=True, cwd=ROOT)
    missing = (
        "import sys; sys.modules['openai'] = None\n"  # any import of openai now fails
        "import stream_parser\n"
        "try:\n"
        "    stream_parser.OpenAIChatModel(model='m', base_url='http://127.0.0.1:9')\n"
        "except ImportError as exc:\n"
        "    assert 'python -m pip install openai' in str(exc), exc\n"
        "else:\n"
        "    raise AssertionError('the SDK was found')\n"
    )
    subprocess.run([sys.executable, "-c", missing], check=True, cwd=ROOT)


def test_sync_and_async_drivers_agree() -> None:
    chunks = [REPLY[i : i + 7] for i in range(0, len(REPLY), 7)]
    sync = list(StreamToolParser(TOOLS).parse_stream(chunks))
    assert run_async(lambda: StreamToolParser(TOOLS), chunks) == sync
    assert merge_deltas(sync) == merge_deltas(feed_all(StreamToolParser(TOOLS), [REPLY]))
    assert [e.kind for e in sync if e.kind == "tool_call"] == ["tool_call", "tool_call"]


def test_module_level_drivers() -> None:
    events = list(parse_stream(iter([REPLY]), TOOLS))
    assert summary(events)[0] == ("thinking_delta", "Need the file.")

    async def source() -> AsyncIterator[str]:
        yield REPLY

    async def collect() -> list[object]:
        return [e async for e in aparse_stream(source(), TOOLS)]

    assert asyncio.run(collect()) == events


def test_seed_tuple_items_and_usage_metadata() -> None:
    meta1 = SimpleNamespace(input_tokens_count=10, generated_tokens_count=1)
    meta2 = SimpleNamespace(input_tokens_count=10, generated_tokens_count=2)
    events = list(
        StreamToolParser(TOOLS).parse_stream(
            [("Hel", meta1), ("lo", meta1), ("", meta2), ("!", {"usage": {"total": 3}})]
        )
    )
    assert summary(events) == [
        ("text", "Hel"),
        ("usage", {"input_tokens": 10, "output_tokens": 1}),
        ("text", "lo"),
        ("usage", {"input_tokens": 10, "output_tokens": 2}),
        ("text", "!"),
        ("usage", {"total": 3}),
    ]


def test_bytes_items_are_decoded_incrementally() -> None:
    data = "héllo <think>ü</think>".encode()
    chunks = [data[i : i + 1] for i in range(len(data))]
    events = merge_deltas(StreamToolParser(TOOLS).parse_stream(chunks))
    assert summary(events) == [
        ("text", "héllo "),
        ("thinking_delta", "ü"),
        ("thinking", "ü", True),
    ]


def test_invalid_utf8_bytes_are_replaced_not_raised() -> None:
    events = list(StreamToolParser(TOOLS).parse_stream([b"ok \xff\xfe", b"\xc3"]))
    assert (
        "".join(e.text for e in events if isinstance(e, TextOutputEvent)) == "ok \ufffd\ufffd\ufffd"
    )


def test_chat_delta_reasoning_content_and_usage() -> None:
    deltas = [
        ChatDelta(reasoning="Let me "),
        ChatDelta(reasoning="think."),
        ChatDelta(content="Answer: <read_file><path>x</path>"),
        ChatDelta(content="</read_file>"),
        ChatDelta(usage={"prompt_tokens": 5}, finish_reason="stop"),
    ]
    events = list(StreamToolParser(TOOLS).parse_stream(deltas))
    assert summary(merge_deltas(events)) == [
        ("thinking_delta", "Let me think."),
        ("thinking", "Let me think.", True),
        ("text", "Answer: "),
        ("start", "read_file"),
        ("param", "path", "x"),
        ("call", "read_file", ReadFile(path="x")),
        ("usage", {"prompt_tokens": 5}),
    ]
    thinking = next(e for e in events if isinstance(e, ThinkingEvent))
    assert thinking.span == (0, 0)


def test_unknown_stream_item_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        list(StreamToolParser(TOOLS).parse_stream([42]))


def test_feed_after_close_raises_and_close_twice_is_empty() -> None:
    parser = StreamToolParser(TOOLS)
    parser.feed("hi <thi")
    assert summary(parser.close()) == [("text", "<thi")]
    assert parser.close() == []
    assert parser.state is ParseState.CLOSED
    with pytest.raises(ParserClosedError):
        parser.feed("more")
    with pytest.raises(StreamParserError):
        parser.feed("more")


def test_feed_rejects_non_str() -> None:
    with pytest.raises(TypeError):
        StreamToolParser(TOOLS).feed(b"bytes")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "registry",
    [
        {"bad name": ReadFile},
        {"<x>": ReadFile},
        {"tool": dict},
        {"tool": ReadFile(path="x")},
    ],
)
def test_bad_registry_is_a_config_error(registry: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        StreamToolParser(registry)  # type: ignore[arg-type]


def test_tool_named_like_a_thinking_tag_is_a_config_error() -> None:
    class Think(BaseModel):
        x: str

    with pytest.raises(ConfigError, match="claimed twice"):
        StreamToolParser({"think": Think})


@pytest.mark.parametrize(
    "kwargs",
    [
        {"buffer_keep_size": -1},
        {"max_tool_size": 0},
        {"thinking_start_tag": "<a>"},
        {"thinking_tags": (("<a>", ""),)},
        {"thinking_tags": (("<a>", "</a>"), ("<a>", "</b>"))},
        {"raw_params": "content"},
    ],
)
def test_bad_config_is_a_config_error(kwargs: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        ParserConfig(**kwargs)  # type: ignore[arg-type]


def test_config_must_be_a_parser_config() -> None:
    with pytest.raises(ConfigError):
        StreamToolParser(TOOLS, config={"strict": True})  # type: ignore[arg-type]


def test_config_is_frozen_and_keyword_only() -> None:
    config = ParserConfig()
    with pytest.raises(AttributeError):
        config.strict = True  # type: ignore[misc]
    with pytest.raises(TypeError):
        ParserConfig(True)  # type: ignore[misc]


def test_strict_mode_raises_on_parse_errors() -> None:
    parser = StreamToolParser(TOOLS, config=ParserConfig(strict=True))
    parser.feed("<read_file><path>a")
    with pytest.raises(StrictModeError) as info:
        parser.close()
    assert info.value.event.error_type == "unclosed_tool"


def test_events_are_frozen_and_round_trip_through_json() -> None:
    events = feed_all(StreamToolParser(TOOLS), [REPLY])
    text = events[2]
    with pytest.raises(AttributeError):
        text.text = "changed"  # type: ignore[attr-defined]
    for event in events:
        back = event_from_json(event_to_json(event))
        assert back.kind == event.kind
        assert back.span == event.span
        if isinstance(event, ToolCallEvent):
            assert back.tool_instance == event.tool_instance.model_dump()  # type: ignore[union-attr]
        else:
            assert back == event
    error = ParseErrorEvent(error_type="x", message="m", details=({"loc": ["a"]},), span=(1, 2))
    assert event_from_json(event_to_json(error)) == error
    usage = TokenUsageEvent(usage_info={"a": 1})
    assert event_from_json(event_to_json(usage)) == usage


@pytest.mark.slow
def test_long_text_stream_keeps_memory_bounded() -> None:
    parser = StreamToolParser(TOOLS)
    chunk = "Some prose with a < b and <div> tags and `code` and <thi " * 20
    tracemalloc.start()
    try:
        for _ in range(200):
            parser.feed(chunk)
        before, _ = tracemalloc.get_traced_memory()
        for _ in range(2000):
            parser.feed(chunk)
            assert len(parser.pending) <= len("<write_to_file>")
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 64_000, after - before


def test_pending_and_offset() -> None:
    parser = StreamToolParser(TOOLS)
    parser.feed("abc <thin")
    assert parser.pending == "<thin"
    assert parser.offset == 4
