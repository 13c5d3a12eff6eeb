"""Exercises: one module per notebook (`nb01`, `nb02`, …), each with offline `check_…` functions.

A check takes the learner's answer, prints one line — `✓ …` when it is right, `✗ …` saying what
is wrong when it is not — and returns True or False. Each module also has `SOLUTIONS`: for every
check, a function returning the reference answer, so the tests run each solution through the
same check (a solution that stops passing fails the build).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Solutions = dict[str, Callable[[], Any]]


def passed(message: str) -> bool:
    """Report a right answer."""
    print(f"✓ {message}")
    return True


def failed(message: str) -> bool:
    """Report a wrong (or missing) answer, saying what is wrong."""
    print(f"✗ {message}")
    return False


def not_answered(answer: Any) -> bool:
    """True while the learner has not replaced the starter (`...` or None)."""
    return answer is ... or answer is None
