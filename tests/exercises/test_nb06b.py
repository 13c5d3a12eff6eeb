"""Notebook 06b's checks against a corpus of learner answers: one wrong answer per mistake each
exercise is about (each must fail with a message naming that mistake), a different correct answer
that must pass, and a fuzz pass in which no check lets a traceback through."""

import json
import types

import pytest

from course_lib.approval import canonical_arguments
from course_lib.exercises.nb06b import SOLUTIONS, check_outcomes, check_run_once, play_sends
from test_nb06 import _BadError, _BadRepr, _Unreadable  # the hostile answers 06's checks are tried on too

# ---- exercise 1: run_once -------------------------------------------------------------------------


def _store(*, compare=lambda stored, arguments: stored == json.dumps(arguments, sort_keys=True), key_by=None,
           fresh=lambda now, at, retention: now - at <= retention, store_first=False, swallow=False, refresh=False,
           conflict_after_write=False):  # fmt: skip
    """A run_once with one mistake switched on (the defaults make a right one)."""

    def run_once(records, key, arguments, write, now, retention):
        slot = key_by(arguments) if key_by else key
        known = records.get(slot)
        if known is not None and fresh(now, known["at"], retention):
            if not compare(known["arguments"], arguments):
                if conflict_after_write:
                    write()
                raise ValueError(f"key {key} was used with other arguments")
            if refresh:
                known["at"] = now
            return known["result"], True
        if store_first:
            records[slot] = {"arguments": json.dumps(arguments, sort_keys=True), "result": None, "at": now}
        try:
            result = write()
        except OSError:
            if swallow:
                return None, False
            raise
        records[slot] = {"arguments": json.dumps(arguments, sort_keys=True), "result": result, "at": now}
        return result, False

    return run_once


WRONG_RUN_ONCE = [  # (the mistake, the answer, what the message must say)
    ("never compares the arguments", _store(compare=lambda stored, arguments: True),
     ["t=0 op-1 with other arguments B", "replayed the first result", "raise ValueError"]),
    ("compares the text as sent, key order and all", _store(compare=lambda stored, arguments: stored == json.dumps(arguments)),
     ["with their keys in another order were refused as other arguments", "sort_keys=True"]),
    ("remembers the key before write() succeeded", _store(store_first=True),
     ["write() fails → write() raised", "its earlier write() failed", "only after write() returned"]),
    ("keys records by content, not by key", _store(key_by=lambda arguments: json.dumps(arguments, sort_keys=True)),
     ["op-1 with other arguments B", "was written"]),
    ("never forgets a key", _store(fresh=lambda now, at, retention: True),
     ["more than the retention window (24 h) ago, so it is forgotten"]),
    ("forgets a key at exactly the window", _store(fresh=lambda now, at, retention: now - at < retention),
     ["t=24 h op-1 with A", "at exactly the retention window the key is still remembered"]),
    ("a replay renews the window", _store(refresh=True),
     ["t=13 h op-1 with A → replayed; t=26 h op-1 with A", "a replay does not renew the window"]),
    ("swallows the failed write", _store(swallow=True), ["run_once returned instead of letting the error through"]),
    ("hard-codes 24 hours", _store(fresh=lambda now, at, retention: now - at <= 24 * 3600),
     ["retention window (60 s)", "This was with retention=60"]),
    ("refuses only after writing", _store(conflict_after_write=True), ["raised ValueError, but only after calling write()"]),
]  # fmt: skip


