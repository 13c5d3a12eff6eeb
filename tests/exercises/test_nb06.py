"""Wrong answers to notebook 06's exercises get a message that says what is wrong."""

import hashlib
import json
import types
from collections.abc import Mapping

import pytest

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
        "a": (True, "ok"), "b": (False, "APPROVAL_REQUIRED"), "c": (False, "APPROVAL_REQUIRED"),
        "d": (False, "APPROVAL_REQUIRED"), "e": (False, "APPROVAL_REQUIRED"), "f": (True, "ok"),
    }  # fmt: skip


# ---- the learner-answer corpus of check_write_decisions: one wrong answer per mistake ----------

SOLVED = SOLUTIONS["check_write_decisions"]()
WRONG_DECISIONS = [  # (the mistake, the answer, what the message must say)
    ("an approval covers every user", {**SOLVED, "b": True}, ["✗ (b) bob sends", "bound to the user it was shown to"]),
    ("the same file is the same action", {**SOLVED, "c": True},
     ["✗ (c) alice sends A with the path written as todo.md", "answered APPROVAL_REQUIRED",
      "'todo.md' names the same file but is other text"]),
    ("approvals never expire", {**SOLVED, "d": True}, ["✗ (d) alice sends A ten minutes after", "expired"]),
    ("an approval can be used again", {**SOLVED, "e": True}, ["✗ (e) A has run once", "used up when the action takes effect"]),
    ("any delay voids the approval", {**SOLVED, "f": False},
     ["✗ (f) alice sends A four minutes after", "you said nothing is written, but the write ran", "still holds"]),
    ("key order makes another action", {**SOLVED, "a": False}, ["✗ (a) alice sends A again", "key order is not part"]),
    ("every write is refused", {label: False for label in "abcdef"}, ["✗ (a)"]),
    ("every write runs", {label: True for label in "abcdef"}, ["✗ (b) bob sends exactly A's tool and arguments: you said it writes"]),
]  # fmt: skip


@pytest.mark.parametrize(("mistake", "answer", "said"), WRONG_DECISIONS, ids=[w[0] for w in WRONG_DECISIONS])
def test_each_wrong_decision_is_named(capsys, mistake, answer, said):
    assert check_write_decisions(answer) is False
    out = capsys.readouterr().out
    assert all(part in out for part in said), out
    assert out.count("\n") == 1  # one line


def test_a_correct_answer_in_another_shape_passes(capsys):
    # Any mapping with the right booleans, in any order: a read-only view, keys reversed.
    answer = types.MappingProxyType(dict(reversed(list(SOLVED.items()))))
    assert check_write_decisions(answer) is True
    assert capsys.readouterr().out.startswith("✓ all six right")


class _Unreadable(Mapping):
    def __getitem__(self, key):
        raise RuntimeError("no")

    def __iter__(self):
        return iter("abcdef")

    def __len__(self):
        return 6


class _BadRepr:
    def __repr__(self):
        raise RuntimeError("repr")


class _BadEq:
    def __eq__(self, other):
        raise RuntimeError("eq")

    __hash__ = object.__hash__


DECISION_FUZZ = [None, ..., 0, 1.5, "abcdef", [True] * 6, (True,), {1: True}, {"A": True, "B": False},
                 _Unreadable(), {**SOLVED, "c": "yes"}, {**SOLVED, "c": 1}, {**SOLVED, "c": None},
                 {**SOLVED, "c": _BadRepr()}, {**SOLVED, "c": _BadEq()}, {**SOLVED, "g": True}, _BadRepr()]  # fmt: skip


@pytest.mark.parametrize("number", range(len(DECISION_FUZZ)))
def test_decision_fuzz_never_shows_a_traceback(capsys, number):
    result = check_write_decisions(DECISION_FUZZ[number])
    out = capsys.readouterr().out
    assert result is (number == 15)  # only the right answer with an extra label ("g", ignored) passes
    assert out.startswith("✓" if result else "✗") and out.count("\n") == 1 and "Traceback" not in out


def test_malformed_decisions_are_named(capsys):
    assert check_write_decisions({"a": True}) is False
    assert capsys.readouterr().out.startswith("✗ decisions has no entry for b, c, d, e, f")
    assert check_write_decisions({label.upper(): True for label in "abcdef"}) is False
    assert "The labels are lowercase: 'a', not 'A'." in capsys.readouterr().out
    assert check_write_decisions({label: ... for label in "abcdef"}) is False
    assert capsys.readouterr().out.startswith("✗ Not answered yet: replace the ... of a, b, c, d, e, f")
    assert check_write_decisions({**{label: False for label in "abcdef"}, "a": "yes"}) is False
    assert capsys.readouterr().out.startswith("✗ (a): answer True (the write runs) or False")
    assert check_write_decisions({**{label: False for label in "abcdef"}, "a": 1}) is False
    assert "you gave 1" in capsys.readouterr().out
    assert check_write_decisions([True] * 6) is False
    assert capsys.readouterr().out.startswith("✗ decisions must be a dict")
    assert check_write_decisions(_Unreadable()) is False
    assert capsys.readouterr().out.startswith("✗ decisions could not be read: looking an entry up raised RuntimeError: no")


