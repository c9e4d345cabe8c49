"""Dialects whose template opens reasoning, with a server that sends reasoning on its own channel.

For a model whose template writes the opening tag into the prompt (GLM-4.7, DeepSeek-V3.2,
Kimi-K2-Thinking...), ``dialect_for_model`` and ``with_reasoning`` start the reply inside
reasoning (``start_in_thinking`` from the template).  A server with a reasoning parser
takes the reasoning out of the content and sends it apart (``reasoning_content``): when
that reasoning comes before any content, the content is the reply, and its calls run.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from pydantic import BaseModel

from stream_parser import (
    ChatDelta,
    ParseEvent,
    StreamToolParser,
    TextOutputEvent,
    ThinkingEvent,
    ToolCallEvent,
    parse_stream,
)
from stream_parser.core.config import ParserConfig
from stream_parser.dialects import get_dialect
from stream_parser.dialects.detect import dialect_for_model, with_reasoning
from stream_parser.testing import merge_deltas
from tests.helpers import assert_all_splittings


class ReadFile(BaseModel):
    path: str


TOOLS = {"read_file": ReadFile}
PREFILLED = ["deepseek", "glm", "kimi"]


def reply(dialect: str) -> str:
    call = get_dialect(dialect).format_call("read_file", {"path": "a.py"})
    return "Reading it now.\n" + call


def from_template(dialect: str, **config: Any) -> ParserConfig:
    """The configuration ``with_reasoning`` makes for a model whose template opens reasoning."""
    return ParserConfig(
        **{"dialect": dialect, "start_in_thinking": True, "start_from_template": True, **config}
    )


def after_reasoning(dialect: str, **config: Any) -> StreamToolParser:
    parser = StreamToolParser(TOOLS, config=from_template(dialect, **config))
    parser.feed_delta(ChatDelta(reasoning="The user wants a.py."))
    return parser


@pytest.mark.parametrize("dialect", PREFILLED)
def test_reasoning_on_its_own_channel_makes_the_content_the_reply(dialect: str) -> None:
    events = assert_all_splittings(lambda: after_reasoning(dialect), reply(dialect))
    (call,) = [e for e in events if isinstance(e, ToolCallEvent)]
    assert call.tool_instance == ReadFile(path="a.py")
    texts = [e for e in events if isinstance(e, TextOutputEvent)]
    assert texts[0].span[0] == 0 and texts[0].text.rstrip("\n") == "Reading it now."
    (thinking,) = [e for e in events if isinstance(e, ThinkingEvent)]
    assert thinking.content == "The user wants a.py."  # the channel's, before the text


@pytest.mark.parametrize("dialect", PREFILLED)
def test_the_content_alone_still_starts_inside_reasoning(dialect: str) -> None:
    parser = StreamToolParser(TOOLS, config=from_template(dialect))
    events = merge_deltas(parser.feed("plan</think>Answer.") + parser.close())
    assert [e.kind for e in events if not e.kind.endswith("_delta")] == ["thinking", "text"]


@pytest.mark.parametrize("dialect", PREFILLED)
def test_by_default_the_content_starts_as_the_reply(dialect: str) -> None:
    parser = StreamToolParser(TOOLS, config=ParserConfig(dialect=dialect))
    events = merge_deltas(parser.feed("plan</think>Answer.") + parser.close())
    kinds = [e.kind for e in events if not e.kind.endswith("_delta")]
    assert kinds == ["text", "framing", "notice", "text"]


@pytest.mark.parametrize("dialect", PREFILLED)
def test_an_explicit_start_in_thinking_is_kept(dialect: str) -> None:
    parser = after_reasoning(dialect, start_from_template=False)  # the user's own True
    events = merge_deltas(parser.feed("more plan</think>Answer.") + parser.close())
    thinking = [e for e in events if isinstance(e, ThinkingEvent)]
    assert [t.content for t in thinking] == ["The user wants a.py.", "more plan"]


def test_reasoning_after_the_content_began_changes_nothing() -> None:
    parser = StreamToolParser(TOOLS, config=from_template("glm"))
    events: list[ParseEvent] = parser.feed("plan")
    events += parser.feed_delta(ChatDelta(reasoning="late"))
    events += parser.feed("</think>Answer.") + parser.close()
    texts = [e.text for e in merge_deltas(events) if isinstance(e, TextOutputEvent)]
    assert texts == ["Answer."]


def test_sdk_chunks_with_reasoning_content_read_alike() -> None:
    def chunk(**delta: Any) -> dict[str, Any]:
        return {"choices": [{"index": 0, "delta": delta}]}

    text = reply("deepseek")
    stream = [chunk(reasoning_content="The user wants a.py."), chunk(content=text[:20])]
    stream += [
        chunk(content=text[20:]),
        {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
    ]
    events = list(parse_stream(stream, TOOLS, config=ParserConfig(dialect="deepseek")))
    (call,) = [e for e in events if isinstance(e, ToolCallEvent)]
    assert call.tool_instance == ReadFile(path="a.py")


@pytest.mark.parametrize(
    ("dialect", "model"),
    [
        ("hermes", "Qwen/Qwen3-235B-A22B-Thinking-2507"),
        ("qwen3_coder", "Qwen/Qwen3-235B-A22B-Thinking-2507"),
    ],
)
def test_a_template_opened_block_still_yields_to_the_reasoning_channel(
    dialect: str, model: str
) -> None:
    # dialect_for_model says the template opens reasoning, and with_reasoning sets
    # start_in_thinking from it; that is not the user's choice, so reasoning on its own
    # channel still makes the content the reply.
    config = with_reasoning(ParserConfig(dialect=dialect), dialect_for_model(model))
    assert config.start_in_thinking and config.start_from_template

    def make() -> StreamToolParser:
        parser = StreamToolParser(TOOLS, config=config)
        parser.feed_delta(ChatDelta(reasoning="Plan."))
        return parser

    events = assert_all_splittings(make, "Answer.")
    assert [(e.kind, getattr(e, "content", getattr(e, "text", None))) for e in events] == [
        ("thinking", "Plan."),
        ("text", "Answer."),
    ]
    user_own = dataclasses.replace(config, start_from_template=False)  # the user's True
    parser = StreamToolParser(TOOLS, config=user_own)
    parser.feed_delta(ChatDelta(reasoning="Plan."))
    kept = merge_deltas(parser.feed("more</think>Answer.") + parser.close())
    assert [t.content for t in kept if isinstance(t, ThinkingEvent)] == ["Plan.", "more"]
