"""Facts the notebooks state about the openai and mcp packages, pinned against the installed ones.

When an SDK upgrade changes one of these, the failing assertion names the notebook claim that went
stale, so the course is fixed before a learner finds out. Each test reads the SDK's own types (or
runs the SDK), never a copy of them.
"""

from __future__ import annotations

import inspect
import json
import typing

import typing_extensions

import jsonschema
import mcp_types
import pytest
from mcp_types import jsonrpc
from openai.types import responses as rt
from openai.types.responses import response_create_params, response_input_param, response_output_item

from course_lib.arguments import input_schema


def literals(tp: typing.Any) -> set[str]:
    """Every string Literal reachable in a type (through Union, Optional, Required, Annotated, List)."""
    if typing.get_origin(tp) is typing.Literal:
        return set(typing.get_args(tp))
    return set().union(*(literals(arg) for arg in typing.get_args(tp))) if typing.get_args(tp) else set()


def field_type(member: type, name: str) -> typing.Any:
    """The declared type of one field of a TypedDict (request types) or a pydantic model (response types)."""
    if hasattr(member, "model_fields"):
        return member.model_fields[name].annotation
    return typing.get_type_hints(member, include_extras=True)[name]


def type_tags(union: typing.Any) -> set[str]:
    """The `type` values of the members of a union (possibly Annotated) of TypedDicts or models."""
    members = [m for arg in typing.get_args(union) for m in (typing.get_args(arg) if typing.get_origin(arg) is typing.Union else [arg])]
    if typing.get_origin(union) is typing.Annotated:
        members = list(typing.get_args(typing.get_args(union)[0]))
    return set().union(*(literals(field_type(m, "type")) for m in members if isinstance(m, type)))


def required_keys(typed_dict: type) -> set[str]:
    """Keys a TypedDict marks Required[...] (its __required_keys__ is empty under postponed annotations)."""
    hints = typing.get_type_hints(typed_dict, include_extras=True)
    return {key for key, hint in hints.items() if typing.get_origin(hint) is typing_extensions.Required}


# ---- openai: function tools (notebook 01 §1, §6; notebook 00 §5) --------------------------------


def test_function_tool_fields():
    fields = set(typing.get_type_hints(rt.FunctionToolParam))
    claim = "01 §1 and its table: a Responses function tool has type, name, description, parameters, strict"
    assert {"type", "name", "description", "parameters", "strict"} <= fields, claim
    claim = "01 §1: FunctionToolParam also has output_schema, allowed_callers and defer_loading"
    assert {"output_schema", "allowed_callers", "defer_loading"} <= fields, claim


def test_strict_is_a_required_key_of_the_sdk_tool_type():
    claim = "01 §6 / 00 §5: the SDK's FunctionToolParam marks strict as a required (nullable) key"
    assert "strict" in required_keys(rt.FunctionToolParam), claim


def test_an_omitted_strict_is_not_false_in_responses():
    from openai.types.responses import namespace_tool_param

    text = " ".join(inspect.getsource(namespace_tool_param).split())
    claim = ("01 §6, declarations.py, offline_model.validation.strict_in_effect: 'If omitted, Responses attempts "
             "to use strict validation when the schema is compatible'")
    assert "If omitted, Responses attempts to use strict validation when the schema is compatible" in text, claim
    assert "falls back to non-strict validation otherwise" in text, claim


def test_output_schema_describes_string_outputs_for_the_model():
    from openai.types.responses import function_tool_param

    text = " ".join(inspect.getsource(function_tool_param).split())
    claim = "01 §1: output_schema describes 'the JSON value encoded in string outputs' (the model can be told it)"
    assert "describing the JSON value encoded in string outputs" in text, claim


