"""Checks for notebook 09b (frameworks carry the loop).

Both checks work on real recorded objects, offline by construction (the in-process offline model
of `course_lib.exercises.offline` and the files server in-process: no framework, no subprocess):

- `check_links(fn)`: the learner's `links(run)` gets real runs of the course's host (a `Run`: the
  model's HTTP exchanges and the JSON-RPC messages, as the bench records a framework's) and must
  return `{call_id: JSON-RPC id}` for every call a server ran. The runs: one read; two reads in one
  response; a refused read; the same read three times (three calls with the same arguments: a `tools/call`
  carries one call, so an answer that never sets a matched one aside, or sets aside two, is caught); the
  2026-07-28 era (`server/discover` first) and the 2025-11-25 one (`initialize`); the same two-read run with its two `tools/call` sent in the other order (as a
  framework running them at once may), with every JSON-RPC id renamed (a count is not an id), and
  with a call no server ran (an output tool's `function_call`). The expected link is the one the
  course's host itself kept (`LoopResult.trace`), so the check tests the property, not a sample.
- `check_keep_failure(fn)`: the learner's `keep_failure(result)` gets real `CallToolResult`s: every
  result of `fixtures/refusal_corpus.json` (the course's files server, the Node reference server and
  a fastmcp server, each on a good read, a path outside the root, a traversal, a missing file, a
  folder, head and tail both), one read made now, and a refusal whose code only `structuredContent`
  holds (an in-process server's locked note: its text has no `CODE:` to read the code from). A success must come back unchanged; a failure
  still `isError`, its content one text block holding JSON that marks it (`ok: false`, an `error`
  with a `code` — the result's own when it has one — and the server's message), which the offline
  model must then read as a failure with that code.

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import mcp_types

from course_lib.connection import WireMessage
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import as_dict, passed_a_call, raised, returned_early, same, shown, type_name
from course_lib.exercises.guard import guard_checks
from course_lib.exercises.offline import model_name, offline_client, offline_course
from course_lib.frameworks.keep_failure import keep_failure as _reference_keep_failure
from course_lib.frameworks.bench import Run
from course_lib.lang import say
from course_lib.paths import fixtures_dir
from course_lib.results import result_text, tool_error_code
from course_lib.wire import HttpExchange

ONE = "Show the first 3 lines of /workspace/notes.txt"
TWO = "Show the first 3 lines of /workspace/notes.txt and the last 2 lines of /workspace/todo.md"
REFUSED = "Show the first 5 lines of /etc/passwd"


# ---- exercise 1: links ---------------------------------------------------------------------------


def _recorded(tasks: list[str], mode: str) -> tuple[Run, dict[str, Any]]:
    """Run `tasks` through the course's host (files server in-process, protocol `mode`) on the
    offline model; the run as the bench records one, and the link the host kept: {call_id: id}."""
    from course_lib.fs_server import Workspace, build_server
    from course_lib.host import McpHost
    from course_lib.loop import run_loop

    course = offline_course()
    host = McpHost()
    try:
        host.add_server("fs", build_server(Workspace(course.workspace.root)), mode=mode)
        kept = {}
        for task in tasks:
            result = run_loop(course.client, host, task)
            kept.update({link.call_id: link.mcp_id for link in result.trace if link.mcp_id is not None})
        return Run(f"{mode}: {tasks}", list(course.wire.exchanges), list(host.connections["fs"].messages)), kept
    finally:
        host.close()
        course.close()


def _swapped(run: Run) -> Run:
    """The run with its first two `tools/call` requests (and their responses) in the other order."""
    messages = list(run.mcp)
    spots = [i for i, m in enumerate(messages) if m.direction == "app→server" and m.json.get("method") == "tools/call"][:2]
    ids = [messages[i].json["id"] for i in spots]
    answers = [i for i, m in enumerate(messages) if m.direction == "server→app" and m.json.get("id") in ids]
    if len(spots) == 2 and len(answers) == 2:
        messages[spots[0]], messages[spots[1]] = messages[spots[1]], messages[spots[0]]
        messages[answers[0]], messages[answers[1]] = messages[answers[1]], messages[answers[0]]
    return replace(run, label=run.label + " (tools/call in the other order)", mcp=messages)


def _renamed(run: Run, kept: dict[str, Any]) -> tuple[Run, dict[str, Any]]:
    """Every JSON-RPC id renamed (`req-<n>`, from 7 on), in requests and responses alike."""
    names: dict[Any, str] = {}
    for message in run.mcp:
        if "id" in message.json and message.json["id"] not in names:
            names[message.json["id"]] = f"req-{len(names) + 7}"
    mcp = [WireMessage(m.direction, {**m.json, "id": names[m.json["id"]]} if "id" in m.json else m.json) for m in run.mcp]
    return replace(run, label=run.label + " (ids renamed)", mcp=mcp), {k: names[v] for k, v in kept.items()}


def _with_output_tool(run: Run) -> tuple[Run, str]:
    """The run with one more response holding a `function_call` no server runs (an output tool's)."""
    last = run.model[-1]
    response = copy.deepcopy(last.response)
    response["id"] = "resp_output_tool"
    response["output"] = [{"type": "function_call", "id": "fc_output_tool", "call_id": "call_output_tool",
                           "name": "final_result", "arguments": '{"ok": true}', "status": "completed"}]  # fmt: skip
    return replace(run, label=run.label + " (and an output tool)",
                   model=[*run.model, HttpExchange(last.method, last.path, last.request, 200, response)]), "call_output_tool"


def _cases() -> list[tuple[Run, dict[str, Any], str]]:
    """(run, the link the host kept, what the case is about)."""
    one, kept_one = _recorded([ONE], "auto")
    two, kept_two = _recorded([TWO, REFUSED], "legacy")
    renamed, kept_renamed = _renamed(_swapped(two), kept_two)
    extra, _ = _with_output_tool(one)
    twice, kept_twice = _recorded([ONE, ONE, ONE], "auto")  # the same arguments, three calls, three tools/call
    return [(one, kept_one, "one"), (two, kept_two, "two"), (renamed, kept_renamed, "swapped"),
            (extra, kept_one, "output tool"), (twice, kept_twice, "twice")]  # fmt: skip


def _methods(run: Run) -> dict[Any, str]:
    return {m.json["id"]: str(m.json.get("method")) for m in run.mcp if m.direction == "app→server" and "id" in m.json}


def _item_ids(run: Run) -> dict[str, str]:
    """Each function_call item's `id` (fc_…) → its `call_id`."""
    return {item.get("id"): item.get("call_id") for e in run.model if isinstance(e.response, dict)
            for item in e.response.get("output", []) if item.get("type") == "function_call"}  # fmt: skip


def _links_problem(run: Run, kept: dict[str, Any], about: str, answer: dict[Any, Any]) -> str | None:
    item_ids = _item_ids(run)
    if any(key in item_ids for key in answer):
        return say("the keys are function_call item ids (fc_…): the link starts at the call_id (call_…), which the "
                   "function_call_output carries too",
                   "键是 function_call 项的 id（fc_…）：对应关系从 call_id（call_…）开始，function_call_output 带的也是它")
    extra = [key for key in answer if key not in kept]
    if extra:
        if extra[0] in item_ids.values():
            return say("{k} is a call no server ran (no tools/call carried it, like an output tool's): leave it out",
                       "{k} 是一个没有服务器执行的调用（没有 tools/call 带着它，比如输出工具的调用）：不要放进来",
                       k=shown(extra[0]))
        return say("{k} is not a call_id of this run", "{k} 不是这次运行里的 call_id", k=shown(extra[0]))
    missing = [key for key in kept if key not in answer]
    if missing:
        return say("no link for {k}: every call a server ran has one, a refused read too (the server ran it and "
                   "answered isError)",
                   "{k} 没有对应关系：服务器执行过的每个调用都有一个，被拒绝的读取也有（服务器执行了它，回答了 isError）",
                   k=shown(missing[0]))
    methods = _methods(run)
    for key, expected in kept.items():
        got = answer[key]
        if same(got, expected):
            continue
        method = next((m for i, m in methods.items() if same(i, got)), None)
        if method is not None and method != "tools/call":
            return say("the id for {k} is {v}, which a {m} request carried: take the id of the tools/call",
                       "{k} 的 id 是 {v}，那是一个 {m} 请求的 id：要取 tools/call 的 id", k=shown(key), v=shown(got), m=method)
        if method == "tools/call" and about == "twice":
            return say("{k} is paired with tools/call {v}, which already carried another call with the same arguments: "
                       "a tools/call carries one call, so once you pair it, take it out of the ones you match",
                       "{k} 被配成了 tools/call {v}，而它已经带过另一个参数相同的调用：一个 tools/call 只带一个调用，"
                       "配过之后就要把它从待匹配的里面拿掉", k=shown(key), v=shown(got))
        if method == "tools/call":
            return say("{k} is paired with tools/call {v}, which carried another call: in this run the tools/call "
                       "went out in another order, so match each call by its arguments, not by position",
                       "{k} 被配成了 tools/call {v}，它带的是另一个调用：这次运行里 tools/call 发出的顺序不同，"
                       "所以要按参数配对，不能按位置", k=shown(key), v=shown(got))
        if about == "swapped":
            return say("no tools/call carried the id {v} (given for {k}): an id is the one the request carried, "
                       "never a count (here they are strings like 'req-9')",
                       "没有哪个 tools/call 带着 id {v}（你给 {k} 的）：id 是请求里带的那个，从来不是计数（这里是 'req-9' 这样的字符串）",
                       v=shown(got), k=shown(key))
        return say("no tools/call carried the id {v} (given for {k})", "没有哪个 tools/call 带着 id {v}（你给 {k} 的）",
                   v=shown(got), k=shown(key))
    return None


def check_links(fn: Any) -> bool:
    """Check `links(run) -> {call_id: JSON-RPC id}` (see the module docstring)."""
    if not_answered(fn):
        return failed(say("write links(run) and pass the function itself", "编写 links(run)，并传入函数本身"))
    if not callable(fn):
        return failed(passed_a_call("links", fn))
    for run, kept, about in _cases():
        try:
            answer = fn(copy.deepcopy(run))
        except Exception as error:  # the learner's code: report, never crash the cell
            return failed(say("links raised {error}", "links 抛出了 {error}", error=raised(error)))
        if not_answered(answer):
            return failed(say("links still returns the starter (...): return a dict {call_id: JSON-RPC id}",
                              "links 仍然返回起始代码里的 (...)：返回一个 dict {call_id: JSON-RPC id}"))
        plain = as_dict(answer)
        if plain is None:
            return failed(say("links must return a dict {{call_id: JSON-RPC id}}, got {kind}",
                              "links 必须返回一个 dict {{call_id: JSON-RPC id}}，得到的是 {kind}", kind=type_name(answer))
                          + returned_early(answer))
        if (problem := _links_problem(run, kept, about, plain)) is not None:
            return failed(problem)
    return passed(say("every call_id is linked to the JSON-RPC id of the tools/call that carried it, whatever the order "
                      "and whatever the ids",
                      "每个 call_id 都对上了带着它的 tools/call 的 JSON-RPC id，不管顺序如何、id 是什么"))


def links(run: Run) -> dict[str, Any]:
    """Reference solution for exercise 1."""
    carried = [m.json for m in run.mcp if m.direction == "app→server" and m.json.get("method") == "tools/call"]
    found: dict[str, Any] = {}
    for exchange in run.model:
        for item in exchange.response.get("output", []) if isinstance(exchange.response, dict) else []:
            if item.get("type") != "function_call":
                continue
            arguments = json.loads(item.get("arguments") or "null")
            for request in carried:
                if request["params"].get("arguments") == arguments:
                    found[item["call_id"]] = request["id"]
                    carried.remove(request)
                    break
    return found


# ---- exercise 2: keep_failure --------------------------------------------------------------------


def _results() -> list[tuple[str, mcp_types.CallToolResult]]:
    """(label, real result): every result of the refusal corpus, then one read made now."""
    corpus = json.loads((fixtures_dir() / "refusal_corpus.json").read_text(encoding="utf-8"))
    found = [(f"{server}: {case}", mcp_types.CallToolResult.model_validate(entry["result"]))
             for server, cases in corpus["servers"].items() for case, entry in cases.items()]  # fmt: skip
    course = offline_course()
    try:
        call = course.host.call("fs__read_text_file", {"path": "/workspace/notes.txt", "head": 2})
        found.append(("course-files: a read made now", call.result))
    finally:
        course.close()
    found.append(("notes: a locked note (its code in structuredContent only)", _locked_note()))
    return found


def _locked_note() -> mcp_types.CallToolResult:
    """A real refusal whose code only `structuredContent` holds (its text has no `CODE:` before it), as a
    server that returns a structured error sends it: made now by an in-process `mcp` server."""
    from mcp.server import Server

    from course_lib.host import McpHost

    async def on_list_tools(ctx: Any, params: Any) -> mcp_types.ListToolsResult:
        return mcp_types.ListToolsResult(tools=[mcp_types.Tool(name="update_note", input_schema={"type": "object"})])

    async def on_call_tool(ctx: Any, params: Any) -> mcp_types.CallToolResult:
        return mcp_types.CallToolResult(is_error=True, content=[mcp_types.TextContent(type="text", text="the note is locked by another edit")],
                                        structured_content={"error": {"code": "CONFLICT", "message": "the note is locked by another edit"}})

    with McpHost() as host:  # its own event loop in a thread: safe inside a notebook's running loop
        host.add_server("notes", Server("notes", on_list_tools=on_list_tools, on_call_tool=on_call_tool))
        return host.call("notes__update_note", {}).result


def _failure_json(result: mcp_types.CallToolResult) -> tuple[dict[str, Any] | None, str | None]:
    """The JSON object the learner's result carries, or why it carries none."""
    texts = [block for block in result.content if isinstance(block, mcp_types.TextContent)]
    if len(texts) != 1 or len(result.content) != 1:
        return None, say("a host that forwards text sends every text block: put the failure in one text block, and "
                         "nothing else in content",
                         "只转发文本的主机会发出每一个文本块：把失败放进一个文本块里，content 里别放别的")
    try:
        value = json.loads(texts[0].text)
    except ValueError:
        return None, say("the text block is not JSON ({t}): json.dumps the envelope; only its shape marks the failure",
                         "文本块不是 JSON（{t}）：用 json.dumps 写出信封；只有它的形状能标出失败", t=shown(texts[0].text))
    if not isinstance(value, dict):
        return None, say("the text block holds JSON, but not an object", "文本块里是 JSON，但不是一个对象")
    return value, None


def _answer_reads_failure(text: str, call_name: str = "read_text_file") -> str:
    """The offline model's answer to a read whose feedback is `text`."""
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": call_name,
            "arguments": '{"path": "/etc/passwd", "head": 5}', "status": "completed"}  # fmt: skip
    tool = {"type": "function", "name": call_name, "strict": False,
            "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}},
                           "required": ["path"]}}  # fmt: skip
    with offline_client() as client:
        answer = client.responses.create(model=model_name(), tools=[tool], input=[
            {"role": "user", "content": REFUSED}, call, {"type": "function_call_output", "call_id": "call_1", "output": text}])
    return answer.output_text


