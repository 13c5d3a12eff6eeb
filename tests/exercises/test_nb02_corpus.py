"""Notebook 02's checks against the answers learners really write: one wrong answer per mistake the
exercise is about (each must fail naming it, in English and in the zh-CN edition), other correct
answers than the reference (each must pass), and the property the exercise promises (parse_head
right for every kind of head value, not for a sample)."""

from __future__ import annotations

import json

import pytest

from course_lib.arguments import ArgumentsError, parse_read_args
from course_lib.exercises.nb02 import HEAD_TOKENS, SOLUTIONS, check_parse_head, check_predictions, property_cases

# ---- exercise 1: parse_head -----------------------------------------------------------------------

reference = SOLUTIONS["check_parse_head"]()


def strict_loads(text):
    """The parts of the reference learners get right: duplicates and constants refused."""

    def pairs(items):
        if len({k for k, _ in items}) != len(items):
            raise ValueError("duplicate key")
        return dict(items)

    def constant(token):
        raise ValueError(token)

    value = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    if not isinstance(value, dict):
        raise ValueError("not an object")
    return value


def int_of_a_string(text):
    head = strict_loads(text).get("head")
    return None if head is None else int(head) if isinstance(head, str) else reference(text)


def isinstance_int(text):
    head = strict_loads(text).get("head")
    if head is None:
        return None
    if isinstance(head, float) and head.is_integer():
        head = int(head)
    if not isinstance(head, int) or head < 1:  # the mistake: True passes isinstance(head, int)
        raise ValueError(head)
    return head


def refuses_integral_floats(text):
    head = strict_loads(text).get("head")
    if head is not None and (type(head) is not int or head < 1):
        raise ValueError(head)
    return head


def truncates_fractions(text):
    head = strict_loads(text).get("head")
    if isinstance(head, float) and not head != head and abs(head) != float("inf"):
        head = int(head)
    return reference(json.dumps({"path": "notes.txt", "head": head})) if head is not None else None


def plain_json_loads(text):
    """No hooks: NaN and duplicates slip through."""
    value = json.loads(text)
    if not isinstance(value, dict):
        raise ValueError("not an object")
    head = value.get("head")
    if head is None:
        return None
    if isinstance(head, float) and head.is_integer():
        head = int(head)
    if type(head) is not int or head < 1:
        raise ValueError(head)
    return head


def hooks_but_top_level_duplicates_only(text):
    objects = []  # every object's pairs, the outermost last: only that one is looked at
    value = json.loads(text, object_pairs_hook=lambda items: objects.append(items) or dict(items),
                       parse_constant=lambda token: (_ for _ in ()).throw(ValueError(token)))
    top = objects[-1] if objects else []
    if len({k for k, _ in top}) != len(top):
        raise ValueError("duplicate key")
    return reference(json.dumps(value))


def null_refused(text):
    value = strict_loads(text)
    if "head" in value and value["head"] is None:
        raise ValueError("head is null")
    return reference(text)


def zero_accepted(text):
    head = strict_loads(text).get("head")
    if isinstance(head, float) and head.is_integer():
        head = int(head)
    if head is not None and type(head) is not int:
        raise ValueError(head)
    return head


def head_read_with_brackets(text):
    return reference(text) if '"head"' in text else strict_loads(text)["head"]


def arrays_not_refused(text):
    value = json.loads(text)
    return reference(json.dumps(value[0])) if isinstance(value, list) else reference(text)


def type_error_instead_of_value_error(text):
    head = strict_loads(text).get("head")
    if head is not None and type(head) is not int:
        raise TypeError("head is not an int")
    return reference(text)


def returns_a_float(text):
    head = strict_loads(text).get("head")
    return float(head) if isinstance(head, float) and head.is_integer() else reference(text)


def starter_body(text):
    ...  # your code here


