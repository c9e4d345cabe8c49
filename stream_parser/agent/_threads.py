"""The worker threads of sync tools: a bounded pool, and a step's calls handed over at once.

Theory of operation.  A sync tool must not block the event loop, so it runs on a
worker thread and its result comes back to the loop (:func:`in_thread`).  The workers
are a bounded pool of reused daemon threads (:class:`_Workers`): a call never waits for
one, and a tool past its time limit holds up neither the loop's shutdown nor the
interpreter's exit.

Each hand-over costs two thread switches (to the worker, and back to the loop), which
on a busy machine are most of what a trivial sync tool costs.  The calls of a step that
run one after the other anyway are handed over together (:class:`CallBatch`): one
worker runs them in order and hands each result back as it is made, so a step of three
calls costs one hand-over instead of three.  The loop still awaits each call in turn,
with its own time limit; when it stops waiting (a call past its time limit, the run
cancelled or closed), it stops the batch, the worker starts no further call, and the
calls left run the usual way, each handed over alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import os
import queue
import threading
from collections.abc import Callable, Sequence
from typing import Final, TypeAlias, cast

from ..tools import ToolResult

__all__ = ["TOOL_THREADS", "CallBatch", "in_thread"]


TOOL_THREADS: Final = 16
"""The most worker threads kept for sync tools, for the whole process (see :class:`_Workers`)."""

# How long an idle worker waits for a call before it ends (the pool shrinks back).
_IDLE_SECONDS: Final = 60.0


# A job runs a call and gives back what hands its outcome over, which never raises.
_Job: TypeAlias = "Callable[[], Callable[[], None]]"
# A worker's inbox: each job, with the event it sets when it starts the job.
_Inbox: TypeAlias = "queue.SimpleQueue[tuple[_Job, threading.Event | None]]"


class _Workers:
    """A bounded pool of reused daemon threads for sync tools, shared by every agent.

    Starting a thread costs about a quarter of a millisecond; a worker that waits for
    the next call is woken in a few microseconds.  Why not the loop's default executor
    (or any ``ThreadPoolExecutor``): a tool past its time limit keeps its thread until it
    returns, and the executor's threads are joined at the loop's shutdown and at the
    interpreter's exit, so one stuck tool would block both.  Here every thread is a
    daemon, nothing joins it, and a call never waits for a worker: with all
    :data:`TOOL_THREADS` of them held (by tools past their time limit, say), the call
    gets a thread of its own, which ends with it.  An idle worker ends after a minute.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._idle: list[_Inbox] = []  # the inbox of each idle worker
        self._count = 0
        # A forked child has none of its parent's threads: it starts with an empty pool.
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        self._lock = threading.Lock()
        self._idle = []
        self._count = 0

    def submit(self, job: _Job, *, wait: bool = True) -> None:
        """Run ``job`` on an idle worker, a new worker, or past the bound a thread of its own.

        Args:
            job: the job.
            wait: return once the worker has started it, as ``Thread.start()`` returns
                once a new thread runs: the call starts now, not when this thread next
                lets go of the GIL.  A caller that awaits the outcome at once lets go of
                it right away and need not wait (a thread switch there and back less).
        """
        with self._lock:
            inbox: _Inbox | None = self._idle.pop() if self._idle else None
            pooled = inbox is None and self._count < self._size
            if pooled:
                self._count += 1
        if inbox is not None:
            if not wait:
                inbox.put((job, None))
                return
            started = threading.Event()
            inbox.put((job, started))
            started.wait()
            return
        if pooled:
            new: _Inbox = queue.SimpleQueue()
            new.put((job, None))
            target: Callable[[], None] = functools.partial(self._work, new)
            name = "stream_parser-tool"
        else:
            target, name = functools.partial(_run_once, job), "stream_parser-tool-extra"
        threading.Thread(target=target, name=name, daemon=True).start()

    def _work(self, inbox: _Inbox) -> None:
        while True:
            try:
                job, started = inbox.get(timeout=_IDLE_SECONDS)
            except queue.Empty:
                with self._lock:
                    if inbox in self._idle:  # nobody is handing it a call: end
                        self._idle.remove(inbox)
                        self._count -= 1
                        return
                job, started = inbox.get()  # taken off the idle list just now: it comes
            if started is not None:
                started.set()
            deliver = job()  # never raises: the outcome is in ``deliver``
            # Idle again before the outcome is handed over: the next call, which may
            # follow at once, finds this worker instead of starting another.
            with self._lock:
                self._idle.append(inbox)
            deliver()