def test_namespace_and_tool_search_tools_exist():
    tags = type_tags(rt.ToolParam)
    claim = "01 §1 and 03 §aliases: the platform has 'namespace' tools (an alternative to an alias prefix) and 'tool_search'"
    assert {"function", "namespace", "tool_search", "mcp"} <= tags, claim
    assert required_keys(rt.NamespaceToolParam) == {"name", "description", "tools", "type"}, claim


# ---- openai: tool_choice (notebook 01 §5) ---------------------------------------------------------


def test_tool_choice_variants():
    choice = response_create_params.ToolChoice
    claim = "01 §5 table: tool_choice is none / auto / required / {type: function, name} / {type: allowed_tools, …}"
    assert set(typing.get_args(rt.ToolChoiceOptions)) == {"none", "auto", "required"}, claim
    members = typing.get_args(choice)
    assert rt.ToolChoiceFunctionParam in members and rt.ToolChoiceAllowedParam in members, claim
    assert literals(typing.get_type_hints(rt.ToolChoiceAllowedParam)["mode"]) == {"auto", "required"}, claim
    assert required_keys(rt.ToolChoiceFunctionParam) == {"type", "name"}, claim


# ---- openai: feedback and answer items (notebook 00 §8, §9 and exercise 2) ------------------------


def test_function_call_output_is_a_string_or_a_list_of_input_parts():
    output = typing.get_type_hints(response_input_param.FunctionCallOutput, include_extras=True)["output"]
    (union,) = typing.get_args(output)  # Required[...]
    text, parts = typing.get_args(union)
    claim = "00 §8: function_call_output.output is a string or a list of input_text/input_image/input_file parts"
    assert text is str, claim
    (part,) = typing.get_args(parts)
    assert type_tags(part) == {"input_text", "input_image", "input_file"}, claim


def test_a_message_holds_output_text_or_refusal_parts():
    (part,) = typing.get_args(field_type(rt.ResponseOutputMessage, "content"))
    claim = "00 §9 and exercise 2: a message's content parts are output_text or refusal (join only output_text)"
    assert type_tags(part) == {"output_text", "refusal"}, claim


def test_hosted_mcp_item_types_exist():
    tags = type_tags(response_output_item.ResponseOutputItem)
    claim = ("00 §2: with the hosted mcp tool the platform is the MCP client and the output holds "
             "mcp_list_tools, mcp_call and mcp_approval_request items")
    assert {"mcp_list_tools", "mcp_call", "mcp_approval_request"} <= tags, claim
    claim = "00 exercise 2: a response's output may hold reasoning items next to messages and function calls"
    assert {"function_call", "message", "reasoning"} <= tags, claim


# ---- mcp: protocol versions and errors (notebooks 00 §2, 03 §3 and the error tables) --------------


def test_protocol_versions_the_sdk_knows():
    claim = "03 §3: the mcp SDK's newest revision is 2026-07-28; the handshake era ends at 2025-11-25"
    assert mcp_types.LATEST_PROTOCOL_VERSION == "2026-07-28", claim
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_HANDSHAKE_VERSION

    assert LATEST_HANDSHAKE_VERSION == "2025-11-25", claim
    assert "2025-06-18" in HANDSHAKE_PROTOCOL_VERSIONS, "03 §3: the SDK still speaks 2025-06-18, the source's revision"


@pytest.mark.anyio
async def test_legacy_mode_negotiates_2025_11_25():
    from course_lib.connection import McpConnection
    from course_lib.fs_server import Workspace, build_server
    from course_lib.paths import fixtures_dir

    async with McpConnection(build_server(Workspace(fixtures_dir() / "workspace")), mode="legacy") as connection:
        negotiated = connection.protocol_version
        initialize = connection.exchanges("initialize")[0]
    claim = "00 §2 / 03 §2: the course's legacy-mode connection negotiates MCP 2025-11-25 with an initialize handshake"
    assert negotiated == "2025-11-25", claim
    assert initialize.response["result"]["protocolVersion"] == "2025-11-25", claim


