import dataclasses
import json
import os
import shutil

import anyio
import pytest

from course_lib.execution import Session, ToolError
from course_lib.notes_store import (
    SCRATCH_SUFFIX,
    AuditedExecutor,
    ManualClock,
    NotesStore,
    notes_tools,
    remove_scratch_workspace,
    scratch_workspace,
)
from course_lib.paths import workspace_dir

ALICE = Session("alice")
TODO = "/workspace/todo.md"


@pytest.fixture
def root(tmp_path):
    target = tmp_path / "workspace"
    shutil.copytree(workspace_dir(), target)
    return target


@pytest.fixture
def store(root):
    return NotesStore(root, clock=ManualClock())


def run(executor, name, arguments, session=ALICE, call_id="call_1"):
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return anyio.run(lambda: executor.execute(call_id, name, text, session))


def approved(executor, name, arguments, session=ALICE):
    """Ask once (APPROVAL_REQUIRED), approve that exact action, return its id."""
    first = run(executor, name, arguments, session)
    assert first.error_code == "APPROVAL_REQUIRED"
    executor.approvals.approve(first.result["error"]["action_id"])
    return first.result["error"]["action_id"]


# ---- versions and conditional writes -----------------------------------------------------------


def test_a_note_starts_at_version_1_and_each_write_adds_one(store, root):
    text, version = store.read(TODO)
    assert version == 1 and text == (root / "todo.md").read_text()
    assert store.write(TODO, "v2\n", 1) == {"path": TODO, "version": 2}
    assert store.write("todo.md", "v3\n", 2) == {"path": TODO, "version": 3}  # relative paths too
    assert store.read(TODO) == ("v3\n", 3) and store.writes == 2


def test_a_stale_write_is_a_conflict_and_the_newer_text_stays(store, root):
    store.write(TODO, "newer\n", 1)
    with pytest.raises(ToolError) as refused:
        store.write(TODO, "older writer\n", 1)
    assert refused.value.code == "CONFLICT" and "version 2, not 1" in refused.value.message
    assert (root / "todo.md").read_text() == "newer\n" and store.writes == 1


def test_a_change_made_behind_the_stores_back_is_a_newer_version(store, root):
    store.read(TODO)
    (root / "todo.md").write_text("edited by hand\n")
    assert store.read(TODO) == ("edited by hand\n", 2)
    with pytest.raises(ToolError, match="CONFLICT|version 2"):
        store.write(TODO, "x", 1)


def test_preview_shows_target_version_arguments_and_diff_and_writes_nothing(store, root):
    before = (root / "todo.md").read_text()
    preview = store.preview("todo.md", before.replace("- [ ] Try head 5", "- [x] Try head 5"))
    assert preview["path"] == TODO and preview["current_version"] == 1
    assert preview["arguments"] == {"path": TODO, "content": preview["arguments"]["content"], "expected_version": 1}
    assert "-- [ ] Try head 5" in preview["diff"] and "+- [x] Try head 5" in preview["diff"]
    assert preview["diff"].startswith(f"--- {TODO} (version 1)\n+++ {TODO} (after the update)\n")
    assert (root / "todo.md").read_text() == before and store.writes == 0


# ---- idempotency --------------------------------------------------------------------------------


def test_same_key_and_arguments_write_once_and_return_the_stored_result(store):
    first = anyio.run(lambda: store.apply(TODO, "once\n", 1, key="k1"))
    again = anyio.run(lambda: store.apply(TODO, "once\n", 1, key="k1"))  # the first answer was lost
    assert first == ({"path": TODO, "version": 2}, False) and again == ({"path": TODO, "version": 2}, True)
    assert store.writes == 1


def test_same_key_with_other_arguments_is_a_conflict_and_writes_nothing(store, root):
    anyio.run(lambda: store.apply(TODO, "once\n", 1, key="k1"))
    with pytest.raises(ToolError) as refused:
        anyio.run(lambda: store.apply(TODO, "something else\n", 2, key="k1"))
    assert refused.value.code == "CONFLICT" and "already used with different arguments" in refused.value.message
    assert (root / "todo.md").read_text() == "once\n" and store.writes == 1


