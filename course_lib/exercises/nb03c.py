"""Checks for notebook 03c (remote servers over Streamable HTTP).

- `check_session_to_send(fn)`: the learner's `session_to_send(http) -> str | None` reads a list of
  recorded `HttpExchange`s and returns the `Mcp-Session-Id` the client must put on its next
  request, or None when there is none to send. It runs on three real recordings against the
  course's files server over HTTP: a 2025-11-25 session in use, the same kind of session after
  the client ended it with `DELETE`, and stateless 2026-07-28 requests.
- `check_accept_token(fn)`: the learner's `accept_token(claims, resource, now) -> bool` decides, as
  a resource server must, whether a token's claims let it in: issued *for this server* (`aud`,
  a string or a list, RFC 8707/9068) and not expired (`exp`). The cases include a token meant
  for another service, which a server must neither accept nor pass on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from anyio.from_thread import start_blocking_portal

from course_lib.connection import HttpExchange, McpConnection
from course_lib.exercises import Solutions, failed, not_answered, passed

# ---- exercise 1: session_to_send ----------------------------------------------------------------


def real_recordings() -> dict[str, list[HttpExchange]]:
    """Record the three HTTP conversations (see the module docstring) against a live server."""
    from course_lib.fs_server import Workspace, build_server
    from course_lib.http_transport import serving
    from course_lib.paths import workspace_dir

    async def record(url: str, mode: str, end: bool) -> list[HttpExchange]:
        conn = McpConnection(url, mode=mode)
        async with conn:
            await conn.list_tools()
            if not end:
                return [h for h in conn.http if h.method == "POST"]  # the GET stream is still open
        return [h for h in conn.http if h.method != "GET"]  # ... ending with the DELETE

    with serving(build_server(Workspace(workspace_dir()))) as srv, start_blocking_portal() as portal:
        return {
            "a 2025-11-25 session in use": portal.call(record, srv.url, "legacy", False),
            "a 2025-11-25 session the client ended with DELETE": portal.call(record, srv.url, "legacy", True),
            "stateless 2026-07-28 requests": portal.call(record, srv.url, "2026-07-28", True),
        }


def _expected_session(http: list[HttpExchange]) -> str | None:
    session = None
    for exchange in http:
        if exchange.method == "DELETE" or exchange.status == 404:
            session = None
        elif "mcp-session-id" in exchange.response_headers and exchange.status < 400:
            session = exchange.response_headers["mcp-session-id"]
    return session


def check_session_to_send(fn: Callable[[list[HttpExchange]], str | None]) -> bool:
    """Run `fn` on each real recording and compare with the session id the next request needs."""
    if not_answered(fn):
        return failed("Not answered yet: define session_to_send(http) and pass the function itself.")
    if not callable(fn):
        return failed(f"Pass the function itself (session_to_send, without parentheses); you passed {fn!r}.")
    recordings = real_recordings()
    for name, http in recordings.items():
        want = _expected_session(http)
        try:
            got = fn(list(http))
        except Exception as error:
            return failed(f"session_to_send raised {type(error).__name__}: {error} on {name}. Not every "
                          "exchange has every header: look at which ones each really carries.")
        if got == want:
            continue
        first = http[0]
        if want is not None and got is None:
            return failed(f"{name}: you returned None, but the server opened a session: its answer to "
                          f"{first.jsonrpc_method} carried mcp-session-id in its *response* headers.")
        if want is None and got is not None and "DELETE" in name:
            return failed(f"{name}: the session is over (DELETE answered {http[-1].status}); sending its id "
                          "again gets 404. Return None: the client has to initialize anew.")
        if want is None and got is not None:
            return failed(f"{name}: the 2026-07-28 era has no sessions, so nothing to send; you returned {got!r}.")
        return failed(f"{name}: the next request needs {want!r}, you returned {got!r}.")
    return passed(f"all {len(recordings)} recordings: the right Mcp-Session-Id (or none) for the next request.")


def _session_to_send_solution(http: list[HttpExchange]) -> str | None:
    session = None
    for exchange in http:
        if exchange.method == "DELETE" or exchange.status == 404:
            session = None  # ended, or forgotten by the server
        elif exchange.status < 400:
            session = exchange.response_headers.get("mcp-session-id", session)
    return session


# ---- exercise 2: accept_token ---------------------------------------------------------------------

RESOURCE = "https://files.example/mcp"
NOW = 1_800_000_000
TOKEN_CASES: list[tuple[str, dict[str, Any], bool]] = [
    ("issued for this server", {"aud": RESOURCE, "exp": NOW + 600, "sub": "ada"}, True),
    ("issued for another API (the user's calendar)", {"aud": "https://calendar.example/api", "exp": NOW + 600}, False),
    ("an audience list naming this server", {"aud": ["https://calendar.example/api", RESOURCE], "exp": NOW + 600}, True),
    ("an audience list without this server", {"aud": ["https://calendar.example/api"], "exp": NOW + 600}, False),
    ("no audience at all", {"exp": NOW + 600, "sub": "ada"}, False),
    ("for this server, but expired", {"aud": RESOURCE, "exp": NOW - 1}, False),
    ("for a server whose URL merely starts like ours", {"aud": RESOURCE + "-admin", "exp": NOW + 600}, False),
]


def check_accept_token(fn: Callable[[dict[str, Any], str, int], bool]) -> bool:
    """Run `fn(claims, RESOURCE, NOW)` on every case and compare with what a resource server must decide."""
    if not_answered(fn):
        return failed("Not answered yet: define accept_token(claims, resource, now) and pass the function itself.")
    if not callable(fn):
        return failed(f"Pass the function itself (accept_token, without parentheses); you passed {fn!r}.")
    for name, claims, want in TOKEN_CASES:
        try:
            got = fn(json.loads(json.dumps(claims)), RESOURCE, NOW)
        except Exception as error:
            return failed(f"accept_token raised {type(error).__name__}: {error} for a token {name} {claims}: "
                          "a claim may be missing, or be a list.")
        if got is want:
            continue
        if not isinstance(got, bool):
            return failed(f"a token {name}: return True or False, not {got!r}.")
        if want:
            return failed(f"a token {name} ({claims}) must be accepted: `aud` may be a list, and this server's "
                          "URL only has to be one of its entries.")
        if "another" in name or "without" in name:
            return failed(f"a token {name} ({claims}) was accepted: it was issued for someone else. Accepting it "
                          "makes this server a confused deputy; forwarding it is token passthrough. Refuse it.")
        if "starts like" in name:
            return failed(f"a token {name} ({claims['aud']!r}) was accepted: compare the whole audience, "
                          "not a prefix.")
        return failed(f"a token {name} ({claims}) must be refused.")
    return passed(f"all {len(TOKEN_CASES)} tokens decided as a resource server must.")


def _accept_token_solution(claims: dict[str, Any], resource: str, now: int) -> bool:
    audience = claims.get("aud", [])
    audiences = [audience] if isinstance(audience, str) else audience
    return resource in audiences and claims.get("exp", 0) > now


SOLUTIONS: Solutions = {
    "check_session_to_send": lambda: _session_to_send_solution,
    "check_accept_token": lambda: _accept_token_solution,
}
