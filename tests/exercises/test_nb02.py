"""Wrong answers to notebook 02's exercises get a message that says what is wrong."""

import json
import re

from course_lib.exercises.nb02 import SOLUTIONS, check_parse_head, check_predictions


def _lenient_parse_head(arguments_text):
    # the common shortcut: json.loads and take whatever "head" is
    return json.loads(arguments_text).get("head")


def _type_checked_without_duplicates(arguments_text):
    value = json.loads(arguments_text)
    if not isinstance(value, dict):
        raise ValueError("not an object")
    head = value.get("head")
    if isinstance(head, float) and head.is_integer():
        head = int(head)
    if head is not None and (type(head) is not int or head < 1):
        raise ValueError("bad head")
    return head


def _refuses_every_float(arguments_text):
    # type-strict, as the course once was: 5.0 refused although JSON Schema calls it an integer
    head = json.loads(arguments_text).get("head")
    if head is not None and (type(head) is not int or head < 1):
        raise ValueError("bad head")
    return head


def _truncates_with_int(arguments_text):
    head = json.loads(arguments_text).get("head")
    if head is None:
        return None
    if isinstance(head, (int, float)) and not isinstance(head, bool) and head >= 1:
        return int(head)  # 5.0 → 5, but 5.5 → 5 too
    raise ValueError("bad head")


def _isinstance_int(arguments_text):
    head = json.loads(arguments_text).get("head")
    if isinstance(head, float) and head.is_integer():
        head = int(head)
    if head is not None and not (isinstance(head, int) and head >= 1):
        raise ValueError("bad head")
    return head


def _crashes_on_missing_head(arguments_text):
    return int(json.loads(arguments_text)["head"])


def test_parse_head_that_accepts_a_string_is_named(capsys):
    assert check_parse_head(_lenient_parse_head) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 'head as a string'")
    assert "you returned '5', but it must be refused" in out


def test_parse_head_that_lets_duplicates_through_is_named(capsys):
    assert check_parse_head(_type_checked_without_duplicates) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 'head given twice'")
    assert "duplicate key 'head' in arguments" in out


def test_parse_head_that_crashes_is_told_to_raise_value_error(capsys):
    assert check_parse_head(_crashes_on_missing_head) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 'no head at all'")
    assert "crashed with KeyError" in out and "ValueError" in out


def test_parse_head_called_instead_of_passed_is_explained(capsys):
    assert check_parse_head(20) is False
    assert "Pass the function itself" in capsys.readouterr().out


def test_prediction_that_schema_valid_means_allowed_is_explained(capsys):
    assert check_predictions(["INVALID_INPUT", "OK", "OK", "INVALID_INPUT", "NOT_FOUND", "OK"]) is False
    out = capsys.readouterr().out
    assert out.startswith('✗ #3 {"path":"/etc/passwd"}: you predicted OK, the real outcome is FORBIDDEN')
    assert "valid against the schema is not the same as allowed" in out


def test_prediction_that_null_head_is_invalid_is_corrected(capsys):
    assert check_predictions(["INVALID_INPUT", "OK", "FORBIDDEN", "INVALID_INPUT", "NOT_FOUND", "INVALID_INPUT"]) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ #6")
    assert "the real outcome is OK" in out


def test_prediction_of_a_string_head_names_who_refused_it(capsys):
    assert check_predictions(["OK", "OK", "FORBIDDEN", "INVALID_INPUT", "NOT_FOUND", "OK"]) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ #1")
    assert "refused by the server: 'head: expected an integer (got string)'" in out


def test_prediction_with_unknown_outcome_or_wrong_length(capsys):
    assert check_predictions(["okay"] * 6) is False
    assert "'okay' is not an outcome" in capsys.readouterr().out
    assert check_predictions(["OK"]) is False
    assert "exactly 6 outcomes" in capsys.readouterr().out


