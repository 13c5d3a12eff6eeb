"""`anthropic_message`: one `POST /v1/messages` body in, a Message (or its event stream) out — the
same offline model as `/v1/responses`, in Anthropic's Messages envelope.

Only the envelope differs; the plan is `plan._decide` over the same normalised items:

- the rule: `tools[i]` {name, description, input_schema};
- the value: a `tool_use` content block whose `input` is an *object*, not JSON text, under its `id`;
- the result: a `tool_result` block in the next user message, tied by `tool_use_id`, with
  `is_error` to say the tool failed.

Errors come in Anthropic's shape, `{"type": "error", "error": {"type": "invalid_request_error",
"message": …}, "request_id": …}`, with the real API's words: the pairing and order of tool_use and
tool_result blocks as `course_lib.api_rules` states them (`messages_order_problems`: tool_result
blocks first in their user message, each answering a tool_use of the message before, every tool_use
answered), "tools.0.custom.input_schema.type: Input should be 'object'", and
"messages.1.content.0.tool_use.input: Input should be a valid dictionary".

Streamed (`stream: true`): `message_start`, per block `content_block_start` / `content_block_delta`
(`text_delta`, `thinking_delta` then `signature_delta`, or `input_json_delta` whose `partial_json`
pieces only parse once joined) / `content_block_stop`, then `message_delta` (the `stop_reason`) and
`message_stop`.

Also: structured output (`output_config.format`, and the forced-tool pattern: `structured`), a
thinking block first when `thinking` is enabled (`thinking`), the beta message threads the SDK's
tool runner sends with its `anthropic-beta` header (`threads`), and `count_tokens`, whose count is
the reply's `usage.input_tokens` for the same prompt.
"""

from __future__ import annotations

import json
from typing import Any

from course_lib.api_rules import messages_order_problems
from course_lib.offline_model.harness import without_notes
from course_lib.offline_model.ids import for_request
from course_lib.offline_model.personas import _persona
from course_lib.offline_model.plan import _decide
from course_lib.offline_model import standin, threads
from course_lib.offline_model.reading import _last_turn, _latest_user_text
from course_lib.offline_model.request_params import (
    BETA_COUNT_TOKENS,
    BETA_MESSAGES,
    COUNT_TOKENS,
    MESSAGES,
    check_json,
    first_fault,
)
from course_lib.offline_model.response_object import _tokens
from course_lib.offline_model.structured import apply_format, messages_format
from course_lib.offline_model.thinking import ThinkingError, thinking_block, thinking_config, thought
from course_lib.offline_model.tool_output import read_output
from course_lib.offline_model.validation import BadRequest, _parse_tools, _tool_policy
from course_lib.offline_model.wording import language


class AnthropicError(Exception):
    """A request Anthropic's API refuses; `to_body` gives its error shape (HTTP 400). `error_code`
    goes into `error.details`, where the SDK's thread logic reads it (`threads`)."""

    def __init__(self, message: str, error_code: str | None = None) -> None:
        super().__init__(message)
        self.message, self.error_code = message, error_code

    def to_body(self) -> dict[str, Any]:
        request_id = f"req_offline{for_request(self.message).mint('req', 16)}"  # fresh for every answer
        error: dict[str, Any] = {"type": "invalid_request_error", "message": self.message}
        if self.error_code is not None:
            error["details"] = {"error_code": self.error_code}
        return {"type": "error", "error": error, "request_id": request_id}


_KINDS = {str: "a valid string", dict: "a valid dictionary", list: "a valid list", bool: "a valid boolean",
          int: "a valid integer"}  # fmt: skip


def _field(obj: dict, key: str, where: str, kind: type | tuple, *, optional: bool = False) -> Any:
    """`obj[key]` of the right JSON type, refused in the API's (pydantic-style) words.

    Raises:
        AnthropicError: "where.key: Field required" or "where.key: Input should be a valid …".
    """
    spot = f"{where}.{key}" if where else key
    if obj.get(key) is None:
        if optional:
            return None
        raise AnthropicError(f"{spot}: Field required")
    kinds = kind if isinstance(kind, tuple) else (kind,)
    value = obj[key]
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise AnthropicError(f"{spot}: Input should be {_KINDS[kinds[0]]}")
    return value


