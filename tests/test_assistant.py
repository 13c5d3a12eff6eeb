"""The notes assistant end to end on the offline model: search, parallel reads, cited answer, a gap
that waits for approval, and a save that happens once — only after approval."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import partial

import anyio
import pytest

from course_lib.approval import action_id
from course_lib.assistant import READ, SAVE, SEARCH, NotesAssistant
from course_lib.execution import Session
from course_lib.notes_server import GapStore
from course_lib.retry import execute_with_retries

QUESTION = "Where is my understanding of agent loops and workflows incomplete? Save a learning gap."
GAP = {"topic": "Streaming tool calls", "evidence": "/notes/streaming-tool-calls.md is only a stub",
       "suggestion": "Write it"}  # fmt: skip


@pytest.fixture
def assistant(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with NotesAssistant() as assistant:
        yield assistant


def tools_calls(assistant) -> int:
    return len(assistant.host.connections["notes"].exchanges("tools/call"))


def test_the_model_sees_three_strict_tools_and_no_idempotency_key(assistant):
    declarations = {d["name"]: d for d in assistant.executor.declarations()}
    assert list(declarations) == [SEARCH, READ, SAVE]
    assert all(d["strict"] for d in declarations.values())
    assert list(declarations[SAVE]["parameters"]["properties"]) == ["topic", "evidence", "suggestion"]
    server_rule = assistant.host.route(SAVE).declaration.input_schema
    assert "idempotency_key" in server_rule["required"]  # the server needs it; the app fills it in
    contract = {name: (t.side_effect, t.idempotent) for name, t in assistant.executor.tools.items()}
    assert contract == {SEARCH: (False, False), READ: (False, False), SAVE: (True, True)}


def test_a_full_run_stops_for_approval_then_saves_once(assistant):
    result = assistant.ask(QUESTION)
    assert (result.status, result.reason) == ("incomplete", "approval_required")
    first, reads, proposal = result.responses
    assert [i.name for i in first.output] == [SEARCH]
    assert [i.name for i in reads.output] == [READ, READ]  # both reads in one response
    shown = proposal.output_text
    assert "Sources: /notes/agent-loop-vs-tool-calling.md" in shown and "only a stub" in shown
    assert assistant.gaps == [] and assistant.kb.gaps.writes == 0  # nothing written yet
    [pending] = result.pending
    arguments = json.loads(pending.arguments_text)
    assert arguments["topic"] == "Workflow vs Agent"

    result = assistant.approve(result)
    assert result.status == "completed" and result.answer.endswith("Saved the learning gap as record gap-0001.")
    [record] = assistant.gaps
    assert record["idempotency_key"] == action_id(SAVE, arguments, "learner")  # the action id is the key
    assert record["topic"] == "Workflow vs Agent"


def test_a_rejected_gap_is_never_stored(assistant):
    result = assistant.reject(assistant.ask(QUESTION))
    assert result.status == "completed" and "I did not save the learning gap" in result.answer
    assert assistant.gaps == []
    kinds = [(t.execution.tool, t.execution.error_code) for t in assistant.executor.history]
    assert kinds[-1] == (SAVE, "APPROVAL_REQUIRED")  # the history kept what the executor returned


def test_the_approval_panel_decides_and_resume_continues(assistant):
    result = assistant.ask(QUESTION)
    panel = assistant.panel(result)
    assert "Approval needed: notes__save_learning_gap for user learner" in panel.text()
    assert "idempotency_key" not in panel.text()  # the person approves what the model proposed
    panel.approve_button.click()
    result = assistant.resume(result)
    assert result.status == "completed" and len(assistant.gaps) == 1
    with pytest.raises(ValueError, match="nothing is waiting for approval"):
        assistant.panel(result)


def test_a_model_cannot_supply_its_own_idempotency_key(assistant):
    sent = tools_calls(assistant)
    text = json.dumps({**GAP, "idempotency_key": "act_chosen_by_model"})
    execution = assistant.host.run(assistant.executor.execute, "call_1", SAVE, text, Session("learner"))
    assert execution.error_code == "INVALID_INPUT" and execution.steps[-1].name == "schema"
    assert "unknown property 'idempotency_key'" in execution.result["error"]["message"]
    assert tools_calls(assistant) == sent


def test_a_retried_save_after_a_lost_answer_creates_one_record(assistant):
    tool = assistant.executor.tools[SAVE]
    lost: list[str] = []

    async def loses_first_answer(arguments, context):
        result = await tool.handler(arguments, context)  # the server stores the gap...
        if not lost:
            lost.append(context.call_id)
            await anyio.sleep(10)  # ...but this answer never arrives
        return result

    assistant.executor.tools[SAVE] = replace(tool, handler=loses_first_answer, timeout=0.2)
    learner, text = Session("learner"), json.dumps(GAP)
    asked = assistant.host.run(assistant.executor.execute, "call_s", SAVE, text, learner)
    assistant.executor.approvals.approve(asked.result["error"]["action_id"])

    async def no_wait(seconds):
        pass

    outcome = assistant.host.run(partial(execute_with_retries, sleep=no_wait), assistant.executor, "call_s", SAVE,
                                 text, learner)  # fmt: skip
    assert [a.outcome for a in outcome.attempts] == ["TIMEOUT", "ok"]
    assert outcome.execution.result["data"] == {"record_id": "gap-0001", "replayed": True}
    assert len(assistant.gaps) == 1 and assistant.kb.gaps.writes == 1


def test_chit_chat_uses_no_tool(assistant):
    result = assistant.ask("Hi there!")
    assert (result.status, result.steps, result.executions) == ("completed", 1, [])


def test_gaps_go_to_a_database_file_when_a_folder_is_given(monkeypatch, tmp_path):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with NotesAssistant(gaps_dir=tmp_path) as assistant:
        assistant.approve(assistant.ask(QUESTION))
    assert GapStore(tmp_path).records[0]["topic"] == "Workflow vs Agent"  # another process would see it too


@pytest.mark.parametrize("clicked", ["approve", "reject", None])
def test_the_cells_after_the_panel_work_whatever_the_learner_clicked(assistant, clicked):
    # Regression (notebook 09): clicking Reject made `assistant.gaps[0]` raise IndexError, and
    # clicking Approve made the next cell's own click report "not pending any more".
    result = assistant.ask(QUESTION)
    panel = assistant.panel(result)
    if clicked:
        getattr(panel, f"{clicked}_button").click()  # the learner, live
    [pending] = result.pending
    if panel.decision is None:  # what notebook 09 does when nobody clicked
        panel.approve()
    assert not panel.status.startswith("✗ not pending")
    result = assistant.resume(result)
    assert result.status == "completed"
    record = assistant.record_for(pending)
    if clicked == "reject":
        assert record is None and assistant.gaps == []
        assert "did not save" in result.answer
    else:
        assert record["idempotency_key"] == pending.result["error"]["action_id"]
    again = assistant.resume(result)  # the cell run twice: nothing pending, the model is not asked again
    assert again is result and again.steps == result.steps
