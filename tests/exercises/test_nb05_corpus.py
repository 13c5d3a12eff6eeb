"""Notebook 05's checks against the answers learners really write: one wrong answer per mistake the
exercise is about (each must fail naming it, in English and in the zh-CN edition), other correct
answers than the reference (each must pass), the fuzz of `learner_fuzz` (never a traceback), and the
property each exercise promises (every failure on every kind of tool; the limits for every seed)."""

from __future__ import annotations

import random

import pytest
import tenacity
from learner_fuzz import VALUES, assert_refused, functions

from course_lib.exercises.nb05 import (MAX_TOTAL_WAIT, MIN_FIRST_WAIT, RETRY_CASES, _Edge, _WHAT_ZH,
                                       check_retry_policy, check_should_retry, expected_retry, failure_grid,
                                       recorded_errors, run_policy)
from course_lib.retry import RetryPolicy

# ---- exercise 1: should_retry -------------------------------------------------------------------


def retry_everything(error, is_write, has_key):
    return True


def by_code(error, is_write, has_key):
    return error["code"] in ("TIMEOUT", "UPSTREAM_ERROR") and (has_key or not is_write)


def flag_only(error, is_write, has_key):
    return error["retryable"]


def never_a_write(error, is_write, has_key):
    return error["retryable"] and not is_write


def only_timeouts(error, is_write, has_key):
    return error["code"] == "TIMEOUT" and (has_key or not is_write)


def key_for_everything(error, is_write, has_key):
    return error["retryable"] and has_key


def a_key_makes_a_read_unsafe(error, is_write, has_key):
    """Right on the 14 cases a learner is shown first; wrong for a read sent under a key."""
    return error["retryable"] and (has_key if is_write else not has_key)


def no_return_on_one_path(error, is_write, has_key):
    if error["retryable"]:
        return has_key or not is_write


def says_yes(error, is_write, has_key):
    return "yes" if error["retryable"] else "no"


def reads_a_kind(error, is_write, has_key):
    return error["kind"] == "transient"


def attribute_access(error, is_write, has_key):
    return error.retryable


def two_arguments(error, is_write):
    return error["retryable"] and not is_write


def starter(error, is_write, has_key):
    return ...  # your code here


SHOULD_RETRY_WRONG = [  # (what the learner did, answer, English words, Chinese words)
    ("retries every failure", retry_everything, ["case 1 (", "INVALID_INPUT", "the model must fix them, not repeat them"],
     ["例子 1（", "模型必须修正它们，而不是重复它们"]),
    ("decides by the code alone", by_code, ["UPSTREAM_ERROR, retryable false, kind protocol", "read the flag, not only the code"],
     ["要看这个标志，而不只是看错误码"]),
    ("reads the flag, forgets writes", flag_only, ["a write without an idempotency key", "a retry could write twice"],
     ["这是一次没有幂等键的写入", "重试可能会写两次"]),
    ("never retries a write", never_a_write, ["a write with an idempotency key", "gets the stored result instead of writing twice"],
     ["带幂等键的写入可以安全地重复"]),
    ("retries timeouts only", only_timeouts, ["TIMEOUT is not the only failure that recovers"], ["可能恢复的失败不只有 TIMEOUT"]),
    ("wants a key for reads too", key_for_everything, ["has_key matters only for writes"], ["has_key 只对写入有意义"]),
    ("a key makes a read unsafe (right on the first 14 cases)", a_key_makes_a_read_unsafe,
     ["a read sent under an idempotency key", "has_key=True", "has_key matters only for writes"],
     ["一次带着幂等键的读取", "has_key 只对写入有意义"]),
    ("a path without return", no_return_on_one_path, ["should_retry returned None: one path through it has no return"],
     ["有一条路径没有 return 语句"]),
    ("returns a word", says_yes, ["you returned 'no' (str); return True or False"], ["请返回 True 或 False"]),
    ("reads a key the error may lack", reads_a_kind, ["raised KeyError: 'kind'", "The error dict has the keys code, message, retryable"],
     ["抛出了 KeyError: 'kind'", "这个 error 字典的键是"]),
    ("reads the dict like an object", attribute_access, ["raised AttributeError", "The error dict has the keys"],
     ["抛出了 AttributeError"]),
    ("forgets has_key in the signature", two_arguments, ["raised TypeError", "three arguments"], ["三个参数"]),
    ("the starter, never filled in", starter, ["Not answered yet: should_retry still returns ..."], ["还没有作答"]),
    ("called instead of passed", True, ["Pass the function itself (should_retry, without parentheses)", "bool True"],
     ["请传入函数本身（should_retry，不带括号）"]),
    ("nothing passed", None, ["Not answered yet: define should_retry(error, is_write, has_key)"], ["还没有作答"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in SHOULD_RETRY_WRONG],
                         ids=[row[0] for row in SHOULD_RETRY_WRONG])  # fmt: skip
def test_should_retry_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_should_retry, answer, en, zh)


