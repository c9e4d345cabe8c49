"""``--tools SPEC``: load a tool registry from a file or a module, or say in one line why not.

Theory of operation.  A spec names a JSON file of tool descriptions
(``path/to/tools.json``: a list of OpenAI, Anthropic or MCP tools, or an object holding
them under ``tools``, as an MCP ``tools/list`` result does), a Python file
(``path/to/tools.py``), a module (``myproject.tools``) or an attribute of either
(``...:ATTR``).  The file or module is run,
and its tools are collected: from ``ATTR`` (default ``TOOLS``) when given or present,
otherwise every :class:`~stream_parser.tools.Tool` and Pydantic model class the module
defines.  Whatever goes wrong on the way (a missing file, a syntax error, an exception
raised by the module's own code, an attribute that is not tools, a module that defines no
tools) becomes one :class:`~stream_parser.errors.ConfigError` whose message fits on one
line, so that the command prints it instead of a traceback or parses with no tools.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import sys
import traceback
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import BaseModel

from ..errors import ConfigError
from ..tools import Tool, ToolRegistry, as_registry

__all__ = ["load_tools", "one_line"]


def one_line(message: str, limit: int = 400) -> str:
    r"""``message`` on one line: runs of whitespace made one space, cut at ``limit``.

    Example:
        >>> one_line("1 validation error\n  path\n    Field required")
        '1 validation error path Field required'
    """
    flat = " ".join(message.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _failure(exc: BaseException, where: str, package: str) -> str:
    """What went wrong while running a tools file or module, with the line it happened at.

    Args:
        exc: the exception the file or module raised.
        where: how the message names the file or module.
        package: the name of the module the file ran as, or the top-level package of the
            module; code of that module and of the modules under it is the user's.

    Returns:
        One message, which names the last line of the user's code that ran: the line
        that raised, or the one whose call into other code (the standard library, this
        package, a third-party one) raised.
    """
    if isinstance(exc, SyntaxError):
        # str(SyntaxError) already names the file and line: "invalid syntax (t.py, line 3)".
        return f"syntax error in {where}: {exc}"
    at = ""
    # Frames are told apart by the module their code belongs to, not by their files: which
    # library modules are frozen (and so have no file) changes between Python versions.
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        module = frame.f_globals.get("__name__")
        if isinstance(module, str) and (module == package or module.startswith(package + ".")):
            at = f" (at {frame.f_code.co_filename}:{lineno})"
    detail = str(exc)
    name = type(exc).__name__
    return f"{where} raised {name}{': ' + detail if detail else ''}{at}"


def _run_file(target: str) -> ModuleType:
    path = Path(target)
    if not path.is_file():
        raise ConfigError(f"no such tools file: {target}")
    loader_spec = importlib.util.spec_from_file_location(f"_stream_parser_tools_{path.stem}", path)
    if loader_spec is None or loader_spec.loader is None:
        raise ConfigError(f"cannot load {target}")
    module = importlib.util.module_from_spec(loader_spec)
    # Registered before it runs, as an import would: Pydantic resolves the module's
    # annotations through sys.modules.
    sys.modules[loader_spec.name] = module
    try:
        loader_spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        del sys.modules[loader_spec.name]
        failure = _failure(exc, f"tools file {target}", loader_spec.name)
        raise ConfigError(one_line(failure)) from exc
    return module


def _import(target: str) -> ModuleType:
    try:
        return importlib.import_module(target)
    except ImportError as exc:
        raise ConfigError(one_line(f"cannot import tools module {target!r}: {exc}")) from exc
    except (Exception, SystemExit) as exc:
        failure = _failure(exc, f"tools module {target!r}", target.partition(".")[0])
        raise ConfigError(one_line(failure)) from exc


def _load_json(target: str) -> ToolRegistry:
    """The tools of a JSON file: a list of tool descriptions, or an object with ``tools``."""
    path = Path(target)
    if not path.is_file():
        raise ConfigError(f"no such tools file: {target}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"tools file {target} is not valid JSON: {exc.msg} "
            f"at line {exc.lineno}, column {exc.colno}"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(one_line(f"cannot read tools file {target}: {exc}")) from None
    tools = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(tools, list):
        raise ConfigError(
            f"tools file {target} must hold a list of tool descriptions, or an object "
            "with that list under 'tools'"
        )
    try:
        registry = as_registry(tools)
    except ConfigError as exc:
        raise ConfigError(one_line(f"{target}: {exc}")) from exc
    if not len(registry):
        raise ConfigError(f"{target} holds no tools")
    return registry


def load_tools(spec: str) -> ToolRegistry:
    """Load the tools of ``path/to/file.json``, ``path/to/file.py``, ``module`` or ``module:ATTR``.

    A JSON file holds a list of tool descriptions (OpenAI, Anthropic or MCP tools), or an
    object with that list under ``tools`` (an MCP ``tools/list`` result); its tools are
    schema-only, which is all parsing needs.  Invalid JSON is an error naming the line
    and column.

    ``ATTR`` (default ``TOOLS``) may hold tools in any form that
    :func:`~stream_parser.tools.as_registry` accepts: a ``ToolRegistry``, a list of
    ``@tool`` functions, plain functions or Pydantic model classes, or a mapping of name to
    any of these.  If the module has no ``TOOLS``, every ``Tool`` and every Pydantic model
    class defined in it is registered; a class under its name in snake_case, by the
    library's one rule (``ReadFile`` -> ``read_file``, ``HTTPGet`` -> ``http_get``: see
    :func:`~stream_parser.schema.names.tool_name_from_class`).

    A module name is imported from ``sys.path`` as it is; the ``stream-parser`` command
    puts the current directory first on it, as ``python -m`` does.

    Raises:
        ConfigError: the module, file or attribute cannot be loaded (a missing file, a
            syntax error, an exception raised while running it), is not tools, or holds
            no tool.  The message is one line.
    """
    if spec.endswith(".json"):
        return _load_json(spec)
    target, _, attr = spec.partition(":")
    module = _run_file(target) if target.endswith(".py") else _import(target)
    if attr or hasattr(module, "TOOLS"):
        name = attr or "TOOLS"
        if not hasattr(module, name):
            raise ConfigError(f"{spec}: the module has no attribute {name!r}")
        try:
            registry = as_registry(getattr(module, name))
        except ConfigError as exc:
            raise ConfigError(one_line(f"{spec}: {name}: {exc}")) from exc
        if not len(registry):
            raise ConfigError(f"{spec}: {name} holds no tools")
        return registry
    defined: list[Any] = [
        obj
        for obj in vars(module).values()
        if isinstance(obj, Tool)
        or (
            isinstance(obj, type)
            and issubclass(obj, BaseModel)
            and obj is not BaseModel
            and obj.__module__ == module.__name__
        )
    ]
    if not defined:
        raise ConfigError(
            f"{spec} defines no tools: give it a TOOLS list, @tool functions or "
            "Pydantic model classes, or name the attribute that holds them (module:ATTR)"
        )
    try:
        return as_registry(defined)
    except ConfigError as exc:
        raise ConfigError(one_line(f"{spec}: {exc}")) from exc
