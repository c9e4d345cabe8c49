"""The web example of docs/encoders.md, driven by Starlette's test client."""

from __future__ import annotations

import ast
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

import stream_parser
from stream_parser import AgentDoneEvent, ToolResultEvent, event_to_json
from stream_parser.encoders import SSEDecoder, decode_json_lines, decode_sse, encode_json_lines
from tests.test_docs import ROOT, blocks

DOC = ROOT / "docs" / "encoders.md"


@pytest.fixture
def example(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """The namespace of the doc's web app (the block that defines ``app``), as it is run."""
    module = types.ModuleType("docs_encoders_web")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    found = [body for lang, body in blocks(DOC) if lang == "python" and "Starlette(" in body]
    assert len(found) == 1
    exec(compile(found[0], "encoders.md[web app]", "exec", dont_inherit=True), module.__dict__)
    yield module.__dict__


def test_the_web_app_streams_an_agent_run_as_sse(example: dict[str, Any]) -> None:
    expected = list(example["make_agent"]().stream_sync("What does notes.txt say?"))
    with TestClient(example["app"]) as client, client.stream("GET", "/run") as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        decoder = SSEDecoder()
        events = [event for chunk in response.iter_bytes() for event in decoder.feed(chunk)]
        events += decoder.close()
    assert [event_to_json(event) for event in events] == [event_to_json(e) for e in expected]
    assert decoder.last_id == str(len(events))
    done = events[-1]
    assert isinstance(done, AgentDoneEvent)
    assert done.reason == "done" and done.output == "Your note says: buy milk."
    results = [event for event in events if isinstance(event, ToolResultEvent)]
    assert [result.result.text for result in results] == ["buy milk"]


def test_the_web_app_carries_line_breaks_and_non_ascii_text(example: dict[str, Any]) -> None:
    odd = "é \n\r \u2028 \x85 😀 event: x\n\ndata: y"
    with TestClient(example["app"]) as client:
        response = client.get("/run", params={"q": odd})
    events = list(decode_sse([response.content]))
    assert isinstance(events[-1], AgentDoneEvent)
    assert events[-1].messages[0]["content"] == odd
    # The same events as JSON lines, another way out of the same app.
    assert list(decode_json_lines(encode_json_lines(events))) == events


def test_only_the_servers_import_starlette() -> None:
    # The encoders serve any framework; the proxy (stream_parser.serve) and the web demo
    # (stream_parser.demo.web), both of the serve extra, are the parts built on Starlette.
    package = Path(stream_parser.__file__).parent
    for path in package.glob("**/*.py"):
        parts = path.relative_to(package).parts
        if parts[0] == "serve" or parts[:2] == ("demo", "web"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            assert not any(name.split(".")[0] in ("starlette", "httpx") for name in names), path
