"""The docs' examples run, and print what the docs say they print.

Each ```python block of README.md and docs/*.md is executed, in order, in one namespace
per file; when a ```text block follows it directly, the printed output must match it.
A block whose first line is ``# file: NAME`` is a file the reader saves (an MCP server
script, say): it is written as NAME in the examples' working directory, not executed.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import re
import sys
import textwrap
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>[\w-]*)[ \t]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$",
    re.S | re.M,
)

HAVE_MCP = importlib.util.find_spec("mcp") is not None
FILE_BLOCK = re.compile(r"\A\s*# file: (?P<name>[\w.-]+)[ \t]*\n")


def blocks(path: Path) -> list[tuple[str, str]]:
    text = path.read_text(encoding="utf-8")
    return [(m["lang"], textwrap.dedent(m["body"])) for m in FENCE.finditer(text)]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: p.name)
def test_examples_run_and_print_what_they_claim(
    path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    # A real module, so that Pydantic can resolve the names the examples define.
    module = types.ModuleType(f"docs_{path.stem}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    namespace = module.__dict__
    found = blocks(path)
    for index, (lang, body) in enumerate(found):
        if lang != "python" or body.lstrip().startswith("# not run"):
            continue
        if not HAVE_MCP and re.search(r"^\s*(from|import) mcp\b", body, re.M):
            continue  # the optional SDK is absent (the test extra installs it)
        saved = FILE_BLOCK.match(body)
        if saved:
            (tmp_path / saved["name"]).write_text(body, encoding="utf-8")
            continue
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            # dont_inherit: the examples run as written, without this file's __future__.
            code = compile(body, f"{path.name}[{index}]", "exec", dont_inherit=True)
            exec(code, namespace)
        if index + 1 < len(found) and found[index + 1][0] == "text":
            expected = found[index + 1][1]
            assert out.getvalue().rstrip("\n") == expected.rstrip("\n"), (
                f"{path.name} block {index}"
            )


def test_state_diagram_matches_the_transition_table() -> None:
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        import make_state_diagram
    finally:
        sys.path.pop(0)
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert make_state_diagram.render(doc) == doc, "run: python docs/make_state_diagram.py --write"
