"""Checks for notebook 07 (parallel calls).

- `check_pair_outputs(fn)`: the learner's `pair_outputs(calls, outputs) -> {call_id: output}`
  is run on real batches: the offline model's three reads, executed for real through
  `execute_batch` on the course's files server (with different latencies, so the outputs come
  back in the order the reads *finished*), plus a verbatim repeat, a reused `call_id` with other
  arguments, an output nobody asked for and a call left without output.
- `check_plan(fn)`: the learner's `plan(calls, tools) -> [[call_id, ...], ...]` (waves: reads
  together, every write alone, the model's order kept around each write) is run on six turns
  made of real `Call` and `Tool` objects, and the first broken rule is named.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import anyio
from openai.types.responses import Response
from pydantic import BaseModel, ConfigDict

from course_lib.arguments import ReadTextFileArgs
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.execution import CallContext, Executor, Session, Tool
from course_lib.parallel import Call, execute_batch

THREE_READS = ("Show the first 2 lines of /workspace/notes.txt, the last 3 lines of /workspace/todo.md "
               "and the first 4 lines of /workspace/docs/mcp.md")  # fmt: skip
"""The request whose real function calls both checks start from."""

READ = "fs__read_text_file"
DELAYS = {"/workspace/notes.txt": 0.15, "/workspace/todo.md": 0.05, "/workspace/docs/mcp.md": 0.10}
"""Seconds each read waits before it runs: the first call the model sent finishes last."""


def model_calls() -> list[Call]:
    """The three `function_call` items the offline model really sends for `THREE_READS`."""
    from course_lib.arguments import input_schema
    from course_lib.offline_model import respond

    tool = {"type": "function", "name": READ, "description": "Read a text file from the workspace.",
            "parameters": input_schema()}  # fmt: skip
    response = Response.model_validate(respond({"model": "gpt-4.1", "input": THREE_READS, "tools": [tool]}))
    return [Call.from_item(item) for item in response.output if item.type == "function_call"]


def _describe(call: Call) -> str:
    """`call_x (read /workspace/notes.txt, head 2)`: a call as the learner knows it."""
    try:
        arguments = json.loads(call.arguments)
    except ValueError:
        arguments = {}
    if call.name == READ and isinstance(arguments, dict):
        extra = next((f", {k} {arguments[k]}" for k in ("head", "tail") if arguments.get(k)), "")
        return f"{call.call_id} (read {arguments.get('path')}{extra})"
    return f"{call.call_id} ({call.name})"


# ---- exercise 1: pair_outputs -----------------------------------------------------------------


def _real_outputs() -> dict[str, tuple[list[Call], list[dict[str, Any]] | None]]:
    """The cases: label → (calls in the model's order, outputs in the order they arrived).

    Every output was produced by a real `execute_batch` on a fresh files host.
    """
    from course_lib.host import files_host

    calls = model_calls()
    finished: list[str] = []
    with files_host() as host:
        read = host.executor_tool(READ, ReadTextFileArgs)

        async def slow_read(arguments: ReadTextFileArgs, context: CallContext) -> Any:
            await anyio.sleep(DELAYS.get(arguments.path, 0.0))
            data = await read.handler(arguments, context)
            finished.append(context.call_id)
            return data

        executor = Executor([replace(read, handler=slow_read)])
        session = Session("learner")

        def run(batch: list[Call]) -> list[dict[str, Any]]:
            return [e.feedback_item() for e in host.run(execute_batch, executor, batch, session)]

        in_model_order = run(calls)
        by_id = {item["call_id"]: item for item in in_model_order}
        as_finished = [by_id[call_id] for call_id in finished]
        repeated = calls + [calls[0]]
        reused = calls + [Call(calls[0].call_id, READ, '{"path":"/workspace/data/config.json"}')]
        cases = {
            "the three reads, outputs in the order they finished": (calls, as_finished),
            "the same outputs, in reverse order": (calls, list(reversed(as_finished))),
            "the model's first call sent twice, verbatim": (repeated, run(repeated)),
            "a call_id reused with different arguments": (reused, run(reused)),
            "an output whose call_id matches no call": (
                calls, as_finished + [{"type": "function_call_output", "call_id": "call_never_made", "output": "{}"}]),
            "a call left without an output": (calls, as_finished[1:]),
        }  # fmt: skip
    return cases


RAISES = {
    "a call_id reused with different arguments": (
        "{cid} is used twice, the second time with other arguments ({other}); your function accepted it. "
        "Raise ValueError: one of the two calls would get the other's result."),
    "an output whose call_id matches no call": (
        "an output arrived for call_never_made, which no call has; your function accepted it. Raise ValueError "
        "(the Responses API refuses it too: 'No tool call found for function call output')."),
    "a call left without an output": (
        "{missing} has no output; your function accepted it. Raise ValueError (the API refuses an unanswered "
        "call: 'No tool output found for function call')."),
}  # fmt: skip


def _judge(label: str, calls: list[Call], outputs: list[dict[str, Any]], got: Any) -> str | None:
    """What is wrong with `got` for this case, or None."""
    expected = _pair_outputs_solution(calls, outputs)
    if not isinstance(got, dict):
        return f"pair_outputs must return a dict {{call_id: output text}}; it returned a {type(got).__name__}."
    first = {}
    for call in calls:
        first.setdefault(call.call_id, call)
    for call_id in expected:
        if call_id not in got:
            return f"case '{label}': {_describe(first[call_id])} is missing from your dict."
    for key in got:
        if key not in expected:
            return f"case '{label}': key {key!r} is not the call_id of any call."
    owner = {item["output"]: item["call_id"] for item in outputs}
    for call_id, text in expected.items():
        if got[call_id] != text:
            if not isinstance(got[call_id], str):
                return (f"case '{label}': the value for {call_id} is a {type(got[call_id]).__name__}, not the output "
                        "text. Keep item['output'] exactly as it arrived: do not json.loads it, and do not keep the "
                        "whole function_call_output dict.")
            other = owner.get(got[call_id])
            if other is not None and other != call_id:
                order = ", ".join(item["call_id"] for item in outputs)
                return (f"case '{label}': {_describe(first[call_id])} got the output of {_describe(first[other])}. "
                        f"The outputs arrived in this order: {order}. Pair by call_id, not by position.")
            return f"case '{label}': the value for {call_id} must be its output text, exactly as it arrived."
    if list(got) != list(expected):
        return (f"case '{label}': right pairs, wrong order. Keep the model's order of the calls: "
                f"{', '.join(expected)}; yours is {', '.join(got)}.")
    return None


def check_pair_outputs(fn: Callable[[list[Call], list[dict[str, Any]]], dict[str, str]]) -> bool:
    """Run `fn` on six real batches and explain the first case it gets wrong."""
    if not_answered(fn):
        return failed("Not answered yet: define pair_outputs(calls, outputs) and pass the function itself.")
    if not callable(fn):
        return failed(f"Pass the function itself (pair_outputs, without parentheses); you passed {fn!r}.")
    for label, (calls, outputs) in _real_outputs().items():
        try:
            got = fn(list(calls), copy.deepcopy(outputs))
        except ValueError as error:
            if label in RAISES:
                continue
            if label.startswith("the model's first call sent twice"):
                return failed(f"case '{label}': you raised ValueError ({error}), but an exact repeat is the same "
                              "call (same call_id, tool and arguments): it runs once and keeps one entry.")
            return failed(f"case '{label}': pair_outputs raised ValueError: {error}")
        except LookupError as error:
            if label in RAISES:  # e.g. texts[call.call_id] for the call with no output
                return failed(f"case '{label}': pair_outputs raised {type(error).__name__} ({error}) where a "
                              "ValueError is wanted: check for the missing or unknown call_id and raise "
                              "ValueError naming it, so the caller can tell a broken batch from a bug.")
            return failed(f"case '{label}': pair_outputs raised {type(error).__name__}: {error}. Look outputs up by "
                          "call_id, and walk the calls (not the outputs) for the keys.")
        except Exception as error:
            return failed(f"case '{label}': pair_outputs raised {type(error).__name__}: {error}. Each call is a "
                          "Call (call_id, name, arguments); each output a dict with call_id and output.")
        if label in RAISES:
            other = next((c.arguments for c in calls[1:] if c.call_id == calls[0].call_id), "")
            answered = {item["call_id"] for item in outputs}
            missing = next((_describe(c) for c in calls if c.call_id not in answered), "")
            return failed(f"case '{label}': " + RAISES[label].format(cid=calls[0].call_id, other=other, missing=missing))
        problem = _judge(label, calls, outputs, got)
        if problem:
            return failed(problem)
    return passed("all 6 batches right: outputs paired by call_id in the model's order, and the three "
                  "broken batches refused.")


def _pair_outputs_solution(calls: list[Call], outputs: list[dict[str, Any]]) -> dict[str, str]:
    first: dict[str, Call] = {}
    for call in calls:
        seen = first.setdefault(call.call_id, call)
        if (seen.name, seen.arguments) != (call.name, call.arguments):
            raise ValueError(f"call_id {call.call_id} was reused with different arguments")
    texts: dict[str, str] = {}
    for item in outputs:
        if item["call_id"] not in first:
            raise ValueError(f"no call has call_id {item['call_id']}")
        texts.setdefault(item["call_id"], item["output"])
    if missing := [call_id for call_id in first if call_id not in texts]:
        raise ValueError(f"no output for {', '.join(missing)}")
    return {call_id: texts[call_id] for call_id in first}


# ---- exercise 2: plan -------------------------------------------------------------------------


class _NoteArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    title: str
    text: str


class _QueryArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    query: str


async def _unused(arguments: Any, context: CallContext) -> Any:
    raise AssertionError("plan() only schedules; nothing runs")


def plan_tools() -> dict[str, Tool]:
    """The registry the plans are checked against: two reads and one write."""
    tools = [
        Tool(READ, "Read a text file from the workspace.", ReadTextFileArgs, _unused),
        Tool("search_notes", "Search the user's notes.", _QueryArgs, _unused),
        Tool("save_note", "Save a note for the user (changes data).", _NoteArgs, _unused, side_effect=True),
    ]
    return {tool.name: tool for tool in tools}


def _read(call_id: str, path: str) -> Call:
    return Call(call_id, READ, json.dumps({"path": path}))


def _save(call_id: str, title: str) -> Call:
    return Call(call_id, "save_note", json.dumps({"title": title, "text": "..."}))


def plan_cases() -> dict[str, list[Call]]:
    """label → one turn's calls, in the model's order."""
    return {
        "three reads from the model": model_calls(),
        "read, save, read": [_read("call_r1", "/workspace/notes.txt"), _save("call_w1", "gaps"),
                             _read("call_r2", "/workspace/todo.md")],
        "two saves to the same note": [_save("call_w1", "gaps"), _save("call_w2", "gaps")],
        "a long mixed turn": [_read("call_r1", "/workspace/notes.txt"), _read("call_r2", "/workspace/todo.md"),
                              _save("call_w1", "gaps"), Call("call_s1", "search_notes", '{"query":"call_id"}'),
                              _read("call_r3", "/workspace/docs/mcp.md"), _save("call_w2", "gaps"),
                              _save("call_w3", "todo"), _read("call_r4", "/workspace/data/config.json")],
        "a tool the registry does not know": [_read("call_r1", "/workspace/notes.txt"),
                                              Call("call_x1", "delete_file", '{"path":"/workspace/todo.md"}'),
                                              _read("call_r2", "/workspace/todo.md")],
        "no calls at all": [],
    }  # fmt: skip


def _alone(call: Call, tools: dict[str, Tool]) -> bool:
    """A write, or a tool nobody registered (nothing says it is read-only): it runs alone."""
    tool = tools.get(call.name)
    return tool is None or tool.side_effect


def _why_alone(call: Call, tools: dict[str, Tool]) -> str:
    if call.name not in tools:
        return (f"{call.call_id} calls {call.name}, which is not in the registry: nothing says it is read-only, "
                "so treat it like a write")
    return f"{call.call_id} ({call.name}) has a side effect"


def _judge_plan(label: str, calls: list[Call], tools: dict[str, Tool], got: Any) -> str | None:
    """What is wrong with `got` as the waves of `calls`, or None."""
    where = f"case '{label}'"
    if not isinstance(got, list) or not all(isinstance(wave, list) for wave in got):
        return f"{where}: plan must return a list of waves, each a list of call_ids; got {got!r:.80}."
    by_id = {call.call_id: call for call in calls}
    wave_of: dict[str, int] = {}
    for n, wave in enumerate(got, start=1):
        if not wave:
            return f"{where}: wave {n} is empty. Leave empty waves out."
        for call_id in wave:
            if isinstance(call_id, Call):
                return f"{where}: wave {n} holds a Call object; put its call_id (call.call_id) in the wave instead."
            if call_id not in by_id:
                return f"{where}: {call_id!r} in wave {n} is not the call_id of any call in this turn."
            if call_id in wave_of:
                return f"{where}: {call_id} is in waves {wave_of[call_id]} and {n}: it would run twice."
            wave_of[call_id] = n
    missing = [call for call in calls if call.call_id not in wave_of]
    if missing:
        last_write = max((i for i, c in enumerate(calls) if _alone(c, tools)), default=-1)
        trailing = [c for c in calls[last_write + 1 :]]
        if missing == trailing:
            return (f"{where}: {', '.join(c.call_id for c in missing)} (the reads after the last write) are missing "
                    "from your plan: after the loop, add the wave you were still collecting.")
        return f"{where}: {_describe(missing[0])} is missing from your plan; every call must run (or be refused) once."
    for n, wave in enumerate(got, start=1):
        lonely = [by_id[c] for c in wave if _alone(by_id[c], tools)]
        if lonely and len(wave) > 1:
            others = ", ".join(c for c in wave if c != lonely[0].call_id)
            return f"{where}: wave {n} runs {lonely[0].call_id} together with {others}, but {_why_alone(lonely[0], tools)}: it runs alone."
    for i, earlier in enumerate(calls):
        for later in calls[i + 1 :]:
            if (_alone(earlier, tools) or _alone(later, tools)) and wave_of[later.call_id] < wave_of[earlier.call_id]:
                write = earlier if _alone(earlier, tools) else later
                return (f"{where}: your plan runs {later.call_id} before {earlier.call_id}, although the model sent it "
                        f"after. {_why_alone(write, tools)}: keep the model's order around it.")
    expected = _plan_solution(calls, tools)
    if len(got) > len(expected):
        for n in range(1, len(got)):
            if not any(_alone(by_id[c], tools) for c in got[n - 1] + got[n]):
                return (f"{where}: waves {n} and {n + 1} hold only reads with no write between them: merge them. "
                        "Every extra wave costs one more round of latency.")
    if [set(w) for w in got] != [set(w) for w in expected]:
        return f"{where}: expected the waves {expected}, got {got}."
    return None


def check_plan(fn: Callable[[list[Call], dict[str, Tool]], list[list[str]]]) -> bool:
    """Run `fn` on six turns and name the first rule its plan breaks."""
    if not_answered(fn):
        return failed("Not answered yet: define plan(calls, tools) and pass the function itself.")
    if not callable(fn):
        return failed(f"Pass the function itself (plan, without parentheses); you passed {fn!r}.")
    tools = plan_tools()
    for label, calls in plan_cases().items():
        try:
            got = fn(list(calls), dict(tools))
        except Exception as error:
            return failed(f"case '{label}': plan raised {type(error).__name__}: {error}. Look the tool up with "
                          "tools.get(call.name): a name may be missing from the registry.")
        problem = _judge_plan(label, calls, tools, got)
        if problem:
            return failed(problem)
    return passed("all 6 turns planned right: reads share a wave, every write runs alone, the model's order "
                  "is kept around each write.")


def _plan_solution(calls: list[Call], tools: dict[str, Tool]) -> list[list[str]]:
    waves: list[list[str]] = []
    reads: list[str] = []
    for call in calls:
        tool = tools.get(call.name)
        if tool is None or tool.side_effect:
            if reads:
                waves.append(reads)
                reads = []
            waves.append([call.call_id])
        else:
            reads.append(call.call_id)
    if reads:
        waves.append(reads)
    return waves


SOLUTIONS: Solutions = {
    "check_pair_outputs": lambda: _pair_outputs_solution,
    "check_plan": lambda: _plan_solution,
}

