"""The frame table: one malformed (or unusual) JSON-RPC frame per case, and what it must get back.

One table for every transport: `test_stdio_frames.py` sends each frame as a line to the two
stdio servers (both stdio paths), `test_http_frames.py` as the body of a POST to the same servers
over Streamable HTTP (both protocol eras). The check under test is `course_lib.frames`.

JSON-RPC 2.0 (https://www.jsonrpc.org/specification#error_object): input that is not JSON gets
-32700 with `"id": null`; a frame that is not a valid Request object gets -32600, with `"id":
null` when the id cannot be read; -32601 for an unknown method; -32602 for bad params. MCP adds
that a request id is a string or an integer, never null, and that notifications get no answer.
Batches: MCP 2025-03-26 added JSON-RPC batching and 2025-06-18 removed it (the changelogs under
docs/specification/ in modelcontextprotocol/modelcontextprotocol); no revision the course's
clients speak (2025-11-25, 2026-07-28) has it, so an array gets -32600, per request id inside it.

A malformed notification or response is never answered on stdio (a line on stderr instead); over
HTTP the POST itself must be answered, and the transport spec says how: "If the server cannot
accept the input, it MUST return an HTTP error status code (e.g., 400 Bad Request). The HTTP
response body MAY comprise a JSON-RPC error response that has no id." (2025-11-25 and 2026-07-28,
basic/transports). That is `refused`: logged on stdio, a 400 with that error code over HTTP.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from mcp_types import HEADER_MISMATCH  # the SDK's code for it (spec drafts have numbered it differently)

PARSE, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602

Answers = tuple[tuple[int | None, object], ...]  # (error code, or None for a result; the id)


def j(message: object) -> bytes:
    return json.dumps(message).encode()


def ping(id_: object) -> bytes:
    return j({"jsonrpc": "2.0", "id": id_, "method": "ping"})


def listing(id_: object) -> bytes:
    """`tools/list`: a method of every era (2026-07-28 has no `ping`)."""
    return j({"jsonrpc": "2.0", "id": id_, "method": "tools/list"})


def error(code: int, id_: object = None) -> Answers:
    return ((code, id_),)


@dataclass(frozen=True)
class Case:
    family: str
    name: str
    frame: bytes  # "@TOOL@" stands for the server's tool name
    answers: Answers = ()
    refused: int | None = None  # a notification or response that cannot be accepted: this code, id null
    stateless: Answers | int | None = None  # what the 2026-07-28 era answers instead, if it differs
    why_stateless: str = ""
    tool_error: bool = False  # answered with a result that must be the tool's own refusal (isError)

    def expected(self, era: str = "") -> tuple[Answers, int | None]:
        """(answers, refused) in an era ("2026-07-28" for the stateless one; stdio and 2025-11-25 agree)."""
        if era == "2026-07-28" and self.stateless is not None:
            return ((), self.stateless) if isinstance(self.stateless, int) else (self.stateless, None)
        return self.answers, self.refused


BIG_ID = 2**70  # bigger than any 64-bit integer: echoed exactly
LONG = "9" * 5000  # a valid JSON number with more digits than Python's int() or pydantic-core will convert
LONGEST = int("9" * 4300)  # the most digits they convert: an id this long is echoed exactly

CASES = [
    # Not JSON at all: -32700, id null.
    Case("parse", "truncated object", b'{"jsonrpc": "2.0", "id": 1, "method": "ping"', error(PARSE)),
    Case("parse", "plain text", b"hello", error(PARSE)),
    Case("parse", "trailing comma", b'{"jsonrpc": "2.0", "id": 1, "method": "ping",}', error(PARSE)),
    Case("parse", "single quotes", b"{'jsonrpc': '2.0', 'id': 1, 'method': 'ping'}", error(PARSE)),
    Case("parse", "empty frame", b"", error(PARSE)),
    Case("parse", "only whitespace", b" \t  \r", error(PARSE)),
    Case("parse", "truncated UTF-8 in a string",
         b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "\xe2\x82"}}', error(PARSE)),
    Case("parse", "a byte that is never UTF-8", b'\xff{"jsonrpc": "2.0", "id": 1, "method": "ping"}', error(PARSE)),
    Case("parse", "byte order mark", b'\xef\xbb\xbf{"jsonrpc": "2.0", "id": 1, "method": "ping"}', error(PARSE)),
    Case("parse", "lone surrogate escape",
         b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": "\\ud800"}}', error(PARSE)),
    Case("parse", "NaN", b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": NaN}}', error(PARSE)),
    Case("parse", "Infinity", b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": Infinity}}',
         error(PARSE)),
    Case("parse", "-Infinity as the id", b'{"jsonrpc": "2.0", "id": -Infinity, "method": "ping"}', error(PARSE)),
    Case("parse", "NaN in tools/call arguments", b'{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": '
         b'{"name": "@TOOL@", "arguments": {"head": NaN}}}', error(PARSE)),
    Case("parse", "two objects in one frame", ping(1) + ping(2), error(PARSE)),
    Case("parse", "trailing garbage", ping(1) + b" x", error(PARSE)),
    Case("parse", "nested 10000 deep", b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"x": '
         + b"[" * 10_000 + b"]" * 10_000 + b"}}", error(PARSE)),  # past the parser's depth limit
    # Arrays: MCP has no batches since 2025-06-18. -32600, for each request id inside, else once with null.
    Case("batch", "empty batch", b"[]", error(INVALID_REQUEST)),
    Case("batch", "batch of one request", b"[" + ping(7) + b"]", error(INVALID_REQUEST, 7)),
    Case("batch", "batch of two requests", b"[" + ping(8) + b", " + ping("nine") + b"]",
         ((INVALID_REQUEST, 8), (INVALID_REQUEST, "nine"))),
    Case("batch", "batch of a notification", b'[{"jsonrpc": "2.0", "method": "notifications/initialized"}]',
         error(INVALID_REQUEST)),
    Case("batch", "batch of a number", b"[1]", error(INVALID_REQUEST)),
    Case("batch", "nested empty batch", b"[[]]", error(INVALID_REQUEST)),
    # Not a Request object: -32600, with the id when it can be read.
    Case("envelope", "jsonrpc 1.0", b'{"jsonrpc": "1.0", "id": 10, "method": "ping"}', error(INVALID_REQUEST, 10)),
    Case("envelope", "jsonrpc missing", b'{"id": 11, "method": "ping"}', error(INVALID_REQUEST, 11)),
    Case("envelope", "jsonrpc a number", b'{"jsonrpc": 2.0, "id": 12, "method": "ping"}', error(INVALID_REQUEST, 12)),
    Case("envelope", "method missing", b'{"jsonrpc": "2.0", "id": 13}', error(INVALID_REQUEST, 13)),
    Case("envelope", "method a number", b'{"jsonrpc": "2.0", "id": 14, "method": 5}', error(INVALID_REQUEST, 14)),
    Case("envelope", "method null", b'{"jsonrpc": "2.0", "id": 15, "method": null}', error(INVALID_REQUEST, 15)),
    Case("envelope", "method a number, no id", b'{"jsonrpc": "2.0", "method": 1, "params": "bar"}',
         error(INVALID_REQUEST)),  # the JSON-RPC spec's own example
    Case("envelope", "params a string", b'{"jsonrpc": "2.0", "id": 16, "method": "ping", "params": "x"}',
         error(INVALID_REQUEST, 16)),
    Case("envelope", "empty object", b"{}", error(INVALID_REQUEST)),
    Case("envelope", "a number", b"1", error(INVALID_REQUEST)),
    Case("envelope", "a string", b'"ping"', error(INVALID_REQUEST)),
    Case("envelope", "null", b"null", error(INVALID_REQUEST)),
    Case("envelope", "true", b"true", error(INVALID_REQUEST)),
    # Ids MCP does not allow (string or integer, never null): -32600, id null (the SDK took these
    # for notifications, which get no answer: over HTTP a 202, the request never executed).
    Case("id", "id null", b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', error(INVALID_REQUEST)),
    Case("id", "id true", b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', error(INVALID_REQUEST)),
    Case("id", "id 1.5", b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}', error(INVALID_REQUEST)),
    Case("id", "id 1e999", b'{"jsonrpc": "2.0", "id": 1e999, "method": "ping"}', error(INVALID_REQUEST)),
    Case("id", "id an object", b'{"jsonrpc": "2.0", "id": {"n": 1}, "method": "ping"}', error(INVALID_REQUEST)),
    Case("id", "id an array", b'{"jsonrpc": "2.0", "id": [1], "method": "ping"}', error(INVALID_REQUEST)),
    Case("id", "id null on tools/call", b'{"jsonrpc": "2.0", "id": null, "method": "tools/call", "params": '
         b'{"name": "@TOOL@", "arguments": {}}}', error(INVALID_REQUEST)),
    Case("id", "id true on tools/call", b'{"jsonrpc": "2.0", "id": true, "method": "tools/call", "params": '
         b'{"name": "@TOOL@", "arguments": {}}}', error(INVALID_REQUEST)),
    Case("id", "id 1.5 on tools/call", b'{"jsonrpc": "2.0", "id": 1.5, "method": "tools/call", "params": '
         b'{"name": "@TOOL@", "arguments": {}}}', error(INVALID_REQUEST)),
    # Unusual ids that are allowed: answered normally, the id echoed exactly.
    Case("valid id", "huge integer id", listing(BIG_ID), ((None, BIG_ID),)),
    Case("valid id", "an id of 4300 digits (the most the parser holds)", listing(LONGEST), ((None, LONGEST),)),
    Case("valid id", "string id", listing("abc"), ((None, "abc"),)),
    Case("valid id", "empty string id", listing(""), ((None, ""),)),
    Case("valid id", "negative id", listing(-5), ((None, -5),)),
    Case("valid id", "id 0", listing(0), ((None, 0),)),
    # Numbers longer than the parser holds: valid JSON, so not -32700; the id is kept (frames.py says why).
    Case("long number", "5000 digits in tools/call arguments",
         b'{"jsonrpc": "2.0", "id": 40, "method": "tools/call", "params": {"name": "@TOOL@", "arguments": '
         b'{"path": "x", "head": ' + LONG.encode() + b"}}}", error(INVALID_PARAMS, 40)),
    Case("long number", "5000 digits, negative and fractional, in params",
         b'{"jsonrpc": "2.0", "id": "n", "method": "ping", "params": {"x": -' + LONG.encode() + b".5e3}}",
         error(INVALID_PARAMS, "n")),
    Case("long number", "5000 digits outside params", b'{"jsonrpc": "2.0", "id": 41, "method": "ping", "x": '
         + LONG.encode() + b"}", error(INVALID_REQUEST, 41)),
    Case("long number", "5000 digits as the id", b'{"jsonrpc": "2.0", "id": ' + LONG.encode() + b', "method": "ping"}',
         error(INVALID_REQUEST)),
    Case("long number", "5000 digits in a batch", b"[" + ping(42)[:-1] + b', "params": {"x": ' + LONG.encode()
         + b"}}]", error(INVALID_REQUEST, 42)),
    Case("long number", "5000 digits in a notification", b'{"jsonrpc": "2.0", "method": "notifications/cancelled", '
         b'"params": {"requestId": ' + LONG.encode() + b"}}", refused=INVALID_PARAMS),
    # Params of the wrong shape: -32602 with the id.
    Case("params", "array params on ping", b'{"jsonrpc": "2.0", "id": 20, "method": "ping", "params": []}',
         error(INVALID_PARAMS, 20)),
    Case("params", "array params on tools/list", b'{"jsonrpc": "2.0", "id": 21, "method": "tools/list", "params": [1]}',
         error(INVALID_PARAMS, 21)),
    Case("params", "array params on tools/call",
         b'{"jsonrpc": "2.0", "id": 22, "method": "tools/call", "params": ["read_text_file", {}]}',
         error(INVALID_PARAMS, 22)),
    Case("params", "tools/call without params", b'{"jsonrpc": "2.0", "id": 23, "method": "tools/call"}',
         error(INVALID_PARAMS, 23)),
    Case("params", "tools/call without a name", j({"jsonrpc": "2.0", "id": 24, "method": "tools/call",
                                                    "params": {"arguments": {}}}), error(INVALID_PARAMS, 24)),
    Case("params", "tools/call name a number", j({"jsonrpc": "2.0", "id": 25, "method": "tools/call",
                                                   "params": {"name": 5}}), error(INVALID_PARAMS, 25),
         stateless=error(HEADER_MISMATCH, 25),
         why_stateless="2026-07-28 checks the Mcp-Name header against params.name before anything else, and a "
                       "name that is not a string matches no header: HeaderMismatch"),
    Case("params", "tools/call arguments an array", j({"jsonrpc": "2.0", "id": 26, "method": "tools/call",
                                                        "params": {"name": "@TOOL@", "arguments": []}}),
         error(INVALID_PARAMS, 26)),
    Case("params", "tools/call unknown tool", j({"jsonrpc": "2.0", "id": 27, "method": "tools/call",
                                                  "params": {"name": "no_such_tool", "arguments": {}}}),
         error(INVALID_PARAMS, 27)),
    Case("params", "a number out of range (1e999) in the arguments",
         b'{"jsonrpc": "2.0", "id": 28, "method": "tools/call", "params": {"name": "@TOOL@", "arguments": '
         b'{"path": 1e999, "head": 1e999}}}', ((None, 28),), tool_error=True),  # read as inf: the tool refuses it
    # Unknown methods: -32601.
    Case("method", "unknown method", b'{"jsonrpc": "2.0", "id": 30, "method": "no/such/method"}',
         error(METHOD_NOT_FOUND, 30)),
    Case("method", "tools/calls (a typo)", b'{"jsonrpc": "2.0", "id": 31, "method": "tools/calls", "params": {}}',
         error(METHOD_NOT_FOUND, 31)),
    Case("method", "empty method", b'{"jsonrpc": "2.0", "id": 32, "method": ""}', error(METHOD_NOT_FOUND, 32)),
    # Notifications get no answer; a malformed one is refused (stdio: a line on stderr).
    Case("notification", "array params", b'{"jsonrpc": "2.0", "method": "notifications/initialized", "params": []}',
         refused=INVALID_PARAMS),
    Case("notification", "string params", b'{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": "x"}',
         refused=INVALID_REQUEST),
    Case("notification", "number params", b'{"jsonrpc": "2.0", "method": "notifications/initialized", "params": 5}',
         refused=INVALID_REQUEST),
    Case("notification", "true as params", b'{"jsonrpc": "2.0", "method": "notifications/roots/list_changed", '
                                           b'"params": true}', refused=INVALID_REQUEST),
    Case("notification", "unknown notification", b'{"jsonrpc": "2.0", "method": "notifications/no_such"}'),
    # Responses are never answered (the server sent no request); a malformed one is refused.
    Case("response", "a result for no request", b'{"jsonrpc": "2.0", "id": 99, "result": {}}',
         stateless=INVALID_REQUEST,
         why_stateless="2026-07-28: 'The client MUST NOT send JSON-RPC responses' (basic/transports/streamable-http)"),
    Case("response", "a result that is not an object", b'{"jsonrpc": "2.0", "id": 98, "result": 5}',
         refused=INVALID_REQUEST),
]
"""The table; each transport's test sends it to each server in this order."""


