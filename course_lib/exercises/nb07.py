"""Checks for notebook 07 (parallel calls).

- `check_pair_outputs(fn)`: the learner's `pair_outputs(calls, outputs) -> {call_id: output}`
  is run on real batches: the offline model's three reads, executed for real through
  `execute_batch` on the course's files server (with different latencies, so the outputs come
  back in the order the reads *finished*) and then in every other order they could arrive in,
  plus a verbatim repeat, a `call_id` reused with other arguments or for another tool, an output
  nobody asked for, and each of the three calls left without its output.
- `check_plan(fn)`: the learner's `plan(calls, tools) -> [[call_id, ...], ...]` (waves: reads
  together, every write alone, the model's order kept around each write) is run on six turns
  made of real `Call` and `Tool` objects, then on every turn of up to five calls made of a read,
  a search, a write and a tool the registry does not know (1 364 turns), and the first broken
  rule is named.

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`),
the cases' labels included; the call_ids, paths and output texts they quote stay as they crossed.
"""

from __future__ import annotations

import copy
import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import PurePosixPath
from typing import Any

import anyio
from openai.types.responses import Response
from pydantic import BaseModel, ConfigDict

from course_lib.arguments import ReadTextFileArgs
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import as_dict, passed_a_call, raised, returned_early, same, shown, type_name, unassigned
from course_lib.execution import CallContext, Executor, Session, Tool
from course_lib.exercises.guard import guard_checks
from course_lib.lang import language, say
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


def _path(call: Call) -> str:
    """The path a read asks for, or '' when its arguments name none."""
    try:
        arguments = json.loads(call.arguments)
    except ValueError:
        return ""
    return arguments.get("path", "") if isinstance(arguments, dict) else ""


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


def _returned(got: Any) -> str:
    """What a function returned, as a message quotes it: `None` and the hint for it, or `list [...]`."""
    if got is None:
        return say("None.{hint}", "None。{hint}", hint=returned_early(None).lstrip() if language() == "zh-CN" else
                   returned_early(None))
    return say("{kind} {value}.", "{kind} {value}。", kind=type_name(got), value=shown(got, 80))


def _where(label: tuple[str, str]) -> str:
    """`case '…'` in the edition's language, the label included."""
    return say("case '{label}'", "例子“{label}”", label=say(*label))


# ---- exercise 1: pair_outputs -----------------------------------------------------------------


@dataclass(frozen=True)
class PairCase:
    """One batch for `pair_outputs`: the calls in the model's order, the outputs as they arrived,
    and, for a broken batch, what is wrong with it (`refuse`: the key of `RAISES`)."""

    label: tuple[str, str]  # (English, 中文)
    calls: list[Call]
    outputs: list[dict[str, Any]]
    refuse: str | None = None


@cache
def _recorded() -> dict[str, Any]:
    """The real runs the cases are cut from (recorded once per kernel; cases get copies)."""
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
        repeated = calls + [calls[0]]
        other_arguments = calls + [Call(calls[0].call_id, READ, '{"path":"/workspace/data/config.json"}')]
        other_tool = calls + [Call(calls[0].call_id, "search_notes", calls[0].arguments)]
        runs = {"calls": calls, "in_model_order": in_model_order, "finished": list(finished),
                "repeated": (repeated, run(repeated)), "other_arguments": (other_arguments, run(other_arguments)),
                "other_tool": (other_tool, run(other_tool))}  # fmt: skip
    return runs


def pair_cases() -> list[PairCase]:
    """The batches, in the order the check tries them: the real finishing order first, then every
    other order the three outputs could arrive in, then the batches that must be refused."""
    runs = copy.deepcopy(_recorded())
    calls: list[Call] = runs["calls"]
    by_id = {item["call_id"]: item for item in runs["in_model_order"]}
    as_finished = [by_id[call_id] for call_id in runs["finished"]]
    name = {call.call_id: PurePosixPath(_path(call)).name for call in calls}
    cases = [PairCase(("the three reads, outputs in the order they finished", "三次读取，输出按完成的先后排列"),
                      calls, as_finished)]
    for order in itertools.permutations(as_finished):
        if list(order) != as_finished:
            names = [name[item["call_id"]] for item in order]
            cases.append(PairCase((f"the three reads, outputs arriving as {', '.join(names)}",
                                   f"三次读取，输出按 {'、'.join(names)} 的顺序到达"), calls, list(order)))
    repeated, repeated_out = runs["repeated"]
    cases.append(PairCase(("the model's first call sent twice, verbatim", "模型的第一个调用原样发了两次"),
                          repeated, repeated_out))
    for key, (en, zh) in (("other_arguments", ("a call_id reused with different arguments", "一个 call_id 被重用，参数不同")),
                          ("other_tool", ("a call_id reused for another tool", "一个 call_id 被重用于另一个工具"))):
        reused, reused_out = runs[key]
        cases.append(PairCase((en, zh), reused, reused_out, "reused"))
    orphan = {"type": "function_call_output", "call_id": "call_never_made", "output": "{}"}
    cases.append(PairCase(("an output whose call_id matches no call", "一个输出的 call_id 对不上任何调用"),
                          calls, as_finished + [orphan], "orphan"))
    for call in calls:
        rest = [item for item in as_finished if item["call_id"] != call.call_id]
        cases.append(PairCase((f"the read of {name[call.call_id]} left without an output",
                               f"对 {name[call.call_id]} 的读取没有输出"), calls, rest, "unanswered"))
    return cases


