"""Every refusal of the HTTP layer a JSON-RPC error body, and every POST body judged as stdio judges a line.

`JsonRpcGate` is the outermost ASGI layer of `course_lib.http_transport`'s app. Who writes what,
in the installed SDK (mcp 2.3) and its servers, and what the gate does with it:

| refusal | written by | as | the gate |
|---|---|---|---|
| foreign Origin 403, foreign Host 421, wrong Content-Type 400 | the SDK's `TransportSecurityMiddleware` | plain text | JSON-RPC, same status |
| body over the limit 413 | the SDK's `RequestBodyLimitMiddleware` | plain text | JSON-RPC, same status |
| not JSON -32700, 406 (legacy era), unknown session 404, missing session 400, too many sessions 503 | the SDK's transport and session manager | JSON-RPC | unchanged |
| a batch, a scalar, a wrong `jsonrpc`, array params | the SDK's transport | -32602 "Validation error: …" (a pydantic dump) | `check_frame`'s answer |
| an id null, true or 1.5 | the SDK's transport | 202, never executed (read as a notification) | -32600 |
| 405 and 406 of the 2026-07-28 path | the SDK's per-request entry | an empty body | JSON-RPC, same status |
| 401 | the SDK's `RequireAuthMiddleware` | OAuth JSON, `error="invalid_token"` even without credentials | JSON-RPC; no error code without credentials (RFC 6750 §3.1) |
| unknown path 404 | Starlette | plain text | JSON-RPC, same status |
| bad request line or header, `Content-Length: -1`, 431, deadlines, connection cap | uvicorn / h11 | plain text, or nothing | `http_limits.BoundedH11Protocol` writes JSON-RPC itself |

tests/test_http_frames.py runs the frame table over both eras; tests/test_http_transport.py and
tests/test_http_limits.py check the rest, and tests/test_facts.py pins the SDK's plain-text answers.
"""

from __future__ import annotations

import http
import json
import logging
import re
from collections.abc import Awaitable, Callable

from mcp_types import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from course_lib.frames import Verdict, check_frame, error_bytes

logger = logging.getLogger(__name__)

_REFUSED_STATUS = 400  # the transport spec's status for input the server cannot accept (the SDK uses it too)


class JsonRpcGate:
    """The course's layer in front of the SDK's app: each POST body judged as stdio judges a line,
    and every refusal a JSON-RPC error body.

    A POST to the endpoint is read (up to the body limit) and judged by `check_frame`. A frame it
    forwards goes on as it came. For one it refuses, the SDK still makes all its own checks first
    (auth, Host, Origin, session, Accept, Content-Type), in its own order, on an empty body: it
    refuses that as a parse error only once they have all passed, and that parse error is replaced
    by the gate's answer. So a foreign Origin still gets 403, an unknown session 404, a missing token
    401, whatever the body holds. A body over the limit is left to the SDK (413).
    """

    def __init__(self, app: ASGIApp, *, path: str, max_body_bytes: int) -> None:
        self.app = app
        self.path = path
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self._serve(scope, receive, _refusals_as_json_rpc(watched, scope))
        except Exception:
            if started:  # too late to answer: uvicorn closes the connection
                raise
            # Only a bug of the layers outside Starlette gets here (Starlette answers its own 500s,
            # which the rewrite above turns into JSON-RPC); uvicorn's own 500 would be plain text.
            logger.exception("the HTTP gate failed before answering")
            await _send_json(watched, {"type": "http.response.start", "status": 500}, 500,
                             error_bytes(INTERNAL_ERROR, "Internal error"))

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        body, replay = await _read_body(scope, receive, self.max_body_bytes)
        if replay is None:  # the client left before its body arrived: nobody to answer
            return
        verdict = FORWARD_UNREAD if body is None else check_frame(body)
        if verdict.forward:
            await self.app(scope, replay, send)
        else:
            await self.app(scope, _replay(b"", receive), _answering(send, verdict))


FORWARD_UNREAD = Verdict(forward=True)  # a body over the limit: the SDK refuses it with 413, unparsed


async def _read_body(scope: Scope, receive: Receive, limit: int) -> tuple[bytes | None, Receive | None]:
    """`(body, receive)`: the whole body, if it fits in `limit`, and a `receive` that gives the app
    the same body again; `(None, receive)` for a body over the limit (the app reads it all, from the
    start); `(…, None)` if the client disconnected."""
    declared = dict(scope["headers"]).get(b"content-length", b"")
    if declared.isdigit() and int(declared) > limit:
        return None, receive
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None, None
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > limit:
            return None, _replay(b"".join(chunks), receive, more_body=True)
        if not message.get("more_body", False):
            return b"".join(chunks), _replay(b"".join(chunks), receive)


def _replay(body: bytes, then: Receive, more_body: bool = False) -> Receive:
    """A `receive` that gives `body` as one message, then what `then` gives (the rest of the body if
    `more_body`; else, in time, the client's disconnect, which an SSE stream waits for)."""
    given = False

    async def receive() -> Message:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": more_body}
        return await then()

    return receive


