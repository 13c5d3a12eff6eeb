"""Bounded HTTP (`course_lib.http_limits`): slow clients, greedy clients, uvicorn's own refusals.

Slow clients talk raw sockets to a server with short deadlines (half a second); every socket has
a timeout twenty times longer, so a deadline that does not fire fails the test instead of hanging
it. Nothing here times the server: the bound is only that the answer comes at all. The memory
test runs a server process under the probe's load (hundreds of idle connections and sessions
that are never closed) and bounds the growth of its resident memory.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from course_lib import http_transport
from course_lib.fs_server import Workspace, build_server
from course_lib.http_transport import LIMITS, ConfigurationError, HttpSettings, serving
from course_lib.paths import workspace_dir

REPO = Path(__file__).resolve().parents[1]
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "limits", "version": "0"}}}
LISTING = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
SHORT = {"header_seconds": 0.5, "body_seconds": 0.5, "idle_seconds": 0.5}
PATIENCE = 10.0  # a socket's timeout: far beyond every deadline under test


def files_server():
    return build_server(Workspace(workspace_dir()))


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=PATIENCE)
    sock.settimeout(PATIENCE)
    return sock


def read_until_closed(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes; fails (socket.timeout) if it never does."""
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received


def refusal(raw: bytes, status: int) -> dict:
    """One raw HTTP response: the status, a JSON-RPC error body (no id), and `connection: close`."""
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    assert lines[0].startswith(f"HTTP/1.1 {status} "), raw[:200]
    headers = dict(line.lower().split(": ", 1) for line in lines[1:])
    assert headers["content-type"] == "application/json" and headers.get("connection") == "close"
    message = json.loads(body)
    assert message["jsonrpc"] == "2.0" and message["id"] is None and "result" not in message
    return message["error"]


def request_head(port: int, method: str = "POST", extra: str = "") -> bytes:
    return (f"{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
            f"Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n{extra}").encode()


@pytest.fixture
def short():
    with serving(files_server(), **SHORT) as srv:
        yield srv


# --- slow clients --------------------------------------------------------------------------------

def test_a_connection_that_sends_nothing_is_closed(short):
    with connect(short.port) as sock:
        assert read_until_closed(sock) == b""  # closed without a word: there was no request to answer


def test_partial_headers_get_408_and_are_closed(short):
    with connect(short.port) as sock:
        sock.sendall(request_head(short.port))  # no blank line: the headers never end
        error = refusal(read_until_closed(sock), 408)
    assert error["code"] == -32600 and "headers did not arrive within 0.5 s" in error["message"]


def test_headers_dripped_a_byte_at_a_time_still_meet_the_deadline(short):
    """The header deadline is counted from the first byte: activity does not extend it (slowloris)."""
    with connect(short.port) as sock:
        head = request_head(short.port)
        answered = b""
        for byte in head:
            try:
                sock.sendall(bytes([byte]))
            except OSError:  # closed by the server mid-drip: what it sent is in the socket
                break
            time.sleep(0.05)
            sock.setblocking(False)
            try:
                answered += sock.recv(65536)
            except BlockingIOError:
                pass
            finally:
                sock.setblocking(True)
                sock.settimeout(PATIENCE)
            if answered:
                break
        else:
            pytest.fail("the whole request head was accepted byte by byte, past the header deadline")
        answered += read_until_closed(sock)
    assert "headers did not arrive" in refusal(answered, 408)["message"]


def test_headers_without_the_body_get_408_and_are_closed(short):
    with connect(short.port) as sock:
        sock.sendall(request_head(short.port, extra="Content-Length: 100\r\n\r\n") + b'{"jsonrpc"')
        error = refusal(read_until_closed(sock), 408)
    assert "body did not arrive within 0.5 s" in error["message"]


