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
from course_lib.lang import say
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
    from course_lib.exercises.offline import model_name
    from course_lib.offline_model import respond

    tool = {"type": "function", "name": READ, "description": "Read a text file from the workspace.",
            "parameters": input_schema()}  # fmt: skip
    response = Response.model_validate(respond({"model": model_name(), "input": THREE_READS, "tools": [tool]}))
    return [Call.from_item(item) for item in response.output if item.type == "function_call"]


def _describe(call: Call) -> str:
    """`call_x (read /workspace/notes.txt, head 2)`: a call as the learner knows it."""
    try:
        arguments = json.loads(call.arguments)
    except ValueError:
        arguments = {}
    if call.name == READ and isinstance(arguments, dict):
        extra = next((say(", {k} {n}", "，{k} {n}", k=k, n=arguments[k]) for k in ("head", "tail") if arguments.get(k)), "")
        return say("{id} (read {path}{extra})", "{id}（读取 {path}{extra}）", id=call.call_id, path=arguments.get("path"),
                   extra=extra)
    return say("{id} ({name})", "{id}（{name}）", id=call.call_id, name=call.name)


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
RAISES_ZH = {
    "a call_id reused with different arguments": (
        "{cid} 用了两次，第二次参数不同（{other}）；你的函数接受了它。请抛出 ValueError：否则两个调用中的一个会拿到另一个的结果。"),
    "an output whose call_id matches no call": (
        "到达了一个属于 call_never_made 的输出，而没有任何调用用这个 call_id；你的函数接受了它。请抛出 ValueError"
        "（Responses API 也会拒绝它：'No tool call found for function call output'）。"),
    "a call left without an output": (
        "{missing} 没有输出；你的函数接受了它。请抛出 ValueError（API 会拒绝没有输出的调用："
        "'No tool output found for function call'）。"),
}  # fmt: skip
"""The same messages in the zh-CN edition (the case labels stay as `_real_outputs` writes them)."""


def _judge(label: str, calls: list[Call], outputs: list[dict[str, Any]], got: Any) -> str | None:
    """What is wrong with `got` for this case, or None."""
    expected = _pair_outputs_solution(calls, outputs)
    if not isinstance(got, dict):
        return say("pair_outputs must return a dict {{call_id: output text}}; it returned a {kind}.",
                   "pair_outputs 必须返回一个 dict {{call_id: 输出文本}}；它返回的是 {kind}。", kind=type(got).__name__)
    first = {}
    for call in calls:
        first.setdefault(call.call_id, call)
    for call_id in expected:
        if call_id not in got:
            return say("case '{label}': {call} is missing from your dict.", "例子 '{label}'：你的 dict 里缺少 {call}。",
                       label=label, call=_describe(first[call_id]))
    for key in got:
        if key not in expected:
            return say("case '{label}': key {key!r} is not the call_id of any call.",
                       "例子 '{label}'：键 {key!r} 不是任何调用的 call_id。", label=label, key=key)
    owner = {item["output"]: item["call_id"] for item in outputs}
    for call_id, text in expected.items():
        if got[call_id] != text:
            if not isinstance(got[call_id], str):
                return say("case '{label}': the value for {cid} is a {kind}, not the output text. Keep item['output'] "
                           "exactly as it arrived: do not json.loads it, and do not keep the whole function_call_output dict.",
                           "例子 '{label}'：{cid} 的值是 {kind}，不是输出文本。请原样保留 item['output']：不要对它 json.loads，"
                           "也不要保留整个 function_call_output dict。", label=label, cid=call_id, kind=type(got[call_id]).__name__)
            other = owner.get(got[call_id])
            if other is not None and other != call_id:
                order = ", ".join(item["call_id"] for item in outputs)
                return say("case '{label}': {call} got the output of {other}. The outputs arrived in this order: "
                           "{order}. Pair by call_id, not by position.",
                           "例子 '{label}'：{call}拿到了 {other}的输出。输出到达的顺序是：{order}。请按 call_id 配对，不要按位置。",
                           label=label, call=_describe(first[call_id]), other=_describe(first[other]), order=order)
            return say("case '{label}': the value for {cid} must be its output text, exactly as it arrived.",
                       "例子 '{label}'：{cid} 的值必须是它的输出文本，与到达时一模一样。", label=label, cid=call_id)
    if list(got) != list(expected):
        return say("case '{label}': right pairs, wrong order. Keep the model's order of the calls: {want}; yours is {got}.",
                   "例子 '{label}'：配对对了，顺序错了。请保持模型给出的调用顺序：{want}；你的是 {got}。",
                   label=label, want=", ".join(expected), got=", ".join(got))
    return None


