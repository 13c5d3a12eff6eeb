"""Reading a trace: the span tree, and the `call_id` ⇄ JSON-RPC id link found in it.

    show_tree(spans)                 # every trace as an indented tree, the ids that matter on each line
    links(spans)                     # {call_id: JSON-RPC id}: each tool call and the tools/call that carried it
    call_links(spans)                # the same, with the spans that hold each end

A tool execution span holds the model's `call_id` (`gen_ai.tool.call.id`, GenAI conventions); an MCP
span holds the JSON-RPC `id` (`jsonrpc.request.id`, MCP conventions: on the client span, and on the
server span, which is the client's child through `_meta.traceparent`). The link is the tree itself:
the `tools/call` span *below* the tool span carried that call. Where a framework's tool span is not
an ancestor of any MCP span (its MCP client sent no trace context, or made no span), the tree does
not link them, and `links` leaves that call out, unless the server's span itself was told the call
id (Claude Code names it in `_meta`; `serve.CallIdFromMeta` records it): a trace shows the link only
when the parent chain is unbroken or one span holds both ids.

Ids are printed as they are, but the trace and span ids themselves are random hex: `show_tree`
prints none of them (a tree shows who is whose parent), so the same run prints the same tree.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from course_lib.lang import say
from course_lib.tracing.records import SpanRecord

CALL_ID_KEYS = ("gen_ai.tool.call.id",)  # the GenAI conventions' attribute for the model's call id
# What each line of the tree shows, when a span has it (in this order).
SHOWN = ("gen_ai.tool.call.id", "mcp.method.name", "jsonrpc.request.id", "gen_ai.tool.name", "gen_ai.request.model",
         "gen_ai.response.id", "mcp.protocol.version", "error.type")  # fmt: skip


@dataclass(frozen=True)
class CallLink:
    """One tool call found in a trace: the span with its `call_id`, and the `tools/call` span under it."""

    call_id: str
    tool_span: SpanRecord
    mcp_span: SpanRecord | None

    @property
    def jsonrpc_id(self) -> str | None:
        """The JSON-RPC id as the MCP span records it (a string: `jsonrpc.request.id` is one)."""
        return None if self.mcp_span is None else str(self.mcp_span.get("jsonrpc.request.id"))


def call_id_of(span: SpanRecord) -> str | None:
    for key in CALL_ID_KEYS:
        value = span.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _is_tools_call(span: SpanRecord) -> bool:
    return span.get("mcp.method.name") == "tools/call" and span.get("jsonrpc.request.id") is not None


def _children(spans: Sequence[SpanRecord]) -> dict[str | None, list[SpanRecord]]:
    known = {s.span_id for s in spans}
    children: dict[str | None, list[SpanRecord]] = {}
    for span in spans:
        parent = span.parent_id if span.parent_id in known else None  # a parent we never got: a root here
        children.setdefault(parent, []).append(span)
    for group in children.values():
        group.sort(key=lambda s: (s.start, s.end))
    return children


def call_links(spans: Sequence[SpanRecord]) -> list[CallLink]:
    """Every span holding a `call_id`, with the nearest `tools/call` span below it (the client's, or
    the server's when the client made none), in the order the calls started."""
    children = _children(spans)
    found = []
    for span in sorted((s for s in spans if call_id_of(s)), key=lambda s: s.start):
        if _is_tools_call(span):  # a server span that was told the call id (`serve.CallIdFromMeta`)
            found.append(CallLink(call_id_of(span) or "", span, span))
            continue
        below, queue = None, list(children.get(span.span_id, []))
        while queue and below is None:  # breadth first: the nearest one (the client's before the server's)
            level = queue
            queue = []
            for child in level:
                if _is_tools_call(child) and below is None:
                    below = child
                queue.extend(children.get(child.span_id, []))
        found.append(CallLink(call_id_of(span) or "", span, below))
    return found


def links(spans: Sequence[SpanRecord]) -> dict[str, str]:
    """{call_id: JSON-RPC id} for every tool call whose span has a `tools/call` span under it (or is one)."""
    return {link.call_id: link.jsonrpc_id for link in call_links(spans) if link.jsonrpc_id is not None}


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def tree_lines(spans: Sequence[SpanRecord], *, shown: Iterable[str] = SHOWN, services: bool = True) -> list[str]:
    """The trees as lines: `name (KIND, service) · key value · …`, children indented under parents."""
    keys = tuple(shown)
    children = _children(spans)
    lines: list[str] = []

    def walk(span: SpanRecord, depth: int) -> None:
        where = span.kind if not services or not span.service else f"{span.kind}, {span.service}"
        marks = [f"{key} {_value(span.get(key))}" for key in keys if span.get(key) is not None]
        if span.status == "ERROR":
            marks.append("status ERROR")
        lines.append("  " * depth + f"{span.name} ({where})" + "".join(f" · {m}" for m in marks))
        for child in children.get(span.span_id, []):
            walk(child, depth + 1)

    roots = children.get(None, [])
    for number, root in enumerate(roots):
        if number and (root.trace_id != roots[number - 1].trace_id):
            lines.append("")
        walk(root, 0)
    return lines


def show_tree(spans: Sequence[SpanRecord], *, shown: Iterable[str] = SHOWN, services: bool = True) -> None:
    """Print the span trees (see `tree_lines`); a blank line between traces."""
    lines = tree_lines(spans, shown=shown, services=services)
    print("\n".join(lines) if lines else say("(no spans: was tracing on?)", "（没有 span：追踪打开了吗？）"))


def show_links(spans: Sequence[SpanRecord]) -> None:
    """Print each call found in the trace: its `call_id`, the tool span's name, the `tools/call` under it."""
    for link in call_links(spans):
        if link.mcp_span is None:
            print(say("{c}  {tool}  → no tools/call span under it", "{c}  {tool}  → 下面没有 tools/call span",
                      c=link.call_id, tool=link.tool_span.name))
        else:
            print(f"{link.call_id}  {link.tool_span.name}  → {link.mcp_span.name} ({link.mcp_span.kind}) · "
                  f"jsonrpc.request.id {link.jsonrpc_id}")
