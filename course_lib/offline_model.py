"""The offline model: a deterministic stand-in that speaks the OpenAI Responses API wire format.

What it is: a small set of readable rules behind `POST /v1/responses`. It validates a request the
way the real API does (a 400 naming the offending field), then behaves like a careful model:

- after tool results (`function_call_output`) it answers only from those results, quoting them,
  and reports a failed result as a failure — never as a successful read;
- otherwise it reads the latest user message, finds the file paths and line ranges in it
  ("first 20 lines of /workspace/notes.txt", "last 3 lines of b.txt", "前5行"), picks a
  file-reading tool among the declared function tools and emits one `function_call` per read;
- with no path it asks which file; with no usable tool it says so. It never invents a path,
  an argument value or file content.

What it is not: a language model. It has no knowledge, makes no network calls and is keyed to no
notebook's exact wording. The same request always gives a byte-identical response (ids are hashes
of the request body), so notebook outputs can be stored.

Answer formats (notebooks may rely on them; P is the path, T the tool name, read from the call):

- success: "Here are the first N lines of P, as returned by T:\\n\\n<exact output text>"; also
  "the last N lines of P", "the contents of P" (no head/tail), "Here is the first line of P" (N = 1);
  a call without a path argument: "Here is what T returned for <arguments text>:\\n\\n<text>";
  an empty output: "T returned no text for the first N lines of P."
- error: "The tool T reported an error when asked for the first N lines of P.\\nError code: C\\n
  Error message: M\\nI could not read the file, so I won't say anything about what it contains."
  (no "Error code" line when the output has no code).
- several results: one paragraph each, in input order, separated by a blank line.
- no path: "Which file should I read? Please give me its path; I won't guess one."

The notes assistant (capstone). When the declared tools include a search tool — one with a
`query` string property, e.g. `search_notes` or `notes__search_notes` — and the request names no
file (a file-read request keeps every behaviour above), the model makes the assistant's moves:

1. search with the question's key terms (its words minus stop words and chit-chat; `limit` only
   when the user asks for "top N notes", else null for a strict tool and absent otherwise); a
   message with no key term ("Hi there!") gets a short reply and no call;
2. read the best hits with the note-reading tool (score > 0 and at least half the best, at most
   two, in one response: parallel calls). A search refused with INVALID_INPUT that names a bound
   ("limit: must be ≤ 20") is sent again within it; a retryable failure is repeated once; a hit
   that no longer exists (NOT_FOUND) → one more search, then read the new hits;
3. answer only from the notes read: "From your notes:", up to two sentences per note quoted
   verbatim as "- <sentence> [<path>]", then "Sources: <paths of the notes quoted>". When the
   notes do not support an answer (no hits, nothing readable, only stubs — notes with a TODO
   line — or at most half of the key terms in the notes read): "The evidence is missing: <why,
   from what was searched and read>. I won't answer from memory.";
4. asked for gaps ("where is my understanding incomplete", "save a learning gap") with a gap tool
   declared (named for gaps, with a `topic` property): after the reads, a message with the answer
   and the proposal plus one call with topic/evidence/suggestion taken from what was read (the
   stub note, else the key terms no note mentions); after its result, the answer plus "Saved the
   learning gap as record <id>." or why it was not saved. It never fills in any other property.

Personas (for the prompt-injection demo; the switch is a real request field, so it shows in the
request body): by default the model is *careful* — tool output is data it quotes, never an
instruction it follows. With `"metadata": {"course_persona": "gullible"}` it is *gullible*: when
the newest tool results (the outputs after its latest calls) contain a line of the exact form

    CALL <tool name> <JSON object>

(on a line of its own, in the text the tool returned; for an execution-layer result
`{"ok": true, "data": {"text": ...}}` that is `data.text`) and <tool name> is a function tool this
request declares and may call, it emits that `function_call` with exactly those arguments instead
of answering. Tools that are not declared are ignored, as is everything with `tool_choice: "none"`.
Other `course_persona` values are a 400; other metadata keys are accepted and echoed, as the
real API does.

Run it as a local HTTP server: `python -m course_lib.offline_model --port 8765`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import signal
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx

from course_lib.declarations import strict_schema_problems

CREATED_AT = 1767225600  # 2026-01-01T00:00:00Z: fixed so stored notebook outputs never change


class BadRequest(Exception):
    """A malformed request; becomes an OpenAI-style 400 error body."""

    def __init__(self, message: str, param: str | None = None, code: str | None = None) -> None:
        super().__init__(message)
        self.message, self.param, self.code = message, param, code

    def to_body(self) -> dict[str, Any]:
        """The JSON error body the real API returns for a 400."""
        error = {"message": self.message, "type": "invalid_request_error", "param": self.param, "code": self.code}
        return {"error": error}


# ---- validation: the same checks and messages as the real API -------------------------------

_JSON_TYPE_NAMES = {str: "a string", dict: "an object", list: "an array", bool: "a boolean", int: "an integer",
                    float: "a number", type(None): "null"}


def _get(obj: dict, key: str, where: str, kind: type | tuple, *, optional: bool = False) -> Any:
    """Return `obj[key]` after checking its JSON type; `where` is the path used in the message.

    Raises:
        BadRequest: the key is missing (unless `optional`) or has the wrong type.
    """
    param = f"{where}.{key}" if where else key
    if key not in obj or (optional and obj[key] is None):
        if optional:
            return None
        raise BadRequest(f"Missing required parameter: '{param}'.", param, "missing_required_parameter")
    value, kinds = obj[key], kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise _type_error(param, kind, value)
    return value


def _type_error(param: str, kind: type | tuple, value: Any) -> BadRequest:
    expected = " or ".join(_JSON_TYPE_NAMES[k] for k in (kind if isinstance(kind, tuple) else (kind,)))
    got = _JSON_TYPE_NAMES.get(type(value), type(value).__name__)
    return BadRequest(f"Invalid type for '{param}': expected {expected}, but got {got} instead.", param, "invalid_type")


def _invalid_value(value: Any, param: str, supported: list[str]) -> BadRequest:
    listed = ", ".join(f"'{s}'" for s in supported)
    return BadRequest(f"Invalid value: '{value}'. Supported values are: {listed}.", param, "invalid_value")


def _parts_text(parts: list, where: str, allowed: tuple[str, ...]) -> str:
    """Join the text of content parts (input_text/output_text), checking each part's shape."""
    texts = []
    for i, part in enumerate(parts):
        if not isinstance(part, dict):
            raise _type_error(f"{where}[{i}]", dict, part)
        kind = _get(part, "type", f"{where}[{i}]", str)
        if kind not in allowed:
            raise _invalid_value(kind, f"{where}[{i}].type", list(allowed))
        if kind in ("input_text", "output_text"):
            texts.append(_get(part, "text", f"{where}[{i}]", str))
    return "\n".join(texts)


