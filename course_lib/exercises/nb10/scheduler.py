"""Notebook 10, drill 5: a parallel scheduler.

`check_run_turn(fn)`: `async run_turn(calls, execute, is_write) -> [Execution]` is *run* with
timed tools (reads on the real files server) and its start/end events show whether reads
overlapped and writes ran alone, in order.
"""

from __future__ import annotations

import inspect
import itertools
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import anyio
from pydantic import BaseModel, ConfigDict

from course_lib.arguments import ReadTextFileArgs
from course_lib.broken_traces import THREE_READS
from course_lib.exercises import failed, passed
from course_lib.exercises.answers import raised, type_name
from course_lib.exercises.nb10._common import ALICE, READ, Label, _case, _function, _returned, _run, _SaveArgs
from course_lib.execution import CallContext, Execution, Executor, Tool
from course_lib.exercises.guard import guard_checks
from course_lib.lang import say
from course_lib.parallel import Call

DELAYS = {"read": 0.06, "write": 0.03}
"""Seconds each timed tool waits: long enough that running together shows in the event order."""


class _QueryArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    query: str


def _model_calls() -> list[Call]:
    """The three `function_call`s the offline model really sends for THREE_READS."""
    from openai.types.responses import Response

    from course_lib.arguments import input_schema
    from course_lib.exercises.offline import model_name
    from course_lib.offline_model import respond

    tool = {"type": "function", "name": READ, "description": "Read a text file.", "parameters": input_schema()}
    response = Response.model_validate(respond({"model": model_name(), "input": THREE_READS, "tools": [tool]}))
    return [Call.from_item(item) for item in response.output if item.type == "function_call"]


def _r(call_id: str, path: str) -> Call:
    return Call(call_id, READ, json.dumps({"path": path, "head": 1}))


def _w(call_id: str, topic: str) -> Call:
    return Call(call_id, "save_learning_gap", json.dumps({"topic": topic}))


def schedule_cases() -> dict[str, list[Call]]:
    """label → one turn's calls, in the model's order."""
    return {
        "three reads from the model": _model_calls(),
        "read, write, read": [_r("call_r1", "/workspace/notes.txt"), _w("call_w1", "retries"),
                              _r("call_r2", "/workspace/todo.md")],
        "two writes, then a read": [_w("call_w1", "retries"), _w("call_w2", "strict mode"),
                                    _r("call_r1", "/workspace/notes.txt")],
        "a long mixed turn": [_r("call_r1", "/workspace/notes.txt"), _r("call_r2", "/workspace/todo.md"),
                              _w("call_w1", "retries"), Call("call_s1", "search_notes", '{"query": "call_id"}'),
                              _r("call_r3", "/workspace/docs/mcp.md"), _w("call_w2", "strict mode"),
                              _w("call_w3", "idempotency"), _r("call_r4", "/workspace/data/config.json")],
        "no calls at all": [],
    }  # fmt: skip


@dataclass
class TimedTurn:
    """What happened when a scheduler ran one turn: results, and start/end events in order."""

    results: Any
    events: list[tuple[str, str]]
    writes: list[str]


HANG_LIMIT = 2.0
"""Seconds a scheduler may take for one turn (a right one takes a fraction of a second, even one at a time)."""

FAST = {"read": 0.01, "write": 0.005}
"""The generated turns' waits. The order of the events, not their times, shows what overlapped:
every call of a wave started together reaches its handler in the same turn of the event loop, so
short waits are as telling as long ones."""


class _Hung(Exception):
    """The scheduler did not return within `HANG_LIMIT` seconds."""


