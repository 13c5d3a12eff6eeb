"""HTTP for the offline model: `handle` (one httpx request → response), `offline_transport` (an
httpx transport that answers in-process: no network at all) and `serve`/`main`, a real local server.

The local server (`OfflineModelServer`) behaves like a real endpoint, whatever a client sends:
every request gets an HTTP answer, a refusal in the OpenAI error shape (`{"error": {message, type,
param, code}}`) — 400 for a malformed request line, header, Content-Length or chunk, or a body
that is no JSON; 413 for a body over MAX_BODY_BYTES (not read); 408 for a request that does not
arrive within REQUEST_TIMEOUT; 500 if the model itself fails. A kept-alive connection waits at
most IDLE_TIMEOUT for its next request. Each reply goes out in one write with TCP_NODELAY: headers
and body written apart cost ~44 ms per kept-alive request (Nagle's algorithm meets the client's
delayed ACK; `benchmarks/http_server.py`). A thread per connection, BACKLOG queued connections.
A streamed reply (`stream: true`) is chunked instead: the headers with the first event, then a
chunk per event, each written as it comes.

Run it as a local HTTP server: `python -m course_lib.offline_model --port 8765`.
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import signal
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from course_lib.offline_model import envelopes
from course_lib.offline_model.response import respond
from course_lib.offline_model.streaming import event_stream
from course_lib.offline_model.validation import BadRequest

logger = logging.getLogger(__name__)

def _json_response(status: int, payload: dict, headers: dict[str, str] | None = None) -> httpx.Response:
    content = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    return httpx.Response(status, content=content, headers={"content-type": "application/json", **(headers or {})})


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return _json_response(status, BadRequest(message).to_body(), headers)


def handle(request: httpx.Request) -> httpx.Response:
    """Serve one HTTP request: POST …/responses → a Response body (server-sent events with
    `stream: true`), the other envelopes through `envelopes.ROUTES`; errors in the OpenAI format (400
    malformed body, 404 unknown path, 405 other methods; /v1/messages in Anthropic's)."""
    path = request.url.path
    if (answer := envelopes.route(request)) is not None:
        return answer
    if not path.rstrip("/").endswith("/responses"):
        return _error(404, envelopes.not_found(request))
    if request.method != "POST":
        return _error(405, f"Method {request.method} is not allowed on {path}; use POST.", {"allow": "POST"})
    try:
        body = json.loads(request.content)
    except (ValueError, RecursionError) as exc:  # also covers bytes that are not UTF-8, and runaway nesting
        return _error(400, f"We could not parse the JSON body of your request: {exc}.")
    try:
        response = respond(body)
    except BadRequest as exc:  # streamed or not, a bad request is refused before any event: a 400, or
        return _json_response(getattr(exc, "status", 400), exc.to_body())  # the status it names (404)
    return event_stream(response) if body.get("stream") is True else _json_response(200, response)


def offline_transport() -> httpx.MockTransport:
    """An httpx transport that answers in-process with the offline model: no network at all."""
    return httpx.MockTransport(handle)


# Limits of the socket layer: what a real endpoint has, sized for a course.
MAX_BODY_BYTES = 8 * 1024 * 1024  # a larger body is answered 413 without being read
IDLE_TIMEOUT = 30.0  # seconds a kept-alive connection may wait for its next request
REQUEST_TIMEOUT = 30.0  # seconds from a request's first byte to its last (a slow client is cut off)
BACKLOG = 128  # connections the kernel queues before accept (http.server's default is 5)
_SERVER_ERROR = "The server had an error while processing your request. Sorry about that!"


class _DeadlineReader(io.RawIOBase):
    """The socket as the handler reads it: waiting for a request may take `idle` seconds; once its
    first byte arrives the whole request must arrive within `whole` seconds, however slowly it
    trickles in (each recv gets only the time left). `next_request()` starts the wait again."""

    def __init__(self, sock: socket.socket, idle: float, whole: float) -> None:
        self.sock, self.idle, self.whole = sock, idle, whole
        self.deadline: float | None = None  # None: no request started yet

    def readable(self) -> bool:
        return True

    def next_request(self) -> None:
        self.deadline = None

    @property
    def started(self) -> bool:
        return self.deadline is not None

    def readinto(self, buffer: Any) -> int:
        left = self.idle if self.deadline is None else self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request did not arrive in time")
        self.sock.settimeout(left)
        count = self.sock.recv_into(buffer)
        if count and self.deadline is None:
            self.deadline = time.monotonic() + self.whole
        return count


class _BadFraming(Exception):
    """The body's framing is wrong (Content-Length, chunks): answered with `status`, then closed."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class _Handler(BaseHTTPRequestHandler):
    """One connection: requests read under deadlines, each answered in one write (headers and body
    together, so delayed ACK never holds back a kept-alive reply), every error in the OpenAI shape."""

    protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects
    disable_nagle_algorithm = True  # TCP_NODELAY as well: a small reply goes out at once
    server: "OfflineModelServer"

    def setup(self) -> None:
        super().setup()
        self._reader = _DeadlineReader(self.connection, self.server.idle_timeout, self.server.request_timeout)
        self.rfile = io.BufferedReader(self._reader)

    def handle_one_request(self) -> None:
        self._reader.next_request()
        self._answered = False
        try:
            super().handle_one_request()  # a read that times out ends there: logged (quietly), connection closed
        except OSError:  # the client went away mid-request (reset, or closed before the whole body): no one to answer
            self.close_connection = True
            return
        if self._reader.started and not self._answered:
            # It timed out mid-request (a slow client): answer 408 as a real server does, then close.
            self.close_connection = True
            try:
                self._send(408, BadRequest("The request did not arrive in time.").to_body())
            except OSError:
                pass

    def _body(self) -> bytes:
        """The request body, within `max_body_bytes`.

        Raises:
            _BadFraming: 400 for a Content-Length that is not a number, negative, or given twice
                with different values, or broken chunks; 413 for a body over the cap.
        """
        cap = self.server.max_body_bytes
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._chunked(cap)
        if self.headers.get("Transfer-Encoding"):
            raise _BadFraming(400, f"Unsupported Transfer-Encoding: {self.headers['Transfer-Encoding']!r}.")
        values = {value.strip() for value in self.headers.get_all("Content-Length") or []}
        if not values:
            return b""  # no body: the JSON parse answers 400
        if len(values) > 1 or not values.issubset({v for v in values if v.isdigit() and v.isascii()}):
            raise _BadFraming(400, f"Invalid Content-Length header: {', '.join(sorted(values))!r}.")
        length = int(values.pop())
        if length > cap:
            raise _BadFraming(413, f"Request body too large: {length} bytes; the limit is {cap} bytes.")
        body = self.rfile.read(length)
        if len(body) < length:
            raise ConnectionError("the client closed the connection before sending the whole body")
        return body

    def _chunked(self, cap: int) -> bytes:
        body = bytearray()
        while True:
            line = self.rfile.readline(1026)
            size_text = line.split(b";", 1)[0].strip()
            if not line.endswith(b"\n") or not size_text or not all(c in b"0123456789abcdefABCDEF" for c in size_text):
                raise _BadFraming(400, "Invalid chunked body: a chunk size is not a hexadecimal number.")
            size = int(size_text, 16)
            if len(body) + size > cap:
                raise _BadFraming(413, f"Request body too large: over the limit of {cap} bytes.")
            if size == 0:
                while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass  # trailer fields: ignored
                return bytes(body)
            chunk = self.rfile.read(size)
            if len(chunk) < size or self.rfile.readline(3) not in (b"\r\n", b"\n"):
                raise _BadFraming(400, "Invalid chunked body: a chunk is shorter than its size.")
            body += chunk

    def _relay(self) -> None:
        try:
            content = self._body()
        except _BadFraming as bad:
            self.close_connection = True  # the rest of the body is not read: the connection is spent
            self._send(bad.status, BadRequest(bad.message).to_body())
            self._drain()
            return
        try:
            response = handle(httpx.Request(self.command, f"http://offline{self.path}", content=content))
            streamed = response if response.headers.get("content-type", "").startswith("text/event-stream") else None
            status, payload, headers = response.status_code, b"" if streamed else response.content, dict(response.headers)
        except Exception:  # a bug must still get an answer: a 500 in the real API's shape, the detail logged
            logger.exception("the offline model failed on %s %s", self.command, self.path)
            status, payload, headers = 500, _json_bytes({"error": {"message": _SERVER_ERROR, "type": "server_error",
                                                                   "param": None, "code": None}}), {}
            streamed = None
        if streamed is not None:
            self._send_events(streamed)  # stream: true
        else:
            self._send(status, payload, headers)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _relay

    def __getattr__(self, name: str) -> Any:
        if name.startswith("do_"):  # any other method too: `handle` answers it (405, or 404 for the path)
            return self._relay
        raise AttributeError(name)

    def _send(self, status: int, payload: bytes | dict, headers: dict[str, str] | None = None) -> None:
        """Status line, headers and body in a single write."""
        body = payload if isinstance(payload, bytes) else _json_bytes(payload)
        fields = {"content-type": "application/json", **{k.lower(): v for k, v in (headers or {}).items()}}
        fields.pop("content-length", None)
        fields.pop("connection", None)
        lines = [f"{self.protocol_version} {status} {self.responses.get(status, ('',))[0]}",
                 f"Server: {self.version_string()}", f"Date: {self.date_time_string()}",
                 *(f"{key}: {value}" for key, value in fields.items()), f"Content-Length: {len(body)}"]
        if self.close_connection:
            lines.append("Connection: close")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")
        self.connection.settimeout(self.server.request_timeout)  # a client that never reads cannot hold the thread
        self.wfile.write(head + (b"" if getattr(self, "command", None) == "HEAD" else body))
        self._answered = True

    def _send_events(self, response: httpx.Response) -> None:
        """A streamed reply (`stream: true`): chunked, one chunk per server-sent event, each written
        as it comes (the headers go with the first)."""
        fields = [f"{key}: {value}" for key, value in response.headers.items() if key.lower() != "content-length"]
        lines = [f"{self.protocol_version} 200 OK", f"Server: {self.version_string()}",
                 f"Date: {self.date_time_string()}", *fields, "Transfer-Encoding: chunked"]  # fmt: skip
        pending = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")
        self.connection.settimeout(self.server.request_timeout)
        # The Responses stream yields its frames one by one; the other envelopes build the whole
        # stream in memory (`content=`), which goes out as one chunk.
        frames = [response.content] if response.is_stream_consumed else response.iter_raw()
        for frame in frames:
            self.wfile.write(pending + f"{len(frame):x}\r\n".encode() + frame + b"\r\n")
            pending = b""
        self.wfile.write(pending + b"0\r\n\r\n")
        self._answered = True

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (a bad request line, too many or too long headers, an unknown
        method) in the OpenAI error shape instead of its HTML page."""
        self.close_connection = True
        text = message or self.responses.get(code, ("Bad request",))[0]
        self._send(code, BadRequest(f"{text}.".replace("..", ".")).to_body())

    def _drain(self) -> None:
        """After answering without reading the whole body: stop sending, then read (and drop) what the
        client is still sending for a moment, so closing does not reset the connection before it has
        read the answer."""
        try:
            self.connection.shutdown(socket.SHUT_WR)
            self.connection.settimeout(0.5)
            for _ in range(64):  # at most 64 × 64 KiB
                if not self.connection.recv(65536):
                    break
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: one line per request would drown the notebook or terminal


def _json_bytes(payload: dict) -> bytes:
    return json.dumps(payload, ensure_ascii=False).encode("utf-8")


class OfflineModelServer(ThreadingHTTPServer):
    """The offline model on a socket: a thread per connection, with the limits above."""

    request_queue_size = BACKLOG
    daemon_threads = True

    def __init__(self, address: tuple[str, int], *, max_body_bytes: int = MAX_BODY_BYTES,
                 idle_timeout: float = IDLE_TIMEOUT, request_timeout: float = REQUEST_TIMEOUT) -> None:
        self.max_body_bytes, self.idle_timeout, self.request_timeout = max_body_bytes, idle_timeout, request_timeout
        super().__init__(address, _Handler)


def serve(port: int, host: str = "127.0.0.1") -> None:
    """Serve the offline model at `http://host:port/v1/responses` until Ctrl-C or SIGTERM."""
    server = OfflineModelServer((host, port))
    in_main = threading.current_thread() is threading.main_thread()  # signals only work there

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt  # leave serve_forever the same way Ctrl-C does

    previous = signal.signal(signal.SIGTERM, stop) if in_main else None
    print(f"offline model listening on http://{host}:{server.server_address[1]}/v1 (POST /v1/responses); "
          "Ctrl-C to stop", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if previous is not None:  # None: not the main thread, or a handler Python did not install
            signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> None:
    """`python -m course_lib.offline_model --port 8765 [--host 127.0.0.1]`."""
    parser = argparse.ArgumentParser(
        prog="python -m course_lib.offline_model", description="Serve the deterministic offline model over HTTP."
    )
    parser.add_argument("--port", type=int, default=8765, help="port to listen on (0: any free port)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: local only)")
    args = parser.parse_args(argv)
    serve(args.port, args.host)
