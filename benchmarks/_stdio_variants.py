"""What-if stdio servers for benchmark 1, to split our stdio cost into the SDK's part and ours.

    python -m benchmarks._stdio_variants floor ROOT         # a trivial tool, same SDK stdio transport
    python -m benchmarks._stdio_variants inline ROOT        # our server, the read done inline
    python -m benchmarks._stdio_variants pipes ROOT         # our server, stdin/stdout without threads
    python -m benchmarks._stdio_variants inline-pipes ROOT  # both

`floor` is what the Python MCP SDK costs per call over stdio with no work at all. `inline` is
`course_lib.fs_server.build_server` unchanged except that the read runs on the event loop instead
of in a worker thread (the module's `anyio` is replaced, in this subprocess only, by a proxy whose
`to_thread.run_sync` calls the function directly). `pipes` hands `stdio_server` its
own stdin/stdout streams that read and write the pipes from the event loop, where the SDK's
default wraps them in `anyio.wrap_file` (a worker-thread hop for every readline, write and flush). `inline-pipes` does both.
Nothing here is used by the course: these only measure what a change would buy.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

import course_lib.fs_server as fs

KINDS = ("floor", "inline", "pipes", "inline-pipes")


class _Inline:
    @staticmethod
    async def run_sync(fn: Any, *args: Any, **_: Any) -> Any:
        return fn(*args)


class _AnyioWithInlineThreads:
    """`anyio`, except that `to_thread.run_sync(fn, ...)` just calls `fn(...)`."""

    to_thread = _Inline

    def __getattr__(self, name: str) -> Any:
        return getattr(anyio, name)


class _PipeLines:
    """`async for line in ...` over fd 0, read by the event loop (no thread)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def __aiter__(self) -> _PipeLines:
        return self

    async def __anext__(self) -> str:
        line = await self.reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", "replace")


class _PipeWriter:
    """`write`/`flush` on a duplicate of fd 1 (messages are small; the pipe takes them at once)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    async def write(self, text: str) -> None:
        data = text.encode("utf-8")
        while data:
            try:
                data = data[os.write(self.fd, data):]
            except BlockingIOError:
                await anyio.sleep(0)

    async def flush(self) -> None:
        pass


def _trivial_server() -> Server:
    tool = types.Tool(name=fs.TOOL_NAME, input_schema={"type": "object"})
    text = "a line\n" * 5

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def on_call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server("floor", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


async def _serve(kind: str, root: str) -> None:
    if kind == "floor":
        server = _trivial_server()
    else:
        if "inline" in kind:
            fs.anyio = _AnyioWithInlineThreads()  # type: ignore[assignment]
        server = fs.build_server(fs.Workspace(root))
    streams: tuple[Any, Any] = (None, None)
    if "pipes" in kind:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 24)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(0), "rb", 0))
        streams = (_PipeLines(reader), _PipeWriter(os.dup(1)))
    async with stdio_server(*streams) as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    kind, root = sys.argv[1], sys.argv[2]
    if kind not in KINDS:
        raise SystemExit(f"kind must be one of {', '.join(KINDS)}")
    logging.basicConfig(level="WARNING", stream=sys.stderr)
    anyio.run(_serve, kind, root)


if __name__ == "__main__":
    main()
