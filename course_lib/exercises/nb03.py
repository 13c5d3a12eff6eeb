"""Checks for notebook 03 (calling the in-process MCP server).

Both checks build a real recording first: a legacy-mode `McpConnection` to the course's files
server that lists its tools, makes four `tools/call` requests (a success, FORBIDDEN, NOT_FOUND,
INVALID_INPUT) and one for a tool the server does not have (a JSON-RPC error).

- `check_pair_by_id(fn)`: the learner's `pair_by_id(messages) -> {id: (request, response)}` must
  match `McpConnection.exchanges()`, also when the server's answers arrive in another order.
- `check_classify(fn)`: the learner's `classify(response) -> "success" | "tool error" |
  "protocol error"` is run on every recorded `tools/call` response, plus the recorded success as a
  server that leaves out the optional `isError` sends it (the spec's schema, 2025-06-18 and
  2025-11-25 alike: `isError?: boolean`, "If not set, this is assumed to be false").
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from anyio.from_thread import start_blocking_portal
from mcp.shared.exceptions import MCPError

from course_lib.connection import McpConnection, WireMessage
from course_lib.exercises import Solutions, failed, not_answered, passed

RECORDED_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_text_file", {"path": "/workspace/notes.txt", "head": 2}),
    ("read_text_file", {"path": "/etc/passwd"}),
    ("read_text_file", {"path": "/workspace/missing.txt"}),
    ("read_text_file", {"path": "/workspace/notes.txt", "head": "5"}),
    ("delete_file", {"path": "/workspace/notes.txt"}),
]
"""The `tools/call` requests of the recording, in order."""

LABELS = ("success", "tool error", "protocol error")


def real_recording() -> list[WireMessage]:
    """Record a real session with the files server (see the module docstring) and return its messages.

    Runs on its own event loop in a background thread, so it works inside a notebook cell too.
    """
    from course_lib.fs_server import Workspace, build_server
    from course_lib.paths import workspace_dir

    async def record() -> list[WireMessage]:
        async with McpConnection(build_server(Workspace(workspace_dir())), name="files") as conn:
            await conn.list_tools()
            for name, arguments in RECORDED_CALLS:
                try:
                    await conn.call_tool(name, arguments)
                except MCPError:
                    pass  # the unknown tool: a JSON-RPC error, recorded like any response
            return list(conn.messages)

    with start_blocking_portal() as portal:
        return portal.call(record)


def _exchanges(messages: list[WireMessage]) -> dict[Any, tuple[dict[str, Any], dict[str, Any] | None]]:
    """The reference pairing, from the library's own `McpConnection.exchanges()`."""
    return {e.id: (e.request, e.response) for e in McpConnection(server=None, messages=list(messages)).exchanges()}


def _json(obj: Any) -> Any:
    return obj.json if isinstance(obj, WireMessage) else obj


