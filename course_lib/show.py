"""Showing the real objects in a notebook: JSON as it crossed, MCP messages, traces.

Everything prints plain text (stable under nbval, readable on GitHub), and shows the actual
objects: openai and mcp types are dumped with their wire names, never re-typed by hand.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel

from course_lib.connection import Exchange, WireMessage
from course_lib.lang import say
from course_lib.loop import LoopResult


def wire_json(obj: Any) -> Any:
    """The JSON form of an object as it appears on the wire.

    openai models → `to_dict()` (only the fields that were set); mcp/pydantic models →
    `model_dump(by_alias=True, exclude_none=True)` (camelCase wire names such as `inputSchema`).
    """
    if hasattr(obj, "to_dict") and callable(obj.to_dict):
        return obj.to_dict()
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json", by_alias=True, exclude_none=True)
    if isinstance(obj, WireMessage):
        return obj.json
    return obj


def compact_json(value: Any, width: int = 100) -> str:
    """`value` as JSON text that keeps every byte of content in few lines: a container whose
    one-line form fits in `width` columns stays on one line; a bigger one is opened, and its short
    members share lines (as many as fit), each long one on a line of its own.

    `json.loads(compact_json(v)) == v` for any JSON value; a line is wider than `width` only for
    a string too long to fit (or nesting deeper than the width).
    """
    return _layout(value, 0, 0, width)


def _layout(value: Any, level: int, used: int, width: int) -> str:
    flat = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    # used: the characters before the value on its line (its key), past the indentation.
    if not isinstance(value, (dict, list)) or not value or 2 * level + used + len(flat) <= width:
        return flat
    inner, outer = " " * (2 * level + 2), " " * (2 * level)
    if isinstance(value, dict):
        labels = [json.dumps(key, ensure_ascii=False) + ": " for key in value]
        members = [label + _layout(member, level + 1, len(label), width) for label, member in zip(labels, value.values())]
    else:
        members = [_layout(member, level + 1, 0, width) for member in value]
    lines: list[str] = []
    for member in members:  # pack one-line members side by side while they fit
        if lines and "\n" not in member and "\n" not in lines[-1] and len(inner) + len(lines[-1]) + len(member) + 2 <= width:
            lines[-1] += ", " + member
        else:
            lines.append(member)
    return "{["[isinstance(value, list)] + "\n" + ",\n".join(inner + line for line in lines) + "\n" + outer + "}]"[isinstance(value, list)]


def show_json(obj: Any, title: str | None = None, *, limit: int | None = None, compact: bool = False) -> None:
    """Print `obj` as indented JSON (after `wire_json`), optionally under a title.

    `compact=True` prints it as `compact_json` does (a whole HTTP body in a screenful); `limit`
    cuts very long output to that many lines and says how many were left out.
    """
    value = wire_json(obj)
    text = compact_json(value) if compact else json.dumps(value, indent=2, ensure_ascii=False)
    lines = text.splitlines()
    if limit is not None and len(lines) > limit:
        lines = lines[:limit] + [say("… ({n} more lines)", "…（还有 {n} 行）", n=len(lines) - limit)]
    if title:
        print(f"── {title} " + "─" * max(0, 60 - len(title)))
    print("\n".join(lines))


def show_messages(messages: Iterable[WireMessage], *, methods: set[str] | None = None) -> None:
    """Print recorded MCP messages one per line, with their direction.

    `methods` keeps only requests/notifications of those methods and the responses to them.
    """
    messages = list(messages)
    wanted_ids = {m.json.get("id") for m in messages if methods is None or m.json.get("method") in methods}
    for m in messages:
        is_response = "method" not in m.json
        if methods is not None and not (m.json.get("method") in methods or (is_response and m.json.get("id") in wanted_ids)):
            continue
        print(f"{m.direction_label}  {m.text}")


def show_exchange(exchange: Exchange) -> None:
    """Print one JSON-RPC request and its response, indented."""
    show_json(exchange.request, say("app → server  (JSON-RPC id {id})", "应用 → 服务器（JSON-RPC id {id}）", id=exchange.id))
    show_json(exchange.response, say("server → app  (JSON-RPC id {id})", "服务器 → 应用（JSON-RPC id {id}）", id=exchange.id))


def show_trace(result: LoopResult) -> None:
    """Print how a loop ended and, per model call, the link from `call_id` to MCP `id`.

    The labels are in the edition's language (`lang.say`), the outcome too ("ok" / "error CODE",
    成功 / 出错 CODE); `status` and `reason` (field names), their values, the ids and the error codes
    are the loop's own, printed as they are.
    """
    print(say("status: {status}   reason: {reason}   model requests: {steps}",
              "status: {status}   reason: {reason}   模型请求数: {steps}",
              status=result.status, reason=result.reason, steps=result.steps))
    if not result.trace:
        print(say("(no tool calls)", "（没有工具调用）"))
    for link in result.trace:
        route = f"{link.server}/{link.tool}" if link.server else say("(not routed)", "（未路由）")
        mcp = f"MCP id {link.mcp_id}" if link.mcp_id is not None else say("no MCP request", "没有 MCP 请求")
        outcome = say("ok", "成功") if link.ok else say("error {code}", "出错 {code}", code=link.error_code)
        print(f"  {link.call_id}  {link.alias} {link.arguments_text}  →  {route}  {mcp}  →  {outcome}")


def show_items(items: Iterable[Any]) -> None:
    """Print each input/output item on one line: its index, type and key fields (a map of a context)."""
    for i, item in enumerate(items):
        d = wire_json(item)
        kind = d.get("type", "message")
        if kind == "function_call":
            detail = f"{d['name']} {d['arguments']}  call_id={d['call_id']}"
        elif kind == "function_call_output":
            out = str(d["output"])
            detail = f"call_id={d['call_id']}  output={out[:50]!r}{'…' if len(out) > 50 else ''}"
        elif kind == "reasoning":  # the model's own: sent back as it came, not read by the app
            sealed = say("encrypted content", "带加密内容") if d.get("encrypted_content") else say("by its id", "按 id 引用")
            detail = say("{n} summary part(s), {sealed}", "{n} 段摘要，{sealed}", n=len(d.get("summary") or []), sealed=sealed)
        else:
            content = d.get("content")
            text = content if isinstance(content, str) else " ".join(p.get("text", "") for p in content or [])
            detail = f"{d.get('role', '?')}: {text[:60]!r}{'…' if len(text) > 60 else ''}"
        print(f"[{i}] {kind:<22} {detail}")


class TextFallback:
    """For a class with a `.widget` (ipywidgets) and a `.text()`: Jupyter shows the live widget,
    and every viewer that cannot render widgets (GitHub, nbviewer, a terminal) shows the text."""

    widget: Any

    def text(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return self.text()

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        bundle = self.widget._repr_mimebundle_(include=include, exclude=exclude) or {}
        return {**bundle, "text/plain": self.text()}
