"""The course's files server from LangChain, as an outside client in a venv of its own.

`langchain-mcp-adapters` (0.3.2, its current release) requires `mcp<2`, and the course runs on
`mcp` 2.x, so the two cannot share a venv; they do not need to: the server runs from the course's
venv, the adapter from its own, and they meet on stdio.

    python3 -m venv build/langchain-venv
    build/langchain-venv/bin/pip install "langchain-mcp-adapters==0.3.2" "mcp<2"
    build/langchain-venv/bin/python tests/outside/langchain_read.py .venv/bin/python fixtures/workspace

It prints the tools the adapter loaded, one read and one refused read as LangChain hands them back,
and the refused read again as a model's tool call gets it (a ToolMessage whose `status` is "error").
Only the adapter's packages are imported here, never the course's.
"""

import asyncio
import sys

from langchain_mcp_adapters.client import MultiServerMCPClient


async def main(course_python: str, root: str) -> None:
    client = MultiServerMCPClient({"files": {"transport": "stdio", "command": course_python,
                                             "args": ["-m", "course_lib.fs_server", "--root", root]}})
    tools = {tool.name: tool for tool in await client.get_tools()}
    print("tools:", sorted(tools))
    read = tools["read_text_file"]
    for arguments in ({"path": "/workspace/notes.txt", "head": 2}, {"path": "/etc/passwd", "head": 2}):
        blocks = await read.ainvoke(arguments)
        print(arguments["path"], "→", [block["text"] for block in blocks])
    # As a model's tool call asks for it: a ToolMessage, whose status says what isError said.
    message = await read.ainvoke({"type": "tool_call", "id": "call_1", "name": read.name,
                                  "args": {"path": "/etc/passwd", "head": 2}})
    print("as a tool call:", type(message).__name__, "status", message.status)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: langchain_read.py COURSE_PYTHON WORKSPACE")
    asyncio.run(main(*sys.argv[1:]))