def test_a_retry_after_a_lost_response_takes_effect_once_through_the_executor(store):
    apply = next(tool for tool in notes_tools(store) if tool.name == "apply_note_update")
    lost = []

    async def loses_first_response(arguments, context):
        result = await apply.handler(arguments, context)
        if not lost:
            lost.append(True)
            await anyio.sleep(5)  # the write happened; its answer never arrives
        return result

    executor = AuditedExecutor([dataclasses.replace(apply, handler=loses_first_response, timeout=0.05)],
                               audit=store.audit)  # fmt: skip
    arguments = {"path": TODO, "content": "done\n", "expected_version": 1}
    approved(executor, "apply_note_update", arguments)
    assert run(executor, "apply_note_update", arguments).error_code == "TIMEOUT"
    retry = run(executor, "apply_note_update", arguments)  # still approved: it never succeeded
    assert retry.result == {"ok": True, "data": {"path": TODO, "version": 2, "replayed": True}}
    assert store.writes == 1
    assert [r.result for r in store.audit.records] == ["APPROVAL_REQUIRED", "TIMEOUT", "ok"]
    assert store.audit.records[-1].detail.endswith("replayed: stored result returned")


# ---- the tools through the executor, and the audit ------------------------------------------


def test_apply_needs_approval_then_writes_and_every_attempt_is_audited(store, root):
    executor = AuditedExecutor(notes_tools(store), audit=store.audit)
    arguments = {"path": TODO, "content": "approved text\n", "expected_version": 1}
    the_action = approved(executor, "apply_note_update", arguments)
    assert store.writes == 0
    done = run(executor, "apply_note_update", {"expected_version": 1, "content": "approved text\n", "path": TODO})
    assert done.result == {"ok": True, "data": {"path": TODO, "version": 2, "replayed": False}}
    assert (root / "todo.md").read_text() == "approved text\n"
    assert run(executor, "apply_note_update", arguments).error_code == "APPROVAL_REQUIRED"  # used up
    records = store.audit.records
    assert [(r.who, r.tool, r.result) for r in records] == [
        ("alice", "apply_note_update", "APPROVAL_REQUIRED"), ("alice", "apply_note_update", "ok"),
        ("alice", "apply_note_update", "APPROVAL_REQUIRED")]  # fmt: skip
    assert records[1].arguments == {"expected_version": 1, "content": "approved text\n", "path": TODO}
    assert records[1].action_id == the_action and records[0].when < records[1].when
    assert records[0].time == "2026-01-01T09:00:00Z"


def test_a_stale_approved_write_is_refused_with_conflict_and_audited(store, root):
    executor = AuditedExecutor(notes_tools(store), audit=store.audit)
    arguments = {"path": TODO, "content": "late\n", "expected_version": 1}
    approved(executor, "apply_note_update", arguments)
    store.write(TODO, "someone else was faster\n", 1)
    late = run(executor, "apply_note_update", arguments)
    assert late.error_code == "CONFLICT" and (root / "todo.md").read_text() == "someone else was faster\n"
    assert store.audit.records[-1].result == "CONFLICT"


def test_reads_are_not_audited_and_need_no_approval(store):
    executor = AuditedExecutor(notes_tools(store), audit=store.audit)
    preview = run(executor, "preview_note_update", {"path": TODO, "content": "x\n"})
    assert preview.ok and preview.result["data"]["current_version"] == 1
    assert store.audit.records == [] and store.writes == 0


def test_a_rejection_by_a_person_is_audited(store):
    executor = AuditedExecutor(notes_tools(store), audit=store.audit)
    first = run(executor, "apply_note_update", {"path": TODO, "content": "no\n", "expected_version": 1})
    executor.approvals.reject(first.result["error"]["action_id"])
    last = store.audit.records[-1]
    assert (last.result, last.detail, last.who, last.action_id) == (
        "FORBIDDEN", "rejected by a person", "alice", first.result["error"]["action_id"])  # fmt: skip


def test_an_approval_expires_on_the_injected_clock(store):
    clock = ManualClock(step=0)
    store = NotesStore(store.workspace.root, clock=clock)
    executor = AuditedExecutor(notes_tools(store), audit=store.audit, ttl=60)
    arguments = {"path": TODO, "content": "later\n", "expected_version": 1}
    approved(executor, "apply_note_update", arguments)
    clock.advance(61)
    assert run(executor, "apply_note_update", arguments).error_code == "APPROVAL_REQUIRED" and store.writes == 0


# ---- paths --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("../notes.txt", "FORBIDDEN"),
        ("/etc/passwd", "FORBIDDEN"),
        ("/workspace_evil/notes.txt", "FORBIDDEN"),
        ("/workspace/escape.txt", "FORBIDDEN"),  # a symbolic link to a file outside the root
        ("/workspace/missing.md", "NOT_FOUND"),
        ("/workspace/docs", "INVALID_INPUT"),
        ("", "INVALID_INPUT"),
    ],
)
def test_paths_are_confined_to_the_notes_root_and_messages_name_no_real_path(store, root, tmp_path, path, code):
    (tmp_path / "outside.txt").write_text("secret\n")
    (root / "escape.txt").symlink_to(tmp_path / "outside.txt")
    with pytest.raises(ToolError) as refused:
        store.write(path, "x", 1)
    assert refused.value.code == code and str(tmp_path) not in refused.value.message
    assert (tmp_path / "outside.txt").read_text() == "secret\n"


