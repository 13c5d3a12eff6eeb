"""Turning the model's `arguments` text into a checked value, by hand.

A Responses `function_call` carries its arguments as JSON *text*. Before any tool
runs, the app must (1) parse that text into an object and (2) check the object
against the tool's rule. Both steps only look at data: parsing executes nothing
and reads no file.

`ReadTextFileArgs` is the single source of the rule for `read_text_file`: the
published `inputSchema` is generated from it and the server validates with it, so
the declared rule and the enforced rule cannot drift apart. One place needs care:
JSON Schema's `integer` is any number with no fractional part, so `20.0` and `1e2`
keep the published rule, and `JsonIntOrNone` makes the check accept them too (as 20 and
100) while pydantic's strict mode still refuses `"20"`, `true` and `20.5`.
"""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

M = TypeVar("M", bound=BaseModel)

MAX_ARGUMENTS_CHARS = 16_384
"""Longest arguments text accepted; checked before parsing so a huge text costs nothing."""

MAX_DEPTH = 20
"""Deepest nesting of objects/arrays accepted (the top-level object is depth 1)."""

MAX_INT_DIGITS = 100
"""Longest integer literal accepted; Python refuses >4300 digits with a non-JSON error anyway."""

QUOTE_LIMIT = 40
"""Anything echoed back from the caller is cut to about this many characters."""

BOTH_HEAD_AND_TAIL = "Cannot specify both head and tail parameters simultaneously"
"""The reference filesystem server's wording, kept so the meaning is recognisably the same."""

_JSON_WHITESPACE = re.compile(r"[ \t\n\r]*")


