"""The course's read task through LangGraph (notebook 09c), in a venv of its own.

LangGraph runs the loop as a graph: an `agent` node asks the model (LangChain's `ChatOpenAI` on the
Responses API, pointed at the offline model), a `review` node stops the run with `interrupt()` until a
person answers each call, and LangGraph's prebuilt `ToolNode` executes the calls it lets through. The
tools come from the course's files server over stdio, through LangChain's MCP adapter
(`langchain-mcp-adapters`, which requires mcp<2: hence this venv). A checkpointer (`InMemorySaver`)
keeps the paused run, and `Command(resume=…)` resumes it. Run by `course_lib.frameworks.langgraph`:

    build/langgraph-venv/bin/python tests/outside/langgraph_read.py '{"modelUrl": …, "files": {…},
                                                                     "tasks": {…}, "out": "report.json"}'

With "tracedTo" (an OTLP endpoint on this machine) the run is traced: LangGraph itself emits no
OpenTelemetry, so the script makes the GenAI spans a host is encouraged to make for its own code
(`invoke_agent`, `chat`, `execute_tool` with `gen_ai.tool.call.id`, in a tool interceptor the adapter
offers), and OpenInference's MCP instrumentation puts the trace context into each request's `_meta`
(the mcp 1.x client sends none itself), so the server's span joins the trace under the tool's.
Only LangChain's, LangGraph's and OpenTelemetry's packages are imported here, never the course's.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Annotated, Any

# ruff: noqa: E402 - tracing is set up before LangChain's MCP adapter is imported

config = json.loads(sys.argv[1]) if __name__ == "__main__" and len(sys.argv) == 2 else {}

# ---- tracing (only when asked): the spans LangGraph does not make, set up before the adapter is imported
# (OpenInference wraps `mcp.client.stdio.stdio_client`, which the adapter binds when it is imported)

tracer: Any = None
if config.get("tracedTo"):
    from openinference.instrumentation.mcp import MCPInstrumentor
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "langgraph"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=config["tracedTo"] + "/v1/traces")))
    trace.set_tracer_provider(provider)
    MCPInstrumentor().instrument()  # traceparent into every MCP request's _meta
    tracer = trace.get_tracer("langgraph_read")


from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_openai import ChatOpenAI
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt
from pydantic import BaseModel
from typing_extensions import TypedDict


class State(TypedDict):
    messages: Annotated[list, add_messages]


class FileRead(BaseModel):
    """The answer as data: which file, how many lines, their text (null when the read failed), ok or not."""

    path: str
    line_count: int
    text: str | None
    ok: bool


def span(name: str, attributes: dict[str, Any], *, client: bool = False) -> Any:
    """A span current for its block when tracing is on (kind CLIENT for a request to the model); a
    do-nothing block otherwise."""
    from contextlib import nullcontext

    if tracer is None:
        return nullcontext()
    from opentelemetry.trace import SpanKind

    return tracer.start_as_current_span(name, kind=SpanKind.CLIENT if client else SpanKind.INTERNAL, attributes=attributes)


def agent_run() -> Any:
    return span("invoke_agent langgraph", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "langgraph"})


async def traced_call(request: Any, handler: Any) -> Any:
    """A tool interceptor (the adapter's hook around each MCP tool call): an `execute_tool` span that
    holds the model's call id, current while the adapter sends `tools/call`."""
    call_id = getattr(request.runtime, "tool_call_id", None) if request.runtime is not None else None
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": request.name, "gen_ai.tool.type": "function"}
    if call_id:
        attributes["gen_ai.tool.call.id"] = call_id
    with span(f"execute_tool {request.name}", attributes):
        return await handler(request)


# ---- the graph ------------------------------------------------------------------------------------


def build(model: Any, tools: list[Any], *, review: bool, answer_as: type[BaseModel] | None = None,
          strict: bool | None = None) -> Any:
    """agent → (review →) tools → agent … → END; with `answer_as`, a last node writes the answer as data;
    `strict`: the tools' rule in strict mode (every property required, the optional ones nullable)."""
    bound = model.bind_tools(tools, strict=strict)

    async def agent(state: State) -> dict[str, Any]:
        with span("chat gpt-4.1", {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                                   "gen_ai.request.model": "gpt-4.1"}, client=True):  # fmt: skip
            return {"messages": [await bound.ainvoke(state["messages"])]}

    async def approve(state: State) -> Command:
        """Stop the run before any call executes: a person sees each call (id, name, arguments)."""
        calls = state["messages"][-1].tool_calls
        decision = interrupt([{"id": c["id"], "name": c["name"], "args": c["args"]} for c in calls])
        if decision == "approve":
            return Command(goto="tools")
        refused = [ToolMessage(content=f"FORBIDDEN: the reviewer refused this call ({decision})", tool_call_id=c["id"],
                               name=c["name"], status="error") for c in calls]  # fmt: skip
        return Command(goto="agent", update={"messages": refused})

    async def answer(state: State) -> dict[str, Any]:
        structured = model.with_structured_output(answer_as, method="json_schema", include_raw=True)
        out = await structured.ainvoke(state["messages"])
        return {"messages": [AIMessage(content=out["parsed"].model_dump_json())]}

    def after_agent(state: State) -> str:
        if state["messages"][-1].tool_calls:
            return "review" if review else "tools"
        return "answer" if answer_as is not None else END

    graph = StateGraph(State)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools, handle_tool_errors=True))  # an exception becomes a ToolMessage
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", after_agent, ["tools", END] + (["review"] if review else [])
                                + (["answer"] if answer_as is not None else []))  # fmt: skip
    graph.add_edge("tools", "agent")
    if review:
        graph.add_node("review", approve)
    if answer_as is not None:
        graph.add_node("answer", answer)
        graph.add_edge("answer", END)
    return graph.compile(checkpointer=InMemorySaver())


