"""Sync tools run on a bounded pool of reused daemon threads, which never hold a run up."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
from pathlib import Path

from stream_parser import FunctionCallAgent, ToolResultEvent
from stream_parser.agent.runner import TOOL_THREADS
from stream_parser.testing import NativeCall, ScriptedModel
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