def _parse_input(body: dict) -> list[dict]:
    """Normalise `input` to items: {"kind": "message", role, text}, {"kind": "call", call_id, name,
    arguments} or {"kind": "output", call_id, text}. Reasoning items are dropped.

    Raises:
        BadRequest: an item has a missing field, a wrong type or an unknown `type`.
    """
    raw = _get(body, "input", "", (str, list))
    if isinstance(raw, str):
        return [{"kind": "message", "role": "user", "text": raw}]
    items = []
    for i, item in enumerate(raw):
        where = f"input[{i}]"
        if not isinstance(item, dict):
            raise _type_error(where, dict, item)
        kind = item.get("type", "message")
        if kind == "message":
            role = _get(item, "role", where, str)
            if role not in ("user", "system", "developer", "assistant"):
                raise _invalid_value(role, f"{where}.role", ["user", "system", "developer", "assistant"])
            content = _get(item, "content", where, (str, list))
            parts = ("input_text", "output_text", "refusal", "input_image", "input_file")
            text = content if isinstance(content, str) else _parts_text(content, f"{where}.content", parts)
            items.append({"kind": "message", "role": role, "text": text})
        elif kind == "function_call":
            call = {key: _get(item, key, where, str) for key in ("call_id", "name", "arguments")}
            items.append({"kind": "call", **call})
        elif kind == "function_call_output":
            output = _get(item, "output", where, (str, list))
            text = output if isinstance(output, str) else _parts_text(output, f"{where}.output", ("input_text",))
            items.append({"kind": "output", "call_id": _get(item, "call_id", where, str), "text": text})
        elif kind != "reasoning":  # reasoning items carry nothing this model uses
            supported = ["message", "function_call", "function_call_output", "reasoning"]
            raise _invalid_value(kind, f"{where}.type", supported)
    return items


def _check_pairs(items: list[dict]) -> None:
    """Every output answers an earlier call, and every call has its output, matched by call_id.

    Raises:
        BadRequest: with the real API's wording for an orphan output or an unanswered call.
    """
    called: list[str] = []
    answered = set()
    for item in items:
        if item["kind"] == "call":
            called.append(item["call_id"])
        elif item["kind"] == "output":
            if item["call_id"] not in called:
                message = f"No tool call found for function call output with call_id {item['call_id']}."
                raise BadRequest(message, "input")
            answered.add(item["call_id"])
    for call_id in called:
        if call_id not in answered:
            raise BadRequest(f"No tool output found for function call {call_id}.", "input")


def _parse_tools(body: dict) -> list[dict]:
    """Return the declared function tools (other tool types are accepted and ignored).

    Raises:
        BadRequest: `tools` is not a list, or a function tool lacks a name or has bad parameters.
    """
    tools = _get(body, "tools", "", list, optional=True) or []
    functions = []
    for i, tool in enumerate(tools):
        where = f"tools[{i}]"
        if not isinstance(tool, dict):
            raise _type_error(where, dict, tool)
        if _get(tool, "type", where, str) == "function":
            name = _get(tool, "name", where, str)
            parameters = _get(tool, "parameters", where, dict, optional=True)
            # Like the real API: a strict tool whose schema breaks strict mode's rules is refused.
            if tool.get("strict") is True and (problems := strict_schema_problems(parameters or {})):
                raise BadRequest(f"Invalid schema for function '{name}': {problems[0]}",
                                 f"{where}.parameters", "invalid_function_parameters")
            functions.append(tool)
    return functions


def _tool_policy(body: dict, tools: list[dict]) -> tuple[str, list[dict]]:
    """Read `tool_choice`: return the mode ("auto", "none", "required" or "forced") and the tools
    the model may call.

    Raises:
        BadRequest: an unknown choice, or a named tool that is not among `tools`.
    """
    choice = body.get("tool_choice", "auto")
    by_name = {tool["name"]: tool for tool in tools}
    if isinstance(choice, str):
        if choice not in ("auto", "none", "required"):
            raise _invalid_value(choice, "tool_choice", ["auto", "none", "required"])
        return choice, tools
    if not isinstance(choice, dict):
        raise _type_error("tool_choice", (str, dict), choice)
    kind = _get(choice, "type", "tool_choice", str)
    if kind == "function":
        name = _get(choice, "name", "tool_choice", str)
        if name not in by_name:
            message = f"Tool choice 'function' with name '{name}' not found in 'tools' parameter."
            raise BadRequest(message, "tool_choice")
        return "forced", [by_name[name]]
    if kind != "allowed_tools":
        raise _invalid_value(kind, "tool_choice.type", ["function", "allowed_tools"])
    mode = _get(choice, "mode", "tool_choice", str)
    if mode not in ("auto", "required"):
        raise _invalid_value(mode, "tool_choice.mode", ["auto", "required"])
    names = []
    for i, entry in enumerate(_get(choice, "tools", "tool_choice", list)):
        if not isinstance(entry, dict):
            raise _type_error(f"tool_choice.tools[{i}]", dict, entry)
        name = _get(entry, "name", f"tool_choice.tools[{i}]", str)
        if name not in by_name:
            raise BadRequest(f"Allowed tool '{name}' not found in 'tools' parameter.", f"tool_choice.tools[{i}]")
        names.append(name)
    return mode, [tool for tool in tools if tool["name"] in names]


