"""One finished span, whichever process made it: `SpanRecord`.

A span reaches the course two ways. Made in this process (the course's host, pydantic-ai, the Agents
SDK, the `mcp` SDK's client), it is an OpenTelemetry SDK `ReadableSpan`; made in another process (a
server over stdio, Mastra in Node, LangGraph in its own venv, the Claude Code CLI), it arrives as
OTLP, the protocol every OpenTelemetry exporter speaks (`collector`). Both become the same small
record, so the tree, the links and the viewer read one shape.

Ids are kept as lowercase hex, as W3C `traceparent` writes them (32 and 16 digits); a root span has
no `parent_id`. Attribute values are plain Python values (a string, a number, a bool, a list).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}
_STATUS = {0: "UNSET", 1: "OK", 2: "ERROR"}


@dataclass(frozen=True)
class SpanRecord:
    """A finished span: where it sits (trace, span, parent), what it is (name, kind, attributes) and
    who made it (`service`: the resource's `service.name`)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: str  # INTERNAL, CLIENT, SERVER, …
    attributes: dict[str, Any] = field(default_factory=dict)
    status: str = "UNSET"
    service: str = ""
    start: int = 0  # ns since the epoch: only for ordering siblings, never shown
    end: int = 0

    def get(self, key: str, default: Any = None) -> Any:
        return self.attributes.get(key, default)


def from_sdk(span: Any) -> SpanRecord:
    """A record of an OpenTelemetry SDK `ReadableSpan` (this process's spans)."""
    context = span.get_span_context()
    parent = span.parent
    return SpanRecord(
        trace_id=f"{context.trace_id:032x}", span_id=f"{context.span_id:016x}",
        parent_id=None if parent is None else f"{parent.span_id:016x}", name=span.name,
        kind=span.kind.name, attributes={k: _plain(v) for k, v in (span.attributes or {}).items()},
        status=span.status.status_code.name, service=str(span.resource.attributes.get("service.name", "")),
        start=span.start_time or 0, end=span.end_time or 0)  # fmt: skip


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


# ---- OTLP: the protobuf messages (opentelemetry-proto) and their JSON form --------------------------


def from_otlp_proto(request: Any) -> list[SpanRecord]:
    """The spans of an OTLP `ExportTraceServiceRequest` (protobuf)."""
    records = []
    for resource_spans in request.resource_spans:
        service = next((_any_value(a.value) for a in resource_spans.resource.attributes if a.key == "service.name"), "")
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                records.append(SpanRecord(
                    trace_id=span.trace_id.hex(), span_id=span.span_id.hex(),
                    parent_id=span.parent_span_id.hex() or None, name=span.name, kind=_KINDS.get(span.kind, "UNSPECIFIED"),
                    attributes={a.key: _any_value(a.value) for a in span.attributes},
                    status=_STATUS.get(span.status.code, "UNSET"), service=str(service),
                    start=span.start_time_unix_nano, end=span.end_time_unix_nano))  # fmt: skip
    return records


def _any_value(value: Any) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_any_value(v) for v in value.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: _any_value(kv.value) for kv in value.kvlist_value.values}
    if kind == "bytes_value":
        return value.bytes_value.hex()
    return None if kind is None else getattr(value, kind)


def from_otlp_json(body: dict[str, Any]) -> list[SpanRecord]:
    """The spans of an OTLP/JSON body (what the JavaScript exporters send by default). OTLP/JSON
    writes ids as hex and 64-bit integers as strings: both are read as such."""
    records = []
    for resource_spans in body.get("resourceSpans") or []:
        resource = {a.get("key"): _json_value(a.get("value") or {}) for a in (resource_spans.get("resource") or {}).get("attributes") or []}
        for scope_spans in resource_spans.get("scopeSpans") or []:
            for span in scope_spans.get("spans") or []:
                records.append(SpanRecord(
                    trace_id=str(span.get("traceId", "")).lower(), span_id=str(span.get("spanId", "")).lower(),
                    parent_id=str(span.get("parentSpanId") or "").lower() or None, name=str(span.get("name", "")),
                    kind=_KINDS.get(_enum(span.get("kind"), "SPAN_KIND_"), "UNSPECIFIED"),
                    attributes={a.get("key"): _json_value(a.get("value") or {}) for a in span.get("attributes") or []},
                    status=_STATUS.get(_enum((span.get("status") or {}).get("code"), "STATUS_CODE_"), "UNSET"),
                    service=str(resource.get("service.name", "")),
                    start=int(span.get("startTimeUnixNano") or 0), end=int(span.get("endTimeUnixNano") or 0)))  # fmt: skip
    return records


_ENUM_NAMES = {"UNSPECIFIED": 0, "INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5,
               "UNSET": 0, "OK": 1, "ERROR": 2}  # fmt: skip


def _enum(value: Any, prefix: str) -> int:
    if isinstance(value, str) and not value.isdigit():
        return _ENUM_NAMES.get(value.removeprefix(prefix), 0)
    return int(value or 0)


def _json_value(value: dict[str, Any]) -> Any:
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [_json_value(v) for v in (value["arrayValue"].get("values") or [])]
    if "kvlistValue" in value:
        return {kv.get("key"): _json_value(kv.get("value") or {}) for kv in value["kvlistValue"].get("values") or []}
    return None
