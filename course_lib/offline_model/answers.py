"""Answering from tool results (`function_call_output` items): quote a success, report a failure.

`tool_output.read_output` decides whether an output is a success or an error, whatever shape the
host forwarded; each result becomes one paragraph tied to its call by `call_id`, in the answer
formats the package docstring lists. A tool that changes data gets its own wording: a failed write
is reported as a change not made, never as a file that could not be read, and never as a success.
"""

from __future__ import annotations

import json
import re

from course_lib.offline_model.tool_output import read_output

_PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "note_path")
_WRITE_VERBS = frozenset("write save apply update edit delete remove create move rename append insert set put patch "
                         "replace add store".split())  # fmt: skip
# No answer in time, or a failing server: a write may have gone through all the same.
_UNCONFIRMED = frozenset({"TIMEOUT", "UPSTREAM_ERROR"})


def _outcome(text: str) -> tuple[bool, str, str | None]:
    """Classify a tool output: (ok, text to quote or error message, error code); see `tool_output`."""
    reading = read_output(text)
    return reading.ok, reading.text, reading.code


_NEXT_STEPS = {
    "NOT_FOUND": "check the path (the file may have moved or been renamed) and ask again with the right one.",
    "ENOENT": "check the path (the file may have moved or been renamed) and ask again with the right one.",
    "FORBIDDEN": "ask for a file the tool is allowed to read; I won't try to get around the refusal.",
    "EACCES": "ask for a file the tool is allowed to read; I won't try to get around the refusal.",
    "INVALID_INPUT": "correct what the message names and ask again.",
    "TIMEOUT": "try again in a moment; if it keeps failing, check the server.",
    "UPSTREAM_ERROR": "try again in a moment; if it keeps failing, check the server.",
}


# A failed write: never "try again" blindly, since an unconfirmed change may have been saved.
_NEXT_STEPS_WRITE = {
    **_NEXT_STEPS,
    "FORBIDDEN": "this change is not allowed here; I won't try to get around the refusal.",
    "EACCES": "this change is not allowed here; I won't try to get around the refusal.",
    "TIMEOUT": "check whether the change was saved before asking for it again.",
    "UPSTREAM_ERROR": "check whether the change was saved before asking for it again.",
}


def _next_step(code: str | None, writes: bool = False) -> str:
    """What to try after an error, from its code; `writes`: the call was meant to change data."""
    steps = _NEXT_STEPS_WRITE if writes else _NEXT_STEPS
    return "What to try next: " + steps.get(code or "", "fix what the message names, then ask again.")


def _path_argument(arguments: dict) -> str | None:
    """The file or note path a call names, if any."""
    return next((arguments[k] for k in _PATH_KEYS if isinstance(arguments.get(k), str)), None)


def _what_was_read(arguments: dict) -> str | None:
    """"the first 20 lines of /workspace/notes.txt", from the call's own arguments."""
    path = _path_argument(arguments)
    if path is None:
        return None
    for kind, word in (("head", "first"), ("tail", "last")):
        n = arguments.get(kind)
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            return f"the {word} line of {path}" if n == 1 else f"the {word} {n} lines of {path}"
    return f"the contents of {path}"


def _changes_data(name: str, tools: list[dict]) -> bool:
    """Whether the tool `name` changes data: its declaration says "changes data" (the course's write
    tools do), or its name, after any alias prefix, starts with a write verb (`fs__write_file`,
    `save_learning_gap`, `apply_note_update`; not `preview_note_update`)."""
    tool = next((tool for tool in tools if tool["name"] == name), {})
    if re.search(r"\bchanges data\b", str(tool.get("description", "")), re.I):
        return True
    verb = re.match(r"[A-Za-z][a-z]*", name.rsplit("__", 1)[-1])
    return verb is not None and verb.group().lower() in _WRITE_VERBS


def _write_not_done(code: str | None) -> str:
    """What a failed write means for the change, claiming no more than the result says."""
    if code in _UNCONFIRMED:
        return "The change was not confirmed, so it may or may not have been saved; I won't report it as saved."
    return "The change was not made: nothing was saved."


def _error_lines(call: dict, asked: str, code: str | None, message: str) -> list[str]:
    """The error as the tool reported it: which tool, asked for what, its code (if any), its message."""
    lines = [f"The tool {call['name']} reported an error {asked}."]
    lines += [f"Error code: {code}"] if code else []
    return lines + [f"Error message: {message}"]


def _describe_write(call: dict, path: str | None, ok: bool, text: str, code: str | None, advise: bool = False) -> str:
    """A write's result: what the tool returned (quoted, not judged), or the error and that the
    change was not made (or not confirmed) — never worded as a failed read. `advise`: end an
    error with what to try next."""
    target = f"the change to {path}" if path else call["arguments"]
    if ok and not text:
        return f"{call['name']} returned no text for {target}."
    if ok:
        return f"Here is what {call['name']} returned for {target}:\n\n{text}"
    asked = f"when asked to change {path}" if path else f"for {call['arguments']}"
    advice = [_next_step(code, writes=True)] if advise else []
    return "\n".join(_error_lines(call, asked, code, text) + [_write_not_done(code)] + advice)


def _describe_result(call: dict, output: str, writes: bool = False) -> str:
    """One paragraph about one result: its exact text on success, the error on failure. `writes`:
    the tool changes data (see `_changes_data`)."""
    try:
        arguments = json.loads(call["arguments"])
    except ValueError:
        arguments = None
    arguments = arguments if isinstance(arguments, dict) else {}
    reading = read_output(output)
    ok, text, code = reading.ok, reading.text, reading.code
    # The course's host sends the execution layer's envelope, whose `retryable` drives its own retry
    # policy; any other error output gets a line on what to try next, as a careful model would add.
    advise = not ok and not reading.envelope
    if writes:
        return _describe_write(call, _path_argument(arguments), ok, text, code, advise)
    what = _what_was_read(arguments)
    if ok and not text:
        return f"{call['name']} returned no text for {what or call['arguments']}."
    if ok and what:
        return f"Here {'is' if ' line of ' in what else 'are'} {what}, as returned by {call['name']}:\n\n{text}"
    if ok:
        return f"Here is what {call['name']} returned for {call['arguments']}:\n\n{text}"
    asked = f"when asked for {what}" if what else f"for {call['arguments']}"
    return "\n".join(_error_lines(call, asked, code, text) + [
        "I could not read the file, so I won't say anything about what it contains." if what
        else "I got no result from it, so I won't guess one."] + ([_next_step(code)] if advise else []))


def _answer_from_outputs(items: list[dict], outputs: list[dict], tools: list[dict]) -> str:
    """One paragraph per result, in input order, each tied to its call by call_id; `tools` tell
    which calls changed data."""
    calls = {item["call_id"]: item for item in items if item["kind"] == "call"}
    paragraphs = []
    for output in outputs:
        call = calls[output["call_id"]]
        paragraphs.append(_describe_result(call, output["text"], _changes_data(call["name"], tools)))
    return "\n\n".join(paragraphs)
