import json
import shutil

import anyio
import pytest

from course_lib.approval_widget import ApprovalPanel, pending_action
from course_lib.execution import Session
from course_lib.notes_store import AuditedExecutor, ManualClock, NotesStore, notes_tools
from course_lib.paths import workspace_dir

ALICE = Session("alice")
ARGUMENTS = {"path": "/workspace/todo.md", "content": "# To do\n\n- [x] everything\n", "expected_version": 1}


@pytest.fixture
def setup(tmp_path):
    root = tmp_path / "workspace"
    shutil.copytree(workspace_dir(), root)
    store = NotesStore(root, clock=ManualClock())
    return store, AuditedExecutor(notes_tools(store), audit=store.audit)


def run(executor, name, arguments):
    return anyio.run(lambda: executor.execute("call_1", name, json.dumps(arguments), ALICE))


def waiting(executor):
    execution = run(executor, "apply_note_update", ARGUMENTS)
    assert execution.error_code == "APPROVAL_REQUIRED"
    return execution


def test_approve_grants_exactly_the_shown_action_once(setup):
    store, executor = setup
    panel = ApprovalPanel(executor, waiting(executor))
    assert panel.action.arguments == ARGUMENTS and panel.action.action_id in executor.approvals.pending
    assert panel.approve() is True
    assert panel.decision == "approved" and panel.status.startswith("✓ approved")
    assert executor.approvals.granted("apply_note_update", ARGUMENTS, "alice")
    assert not executor.approvals.granted("apply_note_update", {**ARGUMENTS, "content": "other"}, "alice")
    assert run(executor, "apply_note_update", ARGUMENTS).ok and store.writes == 1


def test_the_approve_button_does_the_same_as_approve(setup):
    _, executor = setup
    panel = ApprovalPanel(executor, waiting(executor))
    panel.approve_button.click()
    assert panel.decision == "approved" and executor.approvals.granted("apply_note_update", ARGUMENTS, "alice")
    assert panel.approve_button.disabled and panel.reject_button.disabled


def test_reject_removes_the_pending_action_and_nothing_runs(setup):
    store, executor = setup
    panel = ApprovalPanel(executor, waiting(executor))
    panel.reject_button.click()
    assert panel.decision == "rejected" and panel.status.startswith("✗ rejected")
    assert executor.approvals.pending == {}
    assert not executor.approvals.granted("apply_note_update", ARGUMENTS, "alice")
    assert run(executor, "apply_note_update", ARGUMENTS).error_code == "APPROVAL_REQUIRED" and store.writes == 0
    assert store.audit.records[-2].detail == "rejected by a person"


def test_a_second_decision_changes_nothing_and_says_so(setup):
    _, executor = setup
    panel = ApprovalPanel(executor, waiting(executor))
    panel.reject()
    assert panel.approve() is False
    assert panel.decision == "rejected" and panel.state == "rejected"
    assert panel.status.startswith("✗ rejected") and "later click ignored: Approve" in panel.status
    assert not executor.approvals.granted("apply_note_update", ARGUMENTS, "alice")


# Regression: "click a button live" in notebook 06 §5 (and 09). The cell after the panel clicked
# Approve from code: after a live Approve it printed "not pending any more"; after a live Reject
# the write was sent again, stopped at approval, and the next cell read result["data"] (KeyError).
CLICKS = [(), ("approve",), ("reject",), ("approve", "reject"), ("reject", "approve"),
          ("approve", "approve"), ("reject", "reject")]  # fmt: skip


def live(panel, clicks):
    for click in clicks:  # a person clicking in the browser
        (panel.approve_button if click == "approve" else panel.reject_button).click()


