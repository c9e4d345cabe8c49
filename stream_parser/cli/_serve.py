"""``stream-parser serve``: the options read into a configuration, then the server run.

Loaded only when the command is ``serve``.  The configuration is read and checked (with
the environment's ``STREAM_PARSER_*`` variables under the options) before Starlette and
uvicorn load, so a mistake in it is one line and exit status 2 even without the extra.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys

from ..errors import ConfigError
from ..serve.config import ServeConfig
from ._tools import one_line

__all__ = ["run_serve"]

_SERVER_LIBRARIES = ("starlette", "uvicorn", "httpx2")

_MISSING_EXTRA = (
    "stream-parser serve needs Starlette, uvicorn and httpx2: install the serve extra "
    "(python -m pip install '.[serve]' from the repository)"
)


def _config(args: argparse.Namespace) -> ServeConfig:
    return ServeConfig.from_environ(
        upstream=args.upstream,
        api_key=args.api_key,
        upstream_api_key=args.upstream_api_key,
        timeout=args.timeout,
        dialect=args.dialect,
        bad_calls=args.bad_calls,
        raw_output=args.raw_output,
        render_tools=args.render_tools,
        instructions_role=args.instructions_role,
        start_in_reasoning=args.start_in_reasoning,
    )


def run_serve(args: argparse.Namespace) -> int:
    """Serve until interrupted; returns the exit status."""
    try:
        config = _config(args)
    except ConfigError as exc:
        print(f"stream-parser: error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    # Checked here, so that a missing extra is one line, not a traceback.
    missing = [name for name in _SERVER_LIBRARIES if importlib.util.find_spec(name) is None]
    if missing:
        print(
            f"stream-parser: error: {_MISSING_EXTRA} (missing: {', '.join(missing)})",
            file=sys.stderr,
        )
        return 2
    from ..serve.runner import run_server

    try:
        run_server(
            config, host=args.host, port=args.port, workers=args.workers, log_level=args.log_level
        )
    except KeyboardInterrupt:
        return 130
    except OSError as exc:  # the port is taken, the address is not this machine's...
        print(f"stream-parser: error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    return 0
