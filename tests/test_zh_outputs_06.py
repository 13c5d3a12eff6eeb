"""Notebook 06's stored zh-CN outputs: the labels, yes/no, outcomes, step names and diff headers a
learner reads are Chinese (and line up on screen), while the English notebook's stored outputs keep
the English, byte for byte what they were. Read from the stored .ipynb JSON, as nbval compares them."""

from __future__ import annotations

import json

import pytest

from course_lib.lang import display_width
from tools import translations

STEM = "06_approval_and_side_effects"


def _outputs(path) -> dict[str, str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    text = {}
    for cell in cells:
        parts = []
        for output in cell.get("outputs", []):
            parts.append("".join(output.get("text", "")) + "".join(output.get("data", {}).get("text/plain", "")))
        text[cell["id"]] = "".join(parts)
    return text


@pytest.fixture(scope="module")
def zh() -> dict[str, str]:
    return _outputs(translations.Paths().translated(STEM))


@pytest.fixture(scope="module")
def en() -> dict[str, str]:
    return _outputs(translations.Paths().english(STEM))


def test_the_look_alike_labels_are_chinese_and_the_action_ids_line_up(zh):
    out = zh["bcd4499f"]
    for label in ("A 本身", "（已批准）", "另一份内容", "另一个路径", "另一个用户（bob）", "另一个工具", "→ 已获批准？ False"):
        assert label in out
    for english in ("A itself", "(approved)", "other content", "other path", "other user", "another tool", "granted?"):
        assert english not in out
    rows = [line for line in out.splitlines() if "act_" in line]
    assert len(rows) == 5 and {display_width(row[: row.index("act_")]) for row in rows} == {19}


def test_yes_and_no_are_chinese_and_the_column_lines_up(zh):
    out = zh["31eb8632"]
    assert out.count("需要批准：是") == 3 and out.count("需要批准：否") == 1
    assert "approval:" not in out and " yes" not in out and " no\n" not in out
    rows = [line for line in out.splitlines() if "需要批准：" in line]
    assert {display_width(row[: row.index("需要批准：")]) for row in rows} == {47}


def test_written_and_replayed_are_chinese(zh):
    for cell in ("8c0f9f1a", "0425f3c5"):
        assert "已写入" in zh[cell] and "已重放" in zh[cell]
        assert "written" not in zh[cell] and "replayed" not in zh[cell]
    rows = [line for line in zh["8c0f9f1a"].splitlines() if " 键 " in line]
    assert len(rows) == 6 and {display_width(line[: line.index(" 键 ")]) for line in rows} == {35}


def test_the_executor_steps_and_the_audit_details_use_the_glossary_terms(zh):
    assert zh["3f6b15c4"].startswith("允许列表:ok → 解析:ok → schema:ok → 权限:ok → 批准:APPROVAL_REQUIRED\n")
    assert "3. 执行器检查了这次调用： 允许列表 ok, 解析 ok, schema ok, 权限 ok, 批准 APPROVAL_REQUIRED" in zh["ae1ef3cb"]
    assert "allowlist" not in zh["3f6b15c4"] + zh["ae1ef3cb"]
    audit = zh["ecb83d04"]
    assert "trace-0002 停在批准这一步" in audit and "TIMEOUT            trace-0016 停在执行这一步" in audit
    assert "stopped at" not in audit + zh["55d559e3"] + zh["54e4e37f"] + zh["29867113"]


def test_the_diff_headers_are_chinese_where_the_learner_reads_them(zh):
    assert "--- /workspace/todo.md（版本 1）\n+++ /workspace/todo.md（更新之后）\n" in zh["d4b4d182"]
    assert "  --- /workspace/todo.md（版本 2）\n  +++ /workspace/todo.md（更新之后）\n" in zh["d456c87a"]
    assert "(after the update)" not in zh["d4b4d182"] + zh["d456c87a"]
    assert "+- [x] Try head 5 and list which objects change" in zh["d4b4d182"]  # the note's own text stays


def test_the_english_outputs_keep_the_english(en):
    assert "A itself           act_0d678388e0486f91  (approved)\n" in en["bcd4499f"]
    assert "another tool       act_457ceb646a7b5aa5  → granted? False\n" in en["bcd4499f"]
    assert "read, our own server, nothing untrusted yet    approval: no\n" in en["31eb8632"]
    assert "  first save (its answer is lost)   key op-0001              → written\n" in en["8c0f9f1a"]
    assert "after 23 h: replayed   writes: 1\n" in en["0425f3c5"]
    assert en["3f6b15c4"].startswith("allowlist:ok → parse:ok → schema:ok → permission:ok → approval:APPROVAL_REQUIRED\n")
    assert "--- /workspace/todo.md (version 1)\n+++ /workspace/todo.md (after the update)\n" in en["d4b4d182"]
    assert "trace-0002 stopped at approval" in en["ecb83d04"]
