"""Looking at a learner's answer without being broken by it.

An answer is whatever Python lets a learner write: a function that raises or returns too early, an
object whose `repr` raises, an integer too long to print (`repr(10**5000)` raises `ValueError`), a
list nested deeper than the interpreter recurses, a generator, bytes. A check must still answer
with one line that names the mistake. These helpers give it the words, and never raise:

- `shown(value)`: a short `repr`, whatever the value;
- `difference(a, b)`: two values cut around where they first differ (never two equal-looking texts);
- `type_name(value)`: the type's name, as a message says it;
- `raised(error)`: `"KeyError: 'text'"`, for an exception the learner's code raised;
- `unassigned(name, signature)`: the message for a starter cell whose `answer = ...` line was
  never set: it names the function the learner defined but did not pass, or the starter still
  there (`is_starter`);
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

import dis
import inspect
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


def difference(a: Any, b: Any, limit: int = 60) -> tuple[str, str]:
    """Two values as a message shows them side by side, each cut to about `limit` characters
    *around where they first differ*, so two different texts never look the same:
    `…'e": 12}'` and `…'e": "12"}'`. Values that are not `str` are compared by their `repr`."""
    texts = [value if type(value) is str else shown(value, 10_000) for value in (a, b)]
    if all(len(text) <= limit for text in texts) or texts[0] == texts[1]:
        return shown(a, max(limit, 12)), shown(b, max(limit, 12))
    first = next((i for i, (x, y) in enumerate(zip(*texts)) if x != y), min(map(len, texts)))
    start = max(0, first - limit // 3)
    cut = []
    for value, text in zip((a, b), texts):
        window = text[start:start + limit]
        window = repr(window) if type(value) is str else window  # a repr is shown as it is
        cut.append(("…" if start else "") + window + ("…" if start + limit < len(text) else ""))
    return cut[0], cut[1]


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


def unassigned(name: str, signature: str, *, through: str = "answer") -> str:
    """The message for a function exercise whose answer is still the starter (`...` or None).

    It looks at the cell that called the check (`guard.caller_namespace`): a learner who defined
    `name` but did not set `answer` is told exactly that; one whose `name` still has the starter's
    body (`...`) is told to write it. `through` is how the cell hands the function over: "answer"
    (`answer = name`, then `check(answer)`), or "" when the cell passes it straight to the check.
    """
    found = _defined_in_caller(name)
    set_it = (say("set answer = {name} (the function itself, without parentheses)",
                  "写 answer = {name}（函数本身，不带括号）", name=name) if through == "answer" else
              say("pass the function itself ({name}, without parentheses) to the check",
                  "把函数本身（{name}，不带括号）传给检查", name=name))  # fmt: skip
    if found is not None and not is_starter(found):
        given = say("answer", " answer ") if through == "answer" else say("what the check was given", "传给检查的")
        return say("You defined {name}, but {given} is still ...: {set_it} and run the cell again.",
                   "你已经定义了 {name}，但{given}仍然是 ...：{set_it}，再运行这个单元格。", name=name, set_it=set_it,
                   given=given)
    if found is not None:
        return say("Not answered yet: {name} is still the starter (its body is only ...). Write its body, then "
                   "{set_it} and run the cell again.",
                   "还没有作答：{name} 仍然是起始代码（函数体只有 ...）。写好函数体，然后{set_it}，再运行这个单元格。",
                   name=name, set_it=set_it)
    return say("Not answered yet: define {signature}, then {set_it} and run the cell again.",
               "还没有作答：定义 {signature}，然后{set_it}，再运行这个单元格。", signature=signature, set_it=set_it)


def _defined_in_caller(name: str) -> Any:
    """The function `name` in the namespace of the cell that called the running check, or None."""
    from course_lib.exercises.guard import caller_namespace

    namespace = caller_namespace()
    if namespace is None:  # called outside the guard: the first caller outside the course's library
        frame = inspect.currentframe()
        while frame is not None and str(frame.f_globals.get("__name__", "")).startswith("course_lib"):
            frame = frame.f_back
        namespace = frame.f_globals if frame is not None else {}
    try:
        found = namespace.get(name)
    except Exception:  # a namespace that cannot be read: say nothing about it
        return None
    return found if inspect.isfunction(found) or inspect.isclass(found) else None


def is_starter(fn: Any) -> bool:
    """True when `fn`'s body is only the starter's: `...`, `pass`, a docstring, or `return ...`."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return False
    steps = [i for i in dis.get_instructions(code) if i.opname not in ("RESUME", "NOP", "CACHE")]
    if [i.opname for i in steps] == ["RETURN_CONST"]:
        return steps[0].argval is None or steps[0].argval is ...
    if [i.opname for i in steps] == ["LOAD_CONST", "RETURN_VALUE"]:
        return steps[0].argval is None or steps[0].argval is ...
    return False


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
