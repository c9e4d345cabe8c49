"""Fixtures of the web demo's tests: ``stream-parser demo --web`` as a real process.

The demo runs as a person runs it: the real command in a process of its own, a real
uvicorn on a free loopback port.  Starting one costs about a second, so each distinct
command line is started once per test session (:func:`web_demo`) and stopped at its end.
Its standard error (the address, warnings and the demo's log) is read as it comes, each
line with the time it arrived, so that a test can wait for a line and see when it came.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


class WebDemo:
    """One ``stream-parser demo --web`` process."""

    def __init__(self, args: list[str], *, host: str = "127.0.0.1") -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.ws_url = f"ws://127.0.0.1:{self.port}/ws"
        command = [
            sys.executable, "-m", "stream_parser", "demo", "--web",
            "--host", host, "--port", str(self.port), *args,
        ]  # fmt: skip
        environ = {k: v for k, v in os.environ.items() if not k.startswith("STREAM_PARSER_")}
        environ["PYTHONUNBUFFERED"] = "1"
        self.process = subprocess.Popen(
            command,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=environ,
            text=True,
            encoding="utf-8",
        )
        self.lines: list[tuple[float, str]] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            with self._lock:
                self.lines.append((time.monotonic(), line.rstrip("\n")))

    def log(self) -> str:
        with self._lock:
            return "\n".join(line for _, line in self.lines)

    def wait_line(self, text: str, timeout: float = 30.0, after: float = 0.0) -> tuple[float, str]:
        """The first line holding ``text`` that arrived after ``after``, and when it came."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                for when, line in self.lines:
                    if when >= after and text in line:
                        return when, line
            if self.process.poll() is not None:
                time.sleep(0.2)  # the last lines
                with self._lock:
                    found = [(w, ln) for w, ln in self.lines if w >= after and text in ln]
                if found:
                    return found[0]
                raise AssertionError(f"the demo exited before {text!r}:\n{self.log()}")
            time.sleep(0.01)
        raise AssertionError(f"no line {text!r} within {timeout} s:\n{self.log()}")

    def wait_ready(self) -> WebDemo:
        self.wait_line("open http://")
        return self

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._reader.join(5)
        if self.process.stderr is not None:
            self.process.stderr.close()


@pytest.fixture(scope="session")
def web_demo() -> Iterator[Callable[..., WebDemo]]:
    """``web_demo(*options)``: the web demo with those options, started once per options."""
    running: dict[tuple[str, ...], WebDemo] = {}

    def get(*options: str) -> WebDemo:
        if options not in running:
            running[options] = WebDemo(list(options)).wait_ready()
        return running[options]

    yield get
    for demo in running.values():
        demo.stop()


def loads(text: str | bytes) -> dict[str, Any]:
    data = json.loads(text)
    assert isinstance(data, dict)
    return data