def test_a_kept_alive_connection_is_closed_when_idle_and_requests_in_time_are_served(short):
    body = json.dumps(INITIALIZE).encode()
    with connect(short.port) as sock:
        sock.sendall(request_head(short.port, extra=f"Content-Length: {len(body)}\r\n\r\n") + body)
        answer = read_until_closed(sock)  # the answer, then the close when the connection has idled
    assert answer.startswith(b"HTTP/1.1 200 ") and b'"protocolVersion":"2025-11-25"' in answer


def test_every_deadline_and_cap_is_settable_and_checked():
    assert {limit.field for limit in LIMITS} == {"max_connections", "idle_seconds", "header_seconds", "body_seconds",
                                                 "max_body_bytes", "max_sessions", "session_idle_seconds"}
    defaults = HttpSettings()
    assert defaults.session_idle_seconds < 30 * 60  # shorter than the SDK's 30 minutes
    for limit in LIMITS:
        with pytest.raises(ConfigurationError, match=limit.flag):
            HttpSettings(**{limit.field: 0}).checked()


def test_limits_come_from_flags_or_the_environment(monkeypatch, capsys):
    import argparse

    parser = argparse.ArgumentParser()
    http_transport.add_http_arguments(parser)
    help_text = parser.format_help()
    for limit in LIMITS:
        assert limit.flag in help_text and limit.env in help_text
    monkeypatch.setenv("COURSE_MCP_MAX_SESSIONS", "7")
    monkeypatch.setenv("COURSE_MCP_HEADER_TIMEOUT", "2.5")
    settings = http_transport.settings_from_arguments(parser, parser.parse_args(["--http", "0", "--max-sessions", "9"]))
    assert settings.max_sessions == 9 and settings.header_seconds == 2.5  # the flag wins over the environment
    monkeypatch.setenv("COURSE_MCP_BODY_TIMEOUT", "soon")
    with pytest.raises(SystemExit) as exit_info:
        http_transport.settings_from_arguments(parser, parser.parse_args(["--http", "0"]))
    assert exit_info.value.code == 2 and "COURSE_MCP_BODY_TIMEOUT: expected a positive number, got 'soon'" in capsys.readouterr().err
    monkeypatch.delenv("COURSE_MCP_BODY_TIMEOUT")
    with pytest.raises(SystemExit):
        http_transport.settings_from_arguments(parser, parser.parse_args(["--http", "0", "--max-connections", "-3"]))
    assert "--max-connections: expected a positive integer, got '-3'" in capsys.readouterr().err


# --- uvicorn's own refusals, as JSON-RPC --------------------------------------------------------------

@pytest.mark.parametrize(("name", "raw", "status", "says"), [
    ("Content-Length -1", b"POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400, "bad Content-Length"),
    ("Content-Length not a number", b"POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: ten\r\n\r\n", 400,
     "bad Content-Length"),
    ("a request line that is not HTTP", b"GARBAGE\r\n\r\n", 400, "illegal request line"),
    ("a header line without a colon", b"GET /mcp HTTP/1.1\r\nHost: h\r\nno colon here\r\n\r\n", 400,
     "illegal header line"),
    ("headers over 16 KiB", b"GET /mcp HTTP/1.1\r\nHost: h\r\nX-Pad: " + b"a" * 20_000, 431, "Receive buffer too long"),
])
def test_requests_uvicorn_cannot_parse_get_a_json_rpc_error(short, name, raw, status, says):
    with connect(short.port) as sock:
        sock.sendall(raw)
        error = refusal(read_until_closed(sock), status)
    assert error["code"] == -32600 and says in error["message"] and "bytearray" not in error["message"], name


def test_one_connection_over_the_cap_gets_503_and_the_others_are_served():
    with serving(files_server(), max_connections=3, idle_seconds=30) as srv, ExitStack() as stack:
        body = json.dumps(INITIALIZE).encode()
        held = []
        for _ in range(3):  # three kept-alive connections, each served once so the server has counted it
            sock = stack.enter_context(connect(srv.port))
            sock.sendall(request_head(srv.port, extra=f"Content-Length: {len(body)}\r\n\r\n") + body)
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
            held.append(sock)
        with connect(srv.port) as fourth:
            error = refusal(read_until_closed(fourth), 503)
        assert error["code"] == -32603 and "at most 3 connections" in error["message"]
        held[0].close()
        deadline = time.monotonic() + PATIENCE
        while (status := _post_status(srv.url)) == 503 and time.monotonic() < deadline:
            time.sleep(0.05)  # the server notices the close on its next loop turn
        assert status == 200


def _post_status(url: str) -> int:
    try:
        return httpx.post(url, json=INITIALIZE, headers=ACCEPT).status_code
    except httpx.RemoteProtocolError:  # refused before the request was written
        return 503


# --- sessions: a cap, the idle-most evicted --------------------------------------------------------

def open_session(url: str, **headers: str) -> dict[str, str]:
    opened = httpx.post(url, json=INITIALIZE, headers={**ACCEPT, **headers})
    assert opened.status_code == 200, opened.text
    session = {**ACCEPT, **headers, "mcp-session-id": opened.headers["mcp-session-id"],
               "mcp-protocol-version": "2025-11-25"}
    assert httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session).status_code == 202
    return session


