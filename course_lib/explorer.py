"""The "which objects change" explorer: run one real read, change one condition, run it again.

Each run goes through the whole course pipeline — the model client (offline model or the real
endpoint), the `arguments` text, parsing, the MCP `tools/call` over the recorded connection, the
feedback item and the final answer — and shows eight objects grouped as rule / value / result.
Every object is marked "changed" or "unchanged" against one pinned run, the **baseline**: the
first run, until another is pinned. Comparing with a fixed run, not with whichever ran last, keeps
each experiment to the one condition it changed.

    explorer = Explorer(course)      # the course's model client; its own MCP host, so it counts reads
    explorer.run(head=20)            # the baseline: every panel says "baseline"
    explorer.run(head=5).changed     # {'arguments', 'parsed', 'mcp_arguments', 'mcp_result', ...}
    explorer.run(tail=3)             # compared with the head=20 run again, not with head=5
    explorer.pin(snapshot)           # compare later runs with this one; explorer.reset(): start over
    ExplorerWidget(explorer)         # the same as an ipywidgets 8 interface (Run, Pin, Reset)

Any request is run as it is and shown as it happened, on any model: an answer in text (no call:
the value panels say so, the results "not executed", the rules still the declarations the request
sent), one call, or several (head and tail together; each panel lists them in order). `Snapshot.calls`
holds each call with what became of it, `Snapshot.exchanges` the run's own model requests.

What the learner reads (labels, statuses, the composed request, the panels' notes) goes through
`course_lib.lang.say`: English, or 简体中文 in the zh-CN edition. The `status` values, the panel
names and the `GROUPS` keys stay English in both: they are what code compares.
"""

from __future__ import annotations

import difflib
import html
import json
import re
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from course_lib.arguments import ArgumentsError, parse_arguments_text, validate_read_args
from course_lib.backend import http_transport, make_client, model_name
from course_lib.fs_server import Workspace, build_server
from course_lib.host import McpHost
from course_lib.items import calls as calls_in
from course_lib.items import of_type
from course_lib.lang import pad, say
from course_lib.loop import LoopResult, run_loop
from course_lib.paths import workspace_dir
from course_lib.wire import HttpCapture, HttpExchange

DEFAULT_PATH = "/workspace/notes.txt"
OUTSIDE_PATH = "/etc/passwd"  # what "path outside the workspace" asks for: a valid string, not a permission
GROUPS = {
    "rule": ("input_schema", "parameters"),
    "value": ("arguments", "parsed", "mcp_arguments"),
    "result": ("mcp_result", "function_call_output", "answer"),
}
PANELS = tuple(name for names in GROUPS.values() for name in names)
"""The eight objects in pipeline order; these are the panel names everywhere."""
GROUP_OF = {name: group for group, names in GROUPS.items() for name in names}
LABELS = {
    "input_schema": "MCP tools/list → inputSchema", "parameters": "Responses tools[].parameters",
    "arguments": "function_call.arguments (JSON text)", "parsed": "the parsed object",
    "mcp_arguments": "MCP tools/call → params.arguments", "mcp_result": "MCP tools/call → result",
    "function_call_output": "function_call_output (the feedback)", "answer": "the final answer",
}
LABELS_ZH = {
    "input_schema": "MCP tools/list → inputSchema", "parameters": "Responses tools[].parameters",
    "arguments": "function_call.arguments（JSON 文本）", "parsed": "解析后的对象",
    "mcp_arguments": "MCP tools/call → params.arguments", "mcp_result": "MCP tools/call → result",
    "function_call_output": "function_call_output（反馈）", "answer": "最终回答",
}
GROUP_TITLES = {"rule": "RULE · the declarations: fixed for the task", "value": "VALUE · this call's input",
                "result": "RESULT · only after real execution"}
GROUP_TITLES_ZH = {"rule": "规则 · 声明：任务变了它不变", "value": "值 · 这次调用的输入",
                   "result": "结果 · 真实执行之后才有"}
GROUP_NAMES_ZH = {"rule": "规则", "value": "值", "result": "结果"}
STATUS_ZH = {"baseline": "基线", "changed": "已变化", "unchanged": "未变化", "not run yet": "尚未运行",
             "running": "运行中", "failed": "出错"}
"""How each `Panel.status` (and the widget's "not run yet", "running" and "failed") reads in the zh-CN edition."""
NOT_EXECUTED = "not executed"
NOT_EXECUTED_ZH = "未执行"
ARCHIVE_NOTES = "".join(f"Archived note {i}: it lives on the archive server only.\n" for i in range(1, 9))
_TOKENS = re.compile(r"\s*(?:\w+|[^\w\s])|\s+")  # a word or a sign, with the spaces before it
_COLORS = {"rule": "#4b5563", "value": "#b45309", "result": "#047857"}
_BADGES = {"changed": "#fde68a", "unchanged": "#e5e7eb", "baseline": "#dbeafe", "not run yet": "#fff",
           "running": "#f3f4f6", "failed": "#fecaca"}
_DEL = '<del style="background:#fecaca;color:#7f1d1d">{}</del>'
_INS = '<ins style="background:#bbf7d0;text-decoration:none">{}</ins>'
_ARROW = '<span class="explorer-arrow" style="color:#92400e;font-weight:bold"> → </span>'


