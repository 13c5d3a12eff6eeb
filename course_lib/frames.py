"""Every JSON-RPC frame judged before the SDK sees it, the same way on stdio and over HTTP.

A frame is one message as it arrives: a line on stdin (`course_lib.stdio`), the body of a POST
(`course_lib.http_transport`). The SDK drops or mislabels some frames it cannot use: over stdio it
logs a line it cannot parse at DEBUG and the sender waits forever; over HTTP it took a request
whose id MCP forbids (null, true, 1.5) for a notification (202, never executed) and answered a
batch or a wrong `jsonrpc` with -32602 and a pydantic dump. `check_frame` says, by JSON-RPC 2.0
and MCP, what each frame deserves (`Verdict`):

- forward it to the session (nearly every frame: one look at its members);
- answer it: -32700 for text that is not JSON, -32600 for a message that is not a valid request
  object (with its id when the id is usable), -32602 for params that are not an object;
- or, for a notification or a response, which JSON-RPC never answers: a `refusal` that stdio
  only logs and HTTP sends as its 400 body (the transport spec: a server that cannot accept a
  notification or response MUST answer with an HTTP error status, MAY with a JSON-RPC error
  without id).

A number too long for the parser (5,000 digits) is valid JSON; the message around it is read
with a tolerant scan so that the answer keeps the request's id (`_long_number_verdict`).
The cases are one table, `tests/frame_table.py`, run over both stdio paths and both HTTP eras.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

import mcp_types as types
import pydantic
import pydantic_core
from mcp_types import INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR

BATCH_REMOVED = ("JSON-RPC batches are not supported: MCP removed batching in revision 2025-06-18; "
                 "send each message by itself (a line on stdio, a POST over HTTP)")

LONGEST_NUMBER = sys.int_info.default_max_str_digits  # 4300: Python's and pydantic-core's limit for an integer


@dataclass(frozen=True)
class Verdict:
    """What to do with one frame: forward it to the session, or send `answers` (maybe none).

    `refusal` is set for a notification or a response that cannot be accepted: JSON-RPC never
    answers those, so stdio logs its message to stderr, and HTTP sends it (id null) with a 400.
    """

    forward: bool = False
    answers: tuple[types.JSONRPCError, ...] = ()
    refusal: types.JSONRPCError | None = None


FORWARD = Verdict(forward=True)


def error(id_: types.RequestId | None, code: int, message: str) -> types.JSONRPCError:
    """A JSON-RPC error response, as the SDK's own type."""
    return types.JSONRPCError(jsonrpc="2.0", id=id_, error=types.ErrorData(code=code, message=message))


def error_bytes(code: int, message: str, id_: types.RequestId | None = None) -> bytes:
    """One JSON-RPC error response as wire bytes (`"id": null` written out, as JSON-RPC requires)."""
    return error(id_, code, message).model_dump_json(by_alias=True, exclude_unset=True).encode()


def _refused(code: int, message: str) -> Verdict:
    return Verdict(refusal=error(None, code, message))


