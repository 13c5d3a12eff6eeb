"""One tool call followed across both wires of a framework's run: model ⇄ app, then app ⇄ server.

A framework is the app: it receives the model's `function_call`, sends `tools/call` to the MCP
server, and sends the result back as `function_call_output`. It keeps the link between the two
correlation domains (the model's `call_id`, the JSON-RPC `id`) to itself. `calls(run)` rebuilds
each call from what crossed, the way one debugs a framework from its wire:

- the model side: every `function_call` item in a response, the declaration it was made under
  (the request's `tools[…]`), the `function_call_output` with the same `call_id` in a later
  request, and the answer to that request (its message text);
- the server side: the `tools/call` request that carried the call — the next one, in order, with
  the same arguments (an MCP tool name is the model-side name, or its end after a framework's
  prefix: `files_read_text_file`) — and the response with the same JSON-RPC `id`.

A call that no `tools/call` carried (pydantic-ai's output tool `final_result`, a local function
tool) has no server side; a call never answered has no feedback.

`failure_marked(output)` says whether a `function_call_output` tells a failure apart from content
by its shape (the course's `{"ok": false, …}`, a JSON object with an `error`), rather than only in
words the model has to read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from course_lib.frameworks.bench import Run
from course_lib.wire import HttpExchange


@dataclass(frozen=True)
class CallTrace:
    """One call, model side and server side (None where nothing crossed)."""

    task: str  # the user message that started the conversation
    declaration: dict[str, Any] | None  # the request's tools[…] entry the call names
    call: dict[str, Any]  # the function_call item
    asked: HttpExchange  # the model request and the response that holds the call
    mcp_request: dict[str, Any] | None = None  # the tools/call that carried it
    mcp_response: dict[str, Any] | None = None  # the response with the same JSON-RPC id
    feedback: dict[str, Any] | None = None  # the function_call_output with the same call_id
    answered: HttpExchange | None = None  # the model request carrying the feedback, and its response

    @property
    def answer(self) -> str | None:
        """The text of the model's reply to the request carrying the feedback (None: no such reply)."""
        return None if self.answered is None else answer_text(self.answered.response)

    @property
    def answer_format(self) -> dict[str, Any] | None:
        """The `text.format` the call's request asked for (a structured answer's rule), if not plain text."""
        found = (self.asked.request.get("text") or {}).get("format")
        return found if isinstance(found, dict) and found.get("type") != "text" else None

    @property
    def call_id(self) -> str:
        return self.call.get("call_id", "")

    @property
    def arguments(self) -> Any:
        """The call's arguments parsed (the text is the value the model wrote); None if not JSON."""
        try:
            return json.loads(self.call.get("arguments") or "null")
        except ValueError:
            return None

    @property
    def mcp_id(self) -> Any:
        return None if self.mcp_request is None else self.mcp_request.get("id")

    @property
    def result(self) -> dict[str, Any] | None:
        """The MCP `result` object (content, structuredContent, isError), if the server answered one."""
        return None if self.mcp_response is None else self.mcp_response.get("result")

    @property
    def refused(self) -> bool:
        """The server answered `isError: true`."""
        return bool(self.result and self.result.get("isError"))


def task_of(request: Any) -> str:
    """The first user message's text of a Responses request body ('' if it has none)."""
    items = request.get("input") if isinstance(request, dict) else None
    if isinstance(items, str):
        return items
    for item in items or []:
        if isinstance(item, dict) and item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                return content
            return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))
    return ""


def answer_text(response: Any) -> str | None:
    """The text of a response's messages (`output_text` parts), or None when it has no message."""
    texts = [part.get("text", "") for item in (response or {}).get("output", []) if item.get("type") == "message"
             for part in item.get("content", []) if part.get("type") == "output_text"]  # fmt: skip
    return "".join(texts) if texts else None


def _named(name: str, mcp_name: str) -> bool:
    """An MCP tool name matches the model-side name itself or its end after a prefix (`files_…`, `mcp_x__…`)."""
    return name == mcp_name or name.endswith("_" + mcp_name)


def calls(run: Run) -> list[CallTrace]:
    """Every `function_call` of the run, in the order the model made them, with both wires."""
    exchanges = [e for e in run.model if isinstance(e.request, dict) and isinstance(e.response, dict)]
    carried = [m.json for m in run.mcp if m.direction == "app→server" and m.json.get("method") == "tools/call"]
    answers = {m.json.get("id"): m.json for m in run.mcp if m.direction == "server→app" and "id" in m.json
               and ("result" in m.json or "error" in m.json)}  # fmt: skip
    used: set[int] = set()
    traces = []
    for index, exchange in enumerate(exchanges):
        for item in exchange.response.get("output", []):
            if item.get("type") != "function_call":
                continue
            declaration = next((t for t in exchange.request.get("tools", []) if t.get("name") == item.get("name")), None)
            trace = CallTrace(task_of(exchange.request), declaration, item, exchange)
            request = _carrier(trace, carried, used)
            feedback, answered = _feedback(exchanges[index + 1:], trace.call_id)
            traces.append(replace(trace, mcp_request=request, feedback=feedback, answered=answered,
                                  mcp_response=None if request is None else answers.get(request.get("id"))))
    return traces


def roundtrip(trace: CallTrace) -> dict[str, Any]:
    """The call's round trip in the shape `course_lib.verify.check_roundtrip` reads (the fixture
    `responses_roundtrip.json`): request_1, response_1, mcp_request, mcp_response, request_2, response_2."""
    answered = trace.answered
    return {"request_1": trace.asked.request, "response_1": trace.asked.response,
            "mcp_request": trace.mcp_request or {}, "mcp_response": trace.mcp_response or {},
            "request_2": {} if answered is None else answered.request,
            "response_2": {} if answered is None else answered.response}  # fmt: skip


def _carrier(trace: CallTrace, carried: list[dict[str, Any]], used: set[int]) -> dict[str, Any] | None:
    for position, request in enumerate(carried):
        params = request.get("params") or {}
        if position not in used and _named(trace.call.get("name", ""), str(params.get("name"))) \
                and params.get("arguments") == trace.arguments:  # fmt: skip
            used.add(position)
            return request
    return None


def _feedback(later: list[HttpExchange], call_id: str) -> tuple[dict[str, Any] | None, HttpExchange | None]:
    for exchange in later:
        for item in exchange.request.get("input", []) if isinstance(exchange.request.get("input"), list) else []:
            if isinstance(item, dict) and item.get("type") == "function_call_output" and item.get("call_id") == call_id:
                return item, exchange
    return None, None


def output_text(output: Any) -> str:
    """A `function_call_output.output` as the text the model reads: a string, or its parts' texts joined."""
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        return "".join(part.get("text", "") for part in output if isinstance(part, dict))
    return "" if output is None else json.dumps(output)


def failure_marked(output: Any) -> bool:
    """True when a `function_call_output.output` marks a failure by its shape: JSON whose top level
    is the course's `{"ok": false, …}` or holds an `error` (pydantic-ai's, Mastra's). Words alone
    ("FORBIDDEN: …", "An error occurred …") are not a mark: only a reader can tell them from content."""
    try:
        value = json.loads(output_text(output))
    except ValueError:
        return False
    return isinstance(value, dict) and (value.get("ok") is False or "error" in value)
