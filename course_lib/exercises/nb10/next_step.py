"""Notebook 10, drill 4: the next step after a failure.

`check_next_step(fn)`: `next_step(error, is_write, has_key) -> str` on real normalized errors
(the files server, a stale route, slow, flaky, lying and unapproved tools, a version conflict),
each on every kind of tool: 36 cases.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from course_lib.exercises import failed, passed
from course_lib.exercises.answers import raised, shown
from course_lib.exercises.guard import guard_checks
from course_lib.exercises.nb10._common import CASE_LABELS_ZH, _function, _returned
from course_lib.lang import say

NEXT_STEPS = ("retry", "check_status", "fix_arguments", "search_again", "reread", "wait_for_approval", "stop")
"""What the app (and the model) should do next, from the source's table 失败不是一种结果."""

_STEP_WHY = {
    "retry": ("it can recover soon (retryable true) and repeating it is safe (a read, or a write under its "
              "idempotency key): retry with backoff and a cap",
              "它很快可能恢复（retryable 为 true），而且重复执行是安全的（一次读取，或带幂等键的写入）：带退避、有上限地重试"),
    "check_status": ("it could recover, but it is a write without an idempotency key: the first attempt may "
                     "already have written. Query the state first (a timed-out payment is checked, not re-sent)",
                     "它有可能恢复，但它是一次没有幂等键的写入：第一次尝试可能已经写入了。先查询状态"
                     "（超时的支付要先核查，而不是重新发送）"),
    "fix_arguments": ("the arguments break the rule: the model fixes them (once), repeating them fails again",
                      "参数违反了规则：由模型修正（一次），原样重复只会再次失败"),
    "search_again": ("the resource does not exist: search again, or say clearly it was not found",
                     "资源不存在：重新搜索，或者明确说没有找到"),
    "reread": ("the state changed under the call: read it again, then let the user or the flow decide",
               "调用期间状态变了：重新读取，再交给用户或流程决定"),
    "wait_for_approval": ("a person must approve this exact action: pause and show it (requires_action)",
                          "必须有人批准这个确切的动作：暂停，并把它展示出来（requires_action）"),
    "stop": ("permission does not come back by asking again: stop, or ask the user for access",
             "权限不会因为再问一次就回来：停止，或者请用户授予权限"),
    "stop upstream": ("retryable is false: the failure is permanent (a broken route, a tool returning the wrong "
                      "shape): fail, alert, and don't let the model guess",
                      "retryable 为 false，这次失败是永久性的（路由坏了，或工具返回的结构不对）：报告失败、发出告警，"
                      "别让模型去猜"),
}  # fmt: skip
"""Why each move is the next step: (English, 中文)."""

_MOVE_FOR = {
    "retry": ("a failure that can recover (retryable true) where repeating is safe",
              "可以恢复（retryable 为 true）且重复执行安全的失败"),
    "check_status": ("a write without an idempotency key that may already have happened",
                     "一次没有幂等键、可能已经发生了的写入"),
    "fix_arguments": ("INVALID_INPUT only", "仅限 INVALID_INPUT"),
    "search_again": ("NOT_FOUND only", "仅限 NOT_FOUND"),
    "reread": ("CONFLICT only", "仅限 CONFLICT"),
    "wait_for_approval": ("APPROVAL_REQUIRED only", "仅限 APPROVAL_REQUIRED"),
    "stop": ("a failure with no way forward (FORBIDDEN, or retryable false)",
             "无路可走的失败（FORBIDDEN，或 retryable 为 false）"),
}
"""What each move is for: said back to a learner who picked it where it does not fit."""

# (label in nb05.recorded_errors(), what it was, is_write, has_key)
STEP_CASES: list[tuple[str, str, bool, bool]] = [
    ("INVALID_INPUT", "a read whose head was the text \"5\"", False, False),
    ("FORBIDDEN", "a read of /etc/passwd", False, False),
    ("NOT_FOUND", "a read of /workspace/missing.txt", False, False),
    ("TIMEOUT", "a read that did not answer in time", False, False),
    ("UPSTREAM_ERROR transient", "a search while the index restarts", False, False),
    ("UPSTREAM_ERROR protocol", "a read through a route to a tool the server does not have", False, False),
    ("UPSTREAM_ERROR bad output", "a search whose tool returned the wrong shape", False, False),
    ("APPROVAL_REQUIRED", "a write nobody approved yet", True, False),
    ("CONFLICT", "a write whose note changed meanwhile", True, True),
    ("TIMEOUT", "a write without an idempotency key that did not answer in time", True, False),
    ("TIMEOUT", "a write with an idempotency key that did not answer in time", True, True),
    ("UPSTREAM_ERROR transient", "a write without an idempotency key while the index restarts", True, False),
    ("INVALID_INPUT", "a write with bad arguments", True, True),
]  # fmt: skip


