"""What several of notebook 10's drills share: the user, the read tool, a write's arguments,
running async code from a check, and the "is it a function yet?" test."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from anyio.from_thread import start_blocking_portal
from pydantic import BaseModel, ConfigDict

from course_lib.exercises import not_answered
from course_lib.execution import Session

ALICE = Session("alice")

READ = "fs__read_text_file"
"""The files server's read tool, under the name the offline model calls it by."""


class _SaveArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    topic: str


def _run(async_fn: Callable[[], Awaitable[Any]]) -> Any:
    """Run `async_fn()` on an event loop of its own (a notebook cell already runs inside one)."""
    with start_blocking_portal() as portal:
        return portal.call(async_fn)


def _function(fn: Any, name: str, signature: str) -> str | None:
    """Why `fn` is not a usable answer yet, or None."""
    if not_answered(fn):
        return f"Not answered yet: write {name}({signature}) and pass the function itself."
    if not callable(fn):
        return f"Pass the function itself ({name}, without parentheses); you passed {fn!r:.60}."
    return None
