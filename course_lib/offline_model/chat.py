"""`chat_completion`: one `POST /v1/chat/completions` body in, a ChatCompletion (or its stream of
chunks) out — the same offline model as `/v1/responses`, in the Chat Completions envelope.

Only the envelope differs; the plan is `plan._decide` over the same normalised items:

- the rule: `tools[i].function` {name, description, parameters, strict} (non-strict by default);
- the value: `message.tool_calls[i].function.arguments`, JSON *text*, under `tool_calls[i].id`;
- the result: a `{"role": "tool", "tool_call_id": …, "content": …}` message;
- structured output: `response_format` (`json_schema` or `json_object`): the answer's `content` is
  the JSON (`structured`), which `chat.completions.parse` turns into `message.parsed`.

Pairing is checked with the real API's 400s (the wording, including its "preceeding", as seen in
https://github.com/sdcb/chats/pull/132 and https://github.com/openai/openai-go/issues/43):
"An assistant message with 'tool_calls' must be followed by tool messages responding to each
'tool_call_id'. The following tool_call_ids did not have response messages: call_…" and
"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with
'tool_calls'." (param `messages.[i].role`, code null); a tool message without `tool_call_id`:
"Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'." (param
`messages.[i].tool_call_id`, code null; https://github.com/langchain-ai/langchain/issues/22600). Which of the two the real API reports first
when both apply was not verified; this model checks messages in order.

Streamed (`stream: true`): `chat.completion.chunk`s, text in pieces of `delta.content`, each call
opened by a delta with its `index`, `id` and name, its arguments in several pieces, a last chunk
with `finish_reason`, then `data: [DONE]`.
"""

from __future__ import annotations

import json
from typing import Any

from course_lib.offline_model.ids import RequestIds, for_request
from course_lib.offline_model import standin
from course_lib.offline_model.personas import _persona
from course_lib.offline_model.plan import _decide
from course_lib.offline_model.request_params import CHAT, check_json, check_parameters
from course_lib.offline_model.response_object import CREATED_AT, _tokens
from course_lib.offline_model.structured import apply_format, chat_format
from course_lib.offline_model.validation import (
    BadRequest,
    _get,
    _invalid_value,
    _parse_tools,
    _tool_policy,
    _type_error,
)

_ROLES = ["system", "developer", "user", "assistant", "tool"]


def _text(content: Any, where: str) -> str:
    """A message's content as text: a string, or the `text` of its parts (other parts ignored)."""
    if isinstance(content, str):
        return content
    texts = []
    for i, part in enumerate(content):
        if not isinstance(part, dict):
            raise _type_error(f"{where}[{i}]", dict, part)
        if _get(part, "type", f"{where}[{i}]", str) == "text":
            texts.append(_get(part, "text", f"{where}[{i}]", str))
    return "\n".join(texts)


def _parse_messages(body: dict) -> list[dict]:
    """`messages` → the model's items: {"kind": "message"|"call"|"output", …}.

    Raises:
        BadRequest: a message of the wrong shape, a tool message without `tool_call_id`, or a
            pairing the real API refuses (see the module docstring).
    """
    messages = _get(body, "messages", "", list)
    if not messages:
        raise BadRequest("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an "
                         "empty array instead.", "messages", "empty_array")  # https://github.com/CopilotKit/CopilotKit/issues/529
    items: list[dict] = []
    pending: dict[str, int] = {}  # call id → index of the assistant message that made it
    open_calls: list[str] = []  # the ids the latest assistant message with tool_calls made
    for i, message in enumerate(messages):
        where = f"messages.[{i}]"
        if not isinstance(message, dict):
            raise _type_error(where, dict, message)
        role = _get(message, "role", where, str)
        if role not in _ROLES:
            raise _invalid_value(role, f"{where}.role", _ROLES)
        if role != "tool" and pending:
            _unanswered(pending)
        if role == "tool":
            if "tool_call_id" not in message:
                raise BadRequest("Missing parameter 'tool_call_id': messages with role 'tool' must have a "
                                 "'tool_call_id'.", f"{where}.tool_call_id")
            call_id = _get(message, "tool_call_id", where, str)
            if call_id not in open_calls:
                raise BadRequest("Invalid parameter: messages with role 'tool' must be a response to a preceeding "
                                 "message with 'tool_calls'.", f"{where}.role")
            pending.pop(call_id, None)
            items.append({"kind": "output", "call_id": call_id,
                          "text": _text(_get(message, "content", where, (str, list)), f"{where}.content")})
            continue
        open_calls = []
        content = _get(message, "content", where, (str, list), optional=True)
        if content is not None or role != "assistant":
            text = _text(_get(message, "content", where, (str, list)), f"{where}.content")
            items.append({"kind": "message", "role": role, "text": text})
        for j, call in enumerate(_get(message, "tool_calls", where, list, optional=True) or []):
            spot = f"{where}.tool_calls.[{j}]"
            if not isinstance(call, dict):
                raise _type_error(spot, dict, call)
            function = _get(call, "function", spot, dict)
            call_id = _get(call, "id", spot, str)
            items.append({"kind": "call", "call_id": call_id, "name": _get(function, "name", f"{spot}.function", str),
                          "arguments": _get(function, "arguments", f"{spot}.function", str)})
            pending[call_id], open_calls = i, [*open_calls, call_id]
    if pending:
        _unanswered(pending)
    return items


def _unanswered(pending: dict[str, int]) -> None:
    """Raises: BadRequest, the real API's words for calls that got no tool message."""
    index = min(pending.values())
    ids = ", ".join(call_id for call_id, at in pending.items() if at == index)
    raise BadRequest("An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                     f"'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
                     f"messages.[{index}].role")


