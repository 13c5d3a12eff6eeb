"""Checks for notebook 05 (errors and retries).

- `check_should_retry(fn)`: the learner's `should_retry(error, is_write, has_key) -> bool` is run on
  real normalized errors (produced here by the execution layer: the files MCP server, a stale
  route, a slow tool, a flaky tool, a lying tool, an unapproved write...) and compared with the
  course's own verdict, `retry.retry_verdict`.
- `check_retry_policy(policy)`: the learner's `RetryPolicy` is run with `execute_with_retries`
  against a tool that fails twice, with a fake sleep and many seeds, and must meet the stated
  constraints every time.

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`);
the error dicts they quote (codes, `retryable`, messages) stay as the execution layer wrote them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from typing import Any

import anyio
from anyio.from_thread import start_blocking_portal
from pydantic import BaseModel, ConfigDict

from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.execution import Execution, Executor, Session, Tool, ToolError
from course_lib.lang import say
from course_lib.retry import RetryPolicy, execute_with_retries, retry_verdict

ALICE = Session("alice")


def _run(async_fn: Callable[[], Any]) -> Any:
    """Run `async_fn()` on an event loop of its own (a notebook cell already runs inside one)."""
    with start_blocking_portal() as portal:
        return portal.call(async_fn)


class _QueryArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    query: str


class _HitsOut(BaseModel):
    hits: list[str]


# ---- exercise 1: should_retry -----------------------------------------------------------------


async def _slow(args: Any, ctx: Any) -> Any:
    await anyio.sleep(5)  # cancelled by the tool's timeout long before this ends


async def _restarting(args: Any, ctx: Any) -> Any:
    raise ToolError("UPSTREAM_ERROR", "the notes index is restarting", retryable=True)


async def _wrong_shape(args: Any, ctx: Any) -> Any:
    return {"results": "not the declared shape"}


async def _conflict(args: Any, ctx: Any) -> Any:
    raise ToolError("CONFLICT", "the note changed since it was read (version 3, expected 2)")


async def _never(args: Any, ctx: Any) -> Any:
    raise AssertionError("an unapproved write must never run")


def _local_errors() -> dict[str, dict[str, Any]]:
    """Errors from local tools: timeout, transient upstream, bad output, approval, conflict."""
    executor = Executor([
        Tool("search_notes", "slow search", _QueryArgs, _slow, timeout=0.01),
        Tool("index_notes", "restarting index", _QueryArgs, _restarting),
        Tool("lying_search", "returns the wrong shape", _QueryArgs, _wrong_shape, output_model=_HitsOut),
        Tool("save_learning_gap", "a write", _QueryArgs, _never, side_effect=True),
        Tool("update_note", "a versioned write", _QueryArgs, _conflict),
    ])  # fmt: skip
    text = '{"query": "idempotency"}'

    async def run_all() -> dict[str, dict[str, Any]]:
        return {name: (await executor.execute(f"call_{name}", name, text, ALICE)).result["error"]
                for name in executor.tools}  # fmt: skip

    errors = _run(run_all)
    return {"TIMEOUT": errors["search_notes"], "UPSTREAM_ERROR transient": errors["index_notes"],
            "UPSTREAM_ERROR bad output": errors["lying_search"], "APPROVAL_REQUIRED": errors["save_learning_gap"],
            "CONFLICT": errors["update_note"]}  # fmt: skip


def _files_errors() -> dict[str, dict[str, Any]]:
    """Errors from the real files MCP server, including a protocol error through a stale route."""
    from course_lib.arguments import ReadTextFileArgs
    from course_lib.host import files_host

    with files_host() as host:
        stale = replace(host.route("fs__read_text_file"), alias="fs__read_file", tool="read_file")
        host.routes[stale.alias] = stale  # a route left from an older tool list: the server has no read_file
        executor = Executor([host.executor_tool(alias, ReadTextFileArgs) for alias in ("fs__read_text_file", "fs__read_file")])
        calls = {
            "INVALID_INPUT": ("fs__read_text_file", '{"path": "/workspace/notes.txt", "head": "5"}'),
            "FORBIDDEN": ("fs__read_text_file", '{"path": "/etc/passwd"}'),
            "NOT_FOUND": ("fs__read_text_file", '{"path": "/workspace/missing.txt"}'),
            "UPSTREAM_ERROR protocol": ("fs__read_file", '{"path": "/workspace/notes.txt"}'),
        }
        return {label: host.run(executor.execute, f"call_{i}", name, text, ALICE).result["error"]
                for i, (label, (name, text)) in enumerate(calls.items(), start=1)}  # fmt: skip


@cache
def recorded_errors() -> dict[str, dict[str, Any]]:
    """Real normalized errors by label (computed once; callers get them through deep copies)."""
    return {**_files_errors(), **_local_errors()}


# (label in recorded_errors, what it was, is_write, has_key)
RETRY_CASES: list[tuple[str, str, bool, bool]] = [
    ("INVALID_INPUT", "a read whose head was the text \"5\"", False, False),
    ("FORBIDDEN", "a read of /etc/passwd", False, False),
    ("NOT_FOUND", "a read of /workspace/missing.txt", False, False),
    ("UPSTREAM_ERROR protocol", "a read through a route to a tool the server does not have", False, False),
    ("TIMEOUT", "a read that did not answer in time", False, False),
    ("UPSTREAM_ERROR transient", "a read while the index restarts", False, False),
    ("UPSTREAM_ERROR bad output", "a read whose tool returned the wrong shape", False, False),
    ("APPROVAL_REQUIRED", "a write nobody approved yet", True, False),
    ("TIMEOUT", "a write without an idempotency key that did not answer in time", True, False),
    ("UPSTREAM_ERROR transient", "a write without an idempotency key while the index restarts", True, False),
    ("TIMEOUT", "a write with an idempotency key that did not answer in time", True, True),
    ("UPSTREAM_ERROR transient", "a write with an idempotency key while the index restarts", True, True),
    ("CONFLICT", "a write with an idempotency key whose note changed meanwhile", True, True),
    ("INVALID_INPUT", "a write with an idempotency key and bad arguments", True, True),
]

_WHAT_ZH = {
    "a read whose head was the text \"5\"": "一次 head 写成文本 \"5\" 的读取",
    "a read of /etc/passwd": "一次对 /etc/passwd 的读取",
    "a read of /workspace/missing.txt": "一次对 /workspace/missing.txt 的读取",
    "a read through a route to a tool the server does not have": "一次经由路由、指向服务器没有的工具的读取",
    "a read that did not answer in time": "一次没有按时答复的读取",
    "a read while the index restarts": "一次在索引重启期间的读取",
    "a read whose tool returned the wrong shape": "一次工具返回了错误形状的读取",
    "a write nobody approved yet": "一次还没有人批准的写入",
    "a write without an idempotency key that did not answer in time": "一次没有幂等键、没有按时答复的写入",
    "a write without an idempotency key while the index restarts": "一次没有幂等键、在索引重启期间的写入",
    "a write with an idempotency key that did not answer in time": "一次带幂等键、没有按时答复的写入",
    "a write with an idempotency key while the index restarts": "一次带幂等键、在索引重启期间的写入",
    "a write with an idempotency key whose note changed meanwhile": "一次带幂等键、而笔记在此期间已被改动的写入",
    "a write with an idempotency key and bad arguments": "一次带幂等键、但参数有误的写入",
}
"""The Chinese of each case's description (RETRY_CASES keeps the English)."""


