"""The stream-parser command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stream_parser.cli import load_tools, main
from stream_parser.errors import ConfigError
from stream_parser.testing.fixtures import ExecuteCommand, ReadFile, WriteToFile

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "agent_reply.txt"
TOOLS_FILE = ROOT / "examples" / "tools.py"


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict]]:
    code = main(args)
    out = capsys.readouterr().out
    return code, [json.loads(line) for line in out.splitlines()]


def test_parse_example_blocks_only(capsys: pytest.CaptureFixture[str]) -> None:
    code, events = run_main(
        ["parse", str(EXAMPLE), "--tools", str(TOOLS_FILE), "--blocks-only"], capsys
    )
    assert code == 0
    kinds = [e["kind"] for e in events]
    assert kinds.count("tool_call") == 3
    assert "tool_call_start" not in kinds and "tool_param_delta" not in kinds
    assert events[-2]["error_type"] == "unclosed_tool"
    calls = [e for e in events if e["kind"] == "tool_call"]
    assert calls[2]["tool_instance"] == {
        "command": "python hello.py && echo '</command>'",
        "requires_approval": False,
    }
    text = EXAMPLE.read_text(encoding="utf-8")
    tiles = [e for e in events if e["kind"] in ("text", "thinking", "tool_call")]
    assert "".join(text[a:b] for a, b in (e["span"] for e in tiles)) == text


def join_text(events: list[dict]) -> list[dict]:
    """Adjacent text events as one (``--blocks-only`` prints text in the parser's pieces)."""
    joined: list[dict] = []
    for event in events:
        if event["kind"] == "text" and joined and joined[-1]["kind"] == "text":
            last = joined[-1]
            assert last["span"][1] == event["span"][0]
            joined[-1] = {**last, "text": last["text"] + event["text"]}
            joined[-1]["span"] = [last["span"][0], event["span"][1]]
        else:
            joined.append(event)
    return joined


def test_chunked_output_merges_to_the_same_blocks(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["parse", str(EXAMPLE), "--tools", str(TOOLS_FILE), "--blocks-only"]
    _, whole = run_main(args, capsys)
    _, chunked = run_main([*args, "--chunk-size", "1-8", "--seed", "3"], capsys)
    # Text comes in the pieces the chunks made, and nothing is merged in memory.
    assert len([e for e in chunked if e["kind"] == "text"]) > len(
        [e for e in whole if e["kind"] == "text"]
    )
    assert join_text(chunked) == join_text(whole)
    _, deltas = run_main(
        ["parse", str(EXAMPLE), "--tools", str(TOOLS_FILE), "--chunk-size", "5"], capsys
    )
    assert any(e["kind"] == "tool_param_delta" for e in deltas)


def test_stdin_and_module_form(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "stream_parser", "parse", "-", "--thinking-tag", "<r>", "</r>"],
        input="a<r>b</r>",
        capture_output=True,
        text=True,
        check=True,
    )
    kinds = [json.loads(line)["kind"] for line in result.stdout.splitlines()]
    assert kinds == ["text", "thinking_delta", "thinking"]


def test_fenced_code_option(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    source = tmp_path / "reply.md"
    source.write_text("x\n```py\n1\n```\n", encoding="utf-8")
    _, events = run_main(["parse", str(source), "--fenced-code", "--blocks-only"], capsys)
    assert [e["kind"] for e in events] == ["text", "code_block", "text"]


def test_load_tools_forms(tmp_path: Path) -> None:
    assert set(load_tools(str(TOOLS_FILE))) == {"read_file", "write_to_file", "execute_command"}
    assert set(load_tools("tests.tools_fixture")) >= {"read_file", "search"}
    assert set(load_tools("tests.tools_fixture:TOOLS")) >= {"read_file"}
    plain = tmp_path / "plain_tools.py"
    plain.write_text(
        "from pydantic import BaseModel\nclass ListFiles(BaseModel):\n    path: str\n",
        encoding="utf-8",
    )
    assert list(load_tools(str(plain))) == ["list_files"]
    with pytest.raises(ConfigError):
        load_tools("no_such_module_xyz")
    with pytest.raises(ConfigError):
        load_tools(str(tmp_path / "missing.py"))
    with pytest.raises(ConfigError):
        load_tools("tests.tools_fixture:summary")


def test_errors_exit_with_status_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["parse", str(tmp_path / "missing.txt")]) == 2
    assert "error" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["parse", "x", "--chunk-size", "0"])


