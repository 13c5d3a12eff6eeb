"""HTTP for the offline model: `handle` (one httpx request → response), `offline_transport` (an
httpx transport that answers in-process: no network at all) and `serve`/`main`, a real local server.

Run it as a local HTTP server: `python -m course_lib.offline_model --port 8765`.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from course_lib.offline_model.response import respond
from course_lib.offline_model.validation import BadRequest


def _json_response(status: int, payload: dict, headers: dict[str, str] | None = None) -> httpx.Response:
    content = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    return httpx.Response(status, content=content, headers={"content-type": "application/json", **(headers or {})})


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return _json_response(status, BadRequest(message).to_body(), headers)


def handle(request: httpx.Request) -> httpx.Response:
    """Serve one HTTP request: POST …/responses → a Response body; errors in the OpenAI format
    (400 malformed body, 404 unknown path, 405 other methods)."""
    path = request.url.path
    if not path.rstrip("/").endswith("/responses"):
        return _error(404, f"Invalid URL ({request.method} {path})")
    if request.method != "POST":
        return _error(405, f"Method {request.method} is not allowed on {path}; use POST.", {"allow": "POST"})
    try:
        body = json.loads(request.content)
    except ValueError as exc:  # also covers bytes that are not UTF-8
        return _error(400, f"We could not parse the JSON body of your request: {exc}.")
    try:
        return _json_response(200, respond(body))
    except BadRequest as exc:
        return _json_response(400, exc.to_body())


def offline_transport() -> httpx.MockTransport:
    """An httpx transport that answers in-process with the offline model: no network at all."""
    return httpx.MockTransport(handle)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects

    def _relay(self) -> None:
        content = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        response = handle(httpx.Request(self.command, f"http://offline{self.path}", content=content))
        self.send_response(response.status_code)
        for key, value in response.headers.items():
            if key.lower() != "content-length":
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(response.content)))
        self.end_headers()
        self.wfile.write(response.content)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _relay

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: one line per request would drown the notebook or terminal


def serve(port: int, host: str = "127.0.0.1") -> None:
    """Serve the offline model at `http://host:port/v1/responses` until Ctrl-C or SIGTERM."""
    server = ThreadingHTTPServer((host, port), _Handler)
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