def test_a_write_outside_the_root_is_forbidden_before_any_approval_is_asked(store):
    executor = AuditedExecutor(notes_tools(store), audit=store.audit)
    refused = run(executor, "apply_note_update", {"path": "../../etc/passwd", "content": "x", "expected_version": 1})
    assert refused.error_code == "FORBIDDEN" and refused.steps[-1].name == "permission"
    assert executor.approvals.pending == {}
    assert (store.audit.records[-1].result, store.audit.records[-1].detail) == ("FORBIDDEN", "trace-0001 stopped at permission")


@pytest.mark.parametrize(
    ("arguments", "fragment"),
    [
        ({"path": TODO, "content": "x", "expected_version": "1"}, "expected_version: expected an integer"),
        ({"path": TODO, "content": "x", "expected_version": 0}, "expected_version: must be ≥ 1"),
        ({"path": TODO, "content": "x"}, "expected_version: required"),
        ({"path": TODO, "content": "x", "expected_version": 1, "user_id": "bob"}, "unknown property 'user_id'"),
    ],
)
def test_apply_arguments_follow_a_strict_rule_and_refusals_are_audited(store, arguments, fragment):
    executor = AuditedExecutor(notes_tools(store), audit=store.audit)
    refused = run(executor, "apply_note_update", arguments)
    assert refused.error_code == "INVALID_INPUT" and fragment in refused.result["error"]["message"]
    assert store.audit.records[-1].result == "INVALID_INPUT"


def test_the_declarations_are_strict_and_say_which_tool_writes(store):
    preview, apply = notes_tools(store)
    assert (preview.side_effect, apply.side_effect, apply.idempotent) == (False, True, True)
    declaration = apply.declaration()
    assert declaration["strict"] is True and declaration["parameters"]["required"] == ["path", "content", "expected_version"]
    assert "description" not in declaration["parameters"]


def test_scratch_workspace_is_a_copy_that_can_be_removed(root):
    copy = scratch_workspace()
    assert (copy / "notes.txt").read_bytes() == (workspace_dir() / "notes.txt").read_bytes()
    assert copy.resolve() != workspace_dir().resolve()
    remove_scratch_workspace(copy)
    assert not copy.parent.exists()
    for not_a_copy in (root, workspace_dir()):
        with pytest.raises(ValueError, match="not a scratch workspace"):
            remove_scratch_workspace(not_a_copy)
    assert (workspace_dir() / "notes.txt").exists() and (root / "notes.txt").exists()


def test_the_audit_table_is_plain_text_with_one_row_per_record(store):
    assert store.audit.table() == "(no side effects recorded)"
    store.audit.record("alice", "apply_note_update", {"path": TODO}, "ok", detail="executed")
    lines = store.audit.table().splitlines()
    assert lines[0].split() == ["when", "who", "tool", "action", "target", "result", "detail"]
    assert lines[1].split() == ["2026-01-01T09:00:00Z", "alice", "apply_note_update", "-", TODO, "ok", "executed"]


# ---- across processes and crashes: the records live in a database beside the folder --------------


def test_versions_idempotency_and_audit_are_shared_by_every_store_on_the_folder(store, root):
    executor = AuditedExecutor(notes_tools(store), audit=store.audit)
    arguments = {"path": TODO, "content": "from kernel 1\n", "expected_version": 1}
    approved(executor, "apply_note_update", arguments)
    assert run(executor, "apply_note_update", arguments).ok
    other = NotesStore(root, clock=ManualClock())  # another kernel, or a restart
    assert other.read(TODO) == ("from kernel 1\n", 2) and other.writes == 1
    assert anyio.run(lambda: other.apply(TODO, "from kernel 1\n", 1, key=store.audit.records[-1].action_id)) == (
        {"path": TODO, "version": 2}, True)  # the key is known there too: a replay, no second write  # fmt: skip
    assert [r.result for r in other.audit.records] == ["APPROVAL_REQUIRED", "ok"]
    assert [p.name for p in root.parent.iterdir() if p.name.startswith("workspace.notes.sqlite3")]
    assert not [p for p in root.rglob("*") if ".sqlite3" in p.name]  # nothing the model could read


