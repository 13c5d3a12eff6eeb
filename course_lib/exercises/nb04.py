"""Checks for notebook 04 (wiring feedback into the loop).

Both checks use real objects from the offline model, never look-alikes:

- `check_second_input(fn)`: the learner's `build_second_input(task_item, response, outputs_by_call_id)`
  gets three real first responses (one call; two calls in one turn; two calls from a reasoning
  model, whose input is first judged by the refusal table's rule, `api_rules.responses_input_problems`:
  the reasoning item back before its calls, no output between them) and the real tool outputs. The
  list it returns is checked link by link (task first, every original call kept unchanged, exactly
  one output per call, after it, under its `call_id`, carrying the tool's text as a string or as
  `input_text` parts), then sent to the offline model for real: the answer must quote every tool output.
- `check_request_2(fn)`: the learner's `request_2(task_item, response, outputs_by_call_id, stored)`
  returns the fields of request 2 for three real first responses: two stored (continue them with
  `previous_response_id` and only the new `function_call_output` items) and one made with
  `store: false` (nothing was kept: the whole context goes in `input`). Each is checked for the
  mistakes learners make (the call sent again, the task sent again, the call's id as
  `previous_response_id`, `previous_response_id` after `store: false`, a dropped call item...), then
  sent to the offline model for real.

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`);
wire values (item types, field names, ids) and the API's own 400 messages stay as they are.
"""

from __future__ import annotations

import json
from typing import Any

import openai
from openai.types.responses import Response

from course_lib.api_rules import is_reasoning_model, responses_input_problems
from course_lib.arguments import json_type_name
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import (as_dict, not_json, passed_a_call, raised, returned_early,
                                           shown, type_name, unassigned)
from course_lib.exercises.guard import guard_checks
from course_lib.exercises.offline import model_name, offline_course
from course_lib.lang import say
from course_lib.loop import execute_call, feedback_item
from course_lib.results import feedback_text
from course_lib.show import wire_json

ONE_CALL = "Show the first 20 lines of /workspace/notes.txt"
TWO_CALLS = "Show the first 3 lines of /workspace/notes.txt and the last 2 lines of /workspace/todo.md"


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def as_wire(items: Any) -> tuple[list[Any] | None, str | None]:
    """The items as the plain JSON the wire would carry (typed items through `to_dict()`), or why
    they cannot be: (JSON list, None) or (None, problem). What the learner built is judged on this
    copy, so nothing it holds can raise while it is judged."""
    try:
        wire = [wire_json(item) for item in items]
    except Exception as error:  # a to_dict() or model_dump() that raises
        return None, say("an input item could not be turned into JSON ({error})", "有一个输入项无法转成 JSON（{error}）",
                         error=raised(error))
    if (why := not_json(wire)) is not None:
        return None, say("the input is not JSON ({why}): every item is a dict of strings, numbers, lists and dicts, or "
                         "an SDK item", "输入不是 JSON（{why}）：每一项都是由字符串、数字、列表和 dict 组成的 dict，或 SDK 的项",
                         why=why)
    return json.loads(json.dumps(wire)), None


def _task_text(item: Any) -> str | None:
    """The text of a user message item, in either shape the API takes (content a string, or a list of
    input_text parts; "type": "message" or left out); None when `item` is not one."""
    if not isinstance(item, dict) or item.get("role") != "user" or item.get("type", "message") != "message":
        return None
    if set(item) - {"role", "content", "type"}:
        return None
    content = item.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(isinstance(p, dict) and p.get("type") == "input_text"
                                         and isinstance(p.get("text"), str) for p in content):  # fmt: skip
        return "".join(part["text"] for part in content)
    return None


def _same_task(item: Any, task_item: dict) -> bool:
    """Is `item` the user's task, in any shape the API reads as the same message?"""
    return _task_text(item) is not None and _task_text(item) == _task_text(task_item)


# ---- exercise 1: build_second_input -----------------------------------------------------------


