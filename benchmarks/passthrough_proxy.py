"""A bare pass-through proxy: the floor a Python ASGI proxy reaches on this machine.

Starlette, uvicorn and httpx2, as ``stream-parser serve`` uses them, relaying every request
to the upstream and the upstream's bytes back unchanged, as they come: no parsing, no
rewriting, no error mapping.  ``benchmarks/bench_serve.py`` runs it beside the real proxy,
so that what the proxy costs is read against what any proxy of this build costs::

    python benchmarks/passthrough_proxy.py --upstream http://127.0.0.1:8000/v1 --port 8101
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator

import httpx2
import uvicorn
from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import StreamingResponse
from starlette.routing import Route

_SKIP = {"host", "content-length", "connection", "transfer-encoding", "date", "server"}


def make_app(upstream: str) -> Starlette:
    base = httpx2.URL(upstream)
    prefix = base.path.rstrip("/")
    client = httpx2.AsyncClient(
        timeout=httpx2.Timeout(600),
        limits=httpx2.Limits(max_connections=None, max_keepalive_connections=100),
        trust_env=False,
    )

    async def relay(request: Request) -> StreamingResponse:
        path = request.url.path
        target = prefix + path[3:] if path.startswith("/v1/") else path
        outgoing = client.build_request(
            request.method,
            base.copy_with(path=target, query=request.url.query.encode() or None),
            headers=[(k, v) for k, v in request.headers.items() if k not in _SKIP],
            content=await request.body(),
        )
        response = await client.send(outgoing, stream=True)

        async def body() -> AsyncIterator[bytes]:
            async for piece in response.aiter_raw():
                yield piece

        headers = {k: v for k, v in response.headers.items() if k.lower() not in _SKIP}
        return StreamingResponse(
            body(),
            status_code=response.status_code,
            headers=headers,
            background=BackgroundTask(response.aclose),
        )

    return Starlette(routes=[Route("/{path:path}", relay, methods=["GET", "POST"])])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--port", type=int, default=8101)
    parser.add_argument("--host", default="127.0.0.1")
    args = parser.parse_args()
    uvicorn.run(make_app(args.upstream), host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