def _holding(send: Send, hold: Callable[[Message], bool],
             finish: Callable[[list[Message], bytes], Awaitable[None]]) -> Send:
    """`send` that holds back a response whose start `hold` picks, and once its body is complete calls
    `finish(held, body)` (held: the start, then every body message) to send what should go instead;
    any other response passes unchanged."""
    held: list[Message] = []

    async def holding(message: Message) -> None:
        if message["type"] == "http.response.start" and hold(message):
            held.append(message)
            return
        if not held:
            await send(message)
            return
        held.append(message)
        if message.get("more_body"):
            return
        await finish(held, b"".join(m.get("body", b"") for m in held[1:]))

    return holding


async def _send_all(send: Send, held: list[Message]) -> None:
    for message in held:
        await send(message)


def _answering(send: Send, verdict: Verdict) -> Send:
    """`send` for the SDK's answer to the empty body: its parse error becomes the verdict's answer,
    with the SDK's headers (a session's `Mcp-Session-Id`); any other answer passes unchanged."""

    async def answer(held: list[Message], body: bytes) -> None:
        if _error_code(body) != PARSE_ERROR:  # not the parse error the empty body was meant to draw
            await _send_all(send, held)
            return
        if verdict.answers:
            answers = [a.model_dump(mode="json", by_alias=True, exclude_unset=True) for a in verdict.answers]
            payload = json.dumps(answers[0] if len(answers) == 1 else answers, separators=(",", ":")).encode()
        else:  # a notification or a response that cannot be accepted
            payload = verdict.refusal.model_dump_json(by_alias=True, exclude_unset=True).encode()
        await _send_json(send, held[0], _REFUSED_STATUS, payload)

    return _holding(send, lambda start: start["status"] == _REFUSED_STATUS, answer)


def _error_code(body: bytes) -> int | None:
    try:
        value = json.loads(body)
    except ValueError:
        return None
    error = value.get("error") if isinstance(value, dict) else None
    return error.get("code") if isinstance(error, dict) else None


async def _send_json(send: Send, start: Message, status: int, payload: bytes,
                     extra: list[tuple[bytes, bytes]] = ()) -> None:
    """Send `payload` as the whole JSON response, keeping `start`'s headers but its type and length."""
    replaced = {b"content-type", b"content-length"} | {name for name, _ in extra}
    headers = [(k, v) for k, v in start.get("headers", []) if k not in replaced]
    headers += [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()), *extra]
    await send({**start, "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})


def _refusals_as_json_rpc(send: Send, scope: Scope) -> Send:
    """`send` that turns every refusal (status >= 400) that is not JSON-RPC into a JSON-RPC error
    with the same status: plain text, an empty body, the SDK's OAuth 401. A 401 challenge to a
    request without credentials loses its error code (RFC 6750 §3.1)."""
    authorization = dict(scope["headers"]).get(b"authorization", b"")
    bearer = authorization[:7].lower() == b"bearer "

    async def refusal(held: list[Message], body: bytes) -> None:
        start = held[0]
        status = start["status"]
        extra: list[tuple[bytes, bytes]] = []
        if status == 401:
            # A wire value, like every JSON-RPC error message: English in both editions.
            text = ("Unauthorized: the bearer token is not valid for this server" if bearer else
                    "Unauthorized: this server needs a bearer token (Authorization: Bearer …); "
                    "WWW-Authenticate says where to get one")
            challenge = dict(start.get("headers", [])).get(b"www-authenticate")
            if challenge is not None and not bearer:
                extra = [(b"www-authenticate", _without_error_code(challenge.decode("latin-1")).encode("latin-1"))]
        elif _is_json_rpc(body):
            await _send_all(send, held)
            return
        else:
            text = _oauth_error(body) or body.decode("utf-8", "replace").strip() or http.HTTPStatus(status).phrase
        code = INTERNAL_ERROR if status >= 500 else INVALID_REQUEST
        await _send_json(send, start, status, error_bytes(code, text), extra)

    return _holding(send, lambda start: start["status"] >= 400, refusal)


def _is_json_rpc(body: bytes) -> bool:
    try:
        value = json.loads(body)
    except ValueError:
        return False
    return isinstance(value, (dict, list)) and (
        value.get("jsonrpc") == "2.0" if isinstance(value, dict) else all(isinstance(v, dict) for v in value))


def _oauth_error(body: bytes) -> str | None:
    """`{"error": "insufficient_scope", "error_description": "…"}` (RFC 6750 §3.1) → `insufficient_scope: …`."""
    try:
        value = json.loads(body)
    except ValueError:
        return None
    if not isinstance(value, dict) or not isinstance(value.get("error"), str):
        return None
    return f"{value['error']}: {value.get('error_description', '')}".rstrip(": ")


def _without_error_code(challenge: str) -> str:
    """`Bearer error="invalid_token", error_description="…", resource_metadata="…"` →
    `Bearer resource_metadata="…"`: RFC 6750 §3.1, "If the request lacks any authentication
    information ..., the resource server SHOULD NOT include an error code or other error information"."""
    scheme, _, params = challenge.partition(" ")
    kept = [part.strip() for part in re.findall(r'[\w-]+="[^"]*"', params)
            if part.split("=", 1)[0] not in ("error", "error_description")]
    return " ".join([scheme, ", ".join(kept)]) if kept else scheme
