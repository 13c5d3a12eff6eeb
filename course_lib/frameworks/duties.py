"""The duty table, built from the runs: who carries each duty of the execution layer, and how.

    table = duty_table({"Agents SDK": FrameworkRuns(read=Shown(run, "§2"), …), …})
    print(table)

Each cell is measured on a run's wire (`trace.calls`), never typed in: the rule the model saw
against the server's `inputSchema`; the `tools/call` arguments against the `function_call`'s
text; the `call_id`s and JSON-RPC ids; the feedback of a refused read and of a tool that raised;
the answer's rule for a structured answer; the call an approval let through. Each cell names the
section of notebook 09b whose run shows it (a column may also be the course's own host, whose
runs cite the notebook that built each duty). A duty no run of a column shows says so: "not run".
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from course_lib.frameworks.bench import Run
from course_lib.frameworks.trace import CallTrace, calls, failure_marked, output_text
from course_lib.lang import display_width, pad, say


@dataclass(frozen=True)
class Shown:
    """A run, the section that shows it, and which of its calls (None: all)."""

    run: Run
    section: str
    call_ids: tuple[str, ...] | None = None

    def traces(self) -> list[CallTrace]:
        return [t for t in calls(self.run) if self.call_ids is None or t.call_id in self.call_ids]


@dataclass(frozen=True)
class Approval:
    """What one framework's approval did: what stopped the run, the call it held, how it resumed."""

    section: str
    paused_by: str  # e.g. "result.interruptions"
    pending_call_id: str
    resumed_by: str  # e.g. "state.approve(item)"
    run: Run  # the run in which the approved call then executed


@dataclass
class FrameworkRuns:
    """One column of the table: the runs that show each duty."""

    read: Shown  # the read and the refused read
    structured: Shown | None = None
    approval: Approval | None = None
    raised: Shown | None = None  # a tool that raised (its feedback, or none)
    raised_to_caller: str | None = None  # the exception the caller got instead, if any
    notes: dict[str, tuple[str, str]] = field(default_factory=dict)  # duty → (text, where): shown elsewhere


def _server_schema(run: Run, tool: str) -> dict[str, Any] | None:
    """The `inputSchema` the server published for `tool` (its tools/list response in the run)."""
    for message in run.mcp:
        for declared in ((message.json.get("result") or {}).get("tools") or []) if message.direction == "server→app" else []:
            if declared.get("name") == tool:
                return declared.get("inputSchema")
    return None


def _rule(trace: CallTrace, run: Run) -> str:
    if trace.mcp_request is None or trace.declaration is None:
        return "·"
    published = _server_schema(run, (trace.mcp_request.get("params") or {}).get("name", ""))
    sent = trace.declaration.get("parameters")
    if published is None:
        return say("(no tools/list in the run)", "（这次运行里没有 tools/list）")
    if sent == published:
        return say("the server's inputSchema, as is", "服务器的 inputSchema，原样")
    changes = []
    if set(sent.get("required") or []) != set(published.get("required") or []):
        changes.append(say("optional → required|null", "可选 → 必填|null"))
    if "minimum" in json.dumps(published) and '"minimum"' not in json.dumps(sent):
        changes.append(say("minimum → words in a description", "minimum → 描述里的文字"))
    return say("rewritten: {what}", "被改写：{what}", what=", ".join(changes) or say("other keys", "别的键"))


def _ids(run: Run) -> str:
    ids = [m.json["id"] for m in run.mcp if m.direction == "app→server" and "id" in m.json]
    shown = ", ".join(json.dumps(i) for i in ids[:4]) + (", …" if len(ids) > 4 else "")
    return say("call_id kept; JSON-RPC ids {ids}", "call_id 保留；JSON-RPC id 为 {ids}", ids=shown)


def _refused(trace: CallTrace | None) -> str:
    if trace is None or trace.feedback is None:
        return say("not run", "没有运行")
    output = trace.feedback.get("output")
    text = output_text(output)
    if not failure_marked(output):
        return say('words only: "{t}" (isError dropped)', "只剩文字：\"{t}\"（isError 丢了）", t=_short(text, 28))
    value = json.loads(text)
    if value.get("ok") is False:
        return say('{"ok": false, "error": {code, …}}', '{"ok": false, "error": {code, …}}')
    return say('{"error": …} (marked)', '{"error": …}（有标记）')


