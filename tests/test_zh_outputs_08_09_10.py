"""The stored zh-CN twins of notebooks 08, 09 and 10: the labels and prose a learner reads are Chinese
(the explorer's change words, the comparison's version columns, the diagnosis, the result summaries
of a trace, the comments in the code cells), while the values beside them (panel names, metric keys,
paths, error codes, the notes' and the recorded runs' own English) stay as they are, and the English
notebooks keep their English words."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
EXPLORE, CAPSTONE, INTERVIEW = "08_explore_which_objects_change", "09_capstone_notes_assistant", "10_interview_prep"


def cells(path: Path) -> dict[str, tuple[str, str]]:
    """Cell id → (its source, the text of its stored stream and text/plain outputs)."""
    found = {}
    for c in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        out = "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                      for o in c.get("outputs", []))  # fmt: skip
        found[c["id"]] = ("".join(c["source"]), out)
    return found


@pytest.fixture(scope="module")
def zh() -> dict[str, dict[str, tuple[str, str]]]:
    return {stem: cells(NOTEBOOKS / "zh-CN" / f"{stem}.ipynb") for stem in (EXPLORE, CAPSTONE, INTERVIEW)}


@pytest.fixture(scope="module")
def en() -> dict[str, dict[str, tuple[str, str]]]:
    return {stem: cells(NOTEBOOKS / f"{stem}.ipynb") for stem in (EXPLORE, CAPSTONE, INTERVIEW)}


def test_08_the_explorer_says_what_changed_in_chinese_and_keeps_the_panel_names(zh, en):
    _, out = zh[EXPLORE]["1985c572"]
    assert "规则    input_schema          未变化" in out and "值      arguments             已变化     '20' → '5'" in out
    assert "unchanged" not in out and "changed" not in out
    assert "rule    input_schema" in en[EXPLORE]["1985c572"][1]


def test_08_every_experiment_names_its_baseline_in_chinese(zh, en):
    _, out = zh[EXPLORE]["cc96e277"]
    assert "基线 · 模型调用 fs__read_text_file" in out and "input_schema          基线" in out
    assert "与第 1 次运行比较 · " in zh[EXPLORE]["1985c572"][1] and "与第 2 次运行比较 · " in zh[EXPLORE]["03c592be"][1]
    assert "与第 2 次运行比较 · " in zh[EXPLORE]["d95914fa"][1]  # the outside path against section 2's head-5 run
    assert "baseline" not in out and "compared with" not in zh[EXPLORE]["1985c572"][1]
    assert "compared with run 1 · " in en[EXPLORE]["1985c572"][1] and "the baseline · " in en[EXPLORE]["cc96e277"][1]
    assert "# 基线：第 2 节的运行，同样的请求真正执行过" in zh[EXPLORE]["03c592be"][0]


def test_08_the_code_comments_are_chinese(zh, en):
    source, _ = zh[EXPLORE]["47f7911b"]
    assert "# 错误：把形状合法当成了读取" in source and "the mistake" not in source
    assert "# 你的答案：一个面板名称的集合" in zh[EXPLORE]["c8fe356b"][0]
    assert "# the mistake: a valid shape taken as a read" in en[EXPLORE]["47f7911b"][0]


def test_09_the_comparison_labels_its_versions_in_chinese(zh, en):
    table = zh[CAPSTONE]["11b3436b"][1].splitlines()
    assert table[0].split() == ["指标", "基线", "去掉搜索步骤", "靠猜"]
    assert "参数合法率      98%   不适用        98%" in table
    assert not any(word in table[0] for word in ("baseline", "no search step", "guesses"))
    assert '"no search step"' in zh[CAPSTONE]["11b3436b"][0]  # the keys code reads (compared["guesses"]) stay
    english = en[CAPSTONE]["11b3436b"][1].splitlines()
    assert english[0].split() == ["metric", "baseline", "no", "search", "step", "guesses"]


def test_09_the_diagnosis_is_the_source_s_symptom_the_metric_keys_stay(zh, en):
    source, out = zh[CAPSTONE]["0a73168e"]
    assert "诊断： ['工具成功但回答错误']" in out and "the tool succeeded" not in out
    assert 'chosen = ("citation correctness", "task completion", "claim grounding")' in source
    assert "diagnosis: ['the tool succeeded but the answer is wrong']" in en[CAPSTONE]["0a73168e"][1]


def test_09_a_trace_s_result_summaries_are_chinese_paths_and_codes_stay(zh, en):
    out = zh[CAPSTONE]["79061394"][1]
    assert '第 1 轮  notes__search_notes {"query":"重试 退避","limit":30}' in out  # a Chinese question, searched in Chinese
    assert "→ 4 条命中：/notes/retries.md (4.986)" in out and "hits" not in out
    assert "→ INVALID_INPUT: limit: must be ≤ 20 (got 30)" in out  # the server's own message
    assert "→ 4 hits: /notes/retries.md (4.966)" in en[CAPSTONE]["79061394"][1]
    browsed = json.dumps(json.loads((NOTEBOOKS / "zh-CN" / f"{CAPSTONE}.ipynb").read_text(encoding="utf-8")),
                         ensure_ascii=False)  # the trace browser's stored widget state too
    assert "· '并行调用' · 更新于 2026-09-28 · 209 个字符 ·" in browsed and "chars" not in browsed
    assert "q23 [恢复] 哪些工具调用可以并行运行，哪些必须等待？" in browsed and "[recover]" not in browsed


def test_09_and_10_the_prose_says_what_stays_english(zh):
    md = json.loads((NOTEBOOKS / "zh-CN" / f"{CAPSTONE}.ipynb").read_text(encoding="utf-8"))["cells"]
    text = {c["id"]: "".join(c["source"]) for c in md}
    assert "verdict 取值（correct、partly 或 not yet" in text["0e903544"]
    assert "这条消息是给模型读的，保持英文原文" in text["9176ea04"]
    md = json.loads((NOTEBOOKS / "zh-CN" / f"{INTERVIEW}.ipynb").read_text(encoding="utf-8"))["cells"]
    assert "都按录制时的英文原样显示" in next("".join(c["source"]) for c in md if c["id"] == "bf5d3f5e")


def test_10_the_exercise_comments_are_chinese(zh, en):
    source = zh[INTERVIEW]["9194ab55"][0]
    assert "# 在这里写你的代码：返回 (result, replayed)" in source and "your code here" not in source
    assert "# your code here: return (result, replayed)" in en[INTERVIEW]["9194ab55"][0]


def test_10_the_drills_the_cards_and_the_traces_read_chinese(zh, en):
    md = {cid: source for cid, (source, _) in zh[INTERVIEW].items()}
    headings = [line for source in md.values() for line in source.splitlines() if line.startswith("### ")]
    assert [h.split(" · ")[0] for h in headings] == [f"### 练习 {n}" for n in range(1, 9)], headings
    assert not [h for h in headings if "Drill" in h]
    assert "### Drill 7 · Diagnose the trace" in en[INTERVIEW]["a1274b09"][0]  # the English keeps its headings
    # the eight drills counted alike in the intro and the exercises, in both editions
    assert "and eight drills. Seven of them" in en[INTERVIEW]["c9dce88a"][0] and "还有八个练习" in md["c9dce88a"]
    assert "Eight drills: seven coding drills and one diagnosis set (Drill 7)" in en[INTERVIEW]["ee7850f7"][0]
    assert "八个练习：七个编码练习和一组诊断题（练习 7）" in md["ee7850f7"]
    # the traces: Chinese labels around the recorded English
    _, trace = zh[INTERVIEW]["13862c93"]
    assert "── 请求 1（应用 → 模型）· 工具：arch__read_text_file, fs__read_text_file" in trace
    assert "    工具 arch__read_text_file：strict: false 描述 'Read a UTF-8" in trace
    assert "Archived draft, 2024: tool calling means the model runs your code." in trace  # recorded, as it was
    assert "tools:" not in trace and " description " not in trace
    assert "A 行，先检查：call trace（调用轨迹）" in zh[INTERVIEW]["e8f5a3ec"][1]
    # the deck: marks after Reveal, in Chinese
    assert "自评：[ 答对了 ]  [ 不太稳 ]  [ 没答上 ]   （显示答案之后）" in zh[INTERVIEW]["f4c48d5a"][1]
    # the pointer for instructors is the zh-CN guide beside the notebook, and the style has no "——"
    assert "[中文讲师指南](INSTRUCTOR.md)" in md["35d75d7d"] and (NOTEBOOKS / "zh-CN" / "INSTRUCTOR.md").exists()
    assert not [cid for cid, source in md.items() if "——" in source]


def _duty_rows(out: str, duty: str) -> dict[str, str]:
    """The rows of one duty in 10 §5's generated table (its text form): framework → cell."""
    lines = out.splitlines()
    start = lines.index(duty) + 1
    rows = {}
    for line in lines[start:]:
        if not line.startswith("  "):
            break
        name, _, cell = line.strip().partition("  ")
        rows[name.strip()] = cell.strip()
    return rows


