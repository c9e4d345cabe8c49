"""Microseconds per chunk: StreamToolParser beside a naive re-scanning algorithm.

Run from the repository root::

    python benchmarks/bench_chunks.py                 # both tables, about a minute
    python benchmarks/bench_chunks.py --sizes 10KB,100KB --repeat 5
    python benchmarks/bench_chunks.py --profile       # cProfile of ours at 1 MB, top 20

Table 1 feeds the agent reply of ``benchmarks/workload.py`` (prose, thinking, three tool
calls, one with a large file body full of ``<``, ``>`` and ``&``), cut into 1-8
character chunks, to each parser and reports the time per chunk (``feed`` of every
chunk plus ``close``; the events are consumed and dropped, as a streaming UI would).
Ours is measured twice: with the default configuration (streaming delta events on) and
with ``emit_deltas=False`` (whole blocks only, which is all the naive baseline
produces).  Beside them, the *bare scan loop* (:func:`bare_scan`: one ``find("<")``
per chunk, the least any parser must do) and ours as a multiple of it: a measure of the
parser's own overhead that does not depend on the machine's speed.  Targets for ours:
about 1 us per chunk, at most 8 times the bare scan loop from 100 KB on, and flat from
100 KB to 1 MB (ratio at most 1.3).

Table 2 is the regression guard for long thinking blocks: ``<think>`` + n x ``x`` +
``</think>`` fed one character at a time, n = 20k, 40k, 80k.

Each figure is the best of ``--repeat`` runs (more for short runs: at least half a second
of runs, taken in turn across sizes), timed with ``time.perf_counter`` (``--clock cpu``:
``time.process_time``) with the garbage collector off during the run (after a full
collection), as ``timeit`` does.  The naive baseline is quadratic: at sizes where its
estimated run time exceeds ``--naive-budget`` seconds it is skipped, and where a single
run is long it is run once; the output says so.  The machine is shared: compare figures
from one run, not across runs, and prefer ``--clock cpu`` when it is busy.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import os
import platform
import pstats
import statistics
import sys
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol, TypeVar

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.naive import NaiveParser, naive_parse
from benchmarks.workload import SIZES, TOOLS, build_reply, cut_chunks, parse_size
from stream_parser import ParserConfig, StreamToolParser, ThinkingEvent, ToolCallEvent


class _Feeder(Protocol):
    def feed(self, chunk: str) -> list[Any]: ...

    def close(self) -> list[Any]: ...


Factory = Callable[[], _Feeder]
K = TypeVar("K", bound=Hashable)

GUARD_SIZES: tuple[int, ...] = (20_000, 40_000, 80_000)
FLAT_TARGET = 1.3
PER_CHUNK_TARGET_US = 1.0
BARE_TARGET = 8.0
"""Ours at most this many times the bare scan loop (:func:`bare_scan`), from 100 KB on."""
MIN_TOTAL_S = 0.5
STAT = "best"
"""Which of a figure\'s runs counts: ``best`` (the fastest) or ``median``."""
CLOCKS: dict[str, Callable[[], float]] = {"wall": time.perf_counter, "cpu": time.process_time}
CLOCK = time.perf_counter
MAX_RUNS = 50


def ours() -> StreamToolParser:
    """Our parser with the default configuration (streaming deltas on)."""
    return StreamToolParser(TOOLS)


def ours_blocks_only() -> StreamToolParser:
    """Our parser emitting whole blocks only, like the naive baseline."""
    return StreamToolParser(TOOLS, config=ParserConfig(emit_deltas=False))


def naive() -> NaiveParser:
    """The naive loop (benchmarks/naive.py): one buffer searched from 0 per chunk."""
    return NaiveParser(TOOLS)


BARE_SCAN: Final = None
"""The job "factory" of the bare scan loop (:func:`bare_scan`), which has no parser."""


def bare_scan(chunks: Sequence[str]) -> None:
    """The least any streaming parser must do: look at every chunk for a ``<``.

    No parser can do less per chunk than one loop step and one search of the chunk in
    C; the ratio of a parser's time to this loop's is its overhead, whatever the speed
    of the machine.
    """
    for chunk in chunks:
        chunk.find("<")