def _short(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _text_sent(trace: CallTrace) -> str:
    if trace.feedback is None or trace.result is None:
        return "·"
    sent = output_text(trace.feedback.get("output"))
    texts = "".join(b.get("text", "") for b in trace.result.get("content") or [] if b.get("type") == "text")
    if sent == texts:
        return say("the content's text, as is", "content 的文本，原样")
    if sent == texts.strip():
        return say("the content's text, trimmed", "content 的文本，去掉了首尾空白")
    try:
        if json.loads(sent) == trace.result.get("structuredContent"):
            return say("structuredContent, as JSON", "structuredContent，作为 JSON")
    except ValueError:
        pass
    return say("other text", "别的文本")


def _structured(shown: Shown | None) -> str:
    if shown is None:
        return say("not run", "没有运行")
    traces = shown.traces()
    formats = {json.dumps([t.answer_format.get("type"), t.answer_format.get("name")]) for t in traces if t.answer_format}
    tools = sorted({t.call.get("name") for t in traces if t.mcp_request is None})
    parts = [say('text.format "{name}"', 'text.format "{name}"', name=json.loads(f)[1]) for f in sorted(formats)]
    for tool in tools:
        choice = next((t.asked.request.get("tool_choice") for t in traces if t.call.get("name") == tool), None)
        parts.append(say("output tool {tool} (tool_choice {c})", "输出工具 {tool}（tool_choice {c}）",
                         tool=tool, c=json.dumps(choice)))
    return " / ".join(parts) or say("not run", "没有运行")


def _approval(approval: Approval | None) -> str:
    if approval is None:
        return say("not run", "没有运行")
    ran = [t for t in calls(approval.run) if t.call_id == approval.pending_call_id and t.mcp_request is not None]
    after = say("then ran once", "之后执行了一次") if len(ran) == 1 else say("ran {n} times", "执行了 {n} 次", n=len(ran))
    return f"{approval.paused_by} → {approval.resumed_by}: call_id {approval.pending_call_id}, {after}"


def _raised(runs: FrameworkRuns) -> str:
    if runs.raised_to_caller is not None:
        return say("reaches your code ({e}): the run stops", "抛到你的代码里（{e}）：运行停止",
                   e=runs.raised_to_caller.split(":")[0])
    if runs.raised is None:
        return say("not run", "没有运行")
    traces = [t for t in runs.raised.traces() if t.feedback is not None]
    if not traces:
        return say("no feedback", "没有反馈")
    text = output_text(traces[0].feedback.get("output"))
    if failure_marked(traces[0].feedback.get("output")):
        return say('its message, as {"error": …}', '它的消息，作为 {"error": …}')
    return say('a fixed sentence: "{t}"', "一句固定的话：\"{t}\"", t=_short(text, 30))


def _hidden(runs: FrameworkRuns, read: CallTrace | None, refused: CallTrace | None) -> str:
    hidden = [say("the call_id ⇄ JSON-RPC id link", "call_id ⇄ JSON-RPC id 的对应关系")]
    if refused is not None and refused.feedback is not None and not failure_marked(refused.feedback.get("output")):
        hidden.append("isError")
    if runs.raised is not None and runs.raised_to_caller is None:
        if not any(failure_marked(t.feedback.get("output")) for t in runs.raised.traces() if t.feedback is not None):
            hidden.append(say("the exception's message", "异常的消息"))
    if read is not None and _rule(read, runs.read.run).startswith(say("rewritten", "被改写")):
        hidden.append(say("the server's bounds", "服务器的取值范围"))
    return ", ".join(hidden)


DUTIES = [
    ("loop", "runs the loop", "运行循环"),
    ("rule", "the rule the model sees", "模型看到的规则"),
    ("parse", "parses the arguments text", "解析参数文本"),
    ("ids", "pairs the ids", "配对 id"),
    ("result", "a result goes back as", "结果发回的形式"),
    ("refused", "a refused read reaches the model as", "被拒绝的读取到模型那里是"),
    ("retry", "repeats a refused call", "重复被拒绝的调用"),
    ("raised", "a tool that raises", "工具抛出异常"),
    ("structured", "a structured answer's rule", "结构化回答的规则"),
    ("approval", "approval", "批准"),
    ("hidden", "hides", "隐藏了"),
]


def column(runs: FrameworkRuns) -> dict[str, tuple[str, str]]:
    """Each duty's cell for one framework: (what the run shows, the section that shows it)."""
    traces = runs.read.traces()
    read = next((t for t in traces if not t.refused and t.mcp_request is not None), None)
    refused = next((t for t in traces if t.refused), None)
    where = runs.read.section
    loop = all(t.feedback is not None and t.feedback.get("call_id") == t.call_id and t.answer is not None for t in traces)
    parsed = all(t.mcp_request is None or (t.mcp_request.get("params") or {}).get("arguments") == t.arguments for t in traces)
    repeats = sum(1 for t in traces if refused is not None and t.task == refused.task and t.mcp_request)
    cells = {
        "loop": (say("✓ result back, asks again", "✓ 发回结果，再次请求") if loop and traces else "✗", where),
        "rule": (_rule(read, runs.read.run) if read else "·", where),
        "parse": (say("✓ text → object", "✓ 文本 → 对象") if parsed and traces else "✗", where),
        "ids": (_ids(runs.read.run), where),
        "result": (_text_sent(read) if read else "·", where),
        "refused": (_refused(refused), where),
        "retry": (say("no: {n} tools/call", "不：{n} 次 tools/call", n=repeats) if refused else "·", where),
        "raised": (_raised(runs), runs.raised.section if runs.raised else ""),
        "structured": (_structured(runs.structured), runs.structured.section if runs.structured else ""),
        "approval": (_approval(runs.approval), runs.approval.section if runs.approval else ""),
        "hidden": (_hidden(runs, read, refused), where + (f", {runs.raised.section}" if runs.raised and
                   say("the exception's message", "异常的消息") in _hidden(runs, read, refused) else "")),
    }
    cells.update({duty: note for duty, note in runs.notes.items() if duty in cells})
    return cells


def duty_table(columns: dict[str, FrameworkRuns]) -> str:
    """The table as text, one block per duty and one line per framework in it, `what (§N)`: the
    frameworks side by side for each duty, in at most about 100 columns."""
    built = {name: column(runs) for name, runs in columns.items()}
    first = max(display_width(name) for name in columns) + 4
    lines = []
    for key, en, zh in DUTIES:
        lines.append(say(en, zh))
        for name in columns:
            text, section = built[name][key]
            lines.append("  " + pad(name, first - 2) + (f"{text} ({section})" if section else text))
    return "\n".join(lines)
