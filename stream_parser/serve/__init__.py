"""The OpenAI-compatible proxy: ``stream-parser serve``, and the same rewriting in process.

Theory of operation.  :class:`~stream_parser.serve.rewrite.ChatRewriter` rewrites one
chat-completions request and its reply, sans-IO; ``stream-parser serve`` (an ASGI app
on Starlette and uvicorn, the ``serve`` extra: :func:`create_app`, :func:`run_server`,
configured by :class:`ServeConfig`) and the in-process transports
(:class:`~stream_parser.serve.transport.ParsingTransport` and its async twin, for an
``openai`` client) both drive it.  Importing this package loads neither Starlette,
uvicorn nor httpx2: every name is loaded on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app as create_app
    from .config import ServeConfig as ServeConfig
    from .rewrite import ChatRewriter as ChatRewriter
    from .rewrite import RegistryCache as RegistryCache
    from .runner import run_server as run_server
    from .settings import ProxySettings as ProxySettings
    from .transport import AsyncParsingTransport as AsyncParsingTransport
    from .transport import ParsingTransport as ParsingTransport

__all__ = [
    "AsyncParsingTransport",
    "ChatRewriter",
    "ParsingTransport",
    "ProxySettings",
    "RegistryCache",
    "ServeConfig",
    "create_app",
    "run_server",
]

_LAZY = {
    "ChatRewriter": ".rewrite",
    "RegistryCache": ".rewrite",
    "ProxySettings": ".settings",
    "ParsingTransport": ".transport",
    "AsyncParsingTransport": ".transport",
    # the server: the serve extra
    "ServeConfig": ".config",
    "create_app": ".app",
    "run_server": ".runner",
}


def __getattr__(name: str) -> Any:
    """The package's names, loaded on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