PARSE_WRONG = [  # (what the learner did, answer, English words, Chinese words)
    ("int() on a string", int_of_a_string, ["case 'head as a string'", "A string is not an integer"],
     ["例子 'head 是字符串'", "字符串不是整数"]),
    ("isinstance(head, int) lets True in", isinstance_int,
     ["case 'head as a boolean'", "True is an int in Python", "type(head) is int"], ["在 Python 里 True 是 int"]),
    ("5.0 refused", refuses_integral_floats, ["case 'head as a float with no fraction'", "you refused it",
                                              "5.0 and 1e2 are integers"], ["JSON Schema 的 integer 是任何没有小数部分的数"]),
    ("5.5 truncated", truncates_fractions, ["case 'head with a fraction'", "int(5.5) is 5"], ["int(5.5) 是 5"]),
    ("json.loads without hooks", plain_json_loads, ["case 'head given twice'", "object_pairs_hook"],
     ["传入 object_pairs_hook 来拒绝重复的键"]),
    ("duplicates looked for at the top level only", hooks_but_top_level_duplicates_only,
     ["case 'a duplicate key in a nested object'", "nested ones too"], ["嵌套对象里有重复的键", "嵌套的也不例外"]),
    ("null refused", null_refused, ["case 'head is null", "null is the absent value"], ["null 表示没有值"]),
    ("0 accepted", zero_accepted, ["case 'head is 0'", "it must be at least 1"], ["它必须至少为 1"]),
    ("value['head'] on a text without head", head_read_with_brackets,
     ["case 'no head at all'", "crashed with KeyError", 'value.get("head")'], ["head 可能不存在"]),
    ("an array taken for the object", arrays_not_refused,
     ["case 'an array, not an object'", "must be refused", "isinstance(value, dict)"], ["参数必须是一个 JSON 对象"]),
    ("TypeError instead of ValueError", type_error_instead_of_value_error,
     ["crashed with TypeError", "Refuse bad input with ValueError"], ["请用 ValueError 拒绝坏输入"]),
    ("returns the float", returns_a_float, ["(float); return an int", "5.0 is the integer 5"], ["请转换整值的 float"]),
    ("the starter's body", starter_body, ["expected 20, you returned None", "Your function returned None"],
     ["应为 20，你返回了 None", "它的函数体是不是还是 `...`"]),
    ("called instead of passed", 20, ["Pass the function itself (parse_head", "int 20"], ["请传入函数本身（parse_head"]),
    ("answer = ... never set", ..., ["set answer = parse_head"], ["answer = parse_head"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in PARSE_WRONG], ids=[row[0] for row in PARSE_WRONG])
def test_parse_head_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_parse_head, answer, en, zh)


def with_a_decoder_class(arguments_text):
    """Another shape: a JSONDecoder with both hooks, a ValueError subclass of its own."""

    class Refused(ValueError):
        pass

    def pairs(items):
        keys = [key for key, _ in items]
        if len(set(keys)) < len(keys):
            raise Refused("duplicate key")
        return dict(items)

    def constant(token):
        raise Refused(token)

    value = json.JSONDecoder(object_pairs_hook=pairs, parse_constant=constant).decode(arguments_text)
    match value:
        case {"head": None}:
            return None
        case dict() if "head" not in value:
            return None
        case {"head": bool()}:
            raise Refused("boolean")
        case {"head": int() as head} if head >= 1:
            return head
        case {"head": float() as head} if head.is_integer() and head >= 1:
            return int(head)
    raise Refused(f"bad arguments {value!r}")


def with_the_courses_parser(arguments_text):
    """The course's own parser (notebook 02 builds it) answers the question too."""
    try:
        return parse_read_args(arguments_text).head
    except ArgumentsError as error:
        raise ValueError(error.message) from None


@pytest.mark.parametrize("answer", [with_a_decoder_class, with_the_courses_parser], ids=["JSONDecoder", "the course's parser"])
def test_parse_head_other_right_answers_pass(corpus, answer):
    corpus.right(check_parse_head, answer)


