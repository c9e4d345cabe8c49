"""Microseconds per chunk: the compiled build beside the pure-Python one, and a bare loop.

Run from the repository root::

    python benchmarks/bench_compiled.py                       # this interpreter's build
    python benchmarks/bench_compiled.py --compare PURE_PY COMPILED_PY --rounds 5

The workload is ``benchmarks/bench_chunks.py``'s: the agent reply of
``benchmarks/workload.py`` cut into 1-8 character chunks, fed to a new
``StreamToolParser`` and closed, events dropped: with the default configuration
(deltas on), and with ``emit_deltas=False`` (whole blocks only, "blocks").
Each figure is a median of runs timed with ``time.process_time`` (CPU time: the machine
may be shared), the garbage collector off during a run.

Beside the parser, the same process times a *bare loop*: a Python loop that only looks
for ``<`` in each chunk (``chunk.find("<")``).  No streaming parser in Python can do less
per chunk, so ``parser / bare`` is the parser's cost in units of the interpreter's own
loop overhead, a figure that the machine's speed and load affect much less than the
microseconds do.

With ``langchain-core`` installed, one more row: LangChain's ``XMLOutputParser``
(``parser="xml"``, the standard library's pull parser) streaming the same reply rendered
as well-formed XML (each text, thinking and tool-call block of the reply an element, the
call's arguments child elements, all text escaped), cut the same way, through its public
``transform``.  It yields a dict per closed element and nothing while one streams, and it
raises on malformed XML, so it does less than our parser; it is there as a point of
reference.  Without ``langchain-core`` the row is skipped with a message.

``--compare PURE COMPILED`` runs this script in two interpreters (for instance a virtual
environment with the pure-Python package, and one with the compiled wheel installed),
alternating them ``--rounds`` times, and prints the medians of both and their ratio.
``--pure-path DIR`` runs the pure side with ``PYTHONPATH=DIR`` (a source tree), so one
environment with the compiled wheel installed can serve both sides::

    cd /tmp && python /path/to/repo/benchmarks/bench_compiled.py \
        --compare "$VENV/bin/python" "$VENV/bin/python" --pure-path /path/to/repo

Run it from a directory outside the source tree, which would otherwise shadow the
installed package.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

if __package__ in (None, ""):  # run as a script: make ``benchmarks.workload`` importable
    # Appended, not prepended: an installed ``stream_parser`` (a compiled wheel) must win
    # over the source tree's; PYTHONPATH still puts a tree first when wanted.
    sys.path.append(str(Path(__file__).resolve().parent.parent))

from benchmarks.workload import SIZES, TOOLS, build_reply, cut_chunks, parse_size
from stream_parser import ParserConfig, ThinkingEvent, ToolCallEvent

CLOCK = time.process_time
BARE_TARGET = 5.0
"""The compiled parser's target: at most this many bare loops' time per chunk."""


def _timed(run: Callable[[], object]) -> float:
    gc.collect()
    gc.disable()
    try:
        start = CLOCK()
        run()
        return CLOCK() - start
    finally:
        gc.enable()


def parse_all(chunks: Sequence[str], *, deltas: bool = True) -> None:
    """Feed every chunk to a new parser and close it."""
    from stream_parser import StreamToolParser

    parser = StreamToolParser(TOOLS, config=ParserConfig(emit_deltas=deltas))
    feed = parser.feed
    for chunk in chunks:
        feed(chunk)
    parser.close()


def bare_loop(chunks: Sequence[str]) -> None:
    """Look for ``<`` in every chunk, and nothing else."""
    for chunk in chunks:
        chunk.find("<")


def as_xml(reply: str) -> str:
    """The reply as one well-formed XML document: one element per block, text escaped."""
    from stream_parser import StreamToolParser, TextOutputEvent

    parts = ["<reply>"]
    for event in StreamToolParser(TOOLS, config=ParserConfig(emit_deltas=False)).feed(reply):
        if isinstance(event, TextOutputEvent):
            parts.append(f"<text>{escape(event.text)}</text>")
        elif isinstance(event, ThinkingEvent):
            parts.append(f"<thinking>{escape(event.content)}</thinking>")
        elif isinstance(event, ToolCallEvent):
            args = event.tool_instance.model_dump()
            fields = "".join(f"<{k}>{escape(str(v))}</{k}>" for k, v in args.items())
            parts.append(f"<{event.tool_name}>{fields}</{event.tool_name}>")
    parts.append("</reply>")
    return "".join(parts)


def langchain_stream(chunks: Sequence[str]) -> None:
    """LangChain's ``XMLOutputParser`` streaming the chunks (its public ``transform``)."""
    # Imported by name: langchain-core is optional, and not a project dependency.
    parsers = importlib.import_module("langchain_core.output_parsers")
    for _ in parsers.XMLOutputParser(parser="xml").transform(iter(chunks)):
        pass


