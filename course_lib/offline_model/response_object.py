"""The Response object around a planned output: its items with their ids, `usage`, the settings the
request gave echoed back, reasoning for a reasoning model, `max_output_tokens` applied, and the
response remembered for `previous_response_id` (`state`).

Shared by the two ways a Responses request is answered: `response.respond` (function tools) and
`hosted_mcp.respond` (the platform's own MCP calls). `created_at` is fixed and `usage` is a rough
token count of the body, so the same request always gives the same answer; its ids are fresh for
every request, yet the same in every run of the same requests (`ids`).
"""

from __future__ import annotations

import json
import math
from typing import Any

from course_lib.offline_model import standin
from course_lib.offline_model.ids import RequestIds
from course_lib.offline_model.limits import apply_limit, max_output_tokens
from course_lib.offline_model.personas import _persona
from course_lib.offline_model.reasoning import add_reasoning
from course_lib.offline_model.state import chained_input, remember
from course_lib.offline_model.structured import responses_format
from course_lib.offline_model.validation import NAMESPACE_SEP, _get, _type_error

CREATED_AT = 1767225600  # 2026-01-01T00:00:00Z: fixed so stored notebook outputs never change


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)  # a rough, deterministic stand-in for a tokenizer


def _output_item(entry: tuple, ids: RequestIds, index: int) -> dict[str, Any]:
    if entry[0] == "call":
        namespace, _, name = entry[1].rpartition(NAMESPACE_SEP)  # a namespaced tool: "ref.read_text_file"
        item = {"type": "function_call", "id": f"fc_{ids.mint(f'fc{index}', 24)}",
                "call_id": f"call_{ids.mint(f'call{index}', 12)}", "name": name,
                "arguments": json.dumps(entry[2], separators=(",", ":"), ensure_ascii=False), "status": "completed"}
        return item | ({"namespace": namespace} if namespace else {})
    return {"type": "message", "id": f"msg_{ids.mint(f'msg{index}', 24)}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": entry[1], "annotations": [], "logprobs": []}]}


def seed_of(body: dict) -> str:
    """The request as its ids hash it (with its number, `ids.for_request`) and `usage` counts it:
    the body, without how it is delivered (streamed or not, the same answer; see `streaming`)."""
    delivered = {key: value for key, value in body.items() if key not in ("stream", "stream_options")}
    return json.dumps(delivered, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def early_checks(body: dict) -> tuple[list | str, bool | None, str]:
    """The checks that come before the input's (in the real API's order): the chained input
    (`previous_response_id`), `max_output_tokens`, `instructions`, `parallel_tool_calls`,
    `metadata` and `text.format`; returns the chained input, `parallel_tool_calls` and the persona.

    Raises:
        BadRequest: one of them is malformed, or the previous response is not stored.
    """
    chained, _ = chained_input(body), max_output_tokens(body)  # previous_response_id: state.py; limits.py
    _get(body, "instructions", "", str, optional=True)
    parallel = _get(body, "parallel_tool_calls", "", bool, optional=True)
    persona = _persona(_metadata(body))
    responses_format(body)  # a malformed format is a 400 before anything is planned
    return chained, parallel, persona


def _metadata(body: dict) -> dict | None:
    """`metadata`, checked: an object of strings.

    Raises:
        BadRequest: not an object, or a value that is not a string.
    """
    metadata = _get(body, "metadata", "", dict, optional=True)
    for key, value in (metadata or {}).items():
        if not isinstance(value, str):
            raise _type_error(f"metadata.{key}", str, value)
    return metadata


def _text_echo(body: dict) -> dict[str, Any]:
    """`text` as the Response repeats it: the format asked for (`structured`), and the verbosity."""
    fmt = responses_format(body)
    verbosity = (body.get("text") or {}).get("verbosity") or "medium"
    return {"format": fmt.echo if fmt is not None else {"type": "text"}, "verbosity": verbosity}


def finish(body: dict, chained: list | str, ids: RequestIds, output: list[dict[str, Any]]) -> dict:
    """The Response around `output` (its items, in order): usage, echoed settings, reasoning for a
    reasoning model, `max_output_tokens` applied, and remembered for `previous_response_id`.

    `early_checks` has checked the body's settings.
    """
    model, limit = body["model"], max_output_tokens(body)  # limits.py
    instructions = _get(body, "instructions", "", str, optional=True)
    parallel = _get(body, "parallel_tool_calls", "", bool, optional=True)
    metadata = _metadata(body)
    created = CREATED_AT
    if standin.active():  # the stand-in: varied as real models vary (standin.py)
        output = standin.vary_responses(body, chained if isinstance(chained, list) else [], output,
                                        responses_format(body) is not None)
        created = standin.now()
    produced = "".join(part["text"] for item in output for part in item.get("content", []))
    produced += "".join(item.get("name", "") + item.get("arguments", "") for item in output)
    input_tokens, output_tokens = _tokens(ids.body_text), _tokens(produced)
    response = add_reasoning(body, f"rs_{ids.mint('rs', 24)}", {
        "id": f"resp_{ids.mint('resp', 24)}", "object": "response", "created_at": created,
        "status": "completed", "background": False, "completed_at": created, "error": None,
        "incomplete_details": None, "instructions": instructions, "max_output_tokens": None,
        "model": model, "output": output, "parallel_tool_calls": parallel is not False,
        "previous_response_id": None, "reasoning": {"effort": None, "summary": None},
        "service_tier": "default", "store": body.get("store") is not False, "temperature": 1.0,
        "text": _text_echo(body),
        "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools") or [], "top_p": 1.0,
        "truncation": "disabled", "user": None, "metadata": metadata or {},
        "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                  "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": input_tokens + output_tokens},
    })
    if standin.local():  # a local server: nothing stored, tool_choice not supported (standin.local)
        response.update(store=False, tool_choice="auto")
    elif standin.active():
        response["model"] = standin.dated(model)
    return remember(body, chained, apply_limit(response, limit))
