"""Sync tools run on a bounded pool of reused daemon threads, which never hold a run up."""

from __future__ import annotations

import asyncio
import contextvars
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from stream_parser import FunctionCallAgent, ToolResultEvent
from stream_parser.agent import _threads
from stream_parser.agent.runner import TOOL_THREADS
from stream_parser.testing import NativeCall, ScriptedModel, validate_history
from stream_parser.tools import tool

ROOT = Path(__file__).resolve().parent.parent.parent


def test_a_worker_is_reused_from_call_to_call() -> None:
    threads: list[threading.Thread] = []

    @tool
    def where() -> str:
        """Say which thread runs the call."""
        threads.append(threading.current_thread())
        return "here"

    replies = [[NativeCall("where", {})]] * 5 + ["done"]
    run = FunctionCallAgent(ScriptedModel(replies), [where]).run_sync("go")
    assert run.reason == "done" and len(threads) == 5
    assert all(thread.daemon for thread in threads)
    assert all(thread.name == "stream_parser-tool" for thread in threads)
    # One call at a time: the worker that ran one is idle again for the next.
    assert len({thread.ident for thread in threads}) == 1
    assert threading.current_thread() not in threads


def test_a_tool_past_its_time_limit_does_not_hold_the_run() -> None:
    release = threading.Event()
    finished = threading.Event()

    @tool
    def stuck() -> str:
        """Wait until released."""
        release.wait()
        finished.set()
        return "late"

    model = ScriptedModel([[NativeCall("stuck", {})], "gave up"])
    try:
        run = FunctionCallAgent(model, [stuck], tool_timeout=0.05).run_sync("go")
        # The run is over while the tool still runs: its thread was left behind.
        assert run.reason == "done" and not finished.is_set()
        results = [e.result for e in run.events if isinstance(e, ToolResultEvent)]
        assert [r.error_type for r in results] == ["tool_timeout"]
    finally:
        release.set()
    assert finished.wait(10)


def test_with_every_worker_held_the_next_call_still_runs() -> None:
    release = threading.Event()
    held = threading.Semaphore(0)
    ran: list[str] = []

    @tool
    def hold() -> str:
        """Hold a worker until released."""
        held.release()
        release.wait()
        return "held"

    @tool
    def quick() -> str:
        """Return at once."""
        ran.append(threading.current_thread().name)
        return "quick"

    calls = [NativeCall("hold", {}, id=f"h{i}") for i in range(TOOL_THREADS + 2)]
    model = ScriptedModel([[*calls, NativeCall("quick", {})], "ok"])
    agent = FunctionCallAgent(model, [hold, quick], concurrent_tools=True, tool_timeout=0.2)
    try:
        run = agent.run_sync("go")
        assert run.reason == "done" and len(ran) == 1
        # Every worker was held (and two calls more, each on a thread of its own): the
        # quick call got a thread of its own too instead of waiting for one.
        for _ in range(TOOL_THREADS + 2):
            assert held.acquire(timeout=10)
        assert ran == ["stream_parser-tool-extra"]
        pooled = [t for t in threading.enumerate() if t.name == "stream_parser-tool"]
        assert len(pooled) <= TOOL_THREADS
    finally:
        release.set()


