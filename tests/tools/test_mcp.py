"""MCP servers as tools, against a real MCP server (tests/mcp_server.py) over stdio.

Two servers (``alpha`` and ``beta``, the same script) are started once for the module,
their sessions opened on one event loop that runs in its own thread for the whole
module (as a web application's loop would).  The async forms run on that loop; the sync
forms run on the library's background loop, from which each call goes to the session's
loop.  The tests that end a server, or stop its loop, start their own.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream_parser import FunctionCallAgent, ReActAgent, llm_chat, llm_function
from stream_parser.agent.events import ToolResultEvent
from stream_parser.dialects import get_dialect
from stream_parser.errors import ConfigError
from stream_parser.testing import NativeCall, ScriptedModel
from stream_parser.tools import ToolRegistry, ToolResult, mcp_tools

mcp = pytest.importorskip("mcp", reason="the MCP tests need the mcp package (pip install mcp)")
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

SERVER = Path(__file__).resolve().parent.parent / "mcp_server.py"
T = TypeVar("T")
ALL_TOOLS = [
    "echo",
    "forecast",
    "fail",
    "picture",
    "media",
    "weather.get",
    "pid",
    "wait",
    "release",
    "huge",
    "retired",
]


@contextlib.asynccontextmanager
async def open_server(name: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=sys.executable, args=[str(SERVER), name])
    with open(os.devnull, "w") as quiet:
        async with (
            stdio_client(params, errlog=quiet) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


class Servers:
    """Two servers whose sessions live on one loop, running in a thread of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self._closing = asyncio.Event()
        self._ready: asyncio.Future[tuple[Any, Any]] = self.loop.create_future()
        self._holder = asyncio.run_coroutine_threadsafe(self._hold(), self.loop)
        self.alpha, self.beta = self.on_loop(self._wait_ready())

    async def _wait_ready(self) -> tuple[Any, Any]:
        return await self._ready

    async def _hold(self) -> None:
        try:
            async with open_server("alpha") as alpha, open_server("beta") as beta:
                self._ready.set_result((alpha, beta))
                await self._closing.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            raise

    def on_loop(self, work: Awaitable[T]) -> T:
        """Run ``work`` on the sessions' loop and wait for it."""

        async def wrapped() -> T:
            return await work

        return asyncio.run_coroutine_threadsafe(wrapped(), self.loop).result(timeout=60)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self._closing.set)
        self._holder.result(timeout=30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=30)
        self.loop.close()


@pytest.fixture(scope="module")
def servers() -> Iterator[Servers]:
    started = Servers()
    yield started
    started.close()


@pytest.fixture(scope="module")
def alpha(servers: Servers) -> ToolRegistry:
    return servers.on_loop(mcp_tools(servers.alpha))


def native(name: str, **arguments: Any) -> list[NativeCall]:
    return [NativeCall(name, arguments)]


def results(run: Any) -> list[ToolResult]:
    return [event.result for event in run.events if isinstance(event, ToolResultEvent)]


def react_call(dialect: str, name: str, arguments: dict[str, Any]) -> str:
    return f"Calling.\n{get_dialect(dialect).format_call(name, arguments)}\n"


# --- the list ------------------------------------------------------------------------------


def test_every_page_is_listed_with_names_and_schemas_as_the_server_gave_them(
    servers: Servers, alpha: ToolRegistry
) -> None:
    assert list(alpha) == ALL_TOOLS  # three pages
    listed: list[dict[str, Any]] = []

    async def list_all() -> None:
        cursor = None
        while True:
            params = None if cursor is None else mcp.types.PaginatedRequestParams(cursor=cursor)
            page = await servers.alpha.list_tools(params=params)
            listed.extend(t.model_dump(by_alias=True, exclude_none=True) for t in page.tools)
            cursor = page.next_cursor
            if not cursor:
                return

    servers.on_loop(list_all())
    assert alpha.to_mcp() == listed
    echo = alpha.to_mcp()[0]
    assert echo["annotations"] == {"readOnlyHint": True}
    assert alpha.get_tool("echo").read_only is False  # untrusted by default
    assert alpha.get_tool("weather.get").requires_approval is False


def test_trusted_annotations_set_read_only_and_requires_approval(servers: Servers) -> None:
    trusted = servers.on_loop(mcp_tools(servers.alpha, trust_annotations=True))
    assert trusted.get_tool("echo").read_only is True
    assert trusted.get_tool("weather.get").requires_approval is True
    assert trusted.get_tool("fail").read_only is False
    assert trusted.get_tool("fail").requires_approval is False


