"""Checks for notebook 03 (calling the in-process MCP server).

Both checks build a real recording first: a legacy-mode `McpConnection` to the course's files
server that lists its tools, makes four `tools/call` requests (a success, FORBIDDEN, NOT_FOUND,
INVALID_INPUT) and one for a tool the server does not have (a JSON-RPC error).

- `check_pair_by_id(fn)`: the learner's `pair_by_id(messages) -> {id: (request, response)}` must
  match `McpConnection.exchanges()` in sixteen arrival orders of the server's answers
  (`arrival_orders`: reversed, every rotation, eight seeded shuffles), each run on fresh copies,
  and while the last answer is still on its way (that request's pair is `(request, None)`).
- `check_classify(fn)`: the learner's `classify(response) -> "success" | "tool error" |
  "protocol error"` is run on every recorded `tools/call` response, plus the recorded success as a
  server that leaves out the optional `isError` sends it (the spec's schema, 2025-06-18 and
  2025-11-25 alike: `isError?: boolean`, "If not set, this is assumed to be false"), a recorded
  success whose text talks about errors (`EXTRA_CALLS`), a tool error with no code in front and a
  -32603 protocol error (`classify_cases`): the fixtures share no surface feature a heuristic can read.
  Then 16 responses made from those by changing only what does not decide the kind
  (`classify_variants`: structuredContent on an error or missing from a success, texts that say the
  opposite, no content, `_meta`, other codes and ids), so a heuristic on any of those fails.

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`);
the recorded messages they quote stay as they crossed.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable
from typing import Any

import mcp_types
from anyio.from_thread import start_blocking_portal
from mcp.shared.exceptions import MCPError

from course_lib.connection import McpConnection, WireMessage
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import as_dict, passed_a_call, raised, returned_early, same, shown, type_name, unassigned
from course_lib.exercises.guard import guard_checks
from course_lib.lang import language, say

RECORDED_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_text_file", {"path": "/workspace/notes.txt", "head": 2}),
    ("read_text_file", {"path": "/etc/passwd"}),
    ("read_text_file", {"path": "/workspace/missing.txt"}),
    ("read_text_file", {"path": "/workspace/notes.txt", "head": "5"}),
    ("delete_file", {"path": "/workspace/notes.txt"}),
]
"""The `tools/call` requests of the recording, in order."""

LABELS = ("success", "tool error", "protocol error")


EXTRA_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("read_text_file", {"path": "/workspace/todo.md", "tail": 3}),
]
"""One more `tools/call` for exercise 2: a success whose text talks about errors ("read the error",
"isError versus a protocol error"), so reading the text for the word cannot pass for reading the result."""


def real_recording(calls: list[tuple[str, dict[str, Any]]] = RECORDED_CALLS) -> list[WireMessage]:
    """Record a real session with the files server (see the module docstring) and return its messages.

    `calls`: the `tools/call` requests to make after `tools/list`. Runs on its own event loop in a
    background thread, so it works inside a notebook cell too.
    """
    from course_lib.fs_server import Workspace, build_server
    from course_lib.paths import workspace_dir

    async def record() -> list[WireMessage]:
        async with McpConnection(build_server(Workspace(workspace_dir())), name="files") as conn:
            await conn.list_tools()
            for name, arguments in calls:
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


def arrival_orders(messages: list[WireMessage]) -> list[tuple[str, str, list[WireMessage]]]:
    """(English, Chinese, messages): the recording as it crossed, then every request first with the
    server's answers in other orders JSON-RPC allows (reversed, each rotation, and eight shuffles
    from fixed seeds): pairing by id must hold in every order, so it is tried in many."""
    sent = [m for m in messages if m.direction == "app→server"]
    answers = [m for m in messages if m.direction == "server→app"]
    orders = [("", "", list(messages)),
              (" (in this run the check delivered the server's answers in reverse order)",
               "（这一轮检查把服务器的应答按相反的顺序送达）", sent + answers[::-1])]
    for n in range(1, len(answers)):
        orders.append((f" (in this run the server's answers arrived rotated by {n})",
                       f"（这一轮服务器的应答循环移位了 {n} 个位置）", sent + answers[n:] + answers[:n]))
    for seed in range(8):
        shuffled = list(answers)
        random.Random(seed).shuffle(shuffled)
        orders.append((f" (in this run the server's answers arrived shuffled, seed {seed})",
                       f"（这一轮服务器的应答被打乱了顺序，种子 {seed}）", sent + shuffled))
    return orders


def _one_answer_pending(messages: list[WireMessage]) -> list[WireMessage]:
    """The recording as it stands while the server's last answer is still on its way."""
    last = max(i for i, m in enumerate(messages) if m.direction == "server→app")
    return messages[:last] + messages[last + 1:]


