"""@llm_function end to end on the test models: the five steps, the re-asks, the limits."""

from __future__ import annotations

import asyncio
import enum
import json
import logging
from typing import Any, Literal

import pytest
from pydantic import BaseModel

from stream_parser import (
    AnswerValidationError,
    ConfigError,
    ImgUrl,
    LLMCallResult,
    RunLimitError,
    llm_function,
    tool,
)
from stream_parser.agent import LimitHit, UsageLimits
from stream_parser.decorators import current_trace_id
from stream_parser.testing import (
    FunctionModel,
    NativeCall,
    ScriptedModel,
    ScriptedReply,
    assert_valid_history,
)

CHUNKS = (1, 3, 10_000)


class City(BaseModel):
    name: str
    population: int


class Color(enum.Enum):
    RED = "red"
    GREEN = "green"


def one_shot(reply: str, annotation: Any, chunk_size: int = 4) -> Any:
    """Decorate a function returning ``annotation`` and call it against one reply."""
    model = ScriptedModel([reply], chunk_size=chunk_size)

    def fn(question: str) -> Any:
        """Answer the question."""

    fn.__annotations__["return"] = annotation
    return llm_function(model, retry_times=0)(fn)("q")


# --- the answer contract, through a model ---------------------------------------------------

CONTRACT: list[tuple[str, Any, Any]] = [
    # str and no annotation: exactly as written
    ('  ```json\n{"a": 1}\n```  ', str, '  ```json\n{"a": 1}\n```  '),
    # None: whatever the reply
    ("anything at all", None, None),
    # scalars
    (" 42 ", int, 42),
    ('"42"', int, 42),
    ("```json\n42\n```", int, 42),
    ("<result>42</result>", int, 42),
    ("Yes", bool, True),
    ("False", bool, False),
    ("42", float, 42.0),
    ("green", Literal["red", "green"], "green"),
    ("red", Color, Color.RED),
    # structured
    ('{"name": "Paris", "population": 2100000}', City, City(name="Paris", population=2100000)),
    (
        'Here it is:\n```json\n{"name": "Rome", "population": 2800000}\n```\nEnjoy.',
        City,
        City(name="Rome", population=2800000),
    ),
    (
        'Sure! {"name": "Oslo", "population": 700000} is the answer.',
        City,
        City(name="Oslo", population=700000),
    ),
    (
        "<result><name>Bern</name><population>130000</population></result>",
        City,
        City(name="Bern", population=130000),
    ),
    (
        "<result><item>a &amp; b</item><item>c < d</item></result>",
        list[str],
        ["a &amp; b", "c < d"],
    ),
    ('["007", "8"]', list[str], ["007", "8"]),
    ("null", City | None, None),
    ('{"name": "X", "population": 1, "extra": true}', City, City(name="X", population=1)),
    # unions: JSON first, else the str branch
    ("42", int | str, 42),
    ("forty-two", int | str, "forty-two"),
]


@pytest.mark.parametrize("chunk_size", CHUNKS)
@pytest.mark.parametrize(("reply", "annotation", "expected"), CONTRACT)
def test_the_answer_contract_through_a_model(
    reply: str, annotation: Any, expected: Any, chunk_size: int
) -> None:
    assert one_shot(reply, annotation, chunk_size) == expected


def test_no_return_annotation_gives_the_text_as_written() -> None:
    model = ScriptedModel(["  spaced  "])

    @llm_function(model)
    def free(topic):  # type: ignore[no-untyped-def]
        """Say something."""

    assert free("x") == "  spaced  "
    # The unannotated parameter is described as of unknown type, not left out.
    assert "topic" in model.requests[0].messages[0]["content"]


@pytest.mark.parametrize("annotation", [int, City, list[int], City | None])
def test_an_empty_answer_is_an_error_for_other_types(annotation: Any) -> None:
    with pytest.raises(AnswerValidationError):
        one_shot("  ", annotation)


def test_3_5_is_not_an_int() -> None:
    with pytest.raises(AnswerValidationError) as info:
        one_shot("3.5", int)
    assert info.value.answer == "3.5"


# --- re-asks -------------------------------------------------------------------------------


