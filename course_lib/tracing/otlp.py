"""SpanRecords as OTLP, the protocol every OpenTelemetry backend reads: JSON or protobuf.

    to_otlp_json(records)      # an ExportTraceServiceRequest as OTLP/JSON (a dict)
    to_otlp_proto(records)     # the same as protobuf bytes (opentelemetry-proto)
    post(records, endpoint)    # POST them to ENDPOINT/v1/traces (the receiver says 2xx)
    JsonSpanExporter(endpoint) # an SDK exporter that posts OTLP/JSON with the standard library only

`JsonSpanExporter` is what a traced server (`serve`) uses: it imports nothing beyond the SDK and
`urllib`, so a server that exports its spans starts about as fast as one that does not (the
protobuf exporter pulls in `requests` and the generated protobuf modules: most of a second).
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Sequence
from typing import Any

from course_lib.tracing.records import SpanRecord

_KIND_NUMBERS = {"UNSPECIFIED": 0, "INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5}
_STATUS_NUMBERS = {"UNSET": 0, "OK": 1, "ERROR": 2}


def _json_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [_json_value(v) for v in value]}}
    return {"stringValue": str(value)}


def _by_service(records: Sequence[SpanRecord]) -> dict[str, list[SpanRecord]]:
    grouped: dict[str, list[SpanRecord]] = {}
    for record in records:
        grouped.setdefault(record.service, []).append(record)
    return grouped


def to_otlp_json(records: Sequence[SpanRecord], resource: dict[str, str] | None = None) -> dict[str, Any]:
    """An OTLP/JSON `ExportTraceServiceRequest` holding `records` (ids as hex, as OTLP/JSON writes them),
    one resource per `service.name`, each with the `resource` attributes added."""
    return {"resourceSpans": [{
        "resource": {"attributes": [{"key": k, "value": {"stringValue": v}}
                                    for k, v in {"service.name": service, **(resource or {})}.items()]},
        "scopeSpans": [{"scope": {"name": "course_lib.tracing"}, "spans": [{
            "traceId": r.trace_id, "spanId": r.span_id, **({"parentSpanId": r.parent_id} if r.parent_id else {}),
            "name": r.name, "kind": _KIND_NUMBERS.get(r.kind, 0),
            "startTimeUnixNano": str(r.start), "endTimeUnixNano": str(r.end),
            "attributes": [{"key": k, "value": _json_value(v)} for k, v in r.attributes.items() if v is not None],
            "status": {"code": _STATUS_NUMBERS.get(r.status, 0)},
        } for r in spans]}],
    } for service, spans in _by_service(records).items()]}  # fmt: skip


def to_otlp_proto(records: Sequence[SpanRecord], resource: dict[str, str] | None = None) -> bytes:
    """The same request as protobuf bytes (what Phoenix and most collectors read at `/v1/traces`)."""
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    body = to_otlp_json(records, resource)
    for resource in body["resourceSpans"]:  # protobuf's JSON mapping wants ids as base64, not hex
        for span in resource["scopeSpans"][0]["spans"]:
            for key in ("traceId", "spanId", "parentSpanId"):
                if key in span:
                    span[key] = _base64(span[key])
    return json_format.ParseDict(body, ExportTraceServiceRequest()).SerializeToString()


def _base64(hex_id: str) -> str:
    import base64

    return base64.b64encode(bytes.fromhex(hex_id)).decode()


def post(records: Sequence[SpanRecord], endpoint: str, *, protobuf: bool = False, timeout: float = 10.0,
         resource: dict[str, str] | None = None) -> int:
    """POST `records` to `endpoint` + `/v1/traces`; the HTTP status (2xx: accepted).

    Raises:
        OSError: nothing answered at `endpoint` (urllib's `URLError` is one).
    """
    if protobuf:
        body, media = to_otlp_proto(records, resource), "application/x-protobuf"
    else:
        body, media = json.dumps(to_otlp_json(records, resource)).encode(), "application/json"
    request = urllib.request.Request(endpoint.rstrip("/") + "/v1/traces", data=body, method="POST",
                                     headers={"Content-Type": media})  # fmt: skip
    with urllib.request.urlopen(request, timeout=timeout) as answer:  # noqa: S310 - a local http URL, checked by callers
        return answer.status


class JsonSpanExporter:
    """An OpenTelemetry SDK `SpanExporter` posting OTLP/JSON to `endpoint` with `urllib`."""

    def __init__(self, endpoint: str) -> None:
        self.endpoint = endpoint

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace.export import SpanExportResult

        from course_lib.tracing.records import from_sdk

        try:
            status = post([from_sdk(span) for span in spans], self.endpoint, timeout=5.0)
        except OSError:
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS if 200 <= status < 300 else SpanExportResult.FAILURE

    def shutdown(self) -> None:
        pass

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True
