"""Evaluating the notes assistant: fixed questions, one trace per task, metrics computed from traces.

    questions = load_questions()                 # fixtures/eval_questions.json (zh-CN: fixtures/zh-CN/…)
    traces = run_eval(questions)                 # offline model, or the real endpoint if configured
    metrics = compute_metrics(traces)
    print(metrics_table(metrics)); print(bar_chart(metrics))

Each question says what a good run looks like: which tools (`expected_tools`, by their server
names), which notes the answer must cite (`expected_sources`), what kind of answer (`expect`:
"cited", "evidence_missing" or "no_tool") and whether a write should be proposed
(`expect_write`; `approve` says what the simulated user decides), and the points a complete
answer must make (`points`: a few words each). `setup` changes the world after the server has
built its index (e.g. a note is moved), so a recoverable error can happen for real.

Every task runs on a fresh `NotesAssistant` (a copy of the notes when `setup` changes them) and
leaves a `TaskTrace`: for each call, the turn, the tool, why it was chosen (what the model had
just seen), the arguments, the executor's validation steps, the outcome, the measured duration
and a summary of the output; then the final status, the answer, the model requests and tokens.

The metrics, each computed only from those traces:

    tool selection      tasks whose set of tools called equals the expected set
    argument validity   calls whose first attempt passed the schema and the business checks
                        (not refused with INVALID_INPUT or FORBIDDEN)
    citation            answers that cite, whose every cited note was read in that task and whose
                        every cited line says what the answer says there (by meaning: `grounding`)
    task completion     completed tasks whose answer, sources, points (by meaning) and write match
                        the expectation, and whose every claim is grounded
    write confirmation  writes whose first attempt stopped for approval, and that never ran
                        without an approval step
    failure recovery    recoverable failures (INVALID_INPUT, NOT_FOUND, retryable ones) followed
                        by a success of the same tool with new arguments, or a bounded retry
    claim grounding     claims of the answers whose meaning rests on what that task read, found or
                        saved (`grounding`); an answer that claims nothing counts as one that fails
    turns, tokens, time per task (time is measured; tables show it bucketed, see `time_bucket`)

Comparing a baseline with a change (a tool removed, a model that guesses) is `comparison`;
asking the learner a follow-up question and grading the reply is `follow_up`.

Every check reads the answer as a real model writes it too: markdown, another order, a closing
pleasantry, other words. On a paid endpoint, `client_for` says the cost of a run before it starts.

Run it:  python -m course_lib.evaluation [--questions FILE]
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import ipywidgets as widgets
from openai import OpenAI

from course_lib.assistant import NotesAssistant, Timed
from course_lib.execution import outcome_label, step_label
from course_lib.failure_table import CAUSES_ZH, CHECKS_ZH, ROWS, Row
from course_lib.grounding import Claim, citations, claims, missing_points, plain, ungrounded
from course_lib.guarded_loop import GuardedResult
from course_lib.lang import display_width, pad, say
from course_lib.notes_server import LOGICAL_ROOT, notes_dir
from course_lib.offline_model import EVIDENCE_MISSING
from course_lib.show import TextFallback

WRITE_TOOLS = frozenset({"save_learning_gap"})
INVALID_CODES = frozenset({"INVALID_INPUT", "FORBIDDEN"})
RECOVERABLE_CODES = frozenset({"INVALID_INPUT", "NOT_FOUND", "TIMEOUT", "UPSTREAM_ERROR"})
RETRY_BOUND = 2  # a failed call may be repeated unchanged at most this many times
TURN_BUDGET = 5  # more model requests than this for one question counts as "too many rounds"
REQUESTS_PER_TASK = 4  # about: 3.1 on average on the offline model, at most TURN_BUDGET (and an approval round)

# What the tables print, in the edition's language (`course_lib.lang.say`); a metric's `name` stays
# its English identifier (code filters on it), only its label is translated.
METRIC_LABELS_ZH = {
    "tool selection accuracy": "工具选择准确率", "argument validity rate": "参数合法率",
    "citation correctness": "引用正确率", "task completion": "任务完成率", "write confirmation rate": "写入确认率",
    "failure recovery rate": "失败恢复率", "claim grounding": "陈述有据率",
}  # fmt: skip
COUNTED_OVER_ZH = {"tasks": "任务", "calls": "调用", "answers": "回答", "writes": "写入", "failures": "失败", "claims": "陈述"}
KINDS_ZH = {"answer": "回答", "chat": "闲聊", "missing": "证据不足", "gap": "缺口", "recover": "恢复"}
EXPECT_ZH = {"cited": "有引用的回答", "evidence_missing": "说明证据不足", "no_tool": "不调用工具"}
"""A question's kind and expected answer as the zh-CN tables and trace browser print them (the
questions file keeps the English values, which code compares)."""


def kind_label(kind: str) -> str:
    """A question's kind as the edition prints it ("gap" / "缺口")."""
    return say(kind, KINDS_ZH.get(kind, kind))


def metric_label(name: str) -> str:
    """A metric's name as the edition prints it ("tool selection accuracy" / "工具选择准确率")."""
    return say(name, METRIC_LABELS_ZH.get(name, name))


