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
from course_lib.exercises.answers import raised, same, shown, type_name
from course_lib.exercises.nb10._common import ALICE, _case, _run, _SaveArgs
from course_lib.execution import CallContext, Executor, Tool, ToolError
from course_lib.exercises.guard import guard_checks
from course_lib.lang import say
from course_lib.retry import RetryPolicy, execute_with_retries


async def _no_sleep(seconds: float) -> None:
    pass


HANG_LIMIT = 2.0
"""Seconds a store's `run` may take in the direct scenarios (each write takes 0.02 s): a store that
waits on a lock it already holds never returns, and the check must still answer."""


class _Hung(Exception):
    """`run` did not return within `HANG_LIMIT` seconds."""


def _attribute(value: Any, name: str) -> Any:
    """`getattr(value, name, None)`, None too when looking it up raises something else."""
    try:
        return getattr(value, name, None)
    except Exception:
        return None


def _store_of(cls: Any) -> tuple[Any, str | None]:
    """A fresh store made by `cls()`, or why none can be made."""
    if not isinstance(cls, type) and not inspect.isfunction(cls) and inspect.iscoroutinefunction(_attribute(cls, "run")):
        return None, say("Pass the class itself ({name}, without parentheses): the check makes a fresh store for "
                         "each scenario; you passed an instance.",
                         "请传入类本身（{name}，不带括号）：检查会为每个场景新建一个存储；你传入的是一个实例。",
                         name=type_name(cls))
    if not callable(cls):
        return None, say("Pass the class itself (the one with async def run(self, key, arguments, write)); you passed "
                         "{kind} {value}.",
                         "请传入类本身（带 async def run(self, key, arguments, write) 的那个类）；你传入的是 {kind} {value}。",
                         kind=type_name(cls), value=shown(cls))
    try:
        store = cls()
    except Exception as error:
        return None, say("{name}() raised {error}; it must take no arguments.", "{name}() 抛出了 {error}；它必须不带参数。",
                         name=_attribute(cls, "__name__") or type_name(cls), error=raised(error))
    run = _attribute(store, "run")
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
            with anyio.fail_after(HANG_LIMIT):
                outcomes[i] = await store.run(key, copy.deepcopy(arguments), writer(str(i + 1)))
        except TimeoutError:
            outcomes[i] = _Hung()
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
    if isinstance(value, _Hung):
        return say("run() did not return within {s:g} s: does it wait on a lock it already holds? (a lock is not "
                   "reentrant: take it once, around the lookup, the write and the save)",
                   "run() 在 {s:g} 秒内没有返回：它是不是在等一把自己已经拿着的锁？（锁不可重入："
                   "只拿一次，把查找、写入和保存包在里面）", s=HANG_LIMIT)
    if isinstance(value, Exception):
        return say("it raised {error}", "它抛出了 {error}", error=raised(value))
    if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], bool)):
        return say("it returned {value}; return a pair (result, replayed) with replayed a bool",
                   "它返回了 {value}；请返回一对 (result, replayed)，其中 replayed 是 bool", value=_shown_outcome(value))
    return None


def _shown_outcome(value: Any) -> str:
    """An outcome of `store.run` as a message quotes it: an exception by its name, else a short repr."""
    if isinstance(value, _Hung):
        return say("no answer within {s:g} s", "{s:g} 秒内没有答复", s=HANG_LIMIT)
    return raised(value) if isinstance(value, BaseException) else shown(value)


def _fresh(cls: Any) -> Any:
    """Another fresh store (the first one was made, and looked at, by `_store_of`)."""
    return cls()


def check_idempotency_store(cls: Any) -> bool:
    """Run a fresh `cls()` through six scenarios; explain the first where a write happens twice,
    a replay is wrong, or a conflict is missed."""
    if not_answered(cls):
        return failed(say("Not answered yet: write the class (with async def run(self, key, arguments, write)), then "
                          "set answer = the class itself (without parentheses) and run the cell again.",
                          "还没有作答：写出这个类（带 async def run(self, key, arguments, write)），然后令 answer = "
                          "这个类本身（不带括号），再运行这个单元格。"))  # fmt: skip
    store, problem = _store_of(cls)
    if problem:
        return failed(problem)
    try:
        return _scenarios(cls, store)
    except Exception as error:  # a class whose second instance cannot be made, and the like
        return failed(say("making a fresh store for the next scenario raised {error}: {name}() must work every time.",
                          "为下一个场景新建存储时抛出了 {error}：{name}() 必须每次都能成功。",
                          error=raised(error), name=_attribute(cls, "__name__") or type_name(cls)))


