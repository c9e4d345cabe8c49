"""The installed ``stream-parser parse`` command, driven as a subprocess."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from stream_parser.encoders import decode_sse, event_to_json

from .command import (
    COMMAND,
    EXAMPLE,
    MODULE_COMMAND,
    TOOLS_FILE,
    LineReader,
    env,
    events,
    run,
)

# --- it streams -------------------------------------------------------------------------


def test_stdin_is_parsed_as_it_arrives() -> None:
    """The first events come out while the writer still holds the rest of the reply."""
    child = subprocess.Popen(
        [*COMMAND, "parse", "-", "--tools", str(TOOLS_FILE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(),
    )
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    try:
        lines = LineReader(child.stdout)
        child.stdin.write(b"Let me look.\n<think>the file first")
        child.stdin.flush()
        # Half the reply is in; the rest is not sent until these events have arrived.
        first = lines.until(lambda e: e["kind"] == "thinking_delta", timeout=60)
        assert first[0] == {"text": "Let me look.\n", "span": [0, 13], "kind": "text"}
        assert first[-1]["delta"] == "the file first"
        assert child.poll() is None
        child.stdin.write(b"</think><read_file><path>a.py</path></read_file>")
        child.stdin.flush()
        call = lines.until(lambda e: e["kind"] == "tool_call", timeout=60)
        assert call[-1]["tool_instance"] == {"path": "a.py"}
        child.stdin.close()
        assert lines.next(timeout=60) == b""
        assert child.wait(timeout=60) == 0
        assert child.stderr.read() == b""
    finally:
        child.kill()
        child.wait()
        child.stdout.close()
        child.stderr.close()


# --- bad bytes ---------------------------------------------------------------------------


def test_invalid_utf8_on_stdin_is_replaced() -> None:
    result = run("parse", "-", input=b"caf\xc3\xa9 \xff\xfe ok<think>\xc3</think>")
    assert result.stderr == b""
    found = events(result)
    assert [
        (e["kind"], e.get("text", e.get("content"))) for e in found if e["kind"] != "thinking_delta"
    ] == [
        ("text", "café \ufffd\ufffd ok"),
        ("thinking", "\ufffd"),
    ]


def test_stdin_and_a_file_decode_alike(tmp_path: Path) -> None:
    data = b"a\xff<think>b\xe2\x82</think>\r\nc\xf0\x9f"
    source = tmp_path / "reply.bin"
    source.write_bytes(data)
    from_file = run("parse", source, "--blocks-only")
    from_stdin = run("parse", "-", "--blocks-only", input=data)
    assert events(from_file) == events(from_stdin)
    # Lossless: the blocks give back the decoded bytes, line ends as they were.
    text = data.decode("utf-8", errors="replace")
    assert "".join(text[a:b] for a, b in (e["span"] for e in events(from_file))) == text


def test_a_binary_file_is_parsed_with_one_warning(tmp_path: Path) -> None:
    data = bytes(range(256)) * 64 + b"<think>x</think>"
    source = tmp_path / "image.bin"
    source.write_bytes(data)
    result = run("parse", source, "--blocks-only")
    found = events(result)
    warning = result.stderr.decode().splitlines()
    assert len(warning) == 1 and warning[0].startswith("stream-parser: warning: ")
    assert str(source) in warning[0] and "binary" in warning[0]
    text = data.decode("utf-8", errors="replace")
    assert "".join(text[a:b] for a, b in (e["span"] for e in found)) == text
    assert found[-1]["kind"] == "thinking"
    # Text without NUL bytes gives no warning, however invalid.
    assert run("parse", "-", input=b"\xff\xfe" * 100).stderr == b""


def test_a_reader_that_stops_early_ends_the_command_quietly(tmp_path: Path) -> None:
    """``stream-parser parse big.txt | head -1``: a real pipe closed after one line."""
    source = tmp_path / "big.txt"
    source.write_text("word <think>deep</think> " * 40_000, encoding="utf-8")
    child = subprocess.Popen(
        [*COMMAND, "parse", str(source), "--chunk-size", "1-8"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env(),
    )
    assert child.stdout is not None and child.stderr is not None
    assert child.stdout.readline().startswith(b"{")
    child.stdout.close()
    assert child.wait(timeout=120) == 0
    assert child.stderr.read() == b""
    child.stderr.close()


# --- options -----------------------------------------------------------------------------

HERMES_REPLY = (
    'Reading.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>'
)


def test_dialect_hermes(tmp_path: Path) -> None:
    reply = tmp_path / "reply.txt"
    reply.write_text(HERMES_REPLY, encoding="utf-8")
    calls = [
        e
        for e in events(run("parse", reply, "--tools", TOOLS_FILE, "--dialect", "hermes"))
        if e["kind"] == "tool_call"
    ]
    assert [(c["tool_name"], c["tool_instance"]) for c in calls] == [
        ("read_file", {"path": "a.py"})
    ]
    # Read as the default (xml) dialect, the same reply holds no call.
    assert not [
        e for e in events(run("parse", reply, "--tools", TOOLS_FILE)) if e["kind"] == "tool_call"
    ]


def test_dialect_auto_with_a_model_name() -> None:
    reply = f"<think>plan</think>{HERMES_REPLY}".encode()
    result = run(
        "parse", "-", "--tools", TOOLS_FILE, "--dialect", "auto", "--model", "Qwen/Qwen3-8B",
        "--blocks-only", input=reply,
    )  # fmt: skip
    found = events(result)
    assert [e["kind"] for e in found if e["kind"] != "text"] == ["thinking", "tool_call"]
    assert found[0]["content"] == "plan"


def test_format_sse_carries_the_same_events() -> None:
    reply = EXAMPLE.read_bytes()
    jsonl = events(run("parse", "-", "--tools", TOOLS_FILE, input=reply))
    sse = run("parse", "-", "--tools", TOOLS_FILE, "--format", "sse", input=reply)
    assert sse.returncode == 0 and sse.stderr == b""
    frames = sse.stdout.decode()
    assert frames.startswith("event: ") and frames.endswith("\n\n")
    import json

    assert [json.loads(event_to_json(e)) for e in decode_sse([frames])] == jsonl


def test_format_pretty_to_a_pipe_is_plain_text_with_a_note() -> None:
    result = run(
        "parse", "-", "--tools", TOOLS_FILE, "--format", "pretty",
        input=b"Hi.<think>hmm</think><read_file><path>a.py</path></read_file>",
    )  # fmt: skip
    assert result.returncode == 0
    note = result.stderr.decode().splitlines()
    assert len(note) == 1 and note[0].startswith("stream-parser: note: ")
    assert "not a terminal" in note[0]
    out = result.stdout.decode()
    assert out == "Hi.\nhmm\n-> call read_file\n     path = a.py\n   ok: read_file(path='a.py')\n"
    assert "\x1b[" not in out


def test_format_pretty_blocks_only_shows_whole_blocks() -> None:
    result = run(
        "parse", "-", "--tools", TOOLS_FILE, "--format", "pretty", "--blocks-only",
        "--fenced-code",
        input=b"Hi.<think>hmm</think>\n```py\nx = 1\n```\n<read_file><path>a</path></read_file>",
    )  # fmt: skip
    assert result.returncode == 0
    assert result.stdout.decode() == (
        "Hi.\nhmm\n\n```py\nx = 1\n```\n\n-> call read_file\n   ok: read_file(path='a')\n"
    )


def on_terminal(args: list[str], data: bytes, path: list[Path]) -> tuple[int, str, str]:
    """Run the command with its standard output on a pseudo-terminal."""
    leader, follower = os.openpty()
    child = subprocess.Popen(
        [*COMMAND, *args],
        stdin=subprocess.PIPE,
        stdout=follower,
        stderr=subprocess.PIPE,
        env={**env(*path), "TERM": "xterm-256color", "COLUMNS": "80"},
    )
    os.close(follower)
    assert child.stdin is not None and child.stderr is not None
    child.stdin.write(data)
    child.stdin.close()
    out = b""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 1.0)
        if not ready:
            if child.poll() is not None:
                break
            continue
        try:
            piece = os.read(leader, 65536)
        except OSError:  # the terminal's other side closed: the child is done
            break
        if not piece:
            break
        out += piece
    os.close(leader)
    code = child.wait(timeout=60)
    err = child.stderr.read().decode()
    child.stderr.close()
    return code, out.decode(errors="replace"), err


PRETTY_ARGS = ["parse", "-", "--tools", str(TOOLS_FILE), "--format", "pretty"]
PRETTY_INPUT = b"Hi.<think>hmm</think><read_file><path>a.py</path></read_file>"


def test_format_pretty_on_a_terminal_without_rich(tmp_path: Path) -> None:
    # A rich that cannot be imported, first on the path, whether rich is installed or not.
    fake = tmp_path / "no_rich" / "rich"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text("raise ImportError('not installed')\n", encoding="utf-8")
    code, out, err = on_terminal(PRETTY_ARGS, PRETTY_INPUT, [fake.parent])
    assert code == 0
    assert err.startswith("stream-parser: note: ") and "rich is not installed" in err
    assert "-> call read_file" in out and "\x1b[" not in out


def test_format_pretty_on_a_terminal_with_rich() -> None:
    if importlib.util.find_spec("rich") is None:
        pytest.skip("rich is not installed (the [test] extra installs it)")
    code, out, err = on_terminal(PRETTY_ARGS, PRETTY_INPUT, [])
    assert (code, err) == (0, "")
    assert "\x1b[" in out  # styled
    plain = out.replace("\r\n", "\n")
    for piece in ("Hi.", "hmm", "-> call read_file", "path = ", "a.py", "ok: read_file"):
        assert piece in plain


def test_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    try:
        expected = importlib.metadata.version("stream-parser")
    except importlib.metadata.PackageNotFoundError:
        import stream_parser

        expected = stream_parser.__version__
    assert result.stdout.decode() == f"stream-parser {expected}\n"


def test_no_arguments_shows_usage_and_the_common_commands() -> None:
    result = run()
    assert result.returncode == 2
    assert result.stdout == b""
    err = result.stderr.decode()
    assert err.startswith("usage: stream-parser")
    assert "stream-parser parse reply.txt --tools tools.py" in err
    assert "stream-parser demo" in err


def test_every_option_has_help() -> None:
    for command in (["--help"], ["parse", "--help"], ["demo", "--help"]):
        result = run(*command)
        assert result.returncode == 0
        lines = result.stdout.decode().splitlines()
        options = [(i, line) for i, line in enumerate(lines) if line.startswith("  -")]
        assert len(options) > 1
        for i, line in options:
            # argparse puts the help after two spaces, or on the next line, indented.
            assert "  " in line.strip() or lines[i + 1].startswith(" " * 10), line


@pytest.mark.parametrize("value", ["0", "-3", "ten"])
def test_max_tool_size_must_be_positive(value: str) -> None:
    result = run("parse", "-", "--max-tool-size", value, input=b"hi")
    assert result.returncode == 2
    assert result.stdout == b""
    assert "argument --max-tool-size" in result.stderr.decode().splitlines()[-1]


def test_max_tool_size_is_applied() -> None:
    reply = b"<read_file><path>" + b"a" * 100 + b"</path></read_file>"
    found = events(run("parse", "-", "--tools", TOOLS_FILE, "--max-tool-size", "50", input=reply))
    assert "tool_call" not in [e["kind"] for e in found]
    assert any(e["kind"] == "error" for e in found)


# --- the tools file ----------------------------------------------------------------------

BAD_TOOLS = {
    "raises": ("x = 1\nraise RuntimeError('no database')\n", "raised RuntimeError: no database"),
    "syntax": ("def broken(:\n    pass\n", "syntax error in"),
    "empty": ("HELPER = 1\n", "defines no tools"),
    "empty_list": ("TOOLS = []\n", "TOOLS holds no tools"),
    "not_tools": ("TOOLS = 'read_file'\n", "tools cannot be a str"),
}


@pytest.mark.parametrize("case", sorted(BAD_TOOLS))
@pytest.mark.parametrize("form", ["file", "module"])
def test_a_bad_tools_file_is_one_line(tmp_path: Path, case: str, form: str) -> None:
    source, message = BAD_TOOLS[case]
    (tmp_path / f"bad_{case}.py").write_text(source, encoding="utf-8")
    spec = f"bad_{case}.py" if form == "file" else f"bad_{case}"
    result = run("parse", "-", "--tools", spec, input=b"hi", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stdout == b""
    lines = result.stderr.decode().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("stream-parser: error: ")
    assert message in lines[0]


def test_a_raising_tools_file_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "tools.py").write_text("import os\n\nos.environ['NO_SUCH_VARIABLE_X']\n")
    result = run("parse", "-", "--tools", "tools.py", input=b"hi", cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.decode().rstrip().endswith("tools.py:3)")


@pytest.mark.parametrize("command", [COMMAND, MODULE_COMMAND], ids=["script", "module"])
def test_a_tools_module_is_found_in_the_current_directory(
    tmp_path: Path, command: list[str]
) -> None:
    (tmp_path / "my_cli_tools.py").write_text(
        "from pydantic import BaseModel\nclass Lookup(BaseModel):\n    key: str\n",
        encoding="utf-8",
    )
    result = run(
        "parse", "-", "--tools", "my_cli_tools", "--blocks-only",
        input=b"<lookup><key>k</key></lookup>", cwd=tmp_path, command=command,
    )  # fmt: skip
    assert [e.get("tool_instance") for e in events(result)] == [{"key": "k"}]


# --- memory ------------------------------------------------------------------------------

PEAK_RSS = """
import resource, subprocess, sys
with open(sys.argv[1], "rb") as source:
    subprocess.run(sys.argv[2:], stdin=source, stdout=subprocess.DEVNULL, check=True)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""

