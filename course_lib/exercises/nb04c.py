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
  assistant message or as a Responses item, `is_error: true` on a result that is a success, and
  any order the Messages API refuses (`api_rules.messages_order_problems`: the tool_result blocks
  first in the user turn, text only after them), then sent: the answer must quote the output.

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`);
the offline model's refusals they quote stay in the API's own words.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
import pydantic
from openai.types.chat import ChatCompletion
from openai.types.responses import ResponseFunctionToolCall

from course_lib.api_rules import messages_order_problems
from course_lib.arguments import json_type_name
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import not_json, passed_a_call, raised, returned_early, shown, type_name, unassigned
from course_lib.exercises.guard import guard_checks
from course_lib.exercises.offline import anthropic_model_name, model_name, offline_anthropic, offline_client
from course_lib.lang import say

TWO_READS = "Show the first 2 lines of /workspace/notes.txt and /workspace/todo.txt"
ONE_READ = "Show the first 2 lines of /workspace/notes.txt"
SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}},
          "required": ["path"]}  # fmt: skip
CHAT_TOOLS = [{"type": "function", "function": {"name": "fs__read_text_file", "description": "Read a text file.",
                                                "parameters": SCHEMA}}]  # fmt: skip
MESSAGES_TOOLS = [{"name": "fs__read_text_file", "description": "Read a text file.", "input_schema": SCHEMA}]
OUTPUTS = ["# Notes\nA tool call has three kinds of object.", "# Todo\n- wire the result back"]


def _refusal_text(error: anthropic.BadRequestError | openai.BadRequestError) -> str:
    """The API's own sentence from a 400, without the SDK's "Error code: 400 - {…}" wrapping."""
    body = error.body if isinstance(error.body, dict) else {}
    inner = body.get("error") if isinstance(body.get("error"), dict) else body
    return str(inner.get("message") or error.message)


def _plain(value: Any) -> Any:
    """`value` as plain JSON: the SDK's objects (pydantic models, such as `ChatCompletionMessage` or a
    `ToolUseBlock`) as the JSON they send, everything else as it is (not_json then judges it)."""
    if isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json", exclude_none=True)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def as_json_messages(messages: Any, name: str) -> tuple[list[Any] | None, str | None]:
    """The learner's list of messages as plain JSON, or why it cannot be: (messages, None) or (None, problem)."""
    if not isinstance(messages, list):
        return None, say("{name} must return a list of messages, got {kind}", "{name} 必须返回一个消息列表，得到的是 {kind}",
                         name=name, kind=type_name(messages)) + returned_early(messages)
    try:
        plain = _plain(messages)
    except Exception as error:  # a model_dump() that raises, a list nested too deep
        return None, say("a message could not be turned into JSON ({error})", "有一条消息无法转成 JSON（{error}）",
                         error=raised(error))
    if (why := not_json(plain)) is not None:
        return None, say("the messages are not JSON ({why}): each is a dict of strings, numbers, lists and dicts",
                         "这些消息不是 JSON（{why}）：每条都是由字符串、数字、列表和 dict 组成的 dict", why=why)
    return json.loads(json.dumps(plain)), None


def _tool_text(content: Any) -> str | None:
    """The text of a tool result's content in the shapes the SDK's types allow (a string, or a list
    of text parts/blocks); None when it is neither."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(part, dict) and part.get("type") == "text"
                                         and isinstance(part.get("text"), str) for part in content):  # fmt: skip
        return "".join(part["text"] for part in content)
    return None


# ---- exercise 1: chat_replies -----------------------------------------------------------------


def _first_chat_problem(completion: ChatCompletion, outputs: dict[str, str], replies: Any) -> str | None:
    """What is wrong with the learner's replies (plain JSON, from `as_json_messages`), or None."""
    if any(not isinstance(m, dict) for m in replies):
        return say("every message is a JSON object (a dict, or the SDK's message object)",
                   "每条消息都是一个 JSON 对象（一个 dict，或 SDK 的消息对象）")
    if any(m.get("type") == "function_call_output" for m in replies):
        return say("a 'function_call_output' item is the Responses shape; Chat Completions carries a result in a "
                   "message with role 'tool' and 'tool_call_id'",
                   "'function_call_output' 项是 Responses 的形状；Chat Completions 把结果放在一条 role 为 'tool'、"
                   "带 'tool_call_id' 的消息里")
    if any(m.get("role") == "function" for m in replies):
        return say("role 'function' is the old, deprecated shape of a result; Chat Completions answers a tool call "
                   "with a message of role 'tool' and its 'tool_call_id'",
                   "role 'function' 是旧的、已弃用的结果形状；Chat Completions 用一条 role 为 'tool'、带 'tool_call_id' "
                   "的消息回答工具调用")
    if replies and replies[0].get("role") == "user":
        return say("the user's task is already in the history: return only the messages to append after it, the "
                   "assistant message first",
                   "用户的任务已经在历史里了：只返回要追加在它后面的消息，助手消息在最前")
    if not replies or replies[0].get("role") != "assistant" or not replies[0].get("tool_calls"):
        return say("the first message must be the assistant message with its tool_calls, sent back unchanged "
                   "(completion.choices[0].message): a tool message answers a call the history must show",
                   "第一条消息必须是带 tool_calls 的助手消息，原样发回（completion.choices[0].message）："
                   "工具消息回答的是一个调用，历史里必须有这个调用")
    calls = completion.choices[0].message.tool_calls or []
    tools = [m for m in replies[1:] if m.get("role") == "tool"]
    for m in tools:
        if "tool_call_id" not in m:
            return say("a tool message without 'tool_call_id': nothing says which call it answers (the API refuses it)",
                       "一条没有 'tool_call_id' 的工具消息：没有任何东西说明它回答的是哪个调用（API 会拒绝它）")
        if _tool_text(m.get("content")) is None:
            return say("a tool message's content is text (the tool's output string, or a list of text parts), not a "
                       "JSON object",
                       "工具消息的 content 是文本（工具输出的字符串，或文本部分的列表），不是 JSON 对象")
    answered = [m["tool_call_id"] for m in tools]
    for call in calls:
        if call.id not in answered:
            return say(f"no tool message answers tool_calls id {call.id!r}: every call needs its own reply",
                       f"没有工具消息回答 tool_calls 中的 id {call.id!r}：每个调用都需要自己的回复")
    for m in tools:
        if outputs.get(m["tool_call_id"]) != _tool_text(m["content"]):
            return say("the reply to {id} does not carry that call's output (outputs_by_id[id])",
                       "给 {id} 的回复没有带上那个调用的输出（outputs_by_id[id]）", id=shown(m["tool_call_id"]))
    return None


def check_chat_replies(fn: Any) -> bool:
    """Check `chat_replies(completion, outputs_by_id) -> list of messages` (see the module docstring)."""
    if not_answered(fn):
        return failed(unassigned("chat_replies", "chat_replies(completion, outputs_by_id)", through=""))
    if not callable(fn):
        return failed(passed_a_call("chat_replies", fn))
    with offline_client() as client:
        task = {"role": "user", "content": TWO_READS}
        completion = client.chat.completions.create(model=model_name(), messages=[task], tools=CHAT_TOOLS)
        outputs = {call.id: text for call, text in zip(completion.choices[0].message.tool_calls, OUTPUTS)}
        try:
            replies = fn(completion.model_copy(deep=True), dict(outputs))
        except Exception as error:  # the learner's code: report, never crash the cell
            return failed(say("chat_replies raised {error}", "chat_replies 抛出了 {error}", error=raised(error)))
        if not_answered(replies):
            return failed(say("chat_replies still returns the starter (...): return the list of messages to append",
                              "chat_replies 仍然返回起始代码里的 (...)：返回要追加的消息列表"))
        plain, problem = as_json_messages(replies, "chat_replies")
        if plain is None or (problem := _first_chat_problem(completion, outputs, plain)):
            return failed(problem)
        try:
            final = client.chat.completions.create(model=model_name(), messages=[task, *plain], tools=CHAT_TOOLS)
        except openai.BadRequestError as error:
            refusal = _refusal_text(error)
            return failed(say(f"the offline model refused the messages, as the real API would: {refusal}",
                              f"离线模型拒绝了这些消息，真实的 API 也会这样：{refusal}"))
    answer = final.choices[0].message.content or ""
    if not all(text.splitlines()[1] in answer for text in OUTPUTS):
        return failed(say("the model's answer does not quote both results: is each reply under its own call's id?",
                          "模型的回答没有引用两个结果：每条回复都放在它自己那个调用的 id 下了吗？"))
    return passed(say("the assistant message went back with its tool_calls, and each result under its tool_call_id",
                      "助手消息连同它的 tool_calls 发回去了，每个结果都在它的 tool_call_id 下"))


def chat_replies(completion: ChatCompletion, outputs_by_id: dict[str, str]) -> list[dict[str, Any]]:
    """Reference solution for exercise 1."""
    message = completion.choices[0].message
    return [message.model_dump(exclude_none=True),
            *({"role": "tool", "tool_call_id": call.id, "content": outputs_by_id[call.id]} for call in message.tool_calls)]


# ---- exercise 2: to_messages ------------------------------------------------------------------


def _first_messages_problem(call: ResponseFunctionToolCall, messages: list[Any], output: str) -> str | None:
    """What is wrong with the learner's messages (plain JSON, from `as_json_messages`), or None."""
    if any(isinstance(m, dict) and (m.get("type") in ("function_call", "function_call_output")) for m in messages):
        return say("function_call and function_call_output are Responses items; Messages puts the call in a tool_use "
                   "block of the assistant message and the result in a tool_result block of the next user message",
                   "function_call 和 function_call_output 是 Responses 的项；Messages 把调用放在助手消息的 tool_use 块里，"
                   "把结果放在下一条用户消息的 tool_result 块里")
    if any(isinstance(m, dict) and m.get("role") == "tool" for m in messages):
        return say("Messages has no role 'tool' (that is Chat Completions): the result goes back in a user message, "
                   "as a tool_result block",
                   "Messages 没有 role 'tool'（那是 Chat Completions 的）：结果放在一条用户消息里，作为 tool_result 块发回")
    if len(messages) != 3 or not all(isinstance(m, dict) for m in messages):
        return say("to_messages must return three message dicts: the user's task, the assistant's tool_use, the user's "
                   "tool_result (yours has {n})",
                   "to_messages 必须返回三个消息 dict：用户的任务、助手的 tool_use、用户的 tool_result（你的有 {n} 个）",
                   n=len(messages))
    roles = [m.get("role") for m in messages]
    if roles != ["user", "assistant", "user"]:
        return say(f"the roles are {roles}: Messages wants user (task), assistant (tool_use), user (tool_result)",
                   f"角色是 {roles}：Messages 要求 user（任务）、assistant（tool_use）、user（tool_result）")
    blocks = [m.get("content") if isinstance(m.get("content"), list) else [] for m in messages]
    uses = [b for b in blocks[1] if isinstance(b, dict) and b.get("type") == "tool_use"]
    results = [b for b in blocks[2] if isinstance(b, dict) and b.get("type") == "tool_result"]
    if any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks[1]):
        return say("the tool_result is in the assistant message: it goes in the next *user* message",
                   "tool_result 放在了助手消息里：它应当放在下一条*用户*消息里")
    if not uses:
        return say("the assistant message needs a tool_use block {type, id, name, input} in a content list",
                   "助手消息的 content 列表里需要一个 tool_use 块 {type, id, name, input}")
    if not isinstance(uses[0].get("input"), dict):
        kind = {"string": "str", "array": "list", "null": "None"}.get(json_type_name(uses[0].get("input")), "a number")
        return say("tool_use.input is " + kind + ": Messages carries the value as an "
                   "object, json.loads(call.arguments), not the arguments text",
                   "tool_use.input 是 " + kind + "：Messages 把值作为对象携带，即 json.loads(call.arguments)，"
                   "而不是参数文本")
    if uses[0]["input"] != json.loads(call.arguments) or uses[0].get("name") != call.name:
        return say("the tool_use block must carry the call's own name and arguments",
                   "tool_use 块必须带着这个调用自己的名称和参数")
    if not results:
        return say("the last user message needs a tool_result block {type, tool_use_id, content}",
                   "最后一条用户消息需要一个 tool_result 块 {type, tool_use_id, content}")
    if results[0].get("tool_use_id") != uses[0].get("id"):
        return say("tool_result.tool_use_id is {given} but the tool_use block's id is {id}: the pair is tied by that id",
                   "tool_result.tool_use_id 是 {given}，但 tool_use 块的 id 是 {id}：这一对正是靠这个 id 绑定的",
                   given=shown(results[0].get("tool_use_id")), id=shown(uses[0].get("id")))
    if "content" in results[0] and _tool_text(results[0]["content"]) is None:
        return say("tool_result.content is the tool's text: a string, or a list of text blocks; yours is a JSON {kind}",
                   "tool_result.content 是工具的文本：一个字符串，或文本块的列表；你的是一个 JSON {kind}",
                   kind=json_type_name(results[0]["content"]))
    if _tool_text(results[0].get("content", "")) != output:
        return say("the tool_result does not carry the output: its content is the tool's text, output as it was given",
                   "tool_result 没有带上输出：它的 content 是工具的文本，即原样传入的 output")
    if results[0].get("is_error") is True:
        return say("the tool_result says is_error: true, but the read succeeded (output is the file's lines): the model "
                   "would take a success for a failure. Leave is_error out (it defaults to false) or set it false; it "
                   "is true only when the tool failed",
                   "tool_result 写着 is_error: true，可这次读取是成功的（output 是文件的内容）：模型会把成功当成失败。"
                   "不写 is_error（默认为 false）或写成 false；只有工具失败时它才是 true")
    if order := messages_order_problems(messages):
        return say("the Messages API refuses this order: {refusal}{hint}", "Messages API 拒绝这样的顺序：{refusal}{hint}",
                   refusal=order[0], hint=say(" Put the tool_result block(s) first in the user message; text may "
                                              "follow them.", " 把 tool_result 块放在这条用户消息的最前面；文字可以"
                                              "跟在它们后面。") if "at the beginning" in order[0] else "")
    return None


def check_to_messages(fn: Any) -> bool:
    """Check `to_messages(task, call, output) -> messages` (see the module docstring)."""
    if not_answered(fn):
        return failed(unassigned("to_messages", "to_messages(task, call, output)", through=""))
    if not callable(fn):
        return failed(passed_a_call("to_messages", fn))
    with offline_client() as client:
        response = client.responses.create(model=model_name(), input=ONE_READ, tools=[
            {"type": "function", "name": "fs__read_text_file", "parameters": SCHEMA, "strict": False}])
    call = next(item for item in response.output if item.type == "function_call")
    try:
        messages = fn(ONE_READ, call.model_copy(deep=True), OUTPUTS[0])
    except Exception as error:  # the learner's code: report, never crash the cell
        return failed(say("to_messages raised {error}", "to_messages 抛出了 {error}", error=raised(error)))
    if not_answered(messages):
        return failed(say("to_messages still returns the starter (...): return the three messages",
                          "to_messages 仍然返回起始代码里的 (...)：返回那三条消息"))
    plain, problem = as_json_messages(messages, "to_messages")
    if plain is None or (problem := _first_messages_problem(call, plain, OUTPUTS[0])):
        return failed(problem)
    with offline_anthropic() as claude:
        try:
            final = claude.messages.create(model=anthropic_model_name(), max_tokens=512, tools=MESSAGES_TOOLS,
                                           messages=plain)
        except anthropic.BadRequestError as error:
            refusal = _refusal_text(error)
            return failed(say(f"the offline model refused the messages, as the real API would: {refusal}",
                              f"离线模型拒绝了这些消息，真实的 API 也会这样：{refusal}"))
    text = "".join(block.text for block in final.content if block.type == "text")
    # The offline model reads a text block after the tool_result as a new request; a real model answers
    # from the result either way, and the structure above is already right, so the answer is judged
    # only when the result turn holds nothing but the result.
    alone = all(isinstance(b, dict) and b.get("type") == "tool_result" for b in plain[2]["content"])
    if alone and (final.stop_reason != "end_turn" or OUTPUTS[0].splitlines()[1] not in text):
        return failed(say("the model did not answer from the result: does tool_result.content carry the output text?",
                          "模型没有依据结果作答：tool_result.content 带上输出文本了吗？"))
    return passed(say("the value went as an object, and the result came back under the tool_use block's id",
                      "值作为对象发出，结果在 tool_use 块的 id 下发回"))


def to_messages(task: str, call: ResponseFunctionToolCall, output: str) -> list[dict[str, Any]]:
    """Reference solution for exercise 2."""
    use = {"type": "tool_use", "id": call.call_id, "name": call.name, "input": json.loads(call.arguments)}
    return [{"role": "user", "content": task}, {"role": "assistant", "content": [use]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.call_id, "content": output}]}]


SOLUTIONS: Solutions = {
    "check_chat_replies": lambda: chat_replies,
    "check_to_messages": lambda: to_messages,
}


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
