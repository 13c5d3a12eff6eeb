"""Checks for notebook 02 (parsing arguments by hand).

- `check_parse_head(fn)`: the learner's `parse_head(arguments_text) -> int | None` is run on a
  battery of arguments texts (one produced by the offline model, nineteen named variants, then every
  kind of JSON value head can hold in four layouts: `property_cases`) and compared with the course's
  real parser, `parse_read_args`.
- `check_predictions(answer)`: six arguments texts, six predicted outcomes; each text really goes
  through `loop.execute_call` on a fresh files host, and the first wrong prediction is explained.

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`);
the cases' labels and the real parser's and server's messages they quote stay as they are.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from openai.types.responses import ResponseFunctionToolCall

from course_lib.arguments import ArgumentsError, parse_read_args
from course_lib.exercises import Solutions, failed, not_answered, passed
from course_lib.exercises.answers import passed_a_call, raised, returned_early, shown, type_name, unassigned
from course_lib.exercises.guard import guard_checks
from course_lib.exercises.offline import model_name, offline_course
from course_lib.lang import say

# ---- exercise 1: parse_head -------------------------------------------------------------------

HEAD_CASES: list[tuple[str, str]] = [
    ("no head at all", '{"path":"/workspace/notes.txt"}'),
    ("head is null (strict mode's 'absent')", '{"path":"/workspace/notes.txt","head":null}'),
    ("extra whitespace around the object", '  {\n  "path": "notes.txt",\n  "head": 7\n}\n'),
    ("head as a string", '{"path":"/workspace/notes.txt","head":"5"}'),
    ("head as a float with no fraction", '{"path":"/workspace/notes.txt","head":5.0}'),
    ("head in exponent notation", '{"path":"/workspace/notes.txt","head":1e2}'),
    ("head with a fraction", '{"path":"/workspace/notes.txt","head":5.5}'),
    ("head as a boolean", '{"path":"/workspace/notes.txt","head":true}'),
    ("head given twice", '{"path":"/workspace/notes.txt","head":5,"head":20}'),
    ("path given twice", '{"path":"/workspace/todo.md","path":"/workspace/notes.txt","head":2}'),
    ("head is NaN", '{"path":"/workspace/notes.txt","head":NaN}'),
    ("head is Infinity", '{"path":"/workspace/notes.txt","head":Infinity}'),
    ("Infinity in another field", '{"path":"/workspace/notes.txt","head":5,"options":{"limit":Infinity}}'),
    ("head is 0", '{"path":"/workspace/notes.txt","head":0}'),
    ("head is negative", '{"path":"/workspace/notes.txt","head":-3}'),
    ("a second object after the first", '{"path":"/workspace/notes.txt","head":5} {"head":500}'),
    ("an array, not an object", '[{"path":"/workspace/notes.txt","head":5}]'),
    ("cut-off JSON", '{"path":"/workspace/notes.txt","head":5'),
    ("a duplicate key in a nested object", '{"path":"/workspace/notes.txt","head":2,"options":{"a":1,"a":2}}'),
    ("null, not an object", "null"),
]
"""(label, arguments text). The expected outcome of each comes from the real parser, not from here."""

REAL_CALL = "the offline model's real call (first 20 lines)"
CASE_LABELS_ZH = {
    REAL_CALL: "离线模型的真实调用（前 20 行）",
    "no head at all": "完全没有 head",
    "head is null (strict mode's 'absent')": "head 为 null（严格模式下的“没有值”）",
    "extra whitespace around the object": "对象前后有多余的空白",
    "head as a string": "head 是字符串",
    "head as a float with no fraction": "head 是没有小数部分的 float",
    "head in exponent notation": "head 用指数记法",
    "head with a fraction": "head 带小数",
    "head as a boolean": "head 是布尔值",
    "head given twice": "head 给了两次",
    "path given twice": "path 给了两次",
    "head is NaN": "head 是 NaN",
    "head is Infinity": "head 是 Infinity",
    "Infinity in another field": "另一个字段里有 Infinity",
    "head is 0": "head 是 0",
    "head is negative": "head 是负数",
    "a second object after the first": "第一个对象后面还有第二个对象",
    "an array, not an object": "一个数组，不是对象",
    "cut-off JSON": "截断的 JSON",
    "a duplicate key in a nested object": "嵌套对象里有重复的键",
    "null, not an object": "null，不是对象",
}
"""The Chinese label of each case of `check_parse_head` (the zh-CN edition's messages name it)."""

HEAD_TOKENS = (
    "1", "2", "7", "20", "100", "123456789012345678901234567890", "0", "-0", "-1", "-3",
    "1.0", "5.0", "1e2", "1E2", "2.5e1", "5.5", "0.5", "5e-1", "-2.0", "1e400",
    "true", "false", "null", '"5"', '"five"', '""', "[]", "[5]", "{}", '{"n":5}', "NaN", "Infinity", "-Infinity",
)  # fmt: skip
"""Every kind of JSON value `head` can hold: integers on both sides of 1, integral and fractional
floats in each notation, and every other JSON type (plus the three constants JSON does not have)."""

HEAD_LAYOUTS = (
    '{{"path":"/workspace/notes.txt","head":{head}}}',
    '{{"head":{head},"path":"notes.txt"}}',
    '{{\n  "path" : "/workspace/todo.md" ,\n  "head" : {head}\n}}',
    '{{"path":"/workspace/notes.txt","head":{head},"head":1}}',
)
"""Where `head` sits: first or last, among whitespace, and given twice."""


def property_cases() -> list[tuple[str, str, str]]:
    """(English label, Chinese label, arguments text) for every head token in every layout: the
    exercise's promise holds for every value of head, so the check tries every kind, not a sample."""
    return [(f"head {head}, layout {n}", f"head 为 {head}，布局 {n}", layout.format(head=head))
            for n, layout in enumerate(HEAD_LAYOUTS, start=1) for head in HEAD_TOKENS]


def _model_arguments_text() -> str:
    """The arguments text the offline model really produces for "first 20 lines of notes.txt"."""
    course = offline_course()
    try:
        response = course.client.responses.create(
            model=model_name(),
            input="Show the first 20 lines of /workspace/notes.txt",
            tools=course.host.responses_tools(),
        )
    finally:
        course.close()
    return next(item.arguments for item in response.output if item.type == "function_call")


def _real_head(text: str) -> tuple[bool, Any, str]:
    """(accepted, head, refusal message) according to the course's real parser and rule."""
    try:
        return True, parse_read_args(text).head, ""
    except ArgumentsError as error:
        return False, None, error.message


def check_parse_head(fn: Callable[[str], int | None]) -> bool:
    """Run `fn` on the model's real text, the named cases, then every head token in every layout
    (`property_cases`); report the first one where it disagrees with the real parser."""
    if not_answered(fn):
        return failed(unassigned("parse_head", "parse_head(arguments_text)"))
    if not callable(fn):
        return failed(passed_a_call("parse_head", fn))
    cases = [(REAL_CALL, CASE_LABELS_ZH[REAL_CALL], _model_arguments_text()),
             *((label, CASE_LABELS_ZH[label], text) for label, text in HEAD_CASES), *property_cases()]
    for label, zh_label, text in cases:
        accepted, head, reason = _real_head(text)
        where = say("case '{label}' {text}", "例子 '{label}' {text}", label=say(label, zh_label), text=" ".join(text.split()))
        try:
            got = fn(text)
        except ValueError as error:
            if accepted:
                return failed(say("{where}: you refused it ({error}), but it is valid; the real parser returns "
                                  "head={head!r}.",
                                  "{where}：你拒绝了它（{error}），但它是合法的；真正的解析器返回 head={head!r}。",
                                  where=where, error=raised(error), head=head) + _accepted_hint(text))
            continue
        except Exception as error:  # a crash is not a message the model can act on
            return failed(say("{where}: your function crashed with {error}. Refuse bad input with ValueError "
                              "(json.JSONDecodeError is one).",
                              "{where}：你的函数崩溃了，{error}。请用 ValueError 拒绝坏输入（json.JSONDecodeError 就是一种）。",
                              where=where, error=raised(error)) + _crash_hint(text, error))
        if not accepted:
            return failed(say("{where}: you returned {got}, but it must be refused (the real parser says: {reason}). "
                              "Raise ValueError.",
                              "{where}：你返回了 {got}，但它必须被拒绝（真正的解析器说：{reason}）。请抛出 ValueError。",
                              where=where, got=shown(got), reason=reason) + _refused_hint(text, got))
        if got is not None and type(got) is not int:
            convert = say(" Convert an integral float: 5.0 is the integer 5.",
                          " 请转换整值的 float：5.0 就是整数 5。") if isinstance(got, float) else ""
            return failed(say("{where}: you returned {got} ({kind}); return an int (or None when there is no head).",
                              "{where}：你返回了 {got}（{kind}）；请返回 int（没有 head 时返回 None）。",
                              where=where, got=shown(got), kind=type_name(got)) + convert)
        if got != head:
            return failed(say("{where}: expected {head!r}, you returned {got}.", "{where}：应为 {head!r}，你返回了 {got}。",
                              where=where, head=head, got=shown(got)) + (returned_early(got) if head else ""))
    return passed(say("parse_head agrees with the real parser on all {n} cases (every kind of head value, in "
                      "four layouts).",
                      "在全部 {n} 个例子上（每一种 head 值，四种布局），parse_head 与真正的解析器一致。", n=len(cases)))


def _look(text: str) -> dict[str, Any]:
    """What a lenient read of `text` finds: the parsed value (or None), every head given, whether
    any object repeats a key, and the constants (NaN, Infinity) used."""
    found: dict[str, Any] = {"value": None, "heads": [], "duplicates": False, "constants": []}

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in items]
        found["duplicates"] = found["duplicates"] or len(keys) != len(set(keys))
        found["heads"] += [value for key, value in items if key == "head"]
        return dict(items)

    def constant(token: str) -> float:
        found["constants"].append(token)
        return float(token)

    try:
        found["value"] = json.loads(text, object_pairs_hook=pairs, parse_constant=constant)
    except ValueError:
        pass
    return found


