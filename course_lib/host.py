"""The host application's MCP side: connected servers, model-side aliases, and calls.

The model only ever sees aliases such as `fs__read_text_file`. The host keeps the map from each
alias back to (server, original tool name), so two servers that both offer `read_text_file` stay
distinguishable, and the arguments never change because of the alias.

MCP clients are async; notebook cells and widget callbacks are easier to read when they are not.
So `McpHost` runs its connections on an event loop in a background thread (an anyio blocking
portal) and offers plain methods. Each connection is still a real `mcp.Client` recording the real
JSON-RPC messages (see `connection.py`).

A host left open still ends cleanly. Its portal and connections are closed by `close()` (or the
`with` block), when the host is garbage-collected, and at interpreter exit — before Python joins
the program's threads and freezes the daemon ones. A script that never closes its host (or its
`NotesAssistant`, or its `start_course()`) therefore exits by itself: otherwise, at shutdown, the
portal's own clean-up waits for an event loop whose thread can no longer run, and the process hangs.
"""

from __future__ import annotations

import atexit
import logging
import tempfile
import threading
import weakref
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
logger = logging.getLogger(__name__)


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
        self._held = _Held()
        self._portal, self._open, self._errlogs = self._held.portal, self._held.open, self._held.errlogs
        # Closed when the host is collected, if nobody called close(); and at exit (`_Held`).
        weakref.finalize(self, self._held.close, quiet=True).atexit = False
        self.connections: dict[str, McpConnection] = {}
        self.routes: dict[str, Route] = {}

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
        """Close every connection (in reverse order) and stop the background event loop. Calling
        it again does nothing.

        Raises:
            Exception: the first error a connection raised while closing (every other one is
                closed all the same).
        """
        self.connections.clear()
        self._held.close()


class _Held:
    """What one host holds open — its blocking portal (an event loop in a thread), its
    connections, the stdio servers' log files — apart from the host itself, so a finalizer can
    close it once the host is gone (a finalizer must not refer to its object).

    Every `_Held` not closed yet is in `_UNCLOSED`, and `_close_unclosed` runs at interpreter exit.
    """

    def __init__(self) -> None:
        self.portal_cm: AbstractContextManager[BlockingPortal] | None = start_blocking_portal()
        self.portal = self.portal_cm.__enter__()
        self.loop_thread = self.portal.call(threading.get_ident)
        self.open: list[AbstractContextManager[McpConnection]] = []
        self.errlogs: dict[str, Any] = {}
        _close_at_exit(self)

    def close(self, *, quiet: bool = False, cancel: bool = False) -> None:
        """Close the connections (newest first), the logs and the portal, once.

        `quiet` (garbage collection, exit): an error closing a connection is logged, not raised.
        `cancel` (exit): tasks still running on the portal (a call another thread waits for) are
        cancelled instead of awaited.

        Raises:
            Exception: the first error a connection raised while closing (unless `quiet`).
        """
        with _LOCK:
            if self.portal_cm is None:
                return  # already closed
            portal_cm, self.portal_cm = self.portal_cm, None
            _UNCLOSED.discard(self)
        if threading.get_ident() == self.loop_thread:
            # Collected on its own event loop's thread (the last reference dropped in a handler):
            # the portal cannot be stopped from there, so another thread does it.
            threading.Thread(target=self._shut, args=(portal_cm, True, cancel), daemon=True).start()
        else:
            self._shut(portal_cm, quiet, cancel)

    def _shut(self, portal_cm: AbstractContextManager[BlockingPortal], quiet: bool, cancel: bool) -> None:
        first: Exception | None = None
        while self.open:
            try:
                self.open.pop().__exit__(None, None, None)
            except Exception as error:  # a server that died first: close the others all the same
                logger.debug("closing an MCP connection failed", exc_info=True)
                first = first or error
        for errlog in self.errlogs.values():
            errlog.close()
        if cancel:
            self.portal.call(self.portal.stop, True)  # then the context manager's own stop finds it stopped
        portal_cm.__exit__(None, None, None)
        if first is not None and not quiet:
            raise first


_LOCK = threading.Lock()
_UNCLOSED: set[_Held] = set()
_registered = False


def _close_at_exit(held: _Held) -> None:
    """Remember `held` until it is closed, and close whatever is still open at interpreter exit.

    The moment matters. Python's shutdown (`Py_FinalizeEx`, CPython 3.11) first runs
    `threading._shutdown()` — the callbacks registered with `threading._register_atexit`, then it
    joins every non-daemon thread —, only then the `atexit` callbacks, and then freezes the daemon
    threads for good. An `atexit` callback would be in time for anyio 4's portal (a daemon
    thread), but not for a portal (or a worker) on a non-daemon thread: the join would wait for
    it first. So the hosts are closed from `threading._register_atexit`, the hook that
    `concurrent.futures` uses to stop its own workers: before any thread is joined. It is
    private, so it is used here only, and `tests/test_host.py` fails loudly if it changes or goes
    (`atexit` is the fallback, in time for a daemon portal).
    """
    global _registered
    with _LOCK:
        _UNCLOSED.add(held)
        first, _registered = not _registered, True
    if first:  # after anyio and concurrent.futures registered theirs: ours runs before them (LIFO)
        register = getattr(threading, "_register_atexit", None)
        try:
            (register or atexit.register)(_close_unclosed)
        except RuntimeError:  # registered during shutdown itself: too late for the early hook
            atexit.register(_close_unclosed)


def _close_unclosed() -> None:
    """Close every host still open (at interpreter exit)."""
    with _LOCK:
        still_open = list(_UNCLOSED)
    for held in still_open:
        held.close(quiet=True, cancel=True)


def files_host(root: Path | None = None, *, prefix: str = "fs") -> McpHost:
    """A host connected to the course's files server (in-process) over `root` (default: the
    course workspace), under `prefix`."""
    from course_lib.fs_server import Workspace, build_server
    from course_lib.paths import workspace_dir

    host = McpHost()
    host.add_server(prefix, build_server(Workspace(root or workspace_dir())))
    return host
