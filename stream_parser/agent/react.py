"""ReActAgent: a tool-using agent whose model writes its calls in the text of its replies.

The text protocol ("ReAct"): the tools are described in the system prompt, in the format
of the dialect the model speaks; the model writes calls in its reply; the core parser
reads them from the stream as it arrives; the agent runs the validated calls and sends
the observations back as a user message.  This works with any chat model, whether its
server supports native function calling or not.  The loop itself, the tool runner and
the history are the shared ones of :mod:`stream_parser.agent.loop`; this module adds the
prompt and the parser's dialect.

The parser reports calls of tools that do not exist (``report_unknown_tools``), so an
invented tool is answered with an observation naming it and the closest registered
tools.  Native calls that arrive in a reply anyway (a server with native tools on) are
run too: the assistant message then carries them as ``tool_calls``, followed by their
``tool`` messages.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, Final

from ..core.chunks import ChatDelta
from ..core.config import ParserConfig
from ..core.kit import check_tool_names
from ..dialects import DIALECTS, Dialect, ModelDialect, get_dialect
from ..dialects.detect import model_name_of, resolve_model_dialect, with_reasoning
from ..errors import ConfigError
from ..llm.base import ChatModel, ContentPart, Message, UserMessage
from ..prompts import text as prompts
from ..prompts.templating import render
from ..schema.typedesc import describe_parameters
from ..tools import Tool, ToolLike, ToolRegistry
from .limits import _limits_repr
from .loop import AgentLoop
from .options import AgentOptions, Unpack

__all__ = ["EXAMPLE_TOOL", "ReActAgent", "tools_prompt"]

EXAMPLE_TOOL: Final = "example_tool"
"""The tool name the prompt's format example calls (with a suffix if a tool has it)."""


class ReActAgent(AgentLoop):
    r"""An agent loop for models that write tool calls in their text.

    Args:
        model: the chat model (any :class:`~stream_parser.llm.ChatModel`).
        tools: a :class:`~stream_parser.tools.ToolRegistry`, or tools and plain functions
            to make one of.  Every tool must have a function to run.
        dialect: the tool-call format the model writes (see ``docs/dialects.md``):
            ``"xml"``, ``"hermes"``, ``"qwen3_coder"``... or ``"auto"``: the dialect of
            the model's family, found by
            :func:`~stream_parser.dialects.dialect_for_model` from the model's name (its
            string ``model`` attribute, as ``OpenAIChatModel`` has).  A
            :class:`~stream_parser.dialects.ModelDialect` found beforehand may be passed
            instead.  The system prompt shows this format.  A sequence of names makes
            the parser read all of them; the prompt shows the first.  With ``"auto"``
            (or a ``ModelDialect``) the parser's thinking tags are the model's, unless
            ``parser_config`` sets its own.  A dialect whose markers are special tokens
            (:attr:`~stream_parser.dialects.Dialect.special_tokens`) adds
            ``raw_output=True`` to the model's options unless ``model_options`` has a
            ``raw_output`` (see ``OpenAIChatModel``).
        **options: the agent's options (:class:`~stream_parser.agent.AgentOptions`).
            Here ``system_prompt`` is followed by the tools' description; the
            ``dialect`` of ``parser_config`` is replaced by ``dialect``, and the default
            one reports calls of tools that do not exist (``report_unknown_tools=True``),
            so that the model is told.

    Raises:
        ConfigError: an unknown dialect; ``"auto"`` for a model without a name, with a
            name of no known family, or of a family whose dialect is not available in
            this version; a schema-only or duplicate tool, a
            ``max_iterations`` below 1, a tool that requires approval without
            ``approve``, or a model that is not a ``ChatModel``.

    Example:
        >>> from stream_parser.testing import ScriptedModel
        >>> from stream_parser.tools import tool
        >>> @tool
        ... def add(a: int, b: int) -> int:
        ...     '''Add two numbers.'''
        ...     return a + b
        >>> model = ScriptedModel(["<add><a>2</a><b>3</b></add>", "It is 5."])
        >>> run = ReActAgent(model, [add]).run_sync("2 + 3?")
        >>> run.reason, run.output
        ('done', 'It is 5.')
        >>> run.messages[-2]["content"]
        '[add] result:\n5'
    """

    def __init__(
        self,
        model: ChatModel,
        tools: ToolRegistry | Iterable[ToolLike] | Mapping[str, ToolLike],
        *,
        dialect: str | Sequence[str] | ModelDialect = "xml",
        **options: Unpack[AgentOptions],
    ) -> None:
        found: ModelDialect | None = None
        if isinstance(dialect, ModelDialect):
            found = dialect
            if found.dialect not in DIALECTS:
                raise ConfigError(
                    f"ReActAgent: dialect {found.dialect!r} is not available in this version"
                )
            names: tuple[str, ...] = (found.dialect,)
        else:
            names = (dialect,) if isinstance(dialect, str) else tuple(dialect)
            if "auto" in names:
                found = resolve_model_dialect(model_name_of(model), "ReActAgent")
                named = (found.dialect if name == "auto" else name for name in names)
                names = tuple(dict.fromkeys(named))  # "auto" may name one given too
        if not names:
            raise ConfigError("dialect must name at least one dialect")
        self.dialect: Dialect = get_dialect(names[0])
        """The dialect the system prompt shows."""
        self.model_dialect: ModelDialect | None = found
        """What ``"auto"`` found for the model (or the ``ModelDialect`` given), else None."""
        self._dialects = names
        super().__init__(model, tools, **options)
        if any(DIALECTS[name].special_tokens for name in names if name in DIALECTS):
            # The markers are special tokens, which servers drop unless asked not to.
            model_options = {"raw_output": True, **self.config.model_options}
            self.config = dataclasses.replace(self.config, model_options=model_options)
        # Refused now, not when the first reply is read: a name its dialect cannot carry.
        check_tool_names(self._dialects, self.tools)

    _default_config = ParserConfig(report_unknown_tools=True)

    def _configure(self, config: ParserConfig) -> ParserConfig:
        config = dataclasses.replace(config, dialect=self._dialects)
        if self.model_dialect is not None:
            config = with_reasoning(config, self.model_dialect)
        return config

    def __repr__(self) -> str:
        return (
            f"ReActAgent(tools={list(self.tools)!r}, dialect={self.dialect.name!r}, "
            f"{_limits_repr(self.config)})"
        )

    def _final_request(self, messages: Sequence[Message]) -> AsyncIterator[ChatDelta]:
        """The last answer at a limit: the observations, then the ``final_answer`` note.

        The note goes into the request only, not into ``run.messages``: a conversation
        continued from the history starts with its tools available again.
        """
        note = render("final_answer", self.config.language, templates=self.config.templates)
        sent = list(messages)
        last = sent[-1] if sent else None
        if last is not None and last["role"] == "user":
            content = last["content"]
            if isinstance(content, str):
                sent[-1] = UserMessage(role="user", content=f"{content}\n\n{note}")
            else:
                parts: list[ContentPart] = [*content, {"type": "text", "text": note}]
                sent[-1] = UserMessage(role="user", content=parts)
        else:  # the observations were tool messages (native calls came anyway)
            sent.append(UserMessage(role="user", content=note))
        return self._request(sent)

    # -- the prompt -----------------------------------------------------------------------

    def system_prompt(self) -> str:
        """The system message: your instructions, then the tools in the dialect's format.

        The tools part (:meth:`tools_prompt`) follows your instructions after a blank line.
        """
        parts = [self.config.system_prompt] if self.config.system_prompt else []
        tools_part = self.tools_prompt()
        if tools_part:
            parts.append(tools_part)
        return "\n\n".join(parts)

    def tools_prompt(self) -> str:
        """The part of the system prompt that describes the tools (``""`` without tools).

        The dialect's instructions, with one example call written by the dialect's own
        writer, then each tool's description and parameters.  The example calls
        :attr:`example_tool`, a name no tool has, with placeholder values: small models
        often repeat their prompt, and an echoed example must not run a real tool.
        """
        return tools_prompt(
            self.dialect,
            self.tools,
            language=self.config.language,
            templates=self.config.templates,
            example_tool=self.example_tool,
        )

    @property
    def example_tool(self) -> str:
        """The illustrative tool name of the format example: never a registered tool's."""
        name = EXAMPLE_TOOL
        suffix = 1
        while name in self.tools:
            suffix += 1
            name = f"{EXAMPLE_TOOL}_{suffix}"
        return name


