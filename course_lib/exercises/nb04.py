"""Checks for notebook 04 (wiring feedback into the loop).

Both checks use real objects from the offline model, never look-alikes:

- `check_second_input(fn)`: the learner's `build_second_input(task_item, response, outputs_by_call_id)`
  gets two real first responses (one call; two calls in one turn) and the real tool outputs. The
  list it returns is checked link by link (task first, every original call kept unchanged, exactly
  one output per call, after it, under its `call_id`, carrying the tool's text), then sent to the
  offline model for real: the answer must quote every tool output.
- `check_final_text(fn)`: the learner's `final_text(response_dict) -> str` runs on real response
  bodies (the recorded fixture's two responses and three fresh ones) and must agree with the
  SDK's own `Response.output_text`.
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any

import openai
from openai.types.responses import Response

from course_lib.arguments import json_type_name
from course_lib.backend import model_name
from course_lib.course import Course, start_course
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.loop import execute_call, feedback_item
from course_lib.paths import fixtures_dir
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
    if not wire or wire[0] != task_item:
        return "input[0] must be the user's task item, unchanged: the model needs the question it is answering"
    for i, item in enumerate(wire):
        nulls = [key for key, value in item.items() if value is None]
        if nulls:
            return (f"input[{i}] carries null fields the model never sent ({', '.join(nulls)}): that is a plain "
                    "model_dump(); send the typed item or item.to_dict()")
    calls = [(n, item) for n, item in enumerate(response.output) if item.type == "function_call"]
    known = {call.call_id for _, call in calls}
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
            return f"input[{orphans[0]}] answers call_id {wrong!r}, which matches no call: use {call.call_id!r}"
        if not answers:
            return f"no function_call_output for call_id {call.call_id}: the model never receives that result"
        if len(answers) > 1:
            return f"{len(answers)} function_call_output items for call_id {call.call_id}: send exactly one"
        if answers[0] < kept[0]:
            return (f"the output for {call.call_id} (input[{answers[0]}]) comes before its call (input[{kept[0]}]): "
                    "the call goes first")
        output = wire[answers[0]].get("output")
        if not isinstance(output, str):
            return (f"the output for {call.call_id} is a JSON {json_type_name(output)}: send the tool's text as a "
                    "string (the response's root output is the array of items, not this one)")
        if output != outputs[call.call_id]:
            return f"the output for {call.call_id} is not the tool's text from outputs_by_call_id[{call.call_id!r}]"
    if orphans:
        return f"input[{orphans[0]}] answers call_id {wire[orphans[0]].get('call_id')!r}, which matches no call"
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


# ---- exercise 2: final_text -------------------------------------------------------------------


def recorded_responses() -> list[tuple[str, dict[str, Any]]]:
    """Real response bodies, labelled: the fixture's two, then three fresh ones from the offline model."""
    roundtrip = json.loads((fixtures_dir() / "responses_roundtrip.json").read_text(encoding="utf-8"))
    cases = [
        ("the fixture's response_2 (the final message)", roundtrip["response_2"]),
        ("the fixture's response_1 (a function_call only)", roundtrip["response_1"]),
    ]
    course = offline_course()
    try:
        course.run("Read my notes, please")
        cases.append(("a reply that asks which file", course.wire.exchanges[-1].response))
        course.run("Show the first 5 lines of /workspace/missing.txt")
        cases.append(("the answer about a missing file", course.wire.exchanges[-1].response))
        course.run(TWO_CALLS)
        cases.append(("the answer about two reads", course.wire.exchanges[-1].response))
    finally:
        course.close()
    return cases


def check_final_text(fn: Any) -> bool:
    """Run `fn(response_dict)` on real response bodies; it must equal the SDK's `output_text`."""
    if not_answered(fn):
        return failed("Not answered yet: define final_text(response_dict) -> str")
    if not callable(fn):
        return failed(f"pass the function itself (final_text), not {type(fn).__name__}")
    for label, body in recorded_responses():
        expected = Response.model_validate(body).output_text
        try:
            got = fn(copy.deepcopy(body))
        except KeyError as error:
            if error.args == ("output_text",):
                return failed("final_text looked up 'output_text' in the JSON: it is a property of the SDK's "
                              "Response object, not a field; walk output → message → content → output_text")
            return failed(f"final_text raised KeyError({error.args[0]!r}) on {label}: check each item's type "
                          "before reading its fields")
        except Exception as error:
            return failed(f"final_text raised {type(error).__name__}: {error} on {label}: check each item's type "
                          "before reading its fields")
        if not_answered(got):
            if got is None and expected == "":
                return failed(f"for {label} there is no message, so the final text is '' (you returned None)")
            return failed("Not answered yet: final_text still returns ...")
        if not isinstance(got, str):
            return failed(f"final_text must return a string; for {label} it returned {type(got).__name__}")
        if got != expected:
            return failed(f"for {label} you returned {_short(got)}, but its output_text is {_short(expected)}")
    return passed("final_text agrees with the SDK's output_text on all five real responses, calls-only included")


def final_text(response: dict[str, Any]) -> str:
    """Reference: every output_text part of every message item, in order, joined."""
    return "".join(
        part["text"]
        for item in response["output"] if item["type"] == "message"
        for part in item["content"] if part["type"] == "output_text"
    )  # fmt: skip


SOLUTIONS: Solutions = {
    "check_second_input": lambda: build_second_input,
    "check_final_text": lambda: final_text,
}