@pytest.mark.parametrize("clicks", CLICKS, ids=lambda c: "+".join(c) or "no-click")
def test_the_cells_after_the_panel_work_whatever_was_clicked_06(setup, clicks):
    store, executor = setup
    panel = ApprovalPanel(executor, waiting(executor))
    live(panel, clicks)
    # the cell after the panel (06 §5)
    assert panel.click_if_undecided("approve") == ("rejected" if clicks[:1] == ("reject",) else "approved")
    applied = anyio.run(lambda: panel.execute(ALICE))
    first = clicks[0] if clicks else "approve"
    assert applied.ok is (first == "approve") and store.writes == (first == "approve")
    assert panel.status.startswith("✓ executed" if first == "approve" else "✗ rejected")
    assert ("later click ignored" in panel.status) is (len(clicks) == 2)
    if first == "reject":
        assert applied.result["error"]["code"] == "FORBIDDEN" and applied.trace_id == "(not executed)"
        assert executor.approvals.pending == {}  # the refused action was not asked for again
    # the next cell: a new proposal on top of whatever version the note is at now
    version = store.read(ARGUMENTS["path"])[1]
    wipe = {**ARGUMENTS, "content": "# To do\n", "expected_version": version}
    refused = ApprovalPanel(executor, run(executor, "apply_note_update", wipe))
    refused.reject_button.click()
    assert refused.status.startswith("✗ rejected") and store.writes == (first == "approve")


# Regression: re-running 06's panel cell after Approve wrote (the cell sent the call again) and
# then raised ValueError ("did not stop for approval"). Now the cell only builds and shows the
# panel, and building it again returns the panel that shows this action, whatever was clicked.
@pytest.mark.parametrize("clicks", CLICKS, ids=lambda c: "+".join(c) or "no-click")
def test_rerunning_the_panel_cell_neither_writes_nor_raises_whatever_was_clicked(setup, clicks):
    store, executor = setup
    asked = waiting(executor)  # the cell before the panel: the call stops at approval
    panel = ApprovalPanel(executor, asked)  # the panel cell
    live(panel, clicks)
    again = ApprovalPanel(executor, asked)  # the panel cell, run again
    assert again is panel and again.widget is panel.widget and store.writes == 0
    assert again.decision == {"approve": "approved", "reject": "rejected"}.get(clicks[0] if clicks else "")
    # the cell after the panel, then the panel cell and the cell after it once more
    for _ in range(2):
        ApprovalPanel(executor, asked).click_if_undecided("approve")
        applied = anyio.run(lambda: panel.execute(ALICE))
        assert ApprovalPanel(executor, asked) is panel
    first = clicks[0] if clicks else "approve"
    assert store.writes == (first == "approve")  # at most one write, however often the cells ran
    assert applied.error_code == "FORBIDDEN" and applied.trace_id == "(not executed)"  # the second run sent nothing
    if first == "approve":
        assert "already used" in applied.result["error"]["message"]
        assert panel.status.startswith("✓ executed") and '"version": 2' in panel.status  # the first run's result stands


def test_after_execute_the_widget_says_executed_with_the_result(setup):
    # Regression: the panel's status line stayed "approved" after execute.
    store, executor = setup
    panel = ApprovalPanel(executor, waiting(executor))
    panel.approve_button.click()
    assert panel.widget.children[-1].value.startswith("<b>Status:</b> ✓ approved:")
    applied = anyio.run(lambda: panel.execute(ALICE))
    line = panel.widget.children[-1].value  # what the browser shows, without anyone reading .status
    the_id = panel.action.action_id
    assert line == ("<b>Status:</b> " + f"✓ executed: {the_id} ran once → "
                    '{&quot;path&quot;: &quot;/workspace/todo.md&quot;, &quot;version&quot;: 2, &quot;replayed&quot;: false}'
                    "; its approval is used up")
    assert applied.ok and panel.state == "spent" and store.writes == 1
    assert panel.text().endswith("status: " + panel.status)


def test_a_write_that_fails_after_approval_says_so_and_keeps_the_approval(setup):
    store, executor = setup
    panel = ApprovalPanel(executor, waiting(executor))
    panel.approve()
    store.write("/workspace/todo.md", "someone else's newer text\n", 1)  # the note moves on to version 2
    failed = anyio.run(lambda: panel.execute(ALICE))
    assert failed.error_code == "CONFLICT" and store.writes == 1  # only the other write
    assert panel.status.startswith("✗ approved and sent, but it failed: CONFLICT: /workspace/todo.md is at version 2")
    assert panel.status.endswith("(the approval still holds until it expires)") and panel.state == "approved"
    assert "✗ approved and sent, but it failed: CONFLICT" in panel.widget.children[-1].value