RAISES = {
    "reused": ("{cid} is used twice, the second time {how}; your function accepted it. Raise ValueError: one of the "
               "two calls would get the other's result.",
               "{cid} 用了两次，第二次{how}；你的函数接受了它。请抛出 ValueError：否则两个调用中的一个会拿到另一个的结果。"),
    "orphan": ("an output arrived for call_never_made, which no call has; your function accepted it. Raise ValueError "
               "(the Responses API refuses it too: 'No tool call found for function call output').",
               "到达了一个属于 call_never_made 的输出，而没有任何调用用这个 call_id；你的函数接受了它。请抛出 ValueError"
               "（Responses API 也会拒绝它：'No tool call found for function call output'）。"),
    "unanswered": ("{missing} has no output; your function accepted it. Raise ValueError (the API refuses an unanswered "
                   "call: 'No tool output found for function call').",
                   "{missing} 没有输出；你的函数接受了它。请抛出 ValueError（API 会拒绝没有输出的调用："
                   "'No tool output found for function call'）。"),
}  # fmt: skip
"""What a broken batch's refusal is about: (English, 中文), by `PairCase.refuse`."""


def _judge(case: PairCase, got: Any) -> str | None:
    """What is wrong with `got` for this case, or None."""
    where = _where(case.label)
    expected = _pair_outputs_solution(case.calls, case.outputs)
    answer = as_dict(got)
    if answer is None:
        return say("{where}: pair_outputs must return a dict {{call_id: output text}}; it returned {got}",
                   "{where}：pair_outputs 必须返回一个 dict {{call_id: 输出文本}}；它返回的是 {got}",
                   where=where, got=_returned(got))
    first: dict[str, Call] = {}
    for call in case.calls:
        first.setdefault(call.call_id, call)
    for key in answer:
        if key not in expected:
            return say("{where}: key {key} is not the call_id of any call.", "{where}：键 {key} 不是任何调用的 call_id。",
                       where=where, key=shown(key))
    for call_id in expected:
        if call_id not in answer:
            return say("{where}: {call} is missing from your dict.", "{where}：你的 dict 里缺少 {call}。",
                       where=where, call=_describe(first[call_id]))
    owner = {item["output"]: item["call_id"] for item in case.outputs}
    for call_id, text in expected.items():
        value = answer[call_id]
        if not same(value, text):
            if not isinstance(value, str):
                return say("{where}: the value for {cid} is of type {kind}, not the output text. Keep item['output'] exactly "
                           "as it arrived: do not json.loads it, and do not keep the whole function_call_output dict.",
                           "{where}：{cid} 的值的类型是 {kind}，不是输出文本。请原样保留 item['output']：不要对它 json.loads，"
                           "也不要保留整个 function_call_output dict。", where=where, cid=call_id, kind=type_name(value))
            other = owner.get(value)
            if other is not None and other != call_id:
                order = ", ".join(item["call_id"] for item in case.outputs)
                return say("{where}: {call} got the output of {other}. The outputs arrived in this order: {order}. "
                           "Pair by call_id, not by position.",
                           "{where}：{call}拿到了 {other}的输出。输出到达的顺序是：{order}。请按 call_id 配对，不要按位置。",
                           where=where, call=_describe(first[call_id]), other=_describe(first[other]), order=order)
            return say("{where}: the value for {cid} must be its output text, exactly as it arrived.",
                       "{where}：{cid} 的值必须是它的输出文本，与到达时一模一样。", where=where, cid=call_id)
    if list(answer) != list(expected):
        return say("{where}: right pairs, wrong order. Keep the model's order of the calls: {want}; yours is {got}.",
                   "{where}：配对对了，顺序错了。请保持模型给出的调用顺序：{want}；你的是 {got}。",
                   where=where, want=", ".join(expected), got=", ".join(map(str, answer)))
    return None