def time_once(factory: Factory | None, chunks: Sequence[str]) -> float:
    """Seconds to feed every chunk to a new parser and close it (gc off while timing).

    With ``factory`` :data:`BARE_SCAN`, the seconds of :func:`bare_scan` instead.
    """
    parser = None if factory is None else factory()
    gc.collect()
    gc.disable()
    try:
        if parser is None:
            start = CLOCK()
            bare_scan(chunks)
            return CLOCK() - start
        feed = parser.feed
        start = CLOCK()
        for chunk in chunks:
            feed(chunk)
        parser.close()
        return CLOCK() - start
    finally:
        gc.enable()


def best_interleaved(
    jobs: Mapping[K, tuple[Factory | None, Sequence[str]]],
    repeat: int,
    *,
    min_total: float = MIN_TOTAL_S,
) -> dict[K, float]:
    """Best (or, with ``--stat median``, median) time of each job, in seconds, the jobs'
    runs taken in turn (round robin).

    Every job runs at least ``repeat`` times; short ones keep running until they have
    spent ``min_total`` seconds (at most ``MAX_RUNS`` runs).  Taking the runs in turn
    means that a spell of load on a shared machine hits every size alike, so the ratios
    between sizes stay meaningful even when the absolute figures move.
    """
    times: dict[K, list[float]] = {key: [] for key in jobs}
    spent = dict.fromkeys(jobs, 0.0)
    runs = dict.fromkeys(jobs, 0)

    def pending(key: K) -> bool:
        return runs[key] < max(repeat, 1) or (spent[key] < min_total and runs[key] < MAX_RUNS)

    todo = [key for key in jobs if pending(key)]
    while todo:
        for key in todo:
            factory, chunks = jobs[key]
            t = time_once(factory, chunks)
            times[key].append(t)
            spent[key] += t
            runs[key] += 1
        todo = [key for key in todo if pending(key)]
    pick = statistics.median if STAT == "median" else min
    return {key: pick(values) for key, values in times.items()}


def best_of(
    factory: Factory, chunks: Sequence[str], repeat: int, *, min_total: float = MIN_TOTAL_S
) -> float:
    """The best of at least ``repeat`` runs of one job (see :func:`best_interleaved`)."""
    return best_interleaved({0: (factory, chunks)}, repeat, min_total=min_total)[0]


def us_per(seconds: float, count: int) -> float:
    """Microseconds per item."""
    return seconds / max(count, 1) * 1e6


def check_agreement(text: str, chunks: Sequence[str]) -> None:
    """Both parsers must find the same thinking and the same three tool calls.

    Raises:
        SystemExit: they disagree (the comparison would not be fair).
    """
    parser = ours()
    events: list[Any] = []
    for chunk in chunks:
        events.extend(parser.feed(chunk))
    events.extend(parser.close())
    mine = [("thinking", e.content) for e in events if isinstance(e, ThinkingEvent)]
    mine += [(e.tool_name, e.tool_instance) for e in events if isinstance(e, ToolCallEvent)]
    baseline = naive_parse(TOOLS, chunks)
    seed = [("thinking", e.value) for e in baseline if e.kind == "thinking"]
    seed += [(e.tool_name, e.value) for e in baseline if e.kind == "tool_call"]
    if mine != seed or len(mine) != 4:
        raise SystemExit(f"the parsers disagree on the workload ({len(text)} chars); no timings")


@dataclass
class _Row:
    label: str
    size: int
    chunks: int
    ours: float
    blocks: float
    bare: float
    naive: float | None
    naive_note: str


def _fmt(value: float | None, width: int = 9, digits: int = 2) -> str:
    return f"{'-':>{width}}" if value is None else f"{value:>{width}.{digits}f}"


