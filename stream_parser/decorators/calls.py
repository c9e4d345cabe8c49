"""What both typed decorators share: reading the function, binding a call, tracing it.

Reading happens once, when the function is decorated (:func:`read_function`): its
signature, its resolved annotations (an unannotated parameter is allowed: the prompt says
its type is unknown), its return annotation and its docstring.  Each call then binds its
arguments (:func:`bind_call`: defaults applied, ``_template_params`` taken out), gets a
trace id, and builds a fresh agent (:func:`new_agent`): nothing is shared between two
calls but what was read at decoration time, so concurrent calls never see each other's
conversation, results or usage.

Trace ids.  Each call gets one: the function's name and a unique suffix.  A call made while
another decorated call runs (a tool that calls a typed function, or one typed function
calling another) gets an id *under* its caller's: ``outer-1a2b3c4d/inner-5e6f7a8b``.  The
current id lives in a context variable, which asyncio tasks and the agents' tool threads
inherit; a synchronous call hops to the library's background loop with its id computed
before the hop.  Every log line of a call starts with its id and carries it as the
``trace_id`` attribute of the log record (for a ``logging.Formatter`` with
``%(trace_id)s``).  Logging goes to the ``stream_parser.decorators`` logger; nothing is
printed unless logging is configured.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import difflib
import inspect
import json
import logging
import uuid
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Mapping,
    MutableMapping,
    Sequence,
)
from typing import Any, Final, TypeVar

from ..agent import FunctionCallAgent, ReActAgent
from ..agent._sync import iterate_sync
from ..agent.loop import AgentLoop
from ..agent.options import OPTION_NAMES, AgentConfig, agent_config
from ..dialects import ModelDialect, get_dialect
from ..dialects.detect import model_name_of, resolve_model_dialect
from ..errors import ConfigError
from ..llm.base import ChatModel
from ..schema.signature import resolve_hints
from ..tools import ToolRegistry, as_registry

__all__ = [
    "AgentSettings",
    "FunctionInfo",
    "TraceLog",
    "bind_call",
    "check_protocol",
    "current_trace_id",
    "iterate_sync",
    "new_trace_id",
    "read_function",
    "request_options",
    "traced_context",
    "traced_iteration",
]

logger = logging.getLogger("stream_parser.decorators")

TEMPLATE_PARAMS: Final = "_template_params"
"""The keyword argument a call may pass to fill ``{key}`` placeholders of the docstring."""

_TRACE: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "stream_parser_trace_id", default=None
)
_MAX_LOGGED_ARGUMENTS: Final = 2000
_ITEM, _ERROR, _END = range(3)
T = TypeVar("T")


# --- the function, read once ----------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class FunctionInfo:
    """A decorated function, read once.

    Attributes:
        fn: the function itself.
        name: its ``__name__``.
        signature: its ``inspect.Signature`` (to bind calls).
        hints: resolved annotations by parameter name (unannotated ones absent).
        parameters: ``(name, annotation)`` per parameter, in order;
            ``inspect.Parameter.empty`` for an unannotated one.
        return_annotation: the resolved return annotation, or ``inspect.Signature.empty``.
        docstring: the cleaned docstring (``inspect.getdoc``), ``""`` when there is none.
        is_async: whether it was written ``async def``.
    """

    fn: Callable[..., Any]
    name: str
    signature: inspect.Signature
    hints: dict[str, Any]
    parameters: tuple[tuple[str, Any], ...]
    return_annotation: Any
    docstring: str
    is_async: bool


def read_function(fn: Callable[..., Any], decorator: str) -> FunctionInfo:
    """Read a function for a typed decorator.

    Raises:
        ConfigError: ``fn`` is not a function, or an annotation cannot be resolved.
    """
    if not callable(fn) or isinstance(fn, type):
        raise ConfigError(f"@{decorator} decorates a function, not {fn!r}")
    name = str(getattr(fn, "__name__", type(fn).__name__))
    where = f"@{decorator} {name!r}"
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: cannot read the signature: {exc}") from exc
    hints = resolve_hints(fn, where)
    parameters = tuple(
        (param.name, hints.get(param.name, inspect.Parameter.empty))
        for param in signature.parameters.values()
    )
    return FunctionInfo(
        fn=fn,
        name=name,
        signature=signature,
        hints={key: value for key, value in hints.items() if key != "return"},
        parameters=parameters,
        return_annotation=hints.get("return", inspect.Signature.empty),
        docstring=inspect.getdoc(fn) or "",
        is_async=inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn),
    )


def bind_call(
    info: FunctionInfo, args: Sequence[Any], kwargs: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Bind a call's arguments to the signature, defaults applied.

    Returns:
        ``(arguments, template_params)``: the arguments by name, in the signature's order,
        and the ``_template_params`` mapping the call passed (None when it passed none).

    Raises:
        TypeError: the arguments do not fit the signature (as calling the function would),
            or ``_template_params`` is not a mapping.
    """
    rest = dict(kwargs)
    template_params = rest.pop(TEMPLATE_PARAMS, None)
    if template_params is not None and not isinstance(template_params, Mapping):
        raise TypeError(f"{TEMPLATE_PARAMS} must be a mapping, not {type(template_params)}")
    bound = info.signature.bind(*args, **rest)
    bound.apply_defaults()
    return dict(bound.arguments), None if template_params is None else dict(template_params)


