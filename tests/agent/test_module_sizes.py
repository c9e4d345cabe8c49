"""No module of the agent package is over 500 lines: a concern that outgrows it is cut out."""

from __future__ import annotations

from pathlib import Path

import pytest

import stream_parser.agent

AGENT = Path(stream_parser.agent.__file__).parent
LIMIT = 500
MODULES = sorted(p.relative_to(AGENT).as_posix() for p in AGENT.rglob("*.py"))


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def test_the_modules_are_found() -> None:
    assert {"loop.py", "runner.py", "resume.py"} <= set(MODULES)


@pytest.mark.parametrize("module", MODULES)
def test_an_agent_module_is_small(module: str) -> None:
    lines = _lines(AGENT / module)
    assert lines <= LIMIT, f"{module}: {lines} lines (over {LIMIT}: cut it by concern)"
