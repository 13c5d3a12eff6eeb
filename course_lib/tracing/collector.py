"""An OTLP/HTTP receiver on 127.0.0.1: the spans of other processes, into a recording.

    collector = Collector(keep).start()      # keep(records): called with each batch of SpanRecords
    collector.url                            # http://127.0.0.1:PORT: an OTLP exporter's endpoint
    collector.close()

Every OpenTelemetry SDK exports spans over OTLP; over HTTP that is `POST /v1/traces` with an
`ExportTraceServiceRequest`, as protobuf (`application/x-protobuf`: Python's and Claude Code's
exporters) or as JSON (`application/json`: the JavaScript exporters' default). The receiver reads
both, answers `200` with an empty `ExportTraceServiceResponse` as the protocol asks, and refuses what
it cannot read with `400` (a body that is not OTLP) or `415` (another media type) so an exporter
logs why. It listens on 127.0.0.1 only, on a free port, and keeps nothing itself: each batch goes
to `keep`.
"""

from __future__ import annotations

import gzip
import json
import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from course_lib.tracing.records import SpanRecord, from_otlp_json, from_otlp_proto

MAX_BODY = 16 * 1024 * 1024  # bytes: a batch far above what a course run sends


class Collector:
    """Receive OTLP/HTTP traces on a free port of 127.0.0.1 and hand them to `keep`."""

    def __init__(self, keep: Callable[[Sequence[SpanRecord]], None]) -> None:
        self.keep = keep
        self.batches = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="otlp-collector", daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> Collector:
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop listening (idempotent)."""
        if self._thread.is_alive():
            self._server.shutdown()
        self._server.server_close()


def decode(body: bytes, content_type: str) -> list[SpanRecord]:
    """The spans of one OTLP/HTTP trace export body.

    Raises:
        ValueError: the body is not an OTLP trace export in that media type.
        LookupError: the media type is neither protobuf nor JSON.
    """
    media = content_type.split(";")[0].strip().lower()
    if media == "application/json":
        value = json.loads(body or b"{}")
        if not isinstance(value, dict):
            raise ValueError("an OTLP/JSON body is an object")
        return from_otlp_json(value)
    if media in ("application/x-protobuf", "application/protobuf"):
        from google.protobuf.message import DecodeError
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

        request = ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except DecodeError as error:
            raise ValueError(f"not an OTLP protobuf body: {error}") from None
        return from_otlp_proto(request)
    raise LookupError(media or "no content-type")


def _handler_for(collector: Collector) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def handle_one_request(self) -> None:
            try:
                super().handle_one_request()
            except OSError:  # the sender went away (reset, or closed mid-body): no one to answer, nothing to print
                self.close_connection = True  # (socketserver would print its traceback into the learner's cell)

        def do_POST(self) -> None:
            if self.path.split("?")[0] != "/v1/traces":
                return self._answer(404, b"only /v1/traces is served here", "text/plain")
            length = int(self.headers.get("content-length") or 0)
            if length > MAX_BODY:
                self.close_connection = True
                return self._answer(413, b"body too large", "text/plain")
            body = self.rfile.read(length)
            if self.headers.get("content-encoding", "").lower() == "gzip":
                try:
                    body = gzip.decompress(body)
                except OSError:
                    return self._answer(400, b"the gzip body could not be read", "text/plain")
            content_type = self.headers.get("content-type", "")
            try:
                records = decode(body, content_type)
            except LookupError:
                return self._answer(415, b"send application/x-protobuf or application/json", "text/plain")
            except ValueError as error:
                return self._answer(400, str(error).encode(), "text/plain")
            collector.batches += 1
            collector.keep(records)
            # An empty ExportTraceServiceResponse, in the request's own encoding.
            if content_type.startswith("application/json"):
                self._answer(200, b"{}", "application/json")
            else:
                self._answer(200, b"", "application/x-protobuf")

        def _answer(self, status: int, body: bytes, content_type: str) -> None:
            self.send_response_only(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass  # quiet: the spans are the record

    return Handler
