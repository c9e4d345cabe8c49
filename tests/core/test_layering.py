"""The core stands alone: importing any core module loads nothing from the layers above.

The core's modules are imported one after another in one fresh interpreter, and what
each import adds to ``sys.modules`` is recorded: if no import adds a module of a layer
above, no core module imports one (a module imported earlier would have shown then).
The test makes the top-level package module by hand (a bare package object with the
right ``__path__``) before importing, so that nothing but the core's own package
``__init__`` and what the modules really import gets loaded, whatever
``stream_parser/__init__.py`` does.  Allowed are the core, ``schema`` and ``errors``.
"""

from __future__ import annotations

import functools
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import stream_parser.core

PACKAGE_DIR = Path(stream_parser.core.__file__).resolve().parent.parent
ALLOWED = ("stream_parser.core", "stream_parser.schema", "stream_parser.errors")

CORE_MODULES = sorted(
    info.name for info in pkgutil.walk_packages(stream_parser.core.__path__, "stream_parser.core.")
)

PROBE = """
import importlib, json, sys, types
top = types.ModuleType("stream_parser")
top.__path__ = [sys.argv[1]]
top.__package__ = "stream_parser"
sys.modules["stream_parser"] = top
added = {}
for module in sys.argv[2:]:
    before = set(sys.modules)
    importlib.import_module(module)
    added[module] = sorted(n for n in set(sys.modules) - before if n.startswith("stream_parser."))
print(json.dumps(added))
"""


def _loaded_in_turn(*modules: str) -> dict[str, list[str]]:
    """What importing each module adds, imported in turn in one fresh interpreter."""
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(PACKAGE_DIR), *modules],
        capture_output=True,
        text=True,
        check=True,
    )
    added: dict[str, list[str]] = json.loads(result.stdout)
    return added


@functools.cache
def _core_imports() -> dict[str, list[str]]:
    return _loaded_in_turn(*CORE_MODULES)


def test_every_core_module_is_checked() -> None:
    assert "stream_parser.core.parser" in CORE_MODULES
    assert "stream_parser.core._readers.tool" in CORE_MODULES


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_module_imports_no_layer_above(module: str) -> None:
    loaded = _core_imports()[module]
    assert module in loaded or any(module in earlier for earlier in _core_imports().values())
    above = [
        name
        for name in loaded
        if not any(name == allowed or name.startswith(allowed + ".") for allowed in ALLOWED)
    ]
    assert above == [], f"importing {module} loaded {above}"


def test_the_probe_sees_a_violation() -> None:
    # The dialects import the core and register with it: a layer above, by definition.
    loaded = _loaded_in_turn("stream_parser.core.parser", "stream_parser.dialects")
    assert "stream_parser.dialects" in loaded["stream_parser.dialects"]