def check_pair_outputs(fn: Callable[[list[Call], list[dict[str, Any]]], dict[str, str]]) -> bool:
    """Run `fn` on six real batches and explain the first case it gets wrong."""
    if not_answered(fn):
        return failed(say("Not answered yet: define pair_outputs(calls, outputs) and pass the function itself.",
                          "还没有作答：定义 pair_outputs(calls, outputs)，并传入函数本身。"))
    if not callable(fn):
        return failed(say("Pass the function itself (pair_outputs, without parentheses); you passed {fn!r}.",
                          "请传入函数本身（pair_outputs，不带括号）；你传入的是 {fn!r}。", fn=fn))
    for label, (calls, outputs) in _real_outputs().items():
        try:
            got = fn(list(calls), copy.deepcopy(outputs))
        except ValueError as error:
            if label in RAISES:
                continue
            if label.startswith("the model's first call sent twice"):
                return failed(say("case '{label}': you raised ValueError ({error}), but an exact repeat is the same "
                                  "call (same call_id, tool and arguments): it runs once and keeps one entry.",
                                  "例子 '{label}'：你抛出了 ValueError（{error}），但完全相同的重复就是同一个调用"
                                  "（同样的 call_id、工具和参数）：它只运行一次，只保留一个条目。", label=label, error=error))
            return failed(say("case '{label}': pair_outputs raised ValueError: {error}",
                              "例子 '{label}'：pair_outputs 抛出了 ValueError：{error}", label=label, error=error))
        except LookupError as error:
            if label in RAISES:  # e.g. texts[call.call_id] for the call with no output
                return failed(say("case '{label}': pair_outputs raised {kind} ({error}) where a ValueError is wanted: "
                                  "check for the missing or unknown call_id and raise ValueError naming it, so the "
                                  "caller can tell a broken batch from a bug.",
                                  "例子 '{label}'：pair_outputs 抛出了 {kind}（{error}），这里应该是 ValueError：检查缺失或"
                                  "未知的 call_id，并抛出指明它的 ValueError，这样调用方才能分清坏掉的批次和 bug。",
                                  label=label, kind=type(error).__name__, error=error))
            return failed(say("case '{label}': pair_outputs raised {kind}: {error}. Look outputs up by call_id, and "
                              "walk the calls (not the outputs) for the keys.",
                              "例子 '{label}'：pair_outputs 抛出了 {kind}：{error}。请按 call_id 查找输出，并遍历调用"
                              "（而不是输出）来得到键。", label=label, kind=type(error).__name__, error=error))
        except Exception as error:
            return failed(say("case '{label}': pair_outputs raised {kind}: {error}. Each call is a Call (call_id, "
                              "name, arguments); each output a dict with call_id and output.",
                              "例子 '{label}'：pair_outputs 抛出了 {kind}：{error}。每个调用是一个 Call（call_id、name、"
                              "arguments）；每个输出是一个含 call_id 和 output 的 dict。",
                              label=label, kind=type(error).__name__, error=error))
        if label in RAISES:
            other = next((c.arguments for c in calls[1:] if c.call_id == calls[0].call_id), "")
            answered = {item["call_id"] for item in outputs}
            missing = next((_describe(c) for c in calls if c.call_id not in answered), "")
            return failed(say("case '{label}': ", "例子 '{label}'：", label=label)
                          + say(RAISES[label], RAISES_ZH[label], cid=calls[0].call_id, other=other, missing=missing))
        problem = _judge(label, calls, outputs, got)
        if problem:
            return failed(problem)
    return passed(say("all 6 batches right: outputs paired by call_id in the model's order, and the three "
                      "broken batches refused.",
                      "全部 6 个批次都对了：输出按 call_id 配对，按模型的顺序排列，三个有问题的批次都被拒绝。"))


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
        return say("{id} calls {name}, which is not in the registry: nothing says it is read-only, so treat it like a write",
                   "{id} 调用的 {name} 不在注册表里：没有任何东西说明它是只读的，所以把它当作写入",
                   id=call.call_id, name=call.name)
    return say("{id} ({name}) has a side effect", "{id}（{name}）有副作用", id=call.call_id, name=call.name)


