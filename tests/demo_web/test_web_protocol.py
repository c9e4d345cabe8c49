"""The web demo's WebSocket protocol, against the real command with a real client.

``stream-parser demo --web`` runs as a process on a free loopback port (see
``conftest.py``) and the ``websockets`` package is the browser: every message the page
can send, every message it gets back.  The runs are the scripted model's, so what a turn
streams is known: the events of a turn must be exactly those that
:meth:`~stream_parser.agent.AgentLoop.stream_sync` gives for the same agent and history,
each with the step of the ``step_start`` before it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import ClientConnection, connect

from stream_parser.agent import Deny
from stream_parser.agent._sync import iterate_sync
from stream_parser.demo import DemoOptions, make_agent
from stream_parser.demo._script import scripted_model, task
from stream_parser.demo._tools import make_tools, sandbox_copy
from stream_parser.encoders.json import event_to_json
from tests.demo_web.conftest import WebDemo, loads

TASK = task("en")
AGAIN = "Thanks. Check the folder once more and confirm the summary."
NO_DELAY = "--no-delay"

# (mode, protocol): native function calling, the three text dialects, one request only.
CASES = [
    ("function_call", "xml"),
    ("react", "xml"),
    ("react", "hermes"),
    ("react", "qwen3_coder"),
    ("simple", "xml"),
]

Decide = Callable[[dict[str, Any]], dict[str, Any]]


def approve_all(approval: dict[str, Any]) -> dict[str, Any]:
    return {"type": "approve", "call_id": approval["call_id"]}


def recv(ws: ClientConnection, timeout: float = 30.0) -> dict[str, Any]:
    return loads(ws.recv(timeout=timeout))


@contextmanager
def opened(demo: WebDemo, **options: Any) -> Iterator[ClientConnection]:
    """A connection to the demo, its ``hello`` read."""
    with connect(demo.ws_url, open_timeout=10, **options) as ws:
        hello = recv(ws)
        assert hello["type"] == "hello"
        yield ws


def turn(
    ws: ClientConnection,
    content: str,
    mode: str,
    protocol: str = "xml",
    decide: Decide = approve_all,
) -> list[dict[str, Any]]:
    """Send a message; every message until ``run_end`` (approvals answered by ``decide``)."""
    ws.send(json.dumps({"type": "message", "content": content, "mode": mode, "protocol": protocol}))
    got: list[dict[str, Any]] = []
    while True:
        message = recv(ws)
        got.append(message)
        if message.get("type") == "approval":
            ws.send(json.dumps(decide(message)))
        if message.get("type") == "run_end":
            return got


def events_of(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events among the messages, each checked for its step, the added step removed."""
    events, step = [], 0
    for message in messages:
        if "kind" not in message:
            continue
        if message["kind"] == "step_start":
            step = message["step"]
        else:
            assert message["step"] == step, message
        if message["kind"] not in ("step_start", "tool_result"):
            message = {key: value for key, value in message.items() if key != "step"}
        events.append(message)
    return events


def expected_events(
    mode: str, protocol: str, contents: list[str], decide: Callable[[Any], Any] = lambda c: True
) -> list[list[dict[str, Any]]]:
    """What stream_sync gives for the same turns: the demo's agent on a fresh script each."""
    dialect = protocol if mode == "react" else "native"
    turns = []
    with sandbox_copy() as root:
        tools = make_tools(root)
        history = None
        for content in contents:
            options = DemoOptions(protocol=dialect, delay=0.0)
            agent = make_agent(
                options,
                scripted_model(dialect, "en"),
                tools,
                decide,
                protocol=dialect,
                max_iterations=1 if mode == "simple" else 10,
            )
            run = agent.run(content, history=history)
            turns.append([json.loads(event_to_json(event)) for event in iterate_sync(run)])
            history = run.messages
    return turns


def answered(messages: list[dict[str, Any]]) -> None:
    """Every native call of the history is answered before the next assistant message."""
    waiting: set[str] = set()
    for message in messages:
        if message["role"] == "assistant":
            assert not waiting, f"unanswered calls {waiting} before {message}"
            waiting = {call["id"] for call in message.get("tool_calls") or ()}
        elif message["role"] == "tool":
            waiting.discard(message["tool_call_id"])
        elif message["role"] == "user":
            assert not waiting, f"unanswered calls {waiting} before {message}"
    assert not waiting