def measure(sizes: Sequence[str], repeat: int) -> dict[str, Any]:
    """Median µs per chunk of the parser and of the bare loop, runs taken in turn."""
    from stream_parser.core import COMPILED

    result: dict[str, Any] = {"compiled": COMPILED, "sizes": {}}
    for name in sizes:
        chunks = cut_chunks(build_reply(parse_size(name)))
        parser_t: list[float] = []
        blocks_t: list[float] = []
        bare_t: list[float] = []

        def parse(chunks: Sequence[str] = chunks) -> None:
            parse_all(chunks)

        def blocks(chunks: Sequence[str] = chunks) -> None:
            parse_all(chunks, deltas=False)

        def bare(chunks: Sequence[str] = chunks) -> None:
            # The bare loop is short: run it ten times, past the clock's resolution.
            for _ in range(10):
                bare_loop(chunks)

        for _ in range(repeat):
            parser_t.append(_timed(parse))
            blocks_t.append(_timed(blocks))
            bare_t.append(_timed(bare) / 10)
        n = len(chunks)
        result["sizes"][name] = {
            "chunks": n,
            "parser_us": statistics.median(parser_t) / n * 1e6,
            "blocks_us": statistics.median(blocks_t) / n * 1e6,
            "bare_us": statistics.median(bare_t) / n * 1e6,
        }
    return result


def measure_langchain(sizes: Sequence[str], repeat: int) -> dict[str, float] | None:
    """Median µs per chunk of ``XMLOutputParser``; None without langchain-core."""
    try:
        importlib.import_module("langchain_core")
    except ImportError:
        return None
    result: dict[str, float] = {}
    for name in sizes:
        chunks = cut_chunks(as_xml(build_reply(parse_size(name))))

        def run(chunks: Sequence[str] = chunks) -> None:
            langchain_stream(chunks)

        times = [_timed(run) for _ in range(repeat)]
        result[name] = statistics.median(times) / len(chunks) * 1e6
    return result


def _print(result: dict[str, Any], label: str = "") -> None:
    build = "compiled" if result["compiled"] else "pure Python"
    print(f"{label}{build}: µs per chunk (median, CPU time)")
    print(f"  {'size':<6} {'chunks':>8} {'parser':>8} {'blocks':>8} {'bare':>8} {'ratios':>11}")
    for name, row in result["sizes"].items():
        ratio = row["parser_us"] / row["bare_us"]
        ratio_blocks = row["blocks_us"] / row["bare_us"]
        print(
            f"  {name:<6} {row['chunks']:>8} {row['parser_us']:>8.3f} {row['blocks_us']:>8.3f} "
            f"{row['bare_us']:>8.3f} {ratio:>5.1f} {ratio_blocks:>5.1f}"
        )


def compare(
    pure: str,
    compiled: str,
    sizes: Sequence[str],
    rounds: int,
    repeat: int,
    pure_path: str | None = None,
) -> None:
    """Run this script in both interpreters, alternating, and print the medians.

    ``pure_path`` is the pure side's ``PYTHONPATH`` (a source tree); the compiled side
    runs without one, so that it imports its installed package.
    """
    base = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    envs = {"pure": {**base, "PYTHONPATH": pure_path} if pure_path else base, "compiled": base}
    runs: dict[str, list[dict[str, Any]]] = {"pure": [], "compiled": []}
    for _ in range(rounds):
        for key, python in (("pure", pure), ("compiled", compiled)):
            cmd = [python, str(Path(__file__).resolve()), "--json", "--sizes", ",".join(sizes)]
            out = subprocess.run(
                [*cmd, "--repeat", str(repeat)],
                check=True,
                capture_output=True,
                text=True,
                env=envs[key],
            )
            result = json.loads(out.stdout)
            expected = key == "compiled"
            if result["compiled"] is not expected:
                sys.exit(f"{python}: stream_parser.core.COMPILED is {result['compiled']}")
            runs[key].append(result)
    print(f"{rounds} rounds, alternating; medians of the rounds' medians (µs per chunk)")
    head = f"{'size':<6} {'pure':>8} {'compiled':>9} {'c/p':>6} {'bare':>7} {'c/bare':>7}"
    print(f"  parser (deltas on) | blocks only (emit_deltas=False)\n  {head} | {head[7:]}")
    for name in sizes:

        def med(key: str, field: str, name: str = name) -> float:
            return float(statistics.median(r["sizes"][name][field] for r in runs[key]))

        bare = med("compiled", "bare_us")
        cells = []
        for field in ("parser_us", "blocks_us"):
            p, c = med("pure", field), med("compiled", field)
            cells.append(f"{p:>8.3f} {c:>9.3f} {c / p:>6.2f} {bare:>7.3f} {c / bare:>7.1f}")
        print(f"  {name:<6} {cells[0]} | {cells[1]}")
    print(f"  target: compiled at most {BARE_TARGET:g} x the bare loop (c/bare)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--sizes", default="100KB,1MB", help=f"comma-separated, of {list(SIZES)}")
    ap.add_argument("--repeat", type=int, default=5, help="runs per figure (median)")
    ap.add_argument("--rounds", type=int, default=3, help="with --compare: rounds per side")
    ap.add_argument("--compare", nargs=2, metavar=("PURE_PY", "COMPILED_PY"))
    ap.add_argument("--pure-path", help="with --compare: PYTHONPATH of the pure side")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = ap.parse_args(argv)
    sizes = [s.strip() for s in args.sizes.split(",") if s.strip()]
    if args.compare:
        pure, compiled = args.compare
        compare(pure, compiled, sizes, args.rounds, args.repeat, args.pure_path)
        return 0
    result = measure(sizes, args.repeat)
    if args.json:
        print(json.dumps(result))
        return 0
    _print(result)
    lc = measure_langchain(sizes, args.repeat)
    if lc is None:
        print("LangChain XMLOutputParser: skipped (langchain-core is not installed)")
    else:
        for name, us in lc.items():
            print(f"LangChain XMLOutputParser, {name} as XML: {us:.3f} µs per chunk")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
