"""Looking at a learner's answer without being broken by it.

An answer is whatever Python lets a learner write: a function that raises or returns too early, an
object whose `repr` raises, an integer too long to print (`repr(10**5000)` raises `ValueError`), a
list nested deeper than the interpreter recurses, a generator, bytes. A check must still answer
with one line that names the mistake. These helpers give it the words, and never raise:

- `shown(value)`: a short `repr`, whatever the value;
- `type_name(value)`: the type's name, as a message says it;
- `raised(error)`: `"KeyError: 'text'"`, for an exception the learner's code raised;
- `unassigned(name, signature)`: the message for a starter cell whose `answer = ...` line was
  never set, naming that step;
- `passed_a_call(name, value)`: the message for a function answer that is not a function;
- `returned_early(value)`: a hint when a function returned None (its body still `...`, a
  `return` missing, a loop that returned on its first turn);
- `not_json(value)`: why a value cannot go on the wire as JSON, or None;
- `as_dict(value)`: a plain copy of a mapping answer, or None when it is not one (or reading it
  raises);
- `same(a, b)`: `a == b`, False when comparing raises.

Every text follows the edition's language (`course_lib.lang.say`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from course_lib.lang import say


def shown(value: Any, limit: int = 60) -> str:
    """`repr(value)` on one line, cut to `limit` characters; a placeholder when repr itself fails."""
    if type(value) is str and len(value) > limit:
        value = value[: limit - 1] + "…"  # cut the text, not its repr, so the quotes stay balanced
    try:
        text = repr(value)
    except Exception:  # a repr that raises, an int too long to print, a list nested too deep
        return say("<a {kind} that cannot be shown>", "<一个无法显示的 {kind}>", kind=type_name(value))
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def type_name(value: Any) -> str:
    """The name of `value`'s type (`type(value).__name__`, which no object can override)."""
    return type(value).__name__


def raised(error: BaseException, limit: int = 120) -> str:
    """`"KeyError: 'text'"`: an exception as a message quotes it; its text cut to `limit`."""
    try:
        text = str(error)
    except Exception:
        text = ""
    text = " ".join(text.split())
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return f"{type_name(error)}: {text}" if text else type_name(error)


def unassigned(name: str, signature: str) -> str:
    """The message for a function exercise whose `answer = ...` line still holds the starter."""
    return say("Not answered yet: define {signature}, then set answer = {name} (the function itself, "
               "without parentheses) and run the cell again.",
               "还没有作答：定义 {signature}，然后写 answer = {name}（函数本身，不带括号），再运行这个单元格。",
               signature=signature, name=name)


def passed_a_call(name: str, value: Any) -> str:
    """The message for an answer that should be the function `name` but is something else."""
    return say("Pass the function itself ({name}, without parentheses); you passed {kind} {value}.",
               "请传入函数本身（{name}，不带括号）；你传入的是 {kind} {value}。",
               name=name, kind=type_name(value), value=shown(value))


def returned_early(value: Any) -> str:
    """A hint for a function that returned None, else ''."""
    if value is None:
        return say(" Your function returned None: is its body still `...`, or is a `return` missing (or "
                   "inside the loop, so it returns on the first turn)?",
                   " 你的函数返回了 None：它的函数体是不是还是 `...`，或者少了 `return`（或者 `return` 写在了循环里，"
                   "第一轮就返回了）？")
    return ""


def not_json(value: Any) -> str | None:
    """Why `value` cannot be sent as JSON (what `json.dumps` refuses), or None when it can."""
    try:
        json.dumps(value, allow_nan=False)
    except Exception as error:  # TypeError, ValueError, RecursionError, or whatever an object raises
        return raised(error)
    return None


def as_dict(value: Any) -> dict[Any, Any] | None:
    """A plain `dict` copy of `value` when it is a mapping that can be read; else None."""
    if not isinstance(value, Mapping):
        return None
    try:
        return {key: value[key] for key in list(value)}
    except Exception:  # a mapping whose keys or items raise
        return None


def same(a: Any, b: Any) -> bool:
    """`a == b` as a plain bool; False when the comparison itself raises (an object's `__eq__`)."""
    try:
        return bool(a == b)
    except Exception:
        return False
