"""Request validation: the same checks and the same 400 messages as the real Responses API.

`BadRequest` is the one error; it becomes an OpenAI-style error body. The `_parse_*` helpers turn
a request body into the plain items, tools and tool policy the rest of the model works from.

Null values: a key the API does not know is refused even when its value is null (as the real API
does); a known optional key that is null counts as absent, and a required one that is null is a
type error. Whether the real API refuses null for a known optional field that its spec does not
mark nullable (e.g. `namespace` on a function_call) could not be verified, so that is accepted.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from course_lib.api_rules import function_schema_problems, strict_schema_problems
from course_lib.offline_model.known_fields import unknown_field


class BadRequest(Exception):
    """A malformed request; becomes an OpenAI-style 400 error body."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message, self.param, self.code = message, param, code

    def to_body(self) -> dict[str, Any]:
        """The JSON error body the real API returns for a 400."""
        error = {"message": self.message, "type": "invalid_request_error", "param": self.param, "code": self.code}
        return {"error": error}


_JSON_TYPE_NAMES = {str: "a string", dict: "an object", list: "an array", bool: "a boolean", int: "an integer",
                    float: "a number", type(None): "null"}


def _get(obj: dict, key: str, where: str, kind: type | tuple, *, optional: bool = False) -> Any:
    """Return `obj[key]` after checking its JSON type; `where` is the path used in the message.

    Raises:
        BadRequest: the key is missing (unless `optional`) or has the wrong type.
    """
    param = f"{where}.{key}" if where else key
    if key not in obj or (optional and obj[key] is None):
        if optional:
            return None
        raise BadRequest(f"Missing required parameter: '{param}'.", param, "missing_required_parameter")
    value, kinds = obj[key], kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise _type_error(param, kind, value)
    return value


def _type_error(param: str, kind: type | tuple, value: Any) -> BadRequest:
    expected = " or ".join(_JSON_TYPE_NAMES[k] for k in (kind if isinstance(kind, tuple) else (kind,)))
    got = _JSON_TYPE_NAMES.get(type(value), type(value).__name__)
    return BadRequest(f"Invalid type for '{param}': expected {expected}, but got {got} instead.", param, "invalid_type")


def _english_list(values: list[str]) -> str:
    """`'a' and 'b'`; `'a', 'b', and 'c'`: how the real API lists supported values."""
    quoted = [f"'{value}'" for value in values]
    if len(quoted) <= 2:
        return " and ".join(quoted)
    return f"{', '.join(quoted[:-1])}, and {quoted[-1]}"


def _invalid_value(value: Any, param: str, supported: list[str]) -> BadRequest:
    """`Invalid value: 'x'. Supported values are: 'a', 'b', and 'c'.` (code `invalid_value`).

    The list is English, as the real API writes it: "Supported values are: 'output_text' and
    'refusal'." (https://community.openai.com/t/how-to-chat-with-an-ai-generated-image-via-responses-api/1365014)
    and "... 'summary_text', and 'encrypted_content'." (https://github.com/MervinPraison/PraisonAI/issues/3934).
    """
    listed = _english_list(supported)
    return BadRequest(f"Invalid value: '{value}'. Supported values are: {listed}.", param, "invalid_value")


# Every content part type the API knows, in the order its 400 lists them when a `type` is none of them
# (param `input[0].content[0].type`), as of 2026-08: https://github.com/MervinPraison/PraisonAI/issues/3934.
_PART_TYPES = ("input_text", "input_image", "input_audio", "output_text", "refusal", "input_file",
               "computer_screenshot", "summary_text", "encrypted_content")  # fmt: skip
