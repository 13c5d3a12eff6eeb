"""Frameworks carry the loop (notebooks 09b and 09c): the course's task through the OpenAI Agents SDK,
pydantic-ai, Mastra, LangGraph and the Claude Agent SDK, on the offline model and the course's files
server, with both wires recorded.

    bench        Bench: the offline model over HTTP and the files server (stdio, Streamable HTTP), each
                 behind a tap; `run(label)` collects what crossed into a Run
    http_tap     HttpTap: a recording reverse proxy (the model's wire, an MCP server's over HTTP)
    stdio_tap    `python -m course_lib.frameworks.stdio_tap LOG -- server…`: a stdio server, its lines logged
    trace        calls(run): each function_call followed across both wires (call_id ⇄ JSON-RPC id)
    envelope     the model's wire in Responses or Anthropic Messages (tool_use/tool_result), one shape
    table        show_wire(run): the same rule / value / result table for every framework
    duties       duty_table(...): who carries each duty, measured on the runs
    mastra       run_mastra(bench, tasks): the TypeScript script in tests/node/frameworks, on Node 22
    langgraph    run_langgraph(bench, tasks): tests/outside/langgraph_read.py in build/langgraph-venv
    claude       run_claude(bench, tasks, schema): tests/outside/claude_read.py in build/claude-venv, the CLI in tests/node
    scripts      run_script: one JSON argument in, one JSON report out, no key in the environment
    venvs        venvs of their own (LangGraph, the Claude Agent SDK, Phoenix), built from pinned requirements
    runs         run_all(bench, trace): every framework once, traced; re-records fixtures/duty_table.json
    versions     show_versions(): each framework's installed version, and the Node that runs Mastra
    agents_sdk   KeepsFailures: the Agents SDK's stdio server with a refusal kept a failure (imports `agents`)
"""

from course_lib.frameworks.bench import Bench, BenchError, Run, StdioServer
from course_lib.frameworks.duties import Approval, FrameworkRuns, Shown, duty_table
from course_lib.frameworks.mastra import MastraFailed, run_mastra, show_source
from course_lib.frameworks.table import show_wire
from course_lib.frameworks.trace import CallTrace, calls, failure_marked, roundtrip
from course_lib.frameworks.versions import show_versions

__all__ = ["Approval", "Bench", "BenchError", "CallTrace", "FrameworkRuns", "MastraFailed", "Run", "Shown",
           "StdioServer", "calls", "duty_table", "failure_marked", "roundtrip", "run_mastra", "show_source",
           "show_versions", "show_wire"]
