"""The ids the offline model mints: fresh for every request, the same sequence in every run.

A real API mints new ids for every response, even for a request it has seen before: send the same
body twice and the two `call_id`s differ, so an id names one answer, never a question. The offline
model must also be reproducible (notebook outputs are stored, `fixtures/*.json` are regenerated
byte for byte), so an id is a hash of three things:

- the request: its body, without how it is delivered (`stream`), as the caller passes it;
- the request's number in the count of the model instance that answers it (`Counter`): each
  `offline_transport()` counts the requests it answers from 0, and so does a process for the
  requests answered outside any transport (`respond` or `handle` called directly, the local HTTP
  server `python -m course_lib.offline_model`);
- a label: which id of the response it is (`resp`, `fc0`, `call0`, `msg1`, …).

So two requests never share an id within one instance, while a notebook run top to bottom (one
course, one transport, the same requests in the same order) gets the same ids every time, and a
fresh instance replays the same sequence. Everything else in a response depends on the body alone:
the same request gets the same answer, under new ids. `renumbered` says what "the same response"
means now: equal once every id is replaced by its order of first appearance.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any


class Counter:
    """One model instance's count of the requests it has answered (thread-safe)."""

    def __init__(self) -> None:
        self._next = 0
        self._lock = threading.Lock()

    def take(self) -> int:
        """The number of the request being answered now: 0, 1, 2, …"""
        with self._lock:
            number, self._next = self._next, self._next + 1
        return number

    @contextmanager
    def answering(self) -> Iterator[Counter]:
        """Within the block, requests count on this instance (the transport wraps each answer in it)."""
        token = _ACTIVE.set(self)
        try:
            yield self
        finally:
            _ACTIVE.reset(token)


_ACTIVE: ContextVar[Counter | None] = ContextVar("offline_model_counter", default=None)
_PROCESS = Counter()  # requests answered outside any transport


@dataclass(frozen=True)
class RequestIds:
    """The ids of one response: `mint(label, length)` gives the same id for the same label, and
    `body_text` is the request as hashed (what `usage` counts as input, too)."""

    body_text: str
    number: int

    def mint(self, label: str, length: int) -> str:
        """`length` hex digits for the id `label` of this response."""
        return hashlib.sha256(f"{self.number}|{self.body_text}|{label}".encode()).hexdigest()[:length]


def for_request(body_text: str) -> RequestIds:
    """The ids of the request being answered now, numbered by the instance answering it. Call it
    once per request: each call counts one request."""
    counter = _ACTIVE.get() or _PROCESS
    return RequestIds(body_text, counter.take())


# The fields that hold an id the model minted (or one derived from it), in every envelope.
ID_FIELDS = frozenset({"id", "call_id", "item_id", "previous_response_id", "response_id", "tool_call_id",
                       "tool_use_id", "approval_request_id", "encrypted_content"})


def renumbered(value: Any) -> Any:
    """`value` (a response, an event list, a request's input: any JSON) with every id replaced by its
    order of first appearance (keys read in sorted order), `<id 1>`, `<id 2>`, …: two answers are "the same response" when
    they are equal renumbered (the same items, texts and arguments, each id pairing the same things),
    though a real API, and this model, gave them ids of their own."""
    seen: dict[str, str] = {}

    def walk(node: Any, key: str | None = None) -> Any:
        if isinstance(node, dict):  # keys in sorted order, so the numbering ignores how a dict is ordered
            done = {k: walk(node[k], k) for k in sorted(node)}
            return {k: done[k] for k in node}
        if isinstance(node, list):
            return [walk(v, key) for v in node]
        if key in ID_FIELDS and isinstance(node, str):
            return seen.setdefault(node, f"<id {len(seen) + 1}>")
        return node

    return walk(value)
