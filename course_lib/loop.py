"""Feedback: executing the model's calls and wiring the results back into the next request.

One turn of the loop:

1. send the task (and everything so far) with the tool declarations;
2. walk *every* output item by type — never assume `output[0]` is the call;
3. for each `function_call`: parse the `arguments` text, route the alias, send `tools/call`;
4. append the model's output items and one `function_call_output` per call, under the call's
   own `call_id`;
5. stop on a final message, on a response that did not complete (`status` is not "completed":
   `incomplete_details.reason` says why, e.g. "max_output_tokens"), or when the step budget runs
   out — and say which.

A failed call is fed back as a failure (`{"ok": false, "error": {...}}`); it is never turned into
"read successfully". The trace links each model `call_id` to the MCP JSON-RPC `id` that carried it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from openai import OpenAI
from openai.types.responses import Response, ResponseFunctionToolCall

from course_lib.arguments import ArgumentsError, parse_arguments_text
from course_lib.backend import model_name
from course_lib.host import McpHost, ToolCall, UnknownAlias
from course_lib.results import result_text, tool_error_code
from course_lib.tracing import spans as traced  # OpenTelemetry spans, made only while a recording runs


@dataclass(frozen=True)
class TraceLink:
    """What happened to one model call, from its `call_id` to the feedback text."""

    call_id: str
    alias: str
    arguments_text: str
    arguments: dict[str, Any] | None = None
    server: str | None = None
    tool: str | None = None
    mcp_id: int | str | None = None
    error_code: str | None = None
    output: str = ""

    @property
    def ok(self) -> bool:
        return self.error_code is None


@dataclass
class LoopResult:
    """How the loop ended. `status` is "completed" only when the model gave a final message in a
    completed response; otherwise `reason` says why: "max_steps", "no_answer", or why the last
    response did not complete ("max_output_tokens", "content_filter", ...: `response_stop`)."""

    status: Literal["completed", "incomplete"]
    answer: str | None
    reason: str | None
    steps: int
    responses: list[Response] = field(default_factory=list)
    context: list[dict[str, Any]] = field(default_factory=list)
    trace: list[TraceLink] = field(default_factory=list)


def error_output(code: str, message: str, kind: str = "tool") -> str:
    """A failure as the model reads it: `kind` is "app" (refused before sending), "tool" (the tool
    ran and failed: MCP `isError`) or "protocol" (a JSON-RPC error: the call never reached a tool)."""
    return json.dumps({"ok": False, "error": {"code": code, "message": message, "kind": kind}}, ensure_ascii=False)


def feedback_output(call: ToolCall) -> tuple[str, str | None]:
    """The `function_call_output.output` text for one executed call, and its error code (or None).

    Success: the tool's text, unchanged. Failure: an error object the model can act on.
    """
    if call.protocol_error is not None:
        message = f"JSON-RPC error {call.protocol_error.code}: {call.protocol_error.message}"
        return error_output("UPSTREAM_ERROR", message, kind="protocol"), "UPSTREAM_ERROR"
    assert call.result is not None
    if call.result.is_error:
        code = tool_error_code(call.result)
        text = result_text(call.result)
        message = text.removeprefix(f"{code}: ")
        return error_output(code, message), code
    return result_text(call.result), None


def feedback_item(call_id: str, output: str) -> dict[str, Any]:
    """The input item that carries a result back to the model, tied to the original `call_id`."""
    return {"type": "function_call_output", "call_id": call_id, "output": output}


@traced.tool_execution
def execute_call(call: ResponseFunctionToolCall, host: McpHost) -> tuple[dict[str, Any], TraceLink]:
    """Parse, route and execute one `function_call`; return its feedback item and trace link.

    Never raises for a bad call: an unknown tool or malformed arguments become an error feedback
    (nothing is sent to any server), exactly as a tool failure would.
    """
    link = TraceLink(call_id=call.call_id, alias=call.name, arguments_text=call.arguments)
    try:
        route = host.route(call.name)
        arguments = parse_arguments_text(call.arguments)
    except UnknownAlias as error:
        output = error_output("INVALID_INPUT", str(error), kind="app")
        return feedback_item(call.call_id, output), replace(link, error_code="INVALID_INPUT", output=output)
    except ArgumentsError as error:
        output = error_output(error.code, error.message, kind="app")
        return feedback_item(call.call_id, output), replace(link, error_code=error.code, output=output)
    executed = host.call(route.alias, arguments)
    output, code = feedback_output(executed)
    link = replace(
        link, arguments=arguments, server=route.server, tool=route.tool,
        mcp_id=executed.mcp_id, error_code=code, output=output,
    )  # fmt: skip
    return feedback_item(call.call_id, output), link


def response_stop(response: Response) -> str | None:
    """None when `response.status` is "completed"; otherwise why it is not: its
    `incomplete_details.reason` ("max_output_tokens", "content_filter", ...) or the status itself
    ("failed", "cancelled", ...). A response that did not complete may hold cut-off text, or a call
    whose `arguments` text was cut mid-way: it is neither an answer nor a call to execute. (The
    real API always sends `status`; a stand-in response without one counts as completed.)"""
    if response.status in ("completed", None):
        return None
    details = response.incomplete_details
    return (details.reason if details is not None else None) or response.status or "unknown"


@traced.agent("run_loop")
def run_loop(
    client: OpenAI,
    host: McpHost,
    task: str | list[dict[str, Any]],
    *,
    model: str | None = None,
    max_steps: int = 4,
    tool_choice: Any = "auto",
    strict: bool = False,
    parallel_tool_calls: bool = True,
    reset_tool_choice: bool = True,
    max_output_tokens: int | None = None,
    create: Callable[..., Response] | None = None,
) -> LoopResult:
    """Run the model ⇄ tools loop until a final message or `max_steps` model requests.

    `task` is the user's request, or a ready-made input list. A `tool_choice` that forces a call
    applies until the model has made one, then becomes "auto" (`next_tool_choice`), unless
    `reset_tool_choice` is False. `max_output_tokens` (sent only when given) caps each response;
    a response that did not complete ends the loop as "incomplete" with its reason, its output
    neither executed nor added to `context` (the cut-off text stays in `responses[-1]`). Returns a
    `LoopResult`; it never raises for tool failures (they are fed back to the model), only for API
    errors. `create` sends each request instead of `client.responses.create` (same arguments, returns
    the Response), e.g. `streaming.StreamedRequests` to stream them.
    """
    context: list[dict[str, Any]] = [{"role": "user", "content": task}] if isinstance(task, str) else list(task)
    result = LoopResult(status="incomplete", answer=None, reason="max_steps", steps=0, context=context)
    for _ in range(max_steps):
        response = traced.model_request(create or client.responses.create, client)(  # `create`: e.g. streaming.StreamedRequests
            model=model or model_name(),
            input=context,
            tools=host.responses_tools(strict=strict),
            tool_choice=tool_choice,
            parallel_tool_calls=parallel_tool_calls,
            **({} if max_output_tokens is None else {"max_output_tokens": max_output_tokens}),
        )
        result.steps += 1
        result.responses.append(response)
        if (stop := response_stop(response)) is not None:
            result.reason = stop
            return result
        # Keep every output item (messages, reasoning, calls): the next request needs the context.
        context.extend(item.to_dict() for item in response.output)
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            result.answer = response.output_text or None
            result.status, result.reason = ("completed", None) if result.answer else ("incomplete", "no_answer")
            return result
        for call in calls:
            item, link = execute_call(call, host)
            context.append(item)
            result.trace.append(link)
        if reset_tool_choice:
            tool_choice = next_tool_choice(tool_choice)
    return result


def next_tool_choice(tool_choice: Any) -> Any:
    """The `tool_choice` for the requests after one that made calls.

    "required", a named function, or allowed tools in "required" mode oblige the model to call a
    tool in *every* response — after the results too — so a loop that keeps sending them never
    gets an answer and runs until its step limit. Once the forced call is made they become "auto"
    (allowed tools keep their list, in "auto" mode), as the OpenAI Agents SDK does by default
    (`Agent.reset_tool_choice`). "auto" and "none" stay as they are.
    """
    if tool_choice == "required":
        return "auto"
    if isinstance(tool_choice, dict) and tool_choice.get("type") == "function":
        return "auto"
    if isinstance(tool_choice, dict) and tool_choice.get("type") == "allowed_tools" and tool_choice.get("mode") == "required":
        return {**tool_choice, "mode": "auto"}
    return tool_choice

