"""FunctionCallAgent: a tool-using agent on the model's native function calling.

The tools go to the model as OpenAI ``tools`` definitions with every request; the
model's calls come back as ``delta.tool_calls`` fragments, which the parser gathers by
index and validates against each tool's argument model when the reply ends.  The loop,
the tool runner and the history are the shared ones of :mod:`stream_parser.agent.loop`:
the history follows the OpenAI format exactly, the assistant message with its
``content`` (None when there is no text) and its ``tool_calls`` as the model sent them,
then one ``tool`` message per call, in call order, then one ``user`` message with the
images the tools returned.  An unknown tool, arguments that cannot be read or fail
validation, and a tool's exception each become that call's ``tool`` message, so the
model can correct itself; a reply cut by its length limit never runs a call.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from typing import Any

from ..core.chunks import ChatDelta
from ..core.config import ParserConfig
from ..core.dialect_names import dialect_names
from ..core.events import NoticeEvent, ParseErrorEvent, ToolCallEvent, ToolCallStartEvent
from ..core.parser import StreamToolParser
from ..errors import ConfigError
from ..llm.base import ChatModel, Message
from ..tools import ToolLike, ToolRegistry
from .loop import AgentLoop
from .reply import Reply
from .runner import Approver

__all__ = ["FunctionCallAgent"]


class FunctionCallAgent(AgentLoop):
    r"""An agent loop on native function calling (OpenAI ``tools``).

    Args:
        model: the chat model (any :class:`~stream_parser.llm.ChatModel`).
        tools: a :class:`~stream_parser.tools.ToolRegistry`, or tools and plain functions
            to make one of.  Every tool must have a function to run.
        system_prompt: the system message of a new conversation.
        max_iterations: the most model requests (steps) in one run.
        max_tool_calls: the most tool calls over the whole run; past it, calls are
            answered ``tool_call_limit`` and the run ends with ``"max_tool_calls"``.
        concurrent_tools: run the calls of one reply at once instead of in order (the
            results still go into the history in call order).  Never sent to the server:
            OpenAI's own ``parallel_tool_calls`` goes in ``model_options``.
        tool_timeout: seconds one call may take; past it the model is told
            ``tool_timeout``, an async tool is cancelled and a sync tool's thread is left
            to finish in the background.
        max_result_chars: a result's text longer than this is cut, with a note
            ``[… N characters cut]`` (None: no limit).
        approve: a callable (sync or async) given each validated call before it runs;
            it returns ``True`` / ``None`` (run it), ``False`` or
            :class:`~stream_parser.agent.Deny` (do not; the model reads the reason), or
            an edited call.  When some tools are marked ``@tool(requires_approval=True)``
            only their calls are asked about.
        eager_tools: start a call of a ``@tool(read_only=True)`` tool as soon as it is
            complete and valid, while the reply still streams, when every earlier call of
            the reply is read-only or finished.
        model_options: options for every request (``temperature``, ``max_tokens``,
            ``parallel_tool_calls``, ``tool_choice``...).
        parser_config: parser settings (thinking tags, sizes...).
        language: the language of the prompt text the agent writes (observations,
            error notes, tool instructions): ``"en"`` or ``"zh"``.
        templates: your own prompt templates, by the name of the one each replaces: the
            name of a shipped template (``"zh/observation"``) or a template's text (see
            ``docs/prompts.md``).
        instructions_role: ``"system"`` (the system prompt is a system message) or
            ``"user"`` (it opens the first user message instead, for chat templates that
            drop or reject system messages).
        history_length: the most turns of the history sent with each request (None:
            all); whole turns are left out, oldest first, never an assistant message
            with calls apart from its ``tool`` messages.  ``run.messages`` keeps all.
        step_history_size: the most earlier steps a context block shows (see
            :meth:`run`'s ``context``).
        show_time: start the user prompt with the current time.
        clock: where that time comes from (default: the local time now).

    Raises:
        ConfigError: an unknown language or instructions_role, a schema-only or
            duplicate tool, a limit below 1, a bad ``tool_timeout``, a tool that requires
            approval without ``approve``, or a model that is not a ``ChatModel``.

    Example:
        >>> from stream_parser.testing import NativeCall, ScriptedModel
        >>> from stream_parser.tools import tool
        >>> @tool
        ... def add(a: int, b: int) -> int:
        ...     '''Add two numbers.'''
        ...     return a + b
        >>> model = ScriptedModel([[NativeCall("add", {"a": 2, "b": 3})], "It is 5."])
        >>> run = FunctionCallAgent(model, [add]).run_sync("2 + 3?")
        >>> run.reason, run.output
        ('done', 'It is 5.')
        >>> [m["role"] for m in run.messages]
        ['user', 'assistant', 'tool', 'assistant']
        >>> run.messages[2]
        {'role': 'tool', 'tool_call_id': 'call_1_0', 'content': '5', 'name': 'add'}
    """

    def __init__(
        self,
        model: ChatModel,
        tools: ToolRegistry | Iterable[ToolLike] | Mapping[str, ToolLike],
        *,
        system_prompt: str | None = None,
        max_iterations: int = 10,
        max_tool_calls: int | None = None,
        concurrent_tools: bool = False,
        tool_timeout: float | None = None,
        max_result_chars: int | None = 20_000,
        approve: Approver | None = None,
        eager_tools: bool = False,
        model_options: Mapping[str, Any] | None = None,
        parser_config: ParserConfig | None = None,
        language: str = "en",
        templates: Mapping[str, str] | None = None,
        instructions_role: str = "system",
        history_length: int | None = None,
        step_history_size: int = 3,
        show_time: bool = False,
        clock: Callable[[], datetime.datetime] | None = None,
    ) -> None:
        super().__init__(
            model,
            tools,
            system_prompt=system_prompt,
            max_iterations=max_iterations,
            max_tool_calls=max_tool_calls,
            concurrent_tools=concurrent_tools,
            tool_timeout=tool_timeout,
            max_result_chars=max_result_chars,
            approve=approve,
            eager_tools=eager_tools,
            model_options=model_options,
            parser_config=parser_config,
            language=language,
            templates=templates,
            instructions_role=instructions_role,
            history_length=history_length,
            step_history_size=step_history_size,
            show_time=show_time,
            clock=clock,
        )
        self._definitions = self.tools.to_openai()

    def _configure(self, config: ParserConfig) -> ParserConfig:
        # The tools go to the model natively: a name the text format cannot carry
        # (github/create_issue in XML) is read from native calls, not refused.
        return dataclasses.replace(config, native_tools=True)

    def _request(self, messages: Sequence[Message]) -> AsyncIterator[ChatDelta]:
        return self.model.stream(messages, tools=self._definitions or None, **self.model_options)

    def _notices(self, reply: Reply) -> list[NoticeEvent]:
        # Tools were sent and the model made no native call, but its text writes one:
        # the server probably ignored `tools` (llama.cpp's does unless tool_choice names
        # a function), and the model fell back on a format it learned.
        if not self._definitions or reply.native:
            return []
        found = written_call(self.tools, "".join(reply.content))
        if found is None:
            return []
        offset, name, dialect = found
        message = (
            f"the reply wrote a call of {name!r} as text ({dialect} markup) and made no "
            "native call, though the tools were sent: the server may have ignored them "
            "(llama.cpp's ignores tools unless tool_choice names a function); name the "
            "function in tool_choice, or use ReActAgent, which reads calls written in text"
        )
        return [NoticeEvent(code="call_in_text", message=message, span=(offset, offset))]

    def __repr__(self) -> str:
        return (
            f"FunctionCallAgent(tools={list(self.tools)!r}, max_iterations={self.max_iterations})"
        )


def written_call(tools: ToolRegistry, text: str) -> tuple[int, str, str] | None:
    """The first call of a registered tool that ``text`` writes in a known dialect's markup.

    Each known dialect reads the text (only when a tool's name appears in it at all, so
    that a plain answer costs one substring search per tool).  A call counts once its
    markup has opened with a registered name, whether or not it is complete or valid.

    Returns:
        ``(offset, tool name, dialect)`` of the call that begins first, or None.

    Example:
        >>> from stream_parser.tools import tool
        >>> @tool
        ... def add(a: int, b: int) -> int:
        ...     '''Add.'''
        ...     return a + b
        >>> written_call(ToolRegistry([add]), "Sure: <add><a>1</a><b>2</b></add>")
        (6, 'add', 'xml')
        >>> written_call(ToolRegistry([add]), "I would add them.") is None
        True
    """
    names = [name for name in tools if name in text]
    if not names:
        return None
    first: tuple[int, str, str] | None = None
    for dialect in dialect_names():
        try:
            config = ParserConfig(dialect=dialect, native_tools=True, emit_deltas=False)
            parser = StreamToolParser(tools, config=config)
        except ConfigError:  # a dialect that cannot read these tools at all
            continue
        for event in [*parser.feed(text), *parser.close()]:
            # Where the call's markup begins: the whole call's span, or a failed call's
            # (cut, malformed), else where it opened (the name, in some formats).
            if (
                isinstance(event, ToolCallEvent | ToolCallStartEvent | ParseErrorEvent)
                and event.tool_name in names
                and (first is None or event.span[0] < first[0])
            ):
                first = (event.span[0], event.tool_name, dialect)
    return first
