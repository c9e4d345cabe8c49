"""A dialect written from docs/dialects.md ("Adding a dialect") alone passes check_dialect.

The format: ``<<<NAME|key=value|key=value>>>``. The reader is the kit's ``Reader`` with a
handler table (the name and each key are held until they end; values stream as
parameter deltas), run by a ``ReaderPlugin``, registered as one record.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from stream_parser import ParserConfig, StreamToolParser
from stream_parser.core import _dialect_registry as dialect_registry
from stream_parser.core.kit import (
    CallContext,
    ModelPattern,
    PluginBlock,
    Reader,
    ReaderPlugin,
    register,
)
from stream_parser.dialects import Dialect, dialect_for_model
from stream_parser.testing import check_dialect
from stream_parser.testing.fixtures import TOOLS

NAME, KEY, VALUE, MALFORMED = range(4)


class PipeReader(Reader):
    """``NAME|key=value|…`` between ``<<<`` and ``>>>``."""

    malformed_state = MALFORMED

    def __init__(self, call: CallContext) -> None:
        super().__init__(call)
        self.state = NAME
        self.handlers = {NAME: self._name, KEY: self._key, VALUE: self._value}
        self.tool = ""
        self.key = ""
        self.args: dict[str, str] = {}

    def _name(self, buf: str, pos: int, base: int, out: list[Any]) -> tuple[int, bool]:
        bar = buf.find("|", pos)
        if bar < 0:
            return pos, True  # held until the name ends
        self.tool = buf[pos:bar].strip()
        if not self.tool:
            return self.malformed("the tool's name is empty")
        if self.tool in self.call.tool_registry:
            self.announced = True
            out.append(self.call.start(self.tool, (base + pos, base + bar)))
        self.state = KEY
        return bar + 1, False

    def _key(self, buf: str, pos: int, base: int, out: list[Any]) -> tuple[int, bool]:
        equals = buf.find("=", pos)
        if equals < 0:
            return pos, True
        self.key = buf[pos:equals].strip()
        self.args[self.key] = ""
        self.state = VALUE
        return equals + 1, False

    def _value(self, buf: str, pos: int, base: int, out: list[Any]) -> tuple[int, bool]:
        bar = buf.find("|", pos)
        end = len(buf) if bar < 0 else bar
        if end > pos:
            self.args[self.key] += buf[pos:end]
            if self.announced and self.call.emit_deltas:
                span = (base + pos, base + end)
                out.append(self.call.param_delta(self.tool, self.key, buf[pos:end], span))
        if bar < 0:
            return end, True
        self.state = KEY
        return bar + 1, False

    def finish(self, block: PluginBlock) -> list[Any]:
        if self.state not in (KEY, VALUE) or self.held.strip():
            return self.malformed_call(self.why or "the call is not complete", block)
        model = self.call.tool_registry.get(self.tool)
        if model is None:
            return self.call.unknown_tool(self.tool, block)
        return self.call.call(self.tool, self.call.validate(self.tool, model, self.args), block)


class PipePlugin(ReaderPlugin):
    name = "pipe"
    start_tags = ("<<<",)
    end_tag = ">>>"
    reader = PipeReader


class PipeDialect(Dialect):
    name = "pipe"
    title = "<<<NAME|key=value>>>"
    plugin_key = "pipe"
    model_patterns = (ModelPattern(r"pipe[-_. ]?coder", priority=2500),)

    def make_plugin(self, names: tuple[str, ...]) -> PipePlugin:
        return PipePlugin()

    def format_call(self, tool_name: str, args: Mapping[str, Any]) -> str:
        return "<<<" + "|".join([tool_name, *(f"{k}={v}" for k, v in args.items())]) + ">>>"

    def _instructions(self) -> str:
        return "xml_instructions"


@pytest.fixture(autouse=True)
def _registered() -> Iterator[None]:
    saved = dict(dialect_registry._DIALECTS)
    register(PipeDialect().record())
    yield
    dialect_registry._DIALECTS.clear()
    dialect_registry._DIALECTS.update(saved)


CASES = [
    {
        "name": "two_calls",
        "text": "Looking.<<<read_file|path=a>b.py>>> then <<<search|query=x|max_results=2>>>",
        "calls": [["read_file", {"path": "a>b.py"}], ["search", {"query": "x", "max_results": 2}]],
        "errors": [],
        "text_out": "Looking. then",
        "framing": [" "],  # whitespace before a call, in any dialect but XML
    },
    {
        "name": "unknown_and_malformed",
        "text": "<<<nope|a=1>>><<<read_file>>>",
        "calls": [],
        "errors": ["unknown_tool", "malformed_tool"],
        "text_out": "<<<nope|a=1>>><<<read_file>>>",
    },
]


def test_the_template_dialect_passes_check_dialect() -> None:
    events = check_dialect("pipe", CASES)
    assert [e.kind for e in events["two_calls"]][:3] == [
        "text",
        "tool_call_start",
        "tool_param_delta",
    ]
    assert dialect_for_model("acme/Pipe-Coder-7B") is not None
    assert dialect_for_model("acme/Pipe-Coder-7B").dialect == "pipe"  # type: ignore[union-attr]
    written = PipeDialect().format_call("read_file", {"path": "c.py"})
    parser = StreamToolParser(TOOLS, config=ParserConfig(dialect="pipe"))
    assert parser.feed(written)[-1].kind == "tool_call"


class FirstPieceReader(PipeReader):
    """Wrong on purpose: takes the name from the first piece it is fed, not held."""

    def _name(self, buf: str, pos: int, base: int, out: list[Any]) -> tuple[int, bool]:
        bar = buf.find("|", pos)
        self.tool = buf[pos : bar if bar >= 0 else len(buf)]
        self.state = KEY if bar >= 0 else VALUE
        self.key = "" if bar >= 0 else "path"
        self.args.setdefault("path", "")
        return (bar + 1 if bar >= 0 else len(buf)), False


def test_a_reader_that_depends_on_the_chunking_fails_with_the_chunking() -> None:
    PipePlugin.reader = FirstPieceReader
    try:
        with pytest.raises(AssertionError) as failed:
            check_dialect("pipe", CASES[:1])
    finally:
        PipePlugin.reader = PipeReader
    message = str(failed.value)
    assert "case 'two_calls' reads differently one character at a time" in message
    assert "event 1:" in message and "whole text gave" in message


def test_check_dialect_streams_the_markers_a_record_lists_as_one_token_each(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # DeepSeek's tool separator is no plugin's tag: only its record names it.
    fed: list[str] = []

    class Recording(StreamToolParser):
        def feed(self, chunk: str) -> list[Any]:
            fed.append(chunk)
            return super().feed(chunk)

    monkeypatch.setattr("stream_parser.testing.dialects.StreamToolParser", Recording)
    sep = "<\uff5ctool\u2581sep\uff5c>"
    begin, end = "<\uff5ctool\u2581call\u2581begin\uff5c>", "<\uff5ctool\u2581call\u2581end\uff5c>"
    text = (
        f"<\uff5ctool\u2581calls\u2581begin\uff5c>{begin}read_file{sep}"
        f'{{"path": "a"}}{end}<\uff5ctool\u2581calls\u2581end\uff5c>'
    )
    case = {"name": "one", "text": text, "calls": [["read_file", {"path": "a"}]]}
    check_dialect("deepseek", [case], config={"start_in_thinking": False})
    assert sep in fed and begin in fed and end in fed
