import json
import random
import time

import anyio
import mcp_types
import pytest
from mcp.server import Server
from openai.types.responses import Response
from pydantic import BaseModel, ConfigDict

from course_lib.arguments import ReadTextFileArgs
from course_lib.execution import Execution, Executor, Session, Tool, ToolError
from course_lib.guarded_loop import run_guarded_loop
from course_lib.host import McpHost, files_host
from course_lib.retry import RetryPolicy, execute_with_retries, repeated_call_key


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
    rng = random.Random(7)  # full jitter: each wait uniform below its ceiling, 0.2 then 0.4
    assert waits == [round(rng.uniform(0, 0.2), 3), round(rng.uniform(0, 0.4), 3)]
    assert 0 <= waits[0] <= 0.2 and 0 <= waits[1] <= 0.4


def _first_waits(policy: RetryPolicy, clients: int) -> list[float]:
    """The first wait of `clients` clients that all failed at the same moment with `policy`.

    Read from the second attempt's record, not from the sleeps: a draw of 0.0 (1 in 201) sleeps not at all."""
    return [run(Tool("read", "", Args, flaky(1)[0]), policy)[0].attempts[1].waited for _ in range(clients)]


def test_the_default_draws_fresh_randomness_so_clients_that_failed_together_spread_out():
    assert RetryPolicy().seed is None and RetryPolicy().jitter == 1  # full jitter, no seed: production
    waits = _first_waits(RetryPolicy(), 30)
    assert len(set(waits)) > 10, waits  # 30 draws from 201 values: equal ones are rare, not the rule
    assert all(0 <= w <= 0.2 for w in waits)


def test_a_seed_puts_every_client_in_lockstep():
    assert len(set(_first_waits(RetryPolicy(seed=0), 5))) == 1  # what a demo wants, and production must not


@pytest.mark.parametrize("jitter", [0, 0.25, 0.5, 1])
def test_every_wait_lies_between_its_floor_and_its_ceiling_for_every_seed(jitter):
    policy = RetryPolicy(base_delay=0.2, factor=2, max_delay=0.5, jitter=jitter)
    for seed in range(200):
        rng = random.Random(seed)
        for n in (1, 2, 3, 4):
            top = min(0.5, 0.2 * 2 ** (n - 1))
            assert policy.ceiling(n) == top
            assert round(top * (1 - jitter), 3) <= policy.delay(n, rng) <= top


def test_a_policy_refuses_a_jitter_outside_0_to_1_and_negative_delays():
    with pytest.raises(ValueError, match="from 0 \\(none\\) to 1 \\(full jitter\\); got 1.5"):
        RetryPolicy(jitter=1.5)
    with pytest.raises(ValueError, match="cannot be negative"):
        RetryPolicy(base_delay=-0.1)


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


# ---- the tool budget stops a repeated call, not a second different one ----------------------------------


def test_the_same_call_is_the_same_whatever_its_call_id_key_order_or_spacing():
    def execution(call_id, text):
        return Execution(call_id, "read", text, "t", arguments=json.loads(text))

    one = execution("call_1", '{"path": "a", "head": 5}')
    assert repeated_call_key(one) == repeated_call_key(execution("call_2", '{"head":5,"path":"a"}'))
    assert repeated_call_key(one) != repeated_call_key(execution("call_3", '{"path": "b", "head": 5}'))
    unparsed = Execution("call_4", "read", ' {"path": ', "t")  # arguments that did not parse: their text
    assert repeated_call_key(unparsed) == ("read", '{"path":')


class Scripted:
    """A stand-in client that sends one call per request from `arguments`, then a final message."""

    def __init__(self, *arguments):
        self.responses, self.arguments, self.count = self, list(arguments), 0

    def create(self, **request):
        self.count += 1
        if self.arguments:
            output = [{"type": "function_call", "id": f"fc_{self.count}", "call_id": f"call_{self.count}",
                       "name": "fs__read_text_file", "arguments": self.arguments.pop(0), "status": "completed"}]
        else:
            output = [{"type": "message", "id": f"msg_{self.count}", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": "found it", "annotations": []}]}]
        return Response.model_validate({
            "id": f"resp_{self.count}", "object": "response", "created_at": 0, "model": "m", "output": output,
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "status": "completed",
        })  # fmt: skip


@pytest.fixture
def files(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with files_host() as host:
        yield host, Executor([host.executor_tool("fs__read_text_file", ReadTextFileArgs)])


def test_two_different_missing_paths_do_not_end_a_loop_that_then_recovers(files):
    host, executor = files
    client = Scripted('{"path": "/workspace/missing.txt"}', '{"path": "/workspace/notes.md"}',
                      '{"path": "/workspace/notes.txt", "head": 1}')  # fmt: skip
    result = run_guarded_loop(client, host, executor, Session("alice"), "read my notes", max_tool_failures=2)
    assert [e.error_code for e in result.executions] == ["NOT_FOUND", "NOT_FOUND", None]
    assert (result.status, result.reason, result.answer, client.count) == ("completed", None, "found it", 4)


def test_the_same_refused_call_twice_is_stopped_even_with_other_arguments_written_differently(files):
    host, executor = files
    client = Scripted('{"path": "/etc/passwd", "head": 5}', '{"head":5, "path":"/etc/passwd"}',
                      '{"path": "/workspace/notes.txt", "head": 1}')  # fmt: skip
    result = run_guarded_loop(client, host, executor, Session("alice"), "read it", max_tool_failures=2)
    assert [e.error_code for e in result.executions] == ["FORBIDDEN", "FORBIDDEN"]
    assert (result.status, result.reason, client.count) == ("incomplete", "tool_budget", 2)


# ---- a timeout is certain only in-process: a remote tool is only asked to stop ---------------------------


def _gap_server(records: list, *, cancellable: bool):
    tool = mcp_types.Tool(name="save_gap", description="Save a learning gap (changes data)",
                          input_schema={"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]})  # fmt: skip

    async def on_list_tools(ctx, params):
        return mcp_types.ListToolsResult(tools=[tool])

    async def on_call_tool(ctx, params):
        with anyio.CancelScope(shield=not cancellable):  # shielded: work that cannot be stopped once started
            await anyio.sleep(0.3)
            records.append(params.arguments["path"])
        return mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text="saved")])

    return Server("gaps", on_list_tools=on_list_tools, on_call_tool=on_call_tool)


@pytest.mark.parametrize(("cancellable", "written"), [(True, []), (False, ["a"])])
def test_a_timed_out_remote_write_is_only_asked_to_stop(cancellable, written):
    records: list = []
    with McpHost() as host:
        host.add_server("gaps", _gap_server(records, cancellable=cancellable))
        executor = Executor([host.executor_tool("gaps__save_gap", Args, side_effect=True, timeout=0.1)])
        executor.approvals.approve(executor.approvals.request("gaps__save_gap", {"path": "a"}, "alice").action_id)
        execution = host.run(executor.execute, "c1", "gaps__save_gap", '{"path": "a"}', Session("alice"))
        time.sleep(0.5)  # longer than the write needs
        messages = [m.json for m in host.connections["gaps"].messages]
    assert execution.error_code == "TIMEOUT"
    [call] = [m for m in messages if m.get("method") == "tools/call"]
    assert {"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": call["id"], "reason": "caller cancelled"}} in messages  # fmt: skip
    assert records == written  # the same TIMEOUT and notification: the server decides whether it stopped
