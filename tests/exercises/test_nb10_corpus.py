"""Notebook 10's drills against the answers learners really write: for each drill, one wrong answer
per mistake it is about (each must fail naming it, in English and in the zh-CN edition), other
correct answers than the reference (each must pass), the fuzz of `learner_fuzz` (never a
traceback), and the property each drill promises (outputs in every order, every failure on every
kind of tool, every turn of reads and writes, the words inside strings)."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import itertools
import json
import uuid

import anyio
import pytest
from learner_fuzz import VALUES, Hostile, assert_refused, async_functions, functions

from course_lib.approval import IdempotencyConflict
from course_lib.drills import SOLUTION as DIAGNOSES
from course_lib.exercises import nb10
from course_lib.exercises.nb10 import (check_action_id, check_diagnoses, check_idempotency_store, check_next_step,
                                       check_pair_call_ids, check_parse_arguments, check_responses_loop, check_run_turn)
from course_lib.exercises.nb10.pairing import pairing_cases
from course_lib.exercises.nb10.scheduler import generated_turns
from course_lib.failure_table import CHECKS_ZH, ROWS
from test_nb10 import NoStore, everything_at_once, in_finishing_order, reads_first, sequential  # the answers both files try

S = nb10.SOLUTIONS


def fuzz(arity, *, coroutine=False):
    """Every fuzz answer for a function drill of `arity` arguments, by name (value fuzz included)."""
    made = async_functions(arity) if coroutine else functions(arity)
    return {**{name: factory for name, factory in VALUES.items()}, **{name: (lambda fn=fn: fn) for name, fn in made.items()}}


# ---- drill 1: pair_call_ids ---------------------------------------------------------------------


def split(items):
    return ([i for i in items if i.get("type") == "function_call"],
            [i for i in items if i.get("type") == "function_call_output"])


def by_position(items):
    calls, outputs = split(items)
    return {c["call_id"]: o["output"] for c, o in zip(calls, outputs)}


def rotated(items):
    """Right for the order the reads really finished in, and for no other."""
    calls, outputs = split(items)
    if len(calls) == 3 and [o["call_id"] for o in outputs] == [c["call_id"] for c in calls[1:] + calls[:1]]:
        outputs = outputs[-1:] + outputs[:-1]
    return {c["call_id"]: o["output"] for c, o in zip(calls, outputs)}


def no_checks(items):
    calls, outputs = split(items)
    texts = {o["call_id"]: o["output"] for o in outputs}
    return {c["call_id"]: texts[c["call_id"]] for c in calls}


def refuses_messages(items):
    if any("role" in i for i in items):
        raise ValueError("not a call")
    return {}


def by_item_id(items):
    calls = {i["id"]: i for i in items if i.get("type") == "function_call"}
    return {i["id"]: i["output"] for i in items if i.get("type") == "function_call_output" and calls}


def assumes_type(items):
    return {i["call_id"]: i["output"] for i in items if i["type"] == "function_call_output"}


def orphans_and_missing_only(items):
    calls, outputs = split(items)
    ids = {c["call_id"] for c in calls}
    if any(o["call_id"] not in ids for o in outputs) or ids != {o["call_id"] for o in outputs}:
        raise ValueError("orphan or missing")
    return {o["call_id"]: o["output"] for o in outputs}


def last_output_wins(items):
    calls, outputs = split(items)
    ids = [c["call_id"] for c in calls]
    if len(set(ids)) != len(ids):
        raise ValueError("call_id on two calls")
    texts = {}
    for o in outputs:
        if o["call_id"] not in ids:
            raise ValueError("orphan")
        texts[o["call_id"]] = o["output"]
    if set(texts) != set(ids):
        raise ValueError("missing")
    return {i: texts[i] for i in ids}


def key_error_for_missing(items):
    calls, outputs = split(items)
    ids = [c["call_id"] for c in calls]
    if len(set(ids)) != len(ids):
        raise ValueError("call_id on two calls")
    texts = {}
    for o in outputs:
        if o["call_id"] not in ids:
            raise ValueError("orphan")
        if o["call_id"] in texts:
            raise ValueError("twice")
        texts[o["call_id"]] = o["output"]
    return {i: texts[i] for i in ids}


PAIR_WRONG = [
    ("pairs by position", by_position, ["case 'the same turn, outputs in the order the reads finished'",
                                        "got the output of", "Pair by call_id, never by position"],
     ["用例“同一轮，输出按读取完成的先后排列”", "拿到了", "要按 call_id 配对，绝不能按位置"]),
    ("right for one order only", rotated, ["case 'the same turn, outputs arriving as", "never by position"],
     ["用例“同一轮，输出按", "的顺序到达”"]),
    ("no checks", no_checks, ["call_never_made", "Raise ValueError", "No tool call found"], ["call_never_made", "请抛出 ValueError"]),
    ("refuses the user's message", refuses_messages, ["this list is valid", "Items of other types (messages) are not calls"],
     ["这个列表是有效的", "其他类型的项（消息）不是调用"]),
    ("pairs on the item id", by_item_id, ["outputs have no 'id': pair on 'call_id'"], ["输出没有 'id'：要按 'call_id' 配对"]),
    ("reads type off a message", assumes_type, ["a message has a 'role' and no 'type': use item.get('type')"],
     ["消息有 'role'，没有 'type'"]),
    ("no check for a reused call_id", orphans_and_missing_only, ["case 'one call_id on two different calls'",
                                                                 "The API may not notice: your app must"],
     ["用例“两个不同的调用用了同一个 call_id”", "API 未必能发现：你的应用必须发现"]),
    ("the last of two outputs wins", last_output_wins, ["case 'two outputs for one call'", "which one is true is a guess"],
     ["用例“一个调用有两个输出”", "只能靠猜"]),
    ("a KeyError for the unanswered call", key_error_for_missing, ["case 'a call left without an output'", "raised KeyError",
                                                                  "where a ValueError is wanted"],
     ["用例“一个没有输出的调用”", "这里应该是 ValueError"]),
    ("a list of outputs", lambda items: [o["output"] for o in split(items)[1]], ["must return a dict", "list"],
     ["必须返回一个字典"]),
    ("answer = ... left", ..., ["Not answered yet", "set answer = pair_call_ids"], ["还没有作答", "answer = pair_call_ids"]),
    ("called instead of passed", {"call_1": "text"}, ["Pass the function itself (pair_call_ids"], ["请传入函数本身（pair_call_ids"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in PAIR_WRONG], ids=[row[0] for row in PAIR_WRONG])
def test_pair_call_ids_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_pair_call_ids, answer, en, zh)


def with_get_and_sets(items):
    calls, outputs = {}, {}
    for item in items:
        kind = item.get("type")
        if kind == "function_call":
            if item["call_id"] in calls:
                raise ValueError("a call_id on two calls")
            calls[item["call_id"]] = item
        elif kind == "function_call_output":
            if item["call_id"] in outputs:
                raise ValueError("two outputs")
            outputs[item["call_id"]] = item["output"]
    if set(outputs) - set(calls) or set(calls) - set(outputs):
        raise ValueError("orphan or unanswered")
    return {call_id: outputs[call_id] for call_id in calls}


@pytest.mark.parametrize("answer", [with_get_and_sets], ids=["one pass, then sets"])
def test_pair_call_ids_other_right_answers_pass(corpus, answer):
    corpus.right(check_pair_call_ids, answer)


def test_pair_call_ids_is_tried_on_every_order_of_the_three_outputs():
    cases = pairing_cases()
    together = next(iter(cases.values()))[0]
    calls, _ = split(together)
    orders = {tuple(o["call_id"] for o in split(items)[1]) for items, refuse in cases.values()
              if refuse is None and split(items)[0] == calls}  # fmt: skip
    assert orders == set(itertools.permutations(c["call_id"] for c in calls))


@pytest.mark.parametrize("name", list(fuzz(1)), ids=list(fuzz(1)))
def test_pair_call_ids_fuzz_never_shows_a_traceback(name):
    assert_refused(check_pair_call_ids, fuzz(1)[name]())


# ---- drill 2: action_id -------------------------------------------------------------------------


def flat(value):
    return sorted((k, flat(v)) for k, v in value.items()) if isinstance(value, dict) else str(value)


ACTION_WRONG = [
    ("key order kept", lambda t, a, u: f"{t}|{json.dumps(a)}|{u}", ["case 'A with its keys in another order'",
                                                                  "stopped at APPROVAL_REQUIRED", "sort_keys=True"],
     ["用例“A，键的顺序不同”", "这次调用却停在了 APPROVAL_REQUIRED"]),
    ("only the top level sorted", lambda t, a, u: f"{t}|{sorted(a.items())}|{u}",
     ["case 'A with the keys inside evidence in another order'", "sorts keys at every level"], ["会在每一层给键排序"]),
    ("a random id", lambda t, a, u: str(uuid.uuid4()), ["the same action got two different ids",
                                                        "don't use random values, time or id()"],
     ["同一个动作得到了两个不同的 id", "不要用随机值、时间或 id()"]),
    ("the topic only", lambda t, a, u: f"{t}|{a['topic']}|{u}", ["case 'another note inside evidence'",
                                                                 "a write nobody approved happened", "the values inside evidence"],
     ["用例“evidence 里换一条笔记”", "发生了一次没有人批准的写入"]),
    ("the arguments that name the gap", lambda t, a, u: f"{t}|{a['topic']}|{json.dumps(a['evidence'], sort_keys=True)}|{u}",
     ["case 'another priority'", "hash every argument (priority too)"], ["用例“换一个 priority”", "priority 也算"]),
    ("str() of every value", lambda t, a, u: f"{t}|{flat(a)}|{u}", ["line 12 (a number)", "the JSON types of the values"],
     ["值的 JSON 类型"]),
    ("no user", lambda t, a, u: f"{t}|{json.dumps(a, sort_keys=True)}", ["case 'the same arguments, sent by bob'",
                                                                       "an approval given by alice must never authorize bob"],
     ["alice 给出的批准绝不能授权 bob"]),
    ("no tool", lambda t, a, u: f"{json.dumps(a, sort_keys=True)}|{u}", ["for delete_learning_gap",
                                                                       "approving a save must never authorize a delete"],
     ["批准一次保存绝不能授权一次删除"]),
    ("an int", lambda t, a, u: hash((t, u)), ["must return a non-empty str", "int"], ["必须返回非空的 str"]),
    ("an empty str", lambda t, a, u: "", ["it returned an empty str"], ["空字符串"]),
    ("answer = ... left", ..., ["set answer = action_id"], ["answer = action_id"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in ACTION_WRONG], ids=[row[0] for row in ACTION_WRONG])
def test_action_id_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_action_id, answer, en, zh)


ACTION_RIGHT = {
    "canonical JSON, no hash": lambda t, a, u: json.dumps([t, a, u], sort_keys=True, separators=(",", ":")),
    "an HMAC of a canonical dict": lambda t, a, u: hmac.new(b"server secret", json.dumps(
        {"tool": t, "arguments": a, "user": u}, sort_keys=True).encode(), hashlib.sha256).hexdigest(),
}  # fmt: skip


@pytest.mark.parametrize("answer", list(ACTION_RIGHT.values()), ids=list(ACTION_RIGHT))
def test_action_id_other_right_answers_pass(corpus, answer):
    corpus.right(check_action_id, answer)


@pytest.mark.parametrize("name", list(fuzz(3)), ids=list(fuzz(3)))
def test_action_id_fuzz_never_shows_a_traceback(name):
    assert_refused(check_action_id, fuzz(3)[name]())


# ---- drill 3: an idempotency store --------------------------------------------------------------


class KeyOnly:
    def __init__(self):
        self.results = {}

    async def run(self, key, arguments, write):
        if key in self.results:
            return self.results[key], True
        self.results[key] = await write()
        return self.results[key], False


class TextFingerprint:
    def __init__(self):
        self.results = {}

    async def run(self, key, arguments, write):
        text = json.dumps(arguments)
        if key in self.results:
            if self.results[key][0] != text:
                raise IdempotencyConflict(key)
            return self.results[key][1], True
        result = await write()
        self.results[key] = (text, result)
        return result, False


class NoLock(TextFingerprint):
    async def run(self, key, arguments, write):
        if key in self.results:
            if self.results[key][0] != arguments:
                raise IdempotencyConflict(key)
            return self.results[key][1], True
        result = await write()
        self.results[key] = (arguments, result)
        return result, False


class ReservesFirst(TextFingerprint):
    locks: dict = {}

    async def run(self, key, arguments, write):
        async with self.locks.setdefault((id(self), key), anyio.Lock()):
            if key in self.results:
                if self.results[key][0] != arguments:
                    raise IdempotencyConflict(key)
                return self.results[key][1], True
            self.results[key] = (arguments, None)  # reserved before writing: a failure leaves it behind
            result = await write()
            self.results[key] = (arguments, result)
            return result, False


class WrongError(NoLock):
    async def run(self, key, arguments, write):
        try:
            return await super().run(key, arguments, write)
        except IdempotencyConflict:
            raise ValueError("other arguments") from None


class Reentrant(TextFingerprint):
    """Takes its lock twice: an asyncio.Lock is not reentrant, so it waits for itself forever."""

    def __init__(self):
        super().__init__()
        self.lock = asyncio.Lock()

    async def run(self, key, arguments, write):
        async with self.lock:
            return await self._stored_or_written(key, arguments, write)

    async def _stored_or_written(self, key, arguments, write):
        async with self.lock:
            return await write(), False


class AnyioReentrant(Reentrant):
    """The same with an anyio.Lock, which refuses to be taken twice instead of waiting."""

    def __init__(self):
        super().__init__()
        self.lock = anyio.Lock()


class Sync:
    def run(self, key, arguments, write):
        return None


class NeedsASize:
    def __init__(self, size):
        self.size = size

    async def run(self, key, arguments, write):
        return await write(), False


class Swallows:
    """Right but for one thing: a write that fails is answered as if nothing happened."""

    def __init__(self):
        self.done, self.locks = {}, {}

    async def run(self, key, arguments, write):
        async with self.locks.setdefault(key, anyio.Lock()):
            if key in self.done:
                if self.done[key][0] != arguments:
                    raise IdempotencyConflict(key)
                return self.done[key][1], True
            try:
                result = await write()
            except Exception:
                return None, False
            self.done[key] = (arguments, result)
            return result, False


STORE_WRONG = [
    ("no store at all", NoStore, ["case 'a retry after a timeout'", "the retry wrote again: 2 records for one request",
                                  "look the key up first"], ["用例“超时之后的重试”", "重试又写了一次"]),
    ("the key alone", KeyOnly, ["case 'the same key with other arguments'", "raise IdempotencyConflict"],
     ["用例“同一个键，不同的参数”", "抛出 IdempotencyConflict"]),
    ("arguments compared as text", TextFingerprint, ["case 'the same key, the same arguments in another key order'",
                                                     "only the key order differs"], ["只是键的顺序不同"]),
    ("no lock", NoLock, ["case 'two calls with the same key at the same time'", "both ran write() (2 writes)",
                         "anyio.Lock"], ["用例“同一个键的两次调用同时到达”", "给每个键配一把锁（anyio.Lock）"]),
    ("reserves the key before writing", ReservesFirst, ["case 'a write that failed, then the same key again'",
                                                        "Store a result only after write() returned"],
     ["只在 write() 返回之后才保存结果"]),
    ("swallows the failure", Swallows, ["should let the error through"], ["应该让这个错误传出去"]),
    ("another exception for the conflict", WrongError, ["it raised ValueError: other arguments", "raise IdempotencyConflict"],
     ["它抛出了 ValueError"]),
    ("a lock taken twice", Reentrant, ["did not return within 2 s", "wait on a lock it already holds"], ["锁不可重入"]),
    ("an anyio lock taken twice", AnyioReentrant, ["case 'one call'", "it raised RuntimeError: Attempted to acquire an already held Lock"],
     ["用例“一次调用”", "它抛出了 RuntimeError"]),
    ("a sync run", Sync, ["needs an `async def run(self, key, arguments, write)`"], ["存储需要一个 `async def run"]),
    ("an instance instead of the class", NoLock(), ["Pass the class itself (NoLock, without parentheses)", "an instance"],
     ["请传入类本身（NoLock，不带括号）", "一个实例"]),
    ("a constructor that needs arguments", NeedsASize, ["NeedsASize() raised TypeError", "it must take no arguments"],
     ["它必须不带参数"]),
    ("answer = ... left", ..., ["set answer = the class itself"], ["令 answer = 这个类本身"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in STORE_WRONG], ids=[row[0] for row in STORE_WRONG])
def test_idempotency_store_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_idempotency_store, answer, en, zh)


class OneLockForAll:
    """Serialises every key behind one asyncio lock: slower, and right."""

    def __init__(self):
        self.lock = asyncio.Lock()
        self.done = {}

    async def run(self, key, arguments, write):
        async with self.lock:
            if key in self.done:
                if self.done[key][0] != arguments:  # dicts compare as objects: key order never matters
                    raise IdempotencyConflict(f"{key} was used with other arguments")
                return self.done[key][1], True
            result = await write()
            self.done[key] = (arguments, result)
            return result, False


def a_factory():
    return OneLockForAll()


@pytest.mark.parametrize("answer", [OneLockForAll, a_factory], ids=["one asyncio lock for every key", "a factory function"])
def test_idempotency_store_other_right_answers_pass(corpus, answer):
    corpus.right(check_idempotency_store, answer)


def _class_with_run(run):
    return type("Store", (), {"run": run})


async def _raises(self, key, arguments, write):
    raise RuntimeError("my store broke")


async def _early(self, key, arguments, write):
    return None


async def _hostile(self, key, arguments, write):
    return Hostile()


async def _huge(self, key, arguments, write):
    return 10**5000, False


class _BadInit:
    def __init__(self):
        raise RuntimeError("my __init__ broke")


STORE_FUZZ = {**{name: factory for name, factory in VALUES.items()},
              "run raises": lambda: _class_with_run(_raises), "run returns early": lambda: _class_with_run(_early),
              "run returns an object that raises on every touch": lambda: _class_with_run(_hostile),
              "run returns an int too long to print": lambda: _class_with_run(_huge),
              "__init__ raises": lambda: _BadInit, "a plain function": lambda: (lambda: None),
              "a class without run": lambda: type("Empty", (), {})}  # fmt: skip


@pytest.mark.parametrize("name", list(STORE_FUZZ), ids=list(STORE_FUZZ))
def test_idempotency_store_fuzz_never_shows_a_traceback(name):
    assert_refused(check_idempotency_store, STORE_FUZZ[name]())


# ---- drill 4: next_step -------------------------------------------------------------------------

BY_CODE = {"INVALID_INPUT": "fix_arguments", "NOT_FOUND": "search_again", "CONFLICT": "reread",
           "APPROVAL_REQUIRED": "wait_for_approval", "FORBIDDEN": "stop", "TIMEOUT": "retry", "UPSTREAM_ERROR": "retry"}


def keyed_writes_retry_only_timeouts(error, is_write, has_key):
    """Right on the 13 cases shown first; wrong for a keyed write while the index restarts."""
    step = S["check_next_step"]()(error, is_write, has_key)
    if step == "retry" and is_write and error["code"] != "TIMEOUT":
        return "check_status"
    return step


STEP_WRONG = [
    ("retry everything", lambda e, w, k: "retry", ["case 1 (a read whose head was the text \"5\"", "you said 'retry'",
                                                    "the next step is 'fix_arguments'"],
     ["用例 1（一次 head 为文本 \"5\" 的读取", "下一步应该是 'fix_arguments'"]),
    ("the code alone", lambda e, w, k: BY_CODE[e["code"]], ["route to a tool the server does not have",
                                                             "the retryable flag says whether it can recover"],
     ["能不能恢复，要看 retryable 标志"]),
    ("writes treated like reads", lambda e, w, k: "stop" if e["code"] == "UPSTREAM_ERROR" and not e["retryable"]
     else BY_CODE[e["code"]], ["a write without an idempotency key", "the next step is 'check_status'", "Query the state first"],
     ["下一步应该是 'check_status'", "先查询状态"]),
    ("the flag alone", lambda e, w, k: "retry" if e["retryable"] else "stop", ["case 1", "'fix_arguments'"], ["'fix_arguments'"]),
    ("a keyed write retries only timeouts (right on the first 13)", keyed_writes_retry_only_timeouts,
     ["a write with an idempotency key while the index restarts", "you said 'check_status'", "the next step is 'retry'"],
     ["一次带幂等键的写入，发生在索引重启期间", "下一步应该是 'retry'"]),
    ("a word that is no step", lambda e, w, k: "Fix arguments", ["'Fix arguments' is not a next step",
                                                                 "did you mean 'fix_arguments'?"],
     ["你是不是想写 'fix_arguments'？"]),
    ("a bool", lambda e, w, k: e["retryable"], ["next_step returned bool False", "Return one of NEXT_STEPS"],
     ["next_step 返回了 bool False", "请返回 NEXT_STEPS 中的一个"]),
    ("a key the error may lack", lambda e, w, k: BY_CODE[e["kind"]], ["next_step raised KeyError: 'kind'",
                                                                       "The error has the keys code, message, retryable"],
     ["这个错误的键有"]),
    ("the starter", lambda e, w, k: ..., ["Not answered yet: next_step still returns ..."], ["还没有作答"]),
    ("answer = ... left", ..., ["set answer = next_step"], ["answer = next_step"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in STEP_WRONG], ids=[row[0] for row in STEP_WRONG])
def test_next_step_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_next_step, answer, en, zh)


def a_table_of_moves(error, is_write, has_key):
    fixed = {"INVALID_INPUT": "fix_arguments", "NOT_FOUND": "search_again", "CONFLICT": "reread",
             "APPROVAL_REQUIRED": "wait_for_approval", "FORBIDDEN": "stop"}
    if error["code"] in fixed:
        return fixed[error["code"]]
    if not error.get("retryable", False):
        return "stop"
    return "retry" if has_key or not is_write else "check_status"


@pytest.mark.parametrize("answer", [a_table_of_moves], ids=["a table, then the flag"])
def test_next_step_other_right_answers_pass(corpus, answer):
    corpus.right(check_next_step, answer)


def test_next_step_is_tried_on_every_failure_with_every_kind_of_tool():
    cases = nb10.step_cases()
    errors = nb10.step_errors()
    assert len(cases) == 36 and {(label, w, k) for label, _, _, w, k in cases} == {
        (label, w, k) for label in errors for w in (False, True) for k in (False, True)}
    # the mistake above is invisible on the 13 cases a learner is shown first
    assert all(keyed_writes_retry_only_timeouts(errors[l], w, k) == S["check_next_step"]()(errors[l], w, k)
               for l, _, w, k in nb10.STEP_CASES)  # fmt: skip


@pytest.mark.parametrize("name", list(fuzz(3)), ids=list(fuzz(3)))
def test_next_step_fuzz_never_shows_a_traceback(name):
    assert_refused(check_next_step, fuzz(3)[name]())


# ---- drill 5: run_turn --------------------------------------------------------------------------


async def no_await(calls, execute, is_write):
    return [execute(call) for call in calls]


async def waits_forever(calls, execute, is_write):
    await anyio.Event().wait()


async def last_write_joins(calls, execute, is_write):
    """Right on the five turns shown first: none of them ends with a read, then a write."""
    results, wave = [None] * len(calls), []

    async def run(i):
        results[i] = await execute(calls[i])

    for i, call in enumerate(calls):
        if is_write(call) and i < len(calls) - 1:
            async with anyio.create_task_group() as tg:
                for j in wave:
                    tg.start_soon(run, j)
            wave = []
            await run(i)
        else:
            wave.append(i)
    async with anyio.create_task_group() as tg:
        for j in wave:
            tg.start_soon(run, j)
    return results


TURN_WRONG = [
    ("one at a time", sequential, ["case 'three reads from the model'", "ran one after another",
                                   "start them together (a task group, or asyncio.gather)"],
     ["用例“模型发来的三次读取”", "是一个接一个运行的"]),
    ("everything at once", everything_at_once, ["ran while the write call_w1 was running", "A write runs alone"],
     ["写入要单独运行"]),
    ("reads first", reads_first, ["call_r2 started before call_w1 had finished", "Keep the model's order around every write"],
     ["每次写入的前后都要保持模型的顺序"]),
    ("results in finishing order", in_finishing_order, ["return the results in the model's order"], ["按模型的顺序返回结果"]),
    ("execute without await", no_await, ["your results are coroutines", "await execute(call)"], ["你的结果是协程"]),
    ("waits for nothing that comes", waits_forever, ["run_turn did not return within 2 s"], ["run_turn 在 2 秒内没有返回"]),
    ("a last write joins the reads (right on the first five turns)", last_write_joins,
     ["case '[search call_s1, save call_w1]'", "ran while the write call_w1 was running"],
     ["用例“[搜索 call_s1，保存 call_w1]”", "写入要单独运行"]),
    ("a sync function", lambda calls, execute, is_write: [], ["run_turn must be an async def"], ["run_turn 必须是 async def"]),
    ("answer = ... left", ..., ["set answer = run_turn"], ["answer = run_turn"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in TURN_WRONG], ids=[row[0] for row in TURN_WRONG])
def test_run_turn_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_run_turn, answer, en, zh)


async def with_gather(calls, execute, is_write):
    results = {}
    wave = []
    for call in [*calls, None]:
        if call is None or is_write(call):
            for done_call, result in zip(wave, await asyncio.gather(*(execute(c) for c in wave))):
                results[done_call.call_id] = result
            wave = []
            if call is not None:
                results[call.call_id] = await execute(call)
        else:
            wave.append(call)
    return [results[call.call_id] for call in calls]


@pytest.mark.parametrize("answer", [with_gather], ids=["asyncio.gather per wave"])
def test_run_turn_other_right_answers_pass(corpus, answer):
    corpus.right(check_run_turn, answer)


def test_run_turn_is_tried_on_every_turn_of_up_to_four_reads_and_writes():
    turns = generated_turns()
    assert len(turns) == 2 + 4 + 8 + 16
    assert len({tuple(c.name for c in calls) for _, calls in turns}) == len(turns)


@pytest.mark.parametrize("name", list(fuzz(3, coroutine=True)), ids=list(fuzz(3, coroutine=True)))
def test_run_turn_fuzz_never_shows_a_traceback(name):
    assert_refused(check_run_turn, fuzz(3, coroutine=True)[name]())


# ---- drill 6: parse_arguments -------------------------------------------------------------------


def loads_object(text):
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("not an object")
    return value


def no_constants(text):
    def pairs(items):
        if len({k for k, _ in items}) != len(items):
            raise ValueError("duplicate")
        return dict(items)

    return loads_object_with(text, object_pairs_hook=pairs)


def loads_object_with(text, **hooks):
    value = json.loads(text, **hooks)
    if not isinstance(value, dict):
        raise ValueError("not an object")
    return value


def searches_the_text(text):
    if "NaN" in text or "Infinity" in text:
        raise ValueError("not JSON numbers")
    return S["check_parse_arguments"]()(text)


def counts_quoted_keys(text):
    if isinstance(text, str) and any(text.count(f'"{key}"') > 1 for key in ("path", "head", "tail")):
        raise ValueError("duplicate key")
    return S["check_parse_arguments"]()(text)


def no_object_check(text):
    def pairs(items):
        if len({k for k, _ in items}) != len(items):
            raise ValueError("duplicate")
        return dict(items)

    return json.loads(text, object_pairs_hook=pairs, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))


def empty_means_defaults(text):
    return {} if text == "" else S["check_parse_arguments"]()(text)


def empty_dict_on_error(text):
    try:
        return S["check_parse_arguments"]()(text)
    except ValueError:
        return {}


def python_literal(text):
    import ast

    value = ast.literal_eval(text)
    if not isinstance(value, dict):
        raise ValueError("not an object")
    return value


def raw_decode_no_whitespace(text):
    value, end = json.JSONDecoder().raw_decode(text)
    if text[end:].strip():
        raise ValueError("extra data")
    return value


PARSE_WRONG = [
    ("json.loads alone", loads_object, ["case 'a duplicate key'", "json.loads keeps the LAST duplicate silently",
                                        "object_pairs_hook"], ["用例“重复的键”", "object_pairs_hook"]),
    ("duplicates refused, NaN not", no_constants, ["case 'NaN inside a list'", "parse_constant"], ["用例“列表里的 NaN”"]),
    ("NaN looked for in the raw text", searches_the_text, ["case 'NaN and Infinity inside a string value'",
                                                          "never search the raw text"], ["绝不要在原始文本里搜索"]),
    ("keys counted in the raw text", counts_quoted_keys, ["case 'a key's name and braces inside string values'",
                                                         "you raised ValueError: duplicate key"], ["这是有效的参数文本"]),
    ("no object check", no_object_check, ["case 'an array instead of an object'", "check isinstance(value, dict)"],
     ["用例“数组而不是对象”", "isinstance(value, dict)"]),
    ("an empty text as defaults", empty_means_defaults, ["an empty text is not {}"], ["空文本不是 {}"]),
    ("{} on every error", empty_dict_on_error, ["you returned {}; refuse it with ValueError",
                                                "runs the tool with defaults nobody asked for"], ["请用 ValueError 拒绝它"]),
    ("Python literals", python_literal, ["case 'the model's strict arguments, with a null'", "JSON has null, true and false"],
     ["JSON 里有 null、true 和 false"]),
    ("raw_decode without the whitespace", raw_decode_no_whitespace, ["the same text with spaces and a newline around it",
                                                                     "raw_decode does not skip it"],
     ["raw_decode 不会跳过值前面的空白"]),
    ("answer = ... left", ..., ["set answer = parse_arguments"], ["answer = parse_arguments"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in PARSE_WRONG], ids=[row[0] for row in PARSE_WRONG])
def test_parse_arguments_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_parse_arguments, answer, en, zh)


def with_a_decoder(text):
    if not isinstance(text, str):
        raise ValueError("arguments are text")

    def pairs(items):
        keys = [k for k, _ in items]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate key")
        return dict(items)

    def constant(name):
        raise ValueError(f"{name} is not JSON")

    decoder = json.JSONDecoder(object_pairs_hook=pairs, parse_constant=constant)
    value, end = decoder.raw_decode(text.lstrip(" \t\n\r"))
    if text.lstrip(" \t\n\r")[end:].strip(" \t\n\r"):
        raise ValueError("data after the object")
    if not isinstance(value, dict):
        raise ValueError("not an object")
    return value


@pytest.mark.parametrize("answer", [with_a_decoder], ids=["raw_decode after the whitespace"])
def test_parse_arguments_other_right_answers_pass(corpus, answer):
    corpus.right(check_parse_arguments, answer)


@pytest.mark.parametrize("name", list(fuzz(1)), ids=list(fuzz(1)))
def test_parse_arguments_fuzz_never_shows_a_traceback(name):
    assert_refused(check_parse_arguments, fuzz(1)[name]())


# ---- drill 7: diagnose the trace ----------------------------------------------------------------


def answers(**changes):
    return {**DIAGNOSES, **changes}


DIAGNOSE_WRONG = [
    ("the consequence as the row", answers(result_not_sent=("G", "loop count")),
     ["result_not_sent: not row G", "look at what request 2 carried"], ["result_not_sent：不是 G 行", "看看请求 2 带了什么"]),
    ("the right row, the wrong first check", answers(call_id_swap=("D", "full context")),
     ["row D is right, but check 'call_id' first, not 'full context'"], ["应该先检查 'call_id'，不是 'full context'（完整上下文）"]),
    ("the right row, the wrong first check, in Chinese", answers(call_id_swap=("D", "完整上下文")),
     ["row D is right, but check 'call_id' first, not 'full context'"], ["不是 'full context'（完整上下文）"]),
    ("a check from another row", answers(wrong_tool=("B", "call_id")),
     ["'call_id' is not one of row B's checks: tool names, counter-examples, dynamic tool set"],
     ["不是 B 行要检查的项", "'tool names'（工具名）"]),
    ("a dropped refusal taken for an over-reach", answers(error_as_success=("H", "identity")),
     ["the server refused the read (isError true)"], ["服务器拒绝了这次读取（isError true）"]),
    ("a row that does not exist", answers(injection=("Z", "identity")), ["'Z' is not a row"], ["不是表里的行"]),
    ("a trace that does not exist", answers(wrongtool=("B", "tool names")), ["'wrongtool' is not a trace",
                                                                            "did you mean 'wrong_tool'?"],
     ["不是一条轨迹", "你是不是想写 'wrong_tool'？"]),
    ("one trace left as ...", answers(blind_retry=...), ["Not answered yet: blind_retry still needs"], ["blind_retry 还需要"]),
    ("a row without its check", answers(injection="H"), ["injection: give a pair (row letter, first check)"],
     ["injection：请给出一对"]),
    ("a list of pairs", list(DIAGNOSES.values()), ["answers must be a dict"], ["answers 必须是一个 dict"]),
    ("answers = ... left", ..., ["Not answered yet: fill in answers ="], ["还没有作答：填写 answers ="]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in DIAGNOSE_WRONG],
                         ids=[row[0] for row in DIAGNOSE_WRONG])  # fmt: skip
def test_diagnoses_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_diagnoses, answer, en, zh)


DIAGNOSE_RIGHT = {
    "every first check in Chinese": {name: (row, CHECKS_ZH[check]) for name, (row, check) in DIAGNOSES.items()},
    "every row by the source's symptom": {name: (ROWS[row].source, check) for name, (row, check) in DIAGNOSES.items()},
    "every row by the course's symptom": {name: (ROWS[row].symptom, check) for name, (row, check) in DIAGNOSES.items()},
    "lower case, 行, full-width letters and lists": {
        name: [f"{row.lower()} 行" if i % 3 == 0 else chr(ord(row) + 0xFEE0) if i % 3 == 1 else f"row {row}", check]
        for i, (name, (row, check)) in enumerate(DIAGNOSES.items())},
    "the checks as the zh-CN table prints them": {
        name: (row, f"{check}（{CHECKS_ZH[check]}）" if CHECKS_ZH[check] != check else check)
        for name, (row, check) in DIAGNOSES.items()},
    "capitals and spaces": {name: (f" {row} ", f" {check.upper()} ") for name, (row, check) in DIAGNOSES.items()},
    "the worked example answered too": {"invented_answer": ("A", "call trace"), **DIAGNOSES},
}  # fmt: skip


@pytest.mark.parametrize("answer", list(DIAGNOSE_RIGHT.values()), ids=list(DIAGNOSE_RIGHT))
def test_diagnoses_other_right_answers_pass(corpus, answer):
    corpus.right(check_diagnoses, answer)


@pytest.mark.parametrize("name", list(VALUES), ids=list(VALUES))
def test_diagnoses_fuzz_never_shows_a_traceback(name):
    assert_refused(check_diagnoses, VALUES[name]())
    assert_refused(check_diagnoses, answers(wrong_tool=VALUES[name]()))
    assert_refused(check_diagnoses, answers(wrong_tool=("B", VALUES[name]())))


# ---- drill 8: the Responses loop ----------------------------------------------------------------


def loop(send_back, *, budget=True, status=True):
    """A learner's run_loop; `send_back(response, calls, execute)` builds the items appended each turn."""

    def run_loop(client, model, task, tools, execute, max_steps=5):
        items = [{"role": "user", "content": task}]
        for _ in range(max_steps) if budget else iter(int, 1):
            response = client.responses.create(model=model, input=items, tools=tools)
            if status and response.status != "completed":
                raise RuntimeError(response.status)
            calls = [item for item in response.output if item.type == "function_call"]
            if not calls:
                return response.output_text
            items += send_back(response, calls, execute)
        raise RuntimeError("budget")

    return run_loop


