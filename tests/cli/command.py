"""Run the installed ``stream-parser`` command on this checkout, as a user would."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "agent_reply.txt"
TOOLS_FILE = ROOT / "examples" / "tools.py"

_SCRIPT = Path(sys.executable).parent / "stream-parser"
COMMAND: list[str] = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "stream_parser"]
MODULE_COMMAND: list[str] = [sys.executable, "-m", "stream_parser"]


def env(*extra_path: str | Path) -> dict[str, str]:
    """The environment of a child: this checkout first on the path, then ``extra_path``."""
    paths = [str(ROOT), *map(str, extra_path)]
    if os.environ.get("PYTHONPATH"):
        paths.append(os.environ["PYTHONPATH"])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}


def run(
    *args: str | Path,
    input: bytes = b"",
    cwd: Path | None = None,
    command: Sequence[str] = COMMAND,
) -> subprocess.CompletedProcess[bytes]:
    """Run the command to its end; stdout and stderr as bytes."""
    return subprocess.run(
        [*command, *map(str, args)],
        input=input,
        capture_output=True,
        cwd=cwd,
        env=env(),
        timeout=120,
        check=False,
    )


def events(result: subprocess.CompletedProcess[bytes]) -> list[dict[str, Any]]:
    """The JSON-lines events a run printed (it must have succeeded quietly)."""
    assert result.returncode == 0, result.stderr.decode()
    return [json.loads(line) for line in result.stdout.decode().splitlines()]


class LineReader:
    """Reads a child's output lines on a thread, so that a test can wait with a deadline."""

    def __init__(self, stream: IO[bytes]) -> None:
        self._lines: queue.Queue[bytes] = queue.Queue()
        self._thread = threading.Thread(target=self._pump, args=(stream,), daemon=True)
        self._thread.start()

    def _pump(self, stream: IO[bytes]) -> None:
        for line in iter(stream.readline, b""):
            self._lines.put(line)
        self._lines.put(b"")  # the end

    def next(self, timeout: float) -> bytes:
        """The next line; b"" at the end.  Raises ``queue.Empty`` after ``timeout``."""
        return self._lines.get(timeout=timeout)

    def until(self, predicate: Any, timeout: float) -> list[dict[str, Any]]:
        """Events up to the first that satisfies ``predicate``, within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        seen: list[dict[str, Any]] = []
        while True:
            line = self.next(max(0.0, deadline - time.monotonic()))
            assert line, f"the output ended before the awaited event: {seen}"
            seen.append(json.loads(line))
            if predicate(seen[-1]):
                return seen
