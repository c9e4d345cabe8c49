"""The command line's grammar: every command and option, known without loading a layer.

``stream-parser --help`` and ``--version`` are answered from here alone, so they start at
once: the parser, the dialects and the agents load only when a command runs
(:mod:`._commands`).  The values of the options that take a choice are therefore written
here; the demo and the writers check theirs against the same lists (a test keeps them
equal).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, Final

__all__ = [
    "BAD_CALLS",
    "COMMON",
    "FORMATS",
    "INSTRUCTIONS_ROLES",
    "LANGUAGES",
    "PROTOCOLS",
    "START_IN_REASONING",
    "build_parser",
    "version",
]

PROTOCOLS: Final = ("xml", "hermes", "qwen3_coder", "native")
"""``demo --protocol``: a ReAct dialect, or ``native`` for function calling."""

LANGUAGES: Final = ("en", "zh")
"""``demo --language``: the demo's own words and scripted replies exist in these."""

FORMATS: Final = ("jsonl", "sse", "pretty")  # _output.Format
"""``parse --format``: JSON lines, Server-Sent Events, or a view for a person."""

BAD_CALLS: Final = ("text", "error")  # serve.ProxySettings.bad_calls
"""``serve --bad-calls``: a call that cannot run goes out as its text, or as one error line."""

INSTRUCTIONS_ROLES: Final = ("system", "user")  # serve.ProxySettings.instructions_role
"""``serve --instructions-role``: where ``--render-tools`` writes the tools."""

START_IN_REASONING: Final = ("auto", "yes", "no")  # serve.ProxySettings.start_in_reasoning
"""``serve --start-in-reasoning``: whether a reply starts inside reasoning."""

COMMON = (
    "common commands:\n"
    "  stream-parser parse reply.txt --tools tools.py   "
    "parse a reply (- for stdin) into JSON-lines events\n"
    "  stream-parser demo                               "
    "watch an agent work in a small sandbox\n"
    "  stream-parser serve --upstream http://localhost:8000/v1\n"
    "                                                   "
    "an OpenAI-compatible proxy with parsed tool calls\n"
    "\n"
    "stream-parser --help, stream-parser parse --help: every option\n"
)


def version() -> str:
    """The package's version, from the one place it is declared (the build reads it too).

    Read from ``sys.modules``: the package is always loaded before one of its modules
    (and an import statement would point up at it).
    """
    return str(getattr(sys.modules[__name__.partition(".")[0]], "__version__", "unknown"))


def _chunk_sizes(spec: str) -> tuple[int, int]:
    low, _, high = spec.partition("-")
    try:
        a, b = int(low), int(high or low)
    except ValueError:
        raise argparse.ArgumentTypeError(f"chunk size must be N or A-B, not {spec!r}") from None
    if a < 1 or b < a:
        raise argparse.ArgumentTypeError(f"chunk size must be >= 1 and A <= B, not {spec!r}")
    return a, b


def _whole_number(least: int) -> Callable[[str], int]:
    """An option's type: a whole number of at least ``least``."""

    def read(spec: str) -> int:
        try:
            value = int(spec)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a whole number, not {spec!r}") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"must be >= {least}, not {spec!r}")
        return value

    return read


_positive = _whole_number(1)
_count = _whole_number(0)


