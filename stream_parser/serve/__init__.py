"""The OpenAI-compatible proxy: ``stream-parser serve``, and the same rewriting in process.

Importing this package loads neither Starlette, uvicorn nor httpx2: the app and the
server runner are loaded on first use of their names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app as create_app
    from .config import ServeConfig as ServeConfig
    from .runner import run_server as run_server

__all__ = ["ServeConfig", "create_app", "run_server"]

# -- serve-b: the server (Part B); loaded lazily, they need the serve extra --
_LAZY = {"create_app": ".app", "ServeConfig": ".config", "run_server": ".runner"}


def __getattr__(name: str) -> Any:
    """The server's names, loaded on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value
