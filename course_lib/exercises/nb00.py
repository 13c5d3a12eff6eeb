"""Checks for notebook 00 (map and first run).

- `check_kinds(answer)`: label ten recorded objects as "rule", "value" or "result". The truth is
  measured, not stored: the check runs the task twice for real (first 20 lines, then first 5) and
  sees which objects changed, and whether each one exists before or only after the server ran.
- `check_final_text(fn)`: the learner's `final_text(response_json) -> str` is run on real recorded
  Responses bodies (and six assembled from real items in the SDK's item types: a call next to a
  message, a message in two parts, a refusal part after the text and one before it, a reasoning
  item, two messages around a call), then on every output list of up to three items drawn from
  five real kinds (`composed_cases`: the promise is "every message, every part, in order"), and
  compared with the openai SDK's own `Response.output_text`.

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`).
The object names of exercise 1 are keys the check reads, so they stay as the starter writes them;
the case labels of exercise 2 have a Chinese twin (`CASE_LABELS_ZH`).
"""

from __future__ import annotations

import copy
import difflib
import itertools
import json
import unicodedata
from collections.abc import Callable
from typing import Any

from openai.types.responses import Response

from course_lib.arguments import quote
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import (as_dict, difference, passed_a_call, raised, returned_early, shown, type_name,
                                           unassigned)
from course_lib.exercises.guard import guard_checks
from course_lib.exercises.offline import offline_course
from course_lib.lang import say

KINDS = ("rule", "value", "result")
KINDS_ZH = {"rule": "规则", "value": "值", "result": "结果"}

TASKS = ("Show the first 20 lines of /workspace/notes.txt", "Show the first 5 lines of /workspace/notes.txt")
"""The two runs whose differences decide each object's kind."""

TWO_READS = "Show the first 3 lines of /workspace/notes.txt and the last 2 lines of /workspace/todo.md"


# ---- recording real runs ------------------------------------------------------------------------


def _record(task: str, **options: Any) -> dict[str, Any]:
    """Run `task` once on a fresh course (offline model, in-process files server) and return the
    JSON bodies that crossed: tools/list, both model exchanges and the first tools/call."""
    course = offline_course()
    try:
        course.run(task, **options)
        model = course.wire.exchanges
        calls = course.mcp.exchanges("tools/call")
        return {
            "listing": course.mcp.exchanges("tools/list")[0].response,
            "request_1": model[0].request,
            "response_1": model[0].response,
            "mcp_request": calls[0].request if calls else None,
            "mcp_response": calls[0].response if calls else None,
            "request_2": model[1].request if len(model) > 1 else None,
            "response_2": model[1].response if len(model) > 1 else None,
        }
    finally:
        course.close()


def _call(run: dict[str, Any]) -> dict[str, Any]:
    return next(item for item in run["response_1"]["output"] if item["type"] == "function_call")


def _feedback(run: dict[str, Any]) -> dict[str, Any]:
    return next(item for item in run["request_2"]["input"] if item.get("type") == "function_call_output")


def _message_text(response: dict[str, Any]) -> str:
    return "".join(part["text"] for item in response["output"] if item["type"] == "message"
                   for part in item["content"] if part["type"] == "output_text")  # fmt: skip


# ---- exercise 1: rule, value or result ----------------------------------------------------------

OBJECTS: dict[str, tuple[bool, Callable[[dict[str, Any]], Any]]] = {
    # name: (exists only after the server ran?, how to cut it out of a recorded run)
    "tools/list: inputSchema": (False, lambda r: r["listing"]["result"]["tools"][0]["inputSchema"]),
    "request 1: tools[0].parameters": (False, lambda r: r["request_1"]["tools"][0]["parameters"]),
    "request 1: tools[0].parameters.required": (False, lambda r: r["request_1"]["tools"][0]["parameters"]["required"]),
    "response 1: function_call.arguments": (False, lambda r: _call(r)["arguments"]),
    "json.loads(function_call.arguments)": (False, lambda r: json.loads(_call(r)["arguments"])),
    "tools/call request: params.arguments": (False, lambda r: r["mcp_request"]["params"]["arguments"]),
    "tools/call response: result.content": (True, lambda r: r["mcp_response"]["result"]["content"]),
    "tools/call response: result.structuredContent": (True, lambda r: r["mcp_response"]["result"]["structuredContent"]),
    "request 2: function_call_output.output": (True, lambda r: _feedback(r)["output"]),
    "response 2: the message's text": (True, lambda r: _message_text(r["response_2"])),
}
"""The ten objects of exercise 1, in the order they are made."""


