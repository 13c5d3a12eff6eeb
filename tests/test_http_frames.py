"""Every frame answered over Streamable HTTP: the frame table (tests/frame_table.py) as POST bodies.

The same table as stdio's, sent to both course servers over HTTP in both protocol eras: inside
a 2025-11-25 session (`initialize` first, then `Mcp-Session-Id` on every POST) and as stateless
2026-07-28 requests (the version header on every POST, and `params._meta` added to each request
the check forwards, as a 2026-07-28 client sends it). A case passes when its POST got exactly the
answers the table says (code and id), a refused notification or response a 400 with its error
and no id, an accepted one a 202 with no body; every error with a plain message; and the valid
`tools/call` after it (the probe) its normal result.
"""

from __future__ import annotations

import json
from collections import Counter

import httpx
import pytest
from frame_table import CASES, HEADER_MISMATCH, INVALID_REQUEST, Case, plain_message_problems, shape, tool_refused

from course_lib.fs_server import Workspace, build_server
from course_lib.http_transport import serving
from course_lib.notes_server import build_notes_server
from course_lib.paths import workspace_dir

ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
ERAS = ["2025-11-25", "2026-07-28"]
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "frames", "version": "1"}}
SERVERS = {
    "fs_server": (lambda: build_server(Workspace(workspace_dir())),
                  {"name": "read_text_file", "arguments": {"path": "/workspace/notes.txt", "head": 1}}),
    "notes_server": (build_notes_server, {"name": "read_note", "arguments": {"path": "/notes/retries.md"}}),
}


class _Raw(str):
    """A number kept as its text, so a frame rewritten with `_meta` keeps 2**70 and 1e999 as they were."""


