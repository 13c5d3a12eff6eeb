"""Answering from tool results (`function_call_output` items): quote a success, report a failure.

`tool_output.read_output` decides whether an output is a success or an error, whatever shape the
host forwarded; each result becomes one paragraph tied to its call by `call_id`, in the answer
formats the package docstring lists. A tool that changes data gets its own wording: a failed write
is reported as a change not made, never as a file that could not be read, and never as a success.
A span of lines the request asked for ("lines 3 to 5") that the call could not carry (a reader
reads from the top) is cut out of the returned text, and the answer says it was.
"""

from __future__ import annotations

import json
import re

from course_lib.offline_model.reading import _arguments, _extract_reads, _last_turn, _latest_user_text, base_name
from course_lib.offline_model.tool_output import read_output
from course_lib.offline_model.wording import next_step, say

_PATH_KEYS = ("path", "file_path", "filepath", "filename", "file", "note_path")
_WRITE_VERBS = frozenset("write save apply update edit delete remove create move rename append insert set put patch "
                         "replace add store".split())  # fmt: skip
# No answer in time, or a failing server: a write may have gone through all the same.
_UNCONFIRMED = frozenset({"TIMEOUT", "UPSTREAM_ERROR"})


def _outcome(text: str) -> tuple[bool, str, str | None]:
    """Classify a tool output: (ok, text to quote or error message, error code); see `tool_output`."""
    reading = read_output(text)
    return reading.ok, reading.text, reading.code


def _next_step(code: str | None, writes: bool = False, lang: str = "en") -> str:
    """What to try after an error, from its code; `writes`: the call was meant to change data."""
    return next_step(code, lang, writes)


def _path_argument(arguments: dict) -> str | None:
    """The file or note path a call names, if any."""
    return next((arguments[k] for k in _PATH_KEYS if isinstance(arguments.get(k), str)), None)


def _what_was_read(arguments: dict, lang: str = "en") -> str | None:
    """"the first 20 lines of /workspace/notes.txt", from the call's own arguments; a head or tail
    that is no count of lines (`"20"`, 0, 2.5) is named as it was sent, never read as the whole file."""
    path = _path_argument(arguments)
    if path is None:
        return None
    for kind in ("head", "tail"):
        n = arguments.get(kind)
        if isinstance(n, int) and not isinstance(n, bool) and n > 0:
            return say(f"{kind}_one", lang, path=path) if n == 1 else say(f"{kind}_n", lang, path=path, n=n)
    for kind in ("head", "tail"):
        if arguments.get(kind) is not None:
            value = json.dumps(arguments[kind], ensure_ascii=False)
            return say("with_range", lang, path=path, kind=kind, value=value)
    return say("whole", lang, path=path)


def _describe_span(call: dict, path: str, span: tuple[int, int], text: str, lang: str = "en") -> str:
    """Lines `span` (first, last) of a successful read, cut from the text the tool returned (which
    holds the file from its first line), and said so; past the end of that text, said so instead."""
    first, last = span
    lines = text.splitlines()
    if len(lines) < first:
        return say("past_end_one" if len(lines) == 1 else "past_end", lang, path=path, tool=call["name"],
                   count=len(lines), first=first)  # fmt: skip
    shown = min(last, len(lines))
    cut = "\n".join(lines[first - 1 : shown])
    key = "line_cut" if first == shown else "lines_cut"
    answer = say(key, lang, path=path, tool=call["name"], first=first, last=shown, text=cut)
    return answer + (say("ends_at", lang, path=path, tool=call["name"], count=len(lines)) if shown < last else "")


def _asked_spans(items: list[dict], tools: list[dict]) -> dict[str, tuple[int, int]]:
    """call_id → the span of lines the request asked for, for each call of the latest turn that is
    exactly the call made for that span (`reading._arguments`); a call whose range the app changed
    is left out, so it is described as it was read."""
    spans = [read for read in _extract_reads(_latest_user_text(items)) if read[1] == "lines"]
    declared = {tool["name"]: tool for tool in tools}
    found: dict[str, tuple[int, int]] = {}
    for item in _last_turn(items):
        if item["kind"] != "call" or item["name"] not in declared:
            continue
        try:
            arguments = json.loads(item["arguments"])
        except ValueError:
            continue
        match = next((read for read in spans if _arguments(declared[item["name"]], read) == arguments), None)
        if match is not None:
            spans.remove(match)
            found[item["call_id"]] = match[2]
    return found


