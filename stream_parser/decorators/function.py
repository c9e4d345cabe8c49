"""``@llm_function``: a typed Python signature and a docstring become an LLM call.

A call of the decorated function runs five steps, and returns a value of its declared
return type:

1. **signature**: the arguments are bound (defaults applied); ``_template_params=`` is
   taken out and fills the ``{key}`` placeholders of the docstring it names;
2. **trace**: the call gets a trace id (under its caller's when one typed call runs inside
   another), its arguments are logged, its token usage is collected;
3. **messages**: the system prompt says what the function does (the docstring), what its
   parameters are and what it must return; the user message holds the argument values,
   images as content parts;
4. **tool loop**: with a ``toolkit``, the agents' loop runs (native function calling or a
   text dialect) until the model answers; without one, a single request;
5. **typed answer**: the answer is read into the return type (``docs/answers.md``); when it
   does not fit, the model is asked again in the same conversation, told what was wrong
   (tool results kept, no call run again), up to ``retry_times`` times.

A ``def`` gives a synchronous function (it runs on the library's background loop, so it
works inside a running event loop too); an ``async def`` gives a coroutine function.
``fn.with_details(...)`` returns an :class:`LLMCallResult` instead of the bare value.
Transport retries are the client's (the ``openai`` SDK's ``max_retries``); a
:class:`~stream_parser.llm.ModelError` is raised as it is and never reaches the prompt.
"""

from __future__ import annotations

import collections.abc as cabc
import contextlib
import dataclasses
import functools
import inspect
from collections.abc import (
    AsyncGenerator,
    AsyncIterator,
    Callable,
    Coroutine,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)
from typing import Any, Final, Generic, ParamSpec, TypeVar, cast, get_args, get_origin, overload

from pydantic import BaseModel

from ..agent._sync import call_sync, check_sync_tools
from ..agent.events import StepStartEvent
from ..agent.options import AgentOptions, Unpack
from ..agent.run import Usage
from ..core.events import TextOutputEvent
from ..errors import AnswerValidationError, ConfigError, RunLimitError
from ..llm.base import ChatModel, Message, UserMessage
from ..prompts.templating import format_template
from ..tools import ToolLike, ToolRegistry
from .answer import InvalidAnswer, reader_for
from .calls import (
    AgentSettings,
    FunctionInfo,
    TraceLog,
    arguments_text,
    bind_call,
    current_trace_id,
    iterate_sync,
    new_trace_id,
    read_function,
    traced_iteration,
)
from .prompt import (
    continue_message,
    empty_answer_message,
    fill_docstring,
    function_messages,
    retry_message,
)
from .stream_answer import FieldDone, FieldInvalid, FieldReader, ItemDone, ItemInvalid, ItemReader

__all__ = [
    "AsyncLLMFunction",
    "FieldDone",
    "LLMCallResult",
    "LLMFunction",
    "llm_function",
    "stream_item_type",
]

P = ParamSpec("P")
R = TypeVar("R")


@dataclasses.dataclass(frozen=True, slots=True)
class LLMCallResult(Generic[R]):
    """The value of one call of a typed function, with how it was obtained.

    Attributes:
        value: what the call returns.
        messages: the whole conversation (system prompt, tool traffic, re-asks).
        usage: the tokens used, over every request of the call.
        trace_id: the call's trace id.
        answers: how many answers the model gave (1 plus the re-asks).
    """

    value: R
    messages: list[Message]
    usage: Usage
    trace_id: str
    answers: int


@dataclasses.dataclass(frozen=True, slots=True)
class _Settings:
    run: AgentSettings
    retry_times: int
    prompt_templates: dict[str, str] | None


# The variables of the two prompt templates a str.format template may use (a Jinja2 one
# gets these too; the system template's ``parameters`` list is for Jinja2 loops only).
_FORMAT_VARIABLES: Final = {
    "function_system": frozenset(
        {
            "function_description",
            "parameters_description",
            "return_type_description",
            "return_type",
        }
    ),
    "function_user": frozenset({"parameters", "arguments"}),
}

