"""Capturing what crossed the wire on the model side: HTTP request and response bodies.

`HttpCapture` wraps any httpx transport (the offline model's in-process transport, or the real
network transport) and keeps each JSON body exactly as the openai SDK sent it and as the server
answered. Headers are not kept: they carry the API key.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx


@dataclass(frozen=True)
class HttpExchange:
    """One HTTP request and its response, bodies parsed from the bytes that crossed."""

    method: str
    path: str
    request: Any
    status: int
    response: Any


@dataclass
class HttpCapture(httpx.BaseTransport):
    """An httpx transport that records every exchange, then hands back the real response."""

    inner: httpx.BaseTransport
    exchanges: list[HttpExchange] = field(default_factory=list)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        body = response.read()  # read once here; httpx keeps the bytes for the SDK
        self.exchanges.append(
            HttpExchange(request.method, request.url.path, _json(request.content), response.status_code, _json(body))
        )
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


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return raw.decode("utf-8", "replace")
