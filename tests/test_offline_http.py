"""The offline model's HTTP server as a real endpoint: every request answered (in the OpenAI error
shape when refused), one write per reply, bounded bodies and time, many clients at once."""

import concurrent.futures
import json
import re
import socket
import threading
import time

import httpx
import openai
import pytest

from course_lib.offline_model.request_params import MAX_DEPTH, check_parameters
from course_lib.offline_model.server import BACKLOG, MAX_BODY_BYTES as MAX_BODY, OfflineModelServer
from course_lib.offline_model.validation import BadRequest

BODY = {"model": "gpt-4.1", "input": "hello"}


def running(**limits):
    srv = OfflineModelServer(("127.0.0.1", 0), **limits)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    return srv, thread


@pytest.fixture
def server():
    """A server on a free port in this process, with small limits so each can be reached quickly."""
    srv, thread = running(max_body_bytes=64 * 1024, idle_timeout=1.0, request_timeout=1.5)
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=5)


@pytest.fixture
def default_server():
    """A server with the shipped limits (a busy machine must not make a kept-alive client time out)."""
    srv, thread = running()
    yield srv
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=5)


def port(srv):
    return srv.server_address[1]


def raw(srv, data: bytes, *, timeout=5.0, shut=False) -> bytes:
    """Send raw bytes; return everything the server sends until it closes or stops sending."""
    with socket.create_connection(("127.0.0.1", port(srv)), timeout=timeout) as sock:
        sock.sendall(data)
        if shut:
            sock.shutdown(socket.SHUT_WR)
        chunks = []
        try:
            while chunk := sock.recv(65536):
                chunks.append(chunk)
                if _complete(b"".join(chunks)):
                    break
        except (socket.timeout, ConnectionResetError):
            pass
        return b"".join(chunks)


def _complete(data: bytes) -> bool:
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
    return len(body) >= length


def parse(reply: bytes) -> tuple[int, dict, dict]:
    head, _, body = reply.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines[1:])
    return int(lines[0].split()[1]), {k.lower(): v for k, v in headers.items()}, json.loads(body)


def post(body: bytes, *, length: str | None = None, extra: bytes = b"") -> bytes:
    length = str(len(body)) if length is None else length
    return (b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + extra
            + f"Content-Length: {length}\r\n\r\n".encode() + body)  # fmt: skip


def assert_openai_error(reply: bytes, status: int) -> dict:
    code, _, payload = parse(reply)
    assert code == status, reply[:200]
    assert set(payload["error"]) == {"message", "type", "param", "code"} and payload["error"]["message"]
    return payload["error"]


MALFORMED = {
    "Content-Length not a number": post(b"{}", length="abc"),
    "Content-Length negative": post(b"{}", length="-5"),
    "Content-Length with a sign": post(b"{}", length="+2"),
    "two different Content-Lengths": post(b"{}", extra=b"Content-Length: 3\r\n"),
    "no Content-Length": b"POST /v1/responses HTTP/1.1\r\nHost: x\r\n\r\n",
    "deep nesting (past the parser)": post(b"[" * 100_000 + b"]" * 100_000),
    "deep nesting (past the cap)": post(json.dumps({**BODY, "metadata": None, "text": {"x": "y"}}).encode()
                                        .replace(b'"y"', b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))),
    "a lone surrogate": post(b'{"model": "m", "input": "\\ud800"}'),
    "a lone surrogate in a key": post(b'{"model": "m", "input": "hi", "metadata": {"\\udfff": "x"}}'),
    "invalid UTF-8": post(b'{"model": "m", "input": "\xff\xfe"}'),
    "NaN": post(b'{"model": "m", "input": "hi", "temperature": NaN}'),
    "not JSON": post(b"model=m&input=hi"),
    "a bad chunk size": b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
    "a short chunk": b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{}\r\n0\r\n\r\n",
    "an unknown transfer coding": post(b"{}", extra=b"Transfer-Encoding: gzip\r\n"),
    "a garbled request line": b"POST\r\n\r\n",
    "an unknown method": b"BREW /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n",
    "a header line without a colon": b"POST /v1/responses HTTP/1.1\r\nHost x\r\n" + b"a" * 70000 + b"\r\n\r\n",
    "unknown top-level parameter": post(json.dumps({**BODY, "foo": 1}).encode()),
    "temperature as a string": post(json.dumps({**BODY, "temperature": "hot"}).encode()),
}


