"""The mcp 1.x client of benchmark 1: runs in its own venv (`benchmarks/mcp1.py` builds it), never
in the course's, and imports nothing from course_lib (which needs mcp 2.x).

    .venv-mcp1/bin/python benchmarks/_mcp1_client.py SPEC.json ROUNDS PER_ROUND

SPEC.json: {"arguments": {...}, "servers": [{"label", "command", "args", "cwd", "env"}, ...]}.
Every server is opened at once over stdio (`ClientSession`, the 1.x API LangChain's MCP adapter
uses), listed, warmed up (20 calls), then called in interleaved rounds, a random order each round.
Prints one JSON object: per server the median wall time of a `call_tool` and of its output-schema
check (`ClientSession._validate_tool_result`, timed by wrapping it: this is what made mcp 1.x slow
on a two-shape schema), the size of the declared `outputSchema`, and the first result's text.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from contextlib import AsyncExitStack
from importlib.metadata import version

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOL = "read_text_file"


async def measure(spec: dict, rounds: int, per_round: int) -> dict:
    arguments = spec["arguments"]
    found: dict[str, dict] = {}
    async with AsyncExitStack() as stack:
        sessions = {}
        with open("/dev/null", "w") as quiet:
            for server in spec["servers"]:
                params = StdioServerParameters(command=server["command"], args=server["args"], cwd=server.get("cwd"),
                                               env=server.get("env"))  # fmt: skip
                read, write = await stack.enter_async_context(stdio_client(params, errlog=quiet))
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                tools = {tool.name: tool for tool in (await session.list_tools()).tools}
                checks: list[int] = []
                validate = session._validate_tool_result  # private: wrapped only to time it

                async def timed(name, result, validate=validate, checks=checks):
                    start = time.perf_counter_ns()
                    try:
                        return await validate(name, result)
                    finally:
                        checks.append(time.perf_counter_ns() - start)

                session._validate_tool_result = timed
                sessions[server["label"]] = (session, checks, [])
                found[server["label"]] = {"schema_bytes": len(json.dumps(tools[TOOL].outputSchema or {}))}
            for label, (session, checks, _) in sessions.items():
                for _ in range(20):
                    result = await session.call_tool(TOOL, arguments)
                assert not result.isError, result
                found[label]["text"] = result.content[0].text
                checks.clear()
            order = list(sessions)
            for _ in range(rounds):
                random.shuffle(order)
                for label in order:
                    session, _, times = sessions[label]
                    for _ in range(per_round):
                        start = time.perf_counter_ns()
                        await session.call_tool(TOOL, arguments)
                        times.append(time.perf_counter_ns() - start)
            for label, (_, checks, times) in sessions.items():
                found[label].update(call_us=statistics.median(times) / 1e3, calls=len(times),
                                    validate_us=statistics.median(checks) / 1e3 if checks else None)
    return {"mcp": version("mcp"), "jsonschema": version("jsonschema"), "servers": found}


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as file:
        spec = json.load(file)
    print(json.dumps(anyio.run(measure, spec, int(sys.argv[2]), int(sys.argv[3]))))


if __name__ == "__main__":
    main()