def check_protocol(protocol: str, registry: ToolRegistry, decorator: str) -> str:
    """Check a ``protocol=`` argument: ``"native"``, ``"auto"`` or a registered dialect's name.

    ``"auto"`` is a text protocol whose dialect comes from the model's name
    (:meth:`AgentSettings.check` finds it).

    Raises:
        ConfigError: an unknown protocol, or a tool named ``result`` or ``item`` in a
            text protocol (they hold typed answers).
    """
    if not isinstance(protocol, str):
        raise ConfigError(f"@{decorator}: protocol must be a string, not {protocol!r}")
    if protocol == "native":
        return protocol
    if protocol != "auto":
        get_dialect(protocol)  # raises ConfigError naming the known dialects
    reserved = [name for name in ("result", "item") if name in registry]
    if reserved:
        raise ConfigError(
            f"@{decorator}: a tool may not be named {reserved[0]!r} in a text protocol: "
            "<result> and <item> hold typed answers"
        )
    return protocol


def tool_registry(toolkit: object, decorator: str) -> ToolRegistry:
    """The toolkit (``Tool`` objects, plain functions, a registry or a mapping) as a registry."""
    if toolkit is None:
        return ToolRegistry()
    registry = as_registry(toolkit)
    for item in registry.tools:
        if item.fn is None:
            raise ConfigError(
                f"@{decorator}: tool {item.name!r} is schema-only: it cannot run; give it a "
                f"handler: ToolRegistry(tools, handlers={{{item.name!r}: function}})"
            )
    return registry


def check_model(model: object, decorator: str) -> ChatModel:
    """``model=`` must be a :class:`~stream_parser.llm.ChatModel`."""
    if not isinstance(model, ChatModel):
        raise ConfigError(
            f"@{decorator}: model must be a ChatModel (OpenAIChatModel, ScriptedModel...), "
            f"not {model!r}"
        )
    return model