@pytest.mark.parametrize("name", MALFORMED)
def test_every_malformed_request_gets_an_answer_in_the_openai_error_shape(server, name):
    reply = raw(server, MALFORMED[name], shut=name == "a short chunk")
    code, _, _ = parse(reply)
    assert 400 <= code < 500, (name, reply[:200])
    assert_openai_error(reply, code)


def test_the_server_still_answers_after_every_malformed_request(server):
    for data in MALFORMED.values():
        raw(server, data)
    status, _, payload = parse(raw(server, post(json.dumps(BODY).encode())))
    assert status == 200 and payload["object"] == "response"


def test_a_body_over_the_cap_is_413_without_being_read(server):
    error = assert_openai_error(raw(server, post(b"", length=str(10**15))), 413)
    assert "too large" in error["message"] and error["type"] == "invalid_request_error"
    sent = post(b'{"model": "m", "input": "' + b"x" * (server.max_body_bytes + 10) + b'"}')  # really sent
    assert_openai_error(raw(server, sent), 413)
    chunked = b"".join(f"{len(part):x}\r\n".encode() + part + b"\r\n" for part in [b"x" * 40_000] * 2) + b"0\r\n\r\n"
    assert_openai_error(raw(server, b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                                    + chunked), 413)  # fmt: skip


def test_a_chunked_body_is_read(server):
    body = json.dumps(BODY).encode()
    chunks = f"{len(body[:5]):x}\r\n".encode() + body[:5] + b"\r\n" + f"{len(body[5:]):x};ext=1\r\n".encode() + body[5:]
    reply = raw(server, b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks
                + b"\r\n0\r\n\r\n")  # fmt: skip
    assert parse(reply)[0] == 200


def test_unknown_parameters_and_wrong_types_are_refused_in_the_real_api_words(server):
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port(server)}/v1", api_key="offline", max_retries=0)
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="m", input="hi", extra_body={"foo": 1})
    assert refused.value.body == {"message": "Unknown parameter: 'foo'.", "type": "invalid_request_error",
                                  "param": "foo", "code": "unknown_parameter"}  # fmt: skip
    with pytest.raises(openai.BadRequestError) as refused:
        client.responses.create(model="m", input="hi", temperature="hot")  # type: ignore[arg-type]
    assert refused.value.body["message"] == "Invalid type for 'temperature': expected a decimal, but got a string instead."
    assert refused.value.body["code"] == "invalid_type" and refused.value.body["param"] == "temperature"
    ok = client.responses.create(model="m", input="hi", temperature=0.2, top_p=1, store=False, max_output_tokens=50,
                                 truncation="disabled", metadata={"a": "b"}, include=[])  # fmt: skip
    assert ok.status == "completed"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"n": 2}, "Unknown parameter: 'n'."),  # a Chat Completions key, not a Responses one
        ({"foo": None}, "Unknown parameter: 'foo'."),  # refused even when null
        ({"foo": 1, "temperature": "hot"}, "Unknown parameter: 'foo'."),  # an unknown key is reported first
        ({"max_output_tokens": 1.5}, "Invalid type for 'max_output_tokens': expected an integer, but got a decimal number instead."),
        ({"max_output_tokens": True}, "Invalid type for 'max_output_tokens': expected an integer, but got a boolean instead."),
        ({"store": "yes"}, "Invalid type for 'store': expected a boolean, but got a string instead."),
        ({"tools": "none"}, "Invalid type for 'tools': expected an array of objects, but got a string instead."),
        ({"input": 7}, "Invalid type for 'input': expected one of a string or array of objects, but got an integer instead."),
        ({"tool_choice": 7}, "Invalid type for 'tool_choice': expected one of one of 'none', 'auto', or 'required' or "
                             "object, but got an integer instead."),
        ({"truncation": {}}, "Invalid type for 'truncation': expected one of 'auto' or 'disabled', but got an object instead."),
        ({"user": {"a": 1}}, "Invalid type for 'user': expected a string, but got an object instead."),
    ],
)
def test_top_level_checks_follow_the_sdk_request_types(body, message):
    with pytest.raises(BadRequest) as refused:
        check_parameters({**BODY, **body})
    assert refused.value.message == message


