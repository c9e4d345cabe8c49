"""pytest-benchmark: JsonScanner over a JSON array of records, fed in small chunks.

Run from the repository root (the file is named ``bench_*`` so the test run skips it)::

    python -m pytest benchmarks/bench_json_scan.py --benchmark-enable
    python benchmarks/bench_json_scan.py          # µs per chunk: feed, and skip first

Without ``--benchmark-enable`` each case runs once, as a smoke test that still checks
the result.  The document is an array of records whose strings hold quotes,
backslashes and brackets (what makes a scanner work), cut into chunks of 1 to 8
characters like a token stream; ``json.loads`` of the whole text is the yardstick.
Keeping the text costs one join per element; the scan itself is the same.

A tool call's arguments are mostly one long string (a file's content): the "file"
document is that, and :func:`scan_skipping` reads it as a plugin's fast path does,
offering each chunk to :meth:`~stream_parser.core.kit.JsonScanner.skip` first.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repository root importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pytest

from stream_parser.core.kit import JsonScanner

SIZES = {"10KB": 10_000, "100KB": 100_000}


def build_document(size: int) -> str:
    """A JSON array of records, about ``size`` characters long."""
    records: list[dict[str, Any]] = []
    total = 0
    i = 0
    while total < size:
        record = {
            "id": i,
            "name": f'row "{i}" \\ [draft]',
            "tags": ["a", "b}", {"score": i / 7, "ok": i % 2 == 0}],
            "note": None,
        }
        records.append(record)
        total += len(json.dumps(record)) + 2
        i += 1
    return json.dumps(records)


def build_file_arguments(size: int) -> str:
    """Arguments of a file write, about ``size`` characters: mostly one escaped string."""
    line = 'if a < b and c["k"] != "\\\\": out.append(f"<td>{a}</td>")  # R&D\n'
    content = (line * (size // len(line) + 1))[:size]
    return json.dumps({"path": "src/render.py", "content": content})


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


def scan(chunks: list[str], keep_text: bool) -> int:
    """Feed every chunk; return how many elements were reported."""
    scanner = JsonScanner(keep_text=keep_text)
    elements = 0
    for chunk in chunks:
        for mark in scanner.feed(chunk):
            elements += mark.kind == "element"
    return elements


def scan_skipping(chunks: list[str]) -> int:
    """:func:`scan` without text, each chunk offered to ``skip`` first; elements (members)."""
    scanner = JsonScanner(keep_text=False)
    parts = 0
    for chunk in chunks:
        if not scanner.skip(chunk):
            for mark in scanner.feed(chunk):
                parts += mark.kind in ("element", "member")
    return parts


@pytest.mark.parametrize("size", list(SIZES), ids=list(SIZES))
@pytest.mark.parametrize("skipping", [False, True], ids=["feed", "skip"])
def test_scan_file_arguments(benchmark: Any, skipping: bool, size: str) -> None:
    chunks = cut_chunks(build_file_arguments(SIZES[size]))
    benchmark.group = f"json_scan-file-{size}"
    benchmark.extra_info["chunks"] = len(chunks)
    if skipping:
        parts = benchmark.pedantic(scan_skipping, args=(chunks,), rounds=5, iterations=1)
    else:
        parts = benchmark.pedantic(_members, args=(chunks,), rounds=5, iterations=1)
    assert parts == 2


def _members(chunks: list[str]) -> int:
    scanner = JsonScanner(keep_text=False)
    return sum(m.kind == "member" for chunk in chunks for m in scanner.feed(chunk))


@pytest.mark.parametrize("size", list(SIZES), ids=list(SIZES))
@pytest.mark.parametrize("keep_text", [True, False], ids=["text", "no-text"])
def test_scan(benchmark: Any, keep_text: bool, size: str) -> None:
    text = build_document(SIZES[size])
    chunks = cut_chunks(text)
    benchmark.group = f"json_scan-{size}"
    benchmark.extra_info["chunks"] = len(chunks)
    elements = benchmark.pedantic(scan, args=(chunks, keep_text), rounds=5, iterations=1)
    assert elements == len(json.loads(text))


@pytest.mark.parametrize("size", list(SIZES), ids=list(SIZES))
def test_json_loads(benchmark: Any, size: str) -> None:
    text = build_document(SIZES[size])
    benchmark.group = f"json_scan-{size}"
    value = benchmark.pedantic(json.loads, args=(text,), rounds=5, iterations=1)
    assert isinstance(value, list)


def main(argv: list[str] | None = None) -> int:
    """Print µs per chunk of the "file" arguments: fed, and offered to ``skip`` first."""
    import argparse
    import gc
    import time

    from benchmarks.workload import parse_size

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="100KB,1MB", help="comma-separated argument sizes")
    args = parser.parse_args(argv)
    sizes = [(label.strip(), parse_size(label)) for label in args.sizes.split(",") if label.strip()]

    print(f"{'size':>8} | {'feed':>10} | {'skip first':>10}")
    for label, size in sizes:
        chunks = cut_chunks(build_file_arguments(size))
        figures = []
        for run in (_members, scan_skipping):
            times = []
            for _ in range(3):
                gc.collect()
                gc.disable()
                start = time.process_time()
                if run(chunks) != 2:
                    raise SystemExit("the members were not found")
                times.append(time.process_time() - start)
                gc.enable()
            times.sort()
            figures.append(times[1] / len(chunks) * 1e6)
        print(f"{label:>8} | {figures[0]:>7.3f} µs | {figures[1]:>7.3f} µs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
