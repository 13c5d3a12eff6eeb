"""A refused MCP result made a failure that a text-only host still forwards as one.

A host that forwards only a result's text (the OpenAI Agents SDK's MCP servers) drops `isError`:
"FORBIDDEN: path is outside /workspace" reaches the model as words. `keep_failure` replaces a
refused result's content with the course's failure envelope, the text the course's own host sends
(`loop.error_output`), so the failure is marked by its shape. `agents_sdk.KeepsFailures` applies it.
"""

from __future__ import annotations

import mcp_types

from course_lib.loop import error_output
from course_lib.results import result_text, tool_error_code


def keep_failure(result: mcp_types.CallToolResult) -> mcp_types.CallToolResult:
    """`result` unchanged if it succeeded; if it is `isError`, the same result whose only content is
    the course's failure envelope (code from `structuredContent.error.code` or a leading `CODE: …`,
    else UPSTREAM_ERROR), so a host that forwards only text still forwards a failure."""
    if not result.is_error:
        return result
    code = tool_error_code(result)
    message = result_text(result).removeprefix(f"{code}: ") or code
    envelope = mcp_types.TextContent(type="text", text=error_output(code, message))
    return result.model_copy(update={"content": [envelope]})
