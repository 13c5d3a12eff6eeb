"""The loop with the execution layer: every call goes through `Executor`, and the loop knows
when to stop — not only on a final answer.

Terminal statuses (`LoopResult.status`, `reason`):

    completed   None                the model gave a final message
    incomplete  max_steps           the step budget ran out
    incomplete  tool_budget         the same call (tool and canonical arguments: `retry.repeated_call_key`)
                                    failed `max_tool_failures` times: the model keeps repeating a
                                    refused call; stop instead of burning the budget (a different
                                    call after a failure, e.g. another path, is not a repeat)
    incomplete  max_output_tokens…  the response did not complete (`loop.response_stop`)
    incomplete  approval_required   a side effect waits for a person; `result.pending` holds the
                                    exact actions; `resume()` continues after the decision
    incomplete  no_answer           the model stopped without calls and without text

The turn's calls run through `parallel.execute_batch` (reads together, writes in order).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from openai import OpenAI

from course_lib.backend import model_name
from course_lib.execution import Execution, Executor, Session, Step
from course_lib.host import McpHost
from course_lib.loop import LoopResult, TraceLink, next_tool_choice, response_stop
from course_lib.parallel import Call, execute_batch
from course_lib.results import as_output, failure
from course_lib.retry import repeated_call_key


@dataclass
class GuardedResult(LoopResult):
    """A `LoopResult` that also keeps every `Execution` and the calls waiting for approval."""

    executions: list[Execution] = field(default_factory=list)
    pending: list[Execution] = field(default_factory=list)


def run_guarded_loop(
    client: OpenAI,
    host: McpHost,
    executor: Executor,
    session: Session,
    task: str | list[dict[str, Any]],
    *,
    model: str | None = None,
    max_steps: int = 6,
    max_tool_failures: int = 2,
    parallel_tool_calls: bool = True,
    tool_choice: Any = "auto",
    reset_tool_choice: bool = True,
    request: dict[str, Any] | None = None,
) -> GuardedResult:
    """Run the model ⇄ tools loop with every call checked by `executor` for `session`.

    A `tool_choice` that forces a call becomes "auto" once the model has made one, unless
    `reset_tool_choice` is False (see `loop.next_tool_choice`).

    `request` holds further fields sent with every model request (`instructions`, `metadata`,
    `temperature`, ...); the loop's own fields (model, input, tools, tool_choice,
    parallel_tool_calls) cannot be overridden through it.

    Raises only for API errors (and ValueError if `request` names one of the loop's own fields);
    every tool outcome is fed back or ends the loop with a status.
    """
    context = [{"role": "user", "content": task}] if isinstance(task, str) else list(task)
    result = GuardedResult(status="incomplete", answer=None, reason="max_steps", steps=0, context=context)
    options = dict(model=model, max_tool_failures=max_tool_failures, parallel_tool_calls=parallel_tool_calls,
                   tool_choice=tool_choice, reset_tool_choice=reset_tool_choice, steps_left=max_steps,
                   request=request)  # fmt: skip
    return _continue(client, host, executor, session, result, **options)


def resume(
    client: OpenAI,
    host: McpHost,
    executor: Executor,
    session: Session,
    result: GuardedResult,
    *,
    approved: set[str] | frozenset[str] = frozenset(),
    max_steps: int = 6,
    **options: Any,
) -> GuardedResult:
    """Continue a loop that stopped at `approval_required`.

    Each pending action is decided here — approved if its id is in `approved` — unless a person
    already decided it elsewhere (e.g. with an `ApprovalPanel`). An approved action is executed
    now, with exactly those arguments; any other is rejected and fed back as a refusal. Then the
    loop goes on as before.
    """
    waiting, result.pending = result.pending, []
    for execution in waiting:
        action = execution.result["error"]["action_id"]
        if action in executor.approvals.pending:  # not decided yet: decide now
            if action in approved:
                executor.approvals.approve(action)
            else:
                executor.approvals.reject(action)
        arguments = execution.arguments or {}
        if executor.approvals.granted(execution.tool, arguments, session.user_id):
            execution = host.run(executor.execute, execution.call_id, execution.tool, execution.arguments_text, session)
        else:  # a new Execution: the pending one stays as it was (what the person was shown)
            execution = replace(execution, result=failure("FORBIDDEN", "the user rejected this action; do not retry it"),
                                steps=[*execution.steps, Step("decision", "FORBIDDEN")])  # fmt: skip
        _record(result, execution)
    result.status, result.reason = "incomplete", "max_steps"
    if options.get("reset_tool_choice", True) and "tool_choice" in options:
        options["tool_choice"] = next_tool_choice(options["tool_choice"])  # the paused turn made its calls
    return _continue(client, host, executor, session, result, steps_left=max_steps, **options)


_LOOP_FIELDS = frozenset({"model", "input", "tools", "tool_choice", "parallel_tool_calls"})


def _continue(client, host, executor, session, result, *, model=None, max_tool_failures=2,
              parallel_tool_calls=True, tool_choice="auto", reset_tool_choice=True, steps_left=6,
              request=None) -> GuardedResult:  # fmt: skip
    if clash := sorted(set(request or {}) & _LOOP_FIELDS):
        raise ValueError(f"request may not set the loop's own fields: {', '.join(clash)}")
    failures = Counter(repeated_call_key(e) for e in result.executions if not e.ok and e.error_code != "APPROVAL_REQUIRED")
    for _ in range(steps_left):
        response = client.responses.create(
            model=model or model_name(), input=result.context, tools=executor.declarations(),
            tool_choice=tool_choice, parallel_tool_calls=parallel_tool_calls, **(request or {}),
        )  # fmt: skip
        result.steps += 1
        result.responses.append(response)
        if (stop := response_stop(response)) is not None:
            result.reason = stop  # cut-off output: neither an answer nor calls to execute
            return result
        result.context.extend(item.to_dict() for item in response.output)
        calls = [Call.from_item(item) for item in response.output if item.type == "function_call"]
        if not calls:
            result.answer = response.output_text or None
            result.status, result.reason = ("completed", None) if result.answer else ("incomplete", "no_answer")
            return result
        executions = host.run(execute_batch, executor, calls, session, parallel=parallel_tool_calls)
        answered: set[str] = set()
        for execution in executions:
            if execution.call_id in answered:
                continue  # a repeated call_id gets one output (its first call's), never two
            answered.add(execution.call_id)
            if execution.error_code == "APPROVAL_REQUIRED":
                result.pending.append(execution)  # its output is held back until a person decides
            else:
                _record(result, execution)
                failures[repeated_call_key(execution)] += not execution.ok
        if reset_tool_choice:
            tool_choice = next_tool_choice(tool_choice)
        if result.pending:
            result.reason = "approval_required"
            return result
        if any(count >= max_tool_failures for count in failures.values()):
            result.reason = "tool_budget"
            return result
    return result


def _record(result: GuardedResult, execution: Execution) -> None:
    result.executions.append(execution)
    result.context.append(execution.feedback_item())
    notes = execution.notes
    result.trace.append(TraceLink(
        call_id=execution.call_id, alias=execution.tool, arguments_text=execution.arguments_text,
        arguments=execution.arguments, server=notes.get("server"), tool=notes.get("tool"),
        mcp_id=notes.get("mcp_id"), error_code=execution.error_code, output=as_output(execution.result),
    ))  # fmt: skip
