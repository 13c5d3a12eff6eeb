"""Checks for notebook 05 (errors and retries).

- `check_should_retry(fn)`: the learner's `should_retry(error, is_write, has_key) -> bool` is run on
  real normalized errors (produced here by the execution layer: the files MCP server, a stale
  route, a slow tool, a flaky tool, a lying tool, an unapproved write...) and compared with the
  course's own verdict, `retry.retry_verdict`.
- `check_retry_policy(policy)`: the learner's `RetryPolicy` is run with `execute_with_retries`
  against a tool that fails twice, with a fake sleep and many seeds, and must meet the stated
  constraints every time.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from typing import Any

import anyio
from anyio.from_thread import start_blocking_portal
from pydantic import BaseModel, ConfigDict

from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.execution import Execution, Executor, Session, Tool, ToolError
from course_lib.retry import RetryPolicy, execute_with_retries, retry_verdict

ALICE = Session("alice")


def _run(async_fn: Callable[[], Any]) -> Any:
    """Run `async_fn()` on an event loop of its own (a notebook cell already runs inside one)."""
    with start_blocking_portal() as portal:
        return portal.call(async_fn)


class _QueryArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    query: str


class _HitsOut(BaseModel):
    hits: list[str]


# ---- exercise 1: should_retry -----------------------------------------------------------------


async def _slow(args: Any, ctx: Any) -> Any:
    await anyio.sleep(5)  # cancelled by the tool's timeout long before this ends


async def _restarting(args: Any, ctx: Any) -> Any:
    raise ToolError("UPSTREAM_ERROR", "the notes index is restarting", retryable=True)


async def _wrong_shape(args: Any, ctx: Any) -> Any:
    return {"results": "not the declared shape"}


async def _conflict(args: Any, ctx: Any) -> Any:
    raise ToolError("CONFLICT", "the note changed since it was read (version 3, expected 2)")


async def _never(args: Any, ctx: Any) -> Any:
    raise AssertionError("an unapproved write must never run")


def _local_errors() -> dict[str, dict[str, Any]]:
    """Errors from local tools: timeout, transient upstream, bad output, approval, conflict."""
    executor = Executor([
        Tool("search_notes", "slow search", _QueryArgs, _slow, timeout=0.01),
        Tool("index_notes", "restarting index", _QueryArgs, _restarting),
        Tool("lying_search", "returns the wrong shape", _QueryArgs, _wrong_shape, output_model=_HitsOut),
        Tool("save_learning_gap", "a write", _QueryArgs, _never, side_effect=True),
        Tool("update_note", "a versioned write", _QueryArgs, _conflict),
    ])  # fmt: skip
    text = '{"query": "idempotency"}'

    async def run_all() -> dict[str, dict[str, Any]]:
        return {name: (await executor.execute(f"call_{name}", name, text, ALICE)).result["error"]
                for name in executor.tools}  # fmt: skip

    errors = _run(run_all)
    return {"TIMEOUT": errors["search_notes"], "UPSTREAM_ERROR transient": errors["index_notes"],
            "UPSTREAM_ERROR bad output": errors["lying_search"], "APPROVAL_REQUIRED": errors["save_learning_gap"],
            "CONFLICT": errors["update_note"]}  # fmt: skip


def _files_errors() -> dict[str, dict[str, Any]]:
    """Errors from the real files MCP server, including a protocol error through a stale route."""
    from course_lib.arguments import ReadTextFileArgs
    from course_lib.host import files_host

    with files_host() as host:
        stale = replace(host.route("fs__read_text_file"), alias="fs__read_file", tool="read_file")
        host.routes[stale.alias] = stale  # a route left from an older tool list: the server has no read_file
        executor = Executor([host.executor_tool(alias, ReadTextFileArgs) for alias in ("fs__read_text_file", "fs__read_file")])
        calls = {
            "INVALID_INPUT": ("fs__read_text_file", '{"path": "/workspace/notes.txt", "head": "5"}'),
            "FORBIDDEN": ("fs__read_text_file", '{"path": "/etc/passwd"}'),
            "NOT_FOUND": ("fs__read_text_file", '{"path": "/workspace/missing.txt"}'),
            "UPSTREAM_ERROR protocol": ("fs__read_file", '{"path": "/workspace/notes.txt"}'),
        }
        return {label: host.run(executor.execute, f"call_{i}", name, text, ALICE).result["error"]
                for i, (label, (name, text)) in enumerate(calls.items(), start=1)}  # fmt: skip


@cache
def recorded_errors() -> dict[str, dict[str, Any]]:
    """Real normalized errors by label (computed once; callers get them through deep copies)."""
    return {**_files_errors(), **_local_errors()}


# (label in recorded_errors, what it was, is_write, has_key)
RETRY_CASES: list[tuple[str, str, bool, bool]] = [
    ("INVALID_INPUT", "a read whose head was the text \"5\"", False, False),
    ("FORBIDDEN", "a read of /etc/passwd", False, False),
    ("NOT_FOUND", "a read of /workspace/missing.txt", False, False),
    ("UPSTREAM_ERROR protocol", "a read through a route to a tool the server does not have", False, False),
    ("TIMEOUT", "a read that did not answer in time", False, False),
    ("UPSTREAM_ERROR transient", "a read while the index restarts", False, False),
    ("UPSTREAM_ERROR bad output", "a read whose tool returned the wrong shape", False, False),
    ("APPROVAL_REQUIRED", "a write nobody approved yet", True, False),
    ("TIMEOUT", "a write without an idempotency key that did not answer in time", True, False),
    ("UPSTREAM_ERROR transient", "a write without an idempotency key while the index restarts", True, False),
    ("TIMEOUT", "a write with an idempotency key that did not answer in time", True, True),
    ("UPSTREAM_ERROR transient", "a write with an idempotency key while the index restarts", True, True),
    ("CONFLICT", "a write with an idempotency key whose note changed meanwhile", True, True),
    ("INVALID_INPUT", "a write with an idempotency key and bad arguments", True, True),
]


async def _stub(args: Any, ctx: Any) -> Any:
    return {}


_VERDICT_TOOLS = Executor([
    Tool("read", "a read", _QueryArgs, _stub),
    Tool("write", "a write without a key", _QueryArgs, _stub, side_effect=True),
    Tool("write_with_key", "an idempotent write", _QueryArgs, _stub, side_effect=True, idempotent=True),
])  # fmt: skip


def expected_retry(error: dict[str, Any], is_write: bool, has_key: bool) -> bool:
    """The course's own answer: `retry_verdict` on an execution that failed with `error`."""
    tool = "write_with_key" if has_key else "write" if is_write else "read"
    execution = Execution("call_x", tool, "{}", "trace-x", result={"ok": False, "error": error})
    return retry_verdict(execution, _VERDICT_TOOLS) is None


