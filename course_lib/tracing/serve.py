"""Run a Python server (or any module) with its spans sent to a recording's OTLP endpoint.

    python -m course_lib.tracing.serve ENDPOINT SERVICE MODULE [ARG…]
    python -m course_lib.tracing.serve http://127.0.0.1:4318 files course_lib.fs_server --root fixtures/workspace

An MCP server made with the `mcp` SDK already makes a span for every request it serves
(`mcp/server/_otel.py`: `tools/call read_text_file`, kind SERVER, with `mcp.method.name` and
`jsonrpc.request.id`), a child of the client's span when the request's `_meta` carries a
`traceparent`. What it lacks in a process of its own is somewhere to send them: this wrapper sets an
OpenTelemetry SDK provider whose exporter posts each span, as it ends, to ENDPOINT (OTLP/HTTP,
JSON, `otlp.JsonSpanExporter`) under `service.name` SERVICE, then runs MODULE as `python -m MODULE ARG…` would, with
`COURSE_OTEL=1` (the course's own servers keep the SDK's span only when it is set). The
server's stdout stays the protocol's: the exporter writes nothing there. ENDPOINT must be on this
machine (127.0.0.1 or localhost): spans never leave it.

A client may name the model's call in the request's `_meta` (Claude Code writes
`"claudecode/toolUseId": "toolu_…"` on every `tools/call`); the server's span then records it as
`gen_ai.tool.call.id` (`CallIdFromMeta`), so the span holds both ends of the link even when the
client sent no trace context.
"""

from __future__ import annotations

import os
import runpy
import sys
from typing import Any
from urllib.parse import urlsplit

USAGE = "usage: python -m course_lib.tracing.serve ENDPOINT SERVICE MODULE [ARG…]"


def setup(endpoint: str, service: str) -> None:
    """Install a global provider exporting every span to `endpoint` as it ends (OTLP/HTTP JSON).

    Raises:
        ValueError: `endpoint` is not an http URL on this machine.
    """
    address = urlsplit(endpoint)
    if address.scheme != "http" or address.hostname not in ("127.0.0.1", "localhost", "::1"):
        raise ValueError(f"spans stay on this machine: {endpoint!r} is not an http URL on 127.0.0.1")
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from course_lib.tracing.otlp import JsonSpanExporter

    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(SimpleSpanProcessor(JsonSpanExporter(endpoint)))  # type: ignore[arg-type]
    trace.set_tracer_provider(provider)


# Keys a client may use to name, in a request's `_meta`, the model's call the request carries.
CALL_ID_META_KEYS = ("claudecode/toolUseId",)  # Claude Code 2.1 writes the tool_use id there


class CallIdFromMeta:
    """Server middleware: a `tools/call` whose `_meta` names the model's call id (Claude Code's
    `claudecode/toolUseId`) gets it on the server's span as `gen_ai.tool.call.id`, the attribute the
    GenAI conventions give an `execute_tool` span, which the MCP server span is compatible with.
    It runs inside the SDK's `OpenTelemetryMiddleware`, whose span is then the current one."""

    async def __call__(self, ctx: Any, call_next: Any) -> Any:
        if ctx.method == "tools/call" and isinstance(ctx.meta, dict):
            call_id = next((ctx.meta[k] for k in CALL_ID_META_KEYS if isinstance(ctx.meta.get(k), str)), None)
            if call_id:
                from opentelemetry import trace

                trace.get_current_span().set_attribute("gen_ai.tool.call.id", call_id)
        return await call_next(ctx)


def _with_call_ids() -> None:
    """Every low-level `Server` made in this process gets `CallIdFromMeta` after the SDK's own span
    middleware. `Server.middleware` is the SDK's public list ("append one to server.middleware");
    reaching the instance a module builds inside its `main` takes wrapping `Server.__init__`, done here
    only, in the traced server's own process (tests/test_tracing.py fails if the list goes)."""
    from mcp.server.lowlevel.server import Server

    made = Server.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        made(self, *args, **kwargs)
        self.middleware.append(CallIdFromMeta())

    Server.__init__ = init  # type: ignore[method-assign]


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) < 3:
        print(USAGE, file=sys.stderr)
        return 2
    endpoint, service, module = args[:3]
    try:
        setup(endpoint, service)
    except ValueError as error:
        print(f"course_lib.tracing.serve: {error}", file=sys.stderr)
        return 2
    # The course's servers drop the SDK's per-message span unless asked (`fs_server.without_tracing`).
    os.environ["COURSE_OTEL"] = "1"
    _with_call_ids()
    sys.argv = [module, *args[3:]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
