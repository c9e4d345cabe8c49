"""The agent's own cost per step, without the model and the tools.

Run from the repository root (the file is named ``bench_*`` so the test run skips it)::

    python -m benchmarks.bench_agent                        # the tables
    python -m benchmarks.bench_agent --steps 3 --repeat 1   # a quick check that it runs

One step is a reply with some text and three tool calls (native, for
:class:`~stream_parser.FunctionCallAgent`; XML in the text, for
:class:`~stream_parser.ReActAgent`), streamed from deltas built in advance by a model
that does no work, and three tools that return at once: async tools, or sync tools
(which the agent runs on its worker threads).  The parser's own time on the same deltas
is measured apart and taken off, so what is left is the agent: recording the reply,
running the calls, building the history.  The aim is at most 0.3 ms per step, the same
at 10 steps and at 200 (a cost that grew with the history would show as a larger figure
at 200).  A row drives the native agent with
:class:`~stream_parser.testing.ScriptedModel`, which records every request: it must stay
flat too.  The last two rows are the native agent with ``timings=True`` (a
``request_done`` event per step, each call timed) and with a budget (``usage_limits``
with requests, tool calls and total tokens, checked before each request and after each
reply).

``--clock cpu`` times with the process's CPU time (every thread's) instead of the wall
clock: on a machine shared with other work, where the wall clock also counts the time
the process waits for a processor, it varies less from run to run; it does count the
worker threads' own work and the switches between the threads.

Every step builds a new parser (each reply's spans and call indexes start at 0); its
compiled tables come from the core's cache, so that a step costs about the same with
300 tools as with 2.  The second table shows it: the time to build a step's parser for
an agent with 2, 50 and 300 tools, from the cache and compiled (the first step of a
tool set, the cache emptied before each build), and a whole step of the ReAct agent with
those tools.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from stream_parser import FunctionCallAgent, ReActAgent, StreamToolParser
from stream_parser.agent import UsageLimits
from stream_parser.core import _tables as tables_module
from stream_parser.core.chunks import ChatDelta, ToolCallDelta
from stream_parser.testing import NativeCall, ScriptedModel, ScriptedReply
from stream_parser.tools import ToolRegistry, tool


@tool
async def read_file(path: str) -> str:
    """Read a file.

    Args:
        path: The file.
    """
    return "contents"


@tool
async def search(query: str, limit: int = 10) -> str:
    """Search.

    Args:
        query: What to look for.
        limit: How many results.
    """
    return "results"


def read_file_sync(path: str) -> str:
    """Read a file.

    Args:
        path: The file.
    """
    return "contents"


def search_sync(query: str, limit: int = 10) -> str:
    """Search.

    Args:
        query: What to look for.
        limit: How many results.
    """
    return "results"


TOOLS = [read_file, search]
SYNC_TOOLS = ToolRegistry()
SYNC_TOOLS.add(read_file_sync, name="read_file")
SYNC_TOOLS.add(search_sync, name="search")
CALLS = [
    ("read_file", '{"path": "src/main.py"}'),
    ("search", '{"query": "def main", "limit": 5}'),
    ("read_file", '{"path": "README.md"}'),
]
TEXT = "I will look at the files and search for the function. " * 3
TOOL_COUNTS = (2, 50, 300)

# What the figures are timed with: the wall clock, or the process's CPU time (--clock).
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}
clock = CLOCKS["wall"]


def many_tools(count: int) -> ToolRegistry:
    """``read_file`` and ``search``, then more tools (one function) up to ``count``."""

    async def extra(path: str, limit: int = 10) -> str:
        """Another tool.

        Args:
            path: A path.
            limit: How many.
        """
        return "done"

    registry = ToolRegistry(TOOLS)
    for i in range(count - len(TOOLS)):
        registry.add(extra, name=f"extra_tool_{i}")
    return registry


def _pieces(text: str, size: int = 4) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def native_reply() -> list[ChatDelta]:
    deltas = [ChatDelta(content=piece) for piece in _pieces(TEXT)]
    for index, (name, arguments) in enumerate(CALLS):
        deltas.append(
            ChatDelta(tool_calls=(ToolCallDelta(index=index, id=f"c{index}", name=name),))
        )
        deltas += [
            ChatDelta(tool_calls=(ToolCallDelta(index=index, arguments=piece),))
            for piece in _pieces(arguments)
        ]
    deltas.append(ChatDelta(finish_reason="tool_calls"))
    return deltas


def text_reply() -> list[ChatDelta]:
    text = (
        TEXT
        + "<read_file><path>src/main.py</path></read_file>"
        + "<search><query>def main</query><limit>5</limit></search>"
        + "<read_file><path>README.md</path></read_file>"
    )
    return [ChatDelta(content=piece) for piece in _pieces(text)] + [ChatDelta(finish_reason="stop")]


class InstantModel:
    """Replays one reply for ever, doing no work of its own."""

    def __init__(self, reply: list[ChatDelta]) -> None:
        self.reply = reply

    def stream(
        self, messages: Sequence[Any], *, tools: Any = None, **options: Any
    ) -> AsyncIterator[ChatDelta]:
        return self._play()

    async def _play(self) -> AsyncIterator[ChatDelta]:
        for delta in self.reply:
            yield delta


def scripted_model(steps: int) -> ScriptedModel:
    """A :class:`ScriptedModel` with ``steps`` replies like :func:`native_reply`'s."""
    calls = tuple(
        NativeCall(name, arguments, id=f"c{i}") for i, (name, arguments) in enumerate(CALLS)
    )
    return ScriptedModel([ScriptedReply(content=TEXT, tool_calls=calls)] * steps)