def test_10_the_duty_map_gives_each_framework_its_own_approval(zh, en):
    rows = _duty_rows(en[INTERVIEW]["431805cb"][1], "approval")
    assert set(rows) == {"this course", "Agents SDK", "pydantic-ai", "Mastra", "LangGraph", "Claude Agent SDK"}
    assert rows["this course"].startswith("bound to the action id")
    assert rows["Mastra"].startswith('finishReason "suspended" → approveToolCallGenerate') and "yours" not in rows["Mastra"]
    rows = _duty_rows(zh[INTERVIEW]["431805cb"][1], "批准")
    assert rows["本课程"].startswith("绑定到动作 id") and "approveToolCallGenerate" in rows["Mastra"] and "归你" not in rows["Mastra"]


def test_09_the_english_edition_shows_no_chinese(en):
    # Regression: the diagnosis table printed the source's Chinese row name (参数经常不合法) in the
    # English edition, and the table below it listed every Chinese name.
    cjk = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
    markdown = json.loads((NOTEBOOKS / f"{CAPSTONE}.ipynb").read_text(encoding="utf-8"))["cells"]
    assert not [c["id"] for c in markdown if cjk.search("".join(c["source"]))]
    assert not [cell for cell, (source, out) in en[CAPSTONE].items() if cjk.search(source + out)]
    assert en[CAPSTONE]["ebf88c7e"][1].startswith("C  arguments are often invalid — tasks: q22\n")


