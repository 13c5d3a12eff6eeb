"""Checks for notebook 04 (wiring feedback into the loop).

Both checks use real objects from the offline model, never look-alikes:

- `check_second_input(fn)`: the learner's `build_second_input(task_item, response, outputs_by_call_id)`
  gets two real first responses (one call; two calls in one turn) and the real tool outputs. The
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
"""

from __future__ import annotations

import os
from typing import Any

import openai
from openai.types.responses import Response

from course_lib.arguments import json_type_name
from course_lib.backend import model_name
from course_lib.course import Course, start_course
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.loop import execute_call, feedback_item
from course_lib.results import feedback_text
from course_lib.show import wire_json

ONE_CALL = "Show the first 20 lines of /workspace/notes.txt"
TWO_CALLS = "Show the first 3 lines of /workspace/notes.txt and the last 2 lines of /workspace/todo.md"


def offline_course() -> Course:
    """`start_course()` on the offline model whatever the environment says: a check must not
    depend on a key or a network (the client picks its backend once, when it is made)."""
    key = os.environ.pop("OPENAI_API_KEY", None)
    try:
        return start_course(quiet=True)
    finally:
        if key is not None:
            os.environ["OPENAI_API_KEY"] = key


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---- exercise 1: build_second_input -----------------------------------------------------------


def _first_problem(task_item: dict, response: Response, outputs: dict[str, str], items: Any) -> str | None:
    """The first broken link of a second-request input, in words; None when every link holds."""
    if not isinstance(items, list):
        return f"build_second_input must return a list of input items, got {type(items).__name__}"
    wire = [wire_json(item) for item in items]
    for i, item in enumerate(wire):
        if not isinstance(item, dict):
            return f"input[{i}] is {type(item).__name__}: every input item is a JSON object (a dict or a typed item)"
    for i, item in enumerate(wire):
        if item.get("role") == "tool" or "tool_call_id" in item:
            return (f"input[{i}] is a Chat Completions tool message (role 'tool', tool_call_id): in the Responses "
                    "API a result is an item of type 'function_call_output' with the call's call_id")
    if not wire or wire[0] != task_item:
        return "input[0] must be the user's task item, unchanged: the model needs the question it is answering"
    for i, item in enumerate(wire):
        nulls = [key for key, value in item.items() if value is None]
        if nulls:
            return (f"input[{i}] carries null fields the model never sent ({', '.join(nulls)}): that is a plain "
                    "model_dump(); send the typed item or item.to_dict()")
    calls = [(n, item) for n, item in enumerate(response.output) if item.type == "function_call"]
    known = {call.call_id for _, call in calls}
    item_ids = {call.id: call.call_id for _, call in calls if call.id}
    orphans = [i for i, item in enumerate(wire) if item.get("type") == "function_call_output"
               and item.get("call_id") not in known]  # fmt: skip
    for n, call in calls:
        kept = [i for i, item in enumerate(wire) if item.get("type") == "function_call" and item.get("call_id") == call.call_id]
        if not kept:
            where = f" (it is response.output[{n}]: walk every output item, not only output[0])" if n else ""
            return f"the original function_call {call.call_id} is missing{where}; an output without its call is refused"
        sent = wire[kept[0]]
        if not isinstance(sent.get("arguments"), str):
            kind = json_type_name(sent.get("arguments"))
            return f"the function_call {call.call_id} has arguments as a JSON {kind}: keep the model's arguments text unchanged"
        if sent.get("arguments") != call.arguments or sent.get("name") != call.name:
            return f"the function_call {call.call_id} was changed: send back exactly the name and arguments the model sent"
        answers = [i for i, item in enumerate(wire) if item.get("type") == "function_call_output"
                   and item.get("call_id") == call.call_id]  # fmt: skip
        if not answers and orphans:
            wrong = wire[orphans[0]].get("call_id")
            mixup = _id_mixup(item_ids, wrong)
            return f"input[{orphans[0]}] answers call_id {wrong!r}, which matches no call{mixup}: use {call.call_id!r}"
        if not answers:
            return f"no function_call_output for call_id {call.call_id}: the model never receives that result"
        if len(answers) > 1:
            return f"{len(answers)} function_call_output items for call_id {call.call_id}: send exactly one"
        if answers[0] < kept[0]:
            return (f"the output for {call.call_id} (input[{answers[0]}]) comes before its call (input[{kept[0]}]): "
                    "the call goes first")
        problem = _output_problem(call.call_id, wire[answers[0]].get("output"), outputs[call.call_id])
        if problem:
            return problem
    if orphans:
        given = wire[orphans[0]].get("call_id")
        return f"input[{orphans[0]}] answers call_id {given!r}, which matches no call{_id_mixup(item_ids, given)}"
    return None