def _accepted_hint(text: str) -> str:
    """What a learner who refused a valid text usually got wrong."""
    heads = _look(text)["heads"]
    if any(isinstance(head, float) for head in heads):
        return say(" JSON Schema's integer is any number with no fractional part, so 5.0 and 1e2 are integers: "
                   "json.loads gives a float, convert it when float.is_integer() says so.",
                   " JSON Schema 的 integer 是任何没有小数部分的数，所以 5.0 和 1e2 都是整数："
                   "json.loads 给出 float，float.is_integer() 为真时就转换它。")
    if heads and heads[-1] is None:
        return say(" null is the absent value (strict mode sends it): return None, do not refuse.",
                   " null 表示没有值（严格模式会发送它）：返回 None，不要拒绝。")
    if not heads:
        return say(" head is optional: no head means return None.", " head 是可选的：没有 head 就返回 None。")
    return ""


def _refused_hint(text: str, got: Any) -> str:
    """Name the usual mistake behind accepting a text the real parser refuses."""
    look = _look(text)
    heads = look["heads"]
    if look["constants"]:
        return say(" Python's json accepts NaN and Infinity; standard JSON does not: pass parse_constant to refuse them.",
                   " Python 的 json 接受 NaN 和 Infinity；标准 JSON 不接受：传入 parse_constant 来拒绝它们。")
    if look["duplicates"]:
        return say(" json.loads keeps the last duplicate key silently; which one counts would be a guess. "
                   "Pass object_pairs_hook to refuse duplicates (it sees every object, nested ones too).",
                   " json.loads 悄悄保留重复键中的最后一个；哪一个算数只能靠猜。传入 object_pairs_hook 来拒绝重复的键"
                   "（它会看到每一个对象，嵌套的也不例外）。")
    if look["value"] is not None and not isinstance(look["value"], dict) or text.strip() == "null":
        return say(" The arguments must be a JSON object; check isinstance(value, dict).",
                   " 参数必须是一个 JSON 对象；请检查 isinstance(value, dict)。")
    head = heads[-1] if heads else None
    if isinstance(head, bool):
        return say(" True is an int in Python (isinstance(True, int)), but a boolean in JSON: check type(head) is int.",
                   " 在 Python 里 True 是 int（isinstance(True, int)），在 JSON 里却是布尔值：请检查 type(head) is int。")
    if isinstance(head, str):
        return say(" A string is not an integer, even if it holds digits: do not call int() on it.",
                   " 字符串不是整数，哪怕里面全是数字：不要对它调用 int()。")
    if isinstance(head, float) and math.isinf(head):
        return say(" json.loads reads a number too large for a float as inf, which is no integer.",
                   " json.loads 把大到 float 装不下的数读成 inf，它不是整数。")
    if isinstance(head, float) and not head.is_integer():
        return say(" int(5.5) is 5: truncating a fraction is guessing. Only a float with no fraction is an integer.",
                   " int(5.5) 是 5：截掉小数就是在猜。只有没有小数部分的 float 才是整数。")
    if isinstance(head, (list, dict)):
        return say(" head holds a JSON {kind}, not an integer: check type(head) is int.",
                   " head 里是一个 JSON {kind}，不是整数：请检查 type(head) is int。",
                   kind="array" if isinstance(head, list) else "object")
    if isinstance(head, (int, float)) and head < 1:
        return say(" head counts lines: it must be at least 1.", " head 数的是行数：它必须至少为 1。")
    return ""


