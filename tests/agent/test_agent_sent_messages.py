"""A message, once sent to the model, is never changed again.

``ScriptedModel`` records each request without copying its messages (a copy of the whole
history at every step made long runs slow): that is right only because neither agent nor
typed function changes a message after sending it.  This model also keeps a deep copy
of every request as it was sent; each scenario then checks that the messages recorded
still equal those copies, whatever the run went through.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest
from pydantic import BaseModel

from stream_parser import FunctionCallAgent, ImgUrl, ReActAgent
from stream_parser.agent import Deny
from stream_parser.core.chunks import ChatDelta
from stream_parser.decorators import llm_chat, llm_function
from stream_parser.testing import NativeCall, ScriptedModel
from stream_parser.tools import tool


class SnapshotModel(ScriptedModel):
    """A ScriptedModel that also deep-copies each request when it is sent."""

    def __init__(self, replies: Sequence[Any], **kwargs: Any) -> None:
        super().__init__(replies, **kwargs)
        self.sent: list[list[Any]] = []

    def stream(
        self, messages: Sequence[Any], *, tools: Any = None, **options: Any
    ) -> AsyncIterator[ChatDelta]:
        self.sent.append(copy.deepcopy(list(messages)))
        return super().stream(messages, tools=tools, **options)

    def check(self) -> None:
        assert len(self.sent) == len(self.requests) > 0
        for request, sent in zip(self.requests, self.sent, strict=True):
            assert request.messages == sent


@tool
def read_file(path: str) -> str:
    """Read a file."""
    if path == "missing":
        raise FileNotFoundError(path)
    return f"contents of {path}"


@tool
def look(name: str) -> ImgUrl:
    """Look at a picture."""
    return ImgUrl(f"https://example.org/{name}.png")


class Total(BaseModel):
    total: int


def native_agent() -> None:
    model = SnapshotModel(
        [
            [NativeCall("read_file", {"path": "a"}), NativeCall("look", {"name": "cat"})],
            [NativeCall("read_file", {"path": "missing"}), NativeCall("nope", {})],
            [NativeCall("read_file", '{"path": ')],
            "Done.",
        ]
    )
    FunctionCallAgent(model, [read_file, look], history_length=2).run_sync("go")
    model.check()


def react_agent() -> None:
    model = SnapshotModel(
        [
            "<read_file><path>a</path></read_file><look><name>dog</name></look>",
            "<read_file><path>missing</path></read_file><read_file><pth>x</pth></read_file>",
            "<read_file><path>b</path>",
            "All read.",
        ]
    )
    ReActAgent(model, [read_file, look], instructions_role="user", history_length=1).run_sync(
        "go",
        history=[{"role": "user", "content": "before"}, {"role": "assistant", "content": "ok"}],
    )
    model.check()


def denied_and_limited() -> None:
    model = SnapshotModel(
        [[NativeCall("read_file", {"path": "a"}), NativeCall("read_file", {"path": "b"})]] * 3
    )
    agent = FunctionCallAgent(
        model, [read_file], approve=lambda call: Deny("no"), max_tool_calls=1, max_iterations=3
    )
    agent.run_sync("go")
    model.check()


def cancelled() -> None:
    @tool
    async def wait() -> str:
        """Wait."""
        await asyncio.Event().wait()
        return "never"

    model = SnapshotModel([[NativeCall("read_file", {"path": "a"})], [NativeCall("wait", {})]])
    run = FunctionCallAgent(model, [read_file, wait]).run("go")

    async def main() -> None:
        async for event in run:
            if event.kind == "tool_call" and event.tool_name == "wait":
                run.cancel()

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())
    model.check()


def typed_function() -> None:
    model = SnapshotModel([[NativeCall("read_file", {"path": "a"})], "not json", '{"total": 3}'])

    @llm_function(model, toolkit=[read_file], retry_times=2)
    def count(path: str) -> Total:
        """Count the lines of a file."""

    assert count("a") == Total(total=3)
    model.check()


def chat_turns() -> None:
    model = SnapshotModel(["Hi!", "<read_file><path>a</path></read_file>", "It says hi."])

    @llm_chat(model, toolkit=[read_file], protocol="xml", stream=False)
    def chat(message: str, history: list[dict[str, Any]]) -> None:
        """Chat."""

    history: list[dict[str, Any]] = []
    for message in ("hello", "read a"):
        pairs = list(chat.sync(message, history=history))
        history = pairs[-1][1]
    model.check()


SCENARIOS: list[Callable[[], None]] = [
    native_agent,
    react_agent,
    denied_and_limited,
    cancelled,
    typed_function,
    chat_turns,
]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda f: f.__name__)
def test_a_sent_message_is_never_changed(scenario: Callable[[], None]) -> None:
    scenario()


def test_the_check_sees_a_change() -> None:
    model = SnapshotModel(["a"])
    messages: list[Any] = [{"role": "user", "content": "hi"}]

    async def main() -> None:
        async for _ in model.stream(messages):
            pass

    asyncio.run(main())
    messages[0]["content"] = "changed"
    with pytest.raises(AssertionError):
        model.check()
