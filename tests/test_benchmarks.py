"""Every benchmark script runs once, at its smallest size, so that none breaks unseen.

The scripts under ``benchmarks/`` are run by hand (``python -m benchmarks.bench_x``) and
read the library's internals (caches, private builders); a change to those breaks a
script without failing any test.  Each runs here in a child process with the smallest
arguments it takes, so the whole file takes a few seconds.  A new ``bench_*.py`` must be
added to :data:`SMALLEST`, which the first test checks.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# Each script's arguments for its smallest run: one repetition, the smallest sizes.
SMALLEST: dict[str, list[str]] = {
    "bench_agent": ["--steps", "3", "--repeat", "1", "--tool-counts", "2", "--clock", "cpu"],
    "bench_chunks": ["--sizes", "2000", "--repeat", "1", "--guard", "200"],
    "bench_compiled": ["--sizes", "10KB", "--repeat", "1"],
    "bench_dialects": ["--sizes", "2000,4000", "--repeat", "1"],
    "bench_event_cost": ["--interpreted", "--events", "1000", "--rounds", "1"],
    "bench_import": ["--repeat", "1"],
    "bench_json_scan": ["--sizes", "2000"],
    "bench_json_schema": ["--tools", "3", "--repeat", "1"],
    "bench_serve": [
        *("--chunks", "20", "--runs", "1", "--streams", "2", "--requests", "2"),
        *("--concurrency", "2", "--pace", "0"),
    ],
    "bench_stream_answer": ["--sizes", "10KB", "--repeat", "1"],
    "bench_tool_schemas": ["--tools", "3", "--repeat", "1"],
}


def test_every_benchmark_has_its_smallest_arguments() -> None:
    scripts = {path.stem for path in (ROOT / "benchmarks").glob("bench_*.py")}
    assert scripts == set(SMALLEST)


@pytest.mark.parametrize("script", sorted(SMALLEST))
def test_the_benchmark_runs(script: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", f"benchmarks.{script}", *SMALLEST[script]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip(), "the script printed nothing"