def _first_problem(task_item: dict, response: Response, outputs: dict[str, str], items: Any) -> str | None:
    """The first broken link of a second-request input, in words; None when every link holds."""
    if not isinstance(items, list):
        return say("build_second_input must return a list of input items, got {kind}",
                   "build_second_input 必须返回一个输入项的列表，得到的却是 {kind}", kind=type_name(items)) + returned_early(items)
    wire, problem = as_wire(items)
    if wire is None:
        return problem
    for i, item in enumerate(wire):
        if not isinstance(item, dict):
            return say(f"input[{i}] is {type(item).__name__}: every input item is a JSON object (a dict or a typed item)",
                       f"input[{i}] 是 {type(item).__name__}：每个输入项都是一个 JSON 对象（dict 或带类型的项）")
    for i, item in enumerate(wire):
        if item.get("role") == "tool" or "tool_call_id" in item:
            return say(f"input[{i}] is a Chat Completions tool message (role 'tool', tool_call_id): in the Responses "
                       "API a result is an item of type 'function_call_output' with the call's call_id",
                       f"input[{i}] 是一条 Chat Completions 的工具消息（role 'tool'、tool_call_id）：在 Responses API 里，"
                       "结果是一个类型为 'function_call_output'、带着该调用 call_id 的项")
    if not wire or not _same_task(wire[0], task_item):
        return say("input[0] must be the user's task item, unchanged: the model needs the question it is answering",
                   "input[0] 必须是用户的任务项，原封不动：模型需要知道它在回答的问题")
    for i, item in enumerate(wire):
        nulls = [key for key, value in item.items() if value is None]
        if nulls:
            return say(f"input[{i}] carries null fields the model never sent ({', '.join(nulls)}): that is a plain "
                       "model_dump(); send the typed item or item.to_dict()",
                       f"input[{i}] 带着模型从未发送过的 null 字段（{', '.join(nulls)}）：那是直接的 model_dump()；"
                       "请发送带类型的项，或 item.to_dict()")
    calls = [(n, item) for n, item in enumerate(response.output) if item.type == "function_call"]
    known = {call.call_id for _, call in calls}
    item_ids = {call.id: call.call_id for _, call in calls if call.id}
    orphans = [i for i, item in enumerate(wire) if item.get("type") == "function_call_output"
               and item.get("call_id") not in known]  # fmt: skip
    for n, call in calls:
        kept = [i for i, item in enumerate(wire) if item.get("type") == "function_call" and item.get("call_id") == call.call_id]
        if not kept:
            where = say(f" (it is response.output[{n}]: walk every output item, not only output[0])",
                        f"（它是 response.output[{n}]：要遍历每一个输出项，而不只是 output[0]）") if n else ""
            return say(f"the original function_call {call.call_id} is missing{where}; an output without its call is refused",
                       f"缺少原来的 function_call {call.call_id}{where}；没有对应调用的输出会被拒绝")
        sent = wire[kept[0]]
        if not isinstance(sent.get("arguments"), str):
            kind = json_type_name(sent.get("arguments"))
            return say(f"the function_call {call.call_id} has arguments as a JSON {kind}: keep the model's arguments text unchanged",
                       f"function_call {call.call_id} 的 arguments 是一个 JSON {kind}：请原样保留模型的参数文本")
        if sent.get("arguments") != call.arguments or sent.get("name") != call.name:
            return say(f"the function_call {call.call_id} was changed: send back exactly the name and arguments the model sent",
                       f"function_call {call.call_id} 被改动了：请把模型发来的 name 和 arguments 原样发回")
        answers = [i for i, item in enumerate(wire) if item.get("type") == "function_call_output"
                   and item.get("call_id") == call.call_id]  # fmt: skip
        if not answers and orphans:
            wrong = wire[orphans[0]].get("call_id")
            mixup = _id_mixup(item_ids, wrong)
            return say(f"input[{orphans[0]}] answers call_id {wrong!r}, which matches no call{mixup}: use {call.call_id!r}",
                       f"input[{orphans[0]}] 答复的是 call_id {wrong!r}，它对不上任何调用{mixup}：请用 {call.call_id!r}")
        if not answers:
            return say(f"no function_call_output for call_id {call.call_id}: the model never receives that result",
                       f"call_id {call.call_id} 没有 function_call_output：模型永远收不到那个结果")
        if len(answers) > 1:
            return say(f"{len(answers)} function_call_output items for call_id {call.call_id}: send exactly one",
                       f"call_id {call.call_id} 有 {len(answers)} 个 function_call_output 项：只能发送一个")
        if answers[0] < kept[0]:
            return say(f"the output for {call.call_id} (input[{answers[0]}]) comes before its call (input[{kept[0]}]): "
                       "the call goes first",
                       f"{call.call_id} 的输出（input[{answers[0]}]）排在它的调用（input[{kept[0]}]）之前：调用必须在前")
        problem = _output_problem(call.call_id, wire[answers[0]].get("output"), outputs[call.call_id])
        if problem:
            return problem
    if orphans:
        given = wire[orphans[0]].get("call_id")
        return say(f"input[{orphans[0]}] answers call_id {given!r}, which matches no call{_id_mixup(item_ids, given)}",
                   f"input[{orphans[0]}] 答复的是 call_id {given!r}，它对不上任何调用{_id_mixup(item_ids, given)}")
    return None


