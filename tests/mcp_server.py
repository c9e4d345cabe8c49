"""A real MCP server for the tests, run as a subprocess over stdio.

Its tools cover every kind of content a server sends: text, a structured result, an
error result, an image, audio and a resource link, a dotted tool name, and a tool that
waits until told to answer (``release``) or until its process is ended.  It serves
more tools than fit one ``tools/list`` page, so that a client must follow the cursor.

Started as ``python tests/mcp_server.py [NAME]``: NAME (default ``main``) is the
server's name, and the tools' descriptions mention it.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

SERVER_NAME = sys.argv[1] if len(sys.argv) > 1 else "main"
PAGE_SIZE = 4
# A 1x1 transparent PNG.
PIXEL_PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
        "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
    )
).decode()

_TEXT_ARG = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
_EMPTY: dict[str, Any] = {"type": "object", "properties": {}}

TOOLS = [
    types.Tool(
        name="echo",
        description=f"Echo the arguments back ({SERVER_NAME}).",
        input_schema={
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "Odd-Name": {"type": "integer"},
            },
            "required": ["text"],
        },
        annotations=types.ToolAnnotations(read_only_hint=True),
    ),
    types.Tool(
        name="forecast",
        description="A structured weather forecast.",
        input_schema={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        output_schema={
            "type": "object",
            "properties": {"city": {"type": "string"}, "celsius": {"type": "number"}},
        },
    ),
    types.Tool(name="fail", description="Always fails.", input_schema=_TEXT_ARG),
    types.Tool(name="picture", description="A picture.", input_schema=_EMPTY),
    types.Tool(name="media", description="Audio and a resource link.", input_schema=_EMPTY),
    types.Tool(
        name="weather.get",
        description="The weather in a city.",
        input_schema={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        annotations=types.ToolAnnotations(destructive_hint=True),
    ),
    types.Tool(name="pid", description="The server process's id.", input_schema=_EMPTY),
    types.Tool(name="wait", description="Wait until released.", input_schema=_EMPTY),
    types.Tool(name="release", description="Let every waiting call answer.", input_schema=_EMPTY),
    types.Tool(name="huge", description="A long text.", input_schema=_EMPTY),
    # Listed, but the server no longer knows it: a call is a protocol error.
    types.Tool(name="retired", description="Gone.", input_schema=_EMPTY),
]

_released = asyncio.Event()


async def list_tools(
    ctx: Any, params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    start = int(params.cursor) if params is not None and params.cursor else 0
    end = start + PAGE_SIZE
    following = str(end) if end < len(TOOLS) else None
    return types.ListToolsResult(tools=TOOLS[start:end], next_cursor=following)


def _text(text: str) -> list[Any]:
    return [types.TextContent(type="text", text=text)]


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    name, args = params.name, params.arguments or {}
    if name == "echo":
        import json

        return types.CallToolResult(
            content=_text(f"{SERVER_NAME}: {json.dumps(args, sort_keys=True)}")
        )
    if name == "forecast":
        return types.CallToolResult(
            content=[], structured_content={"city": args.get("city"), "celsius": 21.5}
        )
    if name == "fail":
        return types.CallToolResult(content=_text(f"cannot do {args.get('text')!r}"), is_error=True)
    if name == "picture":
        return types.CallToolResult(
            content=[
                types.TextContent(type="text", text="a pixel"),
                types.ImageContent(type="image", data=PIXEL_PNG, mime_type="image/png"),
            ]
        )
    if name == "media":
        return types.CallToolResult(
            content=[
                types.AudioContent(type="audio", data="AAAA", mime_type="audio/wav"),
                types.ResourceLink(
                    type="resource_link",
                    name="notes",
                    uri="file:///notes.txt",
                    mime_type="text/plain",
                ),
            ]
        )
    if name == "weather.get":
        return types.CallToolResult(content=_text(f"sunny in {args.get('city')}"))
    if name == "pid":
        return types.CallToolResult(content=_text(str(os.getpid())))
    if name == "wait":
        await _released.wait()
        return types.CallToolResult(content=_text("released"))
    if name == "release":
        _released.set()
        return types.CallToolResult(content=_text("ok"))
    if name == "huge":
        return types.CallToolResult(content=_text("x" * 100_000))
    raise ValueError(f"unknown tool: {name}")


server = Server(SERVER_NAME, on_list_tools=list_tools, on_call_tool=call_tool)


async def main() -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(main)
