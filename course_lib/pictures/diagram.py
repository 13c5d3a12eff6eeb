"""A recorded run as a sequence diagram: lanes, arrows and notes, each from one recorded item.

Lanes: the model, the app, one per MCP server, and a person when a write waited for approval.
Arrows, in the order they crossed:

- model side: each request (`request n`, and the items it added: the user's message, each
  `function_call_output` / `role: tool` message / `tool_result` block with the call id it answers)
  and each answer (its items: `function_call name · call_id …`, a message); an HTTP error is an error;
- server side: each JSON-RPC message (`tools/call read_text_file · id 3`, `result · id 3 · isError
  false`); a notification has no id; `isError: true` (the tool refused) and a JSON-RPC error are errors;
- notes over the app: the link it keeps (`call_… ⇄ id 3`), and a call it refused before sending anything;
- the person: the exact action a write waits on, and the decision.

The two sides are put in one order by when each item crossed, where the course recorded it live
(`HttpExchange.at`, `WireMessage.at`); otherwise (a framework's run, a result without its HTTP
capture) by cause: a `tools/call` after the answer that asked for it, every other message as early
as its own wire's order allows. Results that arrive back to back (calls run together) are drawn in the
order of their requests: which finished first by microseconds is not a fact of the run worth storing.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from course_lib.lang import display_width, say
from course_lib.pictures.record import Link, ModelExchange, Recording, ServerMessage, model_calls

Style = Literal["request", "response", "notify", "error", "link", "refusal", "wait"]

MODEL, APP, PERSON = "model", "app", "person"


@dataclass(frozen=True)
class Arrow:
    """One message that crossed, from lane `source` to lane `target` (a note when they are equal)."""

    source: str
    target: str
    lines: tuple[str, ...]
    style: Style

    @property
    def note(self) -> bool:
        return self.source == self.target

    @property
    def text(self) -> str:
        return " · ".join(self.lines)


@dataclass(frozen=True)
class Diagram:
    """Lanes (id, label) left to right, and the arrows and notes top to bottom."""

    title: str
    lanes: tuple[tuple[str, str], ...]
    arrows: tuple[Arrow, ...]

    def between(self, a: str, b: str) -> list[Arrow]:
        """The arrows between lanes `a` and `b`, either way (no notes)."""
        return [x for x in self.arrows if not x.note and {x.source, x.target} == {a, b}]


def server_lane(name: str) -> str:
    return f"server:{name}"


def build(recording: Recording, title: str | None = None) -> Diagram:
    """The diagram of `recording` (see the module docstring)."""
    lanes = [(MODEL, say("model", "模型"))] if recording.model else []
    lanes.append((APP, say("app", "应用") if recording.app is None else say("app: {who}", "应用：{who}", who=recording.app)))
    lanes += [(server_lane(name), say("MCP server {name}", "MCP 服务器 {name}", name=name))
              for name, messages in recording.servers.items() if messages]  # fmt: skip
    if recording.approvals:
        lanes.append((PERSON, say("person", "人")))
    arrows: list[Arrow] = []
    placed = _placement(recording)
    methods: dict[tuple[str, Any], str] = {}
    sent = [link for link in recording.links if link.mcp_id is not None]
    approvals = {a.call_id: a for a in recording.approvals}
    asked: set[str] = set()
    seen = _Seen()
    for index in range(-1, len(recording.model)):
        if index >= 0:
            exchange = recording.model[index]
            arrows.append(Arrow(APP, MODEL, _request_lines(exchange, index + 1, seen), "request"))
            if exchange.response is not None or exchange.status >= 400:
                style = "error" if exchange.status >= 400 else "response"
                arrows.append(Arrow(MODEL, APP, _answer_lines(exchange, index + 1), style))
            arrows += _unsent(recording, exchange, approvals)
        for message in placed.get(index, []):
            link = next((link for link in sent if link.carried_by(message)), None)
            if link is not None and link.call_id in approvals and link.call_id not in asked:
                asked.add(link.call_id)
                arrows += _asking(approvals[link.call_id])
            arrows.append(_server_arrow(message, methods))
            if link is not None:
                arrows.append(Arrow(APP, APP, (f"{short(link.call_id)} ⇄ id {message.json.get('id')}",), "link"))
        if index >= 0:  # a call that waited for a person and sent nothing (yet): after its answer
            for call_id, _name, _arguments in model_calls(recording.model[index]):
                if call_id in approvals and call_id not in asked and not _carried(call_id, recording.links):
                    asked.add(call_id)
                    arrows += _asking(approvals[call_id])
    name = title or say("what crossed, in order", "依次经过线路的内容")
    return Diagram(name, tuple(lanes), tuple(arrows))


def _unsent(recording: Recording, exchange: ModelExchange, approvals: dict[str, Any]) -> list[Arrow]:
    """Notes for the answer's calls that crossed to no server drawn here: refused by the app before
    sending, or sent to a server whose messages were not among the records given."""
    notes = []
    for call_id, _name, _arguments in model_calls(exchange):
        mine = [link for link in recording.links if link.call_id == call_id]
        refused = next((link for link in mine if link.refused), None)
        if refused is not None and call_id not in approvals:
            notes.append(Arrow(APP, APP, (say("refused before sending", "发送前就拒绝了"),
                                          f"{short(call_id)}: {refused.refused}"), "refusal"))  # fmt: skip
        sent = next((link for link in mine if link.mcp_id is not None), None)
        if sent is not None and not any(sent.carried_by(m) for m in recording.messages):
            notes.append(Arrow(APP, APP, (say("sent to {server} as id {id}", "作为 id {id} 发给了 {server}",
                                              server=sent.server, id=sent.mcp_id),
                                          say("not in the records given", "不在给出的记录里")), "wait"))  # fmt: skip
    return notes


def _carried(call_id: str, links: list[Link]) -> bool:
    return any(link.call_id == call_id and link.mcp_id is not None for link in links)


def _asking(approval: Any) -> list[Arrow]:
    which = approval.action_id or short(approval.call_id)  # the person decides on the action, not the call
    what = f"{approval.tool} · {which}"
    arrows = [Arrow(APP, PERSON, (say("approve?", "批准吗？"), what), "request")]
    if approval.decision == "approved":
        arrows.append(Arrow(PERSON, APP, (say("approved", "已批准"), which), "response"))
    elif approval.decision == "rejected":
        arrows.append(Arrow(PERSON, APP, (say("rejected", "已拒绝"), which), "error"))
    else:
        arrows.append(Arrow(PERSON, PERSON, (say("waiting for a decision", "等待决定"),
                                             say("the write has not run", "写入还没有执行")), "wait"))  # fmt: skip
    return arrows


# ---- placing the server messages among the model's exchanges --------------------------------------


def _placement(recording: Recording) -> dict[int, list[ServerMessage]]:
    """Server messages grouped by the model exchange they come after (-1: before the first)."""
    placed: dict[int, list[ServerMessage]] = {}
    if recording.timed:
        times = [m.at for m in recording.model]
        for message in sorted(recording.messages, key=lambda m: m.at):  # stable: each wire's own order kept
            after = sum(1 for t in times if t <= message.at) - 1
            placed.setdefault(after, []).append(message)
        return {after: _back_to_back_in_request_order(messages) for after, messages in placed.items()}
    asked_in = {call_id: i for i, exchange in enumerate(recording.model) for call_id, _, _ in model_calls(exchange)}
    carried = {(link.server, link.mcp_id): asked_in.get(link.call_id, -1) for link in recording.links}
    for messages in recording.servers.values():
        after = -1
        for message in messages:
            if message.outgoing and message.json.get("method") == "tools/call":
                after = max(after, carried.get((message.server, message.json.get("id")), -1))
            placed.setdefault(after, []).append(message)
    return {after: _back_to_back_in_request_order(messages) for after, messages in placed.items()}


def _back_to_back_in_request_order(messages: list[ServerMessage]) -> list[ServerMessage]:
    """`messages` with each run of results that arrived back to back (calls run together) put in the order
    of their requests: which of two results came first by a few microseconds is not something a run
    promises, and a stored picture must not depend on it. Everything else keeps its place."""
    asked = {(m.server, m.json.get("id")): n for n, m in enumerate(messages) if m.outgoing and "method" in m.json}

    def result_of(message: ServerMessage) -> int | None:
        if message.outgoing or "method" in message.json:
            return None
        return asked.get((message.server, message.json.get("id")))

    ordered: list[ServerMessage] = []
    together: list[ServerMessage] = []
    for message in [*messages, None]:
        if message is not None and result_of(message) is not None:
            together.append(message)
            continue
        ordered += sorted(together, key=lambda m: result_of(m) or 0)
        together = []
        if message is not None:
            ordered.append(message)
    return ordered


# ---- labels -------------------------------------------------------------------------------------


def short(identifier: Any, keep: int = 24) -> str:
    """An id as the diagram prints it: whole when short, else its start and … (enough to find it in the JSON)."""
    text = str(identifier)
    return text if len(text) <= keep else text[: keep - 1] + "…"


def clip(text: str, width: int = 34) -> str:
    """`text` on one line, cut to about `width` columns with …"""
    flat = " ".join(str(text).split())
    if display_width(flat) <= width:
        return flat
    out = ""
    for ch in flat:
        if display_width(out + ch) > width - 1:
            break
        out += ch
    return out + "…"


@dataclass
class _Seen:
    """The items the previous request carried: a request that starts with them continues that
    conversation and shows only what it added; any other request starts a new one (all of it is new)."""

    items: list[Any] | None = None


def _request_lines(exchange: ModelExchange, n: int, seen: _Seen) -> tuple[str, ...]:
    head = say("request {n}", "请求 {n}", n=n) + (" · stream" if exchange.request.get("stream") else "")
    lines = [head]
    items = exchange.request.get("input") if exchange.envelope == "responses" else exchange.request.get("messages")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    items = list(items or [])
    before = seen.items or []
    added = items[len(before):] if items[: len(before)] == before and before else items
    seen.items = items
    for item in added:
        if isinstance(item, dict) and item.get("role") in ("user", "developer", "system") and not _is_tool_results(item):
            lines.append(f"message ({item['role']})")
    for call_id, kind, failed in _fed_back(exchange.envelope, added):
        lines.append(f"{kind} · {short(call_id)}" + (f" · {failed}" if failed else ""))
    tools = exchange.request.get("tools")
    if added is items and isinstance(tools, list):  # a conversation's first request: the rules it offers
        lines.append(say("{k} tools declared", "声明了 {k} 个工具", k=len(tools)) if len(tools) != 1
                     else say("1 tool declared", "声明了 1 个工具"))  # fmt: skip
    return tuple(lines)


def _is_tool_results(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def _fed_back(envelope: str, items: list[Any]) -> list[tuple[str, str, str | None]]:
    """Each result fed back: (call id, the item that carries it, a failure's code or None)."""
    found = []
    for item in items:
        if not isinstance(item, dict):
            continue
        if envelope == "responses" and item.get("type") == "function_call_output":
            found.append((item.get("call_id", ""), "function_call_output", _failure(item.get("output"))))
        elif envelope == "chat" and item.get("role") == "tool":
            found.append((item.get("tool_call_id", ""), "role: tool", _failure(item.get("content"))))
        elif envelope == "messages" and _is_tool_results(item):
            for block in item["content"]:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    failed = _failure(block.get("content")) or ("is_error" if block.get("is_error") else None)
                    found.append((block.get("tool_use_id", ""), "tool_result", failed))
    return found


def _failure(output: Any) -> str | None:
    """The error code a fed-back output carries (`{"ok": false, "error": {"code": …}}`), if any."""
    if isinstance(output, list):
        output = "".join(part.get("text", "") for part in output if isinstance(part, dict))
    try:
        value = json.loads(output) if isinstance(output, str) else output
    except ValueError:
        return None
    if isinstance(value, dict) and value.get("ok") is False:
        error = value.get("error") or {}
        return "✗ " + str(error.get("code") or "error") if isinstance(error, dict) else "✗ error"
    return None


def _answer_lines(exchange: ModelExchange, n: int) -> tuple[str, ...]:
    head = say("answer {n}", "回答 {n}", n=n)
    if exchange.events:
        head += say(" · {k} events", " · {k} 个事件", k=exchange.events)
    if exchange.status >= 400:
        error = (exchange.response or {}).get("error") if isinstance(exchange.response, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        return (f"{head} · HTTP {exchange.status}", clip(message or say("refused", "被拒绝"), 44))
    lines = [head]
    response = exchange.response or {}
    calls = {call_id: name for call_id, name, _ in model_calls(exchange)}
    kind = {"responses": "function_call", "chat": "tool_calls", "messages": "tool_use"}[exchange.envelope]
    if exchange.envelope == "responses":
        for item in response.get("output") or []:
            if item.get("type") == "function_call":
                lines.append(f"{kind} {item.get('name')} · {short(item.get('call_id'))}")
            elif item.get("type") == "message":
                lines.append(f"message: {_quote(item)}")
            else:
                lines.append(str(item.get("type")))
        status = response.get("status")
        if status not in (None, "completed"):
            reason = (response.get("incomplete_details") or {}).get("reason") or status
            lines.append(f"status {status} · {reason}")
    elif exchange.envelope == "chat":
        message = ((response.get("choices") or [{}])[0]).get("message") or {}
        for call_id, name in calls.items():
            lines.append(f"{kind} {name} · {short(call_id)}")
        if message.get("content"):
            lines.append(f"message: {json.dumps(clip(message['content'], 26), ensure_ascii=False)}")
    else:
        for block in response.get("content") or []:
            if block.get("type") == "tool_use":
                lines.append(f"{kind} {block.get('name')} · {short(block.get('id'))}")
            elif block.get("type") == "text":
                lines.append(f"text: {json.dumps(clip(block.get('text', ''), 26), ensure_ascii=False)}")
            else:
                lines.append(str(block.get("type")))
    return tuple(lines)


def _quote(message: dict[str, Any]) -> str:
    text = "".join(part.get("text", "") for part in message.get("content") or [] if isinstance(part, dict))
    return json.dumps(clip(text, 26), ensure_ascii=False)


def _server_arrow(message: ServerMessage, methods: dict[tuple[str, Any], str]) -> Arrow:
    lane = server_lane(message.server)
    body = message.json
    if message.outgoing:
        method = str(body.get("method", "?"))
        if "id" not in body:
            return Arrow(APP, lane, (method,), "notify")
        methods[(message.server, body["id"])] = method
        name = (body.get("params") or {}).get("name") if method == "tools/call" else None
        return Arrow(APP, lane, (f"{method}{' ' + str(name) if name else ''} · id {body['id']}",), "request")
    if "id" not in body:  # the server's own notification
        return Arrow(lane, APP, (str(body.get("method", "?")),), "notify")
    method = methods.get((message.server, body["id"]))
    if "error" in body:
        error = body["error"] if isinstance(body["error"], dict) else {}
        return Arrow(lane, APP, (f"error {error.get('code')} · id {body['id']}", clip(str(error.get("message", "")), 40)), "error")
    result = body.get("result") if isinstance(body.get("result"), dict) else {}
    line = f"{say('result', '结果')} · id {body['id']}"
    if method == "tools/call":
        line += f" · isError {json.dumps(bool(result.get('isError')))}"
        if result.get("isError"):
            text = "".join(b.get("text", "") for b in result.get("content") or [] if isinstance(b, dict))
            return Arrow(lane, APP, (line, clip(text, 40)), "error")
    elif method == "tools/list":
        count = len(result.get("tools") or [])
        line += " · " + (say("1 tool", "1 个工具") if count == 1 else say("{k} tools", "{k} 个工具", k=count))
    elif method == "initialize" and result.get("protocolVersion"):
        line += f" · {result['protocolVersion']}"
    return Arrow(lane, APP, (line,), "response")


def as_text(diagram: Diagram) -> str:
    """The diagram as lines of text (what a viewer without images shows): one line per arrow or note,
    `source → target  what crossed`, an error marked ✗, a note in [brackets] under its lane."""
    names = {lane: label for lane, label in diagram.lanes}
    short_names = {lane: lane.removeprefix("server:") if lane.startswith("server:") else
                   say("app", "应用") if lane == APP else label for lane, label in diagram.lanes}  # fmt: skip
    width = max(display_width(name) for name in short_names.values())
    lines = [f"{diagram.title}  ({' · '.join(names.values())})"]
    for arrow in diagram.arrows:
        source = short_names[arrow.source]
        if arrow.note:
            lines.append(f"  {source}{' ' * (width - display_width(source))}   [{arrow.text}]")
            continue
        target = short_names[arrow.target]
        mark = "✗→" if arrow.style == "error" else "-)" if arrow.style == "notify" else "→ "
        gap = " " * (width - display_width(source))
        lines.append(f"  {source}{gap} {mark} {target}{' ' * (width - display_width(target))}  {arrow.text}")
    return "\n".join(lines)
