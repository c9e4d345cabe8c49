"""``stream-parser demo --web`` against a real model server; skipped unless one is configured.

Set ``STREAM_PARSER_LIVE_BASE_URL`` and ``STREAM_PARSER_LIVE_MODEL`` (the server of
``tools/live-server.sh``: llama.cpp, model ``local``), then run ``pytest -m live
tests/demo_web``.  The page's side is played by a WebSocket client; the assertions are
about the protocol (the server's reply streams through as events, the run ends, the
conversation goes on), not about what a small model says.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from websockets.sync.client import connect

from tests.demo_web.conftest import WebDemo, loads
from tests.live import BASE_URL, MODEL, live_marks

pytestmark = live_marks(timeout=900)


@pytest.fixture(scope="module")
def live_demo() -> Iterator[WebDemo]:
    args = ["--base-url", BASE_URL or "", "--model", MODEL or "", "--instructions-role", "user"]
    demo = WebDemo([*args, "--max-tokens", "160", "--timeout", "300"]).wait_ready()
    yield demo
    demo.stop()


def turn(ws: Any, content: str, mode: str) -> list[dict[str, Any]]:
    ws.send(json.dumps({"type": "message", "content": content, "mode": mode, "protocol": "xml"}))
    got: list[dict[str, Any]] = []
    while not got or got[-1].get("type") != "run_end":
        got.append(loads(ws.recv(timeout=600)))
        if got[-1].get("type") == "approval":
            ws.send(json.dumps({"type": "deny", "call_id": got[-1]["call_id"]}))
    return got


@pytest.mark.parametrize("mode", ["react", "simple"])
def test_the_servers_reply_streams_into_the_page(live_demo: WebDemo, mode: str) -> None:
    with connect(live_demo.ws_url, open_timeout=30) as ws:
        hello = loads(ws.recv(timeout=30))
        assert hello["model"] == f"{MODEL} @ {BASE_URL}"
        first = turn(ws, "List the files, then say in one sentence what this project is.", mode)
        second = turn(ws, "Thank you. Answer in one short sentence: what did you find?", mode)
    for messages in (first, second):
        errors = [m for m in messages if m.get("type") == "error"]
        assert not errors, errors
        kinds = [m.get("kind") for m in messages]
        assert kinds[0] == "step_start"
        # The reply streamed as it was written: in pieces, text or calls among them.
        assert (
            sum(kind in ("text", "tool_param_delta", "tool_arguments_delta") for kind in kinds) > 1
        )
        end = messages[-1]
        assert end["reason"] in ("done", "length", "max_iterations", "max_tool_calls"), end
