"""The package's floors: imports flow downward only, and the import graph has no circle.

Every import statement of every module of ``stream_parser`` is read with ``ast``, those
inside functions and ``if TYPE_CHECKING:`` blocks included (a lazy import is still a
dependency).  A module may import from its own floor or a lower one; the graph of
imports between modules must have no cycle.  ``docs/architecture.md`` shows the floors.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import stream_parser

PACKAGE = Path(stream_parser.__file__).parent

# Bottom up.  The key is the first component below ``stream_parser``.
FLOORS: tuple[str, ...] = (
    "errors",
    "schema",
    "core",
    "prompts",
    "dialects",
    "tools",
    "llm",
    "agent",
    "encoders",
    "decorators",
    "testing",
    "demo",
    "serve",
    "cli",
)
# The package's front door and ``python -m stream_parser`` sit above everything.
TOP = len(FLOORS)


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _floor(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 1 or parts[1] in ("__main__",):
        return TOP
    return FLOORS.index(parts[1])


def _imports(path: Path) -> set[str]:
    """The ``stream_parser`` modules that a module imports, resolved to module names."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("stream_parser"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("stream_parser"):
                continue
            # ``from .pkg import module`` imports a module, not just a name.
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                if candidate in MODULES:
                    found.add(candidate)
                else:
                    found.add(target)
    found.discard(module)
    return found


MODULES: dict[str, Path] = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_subpackage_has_a_floor() -> None:
    for module in MODULES:
        parts = module.split(".")
        if len(parts) > 1 and parts[1] != "__main__":
            assert parts[1] in FLOORS, f"{module} is on no floor: add it to FLOORS and the docs"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_flow_downward(module: str) -> None:
    floor = _floor(module)
    upward = [
        target
        for target in sorted(_imports(MODULES[module]))
        if target in MODULES and _floor(target) > floor
    ]
    assert not upward, (
        f"{module} (floor {FLOORS[floor] if floor < TOP else 'top'}) imports {upward}"
    )


def test_no_import_cycle() -> None:
    graph = {m: {t for t in _imports(p) if t in MODULES} for m, p in MODULES.items()}
    # Python runs a module's parent packages before the module, so an import of one's
    # own package adds no ordering; it is not a dependency that can close a circle.
    for module in graph:
        graph[module] = {t for t in graph[module] if not module.startswith(t + ".")}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycle = [*stack[stack.index(nxt) :], nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)


# What a dialect may import from the core: the plugin author's kit, the events, the
# configuration and the public XML converter.  Everything else of the core is reached
# through the kit, so that a change inside the core does not ripple into the dialects.
DIALECT_CORE_IMPORTS = frozenset(
    {
        "stream_parser.core.kit",
        "stream_parser.core.events",
        "stream_parser.core.config",
        "stream_parser.core.xml_tools",
        "stream_parser.core.xml_write",
    }
)


def _core_imports(source: str, module: str, package: bool = False) -> set[str]:
    """What ``source`` (the text of ``module``; ``package``: its ``__init__``) imports of the core.

    Each module imported (lazy and ``TYPE_CHECKING`` imports too), and ``module.name`` for
    each private name imported from a core module (a fast builder is not part of the kit).
    """
    parts = (module if package else module.rpartition(".")[0]).split(".")
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("stream_parser.core"))
        elif isinstance(node, ast.ImportFrom):
            base = parts[: len(parts) - node.level + 1] if node.level else []
            target = ".".join([*base, node.module] if node.module else base)
            if not target.startswith("stream_parser.core"):
                continue
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                found.add(candidate if candidate in MODULES else target)
                if alias.name.startswith("_"):
                    found.add(candidate)
    return found


DIALECT_MODULES = sorted(m for m in MODULES if m.startswith("stream_parser.dialects."))


@pytest.mark.parametrize("module", DIALECT_MODULES)
def test_dialects_import_from_the_core_only_the_kit(module: str) -> None:
    path = MODULES[module]
    source = path.read_text(encoding="utf-8")
    outside = sorted(
        _core_imports(source, module, path.name == "__init__.py") - DIALECT_CORE_IMPORTS
    )
    assert not outside, f"{module} imports {outside} from the core (allowed: the kit, ...)"


