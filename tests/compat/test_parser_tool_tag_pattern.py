"""``ParserConfig.tool_tag_pattern``: which unknown tools' calls are reported.

Each input runs whole, one character at a time and split at every position.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from stream_parser import ConfigError, ParseErrorEvent, ParserConfig, StreamToolParser
from tests.helpers import assert_all_splittings
from tests.tools_fixture import TOOLS, summary

DESIGN_PATTERN = re.compile(r"<([a-zA-Z0-9_]+)>")


def factory(pattern: Any) -> Any:
    return lambda: StreamToolParser(TOOLS, config=ParserConfig(tool_tag_pattern=pattern))


def reported(events: list[Any]) -> list[str]:
    return [e.tool_name for e in events if isinstance(e, ParseErrorEvent)]


def test_the_pattern_turns_unknown_tools_on() -> None:
    config = ParserConfig(tool_tag_pattern=DESIGN_PATTERN)
    assert config.report_unknown_tools
    assert config.tool_tag_pattern is DESIGN_PATTERN
    assert ParserConfig(tool_tag_pattern="<x>").tool_tag_pattern == re.compile("<x>")
    assert not ParserConfig().report_unknown_tools


def test_the_common_pattern_reports_calls_and_never_html_or_prose() -> None:
    text = (
        "<div><p>hi</p></div> a <b> c "
        "<open_doc><path>a.md</path></open_doc>"
        " <ul><li>x</li></ul> <note>just prose</note>"
    )
    events = assert_all_splittings(factory(DESIGN_PATTERN), text)
    assert reported(events) == ["open_doc"]
    assert "".join(e.text for e in events if e.kind == "text") == text  # type: ignore[attr-defined]


def test_a_pattern_limits_the_names() -> None:
    text = "<mcp_search><q>x</q></mcp_search><open_doc><path>a</path></open_doc>"
    assert reported(assert_all_splittings(factory("<mcp_[a-z_]+>"), text)) == ["mcp_search"]
    # A pattern of the bare name works too.
    assert reported(assert_all_splittings(factory(r"open_\w+"), text)) == ["open_doc"]
    assert reported(assert_all_splittings(factory("nothing"), text)) == []


def test_registered_tools_still_run() -> None:
    text = "<read_file><path>a</path></read_file>"
    events = assert_all_splittings(factory(DESIGN_PATTERN), text)
    assert summary(events)[-1][0] == "call"


@pytest.mark.parametrize("pattern", ["(unclosed", re.compile(b"<x>"), 42])
def test_a_bad_pattern_is_a_config_error(pattern: Any) -> None:
    with pytest.raises(ConfigError, match="tool_tag_pattern"):
        ParserConfig(tool_tag_pattern=pattern)