# --- calls through the agents --------------------------------------------------------------


def test_arguments_reach_the_server_unchanged_async_function_call(
    servers: Servers, alpha: ToolRegistry
) -> None:
    arguments = {"text": "héllo <b>", "Odd-Name": 7}
    model = ScriptedModel([native("echo", **arguments), "done"])
    run = servers.on_loop(_run(FunctionCallAgent(model, alpha), "echo"))
    assert run.output == "done"
    assert results(run)[0].text == f"alpha: {json.dumps(arguments, sort_keys=True)}"
    assert model.requests[1].messages[-1]["content"] == results(run)[0].text


async def _run(agent: Any, prompt: str) -> Any:
    return await agent.run(prompt)


@pytest.mark.parametrize("dialect", ["xml", "hermes"])
def test_react_agent_calls_a_dotted_tool_sync(alpha: ToolRegistry, dialect: str) -> None:
    model = ScriptedModel([react_call(dialect, "weather.get", {"city": "Oslo"}), "Sunny."])
    run = ReActAgent(model, alpha, dialect=dialect).run_sync("weather?")
    assert run.output == "Sunny."
    assert [r.text for r in results(run)] == ["sunny in Oslo"]


@pytest.mark.parametrize("dialect", ["xml", "hermes"])
def test_react_agent_async_on_the_sessions_loop(
    servers: Servers, alpha: ToolRegistry, dialect: str
) -> None:
    model = ScriptedModel([react_call(dialect, "echo", {"text": "hi"}), "ok"])
    run = servers.on_loop(_run(ReActAgent(model, alpha, dialect=dialect), "go"))
    assert [r.text for r in results(run)] == ['alpha: {"text": "hi"}']


def test_stream_sync_delivers_the_result_and_the_next_reply(alpha: ToolRegistry) -> None:
    model = ScriptedModel([native("weather.get", city="Lima"), "Sunny in Lima."])
    events = list(FunctionCallAgent(model, alpha).stream_sync("weather?"))
    found = [e.result.text for e in events if isinstance(e, ToolResultEvent)]
    assert found == ["sunny in Lima"]
    assert model.requests[1].messages[-1]["content"] == "sunny in Lima"


def test_an_error_result_carries_the_servers_text(alpha: ToolRegistry) -> None:
    model = ScriptedModel([native("fail", text="x"), "sorry"])
    run = FunctionCallAgent(model, alpha).run_sync("fail")
    (result,) = results(run)
    assert result.is_error and result.text == "cannot do 'x'"
    assert model.requests[1].messages[-1]["content"] == "Error (tool_exception): cannot do 'x'"
    assert run.output == "sorry"


def test_a_structured_result_is_the_value_and_the_text(alpha: ToolRegistry) -> None:
    run = FunctionCallAgent(ScriptedModel([native("forecast", city="Oslo"), "ok"]), alpha).run_sync(
        "x"
    )
    (result,) = results(run)
    assert result.value == {"city": "Oslo", "celsius": 21.5}
    assert json.loads(result.text) == result.value


def test_an_image_reaches_the_next_request(alpha: ToolRegistry) -> None:
    model = ScriptedModel([native("picture"), "a pixel it is"])
    FunctionCallAgent(model, alpha).run_sync("picture")
    sent = model.requests[1].messages
    assert sent[-2]["content"] == "a pixel"
    images = [p for p in sent[-1]["content"] if p["type"] == "image_url"]
    assert images[0]["image_url"]["url"].startswith("data:image/png;base64,iVBORw0KGgo")


def test_other_content_becomes_text(alpha: ToolRegistry) -> None:
    model = ScriptedModel([native("media"), "ok"])
    run = FunctionCallAgent(model, alpha).run_sync("media")
    (result,) = results(run)
    assert not result.is_error
    assert (
        result.text
        == "[audio content (audio/wav)]\n[resource_link content at file:///notes.txt (text/plain)]"
    )


def test_a_huge_result_is_cut_by_max_result_chars(alpha: ToolRegistry) -> None:
    model = ScriptedModel([native("huge"), "ok"])
    run = FunctionCallAgent(model, alpha, max_result_chars=100).run_sync("huge")
    (result,) = results(run)
    assert result.text.startswith("x" * 100) and len(result.text) < 300


def test_a_protocol_error_is_an_error_result_with_the_servers_message(
    alpha: ToolRegistry,
) -> None:
    model = ScriptedModel([native("retired"), native("echo", text="still here"), "ok"])
    run = FunctionCallAgent(model, alpha).run_sync("x")
    refused, answered = results(run)
    assert refused.is_error
    assert refused.text == (
        "Error: MCP server 'alpha', tool 'retired': it refused the call: unknown tool: retired"
    )
    assert answered.text == 'alpha: {"text": "still here"}'
    assert run.output == "ok"