def shape(message: dict | str) -> tuple[int | None, object] | str:
    """(error code or None, id) of one answer; a description of anything that is not a JSON-RPC response."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0" or "id" not in message:
        return f"not a JSON-RPC response: {message!r}"[:300]
    if "error" in message:
        return message["error"]["code"], message["id"]
    return None, message["id"]


def plain_message_problems(label: str, messages: list) -> list[str]:
    """Every error has a message, a plain one: no pydantic validation dump."""
    problems = []
    for message in messages:
        error_ = message.get("error") if isinstance(message, dict) else None
        if error_ is None:
            continue
        text = error_.get("message")
        if not (isinstance(text, str) and text):
            problems.append(f"{label}: an error without a message: {message!r}"[:300])
        elif "validation error" in text.lower() or "pydantic" in text.lower() or len(text) > 400:
            problems.append(f"{label}: not a plain message: {text[:300]!r}")
    return problems


def tool_refused(label: str, case: Case, got: list) -> list[str]:
    """For a case answered by the tool's own refusal, exactly one result with isError."""
    if not case.tool_error:
        return []
    refused = [m for m in got if isinstance(m, dict) and m.get("result", {}).get("isError")]
    return [] if len(refused) == 1 else [f"{label}: expected the tool to refuse it, got {got!r}"[:400]]