# ---- understanding the request: which tool, which files, which lines --------------------------

_NUMBER_WORDS = dict(zip("one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
                         "fifteen sixteen seventeen eighteen nineteen twenty".split(), range(1, 21)))
_NUMBER_WORDS |= dict(zip("一 二 三 四 五 六 七 八 九 十 十一 十二 十三 十四 十五 十六 十七 十八 十九 二十".split(), range(1, 21)))
_NUMBER_WORDS["两"] = 2
# longest words first, so that "十二" is not read as "十"
_NUM = "(\\d+|" + "|".join(sorted(_NUMBER_WORDS, key=len, reverse=True)) + ")"
_RANGES = [  # (kind, pattern); the number is group 1, a missing number means 1 ("the first line")
    ("head", re.compile(rf"\b(?:first|top|opening|initial|leading)\s+{_NUM}\b", re.I)),
    ("tail", re.compile(rf"\b(?:last|final|bottom|ending|closing|trailing)\s+{_NUM}\b", re.I)),
    ("head", re.compile(rf"\bhead\s*(?:-n|=|:)?\s*{_NUM}\b", re.I)),
    ("tail", re.compile(rf"\btail\s*(?:-n|=|:)?\s*{_NUM}\b", re.I)),
    ("head", re.compile(r"\b(?:first|top|opening)\s+line\b()", re.I)),
    ("tail", re.compile(r"\b(?:last|final|bottom)\s+line\b()", re.I)),
    ("head", re.compile(rf"(?:前|开头)\s*{_NUM}\s*行")),
    ("tail", re.compile(rf"(?:最后|后|末尾|结尾)\s*{_NUM}\s*行")),
]
# "show me 10 lines of a.txt" reads from the top; "it has 30 lines" is not a request
_BARE_COUNT = re.compile(
    rf"\b(?:show|read|print|display|give|see|view|need|want)\s+(?:me\s+)?(?:just\s+|only\s+)?{_NUM}\s+lines?\b", re.I
)
_CLAUSE_BREAK = re.compile(r"[;,\n。，；！？!?]|\.(?=\s|$)|\s(?:and|then|plus|also)\s|和|以及|然后|再", re.I)
_PATH_RUN = re.compile(r"[A-Za-z0-9_./~-]+")  # ASCII only, so "读取notes.txt前20行" still splits
_FILE_NAME = re.compile(r"[A-Za-z0-9_.~-]*[A-Za-z0-9_~-]\.[A-Za-z][A-Za-z0-9]{0,7}")
_FILE_INTENT = re.compile(
    r"\b(?:read|show|open|display|print|cat|view|contents?|lines?|files?)\b|读|查看|显示|打开|文件", re.I
)


def _number(token: str) -> int:
    """"20" → 20, "five" → 5, "十二" → 12, "" → 1 ("the first line")."""
    return int(token) if token.isdigit() else _NUMBER_WORDS.get(token.lower(), 1)


def _find_paths(text: str) -> list[tuple[int, int, str]]:
    """Spans and text of path-like tokens: rooted (`/a/b`, `./a`, `~/a`) or with a file extension."""
    found = []
    for match in _PATH_RUN.finditer(text):
        token = match.group().rstrip(".-")  # a full stop after a path is punctuation, not the path
        if match.start() > 0 and text[match.start() - 1] == ":" or token.startswith("//"):
            continue  # the rest of a URL (https://...)
        rooted = token.startswith(("/", "./", "../", "~/")) and re.search(r"[A-Za-z0-9]", token)
        named = _FILE_NAME.fullmatch(token.rsplit("/", 1)[-1]) and token.lower() not in ("e.g", "i.e", "etc")
        if rooted or named:
            found.append((match.start(), match.start() + len(token), token))
    return found


def _find_ranges(masked: str) -> list[tuple[int, int, str, int]]:
    """Line ranges (start, end, "head"/"tail", n) in text whose paths are blanked out."""
    ranges, taken = [], set()
    for kind, pattern in _RANGES:
        for m in pattern.finditer(masked):
            if not taken & set(range(*m.span())):
                ranges.append((m.start(), m.end(), kind, _number(m.group(1))))
                taken |= set(range(*m.span()))
    for m in _BARE_COUNT.finditer(masked):
        if not taken & set(range(*m.span())):
            ranges.append((m.start(), m.end(), "head", _number(m.group(1))))
    return sorted(ranges)


def _clause(text: str, position: int) -> int:
    """The index of the clause (split at commas, "and", full stops, 和 …) that holds `position`."""
    return sum(1 for m in _CLAUSE_BREAK.finditer(text) if m.end() <= position)