def test_a_call_that_never_answers_is_bounded_by_tool_timeout(
    servers: Servers, alpha: ToolRegistry
) -> None:
    model = ScriptedModel([native("wait"), native("release"), "ok"])
    run = FunctionCallAgent(model, alpha, tool_timeout=0.5).run_sync("wait")
    first, second = results(run)
    assert first.is_error and first.error_type == "tool_timeout"
    assert second.text == "ok" and run.output == "ok"


# --- several servers -----------------------------------------------------------------------


def test_two_servers_with_one_tool_name_need_a_prefix(
    servers: Servers, alpha: ToolRegistry
) -> None:
    beta = servers.on_loop(mcp_tools(servers.beta))
    with pytest.raises(ConfigError, match=r"'echo'.*'alpha' and MCP server 'beta'.*prefix"):
        ToolRegistry([*alpha.tools, *beta.tools])
    prefixed = servers.on_loop(mcp_tools(servers.beta, prefix="b."))
    both = ToolRegistry([*alpha.tools, *prefixed.tools])
    assert "b.echo" in both and "echo" in both
    model = ScriptedModel(
        [[NativeCall("echo", {"text": "1"}), NativeCall("b__echo", {"text": "2"})], "ok"]
    )
    run = FunctionCallAgent(model, both).run_sync("both")
    assert [r.text for r in results(run)] == ['alpha: {"text": "1"}', 'beta: {"text": "2"}']


# --- decorated functions -------------------------------------------------------------------


def test_llm_function_sync_and_async_with_an_mcp_toolkit(
    servers: Servers, alpha: ToolRegistry
) -> None:
    def script() -> ScriptedModel:
        return ScriptedModel([native("weather.get", city="Rome"), "sunny"])

    model = script()

    @llm_function(model, toolkit=alpha)
    def weather(city: str) -> str:
        """The weather in a city."""

    assert weather("Rome") == "sunny"
    assert model.requests[1].messages[-1]["content"] == "sunny in Rome"

    model_async = script()

    @llm_function(model_async, toolkit=alpha)
    async def weather_async(city: str) -> str:
        """The weather in a city."""

    assert servers.on_loop(weather_async("Rome")) == "sunny"
    assert model_async.requests[1].messages[-1]["content"] == "sunny in Rome"


def test_llm_chat_sync_with_an_mcp_toolkit(alpha: ToolRegistry) -> None:
    model = ScriptedModel([native("echo", text="chat"), "said"])

    @llm_chat(model, toolkit=alpha)
    def talk(message: str, history: list[Any]) -> None:
        """Talk."""

    list(talk.sync("hi", []))
    assert model.requests[1].messages[-1]["content"] == 'alpha: {"text": "chat"}'


# --- event loops ---------------------------------------------------------------------------


def test_run_sync_on_the_sessions_own_thread_is_refused(
    servers: Servers, alpha: ToolRegistry
) -> None:
    model = ScriptedModel(["never"])

    async def blocking() -> None:
        FunctionCallAgent(model, alpha).run_sync("x")

    with pytest.raises(ConfigError, match=r"'alpha'.*this thread.*async form"):
        servers.on_loop(blocking())
    assert model.requests == []


def test_a_session_whose_loop_is_not_running_is_refused_before_any_request() -> None:
    loop = asyncio.new_event_loop()
    closing = asyncio.Event()
    ready: asyncio.Future[ToolRegistry] = loop.create_future()

    async def hold() -> None:
        async with open_server("idle") as session:
            ready.set_result(await mcp_tools(session))
            await closing.wait()

    holder = loop.create_task(hold())
    try:
        registry = loop.run_until_complete(ready)
        model = ScriptedModel([native("echo", text="x"), "done"])
        agent = FunctionCallAgent(model, registry)
        with pytest.raises(ConfigError, match=r"'idle'.*not running.*async form"):
            agent.run_sync("x")
        with pytest.raises(ConfigError, match="not running"):
            agent.stream_sync("x")

        @llm_function(model, toolkit=registry)
        def ask(question: str) -> str:
            """Ask."""

        with pytest.raises(ConfigError, match="not running"):
            ask("q")
        assert model.requests == []
        # The async form, on another loop: an error result, never an anyio error.
        run = asyncio.run(_run(FunctionCallAgent(model, registry), "x"))
        (result,) = results(run)
        assert result.is_error and "'idle'" in result.text and "not running" in result.text
    finally:
        closing.set()
        loop.run_until_complete(holder)
        loop.close()