def not_executed() -> str:
    """NOT_EXECUTED in the edition's language: what a result panel holds when nothing ran."""
    return say(NOT_EXECUTED, NOT_EXECUTED_ZH)


def label(name: str) -> str:
    """A panel's title, e.g. "the final answer" (最终回答 in the zh-CN edition)."""
    return say(LABELS[name], LABELS_ZH[name])


def group_name(group: str) -> str:
    """"rule", "value" or "result" as the learner reads it (规则、值、结果 in the zh-CN edition)."""
    return say(group, GROUP_NAMES_ZH[group])


def status_text(status: str) -> str:
    """A `Panel.status` (or "not run yet") as the learner reads it."""
    return say(status, STATUS_ZH[status])


def compose_request(path: str = DEFAULT_PATH, head: int | None = None, tail: int | None = None,
                    server: str | None = None) -> str:
    """The user's request for one read, e.g. "Show the first 5 lines of /workspace/notes.txt".

    In the zh-CN edition it is Chinese ("显示 /workspace/notes.txt 的前 5 行"), which the offline
    model reads the same way. Every combination is a request a learner may send: head and tail
    together ask for both ("the first 20 lines and the last 3 lines of …": the tool refuses both
    in one call, so a model must split them or be refused), and an empty path names no file
    ("Show the first 20 lines"), which a model can only answer in text or guess at.
    """
    path = path.strip()
    zh = say("en", "zh") == "zh"
    if zh:
        parts = [f"前 {head} 行" if head else "", f"最后 {tail} 行" if tail else ""]
        lines = "和".join(p for p in parts if p) or "全部内容"
        text = f"显示 {path} 的{lines}" if path else f"显示{lines}"
        return text + (f"，使用 {server} 服务器" if server else "")
    parts = [f"the {word} {n} line{'s' * (n != 1)}" for word, n in (("first", head), ("last", tail)) if n]
    lines = " and ".join(parts)
    if path:
        text = f"Show {lines} of {path}" if lines else f"Show all of {path}"
    else:
        text = f"Show {lines}" if lines else "Show the whole file"
    return text + (f" using the {server} server" if server else "")


def diff_segments(before: str, after: str) -> list[tuple[str, str]]:
    """A two-level difflib diff as ("=", same), ("-", removed) and ("+", inserted) segments.

    Lines are compared first; a line replaced by a similar one is compared token by token, so
    `"head":20` → `"head":5` gives just `20` → `5`.
    """
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    out: list[tuple[str, str]] = []

    def both(old: str, new: str) -> None:
        out.extend((sign, text) for sign, text in (("-", old), ("+", new)) if text)

    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            out.append(("=", "".join(a[i1:i2])))
        elif op == "replace" and i2 - i1 == j2 - j1:
            for old, new in zip(a[i1:i2], b[j1:j2]):
                x, y = _TOKENS.findall(old), _TOKENS.findall(new)
                tokens = difflib.SequenceMatcher(None, x, y, autojunk=False)
                if tokens.ratio() < 0.6 and tokens.find_longest_match().size * 2 < min(len(x), len(y)):
                    both(old, new)  # unrelated lines: one removal, one insertion
                    continue
                for o, k1, k2, m1, m2 in tokens.get_opcodes():
                    out.append(("=", "".join(y[m1:m2]))) if o == "equal" else both("".join(x[k1:k2]), "".join(y[m1:m2]))
        else:
            both("".join(a[i1:i2]), "".join(b[j1:j2]))
    return out


