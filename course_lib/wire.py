"""Capturing what crossed the wire on the model side: HTTP request and response bodies.

`HttpCapture` wraps any httpx transport (the offline model's in-process transport, or the real
network transport) and keeps each JSON body exactly as the openai SDK sent it and as the server
answered. Headers are not kept: they carry the API key.

A streamed answer (`text/event-stream`) is not buffered: its bytes are recorded as they pass to
the SDK, so each event reaches the SDK as soon as the server sends it. Its exchange is in
`exchanges` from the start, with `response` None; once the stream is read to the end or closed,
the exchange is replaced by one whose `response` is the whole event stream as text.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

import httpx


@dataclass(frozen=True)
class HttpExchange:
    """One HTTP request and its response, bodies parsed from the bytes that crossed. `at` is when
    the request was sent (`time.monotonic()`), to order it among the MCP messages of the same
    process (`connection.WireMessage.at`); it is not part of what crossed (not compared, not shown)."""

    method: str
    path: str
    request: Any
    status: int
    response: Any
    at: float = field(default_factory=time.monotonic, compare=False, repr=False)


@dataclass
class HttpCapture(httpx.BaseTransport):
    """An httpx transport that records every exchange, then hands back the real response."""

    inner: httpx.BaseTransport
    exchanges: list[HttpExchange] = field(default_factory=list)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        sent = time.monotonic()
        response = self.inner.handle_request(request)
        exchange = HttpExchange(request.method, request.url.path, _json(request.content), response.status_code, None, sent)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            self.exchanges.append(exchange)  # its body is filled in when the stream ends (see the module docstring)

            def finished(body: bytes) -> None:
                for i, kept in enumerate(self.exchanges):
                    if kept is exchange:
                        self.exchanges[i] = replace(exchange, response=_json(body))

            return httpx.Response(response.status_code, headers=response.headers, request=request,
                                  stream=_Recording(response.stream, finished), extensions=response.extensions)
        body = response.read()  # read once here; httpx keeps the bytes for the SDK
        self.exchanges.append(replace(exchange, response=_json(body)))
        return response

    def close(self) -> None:
        self.inner.close()

    @property
    def last(self) -> HttpExchange:
        """The most recent exchange.

        Raises:
            LookupError: nothing has crossed yet.
        """
        if not self.exchanges:
            raise LookupError("no HTTP exchange has been captured yet")
        return self.exchanges[-1]


class _Recording(httpx.SyncByteStream):
    """A response body that records its bytes as they pass; `finished(all bytes)` runs once, at the
    end of the stream or when it is closed (after a partial read: the part that crossed)."""

    def __init__(self, inner: Any, finished: Callable[[bytes], None]) -> None:
        self._inner, self._finished, self._chunks, self._done = inner, finished, [], False

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._inner:
            self._chunks.append(chunk)
            yield chunk
        self._finish()

    def close(self) -> None:
        try:
            if hasattr(self._inner, "close"):
                self._inner.close()
        finally:
            self._finish()

    def _finish(self) -> None:
        if not self._done:
            self._done = True
            self._finished(b"".join(self._chunks))


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return raw.decode("utf-8", "replace")