def test_parse_head_that_refuses_an_integral_float_is_told_json_schema_calls_it_an_integer(capsys):
    assert check_parse_head(_refuses_every_float) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 'head as a float with no fraction'")
    assert "the real parser returns head=5" in out and "5.0 and 1e2 are integers" in out


def test_parse_head_that_truncates_a_fraction_with_int_is_named(capsys):
    assert check_parse_head(_truncates_with_int) is False
    out = capsys.readouterr().out
    assert "case 'head with a fraction'" in out and "int(5.5) is 5" in out


def test_parse_head_that_uses_isinstance_int_lets_true_through(capsys):
    assert check_parse_head(_isinstance_int) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 'head as a boolean'") and "True is an int in Python" in out


# ---- the zh-CN edition: the same checks, their own messages in Chinese --------------------------


def test_the_not_answered_messages_follow_the_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "en")
    assert check_parse_head(...) is False
    assert check_predictions(...) is False
    assert capsys.readouterr().out == (
        "✗ Not answered yet: define parse_head(arguments_text), then set answer = parse_head (the function itself, "
        "without parentheses) and run the cell again.\n"
        "✗ Not answered yet: give a list of 6 outcomes, each one of OK, INVALID_INPUT, FORBIDDEN, NOT_FOUND.\n"
    )
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_parse_head(...) is False
    assert check_predictions(...) is False
    assert capsys.readouterr().out == (
        "✗ 还没有作答：定义 parse_head(arguments_text)，然后写 answer = parse_head（函数本身，不带括号），再运行这个单元格。\n"
        "✗ 还没有作答：给出一个包含 6 个结果的列表，每个都是 OK, INVALID_INPUT, FORBIDDEN, NOT_FOUND 之一。\n"
    )


def test_parse_head_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_parse_head(_lenient_parse_head) is False
    out = capsys.readouterr().out  # the case is named by its Chinese label
    assert out.startswith("✗ 例子 'head 是字符串' ") and "你返回了 '5'，但它必须被拒绝" in out
    assert "head as a string" not in out
    assert "不要对它调用 int()" in out
    assert check_parse_head(_refuses_every_float) is False
    out = capsys.readouterr().out
    assert "但它是合法的；真正的解析器返回 head=5。" in out and "5.0 和 1e2 都是整数" in out
    assert check_parse_head(_crashes_on_missing_head) is False
    assert "请用 ValueError 拒绝坏输入" in capsys.readouterr().out
    assert check_parse_head(SOLUTIONS["check_parse_head"]()) is True
    out = capsys.readouterr().out
    assert out.startswith("✓ 在全部 ") and out.endswith("parse_head 与真正的解析器一致。\n")


def test_predictions_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    wrong = ["INVALID_INPUT", "OK", "OK", "INVALID_INPUT", "NOT_FOUND", "OK"]
    assert check_predictions(wrong) is False
    assert capsys.readouterr().out == (
        '✗ #3 {"path":"/etc/passwd"}：你预测的是 OK，真实的结果是 FORBIDDEN，被服务器拒绝：'
        "'path is outside /workspace'。符合 schema 不等于被允许。\n"
    )
    assert check_predictions(["okay"] * 6) is False
    assert "'okay' 不是一种结果" in capsys.readouterr().out
    assert check_predictions(SOLUTIONS["check_predictions"]()) is True
    assert capsys.readouterr().out == "✓ 全部 6 个预测都与真实结果相符。\n"


def test_every_parse_head_case_has_a_chinese_label():
    from course_lib.exercises.nb02 import CASE_LABELS_ZH, HEAD_CASES, REAL_CALL

    labels = [REAL_CALL, *(label for label, _ in HEAD_CASES)]
    assert set(CASE_LABELS_ZH) == set(labels)  # none missing, none left over from a removed case
    assert all(re.search("[\u4e00-\u9fff]", zh) for zh in CASE_LABELS_ZH.values())
