"""The ``stream-parser`` command: a live agent demo, parse a reply as it streams, or serve.

Theory of operation.  ``stream-parser parse FILE`` (``-`` for standard input) reads its
input in blocks as they arrive (:mod:`._input`: incremental UTF-8 decoding, invalid
bytes replaced, binary input parsed with a warning), feeds them to a
:class:`~stream_parser.core.parser.StreamToolParser`, and writes every event as soon as
the parser decides it (:mod:`._output`: JSON lines, Server-Sent Events or a view for a
person), flushing each one.  Nothing is held but the parser's own bounded state, so a
live model can be piped through it and a large file takes no more memory than a small
one.  ``--blocks-only`` keeps the block events (text in the parser's pieces, thinking,
tool calls), errors and usage, and drops the deltas.

``stream-parser serve --upstream URL`` runs the OpenAI-compatible proxy
(:mod:`stream_parser.serve`, the ``serve`` extra) until interrupted.

The tools come from ``--tools`` (:mod:`._tools`), with the current directory first on
the import path, as under ``python -m``.

What the model wrote never makes the command fail: it is data, written as events.
What the user got wrong (a missing file, a tools module that does not load or defines
no tools, an invalid option) is one line on standard error, ``stream-parser: error:
...``, and exit status 2.  A model server that fails the demo (``--base-url``: it cannot
be reached, answers an HTTP error, or cuts its reply short) is one line too, saying what
failed, at which URL and what to check, and exit status 1.  A reader that goes away
early (``stream-parser parse big.txt | head``) ends the command quietly with status 0,
as other Unix tools do; Ctrl-C ends it with status 130.

Examples::

    stream-parser parse examples/agent_reply.txt --tools examples/tools.py
    my-model-client | stream-parser parse - --tools myproject.tools:TOOLS --format pretty
    stream-parser parse reply.txt --tools tools.py --dialect hermes --format sse
    stream-parser parse reply.txt --tools tools.py --model Qwen/Qwen3-8B --blocks-only
    stream-parser parse reply.txt --chunk-size 1-8 --seed 3
    python -m stream_parser parse reply.txt --blocks-only

    stream-parser demo
    stream-parser demo --protocol hermes --language zh --no-delay

    stream-parser serve --upstream http://localhost:8000/v1
    stream-parser serve --upstream http://localhost:8080/v1 --dialect xml --render-tools

See ``docs/cli.md`` for every option.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ._argv import COMMON, build_parser

if TYPE_CHECKING:
    from ._tools import load_tools as load_tools

__all__ = ["load_tools", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``stream-parser`` command; returns the exit status."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    if not arguments:
        sys.stderr.write(parser.format_usage() + "\n" + COMMON)
        return 2
    args = parser.parse_args(arguments)  # --help and --version end here
    if args.command == "serve":
        from ._serve import run_serve  # the server's own layers, and none of the others

        return run_serve(args)
    from ._commands import run  # the layers a command needs load only now

    return run(args)


def __getattr__(name: str) -> Any:
    """``load_tools``, loaded on first use (it needs the tools layer)."""
    if name == "load_tools":
        from ._tools import load_tools

        return load_tools
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