def test_09_grounding_checks_the_negative_claim_and_judges_meaning_not_wording(en, zh):
    _, out = en[CAPSTONE]["8f1b3d5e"]
    assert "✗ 'Your notes do not mention: workflows.' → /notes/workflow-vs-agent.md does mention 'workflows'" in out
    assert out.count("✓ ") == 4  # q24's answer now: every claim grounded, no "not mentioned" line
    assert "→ /notes/agent-loop-vs-tool-calling.md:2" in out  # each quote rests on the line it cites
    judged = en[CAPSTONE]["2c8e4a6d"][1].splitlines()
    assert judged[:2] == ["in other words: 1 claim(s)", "  ✓ \"Reads that don't depend on each other may run at the same ti\" → "
                                                        "/notes/parallel-calls.md:4"]  # fmt: skip
    assert judged[3].endswith("→ /notes/parallel-calls.md: line 4 says the opposite: 'concurrently', not 'wait'")
    assert judged[4:] == ["a pleasantry only: 0 claim(s)"]
    metrics = en[CAPSTONE]["462bac64"][1]
    assert "claim grounding          51/51 = 100%" in metrics
    assert "陈述有据率" in zh[CAPSTONE]["462bac64"][1]


def test_09_the_zh_capstone_answers_from_the_chinese_notes_in_chinese(zh):
    notes = zh[CAPSTONE]["600f9799"][1]
    assert "/notes/idempotency.md                  2026-09-26  幂等键" in notes
    run = zh[CAPSTONE]["d23ec540"][1]
    assert 'notes__search_notes {"query":"智能体循环 工作流","limit":null}' in run  # no English word in the search
    answer = zh[CAPSTONE]["4d55101b"][1]
    assert answer.startswith("根据你的笔记：\n- 工具调用是模型请求一次调用的方式；智能体循环则不断地决定") and "没有提到" not in answer
    assert "来源：/notes/agent-loop-vs-tool-calling.md" in answer and "引用问题： 无" in answer
    assert "correct · ✓ 正确：状态、观察" in zh[CAPSTONE]["97379aeb"][1]  # the follow-up blanks the note's Chinese concepts
    missing = zh[CAPSTONE]["521ed7c0"][1]
    assert "证据不足：我读过的笔记（/notes/retries.md、/notes/function-call-output.md）没有提到 kubernetes、重启、pod。" in missing


def test_09_the_chinese_evaluation_and_its_figures_are_stored_in_the_zh_twin(zh, en):
    run = zh[CAPSTONE]["296d6ad7"][1]
    assert run.startswith("24 个问题： {'回答': 12, '闲聊': 2, '证据不足': 3, '缺口': 5, '恢复': 2}")
    assert "q15   证据不足  search_notes" in run
    metrics = zh[CAPSTONE]["462bac64"][1].splitlines()
    assert metrics[:8] == [
        "指标            结果          计数对象  未通过",
        "工具选择准确率  24/24 = 100%  任务      -",
        "参数合法率      55/56 = 98%   调用      q22:search_notes",
        "引用正确率      16/16 = 100%  回答      -",
        "任务完成率      21/24 = 88%   任务      q03, q04, q23",
        "写入确认率      4/4 = 100%    写入      -",
        "失败恢复率      2/2 = 100%    失败      -",
        "陈述有据率      50/50 = 100%  陈述      -"]
    assert "task completion          20/24 = 83%   tasks         q03, q04, q06, q23" in en[CAPSTONE]["462bac64"][1]
    grounded = zh[CAPSTONE]["8f1b3d5e"][1]
    assert "✗ '你的笔记没有提到：工作流。' → /notes/workflow-vs-agent.md 其实提到了 '工作流'" in grounded and "→ 轨迹" in grounded
    judged = zh[CAPSTONE]["2c8e4a6d"][1].splitlines()
    assert judged == ["换个说法：1 条陈述", "  ✓ '互不依赖的读取可以同时运行。' → /notes/parallel-calls.md:4", "意思反过来：1 条陈述",
                      "  ✗ '相互独立的读取必须互相等待；对同一条记录的两次写入可以重叠。' → /notes/parallel-calls.md: 第 4 行说的正相反："
                      "是“并发”，不是“等待”", "只有一句客套话：0 条陈述"]  # fmt: skip
    assert zh[CAPSTONE]["0a73168e"][1].startswith("通常的做法在这里也适用") and "来源：/notes/strict-mode.md" in zh[CAPSTONE]["0a73168e"][1]