def _fresh(messages: list[WireMessage]) -> list[WireMessage]:
    """The same messages with their own copies of the JSON: what the learner's code changes stays there."""
    return [WireMessage(m.direction, copy.deepcopy(m.json)) for m in messages]


def _judge_pairs(got: Any, messages: list[WireMessage], when: str) -> str | None:
    """What is wrong with `got` as the pairing of `messages`, or None."""
    expected = _exchanges(messages)
    pairs = as_dict(got)
    if pairs is None:
        return say("pair_by_id must return a dict {{id: (request, response)}}; it returned {kind} {got}.",
                   "pair_by_id 必须返回一个 dict {{id: (request, response)}}；它返回的是 {kind} {got}。",
                   kind=type_name(got), got=shown(got)) + returned_early(got)
    if None in pairs:
        return say("key None: a notification (notifications/initialized) has no id and gets no response; leave it out.",
                   "键 None：通知（notifications/initialized）没有 id，也得不到响应；把它排除在外。")
    for key, (request, response) in expected.items():
        if key not in pairs:
            if str(key) in pairs:
                return say("key {text!r}: the id crossed as the number {key}; keep it as it is, not as a string.",
                           "键 {text!r}：这个 id 在线上是数字 {key}；保持它原来的样子，不要变成字符串。",
                           text=str(key), key=key)
            if response is not None and "error" in response:
                what = f"{request['method']} {request['params'].get('name', '')}"
                return say(f"id {key} ({what}) is missing: its answer "
                           "is a JSON-RPC error, and an error is still the response to that request.",
                           f"缺少 id {key}（{what}）：它的应答是一个 JSON-RPC 错误，而错误仍然是那个请求的响应。")
            return say(f"id {key} ({request['method']}) is missing from your dict.",
                       f"你的 dict 里缺少 id {key}（{request['method']}）。")
    for key in pairs:
        if key not in expected:
            return say("key {key} is not the id of any request the app sent.", "键 {key} 不是应用发送的任何请求的 id。",
                       key=shown(key))
    for key, (request, response) in expected.items():
        pair = pairs[key]
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            return say("id {key}: expected a (request, response) pair, got {pair}.", "id {key}：应为一个 (request, response) 对，"
                       "得到的是 {pair}。", key=key, pair=shown(_json(pair), 60))
        mine_request, mine_response = _json(pair[0]), _json(pair[1])
        if same(mine_request, response) and same(mine_response, request):
            return say(f"id {key}: you swapped them; the pair is (request, response), the request first.",
                       f"id {key}：你把两者弄反了；这一对是 (request, response)，请求在前。")
        if not same(mine_request, request):
            return say("id {key}: the request should be {want}, yours is {mine}.", "id {key}：请求应为 {want}，你的是 {mine}。",
                       key=key, want=_short(request), mine=shown(mine_request, 90))
        if mine_response is None and response is not None:
            return say("id {key}: your pair has no response, yet the server answered it{when}: find each answer by "
                       "its id, wherever it arrives.",
                       "id {key}：你的这一对没有响应，可服务器答复了它{when}：按 id 找到每个应答，不管它在哪里到达。",
                       key=key, when=when)
        if not same(mine_response, response):
            other = mine_response.get("id") if isinstance(mine_response, dict) else None
            if other is not None and not same(other, key):
                return say("id {key}: you paired it with the response whose id is {other}{when}. "
                           "Pair by the JSON-RPC id, not by position.",
                           "id {key}：你把它与 id 为 {other} 的响应配成了一对{when}。请按 JSON-RPC id 配对，而不是按位置。",
                           key=key, other=shown(other), when=when)
            return say("id {key}: the response should be {want}, yours is {mine}.", "id {key}：响应应为 {want}，你的是 {mine}。",
                       key=key, want=_short(response), mine=shown(mine_response, 90))
    return None