def _seconds(spec: str) -> float:
    """An option's type: a number of seconds greater than 0."""
    try:
        value = float(spec)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of seconds, not {spec!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be > 0, not {spec!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
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
    _add_serve(commands)
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
    demo.add_argument(
        "--max-tokens",
        type=_positive,
        default=1024,
        metavar="N",
        help="the most tokens of one reply (with --base-url; default 1024)",
    )
    demo.add_argument(
        "--timeout",
        type=_seconds,
        default=120.0,
        metavar="SECONDS",
        help="how long the server may take to answer and to finish a reply "
        "(with --base-url; default 120)",
    )
    demo.add_argument(
        "--instructions-role",
        choices=("system", "user"),
        default="system",
        help="where the agent's instructions go: a system message (default), or the start "
        "of the first user message, for servers that drop system messages",
    )
    web = demo.add_argument_group(
        "the web page",
        "Serve the demo as a page in your browser instead, a live conversation (needs the "
        "serve extra: python -m pip install '.[cli,serve]')",
    )
    web.add_argument(
        "--web", action="store_true", help="serve the demo as a web page (a live conversation)"
    )
    web.add_argument(
        "--host",
        default=None,
        help="with --web: the address to listen on (default 127.0.0.1, this machine only)",
    )
    web.add_argument(
        "--port", type=_positive, default=None, help="with --web: the port (default 8000)"
    )
    web.add_argument(
        "--open", action="store_true", help="with --web: open the page in the default browser"
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
        help="the tools: path/to/tools.json (OpenAI, Anthropic or MCP tool descriptions), "
        "path/to/tools.py, module or module:ATTR; a module is imported "
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


def _add_serve(commands: Any) -> None:
    # Every default is None: an option not given leaves the environment's value
    # (STREAM_PARSER_UPSTREAM, ...) or the setting's default in place.
    serve = commands.add_parser(
        "serve",
        help="an OpenAI-compatible proxy: tool calls read from the upstream's raw text",
        description="Serve the OpenAI Chat Completions API in front of an OpenAI-compatible "
        "server, and give clients native tool_calls read from the model's raw text. Each "
        "option may be set by an environment variable instead: STREAM_PARSER_UPSTREAM, "
        "STREAM_PARSER_API_KEY, STREAM_PARSER_UPSTREAM_API_KEY, STREAM_PARSER_TIMEOUT, "
        "STREAM_PARSER_DIALECT... (see docs/serve.md). Needs the serve extra "
        "(python -m pip install '.[serve]' from the repository).",
    )
    serve.add_argument(
        "--upstream",
        metavar="URL",
        help="the OpenAI-compatible server's base URL, as a client would be given it "
        "(http://localhost:8000/v1); the proxy's /v1/... maps to it",
    )
    serve.add_argument(
        "--host",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)",
    )
    serve.add_argument("--port", type=_positive, default=8100, help="the port (default 8100)")
    serve.add_argument(
        "--dialect",
        metavar="auto|NAME",
        help="the tool-call format: auto (default: from each request's model name; an "
        "unknown name is passed through unparsed) or a dialect name (xml, hermes, "
        "qwen3_coder, ...)",
    )
    serve.add_argument(
        "--bad-calls",
        choices=BAD_CALLS,
        help="a call that cannot run: its text as content (text, the default), or one "
        "line saying what was wrong (error)",
    )
    serve.add_argument(
        "--api-key",
        metavar="KEY",
        help="require this key from clients (Authorization: Bearer KEY); it is not "
        "forwarded (better: STREAM_PARSER_API_KEY, which ps does not show)",
    )
    serve.add_argument(
        "--upstream-api-key",
        metavar="KEY",
        help="send this key upstream instead of the client's Authorization header",
    )
    serve.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="wait this long for the upstream's first byte (then 504) and for each later "
        "one (then an error event); default 600",
    )
    serve.add_argument(
        "--no-raw-output",
        dest="raw_output",
        action="store_false",
        default=None,
        help="do not ask the upstream for special tokens (skip_special_tokens: false...); "
        "for servers that reject fields they do not know",
    )
    serve.add_argument(
        "--render-tools",
        action="store_true",
        default=None,
        help="for servers that ignore tools: write them into the prompt in the dialect's "
        "words, send no tools, and rewrite the history to match",
    )
    serve.add_argument(
        "--instructions-role",
        choices=INSTRUCTIONS_ROLES,
        help="with --render-tools: the tools go into the system message (default) or the "
        "start of the first user message",
    )
    serve.add_argument(
        "--start-in-reasoning",
        choices=START_IN_REASONING,
        help="whether a reply starts inside reasoning: auto (default: from the model and "
        "the request's chat_template_kwargs), yes or no",
    )
    serve.add_argument(
        "--workers",
        type=_positive,
        default=1,
        metavar="N",
        help="worker processes (default 1); each holds its own connections to the upstream",
    )
    serve.add_argument(
        "--log-level",
        choices=("critical", "error", "warning", "info", "debug"),
        default="info",
        help="the server's log level (default info)",
    )