def _id_mixup(call_ids: dict[str, str], given: Any) -> str:
    """A hint when `given` is a call's item `id` (fc_…) where its `call_id` belongs; '' otherwise."""
    for item_id, call_id in call_ids.items():
        if given == item_id:
            return f" ({given!r} is the call item's id; the feedback quotes its call_id, {call_id!r})"
    return ""


def _output_problem(call_id: str, output: Any, expected: str) -> str | None:
    """What is wrong with one `function_call_output.output`, or None. It may be the tool's text, or a list
    of content parts (`input_text`, `input_image`, `input_file`) whose `input_text` parts carry that text."""
    if isinstance(output, str):
        if output != expected:
            return f"the output for {call_id} is not the tool's text from outputs_by_call_id[{call_id!r}]"
        return None
    if isinstance(output, dict):
        if "content" in output or "isError" in output:
            return (f"the output for {call_id} is an MCP result object: send the text it carries (a string, or a "
                    "list of input_text parts), not the object")
        return (f"the output for {call_id} is a JSON object: send the tool's text as a string or as a list of "
                "input_text parts (the response's root output is the array of items, not this one)")
    if not isinstance(output, list):
        return f"the output for {call_id} is a JSON {json_type_name(output)}: send a string or a list of content parts"
    for j, part in enumerate(output):
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            return (f"output[{j}] for {call_id} has type 'text': that is an MCP content block; a function_call_output "
                    "part is 'input_text' (or 'input_image', 'input_file')")
        if kind in ("output_text", "refusal"):
            return (f"output[{j}] for {call_id} has type {kind!r}, which only the model writes; the tool's text goes "
                    "back as 'input_text'")
        if kind not in ("input_text", "input_image", "input_file"):
            return (f"output[{j}] for {call_id} is not a content part: each part is an object with type 'input_text', "
                    "'input_image' or 'input_file'")
    if feedback_text(output) != expected:
        return f"the input_text parts of the output for {call_id} do not carry the tool's text, unchanged"
    return None


def check_second_input(fn: Any) -> bool:
    """Run `fn(task_item, response, outputs_by_call_id)` on two real first responses and send its
    list to the offline model; pass when every link holds and the answer quotes each tool output."""
    if not_answered(fn):
        return failed("Not answered yet: define build_second_input(task_item, response, outputs_by_call_id)")
    if not callable(fn):
        return failed(f"pass the function itself (build_second_input), not {type(fn).__name__}")
    course = offline_course()
    try:
        tools = course.host.responses_tools()
        for task in (ONE_CALL, TWO_CALLS):
            task_item = {"role": "user", "content": task}
            first = course.client.responses.create(model=model_name(), input=[task_item], tools=tools)
            calls = [item for item in first.output if item.type == "function_call"]
            outputs = {call.call_id: execute_call(call, course.host)[0]["output"] for call in calls}
            label = "on the two-call task" if len(calls) > 1 else "on the one-call task"
            try:
                items = fn(dict(task_item), first, dict(outputs))
            except Exception as error:  # the learner's code: report, don't crash the notebook
                return failed(f"{label}, build_second_input raised {type(error).__name__}: {error}")
            if not_answered(items):
                return failed("Not answered yet: build_second_input still returns ...")
            problem = _first_problem(task_item, first, outputs, items)
            try:
                second = course.client.responses.create(model=model_name(), input=items, tools=tools)
            except openai.BadRequestError as error:
                message = error.body.get("message") if isinstance(error.body, dict) else error.message
                return failed(f"{label}: {problem or 'the request was refused'}; the API answered 400: {message}")
            if problem:
                return failed(f"{label}: {problem}")
            unquoted = [call_id for call_id, text in outputs.items() if text not in second.output_text]
            if unquoted:
                return failed(f"{label}: the answer does not quote the output of {unquoted[0]}")
        return passed("both second requests were accepted, and the answers quote every tool output "
                      "(one call, then two calls in one turn)")
    finally:
        course.close()


