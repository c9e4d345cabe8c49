"""The commands: ``parse`` and ``demo`` run, and what can go wrong becomes an exit status.

Loaded by :func:`~stream_parser.cli.main` once the command line is read, so that
``--help`` and ``--version`` never load the layers below.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from collections.abc import Iterator
from typing import IO, Any, TextIO

from ..core.config import ParserConfig
from ..core.events import ParseEvent
from ..core.parser import StreamToolParser
from ..core.plugins import FencedCodePlugin, ParsePlugin
from ..demo import DemoOptions, run_demo
from ..dialects.detect import resolve_model_dialect, with_reasoning
from ..errors import ConfigError
from ..llm.base import ModelError
from ..tools import ToolRegistry
from ._input import chunked, decoded, read_blocks
from ._output import make_writer
from ._tools import load_tools, one_line

__all__ = ["run"]


def run(args: argparse.Namespace) -> int:
    """Run the command that ``args`` names; returns the exit status."""
    try:
        if args.command == "demo":
            return _run_demo(args, sys.stdout)
        return _run_parse(args, sys.stdout)
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except KeyboardInterrupt:
        return 130
    except (ConfigError, OSError) as exc:
        print(f"stream-parser: error: {one_line(str(exc))}", file=sys.stderr)
        return 2
    except ModelError as exc:
        # Not the user's mistake in the command (status 2): the server failed the run.
        message = _model_failure(
            exc, getattr(args, "base_url", None), getattr(args, "timeout", None)
        )
        print(f"stream-parser: error: {one_line(message)}", file=sys.stderr)
        return 1


def _config(args: argparse.Namespace) -> ParserConfig:
    options: dict[str, Any] = {
        "start_in_thinking": args.start_in_thinking,
        "fence_aware": args.fence_aware,
        "emit_deltas": not args.blocks_only,
    }
    if args.thinking_tag:
        options["thinking_tags"] = tuple(tuple(pair) for pair in args.thinking_tag)
    if args.max_tool_size is not None:
        options["max_tool_size"] = args.max_tool_size
    dialect = args.dialect or ("auto" if args.model else "xml")
    found = None
    if dialect == "auto":
        if not args.model:
            raise ConfigError(
                "--dialect auto needs --model NAME (the served model's name), "
                "or name the dialect: --dialect hermes"
            )
        found = resolve_model_dialect(
            args.model, "--dialect auto", instead="name the dialect instead: --dialect hermes"
        )
        dialect = found.dialect
    elif args.model:
        raise ConfigError("--model is read only with --dialect auto")
    options["dialect"] = dialect
    config = ParserConfig(**options)
    if found is not None and not args.thinking_tag:
        config = with_reasoning(config, found)
    return config


def _tools(spec: str | None) -> ToolRegistry | dict[str, Any]:
    if not spec:
        return {}
    # The console script's sys.path starts with its own folder, python -m's with the
    # current directory: put the latter first for both, so a module name means one thing.
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)
    return load_tools(spec)


def _warn_binary(name: str) -> None:
    print(
        f"stream-parser: warning: {name} looks binary (it holds NUL bytes); parsed as text",
        file=sys.stderr,
        flush=True,
    )


def _open(name: str) -> IO[Any]:
    if name == "-":
        # The binary buffer, so that invalid UTF-8 is decoded with replacement; a stand-in
        # without one (a text stream) is read as text.
        return getattr(sys.stdin, "buffer", sys.stdin)
    return open(name, "rb")  # closed by the caller


def _batches(
    parser: StreamToolParser, args: argparse.Namespace, source: IO[Any]
) -> Iterator[list[ParseEvent]]:
    """The events decided by each chunk of the input, then by its end."""
    name = "standard input" if args.file == "-" else args.file
    text = decoded(read_blocks(source), lambda: _warn_binary(name))
    for chunk in chunked(text, args.chunk_size, args.seed):
        yield parser.feed(chunk)
    yield parser.close()


def _keep(event: ParseEvent) -> bool:
    """What ``--blocks-only`` keeps.

    The parser emits no deltas then, but still announces calls: keep blocks, errors and
    usage.  Text stays in the parser's pieces: merging it would hold a whole run of text
    in memory.
    """
    return event.TILES or event.kind in ("error", "usage")


def _run_parse(args: argparse.Namespace, out: TextIO) -> int:
    # Everything that can be wrong with the options and the tools is found before the
    # first read.
    plugins: list[ParsePlugin] = [FencedCodePlugin()] if args.fenced_code else []
    parser = StreamToolParser(_tools(args.tools), config=_config(args), plugins=plugins)
    writer = make_writer(args.format, out, sys.stderr)
    source = _open(args.file)
    try:
        for batch in _batches(parser, args, source):
            for event in batch:
                if not args.blocks_only or _keep(event):
                    writer.write(event)
            if batch:
                writer.flush()
        writer.close()
    finally:
        if args.file != "-":
            source.close()
    return 0


def _run_demo(args: argparse.Namespace, out: TextIO) -> int:
    options = DemoOptions(
        protocol=args.protocol,
        language=args.language,
        delay=0.0 if args.no_delay else DemoOptions.delay,
        json_lines=args.json,
        plain=args.plain,
        base_url=args.base_url,
        model=args.model,
        api_key=args.api_key,
        max_retries=args.max_retries,
        max_tokens=args.max_tokens,
        timeout=args.timeout,
        instructions_role=args.instructions_role,
    )
    return run_demo(options, out)


# What to check after an HTTP error status, by status (the first digit for the rest).
_HTTP_HINTS = {
    401: "check --api-key",
    403: "check --api-key",
    404: "check --base-url (it usually ends in /v1) and --model",
    429: "the server is busy or over its quota; try again later",
}
_HTTP_CLASS_HINTS = {
    4: "the server refused the request; check --model",
    5: "the server failed; see its log, or try again",
}


def _unreachable(exc: BaseException) -> str | None:
    """Why no connection was made, read from the OS error under ``exc``; None if none is.

    The client wraps the socket's error in its own exceptions: the standard library's
    types at the bottom of the chain say it plainly, whichever client raised it.
    """
    found: list[OSError] = []
    seen: set[int] = set()
    cause = exc.__cause__ or exc.__context__
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, OSError):
            found.append(cause)
        cause = cause.__cause__ or cause.__context__
    for error in found:
        if isinstance(error, ConnectionRefusedError):
            return "connection refused"
        if isinstance(error, socket.gaierror):
            return "unknown host name"
        if isinstance(error, TimeoutError):
            return "timed out"
    if found:
        return found[0].strerror or str(found[0]) or type(found[0]).__name__
    return None


def _model_failure(exc: ModelError, base_url: str | None, timeout: float | None) -> str:
    """One line about a model server that failed the demo: what, where, and what to try."""
    server = f"the model server at {base_url}"
    if timeout is not None and "reply_timeout" in str(exc):
        # The demo's --timeout is the model's reply_timeout: name the option, not the
        # library's parameter.
        return (
            f"{server} did not finish within --timeout {timeout:g} s (a server that hangs, "
            "or a reply that takes longer); raise --timeout, or see the server's log"
        )
    if exc.status_code is not None:
        hint = _HTTP_HINTS.get(exc.status_code) or _HTTP_CLASS_HINTS.get(
            exc.status_code // 100, "check --base-url and --model"
        )
        return f"{server} answered HTTP {exc.status_code}: {exc.message}; {hint}"
    why = _unreachable(exc)
    if why is not None:
        return f"{server} could not be reached ({why}); is it running? check --base-url"
    # A reply cut short (a dropped connection, a server that crashed mid-reply), or no
    # reply in time: the message says which.
    return f"{server} failed: {exc}; try again, or see the server's log"


def _silence_stdout() -> None:
    """Point standard output at the null device: its reader is gone.

    The interpreter flushes standard output once more on exit; without this, that flush
    would meet the closed pipe again and print a complaint.
    """
    try:
        null = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(null, sys.stdout.fileno())
        finally:
            os.close(null)
    except (OSError, ValueError, AttributeError):
        pass  # not a real file (a test's capture): nothing will flush it to a pipe