TIME_BUCKETS = ((2.0, "< 2 s"), (10.0, "2–10 s"), (60.0, "10–60 s"), (float("inf"), "≥ 60 s"))
_SOURCES = re.compile(r"^(?:sources?|references?|来源|出处)\s*[:：]\s*(.*)$", re.I)  # "Sources: a, b", "**Sources:** a", 来源：a、b
_SOURCES_HEADING = re.compile(r"^(?:sources?|references?|来源|出处)\s*[:：]?$", re.I)  # a heading, the paths listed below it
_PATH = re.compile(r"/[\w.\-/]*?\.md")


def _edition_fixtures(edition: str | None) -> Path | None:
    """`fixtures/zh-CN` for the zh-CN edition (`edition`, default the running one), None for English."""
    from course_lib.lang import language
    from course_lib.paths import fixtures_dir

    return fixtures_dir() / "zh-CN" if (edition or language()) == "zh-CN" else None


def edition_notes(edition: str | None = None) -> Path:
    """The knowledge base an edition's assistant answers from (default: the running edition's):
    `fixtures/notes`, or in the zh-CN edition the same notes in Chinese, `fixtures/zh-CN/notes`
    (same file names, so the same paths and expected sources)."""
    zh = _edition_fixtures(edition)
    return zh / "notes" if zh else notes_dir()


def questions_file(edition: str | None = None) -> Path:
    """An edition's evaluation questions (default: the running edition's): `fixtures/eval_questions.json`,
    or `fixtures/zh-CN/eval_questions.json` (the same ids, kinds and expectations, asked in Chinese)."""
    from course_lib.paths import fixtures_dir

    zh = _edition_fixtures(edition)
    return (zh or fixtures_dir()) / "eval_questions.json"


@dataclass(frozen=True)
class Question:
    """One evaluation question and what a good run of it looks like."""

    id: str
    question: str
    kind: str  # answer, chat, missing, gap, recover: for grouping only
    expected_tools: tuple[str, ...]
    expected_sources: tuple[str, ...] = ()
    expect: str = "cited"  # "cited", "evidence_missing" or "no_tool"
    expect_write: bool = False
    approve: bool = True  # what the simulated user decides when a write waits for approval
    setup: dict[str, Any] = field(default_factory=dict)  # {"move": [from, to]}: after the index was built
    note: str = ""
    points: tuple[tuple[str, ...], ...] = ()  # what a complete answer says: each point, words that must all appear


def load_questions(path: Path | None = None) -> list[Question]:
    """The questions in `path` (default `questions_file()`).

    Raises:
        ValueError: a question has an unknown `expect` or a duplicate id.
    """
    raw = json.loads(Path(path or questions_file()).read_text(encoding="utf-8"))["questions"]
    questions = [Question(**{**q, "expected_tools": tuple(q["expected_tools"]),
                             "expected_sources": tuple(q.get("expected_sources", ())),
                             "points": tuple(tuple(p) for p in q.get("points", ()))}) for q in raw]  # fmt: skip
    for q in questions:
        if q.expect not in ("cited", "evidence_missing", "no_tool"):
            raise ValueError(f"{q.id}: expect must be cited, evidence_missing or no_tool, not {q.expect!r}")
    if len({q.id for q in questions}) != len(questions):
        raise ValueError("question ids must be unique")
    return questions


# ---- traces -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CallTrace:
    """One execution of one model call (a call that stopped for approval and then ran is two)."""

    turn: int  # the model response (1-based) that asked for it
    call_id: str
    tool: str  # the model-side name, e.g. notes__read_note
    why: str  # what the model had just seen when it chose this call
    arguments_text: str
    steps: tuple[tuple[str, str], ...]  # the executor's steps: (name, "ok" or the code that stopped it)
    outcome: str  # "ok" or the error code
    seconds: float  # measured
    output: str  # a one-line summary of the result
    result: dict[str, Any] = field(repr=False, default_factory=dict)

    @property
    def name(self) -> str:
        """The tool's server-side name: the alias without its prefix (notes__read_note → read_note)."""
        return self.tool.rsplit("__", 1)[-1]

    @property
    def ok(self) -> bool:
        return self.outcome == "ok"

    @property
    def validation(self) -> str:
        """The steps as one line, e.g. "allowlist ✓ parse ✓ schema ✗ INVALID_INPUT" (the step names
        as the edition prints them: "允许列表 ✓ 解析 ✓ …" in zh-CN; the codes stay)."""
        return " ".join(f"{step_label(name)} ✓" if outcome == "ok" else f"{step_label(name)} ✗ {outcome}"
                        for name, outcome in self.steps)  # fmt: skip

    @property
    def executed(self) -> bool:
        """The tool really ran (the executor reached its execute step)."""
        return any(name == "execute" for name, _ in self.steps)

    @property
    def approved(self) -> bool:
        return ("approval", "ok") in self.steps


