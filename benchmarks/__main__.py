"""`python -m benchmarks [tool_call] [loop] [parallel] [course] [http_server] [streaming] [--quick]`: run, then print one table."""

from __future__ import annotations

import argparse
import datetime
import importlib
import os
import platform
import shutil
import subprocess
import sys
import time
import traceback

from benchmarks import Row, elapsed, load_average, progress

BENCHMARKS = ("tool_call", "loop", "parallel", "course", "import_time", "http_server", "http", "streaming", "workshop")


def _node_version() -> str:
    if shutil.which("node") is None:
        return "not installed"
    try:
        return subprocess.run(["node", "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def print_table(rows: list[Row]) -> None:
    headers = ("benchmark", "measure", "figure", "goal", "met")
    cells = [(r.bench, r.what, r.figure(), r.goal or "—", r.verdict()) for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) for i, h in enumerate(headers)]
    line = "  ".join("{:<%d}" % w for w in widths)
    print(line.format(*headers))
    print("  ".join("-" * w for w in widths))
    for row, cell in zip(rows, cells):
        print(line.format(*cell).rstrip())
    notes = [r for r in rows if r.note and r.value is not None]
    if notes:
        print("\nnotes:")
        for r in notes:
            print(f"  [{r.bench}] {r.what}: {r.note}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"benchmarks to run (default: all): {', '.join(BENCHMARKS)}")
    parser.add_argument("--quick", action="store_true", help="few repetitions: a smoke run, not figures to quote")
    options = parser.parse_args(argv)
    names = options.names or list(BENCHMARKS)
    if unknown := [n for n in names if n not in BENCHMARKS]:
        parser.error(f"unknown benchmark(s) {', '.join(unknown)}; choose from {', '.join(BENCHMARKS)}")
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")  # nothing may try the network

    started = time.perf_counter()
    load_before = load_average()
    rows: list[Row] = []
    crashed = []
    for name in names:
        t = time.perf_counter()
        try:
            rows += importlib.import_module(f"benchmarks.{name}").run(quick=options.quick)
        except Exception as error:  # print what we have; a crash is reported, not hidden
            traceback.print_exc()
            crashed.append(name)
            rows.append(Row(name, "benchmark crashed", None, "", note=f"CRASHED: {type(error).__name__}: {error}"))
        progress(f"{name} done in {elapsed(t)}")

    print()
    print(f"course_lib benchmarks — {datetime.date.today().isoformat()}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()}, Node {_node_version()}"
          f"{', QUICK (smoke run)' if options.quick else ''}")
    print(f"load average (1/5/15 min) before: {load_before}, after: {load_average()}; "
          f"wall time of this run: {elapsed(started)}")
    print()
    print_table(rows)
    missed = [r for r in rows if r.met is False]
    print(f"\n{sum(r.met is True for r in rows)} goals met, {len(missed)} missed"
          f"{': ' + '; '.join(r.what for r in missed) if missed else ''}.")
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