def _dump(value: object) -> str:
    if isinstance(value, _Raw):
        return str(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_dump(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_dump(v) for v in value) + "]"
    return json.dumps(value)


def stateless(frame: bytes) -> tuple[bytes, dict[str, str]]:
    """The frame as a 2026-07-28 client sends it: `_meta` in the params of a request, and the headers
    (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) that repeat its body; a frame no client would
    send this way (not JSON, a batch, a bad envelope) goes as it is."""
    headers = {**ACCEPT, "mcp-protocol-version": "2026-07-28"}
    try:  # decoded first: json.loads would take a byte order mark off bytes, and the frame with it
        value = json.loads(frame.decode("utf-8"), parse_int=_Raw, parse_float=_Raw, parse_constant=_Raw)
    except (ValueError, RecursionError):
        return frame, headers
    if not isinstance(value, dict) or not isinstance(value.get("method"), str):
        return frame, headers
    headers["mcp-method"] = value["method"]
    params = value.get("params", {})
    if isinstance(params, dict):
        if isinstance(params.get("name"), str) and value["method"] == "tools/call":
            headers["mcp-name"] = params["name"]
        if "id" in value:
            value["params"] = {**params, "_meta": META}
            frame = _dump(value).encode()
    return frame, headers


def messages(response: httpx.Response) -> list:
    """The JSON-RPC messages an HTTP answer carries: a JSON object or array, or SSE `data:` lines."""
    kind = response.headers.get("content-type", "")
    if kind.startswith("text/event-stream"):
        return [json.loads(line[5:]) for line in response.text.splitlines() if line.startswith("data:") and line[5:].strip()]
    if not response.content:
        return []
    body = response.json()
    return body if isinstance(body, list) else [body]


def _probe(client: httpx.Client, url: str, era: str, session: dict[str, str], tool: dict, n: int) -> dict | None:
    request = {"jsonrpc": "2.0", "id": f"probe-{n}", "method": "tools/call", "params": tool}
    if era == "2025-11-25":
        response = client.post(url, json=request, headers=session)
    else:
        body, headers = stateless(json.dumps(request).encode())
        response = client.post(url, content=body, headers=headers)
    found = [m for m in messages(response) if isinstance(m, dict) and m.get("id") == f"probe-{n}"]
    return found[0] if found else None


def _open_session(client: httpx.Client, url: str) -> dict[str, str]:
    opened = client.post(url, headers=ACCEPT, json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "frames", "version": "1"}}})
    assert opened.status_code == 200, opened.text
    session = {**ACCEPT, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
    assert client.post(url, headers=session, json={"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code == 202
    return session


def _check(label: str, case: Case, era: str, response: httpx.Response) -> list[str]:
    answers, refused = case.expected(era)
    got = messages(response)
    failures = tool_refused(label, case, got) + plain_message_problems(label, got)
    if refused is not None:
        want = [(refused, None)]
        if response.status_code != 400 or [shape(m) for m in got] != want:
            failures.append(f"{label}: expected 400 with error {refused} and no id, got {response.status_code} "
                            f"{response.text[:300]!r}")
        return failures
    if not answers:
        if response.status_code != 202 or response.content:
            failures.append(f"{label}: expected 202 with no body, got {response.status_code} {response.text[:300]!r}")
        return failures
    shapes = sorted((shape(m) for m in got), key=repr)
    if shapes != sorted(answers, key=repr):
        failures.append(f"{label}: answers {shapes}, expected {list(answers)} ({response.status_code})"[:500])
    only_errors = all(code is not None for code, _ in answers)
    sse = response.headers.get("content-type", "").startswith("text/event-stream")
    if only_errors and not sse and response.status_code < 400:
        failures.append(f"{label}: an error answered with HTTP {response.status_code}")
    if not only_errors and response.status_code != 200:
        failures.append(f"{label}: a result answered with HTTP {response.status_code}")
    return failures


def run_table(server: str, era: str) -> tuple[list[str], Counter]:
    """POST the whole table to one server in one era; every failure, and the cases per family."""
    build, tool = SERVERS[server]
    failures: list[str] = []
    with serving(build()) as srv, httpx.Client(timeout=30) as client:
        session = _open_session(client, srv.url) if era == "2025-11-25" else {}
        for number, case in enumerate(CASES):
            frame = case.frame.replace(b"@TOOL@", tool["name"].encode())
            if era == "2025-11-25":
                response = client.post(srv.url, content=frame, headers=session)
            else:
                body, headers = stateless(frame)
                response = client.post(srv.url, content=body, headers=headers)
            label = f"{server} · {era} · {case.family} · {case.name}"
            failures += _check(label, case, era, response)
            probe = _probe(client, srv.url, era, session, tool, number)
            if probe is None or "result" not in probe or probe["result"].get("isError"):
                failures.append(f"{label}: the valid tools/call after it got {probe!r}")
    return failures, Counter(case.family for case in CASES)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("server", list(SERVERS))
def test_every_frame_is_answered_over_http_as_over_stdio(server, era):
    failures, families = run_table(server, era)
    assert not failures, f"{len(failures)} of {len(CASES)} cases failed:\n" + "\n".join(failures)
    assert sum(families.values()) == len(CASES) >= 70


def test_where_the_eras_differ_the_table_says_why():
    """Only two cases are answered differently by the stateless era, each for a reason of its spec."""
    differing = {case.name: case for case in CASES if case.stateless is not None}
    assert set(differing) == {"tools/call name a number", "a result for no request"}
    assert differing["tools/call name a number"].expected("2026-07-28") == (((HEADER_MISMATCH, 25),), None)
    assert differing["a result for no request"].expected("2026-07-28") == ((), INVALID_REQUEST)
    assert all(case.why_stateless for case in differing.values())


def test_the_stateless_rewrite_keeps_every_number_as_it_was():
    """The helper above adds `_meta` without re-reading numbers (2**70 and 1e999 stay as written)."""
    body, headers = stateless(b'{"jsonrpc": "2.0", "id": 1180591620717411303424, "method": "tools/call", '
                              b'"params": {"name": "t", "arguments": {"head": 1e999}}}')
    assert b"1180591620717411303424" in body and b"1e999" in body and b"_meta" in body
    assert headers["mcp-method"] == "tools/call" and headers["mcp-name"] == "t"
