"""The optional mypyc build of the core: the ``COMPILED`` flag, and the compiled wheel.

The fast tests check the flag of the build under test, and that every module the build
backend lists is an extension in a compiled build and a source file in a pure one (the
whole suite runs against both builds: ``.ci/compiled``).  The wheel test builds a
compiled wheel, installs it in a fresh virtual environment and checks that the
compiled modules are the ones imported and that they parse like the pure-Python ones.
It needs a C compiler and a few minutes, so it runs only with
``STREAM_PARSER_TEST_COMPILED=1``.
"""

from __future__ import annotations

import ast
import importlib
import os
import subprocess
import sys
import venv
from pathlib import Path

import pytest

import stream_parser.core as core
from stream_parser.core import _scan as scan

ROOT = Path(__file__).resolve().parents[2]
BACKEND = ROOT / "build_backend" / "stream_parser_build.py"


def compiled_modules() -> list[str]:
    """The dotted names of the modules the build backend compiles.

    Read from the backend's source, not imported: it imports setuptools, which the test
    environment need not have.
    """
    tree = ast.parse(BACKEND.read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "COMPILED_MODULES" for t in node.targets
        ):
            paths = ast.literal_eval(node.value)
            return [p.removesuffix(".py").replace("/", ".") for p in paths]
    raise AssertionError(f"no COMPILED_MODULES in {BACKEND}")


def test_compiled_is_a_bool() -> None:
    assert isinstance(core.COMPILED, bool)


def test_compiled_matches_the_imported_scanner() -> None:
    # The flag says whether the scanner module came from an extension or a source file.
    assert core.COMPILED is (not str(scan.__file__).endswith(".py"))


def test_the_backend_lists_the_driver_and_its_readers() -> None:
    names = compiled_modules()
    assert "stream_parser.core.parser" in names
    assert "stream_parser.core._readers.tool" in names
    # Interpreted on purpose (see the backend's docstring).
    for kept in ("drivers", "events", "plugins", "readers.pieces"):
        assert f"stream_parser.core.{kept}" not in names


@pytest.mark.parametrize("name", compiled_modules())
def test_each_listed_module_matches_the_build(name: str) -> None:
    module = importlib.import_module(name)
    assert str(module.__file__).endswith(".py") is (not core.COMPILED), module.__file__


@pytest.mark.skipif(
    ROOT not in Path(core.__file__).resolve().parents,
    reason="an installed build is under test, not the source tree",
)
def test_the_source_tree_is_pure_python() -> None:
    assert core.COMPILED is False


_CHECK = """
import importlib, sys
import stream_parser.core as core
from stream_parser.core.parser import parse_stream
assert core.COMPILED is True, core.COMPILED
for name in sys.argv[1:]:
    module = importlib.import_module(name)
    assert not module.__file__.endswith(".py"), module.__file__
text = "hi <think>hmm</think> there"
whole = list(parse_stream([text]))
cut = list(parse_stream([text[:4], text[4:13], text[13:]]))
names = [type(e).__name__ for e in whole]
assert "ThinkingEvent" in names and "TextOutputEvent" in names, names
assert [type(e).__name__ for e in cut] == names
print("ok", len(whole))
"""


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("STREAM_PARSER_TEST_COMPILED") != "1",
    reason="builds a compiled wheel (minutes): set STREAM_PARSER_TEST_COMPILED=1",
)
@pytest.mark.skipif(
    not (ROOT / "stream_parser").is_dir(),
    reason="the tests run from a copy without the source tree: nothing to build",
)
def test_compiled_wheel_builds_and_is_used(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    env = {**os.environ, "STREAM_PARSER_COMPILE": "1"}
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", str(ROOT), "-w", str(wheels)],
        check=True,
        env=env,
        timeout=900,
    )
    (wheel,) = wheels.glob("stream_parser-*.whl")
    assert "none-any" not in wheel.name  # a platform wheel: it holds extensions
    target = tmp_path / "venv"
    venv.create(target, with_pip=True)
    python = str(target / ("Scripts" if os.name == "nt" else "bin") / "python")
    subprocess.run([python, "-m", "pip", "install", "-q", str(wheel)], check=True, timeout=900)
    # Run from outside the source tree, which would otherwise shadow the wheel.
    out = subprocess.run(
        [python, "-c", _CHECK, *compiled_modules()],
        check=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert out.stdout.startswith("ok ")
