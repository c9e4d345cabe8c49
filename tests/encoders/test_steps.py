"""An agent run's events carry their step in JSON lines and SSE, and are read back."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

import pytest

from stream_parser import Event, FunctionCallAgent, StepStartEvent, event_to_json
from stream_parser.encoders import (
    decode_json_lines,
    decode_sse,
    encode_json_lines,
    encode_sse,
    event_from_json,
)
from stream_parser.testing import NativeCall, ScriptedModel
from stream_parser.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def two_step_run() -> list[Event]:
    model = ScriptedModel([[NativeCall("add", {"a": 1, "b": 2})], "It is 3."])
    events: list[Event] = list(FunctionCallAgent(model, [add]).stream_sync("1 + 2?"))
    assert [e.step for e in events if isinstance(e, StepStartEvent)] == [1, 2]
    return events


def expected_steps(events: Iterable[Event]) -> list[int | None]:
    """The step of each event: the one of the latest StepStartEvent (None before any)."""
    step = None
    steps = []
    for event in events:
        if isinstance(event, StepStartEvent):
            step = event.step
        steps.append(step)
    return steps


async def _aiter(items: Iterable[Any]) -> AsyncIterator[Any]:
    for item in items:
        yield item


def _collect(source: AsyncIterator[Any]) -> list[Any]:
    async def main() -> list[Any]:
        return [item async for item in source]

    return asyncio.run(main())


def _same(decoded: list[Any], events: list[Event]) -> None:
    # A tool call comes back with its arguments as a dict: compare the JSON, without step.
    assert [event_to_json(e) for e in decoded] == [event_to_json(e) for e in events]


@pytest.mark.parametrize("side", ["sync", "async"])
def test_json_lines_carry_the_step_and_read_back(side: str) -> None:
    events = two_step_run()
    if side == "sync":
        lines = list(encode_json_lines(events))
    else:
        lines = _collect(encode_json_lines(_aiter(events)))
    objects = [json.loads(line) for line in lines]
    assert [obj["step"] for obj in objects] == expected_steps(events)
    assert all("step" in obj for obj in objects)
    text = "".join(lines)
    for pieces in ([text], list(text)):  # whole, and one character at a time
        _same(list(decode_json_lines(pieces)), events)
        _same(_collect(decode_json_lines(_aiter(pieces))), events)


@pytest.mark.parametrize("side", ["sync", "async", "keep_alive"])
def test_sse_frames_carry_the_step_and_read_back(side: str) -> None:
    events = two_step_run()
    if side == "sync":
        frames = list(encode_sse(events, ids=True))
    elif side == "async":
        frames = _collect(encode_sse(_aiter(events), ids=True))
    else:
        frames = _collect(encode_sse(_aiter(events), ids=True, keep_alive=30.0))
    datas = [
        json.loads(line[len("data: ") :])
        for frame in frames
        for line in frame.splitlines()
        if line.startswith("data: ")
    ]
    assert [data["step"] for data in datas] == expected_steps(events)
    text = "".join(frames)
    for pieces in ([text], list(text)):
        _same(list(decode_sse(pieces)), events)
        _same(_collect(decode_sse(_aiter(pieces))), events)


def test_events_before_any_step_and_outside_a_run_have_none() -> None:
    from stream_parser import TextOutputEvent

    text = TextOutputEvent(text="hi", span=(0, 2))
    lines = list(encode_json_lines([text, StepStartEvent(step=4), text]))
    assert [json.loads(line).get("step") for line in lines] == [None, 4, 4]
    assert "step" not in json.loads(lines[0])
    # The event's own step field wins over the one passed.
    assert json.loads(event_to_json(StepStartEvent(step=2), step=9))["step"] == 2
    assert event_from_json(event_to_json(text, step=3)) == text