_VALUE, _ITEMS, _FIELDS = range(3)  # what a call streams: nothing, list items, model fields
_SYNC_STREAMS: Final = frozenset({cabc.Iterator, cabc.Iterable, cabc.Generator})
_ASYNC_STREAMS: Final = frozenset({cabc.AsyncIterator, cabc.AsyncIterable, cabc.AsyncGenerator})


def stream_item_type(annotation: Any) -> tuple[Any, bool] | None:
    """``(item type, is_async)`` for an ``Iterator[X]``-like return annotation, else None.

    Example:
        >>> from collections.abc import AsyncIterator, Iterator
        >>> stream_item_type(Iterator[int]), stream_item_type(AsyncIterator[str])
        ((<class 'int'>, False), (<class 'str'>, True))
        >>> stream_item_type(list[int]) is None
        True
    """
    origin = get_origin(annotation)
    if origin in _SYNC_STREAMS or origin in _ASYNC_STREAMS:
        args = get_args(annotation)
        return (args[0] if args else Any), origin in _ASYNC_STREAMS
    return None


class _Reply:
    """One reply of an answer, read as it streams: items or fields as they complete."""

    def __init__(self, function: _TypedFunction, mode: int, offset: int) -> None:
        self.mode = mode
        self.offset = offset
        self.items: ItemReader | None = None
        self.fields: FieldReader | None = None
        self.invalid_fields: list[FieldInvalid] = []
        if mode == _ITEMS:
            self.items = ItemReader(function._item, start_index=offset)
        elif mode == _FIELDS and function._model is not None:
            self.fields = FieldReader(function._model)

    def feed(self, text: str) -> Sequence[Any]:
        if self.items is not None:
            return self.items.feed(text)
        if self.fields is not None:
            return self.fields.feed(text)
        return ()


