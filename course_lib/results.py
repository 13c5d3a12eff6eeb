"""Results the model reads: one normalized shape for success and for every kind of failure.

    {"ok": true,  "data": ...}
    {"ok": false, "error": {"code": ..., "message": ..., "retryable": ...}}

The codes (from the source's `ToolResult`), and what the app should do next:

    INVALID_INPUT      the arguments break the rule          → the model may fix them once
    FORBIDDEN          this session may not do this           → stop, or ask for access
    NOT_FOUND          the resource does not exist            → search again, or say so
    APPROVAL_REQUIRED  a side effect waits for a human        → pause; show the exact action
    TIMEOUT            no answer in time                      → bounded retry (reads; writes only with a key)
    UPSTREAM_ERROR     the tool or its server failed          → bounded retry when transient
    CONFLICT           version or idempotency-key mismatch    → re-read, then decide

Messages are short and safe for a model: no stack traces, real paths or secrets.
"""

from __future__ import annotations

import json
from typing import Any

import mcp_types

ERROR_CODES = ("INVALID_INPUT", "FORBIDDEN", "NOT_FOUND", "APPROVAL_REQUIRED", "TIMEOUT", "UPSTREAM_ERROR", "CONFLICT")
RETRYABLE_CODES = frozenset({"TIMEOUT", "UPSTREAM_ERROR"})


def success(data: Any) -> dict[str, Any]:
    """A successful result carrying `data`."""
    return {"ok": True, "data": data}


def failure(code: str, message: str, *, retryable: bool | None = None, **extra: Any) -> dict[str, Any]:
    """A failed result. `retryable` defaults to whether the code can recover on its own
    (TIMEOUT, UPSTREAM_ERROR); `extra` adds fields such as `kind` or `action_id`.

    Raises:
        ValueError: `code` is not one of ERROR_CODES.
    """
    if code not in ERROR_CODES:
        raise ValueError(f"unknown error code {code!r}; use one of {', '.join(ERROR_CODES)}")
    error = {"code": code, "message": message, "retryable": code in RETRYABLE_CODES if retryable is None else retryable}
    return {"ok": False, "error": {**error, **extra}}


def as_output(result: dict[str, Any]) -> str:
    """The text that goes into `function_call_output.output` (the model reads text)."""
    return json.dumps(result, ensure_ascii=False)


def feedback_text(output: str | list[Any]) -> str:
    """The text in a `function_call_output.output`: the string itself, or its `input_text` parts
    joined by newlines, as an MCP result's text blocks are (`result_text`); `input_image` and
    `input_file` parts carry no text."""
    if isinstance(output, str):
        return output
    return "\n".join(part["text"] for part in output
                     if isinstance(part, dict) and part.get("type") == "input_text" and isinstance(part.get("text"), str))


def result_text(result: mcp_types.CallToolResult) -> str:
    """The text blocks of an MCP result, joined: what the tool actually returned."""
    return "\n".join(block.text for block in result.content if isinstance(block, mcp_types.TextContent))


def tool_error_code(result: mcp_types.CallToolResult) -> str:
    """The error code of an `isError` result: from `structuredContent.error.code` when the server
    gives one, else from a leading `CODE: message`, else `UPSTREAM_ERROR`."""
    structured = result.structured_content or {}
    code = structured.get("error", {}).get("code") if isinstance(structured.get("error"), dict) else None
    if code:
        return str(code)
    head, sep, _ = result_text(result).partition(": ")
    return head if sep and head.isupper() and head.replace("_", "").isalpha() else "UPSTREAM_ERROR"
