"""Request validation: the same checks and the same 400 messages as the real Responses API.

`BadRequest` is the one error; it becomes an OpenAI-style error body. The `_parse_*` helpers turn
a request body into the plain items, tools and tool policy the rest of the model works from.
"""

from __future__ import annotations

from typing import Any

from course_lib.declarations import strict_schema_problems


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


def _invalid_value(value: Any, param: str, supported: list[str]) -> BadRequest:
    listed = ", ".join(f"'{s}'" for s in supported)
    return BadRequest(f"Invalid value: '{value}'. Supported values are: {listed}.", param, "invalid_value")


def _parts_text(parts: list, where: str, allowed: tuple[str, ...]) -> str:
    """Join the text of content parts (input_text/output_text), checking each part's shape."""
    texts = []
    for i, part in enumerate(parts):
        if not isinstance(part, dict):
            raise _type_error(f"{where}[{i}]", dict, part)
        kind = _get(part, "type", f"{where}[{i}]", str)
        if kind not in allowed:
            raise _invalid_value(kind, f"{where}[{i}].type", list(allowed))
        if kind in ("input_text", "output_text"):
            texts.append(_get(part, "text", f"{where}[{i}]", str))
    return "\n".join(texts)


def _parse_input(body: dict) -> list[dict]:
    """Normalise `input` to items: {"kind": "message", role, text}, {"kind": "call", call_id, name,
    arguments} or {"kind": "output", call_id, text}. Reasoning items are dropped.

    Raises:
        BadRequest: an item has a missing field, a wrong type or an unknown `type`.
    """
    raw = _get(body, "input", "", (str, list))
    if isinstance(raw, str):
        return [{"kind": "message", "role": "user", "text": raw}]
    items = []
    for i, item in enumerate(raw):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise _type_error(where, dict, item)
        kind = item.get("type", "message")
        if kind == "message":
            role = _get(item, "role", where, str)
            if role not in ("user", "system", "developer", "assistant"):
                raise _invalid_value(role, f"{where}.role", ["user", "system", "developer", "assistant"])
            content = _get(item, "content", where, (str, list))
            parts = ("input_text", "output_text", "refusal", "input_image", "input_file")
            text = content if isinstance(content, str) else _parts_text(content, f"{where}.content", parts)
            items.append({"kind": "message", "role": role, "text": text})
        elif kind == "function_call":
            call = {key: _get(item, key, where, str) for key in ("call_id", "name", "arguments")}
            items.append({"kind": "call", **call})
        elif kind == "function_call_output":
            output = _get(item, "output", where, (str, list))
            text = output if isinstance(output, str) else _parts_text(output, f"{where}.output", ("input_text",))
            items.append({"kind": "output", "call_id": _get(item, "call_id", where, str), "text": text})
        elif kind != "reasoning":  # reasoning items carry nothing this model uses
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


def _parse_tools(body: dict) -> list[dict]:
    """Return the declared function tools (other tool types are accepted and ignored).

    Raises:
        BadRequest: `tools` is not a list, or a function tool lacks a name or has bad parameters.
    """
    tools = _get(body, "tools", "", list, optional=True) or []
    functions = []
    for i, tool in enumerate(tools):
        where = f"tools[{i}]"
        if not isinstance(tool, dict):
            raise _type_error(where, dict, tool)
        if _get(tool, "type", where, str) == "function":
            name = _get(tool, "name", where, str)
            parameters = _get(tool, "parameters", where, dict, optional=True)
            # Like the real API: a strict tool whose schema breaks strict mode's rules is refused.
            if tool.get("strict") is True and (problems := strict_schema_problems(parameters or {})):
                raise BadRequest(f"Invalid schema for function '{name}': {problems[0]}",
                                 f"{where}.parameters", "invalid_function_parameters")
            functions.append(tool)
    return functions


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