def _refusal(case: PairCase) -> str:
    """The message for a broken batch the learner's function accepted."""
    reused = next((c for c in case.calls[1:] if c.call_id == case.calls[0].call_id), None)
    how = ""
    if reused is not None:
        how = (say("for another tool ({name})", "用于另一个工具（{name}）", name=reused.name)
               if reused.name != case.calls[0].name else
               say("with other arguments ({other})", "参数不同（{other}）", other=reused.arguments))  # fmt: skip
    answered = {item["call_id"] for item in case.outputs}
    missing = next((_describe(c) for c in case.calls if c.call_id not in answered), "")
    return _where(case.label) + say(": ", "：") + say(*RAISES[case.refuse or ""], cid=case.calls[0].call_id, how=how,
                                                         missing=missing)


def check_pair_outputs(fn: Callable[[list[Call], list[dict[str, Any]]], dict[str, str]]) -> bool:
    """Run `fn` on every batch of `pair_cases` and explain the first case it gets wrong."""
    if not_answered(fn):
        return failed(unassigned("pair_outputs", "pair_outputs(calls, outputs)"))
    if not callable(fn) or isinstance(fn, type):
        return failed(passed_a_call("pair_outputs", fn))
    cases = pair_cases()
    for case in cases:
        where = _where(case.label)
        try:
            got = fn(list(case.calls), copy.deepcopy(case.outputs))
        except ValueError as error:
            if case.refuse:
                continue
            if case.label[0].startswith("the model's first call sent twice"):
                return failed(say("{where}: you raised {error}, but an exact repeat is the same call (same call_id, "
                                  "tool and arguments): it runs once and keeps one entry.",
                                  "{where}：你抛出了 {error}，但完全相同的重复就是同一个调用（同样的 call_id、工具和参数）："
                                  "它只运行一次，只保留一个条目。", where=where, error=raised(error)))
            return failed(say("{where}: pair_outputs raised {error}, but this batch is valid: every call has its output.",
                              "{where}：pair_outputs 抛出了 {error}，但这个批次是有效的：每个调用都有自己的输出。",
                              where=where, error=raised(error)))
        except LookupError as error:
            if case.refuse:  # e.g. texts[call.call_id] for the call with no output
                return failed(say("{where}: pair_outputs raised {error} where a ValueError is wanted: check for the "
                                  "missing or unknown call_id and raise ValueError naming it, so the caller can tell a "
                                  "broken batch from a bug.",
                                  "{where}：pair_outputs 抛出了 {error}，这里应该是 ValueError：检查缺失或未知的 call_id，"
                                  "并抛出指明它的 ValueError，这样调用方才能分清坏掉的批次和 bug。",
                                  where=where, error=raised(error)))
            return failed(say("{where}: pair_outputs raised {error}. Look outputs up by call_id, and walk the calls "
                              "(not the outputs) for the keys.",
                              "{where}：pair_outputs 抛出了 {error}。请按 call_id 查找输出，并遍历调用（而不是输出）来得到键。",
                              where=where, error=raised(error)))
        except Exception as error:
            return failed(say("{where}: pair_outputs raised {error}. Each call is a Call (call_id, name, arguments); "
                              "each output a dict with call_id and output.",
                              "{where}：pair_outputs 抛出了 {error}。每个调用是一个 Call（call_id、name、arguments）；"
                              "每个输出是一个含 call_id 和 output 的 dict。", where=where, error=raised(error)))
        if got is ...:
            return failed(say("Not answered yet: pair_outputs still returns ... — return the dict.",
                              "还没有作答：pair_outputs 仍然返回 ...，请返回那个 dict。"))
        if case.refuse:
            return failed(_refusal(case))
        if problem := _judge(case, got):
            return failed(problem)
    refused = sum(1 for case in cases if case.refuse)
    return passed(say("all {n} batches right: outputs paired by call_id in the model's order whatever order they "
                      "arrived in, and the {refused} broken batches refused.",
                      "全部 {n} 个批次都对了：不论输出按什么顺序到达，都按 call_id 配对、按模型的顺序排列，"
                      "{refused} 个有问题的批次都被拒绝。", n=len(cases), refused=refused))


def _pair_outputs_solution(calls: list[Call], outputs: list[dict[str, Any]]) -> dict[str, str]:
    first: dict[str, Call] = {}
    for call in calls:
        seen = first.setdefault(call.call_id, call)
        if (seen.name, seen.arguments) != (call.name, call.arguments):
            raise ValueError(f"call_id {call.call_id} was reused with a different name or arguments")
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


