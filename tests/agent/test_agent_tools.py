"""Running tools safely: time limits, result size, approval, eager read-only tools."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from stream_parser import FunctionCallAgent, ReActAgent, ToolCallEvent
from stream_parser.agent import Deny
from stream_parser.core.chunks import ChatDelta
from stream_parser.errors import ConfigError
from stream_parser.llm.base import Message
from stream_parser.testing import NativeCall, ScriptedModel
from stream_parser.testing import assert_valid_history as assert_valid
from stream_parser.tools import tool

release = threading.Event()


@tool
def hang_sync(seconds: float) -> str:
    """Block a thread.

    Args:
        seconds: How long at most.
    """
    release.wait(seconds)
    return "late"


@tool
async def hang_async() -> str:
    """Wait for ever."""
    await asyncio.Event().wait()
    return "never"


@tool
def add(a: int, b: int) -> int:
    """Add.

    Args:
        a: A number.
        b: Another.
    """
    return a + b


def tool_answers(messages: Sequence[Any]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "tool"]


# --- time limits ----------------------------------------------------------------------------


def test_a_sync_and_an_async_tool_that_hang_are_timed_out() -> None:
    model = ScriptedModel(
        [[NativeCall("hang_sync", {"seconds": 5}), NativeCall("hang_async")], "Both timed out."]
    )
    agent = FunctionCallAgent(model, [hang_sync, hang_async], tool_timeout=0.05)
    started = time.perf_counter()
    run = agent.run_sync("go")
    release.set()  # let the background thread finish
    assert time.perf_counter() - started < 2
    answers = tool_answers(run.messages)
    assert answers[0].startswith("Error (tool_timeout): tool 'hang_sync' did not finish")
    assert "left to finish in the background" in answers[0]
    assert "was cancelled" in answers[1]
    assert run.reason == "done"
    assert_valid(run.messages)


def test_timeouts_in_the_text_protocol() -> None:
    model = ScriptedModel(["<hang_async></hang_async>", "ok"])
    run = ReActAgent(model, [hang_async], tool_timeout=0.05).run_sync("go")
    assert run.messages[-2]["content"].startswith("[hang_async] error (tool_timeout):")


# --- result size ----------------------------------------------------------------------------


def test_a_huge_result_is_cut_with_a_note() -> None:
    @tool
    def dump() -> str:
        """A lot of text."""
        return "x" * 50_000

    model = ScriptedModel([[NativeCall("dump")], "ok"])
    run = FunctionCallAgent(model, [dump], max_result_chars=1000).run_sync("go")
    (answer,) = tool_answers(run.messages)
    assert answer == "x" * 1000 + "\n[… 49000 characters cut]"
    unlimited = FunctionCallAgent(ScriptedModel([[NativeCall("dump")], "ok"]), [dump])
    assert len(tool_answers(unlimited.run_sync("go").messages)[0]) == 20_000 + len(
        "\n[… 30000 characters cut]"
    )


# --- approval -------------------------------------------------------------------------------


def test_approval_allows_denies_and_edits() -> None:
    asked: list[dict[str, Any]] = []

    def approve(call: ToolCallEvent) -> Any:
        asked.append(call.tool_instance.model_dump())
        a = call.tool_instance.a
        if a == 1:
            return True
        if a == 2:
            return Deny("two is not allowed")
        if a == 3:
            return False
        return call.tool_instance.model_copy(update={"b": 100})

    calls = [NativeCall("add", {"a": n, "b": 1}) for n in (1, 2, 3, 4)]
    model = ScriptedModel([calls, "ok"])
    run = FunctionCallAgent(model, [add], approve=approve).run_sync("go")
    assert [item["a"] for item in asked] == [1, 2, 3, 4]
    answers = tool_answers(run.messages)
    assert answers[0] == "2"
    assert answers[1] == "Error (denied): two is not allowed"
    assert answers[2] == "Error (denied): the call was not approved"
    assert answers[3] == "104"
    assert_valid(run.messages)


def test_an_async_approver_and_only_marked_tools_are_asked() -> None:
    @tool(requires_approval=True)
    def delete(path: str) -> str:
        """Delete a file.

        Args:
            path: The file.
        """
        return f"deleted {path}"

    asked: list[str] = []

    async def approve(call: ToolCallEvent) -> Any:
        await asyncio.sleep(0)
        asked.append(call.tool_name)
        return Deny("not today")

    model = ScriptedModel(["<add><a>1</a><b>1</b></add><delete><path>x</path></delete>", "ok"])
    run = ReActAgent(model, [add, delete], approve=approve).run_sync("go")
    assert asked == ["delete"]
    assert run.messages[-2]["content"] == (
        "[add] result:\n2\n\n[delete] not executed (denied):\nnot today"
    )


def test_a_tool_that_requires_approval_needs_an_approver() -> None:
    @tool(requires_approval=True)
    def delete(path: str) -> str:
        """Delete.

        Args:
            path: The file.
        """
        return path

    with pytest.raises(ConfigError, match="approve"):
        FunctionCallAgent(ScriptedModel([]), [delete])


# --- eager tools ----------------------------------------------------------------------------


class GatedModel:
    """Streams a text reply in two parts, waiting for ``gate`` between them."""

    def __init__(self, first: str, second: str, finish_reason: str = "stop") -> None:
        self.first, self.second, self.finish_reason = first, second, finish_reason
        self.gate = asyncio.Event()
        self.calls = 0

    def stream(
        self, messages: Sequence[Message], *, tools: Any = None, **options: Any
    ) -> AsyncIterator[ChatDelta]:
        self.calls += 1
        if self.calls > 1:
            return self._answer()
        return self._reply()

    async def _reply(self) -> AsyncIterator[ChatDelta]:
        yield ChatDelta(content=self.first)
        # asyncio's TimeoutError: the builtin one only from Python 3.11 on.
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.gate.wait(), 1)
        yield ChatDelta(content=self.second)
        yield ChatDelta(finish_reason=self.finish_reason)

    async def _answer(self) -> AsyncIterator[ChatDelta]:
        yield ChatDelta(content="done")
        yield ChatDelta(finish_reason="stop")


def make_tools(model: GatedModel, log: list[str]) -> list[Any]:
    @tool(read_only=True)
    async def read(path: str) -> str:
        """Read.

        Args:
            path: The file.
        """
        log.append(f"read {path}")
        model.gate.set()
        return "text"

    @tool
    def write(path: str) -> str:
        """Write.

        Args:
            path: The file.
        """
        log.append(f"write {path}")
        return "ok"

    return [read, write]


def test_an_eager_read_only_tool_starts_while_the_reply_streams() -> None:
    model = GatedModel("<read><path>a</path></read>", "More text.")
    log: list[str] = []
    run = ReActAgent(model, make_tools(model, log), eager_tools=True).run_sync("go")
    assert log == ["read a"]
    # The read started before the reply ended; its result went in after the reply.
    kinds = [e.kind for e in run.events]
    assert kinds.index("tool_result") > kinds.index("text", kinds.index("tool_call"))
    assert run.messages[2]["content"].endswith("More text.")
    assert run.messages[3]["content"] == "[read] result:\ntext"


def test_a_read_after_a_write_waits_for_the_write() -> None:
    model = GatedModel("<write><path>a</path></write><read><path>a</path></read>", "End.")
    log: list[str] = []
    ReActAgent(model, make_tools(model, log), eager_tools=True).run_sync("go")
    assert log == ["write a", "read a"]


def test_without_eager_tools_nothing_starts_before_the_reply_ends() -> None:
    model = GatedModel("<read><path>a</path></read>", "More.")
    log: list[str] = []
    started = time.perf_counter()
    ReActAgent(model, make_tools(model, log)).run_sync("go")
    assert time.perf_counter() - started >= 0.9  # the gate was only passed by its timeout
    assert log == ["read a"]


def test_an_eager_tool_is_cancelled_when_the_reply_is_cut() -> None:
    model = GatedModel("<slow_read><path>a</path></slow_read>", "And", finish_reason="length")
    cancelled: list[bool] = []

    @tool(read_only=True)
    async def slow_read(path: str) -> str:
        """Read slowly.

        Args:
            path: The file.
        """
        model.gate.set()
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "text"

    started = time.perf_counter()
    run = ReActAgent(model, [slow_read], eager_tools=True).run_sync("go")
    assert cancelled == [True] and time.perf_counter() - started < 5
    assert run.messages[3]["content"].startswith("[slow_read] not executed (truncated)")
    assert_valid(run.messages)


def test_concurrent_tools_overlap() -> None:
    log: list[str] = []

    @tool
    def slow(n: int) -> str:
        """Sleep a little.

        Args:
            n: A number.
        """
        log.append(f"start {n}")
        both_started.wait()  # returns only once the other call has started too
        log.append(f"end {n}")
        return str(n)

    # A barrier, not a sleep: on a loaded machine a thread may take long to start, and
    # only calls that overlap can both pass it (run one after the other, it times out).
    both_started = threading.Barrier(2, timeout=10)
    model = ScriptedModel([[NativeCall("slow", {"n": 1}), NativeCall("slow", {"n": 2})], "ok"])
    run = FunctionCallAgent(model, [slow], concurrent_tools=True).run_sync("go")
    assert sorted(log[:2]) == ["start 1", "start 2"]  # both started before either ended
    assert tool_answers(run.messages) == ["1", "2"]