def run_workload_table(sizes: Sequence[int], repeat: int, naive_budget: float) -> list[_Row]:
    """Table 1: the agent reply at each size, ours and naive, us per chunk."""
    workloads: dict[int, list[str]] = {}
    for size in sorted(set(sizes)):
        text = build_reply(size)
        workloads[size] = chunks = cut_chunks(text)
        if size <= 100_000:
            check_agreement(text, chunks)
    jobs: dict[tuple[str, int], tuple[Factory | None, Sequence[str]]] = {}
    for size, chunks in workloads.items():
        jobs["ours", size] = (ours, chunks)
        jobs["blocks", size] = (ours_blocks_only, chunks)
        jobs["bare", size] = (BARE_SCAN, chunks)
    t_ours = best_interleaved(jobs, repeat)

    rows: list[_Row] = []
    naive_rate: tuple[int, float] | None = None  # (size, us/chunk) of the last naive run
    for size, chunks in workloads.items():
        t_naive: float | None = None
        note = ""
        # The naive cost per chunk grows linearly with the size: extrapolate the last
        # measured size to decide whether this one fits the budget.
        estimate = (
            0.0 if naive_rate is None else naive_rate[1] * size / naive_rate[0] * len(chunks) / 1e6
        )
        if naive_budget > 0 and estimate > naive_budget:
            note = f"skipped: estimated {estimate:.0f} s per run > --naive-budget {naive_budget:g}"
        else:
            runs = 1 if estimate * repeat > naive_budget / 2 else repeat
            t_naive = best_of(naive, chunks, runs, min_total=0.0 if runs == 1 else MIN_TOTAL_S)
            naive_rate = (size, us_per(t_naive, len(chunks)))
            if runs < repeat:
                note = f"1 run ({t_naive:.0f} s), not best of {repeat}"
        rows.append(
            _Row(
                label=_size_label(size),
                size=size,
                chunks=len(chunks),
                ours=us_per(t_ours["ours", size], len(chunks)),
                blocks=us_per(t_ours["blocks", size], len(chunks)),
                bare=us_per(t_ours["bare", size], len(chunks)),
                naive=None if t_naive is None else us_per(t_naive, len(chunks)),
                naive_note=note,
            )
        )
    return rows


def print_workload_table(rows: Sequence[_Row]) -> None:
    """Print table 1 and the flatness ratio of ours."""
    print("Table 1: agent reply (prose, thinking, 3 tool calls) in 1-8 char chunks, us/chunk")
    print()
    print(
        "| size  |  chunks |      ours | ours, no deltas | bare scan loop | ours / bare "
        "| no deltas / bare |   naive loop | naive / ours |"
    )
    print(
        "|-------|--------:|----------:|----------------:|---------------:|------------:"
        "|-----------------:|-------------:|-------------:|"
    )
    for r in rows:
        ratio = None if r.naive is None else r.naive / r.ours
        print(
            f"| {r.label:<5} | {r.chunks:>7} | {_fmt(r.ours)} | {_fmt(r.blocks, 15)} "
            f"| {_fmt(r.bare, 14, 3)} | {_fmt(r.ours / r.bare, 11, 1)} "
            f"| {_fmt(r.blocks / r.bare, 16, 1)} "
            f"| {_fmt(r.naive, 12)} | {_fmt(ratio, 12, 1)} |"
        )
    for r in rows:
        if r.naive_note:
            print(f"  naive at {r.label}: {r.naive_note}")
    by_size = {r.size: r for r in rows}
    big, mid = by_size.get(1_000_000), by_size.get(100_000)
    if big is not None and mid is not None:
        ratio = big.ours / mid.ours
        verdict = "ok" if ratio <= FLAT_TARGET else "ABOVE TARGET"
        print()
        print(
            f"ours, 1MB / 100KB per chunk: {ratio:.2f} (target <= {FLAT_TARGET}: {verdict}); "
            f"no deltas: {big.blocks / mid.blocks:.2f}"
        )
    worst = max(r.ours for r in rows)
    print(
        f"ours, worst us/chunk: {worst:.2f} (target about {PER_CHUNK_TARGET_US:g} us: "
        f"{'ok' if worst <= 1.2 * PER_CHUNK_TARGET_US else 'ABOVE TARGET'})"
    )
    for r in rows:
        if r.size >= 100_000:
            ratio = r.ours / r.bare
            verdict = "ok" if ratio <= BARE_TARGET else "ABOVE TARGET"
            print(
                f"ours / bare scan loop at {r.label}: {ratio:.1f} (target <= {BARE_TARGET:g}: "
                f"{verdict}); no deltas: {r.blocks / r.bare:.1f}"
            )


def thinking_guard_input(n: int) -> list[str]:
    """``<think>`` + n x ``x`` + ``</think>``, one character per chunk."""
    return list("<think>" + "x" * n + "</think>")


