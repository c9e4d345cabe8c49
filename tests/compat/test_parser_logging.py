"""Parse logs: state changes, errors and recoveries at DEBUG on the ``stream_parser`` logger."""

from __future__ import annotations

import logging

import pytest

from stream_parser import StreamToolParser
from tests.tools_fixture import TOOLS

REPLY = (
    "<thinking>plan</thinking>ok "
    "<read_file><path>a</path></read_file>"
    "<read_file><path>b</path>stray text</read_file>"
    "<execute_command><command>ls"
)


def parse(reply: str) -> None:
    parser = StreamToolParser(tool_registry=TOOLS)
    for char in reply:
        parser.feed(char)
    parser.close()


def test_debug_records_state_changes_errors_and_recoveries(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="stream_parser")
    parse(REPLY)
    messages = [r.getMessage() for r in caplog.records if r.name.startswith("stream_parser")]
    assert all(r.levelno == logging.DEBUG for r in caplog.records)
    assert any("TEXT -> THINKING" in m for m in messages)
    assert any("THINKING -> TEXT" in m for m in messages)
    assert any("TEXT -> TOOL" in m for m in messages)
    assert any(m.startswith("malformed_tool") for m in messages)
    assert any(m.startswith("recovered") for m in messages)
    assert any(m.startswith("unclosed_tool") for m in messages)
    assert any("-> CLOSED" in m for m in messages)


def test_nothing_at_info_or_above_for_any_model_output(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="stream_parser")
    parse(REPLY + "<thinking>never closed <<<>>> </read_file>")
    assert caplog.records == []


def test_the_logger_is_asked_per_state_change_not_per_chunk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    logger = logging.getLogger("stream_parser.core.parser")
    asked = []
    real = logger.isEnabledFor

    def counting(level: int) -> bool:
        asked.append(level)
        return real(level)

    monkeypatch.setattr(logger, "isEnabledFor", counting)

    def asks(chunks: int) -> int:
        asked.clear()
        parser = StreamToolParser(tool_registry=TOOLS)
        for _ in range(chunks):
            parser.feed("plain text, a < b ")
        parser.feed("<thinking>x</thinking>")
        parser.close()
        return len(asked)

    assert asks(10) == asks(1000)


def test_a_logger_enabled_later_is_heard_from_the_next_state_change(
    caplog: pytest.LogCaptureFixture,
) -> None:
    parser = StreamToolParser(tool_registry=TOOLS)
    parser.feed("text")
    caplog.set_level(logging.DEBUG, logger="stream_parser")
    parser.feed("<thinking>x</thinking> <read_file><path>junk")
    parser.close()
    messages = [r.getMessage() for r in caplog.records]
    assert any("TEXT -> THINKING" in m for m in messages)
    assert any(m.startswith("unclosed_tool") for m in messages)
