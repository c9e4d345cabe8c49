"""What one text event costs when compiled code builds it, per kind of event class.

Run from a directory outside the source tree, in an environment with ``mypy`` (which
ships mypyc) and a C compiler::

    cd /tmp && python /path/to/repo/benchmarks/bench_event_cost.py

The compiled parser emits about one delta event per chunk, and builds it through the
interpreted builder of ``stream_parser.core.events`` (the events are frozen dataclasses,
which Pydantic, pickling and the class switch of the fast builder need interpreted).
This script compiles, with mypyc, in a temporary directory:

- a loop that calls a builder for a million 4-character chunks, as the compiled readers
  do (``out.append(builder(chunk, (start, end)))``, the list emptied as the parser's
  caller would), and
- the same loop building a *native* class with the same three fields (``text``,
  ``span``, ``kind``), which mypyc allocates and fills in C.

It prints µs per event (build and free, CPU time, best of five runs) for the library's
builder (``_fast_text``), the plain constructor of ``TextOutputEvent``, and the native
class: what building the events in compiled code would save per chunk, and so how far it
would take the compiled parser below the bare loop's multiple (``bench_compiled.py``).
"""

from __future__ import annotations

import gc
import importlib
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

if __package__ in (None, ""):
    sys.path.append(str(Path(__file__).resolve().parent.parent))

N = 1_000_000
ROUNDS = 5

_NATIVE = """
from __future__ import annotations


class NativeText:
    __slots__ = ("kind", "span", "text")

    def __init__(self, text: str, span: tuple[int, int]) -> None:
        self.text = text
        self.span = span
        self.kind = "text"


def run_native(chunks: list[str]) -> int:
    out: list[object] = []
    start = 0
    for chunk in chunks:
        end = start + len(chunk)
        out.append(NativeText(chunk, (start, end)))
        out.clear()
        start = end
    return start
"""

_CALLER = """
from __future__ import annotations

from collections.abc import Callable


def run_builder(chunks: list[str], build: Callable[[str, tuple[int, int]], object]) -> int:
    out: list[object] = []
    start = 0
    for chunk in chunks:
        end = start + len(chunk)
        out.append(build(chunk, (start, end)))
        out.clear()
        start = end
    return start
"""

_SETUP = """
from mypyc.build import mypycify
from setuptools import setup

setup(name="event_cost", ext_modules=mypycify(["event_native.py", "event_caller.py"]))
"""


def _compile(folder: Path, compile_: bool = True) -> None:
    (folder / "event_native.py").write_text(textwrap.dedent(_NATIVE))
    (folder / "event_caller.py").write_text(textwrap.dedent(_CALLER))
    if not compile_:
        return
    (folder / "setup.py").write_text(_SETUP)
    subprocess.run(
        [sys.executable, "setup.py", "build_ext", "--inplace", "-q"],
        cwd=folder,
        check=True,
        capture_output=True,
    )


def _best(run: Callable[[], object], events: int = N, rounds: int = ROUNDS) -> float:
    """Best µs per event over ``rounds`` runs, the garbage collector off."""
    best = float("inf")
    for _ in range(rounds):
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()
            run()
            best = min(best, time.process_time() - start)
        finally:
            gc.enable()
    return best / events * 1e6


def main(argv: list[str] | None = None) -> None:
    """Print the table (``--interpreted``: the same loops, not compiled, as a quick check)."""
    import argparse

    from stream_parser.core import COMPILED
    from stream_parser.core.events import TextOutputEvent, _fast_text

    options = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    options.add_argument("--events", type=int, default=N, help="events per run")
    options.add_argument("--rounds", type=int, default=ROUNDS, help="runs per figure (best)")
    options.add_argument(
        "--interpreted",
        action="store_true",
        help="import the loops without compiling them (no mypyc: the figures mean little)",
    )
    args = options.parse_args(argv)
    chunks = ["abcd"] * args.events
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        try:
            _compile(folder, compile_=not args.interpreted)
        except (subprocess.CalledProcessError, OSError) as exc:
            sys.exit(f"could not compile with mypyc (is mypy installed?): {exc}")
        sys.path.insert(0, tmp)
        native = importlib.import_module("event_native")
        caller = importlib.import_module("event_caller")

        def constructor(text: str, span: tuple[int, int]) -> object:
            return TextOutputEvent(text=text, span=span)

        rows = [
            ("library builder (_fast_text)", lambda: caller.run_builder(chunks, _fast_text)),
            ("TextOutputEvent(...)", lambda: caller.run_builder(chunks, constructor)),
            ("native class, built in C", lambda: native.run_native(chunks)),
        ]
        print(f"stream_parser build: {'compiled' if COMPILED else 'pure Python'}")
        loops = "interpreted (not compiled)" if args.interpreted else "compiled"
        print(f"µs per event, built from {loops} code and freed (best of {args.rounds}, CPU time):")
        for name, run in rows:
            print(f"  {name:<32} {_best(run, args.events, args.rounds):.3f}")


if __name__ == "__main__":
    main()
