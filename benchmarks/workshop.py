"""A workshop hub under load: 1, 4 and 8 learners at once through the real hub (workshop/).

For each room size a fresh hub (`workshop.hub.LocalHub`: the one workshop config, a local
spawner) starts; every learner logs in and asks for a server at the same moment (spawn latency:
request → server ready), pulls the course with nbgitpuller, then all of them run notebook 00, then
06, then 09 at the same time, each in their own kernel through the hub's proxy (REST session,
kernel websocket), as a room does when the instructor says "run it". Measured per learner and
notebook, with psutil on the learner's own processes (their server and its kernel):

- memory: peak and end-of-notebook RSS of server + kernel, and PSS (RSS with shared pages split
  among the processes that share them: what one more learner really costs on one machine);
- CPU seconds: the kernel's whole life (start included) and the server's share during the run;
- time to first output: from opening the notebook (POST /api/sessions) to the first output of its
  first cell, and the median per cell from execute_request to its first output;
- wall time of the whole notebook.

The machine is shared: the load average is printed with every room size. Figures, not goals:
INSTRUCTOR.md's sizing table is made from them. Raw figures also go to build/workshop-bench.json.

    python -m benchmarks workshop           # 1, 4, 8 learners × notebooks 00, 06, 09 (~10–15 min)
    python -m benchmarks workshop --quick   # 1 and 2 learners, notebook 00 only
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import socket
import statistics
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from benchmarks import REPO, Row, load_average, progress

NOTEBOOKS = ("notebooks/00_map_and_first_run.ipynb", "notebooks/06_approval_and_side_effects.ipynb",
             "notebooks/09_capstone_notes_assistant.ipynb")  # fmt: skip
TARGET = "tool-calling-course"
SAMPLE_SECONDS = 0.25


def _free_base(count: int = 4) -> int:
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            base = probe.getsockname()[1]
        try:
            for port in range(base, base + count):
                with socket.socket() as sock:
                    sock.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue


def _server_process(home: Path) -> psutil.Process:
    """The learner's single-user server: the process whose working folder is their home."""
    for process in psutil.process_iter(["cmdline", "cwd"]):
        cmdline = process.info["cmdline"] or []
        if "jupyterhub.singleuser" in cmdline and process.info["cwd"] == str(home):
            return process
    raise RuntimeError(f"no server process for {home}")


def _kernel_process(server: psutil.Process, kernel_id: str) -> psutil.Process:
    for child in server.children(recursive=True):
        if any(kernel_id in part for part in child.cmdline()):
            return child
    raise RuntimeError(f"no kernel process {kernel_id}")


def _memory(processes: list[psutil.Process]) -> tuple[int, int]:
    """(RSS, PSS) summed over `processes`, in bytes."""
    rss = pss = 0
    for process in processes:
        try:
            info = process.memory_full_info()
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        rss += info.rss
        pss += getattr(info, "pss", info.rss)
    return rss, pss


def _cpu(process: psutil.Process) -> float:
    try:
        times = process.cpu_times()
    except psutil.NoSuchProcess:
        return 0.0
    return times.user + times.system


def _run_one(learner, home: Path, notebook: str) -> dict[str, Any]:
    """One learner opens one notebook and runs every code cell; their processes are sampled meanwhile."""
    model = learner.session.get(f"{learner.server}/api/contents/{TARGET}/{notebook}", params={"content": 1},
                                timeout=learner.timeout).json()  # fmt: skip
    sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
               for c in model["content"]["cells"] if c["cell_type"] == "code"]  # fmt: skip
    server = _server_process(home)
    server_cpu = _cpu(server)
    opened = time.perf_counter()  # the learner opens the notebook: JupyterLab asks for a session
    session = learner.start_kernel(f"{TARGET}/{notebook}")
    kernel = _kernel_process(server, session["kernel"]["id"])
    peak = [0, 0]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            rss, pss = _memory([server, kernel])
            peak[0], peak[1] = max(peak[0], rss), max(peak[1], pss)
            done.wait(SAMPLE_SECONDS)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        with learner.kernel(session) as connection:
            first_sent = time.perf_counter()
            runs = [connection.execute(source, i) for i, source in enumerate(sources)]
        wall = time.perf_counter() - opened
        end_rss, end_pss = _memory([server, kernel])
        kernel_cpu = _cpu(kernel)
    finally:
        done.set()
        sampler.join()
        learner.stop_kernel(session)
    first = next((r for r in runs if r.first_output is not None), None)
    return {
        "notebook": Path(notebook).stem[:2], "wall": wall,
        "errors": sum(o["output_type"] == "error" for r in runs for o in r.outputs),
        # From opening the notebook to the first output of its first cell: the kernel's start included.
        "open_to_first_output": None if first is None else
        (first_sent - opened) + sum(r.seconds for r in runs[: first.index]) + first.first_output,
        "cell_first_output_median": statistics.median(r.first_output for r in runs if r.first_output is not None),
        "kernel_cpu": kernel_cpu, "server_cpu": _cpu(server) - server_cpu,
        "peak_rss": peak[0], "peak_pss": peak[1], "end_rss": end_rss, "end_pss": end_pss,
    }


