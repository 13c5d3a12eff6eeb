"""What-if stdio servers for benchmark 1, to split the cost of our stdio server into its parts.

    python -m benchmarks._stdio_variants floor ROOT        # a trivial tool, on the SDK's stdio transport
    python -m benchmarks._stdio_variants sdk-stdio ROOT    # our server on the SDK's stdio transport
    python -m benchmarks._stdio_variants thread-hop ROOT   # our server + a worker-thread hop per call
    python -m benchmarks._stdio_variants before ROOT       # both: our server as it shipped before
    python -m benchmarks._stdio_variants two-shapes ROOT   # our server declaring success OR error
    python -m benchmarks._stdio_variants draft-07 ROOT     # our server, its schema marked draft-07

`floor` is what the Python MCP SDK costs per call over stdio with no work at all. The others start
from `course_lib.fs_server.build_server` unchanged. `sdk-stdio` serves it through the SDK's
default `stdio_server()` streams (`anyio.wrap_file`: a worker-thread hop for every readline, write
and flush) instead of `course_lib.stdio.serve_stdio`'s event-loop pipes. `thread-hop` keeps our
pipes but wraps the `tools/call` handler (through the server's public `get_request_handler` /
`add_request_handler`) so each call first takes the `anyio.to_thread.run_sync` hop the read used
to take. `before` does both: the server as it was before those two changes. `two-shapes` is our
server unchanged but for its `tools/list`, which declares the output schema it had before issue
22 — `anyOf` the success shape and an error shape — for the mcp 1.x client row, whose per-call
`jsonschema.validate` pays for every branch. `draft-07` declares the shipped success shape with
`"$schema": "http://json-schema.org/draft-07/schema#"` (as the Node reference's schema does): the
keywords mean the same, but `jsonschema.validate` checks a schema against its dialect's
metaschema on every call, and 2020-12's is the dearer one.
Nothing here is used by the course: these only measure what each change buys.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server

import course_lib.fs_server as fs
from course_lib.stdio import serve_stdio

KINDS = ("floor", "sdk-stdio", "thread-hop", "before", "two-shapes", "draft-07")

_ERROR_SHAPE = {
    "properties": {"error": {
        "type": "object",
        "properties": {"code": {"type": "string", "enum": ["INVALID_INPUT", "FORBIDDEN", "NOT_FOUND", "UPSTREAM_ERROR"]},
                       "message": {"type": "string"}},
        "required": ["code", "message"],
        "additionalProperties": False,
    }},
    "required": ["error"],
    "additionalProperties": False,
}
TWO_SHAPES = {"type": "object", "anyOf": [{k: v for k, v in fs.OUTPUT_SCHEMA.items() if k != "type"}, _ERROR_SHAPE]}
"""The files server's output schema before issue 22: a success or an error."""
DRAFT_07 = {"$schema": "http://json-schema.org/draft-07/schema#", **fs.OUTPUT_SCHEMA}


def _trivial_server() -> Server:
    tool = types.Tool(name=fs.TOOL_NAME, input_schema={"type": "object"})
    text = "a line\n" * 5

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def on_call_tool(ctx: Any, params: Any) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server("floor", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


def _with_thread_hop(server: Server) -> Server:
    entry = server.get_request_handler("tools/call")
    assert entry is not None

    async def hopped(ctx: Any, params: Any) -> Any:
        await anyio.to_thread.run_sync(lambda: None)  # the hop the read took when it ran in a thread
        return await entry.handler(ctx, params)

    server.add_request_handler("tools/call", entry.params_type, hopped)
    return server


def _declaring(server: Server, schema: dict[str, Any]) -> Server:
    entry = server.get_request_handler("tools/list")
    assert entry is not None

    async def listed(ctx: Any, params: Any) -> types.ListToolsResult:
        tools = (await entry.handler(ctx, params)).tools
        return types.ListToolsResult(tools=[tool.model_copy(update={"output_schema": schema}) for tool in tools])

    server.add_request_handler("tools/list", entry.params_type, listed)
    return server


async def _serve_sdk_stdio(server: Server) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    kind, root = sys.argv[1], sys.argv[2]
    if kind not in KINDS:
        raise SystemExit(f"kind must be one of {', '.join(KINDS)}")
    logging.basicConfig(level="WARNING", stream=sys.stderr)
    server = _trivial_server() if kind == "floor" else fs.build_server(fs.Workspace(root))
    if kind in ("thread-hop", "before"):
        server = _with_thread_hop(server)
    if kind in ("two-shapes", "draft-07"):
        server = _declaring(server, TWO_SHAPES if kind == "two-shapes" else DRAFT_07)
    anyio.run(serve_stdio if kind in ("thread-hop", "two-shapes", "draft-07") else _serve_sdk_stdio, server)


if __name__ == "__main__":
    main()
