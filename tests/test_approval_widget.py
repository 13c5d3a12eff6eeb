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
    assert panel.decision == "rejected" and "already decided" in panel.status
    assert not executor.approvals.granted("apply_note_update", ARGUMENTS, "alice")


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
    with pytest.raises(ValueError, match="not pending any more"):
        ApprovalPanel(executor, execution)
