"""Milliseconds to turn 200 small tool schemas into argument models.

Run from the repository root::

    python benchmarks/bench_json_schema.py             # 200 tools, best of 5
    python benchmarks/bench_json_schema.py --tools 1000 --repeat 3 --clock cpu

The tools are OpenAI / MCP-style ``parameters`` schemas of a few properties each (a
string, an enum, a bounded integer, an optional nullable field, an array, a nested
object, one in four with ``$defs`` and a ``$ref``), each tool with its own names, so no
cache helps.  Four figures, each the best of ``--repeat`` runs with the garbage
collector off:

* **compile**: :func:`~stream_parser.schema.json_schema.compile_json_schema` for every
  tool -- the schemas checked and compiled, no model class yet (what a registry pays if
  it builds models lazily);
* **+ models**: the same, then ``.model`` of each (the Pydantic classes made);
* **+ first call**: the same, then one validation per tool (Pydantic builds a model's
  validator on its first use);
* **per call**: one more validation of a valid call, in microseconds (the steady state).

The machine may be shared: compare figures from one run, and prefer ``--clock cpu``.
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable
from typing import Any

from stream_parser.schema.json_schema import ArgumentSchema, compile_json_schema


def tool_schema(index: int) -> dict[str, Any]:
    """A small, realistic tool schema whose names depend on ``index``."""
    schema: dict[str, Any] = {
        "type": "object",
        "description": f"Tool number {index}.",
        "properties": {
            f"query_{index}": {"type": "string", "description": "What to look for."},
            "units": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
            "cursor": {"anyOf": [{"type": "string"}, {"type": "null"}]},
            "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 5},
            "filter": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "value": {"type": "number"}},
                "required": ["field"],
                "additionalProperties": False,
            },
        },
        "required": [f"query_{index}"],
        "additionalProperties": False,
    }
    if index % 4 == 0:
        schema["$defs"] = {
            "Range": {
                "type": "object",
                "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
            }
        }
        schema["properties"]["range"] = {"$ref": "#/$defs/Range"}
    return schema


def best(clock: Callable[[], float], repeat: int, run: Callable[[], object]) -> float:
    """The shortest of ``repeat`` runs of ``run``, in seconds, the collector off."""
    times = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        try:
            start = clock()
            run()
            times.append(clock() - start)
        finally:
            gc.enable()
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    options = parser.parse_args()
    clock = time.perf_counter if options.clock == "wall" else time.process_time
    schemas = [tool_schema(index) for index in range(options.tools)]
    calls = [{f"query_{index}": "rain", "limit": "5"} for index in range(options.tools)]

    def compile_all() -> list[ArgumentSchema]:
        return [compile_json_schema(s, tool=f"tool_{i}") for i, s in enumerate(schemas)]

    def with_models() -> None:
        for compiled in compile_all():
            _ = compiled.model

    def with_calls() -> None:
        for compiled, call in zip(compile_all(), calls, strict=True):
            compiled.model.model_validate(call)

    models = [compiled.model for compiled in compile_all()]
    for model, call in zip(models, calls, strict=True):
        model.model_validate(call)

    def steady() -> None:
        for model, call in zip(models, calls, strict=True):
            model.model_validate(call)

    count = options.tools
    print(f"{count} tools, best of {options.repeat} ({options.clock} clock)")
    for label, run in (
        ("compile", compile_all),
        ("+ models", with_models),
        ("+ first call", with_calls),
    ):
        seconds = best(clock, options.repeat, run)
        print(f"  {label:<13} {seconds * 1000:8.1f} ms   {seconds / count * 1e6:8.1f} us/tool")
    per_call = best(clock, options.repeat, steady) / count
    print(f"  {'per call':<13} {per_call * 1e6:8.1f} us")


if __name__ == "__main__":
    main()