async def _stub(args: Any, ctx: Any) -> Any:
    return {}


_VERDICT_TOOLS = Executor([
    Tool("read", "a read", _QueryArgs, _stub),
    Tool("write", "a write without a key", _QueryArgs, _stub, side_effect=True),
    Tool("write_with_key", "an idempotent write", _QueryArgs, _stub, side_effect=True, idempotent=True),
])  # fmt: skip


def expected_retry(error: dict[str, Any], is_write: bool, has_key: bool) -> bool:
    """The course's own answer: `retry_verdict` on an execution that failed with `error`."""
    tool = "write_with_key" if has_key else "write" if is_write else "read"
    execution = Execution("call_x", tool, "{}", "trace-x", result={"ok": False, "error": error})
    return retry_verdict(execution, _VERDICT_TOOLS) is None


_WHY_NOT = {
    "INVALID_INPUT": ("the same arguments break the same rule again: the model must fix them, not repeat them",
                      "同样的参数会再次违反同一条规则：模型必须修正它们，而不是重复它们"),
    "FORBIDDEN": ("permission does not come back by asking twice: stop or ask for access",
                  "权限不会因为再问一次就回来：停下，或申请权限"),
    "NOT_FOUND": ("the file will not appear by reading again: search, or say it is missing",
                  "文件不会因为再读一次就出现：去搜索，或说明它不存在"),
    "APPROVAL_REQUIRED": ("it waits for a person, not for time: pause and show the action",
                          "它等的是一个人，不是时间：暂停，并把这个动作展示出来"),
    "CONFLICT": ("the state changed: re-read it, then decide; repeating the write cannot fix that",
                 "状态已经变了：重新读取，再做决定；重复这次写入解决不了问题"),
}


