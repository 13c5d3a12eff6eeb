"""Every frame answered: malformed JSON-RPC frames sent to the course's two stdio servers, one by one.

JSON-RPC 2.0 (https://www.jsonrpc.org/specification#error_object): input that is not JSON gets
-32700 with `"id": null`; a frame that is not a valid Request object gets -32600, with `"id":
null` when the id cannot be read; -32601 for an unknown method; -32602 for bad params. MCP adds
that a request id is a string or an integer, never null, and that notifications get no answer.
Batches: MCP 2025-03-26 added JSON-RPC batching and 2025-06-18 removed it (the changelogs under
docs/specification/ in modelcontextprotocol/modelcontextprotocol); no revision the course's
clients speak (2025-11-25, 2026-07-28) has it, so an array gets -32600, per request id inside it.

Each case sends one frame, then a valid `tools/call` (the probe). It passes when the frame got
exactly the answers the table says (code and id), the probe its normal result, and a malformed
notification a line on stderr instead of an answer. The server stays up through the whole table
and exits cleanly when stdin closes. A property test then mutates valid frames (3000 examples,
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
from dataclasses import dataclass
from pathlib import Path

import mcp_types as types
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course_lib.paths import workspace_dir
from course_lib.stdio import check_frame

REPO = Path(__file__).resolve().parents[1]
PARSE, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
TIMEOUT = 10.0  # seconds to wait for an answer that must come

SERVERS = {
    "fs_server": (["-m", "course_lib.fs_server", "--root", str(workspace_dir())],
                  {"name": "read_text_file", "arguments": {"path": "notes.txt", "head": 1}}),
    "notes_server": (["-m", "course_lib.notes_server"],
                     {"name": "read_note", "arguments": {"path": "/notes/retries.md"}}),
}  # fmt: skip


def _j(message: object) -> bytes:
    return json.dumps(message).encode()


def _ping(id_: object) -> bytes:
    return _j({"jsonrpc": "2.0", "id": id_, "method": "ping"})


@dataclass(frozen=True)
class Case:
    family: str
    name: str
    frame: bytes  # sent followed by b"\n"
    answers: tuple[tuple[int | None, object], ...] = ()  # (error code, or None for a result; id)
    logged: bool = False  # a malformed notification: no answer, but a line on stderr


def _error(code: int, id_: object = None) -> tuple[tuple[int | None, object], ...]:
    return ((code, id_),)


BIG_ID = 2**70  # bigger than any 64-bit integer: echoed exactly
CASES = [
    # Not JSON at all: -32700, id null.
    Case("parse", "truncated object", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', _error(PARSE)),
    Case("parse", "plain text", b"hello", _error(PARSE)),
    Case("parse", "trailing comma", b'{"jsonrpc": "2.0", "id": 1, "method": "ping",}', _error(PARSE)),
    Case("parse", "single quotes", b"{'jsonrpc': '2.0', 'id': 1, 'method': 'ping'}", _error(PARSE)),
    Case("parse", "empty line", b"", _error(PARSE)),
    Case("parse", "only whitespace", b" \t  \r", _error(PARSE)),
    Case("parse", "truncated UTF-8 in a string",
         b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "\xe2\x82"}}', _error(PARSE)),
    Case("parse", "a byte that is never UTF-8", b'\xff{"jsonrpc": "2.0", "id": 1, "method": "ping"}', _error(PARSE)),
    Case("parse", "byte order mark", b'\xef\xbb\xbf{"jsonrpc": "2.0", "id": 1, "method": "ping"}', _error(PARSE)),
    Case("parse", "lone surrogate escape",
         b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "\\ud800"}}', _error(PARSE)),
    Case("parse", "NaN", b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}', _error(PARSE)),
    Case("parse", "Infinity", b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": Infinity}}',
         _error(PARSE)),
    Case("parse", "-Infinity as the id", b'{"jsonrpc": "2.0", "id": -Infinity, "method": "ping"}', _error(PARSE)),
    Case("parse", "two objects on one line", _ping(1) + _ping(2), _error(PARSE)),
    Case("parse", "trailing garbage", _ping(1) + b" x", _error(PARSE)),
    Case("parse", "nested 10000 deep", b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": '
         + b"[" * 10_000 + b"]" * 10_000 + b"}}", _error(PARSE)),  # past the parser's depth limit
    # Arrays: MCP has no batches since 2025-06-18. -32600, for each request id inside, else once with null.
    Case("batch", "empty batch", b"[]", _error(INVALID_REQUEST)),
    Case("batch", "batch of one request", b"[" + _ping(7) + b"]", _error(INVALID_REQUEST, 7)),
    Case("batch", "batch of two requests", b"[" + _ping(8) + b", " + _ping("nine") + b"]",
         ((INVALID_REQUEST, 8), (INVALID_REQUEST, "nine"))),
    Case("batch", "batch of a notification", b'[{"jsonrpc": "2.0", "method": "notifications/initialized"}]',
         _error(INVALID_REQUEST)),
    Case("batch", "batch of a number", b"[1]", _error(INVALID_REQUEST)),
    Case("batch", "nested empty batch", b"[[]]", _error(INVALID_REQUEST)),
    # Not a Request object: -32600, with the id when it can be read.
    Case("envelope", "jsonrpc 1.0", b'{"jsonrpc": "1.0", "id": 10, "method": "ping"}', _error(INVALID_REQUEST, 10)),
    Case("envelope", "jsonrpc missing", b'{"id": 11, "method": "ping"}', _error(INVALID_REQUEST, 11)),
    Case("envelope", "jsonrpc a number", b'{"jsonrpc": 2.0, "id": 12, "method": "ping"}', _error(INVALID_REQUEST, 12)),
    Case("envelope", "method missing", b'{"jsonrpc": "2.0", "id": 13}', _error(INVALID_REQUEST, 13)),
    Case("envelope", "method a number", b'{"jsonrpc": "2.0", "id": 14, "method": 5}', _error(INVALID_REQUEST, 14)),
    Case("envelope", "method null", b'{"jsonrpc": "2.0", "id": 15, "method": null}', _error(INVALID_REQUEST, 15)),
    Case("envelope", "method a number, no id", b'{"jsonrpc": "2.0", "method": 1, "params": "bar"}',
         _error(INVALID_REQUEST)),  # the JSON-RPC spec's own example
    Case("envelope", "params a string", b'{"jsonrpc": "2.0", "id": 16, "method": "ping", "params": "x"}',
         _error(INVALID_REQUEST, 16)),
    Case("envelope", "empty object", b"{}", _error(INVALID_REQUEST)),
    Case("envelope", "a number", b"1", _error(INVALID_REQUEST)),
    Case("envelope", "a string", b'"ping"', _error(INVALID_REQUEST)),
    Case("envelope", "null", b"null", _error(INVALID_REQUEST)),
    Case("envelope", "true", b"true", _error(INVALID_REQUEST)),
    # Ids MCP does not allow (string or integer, never null): -32600, id null (the SDK took these
    # for notifications, which get no answer).
    Case("id", "id null", b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', _error(INVALID_REQUEST)),
    Case("id", "id true", b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', _error(INVALID_REQUEST)),
    Case("id", "id 1.5", b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', _error(INVALID_REQUEST)),
    Case("id", "id 1e999", b'{"jsonrpc": "2.0", "id": 1e999, "method": "ping"}', _error(INVALID_REQUEST)),
    Case("id", "id an object", b'{"jsonrpc": "2.0", "id": {"n": 1}, "method": "ping"}', _error(INVALID_REQUEST)),
    Case("id", "id an array", b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}', _error(INVALID_REQUEST)),
    Case("id", "id null on tools/call", b'{"jsonrpc": "2.0", "id": null, "method": "tools/call", "params": {}}',
         _error(INVALID_REQUEST)),
    # Unusual ids that are allowed: answered normally, the id echoed exactly.
    Case("valid id", "huge integer id", _ping(BIG_ID), ((None, BIG_ID),)),
    Case("valid id", "string id", _ping("abc"), ((None, "abc"),)),
    Case("valid id", "empty string id", _ping(""), ((None, ""),)),
    Case("valid id", "negative id", _ping(-5), ((None, -5),)),
    Case("valid id", "id 0", _ping(0), ((None, 0),)),
    # Params of the wrong shape: -32602 with the id.
    Case("params", "array params on ping", b'{"jsonrpc": "2.0", "id": 20, "method": "ping", "params": []}',
         _error(INVALID_PARAMS, 20)),
    Case("params", "array params on tools/list", b'{"jsonrpc": "2.0", "id": 21, "method": "tools/list", "params": [1]}',
         _error(INVALID_PARAMS, 21)),
    Case("params", "array params on tools/call",
         b'{"jsonrpc": "2.0", "id": 22, "method": "tools/call", "params": ["read_text_file", {}]}',
         _error(INVALID_PARAMS, 22)),
    Case("params", "tools/call without params", b'{"jsonrpc": "2.0", "id": 23, "method": "tools/call"}',
         _error(INVALID_PARAMS, 23)),
    Case("params", "tools/call without a name", _j({"jsonrpc": "2.0", "id": 24, "method": "tools/call",
                                                     "params": {"arguments": {}}}), _error(INVALID_PARAMS, 24)),
    Case("params", "tools/call name a number", _j({"jsonrpc": "2.0", "id": 25, "method": "tools/call",
                                                    "params": {"name": 5}}), _error(INVALID_PARAMS, 25)),
    Case("params", "tools/call arguments an array", _j({"jsonrpc": "2.0", "id": 26, "method": "tools/call",
                                                         "params": {"name": "read_text_file", "arguments": []}}),
         _error(INVALID_PARAMS, 26)),
    Case("params", "tools/call unknown tool", _j({"jsonrpc": "2.0", "id": 27, "method": "tools/call",
                                                   "params": {"name": "no_such_tool", "arguments": {}}}),
         _error(INVALID_PARAMS, 27)),
    Case("params", "a number out of range (1e999) in the arguments",
         b'{"jsonrpc": "2.0", "id": 28, "method": "tools/call", "params": {"name": "@TOOL@", "arguments": '
         b'{"path": 1e999, "head": 1e999}}}', ((None, 28),)),  # read as inf: the tool refuses it (isError)
    # Unknown methods: -32601.
    Case("method", "unknown method", b'{"jsonrpc": "2.0", "id": 30, "method": "no/such/method"}',
         _error(METHOD_NOT_FOUND, 30)),
    Case("method", "tools/calls (a typo)", b'{"jsonrpc": "2.0", "id": 31, "method": "tools/calls", "params": {}}',
         _error(METHOD_NOT_FOUND, 31)),
    Case("method", "empty method", b'{"jsonrpc": "2.0", "id": 32, "method": ""}', _error(METHOD_NOT_FOUND, 32)),
    # Notifications get no answer; a malformed one is logged to stderr.
    Case("notification", "array params", b'{"jsonrpc": "2.0", "method": "notifications/initialized", "params": []}',
         logged=True),
    Case("notification", "string params", b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"}',
         logged=True),
    Case("notification", "number params", b'{"jsonrpc": "2.0", "method": "notifications/initialized", "params": 5}',
         logged=True),
    Case("notification", "true as params", b'{"jsonrpc": "2.0", "method": "notifications/roots/list_changed", '
                                           b'"params": true}', logged=True),
    Case("notification", "unknown notification", b'{"jsonrpc": "2.0", "method": "notifications/no_such"}'),
    # Responses are never answered (the server sent no request); a malformed one is logged.
    Case("response", "a result for no request", b'{"jsonrpc": "2.0", "id": 99, "result": {}}'),
    Case("response", "a result that is not an object", b'{"jsonrpc": "2.0", "id": 98, "result": 5}', logged=True),
]
"""The table; `_run` sends it to each server in this order."""


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


def _shape(message: dict | str) -> tuple[int | None, object] | str:
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or "id" not in message:
        return f"not a JSON-RPC response: {message!r}"
    if "error" in message:
        return message["error"]["code"], message["id"]
    return None, message["id"]


def _run(server: str, transport: str) -> tuple[list[str], Counter]:
    """Send the whole table; return every failure, and the number of cases per family."""
    args, probe_params = SERVERS[server]
    wire = Wire(args, transport)
    failures: list[str] = []
    try:
        wire.send(_j({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "frames", "version": "1"}}}))
        _, init = wire.until("init", 0)
        assert init is not None and "result" in init, f"{server} did not initialize: {wire.err}"
        wire.send(_j({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for number, case in enumerate(CASES):
            errors_before = len(wire.err)
            probe_id = f"probe-{number}"
            wire.send(case.frame.replace(b"@TOOL@", probe_params["name"].encode()))
            wire.send(_j({"jsonrpc": "2.0", "id": probe_id, "method": "tools/call", "params": probe_params}))
            got, probe = wire.until(probe_id, len(case.answers))
            label = f"{server} · {case.family} · {case.name}"
            if case.family == "params" and case.answers[0][0] is None:  # a tool-level refusal
                refused = [m for m in got if isinstance(m, dict) and m.get("result", {}).get("isError")]
                if len(refused) != 1:
                    failures.append(f"{label}: expected the tool to refuse it, got {got!r}")
            shapes = sorted((_shape(m) for m in got), key=repr)
            if shapes != sorted(case.answers, key=repr):
                failures.append(f"{label}: answers {shapes}, expected {list(case.answers)}")
            if probe is None or "result" not in probe or probe["result"].get("isError"):
                failures.append(f"{label}: the valid tools/call after it got {probe!r}")
            if case.logged:
                deadline = time.monotonic() + TIMEOUT
                while len(wire.err) == errors_before and time.monotonic() < deadline:
                    time.sleep(0.01)
                if len(wire.err) == errors_before:
                    failures.append(f"{label}: nothing on stderr")
            for message in got:
                error = message.get("error") if isinstance(message, dict) else None
                if error is not None and not (isinstance(error.get("message"), str) and error["message"]):
                    failures.append(f"{label}: an error without a message: {message!r}")
        wire.send(_ping("last"))
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
        wire.send(_ping("after"))
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
    _ping(1),
    _j({"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "t", "arguments": {"path": "x"}}}),
    _j({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    _j({"jsonrpc": "2.0", "id": 3, "result": {}}),
    _j({"jsonrpc": "2.0", "id": 4, "error": {"code": 1, "message": "m"}}),
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
    assert verdict.answers or verdict.log, line
    for answer in verdict.answers:
        assert answer.error.code in (PARSE, INVALID_REQUEST, INVALID_PARAMS)
