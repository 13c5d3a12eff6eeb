"""HTTP for the offline model: `handle` (one httpx request → response), `offline_transport` (an
httpx transport that answers in-process: no network at all) and `serve`/`main`, a real local server.

The local server (`OfflineModelServer`) behaves like a real endpoint, whatever a client sends:
every request gets an HTTP answer, a refusal in the OpenAI error shape (`{"error": {message, type,
param, code}}`) — 400 for a malformed request line, header, Content-Length or chunk, or a body
that is no JSON; 413 for a body over MAX_BODY_BYTES (a declared length over it is refused before a
byte of the body is read, a chunked body as soon as its chunks pass it); 408 for a request that
does not arrive within REQUEST_TIMEOUT; 503 for a connection over MAX_CONNECTIONS; 500 if the
model itself fails. A kept-alive connection waits at most IDLE_TIMEOUT for its next request. Each
reply goes out in one write with TCP_NODELAY: headers and body written apart cost ~44 ms per
kept-alive request (Nagle's algorithm meets the client's delayed ACK; `benchmarks/http_server.py`).
A streamed reply (`stream: true`) is chunked instead: the headers with the first event, then a
chunk per event, each written as it comes.

Bounded whatever the clients do: a thread per connection, at most MAX_CONNECTIONS of them (BACKLOG
more wait in the kernel before accept), and MAX_ACTIVE workers that read the bodies and run the
model — a body is read only once a worker takes its request, so at most MAX_ACTIVE bodies (each
at most MAX_BODY_BYTES) and the model's work on them are in memory, however many clients send. Every limit is a
keyword of `OfflineModelServer` and a flag of the command line (`--help`).

Run it as a local HTTP server: `python -m course_lib.offline_model --port 8765` (`--vary`: the
stand-in, `standin`); a port already in use is one error line and exit status 2. In a test,
`running_server()` starts one in a thread and gives its base URL.
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
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, nullcontext
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from course_lib.lang import say
from course_lib.offline_model import envelopes, standin
from course_lib.offline_model.ids import Counter
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


# Limits of the socket layer: what a real endpoint has, sized for a course.
MAX_BODY_BYTES = 8 * 1024 * 1024  # a larger body is answered 413 without being read
IDLE_TIMEOUT = 30.0  # seconds a kept-alive connection may wait for its next request
REQUEST_TIMEOUT = 30.0  # seconds from a request's first byte to its last (a slow client is cut off)
BACKLOG = 128  # connections the kernel queues before accept (http.server's default is 5)
MAX_CONNECTIONS = 64  # connections served at once, a thread each; one more is answered 503
MAX_ACTIVE = 2  # requests whose body is read and answered at once (workers); the others wait
_SERVER_ERROR = "The server had an error while processing your request. Sorry about that!"
_BUSY = ("The server is busy: {count} connections are open, its limit. Try again shortly, or close "
         "connections you are not using.")
_NO_SLOT = "The server is busy: no worker came free in time for this request. Try again shortly."

# Two limits, two answers, on purpose:
# - Connections over MAX_CONNECTIONS get a 503 at once (with Retry-After), not a wait. What holds a
#   connection's thread is mostly a kept-alive client doing nothing (the openai SDK keeps its
#   connections open), so a waiting newcomer could wait a whole IDLE_TIMEOUT without a sign of
#   why; a 503 says so now, and the openai SDK retries a 503 by itself (uvicorn's
#   `limit_concurrency` answers the same way).
# - Requests over MAX_ACTIVE wait for a worker (until their own REQUEST_TIMEOUT, then a 503). What a
#   worker guards is memory — a body of up to MAX_BODY_BYTES, and the model's work on it, about ten
#   times that for a body that size — and a worker is held for one answer only (milliseconds, or
#   the body's upload), so a short wait is kinder than a refusal. A waiting request costs its
#   connection's thread and the kernel's socket buffers, never its body: a worker reads the body.
#   Two by default: the model is Python under one GIL, so a third at once adds memory, not speed.


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
        """Answer one request whose request line and headers were read: one of the server's
        MAX_ACTIVE workers reads the body within the cap and runs the model (waiting for a free one
        until the request's deadline), then this connection's thread sends the answer."""
        left = self._reader.deadline - time.monotonic() if self._reader.deadline is not None else 0.0
        job = self.server.workers.submit(self._compute)
        try:
            outcome = job.result(timeout=max(left, 0.0))
        except TimeoutError:  # no worker came free in time, or the worker's own read timed out
            if not job.cancel():
                outcome = job.result()  # it had started: its answer (or its own error) after all
            else:
                self.close_connection = True  # its body was never read: the connection is spent
                self._send(503, _server_error(_NO_SLOT), {"retry-after": "1"})
                self._drain()
                return
        if isinstance(outcome, _BadFraming):
            self.close_connection = True  # the rest of the body is not read: the connection is spent
            self._send(outcome.status, BadRequest(outcome.message).to_body())
            self._drain()
        elif outcome[3] is not None:
            self._send_events(outcome[3])  # stream: true
        else:
            self._send(*outcome[:3])

    def _compute(self) -> _BadFraming | tuple[int, bytes, dict[str, str], httpx.Response | None]:
        """In a worker: the body, then the model's answer as (status, payload, headers, stream),
        or the framing error that stops the body.

        Raises:
            OSError: the client went away, or the body did not arrive in time (TimeoutError).
        """
        try:
            content = self._body()
        except _BadFraming as bad:
            return bad
        try:
            with self.server.ids.answering(), (standin.varying(self.server.vary) if self.server.vary else nullcontext()):
                # this server's own count of requests (fresh ids, the same every run); the stand-in's variations
                response = handle(httpx.Request(self.command, f"http://offline{self.path}", content=content))
            streamed = response if response.headers.get("content-type", "").startswith("text/event-stream") else None
            return response.status_code, b"" if streamed else response.content, dict(response.headers), streamed
        except Exception:  # a bug must still get an answer: a 500 in the real API's shape, the detail logged
            logger.exception("the offline model failed on %s %s", self.command, self.path)
            return 500, _json_bytes(_server_error(_SERVER_ERROR)), {}, None

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


def _server_error(message: str) -> dict:
    """A 5xx body in the real API's shape (`type: server_error`)."""
    return {"error": {"message": message, "type": "server_error", "param": None, "code": None}}


class OfflineModelServer(ThreadingHTTPServer):
    """The offline model on a socket: a thread per connection, with the limits above (`vary=True` or
    `"hosted"`: the stand-in, `standin`; `"local"`: its local-server profile).

    Raises:
        OSError: the address cannot be bound (EADDRINUSE: the port is in use).
        ValueError: a limit is not positive.
    """

    request_queue_size = BACKLOG
    daemon_threads = True

    def __init__(self, address: tuple[str, int], *, max_body_bytes: int = MAX_BODY_BYTES,
                 idle_timeout: float = IDLE_TIMEOUT, request_timeout: float = REQUEST_TIMEOUT,
                 max_connections: int = MAX_CONNECTIONS, max_active: int = MAX_ACTIVE, vary: bool | str = False) -> None:  # fmt: skip
        limits = dict(max_body_bytes=max_body_bytes, idle_timeout=idle_timeout, request_timeout=request_timeout,
                      max_connections=max_connections, max_active=max_active)  # fmt: skip
        if bad := [name for name, value in limits.items() if not value > 0]:
            raise ValueError(f"limits must be positive: {', '.join(bad)}")
        self.max_body_bytes, self.idle_timeout, self.request_timeout = max_body_bytes, idle_timeout, request_timeout
        self.max_connections, self.max_active = max_connections, max_active
        self.vary = "hosted" if vary is True else vary or None  # the stand-in's profile (standin.py), or None
        if self.vary is not None and self.vary not in standin.PROFILES:
            raise ValueError(f"unknown stand-in profile {vary!r}; choose from {', '.join(standin.PROFILES)}")
        self.ids = Counter()  # a model instance of its own: its requests numbered from 0 (offline_model.ids)
        # The workers that read bodies and run the model (see MAX_ACTIVE). A fixed few threads
        # also keep the allocator's memory in a few per-thread arenas: when every connection's
        # own thread read its body, each kept an arena of its own, and the memory of one 8 MB
        # body after another stayed in all of them (glibc).
        self.workers = ThreadPoolExecutor(max_active, thread_name_prefix="offline-model")
        self._count_lock = threading.Lock()
        self.connections = 0  # served now, each by its thread
        self._refusing = 0  # 503s being sent now, each by a short-lived thread
        super().__init__(address, _Handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve the new connection in its own thread, or answer 503 if MAX_CONNECTIONS are open."""
        with self._count_lock:
            refuse = self.connections >= self.max_connections
            if refuse:
                if self._refusing >= self.max_connections:  # a flood: no thread for a courtesy either
                    self.shutdown_request(request)
                    return
                self._refusing += 1
            else:
                self.connections += 1
        if refuse:
            threading.Thread(target=self._refuse, args=(request,), daemon=True).start()
        else:
            super().process_request(request, client_address)

    def server_close(self) -> None:
        super().server_close()
        self.workers.shutdown(wait=False, cancel_futures=True)

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            with self._count_lock:
                self.connections -= 1

    def _refuse(self, sock: socket.socket) -> None:
        """A 503 in the API's shape for a connection over the cap, then close (after reading what
        the client already sent for a moment, so the close does not reset the answer away)."""
        body = _json_bytes(_server_error(_BUSY.format(count=self.max_connections)))
        head = (f"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                f"Connection: close\r\nContent-Length: {len(body)}\r\n\r\n").encode()  # fmt: skip
        try:
            sock.settimeout(1.0)
            sock.sendall(head + body)
            sock.shutdown(socket.SHUT_WR)
            sock.settimeout(0.2)
            for _ in range(16):
                if not sock.recv(65536):
                    break
        except OSError:
            pass
        finally:
            sock.close()
            with self._count_lock:
                self._refusing -= 1


def serve(port: int, host: str = "127.0.0.1", **limits: Any) -> None:
    """Serve the offline model at `http://host:port/v1/responses` until Ctrl-C or SIGTERM;
    `limits` are `OfflineModelServer`'s keywords.

    Raises:
        OSError: the address cannot be bound (the port is in use, or not this machine's).
    """
    _run(OfflineModelServer((host, port), **limits))


def _run(server: OfflineModelServer) -> None:
    """Serve until Ctrl-C or SIGTERM, then close the socket."""
    host, port = server.server_address[:2]
    in_main = threading.current_thread() is threading.main_thread()  # signals only work there

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt  # leave serve_forever the same way Ctrl-C does

    previous = signal.signal(signal.SIGTERM, stop) if in_main else None
    which = {None: "offline model", "hosted": "the stand-in (offline model, varied as real models vary)",
             "local": "the stand-in, local-server profile (offline model, varied as a local server answers)"}[server.vary]
    print(f"{which} listening on http://{host}:{port}/v1 (POST /v1/responses); "
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
    """`python -m course_lib.offline_model --port 8765 [--host 127.0.0.1] [--vary] [limits]`.

    Raises:
        SystemExit: with status 2 if the arguments are wrong (usage and one error line, argparse's
            way) or the address cannot be bound (one error line: a taken port is no usage mistake).
    """
    parser = argparse.ArgumentParser(
        prog="python -m course_lib.offline_model", description="Serve the deterministic offline model over HTTP."
    )
    parser.add_argument("--port", type=int, default=8765, help="port to listen on (0: any free port)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: local only)")
    parser.add_argument("--vary", nargs="?", const="hosted", choices=standin.PROFILES, default=None,
                        help="serve the stand-in: the same model varied as real models vary (dated model name, text "
                             "before calls, reordered arguments, reworded answers; course_lib.offline_model.standin; "
                             "`--vary local`: as a local server's /v1/responses answers, Ollama's)")
    limits = parser.add_argument_group("limits (each bounds what a client can make the server hold)")
    limits.add_argument("--max-body-bytes", type=int, default=MAX_BODY_BYTES,
                        help=f"largest request body; a larger one is answered 413 unread (default {MAX_BODY_BYTES})")
    limits.add_argument("--max-connections", type=int, default=MAX_CONNECTIONS,
                        help=f"connections served at once; one more is answered 503 (default {MAX_CONNECTIONS})")
    limits.add_argument("--max-active", type=int, default=MAX_ACTIVE,
                        help=f"requests read and answered at once; the others wait (default {MAX_ACTIVE})")
    limits.add_argument("--idle-timeout", type=float, default=IDLE_TIMEOUT,
                        help=f"seconds a kept-alive connection may wait for its next request (default {IDLE_TIMEOUT:g})")
    limits.add_argument("--request-timeout", type=float, default=REQUEST_TIMEOUT,
                        help=f"seconds from a request's first byte to its last (default {REQUEST_TIMEOUT:g})")
    args = parser.parse_args(argv)
    options = dict(max_body_bytes=args.max_body_bytes, max_connections=args.max_connections,
                   max_active=args.max_active, idle_timeout=args.idle_timeout, request_timeout=args.request_timeout)
    if bad := [name for name, value in options.items() if not value > 0]:
        parser.error(f"--{bad[0].replace('_', '-')} must be positive")
    try:
        server = OfflineModelServer((args.host, args.port), vary=args.vary or False, **options)
    except OSError as exc:  # in use, or an address not this machine's: one line (no usage block), not a traceback
        print(f"{parser.prog}: " + say("error: cannot listen on {host}:{port} ({reason}); choose another --port",
                                      "错误：无法在 {host}:{port} 上监听（{reason}）；请换一个 --port",
                                      host=args.host, port=args.port, reason=exc.strerror or exc),
              file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    _run(server)


@contextmanager
def running_server(*, vary: bool | str = False, host: str = "127.0.0.1", port: int = 0, **limits: Any) -> Iterator[str]:
    """A local server in a thread of this process for the block, on a free port (`port=0`); yields
    its base URL, `http://127.0.0.1:<port>/v1` (set it as OPENAI_BASE_URL, and without `/v1` as
    ANTHROPIC_BASE_URL). `vary=True`: the stand-in (`standin`), `vary="local"` its local-server
    profile. Shut down and closed afterwards.

    Raises:
        OSError: the address cannot be bound.
    """
    server = OfflineModelServer((host, port), vary=vary, **limits)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True,
                              name="offline-model-server")
    thread.start()
    try:
        yield f"http://{host}:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