def _crash_hint(text: str, error: Exception) -> str:
    """The usual cause of a crash (not a ValueError) on one text."""
    value = _look(text)["value"]
    if isinstance(error, AttributeError) and not isinstance(value, dict):
        return say(" The arguments must be a JSON object; check isinstance(value, dict) before value.get(...).",
                   " 参数必须是一个 JSON 对象；在 value.get(...) 之前先检查 isinstance(value, dict)。")
    if isinstance(error, KeyError):
        return say(" head may be absent: read it with value.get(\"head\").", " head 可能不存在：用 value.get(\"head\") 读取。")
    if isinstance(error, TypeError):
        return say(" Check type(head) before comparing or converting it.", " 在比较或转换之前，先检查 type(head)。")
    return ""


def _parse_head_solution(arguments_text: str) -> int | None:
    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate key")
        return dict(pairs)

    def no_constants(token: str) -> Any:
        raise ValueError(f"{token} is not JSON")

    value = json.loads(arguments_text, object_pairs_hook=no_duplicates, parse_constant=no_constants)
    if not isinstance(value, dict):
        raise ValueError("arguments must be a JSON object")
    head = value.get("head")
    if head is None:
        return None
    if isinstance(head, float) and head.is_integer():  # JSON Schema: 5.0 and 1e2 are integers
        head = int(head)
    if type(head) is not int or head < 1:  # type(...) is int: True is a boolean, not an integer
        raise ValueError(f"head must be an integer >= 1, got {head!r}")
    return head