def test_json_rpc_error_codes():
    claim = "03 error tables: JSON-RPC codes -32700 parse, -32600 invalid request, -32601 method not found, -32602 invalid params, -32603 internal"
    codes = (jsonrpc.PARSE_ERROR, jsonrpc.INVALID_REQUEST, jsonrpc.METHOD_NOT_FOUND, jsonrpc.INVALID_PARAMS,
             jsonrpc.INTERNAL_ERROR)  # fmt: skip
    assert codes == (-32700, -32600, -32601, -32602, -32603), claim


def test_is_error_is_optional_and_defaults_to_false():
    claim = "03 exercise 2: a tools/call result may omit isError, which then means false"
    result = mcp_types.CallToolResult.model_validate({"content": []})
    assert result.is_error is False, claim
    assert "isError" not in mcp_types.CallToolResult.model_json_schema().get("required", []), claim


# ---- JSON Schema (notebooks 01 §3, 02, 03b) -------------------------------------------------------


@pytest.mark.parametrize("value", [20.0, 1e2])
def test_json_schema_integer_accepts_integral_numbers(value):
    claim = "01 §3 / 02: JSON Schema's integer accepts 20.0 and 1e2, so the server's check must accept them too"
    assert jsonschema.Draft202012Validator({"type": "integer"}).is_valid(value), claim
    assert jsonschema.Draft202012Validator(input_schema()).is_valid({"path": "x", "head": value}), claim


# ---- mcp over HTTP: who writes which refusal (notebook 03c §4, §5; course_lib.http_refusals) -------


def _scope(method: str = "POST", **headers: str) -> dict:
    raw = [(name.replace("_", "-").encode(), value.encode()) for name, value in headers.items()]
    return {"type": "http", "method": method, "path": "/mcp", "raw_path": b"/mcp", "query_string": b"",
            "headers": raw, "scheme": "http", "server": ("127.0.0.1", 8765), "client": ("127.0.0.1", 1)}


async def _asgi(app, scope: dict, body: bytes = b"") -> tuple[int, dict[bytes, bytes], bytes]:
    sent: list[dict] = []

    async def receive() -> dict:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent[0]["status"], dict(sent[0].get("headers", [])), b"".join(m.get("body", b"") for m in sent[1:])


@pytest.mark.anyio
async def test_the_sdk_s_origin_host_and_content_type_refusals_are_plain_text():
    from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
    from starlette.requests import Request

    security = TransportSecurityMiddleware(TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=["127.0.0.1:*"], allowed_origins=["http://127.0.0.1:*"]))
    claim = ("03c §4 and http_refusals: the SDK's TransportSecuritySettings checks answer in plain text; the JSON-RPC "
             "bodies the notebook shows for 403/421 are written by the course's gate")
    for headers, status, text in [
        ({"host": "127.0.0.1:8765", "origin": "https://evil.example", "content_type": "application/json"}, 403,
         b"Invalid Origin header"),
        ({"host": "evil.example", "content_type": "application/json"}, 421, b"Invalid Host header"),
        ({"host": "127.0.0.1:8765", "content_type": "text/plain"}, 400, b"Invalid Content-Type header"),
    ]:
        response = await security.validate_request(Request(_scope(**headers)), is_post=True)
        assert (response.status_code, response.body) == (status, text), claim
        assert b"application/json" not in dict(response.raw_headers).get(b"content-type", b""), claim


@pytest.mark.anyio
async def test_the_sdk_s_body_limit_refusal_is_plain_text():
    from mcp.server.transport_security import RequestBodyLimitMiddleware

    async def never(scope, receive, send):  # pragma: no cover - the limit answers first
        raise AssertionError("reached the app")

    status, headers, body = await _asgi(RequestBodyLimitMiddleware(never, 8), _scope(content_length="9"), b"x" * 9)
    claim = "03c §4: the SDK refuses a body over its limit with 413 in plain text (the course makes it JSON-RPC)"
    assert (status, body) == (413, b"Request body too large") and b"application/json" not in headers.get(b"content-type", b""), claim