def measured_kinds() -> dict[str, tuple[str, Any, Any]]:
    """Each object's kind, measured on two real runs: (kind, value in run 1, value in run 2).

    Unchanged across the runs → rule. Changed and present before execution → value. Changed and
    present only after the server ran → result.
    """
    runs = [_record(task) for task in TASKS]
    kinds = {}
    for name, (after_execution, cut) in OBJECTS.items():
        first, second = cut(runs[0]), cut(runs[1])
        kind = "rule" if first == second else "result" if after_execution else "value"
        kinds[name] = (kind, first, second)
    return kinds


def _shown(first: Any, second: Any) -> str:
    """Two values side by side, short; by size when their beginnings look the same."""
    a, b = quote(first, 50), quote(second, 50)
    if a == b:
        a, b = (say("{n} characters of JSON", "{n} 个字符的 JSON", n=len(json.dumps(v, ensure_ascii=False)))
                for v in (first, second))
    return f"{a} → {b}"


def _why(name: str, truth: str, guess: str, first: Any, second: Any) -> str:
    shown = _shown(first, second)
    changed = say(f"it changed when the task changed ({shown})", f"任务一变，它就跟着变了（{shown}）")
    if truth == "rule":
        return say(f"'{name}' is a rule, not a {guess}: it was identical in both runs (first 20 lines, then "
                   "first 5), so it says how any call must look, not what this call asks for.",
                   f"'{name}' 是规则，不是{KINDS_ZH.get(guess, guess)}：两次运行（先要前 20 行，再要前 5 行）里"
                   "它完全相同，所以它说的是任何调用都必须是什么样子，而不是这次调用要什么。")
    if truth == "value" and guess == "rule":
        return say(f"'{name}' is a value, not a rule: {changed}, and it existed before the server ran.",
                   f"'{name}' 是值，不是规则：{changed}，而且它在服务器运行之前就已经存在。")
    if truth == "value":
        return say(f"'{name}' is a value, not a result: it changed with the task, but it existed before the "
                   "server ran — it is what the call asks for, not what execution produced.",
                   f"'{name}' 是值，不是结果：它随任务而变，但在服务器运行之前就已经存在。它是调用所要求的东西，"
                   "不是执行产生的东西。")
    if guess == "rule":
        return say(f"'{name}' is a result, not a rule: {changed}, and it appeared only after the server ran.",
                   f"'{name}' 是结果，不是规则：{changed}，而且它只在服务器运行之后才出现。")
    return say(f"'{name}' is a result, not a value: it changed with the task, and it appeared only after "
               "the server ran (the tools/call response and what was built from it).",
               f"'{name}' 是结果，不是值：它随任务而变，而且只在服务器运行之后才出现（tools/call 的响应，"
               "以及由它构建出来的东西）。")


KINDS_BY_NAME = {kind: kind for kind in KINDS} | {zh: kind for kind, zh in KINDS_ZH.items()}
"""A kind as a learner may write it: in English, or as the glossary says it (规则, 值, 结果)."""


def _label(value: Any) -> Any:
    """A learner's label as the check reads it: "Rule", " rule " and "规则" all name the kind "rule"
    (the glossary's Chinese term is as good an answer as the English one)."""
    if not isinstance(value, str):
        return value
    plain = unicodedata.normalize("NFKC", value).strip().strip("\"'“”‘’。.").strip().lower()
    return KINDS_BY_NAME.get(plain, plain)


def check_kinds(answer: dict[str, str]) -> bool:
    """Compare the learner's labels with the kinds measured on two real runs."""
    labels = as_dict(answer)
    if not_answered(answer) or (labels is not None and all(v is ... for v in labels.values())):
        return failed(say('Not answered yet: replace each ... with "rule", "value" or "result".',
                          '还没有作答：把每个 ... 换成 "rule"、"value" 或 "result"。'))
    if labels is None:
        return failed(say("Give a dict from object name to kind; you gave {kind}.",
                          "请给出一个从对象名到种类的 dict；你给的是 {kind}。", kind=type_name(answer)))
    unknown = [name for name in labels if name not in OBJECTS]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(OBJECTS), n=1) if isinstance(unknown[0], str) else []
        near = say(" (did you mean {name!r}?)", "（你是不是想写 {name!r}？）", name=close[0]) if close else ""
        return failed(say("{name} is not one of the recorded objects{near}; keep the names of the starter.",
                          "{name} 不是记录下来的对象之一{near}；请保留起始代码里的名字。", name=shown(unknown[0]), near=near))
    missing = [name for name in OBJECTS if labels.get(name, ...) is ...]
    if missing:
        return failed(say(f"Not answered yet for {missing[0]!r}: give it \"rule\", \"value\" or \"result\".",
                          f"{missing[0]!r} 还没有作答：给它 \"rule\"、\"value\" 或 \"result\"。"))
    for name, label in labels.items():
        if not isinstance(_label(label), str) or _label(label) not in KINDS:
            return failed(say("{name!r}: {label} is not a kind; use \"rule\", \"value\" or \"result\".",
                              "{name!r}：{label} 不是一种种类；请用 \"rule\"、\"value\" 或 \"result\"。",
                              name=name, label=shown(label)))
    for name, (truth, first, second) in measured_kinds().items():
        if _label(labels[name]) != truth:
            return failed(_why(name, truth, _label(labels[name]), first, second))
    return passed(say("All {n} objects labelled as the two real runs show them.",
                      "{n} 个对象全部标对了，与两次真实运行测得的一致。", n=len(OBJECTS)))


