"""The host application's MCP side: connected servers, model-side aliases, and calls.

The model only ever sees aliases such as `fs__read_text_file`. The host keeps the map from each
alias back to (server, original tool name), so two servers that both offer `read_text_file` stay
distinguishable, and the arguments never change because of the alias.

MCP clients are async; notebook cells and widget callbacks are easier to read when they are not.
So `McpHost` runs its connections on an event loop in a background thread (an anyio blocking
portal) and offers plain methods. Each connection is still a real `mcp.Client` recording the real
JSON-RPC messages (see `connection.py`).
"""

from __future__ import annotations

import tempfile
from functools import partial
from collections.abc import Awaitable, Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import mcp_types
from anyio.from_thread import BlockingPortal, start_blocking_portal
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from pydantic import BaseModel

from course_lib.connection import Exchange, McpConnection
from course_lib.declarations import ALIAS_SEPARATOR, alias_for, to_responses_tool
from course_lib.execution import CallContext, Tool, ToolError
from course_lib.results import result_text, tool_error_code

T = TypeVar("T")


@dataclass(frozen=True)
class Route:
    """Where a model-side alias leads: which server, which original tool, and its declaration."""

    alias: str
    server: str
    tool: str
    declaration: mcp_types.Tool


@dataclass(frozen=True)
class ToolCall:
    """One `tools/call` the host made: what it sent and what came back, exactly once."""

    route: Route
    arguments: dict[str, Any]
    exchange: Exchange
    result: mcp_types.CallToolResult | None = None
    protocol_error: MCPError | None = None

    @property
    def mcp_id(self) -> int | str:
        """The JSON-RPC `id` of the request (the app ⇄ server correlation domain)."""
        return self.exchange.id


class UnknownAlias(LookupError):
    """The model named a tool the host never declared."""


