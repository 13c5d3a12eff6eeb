"""A workshop hub under load: 1, 4 and 8 learners at once through the real hub (workshop/).

For each room size a fresh hub (`workshop.hub.LocalHub`: the one workshop config, a local
spawner) starts; every learner logs in and asks for a server at the same moment (spawn latency:
request → server ready), pulls the course with nbgitpuller, then all of them run notebook 00, then
03b, then 06, then 09 at the same time, each in their own kernel through the hub's proxy (REST
session, kernel websocket), as a room does when the instructor says "run it". Like JupyterLab,
a learner keeps each notebook's kernel open after running it. Measured per learner and notebook,
with psutil on the learner's own processes (their server, the kernel and whatever the kernel
starts: 03b's Node processes, the reference filesystem server and the MCP Inspector):

- memory: peak and end-of-notebook RSS of server + kernel (+ its children), and PSS (RSS with
  shared pages split among the processes that share them: what one more learner really costs on
  one machine); the Node processes' own peak; and at the end, the server with every kernel kept;
- CPU seconds: the kernel's whole life (start included, its children's too) and the server's share;
- time to first output: from opening the notebook (POST /api/sessions) to the first output of its
  first cell, and the median per cell from execute_request to its first output;
- wall time of the whole notebook, and the kernels that died or restarted (the hub's kernels talk
  to their servers over Unix sockets, course_lib.hub_kernels: no TCP port to race for).

A room that fails is reported in the table, and the rooms before it keep their rows. The machine
is shared: the load average is printed with every room size. Figures, not goals: INSTRUCTOR.md's
sizing table is made from them. Raw figures also go to build/workshop-bench.json.

    python -m benchmarks workshop           # 1, 4, 8 learners × notebooks 00, 03b, 06, 09 (~15–25 min)
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

NOTEBOOKS = ("notebooks/00_map_and_first_run.ipynb", "notebooks/03b_reference_server_side_by_side.ipynb",
             "notebooks/06_approval_and_side_effects.ipynb", "notebooks/09_capstone_notes_assistant.ipynb")  # fmt: skip
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


def _family(kernel: psutil.Process) -> list[psutil.Process]:
    """The kernel and what it started (03b: the reference server, the Inspector and their npm/node)."""
    try:
        return [kernel, *kernel.children(recursive=True)]
    except psutil.NoSuchProcess:
        return [kernel]


def _is_node(process: psutil.Process) -> bool:
    try:
        return Path(process.exe()).name.startswith("node") or "node" in Path(process.cmdline()[0]).name
    except (psutil.Error, IndexError):
        return False


def _restarted(server: psutil.Process, kernel: psutil.Process, kernel_id: str) -> bool:
    """True when the kernel's process is not the one that started (it died, or was restarted)."""
    try:
        return _kernel_process(server, kernel_id).pid != kernel.pid
    except RuntimeError:
        return True


