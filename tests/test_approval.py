import inspect

import anyio
import pytest
from mcp.types import ToolAnnotations

from course_lib.approval import (Approvals, IdempotencyConflict, IdempotencyStore, OperationKeys, Provenance,
                                 ToolHints, action_id, approval_policy)


def test_action_id_ignores_key_order_but_binds_tool_arguments_and_user():
    base = action_id("save", {"a": 1, "b": "x"}, "alice")
    assert base == action_id("save", {"b": "x", "a": 1}, "alice")
    assert len({base, action_id("save", {"a": 2, "b": "x"}, "alice"), action_id("other", {"a": 1, "b": "x"}, "alice"),
                action_id("save", {"a": 1, "b": "x"}, "bob")}) == 4  # fmt: skip


def test_approve_only_what_was_shown():
    approvals = Approvals()
    with pytest.raises(KeyError):
        approvals.approve(action_id("save", {"a": 1}, "alice"))  # never requested
    pending = approvals.request("save", {"a": 1}, "alice")
    approvals.reject(pending.action_id)
    assert not approvals.granted("save", {"a": 1}, "alice")
    approvals.approve(approvals.request("save", {"a": 1}, "alice").action_id)
    assert approvals.granted("save", {"a": 1}, "alice")
    approvals.spend("save", {"a": 1}, "alice")
    assert not approvals.granted("save", {"a": 1}, "alice")


def test_same_key_and_arguments_write_once_and_replay_the_stored_result():
    store, effects = IdempotencyStore(), []

    async def write():
        effects.append(1)
        return {"id": len(effects)}

    async def main():
        first = await store.run("k1", {"a": 1}, write)
        again = await store.run("k1", {"a": 1}, write)  # the first response was lost to a timeout
        with pytest.raises(IdempotencyConflict):
            await store.run("k1", {"a": 2}, write)
        return first, again

    first, again = anyio.run(main)
    assert first == ({"id": 1}, False) and again == ({"id": 1}, True) and effects == [1]


def test_concurrent_duplicates_write_once():
    store, effects = IdempotencyStore(), []

    async def write():
        effects.append(1)
        await anyio.sleep(0.05)
        return {"id": 1}

    async def main():
        results = []
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(lambda: _collect(results, store.run("k", {"a": 1}, write)))
        return results

    results = anyio.run(main)
    assert effects == [1] and sorted(replayed for _, replayed in results) == [False, True, True]


async def _collect(results, awaitable):
    results.append(await awaitable)


def test_state_reads_each_decision_from_the_records():
    now = [0.0]
    approvals = Approvals(ttl=10, clock=lambda: now[0])
    the_id = action_id("save", {"a": 1}, "alice")
    assert approvals.state(the_id) == "unknown"
    approvals.request("save", {"a": 1}, "alice")
    assert approvals.state(the_id) == "pending"
    approvals.approve(the_id)
    assert approvals.state(the_id) == "approved"
    approvals.spend("save", {"a": 1}, "alice")
    assert approvals.state(the_id) == "spent"
    approvals.request("save", {"a": 1}, "alice")  # the same action again: a new decision is needed
    approvals.approve(the_id)
    now[0] = 11
    assert approvals.state(the_id) == "expired"
    approvals.request("save", {"a": 1}, "alice")
    approvals.reject(the_id)
    assert approvals.state(the_id) == "rejected" and not approvals.granted("save", {"a": 1}, "alice")


def _append(log, value):
    async def write():
        log.append(value)
        return {"record": len(log)}

    return write


def test_a_content_key_merges_two_real_identical_saves_an_operation_key_does_not():
    same = {"text": "water the plants"}

    async def main(key_for):
        store, log = IdempotencyStore(), []
        # operation 1, its retry after a lost answer, then operation 2 with identical content
        for operation in ("op1", "op1", "op2"):
            await store.run(key_for(operation), same, _append(log, operation))
        return log

    assert anyio.run(main, lambda op: action_id("add_reminder", same, "alice")) == ["op1"]  # op2 silently merged
    keys = OperationKeys()
    assert anyio.run(main, keys.for_operation) == ["op1", "op2"]  # the retry replayed, op2 wrote
    assert keys.for_operation("op1") == "op-0001" and keys.for_operation("op2") == "op-0002"


def test_a_key_is_remembered_only_for_its_retention_window():
    now = [0.0]
    store, log = IdempotencyStore(retention=60, clock=lambda: now[0]), []

    async def send():
        return await store.run("op-0001", {"a": 1}, _append(log, 1))

    assert anyio.run(send) == ({"record": 1}, False)
    now[0] = 60
    assert anyio.run(send) == ({"record": 1}, True)  # inside the window: replayed
    now[0] = 61
    assert anyio.run(send) == ({"record": 2}, False) and log == [1, 1]  # a late retry writes again


