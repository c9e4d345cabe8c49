"""pytest-benchmark: one agent reply written in each dialect, parsed from small chunks.

Run from the repository root (the file is named ``bench_*`` so the test run skips it)::

    python benchmarks/bench_dialects.py               # every dialect: µs per chunk at 100 KB, 1 MB
    python benchmarks/bench_dialects.py --profile hermes   # where one dialect's time goes
    python -m pytest benchmarks/bench_dialects.py --benchmark-enable
    python -m pytest benchmarks/bench_dialects.py --benchmark-enable --benchmark-group-by=param:size

Without ``--benchmark-enable`` (``pyproject.toml`` disables benchmarks by default) each
case runs once, as a smoke test that still checks the result.

The reply is the same in every dialect -- prose, a thinking block, then ``read_file``,
``write_to_file`` (a generated Python module full of ``<``, ``>``, ``&``, quotes and
backslashes, most of the size) and ``execute_command`` -- with the calls written by
:meth:`stream_parser.dialects.Dialect.format_call`.  It is cut into chunks of 1 to 8
characters (seeded, so every run and dialect sees the same cuts), like a token stream.
The XML case is the core's own format, for comparison: hermes adds a JSON string scan
and qwen3_coder a ``</parameter>`` check on top of the plugin hook.
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository root importable
    # Appended, not prepended: an installed ``stream_parser`` (a compiled wheel) must win
    # over the source tree's; PYTHONPATH still puts a tree first when wanted.
    sys.path.append(str(Path(__file__).resolve().parent.parent))

import pytest

from benchmarks.workload import TOOLS  # the XML benchmark's tool models
from stream_parser import ParserConfig, StreamToolParser, ToolCallEvent
from stream_parser.dialects import DIALECTS, get_dialect
from stream_parser.dialects.mistral import MistralDialect

SIZES = {"10KB": 10_000, "100KB": 100_000}
REPLY_START_ONLY = frozenset({"llama"})
"""Dialects whose calls are read only at the start of a reply (llama's bare JSON)."""
ONE_ARRAY = frozenset({"xlam"})
"""Dialects whose reply is one array of every call (``format_calls``), at its start."""
LAYOUTS: dict[str, tuple[str, Callable[[str, dict[str, Any]], str]]] = {
    "mistral_v3": ("mistral", lambda name, args: MistralDialect().format_calls_v3([(name, args)])),
}
"""Rows for a dialect's other layout: row name -> (dialect, writer of one call).

``mistral`` writes its calls in v11's layout; ``mistral_v3`` reads the same reply written
as v3's one-element arrays (``[TOOL_CALLS] [{...}]``), which go through the shared array
reader."""
ROWS = sorted([*DIALECTS, *LAYOUTS])
"""Every row: each dialect, and each other layout."""


def _dialect(row: str) -> str:
    """The dialect a benchmark row parses with."""
    return LAYOUTS[row][0] if row in LAYOUTS else row


def _module(size: int) -> str:
    """A Python module of about ``size`` characters with markup, quotes and escapes."""
    lines: list[str] = []
    total = 0
    i = 0
    while total < size:
        block = (
            f"def render_{i}(rows, limit={i % 7}):\n"
            f'    """Rows where count < limit, as <tr> elements; R&D stays "R&amp;D"."""\n'
            f"    out = ['<table class=\"t{i}\">']\n"
            f"    for row in rows:\n"
            f"        if row.count < limit and row.name != '\\\\':\n"
            f"            out.append(f'<tr><td>{{row.name}}</td></tr>')\n"
            f"    return '\\n'.join(out) + '</table>'\n\n"
        )
        lines.append(block)
        total += len(block)
        i += 1
    return "".join(lines)[:size]


def build_reply(dialect: str, size: int) -> str:
    """The benchmark reply of about ``size`` characters, its calls in ``dialect`` (a row)."""
    fmt = LAYOUTS[dialect][1] if dialect in LAYOUTS else get_dialect(dialect).format_call
    if dialect in ONE_ARRAY:
        return "<think>The template breaks on names with '&'; read it, fix it.</think>" + (
            get_dialect(dialect).format_calls(  # type: ignore[attr-defined]
                [
                    ("read_file", {"path": "src/render.py"}),
                    ("write_to_file", {"path": "src/render.py", "content": _module(size)}),
                    ("execute_command", {"command": "pytest -q tests/test_render.py"}),
                ]
            )
        )
    if dialect in REPLY_START_ONLY:
        # Its calls count only at the start of the reply (after reasoning): no prose first.
        return "<think>The template breaks on names with '&'; read it, fix it.</think>" + "\n".join(
            [
                fmt("read_file", {"path": "src/render.py"}),
                fmt("write_to_file", {"path": "src/render.py", "content": _module(size)}),
                fmt("execute_command", {"command": "pytest -q tests/test_render.py"}),
            ]
        )
    return "".join(
        [
            "<think>The template breaks on names with '&'; read it, fix it, test it.</think>",
            "I'll read the module first, then rewrite it so that `a < b` stays strict.\n",
            fmt("read_file", {"path": "src/render.py"}),
            "\nNow the fixed version:\n",
            fmt("write_to_file", {"path": "src/render.py", "content": _module(size)}),
            "\nAnd run the tests:\n",
            fmt("execute_command", {"command": "pytest -q tests/test_render.py"}),
            "\nDone.",
        ]
    )


def cut_chunks(text: str, seed: int = 5) -> list[str]:
    """``text`` in chunks of 1 to 8 characters, the same cuts for the same seed."""
    rng = random.Random(seed)
    chunks: list[str] = []
    i = 0
    while i < len(text):
        step = rng.randint(1, 8)
        chunks.append(text[i : i + step])
        i += step
    return chunks


def parse(dialect: str, chunks: list[str]) -> int:
    """Feed every chunk and close; return how many tool calls were found (``dialect``: a row)."""
    # Room for the 1 MB file body (escaped in JSON dialects): the default limit is 1 MiB.
    config = ParserConfig(dialect=_dialect(dialect), max_tool_size=8 * 1024 * 1024)
    parser = StreamToolParser(TOOLS, config=config)
    calls = 0
    for chunk in chunks:
        for event in parser.feed(chunk):
            calls += isinstance(event, ToolCallEvent)
    for event in parser.close():
        calls += isinstance(event, ToolCallEvent)
    return calls


@pytest.mark.parametrize("size", list(SIZES), ids=list(SIZES))
@pytest.mark.parametrize("dialect", ROWS)
def test_parse_reply(benchmark: Any, dialect: str, size: str) -> None:
    chunks = cut_chunks(build_reply(dialect, SIZES[size]))
    benchmark.group = f"dialects-{size}"
    benchmark.extra_info["chunks"] = len(chunks)
    calls = benchmark.pedantic(parse, args=(dialect, chunks), rounds=5, iterations=1)
    assert calls == 3


def profile(dialect: str, size: int = 1_000_000, top: int = 25) -> int:
    """Print the functions where parsing ``dialect``'s reply spends its time."""
    import cProfile
    import pstats

    if dialect not in ROWS:
        raise SystemExit(f"unknown dialect {dialect!r} (known: {', '.join(ROWS)})")
    chunks = cut_chunks(build_reply(dialect, size))
    profiler = cProfile.Profile()
    profiler.enable()
    calls = parse(dialect, chunks)
    profiler.disable()
    print(f"{dialect}: {len(chunks)} chunks, {calls} calls")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Print µs per chunk at 100 KB and 1 MB for every dialect, and the growth between them."""
    import argparse
    import gc
    import time

    parser = argparse.ArgumentParser(description="µs per chunk of each dialect's reader")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure (median kept)")
    parser.add_argument(
        "--dialects", default=",".join(ROWS), help="comma-separated (rows: dialects, layouts)"
    )
    parser.add_argument(
        "--sizes",
        default="100KB,1MB",
        help="comma-separated reply sizes (the first two give the growth)",
    )
    parser.add_argument(
        "--profile", metavar="NAME", help="profile one dialect's 1 MB reply (cProfile) instead"
    )
    args = parser.parse_args(argv)
    if args.profile:
        return profile(args.profile)
    from benchmarks.workload import parse_size
    from stream_parser.core import COMPILED

    sizes = {label.strip(): parse_size(label) for label in args.sizes.split(",") if label.strip()}
    print(f"{'compiled' if COMPILED else 'pure Python'} build: µs per chunk (CPU time, median)")
    print(
        f"{'dialect':>12} | "
        + " | ".join(f"{label:>12}" for label in sizes)
        + " | growth | x xml (100KB / 1MB)"
    )
    xml: list[float] = []
    # The XML reader first: every dialect's figure is also given as a multiple of its.
    names = ["xml", *(d for d in args.dialects.split(",") if d != "xml")]
    for dialect in names:
        figures = []
        for size in sizes.values():
            chunks = cut_chunks(build_reply(dialect, size))
            times = []
            for _ in range(args.repeat):
                gc.collect()
                gc.disable()
                start = time.process_time()
                calls = parse(dialect, chunks)
                times.append(time.process_time() - start)
                gc.enable()
                if calls != 3:
                    raise SystemExit(f"{dialect}: {calls} calls read, expected 3")
            times.sort()
            figures.append(times[len(times) // 2] / len(chunks) * 1e6)
        if dialect == "xml":
            xml = figures
        cells = " | ".join(f"{figure:>9.2f} µs" for figure in figures)
        ratios = " / ".join(f"{f / x:.2f}" for f, x in zip(figures, xml, strict=True))
        growth = f"{figures[1] / figures[0]:>5.2f}x" if len(figures) > 1 else f"{'':>6}"
        print(f"{dialect:>12} | {cells} | {growth} | {ratios}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
