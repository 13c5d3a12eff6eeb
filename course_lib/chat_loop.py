"""The loop over Chat Completions: the same task, the same `McpHost`, another envelope.

    from course_lib.chat_loop import run_chat_loop
    run = run_chat_loop(make_client(), host, "Show the first 5 lines of /workspace/notes.txt")
    run.completions[0].choices[0].message.tool_calls[0]   # a real openai ChatCompletion

What moves, compared with `loop.run_loop` (Responses):

- the rule: each tool is `{"type": "function", "function": {name, description, parameters}}`;
- the value: `message.tool_calls[i].function.arguments`, JSON *text* as in Responses, parsed the
  same way (`loop.execute_call`);
- the result: a `{"role": "tool", "tool_call_id": <tool_calls[i].id>, "content": …}` message, one
  per call, right after the assistant message that made the calls (which goes back too).

The execution (parse → route → `tools/call` → feedback text) is the Responses loop's own, so a
failure reads the same in every envelope.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from openai import OpenAI
from openai.types.chat import ChatCompletion
from openai.types.responses import ResponseFunctionToolCall

from course_lib.backend import model_name
from course_lib.host import McpHost
from course_lib.loop import TraceLink, execute_call


@dataclass
class ChatRun:
    """How a Chat Completions loop ended: the answer (None if the step budget ran out first), every
    ChatCompletion, the `messages` as last sent plus the final reply, and one trace link per call."""

    answer: str | None
    steps: int
    completions: list[ChatCompletion] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    trace: list[TraceLink] = field(default_factory=list)


def chat_tools(host: McpHost) -> list[dict[str, Any]]:
    """The host's tools in Chat's shape: the Responses declaration, wrapped in `function`."""
    return [{"type": "function", "function": {key: value for key, value in tool.items() if key != "type"}}
            for tool in host.responses_tools()]


def tool_message(call_id: str, output: str) -> dict[str, Any]:
    """The message that carries one result back, tied to the call by `tool_call_id`."""
    return {"role": "tool", "tool_call_id": call_id, "content": output}


def run_chat_loop(client: OpenAI, host: McpHost, task: str, *, model: str | None = None,
                  max_steps: int = 4, parallel_tool_calls: bool = True) -> ChatRun:
    """Run the model ⇄ tools loop over `client.chat.completions` until a reply without calls.

    Tool failures are fed back (never raised); API errors raise as the openai SDK raises them.
    """
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    run = ChatRun(answer=None, steps=0, messages=messages)
    for _ in range(max_steps):
        completion = client.chat.completions.create(model=model or model_name(), messages=messages,
                                                    tools=chat_tools(host), parallel_tool_calls=parallel_tool_calls)
        run.steps += 1
        run.completions.append(completion)
        message = completion.choices[0].message
        messages.append(message.model_dump(exclude_none=True, exclude={"annotations"}))
        if not message.tool_calls:
            run.answer = message.content
            return run
        for tool_call in message.tool_calls:
            call = ResponseFunctionToolCall(type="function_call", call_id=tool_call.id, name=tool_call.function.name,
                                            arguments=tool_call.function.arguments)
            item, link = execute_call(call, host)  # the Responses loop's execution, unchanged
            messages.append(tool_message(tool_call.id, item["output"]))
            run.trace.append(link)
    return run
