"""``stream-parser demo --web``: the demo's agent in a browser page, over a WebSocket.

Theory of operation.  The same run as the terminal demo (the same agents, tools, sandbox
and model) is served to a page: the page sends the person's messages over a WebSocket and
draws every event of the run as it arrives: thinking, text, each tool call with its
parameters filling in as the model writes them, approvals, results, usage and time.

* :mod:`.conversation`: the protocol of one connection, without the WebSocket;
* :mod:`.app`: the Starlette app (the page's files, the endpoint and its checks);
* ``static/``: the page, plain HTML, CSS and one script.

Starlette and uvicorn come from the ``serve`` extra and load only here, when the server
starts, so ``import stream_parser.demo`` stays light.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import webbrowser
from typing import TYPE_CHECKING, TextIO

from .. import DemoOptions

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ["LIBRARIES", "create_app", "run_web", "url_of"]

LIBRARIES = ("starlette", "uvicorn", "websockets")
"""What the web demo needs (the ``serve`` extra): the app, its server, and uvicorn's
WebSocket implementation."""

logger = logging.getLogger("stream_parser.demo")


def create_app(options: DemoOptions, *, host: str = "127.0.0.1") -> Starlette:
    """The web demo's Starlette app (see :func:`stream_parser.demo.web.app.create_app`)."""
    from .app import create_app as create

    return create(options, host=host)


def url_of(host: str, port: int) -> str:
    """The address a browser opens for a server on ``host`` and ``port``."""
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"  # every interface: this machine's own address reaches it
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}/"


def run_web(
    options: DemoOptions,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    open_browser: bool = False,
    err: TextIO | None = None,
) -> int:
    """Serve the web demo until interrupted; returns the exit status.

    Args:
        options: the demo's options (model, protocol, language, limits).
        host: the address to listen on; anything but a loopback address lets anyone who
            can reach it run the demo's tools, and a warning says so.
        port: the port to listen on.
        open_browser: open the page in the default browser once the server listens.
        err: where the address and the warnings go (standard error by default).

    Raises:
        ConfigError: an unknown protocol or language, or ``base_url`` without the
            ``openai`` package.
        OSError: the port is taken, or the address is not this machine's.
    """
    import uvicorn

    from .app import MAX_MESSAGE_BYTES, is_loopback

    err = err or sys.stderr
    app = create_app(options, host=host)
    url = url_of(host, port)
    if not is_loopback(host):
        print(
            f"stream-parser demo: warning: listening on {host}: anyone who can reach this "
            "address can run the demo's tools; use --host 127.0.0.1 to keep it on this machine",
            file=err,
            flush=True,
        )
    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        ws="websockets-sansio",
        ws_max_size=MAX_MESSAGE_BYTES,
        log_level="warning",
        lifespan="off",
        proxy_headers=False,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)

    async def serve() -> None:
        task = asyncio.ensure_future(server.serve())
        while not server.started and not task.done():
            await asyncio.sleep(0.05)
        if server.started:
            print(f"stream-parser demo: open {url} (Ctrl-C stops)", file=err, flush=True)
            if open_browser:
                webbrowser.open(url)
        await task

    try:
        asyncio.run(serve())
    except SystemExit:  # uvicorn's way to give up when it cannot listen
        server.started = False
    if not server.started:
        # uvicorn logged why (the port is taken...) just above.
        raise OSError(f"could not listen on {host}:{port}")
    return 0
