"""Reading a tool's output as a model reads it: as text, whatever shape the host forwarded and
whatever server wrote it.

A host decides what goes into `function_call_output.output`. The course's own host sends the
execution layer's `{"ok": true, "data": …}` / `{"ok": false, "error": {code, message, retryable}}`,
or a read's plain text. Other hosts send other things for the same MCP result, and a real model
reads them all the same way:

- the OpenAI Agents SDK forwards only the text of the content blocks, dropping `isError`: a refused
  read arrives as the server's own words (`FORBIDDEN: path is outside /workspace` from the course's
  server, `Access denied - path outside allowed directories: …` from the Node reference server);
  with `use_structured_content=True` a success arrives as the JSON of `structuredContent`
  (`{"path": …, "text": …, "lines": 5}`, or the Node server's `{"content": "…"}`); its own words
  for a tool that failed: "An error occurred while running the tool. Please try again.",
  "Tool 'x' timed out after 5 seconds.", "Tool 'x' not found.";
- pydantic-ai forwards `structuredContent` of a success (a non-object as `{"return_value": …}`),
  wraps an error in `{"error": …}` (the course's servers' error text, `{"error": "FORBIDDEN: path is
  outside /workspace"}`, or the JSON of an error inside a string from servers that send a structured
  error), and asks for a retry with text that ends
  "Fix the errors and try again.";
- fastmcp's servers answer "Error calling tool 'x': …" (or just "Error calling tool 'x'" with
  masked details), "Unknown tool: 'x'", "2 validation errors for call[x] …", or a `ToolError`'s text;
- others send an MCP result object (`{"content": […], "isError": true}`), a list of content blocks,
  or "Error executing tool …" text.

`read_output` turns any of these into one `Reading`: success with the text to quote (a structured
read's `text` or `content` string, never its JSON), or an error with its code and message (found
through JSON nested in strings, and in a leading `CODE: message` line). Only a line whose code looks
like an error code counts (FORBIDDEN, NOT_FOUND, an errno name such as ENOENT, a name with ERROR,
INVALID, DENIED…), so a note whose first line is "TODO: …" or "NOTE: …" is still read as content.

Plain words count too, as a model reads them: a one-line output that opens as a refusal or an
error does ("Access denied …", "Permission denied", "ENOENT: …", "Cannot specify both head and tail
parameters simultaneously", "No such file …", "Unknown tool: …", "… timed out …", a framework's
declined approval "Tool execution was not approved."; the openings are
in `_OPENINGS`, taken from the real messages of `fixtures/refusal_corpus.json`), and so does a
longer one in a framework's error form (a pydantic validation report, a retry request). Its `kind`
(FORBIDDEN, NOT_FOUND, INVALID_INPUT, TIMEOUT) is the model's understanding, used to say what to
try next; its `code` stays None, since the tool named none. The price, paid on purpose: a file whose
one requested line happens to open like a refusal is reported as an error, never the other way
round.
"""

from __future__ import annotations

import errno
import json
import re
from dataclasses import dataclass
from typing import Any

# The codes of the course's servers and execution layer, and the common ones of other tools.
_KNOWN_CODES = frozenset("INVALID_INPUT FORBIDDEN NOT_FOUND APPROVAL_REQUIRED TIMEOUT UPSTREAM_ERROR CONFLICT "
                         "UNAUTHORIZED UNAUTHENTICATED PERMISSION_DENIED RATE_LIMITED UNAVAILABLE BAD_REQUEST "
                         "INTERNAL INTERNAL_ERROR ABORTED CANCELLED DEADLINE_EXCEEDED".split())  # fmt: skip
_ERROR_WORDS = frozenset("ERROR ERR FAIL FAILED FAILURE INVALID DENIED FORBIDDEN REFUSED REJECTED UNAUTHORIZED "
                         "TIMEOUT EXCEEDED UNAVAILABLE CONFLICT MISSING".split())  # fmt: skip
