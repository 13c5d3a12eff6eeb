"""Several calls in one turn: what may run together, and results back to the right `call_id`.

A response may hold zero, one or many `function_call` items. Calls the model sent together do
not depend on each other's results (it had none yet), but that does not make them safe to run
at once:

- reads that follow each other run concurrently (a *wave*), at most `limit` at a time;
- a call with side effects runs alone, after every call the model sent before it and before
  every call it sent after it (the model's order is kept around each write);
- `parallel=False` (honouring the request's `parallel_tool_calls: false`) runs everything in order.

Each result is returned in the model's order under its own `call_id`; one failure does not
cancel the others. A `call_id` used twice with different arguments is refused (neither is run
twice under one id); the same call repeated verbatim runs once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import anyio

from course_lib.execution import Execution, Executor, Session, Step
from course_lib.lang import say
from course_lib.results import failure


@dataclass(frozen=True)
class Call:
    """The parts of a `function_call` item the executor needs."""

    call_id: str
    name: str
    arguments: str

    @classmethod
    def from_item(cls, item: object) -> Call:
        """From a typed `ResponseFunctionToolCall` (or anything with the same attributes)."""
        return cls(item.call_id, item.name, item.arguments)  # type: ignore[attr-defined]


async def execute_batch(
    executor: Executor, calls: list[Call], session: Session, *, parallel: bool = True, limit: int = 4,
    allowed: list[str] | None = None,
) -> list[Execution]:
    """Execute one turn's calls; returns one Execution per call, in the order given.

    `allowed` narrows this turn's allowlist (see `Executor.execute`); default: every registered tool.
    """
    results: dict[int, Execution] = {}
    first_index: dict[str, int] = {}
    runnable: list[int] = []
    for i, call in enumerate(calls):
        seen = first_index.setdefault(call.call_id, i)
        if seen == i:
            runnable.append(i)
        elif (calls[seen].name, calls[seen].arguments) != (call.name, call.arguments):
            results[i] = _refused_duplicate(executor, call)

    def alone(i: int) -> bool:  # an unknown tool might do anything: treat it like a write
        tool = executor.tools.get(calls[i].name)
        return tool is None or tool.side_effect or not parallel

    limiter = anyio.CapacityLimiter(limit)

    async def run(i: int) -> None:
        async with limiter:
            call = calls[i]
            results[i] = await executor.execute(call.call_id, call.name, call.arguments, session, allowed=allowed)

    for wave in waves(runnable, alone):
        async with anyio.create_task_group() as tg:
            for i in wave:
                tg.start_soon(run, i)
    # A verbatim repeat shares the first execution's result (it ran once).
    for i, call in enumerate(calls):
        if i not in results:
            results[i] = results[first_index[call.call_id]]
    return [results[i] for i in range(len(calls))]


def waves(indices: list[int], alone: Callable[[int], bool]) -> list[list[int]]:
    """Group calls into waves: consecutive reads share one; each write is a wave of its own."""
    grouped: list[list[int]] = []
    for i in indices:
        if alone(i) or not grouped or alone(grouped[-1][0]):
            grouped.append([i])
        else:
            grouped[-1].append(i)
    return grouped


def _refused_duplicate(executor: Executor, call: Call) -> Execution:
    # The trace id of a call that never ran is a note to the learner (printed), not an id: it follows the edition.
    execution = Execution(call.call_id, call.name, call.arguments, trace_id=say("(not executed)", "（未执行）"))
    message = f"call_id {call.call_id!r} was already used in this turn with different arguments; not executed"
    execution.result = failure("INVALID_INPUT", message)
    execution.steps.append(Step("call_id", "INVALID_INPUT"))
    return execution
