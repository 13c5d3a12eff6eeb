"""Notebooks 06 and 06b's stored zh-CN outputs: the labels, yes/no, outcomes, step names, statuses and
diff headers a learner reads are Chinese (and line up on screen), while the English notebooks' stored
outputs keep the English, byte for byte what they were; what the model reads stays the app's English
in both. Read from the stored .ipynb JSON, as nbval compares them."""

from __future__ import annotations

import json

import pytest

from course_lib.lang import display_width
from tools import translations

APPROVAL = "06_approval_and_side_effects"
ONCE = "06b_idempotency_durable_writes_and_injection"


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
    return _outputs(translations.Paths().translated(APPROVAL))


@pytest.fixture(scope="module")
def en() -> dict[str, str]:
    return _outputs(translations.Paths().english(APPROVAL))


@pytest.fixture(scope="module")
def zh_b() -> dict[str, str]:
    return _outputs(translations.Paths().translated(ONCE))


@pytest.fixture(scope="module")
def en_b() -> dict[str, str]:
    return _outputs(translations.Paths().english(ONCE))


# ---- notebook 06 ------------------------------------------------------------------------------------


def test_the_look_alike_labels_are_chinese_and_the_action_ids_line_up(zh):
    out = zh["bcd4499f"]
    for label in ("A 本身", "（已批准）", "另一份内容", "另一个路径", "另一个用户（bob）", "另一个工具", "→ 已获批准？ False"):
        assert label in out
    for english in ("A itself", "(approved)", "other content", "other path", "other user", "another tool", "granted?"):
        assert english not in out
    rows = [line for line in out.splitlines() if "act_" in line]
    assert len(rows) == 5 and {display_width(row[: row.index("act_")]) for row in rows} == {19}


def test_the_executor_steps_and_the_audit_details_use_the_glossary_terms(zh):
    assert zh["3f6b15c4"].startswith("允许列表:成功 → 解析:成功 → schema:成功 → 权限:成功 → 批准:APPROVAL_REQUIRED\n")
    assert "执行器返回给应用的内容" in zh["3f6b15c4"] and "what the executor returns" not in zh["3f6b15c4"]
    assert zh["a5c3e0d1"] == "允许列表:成功 → 解析:成功 → schema:成功 → 权限:成功 → 批准:APPROVAL_REQUIRED\n"
    audit = zh["ecb83d04"]
    assert "trace-0002 停在批准这一步" in audit and "FORBIDDEN          被人拒绝" in audit
    assert "stopped at" not in audit and "allowlist" not in zh["3f6b15c4"]


def test_the_diff_headers_are_chinese_where_the_learner_reads_them(zh):
    assert "--- /workspace/todo.md（版本 1）\n+++ /workspace/todo.md（更新之后）\n" in zh["d4b4d182"]
    assert "  --- /workspace/todo.md（版本 2）\n  +++ /workspace/todo.md（更新之后）\n" in zh["d456c87a"]
    assert "(after the update)" not in zh["d4b4d182"] + zh["d456c87a"]
    assert "+- [x] Try head 5 and list which objects change" in zh["d4b4d182"]  # the note's own text stays


def test_the_panel_says_executed_with_the_result_in_chinese_and_a_rerun_sends_nothing(zh):
    status = zh["d44de412"].splitlines()[-1]
    assert status.startswith("现在的状态： ✓ 已执行：act_") and '"version": 3' in status and status.endswith("它的批准已经用掉")
    assert "executed" not in zh["d44de412"]
    rerun = zh["b7d2f4a9"]
    assert rerun.startswith("同一个面板： True   到目前为止真实的写入： 2\n")
    # the refusal is a tool result for the model: the app's English, in both editions
    assert "再次发送 → FORBIDDEN — this approval was already used: the action ran once; it was not run again" in rerun


def test_the_common_mistake_speaks_chinese(zh):
    assert zh["f6a8b0d2"].startswith("✗ 清空运行了：写入次数 2，todo.md 处于版本 3")
    assert zh["b8d0f2a4"].startswith("✓ 清空停在了 APPROVAL_REQUIRED：写入次数 1，todo.md 处于版本 2")