def test_the_kit_rule_sees_a_private_import_and_a_lazy_one() -> None:
    module = "stream_parser.dialects.hermes"
    source = MODULES[module].read_text(encoding="utf-8")
    assert _core_imports(source, module) <= DIALECT_CORE_IMPORTS
    package = "stream_parser.dialects.kimi"
    assert _core_imports("from ...core._scan import x\n", package, package=True) == {
        "stream_parser.core._scan"
    }
    source += (
        "\n\ndef _late() -> None:\n    from ..core._scan import longest_prefix_suffix\n"
        "    from ..core.events import _fast_param_delta\n"
    )
    assert _core_imports(source, module) - DIALECT_CORE_IMPORTS == {
        "stream_parser.core._scan",
        "stream_parser.core.events._fast_param_delta",
    }


# --- the border of the core and of the schema ---------------------------------------
#
# Public means "in ``__all__``": a module whose dotted path has no component starting
# with ``_`` is public, and its public names are those in its ``__all__``.  A module of
# another floor imports from the core (or from ``schema``) only public modules, and only
# the names in their ``__all__``; the core's internals (``_readers/``, ``_scan``, ...)
# are reached through the kit.  So a change inside the core never ripples beyond it.
# The core itself is a floor above ``schema`` and keeps to the schema's border too.

BORDERED = ("stream_parser.core", "stream_parser.schema")


def _is_private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


# The core's public modules, chosen one by one: a new module of the core is private
# (``_name``) unless a user or a plugin author needs it, and then it is added here.
CORE_PUBLIC_MODULES = frozenset(
    {
        "stream_parser.core",
        "stream_parser.core.chunks",
        "stream_parser.core.config",
        "stream_parser.core.events",
        "stream_parser.core.kit",
        "stream_parser.core.parser",
        "stream_parser.core.plugins",
        "stream_parser.core.state",
        "stream_parser.core.value_run",
        "stream_parser.core.xml_tool_parser",
        "stream_parser.core.xml_tools",
        "stream_parser.core.xml_write",
    }
)


def test_the_core_has_only_its_chosen_public_modules() -> None:
    public = {m for m in MODULES if m.startswith("stream_parser.core") and not _is_private(m)}
    assert public == CORE_PUBLIC_MODULES


def _declared_all(module: str) -> frozenset[str]:
    """The literal ``__all__`` of a module of the package (empty when it has none)."""
    for node in ast.parse(MODULES[module].read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign):
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            value = node.value
            assert isinstance(value, (ast.List, ast.Tuple)), f"{module}.__all__ is no literal"
            return frozenset(ast.literal_eval(value))
    return frozenset()