_WHY_NOT = {
    "INVALID_INPUT": "the same arguments break the same rule again: the model must fix them, not repeat them",
    "FORBIDDEN": "permission does not come back by asking twice: stop or ask for access",
    "NOT_FOUND": "the file will not appear by reading again: search, or say it is missing",
    "APPROVAL_REQUIRED": "it waits for a person, not for time: pause and show the action",
    "CONFLICT": "the state changed: re-read it, then decide; repeating the write cannot fix that",
}


def _describe(error: dict[str, Any]) -> str:
    kind = f", kind {error['kind']}" if "kind" in error else ""
    return f"{error['code']}, retryable {json.dumps(error['retryable'])}{kind}"


def _explain(error: dict[str, Any], is_write: bool, has_key: bool, expected: bool) -> str:
    if expected:
        if is_write:
            return ("a write with an idempotency key is safe to repeat: the second attempt carries the same key "
                    "and gets the stored result instead of writing twice")
        if error["code"] != "TIMEOUT":
            return (f"retryable is true: TIMEOUT is not the only failure that recovers; this {error['code']} is "
                    "transient, and a read is safe to repeat. Decide from the flag, not from a list of codes")
        return ("retryable is true and a read is safe to repeat: retry it (a bounded number of times). has_key "
                "matters only for writes: a read needs no idempotency key")
    if not error["retryable"]:
        if error["code"] == "UPSTREAM_ERROR":
            return ("this UPSTREAM_ERROR has retryable false (the failure is permanent): read the flag, not only "
                    "the code")
        return f"retryable is false: {_WHY_NOT.get(error['code'], 'another identical attempt fails the same way')}"
    return ("it is a write without an idempotency key: the first attempt may already have written, so a retry "
            "could write twice")


def check_should_retry(fn: Callable[[dict[str, Any], bool, bool], bool]) -> bool:
    """Run `fn(error, is_write, has_key)` on each real case; report the first wrong verdict."""
    if not_answered(fn):
        return failed("Not answered yet: write should_retry(error, is_write, has_key) and pass the function itself.")
    if not callable(fn):
        return failed(f"Pass the function itself (should_retry, without parentheses); you passed {fn!r}.")
    errors = recorded_errors()
    for number, (label, what, is_write, has_key) in enumerate(RETRY_CASES, start=1):
        error = copy.deepcopy(errors[label])  # a fresh copy: the learner may change it freely
        shown = f"case {number} ({what}: {_describe(error)}; is_write={is_write}, has_key={has_key})"
        try:
            got = fn(copy.deepcopy(error), is_write, has_key)
        except Exception as exc:
            return failed(f"{shown}: should_retry raised {type(exc).__name__}: {exc}. The error dict has the keys "
                          f"{', '.join(error)}.")
        if got is ... and number == 1:
            return failed("Not answered yet: should_retry still returns ... — replace it with your rule.")
        if got is None:
            return failed(f"{shown}: should_retry returned None: one path through it has no return statement; "
                          "every path must return True or False.")
        if type(got) is not bool:
            return failed(f"{shown}: you returned {got!r}; return True or False.")
        expected = expected_retry(error, is_write, has_key)
        if got != expected:
            verdict = "retry" if got else "not to retry"
            return failed(f"{shown}: you said {verdict}, but {_explain(error, is_write, has_key, expected)}.")
    return passed(f"should_retry agrees with the course's verdict on all {len(RETRY_CASES)} real failures.")


