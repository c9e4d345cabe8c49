"""``stream-parser demo --web`` as a command: its options, its page, its safety checks."""

from __future__ import annotations

import importlib.util
import re
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

import stream_parser.demo.web
from stream_parser.cli import main
from stream_parser.demo.web import url_of
from stream_parser.demo.web.app import is_loopback
from tests.demo_web.conftest import ROOT, WebDemo

# The installed package's files: the compiled build's CI runs the tests without the
# checkout's stream_parser/ folder.
STATIC = Path(stream_parser.demo.web.__file__).parent / "static"


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        (["--host", "0.0.0.0"], "--host is read only with --web"),
        (["--port", "8001"], "--port is read only with --web"),
        (["--open"], "--open is read only with --web"),
        (["--web", "--json"], "--json and --plain are for the terminal demo"),
        (["--web", "--plain"], "--json and --plain are for the terminal demo"),
    ],
)
def test_options_that_do_not_go_together_are_one_line_and_status_2(
    capsys: pytest.CaptureFixture[str], argv: list[str], error: str
) -> None:
    assert main(["demo", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("stream-parser: error: ") and error in err
    assert err.count("\n") == 1


def test_without_the_serve_extra_the_command_names_it(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    find_spec = importlib.util.find_spec

    def missing(name: str, *args: Any) -> Any:
        return None if name == "websockets" else find_spec(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", missing)
    assert main(["demo", "--web"]) == 2
    err = capsys.readouterr().err
    assert "install the serve extra" in err and "'.[cli,serve]'" in err
    assert "(missing: websockets)" in err


def test_help_names_the_web_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    out = capsys.readouterr().out
    for option in ("--web", "--host", "--port", "--open"):
        assert option in out


def test_a_taken_port_is_one_line_and_status_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "stream_parser", "demo", "--web", "--port", str(port)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2
    assert f"stream-parser: error: could not listen on 127.0.0.1:{port}" in done.stderr


def test_another_host_than_loopback_prints_a_warning() -> None:
    demo = WebDemo(["--no-delay"], host="0.0.0.0").wait_ready()
    try:
        _, line = demo.wait_line("warning: listening on 0.0.0.0")
        assert "anyone who can reach this address can run the demo's tools" in line
        assert httpx.get(demo.url, timeout=10).status_code == 200
    finally:
        demo.stop()


def test_the_page_is_served_with_its_security_headers(web_demo: Callable[..., WebDemo]) -> None:
    demo = web_demo("--no-delay")
    page = httpx.get(demo.url, timeout=10)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    policy = page.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy
    assert page.headers["x-content-type-options"] == "nosniff"
    assert '<script src="/demo.js" defer></script>' in page.text
    for path, media_type in (("demo.js", "text/javascript"), ("demo.css", "text/css")):
        answer = httpx.get(demo.url + path, timeout=10)
        assert answer.status_code == 200 and answer.headers["content-type"].startswith(media_type)
        assert answer.content == (STATIC / path).read_bytes()
    assert httpx.get(demo.url + "secret.txt", timeout=10).status_code == 404


def test_a_foreign_host_name_is_refused_on_loopback(web_demo: Callable[..., WebDemo]) -> None:
    # DNS rebinding: a foreign name made to point at 127.0.0.1.
    demo = web_demo("--no-delay")
    refused = httpx.get(demo.url, headers={"Host": f"evil.example:{demo.port}"}, timeout=10)
    assert refused.status_code == 400
    own = httpx.get(demo.url, headers={"Host": f"localhost:{demo.port}"}, timeout=10)
    assert own.status_code == 200


def test_the_page_fetches_nothing_from_elsewhere() -> None:
    # No CDN, no font service: the page works offline.
    for path in STATIC.iterdir():
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, re.I), path.name
        assert "@import" not in text and "innerHTML" not in text, path.name


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("localhost", True), ("::1", True), ("127.0.0.2", True),
     ("0.0.0.0", False), ("192.168.1.5", False), ("example.com", False)],
)  # fmt: skip
def test_loopback_hosts(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_the_address_a_browser_opens() -> None:
    assert url_of("127.0.0.1", 8000) == "http://127.0.0.1:8000/"
    assert url_of("0.0.0.0", 8000) == "http://127.0.0.1:8000/"
    assert url_of("::1", 9000) == "http://[::1]:9000/"