@dataclasses.dataclass(frozen=True, slots=True)
class AgentSettings:
    """What a decorator's calls build their agent from (checked once, when decorating).

    Attributes:
        model: the chat model.
        tools: the toolkit, as a registry.
        protocol: ``"native"``, ``"auto"`` or a dialect's name.
        config: the agent's options (see :class:`~stream_parser.agent.AgentOptions`).
        model_dialect: for ``"auto"``, what
            :func:`~stream_parser.dialects.dialect_for_model` found for the model's name.
    """

    model: ChatModel
    tools: ToolRegistry
    protocol: str
    config: AgentConfig
    model_dialect: ModelDialect | None = None

    @classmethod
    def check(
        cls,
        decorator: str,
        *,
        model: object,
        toolkit: object,
        protocol: str,
        options: Mapping[str, Any],
    ) -> AgentSettings:
        """Check a decorator's arguments and the agent options it was given.

        Options that are not the agents' are the model's request options
        (:func:`request_options`): they go to every request, in ``model_options``.

        Raises:
            ConfigError: a model that is not a ``ChatModel``, a bad toolkit, an unknown
                protocol, an unknown option (the closest one is named) or a bad value,
                or ``system_prompt`` (a typed function's instructions are its
                docstring); ``"auto"`` for a model without a name, with a name of no
                known family, or of a family whose dialect is not available in this
                version.
        """
        chat_model = check_model(model, decorator)
        agent_options = request_options(f"@{decorator}", chat_model, options)
        config = agent_config(f"@{decorator}", agent_options)
        if config.approve == "defer":
            raise ConfigError(f"@{decorator}: {_NO_PAUSE}")
        if config.system_prompt is not None:
            raise ConfigError(
                f"@{decorator}: the function's docstring is the instructions; "
                "system_prompt is not an option here"
            )
        tools = tool_registry(toolkit, decorator)
        protocol = check_protocol(protocol, tools, decorator)
        model_dialect = None
        if protocol == "auto":
            model_dialect = resolve_model_dialect(model_name_of(chat_model), f"@{decorator}")
        settings = cls(
            model=chat_model,
            tools=tools,
            protocol=protocol,
            config=config,
            model_dialect=model_dialect,
        )
        # The agent checks what depends on the tools (approval): building one now
        # reports a problem when the function is decorated, not at its first call.
        settings.agent(instructions=None)
        return settings

    def agent(self, *, instructions: str | None, model: ChatModel | None = None) -> AgentLoop:
        """A fresh agent for one call: native function calling, or the protocol's dialect.

        With ``"auto"`` the agent gets the dialect found when decorating, so a wrapper
        model (``model``) need not carry the served model's name.

        Args:
            instructions: the agent's system prompt.
            model: another model to use (a wrapper of :attr:`model`), if any.
        """
        options = self.config.options()
        options["system_prompt"] = instructions
        chat_model = model if model is not None else self.model
        agent: AgentLoop
        if self.protocol == "native":
            agent = FunctionCallAgent(chat_model, self.tools, **options)
        else:
            dialect = self.model_dialect if self.model_dialect is not None else self.protocol
            agent = ReActAgent(chat_model, self.tools, dialect=dialect, **options)
        # A typed function cannot return a paused run: an approver's Defer() is refused,
        # every approval of a reply asked before any of its calls runs.
        agent._pause_refused = _NO_PAUSE
        return agent


# How close (difflib's ratio) a keyword must be to an agent option to be taken for a
# misspelling of it, for a model that does not declare its request options: typos
# score 0.8 and more (max_iteration: 0.96), request options 0.74 at most (timeout and
# tool_timeout), temperature 0.7 (templates).
_MISSPELLED: Final = 0.8


def request_options(owner: str, model: ChatModel, options: Mapping[str, Any]) -> dict[str, Any]:
    """Take a decorator's request options out of its options, into ``model_options``.

    A keyword that is not an agent option is a request option of the model when the
    model declares it in ``request_option_names`` (:class:`~stream_parser.llm.
    OpenAIChatModel` does: the SDK's parameters, ``reply_timeout``, ``raw_output``), or,
    for a model that declares none, when it is not a close match of an agent option
    (which it would be misspelling).  Request options are added to ``model_options``
    and so reach every request of the model.

    Args:
        owner: who was given the options, for the error messages (``"@llm_function"``).
        model: the chat model.
        options: the keyword options as given.

    Returns:
        The agent options, with the request options in ``model_options``.

    Raises:
        ConfigError: a keyword that is neither (the closest option is named), or a
            request option also given in ``model_options``.
    """
    extra = [name for name in options if name not in OPTION_NAMES]
    if not extra:
        return dict(options)
    declared = getattr(model, "request_option_names", None)
    names: frozenset[str] | None = None if declared is None else frozenset(declared)
    for name in extra:
        if names is not None and name in names:
            continue
        known = sorted(OPTION_NAMES if names is None else OPTION_NAMES | names)
        cutoff = _MISSPELLED if names is None else 0.6
        close = difflib.get_close_matches(name, known, n=1, cutoff=cutoff)
        if names is None and not close:
            continue  # a request option of a model that does not list its own
        if close:
            hint = f"; did you mean {close[0]!r}?"
        else:
            hint = (
                f" (the options: {', '.join(sorted(OPTION_NAMES))}; the model's request "
                f"options: {', '.join(sorted(names or ()))}; a field of the server's "
                "own goes in model_options={'extra_body': {...}})"
            )
        raise ConfigError(f"{owner} got an unknown option {name!r}{hint}")
    given = options.get("model_options") or {}
    if not isinstance(given, Mapping):
        raise ConfigError(f"model_options must be a mapping, not {given!r}")
    twice = [name for name in extra if name in given]
    if twice:
        raise ConfigError(
            f"{owner}: {twice[0]!r} is given both as a keyword and in model_options; give it once"
        )
    agent = {name: value for name, value in options.items() if name in OPTION_NAMES}
    agent["model_options"] = {**given, **{name: options[name] for name in extra}}
    return agent