def test_model_classes_are_named_by_the_library_rule(tmp_path: Path) -> None:
    """Acronyms stay whole, as everywhere else (``tool_name_from_class``)."""
    source = tmp_path / "acronym_tools.py"
    source.write_text(
        "from pydantic import BaseModel\n"
        "class HTTPGet(BaseModel):\n    url: str\n"
        "class ReadJSONFile(BaseModel):\n    path: str\n"
        "class Search2Web(BaseModel):\n    query: str\n",
        encoding="utf-8",
    )
    assert list(load_tools(str(source))) == ["http_get", "read_json_file", "search2_web"]
    reply = tmp_path / "reply.txt"
    reply.write_text("<http_get><url>https://a.b</url></http_get>", encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "stream_parser", "parse", str(reply), "--tools", str(source)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    calls = [e for e in map(json.loads, result.stdout.splitlines()) if e["kind"] == "tool_call"]
    assert calls[0]["tool_instance"] == {"url": "https://a.b"}


def test_the_example_tools_are_the_library_fixtures() -> None:
    tools = load_tools(str(TOOLS_FILE))
    assert tools["read_file"] is ReadFile
    assert tools["write_to_file"] is WriteToFile
    assert tools["execute_command"] is ExecuteCommand


def test_tools_in_any_form_go_through_as_registry(tmp_path: Path) -> None:
    functions = tmp_path / "function_tools.py"
    functions.write_text(
        "from stream_parser import tool\n"
        "def grep(pattern: str) -> str:\n    return pattern\n"
        "@tool\ndef word_count(text: str) -> int:\n    return len(text.split())\n"
        "TOOLS = [grep, word_count]\n",
        encoding="utf-8",
    )
    registry = load_tools(str(functions))
    assert list(registry) == ["grep", "word_count"]
    assert set(registry["grep"].model_fields) == {"pattern"}
    decorated = tmp_path / "decorated_tools.py"
    decorated.write_text(
        "from stream_parser import tool\n@tool\ndef ping(host: str) -> str:\n    return host\n",
        encoding="utf-8",
    )
    assert list(load_tools(str(decorated))) == ["ping"]
    with pytest.raises(ConfigError):
        load_tools(f"{functions}:NOT_THERE")


# --- --dialect and --model ------------------------------------------------------------------

QWEN3_CODER_REPLY = (
    "<think>plan</think>Reading.\n<tool_call>\n<function=read_file>\n<parameter=path>\n"
    "a.py\n</parameter>\n</function>\n</tool_call>"
)


def dialect_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, *args: str
) -> tuple[int, list[dict]]:
    reply = tmp_path / "reply.txt"
    reply.write_text(text, encoding="utf-8")
    return run_main(
        ["parse", str(reply), "--tools", str(TOOLS_FILE), "--blocks-only", *args], capsys
    )


