"""One tool call followed across both wires of a framework's run: model ⇄ app, then app ⇄ server.

The model's wire may be the Responses API or Anthropic Messages (the Claude Code CLI's): `envelope`
reads both into one shape, and the names below are the Responses ones (a Messages `tool_use` block
is the call, its `tool_result` the feedback).

A framework is the app: it receives the model's `function_call`, sends `tools/call` to the MCP
server, and sends the result back as `function_call_output`. It keeps the link between the two
correlation domains (the model's `call_id`, the JSON-RPC `id`) to itself. `calls(run)` rebuilds
each call from what crossed, the way one debugs a framework from its wire:

- the model side: every `function_call` item in a response, the declaration it was made under
  (the request's `tools[…]`), the `function_call_output` with the same `call_id` in a later
  request, and the answer to that request (its message text);
- the server side: the `tools/call` request that carried the call — the next one, in order, with
  the same arguments (an MCP tool name is the model-side name, or its end after a framework's
  prefix: `files_read_text_file`; failing that, the same arguments once the keys the model set to
  null are left out, as an app that drops nulls sends them), sent between the model's answer and the
  feedback when the taps know those times — and the response with the same JSON-RPC `id`.

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

from course_lib.frameworks import envelope
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
    def messages(self) -> bool:
        """The call crossed in Anthropic Messages (a `tool_use` block), not Responses."""
        return envelope.is_messages(self.asked)

    @property
    def answer(self) -> str | None:
        """The text of the model's reply to the request carrying the feedback (None: no such reply)."""
        return None if self.answered is None else envelope.answer_of(envelope.response_of(self.answered), self.messages)

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
    def dropped_nulls(self) -> list[str]:
        """The keys the model sent as null that the `tools/call` left out (the app dropped them)."""
        sent = (self.mcp_request or {}).get("params", {}).get("arguments")
        if not isinstance(self.arguments, dict) or not isinstance(sent, dict):
            return []
        return [k for k, v in self.arguments.items() if v is None and k not in sent]

    @property
    def refused(self) -> bool:
        """The server answered `isError: true`."""
        return bool(self.result and self.result.get("isError"))

    @property
    def feedback_marked(self) -> bool:
        """The feedback tells the model the call failed by more than words: a Messages `tool_result`
        with `is_error: true` (the envelope's own field), or an output marked by its shape."""
        if self.feedback is None:
            return False
        return bool(self.feedback.get("is_error")) or failure_marked(self.feedback.get("output"))


task_of = envelope.task_of


def answer_text(response: Any) -> str | None:
    """The text of a Responses response's messages (`output_text` parts), or None when it has no message."""
    return envelope.answer_of(response or {}, False)


def _named(name: str, mcp_name: str) -> bool:
    """An MCP tool name matches the model-side name itself or its end after a prefix (`files_…`, `mcp_x__…`)."""
    return name == mcp_name or name.endswith("_" + mcp_name)


def calls(run: Run) -> list[CallTrace]:
    """Every call of the run, in the order the model made them, with both wires."""
    timed = [(e, run.model_times[i] if i < len(run.model_times) else None) for i, e in enumerate(run.model)
             if isinstance(e.request, dict) and envelope.response_of(e) is not None]  # fmt: skip
    exchanges = [e for e, _ in timed]
    carried = _requests(run)
    used: set[int] = set()
    traces = []
    for index, (exchange, when) in enumerate(timed):
        messages = envelope.is_messages(exchange)
        for item in envelope.calls_in(envelope.response_of(exchange) or {}, messages):
            declaration = next((t for t in envelope.declarations(exchange.request, messages)
                                if t.get("name") == item.get("name")), None)
            trace = CallTrace(task_of(exchange.request), declaration, item, exchange)
            feedback, answered = _feedback(exchanges[index + 1:], trace.call_id, messages)
            answered_at = next((w for e, w in timed[index + 1:] if e is answered), None)
            window = (when[1] if when else None, answered_at[0] if answered_at else None)
            found = _carrier(trace, carried, used, window)
            request, response = (None, None) if found is None else found
            traces.append(replace(trace, mcp_request=request, mcp_response=response, feedback=feedback, answered=answered))
    return traces


def _requests(run: Run) -> list[tuple[dict[str, Any], dict[str, Any] | None, float | None]]:
    """Each `tools/call` request with its response (the next message from the server with its id: a
    server started again for another conversation counts its ids again) and when it was sent."""
    found = []
    for position, message in enumerate(run.mcp):
        if message.direction != "app→server" or message.json.get("method") != "tools/call":
            continue
        answer = next((m.json for m in run.mcp[position + 1:] if m.direction == "server→app"
                       and m.json.get("id") == message.json.get("id") and ("result" in m.json or "error" in m.json)), None)
        when = run.mcp_times[position] if position < len(run.mcp_times) else None
        found.append((message.json, answer, when))
    return found


def roundtrip(trace: CallTrace) -> dict[str, Any]:
    """The call's round trip in the shape `course_lib.verify.check_roundtrip` reads (the fixture
    `responses_roundtrip.json`): request_1, response_1, mcp_request, mcp_response, request_2, response_2."""
    answered = trace.answered
    return {"request_1": trace.asked.request, "response_1": trace.asked.response,
            "mcp_request": trace.mcp_request or {}, "mcp_response": trace.mcp_response or {},
            "request_2": {} if answered is None else answered.request,
            "response_2": {} if answered is None else answered.response}  # fmt: skip


def _carrier(trace: CallTrace, carried: list[tuple[dict[str, Any], dict[str, Any] | None, float | None]],
             used: set[int], window: tuple[float | None, float | None]) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
    """The first unused `tools/call` with the call's tool and arguments, sent after the model's answer
    holding the call ended and before the feedback went back (when the taps know those times)."""
    after, before = window
    for same in (lambda sent: sent == trace.arguments, lambda sent: without_nulls(sent) == without_nulls(trace.arguments)):
        for position, (request, response, when) in enumerate(carried):
            params = request.get("params") or {}
            if position in used or not _named(trace.call.get("name", ""), str(params.get("name"))) \
                    or not same(params.get("arguments")):  # fmt: skip
                continue
            if when is not None and ((after and when < after) or (before and when > before)):
                continue  # another conversation's call with the same arguments
            used.add(position)
            return request, response
    return None


def without_nulls(arguments: Any) -> Any:
    """The arguments with every null-valued key left out: what a framework that drops nulls sends
    (Mastra does, before `tools/call`), and what an optional nullable property means either way."""
    return {k: v for k, v in arguments.items() if v is not None} if isinstance(arguments, dict) else arguments


def _feedback(later: list[HttpExchange], call_id: str, messages: bool) -> tuple[dict[str, Any] | None, HttpExchange | None]:
    for exchange in later:
        for item in envelope.feedback_in(exchange.request, messages):
            if item.get("call_id") == call_id:
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