def _scenarios(cls: Any, store: Any) -> bool:
    outcomes, _ = _direct(_fresh(cls), [("k0", {"topic": "retries"})])
    if shape := _pair_shape(outcomes[0]):
        return failed(say("{case}: {shape}.", "{case}：{shape}。", case=_case("one call"), shape=shape))

    records, outcome = _retry_after_timeout(store)
    attempts = ", ".join(a.outcome for a in outcome.attempts)
    retried = _case("a retry after a timeout")
    error = (outcome.execution.result or {}).get("error") or {}
    if not records:
        if error.get("code") == "TIMEOUT":
            return failed(say("{case}: your run() never finished inside the real tool (attempts {attempts}): does it "
                              "await write() at all, or wait on a lock it already holds?",
                              "{case}：你的 run() 在真实的工具里始终没有完成（各次尝试：{attempts}）：它到底有没有 await "
                              "write()，还是在等一把自己已经拿着的锁？", case=retried, attempts=attempts))
        return failed(say("{case}: your run() failed inside the real tool ({message}) and wrote nothing; call it "
                          "directly to see why: await store.run('k', {{'a': 1}}, write).",
                          "{case}：你的 run() 在真实的工具里失败了（{message}），什么也没写；直接调用它看看原因："
                          "await store.run('k', {{'a': 1}}, write)。",
                          case=retried, message=error.get("message", attempts)))
    if len(records) != 1:
        return failed(say("{case}: the first attempt stored the record and then timed out; the retry wrote again: "
                          "{n} records for one request (attempts {attempts}). Save the result under the key as soon "
                          "as write() returns, and look the key up first.",
                          "{case}：第一次尝试存下了记录，然后超时；重试又写了一次：一个请求产生了 {n} 条记录"
                          "（各次尝试：{attempts}）。write() 一返回就把结果存在这个键下，并且先查这个键。",
                          case=retried, n=len(records), attempts=attempts))
    data = (outcome.execution.result or {}).get("data") or {}
    if not outcome.execution.ok or not isinstance(data, dict) or data.get("replayed") is not True:
        return failed(say("{case}: one record, good, but the retry should answer with the stored result and "
                          "replayed=True; it answered {answer}.",
                          "{case}：只有一条记录，很好；但重试应该用存下的结果作答，并带上 replayed=True；它的回答是 {answer}。",
                          case=retried, answer=shown(outcome.execution.output, 90)))

    for label, steps, check in (
        ("the same key, the same arguments in another key order",
         [("k1", {"topic": "strict mode", "priority": 2}), ("k1", {"priority": 2, "topic": "strict mode"})], "replay"),
        ("the same key with other arguments",
         [("k1", {"topic": "strict mode"}), ("k1", {"topic": "retries"})], "conflict"),
        ("two different keys", [("k1", {"topic": "strict mode"}), ("k2", {"topic": "strict mode"})], "two"),
    ):  # fmt: skip
        case = _case(label)
        outcomes, writes = _direct(_fresh(cls), steps)
        if first := _pair_shape(outcomes[0]):
            return failed(say("{case}: first call: {first}.", "{case}：第一次调用：{first}。", case=case, first=first))
        second = outcomes[1]
        if check == "conflict":
            if not isinstance(second, IdempotencyConflict):
                got = (say("it raised {error}", "它抛出了 {error}", error=_shown_outcome(second))
                       if isinstance(second, Exception) else say("it returned {value}", "它返回了 {value}", value=shown(second, 50)))
                return failed(say("{case}: {got}. The same key with different arguments is a client bug: raise "
                                  "IdempotencyConflict (from course_lib.approval) and write nothing.",
                                  "{case}：{got}。同一个键配上不同的参数是客户端的 bug：抛出 IdempotencyConflict"
                                  "（来自 course_lib.approval），什么也不写。", case=case, got=got))
            if writes != ["1"]:
                return failed(say("{case}: you raised the conflict, but after writing: writes {writes}.",
                                  "{case}：你抛出了冲突，但那是在写入之后：写入记录 {writes}。", case=case, writes=writes))
            continue
        if check == "replay" and isinstance(second, Exception) and not isinstance(second, _Hung):
            return failed(say("{case}: the second call raised {error}, but its arguments equal the first call's as "
                              "objects: only the key order differs. Compare them as objects, or as "
                              "json.dumps(..., sort_keys=True).",
                              "{case}：第二次调用抛出了 {error}，可是作为对象，它的参数和第一次调用的相等：只是键的顺序不同。"
                              "把它们当对象比较，或者比较 json.dumps(..., sort_keys=True)。",
                              case=case, error=_shown_outcome(second)))  # fmt: skip
        if shape := _pair_shape(second):
            return failed(say("{case}: second call: {shape}.", "{case}：第二次调用：{shape}。", case=case, shape=shape))
        if check == "replay" and (writes != ["1"] or not same(second, (outcomes[0][0], True))):
            return failed(say("{case}: the second call should replay the first result (replayed=True) and write "
                              "nothing; writes {writes}, second call {second}. Compare arguments as objects (or as "
                              "JSON with sort_keys=True), not as raw text.",
                              "{case}：第二次调用应该重放第一次的结果（replayed=True），什么也不写；写入记录 {writes}，"
                              "第二次调用 {second}。把参数当对象比较（或者比较 sort_keys=True 的 JSON），不要比较原始文本。",
                              case=case, writes=writes, second=shown(second)))  # fmt: skip
        if check == "two" and (writes != ["1", "2"] or second[1] is not False):
            return failed(say("{case}: another key is another action: it must write; writes {writes}, second call "
                              "{second}.",
                              "{case}：另一个键就是另一个动作：它必须写入；写入记录 {writes}，第二次调用 {second}。",
                              case=case, writes=writes, second=shown(second)))

    case = _case("two calls with the same key at the same time")
    outcomes, writes = _direct(_fresh(cls), [("k1", {"topic": "retries"}), ("k1", {"topic": "retries"})], concurrent=True)
    if hung := next((o for o in outcomes if isinstance(o, _Hung)), None):
        return failed(say("{case}: {why}.", "{case}：{why}。", case=case, why=_pair_shape(hung)))
    if len(writes) != 1:
        return failed(say("{case}: both ran write() ({n} writes). Between your lookup and your save there is an await, "
                          "so the second call looked before the first saved. Hold a lock per key (anyio.Lock) around "
                          "the lookup, the write and the save.",
                          "{case}：两次调用都运行了 write()（{n} 次写入）。在你的查找和保存之间有一个 await，"
                          "所以第二次调用在第一次保存之前就查过了。给每个键配一把锁（anyio.Lock），"
                          "把查找、写入和保存都包在锁里。", case=case, n=len(writes)))  # fmt: skip
    if any(_pair_shape(o) for o in outcomes) or sorted(o[1] for o in outcomes) != [False, True]:
        shown_outcomes = ", ".join(_shown_outcome(o) for o in outcomes)
        return failed(say("{case}: one write, good; the waiting call should replay it (replayed=True). Outcomes: "
                          "{outcomes}.",
                          "{case}：只写了一次，很好；等待的那次调用应该重放它（replayed=True）。结果：{outcomes}。",
                          case=case, outcomes=shown_outcomes))

    case = _case("a write that failed, then the same key again")
    outcomes, writes = _direct(_fresh(cls), [("k1", {"topic": "retries"}), ("k1", {"topic": "retries"})], fail_first=True)
    if not isinstance(outcomes[0], ToolError):
        return failed(say("{case}: write() raised UPSTREAM_ERROR the first time; your run() should let the error "
                          "through (it gave {got}).",
                          "{case}：write() 第一次抛出了 UPSTREAM_ERROR；你的 run() 应该让这个错误传出去（它给出的却是 {got}）。",
                          case=case, got=_shown_outcome(outcomes[0])))
    if writes != ["2"] or _pair_shape(outcomes[1]) or outcomes[1][1] is not False:
        return failed(say("{case}: nothing was stored the first time, so the second call must write "
                          "(replayed=False); it gave {got}. Store a result only after write() returned.",
                          "{case}：第一次什么也没存下，所以第二次调用必须写入（replayed=False）；它给出的是 {got}。"
                          "只在 write() 返回之后才保存结果。", case=case, got=_shown_outcome(outcomes[1])))
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


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
