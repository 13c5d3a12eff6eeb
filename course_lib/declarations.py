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

from course_lib import api_rules

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
    """What a schema lacks for strict mode, one message per problem (empty list: it is fine), in the
    real API's words: every property required, `additionalProperties: false`, no keyword outside
    strict mode's subset. The rules and their sources live in `course_lib.api_rules` (the refusal
    table the offline model enforces), so a check never approves what the API refuses.
    """
    return api_rules.strict_schema_problems(schema, context)


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
