import random

import anyio
from pydantic import BaseModel, ConfigDict

from course_lib.execution import Executor, Session, Tool, ToolError
from course_lib.retry import RetryPolicy, execute_with_retries


class Args(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    path: str


def flaky(failures: int, code: str = "UPSTREAM_ERROR"):
    calls = []

    async def handler(args, ctx):
        calls.append(ctx.action_id)
        if len(calls) <= failures:
            raise ToolError(code, "temporarily unavailable")
        return {"path": args.path}

    return handler, calls


def run(tool, policy=RetryPolicy(), approve=False):
    executor = Executor([tool])
    if approve:
        executor.approvals.approve(executor.approvals.request(tool.name, {"path": "a"}, "alice").action_id)
    waits: list[float] = []

    async def fake_sleep(seconds):
        waits.append(seconds)

    outcome = anyio.run(lambda: execute_with_retries(executor, "c1", tool.name, '{"path": "a"}', Session("alice"),
                                                     policy=policy, sleep=fake_sleep))  # fmt: skip
    return outcome, waits


def test_a_transient_failure_is_retried_with_growing_seeded_delays():
    handler, calls = flaky(2)
    outcome, waits = run(Tool("read", "", Args, handler), RetryPolicy(max_attempts=4, seed=7))
    assert outcome.execution.ok and len(calls) == 3
    assert [a.outcome for a in outcome.attempts] == ["UPSTREAM_ERROR", "UPSTREAM_ERROR", "ok"]
    rng = random.Random(7)
    expected = [round(0.2 * (1 + 0.5 * rng.uniform(-1, 1)), 3), round(0.4 * (1 + 0.5 * rng.uniform(-1, 1)), 3)]
    assert waits == expected and 0.1 <= waits[0] <= 0.3 and 0.2 <= waits[1] <= 0.6


def test_non_retryable_codes_get_exactly_one_attempt():
    for code in ("INVALID_INPUT", "FORBIDDEN", "NOT_FOUND"):
        handler, calls = flaky(5, code)
        outcome, waits = run(Tool("read", "", Args, handler))
        assert len(calls) == 1 and waits == [] and "not retryable" in outcome.stopped_because


def test_the_attempt_cap_and_the_time_budget_stop_retrying():
    handler, calls = flaky(10)
    outcome, _ = run(Tool("read", "", Args, handler), RetryPolicy(max_attempts=3))
    assert len(calls) == 3 and "attempt cap" in outcome.stopped_because
    handler, calls = flaky(10)
    outcome, waits = run(Tool("read", "", Args, handler), RetryPolicy(max_attempts=10, budget=0.5, jitter=0))
    assert waits == [0.2] and "time budget" in outcome.stopped_because  # 0.2 + 0.4 would exceed 0.5


def test_a_write_without_an_idempotency_key_is_never_retried():
    handler, calls = flaky(1)
    outcome, _ = run(Tool("save", "", Args, handler, side_effect=True), approve=True)
    assert len(calls) == 1 and "idempotency key" in outcome.stopped_because
    handler, calls = flaky(1)
    outcome, _ = run(Tool("save", "", Args, handler, side_effect=True, idempotent=True), approve=True)
    assert outcome.execution.ok and calls[0] == calls[1]  # the same key both times
