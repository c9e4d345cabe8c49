"""PEP 517 build backend: setuptools, plus an optional mypyc build of the core.

Theory of operation.  By default every hook is setuptools' own, untouched: ``pip
install .`` and ``pip install -e .`` build the same pure-Python package as ever and
need no compiler.  When the environment variable ``STREAM_PARSER_COMPILE`` is ``1``,
a wheel build asks for ``mypy`` (which ships mypyc) as an extra build requirement,
and setuptools is run with the C extensions that ``mypyc.build.mypycify`` makes of
the modules in :data:`COMPILED_MODULES`.  The ``.py`` sources stay in the wheel next
to the extensions, and Python imports the extension first, so a compiled wheel is a
drop-in replacement; ``stream_parser.core.COMPILED`` tells which one is in use.

Only modules that mypyc handles and that gain from it are listed: the driver
(``parser.py``) and the readers it calls, with the tag and JSON scanners, the state
machine and ``value_run.py`` (a plugin's open value, whose fields the plugin reader reads
per chunk).  The gain comes from the calls between them, which become C calls when both
sides are compiled: the readers compiled without the driver, or the driver without the
readers, run no faster than pure Python.  Left interpreted: ``core/_drivers.py`` (an async
generator), ``core/events.py`` (frozen dataclasses whose ``__class__`` is swapped and
whose annotations Pydantic reads), ``core/plugins.py``
(``ParsePlugin``, which dialects and users subclass), ``_readers/pieces.py`` (a ``list``
subclass, which mypyc does not compile), and ``config.py`` and ``_tables.py``, which
gain nothing (and a compiled ``ParserConfig`` no longer exposes its defaults as class
attributes).  ``docs/performance.md`` has the figures.
"""

from __future__ import annotations

import os
from typing import Any

from setuptools import build_meta as _orig
from setuptools.build_meta import *  # noqa: F403  (re-export every PEP 517 hook)

#: The environment variable that turns the compiled build on.
COMPILE_ENV = "STREAM_PARSER_COMPILE"

#: Source files compiled by mypyc, relative to the project root.
COMPILED_MODULES = [
    "stream_parser/core/_scan.py",
    "stream_parser/core/state.py",
    "stream_parser/core/_json_scan.py",
    "stream_parser/core/value_run.py",
    "stream_parser/core/parser.py",
    "stream_parser/core/_readers/base.py",
    "stream_parser/core/_readers/plugin.py",
    "stream_parser/core/_readers/text.py",
    "stream_parser/core/_readers/thinking.py",
    "stream_parser/core/_readers/tool.py",
    "stream_parser/core/_readers/tool_base.py",
    "stream_parser/core/_readers/tool_block.py",
    "stream_parser/core/_readers/tool_pending.py",
    "stream_parser/core/_readers/tool_value.py",
    "stream_parser/core/_readers/unknown.py",
]


def _compiling() -> bool:
    return os.environ.get(COMPILE_ENV, "").strip() == "1"


class _CompiledBackend(_orig._BuildMetaBackend):  # type: ignore[misc]
    """setuptools' backend, whose setup call adds the mypyc extensions."""

    def run_setup(self, setup_script: str = "setup.py") -> None:
        # The project has no setup.py: setuptools would call a bare ``setup()``;
        # this one passes the extensions, everything else comes from pyproject.toml.
        from mypyc.build import mypycify
        from setuptools import setup

        # The build environment holds no runtime dependencies (no stubs for lxml,
        # pydantic...): modules outside the compiled ones are read for their types
        # but not reported on; the compiled modules themselves must type-check.
        flags = ["--ignore-missing-imports", "--follow-imports=silent"]
        setup(ext_modules=mypycify([*flags, *COMPILED_MODULES], opt_level="3"))


_compiled = _CompiledBackend()


def get_requires_for_build_wheel(
    config_settings: dict[str, Any] | None = None,
) -> list[str]:
    """Setuptools' wheel requirements, plus mypy (with mypyc) when compiling."""
    requires: list[str] = list(_orig.get_requires_for_build_wheel(config_settings))
    if _compiling():
        requires.append("mypy>=1.10")
    return requires


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    """Build a wheel: pure Python, or with the core compiled when asked to."""
    backend = _compiled if _compiling() else _orig
    name: str = backend.build_wheel(wheel_directory, config_settings, metadata_directory)
    return name
