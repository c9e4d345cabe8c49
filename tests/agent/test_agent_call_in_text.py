"""A FunctionCallAgent notices a call written as text while its tools went natively.

Some servers ignore ``tools`` (llama.cpp's does unless ``tool_choice`` names a function);
the model then writes its call in a format it learned.  The agent gives one
``NoticeEvent(code="call_in_text")``, zero-width at the offset where the call begins, the
same however the reply was cut.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from stream_parser import FunctionCallAgent, NoticeEvent, tool
from stream_parser.core.chunks import ChatDelta
from stream_parser.encoders import event_from_json, event_to_json
from stream_parser.testing import NativeCall, ScriptedModel


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


HERMES = 'Sure. <tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 2}}\n</tool_call>'
XML = "Let me add.\n<add>\n<a>1</a>\n<b>2</b>\n</add>\n"


class Chunked:
    """A model that sends one reply in the given pieces, then "Done."."""

    def __init__(self, pieces: Sequence[str]) -> None:
        self.replies = [list(pieces), ["Done."]]

    async def stream(
        self, messages: Sequence[Any], *, tools: Any = None, **options: Any
    ) -> AsyncIterator[ChatDelta]:
        pieces = self.replies.pop(0) if self.replies else ["Done."]
        for piece in pieces:
            yield ChatDelta(content=piece)
        yield ChatDelta(finish_reason="stop")


def notices(model: Any) -> list[NoticeEvent]:
    run = FunctionCallAgent(model, [add]).run_sync("Add 1 and 2.")
    return [e for e in run.events if isinstance(e, NoticeEvent)]


def cuts(text: str) -> list[list[str]]:
    return [[text], list(text), *([text[:i], text[i:]] for i in range(1, len(text)))]


@pytest.mark.parametrize(("reply", "offset"), [(HERMES, 6), (XML, 12)])
def test_a_call_written_as_text_gives_one_notice_at_its_offset(reply: str, offset: int) -> None:
    for pieces in cuts(reply):
        found = notices(Chunked(pieces))
        assert [(n.code, n.span) for n in found] == [("call_in_text", (offset, offset))], pieces
        assert "'add'" in found[0].message and "tool_choice" in found[0].message


def test_the_notice_comes_after_the_replys_events_and_round_trips() -> None:
    run = FunctionCallAgent(ScriptedModel([HERMES, "Done."]), [add]).run_sync("Add.")
    kinds = [e.kind for e in run.events]
    # The server ignored the tools: the reply is the answer, and the notice its last event.
    assert kinds[-2:] == ["notice", "agent_done"] and run.reason == "done"
    notice = next(e for e in run.events if isinstance(e, NoticeEvent))
    assert event_from_json(event_to_json(notice)) == notice


@pytest.mark.parametrize(
    "reply",
    [
        [NativeCall("add", {"a": 1, "b": 2})],  # a native call
        "I will add 1 and 2 for you.",  # names a tool, writes no call
        "The answer is 3.",
    ],
)
def test_no_notice_for_a_native_call_or_text_that_writes_none(reply: Any) -> None:
    assert notices(ScriptedModel([reply, "Done."])) == []


def test_no_notice_when_no_tools_were_sent() -> None:
    run = FunctionCallAgent(ScriptedModel(["<add><a>1</a></add>"]), []).run_sync("Hi.")
    assert not [e for e in run.events if isinstance(e, NoticeEvent)]
