"""Checks for notebook 05 (errors and retries).

- `check_should_retry(fn)`: the learner's `should_retry(error, is_write, has_key) -> bool` is run on
  real normalized errors (produced here by the execution layer: the files MCP server, a stale
  route, a slow tool, a flaky tool, a lying tool, an unapproved write...) and compared with the
  course's own verdict, `retry.retry_verdict`.
  Every recorded failure is tried with every (is_write, has_key) pair: 36 cases.
- `check_retry_policy(policy)`: the learner's `RetryPolicy` is run with `execute_with_retries`
  against a tool that fails twice, with a fake sleep, once with every random draw at its lowest
  and once at its highest: the constraints must hold at both ends, so they hold for every seed.

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`);
the error dicts they quote (codes, `retryable`, messages) stay as the execution layer wrote them.
"""

from __future__ import annotations

import copy
import json
import math
import random
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from typing import Any

import anyio
from anyio.from_thread import start_blocking_portal
from pydantic import BaseModel, ConfigDict

from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import passed_a_call, raised, shown, type_name, unassigned
from course_lib.execution import Execution, Executor, Session, Tool, ToolError
from course_lib.exercises.guard import guard_checks
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


# ---- the real failures the cases of exercise 1 are made of ----------------------------------------


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


# ---- the cases: every recorded failure, on every kind of tool ------------------------------------

# (label in recorded_errors, what it was, is_write, has_key): the cases a learner meets first, in
# the order that teaches; `failure_grid` adds every other (failure, kind of tool) pair after them.
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

TOOL_KINDS: dict[tuple[bool, bool], tuple[str, str]] = {
    (False, False): ("a read", "一次读取"),
    (True, False): ("a write without an idempotency key", "一次没有幂等键的写入"),
    (True, True): ("a write with an idempotency key", "一次带幂等键的写入"),
    (False, True): ("a read sent under an idempotency key", "一次带着幂等键的读取"),
}
"""(is_write, has_key) → the kind of call, (English, 中文): every pair the signature allows."""

FAILURES: dict[str, tuple[str, str]] = {
    "INVALID_INPUT": ("whose arguments broke the rule (head was the text \"5\")", "参数违反了规则（head 写成了文本 \"5\"）"),
    "FORBIDDEN": ("refused for lack of permission (/etc/passwd)", "因为没有权限被拒绝（/etc/passwd）"),
    "NOT_FOUND": ("whose target does not exist (/workspace/missing.txt)", "目标不存在（/workspace/missing.txt）"),
    "UPSTREAM_ERROR protocol": ("through a route to a tool the server does not have", "经由路由指向服务器没有的工具"),
    "TIMEOUT": ("that did not answer in time", "没有按时答复"),
    "UPSTREAM_ERROR transient": ("while the index restarts", "发生在索引重启期间"),
    "UPSTREAM_ERROR bad output": ("whose tool returned the wrong shape", "工具返回了错误的形状"),
    "APPROVAL_REQUIRED": ("that nobody approved yet", "还没有人批准"),
    "CONFLICT": ("whose note changed meanwhile", "笔记在此期间已被改动"),
}
"""Each recorded failure (a label of `recorded_errors`), as a case describes it (English, 中文)."""


def failure_grid(curated: list[tuple[str, str, bool, bool]], zh: dict[str, str]) -> list[tuple[str, str, str, bool, bool]]:
    """Every recorded failure on every kind of tool (9 × 4 = 36 cases), `curated` first in its
    order: (label, what it was, 中文, is_write, has_key). A verdict must hold for every input the
    signature allows, not for the sample a learner happens to be shown."""
    cases = [(label, what, zh[what], is_write, has_key) for label, what, is_write, has_key in curated]
    seen = {(label, is_write, has_key) for label, _, is_write, has_key in curated}
    for (is_write, has_key), (kind, kind_zh) in TOOL_KINDS.items():
        for label, (what, what_zh) in FAILURES.items():
            if (label, is_write, has_key) not in seen:
                cases.append((label, f"{kind} {what}", f"{kind_zh}，{what_zh}", is_write, has_key))
    return cases


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