def test_a_re_ask_fixes_a_wrong_field_and_names_it() -> None:
    model = ScriptedModel(
        ['{"name": "Paris", "population": "many"}', '{"name": "Paris", "population": 2100000}']
    )

    @llm_function(model)
    def city(question: str) -> City:
        """Find the city."""

    result = city.with_details("capital of France")
    assert isinstance(result, LLMCallResult)
    assert result.value == City(name="Paris", population=2100000)
    assert result.answers == 2
    assert len(model.requests) == 2
    second = model.requests[1].messages
    # Same conversation: the first answer is kept, then the re-ask naming the field.
    first_answer = {"role": "assistant", "content": '{"name": "Paris", "population": "many"}'}
    assert second[:3] == [*model.requests[0].messages, first_answer]
    assert second[-1]["role"] == "user" and "population" in second[-1]["content"]
    assert result.messages[-1] == {
        "role": "assistant",
        "content": '{"name": "Paris", "population": 2100000}',
    }


def test_an_empty_answer_is_re_asked_without_running_tools_again() -> None:
    ran: list[int] = []

    @tool
    def lookup(key: str) -> int:
        """Look a number up."""
        ran.append(1)
        return 7

    model = ScriptedModel([[NativeCall("lookup", {"key": "k"})], "", "7"])

    @llm_function(model, toolkit=[lookup])
    def number(key: str) -> int:
        """Find the number."""

    result = number.with_details("k")
    assert result.value == 7 and result.answers == 2
    assert ran == [1]
    # The re-ask kept the tool traffic of the first answer; the empty answer left no
    # message (an assistant message needs content or calls).
    roles = [m["role"] for m in model.requests[2].messages]
    assert roles == ["system", "user", "assistant", "tool", "user"]
    assert_valid_history(model.requests[2].messages)
    empty_note = model.requests[2].messages[-1]["content"]
    wrong_note_model = ScriptedModel(["x", "1"])

    @llm_function(wrong_note_model)
    def other() -> int:
        """A number."""

    other()
    assert empty_note != wrong_note_model.requests[1].messages[-1]["content"]


def test_exhausted_re_asks_raise_with_the_answer_errors_and_messages() -> None:
    model = ScriptedModel(['{"name": "A"}', '{"name": "B", "population": "x"}'])

    @llm_function(model, retry_times=1)
    def city() -> City:
        """A city."""

    with pytest.raises(AnswerValidationError) as info:
        city()
    error = info.value
    assert len(model.requests) == 2
    assert error.answer == '{"name": "B", "population": "x"}'
    assert [tuple(e["loc"]) for e in error.errors] == [("population",)]
    assert error.messages[-1]["content"] == error.answer
    json.dumps(error.errors)  # JSON-safe


def test_retry_times_zero_means_one_answer() -> None:
    model = ScriptedModel(["no", "1"])

    @llm_function(model, retry_times=0)
    def n() -> int:
        """A number."""

    with pytest.raises(AnswerValidationError):
        n()
    assert len(model.requests) == 1


# --- prompts -------------------------------------------------------------------------------


def test_template_params_fill_only_their_keys(caplog: pytest.LogCaptureFixture) -> None:
    model = ScriptedModel(["ok", "ok", "ok"])

    @llm_function(model)
    def write(topic: str) -> str:
        """Write about {topic_kind} in {style} style. Example: {"title": "x"}"""

    with caplog.at_level(logging.WARNING, logger="stream_parser.decorators"):
        write("cats", _template_params={"topic_kind": "animals", "style": "brief"})
    system = model.requests[0].messages[0]["content"]
    assert 'Write about animals in brief style. Example: {"title": "x"}' in system
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]

    with caplog.at_level(logging.WARNING, logger="stream_parser.decorators"):
        write("cats", _template_params={"topic_kind": "animals"})
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "style" in warnings[0].getMessage()
    assert "{style}" in model.requests[1].messages[0]["content"]


def test_the_docstring_is_data_not_a_template() -> None:
    model = ScriptedModel(["ok"])

    @llm_function(model)
    def f() -> str:
        """Keep {{ 7 * 7 }} and {% if x %} as they are."""

    f()
    assert "{{ 7 * 7 }} and {% if x %}" in model.requests[0].messages[0]["content"]


def test_custom_templates_receive_the_documented_variables() -> None:
    model = ScriptedModel(["3"])

    @llm_function(
        model,
        system_prompt_template=(
            "DESC={{ function_description }}|PARAMS={{ parameters_description }}|"
            "RET={{ return_type_description }}"
        ),
        user_prompt_template="ARGS={{ parameters }}",
    )
    def count(word: str, letter: str) -> int:
        """Count the letter in the word."""

    assert count("banana", "a") == 3
    system, user = (m["content"] for m in model.requests[0].messages)
    assert system.startswith("DESC=Count the letter in the word.|PARAMS=")
    assert "word" in system and "letter" in system and "|RET=" in system
    assert user.startswith("ARGS=") and "banana" in user