@dataclass
class TaskTrace:
    """Everything one task left behind."""

    question: Question
    calls: list[CallTrace]
    status: str
    reason: str | None
    answer: str | None
    turns: int  # model requests
    tokens: int
    seconds: float  # measured, wall clock, from the question to the final answer
    read: dict[str, str]  # logical path → text, for every note read_note really returned
    found: list[str]  # every path search_notes returned
    saved: list[dict[str, str]]  # the gap records the server holds after the task
    result: GuardedResult | None = field(default=None, repr=False)

    @property
    def tools(self) -> list[str]:
        """The server-side names of the tools the model chose, in first-use order."""
        return list(dict.fromkeys(call.name for call in self.calls))

    def ungrounded(self) -> list[Claim]:
        """The answer's claims that nothing this task read, found or saved supports (`grounding`)."""
        return ungrounded(self.answer, self.read, found=self.found, saved=[r["id"] for r in self.saved])

    def text(self) -> str:
        """The trace as plain text: what a person reads to find where a task went wrong."""
        q = self.question
        write = (say(", a write", "，一次写入") + (say(" (user approves)", "（用户批准）") if q.approve
                 else say(" (user rejects)", "（用户拒绝）"))) if q.expect_write else ""  # fmt: skip
        lines = [f"{q.id} [{kind_label(q.kind)}] {q.question}",
                 say("expected: tools {tools}, sources {sources}, {expect}", "预期：工具 {tools}，来源 {sources}，{expect_zh}",
                     tools=list(q.expected_tools), sources=list(q.expected_sources), expect=q.expect,
                     expect_zh=EXPECT_ZH.get(q.expect, q.expect)) + write,
                 say("status: {status}  reason: {reason}  model requests: {turns}  tokens: {tokens}  time: {time}",
                     "状态：{status}  原因：{reason}  模型请求数：{turns}  token 数：{tokens}  时间：{time}",
                     status=self.status, reason=self.reason, turns=self.turns, tokens=self.tokens,
                     time=time_bucket(self.seconds))]  # fmt: skip
        for call in self.calls:
            lines += [say("  turn {turn}  {tool}  {arguments}", "  第 {turn} 轮  {tool}  {arguments}", turn=call.turn,
                          tool=call.tool, arguments=call.arguments_text),
                      say("      why: {why}", "      依据：{why}", why=call.why),
                      say("      validation: {validation}", "      校验：{validation}", validation=call.validation),
                      say("      result: {outcome} · {output} · {time}", "      结果：{outcome} · {output} · {time}",
                          outcome=outcome_label(call.outcome), output=call.output, time=time_bucket(call.seconds))]  # fmt: skip
        if not self.calls:
            lines.append(say("  (no tool calls)", "  （没有工具调用）"))
        lines += [say("answer:", "回答："), *("  " + line for line in (self.answer or say("(none)", "（无）")).splitlines())]
        return "\n".join(lines)


def time_bucket(seconds: float) -> str:
    """A coarse label for a measured duration. Stored notebook outputs show this, not the number:
    the number changes on every run and every machine; the bucket almost never does."""
    return next(label for limit, label in TIME_BUCKETS if seconds < limit)


def summarize(result: dict[str, Any]) -> str:
    """One line about a normalized result: hits, the note read, the record saved, or the error.

    The words are the edition's (`lang.say`); paths, titles, codes and the server's messages stay as they are.
    """
    if not result.get("ok"):
        error = result.get("error") or {}
        message = str(error.get("message", ""))
        return f"{error.get('code')}: {message if len(message) <= 70 else message[:69] + '…'}"
    data = result.get("data")
    if isinstance(data, dict) and "hits" in data:
        hits = ", ".join(f"{hit['path']} ({hit['score']:g})" for hit in data["hits"])
        count = say("{n} hit" + ("s" if len(data["hits"]) != 1 else ""), "{n} 条命中", n=len(data["hits"]))
        return count + (say(": {hits}", "：{hits}", hits=hits) if hits else "")
    if isinstance(data, dict) and "text" in data:
        return say("{path} · {title!r} · updated {updated} · {n} chars", "{path} · {title!r} · 更新于 {updated} · {n} 个字符",
                   path=data.get("path"), title=data.get("title"), updated=data.get("updated"), n=len(data["text"]))
    if isinstance(data, dict) and "record_id" in data:
        return say("record {id}", "记录 {id}", id=data["record_id"]) + (
            say(" (replayed: no new record)", "（重放：没有新记录）") if data.get("replayed") else "")
    text = json.dumps(data, ensure_ascii=False)
    return text if len(text) <= 80 else text[:79] + "…"


def _why(result: GuardedResult, turn: int, calls: list[CallTrace]) -> str:
    """What the model had seen just before response number `turn`: the question, or the outcomes
    of the previous turn's calls (plus any text the model wrote beside its call)."""
    said = result.responses[turn - 1].output_text.strip() if turn <= len(result.responses) else ""
    if turn == 1:
        seen = say("the question", "问题")
    else:
        before = [c for c in calls if c.turn == turn - 1]
        seen = say("after ", "在这些调用之后：") + ", ".join(f"{c.name} → {c.output if c.name == 'search_notes' and c.ok else c.outcome}"
                                    for c in before)  # fmt: skip
    if said:
        last = said.splitlines()[-1]
        seen += say("; it said: {text}", "；它写道：{text}", text=last if len(last) <= 90 else last[:89] + "…")
    return seen