def build_second_input(task_item: dict, response: Response, outputs_by_call_id: dict[str, str]) -> list:
    """Reference: the task, then each output item of the response as it was sent, each call
    followed by its feedback under the same call_id."""
    items: list[Any] = [task_item]
    for item in response.output:
        items.append(item.to_dict())
        if item.type == "function_call":
            items.append(feedback_item(item.call_id, outputs_by_call_id[item.call_id]))
    return items


# ---- exercise 2: request 2, with previous_response_id or with explicit context -------------------

_FIELDS = ("input", "previous_response_id", "store")


def _chained_problem(task_item: dict, response: Response, outputs: dict[str, str], fields: dict) -> str | None:
    """What is wrong with a request 2 that continues a stored response 1; None when it is right."""
    previous = fields["previous_response_id"]
    calls = [item for item in response.output if item.type == "function_call"]
    if previous != response.id:
        for call in calls:
            if previous in (call.id, call.call_id):
                which = "the call item's id" if previous == call.id else "the call's call_id"
                return (f"previous_response_id is {previous!r}, {which}: it names a response, so it is "
                        f"response.id ({response.id!r})")
        return f"previous_response_id is {_short(previous)}: it must be response 1's id, response.id ({response.id!r})"
    items = fields.get("input")
    if isinstance(items, str) or not isinstance(items, list):
        return "with previous_response_id, input is the list of new items: one function_call_output per call"
    wire = [wire_json(item) for item in items]
    if any(isinstance(item, dict) and item.get("type") == "function_call" for item in wire):
        return ("input sends the function_call again, but response 1 is stored with it: with previous_response_id "
                "the platform already has the task and the call, so a second copy is a duplicate; send only the "
                "function_call_output items")
    if task_item in wire:
        return ("input sends the task again, but it is stored with response 1: with previous_response_id the model "
                "would read the question twice; send only the function_call_output items")
    for i, item in enumerate(wire):
        if not isinstance(item, dict) or item.get("type") != "function_call_output":
            return f"input[{i}] is not a function_call_output: with previous_response_id only the new results go in input"
    item_ids = {call.id: call.call_id for call in calls if call.id}
    for call in calls:
        answers = [item for item in wire if item.get("call_id") == call.call_id]
        if not answers:
            stray = next((item.get("call_id") for item in wire if item.get("call_id") not in outputs), None)
            return (f"no function_call_output for call_id {call.call_id}"
                    f"{_id_mixup(item_ids, stray) if stray else ''}: each call of response 1 needs its result")
        if len(answers) > 1:
            return f"{len(answers)} function_call_output items for call_id {call.call_id}: send exactly one"
        problem = _output_problem(call.call_id, answers[0].get("output"), outputs[call.call_id])
        if problem:
            return problem
    return None