# ---- exercise 2: the final answer's text --------------------------------------------------------


def _message(response: dict[str, Any]) -> dict[str, Any]:
    """The response's message item (wherever the model put it)."""
    return next(item for item in response["output"] if item.get("type") == "message")


def _pieces() -> dict[str, Any]:
    """The real items the cases are made of: from a one-call run and a two-call run."""
    one = _record(TASKS[0])
    two = _record(TWO_READS)
    message = _message(one["response_2"])  # by type: a reasoning model puts a reasoning item first
    second_message = _message(two["response_2"])
    head, sep, rest = second_message["content"][0]["text"].partition("\n\n")
    part = second_message["content"][0]
    thought = "The tool returned 20 lines; quote them and name the tool."
    return {
        "one": one, "two": two, "call": _call(one), "message": message,
        "second_message": second_message,
        "two_parts": [dict(part, text=head + sep), dict(part, text=rest)],
        # A refusal part and a reasoning item, in the SDK's own shapes (ResponseOutputRefusal,
        # ResponseReasoningItem): neither is answer text, and output_text leaves both out.
        "refusal": {"type": "refusal", "refusal": "I won't quote line 7: it holds a secret."},
        "reasoning": {"id": "rs_" + message["id"].removeprefix("msg_"), "type": "reasoning",
                      "summary": [{"type": "summary_text", "text": thought}],
                      "content": [{"type": "reasoning_text", "text": thought}]},
    }  # fmt: skip


def _body(base: dict[str, Any], output: list[dict[str, Any]]) -> dict[str, Any]:
    body = copy.deepcopy(base)
    body["output"] = copy.deepcopy(output)
    return body


