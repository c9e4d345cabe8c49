"""Fixtures of the proxy's tests: the loopback upstream, and ``stream-parser serve`` processes.

The proxy runs as the user runs it: the real command in a process of its own, a real
uvicorn on a free loopback port.  Starting one costs about a second, so each distinct
command line is started once per test session (:func:`proxy`) and stopped at its end;
the upstream is one app in a thread of the test process for the whole session, and
tests keep their replies apart by key (see :mod:`tests.serve.upstream`).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.serve.upstream import Upstream

ROOT = Path(__file__).resolve().parents[2]


class Proxy:
    """One ``stream-parser serve`` process."""

    def __init__(self, args: list[str], env: dict[str, str] | None = None) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.root = f"http://127.0.0.1:{self.port}"
        self.log_path = Path(tempfile.gettempdir()) / f"stream-parser-serve-{self.port}.log"
        self._log = self.log_path.open("wb")
        command = [
            sys.executable, "-m", "stream_parser", "serve",
            "--port", str(self.port), "--log-level", "warning", *args,
        ]  # fmt: skip
        environ = {k: v for k, v in os.environ.items() if not k.startswith("STREAM_PARSER_")}
        environ.update(env or {})
        self.process = subprocess.Popen(
            command, cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT, env=environ
        )

    def wait_ready(self, timeout: float = 30.0) -> Proxy:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"stream-parser serve exited:\n{self.log()}")
            try:
                if httpx.get(self.root + "/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise RuntimeError(f"stream-parser serve did not start:\n{self.log()}")

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._log.close()
        self.log_path.unlink(missing_ok=True)


@pytest.fixture(scope="session")
def upstream() -> Iterator[Upstream]:
    server = Upstream().start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def proxy(upstream: Upstream) -> Iterator[Callable[..., Proxy]]:
    """``proxy(*options)``: the proxy in front of the upstream, started once per options."""
    running: dict[tuple[str, ...], Proxy] = {}

    def get(*options: str, upstream_url: str | None = None) -> Proxy:
        args = ("--upstream", upstream_url or upstream.url, *options)
        if args not in running:
            running[args] = Proxy(list(args)).wait_ready()
        return running[args]

    yield get
    for server in running.values():
        server.stop()
