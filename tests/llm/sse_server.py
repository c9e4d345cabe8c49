"""A loopback OpenAI-compatible chat server for tests (stdlib only).

The server answers each request with the next scripted response and records what it
received.  Streams are sent as Server-Sent Events over HTTP/1.1 chunked encoding, one
HTTP chunk per event (flushed), so the client really receives them one by one::

    with SSEServer() as server:
        server.script(sse([chunk(content="Hel"), chunk(content="lo"), chunk(finish_reason="stop")]))
        model = OpenAIChatModel("test", base_url=server.url, max_retries=0)
        ...
        assert server.requests[0].body["stream"] is True

Scripted responses:

* ``sse(events, done=True, drop=False)``: a ``text/event-stream`` answer.  An event
  that is a dict is sent as ``data: <json>`` (``json.dumps``: a lone surrogate goes out
  as its ``\\udXXX`` escape); a str or bytes is sent verbatim (for malformed lines;
  include the blank line that ends an event yourself).  ``done`` sends ``data: [DONE]``
  at the end; ``drop`` closes the socket after the events without ending the chunked
  body, as a crashed server or a cut connection does.  More keywords:

  - ``delay``: seconds to wait before answering at all;
  - ``ping_every``: after the events, send ``: ping`` comments at this interval, for
    ever (until the client leaves, at most 10 s), never ending the reply;
  - ``keep_alive``: leave the connection open for the client's next request;
  - ``stale``: leave it open, but hang up on the next request sent on it without
    answering (the way a server that failed mid-reply can leave a kept-alive
    connection; counted in :attr:`SSEServer.hang_ups`).

* ``error(status, message, headers=...)``: a JSON error answer like OpenAI's.
* ``json_answer(body, status=200)``: any JSON answer (e.g. a whole ``chat.completion``
  sent to a streaming request).

A chat request (a POST whose path ends with ``/chat/completions``) whose ``messages``
fail :func:`~stream_parser.testing.validate_history` is answered **400**, with an
OpenAI-style error body that lists the problems (``code: "invalid_history"``), without
using up a scripted answer, and so is one holding an assistant message whose
``content`` is null or missing, which llama.cpp's server refuses though the OpenAI
format allows it; the problems are kept in
:attr:`SSEServer.history_problems`.  So every test that goes through the server also
checks that the history it sent is one a real server accepts.  ``SSEServer(
check_history=False)`` turns the check off, for a test that sends an odd history on
purpose.

When the script is empty the server answers 500 ("no scripted response").  The
server binds 127.0.0.1 on a free port and, unless told to keep it alive, every answer
closes its connection, so :meth:`SSEServer.stop` can join every thread.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from stream_parser.testing import validate_history

__all__ = [
    "ErrorResponse",
    "JSONResponse",
    "RecordedRequest",
    "SSEResponse",
    "SSEServer",
    "chunk",
    "error",
    "json_answer",
    "sse",
    "tool_fragment",
]


@dataclass
class SSEResponse:
    """A streamed answer: events, then ``[DONE]`` unless ``done`` is False."""

    events: list[dict[str, Any] | str | bytes]
    done: bool = True
    drop: bool = False
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    ping_every: float | None = None
    keep_alive: bool = False
    stale: bool = False


@dataclass
class JSONResponse:
    """A JSON answer, e.g. an error (``{"error": {"message": ..., "type": ..., "code": ...}}``)."""

    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)


ErrorResponse = JSONResponse
"""The JSON answer type under its first name (most JSON answers are errors)."""


@dataclass
class RecordedRequest:
    """What the server received (header names lower-cased).

    ``client_port`` tells connections apart: two requests with the same port came on
    one kept-alive connection.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    client_port: int = 0


def sse(
    events: Iterable[dict[str, Any] | str | bytes],
    *,
    done: bool = True,
    drop: bool = False,
    delay: float = 0.0,
    ping_every: float | None = None,
    keep_alive: bool = False,
    stale: bool = False,
) -> SSEResponse:
    """A streamed answer (see the module docstring)."""
    return SSEResponse(
        list(events),
        done=done,
        drop=drop,
        delay=delay,
        ping_every=ping_every,
        keep_alive=keep_alive or stale,
        stale=stale,
    )


def json_answer(body: Any, *, status: int = 200) -> JSONResponse:
    """A JSON answer with any body (``Content-Type: application/json``); bytes go verbatim."""
    return JSONResponse(status, body)


def error(status: int, message: str, *, headers: Mapping[str, str] | None = None) -> ErrorResponse:
    """An OpenAI-style JSON error answer."""
    body = {"error": {"message": message, "type": "server_error", "code": status}}
    return ErrorResponse(status, body, dict(headers or {}))


def _invalid_history(problems: list[str]) -> JSONResponse:
    """The 400 a strict server gives a history it cannot use."""
    message = "invalid chat history: " + "; ".join(problems)
    body = {
        "error": {
            "message": message,
            "type": "invalid_request_error",
            "param": "messages",
            "code": "invalid_history",
        }
    }
    return JSONResponse(400, body)


def chunk(
    *,
    content: str | None = None,
    reasoning_content: str | None = None,
    reasoning: str | None = None,
    tool_calls: list[dict[str, Any]] | None = None,
    finish_reason: str | None = None,
    usage: dict[str, Any] | None = None,
    role: str | None = None,
    extra_delta: Mapping[str, Any] | None = None,
    no_choices: bool = False,
) -> dict[str, Any]:
    """A ``chat.completion.chunk`` object; only the given delta fields are set."""
    delta: dict[str, Any] = {}
    if role is not None:
        delta["role"] = role
    if content is not None:
        delta["content"] = content
    if reasoning_content is not None:
        delta["reasoning_content"] = reasoning_content
    if reasoning is not None:
        delta["reasoning"] = reasoning
    if tool_calls is not None:
        delta["tool_calls"] = tool_calls
    delta.update(extra_delta or {})
    data: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion.chunk",
        "created": 1700000000,
        "model": "test-model",
        "choices": []
        if no_choices
        else [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}],
    }
    if usage is not None:
        data["usage"] = usage
    return data