def _with_decisions(calls: list[CallTrace], result: GuardedResult) -> list[CallTrace]:
    """Add a row after each write a person rejected: not an execution, but it is what the model
    was told (`resume` feeds it back as FORBIDDEN)."""
    rejected = {e.call_id: e for e in result.executions
                if e.error_code == "FORBIDDEN" and e.steps and e.steps[-1].name == "decision"}  # fmt: skip
    out = []
    for c in calls:
        out.append(c)
        if c.call_id in rejected and c.outcome == "APPROVAL_REQUIRED":
            e = rejected.pop(c.call_id)
            out.append(CallTrace(c.turn, c.call_id, c.tool, "", c.arguments_text,
                                 (("approval", "rejected by a person"),), "FORBIDDEN", 0.0,
                                 summarize(e.result), e.result))  # fmt: skip
    return out


def build_trace(question: Question, result: GuardedResult, history: list[Timed], seconds: float,
                saved: list[dict[str, str]]) -> TaskTrace:  # fmt: skip
    """Assemble a `TaskTrace` from the loop's result and the executor's timed history."""
    turn_of = {item.call_id: n for n, response in enumerate(result.responses, start=1)
               for item in response.output if item.type == "function_call"}  # fmt: skip
    calls: list[CallTrace] = []
    for timed in history:
        e = timed.execution
        turn = turn_of.get(e.call_id, 0)
        steps = tuple((s.name, s.outcome) for s in e.steps)
        calls.append(CallTrace(turn, e.call_id, e.tool, "", e.arguments_text, steps,
                               "ok" if e.ok else str(e.error_code), timed.seconds, summarize(e.result), e.result))  # fmt: skip
    calls = _with_decisions(calls, result)
    calls = [CallTrace(**{**c.__dict__, "why": _why(result, c.turn, calls)}) for c in calls]
    read = {c.result["data"]["path"]: c.result["data"]["text"] for c in calls if c.name == "read_note" and c.ok}
    found = list(dict.fromkeys(hit["path"] for c in calls if c.name == "search_notes" and c.ok
                               for hit in c.result["data"]["hits"]))  # fmt: skip
    tokens = sum(r.usage.total_tokens for r in result.responses if r.usage is not None)
    return TaskTrace(question, calls, result.status, result.reason, result.answer, result.steps, tokens, seconds,
                     read, found, [dict(r) for r in saved], result)  # fmt: skip


def run_task(question: Question, *, client: OpenAI | None = None, root: Path | None = None) -> TaskTrace:
    """Run one question on a fresh assistant and return its trace.

    The simulated user approves or rejects every write that waits (`question.approve`).
    `client` defaults to `backend.make_client()` (offline unless OPENAI_API_KEY is set).
    """
    source = Path(root or edition_notes())
    with tempfile.TemporaryDirectory(prefix="course-eval-") as scratch:
        if question.setup:
            source = Path(shutil.copytree(source, Path(scratch) / "notes"))
        with NotesAssistant(source, client=client) as assistant:
            if "move" in question.setup:  # after the server built its index: the snapshot is now stale
                old, new = (source / Path(p).relative_to(LOGICAL_ROOT) for p in question.setup["move"])
                new.parent.mkdir(parents=True, exist_ok=True)
                old.rename(new)
            start = time.perf_counter()
            result = assistant.ask(question.question)
            for _ in range(3):  # a bounded number of approval rounds
                if result.reason != "approval_required":
                    break
                result = assistant.approve(result) if question.approve else assistant.reject(result)
            seconds = time.perf_counter() - start
            return build_trace(question, result, assistant.executor.history, seconds, assistant.gaps)


def estimated_requests(questions: Iterable[Question]) -> int:
    """About how many model requests running `questions` once sends (`REQUESTS_PER_TASK` each): what a
    run on a paid endpoint says before it starts (`backend.client_for_requests`)."""
    return REQUESTS_PER_TASK * len(list(questions))


def client_for(questions: Iterable[Question], *, versions: int = 1, transport: Any = None,
               what: tuple[str, str] = ("The evaluation", "这次评估")) -> OpenAI:  # fmt: skip
    """The model client for running `questions` (`versions` times): `backend.client_for_requests` for
    `estimated_requests`. Offline: the offline model, without a word. On a real endpoint, more than a
    handful of requests: one line first says how many would go where, and the run stays on the offline
    model unless `COURSE_PAID_RUNS` allows that many (`transport`: e.g. the course's wire capture)."""
    from course_lib.backend import client_for_requests

    return client_for_requests(estimated_requests(questions) * versions, *what, transport=transport)


def run_eval(questions: Iterable[Question] | None = None, *, client: OpenAI | None = None,
             root: Path | None = None) -> list[TaskTrace]:  # fmt: skip
    """Run every question (default: `load_questions()`) over the notes in `root` (default:
    `edition_notes()`), one fresh assistant each."""
    return [run_task(q, client=client, root=root) for q in (load_questions() if questions is None else questions)]


# ---- checks on one answer -----------------------------------------------------------------------