def test_an_external_edit_after_approval_is_a_conflict_even_in_a_store_that_never_saw_the_note(root):
    preview = NotesStore(root).preview(TODO, "approved text\n")  # kernel 1 shows the diff
    (root / "todo.md").write_text("edited by hand after the approval\n")
    fresh = NotesStore(root)  # kernel 2 applies it
    with pytest.raises(ToolError) as refused:
        fresh.write(TODO, "approved text\n", preview["current_version"])
    assert refused.value.code == "CONFLICT" and "version 2, not 1" in refused.value.message
    assert (root / "todo.md").read_text() == "edited by hand after the approval\n" and fresh.writes == 0


def test_a_temporary_file_left_by_a_killed_writer_is_removed_when_a_store_opens(root):
    beside = root.with_name(root.name + SCRATCH_SUFFIX)
    beside.mkdir()
    (beside / ".notes-store-fedcba9876543210.tmp").write_text("the whole new text")
    (root / "docs" / ".notes-store-0123456789abcdef.tmp").write_text("half a no")  # left by an older version
    (root / ".notes-store-notmine.tmp").write_text("someone else's")  # not a name the store makes
    store = NotesStore(root)
    assert store.removed_temporary_files == 2 and not list(beside.iterdir())
    assert not (root / "docs" / ".notes-store-0123456789abcdef.tmp").exists()
    assert (root / ".notes-store-notmine.tmp").read_text() == "someone else's"


def test_a_write_keeps_the_notes_permissions_and_leaves_no_temporary_file(store, root):
    (root / "todo.md").chmod(0o640)
    store.write(TODO, "new\n", 1)
    assert (root / "todo.md").stat().st_mode & 0o777 == 0o640
    assert not [p for p in root.rglob(".notes-store-*")] and not list(store.scratch.iterdir())


def test_temporary_files_are_made_beside_the_notes_folder_never_inside_it(store, root, monkeypatch):
    seen = []
    replace = os.replace

    def watch(source, target, **folders):  # the moment the temporary file holds the whole new text
        seen.append(([p.name for p in root.rglob(".notes-store-*")], [p.read_text() for p in store.scratch.iterdir()]))
        return replace(source, target, **folders)

    monkeypatch.setattr(os, "replace", watch)
    store.write(TODO, "the new text\n", 1)
    assert store.scratch == root.with_name(root.name + SCRATCH_SUFFIX)
    assert seen == [([], ["the new text\n"])]  # nothing inside the notes folder, even mid-write


def test_a_link_planted_where_the_temporary_folder_goes_is_not_followed(root):
    # Someone who can write beside the folder points `<folder>.notes-tmp` into the notes: the
    # store does not follow it; it falls back to a hidden folder, which the notes server refuses.
    root.with_name(root.name + SCRATCH_SUFFIX).symlink_to(root / "docs")
    store = NotesStore(root)
    assert store.scratch == root / ".notes-store"
    store.write(TODO, "new\n", 1)
    assert sorted(p.name for p in (root / "docs").iterdir()) == ["mcp.md"] and (root / "todo.md").read_text() == "new\n"


# ---- hidden characters in a note update (issue 22) ----------------------------------------------


@pytest.mark.parametrize("hidden", ["\u202e", "\u2067", "\u200e", "\x00", "\x1b]8;;evil\x07", "\r", "\ufeff"])
def test_a_note_update_with_hidden_characters_is_refused_before_anyone_is_asked_to_approve_it(store, root, hidden):
    executor = AuditedExecutor(notes_tools(store), audit=store.audit)
    content = f"# To do\n- [ ] pay the invoice{hidden}txt.exe\n"
    for tool, arguments in (("preview_note_update", {"path": TODO, "content": content}),
                            ("apply_note_update", {"path": TODO, "content": content, "expected_version": 1})):
        refused = run(executor, tool, arguments)
        assert refused.error_code == "INVALID_INPUT" and refused.steps[-1].name == "schema"
        assert refused.result["error"]["message"].startswith("content: contains ")
        assert f"(U+{ord(hidden[0]):04X})" in refused.result["error"]["message"]
    assert executor.approvals.pending == {} and store.writes == 0
    assert [record.result for record in store.audit.records] == ["INVALID_INPUT"]  # the refused write is audited
    with pytest.raises(ToolError) as direct:  # the store's own API refuses it too
        store.write(TODO, content, 1)
    assert direct.value.code == "INVALID_INPUT"


def test_a_note_update_keeps_tabs_newlines_crlf_and_joiners(store, root):
    content = "# To do\r\n\t- [x] done 👩\u200d💻\n中文\n"
    assert store.write(TODO, content, 1)["version"] == 2
    assert (root / "todo.md").read_bytes() == content.encode()


# ---- writes as safe as reads: exactly the path approved, no link followed --------------------------


