"""`offline_transport()`: one instance of the offline model, as an httpx transport (no network at all).

Each transport is one model instance: it answers every request in-process (`server.handle`) and
counts the requests it has answered, so its ids are fresh for every request and the same in every
run of the same requests (`ids`). A course (`start_course`) holds one; a fresh transport replays
the same sequence of ids from the start.
"""

from __future__ import annotations

import httpx

from course_lib.offline_model.ids import Counter
from course_lib.offline_model.server import handle


def offline_transport() -> httpx.MockTransport:
    """An httpx transport that answers in-process with a new instance of the offline model."""
    counter = Counter()

    def answer(request: httpx.Request) -> httpx.Response:
        with counter.answering():
            return handle(request)

    return httpx.MockTransport(answer)