def _id_mixup(call_ids: dict[str, str], given: Any) -> str:
    """A hint when `given` is a call's item `id` (fc_…) where its `call_id` belongs; '' otherwise."""
    for item_id, call_id in call_ids.items():
        if given == item_id:
            return say(f" ({given!r} is the call item's id; the feedback quotes its call_id, {call_id!r})",
                       f"（{given!r} 是调用项的 id；反馈要引用的是它的 call_id，{call_id!r}）")
    return ""


def _output_problem(call_id: str, output: Any, expected: str) -> str | None:
    """What is wrong with one `function_call_output.output`, or None. It may be the tool's text, or a list
    of content parts (`input_text`, `input_image`, `input_file`) whose `input_text` parts carry that text."""
    if isinstance(output, str):
        if output != expected:
            return say(f"the output for {call_id} is not the tool's text from outputs_by_call_id[{call_id!r}]",
                       f"{call_id} 的输出不是 outputs_by_call_id[{call_id!r}] 里工具的文本")
        return None
    if isinstance(output, dict):
        if "content" in output or "isError" in output:
            return say(f"the output for {call_id} is an MCP result object: send the text it carries (a string, or a "
                       "list of input_text parts), not the object",
                       f"{call_id} 的输出是一个 MCP 结果对象：请发送它携带的文本（一个字符串，或 input_text 部分的列表），"
                       "而不是这个对象")
        return say(f"the output for {call_id} is a JSON object: send the tool's text as a string or as a list of "
                   "input_text parts (the response's root output is the array of items, not this one)",
                   f"{call_id} 的输出是一个 JSON 对象：请把工具的文本作为字符串、或作为 input_text 部分的列表发送"
                   "（响应根上的 output 是项的数组，不是这里的这个）")
    if not isinstance(output, list):
        return say(f"the output for {call_id} is a JSON {json_type_name(output)}: send a string or a list of content parts",
                   f"{call_id} 的输出是一个 JSON {json_type_name(output)}：请发送一个字符串，或内容部分的列表")
    for j, part in enumerate(output):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            return say(f"output[{j}] for {call_id} has type 'text': that is an MCP content block; a function_call_output "
                       "part is 'input_text' (or 'input_image', 'input_file')",
                       f"{call_id} 的 output[{j}] 的类型是 'text'：那是 MCP 的内容块；function_call_output 的内容部分是 "
                       "'input_text'（或 'input_image'、'input_file'）")
        if kind in ("output_text", "refusal"):
            return say(f"output[{j}] for {call_id} has type {kind!r}, which only the model writes; the tool's text goes "
                       "back as 'input_text'",
                       f"{call_id} 的 output[{j}] 的类型是 {kind!r}，这种类型只有模型会写；工具的文本要以 'input_text' 发回")
        if kind not in ("input_text", "input_image", "input_file"):
            return say(f"output[{j}] for {call_id} is not a content part: each part is an object with type 'input_text', "
                       "'input_image' or 'input_file'",
                       f"{call_id} 的 output[{j}] 不是内容部分：每个部分都是一个 type 为 'input_text'、'input_image' 或 "
                       "'input_file' 的对象")
    if feedback_text(output) != expected:
        return say(f"the input_text parts of the output for {call_id} do not carry the tool's text, unchanged",
                   f"{call_id} 的输出中的 input_text 部分没有原样携带工具的文本")
    return None