def listed(url: str, session: dict[str, str]) -> httpx.Response:
    return httpx.post(url, json=LISTING, headers=session)


@pytest.mark.parametrize("token", [None, "t0ken-for-the-cap"])
def test_a_new_session_beyond_the_cap_evicts_the_idle_most_one_and_is_served(token):
    auth = {"authorization": f"Bearer {token}"} if token else {}
    with serving(files_server(), max_sessions=3, token=token) as srv:
        oldest, middle, recent = (open_session(srv.url, **auth) for _ in range(3))
        for session in (middle, oldest, recent):  # `middle` is now the one whose last request is oldest
            assert listed(srv.url, session).status_code == 200
        newcomer = open_session(srv.url, **auth)  # the fourth: served
        assert listed(srv.url, newcomer).status_code == 200
        evicted = listed(srv.url, middle)
        assert evicted.status_code == 404  # the spec's answer to an ended session: initialize again
        error = evicted.json()["error"]
        assert error["code"] == -32600 and "Session evicted" in error["message"] and "at most 3 sessions" in error["message"]
        for session in (oldest, recent, newcomer):
            assert listed(srv.url, session).status_code == 200
        assert open_session(srv.url, **auth)  # and so on: the cap holds, a newcomer is always served


@pytest.mark.anyio
async def test_an_sdk_client_whose_session_was_evicted_is_told_why():
    """The SDK's client holds a GET stream open on its session (listening, not working): the session
    is still the idle-most one, the stream is closed with it, and the next call fails with the reason."""
    import anyio
    from mcp.shared.exceptions import MCPError

    from course_lib.connection import McpConnection

    with serving(files_server(), max_sessions=1) as srv:
        async with McpConnection(srv.url, mode="legacy") as conn:
            await conn.list_tools()
            await anyio.to_thread.run_sync(open_session, srv.url)  # a newcomer: the cap is one
            with anyio.fail_after(PATIENCE), pytest.raises(MCPError, match="Session evicted"):
                await conn.call_tool("read_text_file", {"path": "/workspace/notes.txt", "head": 1})


def test_stateless_requests_open_no_session_and_evict_none():
    stateless = {**ACCEPT, "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list"}
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}
    with serving(files_server(), max_sessions=1) as srv:
        session = open_session(srv.url)
        for n in range(5):
            answer = httpx.post(srv.url, headers=stateless, json={**LISTING, "id": n, "params": {"_meta": meta}})
            assert answer.status_code == 200 and "mcp-session-id" not in answer.headers
        assert listed(srv.url, session).status_code == 200


def test_a_deleted_or_expired_session_is_not_counted():
    with serving(files_server(), max_sessions=2, session_idle_seconds=1.0) as srv:
        first = open_session(srv.url)
        assert httpx.delete(srv.url, headers=first).status_code == 200
        second = open_session(srv.url)
        time.sleep(1.5)  # `second` expires on the SDK's clock; neither is counted any more
        third, fourth = open_session(srv.url), open_session(srv.url)
        for session in (third, fourth):
            assert listed(srv.url, session).status_code == 200
        answer = listed(srv.url, second)
        assert answer.status_code == 404 and "evicted" not in answer.text  # expired, not evicted