def step_errors() -> dict[str, dict[str, Any]]:
    """Real normalized errors by label (the same ones notebook 05's exercise uses)."""
    from course_lib.exercises.nb05 import recorded_errors

    return copy.deepcopy(recorded_errors())


def step_cases() -> list[tuple[str, str, str, bool, bool]]:
    """Every recorded failure on every kind of tool (a read; a write with and without an
    idempotency key; a read sent under a key): `STEP_CASES` first, then the rest of the 36 pairs.
    (label, what it was, 中文, is_write, has_key)."""
    from course_lib.exercises.nb05 import failure_grid

    return failure_grid(STEP_CASES, CASE_LABELS_ZH)


def check_next_step(fn: Callable[[dict[str, Any], bool, bool], str]) -> bool:
    """Run `fn(error, is_write, has_key)` on every case of `step_cases`; explain the first wrong next step."""
    if problem := _function(fn, "next_step", "error, is_write, has_key"):
        return failed(problem)
    errors = step_errors()
    cases = step_cases()
    for number, (label, what, what_zh, is_write, has_key) in enumerate(cases, start=1):
        error = errors[label]
        shown_case = say("case {n} ({what}: {code}, retryable {retryable}; is_write={is_write}, has_key={has_key})",
                         "用例 {n}（{what}：{code}，retryable {retryable}；is_write={is_write}，has_key={has_key}）",
                         n=number, what=say(what, what_zh), code=error["code"], retryable=json.dumps(error["retryable"]),
                         is_write=is_write, has_key=has_key)  # fmt: skip
        try:
            got = fn(copy.deepcopy(error), is_write, has_key)
        except Exception as exc:
            return failed(say("{case}: next_step raised {error}. The error has the keys {keys}.",
                              "{case}：next_step 抛出了 {error}。这个错误的键有 {keys}。",
                              case=shown_case, error=raised(exc), keys=", ".join(error)))
        if got is ...:
            return failed(say("Not answered yet: next_step still returns ... — return one of NEXT_STEPS.",
                              "还没有作答：next_step 仍然返回 ...，请返回 NEXT_STEPS 中的一个。"))
        if not isinstance(got, str) or got not in NEXT_STEPS:
            steps = ", ".join(NEXT_STEPS)
            if not isinstance(got, str):
                return failed(say("{case}: next_step returned {got} Return one of NEXT_STEPS: {steps}.",
                                  "{case}：next_step 返回了 {got}请返回 NEXT_STEPS 中的一个：{steps}。",
                                  case=shown_case, got=_returned(got), steps=steps))
            near = next((step for step in NEXT_STEPS if step == got.strip().lower().replace(" ", "_")), None)
            hint = say(" (did you mean {near!r}? the steps are written exactly so)", "（你是不是想写 {near!r}？步骤要一字不差）",
                       near=near) if near else ""
            return failed(say("{case}: {got} is not a next step{hint}; return one of {steps}.",
                              "{case}：{got} 不是一种下一步{hint}；请返回其中之一：{steps}。",
                              case=shown_case, got=shown(got), hint=hint, steps=steps))
        expected = _next_step_solution(error, is_write, has_key)
        if got != expected:
            extra = (say(" (the code alone says UPSTREAM_ERROR; the retryable flag says whether it can recover)",
                         "（单看错误码只知道是 UPSTREAM_ERROR；能不能恢复，要看 retryable 标志）")
                     if error["code"] == "UPSTREAM_ERROR" else "")  # fmt: skip
            why = say(*_STEP_WHY["stop upstream" if expected == "stop" and error["code"] != "FORBIDDEN" else expected])
            return failed(say("{case}: you said {got!r}, the move for {move}; the next step is {expected!r}: {why}{extra}.",
                              "{case}：你选的是 {got!r}（它适用于：{move_zh}）；下一步应该是 {expected!r}：{why}{extra}。",
                              case=shown_case, got=got, move=_MOVE_FOR[got][0], move_zh=_MOVE_FOR[got][1],
                              expected=expected, why=why, extra=extra))
    return passed(say("next_step picks the right move for all {n} cases: every real failure, on a read and on a write "
                      "with and without an idempotency key.",
                      "next_step 对全部 {n} 个用例都选对了下一步：每一种真实失败，发生在读取上，也发生在带或不带幂等键的写入上。",
                      n=len(cases)))


def _next_step_solution(error: dict[str, Any], is_write: bool, has_key: bool) -> str:
    by_code = {"INVALID_INPUT": "fix_arguments", "NOT_FOUND": "search_again", "CONFLICT": "reread",
               "APPROVAL_REQUIRED": "wait_for_approval", "FORBIDDEN": "stop"}  # fmt: skip
    if error["code"] in by_code:
        return by_code[error["code"]]
    if not error["retryable"]:
        return "stop"
    return "check_status" if is_write and not has_key else "retry"


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
