"""``stream-parser serve`` as an HTTP proxy: routes, keys, headers and faults.

The proxy is the real command in its own process (see ``conftest.py``); the client is the
``openai`` SDK where a client of the proxy would use it, and plain ``httpx`` where the test
looks at the bytes.  The model name ``my-own-finetune`` is one no dialect knows, so under
``--dialect auto`` its replies pass through unparsed: these tests are about the transport,
the parsing has its own (``test_serve_sdk.py``).
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.llm.sse_server import chunk
from tests.serve.upstream import Reply, Upstream, sse_pieces

UNKNOWN_MODEL = "my-own-finetune"


_CLIENTS: list[openai.OpenAI] = []


def sdk(proxy_url: str, key: str = "sk-client", *, reply: str | None = None) -> openai.OpenAI:
    """An SDK client of the proxy (closed after the test)."""
    headers = {"x-reply": reply} if reply else None
    client = openai.OpenAI(
        base_url=proxy_url, api_key=key, max_retries=0, timeout=20, default_headers=headers
    )
    _CLIENTS.append(client)
    return client


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _CLIENTS:
        _CLIENTS.pop().close()


def error_of(response: httpx.Response) -> dict[str, object]:
    body = response.json()
    assert set(body) == {"error"}
    assert {"message", "type", "code"} <= set(body["error"])
    return body["error"]  # type: ignore[no-any-return]


def test_healthz_answers_without_calling_the_upstream(proxy, upstream: Upstream) -> None:
    before = len(upstream.requests)
    answer = httpx.get(proxy().root + "/healthz")
    assert answer.status_code == 200
    assert answer.json() == {"status": "ok"}
    assert len(upstream.requests) == before


def test_an_upstream_that_cannot_be_reached_is_a_502(proxy) -> None:
    with socket.socket() as probe:  # a port where nothing listens
        probe.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    server = proxy(upstream_url=dead)
    assert httpx.get(server.root + "/healthz").status_code == 200
    with pytest.raises(openai.InternalServerError) as caught:
        sdk(server.url).chat.completions.create(model=UNKNOWN_MODEL, messages=[])
    assert caught.value.status_code == 502
    assert "could not be reached" in caught.value.message
    answer = httpx.get(server.url + "/models")
    assert answer.status_code == 502
    assert error_of(answer)["code"] == "upstream_unreachable"


def test_models_and_headers_pass_through(proxy, upstream: Upstream) -> None:
    listing = {
        "object": "list",
        "data": [{"id": "local", "object": "model", "created": 1, "owned_by": "me"}],
    }
    key = upstream.add(Reply(json=listing, headers={"x-upstream-says": "hello"}))
    client = sdk(proxy().url, "sk-client", reply=key)
    models = client.models.list()
    assert [m.id for m in models.data] == ["local"]
    (seen,) = upstream.received(key)
    assert (seen.method, seen.path) == ("GET", "/v1/models")
    assert seen.headers["authorization"] == "Bearer sk-client"  # no --api-key: forwarded
    answer = httpx.get(proxy().url + "/models?limit=5", headers={"x-reply": key})
    assert answer.json() == listing
    assert answer.headers["x-upstream-says"] == "hello"
    assert upstream.received(key)[-1].query == "limit=5"


def test_other_routes_stream_their_bodies_through(proxy, upstream: Upstream) -> None:
    pieces = [b"first,", b"second,", b"third"]
    key = upstream.add(Reply(pieces=pieces, pause=0.05, media_type="text/plain"))
    with httpx.stream(
        "POST", proxy().root + "/metrics", content=b"ask", headers={"x-reply": key}
    ) as answer:
        got = list(answer.iter_raw())
    assert b"".join(got) == b"".join(pieces)
    assert len(got) == 3  # as they came, not gathered
    (seen,) = upstream.received(key)
    assert (seen.path, seen.body) == ("/metrics", b"ask")  # outside /v1: the same path


def test_embeddings_pass_through(proxy, upstream: Upstream) -> None:
    vector = {
        "object": "list",
        "data": [{"object": "embedding", "index": 0, "embedding": [0.5, -1.0]}],
        "model": "e",
        "usage": {"prompt_tokens": 1, "total_tokens": 1},
    }
    key = upstream.add(Reply(json=vector))
    got = sdk(proxy().url, reply=key).embeddings.create(
        model="e", input="hi", encoding_format="float"
    )
    assert got.data[0].embedding == [0.5, -1.0]
    assert upstream.received(key)[0].json["input"] == "hi"


def test_the_proxy_key_is_checked_and_not_forwarded(proxy, upstream: Upstream) -> None:
    server = proxy("--api-key", "sk-proxy", "--upstream-api-key", "sk-upstream")
    key = upstream.add(Reply(json={"object": "list", "data": []}))
    for wrong in ("sk-client", "sk-proxyx", "sk-prox"):
        with pytest.raises(openai.AuthenticationError) as caught:
            sdk(server.url, wrong, reply=key).models.list()
        assert caught.value.status_code == 401
    assert httpx.get(server.url + "/models", headers={"x-reply": key}).status_code == 401
    assert upstream.received(key) == []  # nothing went upstream
    assert sdk(server.url, "sk-proxy", reply=key).models.list().data == []
    (seen,) = upstream.received(key)
    assert seen.headers["authorization"] == "Bearer sk-upstream"
    assert httpx.get(server.root + "/healthz").status_code == 200  # no key needed


def test_the_upstream_key_replaces_the_clients(proxy, upstream: Upstream) -> None:
    server = proxy("--upstream-api-key", "sk-upstream")
    key = upstream.add(Reply(json={"object": "list", "data": []}))
    sdk(server.url, "sk-whatever", reply=key).models.list()
    assert upstream.received(key)[0].headers["authorization"] == "Bearer sk-upstream"


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"not json", "not valid JSON"),
        (b'{"model": "x", ', "not valid JSON"),
        (b"\xff\xfe{}", "not valid JSON"),
        (b"[1, 2]", "must be a JSON object"),
    ],
)
def test_a_body_that_is_not_a_json_object_is_a_400(
    proxy, upstream: Upstream, body: bytes, why: str
) -> None:
    before = len(upstream.requests)
    answer = httpx.post(
        proxy().url + "/chat/completions",
        content=body,
        headers={"content-type": "application/json"},
    )
    assert answer.status_code == 400
    error = error_of(answer)
    assert why in str(error["message"])
    assert error["type"] == "invalid_request_error"
    assert len(upstream.requests) == before


@pytest.mark.parametrize("status", [400, 404, 429, 500, 503])
def test_an_upstream_error_keeps_its_status_and_body(
    proxy, upstream: Upstream, status: int
) -> None:
    body = {"error": {"message": f"upstream says {status}", "type": "x", "code": "y"}}
    key = upstream.add(Reply(json=body, status=status))
    client = sdk(proxy().url, reply=key)
    for stream in (False, True):
        with pytest.raises(openai.APIStatusError) as caught:
            client.chat.completions.create(model=UNKNOWN_MODEL, messages=[], stream=stream)
        assert caught.value.status_code == status
        assert caught.value.message.endswith(f"upstream says {status}")
        assert caught.value.body == body["error"]


def test_no_first_byte_in_time_is_a_504(proxy, upstream: Upstream) -> None:
    server = proxy("--timeout", "0.5")
    key = upstream.add(Reply(json={"never": "seen"}, delay=3))
    for stream in (False, True):
        with pytest.raises(openai.APIStatusError) as caught:
            sdk(server.url, reply=key).chat.completions.create(
                model=UNKNOWN_MODEL, messages=[], stream=stream
            )
        assert caught.value.status_code == 504
        assert "0.5 s" in caught.value.message


def _text_chunks(*texts: str) -> list[bytes]:
    return sse_pieces([chunk(role="assistant", content=t) for t in texts], done=False)


def test_silence_mid_stream_ends_it_with_an_error_event(proxy, upstream: Upstream) -> None:
    server = proxy("--timeout", "0.5")
    key = upstream.add(Reply(pieces=[*_text_chunks("Hello", " world"), b": late\n\n"], pause=2))
    stream = sdk(server.url, reply=key).chat.completions.create(
        model=UNKNOWN_MODEL, messages=[], stream=True
    )
    got = []
    with pytest.raises(openai.APIError) as caught:
        for item in stream:
            got.append(item.choices[0].delta.content)
    assert got == ["Hello"]
    assert "sent nothing for 0.5 s" in caught.value.message


def test_a_cut_connection_ends_the_stream_with_an_error_event(proxy, upstream: Upstream) -> None:
    key = upstream.add(Reply(pieces=_text_chunks("Hel", "lo"), cut=True))
    stream = sdk(proxy().url, reply=key).chat.completions.create(
        model=UNKNOWN_MODEL, messages=[], stream=True
    )
    got = []
    with pytest.raises(openai.APIError) as caught:
        for item in stream:
            got.append(item.choices[0].delta.content)
    assert got == ["Hel", "lo"]  # everything sent before the cut
    assert "cut off" in caught.value.message
    assert upstream.wait_outcome(key) == "cut"


def test_a_client_that_leaves_cancels_the_upstream_request(proxy, upstream: Upstream) -> None:
    # Thirty seconds of reply; the client reads two chunks and hangs up.
    pieces = _text_chunks(*(f"word{i} " for i in range(300)))
    key = upstream.add(Reply(pieces=pieces, pause=0.1))
    body = {"model": UNKNOWN_MODEL, "messages": [], "stream": True}
    with httpx.stream(
        "POST", proxy().url + "/chat/completions", json=body, headers={"x-reply": key}
    ) as answer:
        got: list[dict[str, Any]] = []
        for line in answer.iter_lines():
            if line.startswith("data:"):
                got.append(json.loads(line[5:]))
            if len(got) == 2:
                break
    assert got[0]["choices"][0]["delta"]["content"] == "word0 "
    # The upstream's generator sees its connection go, long before its 30 s are up.
    assert upstream.wait_outcome(key, timeout=5) == "client left"