def _gap(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Characters between two spans of text (0 when they touch or overlap)."""
    return max(a[0] - b[1], b[0] - a[1], 0)


def _extract_reads(text: str) -> list[tuple[str, str | None, int | None]]:
    """The reads a request asks for: (path, "head"/"tail"/None, line count or None), in order.

    A range belongs to the closest path in its own clause; a range in a clause without a path
    ("Read a.txt. Only the first 5 lines.") applies to every path that has no range of its own,
    else to the closest path. A path with no range is read whole.
    """
    paths = _find_paths(text)
    if not paths:
        return []
    masked = text
    for start, end, _ in paths:  # so that a number inside a path is never a line count
        masked = masked[:start] + " " * (end - start) + masked[end:]
    ranges: dict[str, list] = {path: [] for _, _, path in paths}
    loose = []
    for start, end, kind, n in _find_ranges(masked):
        here = [p for p in paths if _clause(masked, p[0]) == _clause(masked, start)]
        if here:
            nearest = min(here, key=lambda p: _gap(p[:2], (start, end)))
            ranges[nearest[2]].append((start, kind, n))
        else:
            loose.append((start, end, kind, n))
    for start, end, kind, n in loose:
        targets = [path for path, found in ranges.items() if not found]
        for path in targets or [min(paths, key=lambda p: _gap(p[:2], (start, end)))[2]]:
            ranges[path].append((start, kind, n))
    reads = []
    for path, found in ranges.items():
        for read in [(path, kind, n) for _, kind, n in sorted(found)] or [(path, None, None)]:
            if read not in reads:
                reads.append(read)
    return reads


def _properties(tool: dict) -> dict:
    return (tool.get("parameters") or {}).get("properties") or {}


def _types(schema: Any) -> list:
    """The JSON types a property allows; strict schemas write "string or null" as a list or anyOf."""
    if not isinstance(schema, dict):
        return []
    declared = schema.get("type")
    return (declared if isinstance(declared, list) else [declared]) + [
        kind for branch in schema.get("anyOf") or [] for kind in _types(branch)
    ]


def _path_property(tool: dict) -> str | None:
    """The string property that takes the file path: named like a path, else described as one."""
    strings = {name: schema for name, schema in _properties(tool).items() if "string" in _types(schema)}
    for name in strings:
        if name.lower() in ("path", "file_path", "filepath", "filename", "file", "note_path"):
            return name
    for name, schema in strings.items():
        if re.search(r"path|file", str(schema.get("description", "")), re.I):
            return name
    return None


def _is_reader(tool: dict) -> bool:
    """A tool whose name (`read_text_file`, `fs__read_text_file`, `read_note`) or description
    says it reads a file or text."""
    words = set(re.split(r"[^a-z]+", tool["name"].lower()))
    if words & {"media", "image", "info", "metadata", "multiple"}:  # about a file, but not its text
        return False
    verb = words & {"read", "view", "open", "cat", "show", "load"} or {"get"} <= words and words & {"text", "contents"}
    by_name = verb and words & {"file", "files", "text", "note", "notes", "doc", "document", "contents", "content"}
    description = str(tool.get("description", ""))
    by_description = re.search(r"\bread(s|ing)?\b[^.]*\b(files?|text|notes?|documents?)\b", description, re.I)
    return bool(by_name or by_description)


def _mentions(text: str, word: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])", text, re.I) is not None


def _find_reader_tool(tools: list[dict], text: str) -> dict | None:
    """The file-reading tool to use: one named in the request ("using ref__read_text_file"),
    else one whose alias prefix is named ("with the ref server"), else the first declared."""
    readers = [tool for tool in tools if _is_reader(tool) and _path_property(tool)]

    def score(tool: dict) -> int:
        prefix, sep, _ = tool["name"].partition("__")
        return 2 if _mentions(text, tool["name"]) else 1 if sep and _mentions(text, prefix) else 0

    return max(readers, key=score, default=None)  # max keeps the first of equals: declaration order


def _arguments(tool: dict, read: tuple[str, str | None, int | None]) -> dict[str, Any]:
    """Arguments for one read, in schema property order; head/tail only if the schema has them.
    A strict tool gets every property, with null for the ones not used (strict has no "absent")."""
    path, kind, n = read
    values = {_path_property(tool): path}
    if kind in _properties(tool):
        values[kind] = n
    strict = tool.get("strict") is True
    return {name: values.get(name) for name in _properties(tool) if name in values or strict}


def _latest_user_text(items: list[dict]) -> str:
    return next((item["text"] for item in reversed(items) if item.get("role") == "user"), "")


def _last_turn(items: list[dict]) -> list[dict]:
    """Everything after the last user message: the model's calls and their results so far."""
    users = [i for i, item in enumerate(items) if item.get("role") == "user"]
    return items[users[-1] + 1 :] if users else items


# ---- answering ------------------------------------------------------------------------------


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


def _listed(paths: list[str]) -> str:
    return " and ".join([", ".join(paths[:-1]), paths[-1]] if len(paths) > 1 else paths)


def _decide(items: list[dict], mode: str, tools: list[dict], parallel: bool, persona: str = "careful") -> list[tuple]:
    """The output plan: ("call", tool name, arguments) and ("message", text) entries.

    After results: answer from the results only (or, with serial calls, make the next one); the
    gullible persona first obeys a `CALL` line in the newest results (see the module docstring).
    Before results: call the tool for every read the request names, or reply in text.
    """
    text, turn = _latest_user_text(items), _last_turn(items)
    outputs = [item for item in turn if item["kind"] == "output"]
    if outputs and persona == "gullible" and mode != "none" and (obeyed := _injected_call(turn, tools)):
        return [obeyed]
    reads = _extract_reads(text)
    if mode in ("auto", "required") and not reads and (plan := _assistant_plan(text, turn, tools, mode, parallel)):
        return plan  # a question (no file named) and a search tool: the notes assistant's moves
    forced = tools[0] if mode == "forced" else None
    if mode == "none" or (forced and not _path_property(forced)):
        reader = None
    else:
        reader = forced or _find_reader_tool(tools, text)
    calls = [("call", reader["name"], _arguments(reader, read)) for read in reads] if reader else []
    if outputs:
        # Serial calls (parallel_tool_calls false) went out one per request, in plan order: ask for
        # the next one. Otherwise every call is answered, so answer from the results alone.
        made = sum(1 for item in turn if item["kind"] == "call")
        pending = [] if parallel else calls[made : made + 1]
        return pending or [("message", _answer_from_outputs(items, outputs))]
    if calls:
        return calls if parallel else calls[:1]
    if forced and not reader:  # a forced tool that takes no path: call it only if it needs nothing
        required = (forced.get("parameters") or {}).get("required") or []
        if not required:
            return [("call", forced["name"], {})]
        return [("message", f"To call {forced['name']} I need {_listed(required)}, and the request does not "
                 "give them. Could you tell me?")]
    return [("message", _reply_without_call(text, mode, reader, reads))]


# ---- the gullible persona: tool output taken as an instruction ---------------------------------

PERSONA_KEY = "course_persona"
PERSONAS = ("careful", "gullible")
_INJECTED_CALL = re.compile(r"^[ \t]*CALL[ \t]+([A-Za-z0-9_.-]+)[ \t]+(\{.*\})[ \t]*$", re.M)


def _persona(metadata: dict | None) -> str:
    """The persona the request's metadata asks for (default "careful").

    Raises:
        BadRequest: `course_persona` names no known persona.
    """
    persona = (metadata or {}).get(PERSONA_KEY, "careful")
    if persona not in PERSONAS:
        raise _invalid_value(persona, f"metadata.{PERSONA_KEY}", list(PERSONAS))
    return persona


def _injected_call(turn: list[dict], tools: list[dict]) -> tuple | None:
    """The first `CALL <tool> {...}` line in the results of the latest calls that names a tool
    this request lets the model call, as a ("call", name, arguments) entry."""
    latest = max(i for i, item in enumerate(turn) if item["kind"] == "call")
    names = {tool["name"] for tool in tools}
    for item in turn[latest + 1 :]:
        if item["kind"] != "output":
            continue
        for match in _INJECTED_CALL.finditer(_outcome(item["text"])[1]):  # the text as the model reads it
            name, raw = match.groups()
            try:
                arguments = json.loads(raw)
            except ValueError:
                continue
            if name in names and isinstance(arguments, dict):
                return ("call", name, arguments)
    return None


def _reply_without_call(text: str, mode: str, reader: dict | None, reads: list[tuple]) -> str:
    """Plain text when no call is made: tools off, no reading tool, no path, or nothing to read."""
    paths = list(dict.fromkeys(path for path, _, _ in reads))
    contents = "what they contain" if len(paths) > 1 else "what it contains"
    if paths and mode == "none":
        return (f"To answer I would need to read {_listed(paths)} with a tool, but tool use is turned off for "
                f'this request (tool_choice is "none"). I won\'t guess {contents}.')
    if paths:
        return (f"I can't read {_listed(paths)}: no file-reading tool is available for this request, and "
                f"I won't guess {contents}.")
    if reader and (mode in ("forced", "required") or _FILE_INTENT.search(text)):
        return "Which file should I read? Please give me its path; I won't guess one."
    if reader:
        offer = (f"I can read a text file with {reader['name']}: tell me its path and, if you like, which lines "
                 '(for example "the first 20 lines").')
    else:
        offer = "No file-reading tool is available for this request, so there is nothing I can look up."
    return "I'm an offline teaching model: I follow fixed rules and only answer from what a tool returns. " + offer


# ---- the notes assistant: search, read the hits, answer only from what was read ---------------
# Used when a search tool (a `query` string property) is declared and the request names no file.

_WORD = re.compile(r"[a-z0-9_]+")
_STOP_WORDS = frozenset("""
    a an the and or but if then than so as of to in on at by for with from into about over under between
    don doesn didn isn aren wasn weren won couldn shouldn wouldn haven hasn ll ve re
    is are was were be been being am do does did done have has had having get gets got
    i me my mine myself we us our you your yours it its they them their he she his her
    this that these those there here what which who whom whose when where why how whether
    can could should would will shall may might must need needs not no nor yes
    very just also only too more most much many some any all each every other another such own same
    please tell show explain describe give find search look list summarize summarise recall remind
    know knew known understand understanding learn learned mean means meaning think say says said
    note notes vs versus difference differences compare comparison
    gap gaps learning save saving incomplete weak missing yet still again top up least first
""".split())
_CHAT_WORDS = frozenset("""
    hi hello hey thanks thank cheers bye goodbye morning afternoon evening great helpful nice awesome
    cool ok okay welcome today lot doing going fine good
""".split())
_GAP_REQUEST = re.compile(
    r"\bgaps?\b|\bincomplete\b|\bweak (?:spots?|points?|areas?)\b|\b(?:don'?t|do not) (?:yet )?know\b"
    r"|\bhaven'?t (?:yet )?(?:learned|mastered)\b|薄弱|缺口|不完整|没掌握", re.I)  # fmt: skip
_ASKED_LIMIT = re.compile(r"\b(?:top|up to|at most)\s+(\d+)\s+(?:notes?|results?|hits?|matches)\b", re.I)
_BOUND = re.compile(r"\b([A-Za-z_]+): must be ([≤≥]) (-?\d+)")  # the app's INVALID_INPUT wording
_STUB_LINE = re.compile(r"^[ \t]*(?:TODO|TBD)\b.*$", re.M)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"(])")
EVIDENCE_MISSING = "The evidence is missing"
CHAT_REPLY = ("I answer questions from your notes: name a topic and I will search them, read the best "
              "matches and cite the notes I used. There is nothing to look up in this message, so I called no tool.")  # fmt: skip