def _keep_problem(label: str, original: mcp_types.CallToolResult, got: Any) -> str | None:
    if not isinstance(got, mcp_types.CallToolResult):
        return say("keep_failure must return a CallToolResult (the SDK reads .content and .isError), got {kind}",
                   "keep_failure 必须返回一个 CallToolResult（SDK 读的是 .content 和 .isError），得到的是 {kind}",
                   kind=type_name(got)) + returned_early(got)
    if not original.is_error:
        if got.model_dump(mode="json") != original.model_dump(mode="json"):
            return say("a success must come back unchanged ({label}): the model reads its text as the file's",
                       "成功的结果必须原样返回（{label}）：模型把它的文本当作文件内容来读", label=label)
        return None
    if not got.is_error:
        return say("the refused result came back with isError false ({label}): keep it true, the app and its logs "
                   "still read it",
                   "被拒绝的结果回来时 isError 成了 false（{label}）：保持 true，应用和日志还要读它", label=label)
    value, problem = _failure_json(got)
    if problem is not None:
        if value is None and result_text(got) == result_text(original):
            return say("the refused result still carries only the server's words ({label}): a text-only host forwards "
                       "them as if they were content",
                       "被拒绝的结果仍然只有服务器的文字（{label}）：只转发文本的主机会把它们当作内容发出去", label=label)
        return problem
    error = value.get("error")
    if value.get("ok") is not False or not isinstance(error, dict):
        return say("the JSON must say ok: false and hold an error object ({label}): that shape is the mark",
                   "这个 JSON 必须写明 ok: false，并带一个 error 对象（{label}）：这个形状就是标记", label=label)
    code = error.get("code")
    stated = tool_error_code(original)
    if not isinstance(code, str) or not code:
        return say("the error has no code ({label}): the loop decides retry or stop from it",
                   "error 里没有 code（{label}）：循环靠它决定重试还是停止", label=label)
    if stated != "UPSTREAM_ERROR" and code != stated:
        return say("the code is {got}, but the result says {code} ({label}): take it from structuredContent.error.code "
                   "or the leading 'CODE: message'",
                   "code 是 {got}，可结果里写的是 {code}（{label}）：从 structuredContent.error.code 或开头的 'CODE: message' 取",
                   got=shown(code), code=stated, label=label)
    words = result_text(original).removeprefix(f"{stated}: ").strip()
    if not isinstance(error.get("message"), str) or words not in error["message"]:
        return say("the error's message does not carry the server's words ({label}): {w}",
                   "error 的 message 没有带上服务器的原话（{label}）：{w}", label=label, w=shown(words))
    answer = _answer_reads_failure(result_text(got))
    if "reported an error" not in answer and "报告了错误" not in answer:
        return say("the offline model read your failure as content ({label})", "离线模型把你的失败当成了内容（{label}）",
                   label=label)
    return None


