"""Checks for notebook 04c (the same call in other envelopes).

Both checks use real objects from the offline model and send the learner's answer to it for real,
always offline (the clients are built on the in-process transport, whatever the environment says):

- `check_chat_replies(fn)`: the learner's `chat_replies(completion, outputs_by_id)` gets a real
  ChatCompletion with two `tool_calls` and the tool's text for each id; it returns the messages to
  append. Checked for the real mistakes (the assistant message left out, a result without
  `tool_call_id`, the Responses shape, an answer for only one call, an object as content), then
  sent: the real API's 400 is shown if the offline model refuses it, and the answer must quote
  both results.
- `check_to_messages(fn)`: the learner's `to_messages(task, call, output)` turns one Responses
  round trip (a real `function_call` and its output text) into Anthropic `messages`. Checked for
  `input` sent as text, a `tool_use_id` that is not the `tool_use` block's `id`, the result in the
  assistant message or as a Responses item, then sent: the answer must quote the output.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import httpx
import openai
from openai.types.chat import ChatCompletion
from openai.types.responses import ResponseFunctionToolCall

from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.offline_model import offline_transport

TWO_READS = "Show the first 2 lines of /workspace/notes.txt and /workspace/todo.txt"
ONE_READ = "Show the first 2 lines of /workspace/notes.txt"
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}},
          "required": ["path"]}  # fmt: skip
CHAT_TOOLS = [{"type": "function", "function": {"name": "fs__read_text_file", "description": "Read a text file.",
                                                "parameters": SCHEMA}}]  # fmt: skip
MESSAGES_TOOLS = [{"name": "fs__read_text_file", "description": "Read a text file.", "input_schema": SCHEMA}]
OUTPUTS = ["# Notes\nA tool call has three kinds of object.", "# Todo\n- wire the result back"]


def _openai() -> openai.OpenAI:
    return openai.OpenAI(api_key="offline", base_url="http://offline-model.invalid/v1", max_retries=0,
                         http_client=httpx.Client(transport=offline_transport()), _strict_response_validation=True)


def _anthropic() -> anthropic.Anthropic:
    from course_lib.backend import _Httpx2Bridge  # the one place the httpx2 bridge lives

    import httpx2

    return anthropic.Anthropic(api_key="offline", base_url="http://offline-model.invalid", max_retries=0,
                               http_client=httpx2.Client(transport=_Httpx2Bridge(offline_transport())),
                               _strict_response_validation=True)


def _as_dict(message: Any) -> Any:
    return message.model_dump(exclude_none=True) if hasattr(message, "model_dump") else message


# ---- exercise 1: chat_replies -----------------------------------------------------------------


def _first_chat_problem(completion: ChatCompletion, outputs: dict[str, str], replies: Any) -> str | None:
    if not_answered(replies):
        return "chat_replies still returns the starter (...): return the list of messages to append"
    if not isinstance(replies, list):
        return f"chat_replies must return a list of messages, got {type(replies).__name__}"
    replies = [_as_dict(m) for m in replies]
    if any(not isinstance(m, dict) for m in replies):
        return "every message is a JSON object (a dict, or the SDK's message object)"
    if any(m.get("type") == "function_call_output" for m in replies):
        return ("a 'function_call_output' item is the Responses shape; Chat Completions carries a result in a "
                "message with role 'tool' and 'tool_call_id'")
    if not replies or replies[0].get("role") != "assistant" or not replies[0].get("tool_calls"):
        return ("the first message must be the assistant message with its tool_calls, sent back unchanged "
                "(completion.choices[0].message): a tool message answers a call the history must show")
    calls = completion.choices[0].message.tool_calls or []
    tools = [m for m in replies[1:] if m.get("role") == "tool"]
    for m in tools:
        if "tool_call_id" not in m:
            return "a tool message without 'tool_call_id': nothing says which call it answers (the API refuses it)"
        if not isinstance(m.get("content"), str):
            return "a tool message's content is text (the tool's output string), not a JSON object"
    answered = [m["tool_call_id"] for m in tools]
    for call in calls:
        if call.id not in answered:
            return f"no tool message answers tool_calls id {call.id!r}: every call needs its own reply"
    for m in tools:
        if outputs.get(m["tool_call_id"]) != m["content"]:
            return f"the reply to {m['tool_call_id']!r} does not carry that call's output (outputs_by_id[id])"
    return None


def check_chat_replies(fn: Any) -> bool:
    """Check `chat_replies(completion, outputs_by_id) -> list of messages` (see the module docstring)."""
    if not_answered(fn):
        return failed("write chat_replies(completion, outputs_by_id) and pass the function itself")
    with _openai() as client:
        task = {"role": "user", "content": TWO_READS}
        completion = client.chat.completions.create(model="gpt-4.1", messages=[task], tools=CHAT_TOOLS)
        outputs = {call.id: text for call, text in zip(completion.choices[0].message.tool_calls, OUTPUTS)}
        try:
            replies = fn(completion, dict(outputs))
        except Exception as error:  # the learner's code: report, never crash the cell
            return failed(f"chat_replies raised {type(error).__name__}: {error}")
        if problem := _first_chat_problem(completion, outputs, replies):
            return failed(problem)
        try:
            final = client.chat.completions.create(model="gpt-4.1", messages=[task, *map(_as_dict, replies)],
                                                   tools=CHAT_TOOLS)  # fmt: skip
        except openai.BadRequestError as error:
            return failed(f"the offline model refused the messages, as the real API would: {error.body['message']}")
    answer = final.choices[0].message.content or ""
    if not all(text.splitlines()[1] in answer for text in OUTPUTS):
        return failed("the model's answer does not quote both results: is each reply under its own call's id?")
    return passed("the assistant message went back with its tool_calls, and each result under its tool_call_id")


def chat_replies(completion: ChatCompletion, outputs_by_id: dict[str, str]) -> list[dict[str, Any]]:
    """Reference solution for exercise 1."""
    message = completion.choices[0].message
    return [message.model_dump(exclude_none=True),
            *({"role": "tool", "tool_call_id": call.id, "content": outputs_by_id[call.id]} for call in message.tool_calls)]


# ---- exercise 2: to_messages ------------------------------------------------------------------


def _first_messages_problem(call: ResponseFunctionToolCall, messages: Any) -> str | None:
    if not_answered(messages):
        return "to_messages still returns the starter (...): return the three messages"
    if not isinstance(messages, list) or len(messages) != 3 or not all(isinstance(m, dict) for m in messages):
        return "to_messages must return three message dicts: the user's task, the assistant's tool_use, the user's tool_result"
    roles = [m.get("role") for m in messages]
    if roles != ["user", "assistant", "user"]:
        return f"the roles are {roles}: Messages wants user (task), assistant (tool_use), user (tool_result)"
    blocks = [m.get("content") if isinstance(m.get("content"), list) else [] for m in messages]
    uses = [b for b in blocks[1] if isinstance(b, dict) and b.get("type") == "tool_use"]
    results = [b for b in blocks[2] if isinstance(b, dict) and b.get("type") == "tool_result"]
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks[1]):
        return "the tool_result is in the assistant message: it goes in the next *user* message"
    if not uses:
        return "the assistant message needs a tool_use block {type, id, name, input} in a content list"
    if not isinstance(uses[0].get("input"), dict):
        return ("tool_use.input is " + type(uses[0].get("input")).__name__ + ": Messages carries the value as an "
                "object, json.loads(call.arguments), not the arguments text")
    if uses[0]["input"] != json.loads(call.arguments) or uses[0].get("name") != call.name:
        return "the tool_use block must carry the call's own name and arguments"
    if not results:
        return "the last user message needs a tool_result block {type, tool_use_id, content}"
    if results[0].get("tool_use_id") != uses[0].get("id"):
        return (f"tool_result.tool_use_id is {results[0].get('tool_use_id')!r} but the tool_use block's id is "
                f"{uses[0].get('id')!r}: the pair is tied by that id")
    return None


def check_to_messages(fn: Any) -> bool:
    """Check `to_messages(task, call, output) -> messages` (see the module docstring)."""
    if not_answered(fn):
        return failed("write to_messages(task, call, output) and pass the function itself")
    with _openai() as client:
        response = client.responses.create(model="gpt-4.1", input=ONE_READ, tools=[
            {"type": "function", "name": "fs__read_text_file", "parameters": SCHEMA, "strict": False}])
    call = next(item for item in response.output if item.type == "function_call")
    try:
        messages = fn(ONE_READ, call, OUTPUTS[0])
    except Exception as error:  # the learner's code: report, never crash the cell
        return failed(f"to_messages raised {type(error).__name__}: {error}")
    if problem := _first_messages_problem(call, messages):
        return failed(problem)
    with _anthropic() as claude:
        try:
            final = claude.messages.create(model="claude-sonnet-4-6", max_tokens=512, tools=MESSAGES_TOOLS,
                                           messages=messages)
        except anthropic.BadRequestError as error:
            return failed(f"the offline model refused the messages, as the real API would: {error.message}")
    text = "".join(block.text for block in final.content if block.type == "text")
    if final.stop_reason != "end_turn" or OUTPUTS[0].splitlines()[1] not in text:
        return failed("the model did not answer from the result: does tool_result.content carry the output text?")
    return passed("the value went as an object, and the result came back under the tool_use block's id")


def to_messages(task: str, call: ResponseFunctionToolCall, output: str) -> list[dict[str, Any]]:
    """Reference solution for exercise 2."""
    use = {"type": "tool_use", "id": call.call_id, "name": call.name, "input": json.loads(call.arguments)}
    return [{"role": "user", "content": task}, {"role": "assistant", "content": [use]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.call_id, "content": output}]}]


SOLUTIONS: Solutions = {
    "check_chat_replies": lambda: chat_replies,
    "check_to_messages": lambda: to_messages,
}