# ---- exercise 2: predict the outcome ----------------------------------------------------------

OUTCOMES = ("OK", "INVALID_INPUT", "FORBIDDEN", "NOT_FOUND")

PREDICTION_CASES: list[str] = [
    '{"path":"/workspace/notes.txt","head":"5"}',
    '{"path":"/workspace/notes.txt","tail":3}',
    '{"path":"/etc/passwd"}',
    '{"path":"/workspace/notes.txt","head":5,"tail":5}',
    '{"path":"/workspace/missing.txt","head":5}',
    '{"path":"notes.txt","head":null}',
]
"""The six arguments texts of the prediction exercise, in order."""

_WHY = {
    "OK": "the real call succeeded",
    "INVALID_INPUT": "the arguments break the rule",
    "FORBIDDEN": "valid against the schema is not the same as allowed",
    "NOT_FOUND": "valid and allowed, but a valid path does not make the file exist",
}
_WHY_ZH = {
    "OK": "真实的调用成功了",
    "INVALID_INPUT": "参数违反了规则",
    "FORBIDDEN": "符合 schema 不等于被允许",
    "NOT_FOUND": "合法且被允许，但合法的路径并不能让文件存在",
}


def real_outcomes(cases: list[str] = PREDICTION_CASES) -> list[tuple[str, str, str]]:
    """Run each arguments text through `execute_call` on a fresh files host:
    (outcome code, error message or "", who decided: "app", "tool" or "" on success)."""
    from course_lib.host import files_host
    from course_lib.loop import execute_call

    outcomes = []
    with files_host() as host:
        for i, text in enumerate(cases, start=1):
            call = ResponseFunctionToolCall(type="function_call", call_id=f"call_predict_{i}",
                                            name="fs__read_text_file", arguments=text)
            _, link = execute_call(call, host)
            if link.ok:
                outcomes.append(("OK", "", ""))
            else:
                error = json.loads(link.output)["error"]
                outcomes.append((error["code"], error["message"], error["kind"]))
    return outcomes


