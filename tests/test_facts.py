"""Facts the notebooks state about the openai and mcp packages, pinned against the installed ones.

When an SDK upgrade changes one of these, the failing assertion names the notebook claim that went
stale, so the course is fixed before a learner finds out. Each test reads the SDK's own types (or
runs the SDK), never a copy of them.
"""

from __future__ import annotations

import asyncio
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


# ---- mcp: what the SDK does by default, and the handshake older servers speak (notebook 03 §1–2) ----


def _files_server():
    from course_lib.fs_server import Workspace, build_server
    from course_lib.paths import fixtures_dir

    return build_server(Workspace(fixtures_dir() / "workspace"))


def test_the_client_defaults_to_auto_and_dispatches_an_in_process_server_directly():
    from mcp import Client

    claim = "03 §1: mcp.Client's default mode is 'auto'"
    assert Client.__dataclass_fields__["mode"].default == "auto", claim
    text = " ".join(inspect.getsource(Client).split())
    claim = "03 §1: in auto mode an in-process server is dispatched directly, without JSON-RPC framing"
    assert "for an in-process `Server`/`MCPServer` it dispatches directly without JSON-RPC framing" in text, claim
    claim = "03 §1: 'legacy' forces the initialize handshake"
    assert "'legacy' forces the initialize handshake" in text, claim
    claim = "03 §1: ttlMs and cacheScope are caching hints of 2026-07-28 (SEP-2549)"
    assert "caching for the SEP-2549 cacheable methods (2026-07-28)" in text and "ttlMs`/`cacheScope` hints" in text, claim


@pytest.mark.anyio
async def test_the_default_client_speaks_2026_07_28_with_no_handshake():
    from mcp import Client

    async with Client(_files_server()) as client:
        version, session = client.protocol_version, client.session
        initialized, discovered = session.initialize_result, session.discover_result
        result = await client.call_tool("read_text_file", {"path": "/workspace/notes.txt", "head": 1})
    claim = "03 §1: Client(server) with no mode negotiates 2026-07-28, from server/discover, with no initialize"
    assert (version, initialized) == ("2026-07-28", None), claim
    assert discovered.supported_versions == ["2026-07-28"] and discovered.capabilities.tools is not None, claim
    claim = "03 §1: a 2026-07-28 result says what kind of result it is: resultType 'complete'"
    assert result.result_type == "complete" and result.model_dump(by_alias=True)["resultType"] == "complete", claim


