"""Benchmark 2: what the loop itself adds per turn — course_lib's `run_loop` vs the OpenAI Agents SDK.

Both sides get the same task ("Show the first 5 lines of notes.txt"), the same offline model
(`course_lib.offline_model.handle`, in-process behind an httpx `MockTransport`: no network) and
the same tool: one local Python function, `read_file(path, head)`, which reads through
`Workspace.read_text_file`. Every run takes two model requests (turns): the call, then the answer.

- ours: `course_lib.loop.run_loop` with the course's client (`backend.make_client`: strict
  response validation, no retries) and an `McpHost` whose in-process MCP server runs
  `read_file` in a worker thread — the tool is reached the course's way, over MCP.
- Agents SDK: `Agent` + `@function_tool` running `read_file` (the SDK runs a sync tool in a
  worker thread too), model `OpenAIResponsesModel` on an `AsyncOpenAI` client whose
  `httpx.AsyncClient` has the same transport; `Runner.run_sync`; tracing disabled.

Overhead per turn = (wall time of the run − time inside the model handler − time inside the
tool function) ÷ turns. The model and the tool are the same code on both sides, so subtracting
them leaves what each loop, client and tool dispatch cost. Runs are interleaved (random order
each round) and the figure is the median over all runs. The MCP connection's message history is
cleared before each run (its growth is measured in benchmark 1).
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import mcp_types as types
from mcp.server import Server

from benchmarks import Row, Stopwatch, median, progress, ratio_row
from course_lib import offline_model
from course_lib.arguments import ReadTextFileArgs, input_schema
from course_lib.backend import make_client
from course_lib.fs_server import Workspace, build_server
from course_lib.host import McpHost
from course_lib.loop import run_loop
from course_lib.paths import workspace_dir
from course_lib.wire import HttpCapture

BENCH = "2 loop"
TASK = "Show the first 5 lines of notes.txt"
MODEL = "gpt-4.1"
DESCRIPTION = ("Read a UTF-8 text file from the workspace and return its text. "
               "Optional head: N returns only the first N lines.")
OFFLINE_URL = "http://offline-model.invalid/v1"  # .invalid never resolves; the transport answers anyway

MODEL_TIME = Stopwatch()
TOOL_TIME = Stopwatch()
_WORKSPACE = Workspace(workspace_dir())


@TOOL_TIME.wrap
def read_file(path: str, head: int | None = None) -> str:
    """The one tool both loops call."""
    return _WORKSPACE.read_text_file(ReadTextFileArgs(path=path, head=head))


timed_handle = MODEL_TIME.wrap(offline_model.handle)


class TimedWorkspace(Workspace):
    """The files server's workspace with its reads timed as tool work."""

    read = TOOL_TIME.wrap(Workspace.read)


