import anyio
import pytest

from course_lib.approval import Approvals, IdempotencyConflict, IdempotencyStore, action_id


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