def _border_crossings(source: str, module: str, package: bool = False) -> list[str]:
    """What ``source`` (the text of ``module``) imports past the core's or schema's border.

    Every import statement counts, lazy and ``TYPE_CHECKING`` ones too: a private module
    of the core or the schema, a name starting with ``_`` from one of their modules, or
    a name that a public module does not list in its ``__all__``.  The core's and the
    schema's own modules may use their floor's internals; other floors may not.
    """
    parts = (module if package else module.rpartition(".")[0]).split(".")
    crossings: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                floor = next((b for b in BORDERED if alias.name.startswith(b + ".")), None)
                if floor and not module.startswith(floor) and _is_private(alias.name):
                    crossings.append(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = parts[: len(parts) - node.level + 1] if node.level else []
            target = ".".join([*base, node.module] if node.module else base)
            floor = next((b for b in BORDERED if (target + ".").startswith(b + ".")), None)
            if floor is None or (module + ".").startswith(floor + "."):
                continue
            if _is_private(target):
                crossings.append(target)
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                if submodule in MODULES:  # ``from ..core import events``: a module
                    if _is_private(submodule):
                        crossings.append(submodule)
                elif alias.name.startswith("_"):
                    crossings.append(submodule)
                elif alias.name not in _declared_all(target):
                    crossings.append(f"{submodule} (not in its __all__)")
    return crossings


EVERY_MODULE = sorted(MODULES)


@pytest.mark.parametrize("module", EVERY_MODULE)
def test_no_floor_imports_a_private_name_of_the_core_or_the_schema(module: str) -> None:
    path = MODULES[module]
    crossings = _border_crossings(
        path.read_text(encoding="utf-8"), module, path.name == "__init__.py"
    )
    assert not crossings, f"{module} imports past the border: {crossings}"


def test_the_border_rule_sees_each_kind_of_crossing() -> None:
    module = "stream_parser.llm.openai"
    assert _border_crossings(MODULES[module].read_text(encoding="utf-8"), module) == []
    source = (
        "from ..core._scan import stop_char\n"  # a private module
        "from ..core.events import _fast_param_delta\n"  # a private name
        "from ..core.kit import Reader\n"  # public, listed
        "from ..core.parser import TYPE_CHECKING\n"  # public module, name not listed
        "from ..core import _readers, events\n"  # a private and a public module
        "from ..schema.coerce import fields_of, _args\n"
        "import stream_parser.core._tables\n"
        "def _late() -> None:\n"
        "    from ..schema.coerce import _convert\n"
    )
    assert _border_crossings(source, module) == [
        "stream_parser.core._scan",
        "stream_parser.core.events._fast_param_delta",
        "stream_parser.core.parser.TYPE_CHECKING (not in its __all__)",
        "stream_parser.core._readers",
        "stream_parser.schema.coerce._args",
        "stream_parser.core._tables",
        "stream_parser.schema.coerce._convert",
    ]
    # Inside its own floor a module may use the floor's internals.
    assert _border_crossings("from ._scan import stop_char\n", "stream_parser.core.kit") == []


def _defined_in(module: str, name: str) -> str:
    """The module whose top level defines ``name``, following ``from X import name``."""
    path = MODULES[module]
    parts = (module if path.name == "__init__.py" else module.rpartition(".")[0]).split(".")
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                return module
        elif isinstance(node, ast.Assign):
            if any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
                return module
        elif isinstance(node, ast.AnnAssign):
            if isinstance(node.target, ast.Name) and node.target.id == name:
                return module
        elif isinstance(node, ast.ImportFrom):
            base = parts[: len(parts) - node.level + 1] if node.level else []
            target = ".".join([*base, node.module] if node.module else base)
            for alias in node.names:
                if (alias.asname or alias.name) == name and target in MODULES:
                    return _defined_in(target, alias.name)
    raise AssertionError(f"{module} neither defines nor imports {name}")


def _public_names() -> list[tuple[str, str]]:
    """``(module, name)``: each name of ``core.__all__`` and of the package's ``__all__``."""
    import stream_parser.core as core

    served: dict[str, str] = stream_parser._FACE_FROM  # the face's lazy table
    names = [("stream_parser.core", name) for name in core.__all__]
    names += [(served[name], name) for name in stream_parser.__all__ if name in served]
    return names


@pytest.mark.parametrize(("module", "name"), _public_names())
def test_every_public_name_is_defined_in_a_public_module(module: str, name: str) -> None:
    home = _defined_in(module, name)
    assert not _is_private(home), f"{name} (in {module}) is defined in private {home}"


# The checkout's docs/, beside tests/ (the package may be an installed wheel elsewhere).
DOCS_DIR = Path(__file__).resolve().parent.parent / "docs"
DOCS = "\n".join(path.read_text(encoding="utf-8") for path in sorted(DOCS_DIR.glob("*.md")))


def test_the_docs_are_found() -> None:
    assert "## The core's border" in DOCS


@pytest.mark.parametrize(("module", "name"), _public_names())
def test_every_public_name_is_documented(module: str, name: str) -> None:
    assert re.search(rf"\b{re.escape(name)}\b", DOCS), f"{name} is in no page of docs/"
