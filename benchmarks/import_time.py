"""Benchmark 4b: a quick first output — `import course_lib.course` against what a notebook's kernel loads anyway.

A notebook's first cell imports `course_lib.course`; the kernel itself has already paid for
`ipykernel`, and the course cannot do without `openai` and `mcp`. So the measure is a ratio: fresh
`python -c "import course_lib.course"` against fresh `python -c "import openai, mcp, ipykernel"`,
each minus a bare `python -c "pass"`, the runs interleaved, medians. Goal: at most 1.2×.

Also: whether `anthropic` (as slow to import as openai, and needed only by 04c's Messages cells) is
loaded by the import, and a fresh process's time to the first output of a notebook
(`import course_lib.course` + `start_course()`, which prints the backend line).
"""

from __future__ import annotations

import subprocess
import sys
import time

from benchmarks import REPO, Row, median, progress

BENCH = "4b first output"
RATIO_GOAL = 1.2
CODES = {
    "bare": "pass",
    "course": "import course_lib.course",
    "peers": "import openai, mcp, ipykernel",
    "first": "from course_lib.course import start_course; start_course(quiet=True).close()",
}
_LOADED = "import sys, course_lib.course; print('anthropic' in sys.modules)"


def _timed(code: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], cwd=REPO, check=True, capture_output=True, timeout=120)
    return time.perf_counter() - start


def measure(reps: int) -> dict[str, float]:
    """Median seconds of a fresh `python -c CODE` for each of `CODES`, the runs interleaved."""
    times: dict[str, list[float]] = {name: [] for name in CODES}
    for _ in range(reps):
        for name, code in CODES.items():
            times[name].append(_timed(code))
    return {name: median(values) for name, values in times.items()}


def run(quick: bool = False) -> list[Row]:
    reps = 3 if quick else 9
    progress(f"{BENCH}: {len(CODES)} commands, {reps} fresh processes each, interleaved")
    cost = measure(reps)
    course, peers = cost["course"] - cost["bare"], cost["peers"] - cost["bare"]
    ratio = course / peers if peers > 0 else float("inf")
    loaded = subprocess.run([sys.executable, "-c", _LOADED], cwd=REPO, check=True, capture_output=True, text=True,
                            timeout=120).stdout.strip() == "True"  # fmt: skip
    return [
        Row(BENCH, "import course_lib.course ÷ import openai, mcp, ipykernel", ratio, "×", f"≤ {RATIO_GOAL}×",
            ratio <= RATIO_GOAL, f"{course:.2f} s against {peers:.2f} s (fresh process − bare interpreter, medians)"),
        Row(BENCH, "import course_lib.course", course, "s"),
        Row(BENCH, "import openai, mcp, ipykernel", peers, "s"),
        Row(BENCH, "anthropic loaded by import course_lib.course", None, "", "not loaded", not loaded,
            note="loaded" if loaded else "not loaded: imported when a Messages client is made (04c)"),
        Row(BENCH, "fresh process to the first output (import + start_course())", cost["first"] - cost["bare"], "s"),
    ]


if __name__ == "__main__":
    from benchmarks.__main__ import main

    main(["import_time"])