def cited_sources(answer: str | None) -> list[str]:
    """The notes an answer cites: the paths of its `Sources:` line (or of a list under a "Sources"
    heading) and of the citation after each statement (`[/notes/x.md:4]`, `(/notes/x.md, line 4)`),
    markdown or not. A path merely mentioned in a sentence is not a citation."""
    if not answer:
        return []
    listed, tagged, under_heading = [], [], False
    for raw in answer.splitlines():
        line = plain(raw)
        if match := _SOURCES.match(line):
            listed += _PATH.findall(match.group(1))
            under_heading = not match.group(1).strip()
        elif _SOURCES_HEADING.match(line):
            under_heading = True
        elif under_heading and line and not _PATH.sub("", line).strip(" ,、;；-–—()[]:"):
            listed += _PATH.findall(line)
        else:
            under_heading = under_heading and not line
            tagged += [citation.partition(":")[0] for citation in citations(line)]
    return list(dict.fromkeys(listed + tagged))


def citation_problems(answer: str | None, read: dict[str, str]) -> list[str]:
    """What is wrong with an answer's citations, given the notes really read (path → text): a note
    cited that was never read, a line cited that the note does not have, or a statement whose cited
    lines do not say it (`grounding`: in other words is fine, the opposite is not)."""
    problems = [say("cites {path}, which was never read", "引用了 {path}，可它从没被读过", path=path)
                for path in cited_sources(answer) if path not in read]  # fmt: skip
    for claim in claims(answer, read):
        if not claim.cited or claim.cited.partition(":")[0] not in read:
            continue
        if claim.misplaced:
            problems.append(say("cites {cited} for a statement that rests on {where}: {text!r}",
                                "为一句依据在 {where} 的话引用了 {cited}：{text!r}", cited=claim.cited, where=claim.where,
                                text=claim.text[:50]))  # fmt: skip
        elif not claim.grounded:
            problems.append(say("cites {cited} for what it does not say: {text!r}", "引用了 {cited}，可那里没有这样说：{text!r}",
                                cited=claim.cited, text=claim.text[:50]))  # fmt: skip
    return problems


_MISSING_WORDS = re.compile(
    r"evidence is missing|not in your notes|your notes (?:do not|don't|does not|doesn't) (?:cover|mention|say|contain|"
    r"include|discuss|address)|(?:could not|couldn't|can't|cannot) find (?:anything|any note|it)|nothing in your notes|"
    r"no (?:note|information) (?:about|on)|won't answer from memory|证据不足|笔记(?:里|中)?(?:没有|没)(?:提到|涉及|讲到|关于)|"
    r"没有找到|不会凭记忆", re.I)  # fmt: skip


def says_evidence_missing(answer: str | None) -> bool:
    """The answer says the notes cannot support it: the offline model's words, or any of the usual
    ways a model says so ("your notes don't cover …", "I couldn't find anything on …", 证据不足)."""
    text = " ".join(plain(line) for line in (answer or "").splitlines())
    return bool(EVIDENCE_MISSING.lower() in text.lower() or _MISSING_WORDS.search(text))


def completion_problems(trace: TaskTrace) -> list[str]:
    """Why a task does not count as completed (empty: it does)."""
    q, problems = trace.question, []
    if trace.status != "completed" or not trace.answer:
        problems.append(say("ended {status} ({reason}) without a final answer", "以 {status}（{reason}）结束，没有最终回答",
                            status=trace.status, reason=trace.reason))
    cited = cited_sources(trace.answer)
    if q.expect == "no_tool" and trace.calls:
        problems.append(say("called {tools} for a message that needs no tool", "为一条不需要工具的消息调用了 {tools}",
                            tools=", ".join(trace.tools)))
    if q.expect == "evidence_missing" and (not says_evidence_missing(trace.answer) or cited):
        problems.append(say("should say the evidence is missing and cite nothing", "应该说证据不足，并且什么都不引用"))
    if q.expect == "cited":
        problems += [say("does not cite {path}", "没有引用 {path}", path=path) for path in q.expected_sources if path not in cited]
        problems += citation_problems(trace.answer, trace.read)
        problems += [say("does not say: {point}", "没有讲到：{point}", point=point) for point in missing_points(trace.answer, q.points)]
    if q.expect != "no_tool":
        problems += [say("claims what nothing read supports: {text!r} ({why})", "声称了读过的内容都不支持的东西：{text!r}（{why}）",
                         text=c.text[:50], why=c.why) for c in trace.ungrounded()]  # fmt: skip
        if trace.answer and not grounding_claims(trace.answer, trace):
            problems.append(say("says nothing that can be checked against the notes", "没有说出任何可以对照笔记核对的内容"))
    proposed = [c for c in trace.calls if c.name in WRITE_TOOLS]
    if q.expect_write and not proposed:
        problems.append(say("proposed no learning gap", "没有提议学习缺口"))
    if not q.expect_write and proposed:
        problems.append(say("proposed a learning gap nobody asked for", "提议了一个没人要的学习缺口"))
    if q.expect_write and proposed and len(trace.saved) != (1 if q.approve else 0):
        problems.append(say("{n} gap records after the user {decision}", "用户{decision}之后有 {n} 条缺口记录", n=len(trace.saved),
                            decision=say("approved", "批准") if q.approve else say("rejected", "拒绝")))
    return problems