def _describe(error: dict[str, Any]) -> str:
    kind = say(", kind {kind}", "，kind {kind}", kind=error["kind"]) if "kind" in error else ""
    return say("{code}, retryable {retryable}{kind}", "{code}，retryable {retryable}{kind}",
               code=error["code"], retryable=json.dumps(error["retryable"]), kind=kind)


def _explain(error: dict[str, Any], is_write: bool, has_key: bool, expected: bool) -> str:
    if expected:
        if is_write:
            return say("a write with an idempotency key is safe to repeat: the second attempt carries the same key "
                       "and gets the stored result instead of writing twice",
                       "带幂等键的写入可以安全地重复：第二次尝试带着同一个键，拿到的是已保存的结果，而不会写两次")
        if error["code"] != "TIMEOUT":
            return say("retryable is true: TIMEOUT is not the only failure that recovers; this {code} is "
                       "transient, and a read is safe to repeat. Decide from the flag, not from a list of codes",
                       "retryable 为 true：可能恢复的失败不只有 TIMEOUT；这个 {code} 是暂时性的，而读取可以安全地重复。"
                       "要根据这个标志来判断，而不是根据一份错误码清单", code=error["code"])
        return say("retryable is true and a read is safe to repeat: retry it (a bounded number of times). has_key "
                   "matters only for writes: a read needs no idempotency key",
                   "retryable 为 true，而读取可以安全地重复：重试它（次数有上限）。has_key 只对写入有意义：读取不需要幂等键")
    if not error["retryable"]:
        if error["code"] == "UPSTREAM_ERROR":
            return say("this UPSTREAM_ERROR has retryable false (the failure is permanent): read the flag, not only "
                       "the code",
                       "这个 UPSTREAM_ERROR 的 retryable 为 false（这是永久性的失败）：要看这个标志，而不只是看错误码")
        why = _WHY_NOT.get(error["code"], ("another identical attempt fails the same way", "再一次完全相同的尝试会以同样的方式失败"))
        return say("retryable is false: {why}", "retryable 为 false：{why}", why=say(*why))
    return say("it is a write without an idempotency key: the first attempt may already have written, so a retry "
               "could write twice",
               "这是一次没有幂等键的写入：第一次尝试可能已经写入了，所以重试可能会写两次")


def check_should_retry(fn: Callable[[dict[str, Any], bool, bool], bool]) -> bool:
    """Run `fn(error, is_write, has_key)` on each real case; report the first wrong verdict."""
    if not_answered(fn):
        return failed(say("Not answered yet: write should_retry(error, is_write, has_key) and pass the function itself.",
                          "还没有作答：写出 should_retry(error, is_write, has_key)，并传入函数本身。"))
    if not callable(fn):
        return failed(say("Pass the function itself (should_retry, without parentheses); you passed {fn!r}.",
                          "请传入函数本身（should_retry，不带括号）；你传入的是 {fn!r}。", fn=fn))
    errors = recorded_errors()
    for number, (label, what, is_write, has_key) in enumerate(RETRY_CASES, start=1):
        error = copy.deepcopy(errors[label])  # a fresh copy: the learner may change it freely
        shown = say("case {number} ({what}: {error}; is_write={is_write}, has_key={has_key})",
                    "例子 {number}（{what}：{error}；is_write={is_write}，has_key={has_key}）",
                    number=number, what=say(what, _WHAT_ZH[what]), error=_describe(error), is_write=is_write,
                    has_key=has_key)  # fmt: skip
        try:
            got = fn(copy.deepcopy(error), is_write, has_key)
        except Exception as exc:
            return failed(say("{shown}: should_retry raised {kind}: {exc}. The error dict has the keys {keys}.",
                              "{shown}：should_retry 抛出了 {kind}: {exc}。这个 error 字典的键是 {keys}。",
                              shown=shown, kind=type(exc).__name__, exc=exc, keys=", ".join(error)))
        if got is ... and number == 1:
            return failed(say("Not answered yet: should_retry still returns ... — replace it with your rule.",
                              "还没有作答：should_retry 仍然返回 ...，请把它换成你的规则。"))
        if got is None:
            return failed(say("{shown}: should_retry returned None: one path through it has no return statement; "
                              "every path must return True or False.",
                              "{shown}：should_retry 返回了 None：它有一条路径没有 return 语句；每条路径都必须返回 True 或 False。",
                              shown=shown))
        if type(got) is not bool:
            return failed(say("{shown}: you returned {got!r}; return True or False.",
                              "{shown}：你返回了 {got!r}；请返回 True 或 False。", shown=shown, got=got))
        expected = expected_retry(error, is_write, has_key)
        if got != expected:
            verdict = say("retry", "重试") if got else say("not to retry", "不重试")
            why = _explain(error, is_write, has_key, expected)
            gap = " " if why[:1].isascii() else ""  # a space between Chinese and a code word, none before Chinese
            return failed(say("{shown}: you said {verdict}, but {why}.", "{shown}：你的判断是{verdict}，但{gap}{why}。",
                              shown=shown, verdict=verdict, why=why, gap=gap))
    return passed(say("should_retry agrees with the course's verdict on all {n} real failures.",
                      "在全部 {n} 个真实失败上，should_retry 都与课程的判定一致。", n=len(RETRY_CASES)))


