"""Facts the notebooks state about the openai and mcp packages, pinned against the installed ones.

When an SDK upgrade changes one of these, the failing assertion names the notebook claim that went
stale, so the course is fixed before a learner finds out. Each test reads the SDK's own types (or
runs the SDK), never a copy of them.
"""

from __future__ import annotations

import inspect
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