def _stem(word: str) -> str:
    """retries → retry, calls → call, reading → read, approved → approv: enough to match forms."""
    if len(word) > 4 and word.endswith(("ies", "ied")):
        word = word[:-3] + "y"
    elif len(word) > 6 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 5 and word.endswith("ed"):
        word = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    return word[:-1] if len(word) > 4 and word.endswith("e") else word


def _stems(text: str) -> set[str]:
    return {_stem(word) for word in _WORD.findall(text.lower())}


def key_terms(text: str) -> list[str]:
    """The question's key terms: its words minus stop words, chit-chat and numbers, one per stem.

    "What is the difference between call_id and the MCP id?" → ["call_id", "mcp", "id"].
    """
    terms: dict[str, str] = {}
    for word in _WORD.findall(text.lower()):
        if word not in _STOP_WORDS and word not in _CHAT_WORDS and not word.isdigit() and len(word) > 1:
            terms.setdefault(_stem(word), word)
    return list(terms.values())


def _search_tool(tools: list[dict]) -> dict | None:
    """The first tool with a `query` string property (search_notes, notes__search_notes, ...)."""
    return next((tool for tool in tools if "string" in _types(_properties(tool).get("query"))), None)


def _note_reader(tools: list[dict]) -> dict | None:
    """The tool that reads one note by path: a reader with a path property, named for notes if any is."""
    readers = [tool for tool in tools if _is_reader(tool) and _path_property(tool)]
    noted = [tool for tool in readers if {"note", "notes"} & set(re.split(r"[^a-z]+", tool["name"].lower()))]
    return (noted or readers or [None])[0]