KINDS = {  # a letter of a generated turn → (call_id prefix, English word, 中文, how a call of it is made)
    "r": ("call_r", "read", "读取", lambda cid, n: _read(cid, ("/workspace/notes.txt", "/workspace/todo.md")[n % 2])),
    "s": ("call_s", "search", "搜索", lambda cid, n: Call(cid, "search_notes", json.dumps({"query": f"topic {n}"}))),
    "w": ("call_w", "save", "保存", lambda cid, n: _save(cid, f"gap {n}")),
    "x": ("call_x", "delete_file", "delete_file", lambda cid, n: Call(cid, "delete_file", '{"path":"/workspace/todo.md"}')),
}  # fmt: skip
"""The four kinds of call a generated turn is made of: two reads, a write and a tool nobody registered."""
LONGEST_TURN = 5


def _turn(letters: str) -> tuple[tuple[str, str], list[Call]]:
    """A generated turn: 'rwr' → its label and its calls (call_r1, call_w1, call_r2)."""
    counts: dict[str, int] = {}
    calls, en, zh = [], [], []
    for letter in letters:
        counts[letter] = counts.get(letter, 0) + 1
        prefix, word, word_zh, make = KINDS[letter]
        calls.append(make(f"{prefix}{counts[letter]}", counts[letter]))
        en.append(f"{word} {calls[-1].call_id}")
        zh.append(f"{word_zh} {calls[-1].call_id}")
    return (f"[{', '.join(en)}]", f"[{'，'.join(zh)}]"), calls


def plan_cases() -> list[tuple[tuple[str, str], list[Call]]]:
    """(label, one turn's calls in the model's order): six turns a learner meets first, then every
    turn of up to `LONGEST_TURN` calls of the four kinds. The rules must hold for every order of
    reads and writes, not for six samples."""
    curated = [
        (("three reads from the model", "模型发来的三次读取"), model_calls()),
        (("read, save, read", "读取、保存、读取"), [_read("call_r1", "/workspace/notes.txt"), _save("call_w1", "gaps"),
                                              _read("call_r2", "/workspace/todo.md")]),
        (("two saves to the same note", "对同一条笔记的两次保存"), [_save("call_w1", "gaps"), _save("call_w2", "gaps")]),
        (("a long mixed turn", "很长的一轮，读写混合"),
         [_read("call_r1", "/workspace/notes.txt"), _read("call_r2", "/workspace/todo.md"), _save("call_w1", "gaps"),
          Call("call_s1", "search_notes", '{"query":"call_id"}'), _read("call_r3", "/workspace/docs/mcp.md"),
          _save("call_w2", "gaps"), _save("call_w3", "todo"), _read("call_r4", "/workspace/data/config.json")]),
        (("a tool the registry does not know", "注册表里没有的工具"),
         [_read("call_r1", "/workspace/notes.txt"), Call("call_x1", "delete_file", '{"path":"/workspace/todo.md"}'),
          _read("call_r2", "/workspace/todo.md")]),
        (("no calls at all", "一个调用也没有"), []),
    ]  # fmt: skip
    generated = [_turn("".join(letters)) for n in range(1, LONGEST_TURN + 1)
                 for letters in itertools.product(KINDS, repeat=n)]  # fmt: skip
    return curated + generated


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


def _waves_of(got: Any) -> list[list[Any]] | None:
    """`got` as a list of lists (tuples are fine too), or None when it is not a sequence of sequences."""
    if isinstance(got, str | bytes) or not isinstance(got, Sequence):
        return None
    waves = []
    for wave in got:
        if isinstance(wave, str | bytes) or not isinstance(wave, Sequence):
            return None
        waves.append(list(wave))
    return waves


