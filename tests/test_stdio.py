"""course_lib.stdio: a real server process over real pipes, driven line by line with raw JSON-RPC."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.paths import workspace_dir
from course_lib.stdio import fast_path_available

REPO = Path(__file__).resolve().parents[1]

# A server whose one tool misbehaves the way handlers do: it prints to stdout, writes to fd 1 and
# reads stdin. None of it may touch the protocol. It reports what its stdin read gave it and how
# much text it received, and pads its answer with `size` characters.
ECHO_SERVER = '''
import json, logging, os, sys
import anyio
import mcp_types as types
from mcp.server import Server
from course_lib.stdio import serve_stdio

async def on_list_tools(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema={"type": "object"})])

async def on_call_tool(ctx, params):
    args = params.arguments or {}
    print("stray print")
    os.write(1, b"stray write\\n")
    body = {"stdin": sys.stdin.readline(), "received": len(args.get("text", ""))}
    text = json.dumps(body) + "x" * int(args.get("size", 0))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

logging.basicConfig(level="WARNING", stream=sys.stderr)
logging.getLogger("course_lib.stdio").setLevel("DEBUG")
anyio.run(serve_stdio, Server("echo", on_list_tools=on_list_tools, on_call_tool=on_call_tool))
print("after serving: blocking", os.get_blocking(0), os.get_blocking(1), flush=True)
'''

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _call(id_: int, **arguments: object) -> dict:
    return {"jsonrpc": "2.0", "id": id_, "method": "tools/call", "params": {"name": "echo", "arguments": arguments}}


def _line(message: dict) -> bytes:
    return json.dumps(message).encode() + b"\n"


LOG_LINES = {"pipes": "stdio: event-loop pipes", "threads": "stdio: worker-thread stdin/stdout, every line checked"}


@pytest.fixture(params=list(LOG_LINES))
def server(request, tmp_path):
    """Start the echo server on pipes, served by either path (`COURSE_STDIO=threads` forces the
    portable one); yield the process; check it stopped cleanly."""
    script = tmp_path / "echo_server.py"
    script.write_text(ECHO_SERVER, encoding="utf-8")
    env = {**os.environ, "COURSE_STDIO": request.param}
    with subprocess.Popen([sys.executable, str(script)], cwd=REPO, stdin=subprocess.PIPE, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:  # closes the pipes
        process.transport = request.param
        try:
            process.stdin.write(_line(INITIALIZE) + _line(INITIALIZED))
            process.stdin.flush()
            assert json.loads(process.stdout.readline())["id"] == 0
            yield process
        finally:
            if process.poll() is None:
                process.kill()


def _finish(process: subprocess.Popen) -> tuple[str, str]:
    """Close stdin (the MCP way to stop a stdio server); return the rest of stdout, and stderr."""
    process.stdin.close()
    rest, err = process.stdout.read().decode(), process.stderr.read().decode()
    assert process.wait(timeout=30) == 0, err
    return rest, err


def _result_text(line: bytes) -> tuple[int, str]:
    message = json.loads(line)
    return message["id"], message["result"]["content"][0]["text"]


def test_pipes_carry_only_the_protocol_and_are_restored(server):
    server.stdin.write(_line(_call(1, text="hello")))
    server.stdin.flush()
    id_, text = _result_text(server.stdout.readline())  # the next stdout line is the answer, no stray text
    assert id_ == 1
    assert json.loads(text) == {"stdin": "", "received": 5}  # the handler's stdin read got EOF, not the wire

    rest, err = _finish(server)
    assert LOG_LINES[server.transport] in err
    assert "stray print" in err and "stray write" in err  # diverted to stderr, the print flushed there too
    # fd 0/1 are the pipes again afterwards, and blocking as they were.
    assert rest == "after serving: blocking True True\n"


def test_messages_larger_than_a_pipe_buffer_cross_whole_both_ways(server):
    size = 3 * 1024 * 1024  # far past the 64 KiB pipe buffer, and past what one write() takes
    server.stdin.write(_line(_call(1, text="y" * size, size=size)))
    server.stdin.flush()
    id_, text = _result_text(server.stdout.readline())
    head, padding = text.split("}", 1)
    assert (id_, json.loads(head + "}")["received"], padding) == (1, size, "x" * size)
    _finish(server)


def test_concurrent_requests_are_each_answered_once(server):
    ids = range(1, 101)
    server.stdin.write(b"".join(_line(_call(i, text="t" * i)) for i in ids))  # all sent before any is read
    server.stdin.flush()
    answers = dict(_result_text(server.stdout.readline()) for _ in ids)
    assert sorted(answers) == list(ids)
    assert all(json.loads(answers[i])["received"] == i for i in ids)
    _finish(server)


@pytest.mark.parametrize("newline_at", ["in the buffer", "after more reads"])
def test_an_overlong_line_is_answered_skipped_whole_and_serving_goes_on(server, newline_at):
    line = b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "junk": "' + b"z" * (65 * 1024 * 1024) + b'"}\n'
    if newline_at == "in the buffer":
        server.stdin.write(line)  # the reader may find the newline past the limit in what it holds
    else:
        for start in range(0, len(line), 1024 * 1024):  # or only after dropping what it held
            server.stdin.write(line[start:start + 1024 * 1024])
            server.stdin.flush()
    server.stdin.write(_line(_call(1, text="after")))
    server.stdin.flush()
    refused = json.loads(server.stdout.readline())  # one answer, not one per piece of the line
    assert (refused["id"], refused["error"]["code"]) == (None, -32700)
    assert "over 67108864 bytes" in refused["error"]["message"]
    assert _result_text(server.stdout.readline()) == (1, json.dumps({"stdin": "", "received": 5}))
    rest, _ = _finish(server)
    assert rest == "after serving: blocking True True\n"


def test_a_file_as_stdin_gets_every_line_checked(tmp_path):
    """No pipes (a file as stdin): the worker-thread path checks each line as the pipe path does,
    including what the SDK's own parser would let through or mangle: NaN, invalid UTF-8 (which it
    replaces) and ids MCP forbids (which it drops, turning the request into a notification)."""
    script = tmp_path / "echo_server.py"
    script.write_text(ECHO_SERVER, encoding="utf-8")
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(_line(INITIALIZE) + _line(INITIALIZED) + b"not json\n[]\n"
                         + b'{"jsonrpc": "1.0", "id": 2, "method": "ping"}\n'
                         + b'{"jsonrpc": "2.0", "id": 3, "method": 5}\n'
                         + b'{"jsonrpc": "2.0", "id": 4, "method": "ping", "params": []}\n'
                         + b'{"jsonrpc": "2.0", "method": "notifications/initialized", "params": []}\n'
                         + b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": {"x": NaN}}\n'
                         + b'{"jsonrpc": "2.0", "id": "\xff", "method": "ping"}\n'
                         + b'{"jsonrpc": "2.0", "id": null, "method": "ping"}\n'
                         + b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}\n'
                         + _line(_call(9, text="after")))
    with requests.open("rb") as stdin:
        done = subprocess.run([sys.executable, str(script)], cwd=REPO, stdin=stdin, capture_output=True,
                              text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "stdio: worker-thread stdin/stdout, every line checked" in done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()[1:-1]]  # after initialize, before the print
    errors = sorted((a["id"] if a["id"] is not None else -1, a["error"]["code"]) for a in answers if "error" in a)
    assert errors == [(-1, -32700), (-1, -32700), (-1, -32700), (-1, -32600), (-1, -32600), (-1, -32600),
                      (2, -32600), (3, -32600), (4, -32602)]
    assert [a["id"] for a in answers if "result" in a] == [9]
    assert ("stdio: not answered (JSON-RPC answers no notification or response): Invalid params: MCP params are "
            "an object, not an array (in notification 'notifications/initialized')") in done.stderr


def test_stdin_that_is_not_a_pipe_gets_the_worker_threads(tmp_path):
    script = tmp_path / "echo_server.py"
    script.write_text(ECHO_SERVER, encoding="utf-8")
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(_line(INITIALIZE) + _line(INITIALIZED))
    with requests.open("rb") as stdin:  # a regular file: asyncio's pipe transports would refuse it
        done = subprocess.run([sys.executable, str(script)], cwd=REPO, stdin=stdin, capture_output=True,
                              text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "stdio: worker-thread stdin/stdout, every line checked" in done.stderr
    first, rest = done.stdout.split("\n", 1)
    assert json.loads(first)["result"]["serverInfo"]["name"] == "echo"
    assert rest == "after serving: blocking True True\n"


@pytest.mark.parametrize("module", ["course_lib.fs_server", "course_lib.notes_server"])
def test_the_course_servers_use_the_pipes(module):
    args = [sys.executable, "-m", module, "--log-level", "DEBUG"]
    if module == "course_lib.fs_server":
        args += ["--root", str(workspace_dir())]
    done = subprocess.run(args, cwd=REPO, input=_line(INITIALIZE) + _line(INITIALIZED), capture_output=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    assert json.loads(done.stdout.splitlines()[0])["id"] == 0
    assert "stdio: event-loop pipes" in done.stderr.decode()


def test_no_fast_path_outside_an_event_loop():
    assert fast_path_available() is False