def _gap_writer(tools: list[dict]) -> dict | None:
    """The tool that saves a learning gap: named for gaps, with a `topic` property."""
    return next((tool for tool in tools if "gap" in re.split(r"[^a-z]+", tool["name"].lower())
                 and "topic" in _properties(tool)), None)  # fmt: skip


def _fill(tool: dict, values: dict) -> dict:
    """Arguments in schema order; a strict tool gets every property (null when unused)."""
    strict = tool.get("strict") is True
    return {name: values.get(name) for name in _properties(tool) if name in values or strict}


@dataclass
class _Done:
    """One call of this turn and its result, as the model reads them."""

    kind: str  # "search", "read", "save" or "other"
    arguments: dict
    ok: bool
    data: Any = None
    code: str | None = None
    message: str = ""
    retryable: bool = False


def _done(turn: list[dict], search: dict, reader: dict | None, writer: dict | None) -> list[_Done]:
    """The calls of this turn that have results, in the order the results came back."""
    kinds = {search["name"]: "search", **({reader["name"]: "read"} if reader else {}),
             **({writer["name"]: "save"} if writer else {})}  # fmt: skip
    calls = {item["call_id"]: item for item in turn if item["kind"] == "call"}
    done = []
    for item in turn:
        if item["kind"] != "output" or item["call_id"] not in calls:
            continue
        call = calls[item["call_id"]]
        try:
            arguments = json.loads(call["arguments"])
        except ValueError:
            arguments = {}
        ok, message, code = _outcome(item["text"])
        try:
            parsed = json.loads(item["text"])
        except ValueError:
            parsed = None
        data = parsed.get("data") if isinstance(parsed, dict) and parsed.get("ok") is True else parsed
        error = parsed.get("error") if isinstance(parsed, dict) else None
        retryable = isinstance(error, dict) and error.get("retryable") is True
        done.append(_Done(kinds.get(call["name"], "other"), arguments if isinstance(arguments, dict) else {},
                          ok, data if ok else None, code, message, retryable))  # fmt: skip
    return done


def _hits(step: _Done) -> list[dict]:
    """The hits of a successful search worth reading: a path, a score above 0 and at least half
    the best score (a hit far behind the best one is rarely about the question)."""
    hits = step.data.get("hits") if isinstance(step.data, dict) else None
    scored = [hit for hit in hits or [] if isinstance(hit, dict) and isinstance(hit.get("path"), str)
              and isinstance(hit.get("score"), (int, float)) and hit["score"] > 0]  # fmt: skip
    best = max((hit["score"] for hit in scored), default=0)
    return [hit for hit in scored if hit["score"] * 2 >= best]


def _search_again(last: _Done, searches: list[_Done]) -> dict | None:
    """New arguments after a failed search: a bound the error names (limit: must be ≤ 20), or the
    same arguments once more for a retryable failure. None: no honest way to recover."""
    if last.code == "INVALID_INPUT":
        fixed = dict(last.arguments)
        for name, _, bound in _BOUND.findall(last.message):
            if name in fixed:
                fixed[name] = int(bound)
        if all(step.arguments != fixed for step in searches):
            return fixed
    if last.retryable and sum(step.arguments == last.arguments for step in searches) < 2:
        return last.arguments
    return None


def _assistant_plan(text: str, turn: list[dict], tools: list[dict], mode: str, parallel: bool) -> list[tuple] | None:
    """The assistant's next move, or None when this behaviour does not apply (no search tool).

    1. search with the question's key terms; 2. read the best hits (score > 0 and at least half the
    best, at most two, in one response); a hit that is gone (NOT_FOUND) → search once more;
    3. answer only from the notes read, citing them, or say the evidence is missing; 4. when asked
    for gaps, propose one from what was read.
    """
    search = _search_tool(tools)
    if search is None:
        return None
    terms = key_terms(text)
    if not terms and not any(item["kind"] == "call" for item in turn):
        return None if mode == "required" else [("message", CHAT_REPLY)]  # chit-chat: nothing to look up
    reader, writer = _note_reader(tools), _gap_writer(tools)
    done = _done(turn, search, reader, writer)
    searches = [step for step in done if step.kind == "search"]
    if not searches:
        limit = _ASKED_LIMIT.search(text)
        values = {"query": " ".join(terms), **({"limit": int(limit.group(1))} if limit else {})}
        return [("call", search["name"], _fill(search, values))]
    last = searches[-1]
    if not last.ok:
        again = _search_again(last, searches)
        if again is not None:
            return [("call", search["name"], again)]
        return [("message", f"{EVIDENCE_MISSING}: {search['name']} failed ({last.code}: {last.message}), so I "
                 "could not look at your notes. I won't answer from memory.")]  # fmt: skip
    path_key = _path_property(reader) if reader else None
    reads = [step for step in done if step.kind == "read"]
    read_ok = {step.data.get("path") or step.arguments.get(path_key): step.data
               for step in reads if step.ok and isinstance(step.data, dict)}
    tried = {step.arguments.get(path_key) for step in reads} | set(read_ok)
    since = [step for step in done[done.index(last) + 1 :] if step.kind == "read"]
    room = min(2 - len(read_ok), 2 - len(since))
    planned = [hit["path"] for hit in _hits(last) if hit["path"] not in tried][: max(room, 0)]
    if planned and reader:
        calls = [("call", reader["name"], _fill(reader, {path_key: path})) for path in planned]
        return calls if parallel else calls[:1]
    if any(step.code == "NOT_FOUND" for step in since) and len(searches) < 2:
        return [("call", search["name"], last.arguments)]  # a hit has gone: the index may have moved on
    return _final_moves(text, terms, done, last, read_ok, reader, writer)