def test_hint_defaults_are_the_cautious_ones_of_the_sdk():
    # mcp.types.ToolAnnotations leaves every hint None and documents its default in the docstring.
    assert ToolHints.from_annotations(None) == ToolHints(read_only=False, destructive=True, idempotent=False,
                                                         open_world=True)  # fmt: skip
    source = inspect.getsource(ToolAnnotations)
    for hint, default in (("read_only_hint", "false"), ("destructive_hint", "true"), ("idempotent_hint", "false"),
                          ("open_world_hint", "true")):  # fmt: skip
        assert ToolAnnotations().model_dump()[hint] is None  # unset on the wire: the reader applies the default
        block = source[source.index(f"{hint}: bool | None = None"):]
        docstring = block[: block.index('"""', block.index('"""') + 3)]
        assert f"Default: {default}" in docstring, f"the SDK no longer documents {hint} default {default}"
    assert "never make tool use decisions based on ToolAnnotations" in source


def test_annotations_from_an_untrusted_server_cannot_remove_approval():
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    assert not approval_policy(read_only, trusted_server=True).needs_approval
    untrusted = approval_policy(read_only, trusted_server=False)
    assert untrusted.needs_approval and "not trusted" in untrusted.reasons[0]
    assert approval_policy(None, trusted_server=True).needs_approval  # no hints: not read-only, destructive
    # the app's own contract wins over any hint
    assert approval_policy(read_only, trusted_server=True, side_effect=True).needs_approval
    additive = approval_policy(ToolAnnotations(read_only_hint=False, destructive_hint=False), trusted_server=True)
    assert additive.needs_approval and "not read-only (additive only)" in additive.reasons


def test_provenance_is_kept_and_an_open_world_read_after_untrusted_output_needs_approval():
    email = Provenance("call_1", "fs__read_text_file")
    closed = approval_policy(ToolAnnotations(read_only_hint=True, open_world_hint=False), trusted_server=True,
                             after=[email])  # fmt: skip
    assert not closed.needs_approval and closed.after == (email,)
    open_world = approval_policy(ToolAnnotations(read_only_hint=True), trusted_server=True, after=[email])
    assert open_world.needs_approval and "can carry data out" in " ".join(open_world.reasons)
    write = approval_policy(None, trusted_server=True, side_effect=True, after=[email])
    assert write.reasons[-1] == "proposed after untrusted output of fs__read_text_file (call_1)"


# ---- pending approvals are bounded (issue 22) ------------------------------------------------------


def test_ten_thousand_unapproved_calls_keep_at_most_max_pending_and_the_dropped_cannot_be_approved():
    from pydantic import BaseModel, ConfigDict

    from course_lib.approval import MAX_PENDING, ApprovalDropped
    from course_lib.execution import Executor, Session, Tool

    class Args(BaseModel):
        model_config = ConfigDict(strict=True, extra="forbid")
        n: int

    async def write(arguments, context):
        return {"written": arguments.n}

    executor = Executor([Tool("write", "a side effect", Args, write, side_effect=True)])
    alice = Session("alice")

    async def flood():  # a loop, or a model, that keeps proposing writes nobody answers
        return [await executor.execute(f"call_{n}", "write", f'{{"n": {n}}}', alice) for n in range(10_000)]

    executions = anyio.run(flood)
    assert all(e.error_code == "APPROVAL_REQUIRED" for e in executions)
    approvals = executor.approvals
    assert len(approvals.pending) == MAX_PENDING == 1000  # not 10,000
    first, dropped, newest = (executions[i].result["error"]["action_id"] for i in (0, 8_999, -1))
    assert approvals.state(dropped) == "dropped" and approvals.state(newest) == "pending"
    with pytest.raises(ApprovalDropped) as refused:
        approvals.approve(dropped)
    assert "no longer waiting for a decision" in str(refused.value) and "nothing was approved" in str(refused.value)
    assert isinstance(refused.value, KeyError)  # callers that catch "not pending" still do
    with pytest.raises(KeyError):  # dropped so long ago that even the record of it is gone: refused all the same
        approvals.approve(first)
    assert not approvals.granted("write", {"n": 8_999}, "alice") and not approvals.granted("write", {"n": 0}, "alice")
    approvals.approve(newest)
    assert approvals.granted("write", {"n": 9_999}, "alice")
    assert len(approvals._dropped) <= MAX_PENDING  # the record of the dropped is bounded too


def test_the_bound_is_settable_and_asking_again_brings_a_dropped_action_back():
    from course_lib.approval import ApprovalDropped

    approvals = Approvals(max_pending=2)
    first, second, third = (approvals.request("save", {"n": n}, "alice") for n in range(3))
    assert list(approvals.pending) == [second.action_id, third.action_id]
    with pytest.raises(ApprovalDropped, match="oldest of 2 pending actions"):
        approvals.reject(first.action_id)
    approvals.request("save", {"n": 0}, "alice")  # asked again: it waits once more (and the oldest goes)
    assert approvals.state(first.action_id) == "pending" and approvals.state(second.action_id) == "dropped"
    approvals.approve(first.action_id)
    assert approvals.granted("save", {"n": 0}, "alice")
    with pytest.raises(ValueError, match="max_pending"):
        Approvals(max_pending=0).request("save", {}, "alice")
