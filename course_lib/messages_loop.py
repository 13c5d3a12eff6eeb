"""The loop over Anthropic Messages: the same task, the same `McpHost`, another envelope.

    from course_lib.backend import make_anthropic_client
    from course_lib.messages_loop import run_messages_loop
    run = run_messages_loop(make_anthropic_client(), host, "Show the first 5 lines of /workspace/notes.txt")
    run.messages_out[0].content[0]                        # a real anthropic ToolUseBlock

What moves, compared with `loop.run_loop` (Responses):

- the rule: each tool is `{name, description, input_schema}` (the MCP tool's `inputSchema`, as is);
- the value: a `tool_use` content block whose `input` is already an *object*: there is no
  arguments text to parse, and sending it back as text is a 400;
- the result: a `tool_result` block `{tool_use_id, content, is_error}` in the *next user message*,
  after the assistant message with the `tool_use` blocks goes back unchanged.

The execution is the course's own (`host.call` → `loop.feedback_output`), so a failure reads the
same in every envelope, with `is_error` set as well.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from anthropic import Anthropic
from anthropic.types import Message, ToolUseBlock

from course_lib.backend import anthropic_model_name
from course_lib.host import McpHost, UnknownAlias
from course_lib.loop import TraceLink, error_output, feedback_output


@dataclass
class MessagesRun:
    """How a Messages loop ended: the answer (None if the step budget ran out first), every
    Message the model sent, the `messages` as last sent plus the final reply, one link per call."""

    answer: str | None
    steps: int
    messages_out: list[Message] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    trace: list[TraceLink] = field(default_factory=list)


def messages_tools(host: McpHost) -> list[dict[str, Any]]:
    """The host's tools in Anthropic's shape: name, description and the schema as `input_schema`."""
    return [{"name": tool["name"], "description": tool.get("description") or "", "input_schema": tool["parameters"]}
            for tool in host.responses_tools()]


def execute_tool_use(block: ToolUseBlock, host: McpHost) -> tuple[dict[str, Any], TraceLink]:
    """Run one `tool_use` block; return its `tool_result` block and trace link. Never raises for a
    bad call: an unknown tool becomes an error result, as in the Responses loop."""
    link = TraceLink(call_id=block.id, alias=block.name, arguments_text="", arguments=block.input)
    try:
        executed = host.call(block.name, block.input)  # `input` is an object already: nothing to parse
    except UnknownAlias as error:
        output, code = error_output("INVALID_INPUT", str(error), kind="app"), "INVALID_INPUT"
        return tool_result(block.id, output, True), replace(link, error_code=code, output=output)
    output, code = feedback_output(executed)
    link = replace(link, server=executed.route.server, tool=executed.route.tool, mcp_id=executed.mcp_id,
                   error_code=code, output=output)
    return tool_result(block.id, output, code is not None), link


def tool_result(tool_use_id: str, output: str, is_error: bool) -> dict[str, Any]:
    """The block that carries one result back, tied to the call by `tool_use_id`."""
    return {"type": "tool_result", "tool_use_id": tool_use_id, "content": output, "is_error": is_error}


def run_messages_loop(client: Anthropic, host: McpHost, task: str, *, model: str | None = None,
                      max_steps: int = 4, max_tokens: int = 1024) -> MessagesRun:
    """Run the model ⇄ tools loop over `client.messages` until a reply without `tool_use` blocks.

    Tool failures are fed back (never raised); API errors raise as the anthropic SDK raises them.
    """
    messages: list[dict[str, Any]] = [{"role": "user", "content": task}]
    run = MessagesRun(answer=None, steps=0, messages=messages)
    for _ in range(max_steps):
        message = client.messages.create(model=model or anthropic_model_name(), max_tokens=max_tokens,
                                         messages=messages, tools=messages_tools(host))
        run.steps += 1
        run.messages_out.append(message)
        messages.append({"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in message.content]})
        uses = [block for block in message.content if block.type == "tool_use"]
        if not uses:
            run.answer = "".join(block.text for block in message.content if block.type == "text")
            return run
        results = []
        for block in uses:
            result, link = execute_tool_use(block, host)
            results.append(result)
            run.trace.append(link)
        messages.append({"role": "user", "content": results})  # every result in one user message
    return run