def test_zh_prompts() -> None:
    model = ScriptedModel(["1"])

    @llm_function(model, language="zh")
    def n(x: int) -> int:
        """返回一个数字。"""

    n(1)
    assert any("\u4e00" <= ch <= "\u9fff" for ch in model.requests[0].messages[0]["content"])


def test_multimodal_arguments_by_annotation_and_by_value() -> None:
    model = ScriptedModel(["a cat", "a dog"])

    @llm_function(model)
    def describe(image: ImgUrl, note: str) -> str:
        """Describe the image."""

    @llm_function(model)
    def describe_any(image, note: str) -> str:  # type: ignore[no-untyped-def]
        """Describe the image."""

    url = "https://example.com/cat.png"
    assert describe(ImgUrl(url), "hi") == "a cat"
    assert describe_any(ImgUrl(url), "hi") == "a dog"
    for request in model.requests:
        content = request.messages[-1]["content"]
        assert isinstance(content, list)
        assert {"type": "image_url", "image_url": {"url": url, "detail": "auto"}} in content
        assert content[0]["type"] == "text"


# --- the tool loop -------------------------------------------------------------------------


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


TOOL_REPLIES = {
    "native": [NativeCall("add", {"a": 2, "b": 3})],
    "xml": "<add><a>2</a><b>3</b></add>",
    "hermes": '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>',
    "qwen3_coder": (
        "<tool_call>\n<function=add>\n<parameter=a>\n2\n</parameter>\n"
        "<parameter=b>\n3\n</parameter>\n</function>\n</tool_call>"
    ),
}


@pytest.mark.parametrize("chunk_size", (1, 5))
@pytest.mark.parametrize("protocol", sorted(TOOL_REPLIES))
def test_a_toolkit_run_in_each_protocol(protocol: str, chunk_size: int) -> None:
    model = ScriptedModel([TOOL_REPLIES[protocol], '{"total": 5}'], chunk_size=chunk_size)

    @llm_function(model, toolkit=[add], protocol=protocol)
    def total(a: int, b: int) -> dict[str, int]:
        """Add with the tool and report the total."""

    result = total.with_details(2, 3)
    assert result.value == {"total": 5}
    assert len(model.requests) == 2
    sent = model.requests[1].messages
    answer = sent[-1]["content"]
    assert "5" in (answer if isinstance(answer, str) else json.dumps(answer))
    if protocol == "native":
        assert model.requests[0].tools is not None
    else:
        assert model.requests[0].tools is None
        assert "add" in sent[0]["content"]


@pytest.mark.parametrize("protocol", ["xml", "hermes", "qwen3_coder"])
def test_a_result_element_ends_a_text_protocol_run(protocol: str) -> None:
    model = ScriptedModel(["<result><name>Bern</name><population>130000</population></result>"])

    @llm_function(model, toolkit=[add], protocol=protocol)
    def city() -> City:
        """A city."""

    assert city() == City(name="Bern", population=130000)
    assert len(model.requests) == 1


def test_a_tool_named_result_is_refused_in_a_text_protocol() -> None:
    def result(x: int) -> int:
        return x

    with pytest.raises(ConfigError, match="result"):
        llm_function(ScriptedModel([]), toolkit=[result], protocol="xml")


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [({"max_iterations": 1}, "max_iterations"), ({"max_tool_calls": 1}, "max_tool_calls")],
)
def test_a_limit_reached_raises_with_the_run(kwargs: dict[str, int], reason: str) -> None:
    model = ScriptedModel(
        [[NativeCall("add", {"a": 1, "b": 1})], [NativeCall("add", {"a": 2, "b": 2})], "4"]
    )

    @llm_function(model, toolkit=[add], **kwargs)
    def n() -> int:
        """Add."""

    with pytest.raises(RunLimitError) as info:
        n()
    assert info.value.reason == reason
    assert info.value.run.reason == reason
    assert info.value.run.messages[-1]["role"] == "tool"


