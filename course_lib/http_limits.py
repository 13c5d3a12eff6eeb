"""Bounded HTTP: deadlines and caps so that slow or greedy clients cannot hold the server forever.

uvicorn (0.54) reads a request with no deadline until its first response: a client that sends
half its headers, headers and no body, or nothing at all holds a connection for as long as it
likes, and the SDK opens a session for every `initialize` (up to 10,000, each kept 30 minutes).
Two pieces bound that, with the settings of `course_lib.http_transport.HttpSettings`:

- `BoundedH11Protocol`, uvicorn's own h11 protocol with
  - an **idle deadline** (`idle_seconds`): a connection with no request under way (just opened, or
    kept alive after a response) is closed, silently, as uvicorn's keep-alive already does after
    a response;
  - a **header deadline** (`header_seconds`): from a request's first byte to the end of its
    headers; then 408 and close;
  - a **body deadline** (`body_seconds`): from the end of the headers to the end of the body;
    then 408 and close;
  - a **connection cap** (`max_connections`): one connection more gets 503 and is closed;
  - and every refusal uvicorn or h11 makes itself (a bad request line, a bad header,
    `Content-Length: -1`, headers over h11's 16 KiB) answered as a JSON-RPC error body.
- `SessionCap`, an ASGI layer that counts the SDK's sessions (2025-11-25 era) and keeps at most
  `max_sessions`: when a new session opens beyond that, the idle-most one is ended (the one whose
  last request is the oldest; an open GET stream is listening, not working), so the new client is
  still served; the evicted client's next request gets 404 with a JSON-RPC error saying why.

Deadlines bound the wait for a request, never the work on one: a tool call or an SSE stream runs
as long as it needs once its request has arrived.
"""

from __future__ import annotations

import asyncio
import http
import inspect
import logging
import math
import re
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import h11
from mcp_types import INTERNAL_ERROR, INVALID_REQUEST
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

from course_lib.frames import error_bytes

logger = logging.getLogger(__name__)

SESSION_HEADER = b"mcp-session-id"


def _h11_header_limit() -> int:
    """h11's own default for the longest header block (16 KiB), as uvicorn uses it."""
    return inspect.signature(h11.Connection).parameters["max_incomplete_event_size"].default


def _phrase(status: int) -> str:
    return http.HTTPStatus(status).phrase


# --- the connection: deadlines, a cap, JSON-RPC refusals ------------------------------------------
# These hooks are uvicorn's H11Protocol methods (connection_made, data_received, connection_lost,
# send_400_response, the keep-alive timer and the cycle's `disconnected`), uvicorn 0.54's, not a
# documented API: tests/test_http_limits.py exercises each one and fails loudly if it changes.


class _WatchedConnection(h11.Connection):
    """h11's connection, telling the protocol when a request's headers and body are complete, and
    keeping the last protocol error (uvicorn's handler only says "Invalid HTTP request received.")."""

    def __init__(self, protocol: BoundedH11Protocol, max_incomplete_event_size: int) -> None:
        super().__init__(h11.SERVER, max_incomplete_event_size=max_incomplete_event_size)
        self._protocol = protocol
        self.last_error: h11.RemoteProtocolError | None = None

    def next_event(self) -> Any:
        try:
            event = super().next_event()
        except h11.RemoteProtocolError as problem:
            self.last_error = problem
            raise
        if isinstance(event, h11.Request):
            self._protocol.headers_complete()
        elif isinstance(event, h11.EndOfMessage):
            self._protocol.body_complete()
        return event