def _should_retry_solution(error: dict[str, Any], is_write: bool, has_key: bool) -> bool:
    if not error["retryable"]:  # the flag, not the code: an UPSTREAM_ERROR can be permanent
        return False
    return has_key or not is_write  # a write is repeated only under its idempotency key


# ---- exercise 2: a retry policy that meets the constraints ------------------------------------

MAX_ATTEMPTS = 3
MIN_FIRST_WAIT = 0.1
MAX_TOTAL_WAIT = 0.5
MIN_JITTER = 0.1
SEEDS = range(50)


def run_policy(policy: RetryPolicy, failures: int = 2) -> tuple[bool, list[str], list[float], str]:
    """Run `policy` against a tool that fails `failures` times with a transient UPSTREAM_ERROR,
    with a fake sleep: (succeeded, attempt outcomes, waits, why it stopped)."""
    calls: list[str] = []

    async def flaky(args: Any, ctx: Any) -> Any:
        calls.append(ctx.action_id)
        if len(calls) <= failures:
            raise ToolError("UPSTREAM_ERROR", "the notes index is restarting", retryable=True)
        return {"hits": [args.query]}

    executor = Executor([Tool("search_notes", "Search notes", _QueryArgs, flaky)])
    waits: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waits.append(seconds)

    async def go() -> Any:
        return await execute_with_retries(executor, "call_1", "search_notes", '{"query": "retries"}', ALICE,
                                          policy=policy, sleep=fake_sleep)  # fmt: skip

    outcome = _run(go)
    return outcome.execution.ok, [a.outcome for a in outcome.attempts], waits, outcome.stopped_because