class McpHost:
    """Connections to one or more MCP servers, each under a prefix, with a sync API.

        host = McpHost()
        host.add_server("fs", build_server(Workspace(root)))   # in-process; or add_stdio_server,
                                                               # or add_http_server("fs", url)
        host.responses_tools()                      # declarations for the model
        call = host.call("fs__read_text_file", {"path": "/workspace/notes.txt", "head": 5})

    Use it as a context manager, or call `close()` when done.
    """

    def __init__(self) -> None:
        self._portal_cm: AbstractContextManager[BlockingPortal] | None = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        self._open: list[AbstractContextManager[McpConnection]] = []
        self.connections: dict[str, McpConnection] = {}
        self.routes: dict[str, Route] = {}
        self._errlogs: dict[str, Any] = {}

    def __enter__(self) -> McpHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def add_server(
        self, prefix: str, server: Any, *, mode: str = "legacy", only: Iterable[str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> list[Route]:
        """Connect to `server` (an in-process `mcp.server.Server`, a URL, or a transport), list its tools
        and register each as `prefix__tool` — or only the tools named in `only` (expose what the
        task needs, not every tool a server happens to offer). Returns the new routes.

        Raises:
            ValueError: the prefix is already in use, or contains the alias separator `__`.
        """
        if prefix in self.connections:
            raise ValueError(f"a server is already connected under the prefix {prefix!r}")
        if ALIAS_SEPARATOR in prefix:
            raise ValueError(f"a prefix may not contain {ALIAS_SEPARATOR!r}: the alias could not be split back")
        cm = self._portal.wrap_async_context_manager(McpConnection(server, name=prefix, mode=mode, headers=headers))
        connection = cm.__enter__()
        self._open.append(cm)
        self.connections[prefix] = connection
        new = [
            Route(alias_for(prefix, tool.name), prefix, tool.name, tool)
            for tool in self._portal.call(connection.list_tools)
            if only is None or tool.name in only
        ]
        self.routes.update({route.alias: route for route in new})
        return new

    def add_stdio_server(
        self, prefix: str, params: StdioServerParameters, *, mode: str = "legacy", only: Iterable[str] | None = None
    ) -> list[Route]:
        """Start an MCP server as a subprocess (stdio) and connect to it under `prefix`.

        Its stderr goes to a real temporary file (read it with `server_log(prefix)`): inside a
        notebook `sys.stderr` has no file descriptor for the child to inherit.

        Raises:
            ValueError: the prefix is already in use.
            OSError: the command could not be started.
        """
        errlog = tempfile.TemporaryFile("w+", encoding="utf-8")
        self._errlogs[prefix] = errlog
        return self.add_server(prefix, stdio_client(params, errlog=errlog), mode=mode, only=only)

    def add_http_server(
        self, prefix: str, url: str, *, mode: str = "legacy", headers: dict[str, str] | None = None,
        only: Iterable[str] | None = None,
    ) -> list[Route]:
        """Connect to a remote MCP server at a Streamable HTTP `url` (e.g. `http://127.0.0.1:8765/mcp`).

        Nothing is started: someone else runs the server, and anyone it lets in can connect.
        `mode="legacy"` opens a 2025-11-25 session; `mode="2026-07-28"` sends stateless requests.
        `headers` (e.g. `{"Authorization": "Bearer …"}`) go to that server only. Each HTTP
        exchange is recorded in `connections[prefix].http`.

        Raises:
            ValueError: the prefix is already in use.
            Exception: whatever the connection raised (`httpx2.ConnectError` when nothing listens,
                `mcp.shared.exceptions.MCPError` when the server refuses the handshake).
        """
        return self.add_server(prefix, url, mode=mode, only=only, headers=headers)

    def server_log(self, prefix: str) -> str:
        """What a stdio server wrote to its stderr so far."""
        errlog = self._errlogs[prefix]
        errlog.flush()
        errlog.seek(0)
        return errlog.read()

    def responses_tools(self, *, strict: bool = False) -> list[dict[str, Any]]:
        """Every connected tool as a Responses function tool, named by its alias."""
        return [to_responses_tool(r.declaration, alias=r.alias, strict=strict) for r in self.routes.values()]

    def route(self, alias: str) -> Route:
        """The route for a model-side name.

        Raises:
            UnknownAlias: no connected server declared a tool under that name.
        """
        try:
            return self.routes[alias]
        except KeyError:
            raise UnknownAlias(f"unknown tool {alias!r}; declared: {', '.join(self.routes) or 'none'}") from None

    def call(self, alias: str, arguments: dict[str, Any]) -> ToolCall:
        """Send one `tools/call` for `alias` with an arguments *object*, and wait for the answer.

        A JSON-RPC protocol error does not raise: it is kept in `protocol_error`, distinct from a
        tool that ran and failed (`result.is_error`).

        Raises:
            UnknownAlias: see `route()`; nothing is sent.
        """
        route = self.route(alias)
        connection = self.connections[route.server]
        try:
            result, exchange = self._portal.call(connection.call_tool, route.tool, arguments)
        except MCPError as error:
            return ToolCall(route, arguments, connection.last_call(), protocol_error=error)
        return ToolCall(route, arguments, exchange, result=result)

    def run(self, async_fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        """Run `async_fn(*args, **kwargs)` on the host's event loop, where the connections live, and wait."""
        return self._portal.call(partial(async_fn, *args, **kwargs))

    def executor_tool(self, alias: str, input_model: type[BaseModel], **contract: Any) -> Tool:
        """An execution-layer `Tool` backed by this host's MCP tool `alias`.

        `input_model` is the app-side rule the executor checks before anything is sent;
        `contract` sets the rest (`timeout`, `side_effect`, `permission`, `output_model`...).
        The handler runs on the host's loop (use `host.run(executor.execute, ...)`).
        """
        route = self.route(alias)
        connection = self.connections[route.server]

        async def handler(arguments: BaseModel, context: CallContext) -> Any:
            context.notes.update(server=route.server, tool=route.tool)
            try:
                result, exchange = await connection.call_tool(route.tool, arguments.model_dump(exclude_none=True))
            except MCPError:
                context.notes["mcp_id"] = connection.last_call().id
                raise
            context.notes["mcp_id"] = exchange.id
            if result.is_error:
                raise ToolError(tool_error_code(result), result_text(result).partition(": ")[2] or result_text(result))
            return result.structured_content if result.structured_content is not None else result_text(result)

        description = route.declaration.description or ""
        return Tool(alias, description, input_model, handler, **contract)

    def close(self) -> None:
        """Close every connection (in reverse order) and stop the background event loop."""
        if self._portal_cm is None:
            return  # already closed
        while self._open:
            self._open.pop().__exit__(None, None, None)
        self.connections.clear()
        for errlog in self._errlogs.values():
            errlog.close()
        portal_cm, self._portal_cm = self._portal_cm, None
        portal_cm.__exit__(None, None, None)


def files_host(root: Path | None = None, *, prefix: str = "fs") -> McpHost:
    """A host connected to the course's files server (in-process) over `root` (default: the
    course workspace), under `prefix`."""
    from course_lib.fs_server import Workspace, build_server
    from course_lib.paths import workspace_dir

    host = McpHost()
    host.add_server(prefix, build_server(Workspace(root or workspace_dir())))
    return host