class _TypedFunction:
    """What the sync and async forms share: the settings and the five steps."""

    def __init__(self, info: FunctionInfo, settings: _Settings) -> None:
        self._info = info
        self._settings = settings
        stream = stream_item_type(info.return_annotation)
        self._item: Any = None
        answer_type = info.return_annotation
        if stream is not None:
            self._item, is_async = stream
            if is_async != info.is_async:
                kind = "an async def" if info.is_async else "a def"
                wanted = "AsyncIterator[...]" if info.is_async else "Iterator[...]"
                raise ConfigError(
                    f"@llm_function {info.name!r}: {kind} streams its items as {wanted}, "
                    f"not {info.return_annotation!r}"
                )
            answer_type = list[self._item]  # type: ignore[name-defined]
        self._answer_type: Any = answer_type
        self._model: type[BaseModel] | None = (
            answer_type
            if isinstance(answer_type, type) and issubclass(answer_type, BaseModel)
            else None
        )
        try:
            # Built now: a return type Pydantic cannot validate is a decoration error.
            self._reader = reader_for(answer_type)
        except Exception as exc:
            raise ConfigError(
                f"@llm_function {info.name!r}: cannot read answers into the return type "
                f"{info.return_annotation!r}: {exc}"
            ) from exc
        functools.update_wrapper(cast(Any, self), info.fn)

    def __repr__(self) -> str:
        return f"<llm_function {self._info.name} protocol={self._settings.run.protocol!r}>"

    # -- the parts of a call ------------------------------------------------------------------

    def _parts(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], parent: str | None, mode: int
    ) -> AsyncGenerator[Any, None]:
        """The call's parts (items or fields as they complete), then its LLMCallResult."""
        arguments, template_params = bind_call(self._info, args, kwargs)
        trace_id = new_trace_id(self._info.name, parent)
        steps = self._steps(arguments, template_params, TraceLog(trace_id), mode)
        return traced_iteration(trace_id, steps)

    async def _result(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], parent: str | None
    ) -> LLMCallResult[Any]:
        mode = _ITEMS if self._item is not None else _VALUE
        async with contextlib.aclosing(self._parts(args, kwargs, parent, mode)) as parts:
            async for part in parts:
                if isinstance(part, LLMCallResult):
                    return part
        raise AssertionError("a call ends with its result")  # pragma: no cover

    async def _public(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], parent: str | None, streaming: bool
    ) -> AsyncGenerator[Any, None]:
        """What a streaming call yields: items; or field events, then the value.

        Closing it (the caller's ``break``) closes the call's parts before it returns,
        and with them the model's stream: nothing is left for the garbage collector.
        """
        mode = _VALUE
        if self._item is not None:
            mode = _ITEMS
        elif streaming and self._model is not None:
            mode = _FIELDS
        async with contextlib.aclosing(self._parts(args, kwargs, parent, mode)) as parts:
            async for part in parts:
                if isinstance(part, _Item):
                    yield part.value
                elif isinstance(part, LLMCallResult):
                    if mode != _ITEMS:
                        yield part.value
                else:
                    yield part

    async def _steps(
        self,
        arguments: dict[str, Any],
        template_params: dict[str, Any] | None,
        log: TraceLog,
        mode: int,
    ) -> AsyncGenerator[Any, None]:
        info, settings = self._info, self._settings
        language, templates = settings.run.config.language, settings.prompt_templates
        log.info("%s called with %s", info.name, arguments_text(arguments))
        description = fill_docstring(
            info.docstring, template_params, where=f"@llm_function {info.name!r}"
        )
        system, user = function_messages(
            description=description,
            parameters=info.parameters,
            return_annotation=self._answer_type,
            arguments=arguments,
            language=language,
            templates=templates,
        )
        agent = settings.run.agent(instructions=system)
        usage = Usage()
        calls = answers = 0
        items: list[Any] = []  # the items yielded so far (item mode)
        fields: set[str] = set()  # the fields yielded so far (field mode)
        offset = 0  # the index of the first item of the next reply's list
        run = agent.run([UserMessage(role="user", content=user)])
        while True:
            answers += 1
            reply = _Reply(self, mode, offset)
            problem: InvalidAnswer | None = None
            failed_item = -1
            try:
                async for event in run:
                    if isinstance(event, StepStartEvent) and event.step > 1:
                        # A reply after tool calls: its list starts over; the items already
                        # yielded are skipped by position.
                        reply = _Reply(self, mode, 0)
                    elif isinstance(event, TextOutputEvent):
                        for part in reply.feed(event.text):
                            if isinstance(part, ItemInvalid):
                                failed_item = part.index
                                problem = InvalidAnswer(part.message, part.errors)
                                break
                            async for out in self._emit(part, reply, items, fields):
                                yield out
                        if problem is not None:
                            break
            finally:
                # Stop reading at a failed item; and when the caller stops (its loop left
                # early, an error), close the model's stream now: a run is in a reference
                # cycle, so left to itself it would stay open until a garbage collection.
                await run.aclose()
            usage.add_usage(run.usage)
            calls += run.tool_calls
            value: Any = None
            if problem is None:
                if run.reason != "done":
                    # INFO: the error raised below tells the caller.
                    log.info("the run ended on a limit: %s", run.reason)
                    hit = run.limit
                    name, limit = settings.run.config.call_limit
                    if hit is not None and hit.name == name and limit is not None:
                        # The call limit is the whole call's, over its re-asks.
                        hit = dataclasses.replace(hit, limit=limit, used=calls)
                    at = "" if hit is None else f", {hit.name}={hit.limit}, used {hit.used}"
                    raise RunLimitError(
                        f"{info.name}: the run ended on its limit ({run.reason}{at}) "
                        "before an answer",
                        run=run,
                        reason=str(run.reason),
                        limit=hit,
                    )
                try:
                    if mode == _ITEMS:
                        for part in self._close_items(reply, run.output):
                            if isinstance(part, ItemInvalid):
                                failed_item = part.index
                                raise InvalidAnswer(part.message, part.errors)
                            async for out in self._emit(part, reply, items, fields):
                                yield out
                        value = list(items)
                    elif mode == _FIELDS:
                        value = self._close_fields(reply, run.output)
                        for name in type(value).model_fields:
                            if name not in fields:
                                fields.add(name)
                                yield FieldDone(name=name, value=getattr(value, name))
                    else:
                        value = self._reader.read(run.output)
                except InvalidAnswer as exc:
                    problem = exc
            if problem is None:
                log.info(
                    "%s answered after %d answer(s); tokens in %d, out %d",
                    info.name,
                    answers,
                    usage.input_tokens,
                    usage.output_tokens,
                )
                yield LLMCallResult(
                    value=value,
                    messages=list(run.messages),
                    usage=usage,
                    trace_id=log.trace_id,
                    answers=answers,
                )
                return
            if answers > settings.retry_times:
                log.info("no valid answer after %d answer(s): %s", answers, problem.message)
                raise AnswerValidationError(
                    f"{info.name}: no valid answer after {answers} answer(s): {problem.message}",
                    answer=run.output,
                    errors=problem.errors,
                    messages=run.messages,
                )
            log.info("answer %d rejected, asking again: %s", answers, problem.message)
            if failed_item >= 0:
                # The items before the failed one stand: the next reply goes on from it.
                offset = failed_item
                note = continue_message(
                    problem.message, failed_item, language=language, templates=templates
                )
            else:
                # The whole answer is asked for: its list starts at item 0 again, and the
                # items already yielded are skipped by position.
                offset = 0
                if problem.empty:
                    note = empty_answer_message(language=language, templates=templates)
                else:
                    note = retry_message(problem.message, language=language, templates=templates)
            name, limit = settings.run.config.call_limit
            if limit is not None:
                # The limit is the whole call's: a re-ask gets what is left of it.
                left = max(0, limit - calls)
                config = agent.config
                if name == "tool_calls" and config.usage_limits is not None:
                    limits = dataclasses.replace(config.usage_limits, tool_calls=left)
                    agent.config = dataclasses.replace(config, usage_limits=limits)
                else:
                    agent.config = dataclasses.replace(config, max_tool_calls=left)
            run = agent.run(note, history=run.messages)

    async def _emit(
        self, part: Any, reply: _Reply, items: list[Any], fields: set[str]
    ) -> AsyncGenerator[Any, None]:
        """Yield a completed item or field once: what was yielded before is not repeated."""
        if isinstance(part, ItemDone):
            if part.index == len(items):
                items.append(part.value)
                yield _Item(part.value)
        elif isinstance(part, FieldDone):
            if part.name not in fields:
                fields.add(part.name)
                yield part
        elif isinstance(part, FieldInvalid):
            reply.invalid_fields.append(part)

    def _close_items(self, reply: _Reply, output: str) -> list[Any]:
        """What the end of the reply gives: the list's break, if it broke, or nothing more.

        When no list streamed, or the one seen broke before its first item (its bracket or
        tag may have been prose), the whole answer is read by the contract instead.
        """
        items = reply.items
        assert items is not None
        parts = list(items.close())
        if items.found and (items.complete or items.items_read):
            return parts
        try:
            values = self._reader.read(output)
        except InvalidAnswer:
            if parts:
                return parts  # the break: the list is asked for from where it broke
            raise
        return [ItemDone(index=reply.offset + i, value=value) for i, value in enumerate(values)]

    def _close_fields(self, reply: _Reply, output: str) -> Any:
        """The object the reply's fields make (model validators run here, once)."""
        if reply.invalid_fields:
            errors = tuple(error for part in reply.invalid_fields for error in part.errors)
            message = "\n".join(part.message for part in reply.invalid_fields)
            raise InvalidAnswer(message, errors)
        if reply.fields is None:
            return self._reader.read(output)
        try:
            return reply.fields.close()
        except InvalidAnswer as first:
            try:
                # Not in the form the stream reads: the whole-answer contract may still.
                return self._reader.read(output)
            except InvalidAnswer:
                raise first from None