@pytest.mark.parametrize(
    ("limits", "hit"),
    [
        (UsageLimits(requests=1), LimitHit("requests", 1, 1)),
        (UsageLimits(tool_calls=1), LimitHit("tool_calls", 1, 1)),
        (UsageLimits(output_tokens=5), LimitHit("output_tokens", 5, 9)),
    ],
)
def test_a_budget_reached_raises_with_its_limit(limits: UsageLimits, hit: LimitHit) -> None:
    calls = [NativeCall("add", {"a": 1, "b": 1}), NativeCall("add", {"a": 2, "b": 2})]
    usage = {"prompt_tokens": 3, "completion_tokens": 9}
    model = ScriptedModel([ScriptedReply(tool_calls=calls, usage=usage), "4"])

    @llm_function(model, toolkit=[add], usage_limits=limits)
    def n() -> int:
        """Add."""

    with pytest.raises(RunLimitError, match=f"usage_limit, {hit.name}=") as info:
        n()
    assert info.value.reason == "usage_limit"
    assert info.value.limit == hit == info.value.run.limit
    assert_valid_history(info.value.run.messages)


def test_a_last_answer_at_the_limit_is_the_value() -> None:
    model = ScriptedModel([[NativeCall("add", {"a": 1, "b": 1})], "2"])

    @llm_function(model, toolkit=[add], max_iterations=1, final_answer_at_limit=True)
    def n() -> int:
        """Add."""

    assert n() == 2
    assert model.requests[-1].options["tool_choice"] == "none"
    assert len(model.requests) == 2


def test_a_budget_of_tool_calls_is_for_the_whole_call() -> None:
    model = ScriptedModel(
        [
            [NativeCall("add", {"a": 1, "b": 1})],
            "not a number",
            [NativeCall("add", {"a": 2, "b": 2})],
            "4",
        ]
    )

    @llm_function(model, toolkit=[add], usage_limits=UsageLimits(tool_calls=1))
    def n() -> int:
        """Add."""

    with pytest.raises(RunLimitError) as info:
        n()
    assert info.value.reason == "usage_limit"
    assert info.value.limit == LimitHit("tool_calls", 1, 1)  # the whole call's


def test_a_reply_cut_by_its_length_raises() -> None:
    model = ScriptedModel([ScriptedReply(content='{"name": "Par', finish_reason="length")])

    @llm_function(model)
    def city() -> City:
        """A city."""

    with pytest.raises(RunLimitError) as info:
        city()
    assert info.value.reason == "length"


def test_the_tool_call_limit_is_for_the_whole_call() -> None:
    model = ScriptedModel(
        [
            [NativeCall("add", {"a": 1, "b": 1})],
            "not a number",
            [NativeCall("add", {"a": 2, "b": 2})],
            "4",
        ]
    )

    @llm_function(model, toolkit=[add], max_tool_calls=1)
    def n() -> int:
        """Add."""

    with pytest.raises(RunLimitError) as info:
        n()
    assert info.value.reason == "max_tool_calls"


# --- tracing, usage, sync and async, concurrency -------------------------------------------


def test_usage_is_summed_over_the_answers() -> None:
    model = ScriptedModel(
        [
            ScriptedReply(content="x", usage={"prompt_tokens": 10, "completion_tokens": 2}),
            ScriptedReply(content="5", usage={"prompt_tokens": 15, "completion_tokens": 1}),
        ]
    )

    @llm_function(model)
    def n() -> int:
        """A number."""

    usage = n.with_details().usage
    assert (usage.input_tokens, usage.output_tokens) == (25, 3)


def test_nested_calls_share_a_trace(caplog: pytest.LogCaptureFixture) -> None:
    inner_model = ScriptedModel(["inner answer"])
    seen: dict[str, Any] = {}

    @llm_function(inner_model)
    def inner(text: str) -> str:
        """Echo."""

    @tool
    def helper(text: str) -> str:
        """Ask the inner function."""
        seen["parent"] = current_trace_id()
        details = inner.with_details(text)
        seen["inner"] = details.trace_id
        return details.value

    outer_model = ScriptedModel([[NativeCall("helper", {"text": "hi"})], "done"])

    @llm_function(outer_model, toolkit=[helper])
    def outer() -> str:
        """Use the helper."""

    with caplog.at_level(logging.INFO, logger="stream_parser.decorators"):
        result = outer.with_details()
    assert result.value == "done"
    assert result.trace_id.startswith("outer-")
    assert seen["parent"] == result.trace_id
    assert seen["inner"].startswith(result.trace_id + "/inner-")
    traced = {getattr(r, "trace_id", None) for r in caplog.records}
    assert {result.trace_id, seen["inner"]} <= traced
    assert current_trace_id() is None