def test_a_symlink_swapped_in_after_approval_fails_the_write_and_no_other_note_changes(store, root):
    (root / "a.md").write_text("note a\n")
    (root / "b.md").write_text("note b\n")
    executor = AuditedExecutor(notes_tools(store), audit=store.audit)
    arguments = {"path": "/workspace/a.md", "content": "approved for a\n", "expected_version": 1}
    approved(executor, "apply_note_update", arguments)
    (root / "a.md").unlink()
    (root / "a.md").symlink_to("b.md")  # the swap, after the person approved a.md
    refused = run(executor, "apply_note_update", arguments)
    assert refused.error_code == "FORBIDDEN"
    assert refused.result["error"]["message"] == ("'/workspace/a.md': a symbolic link is on the way (to "
                                                  "'/workspace/b.md'); the store reads and writes only the exact path named")  # fmt: skip
    last = store.audit.records[-1]
    assert (last.arguments["path"], last.result) == ("/workspace/a.md", "FORBIDDEN")  # the audit says so
    assert (root / "b.md").read_text() == "note b\n" and (root / "a.md").is_symlink() and store.writes == 0


def test_a_folder_swapped_for_a_link_between_check_and_write_is_not_followed(store, root, tmp_path, monkeypatch):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "plan.md").write_text("outside\n")
    (root / "docs" / "plan.md").write_text("inside\n")
    store.read("/workspace/docs/plan.md")
    resolve = store.workspace.resolve

    def swap_after_the_check(path):
        real = resolve(path)
        (root / "docs").rename(tmp_path / "docs-moved")
        (root / "docs").symlink_to(outside)  # what the write would follow
        return real

    monkeypatch.setattr(store.workspace, "resolve", swap_after_the_check)
    with pytest.raises(ToolError) as refused:
        store.write("/workspace/docs/plan.md", "written\n", 1)
    assert refused.value.code == "FORBIDDEN" and "not followed" in refused.value.message
    assert (outside / "plan.md").read_text() == "outside\n" and str(tmp_path) not in refused.value.message
    assert not list(outside.iterdir())[1:]  # no temporary file left there either


@pytest.mark.parametrize("action", ["read", "write"])
def test_a_hard_link_to_a_file_outside_the_root_is_refused_on_read_and_write(store, root, tmp_path, action):
    (tmp_path / "secret.txt").write_text("TOP SECRET\n")
    os.link(tmp_path / "secret.txt", root / "leak.md")
    with pytest.raises(ToolError) as refused:
        store.read("leak.md") if action == "read" else store.write("leak.md", "overwritten\n", 1)
    assert refused.value.code == "FORBIDDEN" and "more than one hard link" in refused.value.message
    assert "TOP SECRET" not in refused.value.message and str(tmp_path) not in refused.value.message
    assert (tmp_path / "secret.txt").read_text() == "TOP SECRET\n"


def test_a_link_inside_the_root_is_refused_too_the_write_goes_to_the_exact_path_named(store, root):
    (root / "alias.md").symlink_to("todo.md")
    before = (root / "todo.md").read_text()
    for attempt in (lambda: store.read("alias.md"), lambda: store.write("alias.md", "x\n", 1)):
        with pytest.raises(ToolError, match="a symbolic link is on the way") as refused:
            attempt()
        assert refused.value.code == "FORBIDDEN"
    assert (root / "todo.md").read_text() == before
    assert store.write("/workspace/docs/../todo.md", "by its own name\n", 1)["path"] == TODO  # '..' is fine


def test_a_write_that_died_between_its_rename_and_its_commit_is_completed_by_its_retry(store, root, monkeypatch):
    import course_lib.notes_store as notes_store

    swap_in = notes_store._swap_in

    def dies_after_the_rename(*args):
        swap_in(*args)
        raise KeyboardInterrupt  # the process goes before the transaction commits

    monkeypatch.setattr(notes_store, "_swap_in", dies_after_the_rename)
    with pytest.raises(KeyboardInterrupt):
        anyio.run(lambda: store.apply(TODO, "approved\n", 1, key="act_1"))
    assert (root / "todo.md").read_text() == "approved\n" and store.writes == 0  # renamed, not recorded
    monkeypatch.undo()
    again = NotesStore(root)  # the restart; the host retries the same approved action
    assert anyio.run(lambda: again.apply(TODO, "approved\n", 1, key="act_1")) == ({"path": TODO, "version": 2}, False)
    assert again.writes == 1 and again.read(TODO) == ("approved\n", 2)
    assert anyio.run(lambda: again.apply(TODO, "approved\n", 1, key="act_1"))[1] is True  # and once only