def _timed_tools(events: list[tuple[str, str]], writes: list[str], delays: dict[str, float]) -> list[Tool]:
    """A local search (a read) and a local write, each logging ("start"|"end", call_id)."""

    async def search(arguments: _QueryArgs, context: CallContext) -> Any:
        return {"hits": [f"/workspace/notes.txt mentions {arguments.query}"]}

    async def save(arguments: _SaveArgs, context: CallContext) -> Any:
        writes.append(context.call_id)
        return {"record_id": f"gap-{len(writes)}"}

    return [Tool("search_notes", "Search the user's notes.", _QueryArgs, _timed(events, delays["read"], search)),
            Tool("save_learning_gap", "Save a learning gap (changes data).", _SaveArgs,
                 _timed(events, delays["write"], save), side_effect=True)]  # fmt: skip


def _timed(events: list[tuple[str, str]], delay: float,
           inner: Callable[[Any, CallContext], Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:  # fmt: skip
    async def handler(arguments: Any, context: CallContext) -> Any:
        events.append(("start", context.call_id))
        await anyio.sleep(delay)
        result = await inner(arguments, context)
        events.append(("end", context.call_id))
        return result

    return handler


def _approve_writes(executor: Executor, calls: list[Call]) -> None:
    """Approve every write of the turn in advance: this drill is about order, not approval."""
    for call in calls:
        if call.name == "save_learning_gap":
            arguments = json.loads(call.arguments)
            executor.approvals.approve(executor.approvals.request(call.name, arguments, "alice").action_id)


async def _turn(fn: Callable[..., Awaitable[Any]], executor: Executor, calls: list[Call]) -> Any:
    """`await fn(calls, execute, is_write)` for one turn, within `HANG_LIMIT`."""

    async def execute(call: Call) -> Execution:
        return await executor.execute(call.call_id, call.name, call.arguments, ALICE)

    def is_write(call: Call) -> bool:
        tool = executor.tools.get(call.name)
        return tool is None or tool.side_effect

    try:
        with anyio.fail_after(HANG_LIMIT):
            return await fn(list(calls), execute, is_write)
    except TimeoutError:
        raise _Hung() from None


def run_scheduler(fn: Callable[..., Awaitable[Any]], calls: list[Call]) -> TimedTurn:
    """Run `fn(calls, execute, is_write)` against a real Executor: reads on the real files server
    (and a local search), a local write; every handler logs ("start"|"end", call_id).

    Raises:
        Exception: whatever `fn` raises; `_Hung` when it does not return within `HANG_LIMIT`.
    """
    from course_lib.host import files_host

    events: list[tuple[str, str]] = []
    writes: list[str] = []
    with files_host() as host:
        read = host.executor_tool(READ, ReadTextFileArgs)
        executor = Executor([replace(read, handler=_timed(events, DELAYS["read"], read.handler)),
                             *_timed_tools(events, writes, DELAYS)])  # fmt: skip
        _approve_writes(executor, calls)
        results = host.run(_turn, fn, executor, calls)
    return TimedTurn(results, events, writes)


def generated_turns() -> list[tuple[Label, list[Call]]]:
    """Every turn of one to four calls made of searches and saves (30 turns), as (label, calls): the
    rules hold for every order of reads and writes, not only for the five turns above."""
    turns = []
    for n in range(1, 5):
        for letters in itertools.product("sw", repeat=n):
            counts = {"s": 0, "w": 0}
            calls = []
            for letter in letters:
                counts[letter] += 1
                cid = f"call_{letter}{counts[letter]}"
                calls.append(Call(cid, "search_notes", json.dumps({"query": f"topic {counts[letter]}"})) if letter == "s"
                             else _w(cid, f"gap {counts[letter]}"))  # fmt: skip
            words = [(("search", "搜索") if c.name == "search_notes" else ("save", "保存")) for c in calls]
            turns.append(((f"[{', '.join(f'{w[0]} {c.call_id}' for w, c in zip(words, calls))}]",
                           f"[{'，'.join(f'{w[1]} {c.call_id}' for w, c in zip(words, calls))}]"), calls))
    return turns


def run_generated(fn: Callable[..., Awaitable[Any]], turns: list[tuple[Label, list[Call]]]) -> list[Any]:
    """Run `fn` on each generated turn with local timed tools, all in one event loop: a `TimedTurn`
    per turn, up to the first turn where `fn` raised (that exception ends the list)."""

    async def go() -> list[Any]:
        done: list[Any] = []
        for _, calls in turns:
            events: list[tuple[str, str]] = []
            writes: list[str] = []
            executor = Executor(_timed_tools(events, writes, FAST))
            _approve_writes(executor, calls)
            try:
                done.append(TimedTurn(await _turn(fn, executor, calls), events, writes))
            except Exception as error:
                done.append(error)
                break
        return done

    return _run(go)


def _schedule_problem(label: Label, calls: list[Call], turn: TimedTurn) -> str | None:
    where = _case(label)
    results = turn.results
    if isinstance(results, list | tuple):
        for result in results:
            if inspect.iscoroutine(result):  # execute(call) without await: close it, so Python warns of nothing
                result.close()
        if any(inspect.iscoroutine(result) for result in results):
            return say("{where}: your results are coroutines: execute(call) is a coroutine function, so await "
                       "execute(call) and keep what it returns.",
                       "{where}：你的结果是协程：execute(call) 是协程函数，所以要 await execute(call)，并保留它返回的东西。",
                       where=where)
    if not isinstance(results, list | tuple) or len(results) != len(calls):
        got = (_returned(results) if not isinstance(results, list | tuple)
               else say("{n} results.", "{n} 个结果。", n=len(results)))  # fmt: skip
        return say("{where}: run_turn must return a list with one Execution per call ({n}); it returned {got}",
                   "{where}：run_turn 必须返回一个列表，每个调用一个 Execution（共 {n} 个）；它返回的是 {got}",
                   where=where, n=len(calls), got=got)
    for i, (call, result) in enumerate(zip(calls, results)):
        if not isinstance(result, Execution) or result.call_id != call.call_id:
            got = result.call_id if isinstance(result, Execution) else type_name(result)
            return say("{where}: result {i} is for {got}, but the model's call {i} is {cid}: return the results in the "
                       "model's order (what execute(call) returned, at the call's position).",
                       "{where}：第 {i} 个结果属于 {got}，但模型的第 {i} 个调用是 {cid}：按模型的顺序返回结果"
                       "（execute(call) 返回的东西，放在这个调用的位置上）。", where=where, i=i, got=got, cid=call.call_id)
    start = {cid: i for i, (kind, cid) in enumerate(turn.events) if kind == "start"}
    end = {cid: i for i, (kind, cid) in enumerate(turn.events) if kind == "end"}
    for call in calls:
        runs = sum(1 for kind, cid in turn.events if kind == "start" and cid == call.call_id)
        if runs != 1:
            return say(f"{where}: {call.call_id} ran {runs} times; every call runs exactly once.",
                       f"{where}：{call.call_id} 运行了 {runs} 次；每个调用恰好运行一次。")
    write = {call.call_id: call.name == "save_learning_gap" for call in calls}
    for w in (c.call_id for c in calls if write[c.call_id]):
        for other in (c.call_id for c in calls if c.call_id != w):
            if start[other] < end[w] and start[w] < end[other]:
                return say(f"{where}: {other} ran while the write {w} was running. A write runs alone: nothing beside it.",
                           f"{where}：写入 {w} 运行期间，{other} 也在运行。写入要单独运行：旁边不能有别的调用。")
    for i, earlier in enumerate(calls):
        for later in calls[i + 1:]:
            if (write[earlier.call_id] or write[later.call_id]) and start[later.call_id] < end[earlier.call_id]:
                w = earlier.call_id if write[earlier.call_id] else later.call_id
                return say(f"{where}: {later.call_id} started before {earlier.call_id} had finished, although the model "
                           f"sent it after, and {w} is a write. Keep the model's order around every write.",
                           f"{where}：{later.call_id} 在 {earlier.call_id} 完成之前就开始了，可模型是在它之后发出的，"
                           f"而且 {w} 是写入。每次写入的前后都要保持模型的顺序。")
    wave: list[str] = []
    for call in [*calls, None]:
        if call is None or write[call.call_id]:
            if len(wave) > 1 and max(start[c] for c in wave) > min(end[c] for c in wave):
                return say(f"{where}: the reads {', '.join(wave)} ran one after another. They are independent reads "
                           "with no write between them: start them together (a task group, or asyncio.gather).",
                           f"{where}：读取 {', '.join(wave)} 是一个接一个运行的。它们是互不依赖的读取，中间没有写入："
                           "让它们一起开始（用 task group 或 asyncio.gather）。")
            wave = []
        else:
            wave.append(call.call_id)
    return None


def _raised(label: Label, error: BaseException) -> str:
    if isinstance(error, _Hung):
        return say("{case}: run_turn did not return within {s:g} s: does it wait for something that never comes "
                   "(an event nobody sets, a task group it never leaves)?",
                   "{case}：run_turn 在 {s:g} 秒内没有返回：它是不是在等一件永远不会来的事（没人设置的事件，出不来的任务组）？",
                   case=_case(label), s=HANG_LIMIT)
    return say("{case}: run_turn raised {error}.", "{case}：run_turn 抛出了 {error}。", case=_case(label),
               error=raised(error))


def check_run_turn(fn: Callable[..., Awaitable[list[Execution]]]) -> bool:
    """Run `fn` on five turns with timed tools (reads on the real files server), then on every turn of
    up to four searches and saves; report the first rule the event order breaks."""
    if problem := _function(fn, "run_turn", "calls, execute, is_write"):
        return failed(problem)
    if not inspect.iscoroutinefunction(fn):
        return failed(say("run_turn must be an async def: it awaits execute(call), which is a coroutine function.",
                          "run_turn 必须是 async def：它要 await execute(call)，而那是一个协程函数。"))
    for label, calls in schedule_cases().items():
        try:
            turn = run_scheduler(fn, calls)
        except Exception as error:
            return failed(_raised(label, error))
        if turn.results is ...:
            return failed(say("Not answered yet: run_turn still returns ... — return the list of executions.",
                              "还没有作答：run_turn 仍然返回 ...，请返回 Execution 的列表。"))
        if problem := _schedule_problem(label, calls, turn):
            return failed(problem)
    turns = generated_turns()
    for (label, calls), turn in zip(turns, run_generated(fn, turns)):
        if isinstance(turn, BaseException):
            return failed(_raised(label, turn))
        if problem := _schedule_problem(label, calls, turn):
            return failed(problem)
    return passed(say("all {n} turns ran right (and every turn of up to four reads and writes): reads overlapped, each "
                      "write ran alone and in order, results came back in the model's order.",
                      "全部 {n} 轮都运行正确（包括由最多四个读写组成的每一种轮）：读取相互重叠，每次写入都单独、按顺序运行，"
                      "结果按模型的顺序返回。", n=len(schedule_cases()) + len(turns)))


async def _run_turn_solution(calls: list[Call], execute: Callable[[Call], Awaitable[Execution]],
                             is_write: Callable[[Call], bool]) -> list[Execution]:  # fmt: skip
    results: list[Any] = [None] * len(calls)

    async def run(i: int) -> None:
        results[i] = await execute(calls[i])

    async def run_together(wave: list[int]) -> None:
        async with anyio.create_task_group() as tg:
            for i in wave:
                tg.start_soon(run, i)

    wave: list[int] = []
    for i, call in enumerate(calls):
        if is_write(call):
            await run_together(wave)  # the reads sent before it finish first
            wave = []
            await run(i)  # then the write, alone
        else:
            wave.append(i)
    await run_together(wave)
    return results


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
