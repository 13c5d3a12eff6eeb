"""Every framework of notebooks 09b and 09c on one bench, traced: the runs the duty table is built from.

    with Bench() as bench, recording() as trace:
        columns = run_all(bench, trace)                 # {"this course": FrameworkRuns, "Agents SDK": …, …}
    duty_table(columns)                                 # measured on those runs
    python -m course_lib.frameworks.runs                # re-record fixtures/duty_table.json

Each framework runs the same cases the notebooks show (a read, a refused read, a read whose rule makes
the model send a null, a structured answer, an approval, a tool that raises), written as a learner
would write them; the notebooks show the same code cell by cell. Everything runs offline: the offline
model behind the bench's tap, the course's files server over stdio, traced into `trace`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
from typing import Any

from pydantic import BaseModel

from course_lib.frameworks import claude, langgraph, mastra
from course_lib.frameworks.bench import Bench, Run
from course_lib.frameworks.duties import Approval, FrameworkRuns, Shown, Traced, record
from course_lib.frameworks.trace import calls
from course_lib.paths import fixtures_dir

READ = "Show the first 5 lines of /workspace/notes.txt"
REFUSED = "Show the first 5 lines of /etc/passwd"
TASKS = {"read": READ, "refused": REFUSED}
MODEL = "gpt-4.1"


class FileRead(BaseModel):
    path: str
    line_count: int
    text: str | None
    ok: bool


SCHEMA = {"type": "object", "additionalProperties": False, "required": ["path", "line_count", "text", "ok"],
          "properties": {"path": {"type": "string"}, "line_count": {"type": "integer"},
                         "text": {"type": ["string", "null"]}, "ok": {"type": "boolean"}}}  # fmt: skip


def _ran(run: Run) -> tuple[str, ...]:
    """The call ids a server ran in `run` (from its wire)."""
    return tuple(t.call_id for t in calls(run) if t.mcp_request is not None)


def course(bench: Bench, trace: Any) -> FrameworkRuns:
    from course_lib.loop import run_loop

    client = bench.openai_client()
    with bench.run("this course · run_loop") as read:
        host = bench.course_host()
        for task in (READ, REFUSED):
            run_loop(client, host, task)
    with bench.run("this course · strict") as nulls:
        run_loop(client, host, READ, strict=True)
    return FrameworkRuns(read=Shown(read, "09b §1"), nulls=Shown(nulls, "09b §9"),
                         traced=Traced(trace.spans, "09c §2", _ran(read) + _ran(nulls)),
                         notes={"raised": (("a code and a short message; details in the server log",
                                            "一个 code 和一条简短的消息；细节在服务器日志里"), "05"),
                                "structured": (("not built: answers are text", "没有构建：回答是文本"), "04"),
                                "approval": (("bound to the action id: tool + arguments + user",
                                              "绑定到动作 id：工具 + 参数 + 用户"), "06")})  # fmt: skip


def agents_sdk(bench: Bench) -> FrameworkRuns:
    from agents import Agent, Runner, function_tool, set_trace_processors, set_tracing_disabled
    from agents.models.openai_responses import OpenAIResponsesModel
    from openai import AsyncOpenAI

    from course_lib.frameworks.agents_sdk import LoggedMCPServerStdio
    from course_lib.tracing.agents_sdk import OpenTelemetrySpans, ToolCallIds
    from course_lib.tracing.recorder import recording

    set_trace_processors([OpenTelemetrySpans()])  # the SDK's trace, as OpenTelemetry spans (nothing to the platform)
    set_tracing_disabled(False)  # on again if a cell or test turned it off (a switch global to the process)

    def server(**options: Any) -> LoggedMCPServerStdio:
        files = bench.files_stdio(traced_to=options.pop("traced_to", None))
        return LoggedMCPServerStdio(name="files", params=files.params(), errlog=files.errors, cache_tools_list=True, **options)

    @function_tool
    def read_text_file(path: str, head: int | None = None) -> str:
        """Read the first lines of a text file under /workspace."""
        raise PermissionError(f"FORBIDDEN: {path} is outside /workspace")

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with AsyncOpenAI(base_url=bench.model_url, api_key="offline", max_retries=0) as client:
            model = OpenAIResponsesModel(model=MODEL, openai_client=client)
            with recording() as traced, bench.run("Agents SDK · MCPServerStdio") as out["read"]:
                async with server(traced_to=traced.endpoint) as files:
                    for task in (READ, REFUSED):
                        await Runner.run(Agent(name="reader", mcp_servers=[files], model=model), task, hooks=ToolCallIds())
                traced.wait_for(2, service="files-server")  # the server's spans, sent as it exits: before the collector closes
            out["traced"] = list(traced.spans)
            with bench.run("Agents SDK · strict") as out["nulls"]:
                async with server() as files:
                    strict = Agent(name="reader", mcp_servers=[files], model=model,
                                   mcp_config={"convert_schemas_to_strict": True})
                    await Runner.run(strict, READ)
            with bench.run("Agents SDK · output_type") as out["typed"]:
                async with server() as files:
                    for task in (READ, REFUSED):
                        await Runner.run(Agent(name="typed", mcp_servers=[files], model=model, output_type=FileRead), task)
            with bench.run("Agents SDK · require_approval") as out["gated"]:
                async with server(require_approval="always") as files:
                    gated = Agent(name="gated", mcp_servers=[files], model=model)
                    paused = await Runner.run(gated, READ)
                    state = paused.to_state()
                    state.approve(paused.interruptions[0])
                    await Runner.run(gated, state)
            with bench.run("Agents SDK · a tool that raises") as out["raised"]:
                await Runner.run(Agent(name="local", tools=[read_text_file], model=model), READ)
        return out

    out = asyncio.run(main())
    return FrameworkRuns(read=Shown(out["read"], "09b §2"), nulls=Shown(out["nulls"], "09b §9"),
                         structured=Shown(out["typed"], "09b §6"),
                         approval=Approval("09b §7", "result.interruptions", calls(out["gated"])[0].call_id,
                                           "state.approve(item)", out["gated"]),
                         raised=Shown(out["raised"], "09b §8"),
                         traced=Traced(out["traced"], "09c §2", _ran(out["read"])))  # fmt: skip


def pydantic_ai(bench: Bench) -> FrameworkRuns:
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport
    from openai import AsyncOpenAI
    from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, NativeOutput
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from course_lib.tracing.recorder import recording

    def toolset(traced_to: str | None = None, **options: Any) -> MCPToolset:
        files = bench.files_stdio(traced_to=traced_to)
        return MCPToolset(Client(StdioTransport(command=files.command, args=files.args, cwd=files.cwd,
                                                log_file=files.errors)), **options)  # fmt: skip

    def strict(ctx: Any, tools: list[Any]) -> list[Any]:
        return [dataclasses.replace(tool, strict=True) for tool in tools]

    def read_text_file(path: str, head: int | None = None) -> str:
        """Read the first lines of a text file under /workspace."""
        raise PermissionError(f"FORBIDDEN: {path} is outside /workspace")

    async def main() -> dict[str, Any]:
        out: dict[str, Any] = {}
        async with AsyncOpenAI(base_url=bench.model_url, api_key="offline", max_retries=0) as client:
            model = OpenAIResponsesModel(MODEL, provider=OpenAIProvider(openai_client=client))
            with recording() as traced, bench.run("pydantic-ai · MCPToolset") as out["read"]:
                async with Agent(model, toolsets=[toolset(traced.endpoint)], capabilities=[Instrumentation()]) as agent:
                    for task in (READ, REFUSED):
                        await agent.run(task)
                traced.wait_for(2, service="files-server")  # the server's spans, sent as it exits: before the collector closes
            out["traced"] = list(traced.spans)
            with bench.run("pydantic-ai · strict") as out["nulls"]:
                async with Agent(model, toolsets=[toolset().prepared(strict)]) as agent:
                    await agent.run(READ)
            with bench.run("pydantic-ai · output_type") as out["typed"]:
                async with Agent(model, toolsets=[toolset()]) as agent:
                    await agent.run(READ, output_type=FileRead)
                    await agent.run(REFUSED, output_type=NativeOutput(FileRead))
            with bench.run("pydantic-ai · approval_required") as out["gated"]:
                async with Agent(model, toolsets=[toolset().approval_required()], output_type=[str, DeferredToolRequests]) as agent:
                    paused = await agent.run(READ)
                    held = paused.output.approvals[0]
                    await agent.run(message_history=paused.all_messages(),
                                    deferred_tool_results=DeferredToolResults(approvals={held.tool_call_id: True}))
            with bench.run("pydantic-ai · a tool that raises") as out["raised"]:
                try:
                    await Agent(model, tools=[read_text_file]).run(READ)
                except PermissionError as error:
                    out["error"] = f"{type(error).__name__}: {error}"
        return out

    out = asyncio.run(main())
    return FrameworkRuns(read=Shown(out["read"], "09b §4"), nulls=Shown(out["nulls"], "09b §9"),
                         structured=Shown(out["typed"], "09b §6"),
                         approval=Approval("09b §7", "DeferredToolRequests", calls(out["gated"])[0].call_id,
                                           "DeferredToolResults", out["gated"]),
                         raised=Shown(out["raised"], "09b §8"), raised_to_caller=out.get("error"),
                         traced=Traced(out["traced"], "09c §2", _ran(out["read"])))  # fmt: skip


def mastra_column(bench: Bench) -> FrameworkRuns:
    from course_lib.tracing.recorder import recording

    with recording() as traced, bench.run("Mastra") as run:
        report = mastra.run_mastra(bench, TASKS, traced_to=traced.endpoint)
        traced.wait_for(1, service="mastra")  # before the collector closes
    ids = mastra.call_ids
    return FrameworkRuns(read=Shown(run, "09b §5", ids(report, "read", "refused")),
                         nulls=Shown(run, "09b §9", ids(report, "read")),
                         structured=Shown(run, "09b §6", ids(report, "structured_read", "structured_refused")),
                         approval=Approval("09b §7", 'finishReason "suspended"', ids(report, "asked_read")[0],
                                           "approveToolCallGenerate", run),
                         raised=Shown(run, "09b §8", ids(report, "approved_refused")),
                         traced=Traced(list(traced.spans), "09c §2", _ran(run)))  # fmt: skip


def langgraph_column(bench: Bench) -> FrameworkRuns:
    from course_lib.tracing.recorder import recording

    with recording() as traced, bench.run("LangGraph") as run:
        report = langgraph.run_langgraph(bench, TASKS, traced_to=traced.endpoint)
        traced.wait_for(1, service="langgraph")  # before the collector closes
    ids = langgraph.call_ids
    return FrameworkRuns(read=Shown(run, "09c §3", ids(report, "read", "refused")),
                         nulls=Shown(run, "09c §3", ids(report, "strict")),
                         structured=Shown(run, "09c §3", ids(report, "structured_read", "structured_refused")),
                         approval=Approval("09c §3", "interrupt()", ids(report, "asked_read")[0],
                                           "Command(resume=…)", run),
                         raised=Shown(run, "09c §3", ids(report, "raised")),
                         traced=Traced(list(traced.spans), "09c §3", _ran(run)))  # fmt: skip


def claude_column(bench: Bench) -> FrameworkRuns:
    from course_lib.tracing.recorder import recording

    with recording() as traced, bench.run("Claude Agent SDK") as run:
        report = claude.run_claude(bench, TASKS, SCHEMA, traced_to=traced.endpoint)
        traced.wait_for(1, service="claude-code")  # before the collector closes
    ids = claude.tool_use_ids
    return FrameworkRuns(read=Shown(run, "09c §4", ids(report, "read", "refused")),
                         nulls=Shown(run, "09c §4", ids(report, "read")),
                         structured=Shown(run, "09c §4", ids(report, "structured_read", "structured_refused")),
                         approval=Approval("09c §4", "can_use_tool", ids(report, "read")[0], "PermissionResultAllow()", run),
                         raised=Shown(run, "09c §4", ids(report, "raised")),
                         traced=Traced(list(traced.spans), "09c §4", _ran(run)))  # fmt: skip


def run_all(bench: Bench, trace: Any) -> dict[str, FrameworkRuns]:
    """Every framework's column, in the table's order. `trace`: a recording for the course's own run."""
    return {"this course": course(bench, trace), "Agents SDK": agents_sdk(bench), "pydantic-ai": pydantic_ai(bench),
            "Mastra": mastra_column(bench), "LangGraph": langgraph_column(bench),
            "Claude Agent SDK": claude_column(bench)}  # fmt: skip