@pytest.mark.anyio
async def test_auto_mode_over_a_transport_sends_discover_and_stamps_every_request():
    from course_lib.connection import McpConnection

    async with McpConnection(_files_server(), mode="auto") as connection:
        await connection.list_tools()
        await connection.call_tool("read_text_file", {"path": "/workspace/notes.txt", "head": 1})
    sent = [m.json for m in connection.messages if m.direction == "app→server"]
    answers = [m.json for m in connection.messages if m.direction == "server→app"]
    claim = "03 §1: at 2026-07-28 there is no initialize and no notifications/initialized: server/discover comes first"
    assert [m["method"] for m in sent] == ["server/discover", "tools/list", "tools/call"], claim
    claim = "03 §1: every 2026-07-28 request carries its protocol version, client info and capabilities in params._meta"
    for request in sent:
        meta = request["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28", claim
        assert {"io.modelcontextprotocol/clientInfo", "io.modelcontextprotocol/clientCapabilities"} <= set(meta), claim
    claim = "03 §1: every 2026-07-28 result carries resultType; discover answers with supportedVersions and capabilities"
    assert all(answer["result"]["resultType"] == "complete" for answer in answers), claim
    assert answers[0]["result"]["supportedVersions"] == ["2026-07-28"] and "tools" in answers[0]["result"]["capabilities"], claim


def test_legacy_requests_carry_no_meta_envelope():
    import anyio

    from course_lib.connection import McpConnection

    async def run():
        async with McpConnection(_files_server(), mode="legacy") as connection:
            await connection.call_tool("read_text_file", {"path": "/workspace/notes.txt", "head": 1})
        return connection.messages

    messages = anyio.run(run)
    claim = "03 §2: a 2025-11-25 session opens with initialize and notifications/initialized; its requests carry no _meta"
    sent = [m.json for m in messages if m.direction == "app→server"]
    assert [m["method"] for m in sent][:3] == ["initialize", "notifications/initialized", "tools/call"], claim
    assert "id" not in sent[1] and all("_meta" not in m.get("params", {}) for m in sent), claim


@pytest.mark.anyio
@pytest.mark.usefixtures("node_tools")
async def test_the_reference_server_speaks_2025_11_25_and_auto_mode_falls_back_to_the_handshake(tmp_path):
    from mcp.client.stdio import stdio_client

    from course_lib.connection import McpConnection
    from course_lib.node_tools import reference_server
    from course_lib.paths import node_dir, workspace_dir

    sdk = (node_dir() / "node_modules/@modelcontextprotocol/sdk/dist/esm/types.js").read_text(encoding="utf-8")
    claim = "03 §2 / 03b §1: the reference server's MCP SDK knows no revision newer than 2025-11-25"
    assert "export const LATEST_PROTOCOL_VERSION = '2025-11-25';" in sdk, claim
    with (tmp_path / "stderr.txt").open("w+") as log:
        async with McpConnection(stdio_client(reference_server(workspace_dir()), errlog=log), mode="auto") as connection:
            version = connection.protocol_version
    sent = [m.json.get("method") for m in connection.messages if m.direction == "app→server"]
    discover_answer = connection.exchanges("server/discover")[0].response
    claim = "03 §2 / 03b §1: asked for server/discover the reference server answers -32601, and auto mode falls back to initialize"
    assert discover_answer["error"]["code"] == -32601, claim
    assert sent == ["server/discover", "initialize", "notifications/initialized"] and version == "2025-11-25", claim


# ---- Node: what the pinned Inspector needs (notebook 03b, README troubleshooting) -----------------


def test_the_pinned_inspector_declares_node_22_19_and_the_course_installs_a_node_that_meets_it():
    import json
    import re
    from pathlib import Path

    repo = Path(__file__).resolve().parents[1]
    lock = json.loads((repo / "tests" / "node" / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    claim = "03b §setup, README troubleshooting: the pinned MCP Inspector declares node >= 22.19.0"
    assert lock["node_modules/@modelcontextprotocol/inspector"]["engines"] == {"node": ">=22.19.0"}, claim
    node = lock["node_modules/node"]["version"]
    claim = "03b / README: make node-tools installs a Node (npm package `node`) that meets the Inspector's engines"
    assert tuple(map(int, node.split("."))) >= (22, 19, 0), claim
    claim = "README (both editions): the Node line names the Inspector's minimum, 22.19, and no older one"
    for readme in ("README.md", "README.zh-CN.md"):
        text = (repo / readme).read_text(encoding="utf-8")
        item = next(item for item in text.split("\n- ") if "make node-tools" in item and "03b" in item)
        assert "node ≥ 22.19" in item and not re.search(r"Node 20|20\+", item), (readme, claim)
    claim = "03b: the notebook names the Inspector's minimum and starts it with the project-local Node"
    cells = json.loads((repo / "notebooks" / "03b_reference_server_side_by_side.ipynb").read_text(encoding="utf-8"))["cells"]
    text = {cell["id"]: "".join(cell["source"]) for cell in cells}
    assert "node\n≥ 22.19" in text["81aba1b2"] or "node ≥ 22.19" in text["81aba1b2"], claim
    assert not any(re.search(r"Node 20|20\+", source) for source in text.values()), claim
    assert text["ca8a1402"].startswith('INSPECT = ["tests/node/node_modules/.bin/node", '), claim


# ---- openai: streaming a call (notebook 04b) ------------------------------------------------------


def test_the_arguments_done_event_carries_the_whole_arguments_text():
    from openai.types.responses import ResponseFunctionCallArgumentsDoneEvent

    claim = "04b §3–4, streaming.PartialItem.arguments: response.function_call_arguments.done carries the whole arguments"
    assert field_type(ResponseFunctionCallArgumentsDoneEvent, "arguments") is str, claim
    assert "Emitted when function-call arguments are finalized" in (ResponseFunctionCallArgumentsDoneEvent.__doc__ or ""), claim
    assert literals(field_type(ResponseFunctionCallArgumentsDoneEvent, "type")) == {"response.function_call_arguments.done"}
    claim = "04b §5: the arguments events name their item (item_id, output_index), not the call: no call_id"
    assert {"item_id", "output_index"} <= set(ResponseFunctionCallArgumentsDoneEvent.model_fields), claim
    assert "call_id" not in ResponseFunctionCallArgumentsDoneEvent.model_fields, claim


# ---- anthropic and openai: the other envelopes and the hosted mcp tool (notebook 04c) -------------


def test_a_messages_client_tool_may_carry_type_custom():
    from anthropic.types import ToolParam

    hints = typing.get_type_hints(ToolParam, include_extras=True)
    claim = "04c §3: an Anthropic client tool needs name and input_schema; its optional `type` can only be 'custom'"
    assert required_keys(ToolParam) == {"name", "input_schema"}, claim
    assert literals(hints["type"]) == {"custom"}, claim


def test_the_responses_custom_tool_is_another_thing():
    claim = "04c §3: Responses has its own `custom` tool type (free-form input), not the same as Anthropic's custom client tool"
    assert "custom" in type_tags(rt.ToolParam), claim
    assert "format" in typing.get_type_hints(rt.CustomToolParam) and "parameters" not in typing.get_type_hints(rt.CustomToolParam), claim


def test_the_hosted_mcp_tool_reaches_its_server_by_url_tunnel_or_connector():
    from openai.types.responses import tool_param

    keys = set(typing.get_type_hints(tool_param.Mcp))
    claim = "04c §6–7: the hosted mcp tool takes server_url, tunnel_id (a Secure MCP Tunnel) or connector_id"
    assert {"server_url", "tunnel_id", "connector_id", "server_label", "require_approval"} <= keys, claim
    assert required_keys(tool_param.Mcp) == {"server_label", "type"}, claim
    text = " ".join(inspect.getsource(tool_param.Mcp).split())
    assert "One of `server_url`, `connector_id`, or `tunnel_id` must be provided." in text, claim
    assert "The Secure MCP Tunnel ID to use instead of a direct server URL." in text, claim


def test_approval_request_id_pairs_the_approval_with_its_request():
    from openai.types.responses.response_output_item import McpCall

    claim = "04c §6–7: an mcp_approval_response names the request it answers by approval_request_id (required)"
    assert {"approval_request_id", "approve", "type"} <= required_keys(response_input_param.McpApprovalResponse), claim
    claim = "04c §6–7: the mcp_call records its approval_request_id and has an id but no call_id"
    assert "approval_request_id" in McpCall.model_fields and "id" in McpCall.model_fields, claim
    assert "call_id" not in McpCall.model_fields, claim
    assert {"id", "arguments", "name", "server_label", "type"} <= required_keys(response_input_param.McpApprovalRequest)


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


# ---- mcp: output schemas describe successes (issue 22; notebook 03 §4) ------------------------------


@pytest.mark.anyio
async def test_the_mcp_client_checks_a_result_against_the_output_schema_only_when_it_is_not_an_error():
    from mcp import Client
    from mcp.server import Server

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": False}
    answers = {"ok": mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text="1")], structured_content={"n": 1}),
               "error": mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text="NOT_FOUND: x")], is_error=True),
               "bad": mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text="no structure")])}  # fmt: skip

    async def on_list_tools(ctx, params):
        return mcp_types.ListToolsResult(tools=[mcp_types.Tool(name=name, input_schema={"type": "object"}, output_schema=schema)
                                                for name in answers])  # fmt: skip

    async def on_call_tool(ctx, params):
        return answers[params.name]

    claim = ("03 §4: mcp's client validates structuredContent against outputSchema for a success only; an isError "
             "result with text and no structured content passes (so the schema need describe successes alone)")
    async with Client(Server("facts", on_list_tools=on_list_tools, on_call_tool=on_call_tool), mode="legacy") as client:
        await client.list_tools()
        assert (await client.call_tool("ok", {})).structured_content == {"n": 1}, claim
        error = await client.call_tool("error", {})
        assert error.is_error and error.structured_content is None, claim
        with pytest.raises(RuntimeError, match="output schema but did not return structured content"):
            await client.call_tool("bad", {})

