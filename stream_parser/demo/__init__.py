"""``stream-parser demo``: an agent at work, shown live in the terminal.

Theory of operation.  The demo copies a small bundled sandbox (``sandbox/``, package
data) to a temporary folder and gives an agent three tools confined to that copy:
``list_files``, ``read_file`` and ``write_file``, the last marked as needing approval.
The demo approves it automatically and shows the approval.  The model is a
:class:`~stream_parser.testing.ScriptedModel` replaying the replies of a small task
(``_script.py``), wrapped so that each chunk arrives after a short pause; with
``base_url`` the same task goes to a real OpenAI-compatible server instead; a server
that cannot be reached, answers an HTTP error or cuts its reply short raises
:class:`~stream_parser.llm.ModelError` out of :func:`run_demo` (the command line turns
it into one line and exit status 1).

``protocol`` picks the agent: ``"xml"``, ``"hermes"`` or ``"qwen3_coder"`` run a
:class:`~stream_parser.agent.ReActAgent` in that dialect, ``"native"`` a
:class:`~stream_parser.agent.FunctionCallAgent`.  Every event of the run goes to a
renderer (``_render.py``): text for a person (with colours when ``rich`` is installed)
or JSON lines.  ``language`` switches the demo's own words, the scripted replies and the agent's
prompts.

``--web`` serves the same run to a browser page over a WebSocket
(:mod:`stream_parser.demo.web`, loaded only then).

It sits on the top floor with the command line, since it uses every layer below.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, TextIO

from ..agent import Approver, FunctionCallAgent, ReActAgent
from ..agent.loop import AgentLoop
from ..core.events import ToolCallEvent
from ..errors import ConfigError
from ..llm.base import ChatModel
from ..tools import Tool
from ._failure import model_failure
from ._render import LABELS, make_renderer
from ._script import PROTOCOLS, SlowModel, scripted_model, task
from ._tools import make_tools, sandbox_copy

__all__ = [
    "LANGUAGES",
    "PROTOCOLS",
    "DemoOptions",
    "check_options",
    "make_agent",
    "make_model",
    "model_failure",
    "run_demo",
]

LANGUAGES = tuple(LABELS)
"""``language`` values: the demo's own words and scripted replies exist in these."""

_SYSTEM_PROMPT = {
    "en": "You are a careful assistant working in a small project folder. "
    "Use the tools to look at the files before you answer.",
    "zh": "你是一个细心的助手，在一个小项目文件夹中工作。回答前先用工具查看文件。",
}


@dataclass(frozen=True)
class DemoOptions:
    """What ``stream-parser demo`` runs.

    Attributes:
        protocol: ``"xml"``, ``"hermes"``, ``"qwen3_coder"`` (text protocol) or
            ``"native"`` (function calling).
        language: ``"en"`` or ``"zh"``.
        delay: seconds between two streamed chunks of the scripted model.
        json_lines: print the events as JSON lines instead of text.
        plain: plain text even when ``rich`` is installed.
        base_url: an OpenAI-compatible server to run against instead of the script.
        model: the server's model name.
        api_key: the server's key (``"none"`` when not given).
        max_retries: how many times a failed request to the server is retried (429, 5xx,
            no connection); None keeps the ``openai`` SDK's default (2).
        max_tokens: with ``base_url``, the most tokens of one reply (sent as
            ``max_tokens``): a model that never stops ends its reply there.
        timeout: with ``base_url``, seconds a request may wait for the server and one
            reply may take in all (the model's ``timeout`` and ``reply_timeout``).
        instructions_role: ``"system"`` or ``"user"``: where the agent's instructions
            go, for servers that drop system messages.
    """

    protocol: str = "xml"
    language: str = "en"
    delay: float = 0.02
    json_lines: bool = False
    plain: bool = False
    base_url: str | None = None
    model: str | None = None
    api_key: str | None = None
    max_retries: int | None = None
    max_tokens: int = 1024
    timeout: float = 120.0
    instructions_role: str = "system"