# --- describing tools in a dialect ----------------------------------------------------------


def tools_prompt(
    dialect: Dialect,
    tools: ToolRegistry,
    *,
    language: str = "en",
    templates: prompts.Templates = None,
    example_tool: str | None = None,
) -> str:
    """The tools in a dialect's words: what a ``ReActAgent`` puts in its system prompt.

    The dialect's instructions, with one example call written by the dialect's own
    writer, then each tool's description and parameters (``""`` without tools).  The
    example calls ``example_tool`` (default: :data:`EXAMPLE_TOOL`, made unique against
    the tools), a name no tool has: small models often repeat their prompt, and an
    echoed example must not run a real tool.  ``stream-parser serve --render-tools``
    writes a request's tools with it.
    """
    if not tools.tools:
        return ""
    if example_tool is None:
        example_tool, suffix = EXAMPLE_TOOL, 1
        while example_tool in tools:
            suffix += 1
            example_tool = f"{EXAMPLE_TOOL}_{suffix}"
    say = (language, templates)
    blocks = [
        prompts.say("tools_heading", *say),
        dialect.usage_instructions(example_tool, language=language, templates=templates),
        *(_describe(item, say, tags=dialect.parameter_tags) for item in tools.tools),
    ]
    return "\n\n".join(blocks)


def _describe(item: Tool[Any, Any], say: tuple[str, prompts.Templates], *, tags: bool) -> str:
    """A tool's block for a prompt: heading, description, parameters, returns.

    Unlike ``Tool.xml_usage`` it has no example call: an example naming a real tool
    would run it if the model echoed its prompt.  Where the dialect names parameters by
    tags (:attr:`~stream_parser.dialects.Dialect.parameter_tags`), each is named by the
    tag the parser reads (a JSON Schema's ``say "hi"`` is ``say_hi``); elsewhere by the
    schema's own name.
    """
    parts = [prompts.tool_heading(item.name, *say)]
    if item.description:
        parts.append(item.description)
    names = item.xml_tags() if tags else None
    parts += ["", prompts.parameters_block(describe_parameters(item.args_model, names=names), *say)]
    if item.returns_description:
        parts += ["", prompts.returns_line(item.returns_description, *say)]
    return "\n".join(parts)
