"""A recording reverse proxy: whatever a framework sends over HTTP, kept as it crossed.

    with HttpTap("http://127.0.0.1:8765") as tap:   # upstream: the offline model, or an MCP server
        ...                                          # point the framework at tap.url instead
        tap.exchanges[0].request, tap.exchanges[0].response

A framework we do not own (the Agents SDK, pydantic-ai, Mastra in Node) makes its own HTTP
client, so the course's in-process capture (`wire.HttpCapture`) cannot sit inside it. The tap sits
on the wire instead: it listens on a free local port, forwards every request unchanged to the
upstream server and every response unchanged back, and records each exchange as a
`wire.HttpExchange` (method, path, the request and response bodies parsed as JSON; a
server-sent event stream as its text), and when it crossed (`times`: when the request arrived and
when the response ended). Headers are forwarded but not kept (they may carry a key).

Responses are passed on as they arrive, chunk by chunk, so a streamed answer or a long-lived MCP
event stream is not held back; an exchange is in `exchanges` from its request on, with its
`response` filled in as the response ends, before its last chunk is sent, so a client that has
read a whole answer finds it recorded (as `HttpCapture` does). Upstream is asked for an
uncompressed body, so what is recorded is what the client read.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from course_lib.wire import HttpExchange

# Hop-by-hop headers (RFC 9110 §7.6.1) and the ones the tap sets itself.
_NOT_FORWARDED = {"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
                  "host", "content-length", "accept-encoding"}  # fmt: skip


class HttpTap:
    """Listen on 127.0.0.1 (a free port), forward to `upstream`, record every exchange."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.exchanges: list[HttpExchange] = []
        self.times: list[tuple[float, float]] = []  # (request arrived, response ended), wall clock, per exchange
        self._lock = threading.Lock()
        self._client = httpx.Client(timeout=httpx.Timeout(60.0, read=None))  # a stream may wait long between events
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="http-tap", daemon=True)

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        """The tap's base URL: the upstream's paths are served under it unchanged."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> HttpTap:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop listening and close the upstream client (idempotent)."""
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()
        self._client.close()

    def __enter__(self) -> HttpTap:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _begin(self, exchange: HttpExchange) -> int:
        with self._lock:
            self.exchanges.append(exchange)
            self.times.append((time.time(), 0.0))
            return len(self.exchanges) - 1

    def _finish(self, index: int, status: int, body: bytes) -> None:
        with self._lock:
            self.exchanges[index] = replace(self.exchanges[index], status=status, response=_json(body))
            if not self.times[index][1]:  # the first finish: before the last chunk went out, not after
                self.times[index] = (self.times[index][0], time.time())


def _json(raw: bytes) -> Any:
    """A body as the record keeps it: parsed JSON, else its text (an event stream), None when empty."""
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return raw.decode("utf-8", "replace")


def _handler_for(tap: HttpTap) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as every client here expects

        def handle_one_request(self) -> None:
            try:
                super().handle_one_request()
            except OSError:  # the client went away (reset, or closed mid-body): no one to answer, nothing to print
                self.close_connection = True  # (socketserver would print its traceback into the learner's cell)

        def _forward(self) -> None:
            try:
                body = self._body()
            except ValueError:  # a chunk size that is no number: the request cannot be read, so say so
                self.close_connection = True
                self._answer(400, b"the tap could not read the request body")
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _NOT_FORWARDED}
            index = tap._begin(HttpExchange(self.command, self.path.split("?")[0], _json(body), 0, None))
            request = tap._client.build_request(self.command, tap.upstream + self.path, headers=headers, content=body)
            try:
                response = tap._client.send(request, stream=True)
            except httpx.HTTPError as error:  # upstream down: say so in the shape of an HTTP answer
                text = f"the tap could not reach {tap.upstream}: {error}".encode()
                tap._finish(index, 502, text)
                self._answer(502, text)
                return
            try:
                chunks: list[bytes] = []

                def passing() -> Any:
                    for chunk in response.iter_raw():
                        chunks.append(chunk)
                        yield chunk
                    # recorded before the last chunk goes out: a client that has read the whole answer
                    # finds it in `exchanges` (the `finally` below records what a broken answer carried)
                    tap._finish(index, response.status_code, b"".join(chunks))

                try:
                    self._reply(response.status_code, response.headers, passing())
                except OSError:  # the client went away mid-answer: nothing left to deliver
                    self.close_connection = True
                finally:
                    tap._finish(index, response.status_code, b"".join(chunks))
            finally:
                response.close()

        def _answer(self, status: int, text: bytes) -> None:
            """The tap's own answer (plain text), to a client that may already be gone."""
            try:
                self._reply(status, {"content-type": "text/plain"}, iter([text]))
            except OSError:
                self.close_connection = True

        def _body(self) -> bytes:
            if "chunked" in self.headers.get("transfer-encoding", "").lower():
                parts = []
                while (size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)) > 0:
                    parts.append(self.rfile.read(size))
                    self.rfile.readline()
                while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return b"".join(parts)
            return self.rfile.read(int(self.headers.get("content-length") or 0))

        def _reply(self, status: int, headers: Any, chunks: Any) -> None:
            self.send_response_only(status)
            for key, value in headers.items():
                if key.lower() not in _NOT_FORWARDED:
                    self.send_header(key, value)
            bodiless = self.command == "HEAD" or status in (204, 304) or 100 <= status < 200
            if not bodiless:
                self.send_header("Transfer-Encoding", "chunked")  # passed on as it arrives
            self.end_headers()
            if bodiless:
                return
            for chunk in chunks:
                if chunk:
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                    self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = _forward

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the exchanges are the record

    return Handler
