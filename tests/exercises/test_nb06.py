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
    assert "str(dict) and json.dumps without sort_keys=True both keep" in out


def test_json_without_sort_keys_depends_on_key_order(capsys):
    assert check_make_action_id(lambda tool, arguments, user: _digest(json.dumps([tool, arguments, user]))) is False
    assert capsys.readouterr().out.startswith("✗ pair 2 (the same arguments with their keys in another order)")


def test_sorting_only_the_top_level_misses_nested_objects(capsys):
    def top_level_only(tool, arguments, user):
        return _digest(f"{tool}\n{sorted(arguments.items())}\n{user}")

    assert check_make_action_id(top_level_only) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ pair 3 (nested objects with their keys in another order)")
    assert "sorted(arguments.items()) sorts one level" in out and "str()" not in out


def test_nested_str_is_named_as_the_str_bug_not_as_a_sorting_bug(capsys):
    # Regression: this answer sorts every level it sees; its bug is str() of the nested value.
    def str_values(tool, arguments, user):
        return _digest(json.dumps([tool, {k: str(v) for k, v in arguments.items()}, user], sort_keys=True))

    assert check_make_action_id(str_values) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ pair 3 (nested objects")
    assert "you turn values into text with str()" in out and "sorted(arguments.items())" not in out


def test_hashing_only_the_keys_is_named(capsys):
    assert check_make_action_id(lambda tool, arguments, user: _digest(json.dumps([tool, sorted(arguments), user]))) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ pair 4 (another content)") and "the id ignores the values" in out


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
    out = capsys.readouterr().out
    assert out.startswith("✗ pair 10 (user and tool names run together")
    assert "'apply_note_update' + 'alice' and 'apply_note_updatea' + 'lice' are the same text" in out


def test_tool_json_user_without_separator_passes_with_the_caution_that_it_holds_by_luck(capsys):
    # With canonical JSON in the middle no real pair collides (a JSON object ends at its closing
    # brace; tool names cannot contain '{'), so the check passes it, but says why that is luck.
    concatenated = lambda tool, arguments, user: _digest(tool + json.dumps(arguments, sort_keys=True) + user)  # noqa: E731
    assert check_make_action_id(concatenated) is True
    out = capsys.readouterr().out
    assert "joins the parts with nothing between them" in out and "'x{}' + '{}' + 'y'" in out
    assert check_make_action_id(SOLUTIONS["check_make_action_id"]()) is True
    assert "caution" not in capsys.readouterr().out


def test_a_non_string_id_and_a_crash_are_named(capsys):
    assert check_make_action_id(lambda tool, arguments, user: hash((tool, user))) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ make_action_id must return a non-empty str; it returned")
    assert "hash() returns an int" in out and "changes from one run of Python to the next" in out
    assert check_make_action_id(lambda tool, arguments, user: hashlib.sha256(tool.encode())) is False
    assert "return its .hexdigest()" in capsys.readouterr().out
    assert check_make_action_id(lambda tool, arguments, user: hashlib.sha256(tool.encode()).digest()) is False
    assert "That is .digest() (bytes)" in capsys.readouterr().out
    assert check_make_action_id(lambda tool, arguments, user: "") is False
    assert "An id is stored and compared as text" in capsys.readouterr().out
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


def test_a_random_id_is_named(capsys):
    import uuid

    assert check_make_action_id(lambda tool, arguments, user: uuid.uuid4().hex) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ pair 1 (the same action, asked twice) is ONE action") and "no uuid" in out


def test_all_true_and_all_false_name_the_first_wrong_attempt(capsys):
    assert check_write_decisions({label: True for label in "abcdef"}) is False
    assert capsys.readouterr().out.startswith("✗ (b) bob sends exactly A's tool and arguments: you said it writes")
    assert check_write_decisions({label: False for label in "abcdef"}) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ (a) alice sends A again, with its keys in another order") and "key order is not part" in out
    assert check_write_decisions({**{label: False for label in "abcdef"}, "a": 1}) is False
    assert "you gave 1" in capsys.readouterr().out