def test_the_status_line_follows_a_run_made_elsewhere(setup):
    # e.g. `resume` runs the approved action through the executor, not through the panel
    store, executor = setup
    panel = ApprovalPanel(executor, waiting(executor))
    panel.approve()
    assert run(executor, "apply_note_update", ARGUMENTS).ok and store.writes == 1
    assert panel.widget.children[-1].value.startswith("<b>Status:</b> ✓ approved:")  # nobody looked yet
    assert panel.refresh().startswith("✓ approved and done") and "approved and done" in panel.widget.children[-1].value


def test_a_new_request_after_a_decision_gets_a_new_panel(setup):
    _, executor = setup
    first = ApprovalPanel(executor, waiting(executor))
    first.reject()
    asked_again = waiting(executor)  # the same action, asked for anew: a new pending request
    second = ApprovalPanel(executor, asked_again)
    assert second is not first and second.decision is None and second.state == "pending"
    assert ApprovalPanel(executor, asked_again) is second  # and re-running that cell shows the second one
    assert first.status.startswith("✗ rejected") and "asked for again" in first.status


def test_a_panel_for_another_executor_is_never_reused(setup, tmp_path):
    store, executor = setup
    asked = waiting(executor)
    panel = ApprovalPanel(executor, asked)
    other = AuditedExecutor(notes_tools(store), audit=store.audit)
    with pytest.raises(ValueError, match="not pending any more"):  # the other executor never asked for it
        ApprovalPanel(other, asked)
    assert ApprovalPanel(executor, asked) is panel


def test_status_follows_the_real_state_expired_and_decided_elsewhere(setup):
    store, executor = setup
    panel = ApprovalPanel(executor, waiting(executor))
    assert panel.state == "pending" and panel.status == "waiting for a decision"
    executor.approvals.approve(panel.action.action_id)  # decided in code, not in the panel
    assert panel.status.endswith("(decided elsewhere, not in this panel)") and "(decided)" in panel.text()
    assert panel.click_if_undecided("reject") == "approved"  # the decision elsewhere stands
    store.audit.clock.advance(301)
    assert panel.state == "expired" and "expired" in panel.status
    late = anyio.run(lambda: panel.execute(ALICE))
    assert late.error_code == "FORBIDDEN" and "expired" in late.result["error"]["message"] and store.writes == 0
    with pytest.raises(ValueError, match="not bob"):
        anyio.run(lambda: panel.execute(Session("bob")))
    with pytest.raises(ValueError, match="approve"):
        panel.click_if_undecided("yes")


def test_the_text_fallback_shows_tool_user_exact_arguments_diff_and_status(setup):
    _, executor = setup
    preview = run(executor, "preview_note_update", {"path": "/workspace/todo.md", "content": ARGUMENTS["content"]})
    panel = ApprovalPanel(executor, waiting(executor), preview=preview)
    text = panel.text()
    assert text.startswith("Approval needed: apply_note_update for user alice\naction id: act_")
    assert '    "expected_version": 1' in text and '"content": "# To do\\n\\n- [x] everything\\n"' in text
    assert "  +- [x] everything" in text and "  --- /workspace/todo.md (version 1)" in text
    assert text.endswith("status: waiting for a decision")
    assert repr(panel) == text
    bundle = panel._repr_mimebundle_()
    assert bundle["text/plain"] == text and "application/vnd.jupyter.widget-view+json" in bundle
    panel.approve()
    assert panel.text().endswith("(decided)\nstatus: " + panel.status)


def test_the_panel_accepts_a_pending_action_and_refuses_what_does_not_wait_for_approval(setup):
    _, executor = setup
    execution = waiting(executor)
    action = pending_action(executor, execution)
    assert ApprovalPanel(executor, action).action == action
    with pytest.raises(ValueError, match="did not stop for approval"):
        ApprovalPanel(executor, run(executor, "preview_note_update", {"path": "/workspace/todo.md", "content": ""}))
    executor.approvals.reject(action.action_id)
    assert ApprovalPanel(executor, execution).action == action  # the panel that showed it, decided elsewhere
    unseen = run(executor, "apply_note_update", {**ARGUMENTS, "content": "never shown\n"})
    executor.approvals.reject(unseen.result["error"]["action_id"])  # decided with no panel ever built for it
    with pytest.raises(ValueError, match="not pending any more"):
        ApprovalPanel(executor, unseen)


