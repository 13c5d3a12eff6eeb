"""Benchmark 6: Streamable HTTP beside stdio and in-process — per-call cost and connection set-up.

The same call as benchmark 1 (`read_text_file`, notes.txt, head 5) through the plain `mcp.Client`:
(a) our files server in-process (memory streams, legacy JSON-RPC); (b) over stdio (a subprocess);
(c) over Streamable HTTP in the 2025-11-25 era (a session; answers as SSE); (d) over Streamable
HTTP in the 2026-07-28 era (stateless; answers as JSON). (c) and (d) talk to one server process,
`python -m course_lib.fs_server --http 127.0.0.1:0`, on loopback. All connections are open at
once and the calls interleaved in rounds (random order each round); each figure is a median.

Connection set-up is timed per transport and era: entering the `Client` (the `initialize`
handshake where there is one; nothing crosses for a pinned 2026-07-28 client) plus the first
`tools/list`, then closing it (a `DELETE` for an HTTP session).
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import AsyncExitStack

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from benchmarks import REPO, Row, median, progress
from course_lib.fs_server import Workspace, build_server
from course_lib.paths import workspace_dir

BENCH = "5 http"
ARGS = {"path": "notes.txt", "head": 5}


def _http_server() -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen([sys.executable, "-m", "course_lib.fs_server", "--root", str(workspace_dir()),
                             "--http", "127.0.0.1:0"], cwd=REPO, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    if " at " not in line:
        proc.kill()
        raise RuntimeError(f"the HTTP server did not start: {line!r}")
    return proc, line.split(" at ")[1].split()[0]


def _stdio() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, cwd=str(REPO),
                                 args=["-m", "course_lib.fs_server", "--root", str(workspace_dir())])


async def _per_call(targets: dict[str, Callable[[], Client]], rounds: int, calls: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in targets}
    async with AsyncExitStack() as stack:
        clients = {name: await stack.enter_async_context(make()) for name, make in targets.items()}
        expected = None
        for client in clients.values():
            await client.list_tools()
            for _ in range(10):  # warm-up
                result = await client.call_tool("read_text_file", ARGS)
            text = result.content[0].text
            if expected not in (None, text):
                raise AssertionError("the transports returned different text")
            expected = text
        for _ in range(rounds):
            order = list(clients)
            random.shuffle(order)
            for name in order:
                for _ in range(calls):
                    start = time.perf_counter()
                    await clients[name].call_tool("read_text_file", ARGS)
                    times[name].append(time.perf_counter() - start)
    return times


async def _set_up(targets: dict[str, Callable[[], Client]], repeats: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in targets}
    for _ in range(repeats):
        order = list(targets)
        random.shuffle(order)
        for name in order:
            start = time.perf_counter()
            async with targets[name]() as client:
                await client.list_tools()
            times[name].append(time.perf_counter() - start)
    return times


def run(quick: bool = False) -> list[Row]:
    rounds, calls, repeats = (3, 5, 3) if quick else (30, 20, 10)
    server = build_server(Workspace(workspace_dir()))
    proc, url = _http_server()
    try:
        per_call: dict[str, Callable[[], Client]] = {
            "in-process (legacy)": lambda: Client(server, mode="legacy", cache=None),
            "stdio (legacy)": lambda: Client(_stdio(), mode="legacy", cache=None),
            "HTTP 2025-11-25 (session, SSE)": lambda: Client(url, mode="legacy", cache=None),
            "HTTP 2026-07-28 (stateless, JSON)": lambda: Client(url, mode="2026-07-28", cache=None),
        }
        progress(f"{BENCH}: {rounds} rounds × {calls} calls per transport")
        calls_s = anyio.run(_per_call, per_call, rounds, calls)
        set_up: dict[str, Callable[[], Client]] = {
            "in-process, legacy": lambda: Client(build_server(Workspace(workspace_dir())), mode="legacy", cache=None),
            "stdio (process start), legacy": lambda: Client(_stdio(), mode="legacy", cache=None),
            "HTTP, 2025-11-25": lambda: Client(url, mode="legacy", cache=None),
            "HTTP, 2026-07-28 pinned": lambda: Client(url, mode="2026-07-28", cache=None),
            "HTTP, auto (server/discover)": lambda: Client(url, mode="auto", cache=None),
        }
        progress(f"{BENCH}: {repeats} connection set-ups per transport and era")
        set_up_s = anyio.run(_set_up, set_up, repeats)
    finally:
        proc.terminate()
        proc.wait(timeout=10)

    base = median(calls_s["in-process (legacy)"])
    rows = [Row(BENCH, f"per call: {name}", median(values) * 1e6, "µs",
                note=f"{median(values) / base:.1f}× in-process; {len(values)} calls")
            for name, values in calls_s.items()]
    rows += [Row(BENCH, f"connect + tools/list + close: {name}", median(values) * 1e3, "ms",
                 note=f"median of {len(values)}") for name, values in set_up_s.items()]
    return rows


def main() -> None:
    from benchmarks.__main__ import print_table

    print_table(run(quick="--quick" in sys.argv))


if __name__ == "__main__":
    main()
