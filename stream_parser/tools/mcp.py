"""An MCP server's tools as a :class:`~stream_parser.tools.ToolRegistry`: :func:`mcp_tools`.

Theory of operation.  :func:`mcp_tools` pages through the server's ``tools/list`` (the
server's cursor, until the last page) and reads each tool description as a schema tool
(:mod:`~stream_parser.tools.sources`: its JSON Schema kept as the server wrote it).
Each tool gets a handler, an :class:`MCPToolHandler`, that sends ``tools/call`` with the
server's own tool name and the arguments keyed by the schema's own property names, and
turns the answer into a :class:`~stream_parser.tools.ToolResult`
(:meth:`~stream_parser.tools.ToolResult.from_mcp`).

A ``ClientSession`` belongs to the event loop that opened it: the handler remembers the
loop :func:`mcp_tools` was awaited on.  A call made on another loop (the library's
background loop, which drives ``run_sync``, ``stream_sync`` and sync decorated
functions) is sent on the session's loop when that loop runs in another thread; when it
does not, the sync forms refuse to start (:func:`~stream_parser.agent._sync.check_sync_tools`
asks each handler's :meth:`MCPToolHandler.check_sync_use`), so no call is ever sent from a
foreign loop nor waits on a loop that cannot answer.

Nothing the server sends or does raises out of a call: a protocol error (an unknown
tool, arguments the server refuses) is an error result with the server's message, and a
server that died or closed the connection gives an error result naming the server --
and every later call to it gives the same one at once.

``mcp`` is imported only when :func:`mcp_tools` is called.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
from collections.abc import Mapping
from typing import Any

from ..errors import ConfigError
from .registry import ToolRegistry
from .result import ToolResult, _class_name, _exception_message
from .sources import tool_from_description

__all__ = ["MCPToolHandler", "mcp_tools"]

logger = logging.getLogger("stream_parser.tools.mcp")

_INSTALL_HINT = (
    "mcp_tools needs the 'mcp' package (the official MCP SDK, 2.x); install it with: "
    "python -m pip install 'mcp>=2,<3' "
    "(or, in a checkout of stream_parser: python -m pip install '.[mcp]')"
)
# Guard against a server whose cursor never ends.
_MAX_PAGES = 10_000
# The error code and message the SDK gives a request whose connection closed (a server
# may answer with that code for its own errors, so the message is checked too).
_CONNECTION_CLOSED = -32000
# How often a call sent to the session's loop from another loop checks that the session's
# loop still runs (a stopped loop would leave the call unanswered for ever).
_LOOP_CHECK_SECONDS = 0.25


def _import_mcp() -> Any:
    try:
        import mcp.types
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return mcp.types


class _ServerState:
    """What the tools of one server share: its name, its loop, and whether it is gone."""

    def __init__(self, session: Any, name: str, loop: asyncio.AbstractEventLoop) -> None:
        self.session = session
        self.name = name
        self.loop = loop
        self.gone: str | None = None  # why the server cannot answer any more


class MCPToolHandler:
    """Runs one MCP tool's calls: ``tools/call`` on the session, the answer as a result.

    Made by :func:`mcp_tools`; an instance is the tool's handler (``Tool.fn``).

    Attributes:
        tool_name: the tool's name on the server (sent as is, whatever the tool is
            registered as).
        server_name: the server's name (its ``serverInfo``), used in messages.
    """

    def __init__(self, state: _ServerState, tool_name: str) -> None:
        self._state = state
        self.tool_name = tool_name

    @property
    def server_name(self) -> str:
        """The server's name, as its ``initialize`` answer gives it."""
        return self._state.name

    def __repr__(self) -> str:
        return f"<MCPToolHandler {self.tool_name!r} of server {self.server_name!r}>"

    def check_sync_use(self, driver: asyncio.AbstractEventLoop) -> None:
        """Refuse a sync run that could not reach this tool's session.

        A sync run is driven on the library's background loop; it reaches the session
        when the session's loop is the background loop, or runs in another thread than
        the caller's (the caller is blocked while it waits).

        Args:
            driver: the loop that will drive the run (the library's background loop).

        Raises:
            ConfigError: the session's loop is closed, not running, or is the loop the
                caller would block.
        """
        state = self._state
        if state.loop is driver:
            return
        if state.loop.is_closed() or not state.loop.is_running():
            why = "is not running"
        elif _running_loop() is state.loop:
            why = "runs in this thread, which a sync call would block"
        else:
            return
        raise ConfigError(
            f"MCP server {state.name!r}: its session belongs to an event loop that {why}, "
            "so a sync run (run_sync, stream_sync, a sync decorated function) cannot "
            "call its tools; use the async form there (await agent.run(...), async for "
            "... in agent.stream(...), an async decorated function)"
        )

    async def __call__(self, arguments: Mapping[str, Any]) -> ToolResult:
        """Call the tool; never raises for what the server sends or does.

        Args:
            arguments: the arguments by the schema's property names.

        Returns:
            The server's answer as a result, or an error result naming the server.
        """
        state = self._state
        if state.gone is not None:
            return self._failure(state.gone)
        running = asyncio.get_running_loop()
        if running is state.loop:
            return await self._call(dict(arguments))
        if state.loop.is_closed() or not state.loop.is_running():
            return self._failure(
                "its session's event loop is not running, so it cannot be reached from this one"
            )
        future = asyncio.run_coroutine_threadsafe(self._call(dict(arguments)), state.loop)
        # Cancelling this wait (a tool timeout) cancels the call on the session's loop.
        waiting = asyncio.wrap_future(future)
        try:
            return await self._wait_on_session_loop(future, waiting)
        finally:
            if not waiting.done():
                waiting.cancel()

    async def _wait_on_session_loop(
        self, future: concurrent.futures.Future[ToolResult], waiting: asyncio.Future[ToolResult]
    ) -> ToolResult:
        state = self._state
        while True:
            # A loop that stops or closes while the call is on it never finishes the call:
            # look at it now and then, so that the wait ends instead of hanging.
            done, _ = await asyncio.wait({waiting}, timeout=_LOOP_CHECK_SECONDS)
            if done:
                return waiting.result()
            if state.loop.is_closed() or not state.loop.is_running():
                future.cancel()
                logger.warning(
                    "MCP server %r: its session's event loop stopped during a call to %r",
                    state.name,
                    self.tool_name,
                )
                return self._failure(
                    "its session's event loop stopped while the call was waiting for an answer"
                )

    async def _call(self, arguments: dict[str, Any]) -> ToolResult:
        state = self._state
        if state.gone is not None:
            return self._failure(state.gone)
        try:
            answer = await state.session.call_tool(self.tool_name, arguments)
        except Exception as exc:
            return self._refused(exc)
        return ToolResult.from_mcp(self.tool_name, answer)

    def _refused(self, exc: BaseException) -> ToolResult:
        """The result of a call the SDK raised for: a protocol error or a lost server."""
        state = self._state
        code = getattr(getattr(exc, "error", None), "code", None)
        message = _exception_message(exc)
        if code is not None and not (code == _CONNECTION_CLOSED and message == "Connection closed"):
            # The server answered with a JSON-RPC error: it is still there.
            return self._failure(f"it refused the call: {message}", exc)
        if (code == _CONNECTION_CLOSED and message == "Connection closed") or _is_closed_stream(
            exc
        ):
            state.gone = f"the connection closed ({message or _class_name(exc, 'Exception')})"
            logger.warning("MCP server %r is gone: %s", state.name, state.gone)
            return self._failure(state.gone, exc)
        kind = _class_name(exc, "Exception")
        return self._failure(f"the call failed: {kind}: {message}" if message else kind, exc)

    def _failure(self, why: str, exc: BaseException | None = None) -> ToolResult:
        return ToolResult(
            tool_name=self.tool_name,
            text=f"Error: MCP server {self.server_name!r}, tool {self.tool_name!r}: {why}",
            is_error=True,
            error_type="tool_exception",
            exception_type=None if exc is None else _class_name(exc, "Exception"),
            exception=exc,
        )