_ERRNO_NAMES = frozenset(errno.errorcode.values())  # ENOENT, EACCES, EISDIR, …
_CODE_LINE = re.compile(r"\s*([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*): (.*\S)?\s*$", re.S)
_ERROR_PREFIX = re.compile(r"\s*(?:error (?:executing|calling) tool [^:\n]*|error):\s*", re.I)
# How other servers and frameworks open an error in plain words (their real messages are in
# fixtures/refusal_corpus.json), and the kind of failure each means; None: a failure of no known kind.
_OPENINGS = [(re.compile(pattern, re.I), kind) for pattern, kind in [
    (r"(?:access|permission) denied|operation not permitted|not (?:allowed|permitted)\b|forbidden\b"
     r"|unauthori[sz]ed|path outside allowed"
     # a framework's decline of an approval (Mastra, the Agents SDK, pydantic-ai): nothing ran
     r"|(?:the )?tool (?:call|execution) (?:was|has been) (?:not approved|denied|declined|rejected)"
     r"|not approved by the user", "FORBIDDEN"),
    (r"(?:file |path |tool )?not found\b|no such (?:file|directory|tool)|unknown tool\b|tool '[^']*' not found"
     r"|(?:file|path|directory) .* does not exist", "NOT_FOUND"),
    (r"tool '[^']*' timed out|(?:the )?(?:request|operation|call|read|tool) timed out|timed out after\b"
     r"|deadline exceeded", "TIMEOUT"),
    (r"cannot\b|can't\b|invalid\b|\d+ validation errors? for\b|input validation error|missing required"
     r"|unable to\b|could(?: not|n't)\b", "INVALID_INPUT"),
    (r"an error occurred\b|error calling tool\b|(?:the )?(?:request|call|operation|tool call|read) "
     r"(?:failed|was refused|was rejected)\b|failed to\b", None),
]]  # fmt: skip
# A longer output that is an error as a whole: a validation report, or a framework asking for a retry.
_ERROR_REPORTS = [(re.compile(r"\s*\d+ validation errors? for\b", re.I), "INVALID_INPUT"),
                  (re.compile(r"[\s\S]*\bFix the errors and try again\.\s*$"), "INVALID_INPUT"),
                  (re.compile(r"\s*error calling tool\b", re.I), None)]
_ERRNO_TAG = re.compile(r"\s*\[errno (\d+)\]", re.I)  # Python's "[Errno 2] No such file or directory: …"
_MAX_DEPTH = 4  # JSON in a string in JSON …: deeper than this is quoted as it is


@dataclass(frozen=True)
class Reading:
    """One tool output as the model understood it.

    ok: success or error. text: on success the text to quote, on error the error message.
    code: the error code, when the output names one. data: the parsed JSON of a success (the
    execution layer's `data`, or the structured content itself), else None. retryable: as the
    output says, else None. envelope: the output is the execution layer's `{"ok": …}` object (the
    course's own host), which carries `retryable` for the host's retry policy. kind: for an error
    in plain words, what kind it is (FORBIDDEN, NOT_FOUND, INVALID_INPUT, TIMEOUT, an errno name).
    """

    ok: bool
    text: str
    code: str | None = None
    data: Any = None
    retryable: bool | None = None
    envelope: bool = False
    kind: str | None = None

    @property
    def failure(self) -> str | None:
        """The code that says what kind of failure this is: the tool's own, else the model's reading
        of its words (`kind`); None for a success or a failure of no known kind."""
        return self.code or self.kind


def _is_error_code(code: str) -> bool:
    """Whether a leading `CODE:` names an error: a known code, an errno name, or a name made with
    an error word (ACCESS_DENIED, TOOL_ERROR); never TODO, NOTE, WARNING or a heading."""
    return code in _KNOWN_CODES or code in _ERRNO_NAMES or bool(_ERROR_WORDS & set(code.split("_")))


