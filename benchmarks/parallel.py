"""Benchmark 3: independent reads in one turn through `parallel.execute_batch`.

Each read is a `Tool` whose handler waits `await anyio.sleep(0.1)` (a simulated 100 ms of
network or disk latency) and then reads notes.txt (head 5) through `Workspace.read_text_file`.
One call is timed against batches of 2, 4 and 8 independent calls (`limit=8`, so all may run at
once); the batch sizes are interleaved in random order and each figure is a median. A perfect
executor finishes any batch in the time of one call; the goal is within 1.2× at 8.

For contrast, the last row runs the 8 calls with `execute_batch`'s default `limit=4`.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

import anyio

from benchmarks import Row, median, progress
from course_lib.arguments import ReadTextFileArgs
from course_lib.execution import CallContext, Executor, Session, Tool
from course_lib.fs_server import Workspace
from course_lib.parallel import Call, execute_batch
from course_lib.paths import workspace_dir

BENCH = "3 parallel"
LATENCY = 0.1
SIZES = (1, 2, 4, 8)


def slow_read_tool() -> Tool:
    workspace = Workspace(workspace_dir())

    async def handler(arguments: ReadTextFileArgs, context: CallContext) -> Any:
        await anyio.sleep(LATENCY)
        return {"text": workspace.read_text_file(arguments)}

    return Tool("slow_read", "Read a file, 100 ms away.", ReadTextFileArgs, handler)


def calls(n: int) -> list[Call]:
    arguments = json.dumps({"path": "notes.txt", "head": 5})
    return [Call(f"call_{i}", "slow_read", arguments) for i in range(n)]


async def _measure(rounds: int) -> tuple[dict[int, list[float]], list[float]]:
    executor = Executor([slow_read_tool()])
    session = Session("bench")
    times: dict[int, list[float]] = {n: [] for n in SIZES}
    default_limit: list[float] = []

    async def batch(n: int, **options: Any) -> float:
        start = time.perf_counter()
        executions = await execute_batch(executor, calls(n), session, **options)
        seconds = time.perf_counter() - start
        assert all(e.ok for e in executions), [e.result for e in executions if not e.ok]
        return seconds

    await batch(8, limit=8)  # warm up
    for _ in range(rounds):
        order = [*SIZES, "default"]
        random.shuffle(order)
        for n in order:
            if n == "default":
                default_limit.append(await batch(8))
            else:
                times[n].append(await batch(n, limit=8))
    return times, default_limit


def run(quick: bool = False) -> list[Row]:
    rounds = 5 if quick else 15
    progress(f"{BENCH}: {rounds} rounds of batches of {', '.join(map(str, SIZES))} × {LATENCY * 1e3:.0f} ms calls")
    times, default_limit = anyio.run(_measure, rounds)
    one = median(times[1])
    rows = [Row(BENCH, "1 call, 100 ms latency", one * 1e3, "ms", note=f"{rounds} batches per size")]
    for n in SIZES[1:]:
        ratio = median(times[n]) / one
        goal, met = ("≤ 1.20×", ratio <= 1.2) if n == 8 else ("", None)
        rows.append(Row(BENCH, f"{n} calls (limit 8) ÷ 1 call", ratio, "×", goal, met,
                        note=f"{median(times[n]) * 1e3:.1f} ms per batch"))
    rows.append(Row(BENCH, "8 calls with the default limit (4) ÷ 1 call", median(default_limit) / one, "×",
                    note="two waves of 4: execute_batch(limit=4) is the default"))
    return rows


if __name__ == "__main__":
    from benchmarks.__main__ import main

    main(["parallel"])
