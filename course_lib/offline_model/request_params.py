"""The top-level parameters of `POST /v1/responses`: which keys exist and their JSON types, read
from the openai SDK's own request types (`openai.types.responses.response_create_params`), not
typed by hand.

`ResponseCreateParamsNonStreaming` and `…Streaming` are TypedDicts generated from the API's
OpenAPI spec; their annotations give each key's JSON type (`Optional[float]` → a decimal or null,
`Iterable[ToolParam]` → an array of objects, `Union[Literal[…], ToolChoice…Param]` → one of the
literals or an object). `check_parameters` refuses what the real API refuses, in its words
(https://github.com/search?q=%22expected+a+decimal%2C+but+got+a+string+instead%22 gives the real
messages seen in the wild):

- a key none of them declares: `Unknown parameter: 'foo'.` (code `unknown_parameter`), even with
  a null value; the real API reports an unknown key before any type fault;
- a value of the wrong JSON type: `Invalid type for 'temperature': expected a decimal, but got a
  string instead.` (`invalid_type`); an integer is `an integer` (a decimal number is refused
  there: `but got a decimal number instead`), true/false `a boolean`, a list of objects `an array
  of objects`, a union `one of a string or array of objects`, literals `one of 'auto' or
  'disabled'`.

Only the top level's types are checked here; `validation` checks `input`, `tools` and
`tool_choice` item by item. A null value passes, as everywhere in this model (a known optional
key that is null counts as absent).
"""

from __future__ import annotations

import collections.abc
import functools
import math
import re
import typing
from dataclasses import dataclass
from typing import Any

import typing_extensions

from course_lib.offline_model.validation import BadRequest, _english_list


@dataclass(frozen=True)
class _Kind:
    """One JSON type a parameter takes: "string", "integer", "decimal", "boolean", "object",
    "array" (with the kind of its items, for the wording) or "literals" (string values)."""

    name: str
    detail: tuple = ()


_ARTICLES = {"string": "a string", "integer": "an integer", "decimal": "a decimal", "boolean": "a boolean",
             "object": "an object"}  # fmt: skip


def _kinds(annotation: Any) -> list[_Kind] | None:
    """The JSON kinds an annotation allows, or None for "anything" (Any, an unknown class)."""
    origin = typing.get_origin(annotation)
    if annotation is type(None):
        return []
    if origin is typing.Union:
        kinds: list[_Kind] = []
        for arg in typing.get_args(annotation):
            inner = _kinds(arg)
            if inner is None:
                return None
            kinds += [kind for kind in inner if kind not in kinds]
        if any(kind.name == "string" for kind in kinds):  # str and Literal[...] strings: just "a string"
            kinds = [kind for kind in kinds if kind.name != "literals"]
        return kinds
    if origin is typing.Literal:
        values = typing.get_args(annotation)
        if all(isinstance(value, bool) for value in values):
            return [_Kind("boolean")]
        return [_Kind("literals", tuple(str(value) for value in values))]
    if annotation is str:
        return [_Kind("string")]
    if annotation is bool:
        return [_Kind("boolean")]
    if annotation is int:
        return [_Kind("integer")]
    if annotation is float:
        return [_Kind("decimal")]
    if typing_extensions.is_typeddict(annotation) or annotation is dict or origin in (dict, collections.abc.Mapping):
        return [_Kind("object")]
    if origin in (list, collections.abc.Iterable, collections.abc.Sequence):
        items = _kinds(typing.get_args(annotation)[0]) if typing.get_args(annotation) else None
        item = items[0].name if items and len({kind.name for kind in items}) == 1 else None
        return [_Kind("array", (item,) if item else ())]
    return None


def _wording(kind: _Kind, first: bool) -> str:
    """One kind as the real API words it; only the first of several takes an article."""
    if kind.name == "literals":
        values = [value.strip("'") for value in kind.detail]
        return f"one of {_english_list(values).replace(' and ', ' or ')}" if len(values) > 1 else f"'{values[0]}'"
    if kind.name == "array":
        text = f"array of {kind.detail[0]}s" if kind.detail and kind.detail[0] in ("object", "string") else "array"
        return f"an {text}" if first else text
    return _ARTICLES[kind.name] if first else kind.name


