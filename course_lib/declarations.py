"""Rules: tool declarations on both sides, and adapting one to the other.

An MCP server declares a tool as `name` + `description` + `inputSchema`. The Responses API wants a
function tool: `type: "function"`, `name`, `description`, `parameters`, `strict`. Both schemas are
*rules*: they say what a valid call looks like and never hold this call's values.

A schema cannot always be copied blindly. In strict mode the Responses API requires every property
to be listed in `required` and `additionalProperties: false`; an optional field becomes a union
with `null` instead. `strict_schema()` does that adaptation and `strict_schema_problems()` says
what a schema is missing for strict mode.

`strict` is always sent, `false` included: in the Responses API an omitted `strict` is not
`false`. The openai SDK's docstring says "If omitted, Responses attempts to use strict validation
when the schema is compatible, and falls back to non-strict validation otherwise"
(`openai/types/responses/namespace_tool_param.py`, openai 3.57), and the function-calling guide
says to "explicitly set `strict: false`" to stay non-strict; Chat Completions, by contrast, is
non-strict unless told `strict: true`. The SDK's `FunctionToolParam` marks `strict` as a required
key for the same reason.
"""

from __future__ import annotations

import copy
from typing import Any

import mcp_types

ALIAS_SEPARATOR = "__"

# Keywords strict mode does not accept; dropping them loses nothing the server will not check again.
_STRICT_UNSUPPORTED = ("default", "title", "$schema")


def alias_for(prefix: str, tool_name: str) -> str:
    """The model-side name of a server's tool, e.g. `alias_for("fs", "read_text_file")` → `fs__read_text_file`."""
    return f"{prefix}{ALIAS_SEPARATOR}{tool_name}"


def to_responses_tool(tool: mcp_types.Tool, *, alias: str | None = None, strict: bool = False) -> dict[str, Any]:
    """Adapt an MCP tool declaration to a Responses function tool (a plain dict, as sent on the wire).

    The MCP `inputSchema` becomes `parameters`, unchanged unless `strict=True`, in which case it
    goes through `strict_schema()`. `strict` is sent either way: left out, Responses would try
    strict mode on a strict-compatible schema (see the module docstring).
    """
    schema = copy.deepcopy(tool.input_schema)
    return {
        "type": "function",
        "name": alias or tool.name,
        "description": tool.description or "",
        "parameters": strict_schema(schema) if strict else schema,
        "strict": strict,
    }


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Rewrite an object schema for strict mode: every property required, optional ones nullable.

    A property that was optional keeps its meaning: the model must now send it, and sends `null`
    when it has no value. Applied recursively to nested object schemas.
    """
    out = {k: v for k, v in copy.deepcopy(schema).items() if k not in _STRICT_UNSUPPORTED}
    if out.get("type") == "object" and "properties" in out:
        required = set(out.get("required", []))
        properties = {}
        for name, prop in out["properties"].items():
            prop = strict_schema(prop)
            if name not in required and not _allows_null(prop):
                prop = _nullable(prop)
            properties[name] = prop
        out["properties"] = properties
        out["required"] = list(properties)
        out["additionalProperties"] = False
    for key in ("anyOf", "oneOf"):
        if key in out:
            out[key] = [strict_schema(s) for s in out[key]]
    if isinstance(out.get("items"), dict):
        out["items"] = strict_schema(out["items"])
    return out


def strict_schema_problems(schema: dict[str, Any], context: tuple[str, ...] = ()) -> list[str]:
    """What a schema lacks for strict mode, one message per problem (empty list: it is fine).

    In the real API's words, with its way of naming where: `context` is the path of keys from the
    root, `()` for the root itself. Real 400s: "In context=(), 'required' is required to be
    supplied and to be an array including every key in properties. Missing 'params'."
    (https://github.com/kevinwatt/mysql-mcp/issues/5) and "In context=('properties',
    'permissions'), 'additionalProperties' is required to be supplied and to be false."
    (https://github.com/lastmile-ai/openai-agents-mcp/issues/2). Every real example names one
    missing key, so a `required` list that leaves several out is named by its first.
    """
    problems: list[str] = []
    if schema.get("type") == "object":
        properties = schema.get("properties", {})
        missing = [name for name in properties if name not in schema.get("required", [])]
        if missing:
            problems.append(f"In context={context!r}, 'required' is required to be supplied and to be an array "
                            f"including every key in properties. Missing {missing[0]!r}.")
        if schema.get("additionalProperties") is not False:
            problems.append(f"In context={context!r}, 'additionalProperties' is required to be supplied and to "
                            "be false.")
        for name, prop in properties.items():
            problems += strict_schema_problems(prop, (*context, "properties", name))
    for key in ("anyOf", "oneOf"):
        for i, sub in enumerate(schema.get(key, [])):
            problems += strict_schema_problems(sub, (*context, key, str(i)))
    if isinstance(schema.get("items"), dict):
        problems += strict_schema_problems(schema["items"], (*context, "items"))
    return problems


def _allows_null(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_allows_null(s) for s in schema.get("anyOf", []))


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    description = schema.pop("description", None)
    out: dict[str, Any] = {"anyOf": [schema, {"type": "null"}]}
    if description:
        out["description"] = description
    return out
