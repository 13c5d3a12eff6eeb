"""Every frame answered: the frame table (tests/frame_table.py) sent to the course's two stdio servers.

Each case sends one frame as a line, then a valid `tools/call` (the probe). It passes when the
frame got exactly the answers the table says (code and id), the probe its normal result, and a
refused notification or response a line on stderr instead of an answer. The server stays up
through the whole table and exits cleanly when stdin closes. The same table runs over Streamable
HTTP in tests/test_http_frames.py. A property test then mutates valid frames (3000 examples,
derandomized) to check that what the transport forwards is what the SDK's own parser accepts.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frame_table import (CASES, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE, j, ping,
                         plain_message_problems, shape, tool_refused)

from course_lib.frames import check_frame
from course_lib.paths import workspace_dir

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 10.0  # seconds to wait for an answer that must come

SERVERS = {
    "fs_server": (["-m", "course_lib.fs_server", "--root", str(workspace_dir())],
                  {"name": "read_text_file", "arguments": {"path": "notes.txt", "head": 1}}),
    "notes_server": (["-m", "course_lib.notes_server"],
                     {"name": "read_note", "arguments": {"path": "/notes/retries.md"}}),
}  # fmt: skip




class Wire:
    """A server process on pipes: raw lines in; parsed stdout lines and stderr lines collected."""

    def __init__(self, args: list[str], transport: str = "pipes") -> None:
        env = {**os.environ, "COURSE_STDIO": transport}  # "threads": the portable path, on the same pipes
        self.process = subprocess.Popen([sys.executable, *args], cwd=REPO, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        self.out: queue.Queue[dict | str] = queue.Queue()
        self.err: list[str] = []
        self.readers = [threading.Thread(target=self._read_out, daemon=True),
                        threading.Thread(target=self._read_err, daemon=True)]
        for reader in self.readers:
            reader.start()

    def _read_out(self) -> None:
        for line in self.process.stdout:
            try:
                self.out.put(json.loads(line))
            except ValueError:
                self.out.put(f"NOT JSON ON STDOUT: {line!r}")

    def _read_err(self) -> None:
        for line in self.process.stderr:
            self.err.append(line.decode("utf-8", "replace"))

    def send(self, frame: bytes) -> None:
        self.process.stdin.write(frame + b"\n")
        self.process.stdin.flush()

    def until(self, probe_id: str, others: int) -> tuple[list[dict], dict]:
        """Messages until the probe's answer and `others` more have arrived (or TIMEOUT)."""
        got: list[dict] = []
        probe = None
        deadline = time.monotonic() + TIMEOUT
        while probe is None or len(got) < others:
            try:
                message = self.out.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if isinstance(message, dict) and message.get("id") == probe_id:
                probe = message
            else:
                got.append(message)
        return got, probe

    def close(self) -> int:
        """Close stdin (how an MCP host stops a stdio server); the exit status."""
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=30)
        finally:
            if self.process.poll() is None:
                self.process.kill()
            for reader in self.readers:
                reader.join(timeout=30)
            self.process.stdout.close()
            self.process.stderr.close()