def test_nested_async_calls_share_a_trace() -> None:
    @llm_function(ScriptedModel(["x"]))
    async def inner() -> str:
        """Inner."""

    @tool
    async def helper() -> str:
        """Helper."""
        return (await inner.with_details()).trace_id

    model = ScriptedModel([[NativeCall("helper", {})], "ok"])

    @llm_function(model, toolkit=[helper])
    async def outer() -> str:
        """Outer."""

    result = asyncio.run(outer.with_details())
    inner_id = model.requests[1].messages[-1]["content"]
    assert inner_id.startswith(result.trace_id + "/inner-")


def test_arguments_are_logged_at_the_call(caplog: pytest.LogCaptureFixture) -> None:
    @llm_function(ScriptedModel(["ok"]))
    def f(word: str) -> str:
        """F."""

    with caplog.at_level(logging.INFO, logger="stream_parser.decorators"):
        f("abracadabra")
    assert any("abracadabra" in r.getMessage() for r in caplog.records)


def test_a_sync_function_works_inside_a_running_loop() -> None:
    @llm_function(ScriptedModel(["7"]))
    def seven() -> int:
        """Seven."""

    async def main() -> int:
        return seven()

    assert asyncio.run(main()) == 7


def test_an_async_function_gives_an_awaitable() -> None:
    @llm_function(ScriptedModel(["7"]))
    async def seven() -> int:
        """Seven."""

    call = seven()
    assert asyncio.iscoroutine(call)
    assert asyncio.run(call) == 7


def test_concurrent_calls_share_nothing() -> None:
    def reply(messages: list[dict[str, Any]]) -> ScriptedReply:
        number = int(messages[-1]["content"].rsplit(":", 1)[-1].strip().split()[0])
        return ScriptedReply(
            content=str(number * 2), usage={"prompt_tokens": number, "completion_tokens": 1}
        )

    @llm_function(FunctionModel(reply, chunk_size=1))
    async def double(x: int) -> int:
        """Double it."""

    async def main() -> list[LLMCallResult[int]]:
        return await asyncio.gather(*(double.with_details(x) for x in range(1, 21)))

    results = asyncio.run(main())
    assert [r.value for r in results] == [2 * x for x in range(1, 21)]
    assert [r.usage.input_tokens for r in results] == list(range(1, 21))
    assert len({r.trace_id for r in results}) == 20
    for x, r in zip(range(1, 21), results, strict=True):
        assert r.messages[-1]["content"] == str(2 * x)


def test_a_model_error_is_raised_as_it_is() -> None:
    from stream_parser import ModelError

    @llm_function(ScriptedModel([ModelError("server down")]))
    def f() -> str:
        """F."""

    with pytest.raises(ModelError, match="server down"):
        f()


def test_configuration_errors() -> None:
    with pytest.raises(ConfigError):
        llm_function(object())  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        llm_function(ScriptedModel([]), protocol="nope")
    with pytest.raises(ConfigError, match="auto"):
        llm_function(ScriptedModel([]), protocol="auto")
    with pytest.raises(ConfigError):
        llm_function(ScriptedModel([]), retry_times=-1)
    with pytest.raises(ConfigError):
        llm_function(ScriptedModel([]), max_iterations=0)
    with pytest.raises(ConfigError):
        llm_function(ScriptedModel([]), language="fr")


def test_arguments_that_do_not_fit_raise_type_error() -> None:
    @llm_function(ScriptedModel([]))
    def f(a: int) -> int:
        """F."""

    with pytest.raises(TypeError):
        f(1, 2)  # type: ignore[call-arg]


def test_the_wrapper_looks_like_the_function() -> None:
    @llm_function(ScriptedModel([]))
    def summarize(text: str) -> str:
        """Summarize the text."""

    assert summarize.__name__ == "summarize"
    assert summarize.__doc__ == "Summarize the text."
    assert "summarize" in repr(summarize)


def test_a_return_type_that_cannot_be_validated_is_refused_when_decorated() -> None:
    class Opaque:
        pass

    def f() -> Opaque:
        """F."""

    with pytest.raises(ConfigError, match="return type"):
        llm_function(ScriptedModel([]))(f)