def test_every_key_the_sdk_declares_is_known():
    import typing

    from openai.types.responses import response_create_params as params

    declared = set(typing.get_type_hints(params.ResponseCreateParamsNonStreaming))
    check_parameters({key: None for key in declared})  # nothing raised: every declared key is known
    assert {"model", "input", "tools", "temperature", "stream"} <= declared | {"stream"}


def test_a_kept_alive_request_is_answered_in_one_write_and_fast(default_server):
    server = default_server
    # ~44 ms each before (headers and body in two writes: Nagle + delayed ACK); now one write.
    with httpx.Client(base_url=f"http://127.0.0.1:{port(server)}") as client:
        client.post("/v1/responses", json=BODY)
        times = []
        for _ in range(15):
            start = time.perf_counter()
            assert client.post("/v1/responses", json=BODY).status_code == 200
            times.append(time.perf_counter() - start)
    assert sorted(times)[7] < 0.035, times  # the 40 ms delayed-ACK stall is gone (median of 15)


def test_an_idle_connection_is_closed_after_the_idle_timeout(server):
    with socket.create_connection(("127.0.0.1", port(server)), timeout=5) as sock:
        start = time.monotonic()
        assert sock.recv(1024) == b""  # closed by the server, nothing sent: no request was started
        assert 0.8 < time.monotonic() - start < 5


def test_a_slow_client_is_cut_off_with_408(server):
    with socket.create_connection(("127.0.0.1", port(server)), timeout=5) as sock:
        start = time.monotonic()
        data = post(json.dumps(BODY).encode())
        reply = b""
        for byte in data[:-5]:  # one byte every 0.1 s: each recv is in time, the whole request is not
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                break
            time.sleep(0.1)
            if time.monotonic() - start > 4:
                break
        try:
            while chunk := sock.recv(65536):
                reply += chunk
        except OSError:
            pass
    assert time.monotonic() - start < 4
    assert_openai_error(reply, 408)


def test_fifty_concurrent_clients_are_all_answered_without_resets(default_server):
    server = default_server
    assert BACKLOG >= 50

    def one(i: int) -> int:
        with httpx.Client(base_url=f"http://127.0.0.1:{port(server)}", timeout=20) as client:
            codes = [client.post("/v1/responses", json={**BODY, "input": f"hello {i} {k}"}).status_code for k in range(3)]
        return sum(code == 200 for code in codes)

    with concurrent.futures.ThreadPoolExecutor(50) as pool:
        answered = list(pool.map(one, range(50)))
    assert answered == [3] * 50


def test_a_handler_bug_is_a_500_in_the_openai_shape_and_the_server_stays_up(server, monkeypatch):
    from course_lib.offline_model import server as module

    def broken(request):
        raise RuntimeError("a bug")

    monkeypatch.setattr(module, "handle", broken)
    code, _, payload = parse(raw(server, post(json.dumps(BODY).encode())))
    assert code == 500 and payload["error"]["type"] == "server_error"
    monkeypatch.undo()
    assert parse(raw(server, post(json.dumps(BODY).encode())))[0] == 200


def test_a_missing_model_is_reported_before_an_unknown_key():
    from course_lib.offline_model import respond

    with pytest.raises(BadRequest) as refused:
        respond({"input": "hi", "zzz_unknown": 1})
    assert refused.value.param == "model" and refused.value.code == "missing_required_parameter"


# ---- bounded: connections, workers, bodies, memory (issue 22) ----------------------------------