# ---- metrics ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Metric:
    """A rate, the counts behind it, what it counts, and the cases that failed it."""

    name: str
    passed: int
    total: int
    counts: str  # what one unit is: "tasks", "calls", "writes", "failures"
    failures: tuple[str, ...] = ()

    @property
    def rate(self) -> float | None:
        return self.passed / self.total if self.total else None

    def shown(self) -> str:
        return f"{self.passed}/{self.total} = {self.rate:.0%}" if self.total else say("n/a (nothing to count)", "不适用（没有可计数的）")


def first_attempts(trace: TaskTrace) -> list[CallTrace]:
    """The first execution of each model call (a later row for the same call_id is a retry, the
    run after an approval, or a person's rejection)."""
    return [next(c for c in trace.calls if c.call_id == call_id) for call_id in dict.fromkeys(c.call_id for c in trace.calls)]


def tool_selection(traces: list[TaskTrace]) -> Metric:
    """Tasks whose set of tools called equals the expected set (no tool at all for chit-chat)."""
    wrong = [t.question.id for t in traces if set(t.tools) != set(t.question.expected_tools)]
    return Metric("tool selection accuracy", len(traces) - len(wrong), len(traces), "tasks", tuple(wrong))


def argument_validity(traces: list[TaskTrace]) -> Metric:
    """Calls whose first attempt was not refused as INVALID_INPUT or FORBIDDEN (by the app's
    schema and permission steps or by the server's own checks)."""
    firsts = [(t.question.id, c) for t in traces for c in first_attempts(t)]
    wrong = [f"{qid}:{c.name}" for qid, c in firsts if c.outcome in INVALID_CODES]
    return Metric("argument validity rate", len(firsts) - len(wrong), len(firsts), "calls", tuple(wrong))


def citation_correctness(traces: list[TaskTrace]) -> Metric:
    """Answers that cite, or should: every cited note was read in the task, every quote is in it."""
    counted = [t for t in traces if cited_sources(t.answer) or t.question.expect == "cited"]
    wrong = [t.question.id for t in counted if not cited_sources(t.answer) or citation_problems(t.answer, t.read)]
    return Metric("citation correctness", len(counted) - len(wrong), len(counted), "answers", tuple(wrong))


def task_completion(traces: list[TaskTrace]) -> Metric:
    """Completed tasks whose answer, sources and write match the question's expectation."""
    wrong = [t.question.id for t in traces if completion_problems(t)]
    return Metric("task completion", len(traces) - len(wrong), len(traces), "tasks", tuple(wrong))


def write_confirmation(traces: list[TaskTrace]) -> Metric:
    """Writes (by call) whose first attempt stopped at APPROVAL_REQUIRED and that never executed
    without passing the approval step."""
    writes = {}
    for t in traces:
        for c in t.calls:
            if c.name in WRITE_TOOLS:
                writes.setdefault((t.question.id, c.call_id), []).append(c)
    wrong = [f"{qid}:{call_id}" for (qid, call_id), attempts in writes.items()
             if attempts[0].outcome != "APPROVAL_REQUIRED" or any(a.executed and not a.approved for a in attempts)]
    return Metric("write confirmation rate", len(writes) - len(wrong), len(writes), "writes", tuple(wrong))


def failure_recovery(traces: list[TaskTrace]) -> Metric:
    """Recoverable failures followed, in the same task, by a success of the same tool with new
    arguments — or with the same arguments within `RETRY_BOUND` repeats when it was retryable."""
    cases, wrong = 0, []
    for t in traces:
        for i, c in enumerate(t.calls):
            if c.ok or c.outcome not in RECOVERABLE_CODES:
                continue
            retryable = bool((c.result.get("error") or {}).get("retryable"))
            if c.outcome == "UPSTREAM_ERROR" and not retryable:
                continue  # a permanent upstream failure: report it, nothing to recover
            cases += 1
            later = [d for d in t.calls[i + 1 :] if d.name == c.name]
            new_arguments = any(d.ok and d.arguments_text != c.arguments_text for d in later)
            same = [d for d in later if d.arguments_text == c.arguments_text]
            bounded_retry = retryable and len(same) <= RETRY_BOUND and any(d.ok for d in same)
            if not (new_arguments or bounded_retry):
                wrong.append(f"{t.question.id}:{c.name} {c.outcome}")
    return Metric("failure recovery rate", cases - len(wrong), cases, "failures", tuple(wrong))


def claim_grounding(traces: list[TaskTrace]) -> Metric:
    """Claims of the answers (no-tool replies aside) that rest on a note read, a search that found
    nothing, or a record saved in the same task (`grounding.claims`: by meaning, not by wording).
    An answer that claims nothing (empty, or only a pleasantry) counts as one claim that fails: an
    answer with no content must not score full grounding."""
    counted = [t for t in traces if t.question.expect != "no_tool"]
    total, wrong = 0, []
    for t in counted:
        found = grounding_claims(t.answer, t)
        total += max(1, len(found))
        if not found:
            wrong.append(say("{id}: (no claim)", "{id}：（没有陈述）", id=t.question.id))
        wrong += [f"{t.question.id}: {c.text[:40]!r}" for c in found if not c.grounded]
    return Metric("claim grounding", total - len(wrong), total, "claims", tuple(wrong))


