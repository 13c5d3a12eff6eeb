"""`respond`: one `POST /v1/responses` body in, one Response JSON dict out (deterministic; the only
state is the store of earlier responses that `previous_response_id` reads, see `state`).

Validates the body, plans the output, then builds the Response: ids are hashes of the request
body, `created_at` is fixed and usage is a rough token count, so the same request always gives a
byte-identical response.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from course_lib.offline_model.limits import apply_limit, max_output_tokens
from course_lib.offline_model.personas import _persona
from course_lib.offline_model.plan import _decide
from course_lib.offline_model.reasoning import add_reasoning, check_input
from course_lib.offline_model.request_params import check_parameters
from course_lib.offline_model.state import chained_input, remember
from course_lib.offline_model.validation import (
    BadRequest,
    _check_pairs,
    _get,
    _parse_input,
    _parse_tools,
    _tool_policy,
    _type_error,
)

CREATED_AT = 1767225600  # 2026-01-01T00:00:00Z: fixed so stored notebook outputs never change


def _hex(seed: str, label: str, length: int) -> str:
    return hashlib.sha256(f"{seed}|{label}".encode()).hexdigest()[:length]


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)  # a rough, deterministic stand-in for a tokenizer


def _output_item(entry: tuple, seed: str, index: int) -> dict[str, Any]:
    if entry[0] == "call":
        return {"type": "function_call", "id": f"fc_{_hex(seed, f'fc{index}', 24)}",
                "call_id": f"call_{_hex(seed, f'call{index}', 12)}", "name": entry[1],
                "arguments": json.dumps(entry[2], separators=(",", ":"), ensure_ascii=False), "status": "completed"}
    return {"type": "message", "id": f"msg_{_hex(seed, f'msg{index}', 24)}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": entry[1], "annotations": [], "logprobs": []}]}


def respond(body: dict) -> dict:
    """Answer one `POST /v1/responses` body with a Response JSON dict (deterministic; a stored response is
    remembered for `previous_response_id`, see `state`).

    Raises:
        BadRequest: the body is malformed, as the real API would reject it.
    """
    if not isinstance(body, dict):
        raise _type_error("body", dict, body)
    model = _get(body, "model", "", str)
    check_parameters(body)  # unknown top-level keys and wrong JSON types (after a missing model, as the API)
    chained, limit = chained_input(body), max_output_tokens(body)  # previous_response_id: state.py; limits.py
    instructions = _get(body, "instructions", "", str, optional=True)
    parallel = _get(body, "parallel_tool_calls", "", bool, optional=True)
    metadata = _get(body, "metadata", "", dict, optional=True)
    for key, value in (metadata or {}).items():
        if not isinstance(value, str):
            raise _type_error(f"metadata.{key}", str, value)
    persona = _persona(metadata)
    items = _parse_input(body)  # alone first, so a 400 names this request's own input[i]
    if chained is not body["input"]:
        items = _parse_input({**body, "input": chained})
    mode, allowed = _tool_policy(body, _parse_tools(body))
    _check_pairs(items)
    items = check_input(items)  # reasoning items passed back where a reasoning model needs them (reasoning.py)
    # How the answer is delivered is not part of it: streamed or not, the same ids (see `streaming`).
    delivered = {key: value for key, value in body.items() if key not in ("stream", "stream_options")}
    seed = json.dumps(delivered, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    plan = _decide(items, mode, allowed, parallel is not False, persona)
    output = [_output_item(entry, seed, i) for i, entry in enumerate(plan)]
    produced = "".join(part["text"] for item in output for part in item.get("content", []))
    produced += "".join(item.get("name", "") + item.get("arguments", "") for item in output)
    input_tokens, output_tokens = _tokens(seed), _tokens(produced)
    return remember(body, chained, apply_limit(add_reasoning(body, f"rs_{_hex(seed, 'rs', 24)}", {
        "id": f"resp_{_hex(seed, 'resp', 24)}", "object": "response", "created_at": CREATED_AT,
        "status": "completed", "background": False, "completed_at": CREATED_AT, "error": None,
        "incomplete_details": None, "instructions": instructions, "max_output_tokens": None,
        "model": model, "output": output, "parallel_tool_calls": parallel is not False,
        "previous_response_id": None, "reasoning": {"effort": None, "summary": None},
        "service_tier": "default", "store": body.get("store") is not False, "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools") or [], "top_p": 1.0,
        "truncation": "disabled", "user": None, "metadata": metadata or {},
        "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                  "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": input_tokens + output_tokens},
    }), limit))