def _run_once(job: _Job) -> None:
    job()()


_WORKERS: Final = _Workers(TOOL_THREADS)


async def in_thread(function: Callable[[], ToolResult]) -> ToolResult:
    """Run a sync tool on a worker thread (:class:`_Workers`), the loop free meanwhile.

    A tool that overruns its time limit keeps running in the background; its daemon
    thread neither blocks the loop's shutdown nor the interpreter's exit.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[ToolResult] = loop.create_future()
    # The tool sees the context of the run (context variables such as a typed function's
    # trace id), as it would if it ran in the loop.
    context = contextvars.copy_context()

    def work() -> Callable[[], None]:
        value: ToolResult | None = None
        error: BaseException | None = None
        try:
            value = context.run(function)
        except BaseException as exc:  # handed to the awaiting task
            error = exc

        def deliver() -> None:
            # A closed loop means nobody waits for this call any more.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(_settle, future, value, error)

        return deliver

    _WORKERS.submit(work)
    return await future


def _settle(
    future: asyncio.Future[ToolResult], value: ToolResult | None, error: BaseException | None
) -> None:
    """Hand a call's outcome to whoever awaits it (on the loop; nobody may, any more)."""
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(cast(ToolResult, value))


def _nothing() -> None:
    return None


class CallBatch:
    """Sync calls that run one after the other, handed to one worker at once.

    The worker runs them in order, each in a copy of the context of the run, and hands
    each outcome back as it is made (:meth:`take` gives the future to await).
    :meth:`stop` ends the batch: the worker starts no call after the one it runs, and
    :meth:`take` then gives None for each call not started, which the caller runs by
    itself.

    Args:
        functions: the calls, in order; each returns the call's result (an exception
            it raises is handed over as the future's).
    """

    def __init__(self, functions: Sequence[Callable[[], ToolResult]]) -> None:
        self._loop = asyncio.get_running_loop()
        self._functions = list(functions)
        self._futures: list[asyncio.Future[ToolResult]] = [
            self._loop.create_future() for _ in self._functions
        ]
        # The tools see the context of the run, as they would if they ran in the loop.
        self._context = contextvars.copy_context()
        self._lock = threading.Lock()
        self._started = 0  # how many calls the worker has started
        self._stopped = False

    def start(self) -> None:
        """Hand the calls to a worker (the caller awaits the first one at once)."""
        _WORKERS.submit(self._work, wait=False)

    def take(self, index: int) -> asyncio.Future[ToolResult] | None:
        """The future of call ``index``; None if the batch stopped before it started."""
        with self._lock:
            if self._stopped and index >= self._started:
                return None
        return self._futures[index]

    def started(self, index: int) -> bool:
        """Whether the worker has started call ``index``."""
        with self._lock:
            return index < self._started

    def stop(self) -> None:
        """Start no further call (those left are run by the caller, or not at all)."""
        with self._lock:
            self._stopped = True

    def _work(self) -> Callable[[], None]:
        last = len(self._functions) - 1
        for index, function in enumerate(self._functions):
            with self._lock:
                if self._stopped:
                    return _nothing
                self._started = index + 1
            value: ToolResult | None = None
            error: BaseException | None = None
            try:
                # A copy each: what a tool sets in its context is not seen by the next.
                value = self._context.copy().run(function)
            except BaseException as exc:  # handed to the awaiting task
                error = exc
            deliver = functools.partial(self._deliver, self._futures[index], value, error)
            if index == last:
                return deliver  # the worker is idle again before the loop hears of it
            deliver()
        return _nothing

    def _deliver(
        self,
        future: asyncio.Future[ToolResult],
        value: ToolResult | None,
        error: BaseException | None,
    ) -> None:
        # A closed loop means nobody waits for this call any more.
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(_settle, future, value, error)