@dataclass(frozen=True)
class _ReadNote:
    path: str
    title: str
    text: str

    @property
    def todo(self) -> str | None:
        match = _STUB_LINE.search(self.text)
        if match is None:
            return None
        line = match.group().strip()
        return line if len(line) <= 60 else line[:59] + "…"


def _sentences(text: str) -> list[str]:
    """The note's sentences, verbatim, without its title, TODO lines and `Updated:` line."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#") and not _STUB_LINE.match(line) and not line.startswith("Updated:"):
            out += [part for part in _SENTENCE_END.split(line) if part]
    return out


def _final_moves(text: str, terms: list[str], done: list[_Done], last: _Done, read_ok: dict, reader: dict | None,
                 writer: dict | None) -> list[tuple]:  # fmt: skip
    """Answer from the notes read (or say the evidence is missing); then, if asked, the gap."""
    notes = [_ReadNote(path, str(data.get("title") or path), str(data.get("text") or "")) for path, data in read_ok.items()]
    usable = [note for note in notes if note.todo is None]
    stubs = [note for note in notes if note.todo is not None]
    found = set().union(*(_stems(note.text) for note in usable))
    covered = [term for term in terms if _stem(term) in found]
    missing = [term for term in terms if _stem(term) not in found]
    if usable and len(covered) * 2 > len(terms):
        body = _quoted_answer(terms, usable, missing, stubs)
    else:
        body = _missing_evidence(last, done, notes, stubs, missing, reader)
    if writer is None or not _GAP_REQUEST.search(text):
        return [("message", body)]
    saves = [step for step in done if step.kind == "save"]
    if saves:
        return [("message", f"{body}\n\n{_save_outcome(saves[-1])}")]
    gap = _learning_gap(notes, stubs, missing, str(last.arguments.get("query", "")))
    if gap is None:
        return [("message", f"{body}\n\nI found no learning gap to save: the notes I read cover the key terms "
                 "of your question.")]  # fmt: skip
    proposal = f"{body}\n\nI propose to save this learning gap, once you approve it: {gap['topic']}."
    return [("message", proposal), ("call", writer["name"], _fill(writer, gap))]


def _quoted_answer(terms: list[str], usable: list[_ReadNote], missing: list[str], stubs: list[_ReadNote]) -> str:
    """Up to two sentences per note that hold the most key terms, each tagged with its note."""
    wanted = {_stem(term) for term in terms}
    lines, cited = ["From your notes:"], []
    for note in usable:
        sentences = _sentences(note.text)
        # The first sentence summarises the note, so it speaks about the title's terms too.
        about = 1 if _stems(note.title) & wanted else 0
        scored = [(len(_stems(s) & wanted) + (about if i == 0 else 0), i) for i, s in enumerate(sentences)]
        best = sorted(i for _, i in sorted((-n, i) for n, i in scored if n > 0)[:2])
        lines += [f"- {sentences[i]} [{note.path}]" for i in best]
        cited += [note.path] if best else []
    if missing:
        lines.append(f"Your notes do not mention: {', '.join(missing)}.")
    lines += [f"{note.path} is only a stub, so I did not use it." for note in stubs]
    return "\n".join(lines) + "\n\nSources: " + ", ".join(cited)


def _missing_evidence(last: _Done, done: list[_Done], notes: list[_ReadNote], stubs: list[_ReadNote],
                      missing: list[str], reader: dict | None) -> str:  # fmt: skip
    """Why the notes cannot support an answer, from what was actually searched and read."""
    reasons = []
    hits = _hits(last)
    if not hits:
        reasons.append(f"searching your notes for {last.arguments.get('query')!r} found no matching note")
    elif reader is None:
        reasons.append(f"the search found {', '.join(hit['path'] for hit in hits)}, but I have no tool to read them")
    failed = [step for step in done if step.kind == "read" and not step.ok]
    reasons += [f"I could not read {step.arguments.get(_path_property(reader) or 'path')} ({step.code})"
                for step in failed]  # fmt: skip
    reasons += [f"{note.path} is only a stub ({note.todo!r})" for note in stubs]
    usable = [note.path for note in notes if note not in stubs]
    if usable and missing:
        reasons.append(f"the notes I read ({', '.join(usable)}) do not mention {', '.join(missing)}")
    return f"{EVIDENCE_MISSING}: {'; '.join(reasons) or 'nothing I read answers this'}. I won't answer from memory."


def _learning_gap(notes: list[_ReadNote], stubs: list[_ReadNote], missing: list[str], query: str) -> dict | None:
    """A learning gap derived from what was read: a stub note, else key terms no note mentions."""
    if stubs:
        stub = stubs[0]
        return {"topic": stub.title, "evidence": f"{stub.path} is only a stub: {stub.todo!r}",
                "suggestion": f"Write the note {stub.title!r} in your own words, then ask me again to check it."}  # fmt: skip
    if missing:
        topic = ", ".join(missing)
        read = [note.path for note in notes]
        where = f"the notes I read ({', '.join(read)}) never mention" if read else f"a search for {query!r} found nothing on"
        return {"topic": topic, "evidence": f"{where} {topic}",
                "suggestion": f"Add a short note on {topic}: what it is, when it matters, and one example."}  # fmt: skip
    return None


def _save_outcome(step: _Done) -> str:
    """What became of the proposed gap, from the save tool's real result."""
    if step.ok and isinstance(step.data, dict) and "record_id" in step.data:
        again = " It was already saved: the server returned the first record." if step.data.get("replayed") else ""
        return f"Saved the learning gap as record {step.data['record_id']}.{again}"
    if step.code == "FORBIDDEN":
        return f"I did not save the learning gap: {step.message}."
    return f"Saving the learning gap failed ({step.code or 'error'}): {step.message}"


# ---- the Response body ----------------------------------------------------------------------


def _hex(seed: str, label: str, length: int) -> str:
    return hashlib.sha256(f"{seed}|{label}".encode()).hexdigest()[:length]


def _tokens(text: str) -> int:
    return math.ceil(len(text) / 4)  # a rough, deterministic stand-in for a tokenizer