class _Tally:
    """A warning the first time something happens, then at most one a minute saying how often: a
    flood of refused connections must not become a flood of log lines."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.count = 0
        self.reported = -math.inf

    def __call__(self, *args: object) -> None:
        self.count += 1
        now = time.monotonic()
        if now - self.reported >= 60:
            self.reported = now
            logger.warning(self.text + " (%d so far)", *args, self.count)


_refused_connection = _Tally("refused a connection: the cap is %d open connections")


@dataclass(frozen=True)
class ConnectionLimits:
    """The numbers `BoundedH11Protocol` enforces (from `HttpSettings`)."""

    max_connections: int
    idle_seconds: float
    header_seconds: float
    body_seconds: float


class BoundedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with deadlines, a connection cap and JSON-RPC refusal bodies.

    Give uvicorn `functools.partial(BoundedH11Protocol, limits=ConnectionLimits(...))` as `http`.
    """

    def __init__(self, *args: Any, limits: ConnectionLimits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = limits
        size = self.config.h11_max_incomplete_event_size
        self.conn = _WatchedConnection(self, size if size is not None else _h11_header_limit())
        self._deadline: asyncio.TimerHandle | None = None
        self._reading = False  # a request's first byte has arrived and its body is not complete

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            _refused_connection(self.limits.max_connections)
            self._refuse(503, INTERNAL_ERROR, f"Service Unavailable: this server takes at most "
                                              f"{self.limits.max_connections} connections at once; try again later")
            return
        # Idle until the first byte: uvicorn's keep-alive timer, armed at once instead of only after
        # a response (uvicorn cancels it itself when data arrives, and re-arms it after each response).
        self.timeout_keep_alive_task = self.loop.call_later(self.limits.idle_seconds, self.timeout_keep_alive_handler)

    def data_received(self, data: bytes) -> None:
        if not self._reading and (self.cycle is None or self.cycle.response_complete):
            self._reading = True  # a new request begins: its headers have header_seconds
            self._arm(self.limits.header_seconds, "headers")
        super().data_received(data)

    def headers_complete(self) -> None:
        """h11 parsed a request's headers: its body now has `body_seconds`."""
        self._arm(self.limits.body_seconds, "body")

    def body_complete(self) -> None:
        """h11 read a request's end: no deadline while the app works on it."""
        self._cancel()
        self._reading = False

    def _arm(self, seconds: float, part: str) -> None:
        self._cancel()
        self._deadline = self.loop.call_later(seconds, self._expired, seconds, part)

    def _cancel(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expired(self, seconds: float, part: str) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if part == "body" and cycle is not None:  # the request's cycle has begun
            if not cycle.response_complete:
                cycle.disconnected = True  # the app's receive() now says http.disconnect, its sends go nowhere
                cycle.message_event.set()
            if cycle.response_started:  # answered already (say a 404 that never read the body): just close
                self.transport.close()
                return
        logger.info("closed a connection: the request's %s did not arrive within %g s", part, seconds)
        self._refuse(408, INVALID_REQUEST, f"Request Timeout: the request's {part} did not arrive within {seconds:g} s")

    def send_400_response(self, msg: str) -> None:
        """uvicorn's answer to any h11 protocol error, as a JSON-RPC body with h11's status hint."""
        problem = self.conn.last_error
        status = getattr(problem, "error_status_hint", 400)
        # h11 names the offending bytes ("illegal request line: bytearray(b'...')"): the reason is enough
        detail = re.sub(r":\s*bytearray\(.*$", "", str(problem), flags=re.S) if problem is not None else msg
        self._refuse(status, INVALID_REQUEST, f"{_phrase(status)}: {detail} (not an HTTP/1.1 request this server can read)")

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def _refuse(self, status: int, code: int, message: str) -> None:
        """Write one JSON-RPC error response and close. Raw bytes: h11 cannot send a response to a
        request it has not (fully) received, and the connection ends here anyway."""
        self._cancel()
        body = error_bytes(code, message)
        head = (f"HTTP/1.1 {status} {_phrase(status)}\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body)}\r\nconnection: close\r\n\r\n").encode("ascii")
        self.transport.write(head + body)
        self.transport.close()


# --- the sessions: a cap, the idle-most evicted ------------------------------------------------------


@dataclass
class _Session:
    opened: float
    active: float  # when a POST or DELETE for it last started or ended
    working: int = 0  # POSTs and DELETEs in flight
    listening: int = 0  # GET streams open


class SessionCap:
    """Keep at most `max_sessions` 2025-11-25 sessions open; evict the idle-most one for a newcomer.

    It only watches: a session is counted when the SDK's answer to an `initialize` carries its
    `Mcp-Session-Id`, forgotten on a `DELETE` or a 404. Beyond the cap the idle-most other session
    is ended with a `DELETE` sent through the app itself (so auth, Host and Origin apply as to any
    request, with the newcomer's own headers: a session can only be ended by the credential that
    made it). Its id is remembered (a bounded list), and the 404 its client gets next says why.
    """

    def __init__(self, app: ASGIApp, *, max_sessions: int, idle_seconds: float | None, path: str) -> None:
        self.app = app
        self.max_sessions = max_sessions
        self.idle_seconds = idle_seconds
        self.path = path
        self.sessions: dict[str, _Session] = {}
        self.evicted: OrderedDict[str, None] = OrderedDict()
        self._evicted_kept = max(64, 4 * max_sessions)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        header = dict(scope["headers"]).get(SESSION_HEADER)
        session_id = header.decode("latin-1") if header else None
        if session_id is None:
            await self._maybe_opening(scope, receive, send)
        else:
            await self._within(session_id, scope, receive, send)

    async def _maybe_opening(self, scope: Scope, receive: Receive, send: Send) -> None:
        opened: list[str] = []
        before = dict(scope)  # as it came: Starlette adds its own keys to the scope it is given

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                new = dict(message.get("headers", [])).get(SESSION_HEADER)
                if new:
                    opened.append(new.decode("latin-1"))
            await send(message)

        await self.app(scope, receive, watch)
        if opened:
            now = time.monotonic()
            self.sessions[opened[0]] = _Session(opened=now, active=now)
            await self._make_room(keep=opened[0], scope=before)

    async def _within(self, session_id: str, scope: Scope, receive: Receive, send: Send) -> None:
        session = self.sessions.get(session_id)
        listening = scope["method"] == "GET"
        status: list[int] = []
        held: list[Message] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
                if message["status"] == 404 and session_id in self.evicted:
                    held.append(message)  # the SDK says "Session not found": say why instead
                    return
            elif held:
                if message.get("more_body"):
                    return
                start = held[0]
                body = error_bytes(INVALID_REQUEST, self._eviction_notice())
                headers = [(k, v) for k, v in start.get("headers", []) if k not in (b"content-type", b"content-length")]
                headers += [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
                await send({**start, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
            await send(message)

        if session is not None:
            if listening:
                session.listening += 1
            else:
                session.working += 1
                session.active = time.monotonic()
        try:
            await self.app(scope, receive, watch)
        finally:
            if session is not None:
                if listening:
                    session.listening -= 1
                else:
                    session.working -= 1
                    session.active = time.monotonic()
            ended = scope["method"] == "DELETE" and status and status[0] < 300
            if ended or (status and status[0] == 404):
                self.sessions.pop(session_id, None)

    def _eviction_notice(self) -> str:
        return (f"Session evicted: this server keeps at most {self.max_sessions} session{'' if self.max_sessions == 1 else 's'}, and this one had "
                f"been idle the longest when a new client arrived. Send initialize to start a new session.")

    def _prune(self, now: float) -> None:
        """Forget sessions the SDK has closed for idleness (it says so only to a client that comes back)."""
        if self.idle_seconds is None:
            return
        for session_id, s in list(self.sessions.items()):
            if not s.working and not s.listening and now - s.active > self.idle_seconds:
                del self.sessions[session_id]

    async def _make_room(self, keep: str, scope: Scope) -> None:
        self._prune(time.monotonic())
        while len(self.sessions) > self.max_sessions:
            others = [(s.working > 0, s.active, sid) for sid, s in self.sessions.items() if sid != keep]
            _, _, victim = min(others)  # idle ones first, then the oldest activity
            del self.sessions[victim]
            self.evicted[victim] = None
            while len(self.evicted) > self._evicted_kept:
                self.evicted.popitem(last=False)
            logger.info("session cap (%d) reached: ended the idle-most session", self.max_sessions)
            await self._end(victim, scope)

    async def _end(self, session_id: str, scope: Scope) -> None:
        """`DELETE` the session through the app, with the newcomer's Host, Origin and credentials."""
        kept = {b"host", b"origin", b"authorization"}
        headers = [(k, v) for k, v in scope["headers"] if k in kept] + [(SESSION_HEADER, session_id.encode())]
        request = {**scope, "method": "DELETE", "headers": headers, "query_string": b""}
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if sent:  # nothing more: the DELETE has no body, and nobody waits for its answer
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: Message) -> None:
            if message["type"] == "http.response.start" and message["status"] >= 300:
                logger.warning("ending an evicted session was refused with %d", message["status"])

        await self.app(request, receive, discard)
