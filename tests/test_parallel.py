import time

import anyio
from pydantic import BaseModel, ConfigDict

from course_lib.execution import Executor, Session, Tool
from course_lib.parallel import Call, execute_batch

started: list[str] = []


class PathArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    path: str


async def slow_read(args, ctx):
    started.append(args.path)
    await anyio.sleep(0.2)
    if args.path.startswith("/secret"):
        from course_lib.execution import ToolError

        raise ToolError("FORBIDDEN", "outside the workspace")
    return {"path": args.path}


async def write(args, ctx):
    started.append(f"write {args.path}")
    return {"written": args.path}


EXECUTOR = Executor([Tool("read", "Read", PathArgs, slow_read), Tool("write", "Write", PathArgs, write, side_effect=True)])
ALICE = Session("alice")


def batch(calls, **kw):
    started.clear()
    t0 = time.perf_counter()
    results = anyio.run(lambda: execute_batch(EXECUTOR, calls, ALICE, **kw))
    return results, time.perf_counter() - t0


def reads(n):
    return [Call(f"call_{i}", "read", f'{{"path": "/w/{i}.txt"}}') for i in range(n)]


def test_reads_run_together_and_results_keep_their_call_ids():
    results, elapsed = batch(reads(3))
    assert [r.call_id for r in results] == ["call_0", "call_1", "call_2"]
    assert [r.result["data"]["path"] for r in results] == ["/w/0.txt", "/w/1.txt", "/w/2.txt"]
    assert elapsed < 0.45  # three 0.2 s reads, not 0.6 s


def test_parallel_false_runs_in_order():
    results, elapsed = batch(reads(3), parallel=False)
    assert started == ["/w/0.txt", "/w/1.txt", "/w/2.txt"] and elapsed >= 0.6


def test_mixed_batch_yields_each_outcome_on_its_own_call_id_and_one_failure_cancels_nothing():
    calls = [Call("c_ok", "read", '{"path": "/w/a.txt"}'), Call("c_forbidden", "read", '{"path": "/secret/x"}'),
             Call("c_write", "write", '{"path": "/w/b.txt"}')]  # fmt: skip
    results, _ = batch(calls)
    assert {r.call_id: (r.error_code or "OK") for r in results} == {
        "c_ok": "OK", "c_forbidden": "FORBIDDEN", "c_write": "APPROVAL_REQUIRED",
    }  # fmt: skip


def test_a_reused_call_id_with_different_arguments_is_refused_and_not_executed():
    calls = [Call("dup", "read", '{"path": "/w/a.txt"}'), Call("dup", "read", '{"path": "/w/b.txt"}'),
             Call("dup", "read", '{"path": "/w/a.txt"}')]  # fmt: skip
    results, _ = batch(calls)
    assert started == ["/w/a.txt"]
    assert results[0].ok and results[2] is results[0]
    assert results[1].error_code == "INVALID_INPUT" and "already used" in results[1].result["error"]["message"]



def test_the_refused_duplicate_notes_not_executed_in_the_edition_language_and_tells_the_model_in_english(monkeypatch):
    calls = [Call("dup", "read", '{"path": "/w/a.txt"}'), Call("dup", "read", '{"path": "/w/b.txt"}')]
    monkeypatch.setenv("COURSE_LANG", "en")
    english, _ = batch(calls)
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    chinese, _ = batch(calls)
    assert english[1].trace_id == "(not executed)" and chinese[1].trace_id == "（未执行）"
    assert english[0].trace_id.startswith("trace-") and chinese[0].trace_id.startswith("trace-")
    # what the model reads is the app's own English error text, in both editions
    assert chinese[1].output == english[1].output
    assert "was already used in this turn with different arguments" in chinese[1].output

def test_writes_run_one_at_a_time_in_the_model_order():
    EXECUTOR.approvals._granted.clear()
    for path in ("/w/1", "/w/2"):
        pending = EXECUTOR.approvals.request("write", {"path": path}, "alice")
        EXECUTOR.approvals.approve(pending.action_id)
    results, _ = batch([Call("w1", "write", '{"path": "/w/1"}'), Call("w2", "write", '{"path": "/w/2"}')])
    assert started == ["write /w/1", "write /w/2"] and all(r.ok for r in results)


def test_the_model_order_is_kept_around_a_write():
    EXECUTOR.approvals._granted.clear()
    pending = EXECUTOR.approvals.request("write", {"path": "/w/x"}, "alice")
    EXECUTOR.approvals.approve(pending.action_id)
    calls = [Call("r1", "read", '{"path": "/w/1"}'), Call("r2", "read", '{"path": "/w/2"}'),
             Call("w", "write", '{"path": "/w/x"}'), Call("r3", "read", '{"path": "/w/3"}')]  # fmt: skip
    results, _ = batch(calls)
    assert sorted(started[:2]) == ["/w/1", "/w/2"] and started[2:] == ["write /w/x", "/w/3"]
    assert [r.call_id for r in results] == ["r1", "r2", "w", "r3"] and all(r.ok for r in results)
