"""``stream-parser demo``: the scripted agent run, shown plain, as JSON lines, in Chinese."""

from __future__ import annotations

import io
import json
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from stream_parser.cli import main
from stream_parser.demo import PROTOCOLS, DemoOptions, run_demo
from stream_parser.demo._render import Renderer
from stream_parser.demo._tools import SANDBOX_FILES, _inside, make_tools, sandbox_copy
from stream_parser.errors import ConfigError

from .cli.command import run
from .llm.sse_server import SSEServer, chunk, error, sse


def demo_text(**options: Any) -> str:
    out = io.StringIO()
    assert run_demo(DemoOptions(delay=0, plain=True, **options), out) == 0
    return out.getvalue()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_plain_run_with_each_protocol(protocol: str) -> None:
    text = demo_text(protocol=protocol)
    assert f"protocol: {protocol}" in text
    for step in range(1, 5):
        assert f"--- step {step} ---" in text
    # Thinking, text, the calls and their results, the approval, the answer, the usage.
    assert "First see which files there are." in text
    assert "-> call list_files" in text and "-> call write_file" in text
    assert "     config.toml\n     notes.md\n     todo.txt\n" in text
    assert "- fix the flaky login test" in text
    assert "? approval: write_file(path='summary.md') -> approved automatically" in text
    assert "wrote 103 characters to summary.md" in text
    assert "== final answer ==\nDone: summary.md lists the 3 open tasks" in text
    assert "usage: input 2220 · output" in text and "4 steps · done" in text


def test_xml_call_fills_in_parameter_by_parameter() -> None:
    text = demo_text(protocol="xml")
    assert "-> call read_file\n     path = todo.txt\n   ok: read_file(path='todo.txt')" in text


def test_json_lines() -> None:
    out = io.StringIO()
    run_demo(DemoOptions(delay=0, json_lines=True, protocol="hermes"), out)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "step_start" and kinds[-1] == "agent_done"
    for kind in ("thinking_delta", "text", "tool_call_start", "tool_call", "tool_result"):
        assert kind in kinds
    assert kinds.count("step_start") == 4
    results = [e for e in events if e["kind"] == "tool_result"]
    assert results[-1]["tool_name"] == "write_file"
    assert events[-1]["reason"] == "done"


def test_chinese() -> None:
    text = demo_text(language="zh", protocol="qwen3_coder")
    assert "== stream-parser 演示 ==" in text
    assert "--- 第 1 步 ---" in text
    assert "任务: 把这个项目的待办清单和笔记总结到 summary.md 中。" in text
    assert "用户想要项目摘要。" in text
    assert "审批: write_file(path='summary.md') -> 已自动批准（演示）" in text
    assert "== 最终回答 ==\n完成：summary.md 列出了 3 项待办事项" in text
    # The qwen3_coder value starts on the line after its tag: shown without that newline.
    assert "     path = summary.md\n" in text


def test_delay_streams_the_same_run() -> None:
    out = io.StringIO()
    run_demo(DemoOptions(delay=0.0005, plain=True), out)

    def without_sandbox_path(text: str) -> str:
        return re.sub(r"sandbox: .*", "", text)

    assert without_sandbox_path(out.getvalue()) == without_sandbox_path(demo_text())


def test_styled_output_goes_through_the_console() -> None:
    class Console:
        def __init__(self) -> None:
            self.calls: list[tuple[str, str | None]] = []

        def print(self, text: str, *, style: str | None, end: str, **_: Any) -> None:
            assert end == ""
            self.calls.append((text, style))

    console = Console()
    renderer = Renderer(io.StringIO(), "en", console)
    from stream_parser.core.events import ThinkingDeltaEvent

    renderer.event(ThinkingDeltaEvent(delta="hmm"))
    assert console.calls == [("hmm", "dim italic")]


def test_bad_options() -> None:
    with pytest.raises(ConfigError, match="protocol"):
        run_demo(DemoOptions(protocol="yaml"), io.StringIO())
    with pytest.raises(ConfigError, match="language"):
        run_demo(DemoOptions(language="fr"), io.StringIO())


def test_tools_stay_in_the_sandbox_copy() -> None:
    with sandbox_copy() as root:
        assert sorted(p.name for p in root.iterdir()) == sorted(SANDBOX_FILES)
        _, read_file, write_file = make_tools(root)
        assert write_file.requires_approval and not read_file.requires_approval
        with pytest.raises(ValueError, match="outside the sandbox"):
            _inside(root, "../escape.txt")
    assert not root.exists()


def test_cli_demo(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--no-delay", "--plain", "--language", "zh"]) == 0
    assert "最终回答" in capsys.readouterr().out
    assert main(["demo", "--no-delay", "--json", "--protocol", "native"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert json.loads(lines[-1])["kind"] == "agent_done"


def test_command_runs_as_a_program() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "stream_parser", "demo", "--no-delay", "--plain"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert "== final answer ==" in result.stdout


# --- a model server that fails: one line on stderr, exit status 1 ------------------------------


def closed_port_url() -> str:
    """The base URL of a loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def failed_demo(base_url: str) -> str:
    """Run the demo against ``base_url``; it must fail with one line: that line."""
    # No retries: the SDK's backoff would make a closed port take seconds.
    result = run("demo", "--no-delay", "--plain", "--base-url", base_url, "--max-retries", "0")
    err = result.stderr.decode()
    assert result.returncode == 1, err
    assert "Traceback" not in err
    assert len(err.splitlines()) == 1, err
    assert err.startswith("stream-parser: error: ") and err.endswith("\n")
    return err


def test_demo_server_down_is_one_line() -> None:
    url = closed_port_url()
    line = failed_demo(url)
    assert f"the model server at {url} could not be reached (connection refused)" in line
    assert "check --base-url" in line


def test_demo_http_error_is_one_line() -> None:
    with SSEServer() as server:
        server.script(error(500, "the GPU caught fire\nsee the log"))
        line = failed_demo(server.url)
        assert len(server.requests) == 1
    assert f"the model server at {server.url} answered HTTP 500" in line
    assert "the GPU caught fire see the log" in line


def test_demo_reply_cut_mid_stream_is_one_line() -> None:
    with SSEServer() as server:
        server.script(sse([chunk(content="Let me look"), chunk(content=" at the")], drop=True))
        line = failed_demo(server.url)
    assert f"the model server at {server.url}" in line
    assert "failed: the stream failed mid-reply" in line
    assert "try again" in line


def test_max_retries_must_not_be_negative(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--max-retries", "-1"])
    assert exit_info.value.code == 2
    assert "--max-retries: must be >= 0, not '-1'" in capsys.readouterr().err