# A top-level value of the wrong JSON type, in the API's (pydantic) words, by the kind it should be.
_SHOULD_BE = {"string": "a valid string", "integer": "a valid integer", "decimal": "a valid number",
              "boolean": "a valid boolean", "object": "a valid dictionary", "array": "a valid list"}  # fmt: skip


def _check_parameters(body: dict, api: tuple[str, str] = MESSAGES) -> None:
    """Refuse an unknown top-level key or one of the wrong JSON type, as the SDK's own request types
    (`anthropic.types.message_create_params`, its beta twin with an `anthropic-beta` header, or the
    count_tokens ones; see `request_params`) declare them. `betas` is a header, never a body key.

    Raises:
        AnthropicError: "foo: Extra inputs are not permitted" for the first unknown key (as in
            https://github.com/amrit110/oli/issues/7 and https://github.com/Aider-AI/aider/issues/4404),
            else "max_tokens: Input should be a valid integer" (or `'a' or 'b'` for literals).
    """
    if "betas" in body:
        raise AnthropicError("betas: Extra inputs are not permitted")
    fault = first_fault(body, api)
    if fault is None:
        return
    if fault.kinds is None:
        raise AnthropicError(f"{fault.key}: Extra inputs are not permitted")
    kind = fault.kinds[0]
    if kind.name == "literals":
        values = [f"'{value}'" for value in kind.detail]
        expected = values[0] if len(values) == 1 else f"{', '.join(values[:-1])} or {values[-1]}"
    else:
        expected = _SHOULD_BE[kind.name]
    raise AnthropicError(f"{fault.key}: Input should be {expected}")


def _block_text(content: Any, where: str) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(_field(block, "text", f"{where}.{i}", str) for i, block in enumerate(content)
                     if isinstance(block, dict) and block.get("type") == "text")


def _result_text(block: dict, where: str) -> str:
    """A tool_result's content as the model reads it. `is_error` on content that does not say it
    failed arrives as an MCP-style result object (`{"isError": true, "content": [...]}`), a shape
    the offline model reads as a failure; content that already reads as an error stays as it is."""
    text = _block_text(_field(block, "content", where, (str, list), optional=True) or "", f"{where}.content")
    text = without_notes(text)  # a harness's own notes (Claude Code's <system-reminder>) are not the tool's output
    if _field(block, "is_error", where, bool, optional=True) and read_output(text).ok:
        return json.dumps({"isError": True, "content": [{"type": "text", "text": text}]}, ensure_ascii=False)
    return text


def _parse_messages(body: dict) -> list[dict]:
    """`system` and `messages` → the model's items: {"kind": "message"|"call"|"output", …}.

    Raises:
        AnthropicError: a wrong shape, `tool_use.input` that is not an object, or a tool_use /
            tool_result pairing the real API refuses (see the module docstring).
    """
    items: list[dict] = []
    system = _field(body, "system", "", (str, list), optional=True)
    if system:
        items.append({"kind": "message", "role": "system", "text": _block_text(system, "system")})
    if not _field(body, "messages", "", list):
        raise AnthropicError("messages: at least one message is required")  # wording not verified
    for i, message in enumerate(body["messages"]):
        where = f"messages.{i}"
        if not isinstance(message, dict):
            raise AnthropicError(f"{where}: Input should be a valid dictionary")
        role = _field(message, "role", where, str)
        if role not in ("user", "assistant"):
            raise AnthropicError(f"{where}.role: Input should be 'user' or 'assistant'")
        content = _field(message, "content", where, (str, list))
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for j, block in enumerate(blocks):
            spot = f"{where}.content.{j}"
            kind = _field(block, "type", spot, str) if isinstance(block, dict) else None
            if kind == "text":
                items.append({"kind": "message", "role": role, "text": _field(block, "text", spot, str)})
            elif kind == "tool_use" and role == "assistant":
                tool_input = block.get("input")
                if not isinstance(tool_input, dict):
                    raise AnthropicError(f"{spot}.tool_use.input: Input should be a valid dictionary")
                call_id = _field(block, "id", spot, str)
                items.append({"kind": "call", "call_id": call_id, "name": _field(block, "name", spot, str),
                              "arguments": json.dumps(tool_input, ensure_ascii=False)})
            elif kind == "tool_result" and role == "user":
                call_id = _field(block, "tool_use_id", spot, str)
                items.append({"kind": "output", "call_id": call_id, "text": _result_text(block, spot)})
            elif kind is None or kind not in ("image", "document", "thinking", "redacted_thinking"):
                raise AnthropicError(f"{spot}: Input tag '{kind}' found using 'type' does not match any of the "
                                     "expected tags for this message role")
    if problems := messages_order_problems(body["messages"]):  # the pairing and order rules (api_rules)
        raise AnthropicError(problems[0])
    return items