def tool_fragment(
    index: int,
    *,
    id: str | None = None,
    name: str | None = None,
    arguments: str | None = None,
) -> dict[str, Any]:
    """One ``delta.tool_calls[i]`` entry."""
    fragment: dict[str, Any] = {"index": index}
    if id is not None:
        fragment["id"] = id
        fragment["type"] = "function"
    function: dict[str, Any] = {}
    if name is not None:
        function["name"] = name
    if arguments is not None:
        function["arguments"] = arguments
    if function:
        fragment["function"] = function
    return fragment


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 10  # never let a stuck client keep a handler thread (and stop()) waiting

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean

    def do_GET(self) -> None:
        self._answer()

    def do_POST(self) -> None:
        self._answer()

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        owner = self.server.owner
        if getattr(self, "stale", False):
            # A request on a connection left stale: hang up without an answer.
            with owner.lock:
                owner.hang_ups += 1
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode("utf-8", "replace")
        with owner.lock:
            owner.requests.append(
                RecordedRequest(
                    self.command,
                    self.path,
                    {name.lower(): value for name, value in self.headers.items()},
                    body,
                    self.client_address[1],
                )
            )
            problems = owner.check(self.command, self.path, body)
            if problems:
                owner.history_problems.append(problems)
                response: SSEResponse | JSONResponse | None = _invalid_history(problems)
            else:
                response = owner.responses.pop(0) if owner.responses else None
        self.close_connection = True
        if response is None:
            response = error(500, "no scripted response")
        if isinstance(response, JSONResponse):
            self._send_json(response)
        else:
            self.close_connection = not response.keep_alive
            self._send_stream(response)
            if response.stale:
                self.stale = True

    def _send_json(self, response: JSONResponse) -> None:
        body = response.body
        payload = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(response.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Connection", "close")
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def _send_stream(self, response: SSEResponse) -> None:
        if response.delay:
            time.sleep(response.delay)
        self.send_response(response.status)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "keep-alive" if response.keep_alive else "close")
        for name, value in response.headers.items():
            self.send_header(name, value)
        self.end_headers()
        try:
            for event in response.events:
                self._write_chunk(_encode_event(event))
            if response.ping_every is not None:
                # Keep-alive comments and nothing else, until the client gives up.
                until = time.monotonic() + 10
                while time.monotonic() < until:
                    self._write_chunk(b": ping\n\n")
                    time.sleep(response.ping_every)
                self.close_connection = True
                return
            if response.drop:
                # Cut the connection mid-body: no [DONE], no terminating zero chunk.
                self.connection.shutdown(socket.SHUT_RDWR)
                return
            if response.done:
                self._write_chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away early; nothing to do

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()


def _encode_event(event: dict[str, Any] | str | bytes) -> bytes:
    if isinstance(event, dict):
        return b"data: " + json.dumps(event).encode() + b"\n\n"
    if isinstance(event, str):
        return event.encode()
    return event


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # stop() joins the handler threads
    block_on_close = True
    owner: SSEServer


class SSEServer:
    """A scripted OpenAI-compatible server on 127.0.0.1; a context manager.

    Attributes:
        url: the OpenAI-style base URL (``http://127.0.0.1:<port>/v1``).
        requests: every request received, in order.
        hang_ups: requests hung up on, unanswered and unrecorded, because they came on
            a connection a ``stale`` answer left open.
        history_problems: for each chat request answered 400 because its ``messages``
            failed :func:`~stream_parser.testing.validate_history`, the problems found.

    Args:
        check_history: answer 400 to a chat request whose history is invalid (the
            default); False accepts any history, for tests that send odd ones on purpose.
    """

    def __init__(self, *, check_history: bool = True) -> None:
        self.lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self.responses: list[SSEResponse | JSONResponse] = []
        self.hang_ups = 0
        self.check_history = check_history
        self.history_problems: list[list[str]] = []
        self._httpd: _Server | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    def check(self, method: str, path: str, body: Any) -> list[str]:
        """The history problems of one request; empty when it is not checked or is valid."""
        if not self.check_history or method != "POST":
            return []
        if not path.split("?", 1)[0].endswith("/chat/completions"):
            return []
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return []
        problems = validate_history(body["messages"])
        # llama.cpp's server refuses what the OpenAI format allows here (HTTP 500 there):
        # an assistant message without a string content, which a client must send as "".
        problems += [
            f"messages[{i}]: an assistant message needs a string content (llama.cpp)"
            for i, message in enumerate(body["messages"])
            if isinstance(message, dict)
            and message.get("role") == "assistant"
            and not isinstance(message.get("content"), (str, list))
        ]
        return problems

    def script(self, *responses: SSEResponse | JSONResponse) -> None:
        """Queue answers, one per request to come."""
        with self.lock:
            self.responses.extend(responses)

    def start(self) -> SSEServer:
        """Bind a free loopback port and serve in a background thread."""
        httpd = _Server(("127.0.0.1", 0), _Handler)
        httpd.owner = self
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        host, port = httpd.server_address[:2]
        self.url = f"http://{host!s}:{port}/v1"
        return self

    def stop(self) -> None:
        """Stop serving, close the socket and join every thread."""
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()
        self._httpd = None
        self._thread = None

    def __enter__(self) -> SSEServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