def with_get(error, is_write, has_key):
    return bool(error.get("retryable")) and (not is_write or has_key)


def step_by_step(error, is_write, has_key):
    if error["retryable"] is not True:
        return False
    if not is_write:
        return True
    return has_key


@pytest.mark.parametrize("answer", [with_get, step_by_step], ids=["dict.get and a guard", "one question at a time"])
def test_should_retry_other_right_answers_pass(corpus, answer):
    corpus.right(check_should_retry, answer)


def test_should_retry_is_tried_on_every_failure_with_every_kind_of_tool():
    """The promise is "True only when another attempt could succeed and repeating is safe", for any
    error and flags: every recorded failure × every (is_write, has_key) pair, the first 14 first."""
    cases = failure_grid(RETRY_CASES, _WHAT_ZH)
    assert len(cases) == len(recorded_errors()) * 4 == 36
    assert {(label, w, k) for label, _, _, w, k in cases} == {
        (label, w, k) for label in recorded_errors() for w in (False, True) for k in (False, True)}
    assert [c[:2] + c[3:] for c in cases[: len(RETRY_CASES)]] == [(l, w, iw, k) for l, w, iw, k in RETRY_CASES]
    # the mistake above is invisible on the first 14 and caught only by the rest
    assert all(a_key_makes_a_read_unsafe(recorded_errors()[l], w, k) == expected_retry(recorded_errors()[l], w, k)
               for l, _, w, k in RETRY_CASES)  # fmt: skip


@pytest.mark.parametrize("answer", [*VALUES.values(), *functions(3).values()],
                         ids=[*VALUES, *functions(3)])  # fmt: skip
def test_should_retry_fuzz_never_shows_a_traceback(answer):
    assert_refused(check_should_retry, answer() if answer in VALUES.values() else answer)


# ---- exercise 2: a retry policy -----------------------------------------------------------------


POLICY_WRONG = [
    ("waits that add up past the limit", RetryPolicy(base_delay=0.2, factor=2, jitter=0.5),
     ["the longest waits your policy can draw", "add up to", "the limit is 0.5s whatever the draw"], ["最长等待", "合计", "上限都是 0.5s"]),
    ("too few attempts", RetryPolicy(max_attempts=2, base_delay=0.125, factor=1.5, jitter=0.2, budget=0.5),
     ["max_attempts=2: the tool fails twice and works on the third attempt"], ["第三次尝试才成功"]),
    ("a budget that cuts off the third attempt", RetryPolicy(base_delay=0.125, factor=1.5, jitter=0.2, budget=0.3),
     ["with the longest waits your policy can draw", "never succeeded", "time budget (0.3s of waiting)"],
     ["始终没有成功", "时间预算"]),
    ("jitter shrinks the first wait below 0.1 s", RetryPolicy(base_delay=0.1, factor=1.5, jitter=0.2, budget=0.5),
     ["the shortest wait your policy can draw before the first retry is 0.08s", "raise base_delay or lower jitter"],
     ["最短等待是 0.08s", "调低 jitter"]),
    ("full jitter: a first wait of nothing", RetryPolicy(base_delay=0.15, factor=1, jitter=1.0, budget=1.0),
     ["before the first retry is 0s"], ["最短等待是 0s"]),
    ("no jitter at all", RetryPolicy(base_delay=0.15, factor=1, jitter=0, budget=0.5),
     ["jitter=0: keep at least 0.1", "do not all retry at the same instant"], ["jitter=0：至少保留 0.1"]),
    ("too many attempts", RetryPolicy(max_attempts=5), ["max_attempts=5: the constraint is at most 3 attempts"],
     ["约束是最多尝试 3 次"]),
    ("the class itself", RetryPolicy, ["You passed the class RetryPolicy itself"], ["RetryPolicy 这个类本身"]),
    ("a dict of the numbers", {"max_attempts": 3, "base_delay": 0.125}, ["Pass a RetryPolicy(...)", "dict"],
     ["请传入一个 RetryPolicy(...)"]),
    ("tenacity's own retrying", tenacity.Retrying(stop=tenacity.stop_after_attempt(3)), ["Retrying is tenacity's",
     "course_lib's RetryPolicy"], ["Retrying 来自 tenacity"]),
    ("the attempts as text", RetryPolicy(max_attempts="3"), ["max_attempts='3' (str)", "give a whole number"],
     ["要给整数"]),
    ("a delay that is not a number", RetryPolicy(base_delay=float("nan")), ["base_delay=nan", "a wait must be a finite number"],
     ["等待必须是有限的数字"]),
    ("a seed random.Random refuses", RetryPolicy(base_delay=0.125, factor=1.5, jitter=0.2, budget=0.5, seed=[1]),
     ["seed=[1]: random.Random refuses it"], ["random.Random 不接受它"]),
    ("policy = ... left", ..., ["Not answered yet: set policy = RetryPolicy(...)"], ["还没有作答", "policy = RetryPolicy(...)"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in POLICY_WRONG], ids=[row[0] for row in POLICY_WRONG])
def test_retry_policy_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_retry_policy, answer, en, zh)


