"""Packaging: the README's commands, the version, the license, and what a build ships.

The fast tests read files: the README's two setup commands (each makes its own virtual
environment, so they work where the system Python refuses ``pip install``), ``.ci/run``
running the README's test command verbatim, the docs installing from the repository and
never importing the test suite, one version, the license.  The slow test builds the sdist
and the wheel with ``python -m build --no-isolation`` (the ``test`` extra installs the
builder and the backend's requirements, so it needs no package index), installs them in a
fresh virtual environment and runs the command and a parse there.
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import textwrap
import venv
import zipfile
from pathlib import Path
from typing import Any

import pytest

import stream_parser

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CI = ROOT / ".ci" / "run"
DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]
VENV_PREFIX = "python3 -m venv .venv && . .venv/bin/activate && "
FENCE = re.compile(r"^```(?P<lang>[\w-]*)[ \t]*\n(?P<body>.*?)^```[ \t]*$", re.S | re.M)

# The compiled build's CI runs the suite from a copy of the checkout without its package
# folder, against the installed wheel: packaging is about the source tree, checked by the
# plain run.
pytestmark = pytest.mark.skipif(
    not (ROOT / "stream_parser" / "__init__.py").is_file(),
    reason="no source tree here (the suite runs against an installed build)",
)


def _pyproject() -> dict[str, Any]:
    try:
        import tomllib
    except ImportError:  # Python 3.10: pytest itself depends on tomli there
        import tomli as tomllib
    with (ROOT / "pyproject.toml").open("rb") as file:
        return tomllib.load(file)


def _readme_commands() -> list[str]:
    """The commands of the README's first code block (its setup commands)."""
    first = FENCE.search(README.read_text(encoding="utf-8"))
    assert first is not None and first["lang"] == "bash"
    lines = [line.strip() for line in first["body"].splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def test_readme_has_two_single_line_commands_that_make_their_own_venv() -> None:
    demo, tests = _readme_commands()
    for command in (demo, tests):
        # python3 only (a machine may have no `python`), pip only inside the new venv.
        assert command.startswith(VENV_PREFIX), command
        rest = command[len(VENV_PREFIX) :]
        assert "python3" not in rest and "sudo" not in rest, command
        assert re.search(r"(?<![\w-])pip install", rest.replace("python -m pip", "")) is None
    assert demo.endswith("python -m pip install '.[cli]' && stream-parser demo")
    assert tests.endswith("python -m pip install -e '.[test]' && python -m pytest")


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    _, tests = _readme_commands()
    script = CI.read_text(encoding="utf-8")
    commands = [line for line in script.splitlines() if line.strip() and not line.startswith("#")]
    assert tests in commands
    # Nothing else installs or makes an environment: CI is what a user does.
    others = [line for line in commands if line != tests]
    assert not [line for line in others if re.search(r"\b(pip|venv|activate)\b", line)], others
    assert os.access(CI, os.X_OK)


def test_ci_runs_every_claimed_python_or_fails_naming_the_missing_one(tmp_path: Path) -> None:
    """``.ci/pythons`` takes the lowest and the highest Python the classifiers claim."""
    assert "bash .ci/pythons" in CI.read_text(encoding="utf-8").splitlines()
    claimed = sorted(
        (
            int(m[1])
            for m in re.finditer(r"Python :: 3\.(\d+)\"", (ROOT / "pyproject.toml").read_text())
        ),
    )
    assert _pyproject()["project"]["requires-python"] == f">=3.{claimed[0]}"
    # A checkout that claims a Python no machine has: the run stops at once, naming it.
    (tmp_path / ".ci").mkdir()
    shutil.copy(ROOT / ".ci" / "pythons", tmp_path / ".ci" / "pythons")
    (tmp_path / "pyproject.toml").write_text(
        "classifiers = [\n"
        '    "Programming Language :: Python :: 3.99",\n'
        '    "Programming Language :: Python :: 3.98",\n'
        "]\n"
    )
    done = subprocess.run(
        ["bash", str(tmp_path / ".ci" / "pythons")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "error: Python 3.98 is not installed" in done.stderr  # the lowest first
    assert "==" not in done.stdout  # nothing ran before the check


def test_the_demo_page_shows_the_readme_demo_command() -> None:
    demo, _ = _readme_commands()
    page = (ROOT / "docs" / "demo.md").read_text(encoding="utf-8")
    assert f"```bash\n{demo}\n```" in page


def _python_sources() -> list[tuple[str, str]]:
    sources = [(str(p.relative_to(ROOT)), p.read_text("utf-8")) for p in ROOT.glob("examples/*.py")]
    for path in DOCS:
        for index, match in enumerate(FENCE.finditer(path.read_text(encoding="utf-8"))):
            if match["lang"] == "python":
                sources.append((f"{path.name}[{index}]", textwrap.dedent(match["body"])))
    return sources


def _imported_roots(source: str) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def test_the_sources_scanned_for_imports_include_examples_and_docs() -> None:
    names = [name for name, _ in _python_sources()]
    assert any(name.startswith("examples/") for name in names)
    assert any(name.startswith("README.md[") for name in names)
    assert _imported_roots("from tests.llm import x\nimport os.path") == {"tests", "os"}


def test_no_example_imports_from_the_test_suite() -> None:
    # The test suite is not installed: an example that needs it fails for every user.
    offenders = [name for name, source in _python_sources() if "tests" in _imported_roots(source)]
    assert offenders == []


def test_docs_install_extras_from_the_repository() -> None:
    # The package is not on a package index: `pip install stream-parser[...]` cannot work.
    published = re.compile(r"pip install\s+['\"]?stream[-_]parser")
    offenders = [
        f"{path.name}:{number}"
        for path in [*DOCS, ROOT / "CHANGELOG.md"]
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if published.search(line)
    ]
    assert offenders == []


def test_the_version_is_declared_once() -> None:
    project = _pyproject()["project"]
    assert "version" not in project
    assert project["dynamic"] == ["version"]
    dynamic = _pyproject()["tool"]["setuptools"]["dynamic"]
    assert dynamic == {"version": {"attr": "stream_parser.__version__"}}
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?(\.dev\d+)?", stream_parser.__version__)


_READ_VERSION = """
import sys, warnings
warnings.simplefilter("ignore")  # setuptools calls its [tool.setuptools] table "beta"
# Were setuptools to import the package, these would fail: it must read the file instead.
for name in ("pydantic", "lxml", "jinja2", "docstring_parser", "stream_parser"):
    sys.modules[name] = None
from setuptools.config.pyprojecttoml import read_configuration
print(read_configuration("pyproject.toml")["project"]["version"])
"""


def test_setuptools_reads_the_version_without_importing_the_package() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _READ_VERSION],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.stdout.strip() == stream_parser.__version__


def test_license_file_matches_the_declared_license() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n")
    assert "Copyright (c) 2026 the stream_parser authors" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text
    project = _pyproject()["project"]
    # An SPDX expression and the file it names (PEP 639), no license classifier beside it.
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    assert not [c for c in project["classifiers"] if c.startswith("License ::")]


def test_classifiers_match_the_supported_pythons() -> None:
    project = _pyproject()["project"]
    assert project["requires-python"] == ">=3.10"
    versions = [
        c.rsplit(" :: ", 1)[1]
        for c in project["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    ]
    assert versions == ["3.10", "3.11", "3.12", "3.13"]
    assert "Typing :: Typed" in project["classifiers"]
    assert (ROOT / "stream_parser" / "py.typed").is_file()
    assert any(c.startswith("Development Status :: 3 - Alpha") for c in project["classifiers"])
    assert project["keywords"]


# --- the build --------------------------------------------------------------------------

#: What the sdist must hold for the README's commands to run from it, unpacked.
SDIST_MUST_HOLD = [
    "LICENSE",
    "README.md",
    "CHANGELOG.md",
    "pyproject.toml",
    ".ci/run",
    "build_backend/stream_parser_build.py",
    "docs/architecture.md",
    "examples/tools.py",
    "examples/agent_reply.txt",
    "tests/test_packaging.py",
    "tests/helpers.py",
    "benchmarks",
    "stream_parser/py.typed",
]

_SMOKE = """
import sys, importlib.metadata as md
import stream_parser
from pydantic import BaseModel
from stream_parser import StreamToolParser, ToolCallEvent

class ReadFile(BaseModel):
    path: str

parser = StreamToolParser({"read_file": ReadFile})
text = "Look.<read_file><path>a.py</path></read_file>"
events = [e for i in range(len(text)) for e in parser.feed(text[i])] + parser.close()
calls = [e.tool_instance for e in events if isinstance(e, ToolCallEvent)]
print(stream_parser.__file__)
print(md.version("stream-parser"), stream_parser.__version__)
print(calls)
"""


def _copy_source(target: Path) -> Path:
    # Build from a copy: setuptools writes build/ and *.egg-info next to the sources.
    ignore = shutil.ignore_patterns(
        ".git",
        ".venv",
        "build",
        "dist",
        "*.egg-info",
        "__pycache__",
        ".*_cache",
        ".hypothesis",
        ".tox",
        ".benchmarks",
    )
    return Path(shutil.copytree(ROOT, target, ignore=ignore))


def _fresh_venv(path: Path) -> Path:
    """A new virtual environment that sees this one's dependencies but not its packages.

    A ``.pth`` line puts this environment's site-packages at the *end* of the new one's
    path: the dependencies (pydantic, lxml...) are found there without a package index,
    while the installed build, in the new site-packages, comes first.  The ``.pth`` files
    of the added folder are not read, so the editable install of the checkout stays off.
    """
    venv.create(path, with_pip=True)
    python = path / ("Scripts" if os.name == "nt" else "bin") / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    Path(site, "zz_outer_site.pth").write_text("\n".join(sorted(ours)) + "\n", encoding="utf-8")
    # Before Python 3.12 a new environment gets its own, older setuptools, which would
    # shadow this one's (the build needs setuptools >= 77): builds use this one's.
    subprocess.run(
        [str(python), "-m", "pip", "uninstall", "-y", "-q", "setuptools"],
        check=True,
        capture_output=True,
    )
    return python


def _check_installed(python: Path, cwd: Path) -> None:
    bindir = python.parent
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    run = {"cwd": cwd, "env": env, "capture_output": True, "text": True, "timeout": 120}
    out = subprocess.run([str(python), "-c", _SMOKE], check=True, **run).stdout.splitlines()
    where, versions, calls = out
    assert Path(where).is_relative_to(python.parent.parent), where
    assert "site-packages" in where and not Path(where).is_relative_to(ROOT)
    assert versions == f"{stream_parser.__version__} {stream_parser.__version__}"
    assert calls == "[ReadFile(path='a.py')]"
    help_text = subprocess.run([str(bindir / "stream-parser"), "--help"], check=True, **run)
    assert "demo" in help_text.stdout and "parse" in help_text.stdout
    # The README's first command ends with the demo: it runs from the install, offline.
    demo = subprocess.run(
        [str(bindir / "stream-parser"), "demo", "--no-delay", "--json"], check=True, **run
    )
    assert '"kind":"agent_done"' in demo.stdout


@pytest.mark.slow
def test_build_makes_an_sdist_and_a_wheel_that_install_and_run(tmp_path: Path) -> None:
    source = _copy_source(tmp_path / "src")
    dist = tmp_path / "dist"
    # Without an option, build makes the sdist, then the wheel *from the unpacked sdist*:
    # a file missing from the sdist (the in-tree backend, say) fails the wheel.
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    version = stream_parser.__version__
    # setuptools before 69.3 names the sdist after the project as written, later ones
    # normalise it; the wheel's name is normalised by all.
    (sdist,) = dist.glob(f"stream[-_]parser-{version}.tar.gz")
    (wheel,) = dist.glob(f"stream_parser-{version}-py3-none-any.whl")
    top = sdist.name.removesuffix(".tar.gz")
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
        # The "data" filter where Python has it (3.12 warns without a filter).
        safe = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        archive.extractall(tmp_path / "unpacked", **safe)
    held = {name.removeprefix(f"{top}/") for name in names}
    missing = [p for p in SDIST_MUST_HOLD if p not in held]
    assert missing == []
    assert not any("__pycache__" in name or name.endswith(".pyc") for name in names)

    with zipfile.ZipFile(wheel) as archive:
        wheel_names = archive.namelist()
        metadata = archive.read(f"stream_parser-{version}.dist-info/METADATA").decode()
    assert "stream_parser/py.typed" in wheel_names
    assert not any(name.startswith(("tests/", "docs/", "build_backend/")) for name in wheel_names)
    assert any(
        name.endswith("dist-info/licenses/LICENSE") or name.endswith("dist-info/LICENSE")
        for name in wheel_names
    )
    assert f"Version: {version}\n" in metadata
    assert "Classifier: Typing :: Typed\n" in metadata
    for requirement in _pyproject()["project"]["dependencies"]:
        name = re.split(r"[<>=!~ \[]", requirement, maxsplit=1)[0]
        assert f"Requires-Dist: {name}" in metadata, name

    python = _fresh_venv(tmp_path / "venv")
    pip = [str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index"]
    subprocess.run([*pip, str(wheel)], check=True, capture_output=True, timeout=300)
    _check_installed(python, tmp_path)

    # Then from the unpacked sdist, as the README's first command does from a checkout.
    unpacked = tmp_path / "unpacked" / top
    subprocess.run(
        [*pip, "--force-reinstall", "--no-build-isolation", str(unpacked)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    _check_installed(python, tmp_path)
