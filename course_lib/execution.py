"""The execution layer: one deterministic path from a model's call to a normalized result.

The model's output is probabilistic; what the app does with it must not be. Every call goes
through the same steps, in this order, and each step is recorded in the execution's `steps`:

1. allowlist   the name must be a tool registered for this turn — never imported or looked up
               dynamically by the model's (untrusted) name;
2. parse       the arguments text, with limits (size, depth, duplicate keys, NaN, trailing data);
3. schema      the tool's strict argument model: no coercion, no silently dropped properties;
4. permission  decided from the session's identity, never from a user id the model supplies;
5. approval    a side effect runs only with an approval bound to this exact action;
6. execute     under a timeout that cancels the handler at the `await` it is waiting on:
               nothing after it runs. What already ran, work in a thread and a remote
               server's work can still complete, so a timed-out write is retried only with an
               idempotency key. A wait that cannot be cancelled answers late (logged);
7. output      validated against the tool's output model and size-capped;
8. normalize   `results.success(data)` or `results.failure(code, message, retryable=...)`.

Full details of any failure (exception text, tracebacks) go to the server-side `ServerLog`
under the execution's trace id; the model only ever sees the short, safe message.
"""

from __future__ import annotations

import itertools
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ValidationError

from course_lib.approval import Approvals, action_id
from course_lib.arguments import ArgumentsError, parse_arguments_text, validate_arguments
from course_lib.declarations import strict_schema
from course_lib.lang import say
from course_lib.results import as_output, failure, success

logger = logging.getLogger(__name__)


class ToolError(Exception):
    """Raised by a tool's handler for a failure it expected (NOT_FOUND, CONFLICT, ...)."""

    def __init__(self, code: str, message: str, *, retryable: bool | None = None) -> None:
        super().__init__(message)
        self.code, self.message, self.retryable = code, message, retryable


@dataclass(frozen=True)
class Session:
    """Who is calling, as the app knows it from its own login — never from the model's arguments."""

    user_id: str
    roles: frozenset[str] = frozenset()


@dataclass(frozen=True)
class CallContext:
    """What a handler may know about the call it serves."""

    session: Session
    call_id: str
    trace_id: str
    action_id: str  # tool + arguments + user: also the idempotency key of a write
    notes: dict[str, Any] = field(default_factory=dict)  # what the handler reports (e.g. the MCP id)


Handler = Callable[[Any, CallContext], Awaitable[Any]]
Permission = Callable[[Session, Any], bool]


def anyone(session: Session, arguments: Any) -> bool:
    """The default permission: every session may call the tool."""
    return True


@dataclass(frozen=True)
class Tool:
    """One registered tool: its rule (`input_model`), its code (`handler`) and its contract."""

    name: str
    description: str
    input_model: type[BaseModel]
    handler: Handler
    output_model: type[BaseModel] | None = None
    side_effect: bool = False
    idempotent: bool = False  # a write that stores its result under `CallContext.action_id`
    permission: Permission = anyone
    timeout: float = 5.0
    max_output_chars: int = 4000

    def declaration(self, *, strict: bool = True) -> dict[str, Any]:
        """The Responses function tool the model sees for this tool."""
        schema = self.input_model.model_json_schema()
        return {
            "type": "function",
            "name": self.name,
            "description": self.description,
            "parameters": strict_schema(schema) if strict else schema,
            "strict": strict,
        }


@dataclass(frozen=True)
class Step:
    """One step of the path and how it ended ("ok", or the error code that stopped the call)."""

    name: str
    outcome: str

    @property
    def label(self) -> str:
        """The step's name as the edition prints it for the learner: `name` in English, 允许列表,
        解析... in the zh-CN edition. `name` itself, what code and records read, stays English."""
        return step_label(self.name)

    @property
    def outcome_label(self) -> str:
        """The step's outcome as the edition prints it (see `outcome_label`)."""
        return outcome_label(self.outcome)


def step_label(name: str) -> str:
    """A step's name as the edition prints it (see `Step.label`)."""
    return say(name, STEP_LABELS_ZH.get(name, name))


def outcome_label(outcome: str | None) -> str:
    """An outcome as the edition prints it: "ok" (or None, no error) is 成功 in the zh-CN edition; an
    error code is a wire value and stays as it is. Code and records keep reading "ok"."""
    return say("ok", "成功") if outcome is None or outcome == "ok" else outcome


STEP_LABELS_ZH = {"allowlist": "允许列表", "parse": "解析", "schema": "schema", "permission": "权限",
                  "approval": "批准", "execute": "执行", "output": "输出", "internal": "内部",
                  "decision": "决定", "call_id": "call_id"}  # fmt: skip
"""The Chinese labels of the steps (the glossary's terms); a step not listed keeps its name."""


