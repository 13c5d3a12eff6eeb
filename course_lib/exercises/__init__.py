"""Exercises: one module per notebook (`nb01`, `nb02`, …), each with offline `check_…` functions.

A check takes the learner's answer, prints one line — `✓ …` when it is right, `✗ …` saying what
is wrong when it is not — and returns True or False. Each module also has `SOLUTIONS`: for every
check, a function returning the reference answer, so the tests run each solution through the
same check (a solution that stops passing fails the build).

`passed` and `failed` also record the outcome in the learner's progress file
(`course_lib.progress`: local, `COURSE_PROGRESS=off` turns it off). Which exercise it was is read
from the call stack — the outermost `check_…` function of `course_lib` that is running — so no
check has to name itself, a helper that returns `failed(...)` for its check is attributed to that
check, and a check that delegates to another (nb10 re-exports `drills.check_diagnoses`) is
recorded once, under the notebook that exposes it. A check whose `not_answered()` said True (the
starter `...` is still there) records "unanswered", not a mistake. Recording never changes what
a check prints or returns.

Why the stack and not a decorator on each check: the checks are plain functions in fifteen
modules that change often; reading the running function's name needs no edit in any of them, and
a check added tomorrow is recorded without anyone remembering to mark it. (Each module does put its
checks under `guard.guard_checks` with one line at its end: the time limit and the bound on
printing; a verdict the guard gives itself, a timeout, is recorded under `running_exercise()`.)
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from course_lib import progress

Solutions = dict[str, Callable[[], Any]]

_NOTEBOOK_MODULE = re.compile(r"course_lib\.exercises\.(nb\w+)")


def passed(message: str) -> bool:
    """Report a right answer."""
    _say_verdict("✓", message)
    _record(True, message)
    return True


def failed(message: str) -> bool:
    """Report a wrong (or missing) answer, saying what is wrong."""
    from course_lib.exercises.guard import timed_out_message

    message = timed_out_message() or message  # after a stop, the stop is what happened
    _say_verdict("✗", message)
    _record(False, message)
    return False


def _say_verdict(mark: str, message: str) -> None:
    """One line on the stream the check began with (the learner's own printing is bounded apart,
    `guard`), with a note when some of that printing was hidden."""
    from course_lib.exercises.guard import mark_reported, take_hidden_note, verdict_stream

    print(f"{mark} {message}{take_hidden_note()}", file=verdict_stream())
    mark_reported()


def not_answered(answer: Any) -> bool:
    """True while the learner has not replaced the starter (`...` or None)."""
    blank = answer is ... or answer is None
    if blank:  # the outcome the running check reports next is "not answered yet", not a mistake
        global _starter_left
        try:
            _starter_left = _outermost_check(inspect.currentframe())
        except Exception:  # noqa: BLE001 — see _record
            pass
    return blank


_starter_left: FrameType | None = None
"""The running check whose not_answered() said True (cleared when that check reports)."""


def _record(is_right: bool, message: str) -> None:
    global _starter_left
    try:
        check = _outermost_check(inspect.currentframe())
        exercise = running_exercise() if check is None else exercise_name(check)
        starter_left, _starter_left = check is not None and check is _starter_left, None
    except Exception:  # noqa: BLE001 — finding the name must never break a check either
        return
    if exercise is not None:
        progress.record(exercise, progress.outcome_of(is_right, message, starter_left=starter_left), str(message))


def _outermost_check(frame: FrameType | None) -> FrameType | None:
    """The frame of the outermost `check_…` function of `course_lib` on the stack from `frame` up
    (None when passed()/failed() were not called under a check)."""
    outermost = None
    while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("course_lib"):
        if frame.f_code.co_name.startswith("check_"):
            outermost = frame
        frame = frame.f_back
    return outermost


def exercise_name(check: FrameType) -> str:
    """`nbXX.check_name` of a running check: the notebook module that exposes the function (nb10
    re-exports drills.check_diagnoses), else the module that defines it."""
    return _exercise(check.f_code, str(check.f_globals.get("__name__", "")))


def _exercise(code: Any, defined_in: str) -> str:
    name = code.co_name
    for module_name, module in sorted(sys.modules.items()):
        found = _NOTEBOOK_MODULE.fullmatch(module_name)
        if found and getattr(inspect.unwrap(getattr(module, name, None)), "__code__", None) is code:
            return f"{found[1]}.{name}"
    found = _NOTEBOOK_MODULE.match(defined_in)
    return f"{found[1] if found else defined_in.rsplit('.', 1)[-1]}.{name}"


def running_exercise() -> str | None:
    """`nbXX.check_name` of the check the guard runs now (its verdict given outside the check's own
    frame: a timeout), or None."""
    from course_lib.exercises.guard import running_check

    check = running_check()
    return None if check is None else _exercise(check.__code__, check.__module__)
