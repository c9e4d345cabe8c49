"""Interruption at every point leaves a history a server accepts, for both agents."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, cast

import pytest

from stream_parser import AgentRun, FunctionCallAgent, ReActAgent, ToolCallEvent
from stream_parser.core.chunks import ChatDelta, ToolCallDelta
from stream_parser.core.kit import dialect_names
from stream_parser.dialects import get_dialect
from stream_parser.llm import ModelError
from stream_parser.llm.base import Message
from stream_parser.testing import NativeCall, Reply, ScriptedModel, ScriptedReply
from stream_parser.testing import assert_valid_history as assert_valid
from stream_parser.tools import tool


@tool
def add(a: int, b: int) -> int:
    """Add.

    Args:
        a: A number.
        b: Another.
    """
    return a + b


class StallingModel:
    """Sends part of a reply, then waits for ever; records that its stream was closed."""

    def __init__(self, deltas: Sequence[ChatDelta]) -> None:
        self.deltas = deltas
        self.stalled = asyncio.Event()
        self.closed = False

    def stream(
        self, messages: Sequence[Message], *, tools: Any = None, **options: Any
    ) -> AsyncIterator[ChatDelta]:
        return self._stream()

    async def _stream(self) -> AsyncIterator[ChatDelta]:
        try:
            for delta in self.deltas:
                yield delta
            self.stalled.set()
            await asyncio.Event().wait()
            yield ChatDelta(finish_reason="stop")
        finally:
            self.closed = True


TEXT_PARTIAL = [ChatDelta(content="Let me <add><a>1</a><b>")]
TEXT_COMPLETE = [ChatDelta(content="Let me <add><a>1</a><b>2</b></add> and")]
NATIVE_PARTIAL = [
    ChatDelta(content="Adding."),
    ChatDelta(tool_calls=(ToolCallDelta(index=0, id="c1", name="add", arguments='{"a": 1,'),)),
]


def make(kind: str, model: Any, **options: Any) -> ReActAgent | FunctionCallAgent:
    if kind == "react":
        return ReActAgent(model, [add], **options)
    return FunctionCallAgent(model, [add], **options)


async def consume(run: AgentRun) -> None:
    async for _ in run:
        pass


@pytest.mark.parametrize(
    ("kind", "deltas"),
    [("react", TEXT_PARTIAL), ("react", TEXT_COMPLETE), ("native", NATIVE_PARTIAL)],
)
@pytest.mark.parametrize("how", ["task", "run.cancel", "run.cancel from a thread", "aclose"])
def test_cancelled_mid_stream(kind: str, deltas: list[ChatDelta], how: str) -> None:
    model = StallingModel(deltas)
    run = make(kind, model).run("go")

    async def main() -> None:
        if how == "aclose":
            async for event in run:
                if event.kind not in ("step_start", "text"):
                    break  # inside the reply, the model's stream still open
            await run.aclose()
            return
        task = asyncio.create_task(consume(run))
        await model.stalled.wait()
        await asyncio.sleep(0)
        if how == "task":
            task.cancel()
        elif how == "run.cancel":
            run.cancel()
        else:
            thread = threading.Thread(target=run.cancel)
            thread.start()
            thread.join()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert model.closed  # the model's stream was closed at once
    assert "assistant" in [m["role"] for m in run.messages]
    assert_valid(run.messages)
    if how != "aclose":
        assert run.reason == "cancelled"
    if deltas is TEXT_COMPLETE and how != "aclose":
        # A complete call that never ran is answered as cancelled.
        assert any(isinstance(e, ToolCallEvent) for e in run.events)
        assert run.messages[-1]["content"].endswith("cancelled before it finished.")
    if kind == "native":
        assert run.messages[1]["tool_calls"][0]["function"]["arguments"] == '{"a": 1,'
        assert run.messages[2]["role"] == "tool"
        assert run.messages[2]["content"].startswith("Cancelled")


@pytest.mark.parametrize("kind", ["react", "native"])
def test_cancelled_after_a_complete_call_before_it_ran(kind: str) -> None:
    reply: Any = (
        "<add><a>1</a><b>2</b></add>" if kind == "react" else [NativeCall("add", {"a": 1, "b": 2})]
    )
    run = make(kind, ScriptedModel([reply])).run("go")

    async def main() -> None:
        async for event in run:
            if isinstance(event, ToolCallEvent):
                run.cancel()

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(main())
    assert run.reason == "cancelled"
    assert not any(e.kind == "tool_result" for e in run.events)
    assert_valid(run.messages)
    last = run.messages[-1]
    assert "ancelled" in str(last["content"])


@pytest.mark.parametrize("kind", ["react", "native"])
def test_cancelled_mid_tool_cancels_the_tool(kind: str) -> None:
    cancelled: list[bool] = []

    @tool
    async def wait() -> str:
        """Wait."""
        gate.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "never"

    reply: Any = "<wait></wait>" if kind == "react" else [NativeCall("wait")]
    model = ScriptedModel([reply])
    agent = ReActAgent(model, [wait]) if kind == "react" else FunctionCallAgent(model, [wait])
    gate = asyncio.Event()
    run = agent.run("go")

    async def main() -> None:
        nonlocal gate
        gate = asyncio.Event()
        task = asyncio.create_task(consume(run))
        await gate.wait()
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert cancelled == [True]
    assert run.reason == "cancelled"
    assert_valid(run.messages)


def test_a_run_cancelled_before_it_starts() -> None:
    run = FunctionCallAgent(ScriptedModel(["hi"]), [add]).run("go")
    run.cancel()
    with pytest.raises(asyncio.CancelledError):
        asyncio.run(consume(run))
    assert run.messages == [{"role": "user", "content": "go"}]


def test_run_cancel_while_no_task_drives_the_run() -> None:
    model = ScriptedModel(["<add><a>1</a><b>2</b></add>"])
    run = ReActAgent(model, [add]).run("go")

    async def main() -> list[str]:
        kinds: list[str] = []
        while not kinds or kinds[-1] != "tool_call":
            # Each event in a task of its own, as stream_sync does.
            kinds.append((await asyncio.create_task(run.__anext__())).kind)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.create_task(run.__anext__())
        return kinds

    kinds = asyncio.run(main())
    assert kinds[-1] == "tool_call" and run.reason == "cancelled"
    assert run.messages[-1]["content"].endswith("cancelled before it finished.")
    assert_valid(run.messages)
    run.cancel()  # over: nothing happens


def test_closed_at_a_step_start() -> None:
    run = ReActAgent(ScriptedModel(["<add><a>1</a><b>2</b></add>", "3"]), [add]).run("go")

    async def main() -> None:
        async for event in run:
            if event.kind == "step_start" and run.steps == 2:
                break
        await run.aclose()

    asyncio.run(main())
    assert run.reason == "cancelled"
    assert run.messages[-1]["content"] == "[add] result:\n3"
    assert_valid(run.messages)


# --- run.cancel() at every event ------------------------------------------------------------


def _protocol_runs() -> dict[str, Callable[[], AgentRun]]:
    """A run of two steps (a call, then the answer) for each way a call can come."""

    def dialect_run(name: str) -> Callable[[], AgentRun]:
        dialect = get_dialect(name)
        thinking = dialect.thinking
        # A dialect with a reasoning format gets a reasoning block first: opened by the
        # reply itself, unless the dialect's template always opens it (prefilled).
        opening = ""
        if thinking is not None and (thinking.prefilled or thinking.bare_close):
            start, end = thinking.tags[0]
            opening = f"{'' if thinking.prefilled else start}Let me add.{end}"
        call = dialect.format_call("add", {"a": 1, "b": 2})
        replies = [opening + call, opening + "It is 3."]
        return lambda: ReActAgent(ScriptedModel(replies, chunk_size=7), [add], dialect=name).run(
            "go"
        )

    runs = {f"react-{name}": dialect_run(name) for name in dialect_names()}
    native = [NativeCall("add", {"a": 1, "b": 2})]
    mixed = ScriptedReply(content="Adding.<add><a>1</a><b>2</b></add>", tool_calls=native)
    runs["react-native-calls"] = lambda: ReActAgent(
        ScriptedModel([mixed, "It is 3."], chunk_size=7), [add]
    ).run("go")
    runs["native"] = lambda: FunctionCallAgent(
        ScriptedModel([native, "It is 3."], chunk_size=7), [add]
    ).run("go")
    runs["native-text-calls"] = lambda: FunctionCallAgent(
        ScriptedModel([mixed, "It is 3."], chunk_size=7), [add]
    ).run("go")
    return runs


PROTOCOL_RUNS = _protocol_runs()


@pytest.mark.parametrize("how", ["in the loop", "while the caller awaits"])
@pytest.mark.parametrize("protocol", sorted(PROTOCOL_RUNS))
def test_run_cancel_at_every_event(protocol: str, how: str) -> None:
    """Before the last event a cancel stops the run; after it, it does nothing.

    Either way the caller's own task is left alone: its next, unrelated ``await``
    is not cancelled.
    """
    make_run = PROTOCOL_RUNS[protocol]
    whole = asyncio.run(consume_kinds(make_run()))
    assert whole[-1] == "agent_done" and "tool_result" in whole and whole.count("step_start") == 2

    for at in range(1, len(whole) + 1):
        run = make_run()

        async def main(run: AgentRun = run, at: int = at) -> tuple[list[str], bool, Any]:
            kinds: list[str] = []
            cancelled = False
            try:
                async for event in run:
                    kinds.append(event.kind)
                    if len(kinds) == at:
                        if how == "in the loop":
                            run.cancel()  # the driving task itself, between two events
                        else:
                            # A stop button: another callback, while the caller awaits.
                            asyncio.get_running_loop().call_soon(run.cancel)
                    if how == "while the caller awaits":
                        await asyncio.sleep(0)
            except asyncio.CancelledError:
                cancelled = True
            await asyncio.sleep(0.001)  # something else: no cancellation is left over
            # Read here, before asyncio.run closes what was left open.
            return kinds, cancelled, (run.reason, list(run.messages))

        kinds, cancelled, (reason, messages) = asyncio.run(main())
        where = f"cancelled at event {at} ({whole[at - 1]})"
        assert_valid(messages)
        if at == len(whole):
            assert not cancelled and reason == "done", where
            assert kinds == whole, where
        else:
            assert cancelled and reason == "cancelled", where
            assert kinds == whole[:at], where  # no event after the cancel
            run.cancel()  # over: nothing happens


async def consume_kinds(run: AgentRun) -> list[str]:
    return [event.kind async for event in run]


# --- however a reply ends, the history is one a server accepts ------------------------------


class ThenStallingModel:
    """Scripted replies first, then a reply that stalls after its deltas."""

    def __init__(self, replies: Sequence[Reply], deltas: Sequence[ChatDelta]) -> None:
        self.scripted = ScriptedModel(list(replies))
        self.left = len(replies)
        self.stalling = StallingModel(deltas)

    def stream(
        self, messages: Sequence[Message], *, tools: Any = None, **options: Any
    ) -> AsyncIterator[ChatDelta]:
        if self.left:
            self.left -= 1
            return self.scripted.stream(messages, tools=tools, **options)
        return self.stalling.stream(messages, tools=tools, **options)


# How a reply ends -> the reply (a scripted one, or the deltas sent before a cancel).
ENDINGS: dict[str, Reply | list[ChatDelta]] = {
    "stop": "Hel",
    "empty": "",
    "reasoning only": ScriptedReply(reasoning="Hmm."),
    "error before the first token": ScriptedReply(error="connection reset"),
    "error after the first token": ScriptedReply(content="Hel", error="connection reset"),
    "failed request": ModelError("HTTP 503"),
    "cut by length before the first token": ScriptedReply(finish_reason="length"),
    "cut by length": ScriptedReply(content="Hel", finish_reason="length"),
    "cancelled before the first token": [],
    "cancelled after the first token": [ChatDelta(content="Hel")],
}


@pytest.mark.parametrize("after_a_call", [False, True], ids=["first reply", "after a call"])
@pytest.mark.parametrize("ending", list(ENDINGS))
@pytest.mark.parametrize("kind", ["react", "native"])
def test_the_history_is_valid_however_a_reply_ends(
    kind: str, ending: str, after_a_call: bool
) -> None:
    call: Any = (
        "<add><a>1</a><b>2</b></add>" if kind == "react" else [NativeCall("add", {"a": 1, "b": 2})]
    )
    before: list[Reply] = [call] if after_a_call else []
    reply = ENDINGS[ending]
    cancelled = ending.startswith("cancelled")
    if cancelled:
        model: Any = ThenStallingModel(before, cast("list[ChatDelta]", reply))
    else:
        model = ScriptedModel([*before, cast(Reply, reply)])
    run = make(kind, model).run("go")

    async def main() -> None:
        if not cancelled:
            await run
            return
        task = asyncio.create_task(consume(run))
        await model.stalling.stalled.wait()
        await asyncio.sleep(0)
        run.cancel()
        await task

    expected = {"stop": "done", "empty": "done", "reasoning only": "done"}.get(ending)
    if ending.startswith(("error", "failed")):
        with pytest.raises(ModelError):
            asyncio.run(main())
        expected = "model_error"
    elif cancelled:
        with pytest.raises(asyncio.CancelledError):
            asyncio.run(main())
        expected = "cancelled"
    else:
        asyncio.run(main())
    assert run.reason == (expected or "length")
    assert_valid(run.messages)
    # A reply is kept as far as it came; one that said nothing leaves nothing.
    said = [m.get("content") for m in run.messages if m["role"] == "assistant"][after_a_call:]
    silent = ending in ("empty", "reasoning only", "failed request") or "before" in ending
    assert said == ([] if silent else ["Hel"])