def _run_one(learner, home: Path, notebook: str) -> dict[str, Any]:
    """One learner opens one notebook and runs every code cell; their processes are sampled meanwhile.
    The kernel is left running, as JupyterLab leaves it (the session is returned, to stop later)."""
    model = learner.session.get(f"{learner.server}/api/contents/{TARGET}/{notebook}", params={"content": 1},
                                timeout=learner.timeout).json()  # fmt: skip
    sources = ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
               for c in model["content"]["cells"] if c["cell_type"] == "code"]  # fmt: skip
    server = _server_process(home)
    server_cpu = _cpu(server)
    opened = time.perf_counter()  # the learner opens the notebook: JupyterLab asks for a session
    session = learner.start_kernel(f"{TARGET}/{notebook}")
    kernel = _kernel_process(server, session["kernel"]["id"])
    peak = [0, 0, 0, 0]  # RSS, PSS of server + kernel family; RSS, count of its Node processes
    cpu: dict[int, float] = {}  # the CPU seconds of every process of the kernel's family, last seen
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            family = _family(kernel)
            rss, pss = _memory([server, *family])
            nodes = [p for p in family if _is_node(p)]
            node_rss, _ = _memory(nodes)
            peak[0], peak[1], peak[2], peak[3] = max(peak[0], rss), max(peak[1], pss), max(peak[2], node_rss), max(peak[3], len(nodes))
            for process in family:
                cpu[process.pid] = max(cpu.get(process.pid, 0.0), _cpu(process))
            done.wait(SAMPLE_SECONDS)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        with learner.kernel(session) as connection:
            first_sent = time.perf_counter()
            runs = [connection.execute(source, i) for i, source in enumerate(sources)]
        wall = time.perf_counter() - opened
        end_rss, end_pss = _memory([server, *_family(kernel)])
    finally:
        done.set()
        sampler.join()
    first = next((r for r in runs if r.first_output is not None), None)
    return {
        "notebook": Path(notebook).stem.split("_")[0], "wall": wall, "session": session,
        "errors": sum(o["output_type"] == "error" for r in runs for o in r.outputs),
        "restarted": _restarted(server, kernel, session["kernel"]["id"]),
        # From opening the notebook to the first output of its first cell: the kernel's start included.
        "open_to_first_output": None if first is None else
        (first_sent - opened) + sum(r.seconds for r in runs[: first.index]) + first.first_output,
        "cell_first_output_median": statistics.median(r.first_output for r in runs if r.first_output is not None),
        "kernel_cpu": sum(cpu.values()), "server_cpu": _cpu(server) - server_cpu,
        "peak_rss": peak[0], "peak_pss": peak[1], "end_rss": end_rss, "end_pss": end_pss,
        "node_peak_rss": peak[2], "node_processes": peak[3],
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
            results, sessions = {}, {name: [] for name in names}
            for notebook in notebooks:
                number = Path(notebook).stem.split("_")[0]
                load[number] = load_average()
                started = time.perf_counter()
                runs = list(pool.map(lambda name: _run_one(learners[name], hub.state / "homes" / name, notebook),
                                     names))  # fmt: skip
                for name, run in zip(names, runs, strict=True):
                    sessions[name].append(run.pop("session"))
                results[number] = {"runs": runs, "wall": time.perf_counter() - started}
                progress(f"workshop: {size} learner(s), notebook {number} in {results[number]['wall']:.1f} s "
                         f"(load {load_average()})")  # fmt: skip
            # Every kernel kept, as JupyterLab keeps them: what a learner holds at the end.
            kept = [_memory([server, *server.children(recursive=True)])
                    for server in (_server_process(hub.state / "homes" / name) for name in names)]  # fmt: skip
            for name in names:
                for session in sessions[name]:
                    learners[name].stop_kernel(session)
    load["after"] = load_average()
    return {"size": size, "spawn": spawns, "idle_server": idle, "notebooks": results, "kept": kept, "load": load,
            "kernels_kept": len(notebooks)}


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
                     f"end-of-notebook RSS median {_mb(statistics.median(r['end_rss'] for r in runs)):.0f} MB"
                     + (f"; {max(r['node_processes'] for r in runs)} Node processes, peak "
                        f"{_mb(max(r['node_peak_rss'] for r in runs)):.0f} MB of it" if any(r["node_processes"] for r in runs) else "")),
            Row(bench, f"nb{nb}: kernel CPU s per learner, median", statistics.median(r["kernel_cpu"] for r in runs), "s",
                note=f"server CPU median {statistics.median(r['server_cpu'] for r in runs):.2f} s"),
            Row(bench, f"nb{nb}: open → first output, median (max)", statistics.median(firsts), "s",
                note=f"max {max(firsts):.1f} s; per cell median "
                     f"{statistics.median(r['cell_first_output_median'] for r in runs) * 1000:.0f} ms; "
                     f"errors {sum(r['errors'] for r in runs)}; kernels restarted {sum(r['restarted'] for r in runs)}"),
        ]  # fmt: skip
    kept = figures["kept"]
    rows.append(Row(bench, f"server + {figures['kernels_kept']} kernels kept, per learner, max", _mb(max(r for r, _ in kept)),
                    "MB", note=f"PSS max {_mb(max(p for _, p in kept)):.0f} MB; RSS median "
                               f"{_mb(statistics.median(r for r, _ in kept)):.0f} MB"))  # fmt: skip
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
            try:
                figures = room(size, notebooks, course, where)
            except Exception as error:  # noqa: BLE001 — the rooms before keep their rows; this one says what broke
                rows.append(Row(f"workshop: {size} learners", "room failed", None, "",
                                note=f"FAILED: {type(error).__name__}: {str(error)[:300]}"))  # fmt: skip
                everything.append({"size": size, "failed": f"{type(error).__name__}: {error}"})
                continue
            everything.append(figures)
            rows += rows_for(figures)
    finally:
        shutil.rmtree(where, ignore_errors=True)
        out = REPO / "build" / "workshop-bench.json"
        out.parent.mkdir(exist_ok=True)
        out.write_text(json.dumps({"cpus": os.cpu_count(), "memory": psutil.virtual_memory().total,
                                   "rooms": everything}, indent=1))  # fmt: skip
    return rows
