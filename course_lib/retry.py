"""Retries: only for what can recover, with backoff, jitter, an attempt cap and a time budget.

Before retrying, ask the source's three questions:
1. can this failure recover soon?  — only `retryable` codes (TIMEOUT, transient UPSTREAM_ERROR);
   INVALID_INPUT, FORBIDDEN, NOT_FOUND, APPROVAL_REQUIRED get exactly one attempt;
2. is doing it again safe?         — a read, yes; a write only when the tool is idempotent
   (it stores results under the call's idempotency key), else never;
3. is there budget left?           — attempts and total waiting time are capped.

The model can repeat itself too: `repeated_call_key` names a call by its tool and canonical
arguments, so a loop can stop a model that sends the *same* failed call again (`guarded_loop`'s
`tool_budget`) without stopping one that tries something different after a failure.

Each wait is drawn at random below a capped exponential ceiling ("full jitter", as in the AWS
Architecture Blog's "Exponential Backoff And Jitter"), from fresh randomness on every call: clients
that failed together come back at different times. `RetryPolicy(seed=...)` makes the waits repeat
exactly, for a demo, a test or a stored notebook output only (every client with the same seed
waits the same: lockstep). `sleep` is injectable so tests and notebooks need not wait for real.
"""

from __future__ import annotations

import json
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import anyio

from course_lib.execution import Execution, Executor, Session, outcome_label
from course_lib.lang import say


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry, and how the waits are spread.

    The ceiling of retry n's wait is min(max_delay, base_delay · factor^(n-1)); the wait itself is
    drawn uniformly from [ceiling · (1 − jitter), ceiling]. `jitter=1` (the default) is full
    jitter, uniform(0, ceiling): what production uses. `jitter=0.5` keeps at least half of each
    wait ("equal jitter"); `jitter=0` removes the randomness (every client in step: avoid).

    `seed=None` (the default) draws fresh randomness on every `execute_with_retries` call, as
    production must. A seed gives the same waits every run: only for a demo, a test or a stored
    notebook output, never for clients in production, which would all wait alike.

    Raises:
        ValueError: `jitter` outside 0–1, or a negative delay, factor or budget.
    """

    max_attempts: int = 3
    base_delay: float = 0.2
    factor: float = 2.0
    max_delay: float = 2.0
    jitter: float = 1.0  # the share of each wait drawn at random: 1 = full jitter
    budget: float = 5.0  # seconds of waiting allowed in total
    seed: int | None = None  # None: fresh randomness (production); a number: the same waits (demo only)

    def __post_init__(self) -> None:
        if not 0 <= self.jitter <= 1:
            raise ValueError(say("jitter is the share of each wait drawn at random, from 0 (none) to 1 (full "
                                 "jitter); got {jitter!r}",
                                 "jitter 是每次等待中随机抽取的比例，从 0（不抖动）到 1（完全抖动）；你给的是 {jitter!r}",
                                 jitter=self.jitter))  # fmt: skip
        if min(self.base_delay, self.factor, self.max_delay, self.budget) < 0:
            raise ValueError(say("base_delay, factor, max_delay and budget cannot be negative",
                                 "base_delay、factor、max_delay 和 budget 都不能是负数"))

    def ceiling(self, retry_number: int) -> float:
        """The most retry number `retry_number` (1 for the first retry) may wait: the capped
        exponential delay, before jitter."""
        return min(self.max_delay, self.base_delay * self.factor ** (retry_number - 1))

    def delay(self, retry_number: int, rng: random.Random) -> float:
        """The wait before retry number `retry_number`, drawn from `rng` below its `ceiling`."""
        top = self.ceiling(retry_number)
        return round(rng.uniform(top * (1 - self.jitter), top), 3)


@dataclass(frozen=True)
class Attempt:
    number: int
    waited: float  # seconds waited before this attempt
    outcome: str  # "ok" or the error code

    @property
    def outcome_label(self) -> str:
        """The outcome as the edition prints it (`execution.outcome_label`)."""
        return outcome_label(self.outcome)


@dataclass
class RetryOutcome:
    """The last execution, every attempt, and why the retrying stopped."""

    execution: Execution
    attempts: list[Attempt] = field(default_factory=list)
    stopped_because: str = ""  # a sentence for the learner, in the edition's language


def retry_verdict(execution: Execution, executor: Executor) -> str | None:
    """Why `execution` must not be retried (a sentence in the edition's language), or None when a
    retry is allowed."""
    if execution.ok:
        return say("it succeeded", "它成功了")
    error = execution.result["error"]
    if not error["retryable"]:
        return say("{code} is not retryable: another identical attempt would fail the same way",
                   "{code} 不可重试：再做一次完全相同的尝试，也会以同样的方式失败", code=error["code"])
    tool = executor.tools.get(execution.tool)
    if tool is not None and tool.side_effect and not tool.idempotent:
        return say("{tool} writes without an idempotency key: a retry could write twice",
                   "{tool} 的写入没有幂等键：重试可能写入两次", tool=tool.name)
    return None


def repeated_call_key(execution: Execution) -> tuple[str, str]:
    """What makes two calls "the same call": the tool and its canonical arguments (parsed, keys
    sorted, no whitespace), never the `call_id`, which is new every time. Arguments that did not
    parse are compared as their text, stripped."""
    if execution.arguments is None:
        return execution.tool, execution.arguments_text.strip()
    return execution.tool, json.dumps(execution.arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


async def execute_with_retries(
    executor: Executor,
    call_id: str,
    name: str,
    arguments_text: str,
    session: Session,
    *,
    policy: RetryPolicy = RetryPolicy(),
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep,
) -> RetryOutcome:
    """Execute a call, retrying only when `retry_verdict` allows and the policy has budget left.

    The waits come from `random.Random(policy.seed)`: fresh randomness when the seed is None."""
    rng = random.Random(policy.seed)  # seed None: seeded from the OS, different on every call
    waited_total, wait = 0.0, 0.0
    outcome: RetryOutcome | None = None
    for number in range(1, policy.max_attempts + 1):
        if wait:
            await sleep(wait)
        execution = await executor.execute(call_id, name, arguments_text, session)
        if outcome is None:
            outcome = RetryOutcome(execution)
        outcome.execution = execution
        outcome.attempts.append(Attempt(number, wait, "ok" if execution.ok else execution.error_code or "?"))
        if (reason := retry_verdict(execution, executor)) is not None:
            outcome.stopped_because = reason
            return outcome
        wait = policy.delay(number, rng)
        if waited_total + wait > policy.budget:
            outcome.stopped_because = say("the time budget ({budget:g}s of waiting) would be exceeded",
                                          "会超出时间预算（总共 {budget:g}s 的等待）", budget=policy.budget)
            return outcome
        waited_total += wait
    assert outcome is not None
    outcome.stopped_because = say("the attempt cap ({cap}) was reached", "已达到尝试次数上限（{cap} 次）",
                                  cap=policy.max_attempts)
    return outcome
