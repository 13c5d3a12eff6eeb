"""Reasoning models: a `reasoning` item before the output, and the 400 when it is not passed back.

Under a reasoning-model name (`is_reasoning_model`, in `course_lib.api_rules`: gpt-5…, gpt-6…, o1…, o3…, o4…) every response's output
starts with a reasoning item in the SDK's shape (`ResponseReasoningItem`): `{"id": "rs_…",
"type": "reasoning", "summary": []}`, no `status` (the real API refuses `status` on an input
reasoning item, see `known_fields`, so an item passed back with `to_dict()` must not carry one).
The offline model thinks nothing it could show: `summary` stays empty and `usage` counts a few
stand-in reasoning tokens.

`encrypted_content` is added in stateless mode (`store: false`) or when `include` asks for
`reasoning.encrypted_content`: "When you create a response in stateless mode, reasoning items in
the response's `output` array include an `encrypted_content` property by default. [...] The API
still accepts the legacy `reasoning.encrypted_content` value in `include`"
(https://developers.openai.com/api/docs/guides/reasoning, as of 2026). The SDK's own docstring
(openai 3.57, `ResponseReasoningItem.encrypted_content`) says more broadly "populated by default";
whether a *stored* response without `include` carries it could not be verified, so it does not here.

What the model then demands of a later input (`check_input`), in the real API's words:

- a `function_call` item sent back with its `fc_…` id needs the reasoning item that preceded it
  in the model's output, before it (the other items of the same output may stand between them:
  calls, and an assistant message the model wrote before its call, `[reasoning, message,
  function_call]` sent back in order):
  "Item 'fc_…' of type 'function_call' was provided without its required 'reasoning' item:
  'rs_…'." (param `input`, code null: https://github.com/VRSEN/agency-swarm/issues/367,
  https://github.com/mastra-ai/mastra/issues/8738). Interleaving the outputs (call, output, call,
  output) breaks it too (https://community.openai.com/t/openai-api-error-function-call-was-provided-without-its-required-reasoning-item-the-real-issue/1355347).
  A call sent without its `id` is paired by `call_id` alone and needs no reasoning item
  (https://github.com/laravel/ai/pull/1052).
- a reasoning item needs a following item from the model: "Item 'rs_…' of type 'reasoning' was
  provided without its required following item." (https://github.com/continuedev/continue/issues/8933).
- a reasoning item from a response that was not stored, sent back without its `encrypted_content`,
  cannot be found: "Item with id 'rs_…' not found. Items are not persisted when `store` is set to
  false. Try again with `store` set to true, or remove this item from your input." (param `input`,
  code null, HTTP 404: https://github.com/router-for-me/CLIProxyAPI/issues/2381,
  https://github.com/can1357/oh-my-pi/issues/41). `ItemNotFound.status` is 404.
- an `encrypted_content` this model did not write: "The encrypted content gAAA...DQ== could not be
  verified." (param null, code `invalid_encrypted_content`: https://github.com/openai/codex/issues/8145).

Not verified, so not enforced: whether a `message` item needs its reasoning item too (the wording
exists: https://github.com/continuedev/continue/issues/12620, but not when it applies), whether
an `fc_` id from an unstored response is "not found" as well, and the refusals of parameters a
reasoning model does not take (`temperature`) or a non-reasoning model given `reasoning.effort`.
The ids the model issued are remembered in this process (at most `CAPACITY`), like `state`'s store.
"""

from __future__ import annotations

import base64
import hashlib
import threading
from collections import OrderedDict
from typing import Any

from course_lib.api_rules import is_reasoning_model
from course_lib.offline_model.validation import BadRequest

__all__ = ["ItemNotFound", "add_reasoning", "check_input", "forget_all", "is_reasoning_model"]

CAPACITY = 2048
REASONING_TOKENS_PER_ITEM = 24  # a stand-in count: the offline model's "thinking" is its fixed rules
_SECRET = "offline-model"  # not a secret at all: it only lets the model recognise its own tokens

_lock = threading.Lock()
_reasoning_of: OrderedDict[str, str] = OrderedDict()  # fc_… id → the rs_… id that preceded it
_issued: OrderedDict[str, bool] = OrderedDict()  # rs_… id → whether its response was stored


class ItemNotFound(BadRequest):
    """An input item the API cannot find (HTTP 404 in the real API, `status`)."""

    status = 404


