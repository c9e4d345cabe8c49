"""A custom ``xml_parser=``: a subclass's own ``parse_tool_xml`` builds the calls."""

from __future__ import annotations

import re
from typing import Any

import pytest
from pydantic import BaseModel

from stream_parser import ConfigError, StreamToolParser, ToolCallEvent, XMLToolParser
from tests.helpers import assert_all_splittings
from tests.tools_fixture import TOOLS, ReadFile, summary


class UpperParser(XMLToolParser):
    """Reads ``<path>`` with a regular expression and upper-cases it; records each call."""

    def __init__(self, tool_registry: Any) -> None:
        super().__init__(tool_registry)
        self.seen: list[tuple[str, str]] = []

    def parse_tool_xml(self, xml_content: str, tool_name: str) -> BaseModel | None:
        self.seen.append((xml_content, tool_name))
        match = re.search(r"<path>(.*?)</path>", xml_content, re.S)
        if match is None or match.group(1) == "bad":
            return None
        return ReadFile(path=match.group(1).upper())


CALL = "<read_file><path>a.py</path></read_file>"


def test_the_override_builds_each_call_from_its_whole_text() -> None:
    xml_parser = UpperParser(TOOLS)
    parser = StreamToolParser(TOOLS, xml_parser=xml_parser)
    events = parser.feed("x " + CALL) + parser.close()
    assert summary(events) == [
        ("text", "x "),
        ("start", "read_file"),
        ("param", "path", "a.py"),  # the deltas stream as always
        ("call", "read_file", ReadFile(path="A.PY")),
    ]
    assert xml_parser.seen == [(CALL, "read_file")]
    assert parser.xml_parser is xml_parser


def test_whatever_the_chunking() -> None:
    text = "a" + CALL + "b<read_file><path>bad</path></read_file>"
    events = assert_all_splittings(
        lambda: StreamToolParser(TOOLS, xml_parser=UpperParser(TOOLS)), text
    )
    assert [e for e in summary(events) if e[0] in ("call", "error")] == [
        ("call", "read_file", ReadFile(path="A.PY")),
        ("error", "invalid_params"),  # None: the call is invalid, its text is text
    ]


def test_an_override_that_calls_the_built_in_one() -> None:
    class Logged(XMLToolParser):
        def parse_tool_xml(self, xml_content: str, tool_name: str) -> BaseModel | None:
            instance = super().parse_tool_xml(xml_content, tool_name)
            assert isinstance(instance, ReadFile)
            return ReadFile(path="logged/" + instance.path)

    parser = StreamToolParser(TOOLS, xml_parser=Logged(TOOLS))
    calls = [e for e in parser.feed(CALL) + parser.close() if isinstance(e, ToolCallEvent)]
    assert calls[0].tool_instance == ReadFile(path="logged/a.py")
    assert Logged(TOOLS).extract_parameters(CALL, "read_file") == {"path": "a.py"}


def test_an_exception_in_the_override_is_an_invalid_call() -> None:
    class Broken(XMLToolParser):
        def parse_tool_xml(self, xml_content: str, tool_name: str) -> BaseModel | None:
            raise ValueError("cannot read it")

    parser = StreamToolParser(TOOLS, xml_parser=Broken(TOOLS))
    events = parser.feed(CALL) + parser.close()
    errors = [e for e in events if e.kind == "error"]
    assert [e.error_type for e in errors] == ["invalid_params"]  # type: ignore[attr-defined]
    assert "ValueError: cannot read it" in errors[0].message  # type: ignore[attr-defined]
    assert "".join(e.text for e in events if e.kind == "text") == CALL  # type: ignore[attr-defined]


def test_the_private_hooks_alone_are_refused() -> None:
    class Hooks(XMLToolParser):
        def _extract_parameters(self, inner_xml: str) -> dict[str, Any]:
            return {}

        def _convert_parameter_types(self, params: dict[str, Any], tool_name: str) -> Any:
            return params

    with pytest.raises(
        ConfigError, match="_extract_parameters and _convert_parameter_types"
    ) as err:
        StreamToolParser(TOOLS, xml_parser=Hooks(TOOLS))
    assert "parse_tool_xml" in str(err.value)


def test_the_built_in_parser_is_used_as_before() -> None:
    parser = StreamToolParser(TOOLS, xml_parser=XMLToolParser(TOOLS))
    calls = [e for e in parser.feed(CALL) + parser.close() if isinstance(e, ToolCallEvent)]
    assert calls[0].tool_instance == ReadFile(path="a.py")