def _flat_tools(body: dict) -> dict:
    """Chat's `tools[i].function` and `tool_choice` in the Responses shape the planner reads.

    Raises:
        BadRequest: a tool or tool_choice of the wrong shape.
    """
    tools = []
    for i, tool in enumerate(_get(body, "tools", "", list, optional=True) or []):
        if not isinstance(tool, dict):
            raise _type_error(f"tools[{i}]", dict, tool)
        if _get(tool, "type", f"tools[{i}]", str) == "function":
            function = _get(tool, "function", f"tools[{i}]", dict)
            tools.append({"type": "function", "strict": False, **function})  # non-strict unless it says so
    choice = standin.tool_choice(body.get("tool_choice", "auto"))  # a local server ignores it (standin.local)
    if isinstance(choice, dict) and choice.get("type") == "function":
        choice = {"type": "function", "name": _get(_get(choice, "function", "tool_choice", dict), "name",
                                                   "tool_choice.function", str)}
    return {"tools": tools, "tool_choice": choice}


def _plan(body: dict) -> tuple[RequestIds, list[tuple]]:
    """Validate the body and plan the reply; returns the response's ids and the plan."""
    if not isinstance(body, dict):
        raise _type_error("body", dict, body)
    check_json(body)
    _get(body, "model", "", str)
    check_parameters(body, CHAT)  # the SDK's own request types: unknown keys and wrong JSON types
    parallel = _get(body, "parallel_tool_calls", "", bool, optional=True)
    metadata = _get(body, "metadata", "", dict, optional=True)
    items = _parse_messages(body)
    flat = _flat_tools(body)
    mode, allowed = _tool_policy(flat, _parse_tools(flat))
    fmt = chat_format(body, "\n".join(item["text"] for item in items if item["kind"] == "message"))
    plan = apply_format(_decide(items, mode, allowed, parallel is not False, _persona(metadata)), items, fmt)
    return for_request(json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)), plan


def _tool_calls(plan: list[tuple], ids: RequestIds) -> list[dict]:
    return [{"id": f"call_{ids.mint(f'call{i}', 24)}", "type": "function",
             "function": {"name": step[1], "arguments": json.dumps(step[2], separators=(",", ":"), ensure_ascii=False)}}
            for i, step in enumerate(plan) if step[0] == "call"]  # fmt: skip


def _usage(seed: str, produced: str) -> dict:
    prompt, completion = _tokens(seed), _tokens(produced)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def chat_completion(body: dict) -> dict:
    """Answer one non-streamed `POST /v1/chat/completions` body with a ChatCompletion JSON dict.

    Raises:
        BadRequest: the body is malformed, as the real API would reject it.
    """
    ids, plan = _plan(body)
    calls = _tool_calls(plan, ids)
    text = "\n\n".join(step[1] for step in plan if step[0] == "message") or None
    message: dict[str, Any] = {"role": "assistant", "content": None if calls else text, "refusal": None,
                               "annotations": []}
    if calls:
        message["tool_calls"] = calls
    produced = (text or "") + "".join(c["function"]["name"] + c["function"]["arguments"] for c in calls)
    completion = {"id": f"chatcmpl-{ids.mint('chat', 24)}", "object": "chat.completion", "created": CREATED_AT,
                  "model": body["model"], "service_tier": "default", "system_fingerprint": None,
                  "choices": [{"index": 0, "message": message, "logprobs": None,
                               "finish_reason": "tool_calls" if calls else "stop"}],
                  "usage": _usage(ids.body_text, produced)}
    if standin.active():  # the stand-in: varied as real models vary (standin.py)
        structured = (body.get("response_format") or {}).get("type") not in (None, "text")
        completion = standin.vary_chat(body, _parse_messages(body), completion, structured)
    return completion


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def chat_chunks(body: dict) -> list[dict]:
    """The same answer as `chat_completion`, as the `chat.completion.chunk`s a stream sends.

    Raises:
        BadRequest: the body is malformed (before any chunk: a real stream answers 400 too).
    """
    whole = chat_completion(body)
    message, finish = whole["choices"][0]["message"], whole["choices"][0]["finish_reason"]
    head = {"id": whole["id"], "object": "chat.completion.chunk", "created": whole["created"],
            "model": whole["model"], "service_tier": "default", "system_fingerprint": whole["system_fingerprint"]}
    deltas: list[dict] = [{"role": "assistant", "content": "", "refusal": None}]
    if message["content"] and message.get("tool_calls"):  # text beside calls (the stand-in) comes first
        deltas += [{"content": piece} for piece in _pieces(message["content"], 16)]
    for index, call in enumerate(message.get("tool_calls", [])):
        deltas.append({"tool_calls": [{"index": index, "id": call["id"], "type": "function",
                                       "function": {"name": call["function"]["name"], "arguments": ""}}]})
        deltas += [{"tool_calls": [{"index": index, "function": {"arguments": piece}}]}
                   for piece in _pieces(call["function"]["arguments"], 8)]
    if message["content"] and not message.get("tool_calls"):
        deltas += [{"content": piece} for piece in _pieces(message["content"], 16)]
    chunks = [{**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}]}
              for delta in deltas]
    chunks.append({**head, "choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish}]})
    if (body.get("stream_options") or {}).get("include_usage"):
        chunks.append({**head, "choices": [], "usage": whole["usage"]})
    return chunks


def chat_sse(body: dict) -> bytes:
    """The stream's bytes: one `data: {chunk}` event per chunk, then `data: [DONE]`."""
    events = [f"data: {json.dumps(chunk, ensure_ascii=False)}\n\n" for chunk in chat_chunks(body)]
    return ("".join(events) + "data: [DONE]\n\n").encode("utf-8")