def outputs(calls, execute, key="call_id"):
    return [{"type": "function_call_output", "call_id": getattr(c, key), "output": execute(c)} for c in calls]


def everything(response, calls, execute):
    return [item.to_dict() for item in response.output] + outputs(calls, execute)


def catches_everything(client, model, task, tools, execute, max_steps=5):
    while True:
        try:
            return loop(everything)(client, model, task, tools, execute, max_steps)
        except Exception:
            continue


LOOP_WRONG = [
    ("only output[0] answered", loop(lambda r, calls, ex: [i.to_dict() for i in r.output] + outputs(calls[:1], ex)),
     ["case 'two reads in one response'", "walk all of response.output, not output[0]"],
     ["用例“一个响应里的两次读取”", "遍历整个 response.output"]),
    ("the outputs without the calls", loop(lambda r, calls, ex: outputs(calls, ex)),
     ["append every item of response.output to the input first"], ["先把 response.output 的每一项都追加到 input 里"]),
    ("the item id as call_id", loop(lambda r, calls, ex: [i.to_dict() for i in r.output] + outputs(calls, ex, "id")),
     ["that is the item's id (fc_…), not its call_id"], ["那是这个项的 id（fc_…），不是它的 call_id"]),
    ("model_dump", loop(lambda r, calls, ex: [i.model_dump() for i in r.output] + outputs(calls, ex)),
     ["item.model_dump() adds fields the API refuses"], ["item.model_dump() 会加上 API 拒绝的字段"]),
    ("no budget", loop(everything, budget=False), ["a model that never stops", "stop after max_steps (3) model requests"],
     ["永不停止的模型", "在 max_steps（3）次模型请求之后用 raise RuntimeError 停下"]),
    ("no look at status", loop(everything, status=False), ["a response cut off at max_output_tokens",
                                                           "check response.status: 'incomplete'"],
     ["在 max_output_tokens 处被截断的响应", "检查 response.status"]),
    ("the response returned", lambda client, model, task, tools, execute, max_steps=5: client.responses.create(
        model=model, input=task, tools=tools), ["return the final answer text (response.output_text)"],
     ["请返回最终回答的文本（response.output_text）"]),
    ("one request only", lambda client, model, task, tools, execute, max_steps=5: client.responses.create(
        model=model, input=task, tools=tools).output_text, ["is not the one the full context gives"],
     ["不是完整上下文给出的那个"]),
    ("every exception swallowed", catches_everything, ["your loop was still asking after 8"], ["还在请求"]),
    ("answer = ... left", ..., ["set answer = run_loop"], ["answer = run_loop"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in LOOP_WRONG], ids=[row[0] for row in LOOP_WRONG])
def test_responses_loop_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_responses_loop, answer, en, zh)