def _parse_only(agent: Any, reply: list[ChatDelta], steps: int) -> float:
    async def main() -> None:
        for _ in range(steps):
            parser: StreamToolParser = agent._parser()
            async for _event in parser.aparse_stream(InstantModel(reply).stream([])):
                pass

    started = clock()
    asyncio.run(main())
    return clock() - started


def _agent(agent: Any, steps: int) -> float:
    async def main() -> None:
        run = await agent.run("go")
        assert run.reason in ("max_iterations", "usage_limit") and run.steps == steps, run

    started = clock()
    asyncio.run(main())
    return clock() - started


def _agent_scripted(kind: str, tools: Any, steps: int) -> float:
    # The model is built before the clock starts: a run uses up its script.
    cls = FunctionCallAgent if kind == "native" else ReActAgent
    agent = cls(scripted_model(steps), tools, max_iterations=steps)
    return _agent(agent, steps)


def measure(
    kind: str,
    steps: int = 200,
    repeat: int = 5,
    tools: Any = TOOLS,
    model: str = "instant",
    options: dict[str, Any] | None = None,
) -> dict[str, float]:
    """Milliseconds per step: the whole agent, the parser alone, and the difference.

    Args:
        kind: ``"native"`` (FunctionCallAgent) or ``"react"`` (ReActAgent).
        steps: steps per run.
        repeat: runs per figure (the best counts).
        tools: the agent's tools.
        model: ``"instant"`` (replays prepared deltas) or ``"scripted"``
            (:class:`ScriptedModel`, native replies only).
        options: more agent options (``timings``, ``usage_limits``: a budget's
            ``requests`` then bounds the run instead of ``max_iterations``).
    """
    reply = native_reply() if kind == "native" else text_reply()
    cls = FunctionCallAgent if kind == "native" else ReActAgent
    settings: dict[str, Any] = {"max_iterations": steps, **(options or {})}
    if "usage_limits" in settings:
        del settings["max_iterations"]
    agent = cls(InstantModel(reply), tools, **settings)
    gc.collect()
    if model == "scripted":
        first = scripted_model(1)
        reply = _collect(first)
        whole = min(_agent_scripted(kind, tools, steps) for _ in range(repeat))
    else:
        whole = min(_agent(agent, steps) for _ in range(repeat))
    whole = whole / steps * 1000
    parse = min(_parse_only(agent, reply, steps) for _ in range(repeat)) / steps * 1000
    return {"agent": whole, "parser": parse, "overhead": whole - parse}