def _why_valid(text: str) -> str:
    """Why a text the learner expected to be refused is fine: what in it looked wrong, and is not."""
    value = json.loads(text)
    reasons = []
    if "head" in value and value["head"] is None:
        reasons.append(say("head null is the absent value (strict mode sends it), so the whole file is read",
                           "head 为 null 表示没有值（严格模式会发送它），所以读取整个文件"))
    if "tail" in value:
        reasons.append(say("tail is part of the rule too (an integer of at least 1)", "tail 也是规则的一部分（至少为 1 的整数）"))
    if not str(value.get("path", "")).startswith("/"):
        reasons.append(say("a relative path resolves under /workspace", "相对路径在 /workspace 之下解析"))
    return say("; ", "；").join(reasons) or _WHY["OK"]


def _outcome(guess: Any) -> Any:
    """A prediction as the check reads it: "ok" and " Invalid_Input " name outcomes too."""
    return guess.strip().upper() if isinstance(guess, str) else guess


def check_predictions(answer: list[str]) -> bool:
    """Compare six predicted outcomes with what really happens to each arguments text."""
    outcomes = ", ".join(OUTCOMES)
    if not_answered(answer):
        return failed(say("Not answered yet: give a list of {n} outcomes, each one of {outcomes}.",
                          "还没有作答：给出一个包含 {n} 个结果的列表，每个都是 {outcomes} 之一。",
                          n=len(PREDICTION_CASES), outcomes=outcomes))
    if not isinstance(answer, (list, tuple)) or len(answer) != len(PREDICTION_CASES):
        size = say(" (yours has {n})", "（你的有 {n} 个）", n=len(answer)) if isinstance(answer, (list, tuple)) else \
            say(" (you gave {kind})", "（你给的是 {kind}）", kind=type_name(answer))
        return failed(say("Give a list of exactly {n} outcomes, one per arguments text, in order{size}.",
                          "请给出一个恰好包含 {n} 个结果的列表，每段参数文本一个，按顺序排列{size}。",
                          n=len(PREDICTION_CASES), size=size))
    guesses = [_outcome(guess) for guess in answer]
    for i, guess in enumerate(guesses, start=1):
        if guess is ...:
            return failed(say("#{i} is not answered yet: replace its ... with one of {outcomes}.",
                              "#{i} 还没有作答：把它的 ... 换成 {outcomes} 之一。", i=i, outcomes=outcomes))
        if not isinstance(guess, str) or guess not in OUTCOMES:
            return failed(say("#{i}: {guess} is not an outcome; use one of {outcomes}.",
                              "#{i}：{guess} 不是一种结果；请使用 {outcomes} 之一。", i=i, guess=shown(answer[i - 1]),
                              outcomes=outcomes))
    for i, (text, guess, (code, message, who)) in enumerate(zip(PREDICTION_CASES, guesses, real_outcomes()), start=1):
        if guess != code:
            by = {"app": say("refused by the app before sending", "应用在发送前就拒绝了"),
                  "tool": say("refused by the server", "被服务器拒绝")}.get(who)
            said = say(f", {by}: {message!r}", f"，{by}：{message!r}") if by else ""
            why = (_why_valid(text), _why_valid(text)) if code == "OK" else (_WHY[code], _WHY_ZH[code])
            return failed(say(f"#{i} {text}: you predicted {guess}, the real outcome is {code}{said} — {why[0]}.",
                              f"#{i} {text}：你预测的是 {guess}，真实的结果是 {code}{said}。{why[1]}。"))
    return passed(say("All {n} predictions match the real outcomes.", "全部 {n} 个预测都与真实结果相符。",
                      n=len(PREDICTION_CASES)))


SOLUTIONS: Solutions = {
    "check_parse_head": lambda: _parse_head_solution,
    "check_predictions": lambda: ["INVALID_INPUT", "OK", "FORBIDDEN", "INVALID_INPUT", "NOT_FOUND", "OK"],
}



guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