def check_second_input(fn: Any) -> bool:
    """Run `fn(task_item, response, outputs_by_call_id)` on two real first responses and send its
    list to the offline model; pass when every link holds and the answer quotes each tool output."""
    if not_answered(fn):
        return failed(unassigned("build_second_input", "build_second_input(task_item, response, outputs_by_call_id)",
                                 through=""))
    if not callable(fn):
        return failed(passed_a_call("build_second_input", fn))
    course = offline_course()
    try:
        tools = course.host.responses_tools()
        for task, model in ((ONE_CALL, model_name()), (TWO_CALLS, model_name()), (TWO_CALLS, reasoning_model())):
            task_item = {"role": "user", "content": task}
            first = course.client.responses.create(model=model, input=[task_item], tools=tools)
            calls = [item for item in first.output if item.type == "function_call"]
            outputs = {call.call_id: execute_call(call, course.host)[0]["output"] for call in calls}
            label = say("on the two-call task", "在有两个调用的任务上") if len(calls) > 1 else say(
                "on the one-call task", "在有一个调用的任务上")
            if is_reasoning_model(model):
                label += say(" of a reasoning model ({model})", "（推理模型 {model}）", model=model)
            try:
                items = fn(dict(task_item), first, dict(outputs))
            except Exception as error:  # the learner's code: report, don't crash the notebook
                return failed(say("{label}, build_second_input raised {error}", "{label}，build_second_input 抛出了 {error}",
                                  label=label, error=raised(error)))
            if not_answered(items):
                return failed(say("Not answered yet: build_second_input still returns ...",
                                  "还没有作答：build_second_input 仍然返回 ..."))
            problem = _first_problem(task_item, first, outputs, items)
            wire, _ = as_wire(items) if isinstance(items, list) else (None, None)
            if wire is None:  # not a list, or not JSON: nothing could be sent
                return failed(say(f"{label}: {problem}", f"{label}：{problem}"))
            if is_reasoning_model(model):  # the refusal table's rule first, in the API's words, then sent for real
                refusal = responses_input_problems(wire, model)
                if problem is None and refusal:
                    problem = say("the API refuses this input for a reasoning model: {refusal} Send back every item of "
                                  "the response's output as it came (its reasoning item before its calls, no output "
                                  "between them), then one function_call_output per call",
                                  "对推理模型，API 拒绝这样的 input：{refusal} 把响应 output 中的每一项原样发回（reasoning 项"
                                  "在它的调用之前，调用之间不夹输出），然后每个调用一个 function_call_output", refusal=refusal[0])
                if problem:
                    return failed(say(f"{label}: {problem}", f"{label}：{problem}"))
            try:
                second = course.client.responses.create(model=model, input=wire, tools=tools)
            except openai.BadRequestError as error:
                message = error.body.get("message") if isinstance(error.body, dict) else error.message
                return failed(_refused(label, problem, message))
            if problem:
                return failed(say(f"{label}: {problem}", f"{label}：{problem}"))
            unquoted = [call_id for call_id, text in outputs.items() if text not in second.output_text]
            if unquoted:
                return failed(say(f"{label}: the answer does not quote the output of {unquoted[0]}",
                                  f"{label}：回答没有引用 {unquoted[0]} 的输出"))
        return passed(say("both second requests were accepted, and the answers quote every tool output (one call, then "
                          "two calls in one turn); from a reasoning model, the reasoning item goes back before its calls",
                          "两次第二次请求都被接受了，回答引用了每一个工具输出（先是一个调用，然后是一轮里的两个调用）；"
                          "对推理模型，reasoning 项在它的调用之前发回"))
    finally:
        course.close()


def reasoning_model() -> str:
    """The model a check uses to try an input on a reasoning model: the course's own model when it is
    one, else gpt-5 (what the offline model answers as a reasoning model: a reasoning item before
    each call, which the API wants back before that call)."""
    return model_name() if is_reasoning_model(model_name()) else "gpt-5"