def _judge_plan(label: str, calls: list[Call], tools: dict[str, Tool], got: Any) -> str | None:
    """What is wrong with `got` as the waves of `calls`, or None."""
    where = say("case '{label}'", "例子 '{label}'", label=label)
    if not isinstance(got, list) or not all(isinstance(wave, list) for wave in got):
        return say("{where}: plan must return a list of waves, each a list of call_ids; got {got!r:.80}.",
                   "{where}：plan 必须返回一个由波组成的列表，每一波是一个 call_id 列表；得到的是 {got!r:.80}。",
                   where=where, got=got)
    by_id = {call.call_id: call for call in calls}
    wave_of: dict[str, int] = {}
    for n, wave in enumerate(got, start=1):
        if not wave:
            return say("{where}: wave {n} is empty. Leave empty waves out.", "{where}：第 {n} 波是空的。请去掉空波。",
                       where=where, n=n)
        for call_id in wave:
            if isinstance(call_id, Call):
                return say("{where}: wave {n} holds a Call object; put its call_id (call.call_id) in the wave instead.",
                           "{where}：第 {n} 波里放的是 Call 对象；请改为放入它的 call_id（call.call_id）。", where=where, n=n)
            if call_id not in by_id:
                return say("{where}: {cid!r} in wave {n} is not the call_id of any call in this turn.",
                           "{where}：第 {n} 波里的 {cid!r} 不是这一轮任何调用的 call_id。", where=where, cid=call_id, n=n)
            if call_id in wave_of:
                return say("{where}: {cid} is in waves {first} and {n}: it would run twice.",
                           "{where}：{cid} 同时在第 {first} 波和第 {n} 波：它会运行两次。",
                           where=where, cid=call_id, first=wave_of[call_id], n=n)
            wave_of[call_id] = n
    missing = [call for call in calls if call.call_id not in wave_of]
    if missing:
        last_write = max((i for i, c in enumerate(calls) if _alone(c, tools)), default=-1)
        trailing = [c for c in calls[last_write + 1 :]]
        if missing == trailing:
            return say("{where}: {ids} (the reads after the last write) are missing from your plan: after the loop, "
                       "add the wave you were still collecting.",
                       "{where}：你的计划里缺少 {ids}（最后一个写入之后的读取）：循环结束后，把你还在收集的那一波加上。",
                       where=where, ids=", ".join(c.call_id for c in missing))
        return say("{where}: {call} is missing from your plan; every call must run (or be refused) once.",
                   "{where}：你的计划里缺少 {call}；每个调用都必须运行（或被拒绝）一次。", where=where, call=_describe(missing[0]))
    for n, wave in enumerate(got, start=1):
        lonely = [by_id[c] for c in wave if _alone(by_id[c], tools)]
        if lonely and len(wave) > 1:
            others = ", ".join(c for c in wave if c != lonely[0].call_id)
            return say("{where}: wave {n} runs {id} together with {others}, but {why}: it runs alone.",
                       "{where}：第 {n} 波把 {id} 和 {others} 一起运行，但 {why}：它要单独运行。",
                       where=where, n=n, id=lonely[0].call_id, others=others, why=_why_alone(lonely[0], tools))
    for i, earlier in enumerate(calls):
        for later in calls[i + 1 :]:
            if (_alone(earlier, tools) or _alone(later, tools)) and wave_of[later.call_id] < wave_of[earlier.call_id]:
                write = earlier if _alone(earlier, tools) else later
                return say("{where}: your plan runs {later} before {earlier}, although the model sent it after. "
                           "{why}: keep the model's order around it.",
                           "{where}：你的计划让 {later} 在 {earlier} 之前运行，尽管模型是在它之后发出的。{why}：在它前后保持模型的顺序。",
                           where=where, later=later.call_id, earlier=earlier.call_id, why=_why_alone(write, tools))
    expected = _plan_solution(calls, tools)
    if len(got) > len(expected):
        for n in range(1, len(got)):
            if not any(_alone(by_id[c], tools) for c in got[n - 1] + got[n]):
                return say("{where}: waves {n} and {m} hold only reads with no write between them: merge them. "
                           "Every extra wave costs one more round of latency.",
                           "{where}：第 {n} 波和第 {m} 波只有读取，中间没有写入：把它们合并。每多一波就多一轮延迟。",
                           where=where, n=n, m=n + 1)
    if [set(w) for w in got] != [set(w) for w in expected]:
        return say("{where}: expected the waves {expected}, got {got}.", "{where}：期望的波次是 {expected}，得到的是 {got}。",
                   where=where, expected=expected, got=got)
    return None


def check_plan(fn: Callable[[list[Call], dict[str, Tool]], list[list[str]]]) -> bool:
    """Run `fn` on six turns and name the first rule its plan breaks."""
    if not_answered(fn):
        return failed(say("Not answered yet: define plan(calls, tools) and pass the function itself.",
                          "还没有作答：定义 plan(calls, tools)，并传入函数本身。"))
    if not callable(fn):
        return failed(say("Pass the function itself (plan, without parentheses); you passed {fn!r}.",
                          "请传入函数本身（plan，不带括号）；你传入的是 {fn!r}。", fn=fn))
    tools = plan_tools()
    for label, calls in plan_cases().items():
        try:
            got = fn(list(calls), dict(tools))
        except Exception as error:
            return failed(say("case '{label}': plan raised {kind}: {error}. Look the tool up with tools.get(call.name): "
                              "a name may be missing from the registry.",
                              "例子 '{label}'：plan 抛出了 {kind}：{error}。请用 tools.get(call.name) 查找工具：注册表里可能没有这个名字。",
                              label=label, kind=type(error).__name__, error=error))
        problem = _judge_plan(label, calls, tools, got)
        if problem:
            return failed(problem)
    return passed(say("all 6 turns planned right: reads share a wave, every write runs alone, the model's order "
                      "is kept around each write.",
                      "全部 6 轮都规划对了：读取共享一波，每个写入单独运行，每个写入前后都保持了模型的顺序。"))


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