def valid_id(value: Any) -> bool:
    """MCP's rule for a request id: a string or an integer (never null, a boolean or a fraction)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def check_frame(frame: bytes) -> Verdict:
    """Judge one frame by JSON-RPC 2.0 and MCP before the SDK sees it.

    Not JSON (including invalid UTF-8, NaN, Infinity, an empty frame): -32700, id null. An array:
    -32600 for each request id in it (else once, id null), as MCP has no batches since 2025-06-18.
    Not a valid request object (jsonrpc not "2.0", method missing or not a string, params neither
    object nor array, an id that is not a string or an integer, 1e999 included): -32600, with the
    id when it is valid. Params that are an array: -32602. A number with more digits than the
    parser holds: see `_long_number_verdict`. A notification is never answered, nor a response:
    a malformed one gets a `refusal`. Everything else goes on to the session, which answers
    unknown methods (-32601) and bad params of known methods (-32602); a number too large for a
    float inside params (1e999) reaches the handler as inf, which argument checks refuse.
    """
    try:
        value = pydantic_core.from_json(frame, allow_inf_nan=False)  # the SDK's parser, strict about NaN
    except ValueError as problem:
        scanned = _tolerant_scan(frame)
        if scanned is not None:
            return _long_number_verdict(scanned)
        return Verdict(answers=(error(None, PARSE_ERROR, f"Parse error: {problem}"),))
    if type(value) is dict and _plain(value):  # nearly every message: one look at its members
        return FORWARD
    return check_value(value)


def _plain(frame: dict[str, Any]) -> bool:
    """A request or notification whose members are all of the right types (exact types: from JSON)."""
    id_ = frame.get("id", 0)
    params = frame.get("params")
    return (frame.get("jsonrpc") == "2.0" and type(frame.get("method")) is str
            and (type(id_) is int or type(id_) is str) and (params is None or type(params) is dict))


def check_value(frame: Any) -> Verdict:
    """`check_frame` for a frame already parsed."""
    if isinstance(frame, list):
        ids = [item["id"] for item in frame if isinstance(item, dict) and "method" in item
               and valid_id(item.get("id"))]
        return Verdict(answers=tuple(error(id_, INVALID_REQUEST, BATCH_REMOVED) for id_ in ids or [None]))
    if not isinstance(frame, dict):
        return Verdict(answers=(error(None, INVALID_REQUEST, "Invalid Request: a message is a JSON object"),))
    return check_message(frame)


def check_message(frame: dict[str, Any]) -> Verdict:
    """`check_frame` for one parsed JSON object."""
    if "method" not in frame and ("result" in frame or "error" in frame):  # a response: never answered
        problem = _response_problem(frame)
        return FORWARD if problem is None else _refused(INVALID_REQUEST, f"Invalid Request: {problem}")
    has_id = "id" in frame
    id_ = frame.get("id")
    if has_id and not valid_id(id_):
        return Verdict(answers=(error(None, INVALID_REQUEST, "Invalid Request: id must be a string or an integer"),))
    problem = None
    if frame.get("jsonrpc") != "2.0":
        problem = 'jsonrpc must be "2.0"'
    elif not isinstance(frame.get("method"), str):
        problem = "method must be a string"
    if problem is not None:  # not a request object at all: answered even without an id, as JSON-RPC says
        return Verdict(answers=(error(id_, INVALID_REQUEST, f"Invalid Request: {problem}"),))
    params = frame.get("params")
    if isinstance(params, list):
        code, problem = INVALID_PARAMS, "Invalid params: MCP params are an object, not an array"
    elif params is not None and not isinstance(params, dict):
        code, problem = INVALID_REQUEST, "Invalid Request: params must be an object"
    else:
        return FORWARD
    if not has_id:
        return _refused(code, f"{problem} (in notification {frame['method'][:64]!r})")
    return Verdict(answers=(error(id_, code, problem),))


def _response_problem(frame: dict[str, Any]) -> str | None:
    """Why a response-shaped frame is not one the SDK accepts, in words; None if it is."""
    try:
        types.jsonrpc_message_adapter.validate_python(frame, by_name=False)  # rare: the SDK's own check
    except pydantic.ValidationError:
        pass
    else:
        return None
    if frame.get("jsonrpc") != "2.0":
        return 'a response\'s jsonrpc must be "2.0"'
    if "result" in frame and "error" in frame:
        return "a response has a result or an error, not both"
    if "result" in frame:
        return "a response's result must be an object" if not isinstance(frame["result"], dict) else \
            "a response's id must be a string or an integer"
    return "a response's error must be an object with an integer code and a string message"


# --- numbers the parser cannot hold -----------------------------------------------------------
# JSON has no limit on a number's digits (RFC 8259 §6 lets an implementation set one); Python's
# `int()` and pydantic-core refuse more than 4300 digits (sys.int_info), so such a frame fails to
# parse although it is JSON, and its id is readable. Answering -32700 with id null would be false
# (the text is JSON) and would lose the id. So the frame is scanned again by the standard library's
# parser, with every over-long number kept as its digits, and judged as a message:
# - in `id`: -32600 with id null (an id the server cannot echo is unusable, as null or 1.5 are);
# - in `params` of a request that is otherwise valid: -32602 with the id, as for array params: the
#   envelope is a valid request and the method's parameters hold a value the server cannot take;
# - anywhere else in a request: -32600 with the id; in a notification or a response: a refusal.


class _LongNumber:
    """The digits of a number too long to convert, kept as text (not a str: never taken for an id)."""

    __slots__ = ("digits",)

    def __init__(self, digits: str) -> None:
        self.digits = digits


def _tolerant_scan(frame: bytes) -> Any | None:
    """The frame parsed with over-long numbers kept as `_LongNumber`, if it has one; else None."""
    found = False

    def reader(convert: Any) -> Any:
        def read(text: str) -> Any:
            nonlocal found
            whole = text.lstrip("-").split(".")[0].split("e")[0].split("E")[0]
            if len(whole) > LONGEST_NUMBER:  # the integer part is what both parsers refuse to convert
                found = True
                return _LongNumber(text)
            return convert(text)
        return read

    def constant(name: str) -> Any:
        raise ValueError(f"{name} is not JSON")

    try:
        value = json.loads(frame.decode("utf-8"), parse_int=reader(int), parse_float=reader(float),
                           parse_constant=constant)
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None
    return value if found else None


def _holds_long(value: Any) -> bool:
    if isinstance(value, _LongNumber):
        return True
    if isinstance(value, dict):
        return any(_holds_long(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_long(v) for v in value)
    return False


def _long_number_verdict(frame: Any) -> Verdict:
    """The verdict for a frame holding a number of more than `LONGEST_NUMBER` digits."""
    digits = f"more than {LONGEST_NUMBER} digits"
    if isinstance(frame, dict) and isinstance(frame.get("id"), _LongNumber):
        return Verdict(answers=(error(None, INVALID_REQUEST,
                                      f"Invalid Request: the id is a number of {digits}, which this server cannot read"),))
    verdict = check_value(frame)  # a batch, a bad envelope, bad params: answered as always
    if not verdict.forward:
        return verdict
    if "method" not in frame:
        return _refused(INVALID_REQUEST, f"Invalid Request: the response holds a number of {digits}")
    where_params = _holds_long(frame.get("params"))
    code = INVALID_PARAMS if where_params else INVALID_REQUEST
    problem = (f"Invalid params: a number in params has {digits}; this server cannot read it (send it as a string)"
               if where_params else f"Invalid Request: the message holds a number of {digits}")
    if "id" not in frame:
        return _refused(code, f"{problem} (in notification {frame['method'][:64]!r})")
    return Verdict(answers=(error(frame["id"], code, problem),))