POLICY_RIGHT = {
    "a constant delay": RetryPolicy(max_attempts=3, base_delay=0.15, factor=1.0, jitter=0.25, budget=1.0),
    "a steep factor, capped by max_delay": RetryPolicy(max_attempts=3, base_delay=0.12, factor=3, max_delay=0.2,
                                                       jitter=0.1, budget=0.5),
    # every wait capped at max_delay, below base_delay: the check used to refuse it though it meets every limit
    "max_delay below base_delay": RetryPolicy(max_attempts=3, base_delay=1.0, max_delay=0.15, jitter=0.2, budget=0.5),
    "with a seed (a demo's choice; the limits hold for any)": RetryPolicy(max_attempts=3, base_delay=0.125, factor=1.5,
                                                                          jitter=0.2, budget=0.5, seed=7),
}  # fmt: skip


@pytest.mark.parametrize("answer", list(POLICY_RIGHT.values()), ids=list(POLICY_RIGHT))
def test_retry_policy_other_right_answers_pass(corpus, answer):
    corpus.right(check_retry_policy, answer)


def test_the_limits_are_tested_for_every_draw_not_for_a_sample():
    """The waits are drawn at random, so "for every seed" is a bound, not a sample: the check runs
    the policy with every draw at its lowest and at its highest. A policy whose longest pair of
    waits lies just past the limit passes almost every seed, and is still refused (or, where the
    draw cannot reach past it, passed): the check's verdict is the exact bound's."""
    policy = RetryPolicy(max_attempts=3, base_delay=0.2, factor=1.0, jitter=0.26, budget=1.0)
    highest = sum(policy.delay(n, _Edge(True)) for n in (1, 2))
    lowest = policy.delay(1, _Edge(False))
    exact = highest <= MAX_TOTAL_WAIT + 1e-9 and lowest >= MIN_FIRST_WAIT
    seeds_over = sum(sum(run_policy(RetryPolicy(**{**vars(policy), "seed": seed}))[2]) > MAX_TOTAL_WAIT + 1e-9
                     for seed in range(50))  # fmt: skip
    if not exact:  # the draw can pass the limit: fifty seeds almost never show it
        assert seeds_over <= 3
    assert check_retry_policy(policy) is exact
    # and the two ends really bound what any seed draws
    for seed in range(200):
        rng = random.Random(seed)
        wait = policy.delay(1, rng)
        assert lowest <= wait <= policy.delay(1, _Edge(True))


@pytest.mark.parametrize("answer", list(VALUES.values()), ids=list(VALUES))
def test_retry_policy_fuzz_never_shows_a_traceback(answer):
    assert_refused(check_retry_policy, answer())


class DelayRaises(RetryPolicy):
    def delay(self, retry_number, rng):
        raise RuntimeError("my delay broke")


class DelayIsNaN(RetryPolicy):
    def delay(self, retry_number, rng):
        return float("nan")


class DelayIsText(RetryPolicy):
    def delay(self, retry_number, rng):
        return "0.2"


@pytest.mark.parametrize("cls", [DelayRaises, DelayIsNaN, DelayIsText], ids=["raises", "NaN", "text"])
def test_a_policy_whose_own_delay_goes_wrong_is_named_not_a_traceback(cls):
    printed = assert_refused(check_retry_policy, cls(max_attempts=3, base_delay=0.125, factor=1.5, jitter=0.2, budget=0.5))
    assert "raised" in printed or "finite number" in printed