def _expected(kinds: list[_Kind]) -> str:
    if len(kinds) == 1:
        return _wording(kinds[0], True)
    parts = [_wording(kind, i == 0) for i, kind in enumerate(kinds)]
    return "one of " + (" or ".join(parts) if len(parts) == 2 else f"{', '.join(parts[:-1])}, or {parts[-1]}")


def _got(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a decimal number"
    return {str: "a string", dict: "an object", list: "an array"}.get(type(value), "null")


def _fits(kind: _Kind, value: Any) -> bool:
    if kind.name in ("string", "literals"):
        return isinstance(value, str)
    if kind.name == "boolean":
        return isinstance(value, bool)
    if kind.name == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind.name == "decimal":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind.name == "object":
        return isinstance(value, dict)
    return isinstance(value, list)


@functools.cache
def _parameters() -> dict[str, list[_Kind] | None]:
    """Every top-level key of a create-response body → the JSON kinds it takes (None: any)."""
    # Imported on first use, like `known_fields`: the request types take a few tenths of a second.
    from openai.types.responses import response_create_params as params

    merged: dict[str, list[_Kind] | None] = {}
    for typed in (params.ResponseCreateParamsNonStreaming, params.ResponseCreateParamsStreaming):
        for name, hint in typing.get_type_hints(typed).items():
            kinds = _kinds(hint)
            if name in merged and merged[name] is not None and kinds is not None:
                kinds = merged[name] + [kind for kind in kinds if kind not in merged[name]]
            elif name in merged:
                kinds = None
            merged[name] = kinds
    return merged


MAX_DEPTH = 100  # nesting of the whole body; a tool's JSON Schema rarely goes past 20
_SURROGATE = re.compile("[\ud800-\udfff]")


def _unparseable(reason: str) -> BadRequest:
    return BadRequest(f"We could not parse the JSON body of your request: {reason}.")


def check_json(body: Any) -> None:
    """Refuse what parses in Python but is no valid JSON text to answer from: a lone surrogate
    (`"\\ud800"`: not Unicode, so no reply could quote it as UTF-8), NaN or Infinity (not JSON
    numbers), or nesting deeper than MAX_DEPTH. Iterative, so no depth can overflow the stack.

    Raises:
        BadRequest: "We could not parse the JSON body of your request: …", as the real API words
            a body it cannot read.
    """
    stack = [(body, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH and isinstance(value, (dict, list)):
            raise _unparseable(f"nesting deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            stack += [(key, depth) for key in value] + [(item, depth + 1) for item in value.values()]
        elif isinstance(value, list):
            stack += [(item, depth + 1) for item in value]
        elif isinstance(value, str) and _SURROGATE.search(value):
            raise _unparseable("a string holds a lone surrogate (\\ud800–\\udfff), which is not valid Unicode")
        elif isinstance(value, float) and not math.isfinite(value):
            raise _unparseable(f"{value!r} is not a JSON number")


def check_parameters(body: dict) -> None:
    """Refuse a body that is no valid JSON (`check_json`), an unknown top-level key or a value of
    the wrong JSON type, as the real API does.

    Raises:
        BadRequest: see `check_json`; `Unknown parameter: 'foo'.` (code `unknown_parameter`) for
            the first unknown key, else `Invalid type for 'temperature': expected a decimal, but
            got a string instead.` (code `invalid_type`) for the first mistyped one.
    """
    check_json(body)
    known = _parameters()
    for key in body:
        if key not in known:
            raise BadRequest(f"Unknown parameter: '{key}'.", key, "unknown_parameter")
    for key, value in body.items():
        kinds = known[key]
        if value is None or kinds is None or any(_fits(kind, value) for kind in kinds):
            continue
        message = f"Invalid type for '{key}': expected {_expected(kinds)}, but got {_got(value)} instead."
        raise BadRequest(message, key, "invalid_type")
