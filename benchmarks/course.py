"""Benchmark 4: the whole course headless, and what a fresh process pays before its first answer.

Notebooks: every `notebooks/[0-9]*.ipynb`, in order, each in a fresh kernel with nbclient (the
notebook on disk is not changed). Per notebook: kernel start, the cells, kernel shutdown, and the
kernel's CPU time. A notebook that fails is reported, not raised. Goal: all of them under 60 s.

Import: `python -c "import course_lib.course"` minus `python -c "pass"`, fresh subprocesses,
interleaved, median. Goal: under 0.5 s. One `python -X importtime` run attributes the import time
to top-level packages (sum of each package's own import time).

First run: in a fresh process, `start_course()` and the first `course.run(...)` (what each
notebook pays once), and `import jsonschema` — the MCP client imports it at the first
`tools/call` of a tool that declares an `outputSchema` — with and without the stand-in that
`import course_lib` puts in front of its slow optional import (`course_lib.fast_jsonschema`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from benchmarks import REPO, Row, median, progress

BENCH = "4 course"
NOTEBOOKS = REPO / "notebooks"
COURSE_GOAL_S = 60.0
IMPORT_GOAL_S = 0.5

_FIRST_RUN = """
import json, sys, time
t0 = time.perf_counter()
from course_lib.course import start_course
t1 = time.perf_counter()
course = start_course(quiet=True)
t2 = time.perf_counter()
had_jsonschema = "jsonschema" in sys.modules
course.run("Show the first 5 lines of /workspace/notes.txt")
t3 = time.perf_counter()
course.run("Show the first 5 lines of /workspace/notes.txt")
t4 = time.perf_counter()
course.close()
print(json.dumps({"import": t1 - t0, "start_course": t2 - t1, "first_run": t3 - t2, "second_run": t4 - t3,
                  "jsonschema_before_first_run": had_jsonschema}))
