"""@llm_chat on the test models: history in and out, the return modes, tools, concurrency."""

from __future__ import annotations

import asyncio
import gc
import logging
from typing import Any

import pytest

from stream_parser import (
    ChatDelta,
    ConfigError,
    ImgUrl,
    StepStartEvent,
    TextOutputEvent,
    ToolResultEvent,
    llm_chat,
    tool,
)
from stream_parser.agent import AgentDoneEvent, UsageLimits
from stream_parser.decorators import current_trace_id
from stream_parser.testing import (
    FunctionModel,
    NativeCall,
    ScriptedModel,
    ScriptedReply,
    assert_valid_history,
)
from tests.helpers import EndlessModel

History = list[dict[str, Any]]


def pairs_of(chat: Any, *args: Any, **kwargs: Any) -> list[tuple[Any, History]]:
    return list(chat.sync(*args, **kwargs))


@pytest.mark.parametrize("chunk_size", (1, 4, 1000))
def test_text_mode_streams_and_hands_back_the_history(chunk_size: int) -> None:
    model = ScriptedModel(["Hello, Ada!"], chunk_size=chunk_size)

    @llm_chat(model)
    def chat(message: str, history: History) -> None:
        """You are a friendly assistant."""

    pairs = pairs_of(chat, "Hi, I am Ada.", history=[])
    chunks = [chunk for chunk, _ in pairs]
    assert "".join(chunks) == "Hello, Ada!"
    assert all(isinstance(c, str) for c in chunks)
    if chunk_size == 1:
        assert len(chunks) > 5  # really streamed
    assert pairs[-1][0] == ""
    history = pairs[-1][1]
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert "Hi, I am Ada." in history[0]["content"]
    assert history[1] == {"role": "assistant", "content": "Hello, Ada!"}
    sent = model.requests[0].messages
    assert sent[0] == {"role": "system", "content": "You are a friendly assistant."}


def test_the_returned_history_passed_back_in() -> None:
    model = ScriptedModel(["Hello!", "You said hi."])

    @llm_chat(model)
    def chat(message: str, history: History) -> None:
        """Be brief."""

    history = pairs_of(chat, "hi", history=[])[-1][1]
    second = pairs_of(chat, "what did I say?", history=history)[-1][1]
    assert [m["role"] for m in second] == ["user", "assistant", "user", "assistant"]
    sent = model.requests[1].messages
    assert sent[1:3] == history
    assert_valid_history(sent)


def test_system_items_are_dropped_and_malformed_ones_skipped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    model = ScriptedModel(["ok"])

    @llm_chat(model)
    def chat(message: str, chat_history: History) -> None:
        """The real system prompt."""

    history: list[Any] = [
        {"role": "system", "content": "an old system prompt"},
        {"role": "user", "content": "earlier"},
        "not a message",
        {"content": "no role"},
        {"role": "assistant", "content": "reply"},
    ]
    with caplog.at_level(logging.WARNING, logger="stream_parser.decorators"):
        final = pairs_of(chat, "now", chat_history=history)[-1][1]
    sent = model.requests[0].messages
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    assert sent[0]["content"] == "The real system prompt."
    assert "an old system prompt" not in str(sent)
    assert len([r for r in caplog.records if r.levelno >= logging.WARNING]) == 2
    assert [m["role"] for m in final] == ["user", "assistant", "user", "assistant"]
    assert history[0]["role"] == "system"  # the caller's list is not changed


def test_a_function_without_a_history_parameter_warns(caplog: pytest.LogCaptureFixture) -> None:
    model = ScriptedModel(["ok"])
    with caplog.at_level(logging.WARNING, logger="stream_parser.decorators"):

        @llm_chat(model)
        def chat(message: str) -> None:
            """Hi."""

    assert any("history" in r.getMessage() for r in caplog.records)
    final = pairs_of(chat, "x")[-1][1]
    assert [m["role"] for m in final] == ["user", "assistant"]


def test_no_system_message_when_docstring_and_tools_are_empty() -> None:
    model = ScriptedModel(["ok"])

    @llm_chat(model)
    def chat(message: str, history: History) -> None:
        pass

    pairs_of(chat, "x", history=[])
    assert [m["role"] for m in model.requests[0].messages] == ["user"]