def _refused(label: str, problem: str | None, message: str) -> str:
    """The message for a request 2 the API refused with a 400, with the broken link when one is known."""
    return say(f"{label}: {problem or 'the request was refused'}; the API answered 400: {message}",
               f"{label}：{problem or '请求被拒绝了'}；API 答复了 400：{message}")


def build_second_input(task_item: dict, response: Response, outputs_by_call_id: dict[str, str]) -> list:
    """Reference: the task, then every output item of the response as it was sent, then one feedback
    item per call under its call_id (a reasoning model refuses an output between the calls of one output)."""
    sent = [item.to_dict() for item in response.output]
    fed = [feedback_item(item.call_id, outputs_by_call_id[item.call_id]) for item in response.output
           if item.type == "function_call"]  # fmt: skip
    return [task_item, *sent, *fed]


# ---- exercise 2: request 2, with previous_response_id or with explicit context -------------------

_FIELDS = ("input", "previous_response_id", "store")


def _chained_problem(task_item: dict, response: Response, outputs: dict[str, str], fields: dict) -> str | None:
    """What is wrong with a request 2 that continues a stored response 1; None when it is right."""
    previous = fields["previous_response_id"]
    calls = [item for item in response.output if item.type == "function_call"]
    if previous != response.id:
        for call in calls:
            if previous in (call.id, call.call_id):
                which = say("the call item's id", "调用项的 id") if previous == call.id else say(
                    "the call's call_id", "调用的 call_id")
                return say(f"previous_response_id is {previous!r}, {which}: it names a response, so it is "
                           f"response.id ({response.id!r})",
                           f"previous_response_id 是 {previous!r}，即{which}：它指名的是一个响应，所以应该是 "
                           f"response.id（{response.id!r}）")
        return say(f"previous_response_id is {_short(previous)}: it must be response 1's id, response.id ({response.id!r})",
                   f"previous_response_id 是 {_short(previous)}：它必须是响应 1 的 id，即 response.id（{response.id!r}）")
    wire = fields.get("input")
    if not isinstance(wire, list):
        return say("with previous_response_id, input is the list of new items: one function_call_output per call",
                   "用 previous_response_id 时，input 是新项的列表：每个调用一个 function_call_output")
    if any(isinstance(item, dict) and item.get("type") == "function_call" for item in wire):
        return say("input sends the function_call again, but response 1 is stored with it: with previous_response_id "
                   "the platform already has the task and the call, so a second copy is a duplicate; send only the "
                   "function_call_output items",
                   "input 又发送了一次 function_call，但响应 1 已经连同它一起保存了：用 previous_response_id 时，"
                   "平台已经有了任务和调用，再发一份就是重复；只发送 function_call_output 项")
    if any(_same_task(item, task_item) for item in wire):
        return say("input sends the task again, but it is stored with response 1: with previous_response_id the model "
                   "would read the question twice; send only the function_call_output items",
                   "input 又发送了一次任务，但它已经和响应 1 一起保存了：用 previous_response_id 时，模型会把问题读两遍；"
                   "只发送 function_call_output 项")
    for i, item in enumerate(wire):
        if not isinstance(item, dict) or item.get("type") != "function_call_output":
            return say(f"input[{i}] is not a function_call_output: with previous_response_id only the new results go in input",
                       f"input[{i}] 不是 function_call_output：用 previous_response_id 时，input 里只放新的结果")
    item_ids = {call.id: call.call_id for call in calls if call.id}
    for call in calls:
        answers = [item for item in wire if item.get("call_id") == call.call_id]
        if not answers:
            stray = next((item.get("call_id") for item in wire if item.get("call_id") not in outputs), None)
            mixup = _id_mixup(item_ids, stray) if stray else ""
            return say(f"no function_call_output for call_id {call.call_id}{mixup}: each call of response 1 needs its result",
                       f"call_id {call.call_id} 没有 function_call_output{mixup}：响应 1 的每个调用都需要它的结果")
        if len(answers) > 1:
            return say(f"{len(answers)} function_call_output items for call_id {call.call_id}: send exactly one",
                       f"call_id {call.call_id} 有 {len(answers)} 个 function_call_output 项：只能发送一个")
        problem = _output_problem(call.call_id, answers[0].get("output"), outputs[call.call_id])
        if problem:
            return problem
    return None


