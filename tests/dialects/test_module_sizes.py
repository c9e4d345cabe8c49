"""No dialect module is over 500 lines, unless it reads one wire format that cannot be cut.

Such a module says why in its docstring ("one wire format") and stays under 600 lines.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import stream_parser.dialects

DIALECTS = Path(stream_parser.dialects.__file__).parent
LIMIT = 500
SINGLE_FORMAT_LIMIT = 600
MODULES = sorted(p.relative_to(DIALECTS).as_posix() for p in DIALECTS.rglob("*.py"))


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _says_single_format(path: Path) -> bool:
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    return "one wire format" in docstring


@pytest.mark.parametrize("module", MODULES)
def test_a_dialect_module_is_small(module: str) -> None:
    path = DIALECTS / module
    lines = _lines(path)
    if _says_single_format(path):
        assert lines < SINGLE_FORMAT_LIMIT, f"{module}: {lines} lines"
    else:
        assert lines <= LIMIT, f"{module}: {lines} lines (over {LIMIT}: cut it)"


def test_the_single_format_exceptions_are_the_two_the_rule_names() -> None:
    over = sorted(m for m in MODULES if _lines(DIALECTS / m) > LIMIT)
    assert over == ["gpt_oss/harmony.py", "qwen3_coder/reader.py"]
    assert all(_says_single_format(DIALECTS / m) for m in over)
