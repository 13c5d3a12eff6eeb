"""The evaluation: questions, traces from real runs, and metrics computed from those traces."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from dataclasses import replace

import pytest

from course_lib.evaluation import (DIAGNOSIS, TaskTrace, TraceBrowser, argument_validity, bar_chart,
                                   citation_correctness, citation_problems, cited_sources, completion_problems,
                                   compute_metrics, cost_summary, diagnose, diagnosis_table, failure_recovery,
                                   load_questions, metrics_table, run_eval, run_task, tasks_table, time_bucket,
                                   task_completion, tool_selection, write_confirmation, claim_grounding)  # fmt: skip


@pytest.fixture(scope="module")
def traces():
    saved = os.environ.pop("OPENAI_API_KEY", None)
    try:
        yield run_eval()
    finally:
        if saved is not None:
            os.environ["OPENAI_API_KEY"] = saved


def by_id(traces: list[TaskTrace]) -> dict[str, TaskTrace]:
    return {t.question.id: t for t in traces}


def test_the_question_set_covers_every_kind():
    questions = load_questions()
    assert len(questions) >= 20
    kinds = Counter(q.kind for q in questions)
    assert set(kinds) == {"answer", "chat", "missing", "gap", "recover"} and kinds["recover"] >= 2
    assert any(q.expect_write and not q.approve for q in questions)  # a write the user rejects
    assert all(set(q.expected_tools) <= {"search_notes", "read_note", "save_learning_gap"} for q in questions)


def test_bad_question_files_are_refused(tmp_path):
    q = {"id": "a", "question": "?", "kind": "answer", "expected_tools": []}
    (tmp_path / "bad.json").write_text(json.dumps({"questions": [{**q, "expect": "vibes"}]}))
    with pytest.raises(ValueError, match="expect must be"):
        load_questions(tmp_path / "bad.json")
    (tmp_path / "twice.json").write_text(json.dumps({"questions": [q, q]}))
    with pytest.raises(ValueError, match="unique"):
        load_questions(tmp_path / "twice.json")


def test_the_offline_model_meets_most_expectations_and_the_misses_are_named(traces):
    metrics = {m.name: m for m in compute_metrics(traces)}
    assert metrics["tool selection accuracy"].failures == ()
    # Four answers quote the note but leave out what the question asked (the points): not completed.
    assert metrics["task completion"].failures == ("q03", "q04", "q06", "q23")
    assert completion_problems(by_id(traces)["q23"]) == ["does not say: must wait"]
    assert metrics["claim grounding"].shown() == "51/51 = 100%"
    arguments = metrics["argument validity rate"]
    assert arguments.failures == ("q22:search_notes",) and arguments.passed == arguments.total - 1
    assert metrics["write confirmation rate"].shown() == "4/4 = 100%"
    assert metrics["failure recovery rate"].shown() == "2/2 = 100%"
    assert metrics["citation correctness"].failures == ()


def test_a_trace_records_turns_why_validation_and_outputs(traces):
    moved = by_id(traces)["q23"]
    assert [(c.turn, c.name, c.outcome) for c in moved.calls] == [
        (1, "search_notes", "ok"), (2, "read_note", "NOT_FOUND"), (3, "search_notes", "ok"), (4, "read_note", "ok")]  # fmt: skip
    assert moved.calls[0].why == "the question"
    assert moved.calls[2].why == "after read_note → NOT_FOUND"
    assert moved.calls[1].validation == "allowlist ✓ parse ✓ schema ✓ permission ✓ execute ✗ NOT_FOUND"
    assert moved.read == {"/notes/archive/parallel-calls.md": moved.read["/notes/archive/parallel-calls.md"]}
    assert moved.turns == 5 and moved.tokens > 0 and moved.seconds > 0
    invalid = by_id(traces)["q22"].calls[0]
    assert (invalid.outcome, invalid.steps[-1]) == ("INVALID_INPUT", ("schema", "INVALID_INPUT"))
    assert invalid.output == "INVALID_INPUT: limit: must be ≤ 20 (got 30)"


def test_approval_and_rejection_are_both_in_the_trace(traces):
    approved, rejected = by_id(traces)["q18"], by_id(traces)["q20"]
    writes = [c for c in approved.calls if c.name == "save_learning_gap"]
    assert [(c.outcome, c.approved, c.executed) for c in writes] == [("APPROVAL_REQUIRED", False, False),
                                                                     ("ok", True, True)]  # fmt: skip
    assert len(approved.saved) == 1
    writes = [c for c in rejected.calls if c.name == "save_learning_gap"]
    assert [c.validation for c in writes] == ["allowlist ✓ parse ✓ schema ✓ permission ✓ approval ✗ APPROVAL_REQUIRED",
                                              "approval ✗ rejected by a person"]  # fmt: skip
    assert rejected.saved == []


def test_citations_are_parsed_and_checked_against_what_was_read():
    answer = "From your notes:\n- Retry only what recovers. [/notes/retries.md:2]\n\nSources: /notes/retries.md, /notes/x.md"
    assert cited_sources(answer) == ["/notes/retries.md", "/notes/x.md"]
    read = {"/notes/retries.md": "# Retries\nRetry only what recovers.\nTIMEOUT is worth another attempt.\n"}
    assert citation_problems(answer, read) == ["cites /notes/x.md, which was never read"]
    invented = "- Retry everything. [/notes/retries.md:2]\n\nSources: /notes/retries.md"
    assert citation_problems(invented, read) == ["cites /notes/retries.md:2 for what it does not say: 'Retry everything.'"]
    elsewhere = "- A TIMEOUT deserves another try. [/notes/retries.md:2]"  # in other words, on another line
    assert citation_problems(elsewhere, read) == [
        "cites /notes/retries.md:2 for a statement that rests on /notes/retries.md:3: 'A TIMEOUT deserves another try.'"]
    assert cited_sources("I could not read /notes/a.md (NOT_FOUND).") == []  # a mention is not a citation
    markdown = "* **Retry only what recovers** ([/notes/retries.md:2])\n\n**Sources**\n- /notes/retries.md\n- /notes/y.md"
    assert cited_sources(markdown) == ["/notes/retries.md", "/notes/y.md"]


def test_an_answer_from_memory_fails_completion_citation_and_diagnosis(traces):
    honest = by_id(traces)["q15"]
    fabricated = replace(honest, answer="Freeze the backbone first.\n\nSources: /notes/strict-mode.md")
    assert completion_problems(fabricated) == [
        "should say the evidence is missing and cite nothing",
        "claims what nothing read supports: 'Freeze the backbone first.' (not found anywhere: no note was read)"]
    assert claim_grounding([fabricated]).shown() == "0/1 = 0%"
    assert citation_correctness([fabricated]).shown() == "0/1 = 0%"
    assert diagnose(fabricated) == ["answer_unsupported"]
    no_tools = replace(by_id(traces)["q01"], calls=[], read={}, answer="call_id is the model's id.")
    assert diagnose(no_tools) == ["answers_without_tools"]
    assert tool_selection([no_tools]).failures == ("q01",)


def test_metrics_count_from_traces_not_from_expectations(traces):
    chat = by_id(traces)["q13"]
    searched = replace(chat, calls=by_id(traces)["q15"].calls)
    assert tool_selection([chat, searched]).shown() == "1/2 = 50%"
    assert argument_validity([chat]).shown() == "n/a (nothing to count)"
    gap = by_id(traces)["q18"]
    not_stopped = replace(gap, calls=[c for c in gap.calls if c.outcome != "APPROVAL_REQUIRED"])
    assert write_confirmation([not_stopped]).shown() == "0/1 = 0%"
    skipped = [replace(c, steps=tuple(s for s in c.steps if s[0] != "approval")) for c in not_stopped.calls]
    assert diagnose(replace(gap, calls=skipped)) == ["write_without_approval"]
    moved = by_id(traces)["q23"]
    gave_up = replace(moved, calls=moved.calls[:2])
    assert failure_recovery([gave_up]).shown() == "0/1 = 0%"


def test_tables_chart_and_cost_are_plain_deterministic_text(traces):
    metrics = compute_metrics(traces)
    table = metrics_table(metrics)
    assert table.splitlines()[0].split() == ["metric", "result", "counted", "over", "failed"]
    assert table.splitlines()[2].split()[-1] == "q22:search_notes"
    chart = bar_chart(metrics).splitlines()
    assert len(chart) == 7 and chart[0].endswith("100%") and "█" * 30 in chart[0]
    assert tasks_table(traces).count("\n") == len(traces)
    times = cost_summary(traces).splitlines()[2]  # measured: on a loaded machine a task may take over 2 s
    assert times.startswith("time per task (bucketed): ") and sum(int(n) for n in re.findall(r"×(\d+)", times)) == len(traces)
    assert diagnosis_table(traces).splitlines()[:3] == [
        "C  arguments are often invalid — tasks: q22",
        "    likely cause: the schema is too loose or its field descriptions are vague",
        "    check first:  strict mode · enums · field descriptions"]
    assert [time_bucket(s) for s in (0.01, 1.99, 2.0, 45, 90)] == ["< 2 s", "< 2 s", "2–10 s", "10–60 s", "≥ 60 s"]
    assert [row.letter for row in DIAGNOSIS.values()] == list("ABCDEFGH")  # one key per row of the table


def test_the_trace_browser_shows_the_selected_trace_as_text(traces):
    browser = TraceBrowser(traces, selected="q22")
    assert browser.text().splitlines()[0] == f"Trace browser: {len(traces)} tasks ({', '.join(t.question.id for t in traces)})"
    assert "q22 [recover]" in browser.text()
    browser.dropdown.value = "q13"
    assert "q13 [chat] Hi there!" in browser.text() and "(no tool calls)" in browser.view.value
    assert "text/plain" in browser._repr_mimebundle_()


def test_run_task_leaves_the_course_notes_untouched(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    moved = next(q for q in load_questions() if q.setup)
    trace = run_task(moved)
    assert trace.status == "completed"
    from course_lib.notes_server import notes_dir

    assert (notes_dir() / "parallel-calls.md").exists() and not (notes_dir() / "archive").exists()


def test_an_answer_that_leaves_out_what_was_asked_is_not_completed(traces):
    # Regression: two quotes about parallel reads counted as a completed answer to "… and which must wait?".
    moved = by_id(traces)["q23"]
    assert task_completion([moved]).shown() == "0/1 = 0%"
    complete = replace(moved, answer=moved.answer.replace(
        "\n\nSources:",
        "\n- A step that needs the result of another must wait for it: search first, then read the hits in the next turn."
        " [/notes/archive/parallel-calls.md]\n\nSources:"))
    assert completion_problems(complete) == []


def test_no_answer_says_the_notes_lack_what_the_notes_read_say(traces):
    # Regression: "Your notes do not mention: workflows." beside a note read titled "Workflow vs Agent",
    # and "Your notes do not mention: tool." about a note on function calls, both counted as grounded.
    from course_lib.grounding import claims

    negative = [(t.question.id, c) for t in traces for c in claims(t.answer, t.read, found=t.found)
                if "do not mention" in c.text]  # fmt: skip
    assert all(c.grounded for _, c in negative)
    assert [qid for qid, _ in negative] == ["q16", "q19"]  # both "the evidence is missing: … do not mention …"
    assert not any("do not mention" in (t.answer or "") for t in traces if t.question.expect == "cited")
    stub_read = by_id(traces)["q24"]
    assert "/notes/workflow-vs-agent.md" in stub_read.read and "workflows" not in stub_read.answer
    old = replace(stub_read, answer=stub_read.answer.replace("\n/notes/workflow", "\nYour notes do not mention: workflows.\n"
                                                            "/notes/workflow"))  # fmt: skip
    [claim] = old.ungrounded()
    assert claim.why == "/notes/workflow-vs-agent.md does mention 'workflows'"


def test_a_false_claim_about_the_notes_fails_grounding_and_completion(traces):
    q01 = by_id(traces)["q01"]
    claimed = replace(q01, answer=q01.answer.replace("\n\nSources:", "\nYour notes do not mention: call_id.\n\nSources:"))
    [claim] = claimed.ungrounded()
    assert claim.why == "/notes/call-id-vs-mcp-id.md does mention 'call_id'"
    assert claim_grounding([claimed]).failures == ("q01: 'Your notes do not mention: call_id.'",)
    assert any(p.startswith("claims what nothing read supports") for p in completion_problems(claimed))
    assert "answer_unsupported" in diagnose(claimed)


def test_the_chinese_edition_prints_the_same_figures_under_chinese_labels(traces, monkeypatch):
    english = (metrics_table(compute_metrics(traces)), tasks_table(traces), cost_summary(traces),
               diagnosis_table(traces), TraceBrowser(traces, selected="q23").text())  # fmt: skip
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    metrics = compute_metrics(traces)
    assert [m.name for m in metrics][0] == "tool selection accuracy"  # the identifier code filters on stays English
    table = metrics_table(metrics).splitlines()
    assert table[0] == "指标            结果          计数对象  未通过"  # padded by display width: 工 takes two columns
    assert table[1] == "工具选择准确率  24/24 = 100%  任务      -"
    assert table[2] == "参数合法率      55/56 = 98%   调用      q22:search_notes"
    chart = bar_chart(metrics).splitlines()
    assert chart[0] == "工具选择准确率  " + "█" * 30 + "  100%" and chart[1].startswith("参数合法率      █")
    assert tasks_table(traces).splitlines()[0].split() == ["任务", "种类", "选择的工具", "请求数", "token", "数", "时间",
                                                           "状态", "完成"]  # fmt: skip
    chinese_rows = [row.split() for row in tasks_table(traces).splitlines()[1:]]
    english_rows = [row.split() for row in english[1].splitlines()[1:]]
    assert [r[:1] + r[2:] for r in chinese_rows] == [r[:1] + r[2:] for r in english_rows]  # the same rows, figures and all
    assert [r[1] for r in chinese_rows] == [kind_label(r[1]) for r in english_rows] and chinese_rows[0][1] == "回答"
    assert cost_summary(traces).splitlines()[:2] == ["每个任务的模型请求数：平均 3.1，最多 5", "每个任务的 token 数：平均 3518，最多 6697"]
    assert cost_summary(traces).splitlines()[2].startswith("每个任务的时间（按区间）：")
    assert diagnosis_table(traces).splitlines()[:3] == [  # the source's symptom, failure_table's Chinese cause and glosses
        "C  参数经常不合法（任务：q22）", "    可能的原因：schema 太宽松，或者字段描述含糊",
        "    先检查：strict mode（严格模式） · enums（枚举） · field descriptions（字段描述）"]
    browsed = TraceBrowser(traces, selected="q23").text().splitlines()
    assert browsed[0].startswith("轨迹浏览器：24 个任务（q01, q02,") and browsed[1] == "选中的："
    assert browsed[2] == "q23 [恢复] Which tool calls may run in parallel, and which must wait?"
    assert browsed[4].startswith("状态：completed  原因：None  模型请求数：5  token 数：6697")
    assert completion_problems(by_id(traces)["q23"]) == ["没有讲到：must wait"]
    monkeypatch.setenv("COURSE_LANG", "en")
    assert english == (metrics_table(compute_metrics(traces)), tasks_table(traces), cost_summary(traces),
                       diagnosis_table(traces), TraceBrowser(traces, selected="q23").text())  # fmt: skip


def test_a_result_summary_is_in_the_edition_s_words_and_keeps_paths_codes_and_messages(monkeypatch):
    from course_lib.evaluation import summarize

    hits = {"ok": True, "data": {"query": "q", "hits": [{"path": "/notes/retries.md", "score": 4.966}]}}
    note = {"ok": True, "data": {"path": "/notes/retries.md", "title": "Retries", "updated": "2026-09-20", "text": "x" * 12}}
    record = {"ok": True, "data": {"record_id": "gap-0002", "replayed": True}}
    none = {"ok": True, "data": {"query": "q", "hits": []}}
    failed = {"ok": False, "error": {"code": "NOT_FOUND", "message": "'/notes/x.md': no such file"}}
    monkeypatch.setenv("COURSE_LANG", "en")
    assert [summarize(r) for r in (hits, note, record, none, failed)] == [
        "1 hit: /notes/retries.md (4.966)", "/notes/retries.md · 'Retries' · updated 2026-09-20 · 12 chars",
        "record gap-0002 (replayed: no new record)", "0 hits", "NOT_FOUND: '/notes/x.md': no such file"]
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert [summarize(r) for r in (hits, note, record, none, failed)] == [
        "1 条命中：/notes/retries.md (4.966)", "/notes/retries.md · 'Retries' · 更新于 2026-09-20 · 12 个字符",
        "记录 gap-0002（重放：没有新记录）", "0 条命中", "NOT_FOUND: '/notes/x.md': no such file"]


def test_a_diagnosis_row_prints_the_edition_s_symptom(monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "en")
    assert DIAGNOSIS["answer_unsupported"].text == "the tool succeeded but the answer is wrong"
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert DIAGNOSIS["answer_unsupported"].text == "工具成功但回答错误"
    assert argument_validity([]).shown() == "不适用（没有可计数的）"


def test_the_validation_line_names_the_steps_in_the_editions_language(traces, monkeypatch):
    """The codes and the records stay English; only the printed step names follow the edition."""
    call = by_id(traces)["q23"].calls[1]  # the read that found the note moved: NOT_FOUND
    monkeypatch.setenv("COURSE_LANG", "en")
    assert call.validation == "allowlist ✓ parse ✓ schema ✓ permission ✓ execute ✗ NOT_FOUND"
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert call.validation == "允许列表 ✓ 解析 ✓ schema ✓ 权限 ✓ 执行 ✗ NOT_FOUND"
    assert call.steps[0] == ("allowlist", "ok")


# ---- the zh-CN edition: Chinese questions over the Chinese notes ---------------------------------

from course_lib.evaluation import edition_notes, kind_label, questions_file  # noqa: E402
from course_lib.grounding import claims  # noqa: E402
from course_lib.offline_model.terms import bridged_terms, key_terms  # noqa: E402

CJK = __import__("re").compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def zh_traces():
    saved = os.environ.pop("OPENAI_API_KEY", None)
    try:
        yield run_eval(load_questions(questions_file("zh-CN")), root=edition_notes("zh-CN"))
    finally:
        if saved is not None:
            os.environ["OPENAI_API_KEY"] = saved


def test_the_zh_edition_has_its_own_notes_and_questions(monkeypatch):
    english, chinese = edition_notes("en"), edition_notes("zh-CN")
    assert chinese != english and chinese.parent.name == "zh-CN"
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert edition_notes() == chinese and questions_file().parent.name == "zh-CN"
    assert sorted(p.name for p in chinese.glob("*.md")) == sorted(p.name for p in english.glob("*.md"))
    for zh_note in chinese.glob("*.md"):
        en_lines = (english / zh_note.name).read_text(encoding="utf-8").splitlines()
        zh_lines = zh_note.read_text(encoding="utf-8").splitlines()
        assert [l.startswith("Updated:") and l for l in zh_lines] == [l.startswith("Updated:") and l for l in en_lines]
        assert ("TODO" in "\n".join(zh_lines)) == ("TODO" in "\n".join(en_lines)), zh_note.name  # the same two stubs
        body = [l for l in zh_lines[1:] if l.strip() and not l.startswith("Updated:")]
        assert all(CJK.search(l) for l in body), zh_note.name  # translated, every sentence of it


def test_the_chinese_questions_are_the_english_ones_asked_in_chinese():
    english, chinese = load_questions(questions_file("en")), load_questions(questions_file("zh-CN"))
    assert len(chinese) >= 16 and Counter(q.kind for q in chinese) == Counter(q.kind for q in english)
    same = ("id", "kind", "expected_tools", "expected_sources", "expect", "expect_write", "approve", "setup")
    assert [[getattr(q, f) for f in same] for q in chinese] == [[getattr(q, f) for f in same] for q in english]
    assert all(CJK.search(q.question) for q in chinese)


def test_chinese_questions_are_searched_in_chinese_and_answered_in_chinese_with_sources(zh_traces):
    for t in zh_traces:
        searched = [json.loads(c.arguments_text)["query"] for c in t.calls if c.name == "search_notes"]
        # the question's own words: no English word the bridge would add (idempotency, approval, ...)
        assert all(query == " ".join(key_terms(t.question.question)) for query in searched), t.question.id
        assert t.answer and CJK.search(t.answer), t.question.id
        assert "From your notes" not in t.answer and "Sources:" not in t.answer and "evidence is missing" not in t.answer
        if t.question.expect == "cited":
            assert t.answer.startswith("根据你的笔记：\n- ") and set(t.question.expected_sources) <= set(cited_sources(t.answer))
            assert citation_problems(t.answer, t.read) == [], t.question.id
    bridged = {t.question.id for t in zh_traces if bridged_terms(t.question.question) != key_terms(t.question.question)}
    assert {"q07", "q08", "q24"} <= bridged  # questions whose English bridge would have been different


def test_no_chinese_answer_says_the_notes_lack_what_they_say(zh_traces):
    negative = [c for t in zh_traces for c in claims(t.answer, t.read, found=t.found) if "没有提到" in c.text]
    assert negative and all(c.grounded for c in negative)
    strict = next(t for t in zh_traces if t.question.id == "q03")
    assert "没有提到" not in strict.answer and "/notes/strict-mode.md" in cited_sources(strict.answer)


def test_the_chinese_evaluation_runs_and_its_figures(zh_traces, monkeypatch):
    metrics = {m.name: m for m in compute_metrics(zh_traces)}
    assert metrics["tool selection accuracy"].shown() == "24/24 = 100%"
    assert metrics["argument validity rate"].failures == ("q22:search_notes",)
    assert metrics["citation correctness"].shown() == "16/16 = 100%"
    assert metrics["task completion"].failures == ("q03", "q04", "q23")
    assert metrics["claim grounding"].shown() == "50/50 = 100%"
    assert (metrics["write confirmation rate"].shown(), metrics["failure recovery rate"].shown()) == ("4/4 = 100%", "2/2 = 100%")
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert metrics_table(list(metrics.values())).splitlines()[4] == "任务完成率      21/24 = 88%   任务      q03, q04, q23"
    browsed = TraceBrowser(zh_traces, selected="q18")
    assert "q18 [缺口] 我对工作流和智能体的理解哪里不完整？保存一个学习缺口。" in browsed.text()
    assert "预期：工具 ['search_notes', 'read_note', 'save_learning_gap']，来源 []，说明证据不足，一次写入（用户批准）" in browsed.text()
    assert browsed.dropdown.options[0][0] == "q01 · 回答 · call_id 和 MCP 的 JSON-RPC id 有什么区别？"
    assert tasks_table(zh_traces).splitlines()[13].split()[:2] == ["q13", "闲聊"] and kind_label("recover") == "恢复"


# ---- the same answers as other models write them (issues 27 and 28) ------------------------------

import answer_variants  # noqa: E402


@pytest.mark.parametrize("edition", ["en", "zh-CN"])
@pytest.mark.parametrize("variant", list(answer_variants.VARIANTS))
def test_a_closing_pleasantry_markdown_reordering_or_other_words_move_no_figure(traces, zh_traces, edition, variant):
    # Regression (issue 27): with a closing pleasantry only, 2 of 24 tasks passed instead of 20.
    runs = traces if edition == "en" else zh_traces
    change = answer_variants.VARIANTS[variant]
    varied = [replace(t, answer=change(t.answer)) if t.answer and t.question.expect != "no_tool" else t for t in runs]
    before, after = compute_metrics(runs), compute_metrics(varied)
    assert [(m.name, m.failures) for m in after if m.name != "claim grounding"] == [
        (m.name, m.failures) for m in before if m.name != "claim grounding"]
    grounding = next(m for m in after if m.name == "claim grounding")
    assert grounding.failures == () and grounding.total >= 50
    assert [t.question.id for t in varied if completion_problems(t)] == (
        ["q03", "q04", "q06", "q23"] if edition == "en" else ["q03", "q04", "q23"])


@pytest.mark.parametrize("edition", ["en", "zh-CN"])
def test_answers_turned_around_or_empty_cannot_score_full_grounding(traces, zh_traces, edition):
    # Regression (issue 28): an answer reversing every quoted line, and an answer with no content, scored 100%.
    runs = traces if edition == "en" else zh_traces
    counted = [t for t in runs if t.answer and t.question.expect != "no_tool"]
    turned = {t.question.id: replace(t, answer=answer_variants.reversed_meaning(t.answer)) for t in counted}
    reversed_lines = sum(answer_variants.reverses(t.answer) for t in counted)
    assert reversed_lines >= (20 if edition == "en" else 15)
    assert sum(len(t.ungrounded()) for t in turned.values()) == reversed_lines  # every reversed line, and nothing else
    assert all(c.contradicted for t in turned.values() for c in t.ungrounded())
    grounding = claim_grounding(list(turned.values()))
    assert grounding.passed == grounding.total - reversed_lines
    for empty in ("", "I hope this helps. Just ask if you want more!", "需要更多内容的话，再叫我就好！"):
        nothing = [replace(t, answer=empty) for t in counted]
        assert claim_grounding(nothing).shown() == f"0/{len(counted)} = 0%"
        assert all(completion_problems(t) for t in nothing)