def _parse(text: str) -> Any:
    """The JSON value of `text` when it is an object, array or string; else None."""
    stripped = text.strip()
    if not stripped or stripped[0] not in '{["':
        return None
    try:
        value = json.loads(stripped)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, (dict, list, str)) else None


def _code_line(text: str) -> tuple[str, str] | None:
    """(code, message) for an error line `CODE: message`: one line, or a known code's first line."""
    match = _CODE_LINE.match(text)
    if match is None or not _is_error_code(match.group(1)):
        return None
    message = (match.group(2) or "").strip()
    if "\n" in message and match.group(1) not in _KNOWN_CODES:
        return None  # several lines after an unfamiliar code: more likely content than an error
    return match.group(1), message


def _read_text(text: str, depth: int) -> Reading:
    """Plain text, or text that holds JSON."""
    value = _parse(text) if depth < _MAX_DEPTH else None
    if value is not None:
        return _read_value(value, text, depth + 1)
    if _ERROR_PREFIX.match(text):  # "Error: …", "Error executing tool read_text_file: …", fastmcp's "Error calling tool"
        inner = _read_text(_ERROR_PREFIX.sub("", text, count=1), depth + 1) if depth < _MAX_DEPTH else None
        failed = inner is not None and not inner.ok
        return Reading(False, text.strip(), inner.code if failed else None, kind=inner.kind if failed else None)
    found = _code_line(text)
    if found is not None:
        return Reading(False, found[1] or found[0], found[0])
    kind = _in_plain_words(text)
    if kind is not False:
        return Reading(False, text.strip(), kind=kind)
    return Reading(True, text)


def _in_plain_words(text: str) -> str | None | bool:
    """The kind of error `text` reports in plain words (see the module docstring), None for an error
    of no known kind, False when it reads as content."""
    for pattern, kind in _ERROR_REPORTS:
        if pattern.match(text):
            return kind
    stripped = text.strip()
    if not stripped or "\n" in stripped:
        return False  # an opening counts on one line only: more lines are more likely content
    errno_tag = _ERRNO_TAG.match(stripped)
    if errno_tag is not None:
        return errno.errorcode.get(int(errno_tag.group(1)))
    for pattern, kind in _OPENINGS:
        if pattern.match(stripped):
            return kind
    return False


def _error_of(value: Any, depth: int) -> Reading | None:
    """The error inside a message or an `error` value, when it holds one (nested JSON, a code line)."""
    if isinstance(value, str) and depth < _MAX_DEPTH:
        inner = _read_text(value, depth + 1)
        return None if inner.ok else inner
    if isinstance(value, dict) and depth < _MAX_DEPTH:
        inner = _read_object(value, "", depth + 1)  # only its error matters: no text needed
        return None if inner.ok else inner
    return None


def _error(code: Any, message: Any, retryable: Any, depth: int, *, envelope: bool = False,
           fallback: str = "") -> Reading:
    """An error Reading from a code and a message, looking into the message for a nested error."""
    inner = _error_of(message, depth)
    if inner is not None:
        code = code if isinstance(code, str) and code else inner.code
        return Reading(False, inner.text, code, retryable=retryable if isinstance(retryable, bool) else inner.retryable,
                       envelope=envelope)  # fmt: skip
    text = message if isinstance(message, str) and message else fallback
    return Reading(False, text, code if isinstance(code, str) and code else None,
                   retryable=retryable if isinstance(retryable, bool) else None, envelope=envelope)  # fmt: skip


def _blocks_text(blocks: list) -> str | None:
    """The joined text of MCP content blocks when every block is a text block; else None."""
    if not blocks or not all(isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
                             for b in blocks):  # fmt: skip
        return None
    return "\n".join(block["text"] for block in blocks)


def _compact(data: Any) -> str:
    try:
        return json.dumps(data, ensure_ascii=False)
    except (ValueError, RecursionError):  # nested past what the encoder takes
        return str(type(data).__name__)