UNIT = (
    "The quick brown fox jumps over the lazy dog, again & again. " * 12
    + "\n<think>"
    + "a thought, " * 10
    + "</think>\n<read_file><path>src/a.py</path></read_file>\n"
)


def peak_rss_kib(source: Path, args: list[str]) -> int:
    """The peak resident memory of the command over ``source``, in KiB (Linux units)."""
    result = subprocess.run(
        [sys.executable, "-c", PEAK_RSS, str(source), *COMMAND, *args],
        capture_output=True,
        env=env(),
        timeout=300,
        check=True,
    )
    return int(result.stdout)


@pytest.mark.slow
@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux")
@pytest.mark.parametrize(
    "args",
    [
        ["parse", "{file}", "--tools", str(TOOLS_FILE)],
        ["parse", "-", "--tools", str(TOOLS_FILE), "--blocks-only"],
        ["parse", "-", "--tools", str(TOOLS_FILE), "--format", "sse"],
    ],
    ids=["file-jsonl", "stdin-blocks-only", "stdin-sse"],
)
def test_memory_does_not_grow_with_the_input(tmp_path: Path, args: list[str]) -> None:
    peaks = []
    for megabytes in (1, 10):
        source = tmp_path / f"reply_{megabytes}.txt"
        source.write_text(UNIT * (megabytes * 2**20 // len(UNIT)), encoding="utf-8")
        peaks.append(peak_rss_kib(source, [a.replace("{file}", str(source)) for a in args]))
    small, large = peaks
    # 9 MB more input: a command that held the input or its events would grow by far
    # more than this (tens to hundreds of MB); one that streams stays flat.
    assert large - small < 8 * 1024, peaks