def seen(result: dict[str, Any]) -> dict[str, Any]:
    """What a run handed back: each message's kind, and the calls, results and answer in them."""
    out: dict[str, Any] = {"toolCalls": [], "toolMessages": [], "text": None, "interrupts": []}
    for message in result.get("messages", []):
        if isinstance(message, AIMessage):
            out["toolCalls"] += [{"id": c["id"], "name": c["name"], "args": c["args"]} for c in message.tool_calls]
            if not message.tool_calls:
                out["text"] = message.text if hasattr(message, "text") else str(message.content)
        elif isinstance(message, ToolMessage):
            out["toolMessages"].append({"toolCallId": message.tool_call_id, "status": message.status,
                                        "content": message.content if isinstance(message.content, str) else message.content})
    out["interrupts"] = [i.value for i in result.get("__interrupt__", [])]
    return out


@tool
def read_text_file(path: str, head: int | None = None) -> str:
    """Read the first lines of a text file under /workspace."""
    raise PermissionError(f"FORBIDDEN: {path} is outside /workspace")


async def main() -> None:
    tasks = config["tasks"]
    model = ChatOpenAI(model="gpt-4.1", base_url=config["modelUrl"], api_key="offline", use_responses_api=True,
                       max_retries=0)  # fmt: skip
    client = MultiServerMCPClient({"files": {"transport": "stdio", "command": config["files"]["command"],
                                             "args": config["files"]["args"]}},
                                  tool_interceptors=[traced_call])  # fmt: skip
    report: dict[str, Any] = {}
    try:
        async with client.session("files") as session:  # one server process, one MCP session, for every run
            from langchain_mcp_adapters.tools import load_mcp_tools

            tools = await load_mcp_tools(session, tool_interceptors=[traced_call], server_name="files")
            plain = build(model, tools, review=False)
            for name in ("read", "refused"):
                with agent_run():
                    report[name] = seen(await plain.ainvoke({"messages": [HumanMessage(tasks[name])]},
                                                            {"configurable": {"thread_id": name}}))
            # Strict mode: every property required, so the model sends null for the ones it does not use.
            with agent_run():
                report["strict"] = seen(await build(model, tools, review=False, strict=True).ainvoke(
                    {"messages": [HumanMessage(tasks["read"])]}, {"configurable": {"thread_id": "strict"}}))
            # Approval: interrupt() pauses before the tools run; the checkpointer keeps the paused run.
            gated = build(model, tools, review=True)
            for name, decision in (("read", "approve"), ("refused", "outside /workspace")):
                thread = {"configurable": {"thread_id": f"gated-{name}"}}
                with agent_run():
                    report[f"asked_{name}"] = seen(await gated.ainvoke({"messages": [HumanMessage(tasks[name])]}, thread))
                    report[f"resumed_{name}"] = seen(await gated.ainvoke(Command(resume=decision), thread))
            # A structured answer: a last node asks for the answer under a JSON schema (text.format).
            typed = build(model, tools, review=False, answer_as=FileRead)
            for name in ("read", "refused"):
                with agent_run():
                    result = await typed.ainvoke({"messages": [HumanMessage(tasks[name])]},
                                                 {"configurable": {"thread_id": f"typed-{name}"}})
                report[f"structured_{name}"] = seen(result) | {"object": json.loads(result["messages"][-1].content)}
        # A tool that raises: ToolNode(handle_tool_errors=True) turns the exception into a ToolMessage.
        local = build(model, [read_text_file], review=False)
        with agent_run():
            report["raised"] = seen(await local.ainvoke({"messages": [HumanMessage(tasks["read"])]},
                                                        {"configurable": {"thread_id": "raised"}}))
    finally:
        with open(config["out"], "w", encoding="utf-8") as out:
            json.dump(report, out, indent=1, default=str)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: langgraph_read.py CONFIG_JSON")
    asyncio.run(main())