def room(size: int, notebooks: tuple[str, ...], course: str, where: Path) -> dict[str, Any]:
    """One room of `size` learners on a fresh hub: spawn latency, then each notebook together."""
    from workshop.hub import LocalHub
    from workshop.learner import Learner

    base = _free_base()
    load = {"before": load_average()}
    hub = LocalHub(where / f"hub-{size}", port=base, env={"WORKSHOP_COURSE_REPO": course})
    with hub:
        names = [f"learner{i}" for i in range(size)]
        learners = {name: Learner(hub.url, name, hub.password, timeout=600) for name in names}
        for learner in learners.values():
            learner.log_in()
        barrier = threading.Barrier(size)

        def spawn(learner) -> float:
            barrier.wait()  # everyone asks at the same moment, as a room does
            return learner.spawn()

        with concurrent.futures.ThreadPoolExecutor(size) as pool:
            spawns = list(pool.map(spawn, learners.values()))
            list(pool.map(lambda learner: learner.pull(course), learners.values()))
            idle = [_memory([_server_process(hub.state / "homes" / name)]) for name in names]
            results = {}
            for notebook in notebooks:
                load[Path(notebook).stem[:2]] = load_average()
                started = time.perf_counter()
                runs = list(pool.map(lambda name: _run_one(learners[name], hub.state / "homes" / name, notebook),
                                     names))  # fmt: skip
                results[Path(notebook).stem[:2]] = {"runs": runs, "wall": time.perf_counter() - started}
                progress(f"workshop: {size} learner(s), notebook {Path(notebook).stem[:2]} in "
                         f"{results[Path(notebook).stem[:2]]['wall']:.1f} s (load {load_average()})")
    load["after"] = load_average()
    return {"size": size, "spawn": spawns, "idle_server": idle, "notebooks": results, "load": load}


def _mb(value: float) -> float:
    return value / 2**20


def rows_for(figures: dict[str, Any]) -> list[Row]:
    size, load = figures["size"], figures["load"]
    bench = f"workshop: {size} learner{'s' if size > 1 else ''}"
    rows = [Row(bench, "spawn latency, median (max)", statistics.median(figures["spawn"]), "s",
                note=f"max {max(figures['spawn']):.1f} s; load before {load['before']}"),
            Row(bench, "idle server RSS, median", _mb(statistics.median(r for r, _ in figures["idle_server"])), "MB",
                note=f"PSS {_mb(statistics.median(p for _, p in figures['idle_server'])):.0f} MB")]  # fmt: skip
    for nb, result in figures["notebooks"].items():
        runs = result["runs"]
        firsts = [r["open_to_first_output"] for r in runs if r["open_to_first_output"] is not None] or [float("nan")]
        rows += [
            Row(bench, f"nb{nb}: wall, all learners together", result["wall"], "s", note=f"load {load.get(nb)}"),
            Row(bench, f"nb{nb}: server+kernel peak RSS per learner, max", _mb(max(r["peak_rss"] for r in runs)), "MB",
                note=f"peak PSS max {_mb(max(r['peak_pss'] for r in runs)):.0f} MB; "
                     f"end-of-notebook RSS median {_mb(statistics.median(r['end_rss'] for r in runs)):.0f} MB"),
            Row(bench, f"nb{nb}: kernel CPU s per learner, median", statistics.median(r["kernel_cpu"] for r in runs), "s",
                note=f"server CPU median {statistics.median(r['server_cpu'] for r in runs):.2f} s"),
            Row(bench, f"nb{nb}: open → first output, median (max)", statistics.median(firsts), "s",
                note=f"max {max(firsts):.1f} s; per cell median "
                     f"{statistics.median(r['cell_first_output_median'] for r in runs) * 1000:.0f} ms; "
                     f"errors {sum(r['errors'] for r in runs)}"),
        ]  # fmt: skip
    return rows


def run(quick: bool = False) -> list[Row]:
    from workshop.learner import checkout_repo

    sizes, notebooks = ((1, 2), NOTEBOOKS[:1]) if quick else ((1, 4, 8), NOTEBOOKS)
    where = Path(tempfile.mkdtemp(prefix="workshop-bench-"))
    rows: list[Row] = []
    everything = []
    try:
        course = checkout_repo(where)
        for size in sizes:
            progress(f"workshop: {size} learner(s) (load {load_average()})")
            figures = room(size, notebooks, course, where)
            everything.append(figures)
            rows += rows_for(figures)
    finally:
        shutil.rmtree(where, ignore_errors=True)
        out = REPO / "build" / "workshop-bench.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps({"cpus": os.cpu_count(), "memory": psutil.virtual_memory().total,
                                   "rooms": everything}, indent=1))  # fmt: skip
    return rows