@dataclass
class Execution:
    """Everything about one executed (or refused) call."""

    call_id: str
    tool: str
    arguments_text: str
    trace_id: str
    result: dict[str, Any] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    arguments: dict[str, Any] | None = None
    notes: dict[str, Any] = field(default_factory=dict)  # from the handler: server, tool, mcp_id...
    # When the executor began and finished it (`time.monotonic()`; None: never executed), for a
    # timeline of one turn's calls (`pictures.timeline`). Not shown, not compared.
    started: float | None = field(default=None, repr=False, compare=False)
    ended: float | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return bool(self.result.get("ok"))

    @property
    def error_code(self) -> str | None:
        return None if self.ok else self.result["error"]["code"]

    @property
    def outcome_label(self) -> str:
        """"ok" (成功 in the zh-CN edition) or the error code, as a learner reads it."""
        return outcome_label(self.error_code)

    @property
    def output(self) -> str:
        """The `function_call_output.output` text the model will read."""
        return as_output(self.result)

    def feedback_item(self) -> dict[str, Any]:
        """The input item carrying this result back to the model under its own `call_id`."""
        return {"type": "function_call_output", "call_id": self.call_id, "output": self.output}


@dataclass(frozen=True)
class LogEntry:
    trace_id: str
    call_id: str
    tool: str
    detail: str


@dataclass
class ServerLog:
    """The server-side log: full detail, keyed by trace id, never sent to the model."""

    entries: list[LogEntry] = field(default_factory=list)

    def record(self, execution: Execution, detail: str) -> None:
        self.entries.append(LogEntry(execution.trace_id, execution.call_id, execution.tool, detail))
        logger.info("%s %s %s: %s", execution.trace_id, execution.call_id, execution.tool, detail)

    def for_trace(self, trace_id: str) -> list[LogEntry]:
        return [e for e in self.entries if e.trace_id == trace_id]


def _shown(value: Any) -> str:
    """`value` as text for the record, whatever it is (its own __str__ may fail)."""
    if isinstance(value, str):
        return value
    try:
        return str(value)
    except Exception:
        return f"<{type(value).__name__}>"


class Refused(Exception):
    """Internal: a step refused the call with a normalized failure."""

    def __init__(self, step: str, result: dict[str, Any]) -> None:
        self.step, self.result = step, result