def _read_object(data: dict, text: str, depth: int) -> Reading:
    error = data.get("error")
    if data.get("ok") is False:  # the execution layer's failure (the course's own host)
        details = error if isinstance(error, dict) else {}
        message = details.get("message", error if isinstance(error, str) else data.get("message"))
        return _error(details.get("code", data.get("code")), message, details.get("retryable"), depth,
                      envelope=True, fallback=_compact(data))  # fmt: skip
    if data.get("ok") is True and "data" in data:  # the execution layer's success
        inner = data["data"]
        if isinstance(inner, dict) and isinstance(inner.get("text"), str):
            return Reading(True, inner["text"], data=inner, envelope=True)
        try:
            pretty = json.dumps(inner, indent=2, ensure_ascii=False)
        except (ValueError, RecursionError):  # nested past what the encoder takes: quote the text as sent
            pretty = text
        return Reading(True, pretty, data=inner, envelope=True)
    structured = data.get("structuredContent")
    blocks = _blocks_text(data["content"]) if isinstance(data.get("content"), list) else None
    if data.get("isError") is True:  # an MCP result object with its flag
        nested = structured.get("error") if isinstance(structured, dict) else None
        code = nested.get("code") if isinstance(nested, dict) else data.get("code")
        message = blocks if blocks is not None else nested.get("message") if isinstance(nested, dict) else None
        return _error(code, message, None, depth, fallback=_compact(data))
    if error:  # {"error": {...}}, {"error": "message"}, {"error": "<JSON text>"}, {"error": [validation errors]}
        if _validation_errors(error):  # pydantic-ai retrying a call whose arguments failed validation
            return Reading(False, "; ".join(f"{'.'.join(map(str, e.get('loc') or ())) or 'arguments'}: {e['msg']}"
                                            for e in error), kind="INVALID_INPUT")  # fmt: skip
        if isinstance(error, dict):
            return _error(error.get("code", data.get("code")), error.get("message"), error.get("retryable"), depth,
                          fallback=_compact(data))  # fmt: skip
        return _error(data.get("code"), error, data.get("retryable"), depth, fallback=str(error))
    code = data.get("code")
    if isinstance(code, str) and _is_error_code(code) and isinstance(data.get("message"), str):
        return _error(code, data["message"], data.get("retryable"), depth)  # {"code": "NOT_FOUND", "message": …}
    if blocks is not None and ("isError" in data or "structuredContent" in data):  # an MCP result, not an error
        if isinstance(structured, dict):
            return _read_value(structured, text, depth + 1)
        return _read_text(blocks, depth + 1)
    for key in ("text", "content", "result", "return_value"):  # structured content of a read: {"path": …, "text": …},
        if isinstance(data.get(key), str):  # the Node server's {"content": …}, fastmcp's {"result": …}, pydantic-ai's
            return Reading(True, data[key], data=data)  # {"return_value": …}
    return Reading(True, text, data=data)


def _validation_errors(value: Any) -> bool:
    """Whether `value` is a list of pydantic error details (`{"type", "loc", "msg", …}`)."""
    return isinstance(value, list) and bool(value) and all(
        isinstance(e, dict) and isinstance(e.get("msg"), str) and "loc" in e for e in value)


def _read_value(value: Any, text: str, depth: int) -> Reading:
    if isinstance(value, str):  # JSON text in a JSON string: read the string
        return _read_text(value, depth)
    if isinstance(value, dict):
        return _read_object(value, text, depth)
    blocks = _blocks_text(value) if isinstance(value, list) else None
    if blocks is not None:  # a list of content blocks
        return _read_text(blocks, depth)
    return Reading(True, text, data=value)


def read_output(text: str) -> Reading:
    """Read one `function_call_output.output` text as a model would (see the module docstring)."""
    return _read_text(text, 0)