# --- memory under the probe's load ------------------------------------------------------------------

def _rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _load(url: str, port: int, sessions: int, connections: int) -> None:
    """The probe: `sessions` initializes never ended, then `connections` sockets held open that send
    nothing (beyond the cap they are refused at once), then a few initializes more while they are held."""
    with httpx.Client(timeout=PATIENCE) as client:
        for _ in range(sessions):
            assert client.post(url, json=INITIALIZE, headers=ACCEPT).status_code == 200
    with ExitStack() as stack:
        for _ in range(connections):
            stack.enter_context(socket.create_connection(("127.0.0.1", port), timeout=PATIENCE))
        for _ in range(10):
            try:
                httpx.post(url, json=INITIALIZE, headers=ACCEPT, timeout=PATIENCE)
            except httpx.TransportError:
                pass  # refused at the connection cap: part of the load


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the server's memory from /proc (Linux)")
def test_memory_stays_bounded_under_idle_connections_and_abandoned_sessions():
    """Two rounds of the same load after a warm-up: the server must not grow with them, because the
    sessions beyond the cap are evicted and the idle connections beyond it refused. Measured: about
    1 MiB a round with these caps; the same server with caps it never reaches (--max-sessions and
    --max-connections 100000) grew about 12 MiB a round (some 40 KiB a session), so the bounds
    below (6 MiB a round, 16 MiB in all) leave a wide margin and still fail for an unbounded server."""
    args = [sys.executable, "-m", "course_lib.fs_server", "--root", str(workspace_dir()), "--http", "127.0.0.1:0",
            "--max-sessions", "16", "--max-connections", "64", "--idle-timeout", "30", "--header-timeout", "30"]
    proc = subprocess.Popen(args, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    log: list[str] = []
    # Keep reading stderr: a server blocked on a full pipe would look like a server that hangs.
    reader = threading.Thread(target=lambda: log.extend(proc.stderr), daemon=True)
    try:
        url = proc.stderr.readline().split(" at ")[1].split()[0]
        reader.start()
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        _load(url, port, sessions=50, connections=20)  # warm up: imports, caches, the allocator's arenas
        before = _rss_kib(proc.pid)
        _load(url, port, sessions=300, connections=200)
        first = _rss_kib(proc.pid)
        _load(url, port, sessions=300, connections=200)
        second = _rss_kib(proc.pid)
        print(f"server RSS: {before} KiB after warm-up, {first} KiB after round 1, {second} KiB after round 2")
        assert second - first < 6 * 1024, (before, first, second)
        assert second - before < 16 * 1024, (before, first, second)
        deadline = time.monotonic() + PATIENCE
        while _post_status(url) == 503 and time.monotonic() < deadline:
            time.sleep(0.05)  # the held sockets are closed: the server sees it on its next loop turn
        assert listed(url, open_session(url)).status_code == 200  # and still serving
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        if reader.is_alive():
            reader.join(timeout=30)
        proc.stderr.close()
    assert sum("refused a connection" in line for line in log) <= 2, log[:5]  # one warning, not one per socket
    assert not any("Traceback" in line for line in log), "".join(log)[-3000:]


def test_a_body_never_sent_after_an_answer_that_did_not_need_it_closes_without_a_second_answer(short):
    """A request to an unknown path is answered (404) without its body being read; when the body then
    never comes the connection is closed, and no 408 follows the 404."""
    with connect(short.port) as sock:
        sock.sendall(f"POST /elsewhere HTTP/1.1\r\nHost: 127.0.0.1:{short.port}\r\nContent-Length: 50\r\n\r\n".encode())
        answer = read_until_closed(sock)
    assert answer.startswith(b"HTTP/1.1 404 ") and b"408" not in answer
