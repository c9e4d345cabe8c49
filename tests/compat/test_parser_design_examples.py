"""The published examples of the parser's API, run as written (only the imports differ).

Each example is copied as its users wrote it: the basic use (a handler that prints
what a stream holds, called for one stream after another with one parser), the custom
configuration, and the plugin.  The imports are the only lines that change: the names
come from ``stream_parser``.
"""

from __future__ import annotations

# --- the imports (the only lines that differ from the examples) -------------------------
from collections.abc import Generator

import pytest
from pydantic import BaseModel

from stream_parser import (
    CodeBlockEvent,
    ParseErrorEvent,
    ParseEvent,
    ParsePlugin,
    ParserConfig,
    ParseState,
    StreamToolParser,
    TextOutputEvent,
    ThinkingEvent,
    ToolCallEvent,
)

# -------------------------------------------------------------------------------------------


class ReadFile(BaseModel):
    path: str


class ExecuteCommand(BaseModel):
    command: str
    requires_approval: bool = False


TOOL_MODEL_MAP = {"read_file": ReadFile, "execute_command": ExecuteCommand}
"""The application's own tool map (the examples import theirs)."""


def llm_stream(text: str, size: int = 3) -> Generator[tuple[str, dict[str, object]], None, None]:
    """A model's stream as the examples take it: ``(content, metadata)`` pairs."""
    for start in range(0, len(text), size):
        yield text[start : start + size], {}


# --- the basic use, as written -----------------------------------------------------------

# 创建解析器
parser = StreamToolParser(tool_registry=TOOL_MODEL_MAP)


# 解析流式响应
def handle_llm_stream(llm_stream):  # type: ignore[no-untyped-def]
    for event in parser.parse_stream(llm_stream):
        if isinstance(event, TextOutputEvent):
            print(f"Text: {event.text}")
        elif isinstance(event, ThinkingEvent):
            print(f"Thinking: {event.content}")
        elif isinstance(event, ToolCallEvent):
            print(f"Tool Call: {event.tool_name}")
            # 执行工具...
        elif isinstance(event, ParseErrorEvent):
            print(f"Parse Error: {event.message}")


# -------------------------------------------------------------------------------------------


def printed_lines(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return capsys.readouterr().out.splitlines()


def test_basic_use_serves_one_stream_after_another(capsys: pytest.CaptureFixture[str]) -> None:
    reply = (
        "<thinking>look first</thinking>Reading it."
        "<read_file><path>a.py</path></read_file>"
        "<execute_command><command>ls</command><requires_approval>maybe"
        "</requires_approval></execute_command>"
    )
    handle_llm_stream(llm_stream(reply))
    first = printed_lines(capsys)
    assert "Thinking: look first" in first
    assert "Tool Call: read_file" in first
    assert any(line.startswith("Parse Error: ") for line in first)
    assert "".join(line[len("Text: ") :] for line in first if line.startswith("Text: ")) == (
        "Reading it."
        "<execute_command><command>ls</command><requires_approval>maybe"
        "</requires_approval></execute_command>"
    )
    # The same parser, the next stream: it starts as a new reply.
    handle_llm_stream(llm_stream("Done.<read_file><path>b.py</path></read_file>", size=1))
    second = printed_lines(capsys)
    assert second[-1] == "Tool Call: read_file"
    assert "".join(line[len("Text: ") :] for line in second[:-1]) == "Done."
    assert parser.state is ParseState.CLOSED


# --- the custom configuration, as written ------------------------------------------------


def test_custom_configuration() -> None:
    config = ParserConfig(
        thinking_start_tag="<思考>",
        thinking_end_tag="</思考>",
        buffer_keep_size=200,
    )

    parser = StreamToolParser(
        tool_registry=TOOL_MODEL_MAP,
        config=config,
    )

    events = list(parser.parse_stream(llm_stream("<思考>先读文件</思考><thinking>x</thinking>")))
    thoughts = [e.content for e in events if isinstance(e, ThinkingEvent)]
    assert thoughts == ["先读文件"]
    text = "".join(e.text for e in events if isinstance(e, TextOutputEvent))
    assert text == "<thinking>x</thinking>"


# --- the plugin, as written --------------------------------------------------------------


class CustomMarkdownPlugin(ParsePlugin):
    def can_handle(self, content: str, state: ParseState) -> bool:
        return "```" in content and state == ParseState.TEXT

    def process(self, content: str) -> Generator[ParseEvent, None, None]:
        # 处理代码块...
        yield CodeBlockEvent(language="python", code="...")


def test_plugin_example() -> None:
    parser = StreamToolParser(tool_registry=TOOL_MODEL_MAP)
    parser.add_plugin(CustomMarkdownPlugin())
    text = "Run:\n```python\nprint(1)\n```\nthen <read_file><path>a</path></read_file>"
    events = list(parser.parse_stream(llm_stream(text)))
    blocks = [e for e in events if isinstance(e, CodeBlockEvent)]
    assert blocks == [CodeBlockEvent(language="python", code="...", span=(5, 27))]
    assert text[5:27] == "```python\nprint(1)\n```"
    assert [e.tool_name for e in events if isinstance(e, ToolCallEvent)] == ["read_file"]
    assert "".join(e.text for e in events if isinstance(e, TextOutputEvent)) == "Run:\n\nthen "