def test_the_english_outputs_keep_the_english(en):
    assert "A itself           act_0d678388e0486f91  (approved)\n" in en["bcd4499f"]
    assert "another tool       act_457ceb646a7b5aa5  → granted? False\n" in en["bcd4499f"]
    assert en["3f6b15c4"].startswith("allowlist:ok → parse:ok → schema:ok → permission:ok → approval:APPROVAL_REQUIRED\n")
    assert "── what the executor returns to the app" in en["3f6b15c4"] and "what the model reads" not in en["3f6b15c4"]
    assert "--- /workspace/todo.md (version 1)\n+++ /workspace/todo.md (after the update)\n" in en["d4b4d182"]
    assert "trace-0002 stopped at approval" in en["ecb83d04"]
    assert en["d44de412"].splitlines()[-1].startswith("status now: ✓ executed: act_")
    assert en["f6a8b0d2"].startswith("✗ the wipe ran: writes 2") and en["b8d0f2a4"].startswith("✓ the wipe stopped at")


# ---- notebook 06b -----------------------------------------------------------------------------------


def test_yes_and_no_are_chinese_and_the_column_lines_up(zh_b):
    out = zh_b["31eb8632"]
    assert out.count("需要批准：是") == 3 and out.count("需要批准：否") == 2
    assert "approval:" not in out and " yes" not in out and " no\n" not in out
    rows = [line for line in out.splitlines() if "需要批准：" in line]
    assert {display_width(row[: row.index("需要批准：")]) for row in rows} == {49}


def test_written_and_replayed_are_chinese(zh_b):
    for cell in ("8c0f9f1a", "0425f3c5"):
        assert "已写入" in zh_b[cell] and "已重放" in zh_b[cell]
        assert "written" not in zh_b[cell] and "replayed" not in zh_b[cell]
    rows = [line for line in zh_b["8c0f9f1a"].splitlines() if " 键 " in line]
    assert len(rows) == 9 and {display_width(line[: line.index(" 键 ")]) for line in rows} == {35}
    assert "存下的提醒：3 条（用户要的是 2 条）" in zh_b["8c0f9f1a"]


def test_the_injection_story_uses_the_glossary_terms(zh_b):
    assert "3. 执行器检查了这次调用： 允许列表 成功、解析 成功、schema 成功、权限 成功、批准 APPROVAL_REQUIRED" in zh_b["ae1ef3cb"]
    assert "allowlist" not in zh_b["ae1ef3cb"]
    for cell in ("54e4e37f", "29867113"):
        assert "停在批准这一步" in zh_b[cell] and "stopped at" not in zh_b[cell]
    assert "FORBIDDEN          被人拒绝" in zh_b["54e4e37f"]


def test_what_the_model_read_is_labelled_in_chinese_and_quoted_as_sent(zh_b):
    out = zh_b["c7b8d9e0"]
    assert "第 3 个请求携带 call_" in out and "→ 成功，即邮件的文本" in out
    assert "→ FORBIDDEN: the user rejected this action; do not retry it\n" in out  # what the model read, as sent
    assert out.endswith("携带了 APPROVAL_REQUIRED 的模型请求： 0\n") and "carries" not in out


def test_the_english_outputs_of_06b_keep_the_english(en_b):
    assert "read, as declared, nothing untrusted yet         approval: no\n" in en_b["31eb8632"]
    assert "read, as declared, right after the email         approval: no\n" in en_b["31eb8632"]
    assert "read, openWorldHint left out, after it           approval: yes\n" in en_b["31eb8632"]
    assert "  first save (its answer is lost)   key op-0001              → written\n" in en_b["8c0f9f1a"]
    assert "  reminders stored: 3 (the user asked for 2)\n" in en_b["8c0f9f1a"]
    assert "after 23 h: replayed   writes: 1\n" in en_b["0425f3c5"]
    assert en_b["c7b8d9e0"].endswith("model requests that carried APPROVAL_REQUIRED: 0\n")
    assert "trace-0013 stopped at approval" in en_b["54e4e37f"]
