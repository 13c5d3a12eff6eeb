"""The offline model's HTTP server as a real endpoint: every request answered (in the OpenAI error
shape when refused), one write per reply, bounded bodies and time, many clients at once."""

import concurrent.futures
import json
import socket
import threading
import time

import httpx
import openai
import pytest

from course_lib.offline_model.request_params import MAX_DEPTH, check_parameters
from course_lib.offline_model.server import BACKLOG, OfflineModelServer
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
