"""The recorded replies the proxy is tested on, and what ``parse_stream`` makes of each.

Every case of ``tests/fixtures/dialects/*/cases.json`` (seven families, plus xml, hermes
and qwen3_coder), with the tools its family's tests parse it with, sent as the OpenAI
``tools`` a client would send, and a published model name of the family (xml has none:
its proxy is told ``--dialect xml``).

:func:`expected` is the oracle: the message an OpenAI client must end up with, computed
from the same chunks by ``parse_stream`` with a registry read from the same JSON tools,
independently of the chunk encoder.  Text events are the content (a call that cannot run
is delivered there as its text), thinking is the reasoning, and each call is its name and
``model_dump(mode="json", by_alias=True, exclude_unset=True)``.

:func:`cuts` cuts a reply's text the ways a server streams it: whole, at every marker
(each marker one chunk, as a tokenizer sends special tokens), one character at a time.
"""

from __future__ import annotations

import importlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

from stream_parser import ParserConfig, ThinkingEvent, ToolCallEvent, parse_stream
from stream_parser.dialects.detect import dialect_for_model, with_reasoning
from stream_parser.testing import merge_deltas
from stream_parser.tools import ToolRegistry, as_registry

__all__ = ["CASES", "MODELS", "Expected", "ServeCase", "cuts", "expected", "one_per_dialect"]

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "dialects"

Start = Literal["auto", "yes", "no"]

# A published model of each family, as a server lists it; None: no family writes it.
MODELS: dict[str, str | None] = {
    "deepseek": "deepseek-ai/DeepSeek-V3.1",
    "gemma4": "google/gemma-4-31B-it",
    "glm": "zai-org/GLM-4.5",
    "gpt_oss": "openai/gpt-oss-20b",
    "kimi": "moonshotai/Kimi-K2-Instruct-0905",
    "llama": "meta-llama/Llama-3.3-70B-Instruct",
    "mistral": "mistralai/Mistral-Small-3.2-24B-Instruct-2506",
    "hermes": "NousResearch/Hermes-3-Llama-3.1-8B",
    "qwen3_coder": "Qwen/Qwen3-Coder-30B-A3B-Instruct",
    "xml": None,
}

# The tool models each family's tests parse its fixtures with (module, attribute).
_TOOLS_OF: dict[str, tuple[str, str]] = {
    "deepseek": ("tests.dialects.test_deepseek", "FIXTURE_TOOLS"),
    "gemma4": ("tests.dialects.test_gemma4", "ALL_TOOLS"),
    "glm": ("tests.dialects.test_glm", "ALL_TOOLS"),
    "gpt_oss": ("tests.dialects.test_gpt_oss", "FIXTURE_TOOLS"),
    "kimi": ("stream_parser.testing.fixtures", "TOOLS"),
    "llama": ("tests.dialects.test_llama", "FIXTURE_TOOLS"),
    "mistral": ("tests.dialects.test_mistral", "FIXTURE_TOOLS"),
    "hermes": ("stream_parser.testing.fixtures", "TOOLS"),
    "qwen3_coder": ("stream_parser.testing.fixtures", "TOOLS"),
    "xml": ("stream_parser.testing.fixtures", "TOOLS"),
}

# Families whose tests read a reply as starting outside reasoning unless a case says so.
_STARTS_OUTSIDE = frozenset({"deepseek", "kimi"})

# Markers of every family: each is one chunk in the marker cut.
_BAR = "\uff5c"  # the full-width bar of DeepSeek's and Kimi's markers
_MARKERS = re.compile(
    rf"<{_BAR}[^{_BAR}<>]*{_BAR}>|</?{_BAR}DSML{_BAR}|<\|[^|<>]*\|>|<\|[a-z_]+>|<[a-z_]+\|>"
    r"|\[[A-Z_/]+\]|</?[A-Za-z_][\w=.-]*>"
)


