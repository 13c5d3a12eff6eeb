"""`previous_response_id`: the offline model keeps the responses it gave, as the real API stores them.

With `store` not false (the API's default is to store), a response is kept under its id, together
with the input it answered. A later request that names it in `previous_response_id` is answered
as if its `input` began with that response's input and then its output items: the whole chain,
so the app sends only what is new (for a tool call: the `function_call_output`, not the call
again). `instructions` are not carried over, as the SDK's `Response.instructions` docstring says.

An id the store does not hold — never given, or given with `store: false` — gets the real API's
400: `Previous response with id 'resp_…' not found.`, param `previous_response_id`, code
`previous_response_not_found` (as the real API answers it:
https://github.com/maximhq/bifrost/issues/2441; with `store: false`:
https://github.com/bigduu/Bamboo-agent/pull/513).

The store lives in this process, is shared by every client of the offline model and holds at most
`CAPACITY` responses and about `CAPACITY_BYTES` of their JSON (the oldest is forgotten first; the
newest is always kept, so a chain whose input alone is larger still works one step on). Every response has ids of its own (`ids`),
so a chain is never confused with an earlier one, and the same chain of requests, sent in the same
order, gives the same ids and the same answers in every run.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

from course_lib.offline_model import standin
from course_lib.offline_model.validation import BadRequest, _get

CAPACITY = 512
CAPACITY_BYTES = 64 * 1024 * 1024  # 512 chains of 8 MB inputs would otherwise hold 4 GB

_lock = threading.Lock()
_stored: OrderedDict[str, list[dict[str, Any]]] = OrderedDict()  # response id → its input, then its output
_sizes: dict[str, int] = {}  # response id → the size of its stored chain as JSON


def _as_items(raw: Any) -> list[dict[str, Any]]:
    return [{"role": "user", "content": raw}] if isinstance(raw, str) else list(raw)


def chained_input(body: dict) -> list[dict[str, Any]] | str:
    """The `input` the model answers: the request's own, after the stored chain it continues.

    Raises:
        BadRequest: `previous_response_id` is not a string, or names no stored response.
    """
    previous = _get(body, "previous_response_id", "", str, optional=True)
    raw = _get(body, "input", "", (str, list))
    if previous is None or standin.local():  # a local server keeps no state and ignores the id (standin.local)
        return raw
    with _lock:
        earlier = _stored.get(previous)
    if earlier is None:
        raise BadRequest(f"Previous response with id '{previous}' not found.", "previous_response_id",
                         "previous_response_not_found")
    return [*earlier, *_as_items(raw)]


def remember(body: dict, items: list[dict[str, Any]] | str, response: dict[str, Any]) -> dict[str, Any]:
    """Store `response` under its id (unless the request said `store: false`); return it with
    `previous_response_id` echoed, as the real API does."""
    if standin.local():
        return {**response, "previous_response_id": None}
    response = {**response, "previous_response_id": body.get("previous_response_id")}
    if body.get("store") is not False:
        chain = [*_as_items(items), *response["output"]]
        size = len(json.dumps(chain, ensure_ascii=False))
        with _lock:
            _stored[response["id"]], _sizes[response["id"]] = chain, size
            _stored.move_to_end(response["id"])
            while len(_stored) > 1 and (len(_stored) > CAPACITY or sum(_sizes.values()) > CAPACITY_BYTES):
                oldest, _ = _stored.popitem(last=False)
                _sizes.pop(oldest, None)
    return response


def forget_all() -> None:
    """Empty the store (for tests)."""
    with _lock:
        _stored.clear()
        _sizes.clear()