def _sealed(reasoning_id: str) -> str:
    """The `encrypted_content` of a reasoning item: opaque, deterministic, Fernet-looking ("gAAAA…")."""
    digest = hashlib.sha256(f"{_SECRET}|{reasoning_id}".encode()).digest()
    return "gAAAAA" + base64.urlsafe_b64encode(digest + hashlib.sha256(digest).digest()).decode()


def _remember(table: OrderedDict, key: str, value: Any) -> None:
    with _lock:
        table[key] = value
        table.move_to_end(key)
        while len(table) > CAPACITY:
            table.popitem(last=False)


def add_reasoning(body: dict, reasoning_id: str, response: dict[str, Any]) -> dict[str, Any]:
    """`response` (a Response dict) as a reasoning model gives it: its output led by a reasoning
    item, `reasoning.effort` echoed and reasoning tokens counted. Unchanged for other models."""
    if not is_reasoning_model(response["model"]):
        return response
    stored = body.get("store") is not False
    item: dict[str, Any] = {"id": reasoning_id, "type": "reasoning", "summary": []}
    if not stored or "reasoning.encrypted_content" in (body.get("include") or []):
        item["encrypted_content"] = _sealed(reasoning_id)
    _remember(_issued, reasoning_id, stored)
    for output in response["output"]:
        if output["type"] == "function_call":
            _remember(_reasoning_of, output["id"], reasoning_id)
    asked = body.get("reasoning") if isinstance(body.get("reasoning"), dict) else {}
    thought = REASONING_TOKENS_PER_ITEM * len(response["output"])
    usage = response["usage"]
    usage = {**usage, "output_tokens": usage["output_tokens"] + thought, "total_tokens": usage["total_tokens"] + thought,
             "output_tokens_details": {"reasoning_tokens": thought}}  # fmt: skip
    return {**response, "output": [item, *response["output"]], "usage": usage,
            "reasoning": {"effort": asked.get("effort") or "medium", "summary": asked.get("summary")}}


def _short(text: str) -> str:
    return f"{text[:4]}...{text[-4:]}"  # as the real API quotes a token: gAAA...DQ==


def check_input(items: list[dict]) -> list[dict]:
    """Check the reasoning items of a parsed input (see the module docstring); return the items
    without them (they carry nothing else this model uses).

    Raises:
        ItemNotFound: a reasoning item of an unstored response, sent back without `encrypted_content`.
        BadRequest: an `encrypted_content` this model did not write; a reasoning item with no model
            item after it; a `function_call` sent with its id but without its reasoning item.
    """
    with _lock:
        issued, reasoning_of = dict(_issued), dict(_reasoning_of)
    for index, item in enumerate(items):
        if item["kind"] == "reasoning":
            sealed = item["encrypted_content"]
            if sealed is not None and sealed != _sealed(item["id"]):
                raise BadRequest(f"The encrypted content {_short(sealed)} could not be verified.", None,
                                 "invalid_encrypted_content")
            if sealed is None and issued.get(item["id"]) is False:
                raise ItemNotFound(f"Item with id '{item['id']}' not found. Items are not persisted when `store` is "
                                   "set to false. Try again with `store` set to true, or remove this item from your "
                                   "input.", "input")
            following = items[index + 1] if index + 1 < len(items) else None
            if item["id"] in issued and not (following and (following["kind"] == "call" or following.get("role") == "assistant")):
                raise BadRequest(f"Item '{item['id']}' of type 'reasoning' was provided without its required "
                                 "following item.", "input")
        elif item["kind"] == "call" and (needed := reasoning_of.get(item.get("id") or "")) is not None:
            before = index - 1
            while before >= 0 and (items[before]["kind"] == "call" or _said_by_model(items[before])):
                before -= 1  # the other items of the same output: calls, and text the model wrote before a call
            if before < 0 or items[before]["kind"] != "reasoning" or items[before]["id"] != needed:
                raise BadRequest(f"Item '{item['id']}' of type 'function_call' was provided without its required "
                                 f"'reasoning' item: '{needed}'.", "input")
    return [item for item in items if item["kind"] != "reasoning"]


def _said_by_model(item: dict) -> bool:
    """An assistant message: text the model wrote (a reasoning model's output may be [reasoning,
    message, function_call], and goes back in that order)."""
    return item["kind"] == "message" and item.get("role") == "assistant"


def forget_all() -> None:
    """Forget every issued id (for tests)."""
    with _lock:
        _reasoning_of.clear()
        _issued.clear()