# ---- exercise 1: should_retry -------------------------------------------------------------------


def check_should_retry(fn: Callable[[dict[str, Any], bool, bool], bool]) -> bool:
    """Run `fn(error, is_write, has_key)` on every recorded failure with every (is_write, has_key)
    pair; report the first wrong verdict."""
    if not_answered(fn):
        return failed(unassigned("should_retry", "should_retry(error, is_write, has_key)", through=""))
    if not callable(fn) or isinstance(fn, type):
        return failed(passed_a_call("should_retry", fn))
    errors = recorded_errors()
    cases = failure_grid(RETRY_CASES, _WHAT_ZH)
    for number, (label, what, what_zh, is_write, has_key) in enumerate(cases, start=1):
        error = copy.deepcopy(errors[label])  # a fresh copy: the learner may change it freely
        case = say("case {number} ({what}: {error}; is_write={is_write}, has_key={has_key})",
                   "例子 {number}（{what}：{error}；is_write={is_write}，has_key={has_key}）",
                   number=number, what=say(what, what_zh), error=_describe(error), is_write=is_write,
                   has_key=has_key)  # fmt: skip
        try:
            got = fn(copy.deepcopy(error), is_write, has_key)
        except Exception as exc:
            hint = (say(" It is called as should_retry(error, is_write, has_key): three arguments.",
                        "它的调用方式是 should_retry(error, is_write, has_key)：三个参数。")
                    if isinstance(exc, TypeError) else "")  # fmt: skip
            return failed(say("{case}: should_retry raised {exc}. The error dict has the keys {keys}.{hint}",
                              "{case}：should_retry 抛出了 {exc}。这个 error 字典的键是 {keys}。{hint}",
                              case=case, exc=raised(exc), keys=", ".join(error), hint=hint))
        if got is ... and number == 1:
            return failed(say("Not answered yet: should_retry still returns ... — replace it with your rule.",
                              "还没有作答：should_retry 仍然返回 ...，请把它换成你的规则。"))
        if got is None:
            return failed(say("{case}: should_retry returned None: one path through it has no return statement; "
                              "every path must return True or False.",
                              "{case}：should_retry 返回了 None：它有一条路径没有 return 语句；每条路径都必须返回 True 或 False。",
                              case=case))
        if type(got) is not bool:
            return failed(say("{case}: you returned {got} ({kind}); return True or False.",
                              "{case}：你返回了 {got}（{kind}）；请返回 True 或 False。",
                              case=case, got=shown(got), kind=type_name(got)))
        expected = expected_retry(error, is_write, has_key)
        if got != expected:
            verdict = say("retry", "重试") if got else say("not to retry", "不重试")
            why = _explain(error, is_write, has_key, expected)
            gap = " " if why[:1].isascii() else ""  # a space between Chinese and a code word, none before Chinese
            return failed(say("{case}: you said {verdict}, but {why}.", "{case}：你的判断是{verdict}，但{gap}{why}。",
                              case=case, verdict=verdict, why=why, gap=gap))
    return passed(say("should_retry agrees with the course's verdict on all {n} cases: every real failure, on a read "
                      "and on a write with and without an idempotency key.",
                      "在全部 {n} 个例子上，should_retry 都与课程的判定一致：每一种真实失败，发生在读取上，"
                      "也发生在带或不带幂等键的写入上。", n=len(cases)))


def _should_retry_solution(error: dict[str, Any], is_write: bool, has_key: bool) -> bool:
    if not error["retryable"]:  # the flag, not the code: an UPSTREAM_ERROR can be permanent
        return False
    return has_key or not is_write  # a write is repeated only under its idempotency key


