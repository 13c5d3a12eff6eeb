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

The turn's calls run through `parallel.execute_batch` (reads together, the model's order kept
around each write).

Provenance and narrowing after untrusted content: name the tools whose output is untrusted text
(files, emails, web pages) in `untrusted=` — or, when only some outputs of a tool are (a note
that came from outside the user's own), give a function that looks at each successful execution
and returns where its untrusted text came from (e.g. the note's path; "" if it has no better
name), or None for trusted output. `result.untrusted` records each such output the model has read
(`approval.Provenance`: call_id, tool, source), to show beside anything proposed after it.
Once one is in, every later request offers only the tools without side effects, and the
executor's allowlist refuses any other for those turns (`narrow=False` keeps only the record).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection
from dataclasses import dataclass, field, replace
from typing import Any

from openai import OpenAI

from course_lib.approval import Provenance
from course_lib.backend import model_name
from course_lib.execution import Execution, Executor, Session, Step
from course_lib.host import McpHost
from course_lib.loop import LoopResult, TraceLink, next_tool_choice, response_stop
from course_lib.parallel import Call, execute_batch
from course_lib.results import as_output, failure
from course_lib.retry import repeated_call_key


Untrusted = Collection[str] | Callable[[Execution], str | None]
"""Which outputs are untrusted: tool names (every output of those tools), or a function of one
successful execution giving its untrusted text's source ("" for unnamed), or None if trusted."""


@dataclass
class GuardedResult(LoopResult):
    """A `LoopResult` that also keeps every `Execution` and the calls waiting for approval."""

    executions: list[Execution] = field(default_factory=list)
    pending: list[Execution] = field(default_factory=list)
    untrusted: list[Provenance] = field(default_factory=list)  # untrusted outputs the model has read
    narrow_after: frozenset[str] | Callable[[Execution], str | None] = frozenset()  # see `Untrusted`
    narrow: bool = True  # after untrusted output, offer only the reads

    def offered(self, executor: Executor) -> list[str] | None:
        """The tools the next request may offer: all (None), or only the reads once untrusted
        output is in the context (and `narrow` is on)."""
        if not (self.narrow and self.untrusted):
            return None
        return [name for name, tool in executor.tools.items() if not tool.side_effect]


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
    untrusted: Untrusted = frozenset(),
    narrow: bool = True,
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
    after = untrusted if callable(untrusted) else frozenset(untrusted)
    result = GuardedResult(status="incomplete", answer=None, reason="max_steps", steps=0, context=context,
                           narrow_after=after, narrow=narrow)  # fmt: skip
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
            why = _DROPPED if executor.approvals.state(action) == "dropped" else "the user rejected this action; do not retry it"
            execution = replace(execution, result=failure("FORBIDDEN", why),
                                steps=[*execution.steps, Step("decision", "FORBIDDEN")])  # fmt: skip
        _record(result, execution)
    result.status, result.reason = "incomplete", "max_steps"
    if options.get("reset_tool_choice", True) and "tool_choice" in options:
        options["tool_choice"] = next_tool_choice(options["tool_choice"])  # the paused turn made its calls
    return _continue(client, host, executor, session, result, steps_left=max_steps, **options)


_LOOP_FIELDS = frozenset({"model", "input", "tools", "tool_choice", "parallel_tool_calls"})
_DROPPED = ("nobody approved this action: it waited among too many others and was dropped unanswered; nothing "
            "was done")  # fmt: skip


def _continue(client, host, executor, session, result, *, model=None, max_tool_failures=2,
              parallel_tool_calls=True, tool_choice="auto", reset_tool_choice=True, steps_left=6,
              request=None) -> GuardedResult:  # fmt: skip
    if clash := sorted(set(request or {}) & _LOOP_FIELDS):
        raise ValueError(f"request may not set the loop's own fields: {', '.join(clash)}")
    failures = Counter(repeated_call_key(e) for e in result.executions if not e.ok and e.error_code != "APPROVAL_REQUIRED")
    for _ in range(steps_left):
        offered = result.offered(executor)  # narrowed to the reads once untrusted output came in
        response = client.responses.create(
            model=model or model_name(), input=result.context, tools=executor.declarations(only=offered),
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
        executions = host.run(execute_batch, executor, calls, session, parallel=parallel_tool_calls, allowed=offered)
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
    if execution.ok and (source := _untrusted_source(result.narrow_after, execution)) is not None:
        result.untrusted.append(Provenance(execution.call_id, execution.tool, source or None))
    result.context.append(execution.feedback_item())
    notes = execution.notes
    result.trace.append(TraceLink(
        call_id=execution.call_id, alias=execution.tool, arguments_text=execution.arguments_text,
        arguments=execution.arguments, server=notes.get("server"), tool=notes.get("tool"),
        mcp_id=notes.get("mcp_id"), error_code=execution.error_code, output=as_output(execution.result),
    ))  # fmt: skip


def _untrusted_source(after: frozenset[str] | Callable[[Execution], str | None], execution: Execution) -> str | None:
    """Where the untrusted text of a successful `execution` came from ("" unnamed), or None if trusted."""
    if callable(after):
        return after(execution)
    return "" if execution.tool in after else None
