"""Checks for notebook 10 (interview prep): six coding drills and the diagnose-the-trace set.

Each drill is a function (or class) the learner writes from memory; each check runs it on real
objects and prints the first case it gets wrong, why, and a hint:

- `check_pair_call_ids(fn)`: `pair_call_ids(items) -> {call_id: output}` on the input lists the
  loop really sent (three reads at once, one at a time, one failing), then broken ones: an orphan
  output and an unanswered call (both refused by the model API too), a call_id on two calls, two
  outputs for one call.
- `check_action_id(fn)`: `action_id(tool, arguments, user_id) -> str` plugged into the approvals of
  a real `Executor`: alice's approval of action A must let A run (in any key order) and nothing
  else — another topic, `12` vs `"12"`, bob, another tool. A wrong id lets a write run for real.
- `check_idempotency_store(cls)`: `cls().run(key, arguments, write) -> (result, replayed)` inside
  a real write tool that times out after storing, retried by `retry.execute_with_retries`; then
  key order, a conflict, two keys, two concurrent duplicates, a failed write.
- `check_next_step(fn)`: `next_step(error, is_write, has_key) -> str` on real normalized errors
  (the files server, a stale route, slow, flaky, lying and unapproved tools, a version conflict).
- `check_run_turn(fn)`: `async run_turn(calls, execute, is_write) -> [Execution]` is *run* with
  timed tools (reads on the real files server) and its start/end events show whether reads
  overlapped and writes ran alone, in order.
- `check_parse_arguments(fn)`: `parse_arguments(text) -> dict` on the model's real arguments texts
  and on broken variants (duplicate key, NaN, Infinity, trailing data, not an object, ...),
  compared with the course's `arguments.parse_arguments_text`.

`check_diagnoses` (the recorded broken traces) lives in `course_lib.drills` and is re-exported here.
"""

from __future__ import annotations

import copy
import hashlib
import inspect
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

import anyio
from anyio.from_thread import start_blocking_portal
from pydantic import BaseModel, ConfigDict

from course_lib.approval import Approvals, IdempotencyConflict
from course_lib.arguments import ArgumentsError, ReadTextFileArgs, parse_arguments_text
from course_lib.broken_traces import THREE_READS
from course_lib.drills import SOLUTION as DIAGNOSIS_SOLUTION
from course_lib.drills import check_diagnoses
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.execution import CallContext, Execution, Executor, Session, Tool, ToolError
from course_lib.parallel import Call
from course_lib.retry import RetryPolicy, execute_with_retries

__all__ = ["check_action_id", "check_diagnoses", "check_idempotency_store", "check_next_step",
           "check_pair_call_ids", "check_parse_arguments", "check_run_turn", "SOLUTIONS"]  # fmt: skip

ALICE, BOB = Session("alice"), Session("bob")


def _run(async_fn: Callable[[], Awaitable[Any]]) -> Any:
    """Run `async_fn()` on an event loop of its own (a notebook cell already runs inside one)."""
    with start_blocking_portal() as portal:
        return portal.call(async_fn)


def _function(fn: Any, name: str, signature: str) -> str | None:
    """Why `fn` is not a usable answer yet, or None."""
    if not_answered(fn):
        return f"Not answered yet: write {name}({signature}) and pass the function itself."
    if not callable(fn):
        return f"Pass the function itself ({name}, without parentheses); you passed {fn!r:.60}."
    return None


def _offline_client() -> Any:
    """An openai client on the offline model, whatever the environment says: the cases are recorded."""
    import httpx
    import openai

    from course_lib.backend import OFFLINE_BASE_URL
    from course_lib.offline_model import offline_transport

    return openai.OpenAI(api_key="offline", base_url=OFFLINE_BASE_URL, max_retries=0,
                         http_client=httpx.Client(transport=offline_transport()))  # fmt: skip


# ---- drill 1: pair call_ids ---------------------------------------------------------------------


@cache
def _recorded_contexts() -> dict[str, list[dict[str, Any]]]:
    """Input lists the loop really built (offline model, real files server), by label."""
    from course_lib.host import files_host
    from course_lib.loop import run_loop

    client = _offline_client()
    try:
        with files_host() as host:
            together = run_loop(client, host, THREE_READS)
            serial = run_loop(client, host, THREE_READS, parallel_tool_calls=False, max_steps=6)
            mixed = run_loop(client, host, "Show the first 2 lines of /workspace/notes.txt and the first 2 lines "
                                           "of /etc/passwd")  # fmt: skip
    finally:
        client.close()
    return {"together": together.context, "serial": serial.context, "mixed": mixed.context}


