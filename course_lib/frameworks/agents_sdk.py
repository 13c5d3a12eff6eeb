"""The OpenAI Agents SDK's stdio server, two ways the notebook needs it: `LoggedMCPServerStdio`
(the server's stderr in a file) and `KeepsFailures` (a refusal kept a failure).

`MCPServerStdio` starts the server with `mcp.client.stdio.stdio_client(self.params)`, whose stderr
default is the `sys.stderr` of the moment mcp was imported. In a notebook kernel that stream may have
no file descriptor for a child process (ipykernel gives it one only when it captures the process's
own output, which it does not under a test runner such as nbval: `io.UnsupportedOperation:
fileno`), and the SDK has no option for it. `LoggedMCPServerStdio` is the same class with its one
stream-making method, `create_streams`, passing `errlog`: a file, as the course's own host does
(`McpHost.add_stdio_server`). Nothing else changes.

The SDK's MCP servers forward a tool result's text to the model and drop `isError` (read in
`agents/mcp/util.py`, `invoke_mcp_tool`, openai-agents 0.24: with `use_structured_content` a
success goes as the JSON of `structuredContent`, an error still as its text). So a refused read
reaches the model as the server's words, "FORBIDDEN: path is outside /workspace", and nothing in the
feedback says it failed. `keep_failure(result)` (in `keep_failure`, which does not import the SDK)
gives a refused result the content the course's host sends for it (`loop.error_output`:
`{"ok": false, "error": {code, message, kind}}`);
`KeepsFailures` is `MCPServerStdio` with that applied to every result, through `call_tool`, the
method every MCP server of the SDK implements (its public, documented surface).

    async with KeepsFailures(name="files", params=files.params(), errlog=files.errors) as server:
        agent = Agent(name="reader", mcp_servers=[server], model=model)
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import IO, Any

import mcp_types
from agents.mcp import MCPServerStdio
from mcp.client.stdio import stdio_client

from course_lib.frameworks.keep_failure import keep_failure


class LoggedMCPServerStdio(MCPServerStdio):
    """`MCPServerStdio` with the server's stderr appended to `errlog` (a path) instead of the kernel's."""

    def __init__(self, *args: Any, errlog: Path, **options: Any) -> None:
        super().__init__(*args, **options)
        self._errlog_path = Path(errlog)
        self._errlog: IO[str] | None = None

    def create_streams(self) -> AbstractAsyncContextManager[Any]:
        """The SDK's own streams (`stdio_client(self.params)`), with `errlog` a real file."""
        if self._errlog is None:
            self._errlog = self._errlog_path.open("a", encoding="utf-8")  # closed by cleanup()
        return stdio_client(self.params, errlog=self._errlog)

    async def cleanup(self) -> None:
        try:
            await super().cleanup()
        finally:
            if self._errlog is not None:
                self._errlog.close()
                self._errlog = None


class KeepsFailures(LoggedMCPServerStdio):
    """`LoggedMCPServerStdio` whose refused results reach the model as the course's failure envelope."""

    async def call_tool(self, tool_name: str, arguments: dict[str, Any] | None,
                        meta: dict[str, Any] | None = None) -> mcp_types.CallToolResult:  # fmt: skip
        return keep_failure(await super().call_tool(tool_name, arguments, meta))