def _judge_plan(label: tuple[str, str], calls: list[Call], tools: dict[str, Tool], got: Any) -> str | None:
    """What is wrong with `got` as the waves of `calls`, or None."""
    where = _where(label)
    waves = _waves_of(got)
    if waves is None:
        return say("{where}: plan must return a list of waves, each a list of call_ids; it returned {got}",
                   "{where}：plan 必须返回一个由波组成的列表，每一波是一个 call_id 列表；它返回的是 {got}",
                   where=where, got=_returned(got))
    by_id = {call.call_id: call for call in calls}
    wave_of: dict[str, int] = {}
    for n, wave in enumerate(waves, start=1):
        if not wave:
            return say("{where}: wave {n} is empty. Leave empty waves out.", "{where}：第 {n} 波是空的。请去掉空波。",
                       where=where, n=n)
        for call_id in wave:
            if isinstance(call_id, Call):
                return say("{where}: wave {n} holds a Call object; put its call_id (call.call_id) in the wave instead.",
                           "{where}：第 {n} 波里放的是 Call 对象；请改为放入它的 call_id（call.call_id）。", where=where, n=n)
            if not isinstance(call_id, str) or call_id not in by_id:
                return say("{where}: {cid} in wave {n} is not the call_id of any call in this turn.",
                           "{where}：第 {n} 波里的 {cid} 不是这一轮任何调用的 call_id。", where=where, cid=shown(call_id), n=n)
            if call_id in wave_of:
                return say("{where}: {cid} is in waves {first} and {n}: it would run twice.",
                           "{where}：{cid} 同时在第 {first} 波和第 {n} 波：它会运行两次。",
                           where=where, cid=call_id, first=wave_of[call_id], n=n)
            wave_of[call_id] = n
    missing = [call for call in calls if call.call_id not in wave_of]
    if missing:
        last_write = max((i for i, c in enumerate(calls) if _alone(c, tools)), default=-1)
        trailing = calls[last_write + 1 :]
        if missing == trailing:
            return say("{where}: {ids} (the reads after the last write) are missing from your plan: after the loop, "
                       "add the wave you were still collecting.",
                       "{where}：你的计划里缺少 {ids}（最后一个写入之后的读取）：循环结束后，把你还在收集的那一波加上。",
                       where=where, ids=", ".join(c.call_id for c in missing))
        return say("{where}: {call} is missing from your plan; every call must run (or be refused) once.",
                   "{where}：你的计划里缺少 {call}；每个调用都必须运行（或被拒绝）一次。", where=where, call=_describe(missing[0]))
    for n, wave in enumerate(waves, start=1):
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
    if len(waves) > len(expected):
        for n in range(1, len(waves)):
            if not any(_alone(by_id[c], tools) for c in waves[n - 1] + waves[n]):
                return say("{where}: waves {n} and {m} hold only reads with no write between them: merge them. "
                           "Every extra wave costs one more round of latency.",
                           "{where}：第 {n} 波和第 {m} 波只有读取，中间没有写入：把它们合并。每多一波就多一轮延迟。",
                           where=where, n=n, m=n + 1)
    if [set(w) for w in waves] != [set(w) for w in expected]:
        return say("{where}: expected the waves {expected}, got {got}.", "{where}：期望的波次是 {expected}，得到的是 {got}。",
                   where=where, expected=expected, got=shown(waves, 200))
    return None


def check_plan(fn: Callable[[list[Call], dict[str, Tool]], list[list[str]]]) -> bool:
    """Run `fn` on every turn of `plan_cases` and name the first rule its plan breaks."""
    if not_answered(fn):
        return failed(unassigned("plan", "plan(calls, tools)"))
    if not callable(fn) or isinstance(fn, type):
        return failed(passed_a_call("plan", fn))
    tools = plan_tools()
    cases = plan_cases()
    for label, calls in cases:
        try:
            got = fn(list(calls), dict(tools))
        except Exception as error:
            hint = (say(" Look the tool up with tools.get(call.name): a name may be missing from the registry.",
                        "请用 tools.get(call.name) 查找工具：注册表里可能没有这个名字。")
                    if isinstance(error, KeyError) else
                    say(" Each call is a Call (call_id, name, arguments); tools maps a name to its Tool "
                        "(tools[name].side_effect).",
                        "每个调用是一个 Call（call_id、name、arguments）；tools 把名字映射到它的 Tool"
                        "（tools[name].side_effect）。"))  # fmt: skip
            return failed(say("{where}: plan raised {error}.{hint}", "{where}：plan 抛出了 {error}。{hint}",
                              where=_where(label), error=raised(error), hint=hint))
        if got is ...:
            return failed(say("Not answered yet: plan still returns ... — return the list of waves.",
                              "还没有作答：plan 仍然返回 ...，请返回波的列表。"))
        if problem := _judge_plan(label, calls, tools, got):
            return failed(problem)
    return passed(say("all {n} turns planned right (every turn of up to {k} reads, searches, saves and unknown tools): "
                      "reads share a wave, every write runs alone, the model's order is kept around each write.",
                      "全部 {n} 轮都规划对了（由读取、搜索、保存和未知工具组成、最多 {k} 个调用的每一种轮）："
                      "读取共享一波，每个写入单独运行，每个写入前后都保持了模型的顺序。", n=len(cases), k=LONGEST_TURN))


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


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