# An assistant message holds only what a model writes. Anything else in the list above is refused
# with param `input[1].content[0]` (the part, not its `type`): "Invalid value: 'input_text'.
# Supported values are: 'output_text' and 'refusal'." Verified for input_text
# (https://dev.to/flarecanary/openai-responses-api-started-rejecting-inputtext-with-no-warning-heres-the-fix-and-why-it-keeps-2l49,
# https://github.com/jamesrochabrun/SwiftOpenAI/issues/136) and input_image
# (https://community.openai.com/t/how-to-chat-with-an-ai-generated-image-via-responses-api/1365014).
# Whether a user, system or developer message may hold output_text or refusal could not be verified
# either way, so those roles keep every type in the list.
_ASSISTANT_PARTS = ("output_text", "refusal")
# A function_call_output's `output` parts, as the SDK's own request types declare them.
_OUTPUT_PARTS = ("input_text", "input_image", "input_file")
# The prefix the real API demands of an input item's `id`, by item type: code `invalid_id_prefix`,
# "Invalid 'input[274].id': 'item_c270…'. Expected an ID that begins with 'fc'."
# (https://github.com/BigPizzaV3/CodexPlusPlus/issues/1796; a call_id in `id`:
# https://github.com/nodetool-ai/nodetool/pull/4252), 'msg' for a message
# (https://github.com/openai/codex/issues/33176) and 'rs' for a reasoning item
# (https://github.com/jlcodes99/cockpit-tools/issues/2090). No rule for function_call_output ids
# could be found, so any id is accepted there.
_ID_PREFIXES = {"function_call": "fc", "message": "msg", "reasoning": "rs"}


def _reject_unknown(obj: dict, where: str, *path: str) -> None:
    """Refuse a key the API does not know at `path` (see `known_fields`), even with a null value.

    Raises:
        BadRequest: `Unknown parameter: '<where>.<key>'.`, code `unknown_parameter`.
    """
    key = unknown_field(obj, *path)
    if key is not None:
        raise BadRequest(f"Unknown parameter: '{where}.{key}'.", f"{where}.{key}", "unknown_parameter")


def _parts_text(parts: list, where: str, known: tuple[str, ...], owner: tuple[str, str],
                allowed: tuple[str, ...] | None = None) -> str:
    """Join the text of content parts (input_text/output_text), checking each part's shape;
    `known` are the part types the field takes at all, `allowed` (default: all of them) those this
    item may hold; `owner` is the item type and field that hold the parts, e.g. ("message", "content").

    Raises:
        BadRequest: a part is not an object, has an unknown `type` (param `…[i].type`), a type
            this item may not hold (param `…[i]`, as the real API reports it) or an unknown key.
    """
    texts = []
    for i, part in enumerate(parts):
        if not isinstance(part, dict):
            raise _type_error(f"{where}[{i}]", dict, part)
        kind = _get(part, "type", f"{where}[{i}]", str)
        if kind not in known:
            raise _invalid_value(kind, f"{where}[{i}].type", list(known))
        if allowed is not None and kind not in allowed:
            raise _invalid_value(kind, f"{where}[{i}]", list(allowed))
        _reject_unknown(part, f"{where}[{i}]", *owner, kind)
        if kind in ("input_text", "output_text"):
            texts.append(_get(part, "text", f"{where}[{i}]", str))
    return "\n".join(texts)


