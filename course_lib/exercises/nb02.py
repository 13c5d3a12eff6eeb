"""Checks for notebook 02 (parsing arguments by hand).

- `check_parse_head(fn)`: the learner's `parse_head(arguments_text) -> int | None` is run on a
  battery of arguments texts (one produced by the offline model, the rest hand-made malformed
  variants) and compared with the course's real parser, `parse_read_args`.
- `check_predictions(answer)`: six arguments texts, six predicted outcomes; each text really goes
  through `loop.execute_call` on a fresh files host, and the first wrong prediction is explained.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from openai.types.responses import ResponseFunctionToolCall

from course_lib.arguments import ArgumentsError, parse_read_args
from course_lib.exercises import Solutions, failed, not_answered, passed

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


def _model_arguments_text() -> str:
    """The arguments text the offline model really produces for "first 20 lines of notes.txt"."""
    from course_lib.course import start_course

    course = start_course(quiet=True)
    try:
        response = course.client.responses.create(
            model="gpt-4.1",
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
        return failed("Not answered yet: define parse_head(arguments_text) and pass the function itself.")
    if not callable(fn):
        return failed(f"Pass the function itself (parse_head, without parentheses); you passed {fn!r}.")
    cases = [("the offline model's real call (first 20 lines)", _model_arguments_text()), *HEAD_CASES]
    for label, text in cases:
        accepted, head, reason = _real_head(text)
        try:
            got = fn(text)
        except ValueError as error:
            if accepted:
                return failed(f"case '{label}' {text.strip()}: you refused it ({type(error).__name__}: "
                              f"{error}), but it is valid; the real parser returns head={head!r}."
                              f"{_accepted_hint(text)}")
            continue
        except Exception as error:  # a crash is not a message the model can act on
            return failed(f"case '{label}' {text.strip()}: your function crashed with {type(error).__name__}: "
                          f"{error}. Refuse bad input with ValueError (json.JSONDecodeError is one).")
        if not accepted:
            return failed(f"case '{label}' {text.strip()}: you returned {got!r}, but it must be refused "
                          f"(the real parser says: {reason}). Raise ValueError.{_refused_hint(text, got)}")
        if got is not None and type(got) is not int:
            return failed(f"case '{label}' {text.strip()}: you returned {got!r} ({type(got).__name__}); "
                          "return an int (or None when there is no head)."
                          f"{' Convert an integral float: 5.0 is the integer 5.' if isinstance(got, float) else ''}")
        if got != head:
            return failed(f"case '{label}' {text.strip()}: expected {head!r}, you returned {got!r}.")
    return passed(f"parse_head agrees with the real parser on all {len(cases)} cases.")


def _accepted_hint(text: str) -> str:
    """What a learner who refused a valid text usually got wrong."""
    if '"head":5.0' in text or '"head":1e2' in text:
        return (" JSON Schema's integer is any number with no fractional part, so 5.0 and 1e2 are integers: "
                "json.loads gives a float, convert it when float.is_integer() says so.")
    if "null" in text:
        return " null is the absent value (strict mode sends it): return None, do not refuse."
    return ""


def _refused_hint(text: str, got: Any) -> str:
    """Name the usual mistake behind accepting a text the real parser refuses."""
    if "true" in text:
        return " True is an int in Python (isinstance(True, int)), but a boolean in JSON: check type(head) is int."
    if '"5"' in text:
        return " A string is not an integer, even if it holds digits: do not call int() on it."
    if "5.5" in text:
        return " int(5.5) is 5: truncating a fraction is guessing. Only a float with no fraction is an integer."
    if "NaN" in text or "Infinity" in text:
        return " Python's json accepts NaN and Infinity; standard JSON does not: pass parse_constant to refuse them."
    if text.count('"head"') > 1 or text.count('"path"') > 1:
        return (" json.loads keeps the last duplicate key silently; which one counts would be a guess. "
                "Pass object_pairs_hook to refuse duplicates.")
    if "[" in text.lstrip()[:1]:
        return " The arguments must be a JSON object; check isinstance(value, dict)."
    if isinstance(got, int) and got < 1:
        return " head counts lines: it must be at least 1."
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
        return failed(f"Not answered yet: give a list of {len(PREDICTION_CASES)} outcomes, each one of {', '.join(OUTCOMES)}.")
    if not isinstance(answer, (list, tuple)) or len(answer) != len(PREDICTION_CASES):
        return failed(f"Give a list of exactly {len(PREDICTION_CASES)} outcomes, one per arguments text, in order.")
    for i, guess in enumerate(answer, start=1):
        if guess not in OUTCOMES:
            return failed(f"#{i}: {guess!r} is not an outcome; use one of {', '.join(OUTCOMES)}.")
    for i, (text, guess, (code, message, kind)) in enumerate(zip(PREDICTION_CASES, answer, real_outcomes()), start=1):
        if guess != code:
            who = {"app": "refused by the app before sending", "tool": "refused by the server"}.get(kind)
            said = f", {who}: {message!r}" if who else ""
            return failed(f"#{i} {text}: you predicted {guess}, the real outcome is {code}{said} — {_WHY[code]}.")
    return passed(f"All {len(PREDICTION_CASES)} predictions match the real outcomes.")


SOLUTIONS: Solutions = {
    "check_parse_head": lambda: _parse_head_solution,
    "check_predictions": lambda: ["INVALID_INPUT", "OK", "FORBIDDEN", "INVALID_INPUT", "NOT_FOUND", "OK"],
}

