"""Milliseconds from an MCP tool list of 200 tools to a registry, its descriptions, a parser.

Run from the repository root::

    python benchmarks/bench_tool_schemas.py              # 200 tools, best of 5
    python benchmarks/bench_tool_schemas.py --tools 1000 --clock cpu

The tools are the schemas of the test corpus (``tests/schema/json_schema_corpus.py``:
OpenAI's and Anthropic's examples, MCP servers' tools), repeated under new names as MCP
``tools/list`` entries, so no cache helps.  Each figure is the best of ``--repeat`` runs
with the garbage collector off, on a fresh list each run:

* **registry**: ``ToolRegistry(tools)`` -- every schema checked and compiled, no model
  class yet;
* **+ to_openai**: the same, then ``to_openai()`` and ``to_mcp()`` (the schemas as
  given: still no model);
* **+ usage text**: the same, then ``xml_usage()`` (describing the parameters builds
  each argument model);
* **+ parser**: the registry, then the first ``StreamToolParser`` over it (which reads
  every model: ``core/_tables.py``).

Then, for reference, the same count of *small* tools (three fields each, with
descriptions) made the two ways a library can take a tool's arguments:

* **create_model**: one Pydantic ``create_model`` per tool, nothing else;
* **+ regenerated schema**: the same, then each model's JSON Schema generated again
  (``model_json_schema()``), as a tool made from a model (``Tool.from_model``) must do to
  be listed; a tool from a JSON Schema sends the schema it was given instead;
* **from JSON Schema**: ``ToolRegistry`` of the same tools as MCP entries, then
  ``to_openai()`` and the first parser (which builds every model).

The machine may be shared: compare figures from one run, and prefer ``--clock cpu``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pydantic import Field, create_model

from benchmarks.bench_json_schema import best  # the repository is on the path now
from stream_parser import StreamToolParser
from stream_parser.tools import ToolRegistry
from tests.schema.json_schema_corpus import CORPUS


def tool_list(count: int, run: int) -> list[dict[str, Any]]:
    """``count`` MCP tool entries, named apart by ``run`` so that no cache is reused."""
    schemas = list(CORPUS.items())
    entries = []
    for index in range(count):
        source, schema = schemas[index % len(schemas)]
        entries.append(
            {
                "name": f"{source}_{run}_{index}".replace("/", "_"),  # an XML tag name
                "description": f"{source}, copy {index}.",
                "inputSchema": schema,
            }
        )
    return entries


def on_fresh_lists(
    clock: Callable[[], float], repeat: int, count: int, run: Callable[[list[Any]], object]
) -> float:
    """The shortest of ``repeat`` runs of ``run``, each on a tool list made beforehand."""
    lists = iter([tool_list(count, attempt) for attempt in range(repeat)])
    return best(clock, repeat, lambda: run(next(lists)))


SMALL_FIELDS: dict[str, Any] = {
    "path": (str, Field(description="The file to read.")),
    "limit": (int, Field(default=100, description="The most lines to return.")),
    "follow": (bool | None, Field(default=None, description="Follow symbolic links.")),
}
SMALL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "path": {"type": "string", "description": "The file to read."},
        "limit": {"type": "integer", "default": 100, "description": "The most lines to return."},
        "follow": {"type": ["boolean", "null"], "description": "Follow symbolic links."},
    },
    "required": ["path"],
}


def small_models(count: int) -> list[Any]:
    """``count`` argument models of three fields, one ``create_model`` each."""
    return [create_model(f"Small{index}", **SMALL_FIELDS) for index in range(count)]


def reference(clock: Callable[[], float], name: str, repeat: int, count: int) -> None:
    """Small tools: create_model alone, with regenerated schemas, and from JSON Schema."""

    def regenerated() -> None:
        for model in small_models(count):
            model.model_json_schema()

    lists = iter(
        [
            [
                {
                    "name": f"small_{attempt}_{i}",
                    "description": "Read.",
                    "inputSchema": SMALL_SCHEMA,
                }
                for i in range(count)
            ]
            for attempt in range(repeat)
        ]
    )

    def from_schema() -> None:
        made = ToolRegistry(next(lists))
        made.to_openai()
        StreamToolParser(made)

    print(f"{count} small tools (3 fields), best of {repeat} ({name} clock)")
    for label, run in (
        ("create_model", lambda: small_models(count)),
        ("+ regenerated schema", regenerated),
        ("from JSON Schema", from_schema),
    ):
        seconds = best(clock, repeat, run)
        print(f"  {label:<21} {seconds * 1000:8.1f} ms   {seconds / count * 1e6:8.1f} us/tool")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    options = parser.parse_args()
    clock = time.perf_counter if options.clock == "wall" else time.process_time

    def registry(tools: list[Any]) -> ToolRegistry:
        return ToolRegistry(tools)

    def listed(tools: list[Any]) -> ToolRegistry:
        made = registry(tools)
        made.to_openai()
        made.to_mcp()
        return made

    def described(tools: list[Any]) -> None:
        listed(tools).xml_usage()

    def parsed(tools: list[Any]) -> None:
        StreamToolParser(registry(tools))

    count = options.tools
    print(f"{count} tools, best of {options.repeat} ({options.clock} clock)")
    for label, run in (
        ("registry", registry),
        ("+ to_openai", listed),
        ("+ usage text", described),
        ("+ parser", parsed),
    ):
        seconds = on_fresh_lists(clock, options.repeat, count, run)
        print(f"  {label:<13} {seconds * 1000:8.1f} ms   {seconds / count * 1e6:8.1f} us/tool")
    reference(clock, options.clock, options.repeat, count)


if __name__ == "__main__":
    main()
