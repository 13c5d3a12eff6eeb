"""Every check under the guard: a hanging answer is stopped and told so, a learner's printing cannot
flood the notebook, an unset `answer` is named, and the guard's own parts behave."""

from __future__ import annotations

import asyncio
import importlib
import pkgutil
import threading
import time

import pytest

import course_lib.exercises as exercises
from course_lib.exercises import guard
from course_lib.exercises.answers import difference, is_starter, unassigned
from course_lib.exercises.nb02 import check_parse_head
from course_lib.exercises.nb06 import check_make_action_id
from course_lib.exercises.nb10 import check_run_turn

MODULES = [importlib.import_module(f"course_lib.exercises.{m.name}")
           for m in pkgutil.iter_modules(exercises.__path__) if m.name.startswith("nb")]  # fmt: skip


@pytest.fixture
def short(monkeypatch):
    monkeypatch.setattr(guard, "LIMIT_SECONDS", 1.0)
    monkeypatch.setenv("COURSE_PROGRESS", "off")


def test_every_check_of_every_notebook_runs_under_the_guard():
    for module in MODULES:
        for name in module.SOLUTIONS:
            assert hasattr(getattr(module, name), "__wrapped__"), f"{module.__name__}.{name}"


def _timed(check, answer, capsys):
    start = time.monotonic()
    returned = check(answer)
    return returned, capsys.readouterr().out, time.monotonic() - start


def loops_forever(tool, arguments, user):
    while True:
        pass


def swallows_every_exception(tool, arguments, user):
    while True:
        try:
            time.sleep(10)
        except BaseException:  # noqa: BLE001 — the learner's code this test is about
            pass


def sleeps(text):
    time.sleep(1000)


@pytest.mark.parametrize(("check", "answer", "line"), [
    (check_make_action_id, loops_forever, "while True:"),
    (check_make_action_id, swallows_every_exception, "time.sleep(10)"),
    (check_parse_head, sleeps, "time.sleep(1000)"),
], ids=["a loop that never ends", "a loop that catches the stop", "a sleep"])  # fmt: skip
def test_a_hanging_answer_is_stopped_and_told_where(short, capsys, check, answer, line):
    returned, printed, took = _timed(check, answer, capsys)
    assert returned is False and took < 4, took
    assert printed.startswith("✗ Your code did not finish within 1 s, so the check stopped it. It was at line ")
    assert line in printed and printed.count("\n") == 1


async def _async_loop(calls, execute, is_write):
    while True:
        pass


async def _async_wait(calls, execute, is_write):
    await asyncio.sleep(1000)


@pytest.mark.parametrize("answer", [_async_loop, _async_wait], ids=["a loop on the event loop", "an await that never ends"])
def test_an_async_answer_on_its_own_event_loop_is_stopped_too(short, capsys, answer):
    returned, printed, took = _timed(check_run_turn, answer, capsys)
    assert returned is False and took < 5, took
    assert printed.startswith("✗ Your code did not finish within 1 s") and printed.count("\n") == 1


def naps_and_swallows(tool, arguments, user):
    while True:
        try:
            time.sleep(0.05)  # outside the main thread a sleep ends before the stop lands (guard's docstring)
        except BaseException:  # noqa: BLE001 — the learner's code this test is about
            pass


def test_a_check_called_from_another_thread_is_stopped_by_the_watchdog(short, capsys):
    results = []
    thread = threading.Thread(target=lambda: results.append(check_make_action_id(naps_and_swallows)))
    thread.start()
    thread.join(8)
    assert not thread.is_alive() and results == [False]
    assert "did not finish within 1 s" in capsys.readouterr().out


def test_the_verdict_in_chinese(short, capsys, monkeypatch):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    returned, printed, _ = _timed(check_make_action_id, loops_forever, capsys)
    assert printed.startswith("✗ 你的代码在 1 秒内没有结束，检查把它停下了。当时它停在第 ")