# ---- retries and jitter: notebook 05 §6–7 (tenacity, the course's RetryPolicy) ---------------------


def test_tenacity_full_jitter_is_wait_random_exponential_drawn_from_the_global_generator():
    import random
    from types import SimpleNamespace

    import tenacity

    claim = ("05 §7: tenacity's full jitter is wait_random_exponential(multiplier, max): each wait uniform from 0 to "
             "min(max, multiplier·2^(n-1)), drawn from Python's global random generator")
    assert {"multiplier", "max", "exp_base", "min"} <= set(inspect.signature(tenacity.wait_random_exponential).parameters), claim
    wait = tenacity.wait_random_exponential(multiplier=0.2, max=2)
    for attempt in (1, 2, 3, 4, 5, 6):
        random.seed(attempt)
        expected = random.uniform(0, min(2, 0.2 * 2 ** (attempt - 1)))
        random.seed(attempt)
        assert wait(SimpleNamespace(attempt_number=attempt)) == expected, claim


def test_tenacity_async_retrying_takes_an_injected_sleep_and_a_retry_predicate():
    import tenacity

    claim = "05 §7: AsyncRetrying(stop=, wait=, retry=retry_if_exception(...), sleep=, reraise=) drives `async for attempt`"
    assert {"stop", "wait", "retry", "sleep", "reraise"} <= set(inspect.signature(tenacity.AsyncRetrying).parameters) | \
        set(inspect.signature(tenacity.BaseRetrying).parameters), claim  # fmt: skip
    assert hasattr(tenacity.AsyncRetrying, "__aiter__") and callable(tenacity.retry_if_exception), claim


