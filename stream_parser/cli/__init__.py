"""The ``stream-parser`` command: a live agent demo, or parse a reply into events as it streams.

Theory of operation.  ``stream-parser parse FILE`` (``-`` for standard input) reads its
input in blocks as they arrive (:mod:`._input`: incremental UTF-8 decoding, invalid
bytes replaced, binary input parsed with a warning), feeds them to a
:class:`~stream_parser.core.parser.StreamToolParser`, and writes every event as soon as
the parser decides it (:mod:`._output`: JSON lines, Server-Sent Events or a view for a
person), flushing each one.  Nothing is held but the parser's own bounded state, so a
live model can be piped through it and a large file takes no more memory than a small
one.  ``--blocks-only`` keeps the block events (text in the parser's pieces, thinking,
tool calls), errors and usage, and drops the deltas.

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

See ``docs/cli.md`` for every option.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import socket
import sys
from collections.abc import Iterator, Sequence
from typing import IO, Any, TextIO

from ..core.config import ParserConfig
from ..core.events import ParseEvent
from ..core.parser import StreamToolParser
from ..core.plugins import FencedCodePlugin, ParsePlugin
from ..demo import LANGUAGES, PROTOCOLS, DemoOptions, run_demo
from ..dialects.detect import resolve_model_dialect, with_reasoning
from ..errors import ConfigError
from ..llm.base import ModelError
from ..tools import ToolRegistry
from ._input import chunked, decoded, read_blocks
from ._output import FORMATS, make_writer
from ._tools import load_tools, one_line

__all__ = ["load_tools", "main"]

COMMON = (
    "common commands:\n"
    "  stream-parser parse reply.txt --tools tools.py   "
    "parse a reply (- for stdin) into JSON-lines events\n"
    "  stream-parser demo                               "
    "watch an agent work in a small sandbox\n"
    "\n"
    "stream-parser --help, stream-parser parse --help: every option\n"
)


def version() -> str:
    """The installed package's version (or the source tree's, when not installed)."""
    try:
        return importlib.metadata.version("stream-parser")
    except importlib.metadata.PackageNotFoundError:
        # Not installed (a source checkout on the path): the package's own attribute.
        # Read from sys.modules: the package is always loaded before one of its modules.
        return str(getattr(sys.modules.get("stream_parser"), "__version__", "unknown"))


def _chunk_sizes(spec: str) -> tuple[int, int]:
    low, _, high = spec.partition("-")
    try:
        a, b = int(low), int(high or low)
    except ValueError:
        raise argparse.ArgumentTypeError(f"chunk size must be N or A-B, not {spec!r}") from None
    if a < 1 or b < a:
        raise argparse.ArgumentTypeError(f"chunk size must be >= 1 and A <= B, not {spec!r}")
    return a, b


def _positive(spec: str) -> int:
    try:
        value = int(spec)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {spec!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, not {spec!r}")
    return value


def _count(spec: str) -> int:
    try:
        value = int(spec)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {spec!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, not {spec!r}")
    return value


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="stream-parser",
        description="Parse LLM output into text, thinking and tool-call events.",
        epilog=COMMON,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"%(prog)s {version()}", help="print the version"
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_demo(commands)
    _add_parse(commands)
    return parser


def _add_demo(commands: Any) -> None:
    demo = commands.add_parser(
        "demo",
        help="watch an agent work in a small sandbox (scripted model: no network, no key)",
        description="Watch an agent work in a small sandbox (scripted model: no network).",
    )
    demo.add_argument(
        "--protocol",
        choices=PROTOCOLS,
        default="xml",
        help="the agent's tool-call format: a ReAct dialect, or native function calling",
    )
    demo.add_argument("--language", choices=LANGUAGES, default="en", help="the demo's language")
    demo.add_argument(
        "--no-delay", action="store_true", help="stream the scripted replies without pauses"
    )
    demo.add_argument("--json", action="store_true", help="print the events as JSON lines")
    demo.add_argument("--plain", action="store_true", help="plain text even if rich is installed")
    demo.add_argument("--base-url", help="run against an OpenAI-compatible server instead")
    demo.add_argument("--model", help="the server's model name (with --base-url; default local)")
    demo.add_argument("--api-key", help="the server's API key (with --base-url)")
    demo.add_argument(
        "--max-retries",
        type=_count,
        metavar="N",
        help="retries of a failed request to the server (with --base-url; default 2)",
    )


def _add_parse(commands: Any) -> None:
    parse = commands.add_parser(
        "parse",
        help="parse a reply (a file, or - for stdin) into events as it streams",
        description="Parse a model's reply into events, written as soon as each is decided.",
    )
    parse.add_argument("file", help="the text to parse, or - for standard input (read live)")
    parse.add_argument(
        "--tools",
        metavar="SPEC",
        help="the tools: path/to/tools.py, module or module:ATTR; a module is imported "
        "with the current directory first on the path (default: no tools)",
    )
    parse.add_argument(
        "--format",
        choices=FORMATS,
        default="jsonl",
        help="jsonl: one JSON event a line (default); sse: Server-Sent Events frames; "
        "pretty: text, thinking and calls for a person (colours with rich on a terminal)",
    )
    parse.add_argument(
        "--dialect",
        metavar="NAME",
        help="the tool-call format: xml (default), hermes, qwen3_coder..., or auto "
        "(the format of --model's family; its thinking tags unless --thinking-tag)",
    )
    parse.add_argument(
        "--model",
        metavar="NAME",
        help="the model's name, for --dialect auto (given alone, it implies --dialect auto)",
    )
    parse.add_argument(
        "--blocks-only",
        action="store_true",
        help="only block events (text in the parser's pieces, thinking, tool calls, code "
        "blocks), errors and usage: no deltas",
    )
    parse.add_argument(
        "--chunk-size",
        type=_chunk_sizes,
        metavar="N|A-B",
        help="simulate streaming: feed chunks of N characters, or random sizes A-B",
    )
    parse.add_argument(
        "--seed", type=int, default=0, help="seed of the random chunk sizes (default 0)"
    )
    parse.add_argument(
        "--thinking-tag",
        nargs=2,
        action="append",
        metavar=("START", "END"),
        help="a thinking tag pair (repeatable; replaces the defaults)",
    )
    parse.add_argument(
        "--start-in-thinking",
        action="store_true",
        default=None,
        help="the reply starts inside reasoning (default: as the dialect says)",
    )
    parse.add_argument(
        "--fence-aware",
        action="store_true",
        help="tags inside Markdown code fences are text, not calls or thinking",
    )
    parse.add_argument(
        "--fenced-code", action="store_true", help="fenced code blocks as code_block events"
    )
    parse.add_argument(
        "--max-tool-size",
        type=_positive,
        metavar="CHARS",
        help="the largest tool call kept, in characters (default 1048576): a larger one "
        "is reported as an error and delivered as text",
    )


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


def _model_failure(exc: ModelError, base_url: str | None) -> str:
    """One line about a model server that failed the demo: what, where, and what to try."""
    server = f"the model server at {base_url}"
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


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``stream-parser`` command; returns the exit status."""
    arguments = sys.argv[1:] if argv is None else list(argv)
    parser = _build_parser()
    if not arguments:
        sys.stderr.write(parser.format_usage() + "\n" + COMMON)
        return 2
    args = parser.parse_args(arguments)
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
        message = _model_failure(exc, getattr(args, "base_url", None))
        print(f"stream-parser: error: {one_line(message)}", file=sys.stderr)
        return 1
