"""The duty table, built from the runs: who carries each duty of the execution layer, and how.

    table = duty_table({"Agents SDK": FrameworkRuns(read=Shown(run, "09b §2"), …), …})
    print(table)                         # one block per duty, one line per framework
    table.markdown()                     # the same as a Markdown table (notebook 10 §5)
    record(columns)                      # both editions' cells, as `fixtures/duty_table.json` keeps them

Each cell is measured on a run's wire (`trace.calls`) or trace (`tracing.call_links`), never typed in:
the rule the model saw against the server's `inputSchema`; the `tools/call` arguments against the
`function_call`'s text; a null the model sent, passed on or dropped; the `call_id`s and JSON-RPC ids;
the feedback of a refused read and of a tool that raised; how many `tools/call` a refused read got;
the answer's rule for a structured answer; the call an approval let through; whether the trace links
each call to its JSON-RPC id. Each cell names the notebook section whose run shows it. A duty no run of
a column shows says so ("not run"); what a wire cannot show (what an approval is bound to, read in the
framework's source) comes as a note `(text, where)`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Iterator

from course_lib.frameworks.bench import Run
from course_lib.frameworks.trace import CallTrace, calls, failure_marked, output_text, task_of
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


@dataclass(frozen=True)
class Traced:
    """The spans of a traced run (`tracing.recording()`), the calls that ran in it, and its section."""

    spans: Sequence[Any]
    section: str
    call_ids: tuple[str, ...] = ()  # the calls a server ran in that run (from its wire)


@dataclass
class FrameworkRuns:
    """One column of the table: the runs that show each duty."""

    read: Shown  # the read and the refused read
    structured: Shown | None = None
    approval: Approval | None = None
    raised: Shown | None = None  # a tool that raised (its feedback, or none)
    raised_to_caller: str | None = None  # the exception the caller got instead, if any
    nulls: Shown | None = None  # a read whose rule made the model send a null
    traced: Traced | None = None
    # duty → (text, where): shown elsewhere; text is one edition's, or (en, zh) for a table kept in both
    notes: dict[str, tuple[str | tuple[str, str], str]] = field(default_factory=dict)


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
    """How the app numbers its JSON-RPC requests: a string id first if it sends one, then the integers
    from their lowest (how far they go depends on the run, and on how a client's handshake raced)."""
    ids = [m.json["id"] for m in run.mcp if m.direction == "app→server" and "id" in m.json]
    named = [json.dumps(i) for i in dict.fromkeys(i for i in ids if isinstance(i, str))]
    counted = [i for i in ids if isinstance(i, int)]
    parts = named + ([say("integers from {n}", "从 {n} 开始的整数", n=min(counted))] if counted else [])
    return say("call_id kept; JSON-RPC ids {ids}", "call_id 保留；JSON-RPC id 为 {ids}", ids=say(", then ", "，然后是").join(parts))


def _refused(trace: CallTrace | None) -> str:
    if trace is None or trace.feedback is None:
        return say("not run", "没有运行")
    output = trace.feedback.get("output")
    text = output_text(output)
    if trace.feedback.get("is_error") and not failure_marked(output):
        return say('its words, with is_error: true: "{t}"', "它的文字，带 is_error: true：\"{t}\"", t=_short(text, 24))
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


def _repeats(traces: list[CallTrace]) -> str:
    """How many `tools/call` the refused reads got, against how many refused calls the model made."""
    refused = [t for t in traces if t.refused]
    if not refused:
        return "·"
    sent = sum(1 for t in traces if t.mcp_request is not None and t.task in {r.task for r in refused}
               and t.arguments in [r.arguments for r in refused])  # fmt: skip
    if sent <= len(refused):
        return say("no: {n} tools/call for {k} refused read", "不：{k} 次被拒绝的读取，{n} 次 tools/call", n=sent, k=len(refused))
    return say("yes: {n} tools/call for {k} refused read", "是：{k} 次被拒绝的读取，{n} 次 tools/call", n=sent, k=len(refused))


def _nulls(shown: Shown | None) -> str:
    if shown is None:
        return say("not run", "没有运行")
    with_null = [t for t in shown.traces() if isinstance(t.arguments, dict) and None in t.arguments.values()]
    if not with_null:
        return say("no null sent", "没有发送 null")
    trace = with_null[0]
    keys = [k for k, v in trace.arguments.items() if v is None]
    if trace.mcp_request is None:
        return say("no tools/call", "没有 tools/call")
    if trace.dropped_nulls:
        return say("dropped before tools/call ({k})", "在 tools/call 之前丢掉了（{k}）", k=", ".join(trace.dropped_nulls))
    return say("passed on in tools/call ({k}: null)", "原样放进 tools/call（{k}: null）", k=", ".join(keys))


def _structured(shown: Shown | None) -> str:
    if shown is None:
        return say("not run", "没有运行")
    traces = shown.traces()
    formats = {json.dumps([t.answer_format.get("type"), t.answer_format.get("name")]) for t in traces if t.answer_format}
    tasks = {t.task for t in traces}
    for exchange in shown.run.model:  # a last request for the answer alone, after the calls (LangGraph's node)
        found = (exchange.request.get("text") or {}).get("format") if isinstance(exchange.request, dict) else None
        if isinstance(found, dict) and found.get("type") == "json_schema" and task_of(exchange.request) in tasks:
            formats.add(json.dumps([found.get("type"), found.get("name")]))
    tools = sorted({t.call.get("name") for t in traces if t.mcp_request is None and t.feedback is None
                    or t.mcp_request is None and t.call.get("name") in ("final_result", "StructuredOutput")})  # fmt: skip
    parts = [say('text.format "{name}"', 'text.format "{name}"', name=json.loads(f)[1]) for f in sorted(formats)]
    for tool in tools:
        choice = next((t.asked.request.get("tool_choice") for t in traces if t.call.get("name") == tool), None)
        parts.append(say("output tool {tool}", "输出工具 {tool}", tool=tool)
                     + (f" (tool_choice {json.dumps(choice)})" if choice not in (None, "auto") else ""))
    return " / ".join(parts) or say("not run", "没有运行")


def _approval(approval: Approval | None) -> str:
    if approval is None:
        return say("not run", "没有运行")
    ran = [t for t in calls(approval.run) if t.call_id == approval.pending_call_id and t.mcp_request is not None]
    after = say("then ran once", "之后执行了一次") if len(ran) == 1 else say("ran {n} times", "执行了 {n} 次", n=len(ran))
    return f"{approval.paused_by} → {approval.resumed_by}: {after}"


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
    if "FORBIDDEN" in text:
        return say('its message: "{t}"', "它的消息：\"{t}\"", t=_short(text, 30))
    return say('a fixed sentence: "{t}"', "一句固定的话：\"{t}\"", t=_short(text, 30))


def _link(traced: Traced | None) -> str:
    if traced is None:
        return say("not traced", "没有记录轨迹")
    from course_lib.tracing.tree import call_links

    found = {link.call_id: link for link in call_links(traced.spans) if link.mcp_span is not None}
    linked = [c for c in traced.call_ids if c in found]
    if not traced.call_ids:
        return say("no call ran", "没有调用执行")
    if len(linked) < len(traced.call_ids):
        return say("✗ {n} of {k} calls linked", "✗ {k} 个调用里连上了 {n} 个", n=len(linked), k=len(traced.call_ids))
    how = {say("the server's span, told the call id in _meta", "服务器的 span（_meta 里告诉了它 call id）")
           if link.tool_span is link.mcp_span else
           say("{kind} span under the tool span", "工具 span 下面的 {kind} span", kind=link.mcp_span.kind)
           for link in (found[c] for c in linked)}  # fmt: skip
    return say("✓ every call_id → its JSON-RPC id: {how}", "✓ 每个 call_id → 它的 JSON-RPC id：{how}", how="; ".join(sorted(how)))


def _hidden(runs: FrameworkRuns, read: CallTrace | None, refused: CallTrace | None) -> list[str]:
    hidden = []
    if runs.traced is None or not _link(runs.traced).startswith("✓"):
        hidden.append(say("the call_id ⇄ JSON-RPC id link", "call_id ⇄ JSON-RPC id 的对应关系"))
    if refused is not None and refused.feedback is not None and not refused.feedback_marked:
        hidden.append("isError")
    if runs.raised is not None and runs.raised_to_caller is None:
        raised = [t for t in runs.raised.traces() if t.feedback is not None]
        if raised and not failure_marked(raised[0].feedback.get("output")) and "FORBIDDEN" not in output_text(raised[0].feedback.get("output")):
            hidden.append(say("the exception's message", "异常的消息"))
    if read is not None and _rule(read, runs.read.run).startswith(say("rewritten", "被改写")):
        hidden.append(say("the server's bounds", "服务器的取值范围"))
    return hidden


DUTIES = [
    ("loop", "runs the loop", "运行循环"),
    ("rule", "the rule the model sees", "模型看到的规则"),
    ("parse", "parses the arguments text", "解析参数文本"),
    ("null", "a null the model sends", "模型发送的 null"),
    ("ids", "pairs the ids", "配对 id"),
    ("result", "a result goes back as", "结果发回的形式"),
    ("refused", "a refused read reaches the model as", "被拒绝的读取到模型那里是"),
    ("repeats", "repeats a refused call", "重复被拒绝的调用"),
    ("raised", "a tool that raises", "工具抛出异常"),
    ("structured", "a structured answer's rule", "结构化回答的规则"),
    ("approval", "approval", "批准"),
    ("trace", "the link in its trace", "轨迹里的对应关系"),
    ("hidden", "hides", "隐藏了"),
]


def column(runs: FrameworkRuns) -> dict[str, tuple[str, str]]:
    """Each duty's cell for one framework: (what the run shows, the section that shows it)."""
    traces = runs.read.traces()
    read = next((t for t in traces if not t.refused and t.mcp_request is not None), None)
    refused = next((t for t in traces if t.refused), None)
    where = runs.read.section
    ran = [t for t in traces if t.feedback is not None]
    loop = bool(ran) and all(t.feedback.get("call_id") == t.call_id and t.answer is not None for t in ran)
    parsed = all(t.mcp_request is None or t.dropped_nulls
                 or (t.mcp_request.get("params") or {}).get("arguments") == t.arguments for t in traces)  # fmt: skip
    hidden = _hidden(runs, read, refused)
    cells = {
        "loop": (say("✓ result back, asks again", "✓ 发回结果，再次请求") if loop else "✗", where),
        "rule": (_rule(read, runs.read.run) if read else "·", where),
        "parse": (say("✓ text → object", "✓ 文本 → 对象") if parsed and traces else "✗", where),
        "null": (_nulls(runs.nulls), runs.nulls.section if runs.nulls else ""),
        "ids": (_ids(runs.read.run), where),
        "result": (_text_sent(read) if read else "·", where),
        "refused": (_refused(refused), where),
        "repeats": (_repeats(traces), where),
        "raised": (_raised(runs), runs.raised.section if runs.raised else ""),
        "structured": (_structured(runs.structured), runs.structured.section if runs.structured else ""),
        "approval": (_approval(runs.approval), runs.approval.section if runs.approval else ""),
        "trace": (_link(runs.traced), runs.traced.section if runs.traced else ""),
        "hidden": (", ".join(hidden) or say("nothing the course checks", "课程检查的东西都没有隐藏"), where),
    }
    cells.update({duty: (say(*text) if isinstance(text, tuple) else text, where)
                  for duty, (text, where) in runs.notes.items() if duty in cells})  # fmt: skip
    return cells


COURSE = "this course"  # the column of the course's own host; shown in the edition's words


def _shown(name: str) -> str:
    return say("this course", "本课程") if name == COURSE else name


@dataclass(frozen=True)
class DutyTable:
    """The cells, by framework then duty: (text, where)."""

    cells: dict[str, dict[str, tuple[str, str]]]

    def __str__(self) -> str:
        """One block per duty and one line per framework in it, `what (where)`."""
        first = max(display_width(_shown(name)) for name in self.cells) + 4
        lines = []
        for key, en, zh in DUTIES:
            lines.append(say(en, zh))
            for name, column_cells in self.cells.items():
                text, section = column_cells[key]
                lines.append("  " + pad(_shown(name), first - 2) + (f"{text} ({section})" if section else text))
        return "\n".join(lines)

    def markdown(self) -> str:
        """A Markdown table: a row per duty, a column per framework, `text (where)` in each cell."""
        names = list(self.cells)
        rows = ["| " + say("duty", "职责") + " | " + " | ".join(_shown(n) for n in names) + " |",
                "|---" * (len(names) + 1) + "|"]
        for key, en, zh in DUTIES:
            texts = [(f"{t} ({w})" if w else t).replace("|", "\\|") for t, w in (self.cells[n][key] for n in names)]
            rows.append(f"| {say(en, zh)} | " + " | ".join(texts) + " |")
        return "\n".join(rows)

    def _repr_markdown_(self) -> str:
        return self.markdown()

    def __repr__(self) -> str:
        return str(self)


def duty_table(columns: dict[str, FrameworkRuns]) -> DutyTable:
    """The table of `columns` (one `FrameworkRuns` per framework), measured on their runs."""
    return DutyTable({name: column(runs) for name, runs in columns.items()})


@contextmanager
def _edition(code: str) -> Iterator[None]:
    before = os.environ.get("COURSE_LANG")
    os.environ["COURSE_LANG"] = code
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("COURSE_LANG", None)
        else:
            os.environ["COURSE_LANG"] = before


def record(columns: dict[str, FrameworkRuns]) -> dict[str, Any]:
    """Both editions' cells, `{"en": {framework: {duty: [text, where]}}, "zh-CN": …}`: what
    `fixtures/duty_table.json` keeps and notebook 10 §5 shows."""
    found = {}
    for code in ("en", "zh-CN"):
        with _edition(code):
            found[code] = {name: {duty: list(cell) for duty, cell in column(runs).items()} for name, runs in columns.items()}
    return found


def from_record(recorded: dict[str, Any], edition: str | None = None) -> DutyTable:
    """The table a record holds, in `edition` (default: the current one)."""
    from course_lib.lang import language

    cells = recorded[edition or language()]
    return DutyTable({name: {duty: tuple(cell) for duty, cell in duties.items()} for name, duties in cells.items()})


def recorded_table() -> DutyTable:
    """The six-column table as `fixtures/duty_table.json` records it, in the edition's language
    (notebook 10 §5; re-record it with `python -m course_lib.frameworks.runs`)."""
    from course_lib.paths import fixtures_dir

    return from_record(json.loads((fixtures_dir() / "duty_table.json").read_text(encoding="utf-8")))