# ---- notebook 10: the cards' claims about the Responses types and MCP sessions ---------------------


def test_the_responses_custom_tool_is_a_different_tool_type_from_a_function_tool():
    claim = ("10 card 5: besides function tools the Responses API has a tool of type 'custom' (CustomToolParam), whose "
             "input is free text, optionally held to a grammar, arriving as a custom_tool_call item")
    assert literals(field_type(rt.CustomToolParam, "type")) == {"custom"}, claim
    assert "custom" in type_tags(rt.ToolParam) and "function" in type_tags(rt.ToolParam), claim
    assert "parameters" not in typing.get_type_hints(rt.CustomToolParam), claim  # no JSON Schema of arguments
    assert type_tags(field_type(rt.CustomToolParam, "format")) == {"text", "grammar"}, claim
    assert literals(field_type(rt.ResponseCustomToolCall, "type")) == {"custom_tool_call"}, claim
    assert field_type(rt.ResponseCustomToolCall, "input") is str, claim  # text, not a JSON arguments object
    assert literals(field_type(rt.ResponseCustomToolCallOutputParam, "type")) == {"custom_tool_call_output"}, claim


@pytest.mark.anyio
@pytest.mark.parametrize("stateless", [False, True])
async def test_a_streamable_http_server_may_or_may_not_assign_a_session_id(stateless):
    import httpx

    from course_lib.fs_server import Workspace, build_server
    from course_lib.paths import workspace_dir

    claim = ("10 card 16: in 2025-11-25 a Streamable HTTP server MAY assign an MCP-Session-Id with its InitializeResult "
             "(transports, Session Management); when it does not, the handshake and later requests work without one")
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "facts", "version": "0"}}}  # fmt: skip
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    app = build_server(Workspace(workspace_dir())).streamable_http_app(stateless_http=stateless, json_response=True)
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8000") as client:
            first = await client.post("/mcp", json=initialize, headers=headers)
            session = first.headers.get("mcp-session-id")
            later = {**headers, "mcp-protocol-version": "2025-11-25", **({"mcp-session-id": session} if session else {})}
            listed = await client.post("/mcp", json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=later)
    assert first.status_code == 200 and first.json()["result"]["protocolVersion"] == "2025-11-25", claim
    assert (session is None) is stateless, claim
    assert listed.status_code == 200 and listed.json()["result"]["tools"], claim


# ---- parallel calls and approval: what the SDKs declare (notebooks 07 §3, 06b §7) ------------------


def test_parallel_tool_calls_is_a_plain_boolean_of_the_request_echoed_by_the_response():
    from openai.types.chat import completion_create_params

    claim = "07 §3: parallel_tool_calls is one boolean of the request (Responses and Chat Completions), and the Response echoes it"
    assert field_type(response_create_params.ResponseCreateParamsBase, "parallel_tool_calls") == typing.Optional[bool], claim
    assert field_type(completion_create_params.CompletionCreateParamsBase, "parallel_tool_calls") is bool, claim
    assert field_type(rt.Response, "parallel_tool_calls") is bool, claim
    # Enforcement is not in the types: OpenAI's documentation says false gives at most one call per
    # response; a compatible server may only pass the field on to the model (07 §3 says both).