def final_text_cases(pieces: dict[str, Any] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """(label, Responses body) pairs: recorded from real runs, and six assembled from real items
    (`pieces`: from `_pieces()`, recorded afresh when not given)."""
    p = pieces or _pieces()
    one, two, call, message = p["one"], p["two"], p["call"], p["message"]
    final = one["response_2"]
    first_part = message["content"][0]
    cases = [
        ("the final answer, output = [message]", final),
        ("a tool call only, output = [function_call]", one["response_1"]),
        ("two tool calls, output = [function_call, function_call]", two["response_1"]),
        ("a call next to a message, output = [function_call, message]", _body(final, [call, message])),
        ("one message in two parts, content = [output_text, output_text]",
         _body(two["response_2"], [dict(p["second_message"], content=p["two_parts"])])),
        ("a message with a refusal part, content = [output_text, refusal]",
         _body(final, [dict(message, content=[dict(first_part, text="I read the file. "), p["refusal"]])])),
        ("a reasoning item before the message, output = [reasoning, message]", _body(final, [p["reasoning"], message])),
        ("two messages around a call, output = [message, function_call, message]",
         _body(final, [dict(p["second_message"], id=message["id"] + "a"), call, message])),
        ("a refusal part before the text, content = [refusal, output_text]",
         _body(final, [dict(message, content=[p["refusal"], first_part])])),
    ]  # fmt: skip
    for _, body in cases:
        Response.model_validate(body)  # every case is a valid Responses body
    return cases


def composed_cases(length: int = 3, pieces: dict[str, Any] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """Every output list of up to `length` items drawn from five real kinds of item (a message with
    one part, a message in two parts, a message whose refusal part comes first, a function_call, a
    reasoning item): the promise is "every message, every output_text part, in order", so the check
    tries every order of them, not a sample."""
    p = _pieces()
    message, final = p["message"], p["one"]["response_2"]
    kinds = {
        "message": message,
        "message(output_text, output_text)": dict(p["second_message"], content=p["two_parts"]),
        "message(refusal, output_text)": dict(message, content=[p["refusal"], message["content"][0]]),
        "function_call": p["call"],
        "reasoning": p["reasoning"],
    }
    cases = []
    for n in range(length + 1):
        for names in itertools.product(kinds, repeat=n):
            items = [dict(kinds[name], id=f"{kinds[name]['id']}_{i}") for i, name in enumerate(names)]
            cases.append((f"output = [{', '.join(names)}]", _body(final, items)))
    return cases


CASE_LABELS_ZH = {
    "the final answer, output = [message]": "最终回答，output = [message]",
    "a tool call only, output = [function_call]": "只有一个工具调用，output = [function_call]",
    "two tool calls, output = [function_call, function_call]": "两个工具调用，output = [function_call, function_call]",
    "a call next to a message, output = [function_call, message]": "调用旁边跟着一条消息，output = [function_call, message]",
    "one message in two parts, content = [output_text, output_text]": "一条消息分成两个部分，content = [output_text, output_text]",
    "a message with a refusal part, content = [output_text, refusal]": "一条带 refusal 部分的消息，content = [output_text, refusal]",
    "a reasoning item before the message, output = [reasoning, message]": "消息之前有一个 reasoning 项，output = [reasoning, message]",
    "two messages around a call, output = [message, function_call, message]":
        "一个调用前后各有一条消息，output = [message, function_call, message]",
    "a refusal part before the text, content = [refusal, output_text]": "文本之前有一个 refusal 部分，content = [refusal, output_text]",
}
"""The Chinese label of each case of `final_text_cases`; a composed case's label is wire notation only."""


def _case(label: str) -> str:
    """How a message names a case: `case 'label'` in the edition's language."""
    return say(f"case '{label}'", f"例子 '{CASE_LABELS_ZH.get(label, label)}'")


def _messages(body: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    return [(i, item) for i, item in enumerate(body["output"]) if item["type"] == "message"]


def _hint(body: dict[str, Any], expected: str, got: str) -> str:
    """Name the mistake behind a wrong join, from the body's shape and from what came back."""
    messages = _messages(body)
    parts = [part for _, item in messages for part in item["content"]]
    texts = [part["text"] for part in parts if part["type"] == "output_text"]
    refusals = [part["refusal"] for part in parts if part["type"] == "refusal"]
    reasoning = [c["text"] for item in body["output"] if item["type"] == "reasoning" for c in item["content"]]
    if not messages:
        return say("This response has no message: return ''.", "这个响应里没有消息：返回 ''。")
    if any(thought in got for thought in reasoning):
        return say("You joined the reasoning item's text too: it is the model's reasoning, not its answer. "
                   "Take only items whose type is 'message'.",
                   "你把 reasoning 项的文本也拼了进来：那是模型的推理，不是它的回答。只取 type 为 'message' 的项。")
    if any(refusal in got for refusal in refusals):
        return say("You joined the refusal part too: a refusal is not answer text (output_text leaves it out). "
                   "Take only parts whose type is 'output_text'.",
                   "你把 refusal 部分也拼了进来：拒绝不是回答文本（output_text 会把它排除在外）。"
                   "只取 type 为 'output_text' 的部分。")
    if got.replace("\n", "").replace(" ", "") == expected.replace("\n", "").replace(" ", ""):
        return say("Join with nothing in between: ''.join(...), not a space or a newline.",
                   "中间什么也不加：用 ''.join(...)，不要用空格或换行。")
    if got == "" and messages[0][0] > 0:
        return say("The message is at output[{i}] here: walk every item and pick them by type.",
                   "这里的消息位于 output[{i}]：遍历每一项，按类型挑选。", i=messages[0][0])
    if refusals and parts[0]["type"] == "refusal" and got in ("", *refusals):
        return say("A refusal part is not text, but it does not end the message: skip it and keep joining the "
                   "output_text parts after it.",
                   "refusal 部分不是文本，但它并不结束这条消息：跳过它，继续拼接它后面的 output_text 部分。")
    if len(messages) > 1 and got in ("".join(p["text"] for p in item["content"] if p["type"] == "output_text")
                                     for _, item in messages):  # fmt: skip
        return say("This response has {n} message items and you took one: join the text of every message, in order.",
                   "这个响应有 {n} 个 message 项，你只取了一个：把每条消息的文本按顺序拼接起来。", n=len(messages))
    if len(texts) > 1 and got in texts:
        return say("Join the text of every output_text part, in order, with nothing in between.",
                   "把每个 output_text 部分的文本按顺序拼接起来，中间不加任何东西。")
    if got and expected.startswith(got) and got != expected:
        return say("You stopped early: join the text of every output_text part, in order, with nothing in between.",
                   "你停得太早了：把每个 output_text 部分的文本按顺序拼接起来，中间不加任何东西。")
    return say("Take the text of the output_text parts of the message items, in order.",
               "按顺序取 message 项里各个 output_text 部分的文本。")


def _crash_hint(body: dict[str, Any], error: Exception) -> str:
    """Name the mistake behind a crash on one case."""
    parts = [part for _, item in _messages(body) for part in item["content"]]
    if isinstance(error, KeyError) and error.args == ("text",) and any(p["type"] == "refusal" for p in parts):
        return say("A refusal part has no 'text' (its field is 'refusal'): check each part's type and join only "
                   "'output_text' parts.",
                   "refusal 部分没有 'text'（它的字段是 'refusal'）：检查每个部分的类型，只拼接 'output_text' 部分。")
    if isinstance(error, (KeyError, IndexError)):
        return say("Not every item is a message and not every item has 'content': check each item's 'type' "
                   "before reading its fields.",
                   "并非每一项都是消息，也并非每一项都有 'content'：读取字段之前，先检查每一项的 'type'。")
    if isinstance(error, AttributeError):
        return say("response_json is plain JSON (a dict, as it crossed the wire), not the SDK's Response object: "
                   "read response_json[\"output\"], item[\"type\"], part[\"text\"].",
                   "response_json 是普通的 JSON（一个 dict，就是线上传过的样子），不是 SDK 的 Response 对象："
                   "请读取 response_json[\"output\"]、item[\"type\"]、part[\"text\"]。")
    return say("Look at each item's 'type' before reading its fields.", "读取字段之前，先看每一项的 'type'。")


def check_final_text(fn: Callable[[dict[str, Any]], str]) -> bool:
    """Run `fn` on real Responses bodies, then on every output list composed of five kinds of real
    item (`composed_cases`); compare each result with the SDK's `output_text`."""
    if not_answered(fn):
        return failed(unassigned("final_text", "final_text(response_json)"))
    if not callable(fn):
        return failed(passed_a_call("final_text", fn))
    pieces = _pieces()
    cases = [*final_text_cases(pieces), *composed_cases(pieces=pieces)]
    for label, body in cases:
        expected = Response.model_validate(body).output_text
        try:
            got = fn(copy.deepcopy(body))
        except Exception as error:
            return failed(say("{case}: your function crashed with {error}. ", "{case}：你的函数崩溃了，{error}。",
                              case=_case(label), error=raised(error)) + _crash_hint(body, error))
        if not isinstance(got, str):
            return failed(say("{case}: you returned {got} ({kind}); return a str ('' when there is no message).",
                              "{case}：你返回了 {got}（{kind}）；请返回一个 str（没有消息时返回 ''）。",
                              case=_case(label), got=shown(got), kind=type_name(got)) + returned_early(got))
        got = str.__str__(got)  # a str subclass is compared as the text it holds
        if got != expected:
            mine, sdk = difference(got, expected, 50)
            return failed(say("{case}: you returned {mine}, the SDK's output_text gives {sdk}. ",
                              "{case}：你返回了 {mine}，而 SDK 的 output_text 给出的是 {sdk}。",
                              case=_case(label), mine=mine, sdk=sdk) + _hint(body, expected, got))
    return passed(say("final_text agrees with the SDK's output_text on all {n} responses (every order of "
                      "messages, calls, reasoning and refusals up to three items).",
                      "在全部 {n} 个响应上（消息、调用、reasoning 和 refusal 最多三项的每一种排列），"
                      "final_text 与 SDK 的 output_text 一致。", n=len(cases)))


def _final_text_solution(response_json: dict[str, Any]) -> str:
    texts = []
    for item in response_json.get("output", []):
        if item.get("type") != "message":
            continue
        for part in item.get("content", []):
            if part.get("type") == "output_text":
                texts.append(part["text"])
    return "".join(texts)


SOLUTIONS: Solutions = {
    "check_kinds": lambda: {
        "tools/list: inputSchema": "rule",
        "request 1: tools[0].parameters": "rule",
        "request 1: tools[0].parameters.required": "rule",
        "response 1: function_call.arguments": "value",
        "json.loads(function_call.arguments)": "value",
        "tools/call request: params.arguments": "value",
        "tools/call response: result.content": "result",
        "tools/call response: result.structuredContent": "result",
        "request 2: function_call_output.output": "result",
        "response 2: the message's text": "result",
    },
    "check_final_text": lambda: _final_text_solution,
}


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