class Executor:
    """Runs model calls through the steps above against a fixed registry of tools."""

    def __init__(self, tools: Iterable[Tool], *, approvals: Approvals | None = None, log: ServerLog | None = None):
        self.tools = {tool.name: tool for tool in tools}
        self.approvals = approvals if approvals is not None else Approvals()
        self.log = log if log is not None else ServerLog()
        self._trace_numbers = itertools.count(1)  # deterministic trace ids: stable notebook output

    def declarations(self, *, strict: bool = True, only: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """The Responses declarations of the registered tools (or of the subset `only`)."""
        names = self.tools if only is None else [n for n in only if n in self.tools]
        return [self.tools[n].declaration(strict=strict) for n in names]

    async def execute(
        self, call_id: str, name: str, arguments_text: Any, session: Session, *, allowed: Iterable[str] | None = None
    ) -> Execution:
        """Execute one call. Never raises for anything the call or the tool did, however malformed
        (a name that is a list, None or a number; arguments that are not text; no valid session; a
        permission check, handler or output that breaks): every outcome is a normalized result in
        `Execution.result`. Only cancellation of the caller's own task propagates.

        `allowed` narrows this turn's allowlist to some registered tools (default: all of them);
        one name may be given as a string.
        """
        execution = Execution(call_id, _shown(name), _shown(arguments_text), f"trace-{next(self._trace_numbers):04d}",
                              started=time.monotonic())  # fmt: skip
        try:
            execution.result = success(await self._steps(execution, name, arguments_text, session, allowed))
        except Refused as refused:
            execution.steps.append(Step(refused.step, refused.result["error"]["code"]))
            execution.result = refused.result
        except Exception as error:  # a bug on the app's side of the path: still a result, the detail in the log
            self.log.record(execution, f"unexpected {type(error).__name__} in the execution layer: {error}")
            message = f"the call could not be executed (internal error, see server log {execution.trace_id})"
            execution.steps.append(Step("internal", "UPSTREAM_ERROR"))
            execution.result = failure("UPSTREAM_ERROR", message, retryable=False)
        execution.ended = time.monotonic()
        return execution

    def _turn(self, allowed: Any) -> set[str]:
        """This turn's allowlist: the registered tools, narrowed by `allowed` (names; one name as a
        string; anything that is not a name is ignored, so a malformed `allowed` allows nothing)."""
        if allowed is None:
            return set(self.tools)
        names = [allowed] if isinstance(allowed, str) else allowed if isinstance(allowed, Iterable) else []
        return {n for n in names if isinstance(n, str)} & set(self.tools)

    async def _steps(self, ex: Execution, name: Any, text: Any, session: Session, allowed: Iterable[str] | None) -> Any:
        turn = self._turn(allowed)
        if not isinstance(name, str) or name not in turn:  # a list or dict name would not even hash
            shown = repr(name[:64]) if isinstance(name, str) else f"{_shown(name)[:64]} (a {type(name).__name__}, not a name)"
            available = ", ".join(sorted(turn)) or "none"
            raise Refused("allowlist", failure("INVALID_INPUT", f"unknown tool {shown}; available: {available}"))
        tool = self.tools[name]
        ex.steps.append(Step("allowlist", "ok"))

        try:
            raw = parse_arguments_text(text)
            ex.steps.append(Step("parse", "ok"))
            arguments = validate_arguments(tool.input_model, raw)
        except ArgumentsError as error:
            raise Refused("schema" if ex.steps[-1].name == "parse" else "parse", failure("INVALID_INPUT", error.message)) from None
        ex.arguments = raw
        ex.steps.append(Step("schema", "ok"))

        if not isinstance(session, Session):
            raise Refused("permission", failure("FORBIDDEN", f"no valid session: {tool.name} needs a logged-in caller"))
        try:
            permitted = bool(tool.permission(session, arguments))
        except Exception as error:  # a broken permission check fails closed
            self.log.record(ex, f"permission check raised {type(error).__name__}: {error}")
            permitted = False
        if not permitted:
            raise Refused("permission", failure("FORBIDDEN", f"this session may not call {tool.name} with these arguments"))
        ex.steps.append(Step("permission", "ok"))

        the_action = action_id(tool.name, raw, session.user_id)
        if tool.side_effect:
            if not self.approvals.granted(tool.name, raw, session.user_id):
                pending = self.approvals.request(tool.name, raw, session.user_id)
                raise Refused("approval", failure(
                    "APPROVAL_REQUIRED", f"{tool.name} changes data: a person must approve this exact action first",
                    action_id=pending.action_id, arguments=pending.arguments))  # fmt: skip
            ex.steps.append(Step("approval", "ok"))

        context = CallContext(session, ex.call_id, ex.trace_id, the_action, notes=ex.notes)
        data = await self._run(ex, tool, arguments, context)
        ex.steps.append(Step("execute", "ok"))
        if tool.side_effect:
            self.approvals.spend(tool.name, raw, session.user_id)
        data = self._check_output(ex, tool, data)
        ex.steps.append(Step("output", "ok"))
        return data

    async def _run(self, ex: Execution, tool: Tool, arguments: Any, context: CallContext) -> Any:
        started = anyio.current_time()
        try:
            # fail_after cancels the handler at the await it is waiting on: nothing after that await
            # runs. A wait it cannot cancel (a thread, a shielded scope) runs to its end first.
            with anyio.fail_after(tool.timeout):
                data = await tool.handler(arguments, context)
        except TimeoutError:
            self.log.record(ex, f"timed out after {tool.timeout}s")
            raise Refused("execute", failure("TIMEOUT", f"{tool.name} did not answer within {tool.timeout:g}s")) from None
        except ToolError as error:
            self.log.record(ex, f"{error.code}: {error.message}")
            raise Refused("execute", failure(error.code, error.message, retryable=error.retryable)) from None
        except MCPError as error:
            self.log.record(ex, f"JSON-RPC error {error.code}: {error.message}")
            message = f"the server refused the request (JSON-RPC error {error.code})"
            raise Refused("execute", failure("UPSTREAM_ERROR", message, retryable=False, kind="protocol")) from None
        except Exception as error:  # anything unexpected: full detail to the log, a safe line to the model
            self.log.record(ex, f"unexpected {type(error).__name__}: {error}")
            # Not retryable: an unanticipated failure is a bug or a broken dependency — alert, don't loop.
            message = f"{tool.name} failed unexpectedly (see server log {ex.trace_id})"
            raise Refused("execute", failure("UPSTREAM_ERROR", message, retryable=False)) from None
        if anyio.current_time() - started > tool.timeout:  # its work is done: the result is true, only late
            self.log.record(ex, f"answered after its timeout of {tool.timeout:g}s: the handler was waiting on work "
                                "the timeout cannot cancel (a thread, a shielded scope)")  # fmt: skip
        return data

    def _check_output(self, ex: Execution, tool: Tool, data: Any) -> Any:
        if tool.output_model is not None:
            try:
                data = tool.output_model.model_validate(data).model_dump(mode="json")
            except ValidationError as error:
                self.log.record(ex, f"output failed its schema: {error}")
                raise Refused("output", failure("UPSTREAM_ERROR", f"{tool.name} returned data that does not match its output schema", retryable=False)) from None
        try:
            size = len(json.dumps(data, ensure_ascii=False, allow_nan=False))
        except (TypeError, ValueError, RecursionError) as error:  # a set, bytes, NaN, a cycle...: no JSON to send
            self.log.record(ex, f"output is not JSON: {error}")
            raise Refused("output", failure("UPSTREAM_ERROR", f"{tool.name} returned data that is not JSON", retryable=False)) from None
        if size > tool.max_output_chars:
            self.log.record(ex, f"output of {size} characters over the cap of {tool.max_output_chars}")
            raise Refused("output", failure("UPSTREAM_ERROR", f"{tool.name} returned {size} characters; the limit is {tool.max_output_chars}", retryable=False))
        return data
