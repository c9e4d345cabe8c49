"""A loopback upstream for the proxy's tests: a Starlette app under uvicorn, in a thread.

It plays the OpenAI-compatible server behind ``stream-parser serve``.  Each test registers
the replies it wants (:meth:`Upstream.add` returns a key) and asks for one by sending the
key in the ``x-reply`` header, which the proxy forwards like any other header; so tests
and concurrent streams never take each other's replies.  A request without the header
gets the reply registered under ``"default"``, or a 500.

A reply (:class:`Reply`) is a status and either a JSON body or a list of byte pieces,
each written as soon as it is produced (one HTTP chunk each), with an optional pause
before the head and between the pieces.  ``cut=True`` ends the reply by breaking the
connection without the chunked body's end, as a crashed server does.

Everything received is recorded (:attr:`Upstream.requests`), and what became of each
streamed reply (:attr:`Upstream.outcomes`: ``"complete"``, ``"cut"`` or
``"client left"``), so a test can see that the proxy hung up on the upstream.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

__all__ = ["Recorded", "Reply", "Upstream", "sse_pieces"]


@dataclass
class Reply:
    """What the upstream answers to one request."""

    pieces: list[bytes] = field(default_factory=list)
    json: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # before the head
    pause: float = 0.0  # between pieces
    cut: bool = False  # break the connection after the pieces
    media_type: str = "text/event-stream"


@dataclass
class Recorded:
    """One request as the upstream received it (header names lower-cased)."""

    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body)


class _Cut(Exception):
    """Raised inside a streamed body: uvicorn then drops the connection mid-body."""


def sse_pieces(chunks: list[dict[str, Any]], *, done: bool = True) -> list[bytes]:
    """Chunk objects as ``data:`` events, one piece each, then ``data: [DONE]``."""
    pieces = [b"data: " + json.dumps(c).encode() + b"\n\n" for c in chunks]
    return [*pieces, b"data: [DONE]\n\n"] if done else pieces


class Upstream:
    """The app, its uvicorn server on a free loopback port, and what it saw."""

    def __init__(self) -> None:
        self.replies: dict[str, Reply] = {}
        self.requests: list[Recorded] = []
        self.outcomes: dict[str, str] = {}
        self._keys = itertools.count()
        self._lock = threading.Lock()
        self.app = Starlette(routes=[Route("/{path:path}", self._answer, methods=["GET", "POST"])])
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        config = uvicorn.Config(
            self.app, log_level="critical", lifespan="off", timeout_graceful_shutdown=1
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )

    def start(self) -> Upstream:
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the loopback upstream did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._socket.close()

    def add(self, reply: Reply, key: str | None = None) -> str:
        """Register ``reply``; returns the key to send in the ``x-reply`` header."""
        with self._lock:
            key = key or f"r{next(self._keys)}"
            self.replies[key] = reply
        return key

    def received(self, key: str) -> list[Recorded]:
        """The requests that asked for the reply ``key``."""
        with self._lock:
            return [r for r in self.requests if r.headers.get("x-reply") == key]

    def wait_outcome(self, key: str, timeout: float = 10.0) -> str | None:
        """What became of the streamed reply ``key``, once known (None if not in time)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if key in self.outcomes:
                    return self.outcomes[key]
            time.sleep(0.02)
        return None

    async def _answer(self, request: Request) -> Response:
        body = await request.body()
        key = request.headers.get("x-reply", "default")
        with self._lock:
            self.requests.append(
                Recorded(
                    request.method,
                    request.url.path,
                    request.url.query,
                    dict(request.headers),
                    body,
                )
            )
            reply = self.replies.get(key)
        if reply is None:
            return JSONResponse(
                {"error": {"message": f"no reply {key!r}", "type": "test", "code": 500}}, 500
            )
        if reply.delay:
            await asyncio.sleep(reply.delay)
        if reply.json is not None or not reply.pieces:
            return JSONResponse(reply.json, reply.status, headers=reply.headers)
        return StreamingResponse(
            self._stream(key, reply),
            status_code=reply.status,
            headers=reply.headers,
            media_type=reply.media_type,
        )

    async def _stream(self, key: str, reply: Reply) -> AsyncIterator[bytes]:
        outcome = "client left"  # unless the loop ends: cancelled when the client hangs up
        try:
            for index, piece in enumerate(reply.pieces):
                if index and reply.pause:
                    await asyncio.sleep(reply.pause)
                yield piece
            outcome = "cut" if reply.cut else "complete"
        finally:
            with self._lock:
                self.outcomes[key] = outcome
        if reply.cut:
            raise _Cut("the reply is cut here on purpose")
