import json
import shutil
from pathlib import Path

import anyio
import pytest

from course_lib.approval_widget import ApprovalPanel, pending_action
from course_lib.execution import Session
from course_lib.notes_store import AuditedExecutor, ManualClock, NotesStore, notes_tools
from course_lib.paths import workspace_dir
from tests.test_browser import chromium  # noqa: F401 (the fixture: Debian's Chromium, or a skip saying how to install it)

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


def test_a_request_the_approvals_no_longer_keep_is_named_not_taken_for_a_decision(setup):
    # Pending approvals may be bounded: a request dropped from them was never decided.
    _, executor = setup
    panel = ApprovalPanel(executor, waiting(executor))
    executor.approvals.pending.pop(panel.action.action_id)  # dropped, as a bounded store would
    assert panel.approve() is False and panel.ignored == []
    assert panel.status == f"? no record of {panel.action.action_id}: never asked for, or no longer kept"
    assert anyio.run(lambda: panel.execute(ALICE)).error_code == "FORBIDDEN"


def test_a_request_dropped_by_the_bounded_pending_approvals_says_so_and_never_runs(setup):
    # Approvals keep at most max_pending waiting actions: the oldest is dropped, never approved.
    _, executor = setup
    executor.approvals.max_pending = 1
    panel = ApprovalPanel(executor, waiting(executor))
    run(executor, "apply_note_update", {**ARGUMENTS, "content": ARGUMENTS["content"] + " (another)"})
    assert panel.state == "dropped"
    assert panel.approve() is False and panel.ignored == []  # nothing was decided, so nothing is "ignored"
    assert panel.status.startswith(f"✗ dropped unanswered: {panel.action.action_id} waited while too many others")
    refused = anyio.run(lambda: panel.execute(ALICE))
    assert refused.error_code == "FORBIDDEN" and "dropped unanswered" in refused.result["error"]["message"]


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


# ---- the panel in a real browser: JupyterLab, headless Debian Chromium, Playwright -------------------
#
# Notebook 06 §6 as a learner runs it: the cells up to the panel, a real click on Approve in the
# rendered widget, the panel's cell run again, then the cells after it, then the panel's cell once
# more. The page must show no error, one write, and the status line must end at "executed".

NOTEBOOK_06 = "06_approval_and_side_effects.ipynb"
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def lab_06(tmp_path):
    """A JupyterLab server over a copy of notebook 06; yields (base URL, token)."""
    import os

    from tests.test_browser import running_lab

    root = tmp_path / "root"
    (root / "notebooks").mkdir(parents=True)
    shutil.copy(REPO / "notebooks" / NOTEBOOK_06, root / "notebooks" / NOTEBOOK_06)
    (tmp_path / "config" / "labconfig").mkdir(parents=True)
    (tmp_path / "config" / "labconfig" / "page_config.json").write_text(
        json.dumps({"disabledExtensions": {"@jupyterlab/apputils-extension:announcements": True}}))
    # Every cell in the page (no windowing), so every output can be read.
    tracker = tmp_path / "settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
    tracker.parent.mkdir(parents=True)
    tracker.write_text(json.dumps({"windowingMode": "none"}))
    env = os.environ | {name: str(tmp_path / folder) for name, folder in (
        ("JUPYTER_CONFIG_DIR", "config"), ("JUPYTER_RUNTIME_DIR", "runtime"), ("JUPYTER_DATA_DIR", "data"),
        ("JUPYTERLAB_WORKSPACES_DIR", "workspaces"), ("IPYTHONDIR", "ipython"), ("JUPYTERLAB_SETTINGS_DIR", "settings"))}
    env.pop("OPENAI_API_KEY", None)  # the stored run's offline model
    with running_lab(tmp_path, root, env) as served:
        yield served