@pytest.mark.anyio
async def test_the_sdk_s_401_says_invalid_token_even_without_credentials():
    from mcp.server.auth.middleware.bearer_auth import RequireAuthMiddleware

    async def never(scope, receive, send):  # pragma: no cover - auth answers first
        raise AssertionError("reached the app")

    status, headers, body = await _asgi(RequireAuthMiddleware(never, [], None), _scope())  # no Authorization at all
    claim = ("03c §5: the SDK's RequireAuthMiddleware answers a request with no credentials with error=\"invalid_token\"; "
             "RFC 6750 §3.1 says such a request SHOULD get a challenge without an error code, so the course's gate "
             "removes it (http_refusals._without_error_code)")
    assert status == 401 and b'error="invalid_token"' in headers[b"www-authenticate"], claim
    assert json.loads(body)["error"] == "invalid_token", claim


@pytest.mark.anyio
async def test_the_stock_sdk_accepts_an_id_null_request_in_silence_and_dumps_validation_errors():
    """What the course's gate is for, on the stock app: a request with `id: null` is taken for a
    notification (202, never run), and a batch gets -32602 with a pydantic dump."""
    import httpx

    from course_lib.fs_server import Workspace, build_server
    from course_lib.paths import fixtures_dir

    app = build_server(Workspace(fixtures_dir() / "workspace")).streamable_http_app()
    accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "facts", "version": "0"}}}
    async with app.router.lifespan_context(app), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000") as client:
        opened = await client.post("/mcp", json=initialize, headers=accept)
        session = {**accept, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        silent = await client.post("/mcp", headers=session, json={"jsonrpc": "2.0", "id": None, "method": "tools/list"})
        batch = await client.post("/mcp", headers=session, content=b"[]")
    claim = "22 / 03c: over the stock SDK's HTTP transport a request with id null gets 202 with no body"
    assert (silent.status_code, silent.content) == (202, b""), claim
    claim = "22 / 03c: the stock SDK answers a batch with -32602 and a pydantic validation dump, not -32600"
    assert batch.status_code == 400 and batch.json()["error"]["code"] == -32602, claim
    assert batch.json()["error"]["message"].startswith("Validation error"), claim


def test_uvicorn_answers_what_h11_cannot_parse_in_plain_text_through_send_400_response():
    from uvicorn.protocols.http import flow_control, h11_impl

    handle = inspect.getsource(h11_impl.H11Protocol.handle_events)
    claim = ("http_limits.BoundedH11Protocol: uvicorn's h11 protocol answers every h11 protocol error through "
             "send_400_response with the plain text 'Invalid HTTP request received.' (the course overrides that method)")
    assert "self.send_400_response(msg)" in handle and '"Invalid HTTP request received."' in handle, claim
    assert b"text/plain" in inspect.getsource(h11_impl.H11Protocol.send_400_response).encode(), claim
    claim = "http_limits: uvicorn's own connection cap (limit_concurrency) answers 503 in plain text; the course caps itself"
    assert '"Service Unavailable"' in inspect.getsource(flow_control.service_unavailable), claim


def test_the_parsers_refuse_numbers_longer_than_4300_digits():
    import pydantic_core

    from course_lib.frames import LONGEST_NUMBER

    claim = ("course_lib.frames: Python's json and pydantic-core (the SDK's parser) refuse an integer of more than "
             "4300 digits (sys.int_info.default_max_str_digits), though it is valid JSON; so the frame check reads "
             "such a frame again to keep its id")
    assert LONGEST_NUMBER == 4300, claim
    for parse in (json.loads, pydantic_core.from_json):
        assert parse("9" * 4300) == int("9" * 4300), claim
        with pytest.raises(ValueError):
            parse("9" * 4301)
