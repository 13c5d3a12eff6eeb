"""The top-level parameters of each envelope's create request — `POST /v1/responses`,
`/v1/chat/completions` and `/v1/messages`: which keys exist and their JSON types, read from the SDKs'
own request types, not typed by hand (`RESPONSES`, `CHAT`, `MESSAGES` name them):
`openai.types.responses.response_create_params`, `openai.types.chat.completion_create_params` and
`anthropic.types.message_create_params`.

Their `…NonStreaming` and `…Streaming` TypedDicts are generated from each API's OpenAPI spec; their
annotations give each key's JSON type (`Optional[float]` → a decimal or null, `Iterable[ToolParam]`
→ an array of objects, `Union[Literal[…], ToolChoice…Param]` → one of the literals or an object).
`first_fault` finds the first key the real API refuses; `check_parameters` refuses it in the
OpenAI APIs' words (https://github.com/search?q=%22expected+a+decimal%2C+but+got+a+string+instead%22
gives the real messages seen in the wild); `messages` words it as Anthropic does:

- a key none of them declares, even with a null value (the real APIs report an unknown key before
  any type fault): Responses `Unknown parameter: 'foo'.` (code `unknown_parameter`); Chat
  Completions `Unrecognized request argument supplied: foo` (param and code null, as in
  https://github.com/coroot/coroot/issues/698 and https://github.com/nashsu/llm_wiki/issues/336);
- a value of the wrong JSON type: `Invalid type for 'temperature': expected a decimal, but got a
  string instead.` (`invalid_type`, both OpenAI APIs); an integer is `an integer` (a decimal number
  is refused there: `but got a decimal number instead`), true/false `a boolean`, a list of objects
  `an array of objects`, a union `one of a string or array of objects`, literals `one of 'auto' or
  'disabled'`.

Only the top level's types are checked here; `validation`, `chat` and `messages` check the items
inside. A null value passes, as everywhere in this model (a known optional key that is null counts
as absent).
"""

from __future__ import annotations

import collections.abc
import functools
import importlib
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


# Each envelope's request types: the module, and the prefix of its `…NonStreaming` / `…Streaming` TypedDicts
# (or the name of its one TypedDict, for a request that does not stream).
RESPONSES = ("openai.types.responses.response_create_params", "ResponseCreateParams")
CHAT = ("openai.types.chat.completion_create_params", "CompletionCreateParams")
MESSAGES = ("anthropic.types.message_create_params", "MessageCreateParams")
BETA_MESSAGES = ("anthropic.types.beta.message_create_params", "MessageCreateParams")  # with an anthropic-beta header
COUNT_TOKENS = ("anthropic.types.message_count_tokens_params", "MessageCountTokensParams")
BETA_COUNT_TOKENS = ("anthropic.types.beta.message_count_tokens_params", "MessageCountTokensParams")


@functools.cache
def _parameters(api: tuple[str, str] = RESPONSES) -> dict[str, list[_Kind] | None]:
    """Every top-level key of one envelope's create body → the JSON kinds it takes (None: any)."""
    # Imported on first use, like `known_fields`: the request types take a few tenths of a second.
    module, prefix = api
    params = importlib.import_module(module)
    merged: dict[str, list[_Kind] | None] = {}
    both = [getattr(params, f"{prefix}{kind}", None) for kind in ("NonStreaming", "Streaming")]
    for typed in both if all(both) else [getattr(params, prefix)]:
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


@dataclass(frozen=True)
class Fault:
    """The first top-level key the real API refuses: unknown (`kinds` None), or of the wrong JSON type."""

    key: str
    value: Any
    kinds: list[_Kind] | None

    @property
    def expected(self) -> str:
        """The kinds it takes, as the OpenAI APIs word them: `a decimal`, `one of 'auto' or 'none'`."""
        return _expected(self.kinds or [])

    @property
    def got(self) -> str:
        return _got(self.value)


def first_fault(body: dict, api: tuple[str, str] = RESPONSES) -> Fault | None:
    """The first unknown top-level key (all unknown keys come before any type fault, as in the real
    APIs), else the first one of the wrong JSON type; None when every key is known and well typed."""
    known = _parameters(api)
    for key in body:
        if key not in known:
            return Fault(key, body[key], None)
    for key, value in body.items():
        kinds = known[key]
        if value is None or kinds is None or any(_fits(kind, value) for kind in kinds):
            continue
        return Fault(key, value, kinds)
    return None


def check_parameters(body: dict, api: tuple[str, str] = RESPONSES) -> None:
    """Refuse a body that is no valid JSON (`check_json`), an unknown top-level key or a value of
    the wrong JSON type, as the real API does (`RESPONSES` or `CHAT`; Anthropic's words are in
    `messages`).

    Raises:
        BadRequest: see `check_json`; for the first unknown key, `Unknown parameter: 'foo'.` (code
            `unknown_parameter`) in Responses, `Unrecognized request argument supplied: foo` in Chat
            Completions; else `Invalid type for 'temperature': expected a decimal, but got a string
            instead.` (code `invalid_type`) for the first mistyped one.
    """
    check_json(body)
    fault = first_fault(body, api)
    if fault is None:
        return
    if fault.kinds is None and api == CHAT:
        raise BadRequest(f"Unrecognized request argument supplied: {fault.key}")
    if fault.kinds is None:
        raise BadRequest(f"Unknown parameter: '{fault.key}'.", fault.key, "unknown_parameter")
    message = f"Invalid type for '{fault.key}': expected {fault.expected}, but got {fault.got} instead."
    raise BadRequest(message, fault.key, "invalid_type")
