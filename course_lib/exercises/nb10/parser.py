"""Notebook 10, drill 6: an arguments parser.

`check_parse_arguments(fn)`: `parse_arguments(text) -> dict` on the model's real arguments texts
and on broken variants (duplicate key, NaN, Infinity, trailing data, not an object, ...),
compared with the course's `arguments.parse_arguments_text`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from course_lib.arguments import ArgumentsError, parse_arguments_text
from course_lib.exercises import failed, passed
from course_lib.exercises.answers import raised, same, shown
from course_lib.exercises.guard import guard_checks
from course_lib.exercises.nb10._common import READ, _case, _function, _returned
from course_lib.lang import say


def parse_cases() -> list[tuple[str, Any]]:
    """(label, arguments text): the model's real texts, then broken variants built from them."""
    from openai.types.responses import Response

    from course_lib.arguments import input_schema
    from course_lib.declarations import strict_schema
    from course_lib.exercises.offline import model_name
    from course_lib.offline_model import respond

    def model_text(request: str, *, strict: bool) -> str:
        parameters = strict_schema(input_schema()) if strict else input_schema()
        tool = {"type": "function", "name": READ, "description": "Read a text file.", "parameters": parameters,
                "strict": strict}  # fmt: skip
        response = Response.model_validate(respond({"model": model_name(), "input": request, "tools": [tool]}))
        return next(item.arguments for item in response.output if item.type == "function_call")

    plain = model_text("Show the first 20 lines of /workspace/notes.txt", strict=False)
    strict = model_text("Show the last 3 lines of /workspace/todo.md", strict=True)
    return [
        ("the model's arguments for head 20", plain),
        ("the model's strict arguments, with a null", strict),
        ("the same text with spaces and a newline around it", f" {plain}\n"),
        ("NaN and Infinity inside a string value", '{"path":"/workspace/notes/NaN-and-Infinity.md","head":2}'),
        ("a key's name and braces inside string values", '{"note":"path","path":"/workspace/a}{b.txt","head":2}'),
        ("the word null inside a string, and a real null", '{"path":"/workspace/null.txt","head":null}'),
        ("a duplicate key", plain[:-1] + ',"path":"/etc/passwd"}'),
        ("a duplicate key inside a nested object", '{"path":"/workspace/notes.txt","options":{"head":1,"head":2}}'),
        ("NaN inside a list", '{"path":"/workspace/notes.txt","lines":[1,NaN]}'),
        ("NaN as a number", plain.replace("20", "NaN")),
        ("Infinity as a number", plain.replace("20", "Infinity")),
        ("-Infinity as a number", plain.replace("20", "-Infinity")),
        ("a second object after the first", plain + ' {"path":"/etc/passwd"}'),
        ("a stray bracket after the object", plain + "]"),
        ("an array instead of an object", json.dumps(["/workspace/notes.txt", 20])),
        ("a string instead of an object", json.dumps("/workspace/notes.txt")),
        ("null instead of an object", "null"),
        ("text cut off in the middle", plain[: len(plain) // 2]),
        ("single quotes", plain.replace('"', "'")),
        ("an empty text", ""),
        ("only whitespace", " \n\t "),
        ("an object that was already parsed (not text)", json.loads(plain)),
    ]  # fmt: skip


_PARSE_HINTS = {
    "a duplicate key": ("json.loads keeps the LAST duplicate silently, so the model's own path is replaced by "
                        "another. Refuse duplicates with object_pairs_hook",
                        "json.loads 会悄悄保留最后一个重复的键，于是模型自己写的 path 被另一个替换了。"
                        "用 object_pairs_hook 拒绝重复的键"),
    "a duplicate key inside a nested object": ("a duplicate inside a nested object is a duplicate too: "
                                               "object_pairs_hook sees every object, at every level",
                                               "嵌套对象里的重复键也是重复键：object_pairs_hook 会看到每一层的每一个对象"),
    "NaN inside a list": ("NaN is not JSON wherever it sits, in a list too: parse_constant sees every one",
                          "NaN 不论出现在哪里都不是 JSON，列表里也一样：parse_constant 会看到每一个"),
    "only whitespace": ("whitespace alone is no object: refuse it as you refuse an empty text",
                        "只有空白也不是对象：像拒绝空文本一样拒绝它"),
    "NaN as a number": ("Python's json accepts NaN, standard JSON does not; refuse it with parse_constant",
                        "Python 的 json 接受 NaN，标准 JSON 不接受；用 parse_constant 拒绝它"),
    "Infinity as a number": ("Python's json accepts Infinity, standard JSON does not; refuse it with parse_constant",
                             "Python 的 json 接受 Infinity，标准 JSON 不接受；用 parse_constant 拒绝它"),
    "-Infinity as a number": ("Python's json accepts -Infinity, standard JSON does not; refuse it with parse_constant",
                              "Python 的 json 接受 -Infinity，标准 JSON 不接受；用 parse_constant 拒绝它"),
    "a second object after the first": ("something after the object means the text is not one value: if you use "
                                        "raw_decode, check that only whitespace is left",
                                        "对象后面还有东西，说明这段文本不是单个值：如果你用 raw_decode，要检查剩下的只有空白"),
    "a stray bracket after the object": ("only whitespace may follow the object", "对象后面只能跟空白"),
    "an array instead of an object": ("arguments are an object: check isinstance(value, dict) after parsing",
                                      "参数是一个对象：解析之后检查 isinstance(value, dict)"),
    "a string instead of an object": ("arguments are an object: check isinstance(value, dict) after parsing",
                                      "参数是一个对象：解析之后检查 isinstance(value, dict)"),
    "null instead of an object": ("arguments are an object: None is not one", "参数是一个对象：None 不是对象"),
    "an object that was already parsed (not text)": ("arguments are JSON text; a dict here means someone passed the "
                                                     "MCP-style object — refuse it instead of guessing",
                                                     "参数是 JSON 文本；这里出现 dict，说明有人传入了 MCP 那一侧的对象"
                                                     "：拒绝它，而不是去猜"),
    "single quotes": ("JSON strings use double quotes: a parser that accepts 'x' (ast.literal_eval, a quote "
                      "replace) reads text no JSON parser would",
                      "JSON 字符串用双引号：接受 'x' 的解析器（ast.literal_eval、替换引号）读的是任何 JSON 解析器都不会接受的文本"),
    "text cut off in the middle": ("a cut-off text is not an object with fewer fields: refuse it, never repair it",
                                   "截断的文本不是少了几个字段的对象：拒绝它，绝不去修补"),
    "an empty text": ("an empty text is not {}: a model that sent nothing did not ask for the defaults",
                      "空文本不是 {}：什么也没发送的模型，并没有要求使用默认值"),
}  # fmt: skip


_INSIDE_A_STRING = {"NaN and Infinity inside a string value", "a key's name and braces inside string values",
                    "the word null inside a string, and a real null"}


def check_parse_arguments(fn: Callable[[Any], dict[str, Any]]) -> bool:
    """Run `fn` on every arguments text of `parse_cases` and compare with `arguments.parse_arguments_text`."""
    if problem := _function(fn, "parse_arguments", "text"):
        return failed(problem)
    cases = parse_cases()
    for label, text in cases:
        try:
            expected: Any = parse_arguments_text(copy.deepcopy(text))
        except ArgumentsError as error:
            expected = error
        case = say("case '{label}' ({text})", "{case}（{text}）", label=label, case=_case(label), text=shown(text, 70))
        try:
            got = fn(copy.deepcopy(text))
        except (ValueError, TypeError) as error:
            if isinstance(expected, ArgumentsError):
                if isinstance(error, TypeError) and isinstance(text, str):
                    return failed(say("{case}: raise ValueError, not TypeError, for a bad arguments text.",
                                      "{case}：参数文本有误时要抛出 ValueError，而不是 TypeError。", case=case))
                continue
            hint = (say(" JSON allows whitespace around the value (raw_decode does not skip it before the value).",
                        "JSON 允许值的前后有空白（raw_decode 不会跳过值前面的空白）。")
                    if label.startswith("the same text with spaces") else
                    say(" The words are inside a string: look at the parsed values (parse_constant, object_pairs_hook), "
                        "never search the raw text.",
                        "这些词在字符串里面：要看解析出来的值（parse_constant、object_pairs_hook），绝不要在原始文本里搜索。")
                    if label in _INSIDE_A_STRING else
                    say(" JSON has null, true and false: parse it with json.loads (ast.literal_eval and eval read Python, "
                        "not JSON).", "JSON 里有 null、true 和 false：用 json.loads 解析（ast.literal_eval 和 eval 读的是 "
                        "Python，不是 JSON）。") if "null" in str(text) else "")  # fmt: skip
            return failed(say("{case}: you raised {error}, but this is valid arguments text.{hint}",
                              "{case}：你抛出了 {error}，但这是有效的参数文本。{hint}", case=case, error=raised(error), hint=hint))
        except Exception as error:
            return failed(say("{case}: parse_arguments raised {error}; refuse with ValueError.",
                              "{case}：parse_arguments 抛出了 {error}；请用 ValueError 拒绝。", case=case, error=raised(error)))
        if got is ...:
            return failed(say("Not answered yet: parse_arguments still returns ... — return the dict.",
                              "还没有作答：parse_arguments 仍然返回 ...，请返回那个字典。"))
        if isinstance(expected, ArgumentsError) and same(got, {}) and type(got) is dict and label != "an empty text":
            return failed(say("{case}: you returned {{}}; refuse it with ValueError. Returning an empty dict on a parse "
                              "error hides the model's mistake and runs the tool with defaults nobody asked for.",
                              "{case}：你返回了 {{}}；请用 ValueError 拒绝它。解析出错时返回空字典，会掩盖模型的错误，"
                              "并用没有人要求的默认值运行工具。", case=case))
        if isinstance(expected, ArgumentsError):
            hint = say(*_PARSE_HINTS.get(label, ("It is not one clean JSON object", "它不是一个干净的 JSON 对象")))
            return failed(say("{case}: you returned {got} Refuse it with ValueError. {hint}.",
                              "{case}：你返回了 {got}请用 ValueError 拒绝它。{hint}。", case=case, got=_returned(got),
                              hint=hint))
        if type(got) is not dict or not same(got, expected):
            return failed(say("{case}: you returned {got} Expected {expected}.", "{case}：你返回了 {got}应该是 {expected}。",
                              case=case, got=_returned(got), expected=shown(expected)))
    return passed(say("all {n} texts right: the model's arguments parsed (whatever words their strings hold), and "
                      "duplicates, NaN, Infinity, trailing data and non-objects refused at every level.",
                      "{n} 段文本全部正确：解析了模型的参数（不论字符串里写着什么词），并在每一层都拒绝了重复的键、NaN、"
                      "Infinity、多余的尾部数据和非对象。", n=len(cases)))


def _parse_arguments_solution(text: Any) -> dict[str, Any]:
    if not isinstance(text, str):
        raise ValueError("arguments must be JSON text")

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [key for key, _ in pairs]
        if len(keys) != len(set(keys)):
            raise ValueError("duplicate key in arguments")
        return dict(pairs)

    def no_constant(token: str) -> Any:
        raise ValueError(f"{token} is not a JSON number")

    # json.loads refuses trailing data by itself ("Extra data"); JSONDecodeError is a ValueError.
    value = json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constant)
    if not isinstance(value, dict):
        raise ValueError(f"expected a JSON object, got {type(value).__name__}")
    return value


guard_checks(globals())  # every check_… above: a time limit, bounded printing, one line whatever happens
