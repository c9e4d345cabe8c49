"""The alternative names of the parser's API: ``ToolCallEvent.raw_xml``, ``add_plugin``."""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import BaseModel

from stream_parser import FencedCodePlugin, StreamToolParser, ToolCallEvent


class ReadFile(BaseModel):
    path: str


TOOL_MODEL_MAP = {"read_file": ReadFile}


def test_raw_xml_is_the_raw_text_of_the_call() -> None:
    parser = StreamToolParser(tool_registry=TOOL_MODEL_MAP)
    text = "<read_file>\n<path>a.py</path>\n</read_file>"
    calls = [e for e in parser.feed(text) + parser.close() if isinstance(e, ToolCallEvent)]
    assert [call.raw_xml for call in calls] == [text]
    assert calls[0].raw_xml == calls[0].raw


def test_raw_xml_is_read_only_and_not_a_field() -> None:
    event = ToolCallEvent(tool_name="read_file", tool_instance=ReadFile(path="a"), raw="<x/>")
    # (A frozen, slotted dataclass refuses the assignment with a TypeError on some
    # Pythons, an AttributeError on others.)
    with pytest.raises((AttributeError, TypeError)):
        event.raw_xml = "other"  # type: ignore[misc]
    assert event.raw_xml == "<x/>"
    assert "raw_xml" not in {field.name for field in dataclasses.fields(event)}
    assert dataclasses.replace(event, raw="<y/>").raw_xml == "<y/>"


def test_add_plugin_is_use() -> None:
    parser = StreamToolParser(tool_registry=TOOL_MODEL_MAP)
    plugin = FencedCodePlugin()
    assert parser.add_plugin(plugin) is parser
    assert parser.plugins == (plugin,)
    events = parser.feed("```py\nx = 1\n```") + parser.close()
    assert [e.kind for e in events] == ["code_block_delta", "code_block"]