def test_a_learners_printing_is_bounded_and_counted(capsys):
    import hashlib
    import json

    def chatty(tool, arguments, user):
        print("working on", tool)
        return hashlib.sha256(json.dumps([tool, arguments, user], sort_keys=True).encode()).hexdigest()

    assert check_make_action_id(chatty) is True
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    assert len(lines) == guard.SHOWN_LINES + 1 and all(line.startswith("working on") for line in lines[:-1])
    assert lines[-1].startswith("✓ ") and "more lines while the check ran; they are not shown.)" in lines[-1]


def test_one_endless_line_is_cut_too(capsys):
    def shouts(text):
        print("x" * 100_000, end="")
        raise ValueError("no")

    check_parse_head(shouts)
    printed = capsys.readouterr().out
    assert len(printed) < guard.SHOWN_CHARACTERS + 1000


def test_a_fault_of_the_check_itself_is_one_line_for_a_learner_and_raises_in_the_tests(monkeypatch, capsys):
    broken = guard.guarded(lambda answer: 1 / 0)
    monkeypatch.setenv("COURSE_CHECKS_STRICT", "0")
    assert broken(...) is False
    printed = capsys.readouterr().out
    assert printed.startswith("✗ The check itself failed (ZeroDivisionError: division by zero)") and printed.count("\n") == 1
    monkeypatch.setenv("COURSE_CHECKS_STRICT", "1")
    with pytest.raises(ZeroDivisionError):
        broken(...)


# ---- an unset answer is named -------------------------------------------------------------------


def make_action_id(tool, arguments, user_id):  # what a learner's cell defines, under the exercise's name
    return "act_" + tool


def test_a_function_defined_but_not_passed_is_named(capsys):
    answer = ...
    assert check_make_action_id(answer) is False
    assert capsys.readouterr().out == ("✗ You defined make_action_id, but answer is still ...: set answer = "
                                       "make_action_id (the function itself, without parentheses) and run the cell "
                                       "again.\n")


def test_the_starter_still_there_and_nothing_defined_each_have_their_words():
    namespace = {}
    exec("def run_once(records, key, arguments, write, now, retention):\n    ...  # your code here\n", namespace)
    assert is_starter(namespace["run_once"])
    exec("def run_once(records, key, arguments, write, now, retention):\n    return ...\n", namespace)
    assert is_starter(namespace["run_once"])
    exec("def run_once(records, key, arguments, write, now, retention):\n    return records\n", namespace)
    assert not is_starter(namespace["run_once"])
    checked = guard.guarded(lambda answer: unassigned("run_once", "run_once(records, key, arguments, write, now, retention)"))
    assert checked(...).startswith("Not answered yet: define run_once(")  # nothing of that name in this module


def test_every_function_exercise_names_a_defined_function_it_was_not_given(capsys):
    """06, 06b and 09 used to tell a learner who had defined the function to define it."""
    from course_lib.exercises.nb06b import check_run_once
    from course_lib.exercises.nb09 import check_citation_correct, check_tool_selection_accuracy

    namespace = {"check_run_once": check_run_once, "check_citation_correct": check_citation_correct,
                 "check_tool_selection_accuracy": check_tool_selection_accuracy}
    exec("def run_once(*a, **k):\n    return None, False\n"
         "def citation_correct(answer, read_paths):\n    return True\n"
         "def tool_selection_accuracy(traces):\n    return 1.0\n"
         "answer = ...\n"
         "check_run_once(answer)\ncheck_citation_correct(answer)\ncheck_tool_selection_accuracy(answer)\n", namespace)
    printed = capsys.readouterr().out.splitlines()
    assert [line.split(",")[0] for line in printed] == ["✗ You defined run_once", "✗ You defined citation_correct",
                                                         "✗ You defined tool_selection_accuracy"]


# ---- two texts that differ are never shown alike --------------------------------------------------


def test_difference_cuts_where_the_texts_differ():
    long = "act_" + "a" * 80
    one, other = difference(long + "1", long + "2", 30)
    assert one != other and one.endswith("1'") and other.endswith("2'")
    assert difference("abc", "abd") == ("'abc'", "'abd'")
    one, other = difference({"k": "x" * 90, "z": 1}, {"k": "x" * 90, "z": 2}, 30)
    assert one != other and "1" in one and "2" in other
