"""Both course servers over Streamable HTTP: the two protocol eras, the safety defaults, bad input.

Every server here runs on the SDK's transport in a background thread on a free loopback port
(`course_lib.http_transport.serving`); raw requests use httpx so that statuses and headers are
seen exactly as they crossed.
"""

import json
import logging
import os
import subprocess
import sys

import anyio
import httpx
import pytest

from course_lib import http_transport
from course_lib.connection import McpConnection
from course_lib.fs_server import Workspace, build_server
from course_lib.host import McpHost
from course_lib.http_transport import ConfigurationError, HttpSettings, StaticTokenVerifier, parse_address, serving
from course_lib.notes_server import build_notes_server
from course_lib.paths import workspace_dir

pytestmark = pytest.mark.anyio

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}
READ = {"path": "/workspace/notes.txt", "head": 3}
TOKEN = "s3cret-token-for-tests"


def files_server():
    return build_server(Workspace(workspace_dir()))


@pytest.fixture
def files_url():
    with serving(files_server()) as srv:
        yield srv.url


def sse_messages(text: str) -> list[dict]:
    return [json.loads(line[5:]) for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]


def open_session(url: str) -> str:
    response = httpx.post(url, json=INITIALIZE, headers=ACCEPT)
    assert response.status_code == 200
    session = response.headers["mcp-session-id"]
    initialized = httpx.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                             headers={**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"})
    assert initialized.status_code == 202
    return session


def assert_jsonrpc_error(response: httpx.Response, status: int, code: int | None = None) -> dict:
    """The refusal is the given HTTP status with a JSON-RPC error body, and no traceback."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["jsonrpc"] == "2.0" and "error" in body and "result" not in body
    if code is not None:
        assert body["error"]["code"] == code
    assert "Traceback" not in response.text
    return body


# --- item 1: both eras on the SDK's transport ---------------------------------------------------

async def call_once(url: str, mode: str, **kwargs):
    async with McpConnection(url, mode=mode, **kwargs) as conn:
        await conn.list_tools()
        result, exchange = await conn.call_tool("read_text_file", READ)
        version = conn.protocol_version
    return conn, result, exchange, version


async def test_legacy_era_opens_a_session_and_sends_its_id_on_every_later_request(files_url):
    conn, result, exchange, version = await call_once(files_url, "legacy")
    assert version == "2025-11-25" and not result.is_error
    assert result.content[0].text.splitlines() == (workspace_dir() / "notes.txt").read_text().splitlines()[:3]
    first, *later = conn.http
    assert first.jsonrpc_method == "initialize" and "mcp-session-id" not in first.request_headers
    session = first.response_headers["mcp-session-id"]
    assert later and all(h.request_headers.get("mcp-session-id") == session for h in later)
    assert all(h.request_headers.get("mcp-protocol-version") == "2025-11-25" for h in later)
    call = next(h for h in conn.http if h.jsonrpc_method == "tools/call")
    assert call.content_type == "text/event-stream" and call.status == 200
    assert call.request_body == exchange.request  # the HTTP body is the JSON-RPC message
    assert conn.http[-1].method == "DELETE" and conn.http[-1].status == 200  # the client ends the session


async def test_2026_era_is_stateless_json_with_the_version_on_every_request(files_url):
    conn, result, exchange, version = await call_once(files_url, "2026-07-28")
    assert version == "2026-07-28" and not result.is_error
    assert [h.jsonrpc_method for h in conn.http] == ["tools/list", "tools/call"]  # no initialize
    for h in conn.http:
        assert h.request_headers["mcp-protocol-version"] == "2026-07-28"
        assert "mcp-session-id" not in h.request_headers and "mcp-session-id" not in h.response_headers
        assert h.content_type == "application/json" and h.status == 200
    call = conn.http[-1]
    assert call.response_body == exchange.response
    assert call.request_body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"


async def test_both_eras_give_the_in_process_answer_for_the_notes_server():
    async with McpConnection(build_notes_server(), mode="legacy") as local:
        expected, _ = await local.call_tool("search_notes", {"query": "call_id"})
    with serving(build_notes_server()) as srv:
        for mode in ("legacy", "2026-07-28"):
            async with McpConnection(srv.url, mode=mode) as remote:
                await remote.list_tools()
                result, _ = await remote.call_tool("search_notes", {"query": "call_id"})
            # The result is the same; a 2026-07-28 result also names the server in its `_meta`.
            assert result.model_dump(exclude={"meta"}) == expected.model_dump(exclude={"meta"}), mode


def test_the_host_connects_to_a_url_and_records_the_http_exchanges(files_url):
    with McpHost() as host:
        host.add_http_server("remote", files_url)
        call = host.call("remote__read_text_file", READ)
        assert not call.result.is_error
        http = host.connections["remote"].http
        assert any(h.jsonrpc_method == "tools/call" for h in http)


@pytest.mark.parametrize("module", ["course_lib.fs_server", "course_lib.notes_server"])
def test_the_command_line_serves_http_and_prints_its_url(module, tmp_path):
    root = ["--root", str(workspace_dir())] if module.endswith("fs_server") else []
    proc = subprocess.Popen([sys.executable, "-m", module, *root, "--http", "127.0.0.1:0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stderr.readline()
        assert line.startswith("MCP over Streamable HTTP at http://127.0.0.1:"), line
        url = line.split(" at ")[1].split()[0]
        assert url.endswith("/mcp")
        session = open_session(url)
        listed = httpx.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                            headers={**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"})
        assert sse_messages(listed.text)[0]["result"]["tools"]
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=10)
    assert out == ""  # stdout carries nothing over HTTP
    assert "Traceback" not in err


def test_parse_address():
    assert parse_address("8765") == ("127.0.0.1", 8765)
    assert parse_address("0.0.0.0:80") == ("0.0.0.0", 80)
    assert parse_address("[::1]:0") == ("::1", 0)
    with pytest.raises(ValueError, match="PORT 0-65535"):
        parse_address("host:http")


# --- item 2: safe by default ------------------------------------------------------------------------

def test_a_foreign_origin_is_refused_with_403_and_a_loopback_one_is_served(files_url):
    refused = httpx.post(files_url, json=INITIALIZE, headers={**ACCEPT, "origin": "https://evil.example"})
    body = assert_jsonrpc_error(refused, 403)
    assert "Origin" in body["error"]["message"]
    port = files_url.split(":")[2].split("/")[0]
    served = httpx.post(files_url, json=INITIALIZE, headers={**ACCEPT, "origin": f"http://localhost:{port}"})
    assert served.status_code == 200


def test_a_foreign_host_header_is_refused_with_421(files_url):
    refused = httpx.post(files_url, json=INITIALIZE, headers={**ACCEPT, "host": "rebound.example:80"})
    assert_jsonrpc_error(refused, 421)


def test_an_unparseable_body_gets_400_and_parse_error(files_url):
    response = httpx.post(files_url, content=b'{"jsonrpc": "2.0", "id": 1, "method": ', headers=ACCEPT)
    assert_jsonrpc_error(response, 400, -32700)


def test_a_public_bind_without_a_token_is_refused():
    with pytest.raises(ConfigurationError, match="without a bearer token"):
        HttpSettings(host="0.0.0.0").checked()
    HttpSettings(host="192.0.2.7", token=TOKEN).checked()  # with one it is allowed
    HttpSettings(host="::1").checked()


def test_a_wildcard_bind_needs_the_public_url_clients_use():
    with pytest.raises(ConfigurationError, match="needs --public-url"):
        HttpSettings(host="0.0.0.0", token=TOKEN).checked()
    settings = HttpSettings(host="0.0.0.0", token=TOKEN, public_url="https://files.example/mcp").checked()
    assert settings.url(8765) == "https://files.example/mcp"
    with pytest.raises(ConfigurationError, match="must end in /mcp"):
        HttpSettings(token=TOKEN, public_url="https://files.example/").checked()


def test_the_command_line_refuses_a_public_bind_without_a_token(capsys, monkeypatch):
    from course_lib.fs_server import main

    monkeypatch.delenv(http_transport.TOKEN_ENV, raising=False)
    with pytest.raises(SystemExit) as exit_info:
        main(["--root", str(workspace_dir()), "--http", "0.0.0.0:0"])
    assert exit_info.value.code == 2
    assert "without a bearer token" in capsys.readouterr().err


def test_the_command_line_reads_the_token_from_a_file_or_the_environment(tmp_path, monkeypatch):
    import argparse

    parser = argparse.ArgumentParser()
    http_transport.add_http_arguments(parser)
    secret = tmp_path / "token.txt"
    secret.write_text(TOKEN + "\n")
    settings = http_transport.settings_from_arguments(parser, parser.parse_args(["--http", "192.0.2.7:9", "--token-file", str(secret)]))
    assert settings.token == TOKEN and TOKEN not in repr(settings)
    monkeypatch.setenv(http_transport.TOKEN_ENV, "from-env")
    settings = http_transport.settings_from_arguments(parser, parser.parse_args(["--http", "192.0.2.7:9"]))
    assert settings.token == "from-env"
    secret.write_text("\n")
    with pytest.raises(SystemExit):
        http_transport.settings_from_arguments(parser, parser.parse_args(["--http", "9", "--token-file", str(secret)]))


@pytest.fixture
def guarded():
    with serving(files_server(), token=TOKEN) as srv:
        yield srv


def test_without_the_token_401_points_to_the_protected_resource_metadata(guarded):
    refused = httpx.post(guarded.url, json=INITIALIZE, headers=ACCEPT)
    body = assert_jsonrpc_error(refused, 401, -32600)
    assert "needs a bearer token" in body["error"]["message"]
    challenge = refused.headers["www-authenticate"]
    # RFC 6750 §3.1: a request without credentials gets a challenge without an error code.
    assert challenge.startswith("Bearer ") and "error=" not in challenge and "error_description" not in challenge
    metadata_url = challenge.split('resource_metadata="')[1].split('"')[0]
    origin = guarded.url.removesuffix("/mcp")
    assert metadata_url == f"{origin}/.well-known/oauth-protected-resource/mcp"  # RFC 9728 §3.1
    metadata = httpx.get(metadata_url).json()
    assert metadata["resource"] == guarded.url
    assert metadata["authorization_servers"] and metadata["bearer_methods_supported"] == ["header"]


async def test_a_client_without_the_token_gets_a_plain_mcp_error_and_the_401_is_recorded(guarded):
    from mcp.shared.exceptions import MCPError

    conn = McpConnection(guarded.url)
    with pytest.raises(MCPError, match="needs a bearer token"):  # the JSON-RPC body of the 401, read by the SDK
        async with conn:
            pass
    [refused] = conn.http
    assert refused.status == 401 and "resource_metadata=" in refused.response_headers["www-authenticate"]


def test_a_wrong_token_is_refused_and_the_right_one_is_served(guarded):
    wrong = httpx.post(guarded.url, json=INITIALIZE, headers={**ACCEPT, "authorization": "Bearer guess"})
    body = assert_jsonrpc_error(wrong, 401, -32600)
    assert "not valid for this server" in body["error"]["message"]
    challenge = wrong.headers["www-authenticate"]  # a token was sent: now the error code belongs (RFC 6750 §3.1)
    assert 'error="invalid_token"' in challenge and "resource_metadata=" in challenge
    other_scheme = httpx.post(guarded.url, json=INITIALIZE, headers={**ACCEPT, "authorization": "Basic Zm9vOmJhcg=="})
    assert other_scheme.status_code == 401 and "error=" not in other_scheme.headers["www-authenticate"]
    right = httpx.post(guarded.url, json=INITIALIZE, headers={**ACCEPT, "authorization": f"Bearer {TOKEN}"})
    assert right.status_code == 200 and "mcp-session-id" in right.headers


async def test_the_token_is_never_logged_nor_recorded(guarded, caplog):
    caplog.set_level(logging.DEBUG)
    conn, result, _, _ = await call_once(guarded.url, "legacy", headers={"Authorization": f"Bearer {TOKEN}"})
    assert not result.is_error
    httpx.post(guarded.url, json=INITIALIZE, headers={**ACCEPT, "authorization": "Bearer wrong-" + TOKEN})
    assert all(h.request_headers["authorization"] == "Bearer <redacted>" for h in conn.http)
    assert TOKEN not in repr(conn.http) and TOKEN not in repr(conn)
    assert TOKEN not in caplog.text


async def test_the_verifier_accepts_only_its_token_and_keeps_no_copy_in_the_access_info():
    verifier = StaticTokenVerifier(TOKEN, "http://127.0.0.1:1/mcp")
    assert await verifier.verify_token("nope") is None
    info = await verifier.verify_token(TOKEN)
    assert info.resource == "http://127.0.0.1:1/mcp" and TOKEN not in info.model_dump_json()
    assert TOKEN not in repr(verifier)
    with pytest.raises(ConfigurationError):
        StaticTokenVerifier("", "http://x/mcp")


# --- item 6: bad input over HTTP -------------------------------------------------------------------

BAD_ID = b'{"jsonrpc": "2.0", "id": null, "method": "tools/call", "params": {"name": "read_text_file"}}'


def test_an_invalid_id_is_answered_with_32600_not_accepted_in_silence(files_url):
    """The SDK reads a request with id null as a notification: 202, and the tool never runs."""
    session = open_session(files_url)
    headers = {**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    body = assert_jsonrpc_error(httpx.post(files_url, content=BAD_ID, headers=headers), 400, -32600)
    assert body["id"] is None and body["error"]["message"] == "Invalid Request: id must be a string or an integer"


def test_a_refused_frame_still_meets_the_sdk_s_own_checks_first(files_url):
    """The gate answers a bad frame only where the SDK would have parsed it: after Origin, Host,
    Accept and the session (so the SDK, given an empty body, refuses it as a parse error)."""
    session = open_session(files_url)
    headers = {**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    assert_jsonrpc_error(httpx.post(files_url, content=BAD_ID, headers={**headers, "origin": "https://evil.example"}), 403)
    assert_jsonrpc_error(httpx.post(files_url, content=BAD_ID, headers={**headers, "host": "evil.example"}), 421)
    assert_jsonrpc_error(httpx.post(files_url, content=BAD_ID, headers={**headers, "accept": "text/html"}), 406)
    assert_jsonrpc_error(httpx.post(files_url, content=BAD_ID, headers={**headers, "mcp-session-id": "0" * 32}), 404)
    assert_jsonrpc_error(httpx.post(files_url, content=BAD_ID, headers={**headers, "content-type": "text/plain"}), 400)


def test_a_refused_frame_without_the_token_gets_401_first(guarded):
    assert_jsonrpc_error(httpx.post(guarded.url, content=BAD_ID, headers=ACCEPT), 401)


def test_a_wrong_content_type_is_refused(files_url):
    response = httpx.post(files_url, content=json.dumps(INITIALIZE), headers={**ACCEPT, "content-type": "text/plain"})
    assert_jsonrpc_error(response, 400)


def test_a_missing_accept_header_is_refused_with_406(files_url):
    response = httpx.post(files_url, json=INITIALIZE, headers={"content-type": "application/json", "accept": "text/html"})
    assert_jsonrpc_error(response, 406)


def test_an_oversized_body_is_refused_with_413_before_it_is_parsed():
    with serving(files_server(), max_body_bytes=1024) as srv:
        big = dict(INITIALIZE, params={**INITIALIZE["params"], "pad": "x" * 2048})
        assert_jsonrpc_error(httpx.post(srv.url, json=big, headers=ACCEPT), 413)
        assert httpx.post(srv.url, json=INITIALIZE, headers=ACCEPT).status_code == 200


def test_a_chunked_body_is_judged_whole_and_refused_at_the_limit_while_it_streams():
    """Without Content-Length the gate reads the body in pieces: a frame split across chunks is judged
    whole, and a body that outgrows the limit goes on to the SDK's own 413, unparsed."""
    def pieces(*chunks: bytes):
        yield from chunks

    with serving(files_server(), max_body_bytes=1024) as srv:
        split = pieces(b'{"jsonrpc": "2.0", "id": null, ', b'"method": "tools/list"}')
        assert_jsonrpc_error(httpx.post(srv.url, content=split, headers=ACCEPT), 400, -32600)
        assert_jsonrpc_error(httpx.post(srv.url, content=pieces(*[b"x" * 300] * 10), headers=ACCEPT), 413)


def test_an_unknown_session_gets_404(files_url):
    response = httpx.post(files_url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                          headers={**ACCEPT, "mcp-session-id": "no-such-session", "mcp-protocol-version": "2025-11-25"})
    assert_jsonrpc_error(response, 404)


def test_a_request_without_a_session_that_is_not_initialize_gets_400(files_url):
    response = httpx.post(files_url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=ACCEPT)
    assert_jsonrpc_error(response, 400)


def test_delete_ends_a_session_and_later_requests_get_404(files_url):
    session = open_session(files_url)
    headers = {**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    assert httpx.delete(files_url, headers=headers).status_code == 200
    after = httpx.post(files_url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=headers)
    assert_jsonrpc_error(after, 404)
    assert_jsonrpc_error(httpx.delete(files_url, headers=headers), 404)


def test_a_session_the_server_closed_when_idle_gets_404_and_a_new_initialize_works():
    import time

    with serving(files_server(), session_idle_seconds=0.3) as srv:
        session = open_session(srv.url)
        headers = {**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        deadline = time.monotonic() + 10
        while (after := httpx.post(srv.url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
                                   headers=headers)).status_code == 200 and time.monotonic() < deadline:
            time.sleep(0.5)  # a request in flight keeps the session alive; the wait lets it expire
        assert_jsonrpc_error(after, 404)
        assert open_session(srv.url) != session


def test_an_unsupported_method_and_an_unknown_path_are_json_rpc_errors(files_url):
    session = open_session(files_url)
    put = httpx.put(files_url, json={}, headers={**ACCEPT, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"})
    assert_jsonrpc_error(put, 405)
    assert_jsonrpc_error(httpx.get(files_url.removesuffix("/mcp") + "/elsewhere"), 404)


def test_an_unknown_protocol_version_is_refused_with_a_structured_error(files_url):
    response = httpx.post(files_url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                          headers={**ACCEPT, "mcp-protocol-version": "1999-01-01"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] in (-32022, -32600, -32602)


async def test_concurrent_clients_on_loopback_lose_no_answers(files_url):
    clients, calls_each = 12, 5
    expected = (workspace_dir() / "notes.txt").read_text().splitlines()
    answers: dict[tuple[int, int], list[str]] = {}

    async def one_client(n: int) -> None:
        mode = "legacy" if n % 2 else "2026-07-28"
        async with McpConnection(files_url, mode=mode) as conn:
            await conn.list_tools()
            for k in range(calls_each):
                head = 1 + (n + k) % 7
                result, exchange = await conn.call_tool("read_text_file", {"path": "/workspace/notes.txt", "head": head})
                assert exchange.response["id"] == exchange.request["id"]
                answers[n, k] = result.content[0].text.splitlines()
                assert answers[n, k] == expected[:head]

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            for n in range(clients):
                tg.start_soon(one_client, n)
    assert len(answers) == clients * calls_each


def test_accepted_connections_have_nagle_off_regression_40_ms_per_stateless_call():
    """Every JSON answer after the first on a kept-alive connection waited for a delayed ACK (~40 ms)."""
    import socket

    listener = http_transport._bind("127.0.0.1", 0)
    try:
        listener.setblocking(True)
        client = socket.create_connection(listener.getsockname())
        accepted, _ = listener.accept()
        assert accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        accepted.close()
        client.close()
    finally:
        listener.close()


def test_the_public_url_is_the_oauth_resource_and_its_host_is_accepted():
    with serving(files_server(), token=TOKEN, public_url="https://files.example/mcp") as srv:
        assert srv.url == "https://files.example/mcp"
        local = f"http://127.0.0.1:{srv.port}/mcp"
        refused = httpx.post(local, json=INITIALIZE, headers={**ACCEPT, "host": "files.example"})
        assert refused.status_code == 401  # past the Host check, stopped by the token check
        assert 'resource_metadata="https://files.example/.well-known/oauth-protected-resource/mcp"' in refused.headers["www-authenticate"]
        metadata = httpx.get(f"http://127.0.0.1:{srv.port}/.well-known/oauth-protected-resource/mcp").json()
        assert metadata["resource"] == "https://files.example/mcp"
        other = httpx.post(local, json=INITIALIZE, headers={**ACCEPT, "host": "elsewhere.example",
                                                            "authorization": f"Bearer {TOKEN}"})
        assert other.status_code == 421


# --- the zh-CN edition: the messages a learner reads follow the edition -------------------------------


def test_the_command_line_messages_follow_the_edition(tmp_path, monkeypatch, capsys):
    import argparse

    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    with pytest.raises(ValueError, match=r"^应为 \[HOST:\]PORT，PORT 取 0 到 65535，实际是 'host:http'$"):
        parse_address("host:http")
    with pytest.raises(ConfigurationError, match="^bearer 令牌是空的$"):
        StaticTokenVerifier("", "http://127.0.0.1:9/mcp")
    parser = argparse.ArgumentParser()
    http_transport.add_http_arguments(parser)
    empty = tmp_path / "token.txt"
    empty.write_text("\n")
    with pytest.raises(SystemExit):
        http_transport.settings_from_arguments(parser, parser.parse_args(["--http", "9", "--token-file", str(empty)]))
    assert "--token-file：文件是空的" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        http_transport.settings_from_arguments(
            parser, parser.parse_args(["--http", "9", "--token-file", str(tmp_path / "absent.txt")]))
    assert "--token-file：读不了这个文件（No such file or directory）" in capsys.readouterr().err


def test_the_served_line_follows_the_edition(monkeypatch):
    env = {**os.environ, "COURSE_LANG": "zh-CN"}
    proc = subprocess.Popen([sys.executable, "-m", "course_lib.fs_server", "--root", str(workspace_dir()),
                             "--http", "127.0.0.1:0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        line = proc.stderr.readline()
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
    assert line.startswith("MCP（Streamable HTTP）服务地址：http://127.0.0.1:") and line.rstrip().endswith("/mcp"), line


def test_a_failure_in_the_course_s_own_layers_is_still_a_json_rpc_500(files_url, monkeypatch, caplog):
    """uvicorn's own 500 is plain text; the gate answers for a bug of the layers outside Starlette."""
    from course_lib import http_limits

    async def broken(self, *args):
        raise RuntimeError("a bug in the session cap")

    monkeypatch.setattr(http_limits.SessionCap, "_maybe_opening", broken)
    with caplog.at_level(logging.ERROR, logger="course_lib.http_refusals"):
        answer = httpx.post(files_url, json=INITIALIZE, headers=ACCEPT)
    body = assert_jsonrpc_error(answer, 500, -32603)
    assert body["error"]["message"] == "Internal error" and "a bug in the session cap" in caplog.text