def test_no_user_message_when_there_are_no_other_arguments() -> None:
    model = ScriptedModel(["go on"])

    @llm_chat(model)
    def chat(history: History) -> None:
        """Continue."""

    earlier = [{"role": "user", "content": "tell a story"}]
    final = pairs_of(chat, history=earlier)[-1][1]
    assert [m["role"] for m in model.requests[0].messages] == ["system", "user"]
    assert final == [*earlier, {"role": "assistant", "content": "go on"}]


def test_multimodal_arguments_become_content_parts() -> None:
    model = ScriptedModel(["a cat"])

    @llm_chat(model)
    def chat(message: str, picture: ImgUrl, history: History) -> None:
        """Look."""

    pairs_of(chat, "what is it?", ImgUrl("https://example.com/c.png"), history=[])
    content = model.requests[0].messages[-1]["content"]
    assert isinstance(content, list)
    assert any(part.get("type") == "image_url" for part in content)


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@pytest.mark.parametrize("protocol", ["native", "xml"])
def test_tools_run_and_their_traffic_stays_out_of_the_history(protocol: str) -> None:
    call: Any = (
        [NativeCall("add", {"a": 2, "b": 3})]
        if protocol == "native"
        else "<add><a>2</a><b>3</b></add>"
    )
    model = ScriptedModel([call, "It is 5."])

    @llm_chat(model, toolkit=[add], protocol=protocol)
    def chat(message: str, history: History) -> None:
        """Use the tools."""

    pairs = pairs_of(chat, "2+3?", history=[])
    assert "".join(c for c, _ in pairs).endswith("It is 5.")
    final = pairs[-1][1]
    assert [m["role"] for m in final] == ["user", "assistant"]
    assert final[-1]["content"] == "It is 5."
    system = model.requests[0].messages[0]["content"]
    # The tool list comes before the docstring.
    assert system.index("add") < system.index("Use the tools.")


@pytest.mark.parametrize("protocol", ["native", "xml"])
def test_a_chat_takes_a_budget_and_a_last_answer(protocol: str) -> None:
    call: Any = (
        [NativeCall("add", {"a": 2, "b": 3})]
        if protocol == "native"
        else "<add><a>2</a><b>3</b></add>"
    )
    model = ScriptedModel([call, "It is 5."])

    @llm_chat(
        model,
        toolkit=[add],
        protocol=protocol,
        usage_limits=UsageLimits(requests=1),
        final_answer_at_limit=True,
    )
    def chat(message: str, history: History) -> None:
        """Use the tools."""

    pairs = pairs_of(chat, "2+3?", history=[])
    assert "".join(c for c, _ in pairs).endswith("It is 5.")
    assert len(model.requests) == 2  # the one request past the limit


def test_raw_mode_yields_the_model_deltas() -> None:
    model = ScriptedModel(["abc"], chunk_size=1)

    @llm_chat(model, return_mode="raw")
    def chat(message: str, history: History) -> None:
        """Hi."""

    pairs = pairs_of(chat, "x", history=[])
    deltas = [c for c, _ in pairs[:-1]]
    assert all(isinstance(d, ChatDelta) for d in deltas)
    assert "".join(d.content or "" for d in deltas) == "abc"
    assert deltas[-1].finish_reason == "stop"
    assert pairs[-1][0] == ""


def test_events_mode_yields_the_agent_events() -> None:
    model = ScriptedModel([[NativeCall("add", {"a": 1, "b": 2})], "3"])

    @llm_chat(model, toolkit=[add], return_mode="events")
    def chat(message: str, history: History) -> None:
        """Hi."""

    events = [c for c, _ in pairs_of(chat, "x", history=[])[:-1]]
    for kind in (StepStartEvent, ToolResultEvent, TextOutputEvent, AgentDoneEvent):
        assert any(isinstance(event, kind) for event in events), kind