_NO_PAUSE: Final = (
    'a typed function cannot pause: approve="defer" and Defer() are for the agents '
    "(FunctionCallAgent, ReActAgent), whose paused run resumes with agent.resume(...)"
)


# --- tracing --------------------------------------------------------------------------------


def current_trace_id() -> str | None:
    """The trace id of the typed-function call running in this context, if any.

    Example:
        >>> current_trace_id() is None
        True
    """
    return _TRACE.get()


def new_trace_id(name: str, parent: str | None = None) -> str:
    """A fresh trace id for a call of ``name``, under ``parent`` when there is one.

    Example:
        >>> child = new_trace_id("inner", "outer-1a2b3c4d")
        >>> child.startswith("outer-1a2b3c4d/inner-"), len(child.rsplit("-", 1)[1])
        (True, 12)
    """
    own = f"{name}-{uuid.uuid4().hex[:12]}"
    return f"{parent}/{own}" if parent else own


def traced_context(trace_id: str) -> contextvars.Context:
    """A copy of the current context in which ``trace_id`` is the current trace id.

    For work that runs in a task of its own (``context.run(loop.create_task, coro)``): an
    async generator cannot hold a context variable across its ``yield``s, since each
    resumption runs in its consumer's context.
    """
    context = contextvars.copy_context()
    context.run(_TRACE.set, trace_id)
    return context


async def traced_iteration(trace_id: str, source: AsyncIterator[T]) -> AsyncGenerator[T, None]:
    """Iterate ``source`` in a task of its own, in which ``trace_id`` is the current trace id.

    An async generator cannot hold a context variable across its ``yield``s (each step runs
    in the context of whoever asks for the next item), so the work runs in a producer
    task whose context has the id: the tools it runs, and typed calls they make, see it,
    whichever task or thread consumes the items.  The queue holds one item, so the work
    never runs ahead of its consumer.  Closing this generator early cancels the producer
    (the agent's run then closes with a consistent history).
    """
    queue: asyncio.Queue[tuple[int, Any]] = asyncio.Queue(maxsize=1)

    async def produce() -> None:
        try:
            async for item in source:
                await queue.put((_ITEM, item))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # handed to the consumer, raised there
            await queue.put((_ERROR, exc))
            return
        finally:
            aclose = getattr(source, "aclose", None)
            if aclose is not None:
                await aclose()
        await queue.put((_END, None))

    loop = asyncio.get_running_loop()
    producer = traced_context(trace_id).run(loop.create_task, produce())
    try:
        while True:
            kind, item = await queue.get()
            if kind == _ERROR:
                raise item
            if kind == _END:
                return
            yield item
    finally:
        if not producer.done():
            producer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await producer


class TraceLog(logging.LoggerAdapter):  # type: ignore[type-arg]
    """The decorators' logger for one call.

    Each line starts with the trace id, and its record carries it as ``trace_id``.
    """

    def __init__(self, trace_id: str) -> None:
        super().__init__(logger, {"trace_id": trace_id})
        self.trace_id = trace_id

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, Any]:
        """Prefix the message with the trace id and put it on the record."""
        kwargs["extra"] = {**(kwargs.get("extra") or {}), "trace_id": self.trace_id}
        return f"{self.trace_id} {msg}", kwargs


def arguments_text(arguments: Mapping[str, Any]) -> str:
    """The arguments of a call as a log line shows them (JSON, long ones cut)."""
    text = json.dumps(dict(arguments), default=repr, ensure_ascii=False)
    if len(text) > _MAX_LOGGED_ARGUMENTS:
        text = f"{text[:_MAX_LOGGED_ARGUMENTS]}… [{len(text)} characters]"
    return text