def test_a_connection_over_the_cap_gets_a_503_in_the_openai_shape_and_a_freed_place_is_served():
    srv, thread = running(max_connections=2, idle_timeout=5.0, request_timeout=5.0)
    try:
        held = [socket.create_connection(("127.0.0.1", port(srv)), timeout=5) for _ in range(2)]
        deadline = time.monotonic() + 5
        while srv.connections < 2 and time.monotonic() < deadline:  # both accepted, each by its thread
            time.sleep(0.01)
        reply = raw(srv, post(json.dumps(BODY).encode()))
        error = assert_openai_error(reply, 503)
        assert error["type"] == "server_error" and "2 connections are open" in error["message"]
        assert parse(reply)[1]["retry-after"] == "1"
        held.pop().close()
        deadline = time.monotonic() + 5
        while srv.connections > 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert parse(raw(srv, post(json.dumps(BODY).encode())))[0] == 200
        for sock in held:
            sock.close()
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=5)


def slow_upload(srv, body: bytes, seconds: float) -> socket.socket:
    """A connection whose request's body arrives in two halves, `seconds` apart: a worker reads it
    meanwhile. Returns the socket (its second half already scheduled)."""
    sock = socket.create_connection(("127.0.0.1", port(srv)), timeout=10)
    data = post(body)
    sock.sendall(data[: len(data) - 10])

    def rest() -> None:
        time.sleep(seconds)
        sock.sendall(data[len(data) - 10:])

    threading.Thread(target=rest, daemon=True).start()
    return sock


def reply_of(sock: socket.socket) -> bytes:
    chunks = []
    while not _complete(b"".join(chunks)) and (chunk := sock.recv(65536)):
        chunks.append(chunk)
    return b"".join(chunks)


def test_a_request_over_the_worker_cap_waits_for_a_worker_and_is_answered():
    srv, thread = running(max_active=1, request_timeout=5.0)
    try:
        start = time.monotonic()
        first = slow_upload(srv, json.dumps(BODY).encode(), 0.6)  # holds the only worker for 0.6 s
        time.sleep(0.1)
        second = raw(srv, post(json.dumps({**BODY, "input": "hello again"}).encode()))
        assert parse(second)[0] == 200 and time.monotonic() - start >= 0.5  # it waited, then was answered
        assert parse(reply_of(first))[0] == 200
        first.close()
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=5)


def test_a_request_that_gets_no_worker_before_its_deadline_is_a_503_and_its_body_is_never_read(monkeypatch):
    from course_lib.offline_model import server as module

    answer = module.handle

    def slow(request):  # the model takes longer than the waiting request's whole deadline
        time.sleep(1.0)
        return answer(request)

    monkeypatch.setattr(module, "handle", slow)
    srv, thread = running(max_active=1, request_timeout=0.5)
    try:
        with socket.create_connection(("127.0.0.1", port(srv)), timeout=5) as first:
            first.sendall(post(json.dumps(BODY).encode()))
            time.sleep(0.1)
            with socket.create_connection(("127.0.0.1", port(srv)), timeout=5) as sock:
                sock.sendall(post(json.dumps(BODY).encode()))
                started = time.monotonic()
                error = assert_openai_error(reply_of(sock), 503)
                assert time.monotonic() - started < 0.9  # refused at its deadline, not after the first's answer
            assert "no worker came free" in error["message"] and error["type"] == "server_error"
            assert parse(reply_of(first))[0] == 200  # the request that held the worker is still answered
    finally:
        srv.shutdown()
        srv.server_close()
        thread.join(timeout=5)


def test_lying_bodies_are_stopped_at_their_framing(server):
    # A chunk that says 4 bytes and carries more: refused at the chunk's end, nothing more read.
    lying_chunk = b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\n" + b"x" * 500_000
    assert_openai_error(raw(server, lying_chunk), 400)
    # A chunk size past the cap is refused before a byte of it is read.
    assert_openai_error(raw(server, b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                                    b"ffffffffffff\r\n"), 413)  # fmt: skip
    # A Content-Length shorter than the body: the declared bytes are the body (not JSON here: 400); what
    # follows is read as the next request line, which http.server caps at 64 KiB before refusing it.
    with socket.create_connection(("127.0.0.1", port(server)), timeout=5) as sock:
        sock.sendall(post(b"{}" + b"x" * 300_000, length="2"))
        replies = b""
        try:
            while chunk := sock.recv(65536):
                replies += chunk
        except OSError:
            pass
    first = replies[: replies.index(b"\r\n\r\n") + 4 + int(re.search(rb"Content-Length: (\d+)", replies).group(1))]
    assert parse(first)[0] == 400
    rest = replies[len(first):]
    assert rest.startswith(b"HTTP/1.1 4") and b"Connection: close" in rest