@pytest.mark.parametrize("clicks", CLICKS, ids=lambda c: "+".join(c) or "no-click")
def test_the_cells_after_the_panel_work_whatever_was_clicked_09(monkeypatch, clicks):
    from course_lib.assistant import NotesAssistant

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with NotesAssistant() as assistant:
        result = assistant.ask("Where is my understanding of agent loops and workflows incomplete? Save a learning gap.")
        panel = assistant.panel(result)
        live(panel, clicks)
        # what 09's cells should do: click only if nobody did, resume, then read the real state
        panel.click_if_undecided("approve")
        result = assistant.resume(result)
        first = clicks[0] if clicks else "approve"
        assert result.status == "completed"
        assert len(assistant.gaps) == (first == "approve")  # 09 read assistant.gaps[0]: IndexError after Reject
        assert panel.state == ("spent" if first == "approve" else "rejected")
        assert panel.status.startswith("✓ approved and done" if first == "approve" else "✗ rejected")
        if first == "reject":
            assert json.loads(result.executions[-1].output)["error"]["code"] == "FORBIDDEN"


def test_the_panel_shows_the_untrusted_output_a_proposal_came_after(setup):
    from course_lib.approval import Provenance

    _, executor = setup
    plain = ApprovalPanel(executor, waiting(executor))
    assert "untrusted" not in plain.text()
    executor.approvals.reject(plain.action.action_id)
    panel = ApprovalPanel(executor, waiting(executor), after=[Provenance("call_9", "fs__read_text_file")])
    assert "⚠ proposed after reading untrusted output: fs__read_text_file (call_9)" in panel.text().splitlines()
    assert any("fs__read_text_file (call_9)" in getattr(part, "value", "") for part in panel.widget.children)


# ---- the zh-CN edition: the same panel, every label a learner reads in Chinese ------------------


def test_the_english_panel_reads_exactly_as_before(setup, monkeypatch):
    # Notebooks 06 and 09 store this text and these labels: the English must not change by a byte.
    from course_lib.approval import Provenance

    monkeypatch.setenv("COURSE_LANG", "en")
    _, executor = setup
    preview = run(executor, "preview_note_update", {"path": "/workspace/todo.md", "content": ARGUMENTS["content"]})
    panel = ApprovalPanel(executor, waiting(executor), preview=preview, after=[Provenance("call_9", "fs__read_text_file")])
    the_id = panel.action.action_id
    assert [panel.approve_button.description, panel.reject_button.description] == ["Approve", "Reject"]
    assert [part.value for part in panel.widget.children if hasattr(part, "value")][:3] == [
        f"<b>Approval needed:</b> <code>apply_note_update</code> for user <code>alice</code> · action <code>{the_id}</code>",
        "<b>Exact arguments</b><pre style='margin:2px 0 6px 0'>" + panel.arguments_json().replace('"', "&quot;") + "</pre>",
        "<b>⚠ Proposed after reading untrusted output:</b> fs__read_text_file (call_9)",
    ]
    assert panel.widget.children[3].value.startswith("<b>Effect (diff from the preview)</b><pre")
    lines = panel.text().splitlines()
    assert lines[:3] == ["Approval needed: apply_note_update for user alice", f"action id: {the_id}", "exact arguments:"]
    assert "⚠ proposed after reading untrusted output: fs__read_text_file (call_9)" in lines
    assert "effect (diff from the preview):" in lines
    assert "  --- /workspace/todo.md (version 1)" in lines and "  +++ /workspace/todo.md (after the update)" in lines
    assert lines[-2:] == ["[ Approve ]  [ Reject ]", "status: waiting for a decision"]
    panel.reject()
    panel.approve()
    assert panel.status == f"✗ rejected: {the_id} will not run · later click ignored: Approve (the first decision counts)"
    assert panel.text().endswith(f"[ Approve ]  [ Reject ]  (decided)\nstatus: {panel.status}")
    assert panel.widget.children[-1].value == "<b>Status:</b> " + panel.status


