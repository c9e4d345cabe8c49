"""The library's background event loop, for the sync forms (private).

``run_sync``, ``stream_sync`` and the sync typed functions all drive their coroutine on
one event loop in a daemon thread, for the whole process: it works inside a running
loop too (a notebook, a web handler), and a client bound to that loop keeps working
across calls.  :func:`call_sync` runs an awaitable there; :func:`iterate_sync` turns an
async iterator into a generator; :func:`check_sync_tools` refuses, before any request,
tools that the background loop could not reach.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import (
    Awaitable,
    Generator,
)
from typing import Any, Protocol, TypeVar, cast

from ..tools import ToolRegistry

__all__ = ["call_sync", "check_sync_tools", "iterate_sync"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class _BackgroundLoop:
    """One event loop in a daemon thread, for ``run_sync`` and ``stream_sync``."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(
            target=self.loop.run_forever, name="stream_parser-agent-loop", daemon=True
        )
        self.thread.start()

    def call(self, coroutine: Awaitable[Any]) -> Any:
        if threading.current_thread() is self.thread:
            cast("Any", coroutine).close()
            raise RuntimeError(
                "run_sync / stream_sync (or a sync typed function) cannot be called from "
                "a coroutine on the library's background loop (an agent's own loop): "
                "await the async form there"
            )
        future = asyncio.run_coroutine_threadsafe(_awaited(coroutine), self.loop)
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            raise
        except concurrent.futures.CancelledError:
            raise asyncio.CancelledError from None


async def _awaited(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


_BACKGROUND: _BackgroundLoop | None = None
_BACKGROUND_LOCK = threading.Lock()


class _Closable(Protocol[T_co]):
    """An async iterator that can be closed early (an async generator, an AgentRun)."""

    def __anext__(self) -> Awaitable[T_co]: ...

    def aclose(self) -> Awaitable[None]: ...


def iterate_sync(items: _Closable[T]) -> Generator[T, None, None]:
    """The items of an async iterator as a plain generator, driven on the background loop.

    Leaving the loop early (``break``) closes the async iterator (a run closes with its
    history left consistent).
    """
    try:
        while True:
            try:
                yield call_sync(items.__anext__())
            except StopAsyncIteration:
                return
    finally:
        call_sync(items.aclose())


def call_sync(awaitable: Awaitable[T]) -> T:
    """Run an awaitable to its end from synchronous code, and return its result.

    It runs on the library's background event-loop thread (one for the process), so this
    works inside a running event loop too (a notebook, a web handler), and a client bound
    to that loop keeps working across calls.  The caller's context variables are not seen
    by the awaitable: pass what it needs.

    Raises:
        RuntimeError: called from a coroutine running on the background loop itself
            (it would wait for itself); await the async form there instead.
    """
    result: T = _background().call(awaitable)
    return result


def check_sync_tools(tools: ToolRegistry) -> None:
    """Refuse, before any request, a sync run whose tools it could not reach.

    A tool whose function has a ``check_sync_use(loop)`` method (an MCP tool's handler,
    whose session belongs to one event loop) is asked, with the background loop that
    will drive the run; it raises when that run could not call it.

    Raises:
        ConfigError: from a tool's check, saying to use the async form.
    """
    for item in tools.tools:
        check = getattr(item.fn, "check_sync_use", None)
        if callable(check):
            check(_background().loop)


def _background() -> _BackgroundLoop:
    global _BACKGROUND
    with _BACKGROUND_LOCK:
        if _BACKGROUND is None:
            _BACKGROUND = _BackgroundLoop()
        return _BACKGROUND