def _should_retry_solution(error: dict[str, Any], is_write: bool, has_key: bool) -> bool:
    if not error["retryable"]:  # the flag, not the code: an UPSTREAM_ERROR can be permanent
        return False
    return has_key or not is_write  # a write is repeated only under its idempotency key


# ---- exercise 2: a retry policy that meets the constraints ------------------------------------

MAX_ATTEMPTS = 3
MIN_FIRST_WAIT = 0.1
MAX_TOTAL_WAIT = 0.5
MIN_JITTER = 0.1
SEEDS = range(50)


def run_policy(policy: RetryPolicy, failures: int = 2) -> tuple[bool, list[str], list[float], str]:
    """Run `policy` against a tool that fails `failures` times with a transient UPSTREAM_ERROR,
    with a fake sleep: (succeeded, attempt outcomes, waits, why it stopped)."""
    calls: list[str] = []

    async def flaky(args: Any, ctx: Any) -> Any:
        calls.append(ctx.action_id)
        if len(calls) <= failures:
            raise ToolError("UPSTREAM_ERROR", "the notes index is restarting", retryable=True)
        return {"hits": [args.query]}

    executor = Executor([Tool("search_notes", "Search notes", _QueryArgs, flaky)])
    waits: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        waits.append(seconds)

    async def go() -> Any:
        return await execute_with_retries(executor, "call_1", "search_notes", '{"query": "retries"}', ALICE,
                                          policy=policy, sleep=fake_sleep)  # fmt: skip

    outcome = _run(go)
    return outcome.execution.ok, [a.outcome for a in outcome.attempts], waits, outcome.stopped_because


def check_retry_policy(policy: RetryPolicy) -> bool:
    """Check the constraints by running the policy (with 50 seeds) against a tool that fails twice."""
    if not_answered(policy):
        return failed("Not answered yet: set policy = RetryPolicy(...) with your numbers.")
    if policy is RetryPolicy:
        return failed("You passed the class RetryPolicy itself: create one with your numbers, "
                      "RetryPolicy(max_attempts=..., base_delay=..., ...).")
    if not isinstance(policy, RetryPolicy):
        return failed(f"Pass a RetryPolicy(...) (from course_lib.retry); you passed {type(policy).__name__}.")
    if policy.max_attempts > MAX_ATTEMPTS:
        return failed(f"max_attempts={policy.max_attempts}: the constraint is at most {MAX_ATTEMPTS} attempts "
                      "(every attempt costs the user time and the service load).")
    if policy.jitter < MIN_JITTER:
        return failed(f"jitter={policy.jitter:g}: keep at least {MIN_JITTER:g}, so clients that failed together "
                      "do not all retry at the same instant.")
    if policy.jitter >= 1:
        return failed(f"jitter={policy.jitter:g} is a fraction of the delay: at 1 or more a wait can shrink to "
                      "nothing (or below), so the service gets no pause at all; keep it well below 1.")
    if policy.max_delay < policy.base_delay:
        return failed(f"max_delay={policy.max_delay:g} is below base_delay={policy.base_delay:g}: every delay is "
                      "capped at max_delay, so base_delay never applies; raise max_delay or lower base_delay.")
    for seed in SEEDS:
        ok, outcomes, waits, why = run_policy(replace(policy, seed=seed))
        shown = ", ".join(f"{w:g}s" for w in waits) or "none"
        if not ok:
            return failed(f"with seed {seed} the tool that fails twice never succeeded: attempts {outcomes}, "
                          f"waits {shown}; it stopped because {why}. Three attempts must fit in your limits.")
        if waits and waits[0] < MIN_FIRST_WAIT:
            lowest = policy.base_delay * (1 - policy.jitter)
            return failed(f"with seed {seed} the first wait was {waits[0]:g}s; it must be at least "
                          f"{MIN_FIRST_WAIT:g}s. Jitter can shrink base_delay by the jitter fraction: "
                          f"{policy.base_delay:g}·(1 − {policy.jitter:g}) = {lowest:.3g}s (the seed only picks where "
                          "in that range a wait falls; the check tries 50).")
        if sum(waits) > MAX_TOTAL_WAIT + 1e-9:
            return failed(f"with seed {seed} the waits {shown} add up to {sum(waits):.3f}s; the limit is "
                          f"{MAX_TOTAL_WAIT:g}s (jitter can stretch each delay by the jitter fraction).")
    return passed(f"over {len(SEEDS)} seeds: success by attempt {MAX_ATTEMPTS}, first wait ≥ {MIN_FIRST_WAIT:g}s, "
                  f"total wait ≤ {MAX_TOTAL_WAIT:g}s, jitter {policy.jitter:g}.")


SOLUTIONS: Solutions = {
    "check_should_retry": lambda: _should_retry_solution,
    # first wait ≥ 0.125·0.8 = 0.1; total ≤ (0.125 + 0.1875)·1.2 = 0.375
    "check_retry_policy": lambda: RetryPolicy(max_attempts=3, base_delay=0.125, factor=1.5, jitter=0.2, budget=0.5),
}
