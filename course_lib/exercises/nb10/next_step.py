"""Notebook 10, drill 4: the next step after a failure.

`check_next_step(fn)`: `next_step(error, is_write, has_key) -> str` on real normalized errors
(the files server, a stale route, slow, flaky, lying and unapproved tools, a version conflict).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from course_lib.exercises import failed, passed
from course_lib.exercises.nb10._common import _function

NEXT_STEPS = ("retry", "check_status", "fix_arguments", "search_again", "reread", "wait_for_approval", "stop")
"""What the app (and the model) should do next, from the source's table 失败不是一种结果."""

_STEP_WHY = {
    "retry": "it can recover soon (retryable true) and repeating it is safe (a read, or a write under its "
             "idempotency key): retry with backoff and a cap",
    "check_status": "it could recover, but it is a write without an idempotency key: the first attempt may "
                    "already have written. Query the state first (a timed-out payment is checked, not re-sent)",
    "fix_arguments": "the arguments break the rule: the model fixes them (once), repeating them fails again",
    "search_again": "the resource does not exist: search again, or say clearly it was not found",
    "reread": "the state changed under the call: read it again, then let the user or the flow decide",
    "wait_for_approval": "a person must approve this exact action: pause and show it (requires_action)",
    "stop": "permission does not come back by asking again: stop, or ask the user for access",
    "stop upstream": "retryable is false — the failure is permanent (a broken route, a tool returning the wrong "
                     "shape): fail, alert, and don't let the model guess",
}  # fmt: skip

_MOVE_FOR = {
    "retry": "a failure that can recover (retryable true) where repeating is safe",
    "check_status": "a write without an idempotency key that may already have happened",
    "fix_arguments": "INVALID_INPUT only",
    "search_again": "NOT_FOUND only",
    "reread": "CONFLICT only",
    "wait_for_approval": "APPROVAL_REQUIRED only",
    "stop": "a failure with no way forward (FORBIDDEN, or retryable false)",
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


def check_next_step(fn: Callable[[dict[str, Any], bool, bool], str]) -> bool:
    """Run `fn(error, is_write, has_key)` on 13 real failures; explain the first wrong next step."""
    if problem := _function(fn, "next_step", "error, is_write, has_key"):
        return failed(problem)
    errors = step_errors()
    for number, (label, what, is_write, has_key) in enumerate(STEP_CASES, start=1):
        error = errors[label]
        flags = f"is_write={is_write}, has_key={has_key}"
        shown = f"case {number} ({what}: {error['code']}, retryable {json.dumps(error['retryable'])}; {flags})"
        try:
            got = fn(copy.deepcopy(error), is_write, has_key)
        except Exception as exc:
            return failed(f"{shown}: next_step raised {type(exc).__name__}: {exc}. The error has the keys "
                          f"{', '.join(error)}.")
        if got is ...:
            return failed("Not answered yet: next_step still returns ... — return one of NEXT_STEPS.")
        if got not in NEXT_STEPS:
            return failed(f"{shown}: {got!r} is not a next step; return one of {', '.join(NEXT_STEPS)}.")
        expected = _next_step_solution(error, is_write, has_key)
        if got != expected:
            extra = (" (the code alone says UPSTREAM_ERROR; the retryable flag says whether it can recover)"
                     if error["code"] == "UPSTREAM_ERROR" else "")  # fmt: skip
            why = _STEP_WHY["stop upstream" if expected == "stop" and error["code"] != "FORBIDDEN" else expected]
            return failed(f"{shown}: you said {got!r}, the move for {_MOVE_FOR[got]}; the next step is {expected!r}: "
                          f"{why}{extra}.")
    return passed(f"next_step picks the right move for all {len(STEP_CASES)} real failures.")


def _next_step_solution(error: dict[str, Any], is_write: bool, has_key: bool) -> str:
    by_code = {"INVALID_INPUT": "fix_arguments", "NOT_FOUND": "search_again", "CONFLICT": "reread",
               "APPROVAL_REQUIRED": "wait_for_approval", "FORBIDDEN": "stop"}  # fmt: skip
    if error["code"] in by_code:
        return by_code[error["code"]]
    if not error["retryable"]:
        return "stop"
    return "check_status" if is_write and not has_key else "retry"
