"""Checks for notebook 02 (parsing arguments by hand).

- `check_parse_head(fn)`: the learner's `parse_head(arguments_text) -> int | None` is run on a
  battery of arguments texts (one produced by the offline model, the rest hand-made malformed
  variants) and compared with the course's real parser, `parse_read_args`.
- `check_predictions(answer)`: six arguments texts, six predicted outcomes; each text really goes
  through `loop.execute_call` on a fresh files host, and the first wrong prediction is explained.

Every message the checks write themselves follows the edition's language (`course_lib.lang.say`);
the cases' labels and the real parser's and server's messages they quote stay as they are.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from openai.types.responses import ResponseFunctionToolCall

from course_lib.arguments import ArgumentsError, parse_read_args
from course_lib.exercises import Solutions, failed, not_answered, passed
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
    ("head is 0", '{"path":"/workspace/notes.txt","head":0}'),
    ("head is negative", '{"path":"/workspace/notes.txt","head":-3}'),
    ("a second object after the first", '{"path":"/workspace/notes.txt","head":5} {"head":500}'),
    ("an array, not an object", '[{"path":"/workspace/notes.txt","head":5}]'),
    ("cut-off JSON", '{"path":"/workspace/notes.txt","head":5'),
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
    "head is 0": "head 是 0",
    "head is negative": "head 是负数",
    "a second object after the first": "第一个对象后面还有第二个对象",
    "an array, not an object": "一个数组，不是对象",
    "cut-off JSON": "截断的 JSON",
}
"""The Chinese label of each case of `check_parse_head` (the zh-CN edition's messages name it)."""


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
    """Run `fn` on every case; report the first one where it disagrees with the real parser."""
    if not_answered(fn):
        return failed(say("Not answered yet: define parse_head(arguments_text) and pass the function itself.",
                          "还没有作答：定义 parse_head(arguments_text)，并传入函数本身。"))
    if not callable(fn):
        return failed(say(f"Pass the function itself (parse_head, without parentheses); you passed {fn!r}.",
                          f"请传入函数本身（parse_head，不带括号）；你传入的是 {fn!r}。"))
    cases = [(REAL_CALL, _model_arguments_text()), *HEAD_CASES]
    for label, text in cases:
        zh_label = CASE_LABELS_ZH.get(label, label)
        accepted, head, reason = _real_head(text)
        try:
            got = fn(text)
        except ValueError as error:
            if accepted:
                return failed(say(f"case '{label}' {text.strip()}: you refused it ({type(error).__name__}: "
                                  f"{error}), but it is valid; the real parser returns head={head!r}.",
                                  f"例子 '{zh_label}' {text.strip()}：你拒绝了它（{type(error).__name__}: "
                                  f"{error}），但它是合法的；真正的解析器返回 head={head!r}。")
                              + _accepted_hint(text))
            continue
        except Exception as error:  # a crash is not a message the model can act on
            return failed(say(f"case '{label}' {text.strip()}: your function crashed with {type(error).__name__}: "
                              f"{error}. Refuse bad input with ValueError (json.JSONDecodeError is one).",
                              f"例子 '{zh_label}' {text.strip()}：你的函数崩溃了，{type(error).__name__}: "
                              f"{error}。请用 ValueError 拒绝坏输入（json.JSONDecodeError 就是一种）。"))
        if not accepted:
            return failed(say(f"case '{label}' {text.strip()}: you returned {got!r}, but it must be refused "
                              f"(the real parser says: {reason}). Raise ValueError.",
                              f"例子 '{zh_label}' {text.strip()}：你返回了 {got!r}，但它必须被拒绝"
                              f"（真正的解析器说：{reason}）。请抛出 ValueError。")
                          + _refused_hint(text, got))
        if got is not None and type(got) is not int:
            convert = say(" Convert an integral float: 5.0 is the integer 5.",
                          " 请转换整值的 float：5.0 就是整数 5。") if isinstance(got, float) else ""
            return failed(say(f"case '{label}' {text.strip()}: you returned {got!r} ({type(got).__name__}); "
                              "return an int (or None when there is no head).",
                              f"例子 '{zh_label}' {text.strip()}：你返回了 {got!r}（{type(got).__name__}）；"
                              "请返回 int（没有 head 时返回 None）。") + convert)
        if got != head:
            return failed(say(f"case '{label}' {text.strip()}: expected {head!r}, you returned {got!r}.",
                              f"例子 '{zh_label}' {text.strip()}：应为 {head!r}，你返回了 {got!r}。"))
    return passed(say("parse_head agrees with the real parser on all {n} cases.",
                      "在全部 {n} 个例子上，parse_head 与真正的解析器一致。", n=len(cases)))


def _accepted_hint(text: str) -> str:
    """What a learner who refused a valid text usually got wrong."""
    if '"head":5.0' in text or '"head":1e2' in text:
        return say(" JSON Schema's integer is any number with no fractional part, so 5.0 and 1e2 are integers: "
                   "json.loads gives a float, convert it when float.is_integer() says so.",
                   " JSON Schema 的 integer 是任何没有小数部分的数，所以 5.0 和 1e2 都是整数："
                   "json.loads 给出 float，float.is_integer() 为真时就转换它。")
    if "null" in text:
        return say(" null is the absent value (strict mode sends it): return None, do not refuse.",
                   " null 表示没有值（严格模式会发送它）：返回 None，不要拒绝。")
    return ""


def _refused_hint(text: str, got: Any) -> str:
    """Name the usual mistake behind accepting a text the real parser refuses."""
    if "true" in text:
        return say(" True is an int in Python (isinstance(True, int)), but a boolean in JSON: check type(head) is int.",
                   " 在 Python 里 True 是 int（isinstance(True, int)），在 JSON 里却是布尔值：请检查 type(head) is int。")
    if '"5"' in text:
        return say(" A string is not an integer, even if it holds digits: do not call int() on it.",
                   " 字符串不是整数，哪怕里面全是数字：不要对它调用 int()。")
    if "5.5" in text:
        return say(" int(5.5) is 5: truncating a fraction is guessing. Only a float with no fraction is an integer.",
                   " int(5.5) 是 5：截掉小数就是在猜。只有没有小数部分的 float 才是整数。")
    if "NaN" in text or "Infinity" in text:
        return say(" Python's json accepts NaN and Infinity; standard JSON does not: pass parse_constant to refuse them.",
                   " Python 的 json 接受 NaN 和 Infinity；标准 JSON 不接受：传入 parse_constant 来拒绝它们。")
    if text.count('"head"') > 1 or text.count('"path"') > 1:
        return say(" json.loads keeps the last duplicate key silently; which one counts would be a guess. "
                   "Pass object_pairs_hook to refuse duplicates.",
                   " json.loads 悄悄保留重复键中的最后一个；哪一个算数只能靠猜。传入 object_pairs_hook 来拒绝重复的键。")
    if "[" in text.lstrip()[:1]:
        return say(" The arguments must be a JSON object; check isinstance(value, dict).",
                   " 参数必须是一个 JSON 对象；请检查 isinstance(value, dict)。")
    if isinstance(got, int) and got < 1:
        return say(" head counts lines: it must be at least 1.", " head 数的是行数：它必须至少为 1。")
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


def check_predictions(answer: list[str]) -> bool:
    """Compare six predicted outcomes with what really happens to each arguments text."""
    if not_answered(answer):
        return failed(say("Not answered yet: give a list of {n} outcomes, each one of {outcomes}.",
                          "还没有作答：给出一个包含 {n} 个结果的列表，每个都是 {outcomes} 之一。",
                          n=len(PREDICTION_CASES), outcomes=", ".join(OUTCOMES)))
    if not isinstance(answer, (list, tuple)) or len(answer) != len(PREDICTION_CASES):
        return failed(say("Give a list of exactly {n} outcomes, one per arguments text, in order.",
                          "请给出一个恰好包含 {n} 个结果的列表，每段参数文本一个，按顺序排列。", n=len(PREDICTION_CASES)))
    for i, guess in enumerate(answer, start=1):
        if guess not in OUTCOMES:
            outcomes = ", ".join(OUTCOMES)
            return failed(say(f"#{i}: {guess!r} is not an outcome; use one of {outcomes}.",
                              f"#{i}：{guess!r} 不是一种结果；请使用 {outcomes} 之一。"))
    for i, (text, guess, (code, message, kind)) in enumerate(zip(PREDICTION_CASES, answer, real_outcomes()), start=1):
        if guess != code:
            who = {"app": say("refused by the app before sending", "应用在发送前就拒绝了"),
                   "tool": say("refused by the server", "被服务器拒绝")}.get(kind)
            said = say(f", {who}: {message!r}", f"，{who}：{message!r}") if who else ""
            return failed(say(f"#{i} {text}: you predicted {guess}, the real outcome is {code}{said} — {_WHY[code]}.",
                              f"#{i} {text}：你预测的是 {guess}，真实的结果是 {code}{said}。{_WHY_ZH[code]}。"))
    return passed(say("All {n} predictions match the real outcomes.", "全部 {n} 个预测都与真实结果相符。",
                      n=len(PREDICTION_CASES)))


SOLUTIONS: Solutions = {
    "check_parse_head": lambda: _parse_head_solution,
    "check_predictions": lambda: ["INVALID_INPUT", "OK", "FORBIDDEN", "INVALID_INPUT", "NOT_FOUND", "OK"],
}

