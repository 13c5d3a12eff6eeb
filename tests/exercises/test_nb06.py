"""Wrong answers to notebook 06's exercises get a message that says what is wrong."""

import hashlib
import json

from course_lib.exercises.nb06 import SOLUTIONS, check_make_action_id, check_write_decisions, play_attempts


def _digest(text):
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def test_str_of_the_dict_depends_on_key_order(capsys):
    assert check_make_action_id(lambda tool, arguments, user: _digest(f"{tool}\n{arguments}\n{user}")) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ pair 2 (the same arguments with their keys in another order) is ONE action")
    assert "json.dumps(..., sort_keys=True)" in out


def test_sorting_only_the_top_level_misses_nested_objects(capsys):
    def top_level_only(tool, arguments, user):
        return _digest(f"{tool}\n{sorted(arguments.items())}\n{user}")

    assert check_make_action_id(top_level_only) is False
    assert capsys.readouterr().out.startswith("✗ pair 3 (nested objects with their keys in another order)")


def test_leaving_out_the_user_lets_one_approval_authorize_another_user(capsys):
    assert check_make_action_id(lambda tool, arguments, user: _digest(tool + json.dumps(arguments, sort_keys=True))) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ pair 7 (another user) are TWO different actions but get the same id")
    assert "approving one would authorize the other" in out


def test_stringified_values_make_an_integer_and_a_string_collide(capsys):
    def stringified(tool, arguments, user):
        values = {k: v if isinstance(v, dict) else str(v) for k, v in arguments.items()}
        return _digest(json.dumps([tool, values, user], sort_keys=True))

    assert check_make_action_id(stringified) is False
    assert capsys.readouterr().out.startswith('✗ pair 8 (expected_version 1 (an integer) versus "1" (a string))')


def test_parts_run_together_without_a_separator(capsys):
    assert check_make_action_id(lambda tool, arguments, user: _digest(tool + user + json.dumps(arguments, sort_keys=True))) is False
    assert capsys.readouterr().out.startswith("✗ pair 10 (user and tool names run together")


def test_a_non_string_id_and_a_crash_are_named(capsys):
    assert check_make_action_id(lambda tool, arguments, user: hash((tool, user))) is False
    assert capsys.readouterr().out.startswith("✗ make_action_id must return a non-empty str; it returned")
    assert check_make_action_id(lambda tool, arguments, user: arguments["missing"]) is False
    assert capsys.readouterr().out.startswith("✗ make_action_id raised KeyError: 'missing' on pair 1")


def test_a_starter_that_still_returns_ellipsis_is_not_answered(capsys):
    assert check_make_action_id(lambda tool, arguments, user: ...) is False
    assert capsys.readouterr().out.startswith("✗ Not answered yet")


def test_the_attempts_are_played_for_real():
    assert play_attempts() == {
        "a": (True, "ok"), "b": (False, "APPROVAL_REQUIRED"), "c": (True, "ok"),
        "d": (False, "APPROVAL_REQUIRED"), "e": (False, "APPROVAL_REQUIRED"), "f": (False, "CONFLICT"),
    }  # fmt: skip


def test_believing_a_valid_approval_always_writes_misses_the_version_check(capsys):
    answer = {**SOLUTIONS["check_write_decisions"](), "f": True}
    assert check_write_decisions(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ (f) someone else updated todo.md first")
    assert "the real executor answered CONFLICT and wrote nothing" in out


def test_thinking_an_approval_covers_every_user_is_named(capsys):
    answer = {**SOLUTIONS["check_write_decisions"](), "b": True}
    assert check_write_decisions(answer) is False
    assert "bound to the user it was shown to" in capsys.readouterr().out


def test_thinking_a_timeout_uses_up_the_approval_is_named(capsys):
    answer = {**SOLUTIONS["check_write_decisions"](), "c": False}
    assert check_write_decisions(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ (c) alice's first try of A timed out") and "you said nothing is written, but the write ran" in out


def test_malformed_decisions_are_named(capsys):
    assert check_write_decisions({"a": True}) is False
    assert capsys.readouterr().out.startswith("✗ decisions has no entry for b, c, d, e, f")
    assert check_write_decisions({label: ... for label in "abcdef"}) is False
    assert capsys.readouterr().out.startswith("✗ Not answered yet: replace the ... of a, b, c, d, e, f")
    assert check_write_decisions({**{label: False for label in "abcdef"}, "a": "yes"}) is False
    assert capsys.readouterr().out.startswith("✗ (a): answer True (the write runs) or False")
    assert check_write_decisions([True] * 6) is False
    assert capsys.readouterr().out.startswith("✗ decisions must be a dict")
