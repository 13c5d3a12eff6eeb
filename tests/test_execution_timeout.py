"""What a tool's timeout really does (notebook 05 §4): it cancels the handler at the `await` it is
waiting on, and nothing else. Work handed to a thread runs to its end: waited for, the executor answers
late but truly (and logs it); abandoned, the executor answers `TIMEOUT` on time and the write still
lands. The course's own notes server writes in a thread, so a timed-out save may have happened, and its
idempotency key keeps the retry to one record whichever of the two writes reaches the store first."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import replace

import anyio
import pytest
from pydantic import BaseModel, ConfigDict

from course_lib.assistant import PREFIX, save_gap_tool
from course_lib.execution import Executor, Session, Tool
from course_lib.host import McpHost
from course_lib.notes_server import KnowledgeBase, notes_server
from course_lib.retry import RetryPolicy, execute_with_retries

ALICE = Session("alice")
THREAD_WORK = 0.4  # seconds the thread's write takes; the tools' timeout is a quarter of it
TIMEOUT = 0.1


class QueryArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    query: str


def thread_tool(written: list[str], finished: threading.Event, *, abandon: bool) -> Executor:
    """A tool whose write runs in a thread, as the notes server's does."""

    def commit(query: str) -> None:
        time.sleep(THREAD_WORK)
        written.append(query)
        finished.set()

    async def save(args, ctx):
        await anyio.to_thread.run_sync(commit, args.query, abandon_on_cancel=abandon)
        return {"saved": args.query}

    return Executor([Tool("save", "Save a query", QueryArgs, save, timeout=TIMEOUT)])


def run_and_time(executor: Executor, written: list[str]):
    async def main():
        started = anyio.current_time()
        execution = await executor.execute("call_1", "save", '{"query": "timeouts"}', ALICE)
        return execution, anyio.current_time() - started, list(written)

    return anyio.run(main)


def test_an_async_handler_is_stopped_at_its_await_and_what_follows_never_runs():
    after_await = []

    async def handler(args, ctx):
        await anyio.sleep(THREAD_WORK)
        after_await.append(args.query)
        return {}

    executor = Executor([Tool("save", "Save", QueryArgs, handler, timeout=TIMEOUT)])

    async def main():
        execution = await executor.execute("call_1", "save", '{"query": "q"}', ALICE)
        await anyio.sleep(THREAD_WORK * 1.5)
        return execution

    assert anyio.run(main).error_code == "TIMEOUT" and after_await == []


def test_a_thread_the_handler_waits_for_runs_to_its_end_and_the_answer_is_late_but_true():
    written, finished = [], threading.Event()
    executor = thread_tool(written, finished, abandon=False)
    execution, seconds, written_when_answered = run_and_time(executor, written)
    assert execution.ok and execution.steps[-2].name == "execute"  # the timeout did not stop it
    assert seconds >= THREAD_WORK and written_when_answered == ["timeouts"]
    assert [entry.detail for entry in executor.log.for_trace(execution.trace_id)] == [
        f"answered after its timeout of {TIMEOUT:g}s: the handler was waiting on work the timeout cannot cancel "
        "(a thread, a shielded scope)"]


def test_an_abandoned_thread_keeps_the_deadline_but_its_write_still_lands():
    written, finished = [], threading.Event()
    executor = thread_tool(written, finished, abandon=True)
    execution, seconds, written_when_answered = run_and_time(executor, written)
    assert execution.error_code == "TIMEOUT" and seconds < THREAD_WORK and written_when_answered == []
    assert finished.wait(5) and written == ["timeouts"]  # "did not answer", yet written


def test_an_answer_on_time_leaves_no_late_entry_in_the_log():
    async def quick(args, ctx):
        return {}

    executor = Executor([Tool("save", "Save", QueryArgs, quick, timeout=TIMEOUT)])
    execution = anyio.run(executor.execute, "call_1", "save", '{"query": "q"}', ALICE)
    assert execution.ok and executor.log.entries == []


@pytest.mark.parametrize("retry_after", ["before the late write", "after the late write"])
def test_the_notes_servers_timed_out_save_and_its_retry_leave_one_record(retry_after):
    """The real notes server (its SQLite store, its thread) behind the real MCP host; the first save is slow."""
    kb = KnowledgeBase()
    save, late = kb.gaps.save, threading.Event()

    def slow_first(*args, **kwargs):
        first = not late.is_set()
        late.set()
        if first:
            time.sleep(THREAD_WORK)
        return save(*args, **kwargs)

    kb.gaps.save = slow_first
    wait = {"before the late write": 0.0, "after the late write": THREAD_WORK * 2}[retry_after]

    async def fixed_wait(seconds):
        await anyio.sleep(wait)

    with McpHost() as host:
        host.add_server(PREFIX, notes_server(kb))
        tool = replace(save_gap_tool(host), timeout=TIMEOUT)
        executor = Executor([tool])
        arguments = {"topic": "timeouts", "evidence": "05 §4", "suggestion": "retry with the key"}
        executor.approvals.approve(executor.approvals.request(tool.name, arguments, ALICE.user_id).action_id)
        outcome = host.run(execute_with_retries, executor, "call_1", tool.name, json.dumps(arguments), ALICE,
                           policy=RetryPolicy(max_attempts=2), sleep=fixed_wait)  # fmt: skip
        time.sleep(THREAD_WORK * 2)  # the first write has ended by now, whatever the order
    assert [attempt.outcome for attempt in outcome.attempts] == ["TIMEOUT", "ok"]
    assert json.loads(outcome.execution.output)["data"]["replayed"] is (retry_after == "after the late write")
    assert len(kb.gaps.records) == 1 and kb.gaps.writes == 1