# Ten clients each send a body just under the 8 MB cap, at once. Before the worker cap each
# connection's thread read its own body and ran the model on it, all ten together: ~460 MB at the
# peak. Now MAX_ACTIVE workers do that, one body each. The bound asserted: ten at once cost at most
# MAX_ACTIVE + 1 times what one request alone raised the peak by (the +1 is the margin). The
# bodies say `store: false`: a stored response keeps its input for `previous_response_id`, which
# is the response store's memory (`offline_model/state.py`), not what this test is about.
def _peak_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))


def _send_body(number: int, body: bytes) -> int:
    with socket.create_connection(("127.0.0.1", number), timeout=120) as sock:
        sock.sendall(post(body))
        return parse(reply_of(sock))[0]


def test_ten_concurrent_8_mb_requests_raise_the_peak_by_no_more_than_the_workers_need():
    import os
    import subprocess
    import sys

    from course_lib.offline_model.server import MAX_ACTIVE

    if not os.path.exists("/proc/self/status"):
        if os.environ.get("CI") == "true":
            pytest.fail("the memory test reads /proc/<pid>/status (Linux); CI runs on Linux")
        pytest.skip("the memory test reads /proc/<pid>/status: Linux only")
    body = json.dumps({"model": "gpt-4.1", "store": False, "input": "x" * (MAX_BODY - 200)}).encode()
    process = subprocess.Popen([sys.executable, "-m", "course_lib.offline_model", "--port", "0"],
                               stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        number = int(re.search(r":(\d+)/v1", process.stderr.readline()).group(1))
        assert _send_body(number, json.dumps(BODY).encode()) == 200  # warm: every module imported
        idle = _peak_kb(process.pid)
        assert _send_body(number, body) == 200
        one = _peak_kb(process.pid) - idle
        with concurrent.futures.ThreadPoolExecutor(10) as pool:
            assert list(pool.map(_send_body, [number] * 10, [body] * 10)) == [200] * 10
        ten = _peak_kb(process.pid) - idle
    finally:
        process.terminate()
        process.wait(timeout=10)
        process.stderr.close()
    print(f"peak RSS over idle: one 8 MB request {one // 1024} MB, ten at once {ten // 1024} MB")
    assert ten <= (MAX_ACTIVE + 1) * one, (one, ten)


def test_a_port_in_use_is_one_error_line_and_exit_2():
    import subprocess
    import sys

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        number = taken.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "course_lib.offline_model", "--port", str(number)],
                              capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [  # one line: a taken port is no usage mistake, so no usage block
        f"python -m course_lib.offline_model: error: cannot listen on 127.0.0.1:{number} (Address already in use); "
        "choose another --port"]


def test_a_limit_that_is_not_positive_is_refused():
    with pytest.raises(ValueError, match="max_active"):
        OfflineModelServer(("127.0.0.1", 0), max_active=0)


def test_each_server_counts_its_own_requests_so_its_ids_are_fresh_and_the_same_every_run():
    """Two servers started alike answer the same requests with the same ids; within one, no id repeats."""
    from course_lib.offline_model.server import OfflineModelServer

    body = {"model": "gpt-4.1", "input": "Show the first 2 lines of /workspace/notes.txt",
            "tools": [{"type": "function", "name": "read_text_file", "parameters": {
                "type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}},
                "required": ["path"]}}]}  # fmt: skip

    def ids_of_two_requests() -> list[str]:
        server = OfflineModelServer(("127.0.0.1", 0))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/v1/responses"
            return [httpx.post(url, json=body, timeout=30).json()["output"][0]["call_id"] for _ in range(2)]
        finally:
            server.shutdown()
            server.server_close()

    first, second = ids_of_two_requests(), ids_of_two_requests()
    assert first == second and first[0] != first[1]