@dataclasses.dataclass(frozen=True, slots=True)
class _Item:
    """An item a streamed list yields (kept apart from the values of other parts)."""

    value: Any


class LLMFunction(_TypedFunction, Generic[P, R]):
    """A ``def`` decorated with :func:`llm_function`: call it like the function.

    A function annotated ``-> Iterator[X]`` (or ``Iterable[X]``) returns an iterator that
    yields each item as soon as it is complete and valid.
    """

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        """Call the model as the function; returns a value of its return type."""
        parent = current_trace_id()
        check_sync_tools(self._settings.run.tools)
        if self._item is not None:
            return cast(R, iterate_sync(self._public(args, kwargs, parent, streaming=True)))
        result: R = call_sync(self._result(args, kwargs, parent)).value
        return result

    def with_details(self, *args: P.args, **kwargs: P.kwargs) -> LLMCallResult[R]:
        """Call it, and return the value with the conversation, usage and trace id.

        For a streamed list the value is the list of every item.
        """
        # The trace id of the caller is read here, before the hop to the background loop.
        check_sync_tools(self._settings.run.tools)
        return call_sync(self._result(args, kwargs, current_trace_id()))

    def stream(self, *args: P.args, **kwargs: P.kwargs) -> Iterator[Any]:
        """Call it, and yield the answer as it completes.

        For a Pydantic-model return: a :class:`FieldDone` as each field completes
        (validated), then the validated object.  For ``Iterator[X]``: the items.  For any
        other type: the value alone.
        """
        check_sync_tools(self._settings.run.tools)
        return iterate_sync(self._public(args, kwargs, current_trace_id(), streaming=True))