def test_dialect_by_name(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, events = dialect_run(capsys, tmp_path, QWEN3_CODER_REPLY, "--dialect", "qwen3_coder")
    assert code == 0
    calls = [e for e in events if e["kind"] == "tool_call"]
    assert [(c["tool_name"], c["tool_instance"]["path"]) for c in calls] == [("read_file", "a.py")]
    # The default (xml) reads no call in it.
    _, xml = dialect_run(capsys, tmp_path, QWEN3_CODER_REPLY)
    assert not [e for e in xml if e["kind"] == "tool_call"]


@pytest.mark.parametrize(
    "args",
    [
        ("--dialect", "auto", "--model", "Qwen/Qwen3-Coder-30B-A3B-Instruct"),
        ("--model", "qwen3-coder:30b"),  # --model alone means auto
    ],
)
def test_dialect_auto(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: tuple[str, ...]
) -> None:
    code, events = dialect_run(capsys, tmp_path, QWEN3_CODER_REPLY, *args)
    assert code == 0
    assert [e["tool_name"] for e in events if e["kind"] == "tool_call"] == ["read_file"]


def test_dialect_auto_takes_the_model_s_thinking_tags(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    call = '{"name": "read_file", "arguments": {"path": "a"}}'
    text = f"[THINK]plan[/THINK]<tool_call>{call}</tool_call>"
    # A Qwen3 model thinks in <think>: [THINK] stays text.
    _, qwen = dialect_run(capsys, tmp_path, text, "--dialect", "auto", "--model", "Qwen/Qwen3-8B")
    assert not [e for e in qwen if e["kind"] == "thinking"]
    reasoning = dialect_run(
        capsys, tmp_path, "<think>plan</think>ok", "--dialect", "auto", "--model", "Qwen/Qwen3-8B"
    )[1]
    assert [e["content"] for e in reasoning if e["kind"] == "thinking"] == ["plan"]
    # Thinking tags given on the command line win.
    own = dialect_run(
        capsys,
        tmp_path,
        "<think>plan</think>[T]x[/T]",
        "--model",
        "Qwen/Qwen3-8B",
        "--thinking-tag",
        "[T]",
        "[/T]",
    )[1]
    assert [e["content"] for e in own if e["kind"] == "thinking"] == ["x"]


def test_dialect_auto_prefilled_reasoning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A family whose template opens reasoning: the reply starts inside it."""
    import stream_parser.dialects.detect as detect
    from stream_parser.dialects import ModelDialect

    monkeypatch.setattr(
        detect,
        "dialect_for_model",
        lambda name: ModelDialect("hermes", ("<think>", "</think>"), True),
    )
    _, events = dialect_run(capsys, tmp_path, "plan</think>ok", "--model", "anything")
    assert [(e["kind"], e.get("content", e.get("text"))) for e in events] == [
        ("thinking", "plan"),
        ("text", "ok"),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--dialect", "auto"), "--dialect auto needs --model NAME"),
        (("--dialect", "auto", "--model", "my-model"), "does not know the model 'my-model'"),
        (("--dialect", "nope"), "unknown dialect 'nope'"),
        (("--dialect", "xml", "--model", "Qwen/Qwen3-8B"), "--model is read only with"),
    ],
)
def test_dialect_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    reply = tmp_path / "reply.txt"
    reply.write_text("hi", encoding="utf-8")
    assert main(["parse", str(reply), *args]) == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("import json\njson.loads('{')\n", "raised JSONDecodeError: Expecting"),
        ("class A(:\n", "syntax error in tools file"),
        ("import sys\nsys.exit(3)\n", "raised SystemExit: 3"),
        ("from pydantic import BaseModel\n", "defines no tools"),
        ("TOOLS = {}\n", "TOOLS holds no tools"),
    ],
)
def test_a_tools_file_that_does_not_load_is_a_config_error(
    tmp_path: Path, source: str, message: str
) -> None:
    path = tmp_path / "broken_tools.py"
    path.write_text(source, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_tools(str(path))
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)
    if "no tools" not in message:
        # A file that failed to run leaves no half-run module behind.
        assert "_stream_parser_tools_broken_tools" not in sys.modules


def test_parse_reads_a_text_stdin_stand_in(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Called in-process with a stdin that has no binary buffer, it reads text."""
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("a<think>b</think>"))
    code, found = run_main(["parse", "-", "--blocks-only"], capsys)
    assert code == 0
    assert [e["kind"] for e in found] == ["text", "thinking"]
