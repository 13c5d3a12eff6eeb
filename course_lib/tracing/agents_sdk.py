"""The OpenAI Agents SDK's own trace, as OpenTelemetry spans.

The Agents SDK traces every run in a format of its own (`agents.tracing`: a trace of agent, response
and function spans), and by default sends it to the OpenAI platform. It does not emit OpenTelemetry
(openai-agents 0.24: no `opentelemetry` import in the package) and its function span carries the
tool's name and arguments, not the model's `call_id` (`FunctionSpanData`: name, input, output,
mcp_data). Two public hooks close the gap:

- `OpenTelemetrySpans`, a `TracingProcessor`: set it with `agents.set_trace_processors([...])`,
  which *replaces* the default processor, so nothing goes to the platform. Each SDK span becomes an
  OpenTelemetry span under the GenAI names (`invoke_agent reader`, `chat gpt-4.1`,
  `execute_tool read_text_file`). A function span is made the current OpenTelemetry span while the
  tool runs, so the `mcp` SDK's own client span (`MCP send tools/call …`, `jsonrpc.request.id`) is
  its child, and the `traceparent` the `mcp` client puts in `_meta` carries the trace to the server.
- `ToolCallIds`, a `RunHooks`: `on_tool_start` gets a `ToolContext` that knows the `tool_call_id`;
  it writes it on the current span as `gen_ai.tool.call.id`. Pass it to `Runner.run(…, hooks=…)`.

    from agents import set_trace_processors
    set_trace_processors([OpenTelemetrySpans()])
    await Runner.run(agent, task, hooks=ToolCallIds())

Only public APIs of the SDK are used (`TracingProcessor`, `RunHooks`, the span data's `type` and
fields); `tests/test_tracing_frameworks.py` pins the span types this maps.
"""

from __future__ import annotations

from typing import Any

from agents import RunHooks
from agents.tracing import TracingProcessor
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

_tracer = trace.get_tracer("course_lib.tracing.agents_sdk")


def _describe(data: Any) -> tuple[str, SpanKind, dict[str, Any]]:
    """An SDK span's data as an OpenTelemetry (name, kind, attributes) at its start."""
    kind = getattr(data, "type", "")
    if kind == "agent":
        return (f"invoke_agent {data.name}", SpanKind.INTERNAL,
                {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": data.name})  # fmt: skip
    if kind == "response":
        return ("chat", SpanKind.CLIENT, {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                                          "openai.api.type": "responses"})  # fmt: skip
    if kind == "function":
        return (f"execute_tool {data.name}", SpanKind.INTERNAL,
                {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": data.name, "gen_ai.tool.type": "function"})
    if kind == "mcp_tools":
        return (f"list_tools {data.server}", SpanKind.INTERNAL, {"mcp.server.name": str(data.server)})
    return (str(kind or "span"), SpanKind.INTERNAL, {})


class OpenTelemetrySpans(TracingProcessor):
    """The Agents SDK's trace and spans, mirrored as OpenTelemetry spans (see the module docstring)."""

    def __init__(self) -> None:
        self._spans: dict[str, Any] = {}  # SDK span or trace id → the OpenTelemetry span
        self._tokens: dict[str, Any] = {}  # SDK span id → the context token to detach at its end

    def on_trace_start(self, sdk_trace: Any) -> None:
        self._spans[sdk_trace.trace_id] = _tracer.start_span(str(sdk_trace.name), kind=SpanKind.INTERNAL,
                                                             attributes={"gen_ai.operation.name": "invoke_workflow"})  # fmt: skip

    def on_trace_end(self, sdk_trace: Any) -> None:
        span = self._spans.pop(sdk_trace.trace_id, None)
        if span is not None:
            span.end()

    def on_span_start(self, sdk_span: Any) -> None:
        parent = self._spans.get(sdk_span.parent_id or "") or self._spans.get(sdk_span.trace_id)
        name, kind, attributes = _describe(sdk_span.span_data)
        parent_context = trace.set_span_in_context(parent) if parent is not None else None
        span = _tracer.start_span(name, context=parent_context, kind=kind, attributes=attributes)
        self._spans[sdk_span.span_id] = span
        if sdk_span.span_data.type == "function":
            # The tool runs inside `with function_span(…)`, in this context: the MCP client's span
            # (and the traceparent it sends) must have this span as its parent.
            self._tokens[sdk_span.span_id] = otel_context.attach(trace.set_span_in_context(span))

    def on_span_end(self, sdk_span: Any) -> None:
        span = self._spans.pop(sdk_span.span_id, None)
        token = self._tokens.pop(sdk_span.span_id, None)
        if token is not None:
            otel_context.detach(token)
        if span is None:
            return
        data = sdk_span.span_data
        response = getattr(data, "response", None) if data.type == "response" else None
        if response is not None:
            span.update_name(f"chat {response.model}")
            span.set_attributes({"gen_ai.request.model": str(response.model), "gen_ai.response.model": str(response.model),
                                 "gen_ai.response.id": str(response.id)})  # fmt: skip
        if sdk_span.error:
            span.set_attribute("error.type", str(sdk_span.error.get("message", "error")))
            span.set_status(Status(StatusCode.ERROR))
        span.end()

    def shutdown(self) -> None:
        for span in self._spans.values():
            span.end()
        self._spans.clear()

    def force_flush(self) -> None:
        pass


class ToolCallIds(RunHooks):
    """Writes each function tool's `tool_call_id` on its span, as `gen_ai.tool.call.id`."""

    async def on_tool_start(self, context: Any, agent: Any, tool: Any) -> None:
        call_id = getattr(context, "tool_call_id", None)
        if call_id:
            trace.get_current_span().set_attribute("gen_ai.tool.call.id", str(call_id))