def check_keep_failure(fn: Any) -> bool:
    """Check `keep_failure(result) -> CallToolResult` (see the module docstring)."""
    if not_answered(fn):
        return failed(say("write keep_failure(result) and pass the function itself", "编写 keep_failure(result)，并传入函数本身"))
    if not callable(fn):
        return failed(passed_a_call("keep_failure", fn))
    for label, result in _results():
        try:
            got = fn(result.model_copy(deep=True))
        except Exception as error:  # the learner's code: report, never crash the cell
            return failed(say("keep_failure raised {error} on {label}", "keep_failure 在 {label} 上抛出了 {error}",
                              error=raised(error), label=label))
        if not_answered(got):
            return failed(say("keep_failure still returns the starter (...): return a CallToolResult",
                              "keep_failure 仍然返回起始代码里的 (...)：返回一个 CallToolResult"))
        if (problem := _keep_problem(label, result, got)) is not None:
            return failed(problem)
    return passed(say("successes pass unchanged; every refusal stays isError and reaches a text-only host as a marked "
                      "failure with its code",
                      "成功原样通过；每个拒绝都保持 isError，并以带 code 的、有标记的失败到达只转发文本的主机"))


keep_failure: Callable[[mcp_types.CallToolResult], mcp_types.CallToolResult] = _reference_keep_failure
"""Reference solution for exercise 2 (the one `KeepsFailures` applies)."""

SOLUTIONS: Solutions = {
    "check_links": lambda: links,
    "check_keep_failure": lambda: keep_failure,
}


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