def _policy(body: dict) -> tuple[str, list[dict], bool]:
    """`tools` and `tool_choice` ({"type": "auto"|"any"|"tool"|"none"}) as the planner reads them."""
    tools = []
    for i, tool in enumerate(_field(body, "tools", "", list, optional=True) or []):
        if not isinstance(tool, dict):
            raise AnthropicError(f"tools.{i}: Input should be a valid dictionary")
        if tool.get("type") in (None, "custom"):
            schema = _field(tool, "input_schema", f"tools.{i}", dict)
            if schema.get("type") != "object":  # RULES["messages.input_schema_object"]
                said = "Field required" if schema.get("type") is None else "Input should be 'object'"
                raise AnthropicError(f"tools.{i}.custom.input_schema.type: {said}")
            tools.append({"type": "function", "name": _field(tool, "name", f"tools.{i}", str),
                          "description": tool.get("description") or "",
                          "parameters": _field(tool, "input_schema", f"tools.{i}", dict),
                          "strict": tool.get("strict") is True})
    choice = _field(body, "tool_choice", "", dict, optional=True) or {"type": "auto"}
    choice = {"type": "auto"} if standin.local() else choice  # Ollama's Messages ignore tool_choice (standin.local)
    kind = _field(choice, "type", "tool_choice", str)
    flat_choice: Any = {"auto": "auto", "any": "required", "none": "none"}.get(kind)
    if kind == "tool":
        flat_choice = {"type": "function", "name": _field(choice, "name", "tool_choice", str)}
    if flat_choice is None:
        raise AnthropicError("tool_choice: Input tag '{kind}' found using 'type' does not match any of the expected "
                             "tags: 'auto', 'any', 'tool', 'none'".replace("{kind}", kind))
    try:
        flat = {"tools": tools, "tool_choice": flat_choice}
        mode, allowed = _tool_policy(flat, _parse_tools(flat))
    except BadRequest as error:  # the shared checks (a schema that is no JSON Schema, an unknown tool name)
        raise AnthropicError(error.message) from None
    return mode, allowed, choice.get("disable_parallel_tool_use") is not True


def _checked(body: Any, api: tuple[str, str]) -> dict:
    """The checks every Messages request gets first: an object, valid JSON, a model, known keys."""
    if not isinstance(body, dict):
        raise AnthropicError("Input should be a valid dictionary")
    try:
        check_json(body)
    except BadRequest as error:
        raise AnthropicError(error.message) from None
    _field(body, "model", "", str)
    _check_parameters(body, api)
    return body


_PROMPT = ("system", "messages", "tools", "tool_choice", "thinking", "output_config")