def grounding_claims(answer: str | None, trace: TaskTrace) -> list[Claim]:
    """Every claim of `answer`, checked against what `trace` read, found and saved."""
    return claims(answer, trace.read, found=trace.found, saved=[r["id"] for r in trace.saved])


def compute_metrics(traces: list[TaskTrace]) -> list[Metric]:
    """The six rates in the order the source lists them, then claim grounding."""
    return [tool_selection(traces), argument_validity(traces), citation_correctness(traces),
            task_completion(traces), write_confirmation(traces), failure_recovery(traces),
            claim_grounding(traces)]  # fmt: skip


def cost_summary(traces: list[TaskTrace]) -> str:
    """Model requests and tokens per task (exact), and time per task (bucketed)."""
    if not traces:
        return say("(no tasks)", "（没有任务）")
    turns = [t.turns for t in traces]
    tokens = [t.tokens for t in traces]
    buckets: dict[str, int] = {}
    for t in traces:
        buckets[time_bucket(t.seconds)] = buckets.get(time_bucket(t.seconds), 0) + 1
    times = ", ".join(f"{label} ×{n}" for _, label in TIME_BUCKETS if (n := buckets.get(label)))
    return say("model requests per task: mean {turns:.1f}, max {most_turns}\ntokens per task: mean {tokens:.0f}, max "
               "{most_tokens}\ntime per task (bucketed): {times}",
               "每个任务的模型请求数：平均 {turns:.1f}，最多 {most_turns}\n每个任务的 token 数：平均 {tokens:.0f}，最多 "
               "{most_tokens}\n每个任务的时间（按区间）：{times}", turns=sum(turns) / len(turns), most_turns=max(turns),
               tokens=sum(tokens) / len(tokens), most_tokens=max(tokens), times=times)  # fmt: skip


def metrics_table(metrics: list[Metric]) -> str:
    """The metrics as a plain-text table, with the cases that failed each."""
    rows = [(say("metric", "指标"), say("result", "结果"), say("counted over", "计数对象"), say("failed", "未通过"))]
    rows += [(metric_label(m.name), m.shown(), say(m.counts, COUNTED_OVER_ZH.get(m.counts, m.counts)),
              ", ".join(m.failures) or "-") for m in metrics]  # fmt: skip
    widths = [max(display_width(row[i]) for row in rows) for i in range(3)]
    return "\n".join("  ".join(pad(cell, w) for cell, w in zip(row, widths)) + "  " + row[3] for row in rows)


def bar_chart(metrics: list[Metric], width: int = 30) -> str:
    """A text bar chart of the rates (no plotting library needed, identical on every machine)."""
    name_width = max(display_width(metric_label(m.name)) for m in metrics)
    lines = []
    for m in metrics:
        if m.rate is None:
            lines.append(f"{pad(metric_label(m.name), name_width)}  {'·' * width}  n/a")
            continue
        filled = round(m.rate * width)
        lines.append(f"{pad(metric_label(m.name), name_width)}  {'█' * filled}{'·' * (width - filled)}  {m.rate:4.0%}")
    return "\n".join(lines)


