"""The course's loops and its capstone on any model (`any_model`: the offline model, then the stand-in
over real HTTP with keys set, on the default model and on a reasoning model). Only what must hold on
every model is asserted: how the run ended, what was read and executed, that the answer quotes the tool
output exactly, the ids that pair calls and results; never the wording of an answer."""

from __future__ import annotations

import json

import pytest

from course_lib.arguments import ReadTextFileArgs
from course_lib.assistant import SAVE, NotesAssistant
from course_lib.backend import make_anthropic_client, make_client
from course_lib.chat_loop import run_chat_loop
from course_lib.course import start_course
from course_lib.evaluation import load_questions, run_eval, task_completion
from course_lib.execution import Executor, Session
from course_lib.guarded_loop import run_guarded_loop
from course_lib.messages_loop import run_messages_loop
from course_lib.paths import workspace_dir
from course_lib.streaming import run_streamed

READ_20 = "Show the first 20 lines of /workspace/notes.txt"
TWO = "Show the first 3 lines of /workspace/notes.txt and the first 3 lines of /workspace/todo.md"


def head(name: str, lines: int) -> str:
    return "".join((workspace_dir() / name).read_text(encoding="utf-8").splitlines(keepends=True)[:lines])


@pytest.fixture
def course(any_model):
    course = start_course(quiet=True)
    yield course
    course.close()


def test_the_loop_reads_and_quotes_the_result(course):
    result = course.run(READ_20)
    assert result.status == "completed"
    assert head("notes.txt", 20).strip() in result.answer  # quoted exactly, whatever the words around it
    [link] = result.trace
    assert link.ok and link.arguments == {"path": "/workspace/notes.txt", "head": 20}
    sent = course.mcp.exchanges("tools/call")[-1].request
    assert link.mcp_id == sent["id"] and sent["params"]["arguments"] == {"path": "/workspace/notes.txt", "head": 20}


def test_a_refused_read_is_reported_never_quoted(course):
    result = course.run("Show the first 5 lines of /etc/passwd")
    assert result.status == "completed" and [link.error_code for link in result.trace] == ["FORBIDDEN"]
    assert "root:" not in result.answer and "FORBIDDEN" in result.answer


def test_two_reads_in_one_turn_come_back_under_their_own_call_ids(course):
    result = course.run(TWO)
    assert result.status == "completed"
    assert sorted(link.arguments["path"] for link in result.trace) == ["/workspace/notes.txt", "/workspace/todo.md"]
    assert len({link.call_id for link in result.trace}) == 2
    assert head("notes.txt", 3).strip() in result.answer and head("todo.md", 3).strip() in result.answer


def test_the_streamed_loop(course):
    result = run_streamed(course.client, course.host, READ_20)
    assert result.status == "completed" and head("notes.txt", 20).strip() in result.answer


def test_the_guarded_loop(course):
    executor = Executor([course.host.executor_tool("fs__read_text_file", ReadTextFileArgs)])
    with make_client() as client:
        result = run_guarded_loop(client, course.host, executor, Session("alice"), "Show the first 2 lines of /workspace/notes.txt")
    assert result.status == "completed"
    [execution] = result.executions
    assert execution.ok and execution.result["data"]["text"] == head("notes.txt", 2)
    assert head("notes.txt", 2).strip() in result.answer


def test_the_chat_completions_loop(course):
    run = run_chat_loop(course.client, course.host, READ_20)
    assert head("notes.txt", 20).strip() in run.answer
    replies = [m for m in run.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in replies] == [link.call_id for link in run.trace]


def test_the_messages_loop(course):
    with make_anthropic_client() as claude:
        run = run_messages_loop(claude, course.host, READ_20)
    assert head("notes.txt", 20).strip() in run.answer
    assert all(link.ok for link in run.trace) and len(run.trace) == 1


# ---- the capstone -------------------------------------------------------------------------------------------

QUESTION = "Where is my understanding of agent loops and workflows incomplete? Save a learning gap."


def test_the_notes_assistant_waits_for_approval_then_saves_once(any_model):
    with NotesAssistant() as assistant:
        result = assistant.ask(QUESTION)
        assert (result.status, result.reason) == ("incomplete", "approval_required")
        [pending] = result.pending
        assert pending.tool == SAVE and json.loads(pending.arguments_text)["topic"]
        assert assistant.gaps == []  # nothing saved before approval
        done = assistant.approve(result)
        assert done.status == "completed" and len(assistant.gaps) == 1
        assert assistant.gaps[0]["id"] in done.answer


def test_the_evaluation_runs_on_any_model(any_model):
    traces = run_eval(load_questions())
    assert len(traces) == len(load_questions()) and all(trace.calls or trace.answer for trace in traces)
    completion = task_completion(traces)
    # Issue 27: reworded answers with markdown and a closing line once passed 2 of 24; the checks judge
    # meaning now, so every model passes the tasks that are right (the stored figure of 09: 20 of 24).
    assert completion.failures == ("q03", "q04", "q06", "q23"), any_model
    assert completion.total == len(traces)