def test_a_sessions_loop_that_stops_during_a_sync_call_is_an_error_result() -> None:
    loop = asyncio.new_event_loop()
    closing = asyncio.Event()
    ready: asyncio.Future[ToolRegistry] = loop.create_future()

    async def hold() -> None:
        async with open_server("stopping") as session:
            ready.set_result(await mcp_tools(session))
            await closing.wait()

    holder = loop.create_task(hold())
    registry = loop.run_until_complete(ready)
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        model = ScriptedModel([native("wait"), "carried on"])
        agent = FunctionCallAgent(model, registry)
        # The loop stops while the wait call is on it: the call can never be answered.
        # (The call waits for ever, so the 2 s only give a loaded machine time to send it.)
        stopper = threading.Timer(2.0, lambda: loop.call_soon_threadsafe(loop.stop))
        stopper.start()
        run = agent.run_sync("go")
        stopper.join()
        (result,) = results(run)
        assert result.is_error and "'stopping'" in result.text and "stopped" in result.text
        assert run.output == "carried on"
    finally:
        thread.join(timeout=30)
        closing.set()
        loop.run_until_complete(holder)
        loop.close()


# --- a server that dies --------------------------------------------------------------------


def test_a_server_that_dies_mid_call_is_an_error_result_and_the_run_goes_on() -> None:
    async def main() -> tuple[Any, ScriptedModel]:
        async with open_server("doomed") as session:
            registry = await mcp_tools(session)
            model = ScriptedModel(
                [native("pid"), native("wait"), native("echo", text="again"), "carried on"]
            )
            agent = FunctionCallAgent(model, registry)
            run = agent.run("go")
            killer: asyncio.Task[None] | None = None

            async def kill(pid: int) -> None:
                await asyncio.sleep(0.3)  # let the wait call reach the server
                os.kill(pid, signal.SIGKILL)

            async for event in run:
                if isinstance(event, ToolResultEvent) and event.tool_name == "pid":
                    killer = asyncio.ensure_future(kill(int(event.result.text)))
            assert killer is not None
            await killer
            return run, model

    run, model = asyncio.run(main())
    _pid, died, later = results(run)
    assert died.is_error and "'doomed'" in died.text and "connection closed" in died.text
    assert later.is_error and later.text.replace("'echo'", "'wait'") == died.text
    assert run.output == "carried on"
    assert model.requests[-1].messages[-1]["content"] == later.text


# --- results of every shape ----------------------------------------------------------------


def test_from_mcp_reads_the_json_form() -> None:
    result = ToolResult.from_mcp(
        "t",
        {
            "content": [
                {"type": "text", "text": "a"},
                {"type": "text", "text": "b"},
                {"type": "image", "data": "AAAA", "mimeType": "image/gif"},
                {"type": "resource", "resource": {"uri": "file:///x", "mimeType": "text/plain"}},
            ],
            "structuredContent": {"n": 1},
            "isError": True,
        },
    )
    assert result.text == "a\nb\n[resource content at file:///x (text/plain)]"
    assert result.images == (
        {"type": "image_url", "image_url": {"url": "data:image/gif;base64,AAAA"}},
    )
    assert result.is_error and result.value == {"n": 1}


def test_a_result_not_as_the_sdk_gives_it_is_an_invalid_result() -> None:
    result = ToolResult.from_mcp("t", {"content": "not a list"})
    assert result.is_error and result.error_type == "invalid_result"
    assert "not an MCP tool result" in result.text


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=4)
    ),
    max_leaves=12,
)
_parts = st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "image", "audio", "resource", "resource_link", "x"])},
    optional={"text": _json, "data": _json, "mimeType": _json, "uri": _json, "resource": _json},
)


@settings(max_examples=200, deadline=None)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "content": st.lists(_parts, max_size=4) | _json,
            "structuredContent": _json,
            "isError": _json,
        },
    )
    | _json
)
def test_from_mcp_never_raises(answer: Any) -> None:
    result = ToolResult.from_mcp("t", answer)
    result.text.encode("utf-8")
    assert isinstance(result.content_parts(), list)


def test_without_mcp_the_error_gives_the_install_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)
    monkeypatch.setitem(sys.modules, "mcp.types", None)
    with pytest.raises(ImportError, match=r"pip install 'mcp>=2,<3' .*pip install '\.\[mcp\]'"):
        asyncio.run(mcp_tools(object()))
