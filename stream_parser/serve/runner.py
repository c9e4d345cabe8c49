"""Run the proxy under uvicorn: one process, or several workers sharing the port.

Theory of operation.  With one worker the app is built here and handed to uvicorn.  With
several, uvicorn starts each worker as a process of its own, and a process cannot be handed
an app object: it is given the import string of a factory,
``stream_parser.serve:create_app``, and the configuration travels in the environment
(:meth:`~stream_parser.serve.config.ServeConfig.to_environ`), which each worker inherits and
reads back.  uvicorn is imported only here, when the server starts.
"""

from __future__ import annotations

import logging
import os

from .config import ServeConfig

__all__ = ["FACTORY", "run_server"]

FACTORY = "stream_parser.serve:create_app"
"""The import string of the app factory, for ``uvicorn --factory`` and its workers."""

_log = logging.getLogger("stream_parser.serve")


def run_server(
    config: ServeConfig,
    *,
    host: str = "127.0.0.1",
    port: int = 8100,
    workers: int = 1,
    log_level: str = "info",
) -> None:
    """Serve the proxy until interrupted (Ctrl-C or SIGTERM).

    Args:
        config: the proxy's configuration.
        host: the address to listen on (``0.0.0.0`` for every interface, as in a container).
        port: the port to listen on.
        workers: the number of worker processes; above 1, each builds its app from the
            environment through :data:`FACTORY`.
        log_level: uvicorn's log level (``debug``, ``info``, ``warning``...).
    """
    import uvicorn

    from .app import create_app

    common = {"host": host, "port": port, "log_level": log_level, "proxy_headers": False}
    if workers == 1:
        uvicorn.run(create_app(config), **common)  # type: ignore[arg-type]
        return
    # The workers are new processes: they inherit this environment, and read it.
    os.environ.update(config.to_environ())
    _log.info("starting %d workers", workers)
    uvicorn.run(FACTORY, factory=True, workers=workers, **common)  # type: ignore[arg-type]