def _run(server: str, transport: str) -> tuple[list[str], Counter]:
    """Send the whole table; return every failure, and the number of cases per family."""
    args, probe_params = SERVERS[server]
    wire = Wire(args, transport)
    failures: list[str] = []
    try:
        wire.send(j({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "frames", "version": "1"}}}))
        _, init = wire.until("init", 0)
        assert init is not None and "result" in init, f"{server} did not initialize: {wire.err}"
        wire.send(j({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for number, case in enumerate(CASES):
            errors_before = len(wire.err)
            probe_id = f"probe-{number}"
            wire.send(case.frame.replace(b"@TOOL@", probe_params["name"].encode()))
            wire.send(j({"jsonrpc": "2.0", "id": probe_id, "method": "tools/call", "params": probe_params}))
            answers, refused = case.expected()
            got, probe = wire.until(probe_id, len(answers))
            label = f"{server} · {case.family} · {case.name}"
            failures += tool_refused(label, case, got)
            shapes = sorted((shape(m) for m in got), key=repr)
            if shapes != sorted(answers, key=repr):
                failures.append(f"{label}: answers {shapes}, expected {list(answers)}")
            if probe is None or "result" not in probe or probe["result"].get("isError"):
                failures.append(f"{label}: the valid tools/call after it got {probe!r}")
            if refused is not None:  # no answer, but a line on stderr
                deadline = time.monotonic() + TIMEOUT
                while len(wire.err) == errors_before and time.monotonic() < deadline:
                    time.sleep(0.01)
                if len(wire.err) == errors_before:
                    failures.append(f"{label}: nothing on stderr")
            failures += plain_message_problems(label, got)
        wire.send(ping("last"))
        _, last = wire.until("last", 0)
        if last is None or "result" not in last:
            failures.append(f"{server}: the final ping got {last!r}")
        if not wire.out.empty():
            failures.append(f"{server}: answers left over: {wire.out.get()!r}")
    finally:
        status = wire.close()
    if status != 0:
        failures.append(f"{server}: exit status {status}; stderr: {''.join(wire.err)[-2000:]}")
    return failures, Counter(case.family for case in CASES)


@pytest.mark.parametrize("transport", ["pipes", "threads"])
@pytest.mark.parametrize("server", list(SERVERS))
def test_every_malformed_frame_is_answered_and_the_server_stays_up(server, transport):
    """Both paths of `course_lib.stdio`: event-loop pipes, and the worker threads a terminal, a
    file, trio or Windows get."""
    failures, families = _run(server, transport)
    assert not failures, f"{len(failures)} of {len(CASES)} cases failed:\n" + "\n".join(failures)
    assert sum(families.values()) == len(CASES) >= 60


def test_the_error_responses_are_the_sdk_s_own_types():
    """What the transport writes is a `JSONRPCError` as the SDK parses it, with the spec's codes."""
    assert (types.PARSE_ERROR, types.INVALID_REQUEST, types.METHOD_NOT_FOUND, types.INVALID_PARAMS) == (
        PARSE, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS)
    wire = Wire(SERVERS["fs_server"][0])
    try:
        wire.send(b"[]")
        wire.send(b"not json")
        wire.send(ping("after"))
        got, probe = wire.until("after", 2)
    finally:
        assert wire.close() == 0
    assert probe is not None and probe["result"] == {}  # ping needs no initialize
    for message in got:
        error = types.jsonrpc_message_adapter.validate_python(message)
        assert isinstance(error, types.JSONRPCError) and error.id is None
    assert sorted(m["error"]["code"] for m in got) == [PARSE, INVALID_REQUEST]


# --- the check and the SDK agree -----------------------------------------------------------------

BASES = [
    ping(1),
    j({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "t", "arguments": {"path": "x"}}}),
    j({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    j({"jsonrpc": "2.0", "id": 3, "result": {}}),
    j({"jsonrpc": "2.0", "id": 4, "error": {"code": 1, "message": "m"}}),
]
PIECES = [b"", b" ", b'"', b",", b":", b"[", b"]", b"{", b"}", b"null", b"true", b"1", b"1.5", b"1e999", b"NaN",
          b'"id"', b'"method"', b'"params"', b'"jsonrpc"', b'"2.0"', b"\xff", b"\\ud800"]


@settings(max_examples=3000, derandomize=True, database=None, deadline=None)
@given(base=st.sampled_from(BASES), cut=st.integers(0, 200), length=st.integers(0, 5),
       piece=st.sampled_from(PIECES))
def test_a_forwarded_frame_is_one_the_sdk_reads_as_what_it_is(base, cut, length, piece):
    """What check_frame forwards, the SDK's own parser accepts, and a frame with an id stays a
    request (never read as a notification, which would go unanswered); what it does not forward
    gets an answer unless it is a notification or a response."""
    cut = min(cut, len(base))
    line = base[:cut] + piece + base[cut + length:]
    verdict = check_frame(line)
    if verdict.forward:
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)  # raises if the SDK disagrees
        frame = json.loads(line)
        if isinstance(frame, dict) and "id" in frame and "method" in frame:
            assert isinstance(message, types.JSONRPCRequest), line
        return
    assert verdict.answers or verdict.refusal, line
    for answer in verdict.answers:
        assert answer.error.code in (PARSE, INVALID_REQUEST, INVALID_PARAMS)
