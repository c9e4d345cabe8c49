"""Start-up: what importing the package and running the command cost.

Run from the repository root::

    python benchmarks/bench_import.py                # all tables, about half a minute
    python benchmarks/bench_import.py --repeat 21    # more runs per figure

Table 1 runs ``python -X importtime -c STATEMENT`` in fresh processes and reports, for
each statement, the median over the runs of the cumulative import time of the
package's own modules, grouped by floor (``core``, ``schema``, ``agent``...), and of
the third-party packages they pull in (pydantic, lxml, jinja2, openai, asyncio...).
The statements are ``import stream_parser`` (what every program and the command pay),
the first use of the parser (``stream_parser.StreamToolParser``), a dialect's first
use (``ParserConfig(dialect="hermes")`` and its plugins), and the agents
(``stream_parser.ReActAgent``).  ``-X importtime`` measures imports only, with its own
overhead: compare its figures with each other, not with wall-clock times.

Table 2 times whole processes, wall clock, as a user meets them: ``python -c pass``
(the interpreter alone, the floor under every figure), ``import stream_parser``,
``stream-parser --version``, ``stream-parser --help`` and ``stream-parser parse`` of a
short reply.  Each figure is the median of ``--repeat`` runs, after one warm-up run
that writes the ``.pyc`` files.  The machine is shared: compare figures from one run.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

STATEMENTS: dict[str, str] = {
    "import stream_parser": "import stream_parser",
    "first parser": "import stream_parser; stream_parser.StreamToolParser({})",
    "first dialect": (
        "import stream_parser; "
        "stream_parser.StreamToolParser({}, config=stream_parser.ParserConfig(dialect='hermes'))"
    ),
    "first agent": "import stream_parser; stream_parser.ReActAgent",
}

# Third-party packages worth naming; the rest is summed as "other".
THIRD_PARTY = ("pydantic", "pydantic_core", "lxml", "jinja2", "openai", "asyncio", "logging")

_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)", re.M)


def import_times(statement: str) -> dict[str, float]:
    """Milliseconds of import time by group, for one fresh process running ``statement``.

    A module's *self* time goes to its group: the floor of a ``stream_parser`` module
    (``stream_parser.core.parser`` -> ``core``), the top-level package of a named
    third-party module, else ``other``.  So the groups add up to the total.
    """
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", statement],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=True,
    )
    groups: dict[str, float] = defaultdict(float)
    for self_us, _cumulative, _indent, name in _LINE.findall(done.stderr):
        top = name.split(".")[0]
        if top == "stream_parser":
            parts = name.split(".")
            group = f"stream_parser.{parts[1]}" if len(parts) > 1 else "stream_parser"
        elif top in THIRD_PARTY:
            group = top
        else:
            group = "other"
        groups[group] += int(self_us) / 1000
    groups["total"] = sum(groups.values())
    return dict(groups)


def wall_time(command: list[str], repeat: int) -> float:
    """The median wall-clock seconds of a fresh process running ``command``."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="")
    subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=True)  # warm-up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(command, cwd=ROOT, env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def table_imports(repeat: int) -> None:
    """Table 1: import time by group, the median of ``repeat`` processes per statement."""
    runs = {
        label: [import_times(code) for _ in range(repeat)] for label, code in STATEMENTS.items()
    }
    groups = sorted({g for results in runs.values() for r in results for g in r} - {"total"})
    labels = list(STATEMENTS)
    print(f"Import time, ms (median of {repeat} processes, python -X importtime)")
    print(f"{'group':<26}" + "".join(f"{label:>18}" for label in labels))
    for group in [*groups, "total"]:
        cells = [statistics.median(r.get(group, 0.0) for r in runs[label]) for label in labels]
        if group != "total" and max(cells) < 0.5:
            continue
        print(f"{group:<26}" + "".join(f"{cell:>18.1f}" for cell in cells))
    print()


def table_processes(repeat: int) -> None:
    """Table 2: whole processes, wall clock."""
    reply = ROOT / "examples" / "agent_reply.txt"
    python = sys.executable
    commands = {
        "python -c pass": [python, "-c", "pass"],
        "import stream_parser": [python, "-c", "import stream_parser"],
        "stream-parser --version": [python, "-m", "stream_parser", "--version"],
        "stream-parser --help": [python, "-m", "stream_parser", "--help"],
        "stream-parser parse (short reply)": [python, "-m", "stream_parser", "parse", str(reply)],
    }
    print(f"Whole processes, ms wall clock (median of {repeat} runs)")
    floor = None
    for label, command in commands.items():
        seconds = wall_time(command, repeat)
        floor = seconds if floor is None else floor
        print(f"{label:<36}{seconds * 1000:>10.1f}{(seconds - floor) * 1000:>+10.1f} over python")
    print()


def main(argv: list[str] | None = None) -> None:
    """Print both tables."""
    options = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    options.add_argument("--repeat", type=int, default=11, help="runs per figure (median)")
    args = options.parse_args(argv)
    print(f"Python {sys.version.split()[0]} on {sys.platform}, {os.cpu_count()} cores\n")
    table_imports(args.repeat)
    table_processes(args.repeat)


if __name__ == "__main__":
    main()
