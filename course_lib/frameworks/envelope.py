"""The model's wire in either envelope a framework speaks: Responses or Anthropic Messages.

Most frameworks here speak the OpenAI Responses API (`POST /v1/responses`: `tools[]`,
`function_call` items, `function_call_output` items); the Claude Code CLI speaks Messages
(`POST /v1/messages`: `tools[].input_schema`, `tool_use` blocks, `tool_result` blocks in the next user
message), streamed. `trace.calls` reads both through the functions here, which give one shape:

    declarations(request)   [{"name", "parameters", "strict"}]            the rule
    calls_in(response)      [{"type", "call_id", "name", "arguments"}]     the value (arguments as JSON text)
    feedback_in(request)    [{"type", "call_id", "output", "is_error"}]    the result sent back
    answer_of(response)     the text of the model's answer (None: it has none)
    task_of(request)        the user's words that started the conversation

A streamed answer is read from its events as the SDKs accumulate them (`message_start`,
`content_block_start`, `content_block_delta` with `text_delta` or `input_json_delta`). The notes a
harness puts around the user's words (Claude Code's `<system-reminder>` blocks) are not the task.
"""

from __future__ import annotations

import json
import re
from typing import Any

from course_lib.wire import HttpExchange

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.S)


def is_messages(exchange: HttpExchange) -> bool:
    return exchange.path.rstrip("/").endswith("/messages")


def response_of(exchange: HttpExchange) -> dict[str, Any] | None:
    """The response body as one object: JSON as it came, or a Messages stream accumulated."""
    if isinstance(exchange.response, dict):
        return exchange.response
    if isinstance(exchange.response, str) and is_messages(exchange):
        return accumulate_messages(exchange.response)
    return None


def accumulate_messages(stream: str) -> dict[str, Any] | None:
    """A Messages event stream as the Message it builds (None: no `message_start` in it)."""
    message: dict[str, Any] | None = None
    partial: dict[int, str] = {}
    for line in stream.splitlines():
        if not line.startswith("data:"):
            continue
        try:
            event = json.loads(line[5:])
        except ValueError:
            continue
        kind = event.get("type")
        if kind == "message_start":
            message = dict(event.get("message") or {}, content=[])
        elif message is None:
            continue
        elif kind == "content_block_start":
            message["content"].append(dict(event.get("content_block") or {}))
        elif kind == "content_block_delta":
            index, delta = event.get("index", 0), event.get("delta") or {}
            block = message["content"][index] if index < len(message["content"]) else {}
            if delta.get("type") == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
            elif delta.get("type") == "input_json_delta":
                partial[index] = partial.get(index, "") + delta.get("partial_json", "")
        elif kind == "message_delta":
            message.update({k: v for k, v in (event.get("delta") or {}).items() if v is not None})
    for index, text in partial.items():
        try:
            message["content"][index]["input"] = json.loads(text) if text else {}
        except (ValueError, IndexError, TypeError):
            pass
    return message


def declarations(request: dict[str, Any], messages: bool) -> list[dict[str, Any]]:
    if not messages:
        return [t for t in request.get("tools") or [] if isinstance(t, dict)]
    return [{"name": t.get("name"), "parameters": t.get("input_schema"), **({"strict": t["strict"]} if "strict" in t else {})}
            for t in request.get("tools") or [] if isinstance(t, dict)]  # fmt: skip


def calls_in(response: dict[str, Any], messages: bool) -> list[dict[str, Any]]:
    if not messages:
        return [item for item in response.get("output") or [] if item.get("type") == "function_call"]
    return [{"type": "tool_use", "call_id": block.get("id"), "name": block.get("name"),
             "arguments": json.dumps(block.get("input"), ensure_ascii=False, separators=(",", ":"))}
            for block in response.get("content") or [] if block.get("type") == "tool_use"]  # fmt: skip


def feedback_in(request: dict[str, Any], messages: bool) -> list[dict[str, Any]]:
    if not messages:
        items = request.get("input")
        return [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"] if isinstance(items, list) else []
    found = []
    for message in request.get("messages") or []:
        if message.get("role") != "user" or not isinstance(message.get("content"), list):
            continue
        for block in message["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                output = block.get("content")
                text = output if isinstance(output, str) else "".join(
                    b.get("text", "") for b in output or [] if isinstance(b, dict))
                found.append({"type": "tool_result", "call_id": block.get("tool_use_id"),
                              "output": _REMINDER.sub("", text).strip(), "is_error": bool(block.get("is_error"))})
    return found


def answer_of(response: dict[str, Any] | None, messages: bool) -> str | None:
    if response is None:
        return None
    if messages:
        texts = [b.get("text", "") for b in response.get("content") or [] if b.get("type") == "text"]
        return "".join(texts).strip() if texts else None
    texts = [part.get("text", "") for item in response.get("output", []) if item.get("type") == "message"
             for part in item.get("content", []) if part.get("type") == "output_text"]  # fmt: skip
    return "".join(texts) if texts else None


def task_of(request: Any) -> str:
    """The user's words that started the conversation: in Responses the first user message; in Messages
    the last user message with words (a session may hold several tasks; a message of tool results has
    no words), a harness's reminders left out ('' if none)."""
    if not isinstance(request, dict):
        return ""
    items = request.get("input") if "input" in request else request.get("messages")
    if isinstance(items, str):
        return items
    task = ""
    for item in items or []:
        if not (isinstance(item, dict) and item.get("role") == "user"):
            continue
        content = item.get("content")
        if isinstance(content, str):
            words = _REMINDER.sub("", content).strip()
        else:
            words = "\n".join(w for w in (_REMINDER.sub("", part.get("text", "")).strip() for part in content or []
                                           if isinstance(part, dict) and part.get("type") in ("input_text", "text")) if w)
        task = words or task
        if task and "input" in request:
            break
    return task
