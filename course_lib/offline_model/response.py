"""`respond`: one `POST /v1/responses` body in, one Response JSON dict out (deterministic; the only
state is the store of earlier responses that `previous_response_id` reads, see `state`).

Validates the body, plans the output (as JSON when `text.format` asks for it: `structured`), then
builds the Response (`response_object`). A body with a hosted `mcp` tool is answered by
`hosted_mcp`, which acts as the platform.
"""

from __future__ import annotations

from course_lib.offline_model import standin
from course_lib.offline_model.ids import for_request
from course_lib.offline_model.plan import _decide
from course_lib.offline_model.reasoning import check_input
from course_lib.offline_model.request_params import check_parameters
from course_lib.offline_model.response_object import CREATED_AT, _output_item, early_checks, finish, seed_of
from course_lib.offline_model.structured import apply_format, responses_format
from course_lib.offline_model.validation import (
    _check_pairs,
    _get,
    _parse_input,
    _parse_tools,
    _tool_policy,
    _type_error,
)

__all__ = ["CREATED_AT", "respond"]


def respond(body: dict) -> dict:
    """Answer one `POST /v1/responses` body with a Response JSON dict (deterministic; a stored response is
    remembered for `previous_response_id`, see `state`). A body with a hosted `mcp` tool is answered
    by `hosted_mcp`, which acts as the platform.

    Raises:
        BadRequest: the body is malformed, as the real API would reject it (a hosted MCP server that
            cannot be listed: `hosted_mcp.ConnectorError`, a 424).
    """
    if not isinstance(body, dict):
        raise _type_error("body", dict, body)
    _get(body, "model", "", str)
    check_parameters(body)  # unknown top-level keys and wrong JSON types (after a missing model, as the API)
    from course_lib.offline_model import hosted_mcp  # here: it imports the mcp client, needed only with an mcp tool

    if hosted_mcp.has_mcp_tool(body):
        return hosted_mcp.respond(body)
    chained, parallel, persona = early_checks(body)
    items = _parse_input(body)  # alone first, so a 400 names this request's own input[i]
    if chained is not body["input"]:
        items = _parse_input({**body, "input": chained})
    mode, allowed = _tool_policy({**body, "tool_choice": standin.tool_choice(body.get("tool_choice", "auto"))},
                                 _parse_tools(body))  # a local server ignores tool_choice (standin.local)
    _check_pairs(items)
    items = check_input(items)  # reasoning items passed back where a reasoning model needs them (reasoning.py)
    ids = for_request(seed_of(body))
    plan = apply_format(_decide(items, mode, allowed, parallel is not False, persona), items, responses_format(body))
    return finish(body, chained, ids, [_output_item(entry, ids, i) for i, entry in enumerate(plan)])
