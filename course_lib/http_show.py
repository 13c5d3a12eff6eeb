"""Print HTTP exchanges with MCP servers as they crossed, minus what changes from run to run.

A server started on port 0 gets a new port each run, and each session a new random
`Mcp-Session-Id`; notebooks store their outputs, so those two are replaced by `PORT` and
`SESSION-ID` when printed (they were really there). Everything else is printed as it was.

    show_exchange(conn.http[0], port=srv.port)      # one recorded `HttpExchange`
    show_response(httpx.post(url, ...), port=srv.port)  # one raw httpx response
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from course_lib.connection import HttpExchange
from course_lib.lang import say

_SESSION = re.compile(r"\b[0-9a-f]{32}\b")
SHOWN_RESPONSE_HEADERS = ("content-type", "mcp-session-id", "www-authenticate")


def mask(text: str, port: int | None = None) -> str:
    """`text` with the port and any session id replaced by `PORT` and `SESSION-ID`."""
    if port is not None:
        text = text.replace(f":{port}", ":PORT")
    return _SESSION.sub("SESSION-ID", text)


def _body(body: Any, limit: int) -> str:
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def show_exchange(exchange: HttpExchange, *, port: int | None = None, bodies: bool = True, limit: int = 150) -> None:
    """Print one recorded exchange: request line and MCP headers (`>`), status and headers (`<`), bodies."""
    kind = exchange.content_type or say("(no body)", "（没有报文体）")
    print(mask(f"{exchange.method} {exchange.path}  →  {exchange.status} {kind}", port))
    for name, value in exchange.request_headers.items():
        if name == "content-type" or (name == "accept" and exchange.method != "POST"):
            continue  # the same on every request; Accept matters on a POST
        print(mask(f"  > {name}: {value}", port))
    for name, value in exchange.response_headers.items():
        if name != "content-type":
            print(mask(f"  < {name}: {value}", port))
    if bodies and exchange.request_body is not None:
        print(mask(f"  > body {_body(exchange.request_body, limit)}", port))
    if bodies and exchange.response_body is not None:
        print(mask(f"  < body {_body(exchange.response_body, limit)}", port))
    elif bodies and kind == "text/event-stream":
        print(say("  < body: an SSE stream (its JSON-RPC messages are in conn.messages)",
                  "  < body：一个 SSE 流（其中的 JSON-RPC 消息在 conn.messages 里）"))


def show_response(response: httpx.Response, *, port: int | None = None, limit: int = 300) -> None:
    """Print a raw httpx response: status, the headers MCP cares about, and the body text."""
    print(mask(f"{response.request.method} {response.request.url.path}  →  {response.status_code} "
               f"{response.reason_phrase}", port))
    for name in SHOWN_RESPONSE_HEADERS:
        if name in response.headers:
            print(mask(f"  < {name}: {response.headers[name]}", port))
    text = response.text.replace("\r\n", "\n").strip()  # SSE lines end in CRLF on the wire
    if text:
        print(mask("  < body " + (text if len(text) <= limit else text[: limit - 1] + "…"), port))