def run_demo(options: DemoOptions, out: TextIO) -> int:
    """Run the demo, writing to ``out``; returns the exit status.

    Raises:
        ConfigError: an unknown protocol or language, or ``base_url`` without the
            ``openai`` package.
        ModelError: with ``base_url``, the server could not be reached, answered an HTTP
            error (after the retries) or cut a reply short.
    """
    check_options(options)
    return asyncio.run(_run(options, out))


def check_options(options: DemoOptions) -> None:
    """Raise :class:`~stream_parser.errors.ConfigError` for an unknown protocol or language."""
    if options.protocol not in PROTOCOLS:
        raise ConfigError(f"unknown protocol {options.protocol!r}: use one of {PROTOCOLS}")
    if options.language not in LANGUAGES:
        raise ConfigError(f"unknown language {options.language!r}: use one of {LANGUAGES}")


def make_model(options: DemoOptions, protocol: str | None = None) -> tuple[ChatModel, str]:
    """The demo's model and a label for it: the script (for ``protocol``), or the server.

    Raises:
        ConfigError: ``base_url`` without the ``openai`` package.
    """
    if options.base_url is None:
        scripted = scripted_model(protocol or options.protocol, options.language)
        if options.delay > 0:
            return SlowModel(scripted, options.delay), "scripted"
        return scripted, "scripted"
    from ..llm.openai import OpenAIChatModel

    name = options.model or "local"
    try:
        model = OpenAIChatModel(
            name,
            base_url=options.base_url,
            api_key=options.api_key or "none",
            max_retries=options.max_retries,
            timeout=options.timeout,
            reply_timeout=options.timeout,
            max_tokens=options.max_tokens,
        )
    except ImportError as exc:  # depends on the installed extras
        raise ConfigError(
            "--base-url needs the openai package: python -m pip install openai"
        ) from exc
    return model, f"{name} @ {options.base_url}"


def make_agent(
    options: DemoOptions,
    model: ChatModel,
    tools: list[Tool],  # type: ignore[type-arg]
    approve: Approver,
    *,
    protocol: str | None = None,
    max_iterations: int = 10,
) -> AgentLoop:
    """The demo's agent on ``model``.

    A ``FunctionCallAgent`` for the protocol ``"native"``, else a ``ReActAgent`` in the
    dialect ``protocol`` names (``options.protocol`` by default).
    """
    common: dict[str, Any] = {
        "system_prompt": _SYSTEM_PROMPT[options.language],
        "approve": approve,
        # The agent's own prompt text (tool instructions, observations) in the same
        # language as the demo.
        "language": options.language,
        "instructions_role": options.instructions_role,
        "max_iterations": max_iterations,
    }
    protocol = protocol or options.protocol
    if protocol == "native":
        return FunctionCallAgent(model, tools, **common)
    return ReActAgent(model, tools, dialect=protocol, **common)


async def _run(options: DemoOptions, out: TextIO) -> int:
    renderer = make_renderer(
        out, options.language, json_lines=options.json_lines, plain=options.plain
    )
    model, model_label = make_model(options)

    def approve(call: ToolCallEvent) -> bool:
        # The demo approves every call that asks, and shows that it did.
        renderer.approval(call)
        return True

    with sandbox_copy() as root:
        agent = make_agent(options, model, make_tools(root), approve)
        request = task(options.language)
        renderer.header(
            {
                "model": model_label,
                "protocol": options.protocol,
                "sandbox": str(root),
                "task": request,
            }
        )
        run = agent.run(request)
        try:
            async for event in run:
                renderer.event(event)
        except BaseException:
            renderer.interrupted()
            raise
        finally:
            # The HTTP client's connections are closed while the event loop still runs.
            aclose = getattr(model, "aclose", None)
            if aclose is not None:
                await aclose()
        limit = options.max_tokens if options.base_url is not None else None
        renderer.finish(run.usage, run.steps, str(run.reason), max_tokens=limit)
    return 0
