"""Notebook 10, drill 3: an idempotency store.

`check_idempotency_store(cls)`: `cls().run(key, arguments, write) -> (result, replayed)` inside
a real write tool that times out after storing, retried by `retry.execute_with_retries`; then
key order, a conflict, two keys, two concurrent duplicates, a failed write.
"""

from __future__ import annotations

import copy
import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from course_lib.approval import IdempotencyConflict
from course_lib.exercises import failed, not_answered, passed
from course_lib.exercises.nb10._common import ALICE, _case, _run, _SaveArgs
from course_lib.execution import CallContext, Executor, Tool, ToolError
from course_lib.lang import say
from course_lib.retry import RetryPolicy, execute_with_retries


async def _no_sleep(seconds: float) -> None:
    pass


def _store_of(cls: Any) -> tuple[Any, str | None]:
    try:
        store = cls()
    except Exception as error:
        return None, say(f"{getattr(cls, '__name__', cls)}() raised {type(error).__name__}: {error}; it must take no arguments.",
                         f"{getattr(cls, '__name__', cls)}() 抛出了 {type(error).__name__}: {error}；它必须不带参数。")
    run = getattr(store, "run", None)
    if run is None or not inspect.iscoroutinefunction(run):
        return None, say("the store needs an `async def run(self, key, arguments, write)`: write() is a coroutine "
                         "function, so run must await it.",
                         "存储需要一个 `async def run(self, key, arguments, write)`：write() 是协程函数，所以 run 必须 await 它。")  # fmt: skip
    return store, None


def _retry_after_timeout(store: Any) -> tuple[list[str], Any]:
    """A real write tool that stores, then answers too late once; retried by execute_with_retries."""
    records: list[str] = []
    late = [0.6]

    async def save(arguments: _SaveArgs, context: CallContext) -> Any:
        async def write() -> dict[str, str]:
            records.append(arguments.topic)
            return {"record_id": f"gap-{len(records)}"}

        result, replayed = await store.run(context.action_id, arguments.model_dump(), write)
        await anyio.sleep(late.pop() if late else 0)  # the first answer is lost to the timeout
        return {"stored": result, "replayed": replayed}

    tool = Tool("save_learning_gap", "Save a learning gap (changes data).", _SaveArgs, save,
                side_effect=True, idempotent=True, timeout=0.25)  # fmt: skip
    executor = Executor([tool])
    arguments = {"topic": "call_id vs MCP id"}
    executor.approvals.approve(executor.approvals.request(tool.name, arguments, "alice").action_id)
    outcome = _run(lambda: execute_with_retries(executor, "call_save", tool.name, json.dumps(arguments), ALICE,
                                                policy=RetryPolicy(max_attempts=3), sleep=_no_sleep))  # fmt: skip
    return records, outcome


def _direct(store: Any, steps: list[tuple[str, dict[str, Any]]], *, concurrent: bool = False,
            fail_first: bool = False) -> tuple[list[Any], list[str]]:  # fmt: skip
    """Call `store.run` for each (key, arguments); returns the outcomes (a (result, replayed) pair
    or the exception raised) and the writes that really happened."""
    writes: list[str] = []

    def writer(label: str) -> Callable[[], Awaitable[Any]]:
        async def write() -> dict[str, str]:
            await anyio.sleep(0.02)
            if fail_first and not writes and label == "1":
                writes.append("failed")
                raise ToolError("UPSTREAM_ERROR", "the notes database is down", retryable=True)
            writes.append(label)
            return {"record_id": f"gap-{label}"}

        return write

    outcomes: list[Any] = [None] * len(steps)

    async def one(i: int) -> None:
        key, arguments = steps[i]
        try:
            outcomes[i] = await store.run(key, copy.deepcopy(arguments), writer(str(i + 1)))
        except Exception as error:
            outcomes[i] = error

    async def go() -> None:
        if concurrent:
            async with anyio.create_task_group() as tg:
                for i in range(len(steps)):
                    tg.start_soon(one, i)
        else:
            for i in range(len(steps)):
                await one(i)

    _run(go)
    return outcomes, [w for w in writes if w != "failed"]


def _pair_shape(value: Any) -> str | None:
    if isinstance(value, Exception):
        return say(f"it raised {type(value).__name__}: {value}", f"它抛出了 {type(value).__name__}: {value}")
    if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], bool)):
        return say(f"it returned {value!r:.60}; return a pair (result, replayed) with replayed a bool",
                   f"它返回了 {value!r:.60}；请返回一对 (result, replayed)，其中 replayed 是 bool")
    return None


