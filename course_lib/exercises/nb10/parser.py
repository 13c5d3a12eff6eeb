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
from course_lib.exercises.nb10._common import READ, _function


def parse_cases() -> list[tuple[str, Any]]:
    """(label, arguments text): the model's real texts, then broken variants built from them."""
    from openai.types.responses import Response

    from course_lib.arguments import input_schema
    from course_lib.declarations import strict_schema
    from course_lib.offline_model import respond

    def model_text(request: str, *, strict: bool) -> str:
        parameters = strict_schema(input_schema()) if strict else input_schema()
        tool = {"type": "function", "name": READ, "description": "Read a text file.", "parameters": parameters,
                "strict": strict}  # fmt: skip
        response = Response.model_validate(respond({"model": "gpt-4.1", "input": request, "tools": [tool]}))
        return next(item.arguments for item in response.output if item.type == "function_call")

    plain = model_text("Show the first 20 lines of /workspace/notes.txt", strict=False)
    strict = model_text("Show the last 3 lines of /workspace/todo.md", strict=True)
    return [
        ("the model's arguments for head 20", plain),
        ("the model's strict arguments, with a null", strict),
        ("the same text with spaces and a newline around it", f" {plain}\n"),
        ("a duplicate key", plain[:-1] + ',"path":"/etc/passwd"}'),
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
        ("an object that was already parsed (not text)", json.loads(plain)),
    ]  # fmt: skip


_PARSE_HINTS = {
    "a duplicate key": "json.loads keeps the LAST duplicate silently, so the model's own path is replaced by "
                       "another. Refuse duplicates with object_pairs_hook",
    "NaN as a number": "Python's json accepts NaN, standard JSON does not; refuse it with parse_constant",
    "Infinity as a number": "Python's json accepts Infinity, standard JSON does not; refuse it with parse_constant",
    "-Infinity as a number": "Python's json accepts -Infinity, standard JSON does not; refuse it with parse_constant",
    "a second object after the first": "something after the object means the text is not one value: if you use "
                                       "raw_decode, check that only whitespace is left",
    "a stray bracket after the object": "only whitespace may follow the object",
    "an array instead of an object": "arguments are an object: check isinstance(value, dict) after parsing",
    "a string instead of an object": "arguments are an object: check isinstance(value, dict) after parsing",
    "null instead of an object": "arguments are an object: None is not one",
    "an object that was already parsed (not text)": "arguments are JSON text; a dict here means someone passed the "
                                                    "MCP-style object — refuse it instead of guessing",
    "single quotes": "JSON strings use double quotes: a parser that accepts 'x' (ast.literal_eval, a quote "
                     "replace) reads text no JSON parser would",
    "text cut off in the middle": "a cut-off text is not an object with fewer fields: refuse it, never repair it",
    "an empty text": "an empty text is not {}: a model that sent nothing did not ask for the defaults",
}  # fmt: skip


def check_parse_arguments(fn: Callable[[Any], dict[str, Any]]) -> bool:
    """Run `fn` on 16 arguments texts and compare with `arguments.parse_arguments_text`."""
    if problem := _function(fn, "parse_arguments", "text"):
        return failed(problem)
    for label, text in parse_cases():
        try:
            expected: Any = parse_arguments_text(copy.deepcopy(text))
        except ArgumentsError as error:
            expected = error
        shown = f"case '{label}' ({text!r:.70})"
        try:
            got = fn(copy.deepcopy(text))
        except (ValueError, TypeError) as error:
            if isinstance(expected, ArgumentsError):
                if isinstance(error, TypeError) and isinstance(text, str):
                    return failed(f"{shown}: raise ValueError, not TypeError, for a bad arguments text.")
                continue
            hint = (" JSON allows whitespace around the value (raw_decode does not skip it before the value)."
                    if label.startswith("the same text with spaces") else
                    " JSON has null, true and false: parse it with json.loads (ast.literal_eval and eval read Python, "
                    "not JSON)." if "null" in str(text) else "")  # fmt: skip
            return failed(f"{shown}: you raised {type(error).__name__}: {error}, but this is valid arguments text.{hint}")
        except Exception as error:
            return failed(f"{shown}: parse_arguments raised {type(error).__name__}: {error}; refuse with ValueError.")
        if got is ...:
            return failed("Not answered yet: parse_arguments still returns ... — return the dict.")
        if isinstance(expected, ArgumentsError) and got == {} and label != "an empty text":
            return failed(f"{shown}: you returned {{}}; refuse it with ValueError. Returning an empty dict on a "
                          "parse error hides the model's mistake and runs the tool with defaults nobody asked for.")
        if isinstance(expected, ArgumentsError):
            return failed(f"{shown}: you returned {got!r:.60}; refuse it with ValueError. "
                          f"{_PARSE_HINTS.get(label, 'It is not one clean JSON object')}.")
        if got != expected or type(got) is not dict:
            return failed(f"{shown}: you returned {got!r:.60}; expected {expected!r:.60}.")
    return passed("all 16 texts right: the model's arguments parsed, and duplicates, NaN, Infinity, trailing data "
                  "and non-objects refused.")


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