# ---- exercise 2: a retry policy that meets the constraints ------------------------------------

MAX_ATTEMPTS = 3
MIN_FIRST_WAIT = 0.1
MAX_TOTAL_WAIT = 0.5
MIN_JITTER = 0.1


class _Edge(random.Random):
    """A random source pinned to one end of every draw: `random()` is always 0 (`top=False`) or 1.

    `uniform(a, b)` is `a + (b - a) * random()`, so each wait the policy draws is the lowest or the
    highest it can ever draw. A wait grows or shrinks with the draw, so the two runs at the ends
    bound every run with any seed: the check tests the constraints for every seed, not for a sample.
    """

    def __init__(self, top: bool) -> None:
        super().__init__(0)
        self.top = top

    def random(self) -> float:
        return 1.0 if self.top else 0.0


class _AtTheEdge:
    """The learner's policy with every draw pinned to one end (`_Edge`); everything else is the
    policy's own, so `execute_with_retries` applies its attempt cap and its budget as written."""

    def __init__(self, policy: RetryPolicy, top: bool) -> None:
        self._policy, self._rng = policy, _Edge(top)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._policy, name)

    def delay(self, retry_number: int, rng: random.Random) -> float:
        return self._policy.delay(retry_number, self._rng)


def run_policy(policy: Any, failures: int = 2) -> tuple[bool, list[str], list[float], str]:
    """Run `policy` against a tool that fails `failures` times with a transient UPSTREAM_ERROR,
    with a fake sleep: (succeeded, attempt outcomes, waits, why it stopped).

    Raises:
        Exception: whatever the policy's own methods raise.
    """
    calls: list[str] = []

    async def flaky(args: Any, ctx: Any) -> Any:
        calls.append(ctx.action_id)
        if len(calls) <= failures:
            raise ToolError("UPSTREAM_ERROR", "the notes index is restarting", retryable=True)
        return {"hits": [args.query]}

    executor = Executor([Tool("search_notes", "Search notes", _QueryArgs, flaky)])

    async def fake_sleep(seconds: float) -> None:
        pass

    async def go() -> Any:
        return await execute_with_retries(executor, "call_1", "search_notes", '{"query": "retries"}', ALICE,
                                          policy=policy, sleep=fake_sleep)  # fmt: skip

    outcome = _run(go)
    waits = [attempt.waited for attempt in outcome.attempts[1:]]  # a wait of 0 sleeps not at all, yet it counts
    return outcome.execution.ok, [a.outcome for a in outcome.attempts], waits, outcome.stopped_because


_NUMBERS = ("base_delay", "factor", "max_delay", "jitter", "budget")


def _field_problem(policy: RetryPolicy) -> str | None:
    """Why a field of `policy` cannot be a number of waiting (a str, NaN, a bool...), or None."""
    attempts = policy.max_attempts
    if type(attempts) is not int:
        return say("max_attempts={got} ({kind}): it counts attempts, so give a whole number (an int, written without "
                   "a decimal point or quotes).",
                   "max_attempts={got}（{kind}）：它数的是尝试次数，所以要给整数（int，不带小数点，也不带引号）。",
                   got=shown(attempts), kind=type_name(attempts))
    for name in _NUMBERS:
        value = getattr(policy, name)
        if isinstance(value, bool) or not isinstance(value, int | float):
            return say("{name}={got} ({kind}): give a number of seconds (or a plain number for factor and jitter).",
                       "{name}={got}（{kind}）：请给一个秒数（factor 和 jitter 给普通的数字）。",
                       name=name, got=shown(value), kind=type_name(value))
        if not math.isfinite(value):
            return say("{name}={got}: a wait must be a finite number; NaN and infinity compare false with every limit, "
                       "so no constraint could hold.",
                       "{name}={got}：等待必须是有限的数字；NaN 和无穷大与任何上限比较都不成立，任何约束都无从谈起。",
                       name=name, got=shown(value))
    try:
        random.Random(policy.seed)
    except Exception as error:  # a list, a dict...: what the retry loop's random source refuses
        return say("seed={got}: random.Random refuses it ({error}); leave seed=None (fresh randomness) or give an int.",
                   "seed={got}：random.Random 不接受它（{error}）；保留 seed=None（每次新的随机数），或者给一个整数。",
                   got=shown(policy.seed), error=raised(error))
    return None