def test_tool_annotations_are_hints_and_the_type_leaves_every_hint_unset():
    claim = ("06b §7: ToolAnnotations are hints a client must not act on from an untrusted server; a hint the server "
             "leaves out is unset (None) in the type, so the client supplies the cautious default itself")
    doc = " ".join((mcp_types.ToolAnnotations.__doc__ or "").split())
    assert "all properties in ToolAnnotations are **hints**" in doc, claim
    assert "never make tool use decisions based on ToolAnnotations received from untrusted servers" in doc, claim
    hints = ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint")
    assert all(mcp_types.ToolAnnotations.model_fields[name].default is None for name in hints), claim
    aliases = {mcp_types.ToolAnnotations.model_fields[name].alias for name in hints}
    assert aliases == {"readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}, claim


# ---- frameworks: what notebook 09b says the Agents SDK, pydantic-ai and Mastra do ---------------------


def test_the_agents_sdk_starts_a_stdio_server_with_the_default_errlog_and_has_no_option_for_it():
    from agents.mcp import MCPServerStdio

    claim = "09b §2 / course_lib.frameworks.agents_sdk: LoggedMCPServerStdio only adds errlog to the SDK's own call"
    assert "return stdio_client(self.params)" in inspect.getsource(MCPServerStdio.create_streams), claim
    assert "errlog" not in inspect.signature(MCPServerStdio.__init__).parameters, claim


def test_the_agents_sdk_forwards_an_error_result_s_text_and_hides_a_tool_exception():
    from agents.mcp.util import MCPUtil
    from agents.tool import default_tool_error_function

    source = inspect.getsource(MCPUtil.invoke_mcp_tool)
    claim = "09b §2: structured content only for a result that is not isError; an error goes as its text"
    assert "server.use_structured_content and structured_content and not result_is_error(result)" in source, claim
    claim = "09b §8: a function tool that raises reaches the model as one fixed sentence"
    assert default_tool_error_function(None, PermissionError("FORBIDDEN: x")) == \
        "An error occurred while running the tool. Please try again.", claim


def test_the_agents_sdk_output_type_is_a_strict_json_schema_named_final_output_and_bad_json_raises():
    from agents import AgentOutputSchema
    from agents.exceptions import ModelBehaviorError
    from agents.models import openai_responses
    from pydantic import BaseModel

    class FileRead(BaseModel):
        ok: bool

    claim = "09b §6: output_type goes as text.format json_schema named final_output"
    assert '"name": "final_output"' in inspect.getsource(openai_responses), claim
    schema = AgentOutputSchema(FileRead)
    assert schema.is_strict_json_schema(), claim
    with pytest.raises(ModelBehaviorError):  # 09b §6: a reply that fails validation raises in your code
        schema.validate_json("not json")


def test_the_agents_sdk_approval_api_notebook_09b_uses():
    from agents.mcp import MCPServerStdio
    from agents.run_state import RunState

    claim = "09b §7: require_approval on an MCP server; RunState.approve / reject resume the run"
    assert "require_approval" in inspect.signature(MCPServerStdio.__init__).parameters, claim
    assert callable(RunState.approve) and "rejection_message" in inspect.signature(RunState.reject).parameters, claim


def test_pydantic_ai_makes_a_refused_mcp_call_a_retry_and_validates_output_with_one_retry():
    from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, NativeOutput
    from pydantic_ai.exceptions import UnexpectedModelBehavior
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import ModelResponse, TextPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic import BaseModel

    claim = "09b §4: MCPToolset turns an isError result into ModelRetry (tool_error_behavior 'retry' by default)"
    assert inspect.signature(MCPToolset.__init__).parameters["tool_error_behavior"].default == "retry", claim

    class FileRead(BaseModel):
        ok: bool

    asked = []

    def never_json(messages, info):
        asked.append(len(messages))
        return ModelResponse(parts=[TextPart("not json")])

    claim = "09b §6: pydantic-ai validates a structured answer and asks once more before it gives up"
    with pytest.raises(UnexpectedModelBehavior, match=r"Exceeded maximum output retries \(1\)"):
        # run, not run_sync: run_sync leaves the event loop it made open (a ResourceWarning at some later test)
        asyncio.run(Agent(FunctionModel(never_json), output_type=NativeOutput(FileRead)).run("x"))
    assert len(asked) == 2, claim
    assert DeferredToolRequests and DeferredToolResults  # 09b §7: the deferred-tool approval API


def _mastra_dist(package: str) -> str:
    from pathlib import Path

    from course_lib.paths import node_dir

    dist = Path(node_dir()) / "node_modules" / package / "dist"
    return "\n".join(path.read_text(encoding="utf-8", errors="replace") for path in dist.glob("*.js"))


def test_mastra_facts_notebook_09b_states(node_tools):
    from course_lib.frameworks.mastra import ensure_mastra

    ensure_mastra()
    core = _mastra_dist("@mastra/core")
    claim = "09b §5 / course_lib.frameworks.mastra: Mastra reports usage to PostHog unless MASTRA_TELEMETRY_DISABLED"
    assert 'process.env["MASTRA_TELEMETRY_DISABLED"]' in core and "https://us.posthog.com" in core, claim
    claim = "09b §7 (and the report's offline-model finding): a declined call reaches the model as this sentence"
    assert 'DEFAULT_TOOL_DECLINE_REASON = "Tool call was not approved by the user"' in core, claim
    mcp = _mastra_dist("@mastra/mcp")
    claim = "09b §5: Mastra's MCP client throws on isError unless onToolError is 'return'"
    assert 'this.onToolError = server.onToolError ?? "throw"' in mcp, claim