class ArgumentsError(ValueError):
    """The arguments could not be accepted; `message` is safe to show to a model."""

    def __init__(self, message: str, code: str = "INVALID_INPUT") -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def quote(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """Return `repr(value)` cut to about `limit` characters, for echoing caller data safely."""
    if isinstance(value, str) and len(value) > limit:
        value = value[: limit - 1] + "…"  # cut the text, not its repr, so the quotes stay balanced
    text = repr(value)
    return text if len(text) <= limit + 2 else text[: limit - 1] + "…"


def json_type_name(value: Any) -> str:
    """Name a Python value by its JSON type ("object", "array", "string", ...)."""
    # bool before int: True is an int in Python but a boolean in JSON.
    for kind, name in ((bool, "boolean"), (dict, "object"), (list, "array"), (str, "string"),
                       (int, "integer"), (float, "number"), (bytes, "bytes")):
        if isinstance(value, kind):
            return name
    return "null" if value is None else type(value).__name__


def _reject_constant(token: str) -> Any:
    # Python's json accepts NaN/Infinity by default; standard JSON does not.
    raise ArgumentsError(f"{token} is not allowed: JSON numbers must be finite")


def _parse_float(token: str) -> float:
    number = float(token)
    if not math.isfinite(number):  # 1e999 silently becomes inf otherwise
        raise ArgumentsError(f"number {quote(token)} is out of range: JSON numbers must be finite")
    return number


def _parse_int(token: str) -> int:
    if len(token.lstrip("-")) > MAX_INT_DIGITS:
        raise ArgumentsError(f"integer is too long (more than {MAX_INT_DIGITS} digits)")
    return int(token)


def _refuse_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # A plain dict keeps the *last* duplicate silently; which one "counts" would be a guess.
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ArgumentsError(f"duplicate key {quote(key)} in arguments")
        result[key] = value
    return result


def _nesting_depth(text: str) -> int:
    """Deepest bracket nesting outside strings, found without parsing (so no recursion)."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def parse_arguments_text(text: Any) -> dict[str, Any]:
    """Parse the model's arguments JSON text into a dict, refusing anything doubtful.

    Raises:
        ArgumentsError: `text` is not a str, is empty or too long, is not valid JSON,
            has duplicate keys, NaN/Infinity or out-of-range numbers, nests deeper than
            MAX_DEPTH, is not a JSON object, or has data after the object.
    """
    if not isinstance(text, str):
        raise ArgumentsError(f"arguments must be JSON text, got {_article(json_type_name(text))}")
    if len(text) > MAX_ARGUMENTS_CHARS:
        raise ArgumentsError(
            f"arguments text is too long: {len(text)} characters (limit {MAX_ARGUMENTS_CHARS})"
        )
    start = _JSON_WHITESPACE.match(text).end()
    if start == len(text):
        raise ArgumentsError("arguments text is empty: expected a JSON object")
    # Checked before parsing: deep input would otherwise hit Python's recursion limit.
    if _nesting_depth(text) > MAX_DEPTH:
        raise ArgumentsError(f"arguments are nested too deeply (more than {MAX_DEPTH} levels)")
    decoder = json.JSONDecoder(
        object_pairs_hook=_refuse_duplicates,
        parse_constant=_reject_constant,
        parse_float=_parse_float,
        parse_int=_parse_int,
    )
    try:
        value, end = decoder.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise ArgumentsError(
            f"arguments are not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    end = _JSON_WHITESPACE.match(text, end).end()
    if end != len(text):
        line = text.count("\n", 0, end) + 1
        column = end - (text.rfind("\n", 0, end) + 1) + 1
        raise ArgumentsError(
            f"unexpected data after the JSON value (line {line}, column {column})"
        )
    if not isinstance(value, dict):
        raise ArgumentsError(f"expected a JSON object, got {_article(json_type_name(value))}")
    return value


def _article(noun: str) -> str:
    if noun in ("null", "bytes"):
        return noun
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def _integral(value: Any) -> Any:
    """A float with no fractional part as the int it equals (20.0 → 20); anything else unchanged."""
    # JSON Schema (2020-12 validation, §6.1.1): "integer" matches "any number with a zero fractional
    # part", so a schema with `type: integer` accepts 20.0 and 1e2. bool is no float, so true stays refused.
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


JsonIntOrNone = Annotated[int | None, BeforeValidator(_integral)]
"""An optional integer as JSON Schema means it: 20 and 20.0 (and 1e2) pass, as 20 (100); "20", true
and 20.5 do not. The published schema stays `{"type": "integer"}` or null, with its `minimum`."""


class ReadTextFileArgs(BaseModel):
    """The rule for `read_text_file`: a path, and at most one of head/tail."""

    # strict: "5" and true are not 5 (5.0 is: see JsonIntOrNone); forbid: an unknown property is an error.
    model_config = ConfigDict(strict=True, extra="forbid")

    path: str = Field(
        description="Path of the file to read, e.g. /workspace/notes.txt (or relative to /workspace)"
    )
    head: JsonIntOrNone = Field(
        default=None, ge=1, description="If provided, returns only the first N lines of the file"
    )
    tail: JsonIntOrNone = Field(
        default=None, ge=1, description="If provided, returns only the last N lines of the file"
    )

    @model_validator(mode="after")
    def _head_or_tail(self) -> ReadTextFileArgs:
        # By presence, not truthiness: the reference server's `if (head && tail)` misses 0.
        if self.head is not None and self.tail is not None:
            raise ValueError(BOTH_HEAD_AND_TAIL)
        return self


def _clean_schema(node: Any) -> Any:
    """Drop pydantic's `title` keywords; keep property *names* even if one were 'title'."""
    if isinstance(node, list):
        return [_clean_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    cleaned = {}
    for key, value in node.items():
        if key == "title":
            continue
        if key == "properties":
            cleaned[key] = {name: _clean_schema(sub) for name, sub in value.items()}
        else:
            cleaned[key] = _clean_schema(value)
    return cleaned


def input_schema() -> dict[str, Any]:
    """Return the JSON Schema published as the MCP `inputSchema` of `read_text_file`."""
    schema = _clean_schema(ReadTextFileArgs.model_json_schema())
    # The class docstring is for Python readers; the tool's own description speaks to the model.
    schema.pop("description", None)
    # Reading order for learners: what it is, its fields, which are required, nothing else.
    order = ("type", "properties", "required", "additionalProperties")
    return {key: schema[key] for key in order if key in schema} | {
        key: value for key, value in schema.items() if key not in order
    }


_EXPECTED = {"int_type": "an integer", "string_type": "a string"}


def _describe(error: dict[str, Any], model: type[BaseModel]) -> str:
    """One readable line for one pydantic error, in the form "<field>: <problem>"."""
    kind, loc = error["type"], error["loc"]
    field = ".".join(str(part) for part in loc)
    if kind == "missing":
        return f"{field}: required"
    if kind == "extra_forbidden":
        allowed = ", ".join(model.model_fields)
        return f"unknown property {quote(field)} (allowed: {allowed})"
    if kind in _EXPECTED:
        return f"{field}: expected {_EXPECTED[kind]} (got {json_type_name(error['input'])})"
    if kind == "greater_than_equal":
        return f"{field}: must be ≥ {error['ctx']['ge']} (got {quote(error['input'])})"
    if kind == "less_than_equal":
        return f"{field}: must be ≤ {error['ctx']['le']} (got {quote(error['input'])})"
    if kind in ("string_too_short", "string_too_long"):
        return f"{field}: {error['msg'].lower()}"
    if kind == "value_error":
        # Our model validator's own sentence, without pydantic's "Value error, " prefix.
        return str(error["ctx"]["error"])
    return f"{field or 'arguments'}: invalid value"


def validate_arguments(model: type[M], obj: Any) -> M:
    """Check an already-parsed arguments object against a tool's argument model (its rule).

    Raises:
        ArgumentsError: `obj` is not a dict, or breaks the rule; the message lists
            every field problem, separated by "; ".
    """
    if not isinstance(obj, dict):
        raise ArgumentsError(f"expected a JSON object, got {_article(json_type_name(obj))}")
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        problems = [_describe(error, model) for error in exc.errors()]
        raise ArgumentsError("; ".join(problems)) from None


def validate_read_args(obj: Any) -> ReadTextFileArgs:
    """Check an already-parsed arguments object against ReadTextFileArgs.

    Raises:
        ArgumentsError: see `validate_arguments`.
    """
    return validate_arguments(ReadTextFileArgs, obj)


def parse_read_args(text: Any) -> ReadTextFileArgs:
    """Parse the model's arguments text, then validate it as read_text_file input.

    Raises:
        ArgumentsError: from parse_arguments_text or validate_read_args.
    """
    return validate_read_args(parse_arguments_text(text))