def with_previous_response_id(client, model, task, tools, execute, max_steps=5):
    response = client.responses.create(model=model, input=task, tools=tools)
    for step in range(1, max_steps + 1):
        if response.status != "completed":
            raise RuntimeError(f"response {response.status}")
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            return response.output_text
        if step == max_steps:
            break
        response = client.responses.create(model=model, tools=tools, previous_response_id=response.id,
                                           input=outputs(calls, execute))
    raise RuntimeError("no answer within max_steps")


def with_typed_items(client, model, task, tools, execute, max_steps=5):
    items = [{"role": "user", "content": task}]
    for _ in range(max_steps):
        response = client.responses.create(model=model, input=items, tools=tools)
        if response.status != "completed":
            raise RuntimeError(response.status)
        calls = [item for item in response.output if item.type == "function_call"]
        if not calls:
            return response.output_text
        items += [*response.output, *outputs(calls, execute)]  # the SDK's own items go back as they came
    raise RuntimeError("budget")


@pytest.mark.parametrize("answer", [with_previous_response_id, with_typed_items],
                         ids=["previous_response_id", "the SDK's typed items"])  # fmt: skip
def test_responses_loop_other_right_answers_pass(corpus, answer):
    corpus.right(check_responses_loop, answer)


@pytest.mark.parametrize("name", list(fuzz(6)), ids=list(fuzz(6)))
def test_responses_loop_fuzz_never_shows_a_traceback(name):
    assert_refused(check_responses_loop, fuzz(6)[name]())
