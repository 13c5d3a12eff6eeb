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


# ---- the zh-CN edition: the same checks, their own messages in Chinese --------------------------


def test_every_pair_has_its_chinese_label():
    from course_lib.exercises.nb06 import PAIRS, PAIRS_ZH

    assert len(PAIRS_ZH) == len(PAIRS) and all(PAIRS_ZH) and len(set(PAIRS_ZH)) == len(PAIRS_ZH)


def test_the_attempts_read_in_the_editions_language(monkeypatch):
    from course_lib.exercises.nb06 import ATTEMPTS, WHY

    monkeypatch.setenv("COURSE_LANG", "en")  # notebook 06 prints these: the English stays as it was
    assert list(ATTEMPTS) == list(WHY) == list("abcdef") and "a" in ATTEMPTS and len(ATTEMPTS) == 6
    assert ATTEMPTS["b"] == "bob sends exactly A's tool and arguments"
    assert dict(ATTEMPTS.items())["f"] == "someone else updated todo.md first (it is at version 2 now); then alice sends A"
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert ATTEMPTS["b"] == "bob 发送与 A 完全相同的工具和参数"
    assert dict(ATTEMPTS.items())["f"] == "别人先更新了 todo.md（它现在处于版本 2）；然后 alice 发送 A"
    assert WHY["d"] == "批准过期了（它的有效期是 5 分钟）"


def test_the_not_answered_messages_follow_the_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "en")
    assert check_make_action_id(...) is False
    assert check_write_decisions({label: ... for label in "abcdef"}) is False
    assert capsys.readouterr().out == (
        "✗ Not answered yet: define make_action_id(tool, arguments, user_id) and pass the function itself.\n"
        "✗ Not answered yet: replace the ... of a, b, c, d, e, f with True (the write runs) or False.\n"
    )
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_make_action_id(...) is False
    assert check_write_decisions({label: ... for label in "abcdef"}) is False
    assert capsys.readouterr().out == (
        "✗ 还没有作答：定义 make_action_id(tool, arguments, user_id)，并传入函数本身。\n"
        "✗ 还没有作答：把 a, b, c, d, e, f 的 ... 换成 True（写入会运行）或 False。\n"
    )


def test_make_action_id_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_make_action_id(lambda tool, arguments, user: _digest(f"{tool}\n{arguments}\n{user}")) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 第 2 对（同样的参数，键换了一种顺序）是同一个动作，必须得到同一个 id；你的函数给出了 '")
    assert "提示：id 跟随了键的插入顺序：str(dict) 和不带 sort_keys=True 的 json.dumps 都会保留这个顺序。" in out
    assert check_make_action_id(lambda tool, arguments, user: _digest(tool + json.dumps(arguments, sort_keys=True))) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 第 7 对（另一个用户）是两个不同的动作，却得到了同一个 id '")
    assert "批准其中一个就会授权另一个。提示：把用户 id 包括进去：为 alice 做的批准不能授权 bob。" in out

    def str_values(tool, arguments, user):
        return _digest(json.dumps([tool, {k: str(v) for k, v in arguments.items()}, user], sort_keys=True))

    assert check_make_action_id(str_values) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 第 3 对（嵌套对象的键换了一种顺序）") and "你用 str()（或 f-string）把值变成了文本" in out
    assert check_make_action_id(lambda tool, arguments, user: _digest(json.dumps([tool, sorted(arguments), user]))) is False
    assert "这个 id 忽略了值：sorted(arguments) 和 arguments.keys() 只给出键" in capsys.readouterr().out
    assert check_make_action_id(lambda tool, arguments, user: _digest(tool + user + json.dumps(arguments, sort_keys=True))) is False
    assert capsys.readouterr().out.startswith('✗ 第 10 对（用户名和工具名连成一片（"apply_note_update" + "alice"')


def test_wrong_id_types_crashes_and_the_caution_are_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_make_action_id(lambda tool, arguments, user: hash((tool, user))) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ make_action_id 必须返回非空的 str；它在第 1 对上返回了 ") and "（int）。Python 的 hash() 返回 int" in out
    assert check_make_action_id(lambda tool, arguments, user: hashlib.sha256(tool.encode()).digest()) is False
    assert "这是 .digest()（bytes）：请返回 .hexdigest()，它是文本。" in capsys.readouterr().out
    assert check_make_action_id(lambda tool, arguments, user: arguments["missing"]) is False
    assert capsys.readouterr().out == "✗ make_action_id 在第 1 对（同一个动作，请求了两次）上抛出了 KeyError: 'missing'。\n"
    assert check_make_action_id("make_action_id") is False
    assert capsys.readouterr().out == "✗ 请传入函数本身（make_action_id，不带括号）；你传入的是 'make_action_id'。\n"
    concatenated = lambda tool, arguments, user: _digest(tool + json.dumps(arguments, sort_keys=True) + user)  # noqa: E731
    assert check_make_action_id(concatenated) is True
    out = capsys.readouterr().out
    assert out.startswith("✓ 全部 10 对都对了：键的顺序被忽略；工具、每个参数和用户都被绑定。有一点要注意：你的 id 把各部分直接连在一起")
    assert check_make_action_id(SOLUTIONS["check_make_action_id"]()) is True
    assert capsys.readouterr().out == "✓ 全部 10 对都对了：键的顺序被忽略；工具、每个参数和用户都被绑定。\n"


def test_write_decisions_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_write_decisions({**SOLUTIONS["check_write_decisions"](), "f": True}) is False
    assert capsys.readouterr().out == (
        "✗ (f) 别人先更新了 todo.md（它现在处于版本 2）；然后 alice 发送 A：你说会写入，但真实的执行器回答 CONFLICT，"
        "什么也没写。批准是有效的，但写入是有条件的：expected_version 1 已经过时（CONFLICT），所以较新的文本得以保留。\n"
    )
    assert check_write_decisions({**SOLUTIONS["check_write_decisions"](), "c": False}) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ (c) alice 第一次尝试 A 时超时了") and "你说什么也不写，但写入运行了。批准只在动作生效时才用掉" in out
    assert check_write_decisions({"a": True}) is False
    assert capsys.readouterr().out == "✗ decisions 里没有 b, c, d, e, f 的条目：请对全部六次尝试（a 到 f）作出判断。\n"
    assert check_write_decisions([True] * 6) is False
    assert capsys.readouterr().out == "✗ decisions 必须是形如 {'a': True, 'b': False, ...} 的 dict；你给的是一个 list。\n"
    assert check_write_decisions({**{label: False for label in "abcdef"}, "a": "yes"}) is False
    assert capsys.readouterr().out == "✗ (a)：请回答 True（写入会运行）或 False（不会）；你给的是 'yes'。\n"
    assert check_write_decisions(SOLUTIONS["check_write_decisions"]()) is True
    assert capsys.readouterr().out == "✓ 六个全对：只有针对当前版本、确切、未过期且未用过的批准才会写入。\n"