@pytest.mark.parametrize(("mode", "protocol"), CASES)
def test_a_two_turn_conversation_streams_the_events_stream_sync_gives(
    web_demo: Callable[..., WebDemo], mode: str, protocol: str
) -> None:
    demo = web_demo(NO_DELAY)
    with opened(demo) as ws:
        got = [turn(ws, TASK, mode, protocol), turn(ws, AGAIN, mode, protocol)]
    expected = expected_events(mode, protocol, [TASK, AGAIN])
    for messages, events in zip(got, expected, strict=True):
        assert events_of(messages) == events
        end = messages[-1]
        assert end["type"] == "run_end"
        assert end["reason"] == ("max_iterations" if mode == "simple" else "done")
        assert end["steps"] == sum(1 for e in events if e["kind"] == "step_start")
        assert end["usage"]["input_tokens"] > 0
        approvals = [m for m in messages if m.get("type") == "approval"]
        # write_file asks; simple mode stops after the first request (list_files).
        assert [a["tool_name"] for a in approvals] == ([] if mode == "simple" else ["write_file"])
    # The second turn continued the first: its history holds both requests.
    done = [e for e in expected[1] if e["kind"] == "agent_done"]
    if done:
        users = [m["content"] for m in done[0]["messages"] if m["role"] == "user"]
        assert users[0] == TASK and AGAIN in users


def test_an_approval_names_the_call_and_its_arguments(web_demo: Callable[..., WebDemo]) -> None:
    with opened(web_demo(NO_DELAY)) as ws:
        messages = turn(ws, TASK, "react", "hermes")
    approval = next(m for m in messages if m.get("type") == "approval")
    call = next(m for m in messages if m.get("kind") == "tool_call" and m["step"] == 3)
    assert approval["step"] == 3 and approval["call_index"] == call["call_index"]
    assert approval["arguments"] == call["tool_instance"]
    assert approval["call_id"] == "step-3-call-0"  # text calls have no provider id
    # Asked after the call is validated, answered before its result.
    order = [m.get("kind") or m.get("type") for m in messages]
    assert order.index("approval") > order.index("tool_call")


def test_a_denied_call_is_refused_with_the_reason(web_demo: Callable[..., WebDemo]) -> None:
    def deny(approval: dict[str, Any]) -> dict[str, Any]:
        return {"type": "deny", "call_id": approval["call_id"], "reason": "not today"}

    with opened(web_demo(NO_DELAY)) as ws:
        messages = turn(ws, TASK, "function_call", decide=deny)
    expected = expected_events("function_call", "xml", [TASK], lambda call: Deny("not today"))
    assert events_of(messages) == expected[0]
    result = next(m for m in messages if m.get("kind") == "tool_result" and m["step"] == 3)
    assert result["result"]["is_error"] and result["result"]["error_type"] == "denied"
    assert "not today" in result["result"]["text"]


def test_a_deny_without_a_reason_gives_the_default_one(web_demo: Callable[..., WebDemo]) -> None:
    def deny(approval: dict[str, Any]) -> dict[str, Any]:
        return {"type": "deny", "call_id": approval["call_id"]}

    with opened(web_demo(NO_DELAY)) as ws:
        messages = turn(ws, TASK, "function_call", decide=deny)
    result = next(m for m in messages if m.get("kind") == "tool_result" and m["step"] == 3)
    assert Deny().reason in result["result"]["text"]


def test_cancel_mid_reply_ends_the_run_cancelled_with_a_valid_history(
    web_demo: Callable[..., WebDemo],
) -> None:
    demo = web_demo()  # the scripted replies stream with pauses: there is time to cancel
    with opened(demo) as ws:
        ws.send(json.dumps({"type": "message", "content": TASK, "mode": "function_call"}))
        got: list[dict[str, Any]] = []
        while True:
            message = recv(ws)
            got.append(message)
            if message.get("kind") == "tool_arguments_delta" and message["step"] == 2:
                break  # step 2's calls are being written
        ws.send(json.dumps({"type": "cancel"}))
        while got[-1].get("type") != "run_end":
            got.append(recv(ws))
        assert got[-1]["reason"] == "cancelled" and got[-1]["steps"] == 2
        assert not [m for m in got if m.get("kind") == "agent_done"]
        # The conversation goes on from the cancelled run's history.
        ws.send(json.dumps({"type": "message", "content": AGAIN, "mode": "simple"}))
        second = [recv(ws)]
        while second[-1].get("type") != "run_end":
            second.append(recv(ws))
    assert second[-1]["reason"] == "max_iterations"
    done = next(m for m in second if m.get("kind") == "agent_done")
    history = done["messages"]
    answered(history)
    # Step 1's call and its answer, then the cut step 2 (its calls answered as
    # cancelled), then the new request.
    assert [m["role"] for m in history[:4]] == ["system", "user", "assistant", "tool"]
    assert [m["content"] for m in history if m["role"] == "user"][-1] == AGAIN


