"""Wrong answers to notebook 02's exercises get a message that says what is wrong."""

import json

from course_lib.exercises.nb02 import check_parse_head, check_predictions


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
    assert check_predictions(["ok"] * 6) is False
    assert "'ok' is not an outcome" in capsys.readouterr().out
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