@pytest.mark.parametrize(("mistake", "answer", "said"), WRONG_RUN_ONCE, ids=[w[0] for w in WRONG_RUN_ONCE])
def test_each_wrong_run_once_is_named(capsys, mistake, answer, said):
    assert check_run_once(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ After t=0 op-1") and all(part in out for part in said), out
    assert out.count("\n") == 1


def test_writing_twice_and_a_wrong_flag_are_named(capsys):
    def writes_twice(records, key, arguments, write, now, retention):
        write()
        return write(), False

    assert check_run_once(writes_twice) is False
    assert "write() was called 2 times in one call of run_once" in capsys.readouterr().out

    def always_false(records, key, arguments, write, now, retention):
        result, _ = _store()(records, key, arguments, write, now, retention)
        return result, False

    assert check_run_once(always_false) is False
    assert "a replay must say so: return (stored result, True)" in capsys.readouterr().out

    def new_result_on_replay(records, key, arguments, write, now, retention):
        result, replayed = _store()(records, key, arguments, write, now, retention)
        return ({"reminder": 99} if replayed else result), replayed

    assert check_run_once(new_result_on_replay) is False
    assert "a replay must return the first write's result {'reminder': 1}" in capsys.readouterr().out


def test_different_correct_answers_pass(capsys):
    # Dict equality instead of canonical text, the library's canonical_arguments, a list as the pair.
    assert check_run_once(_store(compare=lambda stored, arguments: json.loads(stored) == arguments)) is True
    assert check_run_once(_store(compare=lambda stored, arguments: stored == canonical_arguments(arguments))) is False
    capsys.readouterr()  # (the stored text above is json.dumps', not canonical_arguments': another text)

    def canonical(records, key, arguments, write, *, now, retention):
        text = canonical_arguments(arguments)
        if key in records and now - records[key][2] <= retention:
            if records[key][0] != text:
                raise ValueError("key reused")
            return [records[key][1], True]
        result = write()
        records[key] = (text, result, now)
        return [result, False]

    assert check_run_once(canonical) is True
    assert capsys.readouterr().out.startswith("✓ every sequence of up to five steps right (")


def test_run_once_is_judged_in_few_calls_and_a_print_in_it_cannot_flood(capsys):
    """The check used to play 26,330 sequences from scratch: about 88,000 calls, so a 1 ms function
    took 90 s and one print() filled the notebook. It walks each distinct state once now."""
    calls = []

    def counted(records, key, arguments, write, *, now, retention):
        calls.append(key)
        print("run_once", key, now)
        return SOLUTIONS["check_run_once"]()(records, key, arguments, write, now=now, retention=retention)

    assert check_run_once(counted) is True
    printed = capsys.readouterr().out
    assert len(calls) < 2_000, len(calls)
    assert printed.count("\n") <= 21 and f"printed {len(calls) - 20:,} more lines" in printed


async def _async_run_once(records, key, arguments, write, now, retention):
    return write(), False


def _raises_bad_error(records, key, arguments, write, now, retention):
    raise _BadError()


RUN_ONCE_FUZZ = [0, "run_once", [], {}, _BadRepr(), lambda: None, lambda records, key, arguments, write: None,
                 lambda *a, **k: None, lambda *a, **k: 1 / 0, lambda *a, **k: _BadRepr(), lambda *a, **k: (1, "yes"),
                 lambda *a, **k: (write := a[3]) and (write(), 1), _async_run_once, _raises_bad_error,
                 lambda *a, **k: iter([1, 2]), object, lambda *a, **k: (_ for _ in ()).throw(KeyError("k"))]  # fmt: skip


@pytest.mark.parametrize("answer", RUN_ONCE_FUZZ, ids=range(len(RUN_ONCE_FUZZ)))
def test_run_once_fuzz_never_shows_a_traceback(capsys, answer):
    assert check_run_once(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗") and out.count("\n") == 1 and "Traceback" not in out


def test_fuzz_messages_name_the_mistake(capsys):
    assert check_run_once(lambda records, key, arguments, write: None) is False
    assert "name the last two parameters now and retention" in capsys.readouterr().out
    assert check_run_once(_async_run_once) is False
    assert "run_once is an async def" in capsys.readouterr().out
    assert check_run_once(lambda *a, **k: (1, "yes")) is False
    assert "replayed must be True or False; yours is 'yes'" in capsys.readouterr().out
    assert check_run_once(_raises_bad_error) is False
    assert "run_once raised _BadError: (its message cannot be shown)" in capsys.readouterr().out
    assert check_run_once(lambda *a, **k: None) is False
    assert "run_once must return a pair (result, replayed); it returned None" in capsys.readouterr().out


# ---- exercise 2: written, replayed or conflict? ----------------------------------------------------

SOLVED = SOLUTIONS["check_outcomes"]()


def test_the_sends_are_played_for_real():
    assert play_sends() == SOLVED == {"a": "replayed", "b": "conflict", "c": "replayed", "d": "written",
                                      "e": "written", "f": "conflict"}  # fmt: skip


WRONG_OUTCOMES = [
    ("a timeout means nothing was written", {**SOLVED, "a": "written"}, ["✗ (a) alice's first try of C timed out",
                                                                         "the first try did write"]),
    ("the newer text wins under a reused key", {**SOLVED, "b": "written"}, ["✗ (b)", "is refused, and nothing is written"]),
    ("a content key keeps both saves", {**SOLVED, "c": "written"}, ["✗ (c)", "merged into the first, and lost"]),
    ("the same content is the same operation", {**SOLVED, "d": "replayed"}, ["✗ (d)", "keeps two real saves apart"]),
    ("a server remembers keys for ever", {**SOLVED, "e": "replayed"}, ["✗ (e)", "forgot the key after 24 hours"]),
    ("an approval is enough to write", {**SOLVED, "f": "written"}, ["✗ (f)", "expected_version is stale"]),
]  # fmt: skip


@pytest.mark.parametrize(("mistake", "answer", "said"), WRONG_OUTCOMES, ids=[w[0] for w in WRONG_OUTCOMES])
def test_each_wrong_outcome_is_named(capsys, mistake, answer, said):
    assert check_outcomes(answer) is False
    out = capsys.readouterr().out
    assert all(part in out for part in said), out
    assert out.count("\n") == 1


def test_a_correct_answer_in_another_shape_passes(capsys):
    answer = types.MappingProxyType({label: f" {word.upper()} " for label, word in reversed(SOLVED.items())})
    assert check_outcomes(answer) is True
    assert capsys.readouterr().out.startswith("✓ all six right")


OUTCOME_FUZZ = [None, ..., 0, "replayed", ["replayed"] * 6, {"a": "replayed"}, _Unreadable(), {**SOLVED, "c": "merged"},
                {**SOLVED, "c": 1}, {**SOLVED, "c": _BadRepr()}, {**SOLVED, "c": ...}, _BadRepr(),
                {**SOLVED, "z": "written"}]  # fmt: skip


@pytest.mark.parametrize("number", range(len(OUTCOME_FUZZ)))
def test_outcome_fuzz_never_shows_a_traceback(capsys, number):
    result = check_outcomes(OUTCOME_FUZZ[number])
    out = capsys.readouterr().out
    assert result is (number == len(OUTCOME_FUZZ) - 1)  # only the right answer with an extra label passes
    assert out.startswith("✓" if result else "✗") and out.count("\n") == 1 and "Traceback" not in out


def test_malformed_outcomes_are_named(capsys):
    assert check_outcomes({"a": "replayed"}) is False
    assert capsys.readouterr().out.startswith("✗ outcomes has no entry for b, c, d, e, f")
    assert check_outcomes({**SOLVED, "c": "merged"}) is False
    assert capsys.readouterr().out.startswith("✗ (c): answer 'written', 'replayed' or 'conflict'; you gave 'merged'")
    assert check_outcomes({label: ... for label in "abcdef"}) is False
    assert capsys.readouterr().out.startswith("✗ Not answered yet: replace the ... of a, b, c, d, e, f")


# ---- the zh-CN edition --------------------------------------------------------------------------


def test_the_checks_speak_chinese_in_the_zh_cn_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_run_once(_store(store_first=True)) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 在这一串步骤之后（t=0 op-1 配 A，而 write() 失败 → write() 抛出异常；t=0 op-1 配 A）：")
    assert "只在 write() 返回之后才记住键" in out
    assert check_outcomes({**SOLVED, "c": "written"}) is False
    assert capsys.readouterr().out.startswith("✗ (c) 用户真的把同一条提醒保存了两次")
    assert check_run_once(SOLUTIONS["check_run_once"]()) is True
    assert capsys.readouterr().out.startswith("✓ 最多五步的每一串步骤都对了（")
    assert check_outcomes(SOLVED) is True
    assert capsys.readouterr().out.startswith("✓ 六个全对")