def plain_fields(fields: Any) -> tuple[dict[str, Any] | None, str | None]:
    """The learner's request-2 fields as plain JSON (typed items through `to_dict()`), or why they
    cannot be: (fields, None) or (None, problem)."""
    given = as_dict(fields)
    if given is None:
        return None, say("request_2 must return a dict of request fields, e.g. {{'previous_response_id': ..., "
                         "'input': [...]}}; got {kind}",
                         "request_2 必须返回一个请求字段的 dict，例如 {{'previous_response_id': ..., 'input': [...]}}；"
                         "得到的却是 {kind}", kind=type_name(fields)) + returned_early(fields)
    plain: dict[str, Any] = {}
    for key, value in given.items():
        if not isinstance(key, str):
            return None, say("a request field is named by a string; {key} is not", "请求字段用字符串命名；{key} 不是",
                             key=shown(key))
        if key == "input" and isinstance(value, (list, tuple)):
            wire, problem = as_wire(value)
            if wire is None:
                return None, problem
            plain[key] = wire
            continue
        try:
            value = wire_json(value)
        except Exception as error:
            return None, say("{key} could not be turned into JSON ({error})", "{key} 无法转成 JSON（{error}）",
                             key=key, error=raised(error))
        if (why := not_json(value)) is not None:
            return None, say("{key} is not JSON ({why})", "{key} 不是 JSON（{why}）", key=key, why=why)
        plain[key] = json.loads(json.dumps(value))
    return plain, None


def _request_problem(task_item: dict, response: Response, outputs: dict[str, str], stored: bool,
                     fields: dict[str, Any]) -> str | None:
    """The first thing wrong with the learner's request-2 fields (plain JSON, from `plain_fields`),
    in words; None when they are right."""
    extra = [key for key in fields if key not in _FIELDS]
    if extra:
        if set(extra) & {"model", "tools"}:
            return say(f"return only {', '.join(_FIELDS)}: the check adds model and tools itself (you set {', '.join(extra)})",
                       f"只返回 {', '.join(_FIELDS)}：model 和 tools 由检查自己加上（你设置了 {', '.join(extra)}）")
        return say(f"{', '.join(map(repr, extra))} is not a request field this exercise needs; use {', '.join(_FIELDS)}",
                   f"{', '.join(map(repr, extra))} 不是这个练习需要的请求字段；请用 {', '.join(_FIELDS)}")
    if "input" not in fields:
        return say("every request needs input: the new items (with previous_response_id) or the whole context",
                   "每个请求都需要 input：新的项（用 previous_response_id 时），或者整个上下文")
    if fields.get("previous_response_id") is not None:
        if not stored:
            return say("response 1 was made with store: false, so the platform kept nothing: previous_response_id "
                       "gets a 400 'Previous response ... not found'; send the whole context in input instead",
                       "响应 1 是用 store: false 生成的，所以平台什么也没保留：previous_response_id 会得到 400 "
                       "'Previous response ... not found'；请改为在 input 里发送整个上下文")
        return _chained_problem(task_item, response, outputs, fields)
    if stored:
        return say("response 1 was stored: continue it with previous_response_id=response.id and send only the new "
                   "items (the function_call_output for each call), instead of the whole context again",
                   "响应 1 已经保存：用 previous_response_id=response.id 接着它，只发送新的项（每个调用的 "
                   "function_call_output），而不是把整个上下文再发一遍")
    problem = _first_problem(task_item, response, outputs, fields["input"])
    if problem:
        return say(f"with store: false the input must carry the whole story: {problem}",
                   f"用 store: false 时，input 必须带着完整的经过：{problem}")
    if fields.get("store") is not False:
        return say("request 1 was made with store: false (nothing may be kept on the platform), but request 2 "
                   "leaves store at its default, true: it would be stored; pass store=False again",
                   "请求 1 是用 store: false 发出的（平台上什么都不能保留），但请求 2 让 store 保持默认值 true："
                   "它会被保存；请再次传入 store=False")
    return None