class AsyncLLMFunction(_TypedFunction, Generic[P, R]):
    """An ``async def`` decorated with :func:`llm_function`: await its calls.

    A function annotated ``-> AsyncIterator[X]`` (or ``AsyncIterable[X]``) returns an
    async iterator that yields each item as soon as it is complete and valid.
    """

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Any:
        """Call the model as the function: an awaitable of the value (or an async iterator)."""
        parent = current_trace_id()
        if self._item is not None:
            return self._public(args, kwargs, parent, streaming=True)
        return self._value(args, kwargs, parent)

    async def _value(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], parent: str | None
    ) -> Any:
        return (await self._result(args, kwargs, parent)).value

    async def with_details(self, *args: P.args, **kwargs: P.kwargs) -> LLMCallResult[R]:
        """Call it, and return the value with the conversation, usage and trace id."""
        return await self._result(args, kwargs, current_trace_id())

    def stream(self, *args: P.args, **kwargs: P.kwargs) -> AsyncIterator[Any]:
        """Call it, and yield the answer as it completes (see :meth:`LLMFunction.stream`)."""
        return self._public(args, kwargs, current_trace_id(), streaming=True)


class _Decorator:
    def __init__(self, settings: _Settings) -> None:
        self._settings = settings

    @overload
    def __call__(  # type: ignore[overload-overlap]
        self, fn: Callable[P, Coroutine[Any, Any, R]]
    ) -> AsyncLLMFunction[P, R]: ...

    @overload
    def __call__(self, fn: Callable[P, R]) -> LLMFunction[P, R]: ...

    def __call__(self, fn: Callable[..., Any]) -> Any:
        info = read_function(fn, "llm_function")
        if inspect.isasyncgenfunction(fn):
            raise ConfigError(
                f"@llm_function {info.name!r}: an async generator cannot be a typed function"
            )
        if info.is_async:
            return AsyncLLMFunction(info, self._settings)
        return LLMFunction(info, self._settings)