def fixture_path() -> Any:
    return fixtures_dir() / "duty_table.json"


def trees_path() -> Any:
    return fixtures_dir() / "span_trees.json"


def span_trees(columns: dict[str, FrameworkRuns]) -> dict[str, list[dict[str, Any]]]:
    """Real span trees for notebook 09c's exercise: each framework's traced run, its spans as records
    (ids as they were, timestamps made relative so the file does not change with the clock)."""
    trees = {}
    for name, runs in columns.items():
        spans = [s for s in (runs.traced.spans if runs.traced else []) if s.trace_id in _traces_with_calls(runs)]
        first = min((s.start for s in spans), default=0)
        trees[name] = [dataclasses.asdict(dataclasses.replace(s, start=s.start - first, end=s.end - first)) for s in spans]
    return trees


def _traces_with_calls(runs: FrameworkRuns) -> set[str]:
    """The trace ids that hold one of the column's calls, and the servers' traces they reach."""
    from course_lib.tracing.tree import call_links

    ids = set(runs.traced.call_ids) if runs.traced else set()
    return {link.tool_span.trace_id for link in call_links(runs.traced.spans) if link.call_id in ids} | {
        link.mcp_span.trace_id for link in call_links(runs.traced.spans) if link.call_id in ids and link.mcp_span}


def main() -> int:
    """Run every framework and write `fixtures/duty_table.json` (both editions) and
    `fixtures/span_trees.json` (each framework's traced spans)."""
    from course_lib.tracing.recorder import recording

    with Bench() as bench, recording() as trace:
        columns = run_all(bench, trace)
    fixture_path().write_text(json.dumps(record(columns), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    trees_path().write_text(json.dumps(span_trees(columns), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {fixture_path()} and {trees_path()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
