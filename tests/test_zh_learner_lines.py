"""More lines course_lib prints for the learner, in both editions: retries (notebook 05), the notes
store's diff and audit table (06, 09), the approval policy's reasons (06) and the HTTP server's
refusals (03c). The English exactly as the stored English outputs show it; Chinese in the zh-CN
edition (`COURSE_LANG=zh-CN`), with the values (error codes, tool names, trace ids, paths) unchanged,
and the records themselves (what an exercise or a test reads) English in both."""

from __future__ import annotations

import json

import anyio
import pytest
from mcp.types import ToolAnnotations
from pydantic import BaseModel, ConfigDict

from course_lib.approval import Provenance, approval_policy
from course_lib.execution import Executor, Session, Tool, ToolError
from course_lib.http_transport import ConfigurationError, HttpSettings
from course_lib.lang import display_width
from course_lib.notes_store import (AuditedExecutor, ManualClock, NotesStore, diff_for_edition, notes_tools,
                                   scratch_workspace, show_diff)
from course_lib.retry import RetryPolicy, execute_with_retries




# ---- retry: why the retrying stopped (notebook 05) ------------------------------------------------


class _Args(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    path: str


def _stopped(code: str = "UPSTREAM_ERROR", failures: int = 10, policy: RetryPolicy = RetryPolicy(), **tool) -> str:
    async def handler(args, ctx):
        handler.calls += 1
        if handler.calls <= failures:
            raise ToolError(code, "temporarily unavailable")
        return {"path": args.path}

    handler.calls = 0
    executor = Executor([Tool("save" if tool else "read", "", _Args, handler, **tool)])
    if tool:
        executor.approvals.approve(executor.approvals.request("save", {"path": "a"}, "alice").action_id)

    async def no_wait(seconds):
        pass

    name = "save" if tool else "read"
    outcome = anyio.run(lambda: execute_with_retries(executor, "c1", name, '{"path": "a"}', Session("alice"),
                                                     policy=policy, sleep=no_wait))  # fmt: skip
    return outcome.stopped_because


def _every_reason() -> list[str]:
    return [_stopped(failures=0), _stopped("NOT_FOUND"), _stopped(policy=RetryPolicy(max_attempts=3)),
            _stopped(policy=RetryPolicy(max_attempts=10, budget=0.5, jitter=0)),
            _stopped(failures=1, side_effect=True)]  # fmt: skip


def test_why_retrying_stopped_in_english_is_unchanged(en):
    assert _every_reason() == [
        "it succeeded",
        "NOT_FOUND is not retryable: another identical attempt would fail the same way",
        "the attempt cap (3) was reached",
        "the time budget (0.5s of waiting) would be exceeded",
        "save writes without an idempotency key: a retry could write twice"]


def test_why_retrying_stopped_in_chinese_keeps_codes_and_names(zh):
    assert _every_reason() == [
        "它成功了",
        "NOT_FOUND 不可重试：再做一次完全相同的尝试，也会以同样的方式失败",
        "已达到尝试次数上限（3 次）",
        "会超出时间预算（总共 0.5s 的等待）",
        "save 的写入没有幂等键：重试可能写入两次"]


def test_the_retry_policy_check_quotes_the_chinese_reason(zh, capsys):
    from course_lib.exercises.nb05 import check_retry_policy

    assert check_retry_policy(RetryPolicy(budget=0.5)) is False
    out = capsys.readouterr().out
    assert "停止原因：会超出时间预算（总共 0.5s 的等待）。" in out and "time budget" not in out


# ---- notes_store: the preview's diff and the audit table (notebooks 06, 09) -----------------------


@pytest.fixture
def store():
    notes = NotesStore(scratch_workspace(), clock=ManualClock())
    yield notes
    notes.close()


def _audited(store: NotesStore) -> None:
    """Four records: stopped at approval, executed, replayed, rejected by a person."""
    executor = AuditedExecutor(notes_tools(store), audit=store.audit)
    arguments = '{"path": "todo.md", "content": "done\\n", "expected_version": 1}'

    def call():
        return anyio.run(lambda: executor.execute("c1", "apply_note_update", arguments, Session("alice")))

    asked = call()
    executor.approvals.approve(asked.result["error"]["action_id"])
    call()
    executor.approvals.approve(executor.approvals.request("apply_note_update", json.loads(arguments), "alice").action_id)
    assert call().result["data"]["replayed"] is True
    pending = executor.approvals.request("apply_note_update", {"path": "/workspace/notes.txt"}, "alice")
    executor.approvals.reject(pending.action_id)


def test_the_preview_tool_result_is_english_in_both_editions(store, monkeypatch):
    # preview_note_update returns this diff to the model: it must not depend on the learner's language.
    text, _ = store.read("todo.md")
    results = []
    for edition in ("en", "zh-CN"):
        monkeypatch.setenv("COURSE_LANG", edition)
        results.append((store.preview("todo.md", "x\n"), store.preview("todo.md", text)))
    assert results[0] == results[1]
    preview, unchanged = results[1]
    assert preview["diff"].startswith("--- /workspace/todo.md (version 1)\n+++ /workspace/todo.md (after the update)\n")
    assert unchanged["diff"] == "(no change)\n"


def test_the_diff_printed_for_the_learner_in_both_editions(store, monkeypatch, capsys):
    text, _ = store.read("todo.md")
    diff = store.preview("todo.md", "# To do\n--- (version 9)\n+++ x (after the update)\n")["diff"]
    monkeypatch.setenv("COURSE_LANG", "en")
    assert diff_for_edition(diff) == diff and diff_for_edition("(no change)\n") == "(no change)\n"
    show_diff(diff)
    assert capsys.readouterr().out == diff + "\n"  # what print(diff) shows: the English output is unchanged
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    chinese = diff_for_edition(diff)
    assert chinese.startswith("--- /workspace/todo.md（版本 1）\n+++ /workspace/todo.md（更新之后）\n@@ ")
    # Only the two header lines change: the note's own lines, even ones that look like headers, stay as written.
    assert chinese.splitlines()[2:] == diff.splitlines()[2:] and "+--- (version 9)\n++++ x (after the update)\n" in chinese
    assert diff_for_edition(store.preview("todo.md", text)["diff"]) == "（没有变化）\n"
    assert diff_for_edition("not a diff\n") == "not a diff\n"
    show_diff(diff)
    assert capsys.readouterr().out == chinese + "\n"


def test_the_audit_table_in_english_is_unchanged(store, en):
    assert store.audit.table() == "(no side effects recorded)"
    _audited(store)
    lines = store.audit.table().splitlines()
    assert lines[0].split() == ["when", "who", "tool", "action", "target", "result", "detail"]
    assert [line.split("  ")[-1].strip() for line in lines[1:]] == [
        "trace-0001 stopped at approval", "trace-0002 executed", "trace-0003 replayed: stored result returned",
        "rejected by a person"]


def test_the_audit_table_in_chinese_translates_headers_and_details_not_records(store, zh):
    assert store.audit.table() == "（没有记录到副作用）"
    _audited(store)
    lines = store.audit.table().splitlines()
    assert lines[0].split() == ["时间", "谁", "工具", "动作", "目标", "结果", "详情"]
    assert [line.split("  ")[-1].strip() for line in lines[1:]] == [
        "trace-0001 停在批准这一步", "trace-0002 已执行", "trace-0003 重放：返回了存下的结果", "被人拒绝"]
    assert lines[1].index("alice") == 22 == display_width(lines[0][:lines[0].index("谁")])  # columns line up on screen
    assert [r.detail for r in store.audit.records][-1] == "rejected by a person"  # the record stays English
    assert "APPROVAL_REQUIRED" in lines[1] and " todo.md " in lines[1]


def test_the_audit_details_name_the_step_where_the_call_stopped_in_chinese(store, zh):
    executor = AuditedExecutor(notes_tools(store), audit=store.audit)
    calls = ['{"path": "todo.md", "content": 1, "expected_version": 1}',  # wrong type: stops at schema
             '{"path": "todo.md", "content": "x\\n", "expected_version": 7}']  # stale version: CONFLICT at execute
    for arguments in calls:
        executor.approvals.approve(executor.approvals.request("apply_note_update", json.loads(arguments), "alice").action_id)
        anyio.run(lambda: executor.execute("c1", "apply_note_update", arguments, Session("alice")))
    details = [line.split("  ")[-1].strip() for line in store.audit.table().splitlines()[1:]]
    assert details == ["trace-0001 停在 schema 这一步", "trace-0002 停在执行这一步"]
    assert [r.detail for r in store.audit.records] == ["trace-0001 stopped at schema", "trace-0002 stopped at execute"]


# ---- approval_policy: the reasons notebook 06 prints ----------------------------------------------


def _policies():
    email = Provenance("call_1", "fs__read_text_file")
    read_only = ToolAnnotations(read_only_hint=True)
    return [approval_policy(read_only, trusted_server=True),
            approval_policy(ToolAnnotations(read_only_hint=True, open_world_hint=False), trusted_server=True),
            approval_policy(read_only, trusted_server=True, after=[email]),
            approval_policy(read_only, trusted_server=False),
            approval_policy(ToolAnnotations(read_only_hint=False, destructive_hint=False), trusted_server=True),
            approval_policy(None, trusted_server=True, side_effect=True, after=[email])]  # fmt: skip


def test_the_approval_reasons_in_english_are_unchanged(en):
    assert [p.reasons for p in _policies()] == [
        ("read-only, as a trusted server says",),
        ("read-only and closed world, as a trusted server says",),
        ("read-only but open world, right after untrusted output: a read can carry data out",
         "proposed after untrusted output of fs__read_text_file (call_1)"),
        ("annotations ignored: the server is not trusted, so the cautious defaults apply", "not read-only and destructive"),
        ("not read-only (additive only)",),
        ("no annotations: the cautious defaults apply", "the app's own contract: it changes data",
         "not read-only and destructive", "proposed after untrusted output of fs__read_text_file (call_1)")]


def test_the_approval_reasons_in_chinese_decide_the_same(zh, monkeypatch):
    chinese = _policies()
    assert [p.reasons for p in chinese] == [
        ("只读，这是受信任的服务器说的",),
        ("只读且面向封闭世界，这是受信任的服务器说的",),
        ("只读，但面向开放世界，而且紧跟在不可信的输出之后：一次读取也能把数据带出去",
         "在读过不可信的输出之后提出：fs__read_text_file (call_1)"),
        ("注解被忽略：这个服务器不受信任，所以采用谨慎的默认值", "不是只读的，而且有破坏性"),
        ("不是只读的（只做添加）",),
        ("没有注解：采用谨慎的默认值", "应用自己定的契约：它会改变数据", "不是只读的，而且有破坏性",
         "在读过不可信的输出之后提出：fs__read_text_file (call_1)")]
    monkeypatch.setenv("COURSE_LANG", "en")
    assert [(p.needs_approval, p.after) for p in chinese] == [(p.needs_approval, p.after) for p in _policies()]


# ---- http_transport: the refusals notebook 03c shows ----------------------------------------------


def test_the_http_refusals_in_both_editions(monkeypatch):
    cases = [HttpSettings(host="0.0.0.0", port=8765), HttpSettings(host="0.0.0.0", token="t"),
             HttpSettings(token="t", public_url="https://files.example/")]  # fmt: skip

    def messages():
        out = []
        for settings in cases:
            with pytest.raises(ConfigurationError) as refused:
                settings.checked()
            out.append(str(refused.value))
        return out

    monkeypatch.setenv("COURSE_LANG", "en")
    assert messages()[0] == ("refusing to serve on 0.0.0.0 without a bearer token: anyone who can reach this address "
                             "could call the tools. Give --token-file PATH or set COURSE_MCP_TOKEN.")  # fmt: skip
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    chinese = messages()
    assert chinese[0] == ("拒绝在 0.0.0.0 上提供服务：没有 bearer 令牌，能访问这个地址的任何人都可以调用这些工具。"
                          "请给出 --token-file PATH，或设置 COURSE_MCP_TOKEN。")  # fmt: skip
    assert chinese[1].startswith("在所有地址（0.0.0.0）上提供服务需要 --public-url")
    assert chinese[2] == "--public-url 必须以端点的路径 /mcp 结尾：https://files.example/"