def check_retry_policy(policy: RetryPolicy) -> bool:
    """Check the constraints by running the policy (with 50 seeds) against a tool that fails twice."""
    if not_answered(policy):
        return failed(say("Not answered yet: set policy = RetryPolicy(...) with your numbers.",
                          "还没有作答：用你选的数字设置 policy = RetryPolicy(...)。"))
    if policy is RetryPolicy:
        return failed(say("You passed the class RetryPolicy itself: create one with your numbers, "
                          "RetryPolicy(max_attempts=..., base_delay=..., ...).",
                          "你传入的是 RetryPolicy 这个类本身：请用你的数字创建一个实例，"
                          "RetryPolicy(max_attempts=..., base_delay=..., ...)。"))
    if not isinstance(policy, RetryPolicy):
        return failed(say("Pass a RetryPolicy(...) (from course_lib.retry); you passed {kind}.",
                          "请传入一个 RetryPolicy(...)（来自 course_lib.retry）；你传入的是 {kind}。",
                          kind=type(policy).__name__))
    if policy.max_attempts > MAX_ATTEMPTS:
        return failed(say("max_attempts={got}: the constraint is at most {cap} attempts "
                          "(every attempt costs the user time and the service load).",
                          "max_attempts={got}：约束是最多尝试 {cap} 次（每次尝试都耗费用户的时间，也给服务增加负载）。",
                          got=policy.max_attempts, cap=MAX_ATTEMPTS))
    if policy.jitter < MIN_JITTER:
        return failed(say("jitter={jitter:g}: keep at least {low:g}, so clients that failed together "
                          "do not all retry at the same instant.",
                          "jitter={jitter:g}：至少保留 {low:g}，这样同时失败的客户端不会在同一瞬间一起重试。",
                          jitter=policy.jitter, low=MIN_JITTER))
    if policy.jitter >= 1:
        return failed(say("jitter={jitter:g} is a fraction of the delay: at 1 or more a wait can shrink to "
                          "nothing (or below), so the service gets no pause at all; keep it well below 1.",
                          "jitter={jitter:g} 是延迟的一个比例：达到 1 或更大时，一次等待可能缩短到零（甚至更低），"
                          "服务就完全得不到喘息；让它远小于 1。", jitter=policy.jitter))
    if policy.max_delay < policy.base_delay:
        return failed(say("max_delay={cap:g} is below base_delay={base:g}: every delay is "
                          "capped at max_delay, so base_delay never applies; raise max_delay or lower base_delay.",
                          "max_delay={cap:g} 小于 base_delay={base:g}：每次延迟都以 max_delay 为上限，"
                          "所以 base_delay 永远不起作用；调高 max_delay，或调低 base_delay。",
                          cap=policy.max_delay, base=policy.base_delay))
    for seed in SEEDS:
        ok, outcomes, waits, why = run_policy(replace(policy, seed=seed))
        shown = ", ".join(f"{w:g}s" for w in waits) or say("none", "无")
        if not ok:
            return failed(say("with seed {seed} the tool that fails twice never succeeded: attempts {outcomes}, "
                              "waits {shown}; it stopped because {why}. Three attempts must fit in your limits.",
                              "种子为 {seed} 时，那个失败两次的工具始终没有成功：各次尝试 {outcomes}，等待 {shown}；"
                              "停止原因：{why}。你的限制里必须容得下三次尝试。",
                              seed=seed, outcomes=outcomes, shown=shown, why=why))
        if waits and waits[0] < MIN_FIRST_WAIT:
            lowest = policy.base_delay * (1 - policy.jitter)
            return failed(say("with seed {seed} the first wait was {first:g}s; it must be at least "
                              "{low:g}s. Jitter can shrink base_delay by the jitter fraction: "
                              "{base:g}·(1 − {jitter:g}) = {lowest:.3g}s (the seed only picks where "
                              "in that range a wait falls; the check tries 50).",
                              "种子为 {seed} 时，第一次等待是 {first:g}s；它必须至少是 {low:g}s。"
                              "抖动可以把 base_delay 按 jitter 的比例缩短：{base:g}·(1 − {jitter:g}) = {lowest:.3g}s"
                              "（种子只决定一次等待落在这个范围的哪里；检查会试 50 个种子）。",
                              seed=seed, first=waits[0], low=MIN_FIRST_WAIT, base=policy.base_delay,
                              jitter=policy.jitter, lowest=lowest))
        if sum(waits) > MAX_TOTAL_WAIT + 1e-9:
            return failed(say("with seed {seed} the waits {shown} add up to {total:.3f}s; the limit is "
                              "{limit:g}s (jitter can stretch each delay by the jitter fraction).",
                              "种子为 {seed} 时，等待 {shown} 合计 {total:.3f}s；上限是 {limit:g}s"
                              "（抖动可以把每次延迟按 jitter 的比例拉长）。",
                              seed=seed, shown=shown, total=sum(waits), limit=MAX_TOTAL_WAIT))
    return passed(say("over {n} seeds: success by attempt {cap}, first wait ≥ {low:g}s, "
                      "total wait ≤ {limit:g}s, jitter {jitter:g}.",
                      "在 {n} 个种子上：最迟第 {cap} 次尝试成功，第一次等待 ≥ {low:g}s，总等待 ≤ {limit:g}s，jitter 为 {jitter:g}。",
                      n=len(SEEDS), cap=MAX_ATTEMPTS, low=MIN_FIRST_WAIT, limit=MAX_TOTAL_WAIT, jitter=policy.jitter))


SOLUTIONS: Solutions = {
    "check_should_retry": lambda: _should_retry_solution,
    # first wait ≥ 0.125·0.8 = 0.1; total ≤ (0.125 + 0.1875)·1.2 = 0.375
    "check_retry_policy": lambda: RetryPolicy(max_attempts=3, base_delay=0.125, factor=1.5, jitter=0.2, budget=0.5),
}