def _collect(model: ScriptedModel) -> list[ChatDelta]:
    """The deltas of ``model``'s next reply."""

    async def main() -> list[ChatDelta]:
        return [delta async for delta in model.stream([])]

    return asyncio.run(main())


def _build(agent: Any, count: int, compiled: bool) -> float:
    # The cache is emptied before each build for the compiled figure: that is what
    # every step cost when each parser compiled its own tables.
    clear = tables_module._TOOL_TABLES.clear
    gc.collect()
    gc.disable()
    try:
        started = time.perf_counter()
        for _ in range(count):
            if compiled:
                clear()
            agent._parser()
        return time.perf_counter() - started
    finally:
        gc.enable()


def measure_parser_build(tools: Any, count: int = 200, repeat: int = 5) -> dict[str, float]:
    """Microseconds to build one step's parser, from the cache and compiled."""
    agent = ReActAgent(InstantModel(text_reply()), tools)
    agent._parser()
    cached = min(_build(agent, count, compiled=False) for _ in range(repeat))
    compiled = min(_build(agent, max(count // 10, 1), compiled=True) for _ in range(repeat))
    return {"cached": cached / count * 1e6, "compiled": compiled / max(count // 10, 1) * 1e6}


ROWS: tuple[tuple[str, str, str], ...] = (
    # (label, agent kind, tools kind or "scripted")
    ("native, async tools", "native", "async"),
    ("native, sync tools", "native", "sync"),
    ("react, async tools", "react", "async"),
    ("react, sync tools", "react", "sync"),
    ("native, ScriptedModel", "native", "scripted"),
    ("native, timings=True", "native", "timings"),
    ("native, usage_limits", "native", "limits"),
)


def _row(kind: str, tools: str, steps: int, repeat: int) -> dict[str, float]:
    if tools == "scripted":
        return measure(kind, steps, repeat, model="scripted")
    if tools == "timings":
        return measure(kind, steps, repeat, options={"timings": True})
    if tools == "limits":
        budget = UsageLimits(requests=steps, tool_calls=10**9, total_tokens=10**9)
        return measure(kind, steps, repeat, options={"usage_limits": budget})
    return measure(kind, steps, repeat, tools=SYNC_TOOLS if tools == "sync" else TOOLS)


def main(argv: Sequence[str] | None = None) -> int:
    """Print both tables; returns the exit status."""
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    options.add_argument("--steps", default="10,200", help="comma-separated steps per run")
    options.add_argument("--repeat", type=int, default=5, help="runs per figure (the best)")
    options.add_argument(
        "--clock", choices=sorted(CLOCKS), default="wall", help="the wall clock or CPU time"
    )
    options.add_argument(
        "--tool-counts",
        default=",".join(str(n) for n in TOOL_COUNTS),
        help="comma-separated tool counts of the second table (empty: skip it)",
    )
    args = options.parse_args(argv)
    global clock
    clock = CLOCKS[args.clock]
    steps = [int(n) for n in args.steps.split(",") if n.strip()]
    counts = [int(n) for n in args.tool_counts.split(",") if n.strip()]

    print(
        f"ms per step ({args.clock} clock): the agent's overhead (the parser's time taken "
        "off) / the whole step"
    )
    print(f"{'agent':<24}" + "".join(f"{f'{n} steps':>22}" for n in steps))
    for label, kind, tools in ROWS:
        cells = []
        for n in steps:
            result = _row(kind, tools, n, args.repeat)
            cells.append(f"{result['overhead']:>10.3f} / {result['agent']:>7.3f}")
        print(f"{label:<24}" + "".join(f"{cell:>22}" for cell in cells), flush=True)
    if not counts:
        return 0
    print()
    print(
        f"{'tools':<20}{'parser µs (cached)':>20}{'parser µs (compiled)':>22}{'react ms/step':>15}"
    )
    build_count = max(min(steps) * 20, 10)
    for count in counts:
        registry = many_tools(count)
        build = measure_parser_build(registry, count=build_count, repeat=args.repeat)
        step = measure("react", steps=max(steps), repeat=args.repeat, tools=registry)
        print(
            f"{count:<20}{build['cached']:>20.1f}{build['compiled']:>22.1f}{step['agent']:>15.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
