"""The course's read task through the Claude Agent SDK (notebook 09c), in a venv of its own.

The Claude Agent SDK (PyPI `claude-agent-sdk`) drives the Claude Code CLI (npm
`@anthropic-ai/claude-code`, pinned in tests/node): the CLI is the agent loop, the SDK talks to it
over stdin/stdout and answers its permission requests. Here the CLI's model is the course's offline
model (its Messages endpoint, `ANTHROPIC_BASE_URL`), its MCP server the course's files server over
stdio, and every call is judged by `can_use_tool`. Run by `course_lib.frameworks.claude`:

    build/claude-venv/bin/python tests/outside/claude_read.py '{"cli": …, "modelUrl": …, "files": {…},
                                                              "tasks": {…}, "out": "report.json", "home": …}'

Only the SDK's packages are imported here (and the OpenTelemetry API, which the SDK reads to hand the
CLI its trace context), never the course's. What the SDK handed back goes to `out` as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from claude_agent_sdk import (
    AssistantMessage,
    ClaudeAgentOptions,
    ClaudeSDKClient,
    PermissionResultAllow,
    PermissionResultDeny,
    ResultMessage,
    ToolPermissionContext,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    create_sdk_mcp_server,
    tool,
)

config = json.loads(sys.argv[1])
TOOL = "mcp__files__read_text_file"  # the CLI names an MCP tool mcp__<server>__<tool>


# A tool that raises, in an MCP server the SDK hosts in this process (the CLI reaches it through the SDK).
@tool("read_text_file", "Read the first lines of a text file under /workspace.",
      {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": ["integer", "null"]}},
       "required": ["path"]})  # fmt: skip
async def raising_read(arguments: dict[str, Any]) -> dict[str, Any]:
    raise PermissionError(f"FORBIDDEN: {arguments['path']} is outside /workspace")


def options(judge: Any, servers: dict[str, Any], allowed: list[str], **more: Any) -> ClaudeAgentOptions:
    """The same CLI, model and settings for every run: no built-in tool, only the servers given."""
    return ClaudeAgentOptions(
        cli_path=config["cli"],
        model="claude-sonnet-4-5",
        tools=[],  # no built-in tool (Bash, Read, Edit, …): the allowlist is the MCP tools alone
        mcp_servers=servers,
        strict_mcp_config=True,  # no MCP server from a settings file
        setting_sources=[],  # no user, project or local settings
        can_use_tool=judge,
        allowed_tools=allowed,  # allowed without asking: none but what a run says
        max_turns=4,  # model requests per turn
        cwd=config["cwd"],
        env={"ANTHROPIC_BASE_URL": config["modelUrl"], "ANTHROPIC_API_KEY": "offline", "HOME": config["home"],
             **config.get("env", {})},
        **more,
    )


def files_server() -> dict[str, Any]:
    return {"files": {"type": "stdio", "command": config["files"]["command"], "args": config["files"]["args"]}}


class Judge:
    """`can_use_tool`: every call the CLI wants to make comes here first, with its tool_use_id."""

    def __init__(self) -> None:
        self.decide: Any = allow
        self.asked: list[dict[str, Any]] = []

    async def __call__(self, name: str, arguments: dict[str, Any], context: ToolPermissionContext) -> Any:
        decision = self.decide(name, arguments)
        self.asked.append({"tool": name, "input": arguments, "toolUseId": context.tool_use_id,
                           "decision": decision.behavior})  # fmt: skip
        return decision


def allow(name: str, arguments: dict[str, Any]) -> Any:
    return PermissionResultAllow()


def refuse_outside_workspace(name: str, arguments: dict[str, Any]) -> Any:
    """An approver who sees the arguments: a read outside /workspace is refused before it runs."""
    if str(arguments.get("path", "")).startswith("/workspace/"):
        return PermissionResultAllow()
    return PermissionResultDeny(message="FORBIDDEN: the approver refused a path outside /workspace")


async def session(servers: dict[str, Any], turns: list[tuple[str, str, Any]], **more: Any) -> dict[str, Any]:
    """One CLI session: each turn (name, task, how the judge decides) sent in order; what came back."""
    judge = Judge()
    report: dict[str, Any] = {}
    async with ClaudeSDKClient(options(judge, servers, [], **more)) as client:
        for name, task, decide in turns:
            judge.decide, judge.asked = decide, []
            seen: dict[str, Any] = {"toolUses": [], "toolResults": [], "text": "", "result": None, "structured": None}
            await client.query(task)
            async for message in client.receive_response():
                if isinstance(message, AssistantMessage):
                    for block in message.content:
                        if isinstance(block, ToolUseBlock):
                            seen["toolUses"].append({"id": block.id, "name": block.name, "input": block.input})
                        elif hasattr(block, "text"):
                            seen["text"] += block.text
                elif isinstance(message, UserMessage) and isinstance(message.content, list):
                    for block in message.content:
                        if isinstance(block, ToolResultBlock):
                            seen["toolResults"].append({"toolUseId": block.tool_use_id, "content": block.content,
                                                        "isError": bool(block.is_error)})  # fmt: skip
                elif isinstance(message, ResultMessage):
                    seen["result"], seen["structured"], seen["stopReason"] = message.result, message.structured_output, message.subtype
            seen["asked"] = judge.asked
            report[name] = seen
    return report


async def main() -> None:
    tasks = config["tasks"]
    report: dict[str, Any] = {}
    try:
        # A read and a refused read, every call judged by can_use_tool first (this judge allows all);
        # then a judge who reads the arguments and refuses a path outside /workspace.
        report |= await session(files_server(), [("read", tasks["read"], allow), ("refused", tasks["refused"], allow),
                                                 ("judged_refused", tasks["refused"], refuse_outside_workspace)])
        # A structured answer: the rule (a JSON Schema) goes to the CLI, the answer comes back parsed.
        report |= await session(files_server(), [("structured_read", tasks["read"], allow),
                                                 ("structured_refused", tasks["refused"], allow)],
                                output_format={"type": "json_schema", "schema": config["schema"]})
        # A tool that raises, in an MCP server the SDK hosts in this process.
        report |= await session({"local": create_sdk_mcp_server("local", tools=[raising_read])},
                                [("raised", tasks["read"], allow)])
    finally:
        with open(config["out"], "w", encoding="utf-8") as out:
            json.dump(report, out, indent=1)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: claude_read.py CONFIG_JSON")
    asyncio.run(main())