@pytest.mark.parametrize(("mode", "kind"), [("text", str), ("raw", list), ("events", list)])
def test_without_streaming_one_item_carries_the_whole_reply(mode: str, kind: type) -> None:
    model = ScriptedModel(["Hello there"], chunk_size=2)

    @llm_chat(model, stream=False, return_mode=mode)  # type: ignore[arg-type]
    def chat(message: str, history: History) -> None:
        """Hi."""

    pairs = pairs_of(chat, "x", history=[])
    assert len(pairs) == 2
    whole, _ = pairs[0]
    assert isinstance(whole, kind)
    if mode == "text":
        assert whole == "Hello there"
    assert pairs[1][0] == ""
    assert pairs[1][1][-1]["content"] == "Hello there"


def test_an_async_def_is_an_async_generator_too() -> None:
    model = ScriptedModel(["yo"])

    @llm_chat(model)
    async def chat(message: str, history: History) -> None:
        """Hi."""

    async def main() -> list[Any]:
        return [pair async for pair in chat("x", history=[])]

    pairs = asyncio.run(main())
    assert "".join(c for c, _ in pairs) == "yo"


def test_breaking_out_early_closes_the_turn() -> None:
    model = ScriptedModel(["a long reply that streams"], chunk_size=1)

    @llm_chat(model)
    def chat(message: str, history: History) -> None:
        """Hi."""

    for chunk, _ in chat.sync("x", history=[]):
        assert chunk == "a"
        break
    assert len(model.requests) == 1


def test_breaking_out_early_closes_the_model_stream_at_once() -> None:
    model = EndlessModel(lambda number: "word ")

    @llm_chat(model)
    def chat(message: str, history: History) -> None:
        """Hi."""

    gc.collect()
    gc.disable()  # what is closed is closed by the code, not by a collection
    try:
        for chunk, _ in chat.sync("x", history=[]):
            assert chunk == "word "
            break
        assert model.closed.is_set()
    finally:
        gc.enable()


def test_concurrent_turns_share_nothing() -> None:
    def reply(messages: list[dict[str, Any]]) -> str:
        return "echo " + messages[-1]["content"]

    @llm_chat(FunctionModel(reply, chunk_size=2))
    async def chat(message: str, history: History) -> None:
        """Echo."""

    async def one(i: int) -> History:
        final: History = []
        async for _, history in chat(f"m{i}", history=[]):
            final = history
        return final

    async def main() -> list[History]:
        return await asyncio.gather(*(one(i) for i in range(10)))

    for i, history in enumerate(asyncio.run(main())):
        assert history[-1]["content"].startswith("echo ")
        assert f"m{i}" in history[-1]["content"] and f"m{i}" in history[0]["content"]


def test_a_tool_inside_a_turn_sees_the_turn_s_trace_id() -> None:
    seen: list[str | None] = []

    @tool
    def probe() -> str:
        """Probe."""
        seen.append(current_trace_id())
        return "ok"

    model = ScriptedModel([[NativeCall("probe", {})], "done"])

    @llm_chat(model, toolkit=[probe])
    def chat(message: str, history: History) -> None:
        """Hi."""

    pairs_of(chat, "x", history=[])
    assert seen and seen[0] is not None and seen[0].startswith("chat-")


def test_configuration_errors() -> None:
    with pytest.raises(ConfigError):
        llm_chat(ScriptedModel([]), return_mode="json")  # type: ignore[arg-type]
    with pytest.raises(ConfigError):
        llm_chat(ScriptedModel([]), protocol="nope")
    with pytest.raises(ConfigError):
        llm_chat("not a model")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "reply",
    [
        "",  # nothing at all
        "<think>only thinking</think>",  # nothing the user sees
        ScriptedReply(finish_reason="length"),  # cut by its token limit before a token
    ],
    ids=["empty", "thinking-only", "cut-first"],
)
def test_a_turn_that_said_nothing_hands_back_a_history_that_can_be_sent(reply: Any) -> None:
    model = ScriptedModel([reply, "Hello again."])

    @llm_chat(model)
    def chat(message: str, history: History) -> None:
        """Be brief."""

    history = pairs_of(chat, "hi", history=[])[-1][1]
    assert [m["role"] for m in history] == ["user"]
    assert_valid_history(history)
    second = pairs_of(chat, "are you there?", history=history)[-1][1]
    assert_valid_history(model.requests[1].messages)
    assert second[-1] == {"role": "assistant", "content": "Hello again."}
