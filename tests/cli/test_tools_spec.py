"""``--tools``: a tools file or module that raises is named at the user's line.

The message names the last line of the user's own code that ran, not the library,
standard-library or importlib frame the exception came out of (which ones those are
changes between Python versions: ``os`` is a frozen module from 3.11 on, not on 3.10).
These tests call :func:`~stream_parser.cli._tools.load_tools` in-process; the command's
own tests (``test_command.py``) run it as a subprocess.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from stream_parser.cli._tools import load_tools
from stream_parser.errors import ConfigError


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory that is the current one and first on ``sys.path``.

    The modules imported from it are forgotten afterwards (and only those: a library
    module imported twice would make a second copy of its classes).
    """
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    here = tmp_path.resolve()
    for name, module in list(sys.modules.items()):
        if Path(getattr(module, "__file__", None) or "/").resolve().is_relative_to(here):
            del sys.modules[name]


def failure(spec: str) -> str:
    with pytest.raises(ConfigError) as caught:
        load_tools(spec)
    return str(caught.value)


def named_at(message: str) -> tuple[Path, int]:
    """The file and line a failure's message names: ``... (at FILE:LINE)``."""
    found = re.search(r" \(at (.+):(\d+)\)$", message)
    assert found, message
    return Path(found[1]).resolve(), int(found[2])


@pytest.mark.parametrize(
    "source",
    [
        "import os\n\nos.environ['NO_SUCH_VARIABLE_X']\n",  # os is not frozen on 3.10
        "import json\n\njson.loads('{')\n",  # json is frozen on no version
        "from stream_parser import tool\n\ntool(42)\n",  # raised inside the library
    ],
    ids=["os", "json", "library"],
)
def test_a_raising_tools_file_is_named_at_its_own_line(project: Path, source: str) -> None:
    (project / "raising_tools.py").write_text(source, encoding="utf-8")
    message = failure("raising_tools.py")
    assert message.startswith("tools file raising_tools.py raised ")
    assert named_at(message) == ((project / "raising_tools.py").resolve(), 3)


def test_a_raising_function_of_the_tools_file_is_named_at_the_deepest_line(
    project: Path,
) -> None:
    source = "import json\n\ndef load():\n    return json.loads('{')\n\nload()\n"
    (project / "nested_tools.py").write_text(source, encoding="utf-8")
    assert named_at(failure("nested_tools.py")) == ((project / "nested_tools.py").resolve(), 4)


def test_a_raising_module_of_the_tools_package_is_named_at_its_line(project: Path) -> None:
    package = project / "raising_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "helpers.py").write_text("import os\n\nos.environ['NO_SUCH_X']\n", "utf-8")
    (package / "tools.py").write_text("from . import helpers\n", encoding="utf-8")
    message = failure("raising_pkg.tools")
    assert message.startswith("tools module 'raising_pkg.tools' raised KeyError")
    assert named_at(message) == ((package / "helpers.py").resolve(), 3)
