"""Benchmark 1: the cost of one `read_text_file` call (notes.txt, head 5), by how it is reached.

(a) a direct Python call of the read logic, `Workspace.read_text_file`;
(b) our files server in-process (memory streams, real JSON-RPC: `mode="legacy"`);
(c) our files server over stdio (`python -m course_lib.fs_server --root ...`, a subprocess);
(d) the reference Node filesystem server over stdio (pinned in tests/node).

(b)-(d) are measured with the same client twice: the plain `mcp.Client` and the course's
`McpConnection` (the same client behind a relay that records every message). All connections are
open at once and the calls are interleaved in rounds (a random order each round), so a busy
machine slows every variant alike; each figure is the median of all the single calls.

For each stdio server the server process's own CPU time per call is also noted (psutil): unlike
wall time, it does not change when other programs keep the machine busy.

(i)-(j) measure as an outside client does (issue 12): `mcp.Client(transport)` in its default mode
("auto": our server then speaks the 2026-07-28 protocol, Node only the initialize handshake),
`head: 2`, a relative path and each server's own absolute form of the file.

Four what-if servers split the cost of our stdio server (see `benchmarks/_stdio_variants.py`):
(e) the SDK floor, a trivial tool on the SDK's own stdio transport; (f) our server on that
transport (stdin/stdout wrapped in worker threads) instead of `course_lib.stdio`'s event-loop
pipes; (g) our server with a worker-thread hop per call, as when the read ran in a thread; (h)
both, which is our server as it shipped before those two changes.

(k)-(m) are the mcp 1.x client (what LangChain's MCP adapter runs) in its own venv, on our server,
on our server declaring the two-shape output schema it had before, and on Node (`benchmarks/mcp1.py`).

`McpConnection` keeps its whole message history; its history is cleared at the start of every
round so the main rows measure a young connection. The last rows measure what that history costs.
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from benchmarks import REPO, Row, mcp1, median, progress, ratio_row
from course_lib.arguments import ReadTextFileArgs
from course_lib.connection import McpConnection
from course_lib.fs_server import Workspace, build_server
from course_lib.node_tools import NodeToolsMissing, node_available, reference_server
from course_lib.paths import workspace_dir

try:
    import psutil  # comes with ipykernel; only used for the server processes' CPU time
except ImportError:  # pragma: no cover
    psutil = None

BENCH = "1 tool call"
ARGS = {"path": "notes.txt", "head": 5}  # relative: both servers accept it
TOOL = "read_text_file"


def our_stdio_server() -> StdioServerParameters:
    """Our files server as a subprocess, over the same folder as the reference server."""
    root = workspace_dir()
    return StdioServerParameters(command=sys.executable, args=["-m", "course_lib.fs_server", "--root", str(root)],
                                 cwd=str(root))


def what_if_server(kind: str) -> StdioServerParameters:
    """See benchmarks/_stdio_variants.py."""
    root = workspace_dir()
    return StdioServerParameters(command=sys.executable, args=["-m", "benchmarks._stdio_variants", kind, str(root)],
                                 cwd=str(REPO), env={"PYTHONPATH": str(REPO)})


@dataclass
class Variant:
    label: str
    call: Callable[[], Awaitable[Any]]
    text: Callable[[Any], str]
    reset: Callable[[], None] = lambda: None
    connect_ms: float | None = None  # opening the connection: spawn, initialize, tools/list
    pid: int | None = None  # the server process, if it is one
    times: list[int] = field(default_factory=list)  # ns per call
    server_cpu_s: float = 0.0


def _first_text(result: Any) -> str:
    return result.content[0].text


def _children() -> set[int]:
    return {child.pid for child in psutil.Process().children(recursive=True)} if psutil else set()


def _cpu_seconds(pid: int | None) -> float:
    if pid is None or psutil is None:
        return 0.0
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


async def _connect(stack: AsyncExitStack, make: Callable[[], Any], wrap: Callable[[Any], Any]) -> tuple[Any, float, int | None]:
    before = _children()
    started = time.perf_counter()
    client = await stack.enter_async_context(wrap(make()))
    await client.list_tools()  # the first call_tool would list anyway (output-schema check)
    connect_ms = (time.perf_counter() - started) * 1e3
    new = sorted(_children() - before)
    return client, connect_ms, new[-1] if new else None


NODE = "(d) reference Node server, stdio"


@asynccontextmanager
async def _open_variants(errlog: Any) -> AsyncIterator[tuple[list[Variant], dict[str, str]]]:
    """Every connection, open; `skipped` maps a label to why it could not be opened."""
    workspace = Workspace(workspace_dir())
    args = ReadTextFileArgs(**ARGS)
    variants = [Variant("(a) direct Workspace.read_text_file", lambda: _direct(workspace, args), str)]
    skipped: dict[str, str] = {}
    servers: list[tuple[str, Callable[[], Any], bool]] = [  # label, transport or server, also via McpConnection
        ("(b) our server, in-process", lambda: build_server(Workspace(workspace_dir())), True),
        ("(c) our server, stdio", lambda: stdio_client(our_stdio_server(), errlog=errlog), True),
    ]
    if not node_available():
        skipped[NODE] = "skipped: Node.js not installed"
    else:
        try:
            params = reference_server(workspace_dir())
            servers.append((NODE, lambda: stdio_client(params, errlog=errlog), True))
        except NodeToolsMissing as missing:
            skipped[NODE] = f"skipped: {str(missing).splitlines()[0]}"
    for kind, label in WHAT_IF.items():
        servers.append((label, lambda kind=kind: stdio_client(what_if_server(kind), errlog=errlog), False))
    outside = [(OURS_OUTSIDE, lambda: stdio_client(our_stdio_server(), errlog=errlog), OUTSIDE_ARGS["ours"])]
    if NODE not in skipped:
        outside.append((NODE_OUTSIDE, lambda: stdio_client(params, errlog=errlog), OUTSIDE_ARGS["node"]()))
    async with AsyncExitStack() as stack:
        for label, make, with_connection in servers:
            client, connect_ms, pid = await _connect(stack, make, lambda t: Client(t, mode="legacy"))
            variants.append(Variant(f"{label} · mcp.Client", lambda c=client: c.call_tool(TOOL, ARGS), _first_text,
                                    connect_ms=connect_ms, pid=pid))
            if with_connection:
                connection, _, pid = await _connect(stack, make, lambda t: McpConnection(t, name=label))
                variants.append(Variant(
                    f"{label} · McpConnection", lambda c=connection: c.call_tool(TOOL, ARGS), lambda r: _first_text(r[0]),
                    reset=connection.messages.clear, pid=pid,
                ))  # fmt: skip
        for label, make, paths in outside:  # as an outside client connects: Client(transport), mode "auto"
            client, connect_ms, pid = await _connect(stack, make, Client)
            for kind, arguments in paths.items():
                variants.append(Variant(f"{label} · {kind} path", lambda c=client, a=arguments: c.call_tool(TOOL, a),
                                        _first_text, connect_ms=connect_ms, pid=pid))
        yield variants, skipped


# An outside client's measurement (issue 12): `mcp.Client(transport)` with its default mode
# ("auto": our server then speaks 2026-07-28, Node falls back to the initialize handshake),
# `head: 2`, a relative path and each server's own absolute form of the same file (Node refuses
# `/workspace/...` unless its real root is /workspace, and a refusal is cheaper than a read).
OURS_OUTSIDE = "(i) outside client: our server, stdio, mode auto"
NODE_OUTSIDE = "(j) outside client: Node server, stdio, mode auto"
OUTSIDE_ARGS = {
    "ours": {"relative": {"path": "notes.txt", "head": 2}, "absolute": {"path": "/workspace/notes.txt", "head": 2}},
    "node": lambda: {"relative": {"path": "notes.txt", "head": 2},
                     "absolute": {"path": str(workspace_dir() / "notes.txt"), "head": 2}},
}


WHAT_IF = {
    "floor": "(e) what-if: SDK floor, trivial tool, SDK stdio transport",
    "sdk-stdio": "(f) what-if: our server on the SDK stdio transport",
    "thread-hop": "(g) what-if: our server, read behind a worker-thread hop",
    "before": "(h) what-if: our server as before, both (f) and (g)",
}


async def _direct(workspace: Workspace, args: ReadTextFileArgs) -> str:
    return workspace.read_text_file(args)


async def _measure(rounds: int, per_round: int) -> tuple[list[Variant], dict[str, str], dict[str, str]]:
    with tempfile.TemporaryFile("w+", encoding="utf-8") as errlog:
        async with _open_variants(errlog) as (variants, skipped):
            texts = {}
            for variant in variants:  # warm up: first-call imports (jsonschema), caches
                for _ in range(20):
                    result = await variant.call()
                texts[variant.label] = variant.text(result)
            order = list(variants)
            for _ in range(rounds):
                random.shuffle(order)
                for variant in order:
                    variant.reset()
                    cpu = _cpu_seconds(variant.pid)
                    for _ in range(per_round):
                        start = time.perf_counter_ns()
                        await variant.call()
                        variant.times.append(time.perf_counter_ns() - start)
                    variant.server_cpu_s += _cpu_seconds(variant.pid) - cpu
            return variants, skipped, texts


def _per_round_ratios(ours: Variant, theirs: Variant, per_round: int) -> str:
    """The same ratio taken round by round (both ran in every round): how much it moves with load."""
    rounds = range(0, len(ours.times), per_round)
    ratios = sorted(median(ours.times[i:i + per_round]) / median(theirs.times[i:i + per_round]) for i in rounds)
    quarter = len(ratios) // 4
    return (f"round by round ({len(ratios)} rounds): median {median(ratios):.2f}×, middle half "
            f"{ratios[quarter]:.2f}–{ratios[-1 - quarter]:.2f}×")


async def _history_cost(calls: int) -> tuple[float, float]:
    """Median µs per call on a fresh in-process McpConnection: the first 200 calls, and the 200
    calls after `calls` earlier ones."""
    async with McpConnection(build_server(Workspace(workspace_dir()))) as connection:
        await connection.list_tools()
        times = []
        for _ in range(calls + 200):
            start = time.perf_counter_ns()
            await connection.call_tool(TOOL, ARGS)
            times.append(time.perf_counter_ns() - start)
    return median(times[5:200]) / 1e3, median(times[calls:]) / 1e3


def run(quick: bool = False) -> list[Row]:
    rounds, per_round = (8, 10) if quick else (40, 25)
    progress(f"{BENCH}: {rounds} rounds × {per_round} calls per variant")
    variants, skipped, texts = anyio.run(_measure, rounds, per_round)
    rows = []
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for v in variants:
        wall[v.label] = us = median(v.times) / 1e3
        note = f"{len(v.times)} calls"
        if v.pid is not None and psutil is not None:
            cpu[v.label] = v.server_cpu_s / len(v.times) * 1e6
            note += f"; server process CPU {cpu[v.label]:.0f} µs per call"
        if v.connect_ms is not None:
            note += f"; connect (spawn, initialize, tools/list) {v.connect_ms:.0f} ms"
        rows.append(Row(BENCH, f"{v.label}, per call", us, "µs", note=note))
    for label, why in skipped.items():
        rows.append(Row(BENCH, f"{label}, per call", None, "µs", note=why))

    by_label = {v.label: v for v in variants}
    for client in ("mcp.Client", "McpConnection"):
        ours, theirs = wall.get(f"(c) our server, stdio · {client}"), wall.get(f"{NODE} · {client}")
        what = f"our stdio ÷ Node stdio, per call ({client})"
        if theirs is None:
            rows.append(Row(BENCH, what, None, "×", "≤ 1.00×", None, skipped.get(NODE, "skipped")))
        else:
            spread = _per_round_ratios(by_label[f"(c) our server, stdio · {client}"], by_label[f"{NODE} · {client}"],
                                       per_round)
            rows.append(ratio_row(BENCH, what, ours, theirs, limit=1.0, note=spread))
    for kind in ("relative", "absolute"):
        ours, theirs = f"{OURS_OUTSIDE} · {kind} path", f"{NODE_OUTSIDE} · {kind} path"
        what = f"outside client (mode auto, head 2, {kind} path): our stdio ÷ Node stdio"
        if theirs not in wall:
            rows.append(Row(BENCH, what, None, "×", "≤ 1.00×", None, skipped.get(NODE, "skipped")))
            continue
        note = _per_round_ratios(by_label[ours], by_label[theirs], per_round)
        if ours in cpu and theirs in cpu:
            note += f"; server CPU {cpu[ours]:.0f} vs {cpu[theirs]:.0f} µs per call"
        rows.append(ratio_row(BENCH, what, wall[ours], wall[theirs], limit=1.0, note=note))
    node_cpu = cpu.get(f"{NODE} · mcp.Client")
    if node_cpu and "(c) our server, stdio · mcp.Client" in cpu:
        ours_cpu = cpu["(c) our server, stdio · mcp.Client"]
        rows.append(Row(BENCH, "our stdio ÷ Node stdio, server CPU per call", ours_cpu / node_cpu, "×",
                        note=f"{ours_cpu:.0f} vs {node_cpu:.0f} µs; load-independent"))
    if NODE not in skipped:
        for label in WHAT_IF.values():
            rows.append(Row(BENCH, f"{label.split(':', 1)[1].strip()} ÷ Node stdio (mcp.Client)",
                            wall[f"{label} · mcp.Client"] / wall[f"{NODE} · mcp.Client"], "×"))
    inproc = wall["(b) our server, in-process · mcp.Client"]
    rows.append(Row(BENCH, "in-process ÷ direct, per call (mcp.Client)", inproc / wall[variants[0].label], "×",
                    note="what the MCP layer adds on top of the read itself"))

    # The same five lines from every real server (ours keeps the final newline, the reference strips it).
    for outside in (True, False):  # head 2 for the outside client, head 5 for the rest
        lines = {label: text.rstrip("\n") for label, text in texts.items()
                 if "floor" not in label and label.startswith(("(i)", "(j)")) == outside}
        if len(set(lines.values())) > 1:
            rows.append(Row(BENCH, "results agree", None, "", note="DIFFERENT TEXTS: " + "; ".join(lines)))

    rows += mcp1.rows(BENCH, ARGS, rounds, per_round)  # (k)-(m): the mcp 1.x client, in its own venv

    history = 2000 if quick else 5000
    progress(f"{BENCH}: McpConnection history cost ({history} calls)")
    young, old = anyio.run(_history_cost, history)
    rows.append(Row(BENCH, "McpConnection in-process, calls 1-200", young, "µs"))
    rows.append(Row(BENCH, f"McpConnection in-process, after {history} calls", old, "µs",
                    note=f"{old / young:.2f}× a young connection: flat means a call does not re-read the history"))
    return rows


if __name__ == "__main__":
    from benchmarks.__main__ import main

    main(["tool_call"])