def check_idempotency_store(cls: Any) -> bool:
    """Run a fresh `cls()` through six scenarios; explain the first where a write happens twice,
    a replay is wrong, or a conflict is missed."""
    if not_answered(cls):
        return failed(say("Not answered yet: write the class (with async def run(self, key, arguments, write)) and pass "
                          "the class itself.",
                          "还没有作答：写出这个类（带 async def run(self, key, arguments, write)），并传入类本身。"))  # fmt: skip
    store, problem = _store_of(cls)
    if problem:
        return failed(problem)
    outcomes, _ = _direct(cls(), [("k0", {"topic": "retries"})])
    if shape := _pair_shape(outcomes[0]):
        return failed(say(f"case 'one call': {shape}.", f"{_case('one call')}：{shape}。"))

    records, outcome = _retry_after_timeout(store)
    attempts = [a.outcome for a in outcome.attempts]
    retried = _case("a retry after a timeout")
    if outcome.execution.error_code in ("UPSTREAM_ERROR",) and not records:
        return failed(say(f"case 'a retry after a timeout': your run() failed inside the real tool "
                          f"({outcome.execution.result['error']['message']}); see the server log of an Executor, or "
                          "call it directly: await store.run('k', {'a': 1}, write).",
                          f"{retried}：你的 run() 在真实的工具里失败了（{outcome.execution.result['error']['message']}）；"
                          "看看 Executor 的服务器日志，或者直接调用它：await store.run('k', {'a': 1}, write)。"))  # fmt: skip
    if len(records) != 1:
        return failed(say(f"case 'a retry after a timeout': the first attempt stored the record and then timed out; "
                          f"the retry wrote again — {len(records)} records for one request (attempts {attempts}). Save "
                          "the result under the key as soon as write() returns, and look the key up first.",
                          f"{retried}：第一次尝试存下了记录，然后超时；重试又写了一次——一个请求产生了 {len(records)} 条记录"
                          f"（各次尝试：{attempts}）。write() 一返回就把结果存在这个键下，并且先查这个键。"))  # fmt: skip
    data = outcome.execution.result.get("data", {})
    if not outcome.execution.ok or data.get("replayed") is not True:
        return failed(say(f"case 'a retry after a timeout': one record, good, but the retry should answer with the "
                          f"stored result and replayed=True; it answered {outcome.execution.output[:90]}.",
                          f"{retried}：只有一条记录，很好；但重试应该用存下的结果作答，并带上 replayed=True；"
                          f"它的回答是 {outcome.execution.output[:90]}。"))

    for label, steps, check in (
        ("the same key, the same arguments in another key order",
         [("k1", {"topic": "strict mode", "priority": 2}), ("k1", {"priority": 2, "topic": "strict mode"})], "replay"),
        ("the same key with other arguments",
         [("k1", {"topic": "strict mode"}), ("k1", {"topic": "retries"})], "conflict"),
        ("two different keys", [("k1", {"topic": "strict mode"}), ("k2", {"topic": "strict mode"})], "two"),
    ):  # fmt: skip
        case = _case(label)
        outcomes, writes = _direct(cls(), steps)
        first = _pair_shape(outcomes[0])
        if first:
            return failed(say(f"case '{label}': first call: {first}.", f"{case}：第一次调用：{first}。"))
        second = outcomes[1]
        if check == "conflict":
            if not isinstance(second, IdempotencyConflict):
                got = (say(f"it raised {type(second).__name__}", f"它抛出了 {type(second).__name__}")
                       if isinstance(second, Exception) else say(f"it returned {second!r:.50}", f"它返回了 {second!r:.50}"))
                return failed(say(f"case '{label}': {got}. The same key with different arguments is a client bug: "
                                  "raise IdempotencyConflict (from course_lib.approval) and write nothing.",
                                  f"{case}：{got}。同一个键配上不同的参数是客户端的 bug：抛出 IdempotencyConflict"
                                  "（来自 course_lib.approval），什么也不写。"))
            if writes != ["1"]:
                return failed(say(f"case '{label}': you raised the conflict, but after writing: writes {writes}.",
                                  f"{case}：你抛出了冲突，但那是在写入之后：写入记录 {writes}。"))
            continue
        if check == "replay" and isinstance(second, Exception):
            return failed(say(f"case '{label}': the second call raised {type(second).__name__}, but its arguments equal "
                              "the first call's as objects — only the key order differs. Compare them as objects, or as "
                              "json.dumps(..., sort_keys=True).",
                              f"{case}：第二次调用抛出了 {type(second).__name__}，可是作为对象，它的参数和第一次调用的相等"
                              "——只是键的顺序不同。把它们当对象比较，或者比较 json.dumps(..., sort_keys=True)。"))  # fmt: skip
        if shape := _pair_shape(second):
            return failed(say(f"case '{label}': second call: {shape}.", f"{case}：第二次调用：{shape}。"))
        if check == "replay" and (writes != ["1"] or second != (outcomes[0][0], True)):
            return failed(say(f"case '{label}': the second call should replay the first result (replayed=True) and write "
                              f"nothing; writes {writes}, second call {second!r:.60}. Compare arguments as objects (or as "
                              "JSON with sort_keys=True), not as raw text.",
                              f"{case}：第二次调用应该重放第一次的结果（replayed=True），什么也不写；写入记录 {writes}，"
                              f"第二次调用 {second!r:.60}。把参数当对象比较（或者比较 sort_keys=True 的 JSON），"
                              "不要比较原始文本。"))  # fmt: skip
        if check == "two" and (writes != ["1", "2"] or second[1] is not False):
            return failed(say(f"case '{label}': another key is another action: it must write; writes {writes}, second "
                              f"call {second!r:.60}.",
                              f"{case}：另一个键就是另一个动作：它必须写入；写入记录 {writes}，第二次调用 {second!r:.60}。"))

    label = "two calls with the same key at the same time"
    outcomes, writes = _direct(cls(), [("k1", {"topic": "retries"}), ("k1", {"topic": "retries"})], concurrent=True)
    if len(writes) != 1:
        return failed(say(f"case '{label}': both ran write() ({len(writes)} writes). Between your lookup and your save "
                          "there is an await, so the second call looked before the first saved. Hold a lock per key "
                          "(anyio.Lock) around the lookup, the write and the save.",
                          f"{_case(label)}：两次调用都运行了 write()（{len(writes)} 次写入）。在你的查找和保存之间有一个 "
                          "await，所以第二次调用在第一次保存之前就查过了。给每个键配一把锁（anyio.Lock），"
                          "把查找、写入和保存都包在锁里。"))  # fmt: skip
    if any(_pair_shape(o) for o in outcomes) or sorted(o[1] for o in outcomes) != [False, True]:
        return failed(say(f"case '{label}': one write, good; the waiting call should replay it (replayed=True). "
                          f"Outcomes: {outcomes!r:.90}.",
                          f"{_case(label)}：只写了一次，很好；等待的那次调用应该重放它（replayed=True）。"
                          f"结果：{outcomes!r:.90}。"))

    label = "a write that failed, then the same key again"
    outcomes, writes = _direct(cls(), [("k1", {"topic": "retries"}), ("k1", {"topic": "retries"})], fail_first=True)
    if not isinstance(outcomes[0], ToolError):
        return failed(say(f"case '{label}': write() raised UPSTREAM_ERROR the first time; your run() should let the "
                          f"error through (it returned {outcomes[0]!r:.50}).",
                          f"{_case(label)}：write() 第一次抛出了 UPSTREAM_ERROR；你的 run() 应该让这个错误传出去"
                          f"（它却返回了 {outcomes[0]!r:.50}）。"))
    if writes != ["2"] or _pair_shape(outcomes[1]) or outcomes[1][1] is not False:
        return failed(say(f"case '{label}': nothing was stored the first time, so the second call must write "
                          f"(replayed=False); it gave {outcomes[1]!r:.60}. Store a result only after write() returned.",
                          f"{_case(label)}：第一次什么也没存下，所以第二次调用必须写入（replayed=False）；它给出的是 "
                          f"{outcomes[1]!r:.60}。只在 write() 返回之后才保存结果。"))
    return passed(say("all 6 scenarios right: a retried write took effect once, key order ignored, conflicts refused, "
                      "concurrent duplicates and failed writes handled.",
                      "6 个场景全部正确：重试的写入只生效一次，忽略了键的顺序，拒绝了冲突，"
                      "也处理好了并发的重复调用和失败的写入。"))

class _IdempotencyStoreSolution:
    def __init__(self) -> None:
        self.results: dict[str, tuple[str, Any]] = {}
        self.locks: dict[str, anyio.Lock] = {}

    async def run(self, key: str, arguments: dict[str, Any], write: Callable[[], Awaitable[Any]]) -> tuple[Any, bool]:
        fingerprint = json.dumps(arguments, sort_keys=True)
        async with self.locks.setdefault(key, anyio.Lock()):  # a duplicate waits, then replays
            if key in self.results:
                stored_fingerprint, result = self.results[key]
                if stored_fingerprint != fingerprint:
                    raise IdempotencyConflict(f"key {key!r} was used with other arguments")
                return result, True
            result = await write()  # if it raises, nothing is stored
            self.results[key] = (fingerprint, result)
            return result, False