def _short(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _fragment(text: str) -> str:
    shown = text.strip() or text
    return repr(shown) if len(shown) <= 40 else say("{n} chars", "{n} 个字符", n=len(text))  # as the cut <del> shows


def _json(obj: Any) -> str:
    return json.dumps(obj, indent=2, ensure_ascii=False)


def _listed(blocks: list[tuple[str, str]]) -> str:
    """One block's text as it is; several, each under a line naming it ("call 2 of 3: fs__read_text_file")."""
    if len(blocks) == 1:
        return blocks[0][1]
    return "\n".join(say("call {i} of {n}: {title}", "第 {i} 个调用（共 {n} 个）：{title}", i=i, n=len(blocks), title=title)
                     + "\n" + text for i, (title, text) in enumerate(blocks, 1))


def _parsed(arguments: str) -> str:
    """The parsed object and whether it passes the rule, or why the text does not parse."""
    try:
        parsed = parse_arguments_text(arguments)
    except ArgumentsError as error:
        return say("not parsed", "未能解析") + f"\n✗ {error.message}"
    text = f"{type(parsed).__name__} {parsed!r}"
    try:
        validate_read_args(parsed)
    except ArgumentsError as error:
        return text + f"\n✗ {error.message}"
    return text + say("\n✓ valid against the rule (inputSchema)", "\n✓ 符合规则（inputSchema）")


@dataclass(frozen=True)
class Panel:
    """One object of one run: its text now, and its text in the baseline run (None: this is the baseline)."""

    name: str
    text: str
    before: str | None = None

    @property
    def status(self) -> str:
        """ "baseline", "changed" or "unchanged" (relative to the baseline run)."""
        return "baseline" if self.before is None else "unchanged" if self.before == self.text else "changed"

    def diff_html(self) -> str:
        """The text now as HTML; when changed, each change reads "old → new" (<del>, an arrow, <ins>).

        A removal with no replacement is a <del> (long ones cut to their first 40 characters and a
        count), an insertion an <ins>; the arrow is a real "→" with spaces, so the page's text
        says `"head":20 → 5` rather than gluing the two numbers together.
        """
        if self.status != "changed":
            return html.escape(self.text)
        out = []
        for sign, old, new in _changes(diff_segments(self.before or "", self.text)):
            if sign == "=":
                out.append(html.escape(new))
            elif sign == "~":
                out.append(_DEL.format(html.escape(_cut(old))) + _ARROW + _INS.format(html.escape(new)))
            else:
                out.append(_DEL.format(html.escape(_cut(old))) if sign == "-" else _INS.format(html.escape(new)))
        return "".join(out)

    def change(self, limit: int = 3) -> str:
        """What changed, on one line, each distinct change once, replacements first.

        E.g. "'20' → '5', removed 1177 chars (in 2 places)"; empty when not changed.
        """
        if self.status != "changed":
            return ""
        counts: dict[str, int] = {}
        changes = [c for c in _changes(diff_segments(self.before or "", self.text)) if c[0] != "="]
        for sign, old, new in sorted(changes, key=lambda c: c[0] != "~"):  # stable: diff order within each kind
            part = (f"{_fragment(old)} → {_fragment(new)}" if sign == "~"
                    else say("removed {x}", "删除了 {x}", x=_fragment(old)) if sign == "-"
                    else say("added {x}", "新增了 {x}", x=_fragment(new)))  # fmt: skip
            counts[part] = counts.get(part, 0) + 1
        parts = [part + (say(" (in {n} places)", "（共 {n} 处）", n=n) if n > 1 else "") for part, n in counts.items()]
        return say(", ", "，").join(parts[:limit]) + (" …" if len(parts) > limit else "")


def _cut(text: str) -> str:
    return text if len(text) <= 60 else text[:40] + say("… (−{n} chars)", "…（−{n} 个字符）", n=len(text))


def _changes(segments: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """Diff segments as (sign, old, new): "=" same, "~" a replacement, "-" a removal, "+" an insertion.

    A removal followed by an insertion is one replacement; whitespace both sides share in front
    (the tokens carry the space before a word) goes to an "=" segment, so "first 20" → "first 5"
    reads `first 20 → 5`, not `first 20 →  5`.
    """
    out: list[tuple[str, str, str]] = []
    todo = list(segments)
    while todo:
        sign, text = todo.pop(0)
        if sign == "-" and todo and todo[0][0] == "+":
            new = todo.pop(0)[1]
            lead = len(text) - len(text.lstrip())
            if lead and new[:lead] == text[:lead]:
                out.append(("=", "", text[:lead]))
                text, new = text[lead:], new[lead:]
            out.append(("~", text, new))
        else:
            out.append((sign, text if sign == "-" else "", "" if sign == "-" else text))
    return out


@dataclass(frozen=True)
class MadeCall:
    """One call the model made in a run, and how far it got (None: that step never happened).

    `mcp_arguments` and `result` are the MCP `tools/call` request's `params.arguments` and its
    answer as recorded (the `result`, or the JSON-RPC `error`); `feedback` the `function_call_output`
    item the app built; `error_code` None on success.
    """

    name: str
    call_id: str
    arguments: str
    mcp_id: int | str | None = None
    server: str | None = None
    mcp_arguments: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    feedback: dict[str, Any] | None = None
    error_code: str | None = None

    @property
    def output(self) -> str | None:
        """The feedback's `output` text (what the model reads back), or None if none was built."""
        return self.feedback["output"] if self.feedback else None


@dataclass
class Snapshot:
    """One run: the request, the eight panels, the two ids, the real file reads, the model requests.

    `calls` holds every call the model made in the run, in order (none: it answered in text);
    `exchanges` the run's own model requests and responses as they crossed the wire. A cell reads
    those rather than the course's whole wire, so what it shows is this run's, whatever ran since.
    Displayed in a notebook it is a table (text/plain and text/html), readable without widgets.
    """

    request: str
    panels: dict[str, Panel]
    ids: dict[str, Panel]  # "call_id" (model ⇄ app) and "mcp_id" (app ⇄ server)
    route: str
    reads: int
    reads_delta: int
    model_requests: int
    run: int = 1
    compared_with: int | None = None  # the baseline's run number; None: this run is the baseline
    calls: list[MadeCall] = field(default_factory=list)
    exchanges: list[HttpExchange] = field(default_factory=list)

    @property
    def changed(self) -> set[str]:
        """Names of the panels that changed since the baseline run."""
        return {name for name, panel in self.panels.items() if panel.status == "changed"}

    @property
    def unchanged(self) -> set[str]:
        """Names of the panels that did not change since the baseline run."""
        return {name for name, panel in self.panels.items() if panel.status == "unchanged"}

    def as_baseline(self) -> Snapshot:
        """This run as a baseline: the same texts, nothing to compare with (every status "baseline")."""
        return replace(self, panels={n: Panel(n, p.text) for n, p in self.panels.items()},
                       ids={n: Panel(n, p.text) for n, p in self.ids.items()}, compared_with=None)  # fmt: skip

    def comparison(self) -> str:
        """ "the baseline", or "compared with run N" (in the edition's language)."""
        if self.compared_with is None:
            return say("the baseline", "基线")
        return say("compared with run {n}", "与第 {n} 次运行比较", n=self.compared_with)

    def header(self) -> str:
        """Two lines: the request; then the comparison, the route, both ids, the real reads and the
        model requests."""
        if say("en", "zh") == "zh":
            ids = " · ".join(f"{name} {p.text}（{status_text(p.status)}）" for name, p in self.ids.items())
            return (f"第 {self.run} 次运行：{self.request!r}\n{self.comparison()} · {self.route} · {ids} · 真实文件读取 "
                    f"{self.reads}（{self.reads_delta:+d}） · 模型请求 {self.model_requests}")
        ids = " · ".join(f"{name} {p.text} ({p.status})" for name, p in self.ids.items())
        return (f"run {self.run}: {self.request!r}\n{self.comparison()} · {self.route} · {ids} · real file reads "
                f"{self.reads} ({self.reads_delta:+d}) · model requests {self.model_requests}")

    def table(self) -> str:
        """The run as a plain-text table: per panel, what changed or (if nothing did) its value."""
        if say("en", "zh") == "zh":
            rows = [self.header(), f"{pad('组', 7)} {pad('对象', 21)} {pad('状态', 10)} 变化 / 当前值"]
            rows += [f"{pad(group_name(GROUP_OF[n]), 7)} {n:<21} {pad(status_text(p.status), 10)} "
                     f"{p.change() or _short(p.text)}" for n, p in self.panels.items()]  # fmt: skip
            return "\n".join(rows)
        rows = [self.header(), f"{'group':<7} {'object':<21} {'status':<10} what changed / value now"]
        rows += [f"{GROUP_OF[n]:<7} {n:<21} {p.status:<10} {p.change() or _short(p.text)}" for n, p in self.panels.items()]
        return "\n".join(rows)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.table())

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{group_name(GROUP_OF[n])}</td><td><code>{n}</code></td><td><b>{status_text(p.status)}</b></td>"
            "<td style='text-align:"
            "left'><pre style='margin:0;max-height:9em;overflow:auto;white-space:pre-wrap'>"
            f"{p.diff_html() if p.status == 'changed' else html.escape(_short(p.text, 90))}</pre></td></tr>"
            for n, p in self.panels.items()
        )  # fmt: skip
        head = say("<tr><th>group</th><th>object</th><th>status</th><th style='text-align:left'>diff / value now</th></tr>",
                   "<tr><th>组</th><th>对象</th><th>状态</th><th style='text-align:left'>差异 / 当前值</th></tr>")
        return f"<p>{html.escape(self.header()).replace(chr(10), '<br>')}</p><table>{head}{rows}</table>"


