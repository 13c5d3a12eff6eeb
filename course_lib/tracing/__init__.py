"""Traces in OpenTelemetry: the course's runs, and the frameworks', as spans (notebook 09c).

The course keeps the link between the model's `call_id` and the MCP JSON-RPC `id` in its own records
(`loop.TraceLink`, `course.wire`). The field keeps it in OpenTelemetry: the GenAI conventions put the
`call_id` on the tool execution span (`gen_ai.tool.call.id`), the MCP conventions put the JSON-RPC id
on the MCP spans (`jsonrpc.request.id`), and the MCP span is the tool span's child. This package turns
tracing on for a block, keeps every span on this machine, and reads the link out of the tree.

    recorder     recording(): tracing on inside the block, the spans kept in memory (off otherwise)
    spans        the course host's spans (`loop.run_loop`): invoke_agent, chat, execute_tool
    records      SpanRecord: one finished span, from this process or another
    collector    Collector: an OTLP/HTTP receiver on 127.0.0.1 for other processes' spans
    tree         show_tree(spans), links(spans), call_links(spans), show_links(spans)
    serve        `python -m course_lib.tracing.serve ENDPOINT SERVICE -- MODULE ARGS…`: a Python server, traced
    agents_sdk   the OpenAI Agents SDK's own trace, as OpenTelemetry spans (imports `agents`)
    viewer       Phoenix, a local trace viewer, started by the project in a venv of its own

Learners import what they need from here: `from course_lib.tracing import recording, show_tree, links`.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "recording": "recorder", "Recording": "recorder", "active": "recorder",
    "SpanRecord": "records",
    "Collector": "collector",
    "show_tree": "tree", "tree_lines": "tree", "links": "tree", "call_links": "tree", "show_links": "tree",
    "CallLink": "tree",
}  # fmt: skip

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Import on first use: `course_lib.loop` imports `tracing.spans` only, never the SDK."""
    if name not in _EXPORTS:
        raise AttributeError(f"module 'course_lib.tracing' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f"course_lib.tracing.{_EXPORTS[name]}"), name)
