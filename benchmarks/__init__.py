"""Benchmarks of course_lib against real peers; they print figures and never fail on a missed goal.

    python -m benchmarks                 # everything, one table (what `make bench` runs)
    python -m benchmarks loop parallel   # some of them: tool_call, loop, parallel, course, http
    python -m benchmarks --quick         # fewer repetitions: a smoke run, not figures to quote

Each module has `run(quick) -> list[Row]`. Speed goals live here, never in timed tests: the
machine the tests run on may be busy, and a slow second is not a wrong answer.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parent.parent
F = TypeVar("F", bound=Callable[..., Any])


@dataclass
class Row:
    """One printed figure: what it is, its value, and its goal (if it has one)."""

    bench: str  # "1 tool call", ...
    what: str
    value: float | None  # None: not measured (see `note`)
    unit: str  # "µs", "ms", "s", "×"
    goal: str = ""  # shown as is, e.g. "≤ 1.00×"
    met: bool | None = None  # None: informational, no goal
    note: str = ""

    def figure(self) -> str:
        if self.value is None:
            return self.note or "not measured"
        if self.unit == "×":
            return f"{self.value:.2f}×"
        digits = 0 if abs(self.value) >= 100 else 1 if abs(self.value) >= 10 else 2
        return f"{self.value:.{digits}f} {self.unit}"

    def verdict(self) -> str:
        if self.met is None:
            return "skipped" if self.goal and self.value is None else "—"
        return "MET" if self.met else "MISSED"


def median(values: Iterable[float]) -> float:
    return statistics.median(list(values))


def ratio_row(bench: str, what: str, ours: float, theirs: float, *, limit: float, note: str = "") -> Row:
    """`ours / theirs` with the goal `≤ limit×`."""
    value = ours / theirs
    return Row(bench, what, value, "×", f"≤ {limit:.2f}×", value <= limit, note)


class Stopwatch:
    """Adds up the wall time and the CPU time (of the calling thread) spent inside wrapped callables."""

    def __init__(self) -> None:
        self.ns = self.cpu_ns = self.calls = 0

    def wrap(self, fn: F) -> F:
        @wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start, cpu = time.perf_counter_ns(), time.thread_time_ns()
            try:
                return fn(*args, **kwargs)
            finally:
                self.cpu_ns += time.thread_time_ns() - cpu
                self.ns += time.perf_counter_ns() - start
                self.calls += 1

        return timed  # type: ignore[return-value]

    def take(self) -> int:
        """The wall time added since the last take, in ns; resets everything."""
        ns, self.ns, self.cpu_ns, self.calls = self.ns, 0, 0, 0
        return ns


def load_average() -> str:
    try:
        return "/".join(f"{x:.1f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def elapsed(start: float) -> str:
    return f"{time.perf_counter() - start:.1f} s"


def progress(message: str) -> None:
    """Progress goes to stderr so the table on stdout stays clean."""
    import sys

    print(f"[bench] {message}", file=sys.stderr, flush=True)
