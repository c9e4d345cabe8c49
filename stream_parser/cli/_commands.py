"""The commands: ``parse`` and ``demo`` run, and what can go wrong becomes an exit status.

Loaded by :func:`~stream_parser.cli.main` once the command line is read, so that
``--help`` and ``--version`` never load the layers below.
"""

from __future__ import annotations

import argparse
import importlib.util
import logging
import os
import sys
from collections.abc import Iterator
from typing import IO, Any, TextIO

from ..core.config import ParserConfig
from ..core.events import ParseEvent
from ..core.parser import StreamToolParser
from ..core.plugins import FencedCodePlugin, ParsePlugin
from ..demo import DemoOptions, model_failure, run_demo
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
        message = model_failure(
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
    if not args.web:
        for given, name in ((args.host, "--host"), (args.port, "--port"), (args.open, "--open")):
            if given:
                raise ConfigError(f"{name} is read only with --web")
    elif args.json or args.plain:
        raise ConfigError("--json and --plain are for the terminal demo, not --web")
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
    if args.web:
        return _run_web(options, args)
    return run_demo(options, out)


_MISSING_WEB = (
    "stream-parser demo --web needs Starlette, uvicorn and websockets: install the serve "
    "extra (python -m pip install '.[cli,serve]' from the repository)"
)


def _run_web(options: DemoOptions, args: argparse.Namespace) -> int:
    from ..demo.web import LIBRARIES

    # Checked here, so that a missing extra is one line, not a traceback.
    missing = [name for name in LIBRARIES if importlib.util.find_spec(name) is None]
    if missing:
        raise ConfigError(f"{_MISSING_WEB} (missing: {', '.join(missing)})")
    from ..demo.web import run_web

    _log_to_stderr()
    return run_web(
        options,
        host=args.host or "127.0.0.1",
        port=args.port or 8000,
        open_browser=args.open,
    )


def _log_to_stderr() -> None:
    """Show the web demo's log (connections, runs) on standard error."""
    log = logging.getLogger("stream_parser.demo")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("stream-parser demo: %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.INFO)


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
