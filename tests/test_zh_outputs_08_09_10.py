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
    assert "→ 4 条命中：/notes/retries.md (4.966)" in out and "hits" not in out
    assert "→ INVALID_INPUT: limit: must be ≤ 20 (got 30)" in out  # the server's own message
    assert "→ 4 hits: /notes/retries.md (4.966)" in en[CAPSTONE]["79061394"][1]
    browsed = json.dumps(json.loads((NOTEBOOKS / "zh-CN" / f"{CAPSTONE}.ipynb").read_text(encoding="utf-8")),
                         ensure_ascii=False)  # the trace browser's stored widget state too
    assert "· 更新于 2026-09-28 · 539 个字符 ·" in browsed and "539 chars" not in browsed


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


def test_09_the_english_edition_shows_no_chinese(en):
    # Regression: the diagnosis table printed the source's Chinese row name (参数经常不合法) in the
    # English edition, and the table below it listed every Chinese name.
    cjk = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
    markdown = json.loads((NOTEBOOKS / f"{CAPSTONE}.ipynb").read_text(encoding="utf-8"))["cells"]
    assert not [c["id"] for c in markdown if cjk.search("".join(c["source"]))]
    assert not [cell for cell, (source, out) in en[CAPSTONE].items() if cjk.search(source + out)]
    assert en[CAPSTONE]["ebf88c7e"][1].startswith("C  arguments are often invalid — tasks: q22\n")


def test_09_grounding_checks_the_negative_claim_and_is_fooled_by_a_reversed_answer(en, zh):
    _, out = en[CAPSTONE]["8f1b3d5e"]
    assert "✗ 'Your notes do not mention: workflows.' → /notes/workflow-vs-agent.md does mention 'workflows'" in out
    assert out.count("✓ ") == 4  # q24's answer now: every claim grounded, no "not mentioned" line
    fooled = en[CAPSTONE]["2c8e4a6d"][1]
    assert fooled.startswith("✓ 'Independent reads must wait for each other") and "citation problems: none" in fooled
    assert "should never overlap" in fooled  # what the note really says, printed beside it
    metrics = en[CAPSTONE]["462bac64"][1]
    assert "claim grounding          51/51 = 100%" in metrics
    assert "陈述有据率" in zh[CAPSTONE]["462bac64"][1]