def check_pair_by_id(fn: Callable[[list[WireMessage]], dict]) -> bool:
    """Run `fn` on a real recording, then on the same messages in every arrival order of
    `arrival_orders` (the server's answers reversed, rotated and shuffled)."""
    if not_answered(fn):
        return failed(unassigned("pair_by_id", "pair_by_id(messages)"))
    if not callable(fn):
        return failed(passed_a_call("pair_by_id", fn))
    recording = real_recording()
    for when_en, when_zh, messages in arrival_orders(recording):
        when = say(when_en, when_zh)
        try:
            got = fn(_fresh(messages))
        except Exception as error:
            return failed(say("pair_by_id raised {error} on the real recording{when}. Not every message is a "
                              "request or a response: notifications have no id.",
                              "pair_by_id 在真实记录上{when}抛出了 {error}。并不是每条消息都是请求或响应：通知没有 id。",
                              error=raised(error), when=when))
        problem = _judge_pairs(got, messages, when)
        if problem:
            return failed(problem)
    pending = _one_answer_pending(recording)  # a request whose answer has not arrived: (request, None)
    when = say(" (in this run the last answer had not arrived yet: that request's pair is (request, None))",
               "（这一轮最后一个应答还没有到达：那个请求的一对是 (request, None)）")
    try:
        got = fn(_fresh(pending))
    except Exception as error:
        return failed(say("pair_by_id raised {error} on the real recording{when}.", "pair_by_id 在真实记录上{when}抛出了 {error}。",
                          error=raised(error), when=when))
    if problem := _judge_pairs(got, pending, when):
        return failed(problem)
    count = len(_exchanges(recording))
    return passed(say("all {n} requests paired with their responses by id, in {orders} arrival orders.",
                      "在 {orders} 种到达顺序下，全部 {n} 个请求都按 id 与各自的响应配成了对。",
                      n=count, orders=len(arrival_orders(recording))))


def _pair_by_id_solution(messages: list[WireMessage]) -> dict:
    requests = {m.json["id"]: m.json for m in messages if "method" in m.json and "id" in m.json}
    responses = {m.json["id"]: m.json for m in messages if "method" not in m.json and "id" in m.json}
    return {key: (request, responses.get(key)) for key, request in requests.items()}


# ---- exercise 2: classify ---------------------------------------------------------------------


def _real_label(response: dict[str, Any]) -> str:
    if "error" in response:
        return "protocol error"
    return "tool error" if response["result"].get("isError") else "success"


def _why(response: dict[str, Any], fn: Callable[[dict[str, Any]], Any] | None = None) -> str:
    """Why `response` is the kind it is; with the learner's `fn`, the words fit what it did wrong."""
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
    if fn is not None and _tests_presence(fn, response):
        return say("result.isError is false: the call succeeded (the key is there with the value false: test its "
                   "value, not whether the key is present)",
                   "result.isError 为 false：调用成功了（这个键存在，值为 false：要检查它的值，而不是检查键是否存在）")
    return say("result.isError is false: the call succeeded. Only result.isError says a tool failed; what the text "
               "or the other fields say does not",
               "result.isError 为 false：调用成功了。只有 result.isError 说明工具失败了；文本或其他字段说什么都不算")


def _tests_presence(fn: Callable[[dict[str, Any]], Any], response: dict[str, Any]) -> bool:
    """True when `fn` calls the same success a success once isError is left out: it tests the key."""
    plain = copy.deepcopy(response)
    plain["result"].pop("isError", None)
    try:
        got = fn(plain)
    except Exception:  # noqa: BLE001 — the learner's code; a probe only
        return False
    return isinstance(got, str) and got.strip().lower() == "success"


