"""`max_output_tokens`: a response that runs out of output tokens stops where it is, as the real API's does.

The real API counts every token the model generates against `max_output_tokens`; when the limit
is reached it returns the response anyway, with `status: "incomplete"`,
`incomplete_details: {"reason": "max_output_tokens"}` and the output cut where generation stopped
(the SDK's `Response.status` / `IncompleteDetails.reason`, `ResponseOutputMessage.status` and
`ResponseFunctionToolCall.status` all allow "incomplete"). `completed_at` is set only for a
completed response. A value below 16 is refused before anything is generated:
"Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, but got 10
instead." (code `integer_below_min_value`; https://github.com/vectorize-io/hindsight/issues/58).

The offline model counts tokens with the same rough rule as its `usage` (4 characters a token).
Items are kept in order while the budget lasts; the item that crosses the limit is cut (a
message's text, or a call's `arguments` text, which is then no longer valid JSON) and marked
"incomplete"; the items after it are dropped.
"""

from __future__ import annotations

import math
from typing import Any

from course_lib.offline_model.validation import BadRequest, _get

MINIMUM = 16  # the real API's lower bound for max_output_tokens
CHARS_PER_TOKEN = 4  # the offline model's rough tokenizer (see response._tokens)


def max_output_tokens(body: dict) -> int | None:
    """The request's `max_output_tokens`, or None when it is not set.

    Raises:
        BadRequest: not an integer, or below 16, in the real API's words.
    """
    limit = _get(body, "max_output_tokens", "", int, optional=True)
    if limit is not None and limit < MINIMUM:
        raise BadRequest(f"Invalid 'max_output_tokens': integer below minimum value. Expected a value >= {MINIMUM}, "
                         f"but got {limit} instead.", "max_output_tokens", "integer_below_min_value")
    return limit


def _texts(item: dict[str, Any]) -> list[tuple[dict, str]]:
    """The (holder, key) pairs whose text counts as generated output, in order."""
    if item["type"] == "function_call":
        return [(item, "name"), (item, "arguments")]
    return [(part, "text") for part in item.get("content", []) if "text" in part]


def apply_limit(response: dict[str, Any], limit: int | None) -> dict[str, Any]:
    """Cut `response` (a Response dict) to `limit` output tokens; unchanged when it fits or `limit` is None."""
    if limit is None:
        return response
    response = {**response, "max_output_tokens": limit}
    left = limit * CHARS_PER_TOKEN
    produced = sum(len(holder[key]) for item in response["output"] for holder, key in _texts(item))
    if math.ceil(produced / CHARS_PER_TOKEN) <= limit:
        return response
    kept = []
    for item in response["output"]:
        item = {**item, "content": [dict(part) for part in item["content"]]} if "content" in item else dict(item)
        for holder, key in _texts(item):
            holder[key], left = holder[key][:left], max(0, left - len(holder[key]))
        kept.append(item)
        if left == 0:
            item["status"] = "incomplete"
            break
    usage = {**response["usage"], "output_tokens": limit,
             "total_tokens": response["usage"]["input_tokens"] + limit}  # fmt: skip
    return {**response, "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"},
            "completed_at": None, "output": kept, "usage": usage}
