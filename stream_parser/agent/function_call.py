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
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence

from ..core.chunks import ChatDelta
from ..core.config import ParserConfig
from ..core.events import NoticeEvent, ParseErrorEvent, ToolCallEvent, ToolCallStartEvent
from ..core.kit import dialect_names
from ..core.parser import StreamToolParser
from ..errors import ConfigError
from ..llm.base import ChatModel, Message
from ..tools import ToolLike, ToolRegistry
from .limits import _limits_repr
from .loop import AgentLoop
from .options import AgentOptions, Unpack
from .reply import Reply

__all__ = ["FunctionCallAgent"]


class FunctionCallAgent(AgentLoop):
    r"""An agent loop on native function calling (OpenAI ``tools``).

    Args:
        model: the chat model (any :class:`~stream_parser.llm.ChatModel`).
        tools: a :class:`~stream_parser.tools.ToolRegistry`, or tools and plain functions
            to make one of.  Every tool must have a function to run.
        **options: the agent's options (:class:`~stream_parser.agent.AgentOptions`:
            ``system_prompt``, ``max_iterations``, ``approve``, ``model_options``...).

    Raises:
        ConfigError: an unknown option (the closest one is named) or a bad value (an
            unknown language, a limit below 1...), a schema-only or duplicate tool, a
            tool that requires approval without ``approve``, or a model that is not a
            ``ChatModel``.

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
        **options: Unpack[AgentOptions],
    ) -> None:
        super().__init__(model, tools, **options)
        self._definitions = self.tools.to_openai()

    def _configure(self, config: ParserConfig) -> ParserConfig:
        # The tools go to the model natively: a name the text format cannot carry
        # (github/create_issue in XML) is read from native calls, not refused.
        return dataclasses.replace(config, native_tools=True)

    def _request(self, messages: Sequence[Message]) -> AsyncIterator[ChatDelta]:
        return self.model.stream(
            messages, tools=self._definitions or None, **self.config.model_options
        )

    def _final_request(self, messages: Sequence[Message]) -> AsyncIterator[ChatDelta]:
        # The tools stay listed, so that the calls already in the history stay valid for
        # the server; tool_choice "none" says no more may be made.
        options = {**self.config.model_options, "tool_choice": "none"}
        return self.model.stream(messages, tools=self._definitions or None, **options)

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
        return f"FunctionCallAgent(tools={list(self.tools)!r}, {_limits_repr(self.config)})"


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