def test_a_random_id_is_named(capsys):
    import uuid

    assert check_make_action_id(lambda tool, arguments, user: uuid.uuid4().hex) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ pair 1 (the same action, asked twice) is ONE action") and "no uuid" in out


# ---- make_action_id: the properties, a different correct answer, and the fuzz pass ------------


def test_an_id_that_drops_spaces_passes_every_pair_but_not_every_one_character_change(capsys):
    def no_spaces(tool, arguments, user):
        squeezed = {k: v.replace(" ", "") if isinstance(v, str) else v for k, v in arguments.items()}
        return _digest(json.dumps([tool, squeezed, user], sort_keys=True))

    assert check_make_action_id(no_spaces) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ changing one character of the content (") and "kept A's id" in out


def test_an_id_that_sorts_two_levels_by_hand_passes_every_pair_but_not_every_key_order(capsys):
    # Pair 3 nests one level; the property puts the keys of a three-level case in all 72 orders.
    def two_levels(tool, arguments, user):
        flat = sorted((k, sorted(v.items()) if isinstance(v, dict) else v) for k, v in arguments.items())
        return _digest(json.dumps([tool, flat, user]))

    assert check_make_action_id(two_levels) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ the same arguments in 72 key orders (three levels deep) got 2 different ids")
    assert "it sorts every level, however deep" in out


def test_a_different_correct_answer_passes(capsys):
    def nul_separated(tool, arguments, user):
        canonical = json.dumps(arguments, sort_keys=True, ensure_ascii=True)
        return hashlib.blake2b("\0".join([tool, canonical, user]).encode(), digest_size=12).hexdigest()

    assert check_make_action_id(nul_separated) is True
    assert capsys.readouterr().out.startswith("✓ all 10 pairs right, every key order gives one id")


class _LoudStr(str):
    def __eq__(self, other):
        raise RuntimeError("eq")

    __hash__ = str.__hash__


class _BadError(Exception):
    def __str__(self):
        raise RuntimeError("str")


async def _async_id(tool, arguments, user):
    return "act_1"


def _generator_id(tool, arguments, user):
    yield "act_1"


def _raises_bad_error(tool, arguments, user):
    raise _BadError()


ID_FUZZ = [0, "make_action_id", [], {}, _BadRepr(), lambda: "x", lambda *a: None, lambda *a: 1 / 0,
           lambda *a: _BadRepr(), lambda *a: _LoudStr("same"), _async_id, _generator_id, _raises_bad_error,
           lambda tool, arguments, user: arguments.popitem() and "x", object, str]  # fmt: skip


@pytest.mark.parametrize("answer", ID_FUZZ, ids=range(len(ID_FUZZ)))
def test_make_action_id_fuzz_never_shows_a_traceback(capsys, answer):
    assert check_make_action_id(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗") and out.count("\n") == 1 and "Traceback" not in out


def test_fuzz_messages_name_the_mistake(capsys):
    assert check_make_action_id(lambda: "x") is False
    assert "it must take three arguments" in capsys.readouterr().out
    assert check_make_action_id(_async_id) is False
    assert "is an async def" in capsys.readouterr().out
    assert check_make_action_id(_raises_bad_error) is False
    assert "raised _BadError: (its message cannot be shown)" in capsys.readouterr().out
    assert check_make_action_id(_BadRepr()) is False
    assert "whose repr() fails" in capsys.readouterr().out


# ---- the zh-CN edition: the same checks, their own messages in Chinese --------------------------


def test_every_pair_has_its_chinese_label():
    from course_lib.exercises.nb06 import PAIRS, PAIRS_ZH

    assert len(PAIRS_ZH) == len(PAIRS) and all(PAIRS_ZH) and len(set(PAIRS_ZH)) == len(PAIRS_ZH)


def test_the_attempts_read_in_the_editions_language(monkeypatch):
    from course_lib.exercises.nb06 import ATTEMPTS, WHY

    monkeypatch.setenv("COURSE_LANG", "en")  # notebook 06 prints these: the English stays as it was
    assert list(ATTEMPTS) == list(WHY) == list("abcdef") and "a" in ATTEMPTS and len(ATTEMPTS) == 6
    assert ATTEMPTS["b"] == "bob sends exactly A's tool and arguments"
    assert dict(ATTEMPTS.items())["f"] == "alice sends A four minutes after the approval"
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert ATTEMPTS["b"] == "bob 发送与 A 完全相同的工具和参数"
    assert dict(ATTEMPTS.items())["f"] == "alice 在批准四分钟之后发送 A"
    assert WHY["d"] == "批准过期了（它的有效期是 5 分钟）"


def test_the_not_answered_messages_follow_the_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "en")
    assert check_make_action_id(...) is False
    assert check_write_decisions({label: ... for label in "abcdef"}) is False
    assert capsys.readouterr().out == (
        "✗ Not answered yet: define make_action_id(tool, arguments, user_id), then set answer = make_action_id (the "
        "function itself, without parentheses) and run the cell again.\n"
        "✗ Not answered yet: replace the ... of a, b, c, d, e, f with True (the write runs) or False.\n"
    )
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_make_action_id(...) is False
    assert check_write_decisions({label: ... for label in "abcdef"}) is False
    assert capsys.readouterr().out == (
        "✗ 还没有作答：定义 make_action_id(tool, arguments, user_id)，然后写 answer = make_action_id（函数本身，不带括号），"
        "再运行这个单元格。\n"
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
    assert out.startswith("✗ make_action_id 必须返回非空的 str；它在第 1 对（同一个动作，请求了两次）上返回了 ") and "（int）。Python 的 hash() 返回 int" in out
    assert check_make_action_id(lambda tool, arguments, user: hashlib.sha256(tool.encode()).digest()) is False
    assert "这是 .digest()（bytes）：请返回 .hexdigest()，它是文本。" in capsys.readouterr().out
    assert check_make_action_id(lambda tool, arguments, user: arguments["missing"]) is False
    assert capsys.readouterr().out == "✗ make_action_id 在第 1 对（同一个动作，请求了两次）上抛出了 KeyError: 'missing'。\n"
    assert check_make_action_id("make_action_id") is False
    assert capsys.readouterr().out == "✗ 请传入函数本身（make_action_id，不带括号）；你传入的是 'make_action_id'。\n"
    concatenated = lambda tool, arguments, user: _digest(tool + json.dumps(arguments, sort_keys=True) + user)  # noqa: E731
    assert check_make_action_id(concatenated) is True
    out = capsys.readouterr().out
    assert out.startswith("✓ 全部 10 对都对了，每一种键的顺序都得到同一个 id，每一处单个字符的改动都得到另一个："
                          "键的顺序被忽略；工具、每个参数和用户都被绑定。而且")
    assert "大约要试 2^64 次。有一点要注意：你的 id 把各部分直接连在一起" in out
    assert check_make_action_id(SOLUTIONS["check_make_action_id"]()) is True
    assert capsys.readouterr().out == ("✓ 全部 10 对都对了，每一种键的顺序都得到同一个 id，每一处单个字符的改动都得到另一个："
                                       "键的顺序被忽略；工具、每个参数和用户都被绑定。而且在 1,024 个不同的动作里没有两个共用一个 id，"
                                       "你的 id 大约有 64 位（至少需要 64 位）：要碰上一个已批准的 id，大约要试 2^64 次。\n")


def test_write_decisions_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_write_decisions({**SOLUTIONS["check_write_decisions"](), "c": True}) is False
    assert capsys.readouterr().out == (
        "✗ (c) alice 发送 A，但路径写成 todo.md（同一个文件，用相对路径指名）：你说会写入，但真实的执行器回答 "
        "APPROVAL_REQUIRED，什么也没写。动作就是发送出去的参数：'todo.md' 指的是同一个文件，但它是另一段文本，"
        "所以是另一个没人批准过的动作（这正是预览给出标准化路径的原因）。\n"
    )
    assert check_write_decisions({**SOLUTIONS["check_write_decisions"](), "f": False}) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ (f) alice 在批准四分钟之后发送 A") and "你说什么也不写，但写入运行了。批准的有效期是 5 分钟" in out
    assert check_write_decisions({"a": True}) is False
    assert capsys.readouterr().out == "✗ decisions 里没有 b, c, d, e, f 的条目：请对全部六次尝试（a 到 f）作出判断。\n"
    assert check_write_decisions([True] * 6) is False
    assert capsys.readouterr().out == "✗ decisions 必须是形如 {'a': True, 'b': False, ...} 的 dict；你给的是一个 list。\n"
    assert check_write_decisions({**{label: False for label in "abcdef"}, "a": "yes"}) is False
    assert capsys.readouterr().out == "✗ (a)：请回答 True（写入会运行）或 False（不会）；你给的是 'yes'。\n"
    assert check_write_decisions(SOLUTIONS["check_write_decisions"]()) is True
    assert capsys.readouterr().out == "✓ 六个全对：只有确切的那个动作、对它被展示给的那个用户、没用过也没过期，才会写入。\n"