"""


def _python(code: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True, cwd=REPO,
                          timeout=120, check=True)


def _timed(code: str) -> float:
    start = time.perf_counter()
    _python(code)
    return time.perf_counter() - start


def import_cost(reps: int) -> dict[str, float]:
    """Median seconds of a fresh `python -c CODE` for each CODE, the runs interleaved."""
    codes = ("pass", "import course_lib", "import course_lib.course", "import openai, mcp", "import jsonschema",
             "import course_lib, jsonschema")
    times: dict[str, list[float]] = {code: [] for code in codes}
    for _ in range(reps):
        for code in codes:
            times[code].append(_timed(code))
    return {code: median(values) for code, values in times.items()}


def import_breakdown(top: int = 6) -> str:
    """The packages whose own import time adds up most, from one `-X importtime` run."""
    stderr = _python("import course_lib.course", "-X", "importtime").stderr
    by_package: dict[str, int] = defaultdict(int)
    for line in stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[0].startswith("import time:") and parts[0].split(":")[1].strip().isdigit():
            by_package[parts[2].strip().split(".")[0]] += int(parts[0].split(":")[1])
    total = sum(by_package.values())
    ranked = sorted(by_package.items(), key=lambda kv: -kv[1])[:top]
    return f"one -X importtime run, {total / 1e6:.2f} s of module bodies: " + ", ".join(
        f"{name} {us / 1e6:.2f} s" for name, us in ranked)


@dataclass
class NotebookRun:
    name: str
    start_s: float
    cells_s: float
    shutdown_s: float
    kernel_cpu_s: float | None
    error: str | None = None

    @property
    def total_s(self) -> float:
        return self.start_s + self.cells_s + self.shutdown_s


def _kernel_cpu(client: object) -> float | None:
    try:
        import psutil

        pid = client.km.provisioner.pid  # type: ignore[attr-defined]
        times = psutil.Process(pid).cpu_times()
        return times.user + times.system + times.children_user + times.children_system
    except Exception:  # informational only
        return None


def run_notebook(path: Path) -> NotebookRun:
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}})
    error = None
    cpu = None
    with tempfile.TemporaryFile("w+") as kernel_stderr:  # the kernel's start-up warnings, shown only on failure
        t0 = time.perf_counter()
        cells_s = 0.0
        try:
            with client.setup_kernel(stderr=kernel_stderr):
                t1 = time.perf_counter()
                try:
                    for index, cell in enumerate(nb.cells):
                        client.execute_cell(cell, index, execution_count=client.code_cells_executed + 1)
                except CellExecutionError as failure:
                    error = str(failure).strip().splitlines()[-1][:200]
                finally:
                    cpu = _kernel_cpu(client)
                    t2 = time.perf_counter()
                    cells_s = t2 - t1
        except Exception as failure:  # the kernel would not start, or died
            kernel_stderr.seek(0)
            error = f"{type(failure).__name__}: {failure}; kernel stderr: {kernel_stderr.read()[-300:]}"
            t1 = t2 = time.perf_counter()
        t3 = time.perf_counter()
    return NotebookRun(path.name, t1 - t0, cells_s, t3 - t2, cpu, error)


def run(quick: bool = False) -> list[Row]:
    rows: list[Row] = []
    reps = 3 if quick else 7
    progress(f"{BENCH}: import time, {reps} fresh processes each")
    cost = import_cost(reps)
    bare = cost["pass"]
    imported = cost["import course_lib.course"] - bare
    rows.append(Row(BENCH, "import course_lib.course (fresh process − bare interpreter)", imported, "s",
                    f"< {IMPORT_GOAL_S} s", imported < IMPORT_GOAL_S, import_breakdown()))
    rows.append(Row(BENCH, "of which: import openai, mcp alone", cost["import openai, mcp"] - bare, "s",
                    note="the two SDKs course_lib is built on; course_lib's own modules are the rest"))
    package_ms = (cost["import course_lib"] - bare) * 1e3
    rows.append(Row(BENCH, "import course_lib (the package only)", max(package_ms, 0.0), "ms",
                    note=f"{package_ms:+.1f} ms against a bare interpreter: within its noise" if package_ms < 5 else ""))
    schema = cost["import course_lib, jsonschema"] - cost["import course_lib"]
    plain_schema = cost["import jsonschema"] - bare
    first = json.loads(_python(_FIRST_RUN).stdout)
    rows.append(Row(BENCH, "fresh process: start_course() + first course.run()", first["start_course"] + first["first_run"],
                    "s", note=f"start_course {first['start_course'] * 1e3:.0f} ms, first run {first['first_run']:.2f} s, "
                              f"second run {first['second_run'] * 1e3:.0f} ms"))
    rows.append(Row(BENCH, "of which: import jsonschema (first tools/call)", schema, "s",
                    note="the MCP client validates structuredContent against the tool's outputSchema"
                         + ("" if not first["jsonschema_before_first_run"] else " (already imported before the run)")
                         + f"; {plain_schema:.2f} s without course_lib's stand-in for rfc3987_syntax"))

    notebooks = sorted(NOTEBOOKS.glob("[0-9]*.ipynb"))
    if quick:
        notebooks = notebooks[:1]
    progress(f"{BENCH}: {len(notebooks)} notebooks, fresh kernel each")
    runs = []
    for path in notebooks:
        runs.append(result := run_notebook(path))
        progress(f"{BENCH}:   {result.name} {result.total_s:.1f} s{' FAILED' if result.error else ''}")
    total = sum(r.total_s for r in runs)
    slowest = max(runs, key=lambda r: r.total_s)
    cpu = [r.kernel_cpu_s for r in runs if r.kernel_cpu_s is not None]
    scope = "first notebook only (quick)" if quick else f"{len(runs)} notebooks"
    rows.append(Row(BENCH, f"whole course headless ({scope})", total, "s", f"< {COURSE_GOAL_S:.0f} s",
                    None if quick else total < COURSE_GOAL_S,
                    f"kernel start {sum(r.start_s for r in runs):.1f} s + cells {sum(r.cells_s for r in runs):.1f} s + "
                    f"shutdown {sum(r.shutdown_s for r in runs):.1f} s; kernels' CPU {sum(cpu):.1f} s"))
    rows.append(Row(BENCH, f"slowest notebook: {slowest.name}", slowest.total_s, "s",
                    note=f"cells {slowest.cells_s:.1f} s"))
    for r in runs:
        rows.append(Row(BENCH, f"  {r.name}", r.total_s, "s", note=(
            f"start {r.start_s:.1f} + cells {r.cells_s:.1f} + shutdown {r.shutdown_s:.1f} s"
            + (f"; kernel CPU {r.kernel_cpu_s:.1f} s" if r.kernel_cpu_s is not None else "")
            + (f"; FAILED: {r.error}" if r.error else ""))))
    return rows


if __name__ == "__main__":
    from benchmarks.__main__ import main

    main(["course"])
