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

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`);
the recorded messages they quote stay as they crossed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from anyio.from_thread import start_blocking_portal
from mcp.shared.exceptions import MCPError

from course_lib.connection import McpConnection, WireMessage
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.lang import say

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
    when = say(" (in this run the check delivered the server's answers in reverse order)",
               "（这一轮检查把服务器的应答按相反的顺序送达）") if reordered else ""
    if not isinstance(got, dict):
        return say(f"pair_by_id must return a dict {{id: (request, response)}}; it returned a {type(got).__name__}.",
                   f"pair_by_id 必须返回一个 dict {{id: (request, response)}}；它返回的是 {type(got).__name__}。")
    if None in got:
        return say("key None: a notification (notifications/initialized) has no id and gets no response; leave it out.",
                   "键 None：通知（notifications/initialized）没有 id，也得不到响应；把它排除在外。")
    for key, (request, response) in expected.items():
        if key not in got:
            if response is not None and "error" in response:
                what = f"{request['method']} {request['params'].get('name', '')}"
                return say(f"id {key} ({what}) is missing: its answer "
                           "is a JSON-RPC error, and an error is still the response to that request.",
                           f"缺少 id {key}（{what}）：它的应答是一个 JSON-RPC 错误，而错误仍然是那个请求的响应。")
            return say(f"id {key} ({request['method']}) is missing from your dict.",
                       f"你的 dict 里缺少 id {key}（{request['method']}）。")
    for key in got:
        if key not in expected:
            return say(f"key {key!r} is not the id of any request the app sent.",
                       f"键 {key!r} 不是应用发送的任何请求的 id。")
    for key, (request, response) in expected.items():
        pair = got[key]
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            return say(f"id {key}: expected a (request, response) pair, got {_short(_json(pair), 60)}.",
                       f"id {key}：应为一个 (request, response) 对，得到的是 {_short(_json(pair), 60)}。")
        mine_request, mine_response = _json(pair[0]), _json(pair[1])
        if mine_request != request:
            return say(f"id {key}: the request should be {_short(request)}, yours is {_short(mine_request)}.",
                       f"id {key}：请求应为 {_short(request)}，你的是 {_short(mine_request)}。")
        if mine_response != response:
            other = mine_response.get("id") if isinstance(mine_response, dict) else None
            if other is not None and other != key:
                return say(f"id {key}: you paired it with the response whose id is {other}{when}. "
                           "Pair by the JSON-RPC id, not by position.",
                           f"id {key}：你把它与 id 为 {other} 的响应配成了一对{when}。"
                           "请按 JSON-RPC id 配对，而不是按位置。")
            return say(f"id {key}: the response should be {_short(response)}, yours is {_short(mine_response)}.",
                       f"id {key}：响应应为 {_short(response)}，你的是 {_short(mine_response)}。")
    return None


def check_pair_by_id(fn: Callable[[list[WireMessage]], dict]) -> bool:
    """Run `fn` on a real recording, then on the same recording with the answers reordered."""
    if not_answered(fn):
        return failed(say("Not answered yet: define pair_by_id(messages) and pass the function itself.",
                          "还没有作答：定义 pair_by_id(messages)，并传入函数本身。"))
    if not callable(fn):
        return failed(say(f"Pass the function itself (pair_by_id, without parentheses); you passed {fn!r}.",
                          f"请传入函数本身（pair_by_id，不带括号）；你传入的是 {fn!r}。"))
    recording = real_recording()
    for messages, reordered in ((recording, False), (_answers_reversed(recording), True)):
        try:
            got = fn(list(messages))
        except Exception as error:
            return failed(say(f"pair_by_id raised {type(error).__name__}: {error} on the real recording. Not every "
                              "message is a request or a response: notifications have no id.",
                              f"pair_by_id 在真实记录上抛出了 {type(error).__name__}: {error}。"
                              "并不是每条消息都是请求或响应：通知没有 id。"))
        problem = _judge_pairs(got, messages, reordered)
        if problem:
            return failed(problem)
    count = len(_exchanges(recording))
    return passed(say("all {n} requests paired with their responses by id, in both arrival orders.",
                      "在两种到达顺序下，全部 {n} 个请求都按 id 与各自的响应配成了对。", n=count))


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
        code, message = response["error"]["code"], response["error"]["message"]
        return say(f"it has a top-level error (code {code}: {message}) and no "
                   "result: the request never reached a tool, that is a protocol error",
                   f"它有一个顶层的 error（code {code}: {message}），没有 result："
                   "请求根本没有到达任何工具，这是协议错误")
    result = response["result"]
    if result.get("isError"):
        text = " ".join(block.get("text", "") for block in result.get("content", []))
        return say(f"result.isError is true ({text}): the tool ran and failed. A tool error still arrives as a "
                   "result, and must go back to the model as a failure, never as a success",
                   f"result.isError 为 true（{text}）：工具运行了，但失败了。工具错误仍以结果的形式到达，"
                   "并且必须作为失败返回给模型，绝不能当作成功")
    if "isError" not in result:
        return say("result has no isError, and an absent isError means false: the call succeeded (the field is "
                   "optional; read it with .get(\"isError\", False))",
                   "result 没有 isError，而不存在的 isError 就是 false：调用成功了（这个字段是可选的；"
                   "用 .get(\"isError\", False) 读取）")
    return say("result.isError is false: the call succeeded (the key is there with the value false: test its "
               "value, not whether the key is present)",
               "result.isError 为 false：调用成功了（这个键存在，值为 false：要检查它的值，而不是检查键是否存在）")


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
        return say("isError is optional: a result without it is a success (\"If not set, this is assumed to be "
                   "false\"). Read it with result.get(\"isError\", False).",
                   "isError 是可选的：没有它的结果就是成功（\"If not set, this is assumed to be false\"）。"
                   "用 result.get(\"isError\", False) 读取。")
    if isinstance(error, KeyError) and error.args == ("result",):
        return say("a protocol error has a top-level 'error' and no 'result': look for 'error' before reading "
                   "the result.",
                   "协议错误有顶层的 'error'，没有 'result'：读取结果之前先找 'error'。")
    return say("look at which keys that response really has.", "看看那个响应实际上有哪些键。")


def check_classify(fn: Callable[[dict[str, Any]], str]) -> bool:
    """Run `fn` on every recorded `tools/call` response (wire JSON) and compare with the real kind."""
    if not_answered(fn):
        return failed(say("Not answered yet: define classify(response) and pass the function itself.",
                          "还没有作答：定义 classify(response)，并传入函数本身。"))
    if not callable(fn):
        return failed(say(f"Pass the function itself (classify, without parentheses); you passed {fn!r}.",
                          f"请传入函数本身（classify，不带括号）；你传入的是 {fn!r}。"))
    calls = classify_cases()
    for request, response in calls:
        key = response["id"]
        try:
            got = fn(json.loads(json.dumps(response)))  # a fresh copy: the learner may change it freely
        except Exception as error:
            return failed(say(f"classify raised {type(error).__name__}: {error} on the response to id {key} "
                              f"{_short(response, 70)} — {_crash_hint(response, error)}",
                              f"classify 在 id {key} 的响应 {_short(response, 70)} 上抛出了 "
                              f"{type(error).__name__}: {error}。{_crash_hint(response, error)}"))
        if got not in LABELS:
            labels = ", ".join(repr(label) for label in LABELS)
            return failed(say(f"id {key}: {got!r} is not one of {labels}.",
                              f"id {key}：{got!r} 不是 {labels} 之一。"))
        want = _real_label(response)
        if got != want:
            call = f"{request['params']['name']} {_short(request['params']['arguments'], 50)}"
            return failed(say(f"id {key} ({call}): you said {got!r}, but {_why(response)}.",
                              f"id {key}（{call}）：你说的是 {got!r}，但 {_why(response)}。"))
    return passed(say("all {n} tools/call responses classified correctly.",
                      "全部 {n} 个 tools/call 响应都分类正确。", n=len(calls)))


def _classify_solution(response: dict[str, Any]) -> str:
    if "error" in response:
        return "protocol error"
    return "tool error" if response["result"].get("isError") else "success"


SOLUTIONS: Solutions = {
    "check_pair_by_id": lambda: _pair_by_id_solution,
    "check_classify": lambda: _classify_solution,
}