def test_a_process_exits_at_once_with_a_tool_still_running(tmp_path: Path) -> None:
    script = tmp_path / "stuck_tool.py"
    script.write_text(
        textwrap.dedent(
            """
            import time

            from stream_parser import FunctionCallAgent, ToolResultEvent
            from stream_parser.testing import NativeCall, ScriptedModel
            from stream_parser.tools import tool


            @tool
            def sleepy() -> str:
                '''Sleep for an hour.'''
                time.sleep(3600)
                return "awake"


            model = ScriptedModel([[NativeCall("sleepy", {})], "moved on"])
            run = FunctionCallAgent(model, [sleepy], tool_timeout=0.05).run_sync("go")
            print(run.reason, run.output)
            """
        )
    )
    # The tool sleeps for an hour: the process ends only because nothing joins its thread.
    done = subprocess.run(
        [sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done moved on"


# --- a step's sync calls handed over together ----------------------------------------------


def _counting_submits(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """Count the hand-overs to the workers (whether each waits for the worker to start)."""
    submits: list[bool] = []
    original = _threads._WORKERS.submit

    def submit(job: Any, *, wait: bool = True) -> None:
        submits.append(wait)
        original(job, wait=wait)

    monkeypatch.setattr(_threads._WORKERS, "submit", submit)
    return submits


def _noting(name: str, asked: bool) -> Any:
    def run() -> str:
        RAN.append((name, threading.current_thread().ident))
        return name

    return tool(run, name=name, description=f"Say {name}.", requires_approval=asked)


def _named(*names: str, asked: str = "") -> list[Any]:
    """Sync tools that note their name and thread and return their name (``asked``: the
    one that requires approval)."""
    return [_noting(name, name == asked) for name in names]


RAN: list[tuple[str, int | None]] = []


@pytest.fixture(autouse=True)
def _forget() -> None:
    RAN.clear()


def _step(*names: str) -> list[NativeCall]:
    return [NativeCall(name, {}) for name in names]


def test_the_sync_calls_of_a_step_are_handed_over_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    submits = _counting_submits(monkeypatch)
    model = ScriptedModel([_step("a", "b", "c"), _step("c", "a"), "done"])
    run = FunctionCallAgent(model, _named("a", "b", "c")).run_sync("go")
    assert run.reason == "done"
    assert [name for name, _ in RAN] == ["a", "b", "c", "c", "a"]
    assert submits == [False, False]  # one hand-over a step, the loop waiting at once
    results = [e.result.text for e in run.events if isinstance(e, ToolResultEvent)]
    assert results == ["a", "b", "c", "c", "a"]
    assert [m["content"] for m in run.messages if m["role"] == "tool"] == results


def test_a_call_the_approver_is_asked_about_runs_after_the_calls_before_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    submits = _counting_submits(monkeypatch)
    seen: list[list[str]] = []

    def approve(call: Any) -> bool:
        seen.append([name for name, _ in RAN])
        return True

    model = ScriptedModel([_step("a", "b", "c", "d"), "done"])
    tools = _named("a", "b", "c", "d", asked="b")
    run = FunctionCallAgent(model, tools, approve=approve).run_sync("go")
    assert run.reason == "done" and [name for name, _ in RAN] == ["a", "b", "c", "d"]
    # Asked about b once a had run, and before c and d: those two went over together.
    assert seen == [["a"]]
    assert submits == [False, True, False]


def test_a_batched_call_past_its_time_limit_leaves_the_rest_to_other_workers() -> None:
    release = threading.Event()

    @tool
    def stuck() -> str:
        """Wait until released."""
        RAN.append(("stuck", threading.current_thread().ident))
        release.wait(10)
        return "late"

    model = ScriptedModel([[*_step("a"), NativeCall("stuck", {}), *_step("b", "c")], "done"])
    try:
        agent = FunctionCallAgent(model, [*_named("a", "b", "c"), stuck], tool_timeout=0.2)
        run = agent.run_sync("go")
        results = [e.result for e in run.events if isinstance(e, ToolResultEvent)]
        assert [r.error_type or r.text for r in results] == ["a", "tool_timeout", "b", "c"]
        threads = dict(RAN)
        assert threads["b"] != threads["stuck"] and threads["c"] != threads["stuck"]
    finally:
        release.set()
    assert run.reason == "done"


def test_a_batch_stays_within_the_call_limit() -> None:
    model = ScriptedModel([_step("a", "b", "c"), "done"])
    run = FunctionCallAgent(model, _named("a", "b", "c"), max_tool_calls=2).run_sync("go")
    assert [name for name, _ in RAN] == ["a", "b"] and run.reason == "max_tool_calls"
    assert run.tool_calls == 2


def test_what_a_tool_sets_in_its_context_is_not_seen_by_the_next() -> None:
    seen: contextvars.ContextVar[str] = contextvars.ContextVar("seen", default="run")

    @tool
    def setter() -> str:
        """Set the variable."""
        seen.set("setter")
        return seen.get()

    @tool
    def getter() -> str:
        """Read the variable."""
        return seen.get()

    model = ScriptedModel([[NativeCall("setter", {}), NativeCall("getter", {})], "done"])
    run = FunctionCallAgent(model, [setter, getter]).run_sync("go")
    results = [e.result.text for e in run.events if isinstance(e, ToolResultEvent)]
    assert results == ["setter", "run"]


def test_a_cancelled_run_stops_its_batch_after_the_call_running() -> None:
    second_started = threading.Event()
    release = threading.Event()

    @tool
    def second() -> str:
        """The second: waits."""
        RAN.append(("second", None))
        second_started.set()
        release.wait(10)
        return "two"

    model = ScriptedModel([[*_step("a"), NativeCall("second", {}), *_step("c")], "done"])
    run = FunctionCallAgent(model, [*_named("a", "c"), second]).run("go")

    async def main() -> None:
        task = asyncio.ensure_future(run._drive())  # as await run and run_sync drive it
        assert await asyncio.to_thread(second_started.wait, 10)
        run.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    try:
        asyncio.run(main())
    finally:
        release.set()
    answers = [m["content"] for m in run.messages if m["role"] == "tool"]
    assert answers[0] == "a" and all("cancelled" in answer for answer in answers[1:])
    assert validate_history(run.messages) == [] and run.reason == "cancelled"
    # The worker, done with the second call, starts no other: the third never runs.
    time.sleep(0.2)
    assert [name for name, _ in RAN] == ["a", "second"] and run.tool_calls == 2


def test_a_consumer_sees_each_result_before_the_next_sync_call_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    submits = _counting_submits(monkeypatch)
    model = ScriptedModel([_step("a", "b", "c"), "done"])
    run = FunctionCallAgent(model, _named("a", "b", "c")).run("go")
    seen: list[list[str]] = []

    async def main() -> None:
        async for event in run:
            if isinstance(event, ToolResultEvent):
                seen.append([name for name, _ in RAN])

    asyncio.run(main())
    assert seen == [["a"], ["a", "b"], ["a", "b", "c"]]
    assert submits == [False, False, False]  # one at a time, none waiting for a worker
