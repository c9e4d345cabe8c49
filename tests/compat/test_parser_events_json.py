"""Events as Pydantic-style records: ``model_dump``, ``model_dump_json``, ``model_validate``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import pytest
from hypothesis import given, settings
from pydantic import BaseModel

from stream_parser import (
    AgentDoneEvent,
    Event,
    ParseEvent,
    StepStartEvent,
    StreamToolParser,
    TextOutputEvent,
    ToolCallEvent,
    ToolResultEvent,
    event_from_json,
    event_to_json,
)
from stream_parser.core.events import Span
from stream_parser.tools import ToolResult
from tests.encoders.test_json import any_text, events
from tests.tools_fixture import TOOLS


def test_the_events_of_a_reply_dump_and_validate_back() -> None:
    parser = StreamToolParser(tool_registry=TOOLS)
    reply = "<thinking>hm</thinking>Let me look.<read_file><path>a.py</path></read_file>"
    for event in parser.feed(reply) + parser.close():
        data = event.model_dump()
        assert isinstance(data, dict) and data["kind"] == event.kind
        assert event.model_dump_json() == event_to_json(event)
        back = ParseEvent.model_validate(data)
        assert type(back) is type(event)
        assert back.model_dump() == data
        assert ParseEvent.model_validate_json(event.model_dump_json()).model_dump() == data
        if isinstance(event, ToolCallEvent):
            assert back.tool_instance == {"path": "a.py"}  # type: ignore[attr-defined]
        else:
            assert back == event


@settings(max_examples=30, deadline=None)
@given(events(any_text))
def test_any_event_reads_back_as_event_from_json_reads_it(event: Event) -> None:
    text = event.model_dump_json()
    assert text == event_to_json(event)
    back = Event.model_validate_json(text)
    assert back == event_from_json(text)
    assert type(event).model_validate(event.model_dump()) == back


def test_an_event_class_reads_its_own_kind_only() -> None:
    assert TextOutputEvent.model_validate({"text": "hi", "span": [0, 2]}) == TextOutputEvent(
        text="hi", span=(0, 2)
    )
    with pytest.raises(ValueError, match="ThinkingEvent, not a TextOutputEvent"):
        TextOutputEvent.model_validate({"content": "x", "kind": "thinking"})
    with pytest.raises(ValueError, match="StepStartEvent, not a ParseEvent"):
        ParseEvent.model_validate({"step": 1, "kind": "step_start"})
    with pytest.raises(ValueError, match="unknown kind"):
        Event.model_validate({"kind": "nope"})
    with pytest.raises(ValueError):
        TextOutputEvent.model_validate({"text": 3, "span": "x"})
    with pytest.raises(ValueError, match="expects a dict"):
        ParseEvent.model_validate(["text"])
    event = TextOutputEvent(text="a", span=(0, 1))
    assert ParseEvent.model_validate(event) is event


def test_the_agent_events_read_back() -> None:
    step = StepStartEvent(step=2)
    assert Event.model_validate(step.model_dump()) == step
    result = ToolResultEvent(
        tool_name="t",
        result=ToolResult(tool_name="t", text="ok"),
        call_index=0,
        step=1,
        duration_s=0.5,
    )
    assert ToolResultEvent.model_validate_json(result.model_dump_json()) == result
    done = AgentDoneEvent(
        reason="done", messages=[{"role": "user", "content": "hi"}], output="x", steps=1
    )
    assert Event.model_validate(done.model_dump()) == done
    with pytest.raises(ValueError, match="agent_done"):
        AgentDoneEvent.model_validate({"reason": "bored", "output": "", "steps": 1})


@dataclass(frozen=True, slots=True, kw_only=True)
class NoteEvent(ParseEvent):
    TILES: ClassVar[bool] = True
    content: str
    span: Span = (0, 0)
    kind: Literal["compat_note"] = "compat_note"


def test_an_event_class_of_ones_own() -> None:
    note = NoteEvent(content="n", span=(1, 2))
    assert note.model_dump() == {"content": "n", "span": [1, 2], "kind": "compat_note"}
    assert ParseEvent.model_validate(note.model_dump()) == note


def test_events_are_not_pydantic_models() -> None:
    event = TextOutputEvent(text="a", span=(0, 1))
    assert not isinstance(event, BaseModel)
