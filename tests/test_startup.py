"""Start-up: what ``import stream_parser`` and the command's quick answers load.

Each check runs in a fresh interpreter, since this process has long imported everything.
``-X importtime`` lists every module a process imports, so a check sees what the real
command loads, not what a function says it would.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stream_parser.core._dialect_registry import BUILTIN_DIALECTS
from stream_parser.core.config import ParserConfig

ROOT = Path(__file__).resolve().parent.parent

# Loaded by a layer only when one of its names is used.
NOT_AT_IMPORT = (
    "openai",
    "jinja2",
    "asyncio",
    "stream_parser.agent",
    "stream_parser.decorators",
    "stream_parser.encoders",
    "stream_parser.llm",
    "stream_parser.tools",
    "stream_parser.prompts",
    "stream_parser.testing",
    "stream_parser.dialects",
    "stream_parser.serve",
    "starlette",
    "uvicorn",
    "httpx2",
)


def _imported(*args: str) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """The modules a fresh ``python -X importtime ARGS`` imports, and the process."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    names = set(re.findall(r"^import time:\s+\d+ \|\s+\d+ \|\s+(\S+)", done.stderr, re.M))
    return names, done


def test_import_loads_no_layer() -> None:
    names, done = _imported("-c", "import stream_parser")
    assert done.returncode == 0, done.stderr
    assert "stream_parser" in names
    loaded = sorted(
        name
        for name in names
        for lazy in NOT_AT_IMPORT
        if name == lazy or name.startswith(lazy + ".")
    )
    assert loaded == []
    # Nor the core: a program that only asks for the version pays for nothing.
    assert {n for n in names if n.startswith("stream_parser.")} == set()


def test_a_name_loads_its_layer_on_first_use() -> None:
    code = (
        "import sys, stream_parser\n"
        "parser = stream_parser.StreamToolParser({})\n"
        "assert 'stream_parser.core.parser' in sys.modules\n"
        "assert 'StreamToolParser' in vars(stream_parser)\n"  # kept once loaded
        "for lazy in ('asyncio', 'jinja2', 'openai', 'stream_parser.agent', "
        "'stream_parser.dialects'):\n"
        "    assert lazy not in sys.modules, lazy\n"
        "stream_parser.ReActAgent\n"
        "assert 'stream_parser.agent' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, timeout=60)


@pytest.mark.parametrize("flag", ["--version", "--help", "serve --help"])
def test_the_command_answers_without_loading_a_layer(flag: str) -> None:
    names, done = _imported("-m", "stream_parser", *flag.split())
    assert done.returncode == 0, done.stderr
    own = sorted(n for n in names if n.startswith("stream_parser"))
    allowed = {"stream_parser", "stream_parser.__main__", "stream_parser.cli"}
    assert {n for n in own if n not in allowed and not n.startswith("stream_parser.cli._")} == set()
    assert not {"pydantic", "lxml", "jinja2", "openai", "asyncio"} & names
    assert not {"starlette", "uvicorn", "httpx2"} & names
    if flag == "--version":
        assert re.fullmatch(r"stream-parser \d+\.\d+\.\d+\S*\n", done.stdout)
    elif flag == "--help":
        assert "demo" in done.stdout and "parse" in done.stdout and "serve" in done.stdout
    else:
        assert "--upstream URL" in done.stdout


def test_the_server_package_loads_no_server_library() -> None:
    """``stream_parser.serve`` imports without the serve extra; the app loads it on use."""
    names, done = _imported("-c", "import stream_parser.serve")
    assert done.returncode == 0, done.stderr
    assert not {"starlette", "uvicorn", "httpx2"} & names


def test_the_command_line_offers_what_its_layers_accept() -> None:
    """The choices are written in the command line's grammar: they agree with the layers."""
    import typing

    from stream_parser.cli import _argv, _output
    from stream_parser.demo import LANGUAGES, PROTOCOLS

    assert _argv.PROTOCOLS == PROTOCOLS
    assert _argv.LANGUAGES == LANGUAGES
    assert typing.get_args(_output.Format) == _argv.FORMATS


def test_the_built_in_names_are_the_dialects() -> None:
    from stream_parser.dialects import DIALECTS

    assert set(BUILTIN_DIALECTS) == set(DIALECTS)


QUESTIONS = ("starts_in_thinking", "thinking_pairs", "framing", "plugins")


@pytest.mark.parametrize(
    ("name", "first"),
    # Every dialect, each asked one of the questions first, in turn: any of them must
    # load the dialect (one process each; a process per pair would be slow).
    [(name, QUESTIONS[i % len(QUESTIONS)]) for i, name in enumerate(sorted(BUILTIN_DIALECTS))],
)
def test_each_dialect_config_reads_the_same_in_a_fresh_process(name: str, first: str) -> None:
    """The reasoning format, framing and plugins of a dialect load when first asked for."""
    import stream_parser.dialects  # noqa: F401  # here, everything is registered
    from stream_parser.core._dialect_registry import dialect_framing, dialect_plugins

    config = ParserConfig(dialect=name)
    here = {
        "starts_in_thinking": config.starts_in_thinking,
        "thinking_pairs": [list(pair) for pair in config.thinking_pairs],
        "framing": repr(dialect_framing((name,))),
        "plugins": [type(p).__name__ for p in dialect_plugins((name,))],
    }
    code = (
        "import json, sys\n"
        "from stream_parser.core.config import ParserConfig\n"
        "from stream_parser.core._dialect_registry import dialect_framing, dialect_plugins\n"
        f"name = {name!r}\n"
        "assert 'stream_parser.dialects' not in sys.modules\n"
        "config = ParserConfig(dialect=name)\n"
        "answers = {\n"
        "    'starts_in_thinking': lambda: config.starts_in_thinking,\n"
        "    'thinking_pairs': lambda: [list(p) for p in config.thinking_pairs],\n"
        "    'framing': lambda: repr(dialect_framing((name,))),\n"
        "    'plugins': lambda: [type(p).__name__ for p in dialect_plugins((name,))],\n"
        "}\n"
        f"result = {{{first!r}: answers.pop({first!r})()}}\n"
        "result.update((key, answer()) for key, answer in answers.items())\n"
        "print(json.dumps(result))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == here, first