def _calls_in(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [item for item in items if item.get("type") == "function_call"]


def _outputs_in(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [item for item in items if item.get("type") == "function_call_output"]


def pairing_cases() -> dict[str, tuple[list[dict[str, Any]], str | None]]:
    """label → (an input list, None if it is valid, else the reason it must be refused)."""
    contexts = copy.deepcopy(_recorded_contexts())
    together, serial, mixed = contexts["together"], contexts["serial"], contexts["mixed"]
    user, calls, outputs = together[0], _calls_in(together), _outputs_in(together)
    finished = [outputs[1], outputs[2], outputs[0]]  # the order the reads completed in a real run
    orphan = {"type": "function_call_output", "call_id": "call_never_made", "output": outputs[0]["output"]}
    reused = {**calls[1], "call_id": calls[0]["call_id"]}
    return {
        "three reads in one turn, outputs in the model's order": (together, None),
        "the same turn, outputs in the order the reads finished": ([user, *calls, *finished], None),
        "three reads one at a time (three turns)": (serial, None),
        "a read that worked beside one that was refused": (mixed, None),
        "an output for a call nobody made": ([user, *calls, *outputs, orphan], "orphan"),
        "a call left without an output": ([user, *calls, *outputs[:2]], "unanswered"),
        "one call_id on two different calls": ([user, calls[0], reused, calls[2], outputs[0], outputs[2]], "reused"),
        "two outputs for one call": ([user, *calls, *outputs, {**outputs[0], "output": outputs[1]["output"]}], "twice"),
    }  # fmt: skip


def _api_refusal(items: list[dict[str, Any]]) -> str | None:
    """What the (offline) Responses API says about this input list, if it refuses it."""
    from course_lib.offline_model import BadRequest, respond

    try:
        respond({"model": "gpt-4.1", "input": items})
    except BadRequest as error:
        return error.message
    return None


_REFUSE = {
    "orphan": "an output arrived for call_never_made, which no call in the list has; your function accepted it",
    "unanswered": "{cid} has no output; your function accepted it",
    "reused": "{cid} names two calls with different arguments; your function accepted it — one of them would get "
              "the other's result",
    "twice": "{cid} has two outputs with different texts; your function kept one — which one is true is a guess",
}  # fmt: skip


def _describe_call(item: dict[str, Any]) -> str:
    try:
        arguments = json.loads(item["arguments"])
        return f"{item['call_id']} (read {arguments['path']})"
    except (ValueError, KeyError, TypeError):
        return item["call_id"]


def _pair_problem(label: str, items: list[dict[str, Any]], got: Any) -> str | None:
    expected = _pair_solution(items)
    if not isinstance(got, dict):
        return f"pair_call_ids must return a dict {{call_id: output text}}; it returned a {type(got).__name__}."
    calls = {item["call_id"]: item for item in _calls_in(items)}
    for call_id in expected:
        if call_id not in got:
            return f"case '{label}': {_describe_call(calls[call_id])} is missing from your dict."
    if extra := [key for key in got if key not in expected]:
        return f"case '{label}': {extra[0]!r} is not the call_id of any call in the list."
    owner = {item["output"]: item["call_id"] for item in _outputs_in(items)}
    for call_id, text in expected.items():
        if got[call_id] != text:
            other = owner.get(got[call_id])
            if other is not None and other != call_id:
                return (f"case '{label}': {_describe_call(calls[call_id])} got the output of "
                        f"{_describe_call(calls[other])}. Pair by call_id, never by position.")  # fmt: skip
            return f"case '{label}': the value for {call_id} must be its output text, exactly as it arrived."
    return None


def check_pair_call_ids(fn: Callable[[list[dict[str, Any]]], dict[str, str]]) -> bool:
    """Run `fn` on eight input lists (four real, four broken); explain the first it gets wrong."""
    if problem := _function(fn, "pair_call_ids", "items"):
        return failed(problem)
    for label, (items, refuse) in pairing_cases().items():
        try:
            got = fn(copy.deepcopy(items))
        except ValueError as error:
            if refuse:
                continue
            return failed(f"case '{label}': you raised ValueError ({error}), but this list is valid: every call has "
                          "exactly one output under its own call_id. Items of other types (messages) are not calls.")
        except Exception as error:
            return failed(f"case '{label}': pair_call_ids raised {type(error).__name__}: {error}. Items are dicts as "
                          "they crossed: messages have a 'role', calls and outputs have a 'type' and a 'call_id'.")
        if got is ...:
            return failed("Not answered yet: pair_call_ids still returns ... — return the dict.")
        if refuse:
            cid = _calls_in(items)[0]["call_id"] if refuse != "unanswered" else _calls_in(items)[2]["call_id"]
            api = _api_refusal(items)
            said = f" The Responses API refuses it too: {api!r}." if api else " The API may not notice: your app must."
            return failed(f"case '{label}': {_REFUSE[refuse].format(cid=cid)}. Raise ValueError.{said}")
        if problem := _pair_problem(label, items, got):
            return failed(problem)
    return passed("all 8 input lists right: outputs found by call_id across turns, and orphans, unanswered calls, "
                  "reused call_ids and double outputs refused.")


def _pair_solution(items: list[dict[str, Any]]) -> dict[str, str]:
    calls: dict[str, dict[str, Any]] = {}
    for item in _calls_in(items):
        if item["call_id"] in calls:
            raise ValueError(f"call_id {item['call_id']} is used by two calls")
        calls[item["call_id"]] = item
    outputs: dict[str, str] = {}
    for item in _outputs_in(items):
        if item["call_id"] not in calls:
            raise ValueError(f"no call has call_id {item['call_id']}")
        if item["call_id"] in outputs:
            raise ValueError(f"call_id {item['call_id']} has two outputs")
        outputs[item["call_id"]] = item["output"]
    if missing := [call_id for call_id in calls if call_id not in outputs]:
        raise ValueError(f"no output for {', '.join(missing)}")
    return {call_id: outputs[call_id] for call_id in calls}


# ---- drill 2: an approval action id --------------------------------------------------------------


class _GapArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    topic: str
    evidence: dict[str, Any]
    priority: int


ACTION_A = ("save_learning_gap",
            {"topic": "call_id vs MCP id", "evidence": {"note": "/workspace/notes.txt", "line": 12}, "priority": 2},
            "alice")  # fmt: skip
"""The action alice approves in every case."""

Action = tuple[str, dict[str, Any], str]
ACTION_CASES: list[tuple[str, Action, str | None]] = [
    ("A again, exactly", ACTION_A, None),
    ("A with its keys in another order", ("save_learning_gap", dict(reversed(list(ACTION_A[1].items()))), "alice"), None),
    ("A with the keys inside evidence in another order",
     ("save_learning_gap", {**ACTION_A[1], "evidence": {"line": 12, "note": "/workspace/notes.txt"}}, "alice"), None),
    ("another topic", ("save_learning_gap", {**ACTION_A[1], "topic": "strict mode"}, "alice"), "arguments"),
    ("evidence line 12 (a number) versus \"12\" (a string)",
     ("save_learning_gap", {**ACTION_A[1], "evidence": {"note": "/workspace/notes.txt", "line": "12"}}, "alice"),
     "argument types"),
    ("the same arguments, sent by bob", ("save_learning_gap", ACTION_A[1], "bob"), "user"),
    ("the same arguments, for delete_learning_gap", ("delete_learning_gap", ACTION_A[1], "alice"), "tool"),
]  # fmt: skip
"""(what the second call is, the action, None if it is A itself else what differs from A)."""

_WHERE = {
    "arguments": "the arguments: hash all of them, not just the tool and the user",
    "argument types": "the JSON types of the values: hash the JSON text of the arguments, not str() of the "
                      "values with the types lost",
    "user": "the user: an approval given by alice must never authorize bob",
    "tool": "the tool: approving a save must never authorize a delete",
}  # fmt: skip


def play_approval(make_id: Callable[[str, dict[str, Any], str], Any], second: Action) -> tuple[bool, list[Execution]]:
    """Alice asks for A, a person approves the id shown, then `second` is sent: did it run?

    A real `Executor` with two write tools; `make_id` makes every approval id. Returns whether
    the second call's write happened, and both executions.
    """
    writes: list[str] = []

    async def write(arguments: _GapArgs, context: CallContext) -> dict[str, Any]:
        writes.append(context.call_id)
        return {"record_id": f"gap-{len(writes)}"}

    tools = [Tool(name, f"{name} (changes data)", _GapArgs, write, side_effect=True)
             for name in ("save_learning_gap", "delete_learning_gap")]  # fmt: skip
    executor = Executor(tools, approvals=Approvals(id_for=lambda t, a, u: make_id(t, copy.deepcopy(a), u)))
    tool, arguments, user = second

    async def go() -> list[Execution]:
        first = await executor.execute("call_a", ACTION_A[0], json.dumps(ACTION_A[1]), ALICE)
        executor.approvals.approve(first.result["error"]["action_id"])  # the person approves what was shown
        return [first, await executor.execute("call_b", tool, json.dumps(arguments), Session(user))]

    executions = _run(go)
    return "call_b" in writes, executions


def check_action_id(fn: Callable[[str, dict[str, Any], str], str]) -> bool:
    """Approve A with ids from `fn` in a real executor; name the first second call that runs when it
    must not (or is refused when it is A itself)."""
    if problem := _function(fn, "action_id", "tool, arguments, user_id"):
        return failed(problem)
    for label, second, differs in ACTION_CASES:
        try:
            ids = fn(*copy.deepcopy(ACTION_A)), fn(*copy.deepcopy(second))
        except Exception as error:
            return failed(f"case '{label}': action_id raised {type(error).__name__}: {error}.")
        if ... in ids:
            return failed("Not answered yet: action_id still returns ... — return one string per action.")
        if not all(isinstance(value, str) and value for value in ids):
            return failed(f"action_id must return a non-empty str (it is stored and compared as text); it returned "
                          f"{ids[0]!r:.40} ({type(ids[0]).__name__}).")  # fmt: skip
        ran, _ = play_approval(fn, second)
        if differs is None and not ran:
            how = ("the same action got two different ids" if label == "A again, exactly"
                   else f"your ids differ: {ids[0]!r:.70} vs {ids[1]!r:.70}")  # fmt: skip
            hint = ("don't use random values, time or id(): the id must be a function of the action only"
                    if label == "A again, exactly" else
                    "key order is not part of the action: json.dumps(..., sort_keys=True) sorts keys at every level")
            return failed(f"case '{label}': alice approved A, yet this call stopped at APPROVAL_REQUIRED — {how}. "
                          f"Hint: {hint}.")  # fmt: skip
        if differs is not None and ran:
            return failed(f"case '{label}': alice approved A, and this call ran on that approval — a write nobody "
                          f"approved happened. Your id ignores {_WHERE[differs]}.")
    return passed(f"all {len(ACTION_CASES)} cases right in a real executor: A runs in any key order, and nothing "
                  "else runs on A's approval.")


def _action_id_solution(tool: str, arguments: dict[str, Any], user_id: str) -> str:
    canonical = json.dumps(arguments, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # json.dumps of the list keeps the three parts apart: no "tool"+"user" run-together.
    return "act_" + hashlib.sha256(json.dumps([tool, canonical, user_id]).encode()).hexdigest()[:16]


# ---- drill 3: an idempotency store ---------------------------------------------------------------


class _SaveArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    topic: str


async def _no_sleep(seconds: float) -> None:
    pass


def _store_of(cls: Any) -> tuple[Any, str | None]:
    try:
        store = cls()
    except Exception as error:
        return None, f"{getattr(cls, '__name__', cls)}() raised {type(error).__name__}: {error}; it must take no arguments."
    run = getattr(store, "run", None)
    if run is None or not inspect.iscoroutinefunction(run):
        return None, ("the store needs an `async def run(self, key, arguments, write)`: write() is a coroutine "
                      "function, so run must await it.")  # fmt: skip
    return store, None


def _retry_after_timeout(store: Any) -> tuple[list[str], Any]:
    """A real write tool that stores, then answers too late once; retried by execute_with_retries."""
    records: list[str] = []
    late = [0.6]

    async def save(arguments: _SaveArgs, context: CallContext) -> Any:
        async def write() -> dict[str, str]:
            records.append(arguments.topic)
            return {"record_id": f"gap-{len(records)}"}

        result, replayed = await store.run(context.action_id, arguments.model_dump(), write)
        await anyio.sleep(late.pop() if late else 0)  # the first answer is lost to the timeout
        return {"stored": result, "replayed": replayed}

    tool = Tool("save_learning_gap", "Save a learning gap (changes data).", _SaveArgs, save,
                side_effect=True, idempotent=True, timeout=0.25)  # fmt: skip
    executor = Executor([tool])
    arguments = {"topic": "call_id vs MCP id"}
    executor.approvals.approve(executor.approvals.request(tool.name, arguments, "alice").action_id)
    outcome = _run(lambda: execute_with_retries(executor, "call_save", tool.name, json.dumps(arguments), ALICE,
                                                policy=RetryPolicy(max_attempts=3), sleep=_no_sleep))  # fmt: skip
    return records, outcome


def _direct(store: Any, steps: list[tuple[str, dict[str, Any]]], *, concurrent: bool = False,
            fail_first: bool = False) -> tuple[list[Any], list[str]]:  # fmt: skip
    """Call `store.run` for each (key, arguments); returns the outcomes (a (result, replayed) pair
    or the exception raised) and the writes that really happened."""
    writes: list[str] = []

    def writer(label: str) -> Callable[[], Awaitable[Any]]:
        async def write() -> dict[str, str]:
            await anyio.sleep(0.02)
            if fail_first and not writes and label == "1":
                writes.append("failed")
                raise ToolError("UPSTREAM_ERROR", "the notes database is down", retryable=True)
            writes.append(label)
            return {"record_id": f"gap-{label}"}

        return write

    outcomes: list[Any] = [None] * len(steps)

    async def one(i: int) -> None:
        key, arguments = steps[i]
        try:
            outcomes[i] = await store.run(key, copy.deepcopy(arguments), writer(str(i + 1)))
        except Exception as error:
            outcomes[i] = error

    async def go() -> None:
        if concurrent:
            async with anyio.create_task_group() as tg:
                for i in range(len(steps)):
                    tg.start_soon(one, i)
        else:
            for i in range(len(steps)):
                await one(i)

    _run(go)
    return outcomes, [w for w in writes if w != "failed"]


def _pair_shape(value: Any) -> str | None:
    if isinstance(value, Exception):
        return f"it raised {type(value).__name__}: {value}"
    if not (isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], bool)):
        return f"it returned {value!r:.60}; return a pair (result, replayed) with replayed a bool"
    return None


def check_idempotency_store(cls: Any) -> bool:
    """Run a fresh `cls()` through six scenarios; explain the first where a write happens twice,
    a replay is wrong, or a conflict is missed."""
    if not_answered(cls):
        return failed("Not answered yet: write the class (with async def run(self, key, arguments, write)) and pass "
                      "the class itself.")  # fmt: skip
    store, problem = _store_of(cls)
    if problem:
        return failed(problem)
    outcomes, _ = _direct(cls(), [("k0", {"topic": "retries"})])
    if shape := _pair_shape(outcomes[0]):
        return failed(f"case 'one call': {shape}.")

    records, outcome = _retry_after_timeout(store)
    attempts = [a.outcome for a in outcome.attempts]
    if outcome.execution.error_code in ("UPSTREAM_ERROR",) and not records:
        return failed(f"case 'a retry after a timeout': your run() failed inside the real tool "
                      f"({outcome.execution.result['error']['message']}); see the server log of an Executor, or "
                      "call it directly: await store.run('k', {'a': 1}, write).")  # fmt: skip
    if len(records) != 1:
        return failed(f"case 'a retry after a timeout': the first attempt stored the record and then timed out; "
                      f"the retry wrote again — {len(records)} records for one request (attempts {attempts}). Save "
                      "the result under the key as soon as write() returns, and look the key up first.")  # fmt: skip
    data = outcome.execution.result.get("data", {})
    if not outcome.execution.ok or data.get("replayed") is not True:
        return failed(f"case 'a retry after a timeout': one record, good, but the retry should answer with the "
                      f"stored result and replayed=True; it answered {outcome.execution.output[:90]}.")

    for label, steps, check in (
        ("the same key, the same arguments in another key order",
         [("k1", {"topic": "strict mode", "priority": 2}), ("k1", {"priority": 2, "topic": "strict mode"})], "replay"),
        ("the same key with other arguments",
         [("k1", {"topic": "strict mode"}), ("k1", {"topic": "retries"})], "conflict"),
        ("two different keys", [("k1", {"topic": "strict mode"}), ("k2", {"topic": "strict mode"})], "two"),
    ):  # fmt: skip
        outcomes, writes = _direct(cls(), steps)
        first = _pair_shape(outcomes[0])
        if first:
            return failed(f"case '{label}': first call: {first}.")
        second = outcomes[1]
        if check == "conflict":
            if not isinstance(second, IdempotencyConflict):
                got = f"it raised {type(second).__name__}" if isinstance(second, Exception) else f"it returned {second!r:.50}"
                return failed(f"case '{label}': {got}. The same key with different arguments is a client bug: "
                              "raise IdempotencyConflict (from course_lib.approval) and write nothing.")
            if writes != ["1"]:
                return failed(f"case '{label}': you raised the conflict, but after writing: writes {writes}.")
            continue
        if check == "replay" and isinstance(second, Exception):
            return failed(f"case '{label}': the second call raised {type(second).__name__}, but its arguments equal "
                          "the first call's as objects — only the key order differs. Compare them as objects, or as "
                          "json.dumps(..., sort_keys=True).")  # fmt: skip
        if shape := _pair_shape(second):
            return failed(f"case '{label}': second call: {shape}.")
        if check == "replay" and (writes != ["1"] or second != (outcomes[0][0], True)):
            return failed(f"case '{label}': the second call should replay the first result (replayed=True) and write "
                          f"nothing; writes {writes}, second call {second!r:.60}. Compare arguments as objects (or as "
                          "JSON with sort_keys=True), not as raw text.")  # fmt: skip
        if check == "two" and (writes != ["1", "2"] or second[1] is not False):
            return failed(f"case '{label}': another key is another action: it must write; writes {writes}, second "
                          f"call {second!r:.60}.")

    label = "two calls with the same key at the same time"
    outcomes, writes = _direct(cls(), [("k1", {"topic": "retries"}), ("k1", {"topic": "retries"})], concurrent=True)
    if len(writes) != 1:
        return failed(f"case '{label}': both ran write() ({len(writes)} writes). Between your lookup and your save "
                      "there is an await, so the second call looked before the first saved. Hold a lock per key "
                      "(anyio.Lock) around the lookup, the write and the save.")  # fmt: skip
    if any(_pair_shape(o) for o in outcomes) or sorted(o[1] for o in outcomes) != [False, True]:
        return failed(f"case '{label}': one write, good; the waiting call should replay it (replayed=True). "
                      f"Outcomes: {outcomes!r:.90}.")

    label = "a write that failed, then the same key again"
    outcomes, writes = _direct(cls(), [("k1", {"topic": "retries"}), ("k1", {"topic": "retries"})], fail_first=True)
    if not isinstance(outcomes[0], ToolError):
        return failed(f"case '{label}': write() raised UPSTREAM_ERROR the first time; your run() should let the "
                      f"error through (it returned {outcomes[0]!r:.50}).")
    if writes != ["2"] or _pair_shape(outcomes[1]) or outcomes[1][1] is not False:
        return failed(f"case '{label}': nothing was stored the first time, so the second call must write "
                      f"(replayed=False); it gave {outcomes[1]!r:.60}. Store a result only after write() returned.")
    return passed("all 6 scenarios right: a retried write took effect once, key order ignored, conflicts refused, "
                  "concurrent duplicates and failed writes handled.")


class _IdempotencyStoreSolution:
    def __init__(self) -> None:
        self.results: dict[str, tuple[str, Any]] = {}
        self.locks: dict[str, anyio.Lock] = {}

    async def run(self, key: str, arguments: dict[str, Any], write: Callable[[], Awaitable[Any]]) -> tuple[Any, bool]:
        fingerprint = json.dumps(arguments, sort_keys=True)
        async with self.locks.setdefault(key, anyio.Lock()):  # a duplicate waits, then replays
            if key in self.results:
                stored_fingerprint, result = self.results[key]
                if stored_fingerprint != fingerprint:
                    raise IdempotencyConflict(f"key {key!r} was used with other arguments")
                return result, True
            result = await write()  # if it raises, nothing is stored
            self.results[key] = (fingerprint, result)
            return result, False


# ---- drill 4: the next step after a failure ------------------------------------------------------

NEXT_STEPS = ("retry", "check_status", "fix_arguments", "search_again", "reread", "wait_for_approval", "stop")
"""What the app (and the model) should do next, from the source's table 失败不是一种结果."""

_STEP_WHY = {
    "retry": "it can recover soon (retryable true) and repeating it is safe (a read, or a write under its "
             "idempotency key): retry with backoff and a cap",
    "check_status": "it could recover, but it is a write without an idempotency key: the first attempt may "
                    "already have written. Query the state first (a timed-out payment is checked, not re-sent)",
    "fix_arguments": "the arguments break the rule: the model fixes them (once), repeating them fails again",
    "search_again": "the resource does not exist: search again, or say clearly it was not found",
    "reread": "the state changed under the call: read it again, then let the user or the flow decide",
    "wait_for_approval": "a person must approve this exact action: pause and show it (requires_action)",
    "stop": "permission does not come back by asking again: stop, or ask the user for access",
    "stop upstream": "retryable is false — the failure is permanent (a broken route, a tool returning the wrong "
                     "shape): fail, alert, and don't let the model guess",
}  # fmt: skip

# (label in nb05.recorded_errors(), what it was, is_write, has_key)
STEP_CASES: list[tuple[str, str, bool, bool]] = [
    ("INVALID_INPUT", "a read whose head was the text \"5\"", False, False),
    ("FORBIDDEN", "a read of /etc/passwd", False, False),
    ("NOT_FOUND", "a read of /workspace/missing.txt", False, False),
    ("TIMEOUT", "a read that did not answer in time", False, False),
    ("UPSTREAM_ERROR transient", "a search while the index restarts", False, False),
    ("UPSTREAM_ERROR protocol", "a read through a route to a tool the server does not have", False, False),
    ("UPSTREAM_ERROR bad output", "a search whose tool returned the wrong shape", False, False),
    ("APPROVAL_REQUIRED", "a write nobody approved yet", True, False),
    ("CONFLICT", "a write whose note changed meanwhile", True, True),
    ("TIMEOUT", "a write without an idempotency key that did not answer in time", True, False),
    ("TIMEOUT", "a write with an idempotency key that did not answer in time", True, True),
    ("UPSTREAM_ERROR transient", "a write without an idempotency key while the index restarts", True, False),
    ("INVALID_INPUT", "a write with bad arguments", True, True),
]  # fmt: skip


def step_errors() -> dict[str, dict[str, Any]]:
    """Real normalized errors by label (the same ones notebook 05's exercise uses)."""
    from course_lib.exercises.nb05 import recorded_errors

    return copy.deepcopy(recorded_errors())


def check_next_step(fn: Callable[[dict[str, Any], bool, bool], str]) -> bool:
    """Run `fn(error, is_write, has_key)` on 13 real failures; explain the first wrong next step."""
    if problem := _function(fn, "next_step", "error, is_write, has_key"):
        return failed(problem)
    errors = step_errors()
    for number, (label, what, is_write, has_key) in enumerate(STEP_CASES, start=1):
        error = errors[label]
        flags = f"is_write={is_write}, has_key={has_key}"
        shown = f"case {number} ({what}: {error['code']}, retryable {json.dumps(error['retryable'])}; {flags})"
        try:
            got = fn(copy.deepcopy(error), is_write, has_key)
        except Exception as exc:
            return failed(f"{shown}: next_step raised {type(exc).__name__}: {exc}. The error has the keys "
                          f"{', '.join(error)}.")
        if got is ...:
            return failed("Not answered yet: next_step still returns ... — return one of NEXT_STEPS.")
        if got not in NEXT_STEPS:
            return failed(f"{shown}: {got!r} is not a next step; return one of {', '.join(NEXT_STEPS)}.")
        expected = _next_step_solution(error, is_write, has_key)
        if got != expected:
            extra = (" (the code alone says UPSTREAM_ERROR; the retryable flag says whether it can recover)"
                     if error["code"] == "UPSTREAM_ERROR" else "")  # fmt: skip
            why = _STEP_WHY["stop upstream" if expected == "stop" and error["code"] != "FORBIDDEN" else expected]
            return failed(f"{shown}: you said {got!r}; the next step is {expected!r}: {why}{extra}.")
    return passed(f"next_step picks the right move for all {len(STEP_CASES)} real failures.")


def _next_step_solution(error: dict[str, Any], is_write: bool, has_key: bool) -> str:
    by_code = {"INVALID_INPUT": "fix_arguments", "NOT_FOUND": "search_again", "CONFLICT": "reread",
               "APPROVAL_REQUIRED": "wait_for_approval", "FORBIDDEN": "stop"}  # fmt: skip
    if error["code"] in by_code:
        return by_code[error["code"]]
    if not error["retryable"]:
        return "stop"
    return "check_status" if is_write and not has_key else "retry"


# ---- drill 5: a parallel scheduler ----------------------------------------------------------------

READ = "fs__read_text_file"
DELAYS = {"read": 0.06, "write": 0.03}
"""Seconds each timed tool waits: long enough that running together shows in the event order."""


class _QueryArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    query: str


def _model_calls() -> list[Call]:
    """The three `function_call`s the offline model really sends for THREE_READS."""
    from openai.types.responses import Response

    from course_lib.arguments import input_schema
    from course_lib.offline_model import respond

    tool = {"type": "function", "name": READ, "description": "Read a text file.", "parameters": input_schema()}
    response = Response.model_validate(respond({"model": "gpt-4.1", "input": THREE_READS, "tools": [tool]}))
    return [Call.from_item(item) for item in response.output if item.type == "function_call"]


def _r(call_id: str, path: str) -> Call:
    return Call(call_id, READ, json.dumps({"path": path, "head": 1}))


def _w(call_id: str, topic: str) -> Call:
    return Call(call_id, "save_learning_gap", json.dumps({"topic": topic}))


def schedule_cases() -> dict[str, list[Call]]:
    """label → one turn's calls, in the model's order."""
    return {
        "three reads from the model": _model_calls(),
        "read, write, read": [_r("call_r1", "/workspace/notes.txt"), _w("call_w1", "retries"),
                              _r("call_r2", "/workspace/todo.md")],
        "two writes, then a read": [_w("call_w1", "retries"), _w("call_w2", "strict mode"),
                                    _r("call_r1", "/workspace/notes.txt")],
        "a long mixed turn": [_r("call_r1", "/workspace/notes.txt"), _r("call_r2", "/workspace/todo.md"),
                              _w("call_w1", "retries"), Call("call_s1", "search_notes", '{"query": "call_id"}'),
                              _r("call_r3", "/workspace/docs/mcp.md"), _w("call_w2", "strict mode"),
                              _w("call_w3", "idempotency"), _r("call_r4", "/workspace/data/config.json")],
        "no calls at all": [],
    }  # fmt: skip


@dataclass
class TimedTurn:
    """What happened when a scheduler ran one turn: results, and start/end events in order."""

    results: Any
    events: list[tuple[str, str]]
    writes: list[str]


def run_scheduler(fn: Callable[..., Awaitable[Any]], calls: list[Call]) -> TimedTurn:
    """Run `fn(calls, execute, is_write)` against a real Executor: reads on the real files server
    (and a local search), a local write; every handler logs ("start"|"end", call_id)."""
    from course_lib.host import files_host

    events: list[tuple[str, str]] = []
    writes: list[str] = []

    def timed(kind: str, inner: Callable[[Any, CallContext], Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def handler(arguments: Any, context: CallContext) -> Any:
            events.append(("start", context.call_id))
            await anyio.sleep(DELAYS[kind])
            result = await inner(arguments, context)
            events.append(("end", context.call_id))
            return result

        return handler

    async def search(arguments: _QueryArgs, context: CallContext) -> Any:
        return {"hits": [f"/workspace/notes.txt mentions {arguments.query}"]}

    async def save(arguments: _SaveArgs, context: CallContext) -> Any:
        writes.append(context.call_id)
        return {"record_id": f"gap-{len(writes)}"}

    with files_host() as host:
        read = host.executor_tool(READ, ReadTextFileArgs)
        executor = Executor([
            replace(read, handler=timed("read", read.handler)),
            Tool("search_notes", "Search the user's notes.", _QueryArgs, timed("read", search)),
            Tool("save_learning_gap", "Save a learning gap (changes data).", _SaveArgs, timed("write", save),
                 side_effect=True),
        ])  # fmt: skip
        for name in ("save_learning_gap",):  # approved in advance: this drill is about order, not approval
            for call in calls:
                if call.name == name:
                    arguments = json.loads(call.arguments)
                    executor.approvals.approve(executor.approvals.request(name, arguments, "alice").action_id)

        async def execute(call: Call) -> Execution:
            return await executor.execute(call.call_id, call.name, call.arguments, ALICE)

        def is_write(call: Call) -> bool:
            tool = executor.tools.get(call.name)
            return tool is None or tool.side_effect

        results = host.run(fn, list(calls), execute, is_write)
    return TimedTurn(results, events, writes)


def _schedule_problem(label: str, calls: list[Call], turn: TimedTurn) -> str | None:
    where = f"case '{label}'"
    results = turn.results
    if not isinstance(results, list) or len(results) != len(calls):
        shown = f"a {type(results).__name__}" if not isinstance(results, list) else f"{len(results)} results"
        return f"{where}: run_turn must return a list with one Execution per call ({len(calls)}); it returned {shown}."
    for i, (call, result) in enumerate(zip(calls, results)):
        if not isinstance(result, Execution) or result.call_id != call.call_id:
            got = result.call_id if isinstance(result, Execution) else type(result).__name__
            return (f"{where}: result {i} is for {got}, but the model's call {i} is {call.call_id}: return the "
                    "results in the model's order (what execute(call) returned, at the call's position).")
    start = {cid: i for i, (kind, cid) in enumerate(turn.events) if kind == "start"}
    end = {cid: i for i, (kind, cid) in enumerate(turn.events) if kind == "end"}
    for call in calls:
        runs = sum(1 for kind, cid in turn.events if kind == "start" and cid == call.call_id)
        if runs != 1:
            return f"{where}: {call.call_id} ran {runs} times; every call runs exactly once."
    write = {call.call_id: call.name == "save_learning_gap" for call in calls}
    for w in (c.call_id for c in calls if write[c.call_id]):
        for other in (c.call_id for c in calls if c.call_id != w):
            if start[other] < end[w] and start[w] < end[other]:
                return f"{where}: {other} ran while the write {w} was running. A write runs alone: nothing beside it."
    for i, earlier in enumerate(calls):
        for later in calls[i + 1:]:
            if (write[earlier.call_id] or write[later.call_id]) and start[later.call_id] < end[earlier.call_id]:
                w = earlier.call_id if write[earlier.call_id] else later.call_id
                return (f"{where}: {later.call_id} started before {earlier.call_id} had finished, although the model "
                        f"sent it after, and {w} is a write. Keep the model's order around every write.")
    wave: list[str] = []
    for call in [*calls, None]:
        if call is None or write[call.call_id]:
            if len(wave) > 1 and max(start[c] for c in wave) > min(end[c] for c in wave):
                return (f"{where}: the reads {', '.join(wave)} ran one after another. They are independent reads "
                        "with no write between them: start them together (a task group, or asyncio.gather).")
            wave = []
        else:
            wave.append(call.call_id)
    return None


def check_run_turn(fn: Callable[..., Awaitable[list[Execution]]]) -> bool:
    """Run `fn` on five turns with timed tools and report the first rule the event order breaks."""
    if problem := _function(fn, "run_turn", "calls, execute, is_write"):
        return failed(problem)
    if not inspect.iscoroutinefunction(fn):
        return failed("run_turn must be an async def: it awaits execute(call), which is a coroutine function.")
    for label, calls in schedule_cases().items():
        try:
            turn = run_scheduler(fn, calls)
        except Exception as error:
            return failed(f"case '{label}': run_turn raised {type(error).__name__}: {error}.")
        if turn.results is ...:
            return failed("Not answered yet: run_turn still returns ... — return the list of executions.")
        if problem := _schedule_problem(label, calls, turn):
            return failed(problem)
    return passed("all 5 turns ran right: reads overlapped, each write ran alone and in order, results came back "
                  "in the model's order.")


async def _run_turn_solution(calls: list[Call], execute: Callable[[Call], Awaitable[Execution]],
                             is_write: Callable[[Call], bool]) -> list[Execution]:  # fmt: skip
    results: list[Any] = [None] * len(calls)

    async def run(i: int) -> None:
        results[i] = await execute(calls[i])

    async def run_together(wave: list[int]) -> None:
        async with anyio.create_task_group() as tg:
            for i in wave:
                tg.start_soon(run, i)

    wave: list[int] = []
    for i, call in enumerate(calls):
        if is_write(call):
            await run_together(wave)  # the reads sent before it finish first
            wave = []
            await run(i)  # then the write, alone
        else:
            wave.append(i)
    await run_together(wave)
    return results


# ---- drill 6: an arguments parser ------------------------------------------------------------------


def parse_cases() -> list[tuple[str, Any]]:
    """(label, arguments text): the model's real texts, then broken variants built from them."""
    from openai.types.responses import Response

    from course_lib.arguments import input_schema
    from course_lib.declarations import strict_schema
    from course_lib.offline_model import respond

    def model_text(request: str, *, strict: bool) -> str:
        parameters = strict_schema(input_schema()) if strict else input_schema()
        tool = {"type": "function", "name": READ, "description": "Read a text file.", "parameters": parameters,
                "strict": strict}  # fmt: skip
        response = Response.model_validate(respond({"model": "gpt-4.1", "input": request, "tools": [tool]}))
        return next(item.arguments for item in response.output if item.type == "function_call")

    plain = model_text("Show the first 20 lines of /workspace/notes.txt", strict=False)
    strict = model_text("Show the last 3 lines of /workspace/todo.md", strict=True)
    return [
        ("the model's arguments for head 20", plain),
        ("the model's strict arguments, with a null", strict),
        ("the same text with spaces and a newline around it", f" {plain}\n"),
        ("a duplicate key", plain[:-1] + ',"path":"/etc/passwd"}'),
        ("NaN as a number", plain.replace("20", "NaN")),
        ("Infinity as a number", plain.replace("20", "Infinity")),
        ("-Infinity as a number", plain.replace("20", "-Infinity")),
        ("a second object after the first", plain + ' {"path":"/etc/passwd"}'),
        ("a stray bracket after the object", plain + "]"),
        ("an array instead of an object", json.dumps(["/workspace/notes.txt", 20])),
        ("a string instead of an object", json.dumps("/workspace/notes.txt")),
        ("null instead of an object", "null"),
        ("text cut off in the middle", plain[: len(plain) // 2]),
        ("single quotes", plain.replace('"', "'")),
        ("an empty text", ""),
        ("an object that was already parsed (not text)", json.loads(plain)),
    ]  # fmt: skip


_PARSE_HINTS = {
    "a duplicate key": "json.loads keeps the LAST duplicate silently, so the model's own path is replaced by "
                       "another. Refuse duplicates with object_pairs_hook",
    "NaN as a number": "Python's json accepts NaN, standard JSON does not; refuse it with parse_constant",
    "Infinity as a number": "Python's json accepts Infinity, standard JSON does not; refuse it with parse_constant",
    "-Infinity as a number": "Python's json accepts -Infinity, standard JSON does not; refuse it with parse_constant",
    "a second object after the first": "something after the object means the text is not one value: if you use "
                                       "raw_decode, check that only whitespace is left",
    "a stray bracket after the object": "only whitespace may follow the object",
    "an array instead of an object": "arguments are an object: check isinstance(value, dict) after parsing",
    "a string instead of an object": "arguments are an object: check isinstance(value, dict) after parsing",
    "null instead of an object": "arguments are an object: None is not one",
    "an object that was already parsed (not text)": "arguments are JSON text; a dict here means someone passed the "
                                                    "MCP-style object — refuse it instead of guessing",
}  # fmt: skip


def check_parse_arguments(fn: Callable[[Any], dict[str, Any]]) -> bool:
    """Run `fn` on 16 arguments texts and compare with `arguments.parse_arguments_text`."""
    if problem := _function(fn, "parse_arguments", "text"):
        return failed(problem)
    for label, text in parse_cases():
        try:
            expected: Any = parse_arguments_text(copy.deepcopy(text))
        except ArgumentsError as error:
            expected = error
        shown = f"case '{label}' ({text!r:.70})"
        try:
            got = fn(copy.deepcopy(text))
        except (ValueError, TypeError) as error:
            if isinstance(expected, ArgumentsError):
                if isinstance(error, TypeError) and isinstance(text, str):
                    return failed(f"{shown}: raise ValueError, not TypeError, for a bad arguments text.")
                continue
            hint = (" JSON allows whitespace around the value (raw_decode does not skip it before the value)."
                    if label.startswith("the same text with spaces") else "")  # fmt: skip
            return failed(f"{shown}: you raised {type(error).__name__}: {error}, but this is valid arguments text.{hint}")
        except Exception as error:
            return failed(f"{shown}: parse_arguments raised {type(error).__name__}: {error}; refuse with ValueError.")
        if got is ...:
            return failed("Not answered yet: parse_arguments still returns ... — return the dict.")
        if isinstance(expected, ArgumentsError):
            return failed(f"{shown}: you returned {got!r:.60}; refuse it with ValueError. "
                          f"{_PARSE_HINTS.get(label, 'It is not one clean JSON object')}.")
        if got != expected or type(got) is not dict:
            return failed(f"{shown}: you returned {got!r:.60}; expected {expected!r:.60}.")
    return passed("all 16 texts right: the model's arguments parsed, and duplicates, NaN, Infinity, trailing data "
                  "and non-objects refused.")


def _parse_arguments_solution(text: Any) -> dict[str, Any]:
    if not isinstance(text, str):
        raise ValueError("arguments must be JSON text")

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate key in arguments")
        return dict(pairs)

    def no_constant(token: str) -> Any:
        raise ValueError(f"{token} is not a JSON number")

    # json.loads refuses trailing data by itself ("Extra data"); JSONDecodeError is a ValueError.
    value = json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constant)
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    return value


SOLUTIONS: Solutions = {
    "check_pair_call_ids": lambda: _pair_solution,
    "check_action_id": lambda: _action_id_solution,
    "check_idempotency_store": lambda: _IdempotencyStoreSolution,
    "check_next_step": lambda: _next_step_solution,
    "check_run_turn": lambda: _run_turn_solution,
    "check_parse_arguments": lambda: _parse_arguments_solution,
    "check_diagnoses": lambda: dict(DIAGNOSIS_SOLUTION),
}