def classify_cases() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(request, response) of every recorded tools/call (RECORDED_CALLS and EXTRA_CALLS), then three
    shapes other servers send, each made from a recorded one and valid against the mcp types: the
    success with `isError` left out (optional: "If not set, this is assumed to be false"), a tool
    error whose text has no error code in front (the reference server's words), and a protocol
    error with another code (-32603, internal error)."""
    calls = [(request, response) for request, response in _exchanges(real_recording(RECORDED_CALLS + EXTRA_CALLS)).values()
             if request["method"] == "tools/call"]  # fmt: skip
    key = max(r["id"] for _, r in calls)
    request, response = next((q, r) for q, r in calls if "result" in r and r["result"].get("isError") is False)
    refused_q, refused = next((q, r) for q, r in calls if "result" in r and r["result"].get("isError") is True)
    broken_q, broken = next((q, r) for q, r in calls if "error" in r)
    plain = {k: v for k, v in response["result"].items() if k != "isError"}
    worded = {"content": [{"type": "text", "text": "Cannot specify both head and tail parameters simultaneously"}],
              "isError": True}
    others = [(dict(request, id=key + 1), dict(response, id=key + 1, result=plain)),
              (dict(refused_q, id=key + 2), dict(refused, id=key + 2, result=worded)),
              (dict(broken_q, id=key + 3), dict(broken, id=key + 3, error={"code": -32603, "message": "Internal error"}))]
    for _, made in others:  # each is what a real server may send
        mcp_types.JSONRPCResponse.model_validate(made) if "result" in made else mcp_types.JSONRPCError.model_validate(made)
        if "result" in made:
            mcp_types.CallToolResult.model_validate(made["result"])
    return [*calls, *others]


Variant = tuple[dict[str, Any], dict[str, Any], tuple[str, str, str, str]]
"""(request, response, what was changed from a recorded response and the field it is: English,
中文, field, 字段)."""


def classify_variants(cases: list[tuple[dict[str, Any], dict[str, Any]]]) -> list[Variant]:
    """Responses made from the recorded ones by changing only what does not decide the kind: the
    kind is `error` at the top level, else `result.isError` (absent means false), and nothing else.
    A success without structuredContent and a tool error with it, texts that say the opposite of the
    kind, no content at all, several blocks, `_meta`, other error codes and messages, string ids.
    Every variant is valid against the mcp types: a real server may send it."""
    success = next((q, r) for q, r in cases if "result" in r and r["result"].get("isError") is False)
    refusal = next((q, r) for q, r in cases if "result" in r and r["result"].get("isError") is True)
    broken = next((q, r) for q, r in cases if "error" in r)
    structured = {"ok": True, "lines": ["# Notes"]}
    changes: list[tuple[tuple[dict[str, Any], dict[str, Any]], tuple[str, str, str, str],
                        Callable[[dict[str, Any]], None]]] = [
        (success, ("no structuredContent", "没有 structuredContent", "structuredContent", "structuredContent"), lambda r: r["result"].pop("structuredContent", None)),
        (success, ("no content blocks at all", "一个内容块也没有", "the content", "content"), lambda r: r["result"].update(content=[])),
        (success, ("a text that talks about an error", "文本里说到了错误", "the text", "文本"),
         lambda r: r["result"].update(content=[{"type": "text", "text": "Error: FORBIDDEN: denied. (a line of the log)"}])),
        (success, ("a text that starts with a code in capitals", "文本以大写的代码开头", "the text", "文本"),
         lambda r: r["result"].update(content=[{"type": "text", "text": "NOT_FOUND: the word this note is about"}])),
        (success, ("two content blocks", "两个内容块", "the content", "content"),
         lambda r: r["result"].update(content=[*r["result"].get("content", []), {"type": "text", "text": "error"}])),
        (success, ("a _meta field", "一个 _meta 字段", "_meta", "_meta"), lambda r: r["result"].update(_meta={"progress": "done"})),
        (success, ("isError left out", "没有 isError", "leaving isError out (absent means false)", "不写 isError（不存在即为 false）"), lambda r: r["result"].pop("isError", None)),
        (success, ("a string id", "字符串 id", "the id", "id"), lambda r: r.update(id="req-7")),
        (refusal, ("structuredContent beside the error", "错误旁边带着 structuredContent", "structuredContent", "structuredContent"),
         lambda r: r["result"].update(structuredContent={"ok": False, "error": {"code": "FORBIDDEN"}})),
        (refusal, ("a text with no error word in it", "文本里没有任何表示错误的词", "the text", "文本"),
         lambda r: r["result"].update(content=[{"type": "text", "text": "The path lies outside the allowed folders."}])),
        (refusal, ("a text that looks like a success", "文本看起来像成功", "the text", "文本"),
         lambda r: r["result"].update(content=[{"type": "text", "text": '{"ok": true, "lines": ["# Notes"]}'}])),
        (refusal, ("no content blocks at all", "一个内容块也没有", "the content", "content"), lambda r: r["result"].update(content=[])),
        (refusal, ("structured content like a success's", "和成功一样的 structuredContent", "structuredContent", "structuredContent"),
         lambda r: r["result"].update(structuredContent=structured)),
        (broken, ("another code (-32602, invalid params)", "另一个代码（-32602，参数无效）", "the error code", "错误代码"),
         lambda r: r.update(error={"code": -32602, "message": "Invalid params"})),
        (broken, ("a message that talks about a tool", "说到了工具的消息", "the error message", "错误消息"),
         lambda r: r.update(error={"code": -32000, "message": "Tool read_text_file failed", "data": {"isError": True}})),
        (broken, ("a string id", "字符串 id", "the id", "id"), lambda r: r.update(id="req-8")),
    ]  # fmt: skip
    made: list[Variant] = []
    for (request, response), what, change in changes:
        changed = copy.deepcopy(response)
        change(changed)
        if "result" in changed:
            mcp_types.JSONRPCResponse.model_validate(changed)
            mcp_types.CallToolResult.model_validate(changed["result"])
        else:
            mcp_types.JSONRPCError.model_validate(changed)
        made.append((dict(request, id=changed["id"]), changed, what))
    return made


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
    """Run `fn` on every recorded `tools/call` response (wire JSON) and the shapes other servers send
    (`classify_cases`); compare with the real kind."""
    if not_answered(fn):
        return failed(unassigned("classify", "classify(response)"))
    if not callable(fn):
        return failed(passed_a_call("classify", fn))
    calls = classify_cases()
    for request, response in calls:
        key = response["id"]
        try:
            got = fn(copy.deepcopy(response))  # a fresh copy: the learner may change it freely
        except Exception as error:
            return failed(say("classify raised {error} on the response to id {key} {response} — {hint}",
                              "classify 在 id {key} 的响应 {response} 上抛出了 {error}。{hint}",
                              error=raised(error), key=key, response=_short(response, 70),
                              hint=_crash_hint(response, error)))
        label = got.strip().lower() if isinstance(got, str) else got
        if not isinstance(label, str) or label not in LABELS:
            labels = ", ".join(repr(label) for label in LABELS)
            return failed(say("id {key}: {got} is not one of {labels}.", "id {key}：{got} 不是 {labels} 之一。",
                              key=key, got=shown(got), labels=labels) + returned_early(got))
        want = _real_label(response)
        if label != want:
            call = f"{request['params']['name']} {_short(request['params']['arguments'], 50)}"
            why = _why(response, fn)
            return failed(say(f"id {key} ({call}): you said {label!r}, but {why}.",
                              f"id {key}（{call}）：你说的是 {label!r}，但 {why}。"))
    variants = classify_variants(calls)
    for request, response, (what, what_zh, field, field_zh) in variants:
        kind = _real_label(response)
        try:
            got = fn(copy.deepcopy(response))
        except Exception as error:
            return failed(say("classify raised {error} on a {kind} with {what} {response} — {hint}",
                              "classify 在一个{kind_zh}（{what_zh}）{response} 上抛出了 {error}。{hint}",
                              error=raised(error), kind=kind, kind_zh=_KIND_ZH[kind], what=what, what_zh=what_zh,
                              response=_short(response, 70), hint=_crash_hint(response, error)))
        label = got.strip().lower() if isinstance(got, str) else got
        if label != kind:
            return failed(say("a {kind} with {what} {response}: you said {got}, but it is a {kind} ({rule}). Only a "
                              "top-level error and result.isError decide the kind: {field} says nothing about it.",
                              "一个{kind_zh}（{what_zh}）{response}：你说的是 {got}，但它是{kind_zh}（{rule}）。只有顶层的 "
                              "error 和 result.isError 决定类别，与{field_zh}无关。",
                              kind=kind, kind_zh=_KIND_ZH[kind], what=what, what_zh=what_zh, field=field,
                              field_zh=field_zh if not field_zh.isascii() else f" {field_zh} ", response=_short(response, 70),
                              got=shown(got), rule=_RULE[kind]))
    return passed(say("all {n} tools/call responses classified correctly, and {m} more that differ from them only in "
                      "what does not decide the kind (structuredContent, the text, _meta, codes, ids).",
                      "全部 {n} 个 tools/call 响应都分类正确，另外还有 {m} 个只在不决定类别的地方（structuredContent、"
                      "文本、_meta、代码、id）与它们不同的响应也都正确。", n=len(calls), m=len(variants)))


_KIND_ZH = {"success": "成功", "tool error": "工具错误", "protocol error": "协议错误"}


class _Rule(dict[str, str]):
    """kind → how the response shows it, in the edition's language."""

    def __getitem__(self, kind: str) -> str:
        return say(*{"success": ("result.isError is false or absent", "result.isError 为 false 或不存在"),
                     "tool error": ("result.isError is true", "result.isError 为 true"),
                     "protocol error": ("a top-level error, no result", "有顶层的 error，没有 result")}[kind])


_RULE = _Rule()


def _classify_solution(response: dict[str, Any]) -> str:
    if "error" in response:
        return "protocol error"
    return "tool error" if response["result"].get("isError") else "success"


SOLUTIONS: Solutions = {
    "check_pair_by_id": lambda: _pair_by_id_solution,
    "check_classify": lambda: _classify_solution,
}


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