def _parse_input(body: dict, extra: Any = None) -> list[dict]:
    """Normalise `input` to items: {"kind": "message", role, text}, {"kind": "call", call_id, name,
    arguments, id}, {"kind": "output", call_id, text} or {"kind": "reasoning", id, encrypted_content}
    (checked and then dropped by `reasoning.check_input`). `extra` parses the item types only some
    requests accept (`hosted_mcp.parse_item` for the mcp_* items): `extra(item, where, kind)` → an
    item, or None when `kind` is not one of them.

    Raises:
        BadRequest: an item has a missing field, a wrong type, an unknown key or `type`, a content
            part its role may not hold, an `id` without its type's prefix, or the same `id` as an
            earlier item.
    """
    raw = _get(body, "input", "", (str, list))
    if isinstance(raw, str):
        return [{"kind": "message", "role": "user", "text": raw}]
    items, ids = [], set()
    for i, item in enumerate(raw):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise _type_error(where, dict, item)
        kind = _get(item, "type", where, str, optional=True)
        kind = "message" if kind is None else kind  # a message may leave out its type
        _reject_unknown(item, where, kind)
        item_id = _get(item, "id", where, str, optional=True)
        prefix = _ID_PREFIXES.get(kind)
        if item_id is not None and prefix is not None and not item_id.startswith(prefix):
            raise BadRequest(f"Invalid '{where}.id': '{item_id}'. Expected an ID that begins with '{prefix}'.",
                             f"{where}.id", "invalid_id_prefix")
        if item_id is not None:
            if item_id in ids:  # e.g. the same call item sent twice
                raise BadRequest(f"Duplicate item found with id {item_id}. Remove duplicate items from your "
                                 "input and try again.", "input")
            ids.add(item_id)
        if kind == "message":
            role = _get(item, "role", where, str)
            if role not in ("user", "system", "developer", "assistant"):
                raise _invalid_value(role, f"{where}.role", ["user", "system", "developer", "assistant"])
            content = _get(item, "content", where, (str, list))
            if isinstance(content, list):
                allowed = _ASSISTANT_PARTS if role == "assistant" else None
                content = _parts_text(content, f"{where}.content", _PART_TYPES, (kind, "content"), allowed)
            items.append({"kind": "message", "role": role, "text": content})
        elif kind == "function_call":
            call = {key: _get(item, key, where, str) for key in ("call_id", "name", "arguments")}
            if (namespace := _get(item, "namespace", where, str, optional=True)) is not None:
                call["name"] = f"{namespace}{NAMESPACE_SEP}{call['name']}"  # as the model knows the tool
            items.append({"kind": "call", **call, "id": item_id})
        elif kind == "function_call_output":
            output = _get(item, "output", where, (str, list))
            if isinstance(output, list):
                output = _parts_text(output, f"{where}.output", _OUTPUT_PARTS, (kind, "output"))
            items.append({"kind": "output", "call_id": _get(item, "call_id", where, str), "text": output})
        elif kind == "reasoning":  # the SDK's ResponseReasoningItemParam: id and summary are required
            _get(item, "summary", where, list)
            items.append({"kind": "reasoning", "id": _get(item, "id", where, str),
                          "encrypted_content": _get(item, "encrypted_content", where, str, optional=True)})
        elif extra is not None and (parsed := extra(item, where, kind)) is not None:
            items.append(parsed)
        else:
            supported = ["message", "function_call", "function_call_output", "reasoning"]
            raise _invalid_value(kind, f"{where}.type", supported)
    return items


def _check_pairs(items: list[dict]) -> None:
    """Every output answers an earlier call, and every call has its output, matched by call_id.

    Raises:
        BadRequest: with the real API's wording for an orphan output or an unanswered call.
    """
    called: list[str] = []
    answered = set()
    for item in items:
        if item["kind"] == "call":
            called.append(item["call_id"])
        elif item["kind"] == "output":
            if item["call_id"] not in called:
                message = f"No tool call found for function call output with call_id {item['call_id']}."
                raise BadRequest(message, "input")
            answered.add(item["call_id"])
    for call_id in called:
        if call_id not in answered:
            raise BadRequest(f"No tool output found for function call {call_id}.", "input")


@functools.lru_cache(maxsize=256)
def _schema_problem(schema_json: str) -> str | None:
    """Why a schema (as JSON text, so the answer can be cached) is not a JSON Schema at all, in
    jsonschema's words as the real API quotes them ("'strng' is not valid under any of the given
    schemas."); None when it passes the metaschema check."""
    # Imported on first use: jsonschema's import is slow (see course_lib.fast_jsonschema), and a request
    # without function tools never needs it.
    from jsonschema import Draft202012Validator, SchemaError

    try:
        Draft202012Validator.check_schema(json.loads(schema_json))
    except SchemaError as error:
        return f"{error.message}."
    return None