def test_the_panel_speaks_chinese_in_the_zh_cn_edition(setup, monkeypatch):
    from course_lib.approval import Provenance

    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    store, executor = setup
    preview = run(executor, "preview_note_update", {"path": "/workspace/todo.md", "content": ARGUMENTS["content"]})
    panel = ApprovalPanel(executor, waiting(executor), preview=preview, after=[Provenance("call_9", "fs__read_text_file")])
    the_id = panel.action.action_id
    assert [panel.approve_button.description, panel.reject_button.description] == ["批准", "拒绝"]
    html_parts = [part.value for part in panel.widget.children if hasattr(part, "value")]
    assert html_parts[0] == f"<b>需要批准：</b>用户 <code>alice</code> 的 <code>apply_note_update</code> · 动作 <code>{the_id}</code>"
    assert html_parts[1].startswith("<b>确切的参数</b><pre") and html_parts[2] == "<b>⚠ 在读过不可信的输出之后提出：</b>fs__read_text_file (call_9)"
    assert html_parts[3].startswith("<b>效果（来自预览的 diff）</b><pre") and html_parts[-1] == "<b>状态：</b>等待决定"
    text = panel.text()
    assert text.startswith(f"需要批准：用户 alice 的 apply_note_update\naction id：{the_id}\n确切的参数：\n")
    assert "⚠ 在读过不可信的输出之后提出：fs__read_text_file (call_9)" in text and "效果（来自预览的 diff）：" in text
    assert '    "expected_version": 1' in text  # the arguments and the diff's lines stay exactly as they are
    # The preview's tool result (what the model reads) keeps English headers; the panel shows them in Chinese.
    assert preview.result["data"]["diff"].startswith("--- /workspace/todo.md (version 1)\n")
    assert "  --- /workspace/todo.md（版本 1）\n  +++ /workspace/todo.md（更新之后）\n" in text
    assert "+++ /workspace/todo.md（更新之后）" in html_parts[3] and "(after the update)" not in text + html_parts[3]
    assert text.endswith("[ 批准 ]  [ 拒绝 ]\n状态：等待决定") and panel._repr_mimebundle_()["text/plain"] == text
    panel.approve_button.click()
    panel.reject_button.click()  # a later click changes nothing, and says so in Chinese
    assert panel.status == f"✓ 已批准：{the_id} 可以在批准过期之前运行一次 · 之后的点击被忽略：拒绝（第一次决定算数）"
    assert panel.text().endswith("[ 批准 ]  [ 拒绝 ]（已决定）\n状态：" + panel.status)
    assert anyio.run(lambda: panel.execute(ALICE)).ok and store.writes == 1
    assert panel.status.startswith(f'✓ 已执行：{the_id} 运行了一次 → {{"path": "/workspace/todo.md", "version": 2, '
                                   '"replayed": false}；它的批准已经用掉')


def test_the_chinese_status_follows_the_real_state(setup, monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    store, executor = setup
    expired = ApprovalPanel(executor, waiting(executor))
    executor.approvals.approve(expired.action.action_id)  # decided in code, not in the panel
    store.audit.clock.advance(301)
    assert expired.status == f"✗ 已批准，但批准在 {expired.action.action_id} 运行之前就过期了：请重新询问（在别处决定，不是在这个面板里）"
    rejected = ApprovalPanel(executor, waiting(executor))
    rejected.reject()
    assert rejected.status == f"✗ 已拒绝：{rejected.action.action_id} 不会运行"
    waiting(executor)  # the same action asked for again after the rejection
    assert rejected.status.endswith("（同一个动作又被请求了一次：它在一个新的面板里等待新的决定）")
    spent = ApprovalPanel(executor, run(executor, "apply_note_update", {**ARGUMENTS, "content": "x\n"}))
    spent.approve()
    store.write("/workspace/todo.md", "newer\n", 1)
    anyio.run(lambda: spent.execute(ALICE))
    assert spent.status.startswith("✗ 已批准并已发送，但它失败了：CONFLICT：") and spent.status.endswith("（批准在过期之前仍然有效）")