@pytest.mark.parametrize(
    ("payload", "error"),
    [
        ("not json", "must be JSON"),
        ("[1, 2]", 'JSON object with a "type"'),
        ('{"content": "hi"}', 'JSON object with a "type"'),
        ('{"type": "shout"}', "unknown message type 'shout'"),
        ('{"type": "message"}', '"content" must be a non-empty string'),
        ('{"type": "message", "content": "   "}', '"content" must be a non-empty string'),
        ('{"type": "message", "content": 3}', '"content" must be a non-empty string'),
        ('{"type": "message", "content": "hi", "mode": "fast"}', "unknown \"mode\" 'fast'"),
        (
            '{"type": "message", "content": "hi", "mode": "react", "protocol": "gemma4"}',
            "unknown \"protocol\" 'gemma4'",
        ),
        ('{"type": "approve", "call_id": "call_9"}', "no call 'call_9' waits for approval"),
        ('{"type": "deny"}', '"call_id" must be a string'),
        ('{"type": "cancel"}', "no run to cancel"),
        (b'{"type": "message", "content": "hi"}', "not binary ones"),
    ],
)
def test_a_bad_message_gets_an_error_and_the_connection_stays_usable(
    web_demo: Callable[..., WebDemo], payload: str | bytes, error: str
) -> None:
    with opened(web_demo(NO_DELAY)) as ws:
        ws.send(payload)
        reply = recv(ws)
        assert reply["type"] == "error" and error in reply["message"], reply
        messages = turn(ws, TASK, "simple")
    assert messages[-1]["reason"] == "max_iterations"


def test_a_message_while_a_run_is_going_is_refused_not_queued(
    web_demo: Callable[..., WebDemo],
) -> None:
    with opened(web_demo()) as ws:
        ws.send(json.dumps({"type": "message", "content": TASK, "mode": "simple"}))
        ws.send(json.dumps({"type": "message", "content": AGAIN, "mode": "simple"}))
        got = [recv(ws)]
        while got[-1].get("type") != "run_end":
            got.append(recv(ws))
        errors = [m for m in got if m.get("type") == "error"]
        assert len(errors) == 1 and "a run is going" in errors[0]["message"]
        assert sum(1 for m in got if m.get("kind") == "step_start") == 1
        # Nothing was queued: no second run starts.
        ws.send(json.dumps({"type": "cancel"}))
        assert "no run to cancel" in recv(ws)["message"]


def test_a_message_over_1_mb_closes_the_socket_with_1009(
    web_demo: Callable[..., WebDemo],
) -> None:
    demo = web_demo(NO_DELAY)
    with opened(demo, max_size=None) as ws:
        ws.send(json.dumps({"type": "message", "content": "x" * (1 << 20)}))
        with pytest.raises(ConnectionClosed) as closed:
            recv(ws)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    # Just under the limit is read (and refused for its length, as content).
    with opened(demo, max_size=None) as ws:
        ws.send(json.dumps({"type": "message", "content": "x" * ((1 << 20) - 100)}))
        assert "longer than" in recv(ws)["message"]


def test_a_client_that_goes_away_cancels_the_run_and_closes_the_stream_at_once(
    web_demo: Callable[..., WebDemo],
) -> None:
    demo = web_demo()
    with opened(demo) as ws:
        ws.send(json.dumps({"type": "message", "content": TASK, "mode": "react"}))
        for _ in range(10):
            assert "kind" in recv(ws)  # the reply is streaming
        closed_at = time.monotonic()
    when, line = demo.wait_line("the browser went away", timeout=10, after=closed_at)
    assert when - closed_at < 1.0, line
    took = re.search(r"closed in (\d+) ms", line)
    assert took is not None and int(took.group(1)) < 1000


def test_a_websocket_from_another_origin_is_refused(web_demo: Callable[..., WebDemo]) -> None:
    demo = web_demo(NO_DELAY)
    with (
        pytest.raises(InvalidStatus) as refused,
        connect(demo.ws_url, origin="http://evil.example", open_timeout=10),  # type: ignore[arg-type]
    ):
        pass
    assert refused.value.response.status_code == 403
    assert (
        "refused a WebSocket from another origin: 'http://evil.example'"
        in demo.wait_line("another origin", timeout=10)[1]
    )
    # The page's own origin is let in.
    own = f"http://127.0.0.1:{demo.port}"
    with opened(demo, origin=own) as ws:  # type: ignore[arg-type]
        assert turn(ws, TASK, "simple")[-1]["type"] == "run_end"
