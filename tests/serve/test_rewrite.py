"""ChatRewriter on every dialect's recorded replies: the chunks it writes, accumulated as
a client does, equal what ``parse_stream`` gives for the same reply.

The upstream's SSE bytes are fed whole and cut at every byte boundary of the chunks
(and one byte at a time for one fixture per dialect), so the rewriter is tested on
any cut of the stream, not only on whole events.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from stream_parser.serve import ChatRewriter, ProxySettings, RegistryCache

from .cases import CASES, ServeCase, cuts, expected, one_per_dialect

CACHE = RegistryCache()


def upstream_sse(pieces: list[str], finish: str = "stop") -> bytes:
    """The bytes a server streams for ``pieces`` as ``delta.content``."""
    head = {"id": "chatcmpl-up", "object": "chat.completion.chunk", "created": 7, "model": "m"}
    frames = [
        {**head, "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]}
        for p in pieces
    ]
    frames.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    body = "".join(f"data: {json.dumps(f)}\n\n" for f in frames) + "data: [DONE]\n\n"
    return body.encode()


def settings_of(case: ServeCase) -> ProxySettings:
    dialect = case.dialect if case.model == "local" else "auto"
    return ProxySettings(dialect=dialect, start_in_reasoning=case.start)


def request(case: ServeCase, *, stream: bool = True) -> dict[str, Any]:
    return {"model": case.model, "stream": stream, "messages": [], "tools": list(case.tools)}


def accumulate(sse: bytes) -> dict[str, Any]:
    """The message a client builds from the chunks (as the ``openai`` SDK does)."""
    message: dict[str, Any] = {"content": "", "reasoning": "", "calls": {}, "finish": None}
    events = [e for e in sse.decode().split("\n\n") if e]
    assert events[-1] == "data: [DONE]"
    roles = 0
    for frame in events[:-1]:
        chunk = json.loads(frame.removeprefix("data: "))
        assert "error" not in chunk, chunk
        assert chunk["id"] == "chatcmpl-up" and chunk["created"] == 7
        assert chunk["object"] == "chat.completion.chunk"
        for choice in chunk["choices"]:
            assert choice["index"] == 0
            delta = choice["delta"]
            roles += "role" in delta
            message["content"] += delta.get("content") or ""
            message["reasoning"] += delta.get("reasoning_content") or ""
            for call in delta.get("tool_calls", ()):
                assert call["id"] and call["type"] == "function"
                assert call["index"] == len(message["calls"])
                message["calls"][call["index"]] = call["function"]
            if choice["finish_reason"] is not None:
                message["finish"] = choice["finish_reason"]
    assert roles == 1
    return message


def check(case: ServeCase, pieces: list[str], data: bytes, cut: int) -> None:
    rewriter = ChatRewriter(request(case), settings_of(case), CACHE)
    assert rewriter.parsing
    out = b"".join(rewriter.feed(data[i : i + cut]) for i in range(0, len(data), cut))
    out += rewriter.close()
    got = accumulate(out)
    want = expected(case, pieces)
    assert got["content"] == want.content
    assert got["reasoning"] == want.reasoning
    calls = [(f["name"], json.loads(f["arguments"])) for f in got["calls"].values()]
    assert calls == want.calls
    assert got["finish"] == ("tool_calls" if want.calls else "stop")


@pytest.mark.parametrize("case", one_per_dialect(), ids=lambda c: c.id)
@pytest.mark.parametrize("how", ["whole", "markers", "chars"])
def test_one_per_dialect(case: ServeCase, how: str) -> None:
    pieces = cuts(case.text)[how]
    data = upstream_sse(pieces)
    for cut in (len(data), 1, 7):
        check(case, pieces, data, cut)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
@pytest.mark.parametrize("how", ["whole", "markers", "chars"])
def test_every_case(case: ServeCase, how: str) -> None:
    pieces = cuts(case.text)[how]
    data = upstream_sse(pieces)
    for cut in (len(data), 1, 13):
        check(case, pieces, data, cut)


@pytest.mark.parametrize("case", one_per_dialect(), ids=lambda c: c.id)
def test_whole_completion(case: ServeCase) -> None:
    rewriter = ChatRewriter(request(case, stream=False), settings_of(case), CACHE)
    upstream = {
        "id": "chatcmpl-up",
        "object": "chat.completion",
        "created": 7,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": case.text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 2, "total_tokens": 3},
    }
    out = json.loads(rewriter.rewrite_completion(json.dumps(upstream).encode()))
    want = expected(case, [case.text])
    message = out["choices"][0]["message"]
    assert out["id"] == "chatcmpl-up" and out["usage"] == upstream["usage"]
    assert (message["content"] or "") == want.content
    assert message.get("reasoning_content", "") == want.reasoning
    calls = [
        (c["function"]["name"], json.loads(c["function"]["arguments"]))
        for c in message.get("tool_calls", ())
    ]
    assert calls == want.calls
    assert out["choices"][0]["finish_reason"] == ("tool_calls" if want.calls else "stop")