def _running_loop() -> asyncio.AbstractEventLoop | None:
    """The loop running in this thread, if any (the one a sync call here would block)."""
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def _is_closed_stream(exc: BaseException) -> bool:
    """Whether the SDK failed because its transport's streams closed (the server left)."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(
        names & {"ClosedResourceError", "BrokenResourceError", "EndOfStream", "BrokenPipeError"}
    )


async def mcp_tools(
    session: Any, *, prefix: str | None = None, trust_annotations: bool = False
) -> ToolRegistry:
    """Every tool of an MCP server, as a registry whose tools call the server.

    Await it on the event loop that opened the session, after ``session.initialize()``.

    Args:
        session: an initialized ``mcp.ClientSession``.
        prefix: put before each tool's name (``"gh."`` gives ``gh.create_issue``), to
            tell apart the tools of servers that use one name; calls still send the
            server's own name.
        trust_annotations: read the server's tool annotations as facts:
            ``readOnlyHint`` sets ``read_only`` (an agent with ``eager_tools`` may start
            the tool early) and ``destructiveHint`` sets ``requires_approval``.  MCP
            calls annotations untrusted unless the server is, so by default they set
            nothing (they stay on the tool, and :meth:`ToolRegistry.to_mcp` gives them
            back).

    Returns:
        The registry, in the server's order.

    Raises:
        ImportError: ``mcp`` is not installed (the message gives the install line).
        ConfigError: a tool description or name that cannot be a tool, or two tools
            with one name.
        Exception: whatever the session raises for ``tools/list`` (the server is not
            reachable when the tools are being listed).
    """
    types = _import_mcp()
    if prefix is not None and not isinstance(prefix, str):
        raise ConfigError(f"prefix must be a string, not {type(prefix).__name__}")
    info = getattr(session, "server_info", None)
    server_name = getattr(info, "name", None)
    state = _ServerState(
        session,
        server_name if isinstance(server_name, str) and server_name else "(unnamed)",
        asyncio.get_running_loop(),
    )
    listed: list[Any] = []
    cursor: str | None = None
    for _ in range(_MAX_PAGES):
        params = None if cursor is None else types.PaginatedRequestParams(cursor=cursor)
        page = await session.list_tools(params=params)
        listed.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    registry = ToolRegistry()
    for description in listed:
        schema_tool = tool_from_description(description)
        handler = MCPToolHandler(state, schema_tool.name)
        made = schema_tool.with_handler(handler)
        if prefix:
            made = made.with_name(prefix + made.name)
        if trust_annotations:
            hints = made._mcp_extra.get("annotations")
            if isinstance(hints, Mapping):
                made.read_only = hints.get("readOnlyHint") is True
                made.requires_approval = hints.get("destructiveHint") is True
        try:
            registry.add(made)
        except ConfigError as exc:
            raise ConfigError(f"MCP server {state.name!r}: {exc}") from exc
    logger.info("MCP server %r: %d tools", state.name, len(registry))
    return registry