def test_every_head_token_is_tried_in_every_layout():
    cases = property_cases()
    assert len(cases) == len(HEAD_TOKENS) * 4
    kinds = {type(json.loads(token)) for token in HEAD_TOKENS if token not in ("NaN", "Infinity", "-Infinity")}
    assert kinds == {int, float, bool, type(None), str, list, dict}


def test_a_heuristic_right_on_every_named_case_fails_on_the_property(corpus):
    """head == int(head) as the integrality test: right on all 19 named cases, but 1e400 is a finite
    literal that json.loads reads as inf, and int(inf) raises OverflowError."""

    def integral_by_int(text):
        value = strict_loads(text)
        head = value.get("head")
        if isinstance(head, float) and head == int(head):
            head = int(head)
        if head is not None and (type(head) is not int or head < 1):
            raise ValueError(head)
        return head

    corpus.wrong(check_parse_head, integral_by_int, ["case 'head 1e400, layout 1'", "crashed with OverflowError"],
                 ["例子 'head 为 1e400，布局 1'"])


# ---- exercise 2: predict the outcome --------------------------------------------------------------

RIGHT = SOLUTIONS["check_predictions"]()


def predicted(**changes: str) -> list[str]:
    """The right predictions with some changed: predicted(p1="OK")."""
    guesses = list(RIGHT)
    for key, value in changes.items():
        guesses[int(key[1:]) - 1] = value
    return guesses


PREDICT_WRONG = [
    ("a string of digits taken for an integer", predicted(p1="OK"), ["#1", "the real outcome is INVALID_INPUT",
                                                                      "the arguments break the rule"], ["参数违反了规则"]),
    ("tail taken for an unknown field", predicted(p2="INVALID_INPUT"), ["#2", "tail is part of the rule too"],
     ["tail 也是规则的一部分"]),
    ("valid taken for allowed", predicted(p3="OK"), ["#3", "FORBIDDEN", "valid against the schema is not the same as allowed"],
     ["符合 schema 不等于被允许"]),
    ("an outside path taken for a schema error", predicted(p3="INVALID_INPUT"), ["the real outcome is FORBIDDEN"],
     ["真实的结果是 FORBIDDEN"]),
    ("head and tail together taken for fine", predicted(p4="OK"), ["#4", "Cannot specify both head and tail"],
     ["参数违反了规则"]),
    ("a valid path taken for an existing file", predicted(p5="OK"), ["#5", "NOT_FOUND", "a valid path does not make the file exist"],
     ["合法的路径并不能让文件存在"]),
    ("null and a relative path taken for errors", predicted(p6="INVALID_INPUT"),
     ["#6", "head null is the absent value", "a relative path resolves under /workspace"], ["相对路径在 /workspace 之下解析"]),
    ("a word that is not an outcome", predicted(p2="ERROR"), ["#2: 'ERROR' is not an outcome"], ["'ERROR' 不是一种结果"]),
    ("five predictions for six texts", RIGHT[:5], ["exactly 6 outcomes", "(yours has 5)"], ["（你的有 5 个）"]),
    ("one left as the starter's ...", predicted(p4=...), ["#4 is not answered yet"], ["#4 还没有作答"]),
]  # fmt: skip


@pytest.mark.parametrize(("answer", "en", "zh"), [row[1:] for row in PREDICT_WRONG], ids=[row[0] for row in PREDICT_WRONG])
def test_predictions_wrong_answer_names_its_mistake(corpus, answer, en, zh):
    corpus.wrong(check_predictions, answer, en, zh)


@pytest.mark.parametrize("answer", [tuple(RIGHT), [code.lower() for code in RIGHT]], ids=["a tuple", "lower case"])
def test_predictions_other_right_answers_pass(corpus, answer):
    corpus.right(check_predictions, answer)
