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

A server can also be a URL (`"http://127.0.0.1:8765/mcp"`): the SDK's Streamable HTTP client
(`mcp.client.streamable_http.streamable_http_client`) then carries the messages, and an httpx2
event hook on the HTTP client we hand it records each HTTP exchange in `conn.http` (method,
status, the MCP headers, JSON bodies; an SSE body's messages are in `conn.messages`).

`mode="legacy"` (the default here) performs the initialize handshake and negotiates protocol
2025-11-25, the closest to the 2025-06-18 spec the source text follows; `mode="auto"` probes
`server/discover` and speaks 2026-07-28 (every request then carries `_meta` with the protocol
version and client info).
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
import httpx2
import mcp_types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.server import Server
from mcp.shared.memory import create_client_server_memory_streams

from course_lib.lang import say

Direction = Literal["app→server", "server→app"]
DIRECTIONS_ZH: dict[str, str] = {"app→server": "应用→服务器", "server→app": "服务器→应用"}


@dataclass(frozen=True)
class WireMessage:
    """One JSON-RPC message as it crossed the connection. `at` is when the relay passed it on
    (`time.monotonic()`), to order it among the model's HTTP exchanges (`wire.HttpExchange.at`);
    it is not part of the message (not compared, not shown)."""

    direction: Direction
    json: dict[str, Any]
    at: float = field(default_factory=time.monotonic, compare=False, repr=False)

    @property
    def direction_label(self) -> str:
        """The direction as the edition prints it: 应用→服务器 / 服务器→应用 in the zh-CN edition
        (`direction` itself, what code compares, stays as it is)."""
        return say(self.direction, DIRECTIONS_ZH[self.direction])

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


# The headers that tell the story of an MCP HTTP exchange (lower-case, as httpx2 reports them).
_REQUEST_HEADERS = ("accept", "content-type", "mcp-protocol-version", "mcp-session-id", "origin", "last-event-id")
_RESPONSE_HEADERS = ("content-type", "mcp-session-id", "www-authenticate")


@dataclass(frozen=True)
class HttpExchange:
    """One HTTP request and its response, as the SDK's HTTP client sent and received them.

    `request_headers` keeps the headers MCP defines or relies on (and any other `mcp-*`); an
    `authorization` header is recorded as `"Bearer <redacted>"`, never its value.
    `response_body` is the parsed JSON of an `application/json` answer, else None (an SSE
    stream's messages are in `McpConnection.messages`; an empty 202 has none).
    """

    method: str
    path: str
    request_headers: dict[str, str]
    request_body: Any
    status: int
    response_headers: dict[str, str]
    response_body: Any

    @property
    def content_type(self) -> str:
        """`application/json`, `text/event-stream`, or "" (no body), without parameters."""
        return self.response_headers.get("content-type", "").split(";")[0].strip()

    @property
    def jsonrpc_method(self) -> str | None:
        """The JSON-RPC method this POST carried (None for GET/DELETE and for a reply)."""
        body = self.request_body
        return body.get("method") if isinstance(body, dict) else None


def _kept(headers: httpx2.Headers, names: tuple[str, ...]) -> dict[str, str]:
    kept = {k: v for k, v in headers.items() if k in names or k.startswith("mcp-")}
    if "authorization" in headers:
        kept["authorization"] = headers["authorization"].split(" ")[0] + " <redacted>"
    return kept


def _json_or_none(data: bytes) -> Any:
    try:
        return json.loads(data) if data else None
    except ValueError:
        return data.decode("utf-8", "replace")


@asynccontextmanager
async def http_transport(
    url: str, http_log: list[HttpExchange], *, headers: dict[str, str] | None = None
) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's Streamable HTTP client transport, on an `httpx2.AsyncClient` that records each exchange.

    `headers` go on every request (e.g. `{"Authorization": "Bearer ..."}`); they are sent only to
    `url`'s origin (the SDK follows no redirect off it) and recorded redacted.
    """

    async def record(response: httpx2.Response) -> None:
        request = response.request
        body = None
        if response.headers.get("content-type", "").startswith("application/json"):
            body = _json_or_none(await response.aread())  # cached: the SDK reads the same bytes
        http_log.append(HttpExchange(
            request.method, request.url.path, _kept(request.headers, _REQUEST_HEADERS),
            _json_or_none(request.content), response.status_code,
            _kept(response.headers, _RESPONSE_HEADERS), body))

    # The SDK's own defaults (mcp.shared._httpx_utils): 30 s, and 300 s to read an SSE stream.
    client = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=300.0),
                                event_hooks={"response": [record]})
    async with client, streamable_http_client(url, http_client=client) as streams:
        yield streams


@dataclass
class McpConnection:
    """One MCP client session to one server, recording every JSON-RPC message.

    `server` is an in-process `mcp.server.Server`, a Streamable HTTP URL, or any transport (an
    async context manager yielding read/write streams, e.g. `stdio_client(params, errlog=...)`).
    `headers` are sent with every HTTP request (URL servers only). `mode` is `"legacy"`
    (initialize, 2025-11-25), `"auto"` (probe `server/discover`) or a modern version such as
    `"2026-07-28"` (stateless from the first request).
    """

    server: Server[Any] | str | AbstractAsyncContextManager[tuple[Any, Any]]
    name: str = "server"
    mode: str = "legacy"
    messages: list[WireMessage] = field(default_factory=list)
    headers: dict[str, str] | None = field(default=None, repr=False)
    http: list[HttpExchange] = field(default_factory=list)
    _client: Client | None = field(default=None, init=False, repr=False)

    async def __aenter__(self) -> McpConnection:
        """Connect (and, in the legacy era, initialize).

        Raises:
            ValueError: `headers` were given for a server that is not a URL.
            mcp.shared.exceptions.MCPError: the server refused the connection (over HTTP, a 401 or
                403 arrives as one; the exchange that carried it is in `http`).
            httpx2.ConnectError: nothing listens at the URL.
        """
        if self.headers and not isinstance(self.server, str):
            raise ValueError("headers apply to a URL server only")
        if isinstance(self.server, Server):
            transport = in_process(self.server)
        elif isinstance(self.server, str):
            transport = http_transport(self.server, self.http, headers=self.headers)
        else:
            transport = self.server
        # The Client's response cache is off: the course wants each tools/list to cross the wire.
        self._client = Client(recorded(transport, self.messages), mode=self.mode, cache=None)
        try:
            await self._client.__aenter__()
        except BaseExceptionGroup as group:  # task groups nest one failure (e.g. an HTTP 401) deeply
            leaves = _leaves(group)
            if len(leaves) == 1 and isinstance(leaves[0], Exception):
                raise leaves[0] from group
            raise
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


def _leaves(group: BaseExceptionGroup) -> list[BaseException]:
    return [leaf for e in group.exceptions for leaf in (_leaves(e) if isinstance(e, BaseExceptionGroup) else [e])]


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
