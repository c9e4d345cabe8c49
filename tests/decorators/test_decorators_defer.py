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