def _changes_data(name: str, tools: list[dict]) -> bool:
    """Whether the tool `name` changes data: its declaration says "changes data" (the course's write
    tools do), or its name, after any server prefix (`reading.base_name`), starts with a write verb
    (`fs__write_file`, `mcp_fs__write_file`, `fs.write_file`, `save_learning_gap`, `apply_note_update`;
    not `preview_note_update`)."""
    tool = next((tool for tool in tools if tool["name"] == name), {})
    if re.search(r"\bchanges data\b", str(tool.get("description", "")), re.I):
        return True
    verb = re.match(r"[A-Za-z][a-z]*", base_name(name))
    return verb is not None and verb.group().lower() in _WRITE_VERBS


def _write_not_done(code: str | None, lang: str = "en") -> str:
    """What a failed write means for the change, claiming no more than the result says."""
    return say("unconfirmed" if code in _UNCONFIRMED else "not_saved", lang)


def _error_lines(call: dict, asked: str, code: str | None, message: str, lang: str = "en") -> list[str]:
    """The error as the tool reported it: which tool, asked for what, its code (if any), its message."""
    lines = [say("error_head", lang, tool=call["name"], asked=asked)]
    lines += [say("error_code", lang, code=code)] if code else []
    return lines + [say("error_message", lang, message=message)]


def _describe_write(call: dict, path: str | None, ok: bool, text: str, code: str | None, advise: bool = False,
                    lang: str = "en", failure: str | None = None) -> str:  # fmt: skip
    """A write's result: what the tool returned (quoted, not judged), or the error and that the
    change was not made (or not confirmed) — never worded as a failed read. `advise`: end an
    error with what to try next; `failure`: the kind of failure it chooses by (else `code`)."""
    target = say("change_to", lang, path=path) if path else call["arguments"]
    if ok and not text:
        return say("no_text", lang, tool=call["name"], target=target)
    if ok:
        return say("returned", lang, tool=call["name"], target=target, text=text)
    asked = say("asked_change", lang, path=path) if path else say("asked_args", lang, arguments=call["arguments"])
    advice = [_next_step(failure or code, True, lang)] if advise else []
    return "\n".join(_error_lines(call, asked, code, text, lang) + [_write_not_done(failure or code, lang)] + advice)


def _describe_result(call: dict, output: str, writes: bool = False, lang: str = "en",
                     span: tuple[int, int] | None = None) -> str:  # fmt: skip
    """One paragraph about one result: its exact text on success, the error on failure. `writes`:
    the tool changes data (see `_changes_data`); `lang`: the language of the request; `span`: the
    lines the request asked for, which the call could not carry (`_asked_spans`)."""
    try:
        arguments = json.loads(call["arguments"])
    except ValueError:
        arguments = None
    arguments = arguments if isinstance(arguments, dict) else {}
    reading = read_output(output)
    ok, text, code = reading.ok, reading.text, reading.code
    # The course's host sends the execution layer's envelope, whose `retryable` drives its own retry
    # policy; any other error output gets a line on what to try next, as a careful model would add,
    # chosen by the tool's code, else by what its words say (`Reading.failure`).
    advise = not ok and not reading.envelope
    if writes:
        return _describe_write(call, _path_argument(arguments), ok, text, code, advise, lang, reading.failure)
    what = _what_was_read(arguments, lang)
    if ok and not text:
        return say("no_text", lang, tool=call["name"], target=what or call["arguments"])
    if ok and span and (path := _path_argument(arguments)):
        return _describe_span(call, path, span, text, lang)
    if ok and what:
        return say("read_ok", lang, be="are" if " lines of " in what or what.startswith("the contents") else "is", what=what, tool=call["name"], text=text)
    if ok:
        return say("returned", lang, tool=call["name"], target=call["arguments"], text=text)
    asked = say("asked_read", lang, what=what) if what else say("asked_args", lang, arguments=call["arguments"])
    return "\n".join(_error_lines(call, asked, code, text, lang) + [say("not_read" if what else "no_result", lang)]
                     + ([_next_step(reading.failure, False, lang)] if advise else []))  # fmt: skip


def _answer_from_outputs(items: list[dict], outputs: list[dict], tools: list[dict], lang: str = "en") -> str:
    """One paragraph per result, in input order, each tied to its call by call_id; `tools` tell
    which calls changed data; `lang`: the language of the request."""
    calls = {item["call_id"]: item for item in items if item["kind"] == "call"}
    spans = _asked_spans(items, tools)
    paragraphs = []
    for output in outputs:
        call = calls[output["call_id"]]
        writes = _changes_data(call["name"], tools)
        span = None if writes else spans.get(call["call_id"])
        paragraphs.append(_describe_result(call, output["text"], writes, lang, span))
    return "\n\n".join(paragraphs)
