"""Each step's parser: new per reply, its compiled tables shared, the registry read anew."""

from __future__ import annotations

from stream_parser import FunctionCallAgent, ParserConfig, ReActAgent, ToolCallEvent
from stream_parser.agent import StepStartEvent, ToolResultEvent
from stream_parser.testing import NativeCall, ScriptedModel
from stream_parser.testing import assert_valid_history as assert_valid
from stream_parser.tools import ToolRegistry, tool


@tool
def read_file(path: str) -> str:
    """Read a file.

    Args:
        path: The file's path.
    """
    return f"contents of {path}"


def test_every_step_gets_a_new_parser_with_the_same_tables() -> None:
    for agent in (
        ReActAgent(ScriptedModel([]), [read_file]),
        ReActAgent(ScriptedModel([]), [read_file], dialect="hermes"),
        FunctionCallAgent(ScriptedModel([]), [read_file]),
    ):
        first, second = agent._parser(), agent._parser()
        assert first is not second
        assert first._tables is second._tables
        assert first.plugins == () or first.plugins[0] is not second.plugins[0]


def test_a_tool_added_during_a_run_is_parsed_from_the_next_step_on() -> None:
    registry = ToolRegistry()

    @registry.add
    def install(name: str) -> str:
        """Install a tool.

        Args:
            name: The tool to install.
        """
        registry.add(greet)
        return f"installed {name}"

    def greet(who: str) -> str:
        """Greet someone.

        Args:
            who: Whom to greet.
        """
        return f"hello {who}"

    model = ScriptedModel(
        [
            "<install><name>greet</name></install>",
            "<greet><who>Ada</who></greet>",
            "Done.",
        ]
    )
    run = ReActAgent(model, registry).run_sync("greet Ada")
    assert run.reason == "done" and run.steps == 3
    step = 0
    calls = []
    for event in run.events:
        if isinstance(event, StepStartEvent):
            step = event.step
        elif isinstance(event, ToolCallEvent):
            calls.append((event.tool_name, step, event.call_index))
    # Each reply's call indexes start at 0: every step has a parser of its own.
    assert calls == [
        ("install", 1, 0),
        ("greet", 2, 0),
    ]
    results = [e for e in run.events if isinstance(e, ToolResultEvent)]
    assert [r.result.content for r in results] == ["installed greet", "hello Ada"]
    assert_valid(run.messages)


def test_a_native_call_of_a_tool_added_during_a_run_runs() -> None:
    registry = ToolRegistry([read_file])

    @registry.add
    def unlock() -> str:
        """Unlock the extra tool."""
        registry.add(read_file, name="read_more")
        return "unlocked"

    model = ScriptedModel(
        [
            [NativeCall("unlock", {})],
            [NativeCall("read_more", {"path": "b"})],
            "Done.",
        ]
    )
    config = ParserConfig(report_unknown_tools=True)
    run = FunctionCallAgent(model, registry, parser_config=config).run_sync("go")
    assert run.reason == "done"
    results = [e for e in run.events if isinstance(e, ToolResultEvent)]
    assert [(r.tool_name, r.result.content) for r in results] == [
        ("unlock", "unlocked"),
        ("read_more", "contents of b"),
    ]
    assert_valid(run.messages)
