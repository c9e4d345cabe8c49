"""A typed function cannot pause: approve="defer" and an approver's Defer() are refused."""

from __future__ import annotations

from typing import Any

import pytest

from stream_parser import llm_chat, llm_function
from stream_parser.agent import Defer
from stream_parser.errors import ConfigError
from stream_parser.testing import NativeCall, ScriptedModel
from stream_parser.tools import tool

RAN: list[str] = []


@tool(requires_approval=True)
def send(to: str) -> str:
    """Send a mail.

    Args:
        to: The address.
    """
    RAN.append(to)
    return "sent"


@tool(read_only=True)
def look(name: str) -> str:
    """Look a contact up.

    Args:
        name: The name.
    """
    RAN.append(f"look {name}")
    return f"{name}@example.com"


@pytest.mark.parametrize("decorator", [llm_function, llm_chat])
def test_approve_defer_is_refused_at_decoration(decorator: Any) -> None:
    with pytest.raises(ConfigError, match=r"cannot pause.*agent\.resume"):

        @decorator(ScriptedModel([]), toolkit=[send], approve="defer")
        def mail(to: str, history: Any = None) -> str:
            """Send a mail."""


def test_an_approver_that_defers_in_a_typed_function_is_refused_before_the_tool_runs() -> None:
    RAN.clear()
    model = ScriptedModel([[NativeCall("send", {"to": "ann"})], "done"])

    async def later(call: Any) -> Defer:
        return Defer()

    @llm_function(model, toolkit=[send], approve=later)
    def mail(to: str) -> str:
        """Send a mail."""

    with pytest.raises(ConfigError, match="cannot pause"):
        mail("ann")
    assert RAN == []


def test_an_approver_that_defers_in_a_chat_is_refused_before_the_tool_runs() -> None:
    RAN.clear()
    model = ScriptedModel([[NativeCall("send", {"to": "ann"})], "done"])

    @llm_chat(model, toolkit=[send], approve=lambda call: Defer())
    def chat(message: str, history: Any) -> None:
        """Be helpful."""

    with pytest.raises(ConfigError, match="cannot pause"):
        for _ in chat.sync("mail ann", history=[]):
            pass
    assert RAN == []


# A reply whose first call needs no approval and whose second is deferred: the error must
# come before the first runs, whether calls run one by one, at once, or eagerly.
RUNNING = [
    pytest.param({}, id="in-order"),
    pytest.param({"concurrent_tools": True}, id="concurrent"),
    pytest.param({"eager_tools": True}, id="eager"),
]
PROTOCOLS = ["native", "xml"]


def _two_calls(protocol: str) -> list[Any]:
    if protocol == "native":
        return [[NativeCall("look", {"name": "ann"}), NativeCall("send", {"to": "ann"})], "done"]
    return [
        "<look><name>ann</name></look> then <send><to>ann</to></send> and some more text",
        "done",
    ]


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("running", RUNNING)
@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync-approver", "async-approver"])
def test_a_deferred_call_is_refused_before_any_call_of_the_reply_runs(
    protocol: str, running: dict[str, Any], asynchronous: bool
) -> None:
    RAN.clear()
    asked: list[str] = []

    def decide(call: Any) -> Defer:
        asked.append(call.tool_name)
        return Defer()

    async def decide_later(call: Any) -> Defer:
        return decide(call)

    model = ScriptedModel(_two_calls(protocol), chunk_size=3)

    @llm_function(
        model,
        toolkit=[look, send],
        protocol=protocol,
        approve=decide_later if asynchronous else decide,
        **running,
    )
    def mail(to: str) -> str:
        """Send a mail."""

    with pytest.raises(ConfigError, match="cannot pause"):
        mail("ann")
    assert asked == ["send"] and RAN == []


@pytest.mark.parametrize("running", RUNNING)
def test_a_chat_refuses_a_deferred_call_before_any_call_of_the_reply_runs(
    running: dict[str, Any],
) -> None:
    RAN.clear()
    model = ScriptedModel(_two_calls("xml"), chunk_size=3)

    @llm_chat(model, toolkit=[look, send], protocol="xml", approve=lambda call: Defer(), **running)
    def chat(message: str, history: Any) -> None:
        """Be helpful."""

    with pytest.raises(ConfigError, match="cannot pause"):
        for _ in chat.sync("mail ann", history=[]):
            pass
    assert RAN == []


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("running", RUNNING)
def test_approvals_asked_first_still_run_the_calls_as_approved(
    protocol: str, running: dict[str, Any]
) -> None:
    RAN.clear()
    model = ScriptedModel(_two_calls(protocol), chunk_size=3)

    @llm_function(model, toolkit=[look, send], protocol=protocol, approve=lambda c: True, **running)
    def mail(to: str) -> str:
        """Send a mail."""

    assert mail("ann") == "done"
    assert RAN == ["look ann", "ann"]


def test_approvals_asked_first_skip_the_calls_past_the_call_limit() -> None:
    RAN.clear()
    asked: list[str] = []
    replies: list[Any] = [
        [NativeCall("send", {"to": "ann"}), NativeCall("send", {"to": "bob"})],
        "done",
    ]

    def approve(call: Any) -> bool:
        asked.append(call.tool_instance.to)
        return True

    @llm_function(
        ScriptedModel(replies),
        toolkit=[send],
        approve=approve,
        max_tool_calls=1,
        final_answer_at_limit=True,
    )
    def mail(to: str) -> str:
        """Send a mail."""

    assert mail("ann") == "done"
    assert asked == ["ann"] and RAN == ["ann"]
