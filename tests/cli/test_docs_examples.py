"""docs/cli.md's console examples run, and print what the page shows."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from .command import ROOT, env

PAGE = ROOT / "docs" / "cli.md"
CONSOLE = re.compile(r"^```console\n(?P<body>.*?)^```$", re.S | re.M)


def examples(page: Path) -> list[tuple[str, str]]:
    """Each ``$ command`` of the page's console blocks, with the lines shown after it."""
    found: list[tuple[str, str]] = []
    for block in CONSOLE.finditer(page.read_text(encoding="utf-8")):
        for part in re.split(r"^\$ ", block["body"], flags=re.M)[1:]:
            command, _, output = part.partition("\n")
            found.append((command, output))
    return found


EXAMPLES = examples(PAGE)


def test_the_page_has_examples() -> None:
    assert len(EXAMPLES) >= 8


@pytest.mark.parametrize(("command", "output"), EXAMPLES, ids=[c[:60] for c, _ in EXAMPLES])
def test_example_prints_what_the_page_shows(command: str, output: str) -> None:
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    # Without the installed script, the module form stands in for it.
    fallback = (
        'command -v stream-parser >/dev/null || stream-parser() { "$PY" -m stream_parser "$@"; }'
    )
    result = subprocess.run(
        ["bash", "-c", f"{fallback}\n{command}"],
        capture_output=True,
        cwd=ROOT,
        env={**env(), "PATH": path, "PY": sys.executable},
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode().rstrip("\n") == output.rstrip("\n")
