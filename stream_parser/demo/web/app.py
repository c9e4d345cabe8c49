"""The web demo's Starlette app: one page, its two files, and the WebSocket at ``/ws``.

Theory of operation.  The page (``static/``: HTML, CSS and one script, package data) is
served as it is: no build step, nothing fetched from elsewhere, so it works offline.  Its
responses carry a content security policy that allows only the page's own script and
style and connections back to this server: model output that the page shows is text, and
even a bug there could not load or run anything from outside.

The WebSocket endpoint checks where the connection comes from before accepting it.  A
browser sends the page's ``Origin`` with every WebSocket handshake, and a WebSocket is not
bound by the same-origin policy: without the check, any site the person visits could
connect to the demo on their machine and run its tools (cross-site WebSocket hijacking).
An ``Origin`` other than the server's own is refused (HTTP 403); a client that sends none
is not a browser page and is let in.  On a loopback address only loopback host names are
served (``TrustedHostMiddleware``), which stops DNS rebinding, where a foreign name is
made to point at 127.0.0.1.  The size of one message is uvicorn's ``ws_max_size``
(:data:`MAX_MESSAGE_BYTES`): a larger one closes the socket with code 1009.

Each connection gets its own sandbox copy and its own
:class:`~stream_parser.demo.web.conversation.Conversation`; the endpoint only moves text
between the socket and the conversation, and closes the conversation when the socket
closes, which cancels a run at once.
"""

from __future__ import annotations

import ipaddress
import logging
from importlib import resources
from typing import Final

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route, WebSocketRoute
from starlette.websockets import WebSocket

from .. import DemoOptions, check_options, make_model
from .._tools import sandbox_copy
from .conversation import Conversation

__all__ = ["LOOPBACK_NAMES", "MAX_MESSAGE_BYTES", "create_app", "is_loopback"]

logger = logging.getLogger("stream_parser.demo")

MAX_MESSAGE_BYTES: Final = 1 << 20
"""The largest message the WebSocket takes (1 MB); a larger one closes it with 1009."""

LOOPBACK_NAMES: Final = ("127.0.0.1", "localhost", "::1", "[::1]")
"""The host names a server bound to a loopback address answers to."""

# The page's files, by the path it asks for: (file name, media type).
_FILES: Final = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/demo.css": ("demo.css", "text/css; charset=utf-8"),
    "/demo.js": ("demo.js", "text/javascript; charset=utf-8"),
}

_HEADERS: Final = {
    # Only the page's own files, and WebSocket connections back to this server ('self'
    # covers ws: on the same host and port).
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


def is_loopback(host: str) -> bool:
    """Whether ``host`` (an address or a name) only reaches this machine."""
    if host.strip("[]") in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def create_app(options: DemoOptions, *, host: str = "127.0.0.1") -> Starlette:
    """The web demo's app for ``options``, to be served on ``host``.

    Raises:
        ConfigError: an unknown protocol or language, or ``base_url`` without the
            ``openai`` package.
    """
    check_options(options)
    model_label = make_model(options)[1]  # checks the openai extra now, not per connection
    files = {path: _read(name) for path, (name, _) in _FILES.items()}

    async def page(request: Request) -> Response:
        media_type = _FILES[request.url.path][1]
        return Response(files[request.url.path], media_type=media_type, headers=_HEADERS)

    async def socket(websocket: WebSocket) -> None:
        origin = websocket.headers.get("origin")
        if origin is not None and origin != f"http://{websocket.headers.get('host', '')}":
            logger.warning("refused a WebSocket from another origin: %r", origin)
            await websocket.close(code=1008)  # before accept: the handshake gets HTTP 403
            return
        await websocket.accept()
        with sandbox_copy() as root:
            conversation = Conversation(options, websocket.send_text, root)
            try:
                await conversation.start(model_label)
                while True:
                    message = await websocket.receive()
                    if message["type"] == "websocket.disconnect":
                        break
                    text = message.get("text")
                    if text is None:
                        await conversation.error("send JSON as text messages, not binary ones")
                        continue
                    await conversation.handle(text)
            finally:
                await conversation.close()

    middleware = []
    if is_loopback(host):
        middleware.append(Middleware(TrustedHostMiddleware, allowed_hosts=list(LOOPBACK_NAMES)))
    routes: list[BaseRoute] = [Route(path, page) for path in _FILES]
    routes.append(WebSocketRoute("/ws", socket))
    return Starlette(routes=routes, middleware=middleware)


def _read(name: str) -> bytes:
    return resources.files("stream_parser.demo.web").joinpath("static").joinpath(name).read_bytes()