def _short(obj: Any, limit: int = 90) -> str:
    text = json.dumps(obj, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---- exercise 1: pair_by_id -------------------------------------------------------------------


def _answers_reversed(messages: list[WireMessage]) -> list[WireMessage]:
    """The same messages, every request first, then the server's answers in reverse order."""
    sent = [m for m in messages if m.direction == "app→server"]
    return sent + list(reversed([m for m in messages if m.direction == "server→app"]))


def _judge_pairs(got: Any, messages: list[WireMessage], reordered: bool) -> str | None:
    """What is wrong with `got` as the pairing of `messages`, or None."""
    expected = _exchanges(messages)
    when = " (in this run the check delivered the server's answers in reverse order)" if reordered else ""
    if not isinstance(got, dict):
        return f"pair_by_id must return a dict {{id: (request, response)}}; it returned a {type(got).__name__}."
    if None in got:
        return "key None: a notification (notifications/initialized) has no id and gets no response; leave it out."
    for key, (request, response) in expected.items():
        if key not in got:
            if response is not None and "error" in response:
                return (f"id {key} ({request['method']} {request['params'].get('name', '')}) is missing: its answer "
                        "is a JSON-RPC error, and an error is still the response to that request.")
            return f"id {key} ({request['method']}) is missing from your dict."
    for key in got:
        if key not in expected:
            return f"key {key!r} is not the id of any request the app sent."
    for key, (request, response) in expected.items():
        pair = got[key]
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            return f"id {key}: expected a (request, response) pair, got {_short(_json(pair), 60)}."
        mine_request, mine_response = _json(pair[0]), _json(pair[1])
        if mine_request != request:
            return f"id {key}: the request should be {_short(request)}, yours is {_short(mine_request)}."
        if mine_response != response:
            other = mine_response.get("id") if isinstance(mine_response, dict) else None
            if other is not None and other != key:
                return (f"id {key}: you paired it with the response whose id is {other}{when}. "
                        "Pair by the JSON-RPC id, not by position.")
            return f"id {key}: the response should be {_short(response)}, yours is {_short(mine_response)}."
    return None


def check_pair_by_id(fn: Callable[[list[WireMessage]], dict]) -> bool:
    """Run `fn` on a real recording, then on the same recording with the answers reordered."""
    if not_answered(fn):
        return failed("Not answered yet: define pair_by_id(messages) and pass the function itself.")
    if not callable(fn):
        return failed(f"Pass the function itself (pair_by_id, without parentheses); you passed {fn!r}.")
    recording = real_recording()
    for messages, reordered in ((recording, False), (_answers_reversed(recording), True)):
        try:
            got = fn(list(messages))
        except Exception as error:
            return failed(f"pair_by_id raised {type(error).__name__}: {error} on the real recording. Not every "
                          "message is a request or a response: notifications have no id.")
        problem = _judge_pairs(got, messages, reordered)
        if problem:
            return failed(problem)
    count = len(_exchanges(recording))
    return passed(f"all {count} requests paired with their responses by id, in both arrival orders.")


def _pair_by_id_solution(messages: list[WireMessage]) -> dict:
    requests = {m.json["id"]: m.json for m in messages if "method" in m.json and "id" in m.json}
    responses = {m.json["id"]: m.json for m in messages if "method" not in m.json and "id" in m.json}
    return {key: (request, responses.get(key)) for key, request in requests.items()}


# ---- exercise 2: classify ---------------------------------------------------------------------


def _real_label(response: dict[str, Any]) -> str:
    if "error" in response:
        return "protocol error"
    return "tool error" if response["result"].get("isError") else "success"


def _why(response: dict[str, Any]) -> str:
    if "error" in response:
        return (f"it has a top-level error (code {response['error']['code']}: {response['error']['message']}) and no "
                "result: the request never reached a tool, that is a protocol error")
    result = response["result"]
    if result.get("isError"):
        text = " ".join(block.get("text", "") for block in result.get("content", []))
        return (f"result.isError is true ({text}): the tool ran and failed. A tool error still arrives as a "
                "result, and must go back to the model as a failure, never as a success")
    if "isError" not in result:
        return ("result has no isError, and an absent isError means false: the call succeeded (the field is "
                "optional; read it with .get(\"isError\", False))")
    return ("result.isError is false: the call succeeded (the key is there with the value false: test its "
            "value, not whether the key is present)")


def classify_cases() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(request, response) of every recorded tools/call, then the success once more with `isError`
    left out, as the spec allows: our server always sends it, other servers need not."""
    calls = [(request, response) for request, response in _exchanges(real_recording()).values()
             if request["method"] == "tools/call"]  # fmt: skip
    request, response = next((q, r) for q, r in calls if "result" in r and r["result"].get("isError") is False)
    key = max(r["id"] for _, r in calls) + 1
    result = {k: v for k, v in response["result"].items() if k != "isError"}
    return [*calls, (dict(request, id=key), dict(response, id=key, result=result))]


def _crash_hint(response: dict[str, Any], error: Exception) -> str:
    """Name the usual mistake behind a crash on one response."""
    if isinstance(error, KeyError) and error.args == ("isError",):
        return ("isError is optional: a result without it is a success (\"If not set, this is assumed to be "
                "false\"). Read it with result.get(\"isError\", False).")
    if isinstance(error, KeyError) and error.args == ("result",):
        return ("a protocol error has a top-level 'error' and no 'result': look for 'error' before reading "
                "the result.")
    return "look at which keys that response really has."


def check_classify(fn: Callable[[dict[str, Any]], str]) -> bool:
    """Run `fn` on every recorded `tools/call` response (wire JSON) and compare with the real kind."""
    if not_answered(fn):
        return failed("Not answered yet: define classify(response) and pass the function itself.")
    if not callable(fn):
        return failed(f"Pass the function itself (classify, without parentheses); you passed {fn!r}.")
    calls = classify_cases()
    for request, response in calls:
        key = response["id"]
        try:
            got = fn(json.loads(json.dumps(response)))  # a fresh copy: the learner may change it freely
        except Exception as error:
            return failed(f"classify raised {type(error).__name__}: {error} on the response to id {key} "
                          f"{_short(response, 70)} — {_crash_hint(response, error)}")
        if got not in LABELS:
            return failed(f"id {key}: {got!r} is not one of {', '.join(repr(label) for label in LABELS)}.")
        want = _real_label(response)
        if got != want:
            return failed(f"id {key} ({request['params']['name']} {_short(request['params']['arguments'], 50)}): "
                          f"you said {got!r}, but {_why(response)}.")
    return passed(f"all {len(calls)} tools/call responses classified correctly.")


def _classify_solution(response: dict[str, Any]) -> str:
    if "error" in response:
        return "protocol error"
    return "tool error" if response["result"].get("isError") else "success"


SOLUTIONS: Solutions = {
    "check_pair_by_id": lambda: _pair_by_id_solution,
    "check_classify": lambda: _classify_solution,
}