_RUN_CELL = """async ([cellId, mode]) => {
    // Run one cell by its nbformat id, as a learner does with Ctrl+Enter; or every cell above it.
    // Then wait until the kernel has been idle for two seconds: between queued cells it is idle for
    // milliseconds only. (Prompts are no signal: after run-all-above one can keep its "[*]".)
    const app = window.jupyterapp, panel = app.shell.currentWidget;
    await panel.sessionContext.ready;
    const index = panel.content.widgets.findIndex(cell => cell.model.id === cellId);
    if (index < 0) throw new Error('no cell ' + cellId);
    panel.content.activeCellIndex = index;
    panel.content.activate();  // the commands act on the notebook that has the focus
    app.commands.execute(mode === 'above' ? 'notebook:run-all-above' : 'notebook:run-cell');
    const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
    const idle = () => panel.sessionContext.session.kernel.status === 'idle';
    await sleep(500);
    for (let quiet = 0; quiet < 10; quiet = idle() ? quiet + 1 : 0) await sleep(200);
}"""

_OUTPUT = """cellId => {
    const panel = window.jupyterapp.shell.currentWidget;
    const cell = panel.content.widgets.find(cell => cell.model.id === cellId);
    return [...cell.node.querySelectorAll('.jp-OutputArea-output')].map(node => node.innerText).join('\\n');
}"""


def test_the_panel_in_jupyterlab_approve_rerun_execute_rerun(chromium, lab_06):
    # Both widget traps of issue 21 in the browser: re-running the panel's cell after Approve wrote and
    # raised ValueError; the status line stayed "approved" after execute.
    from playwright.sync_api import sync_playwright

    from tests.test_browser import CHROMIUM_ARGS, STEP_MS

    url, token = lab_06
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS, headless=True, timeout=60_000)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1200})
            page.set_default_timeout(STEP_MS)
            page.goto(f"{url}/lab/tree/notebooks/{NOTEBOOK_06}?token={token}", wait_until="domcontentloaded")
            page.wait_for_function("() => window.jupyterapp?.shell?.currentWidget?.sessionContext")
            page.evaluate(_RUN_CELL, ["d456c87a", "above"])  # everything up to the panel
            page.evaluate(_RUN_CELL, ["d456c87a", "cell"])  # the panel
            approve = page.locator(".jp-Cell", has=page.locator("text=Approval needed:")).locator(
                "button.widget-button", has_text="Approve").first
            approve.scroll_into_view_if_needed()
            approve.click()  # a real click in the rendered widget
            page.wait_for_function("() => [...document.querySelectorAll('.widget-html-content')]"
                                   ".some(n => n.innerText.startsWith('Status: ✓ approved:'))")
            page.evaluate(_RUN_CELL, ["d456c87a", "cell"])  # the panel's cell again, after the click
            panel_output = page.evaluate(_OUTPUT, "d456c87a")
            page.evaluate(_RUN_CELL, ["d44de412", "cell"])  # the cell after the panel
            after = page.evaluate(_OUTPUT, "d44de412")
            page.wait_for_function("() => [...document.querySelectorAll('.widget-html-content')]"
                                   ".some(n => n.innerText.startsWith('Status: ✓ executed:'))")
            page.evaluate(_RUN_CELL, ["d456c87a", "cell"])  # and the panel's cell once more
            page.evaluate(_RUN_CELL, ["b7d2f4a9", "cell"])  # what the notebook's re-run cell shows
            rerun = page.evaluate(_OUTPUT, "b7d2f4a9")
            statuses = page.locator(".widget-html-content", has_text="Status:").all_inner_texts()
            disabled = page.locator("button.widget-button", has_text="Approve").evaluate_all(
                "buttons => buttons.map(b => b.disabled)")
            errors = page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count()
        finally:
            browser.close()
    assert "Traceback" not in panel_output and "ValueError" not in panel_output, panel_output
    assert after.startswith("✓ approved: act_") and "real writes so far: 2" in after, after
    assert "status now: ✓ executed: act_" in after and '"version": 3' in after, after
    assert "the same panel: True   real writes so far: 2" in rerun and rerun.rstrip().endswith("real writes so far: 2"), rerun
    assert statuses and all(status.startswith("Status: ✓ executed: act_") for status in statuses), statuses
    assert disabled and all(disabled), disabled  # decided: the buttons stay locked in every view
    assert errors == 0