def _input_tokens(body: dict) -> int:
    """What the prompt counts: the same for `count_tokens` and for the reply's `usage`."""
    prompt = {key: body[key] for key in _PROMPT if key in body}
    return _tokens(json.dumps(prompt, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def count_tokens(body: dict, betas: list[str] | None = None) -> dict:
    """Answer `POST /v1/messages/count_tokens`: `{"input_tokens": N}`, the count `usage.input_tokens`
    would give the same prompt (a rough 4 characters a token, as everywhere in this model).

    Raises:
        AnthropicError: the body is malformed, as the real API would reject it.
    """
    body = _checked(body, BETA_COUNT_TOKENS if betas else COUNT_TOKENS)
    _parse_messages(body)
    _policy(body)
    return {"input_tokens": _input_tokens(body)}


def anthropic_message(body: dict, betas: list[str] | None = None) -> dict:
    """Answer one non-streamed `POST /v1/messages` body with a Message JSON dict; `betas`: the
    `anthropic-beta` header's values (a thread needs `threads.BETA`).

    Raises:
        AnthropicError: the body is malformed, as the real API would reject it.
    """
    betas = betas or []
    body = _checked(body, BETA_MESSAGES if betas else MESSAGES)
    model = body["model"]
    max_tokens = _field(body, "max_tokens", "", int)  # required by the real API, unlike Responses and Chat
    metadata = _field(body, "metadata", "", dict, optional=True)
    try:
        whole, thread = threads.resolve(body, betas)  # a `continue` turn: the thread's messages, system, tools first
        thinking = thinking_config(body, max_tokens)
        fmt = messages_format(body)
    except (threads.ThreadError, ThinkingError, BadRequest) as error:
        raise AnthropicError(str(error), error.code if isinstance(error, threads.ThreadError) else None) from None
    items = _parse_messages(whole)
    mode, allowed, parallel = _policy(whole)
    plan = apply_format(_decide(items, mode, allowed, parallel, _persona(metadata)), items, fmt)
    ids = for_request(json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
    content = [{"type": "text", "text": step[1], "citations": None} for step in plan if step[0] == "message"]
    content += [{"type": "tool_use", "id": f"toolu_{ids.mint(f'toolu{i}', 24)}", "name": step[1], "input": step[2]}
                for i, step in enumerate(plan) if step[0] == "call"]  # text first, as Claude writes it
    if thinking is not None:  # before everything else, as Claude thinks first
        after = any(item["kind"] == "output" for item in _last_turn(items))
        content.insert(0, thinking_block(thinking, thought(plan, after, language(_latest_user_text(items)))))
    produced = json.dumps(content, ensure_ascii=False)
    message = {"id": f"msg_{ids.mint('msg', 24)}", "type": "message", "role": "assistant", "model": model,
               "content": content,
               "stop_reason": "tool_use" if any(b["type"] == "tool_use" for b in content) else "end_turn",
               "stop_sequence": None,
               "usage": {"input_tokens": _input_tokens(whole), "output_tokens": _tokens(produced),
                         "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "service_tier": "standard"}}
    if standin.active():  # the stand-in: varied as real models vary (standin.py)
        message = standin.vary_message(whole, items, message, fmt is not None)
    threads.remember(whole, thread, message)
    return message


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


def message_events(body: dict, betas: list[str] | None = None) -> list[dict]:
    """The same answer as `anthropic_message`, as the events a stream sends.

    Raises:
        AnthropicError: the body is malformed (before any event: a real stream answers 400 too).
    """
    whole = anthropic_message(body, betas)
    start = {**whole, "content": [], "stop_reason": None, "usage": {**whole["usage"], "output_tokens": 1}}
    events: list[dict] = [{"type": "message_start", "message": start}]
    for index, block in enumerate(whole["content"]):
        if block["type"] == "text":
            opened, deltas = {"type": "text", "text": "", "citations": None}, [
                {"type": "text_delta", "text": piece} for piece in _pieces(block["text"], 16)]
        elif block["type"] == "thinking":  # the thought in pieces, then its signature whole
            opened = {"type": "thinking", "thinking": "", "signature": ""}
            deltas = [{"type": "thinking_delta", "thinking": piece} for piece in _pieces(block["thinking"], 16)
                      if piece] + [{"type": "signature_delta", "signature": block["signature"]}]  # fmt: skip
        else:
            opened = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            deltas = [{"type": "input_json_delta", "partial_json": piece}
                      for piece in _pieces(json.dumps(block["input"], ensure_ascii=False), 8)]
        events.append({"type": "content_block_start", "index": index, "content_block": opened})
        events += [{"type": "content_block_delta", "index": index, "delta": delta} for delta in deltas]
        events.append({"type": "content_block_stop", "index": index})
    events.append({"type": "message_delta", "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
                   "usage": {"output_tokens": whole["usage"]["output_tokens"]}})
    events.append({"type": "message_stop"})
    return events


def message_sse(body: dict, betas: list[str] | None = None) -> bytes:
    """The stream's bytes: `event: <type>` and `data: {event}` for each event."""
    return "".join(f"event: {event['type']}\ndata: {json.dumps(event, ensure_ascii=False)}\n\n"
                   for event in message_events(body, betas)).encode("utf-8")
