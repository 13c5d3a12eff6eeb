"""Answering from tool results (`function_call_output` items): quote a success, report a failure.

`_outcome` decides whether an output is a success or an error; each result becomes one paragraph
tied to its call by `call_id`, in the answer formats the package docstring lists.
"""

from __future__ import annotations

import json
import re


def _outcome(text: str) -> tuple[bool, str, str | None]:
    """Classify a tool output: (ok, text to quote or error message, error code).

    Errors: a JSON object with "ok": false, "isError": true or an "error"; plain text that starts
    with "Error:" or "Error executing tool". `{"ok": true, "data": ...}` is success: data["text"],
    else the pretty JSON of data. Anything else is success, quoted verbatim.
    """
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and (data.get("ok") is False or data.get("isError") is True or data.get("error")):
        error = data.get("error")
        code = error.get("code") if isinstance(error, dict) else data.get("code")
        message = error.get("message") if isinstance(error, dict) else error if isinstance(error, str) else None
        if message is None and isinstance(data.get("content"), list):  # an MCP result with isError
            message = " ".join(str(block.get("text", "")) for block in data["content"] if isinstance(block, dict))
        return False, str(message or data.get("message") or json.dumps(data, ensure_ascii=False)), code
    if isinstance(data, dict) and data.get("ok") is True and "data" in data:
        inner = data["data"]
        if isinstance(inner, dict) and isinstance(inner.get("text"), str):
            return True, inner["text"], None
        return True, json.dumps(inner, indent=2, ensure_ascii=False), None
    if re.match(r"\s*(?:error:|error executing tool\b)", text, re.I):  # an error passed on as plain text
        return False, text.strip(), None
    return True, text, None


def _what_was_read(arguments: dict) -> str | None:
    """"the first 20 lines of /workspace/notes.txt", from the call's own arguments."""
    path = next((arguments[k] for k in ("path", "file_path", "filepath", "filename", "file", "note_path")
                 if isinstance(arguments.get(k), str)), None)
    if path is None:
        return None
    for kind, word in (("head", "first"), ("tail", "last")):
        n = arguments.get(kind)
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            return f"the {word} line of {path}" if n == 1 else f"the {word} {n} lines of {path}"
    return f"the contents of {path}"


def _describe_result(call: dict, output: str) -> str:
    """One paragraph about one result: its exact text on success, the error on failure."""
    try:
        arguments = json.loads(call["arguments"])
    except ValueError:
        arguments = None
    what = _what_was_read(arguments) if isinstance(arguments, dict) else None
    ok, text, code = _outcome(output)
    if ok and not text:
        return f"{call['name']} returned no text for {what or call['arguments']}."
    if ok and what:
        return f"Here {'is' if ' line of ' in what else 'are'} {what}, as returned by {call['name']}:\n\n{text}"
    if ok:
        return f"Here is what {call['name']} returned for {call['arguments']}:\n\n{text}"
    asked = f"when asked for {what}" if what else f"for {call['arguments']}"
    lines = [f"The tool {call['name']} reported an error {asked}."]
    lines += [f"Error code: {code}"] if code else []
    lines += [f"Error message: {text}"]
    lines += ["I could not read the file, so I won't say anything about what it contains." if what
              else "I got no result from it, so I won't guess one."]
    return "\n".join(lines)


def _answer_from_outputs(items: list[dict], outputs: list[dict]) -> str:
    """One paragraph per result, in input order, each tied to its call by call_id."""
    calls = {item["call_id"]: item for item in items if item["kind"] == "call"}
    return "\n\n".join(_describe_result(calls[output["call_id"]], output["text"]) for output in outputs)