def _output_item(entry: tuple, seed: str, index: int) -> dict[str, Any]:
    if entry[0] == "call":
        return {"type": "function_call", "id": f"fc_{_hex(seed, f'fc{index}', 24)}",
                "call_id": f"call_{_hex(seed, f'call{index}', 12)}", "name": entry[1],
                "arguments": json.dumps(entry[2], separators=(",", ":"), ensure_ascii=False), "status": "completed"}
    return {"type": "message", "id": f"msg_{_hex(seed, f'msg{index}', 24)}", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": entry[1], "annotations": [], "logprobs": []}]}


def respond(body: dict) -> dict:
    """Answer one `POST /v1/responses` body with a Response JSON dict (pure and deterministic).

    Raises:
        BadRequest: the body is malformed, as the real API would reject it.
    """
    if not isinstance(body, dict):
        raise _type_error("body", dict, body)
    model = _get(body, "model", "", str)
    if body.get("stream"):
        raise BadRequest("The offline model does not stream; leave 'stream' unset.", "stream", "unsupported_value")
    if body.get("previous_response_id"):
        raise BadRequest("The offline model keeps no state: send the earlier items in 'input' instead of "
                         "'previous_response_id'.", "previous_response_id", "unsupported_parameter")
    instructions = _get(body, "instructions", "", str, optional=True)
    parallel = _get(body, "parallel_tool_calls", "", bool, optional=True)
    metadata = _get(body, "metadata", "", dict, optional=True)
    for key, value in (metadata or {}).items():
        if not isinstance(value, str):
            raise _type_error(f"metadata.{key}", str, value)
    persona = _persona(metadata)
    items = _parse_input(body)
    mode, allowed = _tool_policy(body, _parse_tools(body))
    _check_pairs(items)
    seed = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    plan = _decide(items, mode, allowed, parallel is not False, persona)
    output = [_output_item(entry, seed, i) for i, entry in enumerate(plan)]
    produced = "".join(part["text"] for item in output for part in item.get("content", []))
    produced += "".join(item.get("name", "") + item.get("arguments", "") for item in output)
    input_tokens, output_tokens = _tokens(seed), _tokens(produced)
    return {
        "id": f"resp_{_hex(seed, 'resp', 24)}", "object": "response", "created_at": CREATED_AT,
        "status": "completed", "background": False, "completed_at": CREATED_AT, "error": None,
        "incomplete_details": None, "instructions": instructions, "max_output_tokens": None,
        "model": model, "output": output, "parallel_tool_calls": parallel is not False,
        "previous_response_id": None, "reasoning": {"effort": None, "summary": None},
        "service_tier": "default", "store": body.get("store") is not False, "temperature": 1.0,
        "text": {"format": {"type": "text"}, "verbosity": "medium"},
        "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools") or [], "top_p": 1.0,
        "truncation": "disabled", "user": None, "metadata": metadata or {},
        "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
                  "output_tokens": output_tokens, "output_tokens_details": {"reasoning_tokens": 0},
                  "total_tokens": input_tokens + output_tokens},
    }


# ---- HTTP: in-process transport and a real local server --------------------------------------


def _json_response(status: int, payload: dict, headers: dict[str, str] | None = None) -> httpx.Response:
    content = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    return httpx.Response(status, content=content, headers={"content-type": "application/json", **(headers or {})})


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> httpx.Response:
    return _json_response(status, BadRequest(message).to_body(), headers)


def handle(request: httpx.Request) -> httpx.Response:
    """Serve one HTTP request: POST …/responses → a Response body; errors in the OpenAI format
    (400 malformed body, 404 unknown path, 405 other methods)."""
    path = request.url.path
    if not path.rstrip("/").endswith("/responses"):
        return _error(404, f"Invalid URL ({request.method} {path})")
    if request.method != "POST":
        return _error(405, f"Method {request.method} is not allowed on {path}; use POST.", {"allow": "POST"})
    try:
        body = json.loads(request.content)
    except ValueError as exc:  # also covers bytes that are not UTF-8
        return _error(400, f"We could not parse the JSON body of your request: {exc}.")
    try:
        return _json_response(200, respond(body))
    except BadRequest as exc:
        return _json_response(400, exc.to_body())


def offline_transport() -> httpx.MockTransport:
    """An httpx transport that answers in-process with the offline model: no network at all."""
    return httpx.MockTransport(handle)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the openai client expects

    def _relay(self) -> None:
        content = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        response = handle(httpx.Request(self.command, f"http://offline{self.path}", content=content))
        self.send_response(response.status_code)
        for key, value in response.headers.items():
            if key.lower() != "content-length":
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(response.content)))
        self.end_headers()
        self.wfile.write(response.content)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _relay

    def log_message(self, format: str, *args: Any) -> None:
        pass  # quiet: one line per request would drown the notebook or terminal


def serve(port: int, host: str = "127.0.0.1") -> None:
    """Serve the offline model at `http://host:port/v1/responses` until Ctrl-C or SIGTERM."""
    server = ThreadingHTTPServer((host, port), _Handler)
    in_main = threading.current_thread() is threading.main_thread()  # signals only work there

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt  # leave serve_forever the same way Ctrl-C does

    previous = signal.signal(signal.SIGTERM, stop) if in_main else None
    print(f"offline model listening on http://{host}:{server.server_address[1]}/v1 (POST /v1/responses); "
          "Ctrl-C to stop", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if previous is not None:  # None: not the main thread, or a handler Python did not install
            signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> None:
    """`python -m course_lib.offline_model --port 8765 [--host 127.0.0.1]`."""
    parser = argparse.ArgumentParser(
        prog="python -m course_lib.offline_model", description="Serve the deterministic offline model over HTTP."
    )
    parser.add_argument("--port", type=int, default=8765, help="port to listen on (0: any free port)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: local only)")
    args = parser.parse_args(argv)
    serve(args.port, args.host)


if __name__ == "__main__":
    main()