def llm_function(
    model: ChatModel,
    *,
    toolkit: ToolRegistry | Iterable[ToolLike] | Mapping[str, ToolLike] | None = None,
    protocol: str = "native",
    retry_times: int = 2,
    system_prompt_template: str | None = None,
    user_prompt_template: str | None = None,
    **options: Unpack[AgentOptions],
) -> _Decorator:
    """Turn a typed function with a docstring into an LLM call that returns its type.

    Args:
        model: the chat model (:class:`~stream_parser.llm.OpenAIChatModel`, or a test
            model of :mod:`stream_parser.testing`).
        toolkit: tools the model may call while it works out the answer: ``@tool``
            objects, plain functions, a registry or a mapping.
        protocol: ``"native"`` (the model's function calling) or a dialect's name
            (``"xml"``, ``"hermes"``, ``"qwen3_coder"``): calls written in the text;
            ``"auto"``: the dialect of the model's family, from its name (see
            :func:`~stream_parser.dialects.dialect_for_model`).
        retry_times: how many times an answer that does not fit the return type is
            re-asked (so at most ``retry_times + 1`` answers).
        system_prompt_template: your own template for the system prompt: Jinja2
            (rendered sandboxed), or ``str.format`` syntax when it has no ``{{``,
            ``{%`` or ``{#`` and at least one ``{name}``; its variables are in
            ``docs/llm_function.md``.
        user_prompt_template: your own template for the user message (the same two
            syntaxes).
        **options: the agent's options (:class:`~stream_parser.agent.AgentOptions`:
            ``max_iterations``, ``max_tool_calls``, ``language``, ``model_options``,
            ``instructions_role``, ``approve``, ``tool_timeout``...), all but
            ``system_prompt`` (the docstring is the instructions).  ``max_iterations``
            counts the model requests of one answer, ``max_tool_calls`` the tool
            calls of the whole call; so do ``usage_limits``' ``requests`` and
            ``tool_calls``, and its token limits hold for each answer.  A run that
            ends on any limit raises :class:`~stream_parser.errors.RunLimitError`
            (with ``reason`` and ``limit``), unless ``final_answer_at_limit`` got an
            answer.  A keyword that is a request option of the model
            (``temperature=0.2``; see ``request_option_names`` of
            :class:`~stream_parser.llm.OpenAIChatModel`) is added to
            ``model_options``: accepted at run time, though type checkers see only the
            agents' options.

    Returns:
        The decorator.  A ``def`` becomes an :class:`LLMFunction`, an ``async def`` an
        :class:`AsyncLLMFunction`.

    Raises:
        ConfigError: a model that is not a ``ChatModel``, an unknown protocol, a bad
            toolkit, an unknown option (the closest one is named), a bad value, or a
            ``str.format`` template with a placeholder nothing fills, or with attribute
            or index access.

    Example:
        >>> from stream_parser.testing import ScriptedModel
        >>> @llm_function(ScriptedModel(["42"]))
        ... def answer(question: str) -> int:
        ...     '''Answer the question with a number.'''
        >>> answer("What is six times seven?")
        42
    """
    run = AgentSettings.check(
        "llm_function",
        model=model,
        toolkit=toolkit,
        protocol=protocol,
        options=options,
    )
    if isinstance(retry_times, bool) or not isinstance(retry_times, int) or retry_times < 0:
        raise ConfigError(f"retry_times must be an int >= 0, got {retry_times!r}")
    # The agent's own templates, then the decorator's two.
    templates: dict[str, str] = dict(run.config.templates or {})
    for name, source in (
        ("function_system", system_prompt_template),
        ("function_user", user_prompt_template),
    ):
        if source is not None:
            if not isinstance(source, str):
                raise ConfigError(f"a prompt template must be a string, not {source!r}")
            templates[name] = source
    for name, variables in _FORMAT_VARIABLES.items():
        # A template in str.format syntax is checked now: a placeholder nothing fills
        # would otherwise reach the model with its braces.
        source = templates.get(name)
        if source is not None:
            checked = format_template(source, variables, where=f"@llm_function {name}")
            if checked is not None:
                templates[name] = checked
    settings = _Settings(run=run, retry_times=retry_times, prompt_templates=templates or None)
    return _Decorator(settings)
