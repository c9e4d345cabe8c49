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
    # The answer streams once; the closing section says how the run ended.
    assert text.count("Done: summary.md lists the 3 open tasks") == 1
    assert "\n== the run ended: the model answered ==\nusage:" in text
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
    assert text.count("完成：summary.md 列出了 3 项待办事项") == 1
    assert "== 运行结束：模型已回答 ==" in text
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
    assert "运行结束" in capsys.readouterr().out
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
    assert "== the run ended: the model answered ==" in result.stdout


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


# --- limits of a run against a server: --max-tokens, --timeout, --instructions-role -----------


def demo_against(server: SSEServer, capsys: pytest.CaptureFixture[str], *options: str) -> Any:
    """Run the demo in process against the loopback server: (status, stdout, stderr)."""
    status = main(
        ["demo", "--no-delay", "--plain", "--base-url", server.url, "--max-retries", "0", *options]
    )
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def answer(text: str, finish_reason: str = "stop") -> Any:
    return sse(
        [chunk(content=text[i : i + 7]) for i in range(0, len(text), 7)]
        + [chunk(finish_reason=finish_reason)]
    )


def test_demo_sends_max_tokens_and_prints_the_answer_once(capsys: Any) -> None:
    with SSEServer() as server:
        server.script(answer("Nothing to do here: the folder is tidy."))
        status, out, err = demo_against(server, capsys, "--max-tokens", "77")
        body = server.requests[0].body
    assert status == 0, err
    assert body["max_tokens"] == 77
    assert out.count("Nothing to do here: the folder is tidy.") == 1
    assert "== the run ended: the model answered ==" in out


def test_demo_default_max_tokens_and_a_cut_answer_names_the_option(capsys: Any) -> None:
    with SSEServer() as server:
        server.script(answer("I will ramble on and on", finish_reason="length"))
        status, out, _ = demo_against(server, capsys)
        body = server.requests[0].body
    assert status == 0 and body["max_tokens"] == 1024
    assert out.count("I will ramble on and on") == 1
    assert "== the run ended: the answer was cut at --max-tokens 1024; raise it" in out


@pytest.mark.parametrize("how", ["silent", "keep-alive"])
def test_demo_timeout_ends_a_hung_server_with_one_line(capsys: Any, how: str) -> None:
    with SSEServer() as server:
        if how == "silent":
            server.script(sse([chunk(content="late")], delay=2))
        else:
            server.script(sse([chunk(content="Let me")], done=False, ping_every=0.2))
        status, _, err = demo_against(server, capsys, "--timeout", "1")
    assert status == 1
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"stream-parser: error: the model server at {server.url} did not")
    assert "--timeout 1 s" in err and "raise --timeout" in err


def test_demo_instructions_in_the_first_user_message(capsys: Any) -> None:
    with SSEServer() as server:
        server.script(answer("Done."))
        status, _, err = demo_against(server, capsys, "--instructions-role", "user")
        sent = server.requests[0].body["messages"]
    assert status == 0, err
    assert [m["role"] for m in sent] == ["user"]
    assert sent[0]["content"].startswith("You are a careful assistant")
    assert "Summarise" in sent[0]["content"]


@pytest.mark.parametrize("option", ["--max-tokens=0", "--timeout=0", "--timeout=x"])
def test_demo_limits_must_be_positive(capsys: Any, option: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["demo", option])
    assert exit_info.value.code == 2
    assert option.split("=")[0] in capsys.readouterr().err
