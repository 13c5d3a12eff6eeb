"""The app's MCP connection, with every JSON-RPC message recorded as it crosses.

The course wants learners to see what really crossed between the app and an MCP server, not a
re-typed copy. So the client and the server do not share streams directly: a small relay sits
between them, forwards each message unchanged and appends its wire JSON to a list. Everything
here uses public mcp APIs (`mcp.Client`, `mcp.server.Server.run`,
`mcp.shared.memory.create_client_server_memory_streams`).

    async with McpConnection(server, name="files") as conn:
        tools = await conn.list_tools()
        result, exchange = await conn.call_tool("read_text_file", {"path": "notes.txt", "head": 5})
        exchange.request["id"], exchange.response["result"]["isError"]

`mode="legacy"` (the default here) performs the initialize handshake and negotiates protocol
2025-11-25, the closest to the 2025-06-18 spec the source text follows; `mode="auto"` probes
`server/discover` and speaks 2026-07-28 (every request then carries `_meta` with the protocol
version and client info).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import mcp_types
from mcp import Client
from mcp.server import Server
from mcp.shared.memory import create_client_server_memory_streams

Direction = Literal["app→server", "server→app"]


@dataclass(frozen=True)
class WireMessage:
    """One JSON-RPC message as it crossed the connection."""

    direction: Direction
    json: dict[str, Any]

    @property
    def text(self) -> str:
        """The message as compact JSON text (what a stdio transport would write on one line)."""
        return json.dumps(self.json, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class Exchange:
    """A request and the response that carries the same JSON-RPC `id`."""

    request: dict[str, Any]
    response: dict[str, Any] | None

    @property
    def id(self) -> int | str:
        return self.request["id"]


def _wire_json(item: Any) -> dict[str, Any]:
    """The JSON object of a `SessionMessage`, serialized the way the stdio transport writes it."""
    if isinstance(item, Exception):
        return {"transport_error": type(item).__name__}
    return json.loads(item.message.model_dump_json(by_alias=True, exclude_unset=True))


@asynccontextmanager
async def in_process(server: Server[Any]) -> AsyncIterator[tuple[Any, Any]]:
    """Run `server` in this process on memory streams; yield the client's (read, write) streams."""
    async with create_client_server_memory_streams() as (client_streams, server_streams):
        async with anyio.create_task_group() as tg:
            tg.start_soon(
                lambda: server.run(server_streams[0], server_streams[1], server.create_initialization_options())
            )
            try:
                yield client_streams
            finally:
                # Closing the client's write side is EOF for the server; its run() then returns.
                await client_streams[1].aclose()


@asynccontextmanager
async def recorded(
    transport: AbstractAsyncContextManager[tuple[Any, Any]], log: list[WireMessage]
) -> AsyncIterator[tuple[Any, Any]]:
    """Wrap any MCP transport so that every message crossing it is appended to `log`.

    Works for the in-process transport above and for `mcp.client.stdio.stdio_client(...)` alike.
    """
    async with (
        transport as (inner_read, inner_write),
        create_client_server_memory_streams() as (client_side, relay_side),
    ):
        relay_read, relay_write = relay_side

        async def app_to_server() -> None:
            async with inner_write:
                async for item in relay_read:
                    log.append(WireMessage("app→server", _wire_json(item)))
                    await inner_write.send(item)

        async def server_to_app() -> None:
            async with relay_write:
                async for item in inner_read:
                    log.append(WireMessage("server→app", _wire_json(item)))
                    await relay_write.send(item)

        async with anyio.create_task_group() as tg:
            tg.start_soon(app_to_server)
            tg.start_soon(server_to_app)
            try:
                yield client_side
            finally:
                await client_side[1].aclose()
                tg.cancel_scope.cancel()


@dataclass
class McpConnection:
    """One MCP client session to one server, recording every JSON-RPC message.

    `server` is an in-process `mcp.server.Server`, or any transport (an async context manager
    yielding read/write streams, e.g. `stdio_client(params, errlog=...)`).
    """

    server: Server[Any] | AbstractAsyncContextManager[tuple[Any, Any]]
    name: str = "server"
    mode: Literal["legacy", "auto"] = "legacy"
    messages: list[WireMessage] = field(default_factory=list)
    _client: Client | None = field(default=None, init=False, repr=False)

    async def __aenter__(self) -> McpConnection:
        transport = in_process(self.server) if isinstance(self.server, Server) else self.server
        # The Client's response cache is off: the course wants each tools/list to cross the wire.
        self._client = Client(recorded(transport, self.messages), mode=self.mode, cache=None)
        await self._client.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.__aexit__(*exc)

    @property
    def client(self) -> Client:
        """The live `mcp.Client`."""
        if self._client is None:
            raise RuntimeError("use `async with McpConnection(...)` first")
        return self._client

    @property
    def protocol_version(self) -> str:
        """The protocol version negotiated with the server."""
        return self.client.protocol_version

    async def list_tools(self) -> list[mcp_types.Tool]:
        """`tools/list`: the server's declarations (rules), as mcp types."""
        return (await self.client.list_tools()).tools

    async def call_tool(
        self, name: str, arguments: dict[str, Any]
    ) -> tuple[mcp_types.CallToolResult, Exchange]:
        """`tools/call` with an arguments *object*; returns the result and the exchange that carried it.

        Raises:
            mcp.shared.exceptions.MCPError: the server answered with a JSON-RPC protocol error
                (for example an unknown tool). A tool that ran and failed is not raised: it comes
                back as a result with `is_error=True`.
        """
        start = len(self.messages)
        # A protocol error (MCPError) propagates: the exchange that carried it is `last_call()`.
        # Anything raised before sending (e.g. the SDK refusing a non-object) propagates as it is.
        result = await self.client.call_tool(name, arguments)
        return result, self._find_call(start, name, arguments)

    def last_call(self) -> Exchange:
        """The most recent `tools/call` exchange (useful after a call raised a protocol error)."""
        calls = self.exchanges("tools/call")
        if not calls:
            raise LookupError("no tools/call has crossed this connection yet")
        return calls[-1]

    def exchanges(self, method: str | None = None) -> list[Exchange]:
        """Requests paired with their responses by JSON-RPC `id`, in the order they were sent."""
        return _pair(self.messages, method)

    def _find_call(self, start: int, name: str, arguments: dict[str, Any]) -> Exchange:
        # Only what crossed since this call began: the request and its response are both there.
        for exchange in reversed(_pair(self.messages[start:], "tools/call")):
            params = exchange.request.get("params", {})
            if params.get("name") == name and params.get("arguments") == arguments:
                return exchange
        raise LookupError(f"no tools/call for {name!r} was recorded")  # the relay lost a message: a bug


def _pair(messages: list[WireMessage], method: str | None) -> list[Exchange]:
    responses = {
        m.json["id"]: m.json
        for m in messages
        if m.direction == "server→app" and "id" in m.json and "method" not in m.json
    }
    return [
        Exchange(m.json, responses.get(m.json["id"]))
        for m in messages
        if m.direction == "app→server"
        and "id" in m.json
        and "method" in m.json
        and (method is None or m.json["method"] == method)
    ]