def tool_server() -> Server:
    """An in-process MCP server whose `read_text_file` is `read_file`, run in a worker thread."""
    tool = types.Tool(name="read_text_file", description=DESCRIPTION, input_schema=input_schema())

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool])

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = params.arguments or {}
        text = await anyio.to_thread.run_sync(lambda: read_file(arguments["path"], arguments.get("head")))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server("bench", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


@dataclass
class Side:
    label: str
    run: Callable[[], tuple[int, str]]  # one whole run → (turns, final answer)
    overheads: list[float] = field(default_factory=list)  # µs per turn
    cpu_overheads: list[float] = field(default_factory=list)  # µs of CPU per turn (all threads)
    walls: list[float] = field(default_factory=list)  # ms per run
    answer: str = ""

    def once(self) -> None:
        MODEL_TIME.take(), TOOL_TIME.take()
        wall, cpu = time.perf_counter_ns(), time.process_time_ns()
        turns, self.answer = self.run()
        wall, cpu = time.perf_counter_ns() - wall, time.process_time_ns() - cpu
        inside_wall = MODEL_TIME.ns + TOOL_TIME.ns
        inside_cpu = MODEL_TIME.cpu_ns + TOOL_TIME.cpu_ns
        MODEL_TIME.take(), TOOL_TIME.take()
        self.walls.append(wall / 1e6)
        self.overheads.append((wall - inside_wall) / turns / 1e3)
        self.cpu_overheads.append((cpu - inside_cpu) / turns / 1e3)


def _ours(host: McpHost, client: Any, reset: Callable[[], None] = lambda: None) -> Callable[[], tuple[int, str]]:
    def run() -> tuple[int, str]:
        reset()
        for connection in host.connections.values():
            connection.messages.clear()
        result = run_loop(client, host, TASK, model=MODEL)
        assert result.status == "completed", result
        return result.steps, result.answer or ""

    return run


def _agents_sides() -> list[Side] | str:
    """The Agents SDK sides, or why they cannot run."""
    os.environ.setdefault("OPENAI_AGENTS_DISABLE_TRACING", "1")
    try:
        from agents import Agent, Runner, function_tool, set_tracing_disabled
        from agents.models.openai_responses import OpenAIResponsesModel
        from openai import AsyncOpenAI
    except ImportError as missing:
        return f"skipped: openai-agents not installed ({missing.name}); `pip install -e .[bench]`"
    set_tracing_disabled(True)

    @function_tool(name_override="read_text_file", description_override=DESCRIPTION)
    def agents_read(path: str, head: int | None = None) -> str:
        return read_file(path, head)

    client = AsyncOpenAI(base_url=OFFLINE_URL, api_key="offline", max_retries=0,
                         http_client=httpx.AsyncClient(transport=httpx.MockTransport(timed_handle)))
    agent = Agent(name="reader", tools=[agents_read], model=OpenAIResponsesModel(model=MODEL, openai_client=client))

    def run_sync() -> tuple[int, str]:
        result = Runner.run_sync(agent, TASK)
        return len(result.raw_responses), str(result.final_output)

    loop = asyncio.new_event_loop()

    def run_in_one_loop() -> tuple[int, str]:
        result = loop.run_until_complete(Runner.run(agent, TASK))
        return len(result.raw_responses), str(result.final_output)

    return [Side("Agents SDK, Runner.run_sync", run_sync), Side("Agents SDK, await Runner.run (one loop)", run_in_one_loop)]


def run(quick: bool = False) -> list[Row]:
    rounds = 40 if quick else 300
    progress(f"{BENCH}: {rounds} interleaved runs per side")
    host = McpHost()
    host.add_server("fs", tool_server())
    plain = McpHost()
    plain.add_server("fs", tool_server())
    import openai

    plain_client = openai.OpenAI(base_url=OFFLINE_URL, api_key="offline", max_retries=0,
                                 http_client=httpx.Client(transport=httpx.MockTransport(timed_handle)))
    # What `start_course()` builds for the notebooks: the wire captured, the real files server.
    wire = HttpCapture(httpx.MockTransport(timed_handle))
    course = McpHost()
    course.add_server("fs", build_server(TimedWorkspace(workspace_dir())))
    sides = [
        Side("ours, run_loop", _ours(host, make_client(transport=httpx.MockTransport(timed_handle)))),
        Side("ours, run_loop, plain OpenAI client", _ours(plain, plain_client)),
        Side("ours, the notebooks' setup (files server, wire capture)",
             _ours(course, make_client(transport=wire), wire.exchanges.clear)),
    ]
    agents = _agents_sides()
    if isinstance(agents, list):
        sides += agents
    try:
        for side in sides:
            for _ in range(10 if quick else 20):  # warm up: lazy imports, pydantic schemas, jsonschema
                side.once()
            side.overheads.clear(), side.cpu_overheads.clear(), side.walls.clear()
        order = list(sides)
        for _ in range(rounds):
            random.shuffle(order)
            for side in order:
                side.once()
    finally:
        host.close()
        plain.close()
        course.close()

    rows = []
    for side in sides:
        rows.append(Row(BENCH, f"{side.label}: overhead per turn", median(side.overheads), "µs",
                        note=f"{len(side.walls)} runs of 2 turns; whole run {median(side.walls):.2f} ms; "
                             f"CPU overhead {median(side.cpu_overheads):.0f} µs per turn (all threads)"))
    ours = sides[0]
    what = "ours ÷ Agents SDK (run_sync), overhead per turn"
    if isinstance(agents, str):
        rows.append(Row(BENCH, what, None, "×", "≤ 1.00×", None, agents))
    else:
        theirs = sides[3]
        rows.append(ratio_row(BENCH, what, median(ours.overheads), median(theirs.overheads), limit=1.0))
        rows.append(Row(BENCH, "ours ÷ Agents SDK (run_sync), CPU overhead per turn",
                        median(ours.cpu_overheads) / median(theirs.cpu_overheads), "×"))
        # Same model, same tool: the answers quote the same five lines.
        first_line = read_file("notes.txt", 1).strip()
        if not all(first_line in side.answer for side in sides):
            rows.append(Row(BENCH, "answers agree", None, "", note="DIFFERENT ANSWERS: "
                            + " | ".join(side.answer[:80] for side in sides)))
    return rows


if __name__ == "__main__":
    from benchmarks.__main__ import main

    main(["loop"])