def _request_problem(task_item: dict, response: Response, outputs: dict[str, str], stored: bool, fields: Any) -> str | None:
    """The first thing wrong with the learner's request-2 fields, in words; None when they are right."""
    if not isinstance(fields, dict):
        return (f"request_2 must return a dict of request fields, e.g. {{'previous_response_id': ..., 'input': [...]}}; "
                f"got {type(fields).__name__}")
    extra = [key for key in fields if key not in _FIELDS]
    if extra:
        if set(extra) & {"model", "tools"}:
            return f"return only {', '.join(_FIELDS)}: the check adds model and tools itself (you set {', '.join(extra)})"
        return f"{', '.join(map(repr, extra))} is not a request field this exercise needs; use {', '.join(_FIELDS)}"
    if "input" not in fields:
        return "every request needs input: the new items (with previous_response_id) or the whole context"
    if fields.get("previous_response_id") is not None:
        if not stored:
            return ("response 1 was made with store: false, so the platform kept nothing: previous_response_id "
                    "gets a 400 'Previous response ... not found'; send the whole context in input instead")
        return _chained_problem(task_item, response, outputs, fields)
    if stored:
        return ("response 1 was stored: continue it with previous_response_id=response.id and send only the new "
                "items (the function_call_output for each call), instead of the whole context again")
    problem = _first_problem(task_item, response, outputs, fields["input"])
    if problem:
        return f"with store: false the input must carry the whole story: {problem}"
    if fields.get("store") is not False:
        return ("request 1 was made with store: false (nothing may be kept on the platform), but request 2 "
                "leaves store at its default, true: it would be stored; pass store=False again")
    return None


REQUEST_2_CASES = (("one call, stored", ONE_CALL, True), ("two calls in one turn, stored", TWO_CALLS, True),
                   ("one call, made with store: false", ONE_CALL, False))  # fmt: skip


def check_request_2(fn: Any) -> bool:
    """Run `fn(task_item, response, outputs_by_call_id, stored)` on three real first responses (two stored,
    one made with `store: false`) and send what it returns as request 2; pass when each request is the right
    kind, is accepted, and its answer quotes every tool output."""
    if not_answered(fn):
        return failed("Not answered yet: define request_2(task_item, response, outputs_by_call_id, stored)")
    if not callable(fn):
        return failed(f"pass the function itself (request_2), not {type(fn).__name__}")
    course = offline_course()
    try:
        tools = course.host.responses_tools()
        for label, task, stored in REQUEST_2_CASES:
            task_item = {"role": "user", "content": task}
            store = {} if stored else {"store": False}
            first = course.client.responses.create(model=model_name(), input=[task_item], tools=tools, **store)
            calls = [item for item in first.output if item.type == "function_call"]
            outputs = {call.call_id: execute_call(call, course.host)[0]["output"] for call in calls}
            try:
                fields = fn(dict(task_item), first, dict(outputs), stored)
            except Exception as error:  # the learner's code: report, don't crash the notebook
                return failed(f"{label}: request_2 raised {type(error).__name__}: {error}")
            if not_answered(fields):
                return failed("Not answered yet: request_2 still returns ...")
            problem = _request_problem(task_item, first, outputs, stored, fields)
            sendable = isinstance(fields, dict) and not set(fields) & {"model", "tools"}
            try:
                second = course.client.responses.create(model=model_name(), tools=tools, **(fields if sendable else {"input": []}))
            except openai.BadRequestError as error:
                message = error.body.get("message") if isinstance(error.body, dict) else error.message
                return failed(f"{label}: {problem or 'the request was refused'}; the API answered 400: {message}")
            except TypeError as error:  # e.g. a field the SDK's create() does not take
                return failed(f"{label}: {problem or error}")
            if problem:
                return failed(f"{label}: {problem}")
            unquoted = [call_id for call_id, text in outputs.items() if text not in second.output_text]
            if unquoted:
                return failed(f"{label}: the answer does not quote the output of {unquoted[0]}")
        return passed("request 2 continued each stored response with previous_response_id and only the new results, "
                      "and carried the whole context after store: false; every answer quotes the tool outputs")
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