class Explorer:
    """Runs reads through the real pipeline and compares each run with the baseline.

    The baseline is the first run (or the first after `reset()`), until `pin()` makes another run
    the baseline: every later run is compared with it, so a change shows what one condition did,
    not what is left over from the runs in between.

    It builds its own hosts (`McpHost` + `build_server`), so it holds the `Workspace` objects and
    counts real file reads. With `two_servers`, a second files server over a temporary folder is
    connected under the prefix `arch` beside `fs`: both declare `read_text_file`. `course` (from
    `start_course()`) lends its model client and wire capture; without it the explorer makes its
    own on the configured backend. Use it as a context manager, or call `close()`.
    """

    def __init__(self, course: Any = None, workspace: Path | None = None) -> None:
        self.wire: HttpCapture = course.wire if course else HttpCapture(http_transport())
        self.client = course.client if course else make_client(transport=self.wire)
        self.workspace = Workspace(workspace or workspace_dir())
        self.archive: Workspace | None = None
        self.last: Snapshot | None = None
        self.baseline: Snapshot | None = None  # what each run is compared with
        self.runs = 0
        self._hosts: dict[bool, McpHost] = {}
        self._archive_dir: tempfile.TemporaryDirectory[str] | None = None  # removed by close(), or at exit

    def host(self, two_servers: bool = False) -> McpHost:
        """The host with one server (`fs`) or two (`fs` and `arch`), connected on first use."""
        if two_servers not in self._hosts:
            host = McpHost()
            host.add_server("fs", build_server(self.workspace))
            if two_servers:
                self._archive_dir = tempfile.TemporaryDirectory(prefix="course-archive-")
                (Path(self._archive_dir.name) / "notes.txt").write_text(ARCHIVE_NOTES, encoding="utf-8")
                self.archive = Workspace(Path(self._archive_dir.name))
                host.add_server("arch", build_server(self.archive, name="archive"))
            self._hosts[two_servers] = host
        return self._hosts[two_servers]

    @property
    def reads(self) -> int:
        """Real file reads so far on every connected server (the `Workspace.reads` counters)."""
        return self.workspace.reads + (self.archive.reads if self.archive else 0)

    def run(self, request: str | None = None, *, path: str = DEFAULT_PATH, head: int | None = 20,
            tail: int | None = None, server: str = "fs", two_servers: bool = False, outside: bool = False,
            parse_only: bool = False, send_back: bool = True) -> Snapshot:
        """Run one request for real and return its `Snapshot`, compared with the baseline (which
        this run becomes when there is none yet).

        `request` is sent as is; without it the request is composed from path/head/tail (and the
        server, when two are connected): any combination, see `compose_request`. `outside` asks for
        OUTSIDE_PATH instead of `path`. `parse_only` stops after parsing (nothing is sent to a
        server); `send_back=False` executes the calls but never sends their results back (one model
        request only). Whatever the model does is shown as it happened: no call (an answer in text),
        one call, or several (each panel then lists them in order).

        Raises:
            ValueError: a server other than `fs` without `two_servers`.
            openai.APIError: the model endpoint failed (nothing is kept from the run).
        """
        if server != "fs" and not two_servers:
            raise ValueError(say("the {server!r} server is connected only when two_servers=True",
                                 "只有在 two_servers=True 时才连接 {server!r} 服务器", server=server))
        text = request or compose_request(OUTSIDE_PATH if outside else path, head, tail, server if two_servers else None)
        host, reads, sent = self.host(two_servers), self.reads, len(self.wire.exchanges)
        if parse_only:  # the very request run_loop would send first, and nothing after it
            loop, responses = None, [self.client.responses.create(
                model=model_name(), input=[{"role": "user", "content": text}], tools=host.responses_tools(),
                tool_choice="auto", parallel_tool_calls=True,
            )]  # fmt: skip
        else:
            loop = run_loop(self.client, host, text, max_steps=4 if send_back else 1)
            responses = loop.responses
        made = self._made(host, [c for r in responses for c in calls_in(r)], loop)
        exchanges = self.wire.exchanges[sent:]
        texts, ids, route = self._texts(host, made, exchanges[0].request.get("tools", []), server)
        texts["answer"] = self._answer(made, responses[0], loop, send_back)
        before = self.baseline
        self.runs += 1
        self.last = Snapshot(
            request=text,
            panels={n: Panel(n, texts[n], before.panels[n].text if before else None) for n in PANELS},
            ids={n: Panel(n, v, before.ids[n].text if before else None) for n, v in ids.items()},
            route=route, reads=self.reads, reads_delta=self.reads - reads, model_requests=len(exchanges),
            run=self.runs, compared_with=before.run if before else None, calls=made, exchanges=exchanges,
        )  # fmt: skip
        if before is None:
            self.baseline = self.last
        return self.last

    def pin(self, snapshot: Snapshot | None = None) -> Snapshot:
        """Make `snapshot` (default: the last run) the baseline that later runs are compared with;
        return it as a baseline (`Snapshot.as_baseline`).

        Raises:
            ValueError: nothing has run yet.
        """
        chosen = snapshot or self.last
        if chosen is None:
            raise ValueError(say("nothing to pin yet: run once first", "还没有可以设为基线的运行：先运行一次"))
        self.baseline = chosen.as_baseline()
        return self.baseline

    def reset(self) -> None:
        """Forget the baseline: the next run is a baseline again, with nothing to compare with."""
        self.baseline = self.last = None

    @staticmethod
    def _made(host: McpHost, found: list[Any], loop: LoopResult | None) -> list[MadeCall]:
        """Every call of the run with what became of it. The loop executes the calls of each
        completed response in order, one trace link and one feedback item each; a call it did not
        execute (parse only, or a response cut short) stops at its arguments."""
        links = loop.trace if loop else []
        feedback = of_type(loop.context, "function_call_output") if loop else []
        made = []
        for i, call in enumerate(found):
            link = links[i] if i < len(links) else None
            record = MadeCall(call.name, call.call_id, call.arguments)
            if link is not None:
                record = replace(record, feedback=feedback[i] if i < len(feedback) else None,
                                 error_code=link.error_code, mcp_id=link.mcp_id, server=link.server)  # fmt: skip
            exchange = next((e for e in host.connections[link.server].exchanges("tools/call") if e.id == link.mcp_id),
                            None) if link is not None and link.mcp_id is not None else None  # fmt: skip
            if exchange is not None:
                record = replace(record, mcp_arguments=exchange.request["params"]["arguments"],
                                 result=exchange.response.get("result", exchange.response.get("error")))  # fmt: skip
            made.append(record)
        return made

    @staticmethod
    def _texts(host: McpHost, made: list[MadeCall], sent_tools: list[dict[str, Any]],
               server: str) -> tuple[dict[str, str], dict[str, str], str]:
        """The panels' texts but the answer, the two ids and the route line, read from what was recorded.

        The rule panels show the declarations the request really sent (and the server listed), of
        the tools the model called, or of the tool asked for when it called none: a text answer
        leaves the rules as they were. Several calls: each panel lists them in order."""
        routes = [host.routes.get(c.name) for c in made]
        declared = list(dict.fromkeys(r.alias for r in routes if r is not None)) or \
            [next(r.alias for r in host.routes.values() if r.server == server)]  # fmt: skip
        schemas, parameters = [], []
        for alias in declared:
            route = host.routes[alias]
            listed = host.connections[route.server].exchanges("tools/list")[-1].response["result"]["tools"]
            schemas.append((alias, _json(next(t["inputSchema"] for t in listed if t["name"] == route.tool))))
            parameters.append((alias, _json(next((t["parameters"] for t in sent_tools if t.get("name") == alias),
                                                  say("not in the request", "请求里没有")))))  # fmt: skip
        texts = {"input_schema": _listed(schemas), "parameters": _listed(parameters)}
        if not made:
            texts |= {"arguments": say("no call: the model answered in text", "没有调用：模型直接用文本回答"),
                      "parsed": say("nothing to parse: no call", "没有可解析的内容：没有调用"),
                      "mcp_arguments": say("not sent: no call", "未发送：没有调用"),
                      "mcp_result": not_executed() + say(": no call", "：没有调用"),
                      "function_call_output": not_executed() + say(": no call", "：没有调用")}  # fmt: skip
            none = say("none", "无")
            return texts, {"call_id": none, "mcp_id": none}, say("no tool call: the model answered in text",
                                                                  "没有工具调用：模型直接用文本回答")
        per_call: dict[str, list[tuple[str, str]]] = {n: [] for n in PANELS if n not in texts and n != "answer"}
        for call in made:
            title = call.name
            per_call["arguments"].append((title, call.arguments))
            per_call["parsed"].append((title, _parsed(call.arguments)))
            sent = call.result is not None
            per_call["mcp_arguments"].append((title, _json(call.mcp_arguments) if sent else
                                              say("not sent", "未发送") if call.feedback is not None else
                                              say("not sent (parse only: no tools/call)", "未发送（仅解析：没有 tools/call）")))
            per_call["mcp_result"].append((title, _json(call.result) if sent else not_executed()))
            per_call["function_call_output"].append((title, _json(call.feedback) if call.feedback else not_executed()))
        texts |= {name: _listed(blocks) for name, blocks in per_call.items()}
        mcp_ids = [say("{id} on {server}", "{server} 上的 {id}", id=c.mcp_id, server=c.server) if c.result is not None
                   else say("not sent", "未发送") for c in made]  # fmt: skip
        lines = []
        for call, route in zip(made, routes, strict=True):
            line = (say("model called {name} → server {server}, tool {tool}", "模型调用 {name} → 服务器 {server}，工具 {tool}",
                        name=call.name, server=route.server, tool=route.tool) if route is not None
                    else say("model called {name}: no such tool", "模型调用 {name}：没有这个工具", name=call.name))  # fmt: skip
            lines.append(line)
        counted = [line + (f" (×{lines.count(line)})" if lines.count(line) > 1 else "") for line in dict.fromkeys(lines)]
        route_line = "; ".join(counted)
        if len(made) > 1:
            route_line = say("{n} calls: ", "{n} 个调用：", n=len(made)) + route_line
        return texts, {"call_id": ", ".join(c.call_id for c in made), "mcp_id": ", ".join(mcp_ids)}, route_line

    @staticmethod
    def _answer(made: list[MadeCall], first: Any, loop: LoopResult | None, send_back: bool) -> str:
        """What the answer panel says: the model's final text, or why there is none."""
        if loop is None:  # parse only: one request, nothing executed
            if not made:
                return first.output_text or say("no answer", "没有回答")
            return say("{x}: nothing ran, so there is nothing to answer from", "{x}：什么也没有运行，所以没有可依据的内容来回答",
                       x=not_executed())  # fmt: skip
        if made and not send_back:
            return say("not answered: the result was never sent back, so the model was not asked again",
                       "没有回答：结果从未发回，所以模型没有被再次请求")
        return loop.answer or say("no answer ({reason})", "没有回答（{reason}）", reason=loop.reason)

    def close(self) -> None:
        """Close the hosts and remove the archive server's temporary folder."""
        for host in self._hosts.values():
            host.close()
        self._hosts.clear()
        if self._archive_dir is not None:
            self._archive_dir.cleanup()

    def __enter__(self) -> Explorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _panel_html(name: str, panel: Panel | None, status: str = "not run yet", note: str = "") -> str:
    """One panel as HTML: its label, its status badge, what changed (or `note`) and its text.

    Without a panel it shows `status` ("not run yet", "running" or "failed") and `note`, and no
    text: nothing from an earlier run is left on show. The badge never wraps (`white-space:
    nowrap`, and it does not shrink), so it never breaks inside a word, which Chinese would do
    between any two characters; in a column too narrow for both, it moves below the label.
    """
    status, color = panel.status if panel else status, _COLORS[GROUP_OF[name]]
    note = panel.change() if panel else note
    noted = (f'<div class="explorer-change" style="font-size:11px;line-height:1.3;color:#92400e">'
             f'{html.escape(note)}</div>') if note else ""
    shown = status_text(status)
    height = "none" if GROUP_OF[name] == "rule" else "260px"  # a rule is shown whole: `head` is at its end
    return (f'<div style="border:1px solid #d1d5db;border-left:4px solid {color};border-radius:4px;padding:3px 6px;'
            'margin:0 0 6px"><div style="display:flex;flex-wrap:wrap;justify-content:space-between;align-items:flex-start;'
            f'gap:2px 6px"><b style="font-size:12px;overflow-wrap:anywhere">{html.escape(label(name))}</b><span '
            f'class="explorer-status" style="background:{_BADGES[status]};border-radius:8px;padding:0 7px;font-size:11px;'
            f'white-space:nowrap;flex:none">{shown}</span></div>{noted}<pre style="margin:3px 0 0;'
            f'max-height:{height};overflow:auto;white-space:pre-wrap;word-break:break-word;font-size:11px;line-height:'
            f'1.3">{panel.diff_html() if panel else ""}</pre></div>')