def print_guard_table(ns: Sequence[int], repeat: int) -> None:
    """Table 2: the regression guard for long thinking blocks, us per character."""
    print("Table 2: thinking guard, <think> + n*x + </think> fed 1 char at a time, us/char")
    print()
    print("|      n |    ours |   naive loop | naive / ours |")
    print("|-------:|--------:|-------------:|-------------:|")
    inputs = {n: thinking_guard_input(n) for n in ns}
    # Each parser's runs are taken in turn across n, in a window of their own: ours are
    # short and would otherwise be spread over the naive runs' long window, where the
    # load of a shared machine changes.
    best: dict[tuple[str, int], float] = {}
    for name, factory in (("ours", ours), ("naive", naive)):
        jobs = {(name, n): (factory, chunks) for n, chunks in inputs.items()}
        best.update(best_interleaved(jobs, repeat))
    per_char = {key: us_per(t, len(inputs[key[1]])) for key, t in best.items()}
    for n in ns:
        a, b = per_char["ours", n], per_char["naive", n]
        print(f"| {n:>6} | {a:>7.2f} | {b:>12.2f} | {b / a:>12.1f} |")
    if len(ns) > 1:
        first, last = ns[0], ns[-1]
        growth = last / first
        print()
        print(
            f"per-char growth over n x{growth:g}: "
            f"ours x{per_char['ours', last] / per_char['ours', first]:.2f} (flat = 1), "
            f"naive x{per_char['naive', last] / per_char['naive', first]:.2f} "
            f"(quadratic = {growth:g})"
        )


def profile(size: int) -> None:
    """cProfile of ours (default configuration) at ``size``; print the top 20 by own time."""
    chunks = cut_chunks(build_reply(size))
    parser = ours()
    profiler = cProfile.Profile()
    profiler.enable()
    for chunk in chunks:
        parser.feed(chunk)
    parser.close()
    profiler.disable()
    print(f"cProfile: StreamToolParser, {_size_label(size)}, {len(chunks)} chunks of 1-8 chars")
    stats = pstats.Stats(profiler, stream=sys.stdout)
    stats.sort_stats("tottime").print_stats(20)


def _size_label(size: int) -> str:
    for label, value in SIZES.items():
        if value == size:
            return label
    if size % 1_000_000 == 0:
        return f"{size // 1_000_000}MB"
    if size % 1000 == 0:
        return f"{size // 1000}KB"
    return str(size)


def _environment() -> str:
    try:
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # pragma: no cover - not on every platform
        load = "n/a"
    return (
        f"Python {platform.python_version()} ({platform.python_implementation()}), "
        f"{platform.machine()}, {os.cpu_count()} CPUs, load average {load}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point; returns the exit status."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument(
        "--sizes",
        default="10KB,100KB,1MB",
        help="comma-separated workload sizes, e.g. 10KB,100KB,1MB or 25000 (characters)",
    )
    ap.add_argument("--repeat", type=int, default=3, help="runs per figure; the best counts")
    ap.add_argument(
        "--stat",
        choices=("best", "median"),
        default="best",
        help="which of a figure's runs counts: the fastest (default) or the median",
    )
    ap.add_argument(
        "--clock",
        choices=sorted(CLOCKS),
        default="wall",
        help="wall: time.perf_counter (default); cpu: time.process_time, which does not "
        "count the time the process waits for a CPU on a busy shared machine",
    )
    ap.add_argument(
        "--profile",
        action="store_true",
        help="only run cProfile on ours at the largest size and print the top 20",
    )
    ap.add_argument(
        "--naive-budget",
        type=float,
        default=60.0,
        help="skip the naive baseline where one run is estimated longer (seconds; 0: never)",
    )
    ap.add_argument(
        "--guard",
        default=",".join(str(n) for n in GUARD_SIZES),
        help="n values of the thinking guard (table 2); empty to skip it",
    )
    args = ap.parse_args(argv)
    global STAT
    STAT = args.stat
    try:
        sizes = [parse_size(s) for s in args.sizes.split(",") if s.strip()]
        guard = [int(parse_size(s)) for s in args.guard.split(",") if s.strip()]
    except ValueError as exc:
        ap.error(str(exc))
    if not sizes or min(sizes) < 2000:
        ap.error("--sizes: give at least one size of 2000 characters or more")

    global CLOCK
    CLOCK = CLOCKS[args.clock]
    if args.profile:
        profile(max(sizes))
        return 0

    print(_environment())
    print(
        f"{args.clock} clock, {args.stat} of {args.repeat}+ runs (short ones repeated for "
        f"{MIN_TOTAL_S:g} s, sizes interleaved), gc off while timing"
    )
    print()
    t0 = time.perf_counter()
    print_workload_table(run_workload_table(sizes, args.repeat, args.naive_budget))
    if guard:
        print()
        print_guard_table(guard, args.repeat)
    print()
    print(f"total {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