def _missing_properties(schema: Any, context: tuple = (), *, nested: bool) -> tuple | None:
    """The context of the first object schema without `properties`: the root only, or (`nested`)
    also every object below it, through properties, items, anyOf/oneOf and $defs; None if none.

    The real API refuses a function tool whose parameters are `{"type": "object"}` without
    `properties`, strict or not: "Invalid schema for function 'GetCurrentTime': In context=(),
    object schema missing properties." (param `tools[7].parameters`, code `invalid_function_parameters`:
    https://github.com/mark3labs/mcp-go/issues/680, Responses; https://github.com/evalstate/fast-agent/issues/143,
    Chat Completions, no strict). Hosts add `"properties": {}` at the root only, and that is enough
    (https://github.com/caozhiyuan/copilot-api/pull/131); a nested property-less object passed without
    strict mode (https://github.com/prism-php/prism/pull/746). In strict mode every object needs
    `properties`, nested ones too (measured by https://github.com/google/adk-go/pull/1614); the
    context is written as the real API writes a nested one, a tuple of keys:
    `In context=('properties', 'permissions'), …` (https://github.com/lastmile-ai/openai-agents-mcp/issues/2).
    """
    if not isinstance(schema, dict):
        return None
    if schema.get("type") == "object" and "properties" not in schema:
        return context
    if not nested:
        return None
    for key in ("properties", "$defs"):
        children = schema.get(key)
        for name, sub in children.items() if isinstance(children, dict) else ():
            found = _missing_properties(sub, (*context, key, name), nested=True)
            if found is not None:
                return found
    for key in ("anyOf", "oneOf"):
        branches = schema.get(key)
        for i, sub in enumerate(branches if isinstance(branches, list) else ()):
            found = _missing_properties(sub, (*context, key, str(i)), nested=True)  # the API writes '0'
            if found is not None:
                return found
    return _missing_properties(schema.get("items"), (*context, "items"), nested=True)


def _parse_tools(body: dict) -> list[dict]:
    """Return the declared function tools, those inside a `namespace` tool included (named
    `<namespace>.<name>`, with `namespace` kept; other tool types are accepted and ignored), each
    with `strict` set to the mode in effect (`strict_in_effect`: an omitted `strict` resolved).

    Raises:
        BadRequest: `tools` is not a list, or a function tool lacks a name or has bad parameters:
            not a JSON Schema, not an object at the root or with oneOf/anyOf/allOf/enum/not beside
            it, an object root without `properties` (strict or not), or, for a strict tool, against
            strict mode's rules (`api_rules.strict_schema_problems`: every object with `properties`,
            all of them required, no additional properties, no keyword outside strict mode's subset).
    """
    tools = _get(body, "tools", "", list, optional=True) or []
    functions = []
    for i, tool in enumerate(tools):
        where = f"tools[{i}]"
        if not isinstance(tool, dict):
            raise _type_error(where, dict, tool)
        kind = _get(tool, "type", where, str)
        if kind == "namespace":  # function tools grouped under a name (the SDK's NamespaceToolParam)
            functions += _namespace_tools(tool, where)
        if kind == "function":
            functions.append(_function_tool(tool, where))
    return functions


NAMESPACE_SEP = "."  # the model's own name for a namespaced tool: "ref.read_text_file" (no function name has a dot)


def _namespace_tools(tool: dict, where: str) -> list[dict]:
    """A `namespace` tool's function tools, each named `<namespace>.<name>` and carrying `namespace`.

    Raises:
        BadRequest: a missing name or tools list, or a function tool `_function_tool` refuses.
    """
    namespace = _get(tool, "name", where, str)
    _get(tool, "description", where, str)
    inner = []
    for j, function in enumerate(_get(tool, "tools", where, list)):
        spot = f"{where}.tools[{j}]"
        if not isinstance(function, dict):
            raise _type_error(spot, dict, function)
        if _get(function, "type", spot, str) == "function":
            checked = _function_tool(function, spot)
            inner.append(checked | {"name": f"{namespace}{NAMESPACE_SEP}{checked['name']}", "namespace": namespace})
    return inner


def _function_tool(tool: dict, where: str) -> dict:
    """One function tool, checked, with `strict` resolved (see `_parse_tools`).

    Raises:
        BadRequest: no name, or parameters the real API refuses.
    """
    name = _get(tool, "name", where, str)
    parameters = _get(tool, "parameters", where, dict, optional=True)
    # Like the real API: parameters that are no JSON Schema, or an object root without
    # `properties`, are refused for every function tool; a strict tool's schema must also keep
    # strict mode's rules (checked first: `{"type": "object"}` in strict mode is refused for its
    # missing additionalProperties, https://github.com/xemantic/xemantic-ai-tool-schema/issues/37).
    strict = tool.get("strict") is True
    problem = _schema_problem(json.dumps(parameters, sort_keys=True)) if parameters is not None else None
    if problem is None and parameters is not None:  # an object root, plain (api_rules: function.*)
        problem = next(iter(function_schema_problems(parameters)), None)
    if problem is None and strict:  # strict mode's rules and keyword subset (api_rules: strict.*)
        problem = next(iter(strict_schema_problems(parameters or {})), None)
    if problem is None and (context := _missing_properties(parameters, nested=strict)) is not None:
        problem = f"In context={context!r}, object schema missing properties."
    if problem is not None:
        raise BadRequest(f"Invalid schema for function '{name}': {problem}",
                         f"{where}.parameters", "invalid_function_parameters")
    # The rest of the model reads `strict` as the mode in effect, an omitted one resolved.
    return tool | {"strict": strict_in_effect(tool)}


