"""A pause outlives the process: one Python process pauses, another resumes from the file."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

# What both processes share: the tools, the scripted model and the agent.
COMMON = textwrap.dedent(
    """
    import json, sys
    from stream_parser.agent import FunctionCallAgent, ReActAgent, PausedRun, Deny
    from stream_parser.testing import NativeCall, ScriptedModel, ScriptedReply
    from stream_parser.tools import tool

    @tool
    def add(a: int, b: int) -> int:
        '''Add two numbers.'''
        return a + b

    @tool(requires_approval=True)
    def send(to: str) -> str:
        '''Send a mail.'''
        return f"sent to {to}"

    def replies(kind):
        if kind == "native":
            first = ScriptedReply(tool_calls=[
                NativeCall("add", {"a": 1, "b": 2}, id="c-add"),
                NativeCall("send", {"to": "ann"}, id="c-send"),
            ])
        else:
            first = ScriptedReply(
                content="On it. <add><a>1</a><b>2</b></add><send><to>ann</to></send>"
            )
        return [first, ScriptedReply(content="All done.")]

    def agent(kind, replies, approve):
        cls = FunctionCallAgent if kind == "native" else ReActAgent
        return cls(ScriptedModel(replies), [add, send], approve=approve)
    """
)

PAUSE = COMMON + textwrap.dedent(
    """
    kind, path = sys.argv[1], sys.argv[2]
    run = agent(kind, replies(kind), "defer").run_sync("Go")
    assert run.reason == "paused", run.reason
    open(path, "w").write(run.pause_state().to_json())
    print(json.dumps([call.call_id for call in run.pending_calls]))
    """
)

RESUME = COMMON + textwrap.dedent(
    """
    from stream_parser.errors import ConfigError
    kind, path, decisions = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    try:
        paused = PausedRun.from_json(open(path).read())
    except ConfigError as exc:
        print(json.dumps({"config_error": str(exc)}))
        sys.exit(0)
    run = agent(kind, replies(kind)[1:], "defer").resume(paused, decisions)
    finished = __import__("asyncio").run(run._drive())
    print(json.dumps({"messages": finished.messages, "output": finished.output,
                      "reason": finished.reason, "steps": finished.steps}))
    """
)


def python(code: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def in_process(kind: str) -> dict[str, object]:
    """The same run, approved while it runs."""
    namespace: dict[str, object] = {}
    exec(COMMON, namespace)
    make = namespace["agent"]
    run = make(kind, namespace["replies"](kind), lambda call: True).run_sync("Go")  # type: ignore[operator]
    return {"messages": run.messages, "output": run.output}


@pytest.mark.parametrize("kind", ["native", "text"])
def test_a_pause_outlives_the_process(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "paused.json"
    ids = json.loads(python(PAUSE, kind, str(path)))
    assert len(ids) == 1
    resumed = json.loads(python(RESUME, kind, str(path), json.dumps({ids[0]: True})))
    assert resumed["reason"] == "done" and resumed["steps"] == 2
    twin = in_process(kind)
    assert resumed["messages"] == json.loads(json.dumps(twin["messages"]))
    assert resumed["output"] == twin["output"] == "All done."


@pytest.mark.parametrize("damage", ["truncated", "edited call id"])
def test_a_damaged_file_gives_one_clear_config_error(damage: str, tmp_path: Path) -> None:
    path = tmp_path / "paused.json"
    ids = json.loads(python(PAUSE, "native", str(path)))
    text = path.read_text()
    if damage == "truncated":
        path.write_text(text[: len(text) // 2])
    else:
        document = json.loads(text)
        document["pending"][0]["call_id"] = "c-edited"
        path.write_text(json.dumps(document))
    out = json.loads(python(RESUME, "native", str(path), json.dumps({ids[0]: True})))
    message = out["config_error"]
    expected = "cannot be read" if damage == "truncated" else "was its id edited"
    assert expected in message