def tasks_table(traces: list[TaskTrace]) -> str:
    """One row per task: tools chosen, model requests, tokens, time bucket, status, completion."""
    rows = [tuple(say(en, zh) for en, zh in (("task", "任务"), ("kind", "种类"), ("tools chosen", "选择的工具"),
             ("requests", "请求数"), ("tokens", "token 数"), ("time", "时间"), ("status", "状态"), ("completed", "完成")))]
    for t in traces:
        rows.append((t.question.id, kind_label(t.question.kind), ",".join(t.tools) or "-", str(t.turns), str(t.tokens),
                     time_bucket(t.seconds), t.status, "✓" if not completion_problems(t) else "✗"))  # fmt: skip
    widths = [max(display_width(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(pad(cell, w) for cell, w in zip(row, widths)).rstrip() for row in rows)


# ---- diagnosis: the source's failure table, tied to what the traces show ------------------------


DIAGNOSIS: dict[str, Row] = {key: ROWS[letter] for key, letter in (
    ("answers_without_tools", "A"), ("wrong_tool", "B"), ("invalid_arguments", "C"), ("answer_unsupported", "D"),
    ("guesses_after_failure", "E"), ("write_twice", "F"), ("too_many_rounds", "G"), ("write_without_approval", "H"),
)}
"""What `diagnose` looks for → the row of the source's failure table (`failure_table`) it points to."""


def diagnose(trace: TaskTrace) -> list[str]:
    """The `DIAGNOSIS` rows whose symptom this trace shows (keys, in table order)."""
    q, found = trace.question, set()
    if q.expected_tools and not trace.calls and trace.answer and not says_evidence_missing(trace.answer):
        found.add("answers_without_tools")
    elif trace.calls and set(trace.tools) != set(q.expected_tools):
        found.add("wrong_tool")
    if any(c.outcome in INVALID_CODES for c in first_attempts(trace)):
        found.add("invalid_arguments")
    if citation_problems(trace.answer, trace.read) or (q.expect == "cited" and trace.read
                                                       and not cited_sources(trace.answer)) or (
            trace.read and trace.ungrounded()):  # row D: the tools ran, the answer says more than they returned
        found.add("answer_unsupported")
    failed = [c for c in trace.calls if not c.ok and c.outcome != "APPROVAL_REQUIRED"]
    if failed and trace.answer and not says_evidence_missing(trace.answer) and citation_problems(trace.answer, trace.read):
        found.add("guesses_after_failure")
    fresh = [c for c in trace.calls if c.name in WRITE_TOOLS and c.ok and not c.result["data"].get("replayed")]
    if len(fresh) > len({c.call_id for c in fresh}) or len(trace.saved) > len({c.call_id for c in fresh}):
        found.add("write_twice")
    if trace.turns > TURN_BUDGET:
        found.add("too_many_rounds")
    if any(c.name in WRITE_TOOLS and c.executed and not c.approved for c in trace.calls):
        found.add("write_without_approval")
    return [key for key in DIAGNOSIS if key in found]


def diagnosis_table(traces: list[TaskTrace]) -> str:
    """The diagnosis rows that at least one trace shows, each with the tasks that show it."""
    shown: dict[str, list[str]] = {}
    for t in traces:
        for key in diagnose(t):
            shown.setdefault(key, []).append(t.question.id)
    if not shown:
        return say("(no symptom from the diagnosis table in these traces)", "（这些轨迹里没有失败诊断表上的症状）")
    lines = []
    for key, ids in shown.items():
        row = DIAGNOSIS[key]
        glossed = " · ".join(check if CHECKS_ZH[check] == check else f"{check}（{CHECKS_ZH[check]}）"
                             for check in row.checks)  # the zh-CN gloss of `failure_table`; the checks stay as named
        # The English edition names the symptom in English only (the source's own row name is Chinese).
        lines += [say("{letter}  {symptom} — tasks: {ids}", "{letter}  {source}（任务：{ids}）",
                      letter=row.letter, symptom=row.symptom, source=row.source, ids=", ".join(ids)),
                  say("    likely cause: {cause}", "    可能的原因：{cause_zh}", cause=row.cause, cause_zh=CAUSES_ZH[row.letter]),
                  say("    check first:  {checks}", "    先检查：{glossed}", checks=" · ".join(row.checks), glossed=glossed)]  # fmt: skip
    return "\n".join(lines)


# ---- browsing ----------------------------------------------------------------------------------


class TraceBrowser(TextFallback):
    """Pick a task from a dropdown and read its trace. Without widgets (GitHub, a terminal, a
    test) it shows as text: the task list and the selected trace (`text()`)."""

    def __init__(self, traces: list[TaskTrace], selected: str | None = None) -> None:
        self.traces = {t.question.id: t for t in traces}
        first = selected if selected in self.traces else next(iter(self.traces))
        options = [(f"{t.question.id} · {kind_label(t.question.kind)} · {t.question.question[:50]}", t.question.id)
                   for t in traces]  # fmt: skip
        self.dropdown = widgets.Dropdown(options=options, value=first, description=say("task", "任务"),
                                         layout=widgets.Layout(width="95%"))  # fmt: skip
        self.view = widgets.HTML(self._html(first))
        self.dropdown.observe(lambda change: self.select(change["new"]), names="value")
        self.widget = widgets.VBox([self.dropdown, self.view])

    @property
    def selected(self) -> str:
        return self.dropdown.value

    def select(self, task_id: str) -> None:
        """Show the trace of `task_id` (what choosing it in the dropdown does)."""
        if self.dropdown.value != task_id:
            self.dropdown.value = task_id  # observe() calls back here
            return
        self.view.value = self._html(task_id)

    def _html(self, task_id: str) -> str:
        return f"<pre style='white-space:pre-wrap;font-size:12px'>{html.escape(self.traces[task_id].text())}</pre>"

    def text(self) -> str:
        tasks = ", ".join(self.traces)
        return say("Trace browser: {n} tasks ({tasks})\nselected:\n{trace}", "轨迹浏览器：{n} 个任务（{tasks}）\n选中的：\n{trace}",
                   n=len(self.traces), tasks=tasks, trace=self.traces[self.selected].text())



def main(argv: list[str] | None = None) -> None:
    """`python -m course_lib.evaluation [--questions FILE]`: run the evaluation, print the tables."""
    from course_lib.backend import describe_backend

    parser = argparse.ArgumentParser(prog="python -m course_lib.evaluation", description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=Path, default=None, help="questions JSON (default: fixtures/eval_questions.json)")
    options = parser.parse_args(argv)
    print(describe_backend())
    questions = load_questions(options.questions)
    traces = run_eval(questions, client=client_for(questions))  # on a paid endpoint: the cost first
    metrics = compute_metrics(traces)
    print(tasks_table(traces), "", metrics_table(metrics), "", bar_chart(metrics), "", cost_summary(traces), "",
          diagnosis_table(traces), sep="\n")  # fmt: skip


if __name__ == "__main__":
    main()