def strict_in_effect(tool: dict) -> bool:
    """Whether a Responses function tool's calls are made in strict mode.

    `strict: true` always (its schema was checked, a bad one is a 400), `strict: false` never. An
    omitted `strict` is *not* false in the Responses API: it is strict when the schema keeps strict
    mode's rules, non-strict otherwise, and never a 400 for that reason. A null `strict` counts as
    omitted, like any known optional key that is null (see the module docstring).

    Sources, followed here: the openai SDK's own docstring (openai 3.57,
    `types/responses/namespace_tool_param.py`, `ToolFunction.strict`): "If omitted, Responses attempts
    to use strict validation when the schema is compatible, and falls back to non-strict validation
    otherwise." The function-calling guide (as of 2026-04,
    https://developers.openai.com/api/docs/guides/function-calling) says more strongly that Responses
    "will normalize your schema into strict mode", "while Chat Completions requests remain non-strict
    by default", and "To opt out of strict mode in Responses ... explicitly set `strict: false`". On
    a schema that is *not* strict-compatible the two differ (the guide's normalising would make
    optional fields required); this model follows the SDK and falls back to non-strict there. Either
    way a tool that must be non-strict says `strict: false`, as the course's declarations do.
    """
    if tool.get("strict") is not None:
        return tool["strict"] is True
    parameters = tool.get("parameters")
    if parameters is None:
        return True  # no schema at all: nothing strict mode could object to
    if _schema_problem(json.dumps(parameters, sort_keys=True)) is not None or strict_schema_problems(parameters):
        return False  # (a root that is no plain object is refused before this is asked: function_schema_problems)
    return _missing_properties(parameters, nested=True) is None


def _tool_policy(body: dict, tools: list[dict]) -> tuple[str, list[dict]]:
    """Read `tool_choice`: return the mode ("auto", "none", "required" or "forced") and the tools
    the model may call.

    Raises:
        BadRequest: an unknown choice, or a named tool that is not among `tools`.
    """
    choice = body.get("tool_choice", "auto")
    by_name = {tool["name"]: tool for tool in tools}
    if isinstance(choice, str):
        if choice not in ("auto", "none", "required"):
            raise _invalid_value(choice, "tool_choice", ["auto", "none", "required"])
        return choice, tools
    if not isinstance(choice, dict):
        raise _type_error("tool_choice", (str, dict), choice)
    kind = _get(choice, "type", "tool_choice", str)
    if kind == "function":
        name = _get(choice, "name", "tool_choice", str)
        if name not in by_name:
            message = f"Tool choice 'function' with name '{name}' not found in 'tools' parameter."
            raise BadRequest(message, "tool_choice")
        return "forced", [by_name[name]]
    if kind != "allowed_tools":
        raise _invalid_value(kind, "tool_choice.type", ["function", "allowed_tools"])
    mode = _get(choice, "mode", "tool_choice", str)
    if mode not in ("auto", "required"):
        raise _invalid_value(mode, "tool_choice.mode", ["auto", "required"])
    names = []
    for i, entry in enumerate(_get(choice, "tools", "tool_choice", list)):
        if not isinstance(entry, dict):
            raise _type_error(f"tool_choice.tools[{i}]", dict, entry)
        name = _get(entry, "name", f"tool_choice.tools[{i}]", str)
        if name not in by_name:
            raise BadRequest(f"Allowed tool '{name}' not found in 'tools' parameter.", f"tool_choice.tools[{i}]")
        names.append(name)
    return mode, [tool for tool in tools if tool["name"] in names]
