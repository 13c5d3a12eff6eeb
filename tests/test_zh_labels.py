"""Labels course_lib prints beside its data, in both editions: an outcome (ok / 成功, an error code as it
is), a message's direction (app→server / 应用→服务器), a verification verdict (ok / 通过, FAIL / 失败), the
audit table's result. The values code compares and records keep stay English."""

from __future__ import annotations

import anyio
from pydantic import BaseModel, ConfigDict

from course_lib.connection import WireMessage
from course_lib.execution import Executor, Session, Step, Tool, ToolError, outcome_label
from course_lib.retry import Attempt
from course_lib.verify import Finding


class _Args(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    text: str


async def _echo(args, ctx):
    return {"echoed": args.text}


async def _missing(args, ctx):
    raise ToolError("NOT_FOUND", "no such note")


def _executions():
    executor = Executor([Tool("echo", "Echo", _Args, _echo), Tool("missing", "Missing", _Args, _missing)])

    async def both():
        return [await executor.execute(f"call_{n}", n, '{"text": "a"}', Session("alice")) for n in ("echo", "missing")]

    return anyio.run(both)


def test_outcomes_in_english_read_as_before(en):
    good, bad = _executions()
    assert (good.outcome_label, bad.outcome_label) == ("ok", "NOT_FOUND")
    assert [s.outcome_label for s in good.steps] == [s.outcome for s in good.steps] == ["ok"] * 6
    assert Attempt(1, 0.0, "ok").outcome_label == "ok" and outcome_label(None) == "ok"


def test_outcomes_in_chinese_say_success_and_keep_the_codes(zh):
    good, bad = _executions()
    assert (good.outcome_label, bad.outcome_label) == ("成功", "NOT_FOUND")
    assert [s.outcome for s in good.steps] == ["ok"] * 6  # what code reads stays "ok"
    assert Step("execute", "TIMEOUT").outcome_label == "TIMEOUT" and Attempt(2, 0.1, "ok").outcome_label == "成功"


def test_a_messages_direction_is_a_label_in_chinese_and_a_value_in_code(en, monkeypatch):
    sent = WireMessage("app→server", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert sent.direction_label == "app→server"
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert sent.direction_label == "应用→服务器" and sent.direction == "app→server"
    assert WireMessage("server→app", {"id": 1}).direction_label == "服务器→应用"


def test_verification_verdicts_line_up_in_both_editions(en, monkeypatch):
    from course_lib.lang import display_width

    english = [str(Finding("rules stay rules", ok)).split(" rules")[0] for ok in (True, False)]
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    chinese = [str(Finding("rules stay rules", ok)).split(" 规则")[0] for ok in (True, False)]
    assert english == ["ok  ", "FAIL"] and chinese == ["通过", "失败"]
    assert {display_width(v) for v in english + chinese} == {4}


def test_the_audit_table_shows_the_result_in_the_editions_words(tmp_path, zh):
    from course_lib.notes_store import AuditLog

    log = AuditLog()
    log.record("alice", "apply_note_update", {"path": "/workspace/todo.md"}, "ok", action_id="act_1", detail="trace-0001 executed")
    log.record("alice", "apply_note_update", {"path": "/workspace/todo.md"}, "CONFLICT", action_id="act_2",
               detail="trace-0002 executed")  # fmt: skip
    rows = log.table().splitlines()
    assert "成功" in rows[1] and " ok " not in rows[1] and "CONFLICT" in rows[2]
    assert [r.result for r in log.records] == ["ok", "CONFLICT"]  # the records stay English
