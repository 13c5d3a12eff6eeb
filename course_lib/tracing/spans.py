"""The course host's spans, named and filled as the OpenTelemetry GenAI conventions say.

`loop.run_loop` is an agent: it sends model requests and executes the tools the model calls. Three
decorators make its spans, and only while a recording runs (`recording`): otherwise they cost one
check and make nothing.

    invoke_agent run_loop                 INTERNAL  gen_ai.operation.name invoke_agent, gen_ai.agent.name
      chat gpt-4.1                        CLIENT    gen_ai.operation.name chat, gen_ai.provider.name openai,
                                                    gen_ai.request.model, openai.api.type responses,
                                                    gen_ai.response.id, gen_ai.response.model, server.address/port
      execute_tool fs__read_text_file     INTERNAL  gen_ai.operation.name execute_tool, gen_ai.tool.name (the name
                                                    the model called), gen_ai.tool.call.id (its call_id),
                                                    gen_ai.tool.type function; error.type and status ERROR on a failure
        MCP send tools/call read_text_file  CLIENT  made by the `mcp` SDK itself: mcp.method.name, jsonrpc.request.id
          tools/call read_text_file       SERVER    made by the `mcp` server, a child through `_meta.traceparent`

The names follow the GenAI semantic conventions (`{operation} {model}`, `execute_tool {tool}`,
`invoke_agent {agent}`, read in open-telemetry/semantic-conventions, docs/gen-ai, before they moved to
their own repository in 2026); the MCP spans are the `mcp` SDK's own (`mcp/shared/jsonrpc_dispatcher.py`,
`mcp/server/_otel.py`). The host runs its MCP calls on an event loop in another thread (`host.McpHost`);
anyio's portal carries the caller's context across, so the SDK's span is a child of the tool's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar
from urllib.parse import urlsplit

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

F = TypeVar("F", bound=Callable[..., Any])

_tracer = trace.get_tracer("course_lib")


def agent(name: str) -> Callable[[F], F]:
    """Decorate an agent loop: each call is one `invoke_agent {name}` span, the parent of its requests."""

    def wrap(loop: F) -> F:
        @functools.wraps(loop)
        def traced(*args: Any, **kwargs: Any) -> Any:
            attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
            with _tracer.start_as_current_span(f"invoke_agent {name}", kind=SpanKind.INTERNAL, attributes=attributes):
                return loop(*args, **kwargs)

        return traced  # type: ignore[return-value]

    return wrap


def model_request(create: Callable[..., Any], client: Any) -> Callable[..., Any]:
    """`create` (a Responses `create`) made one `chat {model}` span per request, filled from the answer."""

    @functools.wraps(create)
    def traced(**request: Any) -> Any:
        model = str(request.get("model", ""))
        attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                                      "gen_ai.request.model": model, "openai.api.type": "responses"}  # fmt: skip
        address = urlsplit(str(getattr(client, "base_url", "") or ""))
        if address.hostname:
            attributes["server.address"] = address.hostname
            if address.port:
                attributes["server.port"] = address.port
        with _tracer.start_as_current_span(f"chat {model}", kind=SpanKind.CLIENT, attributes=attributes) as span:
            response = create(**request)
            if span.is_recording():
                span.set_attributes({"gen_ai.response.id": str(getattr(response, "id", "")),
                                     "gen_ai.response.model": str(getattr(response, "model", ""))})  # fmt: skip
            return response

    return traced


def tool_execution(execute: F) -> F:
    """Decorate `execute(call, host)`: one `execute_tool {name}` span per call, with its `call_id`.

    `execute` returns (feedback item, trace link); a link with an `error_code` marks the span failed.
    """

    @functools.wraps(execute)
    def traced(call: Any, *args: Any, **kwargs: Any) -> Any:
        attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": str(call.name),
                      "gen_ai.tool.call.id": str(call.call_id), "gen_ai.tool.type": "function"}  # fmt: skip
        with _tracer.start_as_current_span(f"execute_tool {call.name}", kind=SpanKind.INTERNAL, attributes=attributes) as span:
            item, link = execute(call, *args, **kwargs)
            if link.error_code is not None and span.is_recording():
                span.set_attribute("error.type", link.error_code)
                span.set_status(Status(StatusCode.ERROR))
            return item, link

    return traced  # type: ignore[return-value]