REQUEST_2_CASES = (("one call, stored", ONE_CALL, True), ("two calls in one turn, stored", TWO_CALLS, True),
                   ("one call, made with store: false", ONE_CALL, False))  # fmt: skip
REQUEST_2_LABELS_ZH = {
    "one call, stored": "一个调用，已保存",
    "two calls in one turn, stored": "一轮里两个调用，已保存",
    "one call, made with store: false": "一个调用，用 store: false 生成",
}
"""The Chinese of each case's label."""


def check_request_2(fn: Any) -> bool:
    """Run `fn(task_item, response, outputs_by_call_id, stored)` on three real first responses (two stored,
    one made with `store: false`) and send what it returns as request 2; pass when each request is the right
    kind, is accepted, and its answer quotes every tool output."""
    if not_answered(fn):
        return failed(unassigned("request_2", "request_2(task_item, response, outputs_by_call_id, stored)", through=""))
    if not callable(fn):
        return failed(passed_a_call("request_2", fn))
    course = offline_course()
    try:
        tools = course.host.responses_tools()
        for case, task, stored in REQUEST_2_CASES:
            label = say(case, REQUEST_2_LABELS_ZH[case])
            task_item = {"role": "user", "content": task}
            store = {} if stored else {"store": False}
            first = course.client.responses.create(model=model_name(), input=[task_item], tools=tools, **store)
            calls = [item for item in first.output if item.type == "function_call"]
            outputs = {call.call_id: execute_call(call, course.host)[0]["output"] for call in calls}
            try:
                fields = fn(dict(task_item), first, dict(outputs), stored)
            except Exception as error:  # the learner's code: report, don't crash the notebook
                return failed(say("{label}: request_2 raised {error}", "{label}：request_2 抛出了 {error}",
                                  label=label, error=raised(error)))
            if not_answered(fields):
                return failed(say("Not answered yet: request_2 still returns ...",
                                  "还没有作答：request_2 仍然返回 ..."))
            plain, problem = plain_fields(fields)
            if plain is None:
                return failed(say(f"{label}: {problem}", f"{label}：{problem}"))
            problem = _request_problem(task_item, first, outputs, stored, plain)
            sendable = not set(plain) & {"model", "tools"}
            try:
                second = course.client.responses.create(model=model_name(), tools=tools, **(plain if sendable else {"input": []}))
            except openai.BadRequestError as error:
                message = error.body.get("message") if isinstance(error.body, dict) else error.message
                return failed(_refused(label, problem, message))
            except TypeError as error:  # e.g. a field the SDK's create() does not take
                return failed(say(f"{label}: {problem or error}", f"{label}：{problem or error}"))
            if problem:
                return failed(say(f"{label}: {problem}", f"{label}：{problem}"))
            unquoted = [call_id for call_id, text in outputs.items() if text not in second.output_text]
            if unquoted:
                return failed(say(f"{label}: the answer does not quote the output of {unquoted[0]}",
                                  f"{label}：回答没有引用 {unquoted[0]} 的输出"))
        return passed(say("request 2 continued each stored response with previous_response_id and only the new results, "
                          "and carried the whole context after store: false; every answer quotes the tool outputs",
                          "请求 2 用 previous_response_id 接续了每个已保存的响应，只带新的结果；在 store: false 之后带上了"
                          "整个上下文；每个回答都引用了工具的输出"))
    finally:
        course.close()


def request_2(task_item: dict, response: Response, outputs_by_call_id: dict[str, str], stored: bool) -> dict:
    """Reference: a stored response is continued by id, with only the results; otherwise the whole context."""
    results = [feedback_item(call_id, text) for call_id, text in outputs_by_call_id.items()]
    if stored:
        return {"previous_response_id": response.id, "input": results}
    return {"input": build_second_input(task_item, response, outputs_by_call_id), "store": False}


SOLUTIONS: Solutions = {
    "check_second_input": lambda: build_second_input,
    "check_request_2": lambda: request_2,
}


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