@dataclass(frozen=True)
class ServeCase:
    """One recorded reply, as a request to the proxy asks for it."""

    dialect: str
    name: str
    text: str
    tools: tuple[dict[str, Any], ...]  # OpenAI ``tools``
    start: Start  # --start-in-reasoning

    @property
    def id(self) -> str:
        return f"{self.dialect}-{self.name}"

    @property
    def model(self) -> str:
        return MODELS[self.dialect] or "local"

    @property
    def proxy_options(self) -> tuple[str, ...]:
        options: tuple[str, ...] = ()
        if MODELS[self.dialect] is None:
            options += ("--dialect", self.dialect)
        if self.start != "auto":
            options += ("--start-in-reasoning", self.start)
        return options


@dataclass(frozen=True)
class Expected:
    """The message a client must get: content, reasoning and calls (name, arguments)."""

    content: str
    reasoning: str
    calls: list[tuple[str, Any]]


def _tools(dialect: str) -> tuple[dict[str, Any], ...]:
    module, name = _TOOLS_OF[dialect]
    models: dict[str, type[BaseModel]] = getattr(importlib.import_module(module), name)
    return tuple(ToolRegistry(models).to_openai())


def _start(dialect: str, case: dict[str, Any]) -> Start:
    config = case.get("config") or {}
    if "start_in_thinking" in config:
        value = config["start_in_thinking"]
        return "auto" if value is None else "yes" if value else "no"
    return "no" if dialect in _STARTS_OUTSIDE else "auto"


def _load() -> list[ServeCase]:
    found = []
    for dialect in MODELS:
        data = json.loads((FIXTURES / dialect / "cases.json").read_text(encoding="utf-8"))
        tools = _tools(dialect)
        for case in data["cases"] if isinstance(data, dict) else data:
            text = case["text"]
            if "file" in case:
                text = (FIXTURES / dialect / case["file"]).read_text(encoding="utf-8")
            found.append(ServeCase(dialect, case["name"], text, tools, _start(dialect, case)))
    return found


CASES: list[ServeCase] = _load()


def one_per_dialect() -> list[ServeCase]:
    """The first case of each family that makes a call (the default suite's set)."""
    picked: dict[str, ServeCase] = {}
    for case in CASES:
        if case.dialect not in picked and expected(case, [case.text]).calls:
            picked[case.dialect] = case
    return list(picked.values())


def cuts(text: str) -> dict[str, list[str]]:
    """``text`` streamed whole, cut at every marker, and one character at a time."""
    pieces: list[str] = []
    at = 0
    for match in _MARKERS.finditer(text):
        pieces += [text[at : match.start()], match.group()]
        at = match.end()
    pieces.append(text[at:])
    return {
        "whole": [text],
        "markers": [p for p in pieces if p],
        "chars": list(text),
    }


def config_of(case: ServeCase) -> ParserConfig:
    """The parser configuration the proxy's options and the model's name give."""
    start = {"auto": None, "yes": True, "no": False}[case.start]
    config = ParserConfig(dialect=case.dialect, start_in_thinking=start)
    found = dialect_for_model(case.model)
    return config if found is None else with_reasoning(config, found)


def expected(case: ServeCase, pieces: list[str]) -> Expected:
    """What ``parse_stream`` gives for ``pieces`` sent as chunks' ``delta.content``."""
    registry = as_registry(list(case.tools))
    chunks = [{"choices": [{"index": 0, "delta": {"content": p}}]} for p in pieces]
    events = merge_deltas(list(parse_stream(chunks, registry, config=config_of(case))))
    return Expected(
        content="".join(e.text for e in events if e.kind == "text"),  # type: ignore[attr-defined]
        reasoning="".join(e.content for e in events if isinstance(e, ThinkingEvent)),
        calls=[
            (
                e.tool_name,
                e.tool_instance.model_dump(mode="json", by_alias=True, exclude_unset=True),
            )
            for e in events
            if isinstance(e, ToolCallEvent)
        ],
    )