def _waits(waits: list[float]) -> str:
    return ", ".join(f"{w:g}s" for w in waits) or say("none", "无")


def check_retry_policy(policy: RetryPolicy) -> bool:
    """Check the constraints for every seed: run the policy with every random draw at its lowest,
    then at its highest, against a tool that fails twice."""
    if not_answered(policy):
        return failed(say("Not answered yet: set policy = RetryPolicy(...) with your numbers.",
                          "还没有作答：用你选的数字设置 policy = RetryPolicy(...)。"))
    if isinstance(policy, type) and issubclass(policy, RetryPolicy):
        return failed(say("You passed the class RetryPolicy itself: create one with your numbers, "
                          "RetryPolicy(max_attempts=..., base_delay=..., ...).",
                          "你传入的是 RetryPolicy 这个类本身：请用你的数字创建一个实例，"
                          "RetryPolicy(max_attempts=..., base_delay=..., ...)。"))
    if not isinstance(policy, RetryPolicy):
        if type(policy).__module__.split(".")[0] == "tenacity":
            return failed(say("{kind} is tenacity's: it carries the mechanics, but this exercise asks for course_lib's "
                              "RetryPolicy(max_attempts=..., base_delay=..., factor=..., jitter=..., budget=...).",
                              "{kind} 来自 tenacity：它负责重试的机制，但这个练习要的是 course_lib 的 "
                              "RetryPolicy(max_attempts=..., base_delay=..., factor=..., jitter=..., budget=...)。",
                              kind=type_name(policy)))
        return failed(say("Pass a RetryPolicy(...) (from course_lib.retry); you passed {kind} {value}.",
                          "请传入一个 RetryPolicy(...)（来自 course_lib.retry）；你传入的是 {kind} {value}。",
                          kind=type_name(policy), value=shown(policy)))
    if problem := _field_problem(policy):
        return failed(problem)
    if policy.max_attempts > MAX_ATTEMPTS:
        return failed(say("max_attempts={got}: the constraint is at most {cap} attempts "
                          "(every attempt costs the user time and the service load).",
                          "max_attempts={got}：约束是最多尝试 {cap} 次（每次尝试都耗费用户的时间，也给服务增加负载）。",
                          got=policy.max_attempts, cap=MAX_ATTEMPTS))
    if policy.max_attempts < MAX_ATTEMPTS:
        return failed(say("max_attempts={got}: the tool fails twice and works on the third attempt, so the policy must "
                          "allow {cap} attempts (the first one counts).",
                          "max_attempts={got}：这个工具失败两次，第三次尝试才成功，所以策略必须允许 {cap} 次尝试（第一次也算在内）。",
                          got=policy.max_attempts, cap=MAX_ATTEMPTS))
    if policy.jitter < MIN_JITTER:
        return failed(say("jitter={jitter:g}: keep at least {low:g}, so clients that failed together "
                          "do not all retry at the same instant.",
                          "jitter={jitter:g}：至少保留 {low:g}，这样同时失败的客户端不会在同一瞬间一起重试。",
                          jitter=policy.jitter, low=MIN_JITTER))
    runs = {}
    for top in (False, True):
        try:
            runs[top] = run_policy(_AtTheEdge(policy, top))
        except Exception as error:  # a subclass's own delay(), or numbers the retry loop cannot use
            return failed(say("running your policy raised {error}; keep to RetryPolicy's numbers.",
                              "运行你的策略时抛出了 {error}；请只用 RetryPolicy 的那些数字。", error=raised(error)))
    for ok, outcomes, waits, why in runs.values():
        if not all(isinstance(wait, int | float) and math.isfinite(wait) for wait in waits):
            return failed(say("your policy drew the waits {waits}: every wait must be a finite number of seconds.",
                              "你的策略抽到的等待是 {waits}：每次等待都必须是有限的秒数。", waits=shown(waits)))
    for top, (ok, outcomes, waits, why) in runs.items():
        if not ok:
            end = say("the longest", "最长") if top else say("the shortest", "最短")
            return failed(say("with {end} waits your policy can draw ({shown}), the tool that fails twice never "
                              "succeeded: attempts {outcomes}; it stopped because {why}. Three attempts must fit in "
                              "your limits whatever the random draw.",
                              "按你的策略能抽到的{end}等待（{shown}），那个失败两次的工具始终没有成功：各次尝试 {outcomes}；"
                              "停止原因：{why}。不管随机抽到什么，你的限制里都必须容得下三次尝试。",
                              end=end, shown=_waits(waits), outcomes=", ".join(outcomes), why=why))
    firsts = [waits[0] for _, _, waits, _ in runs.values()]
    longest = max((waits for _, _, waits, _ in runs.values()), key=sum)
    if min(firsts) < MIN_FIRST_WAIT:
        return failed(say("the shortest wait your policy can draw before the first retry is {low:g}s; it must be at "
                          "least {limit:g}s whatever the draw (a seed only picks where in the range a wait falls). "
                          "Jitter draws part of each wait at random, so it can shrink the first one to "
                          "{low:g}s: raise base_delay or lower jitter.",
                          "按你的策略，第一次重试前能抽到的最短等待是 {low:g}s；不管抽到什么，它都必须至少是 {limit:g}s"
                          "（种子只决定一次等待落在范围里的哪里）。抖动会随机抽取每次等待的一部分，所以它能把第一次等待"
                          "缩短到 {low:g}s：调高 base_delay，或调低 jitter。",
                          low=min(firsts), limit=MIN_FIRST_WAIT))
    if sum(longest) > MAX_TOTAL_WAIT + 1e-9:
        return failed(say("the longest waits your policy can draw, {shown}, add up to {total:.3g}s; the limit is "
                          "{limit:g}s whatever the draw. Lower base_delay or factor (or max_delay).",
                          "按你的策略能抽到的最长等待 {shown} 合计 {total:.3g}s；不管抽到什么，上限都是 {limit:g}s。"
                          "调低 base_delay 或 factor（或 max_delay）。",
                          shown=_waits(longest), total=sum(longest), limit=MAX_TOTAL_WAIT))
    return passed(say("whatever the random draw: success by attempt {cap}, first wait at least {low:g}s (≥ {limit:g}s), "
                      "total wait at most {total:.3g}s (≤ {budget:g}s), jitter {jitter:g}.",
                      "不管随机抽到什么：最迟第 {cap} 次尝试成功，第一次等待至少 {low:g}s（≥ {limit:g}s），"
                      "总等待至多 {total:.3g}s（≤ {budget:g}s），jitter 为 {jitter:g}。",
                      cap=MAX_ATTEMPTS, low=min(firsts), limit=MIN_FIRST_WAIT, total=sum(longest),
                      budget=MAX_TOTAL_WAIT, jitter=policy.jitter))


SOLUTIONS: Solutions = {
    "check_should_retry": lambda: _should_retry_solution,
    # every wait lies between 0.8 and 1 of its delay (or 1.2 with ±jitter): first wait ≥ 0.125·0.8 = 0.1,
    # total ≤ (0.125 + 0.1875)·1.2 = 0.375
    "check_retry_policy": lambda: RetryPolicy(max_attempts=3, base_delay=0.125, factor=1.5, jitter=0.2, budget=0.5),
}


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