class ExplorerWidget(widgets.VBox):
    """The explorer as an ipywidgets 8 interface: inputs, toggles, Run / Pin / Reset and the panels.

    **Run** runs the inputs and compares with the baseline; **Pin** makes the run on show the
    baseline; **Reset** puts every input back to its default and runs once, a fresh baseline.

    Stable DOM hooks (the browser test uses them): the container has class `explorer`; each panel
    `explorer-panel-<name>`, with its status text in `.explorer-status`; each input
    `explorer-input-<name>`; the buttons `explorer-run`, `explorer-pin` and `explorer-reset`; the
    run summary `explorer-summary`; the line naming the baseline `explorer-baseline`.
    """

    DEFAULTS = {"request": "", "path": DEFAULT_PATH, "head": 20, "tail": 0, "server": "fs"}  # the rest: False

    def __init__(self, explorer: Explorer | None = None, **kwargs: Any) -> None:
        self.explorer = explorer or Explorer()
        self.snapshot: Snapshot | None = None
        self.inputs: dict[str, widgets.ValueWidget] = {
            "request": widgets.Text(description=say("request", "请求"), layout=widgets.Layout(width="95%"),
                                    placeholder=say("empty: built from path, head and tail",
                                                    "留空：由 path、head 和 tail 生成")),
            "path": widgets.Text(DEFAULT_PATH, description="path"),
            "head": widgets.BoundedIntText(20, min=0, max=10_000, description=say("head (0: none)", "head（0：不设）")),
            "tail": widgets.BoundedIntText(0, min=0, max=10_000, description=say("tail (0: none)", "tail（0：不设）")),
            "server": widgets.Dropdown(options=["fs", "arch"], description=say("server", "服务器"), disabled=True),
            "parse_only": widgets.Checkbox(False, description=say("parse only, don't execute", "仅解析，不执行")),
            "dont_send_back": widgets.Checkbox(False, description=say("don't send the result back", "不把结果发回")),
            "outside": widgets.Checkbox(False, description=say("path outside the workspace", "工作区之外的路径")),
            "two_servers": widgets.Checkbox(False, description=say("two servers, same tool name", "两个服务器，同一个工具名")),
        }  # fmt: skip
        for name, control in self.inputs.items():
            control.style.description_width = "initial"
            control.add_class(f"explorer-input-{name}")
        self.inputs["two_servers"].observe(lambda c: setattr(self.inputs["server"], "disabled", not c.new), "value")
        self.button = widgets.Button(description=say("Run", "运行"), button_style="primary", icon="play")
        self.button.add_class("explorer-run")
        self.button.on_click(self._clicked)
        self.pin_button = widgets.Button(description=say("Pin as baseline", "设为基线"), icon="thumb-tack", disabled=True,
                                         tooltip=say("compare the next runs with the run on show",
                                                     "之后的运行都与当前显示的这次比较"))  # fmt: skip
        self.pin_button.add_class("explorer-pin")
        self.pin_button.on_click(lambda _: self._safely(self.pin))
        self.reset_button = widgets.Button(description=say("Reset", "重置"), icon="undo",
                                           tooltip=say("every input back to its default, then one run: a fresh baseline",
                                                       "所有输入恢复默认值，再运行一次：新的基线"))  # fmt: skip
        self.reset_button.add_class("explorer-reset")
        self.reset_button.on_click(lambda _: self._safely(self.reset))
        self.summary = widgets.HTML(status_text("not run yet")).add_class("explorer-summary")
        self.baseline_line = widgets.HTML().add_class("explorer-baseline")
        self.panels = {n: widgets.HTML(_panel_html(n, None)).add_class(f"explorer-panel-{n}") for n in PANELS}
        columns = [widgets.VBox([widgets.HTML(f'<div style="font-weight:bold;color:{_COLORS[g]};border-bottom:2px '
                                              f'solid {_COLORS[g]}">{say(GROUP_TITLES[g], GROUP_TITLES_ZH[g])}</div>'),
                                 *(self.panels[n] for n in names)], layout=widgets.Layout(width="33%"))
                   for g, names in GROUPS.items()]  # fmt: skip
        toggles = [self.inputs[n] for n in ("parse_only", "dont_send_back", "outside", "two_servers")]
        buttons = widgets.HBox([self.button, self.pin_button, self.reset_button, self.baseline_line])
        super().__init__([self.inputs["request"], widgets.HBox([self.inputs[n] for n in ("path", "head", "tail", "server")]),
                          widgets.HBox(toggles), buttons, self.summary, widgets.HBox(columns)], **kwargs)
        self.add_class("explorer")
        self._show_baseline()

    def values(self) -> dict[str, Any]:
        """The inputs as `Explorer.run` keyword arguments (0 and "" mean "not set")."""
        v = {name: control.value for name, control in self.inputs.items()}
        return {"request": v["request"] or None, "path": v["path"], "head": v["head"] or None,
                "tail": v["tail"] or None, "server": v["server"] if v["two_servers"] else "fs",
                "two_servers": v["two_servers"], "outside": v["outside"], "parse_only": v["parse_only"],
                "send_back": not v["dont_send_back"]}  # fmt: skip

    def run(self) -> Snapshot:
        """Run with the current inputs and refresh every panel (what the Run button does).

        While the run is on its way every panel says "running", and if it fails every panel says
        "failed": no panel keeps an earlier run's text as if it were this run's.

        Raises:
            ValueError: see `Explorer.run` (the button shows the message instead), and whatever the
                model endpoint raised.
        """
        self._show_empty("running", say("waiting for the model and the server…", "正在等待模型和服务器……"))
        self.summary.value = say("running…", "运行中……")
        try:
            snap = self.explorer.run(**self.values())
        except Exception:
            self.snapshot = None
            self._show_empty("failed", say("no result: this run stopped with an error (above)",
                                            "没有结果：这次运行因出错而中止（见上方）"))  # fmt: skip
            raise
        self._show(snap)
        return snap

    def _show_empty(self, status: str, note: str) -> None:
        """Every panel without text, saying `status` and `note`; Pin off (no run on show)."""
        for name, widget in self.panels.items():
            widget.value = _panel_html(name, None, status, note)
        self.pin_button.disabled = True

    def _show(self, snap: Snapshot) -> None:
        """Show `snap` in the panels, then in the summary (last: a page that sees the new summary
        sees the new panels too)."""
        self.snapshot = snap
        for name, widget in self.panels.items():
            widget.value = _panel_html(name, snap.panels[name])
        ids = "".join(f" · {n.replace('mcp_id', 'MCP id')} <code>{html.escape(p.text)}</code> <span style='"
                      f"background:{_BADGES[p.status]};padding:0 5px;white-space:nowrap'>{status_text(p.status)}</span>"
                      for n, p in snap.ids.items())  # fmt: skip
        self.summary.value = say(
            "<b>run {run}</b>: {request}<br>{comparison} · {route}{ids} · real file reads <b>{reads}</b> ({delta}) · "
            "model requests {asked}",
            "<b>第 {run} 次运行</b>：{request}<br>{comparison} · {route}{ids} · 真实文件读取 <b>{reads}</b>（{delta}） · "
            "模型请求 {asked}",
            run=snap.run, request=html.escape(snap.request), comparison=html.escape(snap.comparison()),
            route=html.escape(snap.route), ids=ids, reads=snap.reads, delta=f"{snap.reads_delta:+d}",
            asked=snap.model_requests,
        )  # fmt: skip
        self._show_baseline()

    def _show_baseline(self) -> None:
        """Name the baseline beside the buttons; Pin is off when the run on show already is it."""
        base = self.explorer.baseline
        self.baseline_line.value = (
            say("no baseline yet: the next run becomes it", "还没有基线：下一次运行就是基线") if base is None
            else say("baseline: run {n}, {request}", "基线：第 {n} 次运行，{request}", n=base.run,
                     request=html.escape(_short(base.request, 50)))
        )  # fmt: skip
        self.pin_button.disabled = self.snapshot is None or (base is not None and base.run == self.snapshot.run)

    def pin(self, snapshot: Snapshot | None = None) -> Snapshot:
        """Make `snapshot` (default: the run on show) the baseline, as the Pin button does; the run
        on show, once pinned, shows as the baseline. Returns the baseline.

        `ui.pin(earlier)` in a cell states what its run is compared with, whatever was pinned or
        reset in the widget before it.

        Raises:
            ValueError: nothing has run yet.
        """
        pinned = self.explorer.pin(snapshot or self.snapshot)
        if self.snapshot is not None and self.snapshot.run == pinned.run:
            self._show(pinned)
        self._show_baseline()
        return pinned

    def reset(self) -> Snapshot:
        """Put every input back to its default, forget the baseline and run once: that run is the
        new baseline (what the Reset button does)."""
        self.set()
        self.explorer.reset()
        return self.run()

    def set(self, **values: Any) -> None:
        """Put every input at its default, then the given ones at `values` (nothing runs).

        `ui.set(head=5, parse_only=True)` states one experiment's inputs in full, so a cell gives
        the same run whatever was typed or ticked in the widget before it.

        Raises:
            ValueError: a name that is not one of `inputs`.
        """
        unknown = sorted(set(values) - set(self.inputs))
        if unknown:
            raise ValueError(say("no input named {names}; the inputs are: {inputs}", "没有名为 {names} 的输入；输入有：{inputs}",
                                 names=", ".join(unknown), inputs=", ".join(self.inputs)))
        for name, control in self.inputs.items():
            control.value = values.get(name, self.DEFAULTS.get(name, False))

    def _clicked(self, _button: widgets.Button) -> None:
        self._safely(self.run)

    def _safely(self, action: Any) -> None:
        try:
            action()
        except Exception as error:  # a widget callback has nowhere else to report to
            self.summary.value = f"<b style='color:#b91c1c'>✗ {type(error).__name__}: {html.escape(str(error))}</b>"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = super()._repr_mimebundle_(**kwargs)
        bundle["text/plain"] = say("ExplorerWidget (interactive in a live Jupyter kernel; the tables below show each run)",
                                   "ExplorerWidget（在运行中的 Jupyter 内核里可以交互；下面的表格显示每次运行）")
        return bundle
