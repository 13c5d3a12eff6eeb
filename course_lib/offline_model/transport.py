"""`offline_transport()`: one instance of the offline model, as an httpx transport (no network at all).

Each transport is one model instance: it answers every request in-process (`server.handle`) and
counts the requests it has answered, so its ids are fresh for every request and the same in every
run of the same requests (`ids`). A course (`start_course`) holds one; a fresh transport replays
the same sequence of ids from the start. `standin_transport()` is the same with the stand-in's
variations (`standin`): for tests of code that must hold on any model.
"""

from __future__ import annotations

from contextlib import nullcontext

import httpx

from course_lib.offline_model import standin
from course_lib.offline_model.ids import Counter
from course_lib.offline_model.server import handle


def offline_transport(*, vary: bool | str = False) -> httpx.MockTransport:
    """An httpx transport that answers in-process with a new instance of the offline model
    (`vary=True`: the stand-in, varied as real models vary, `standin`; `vary="local"`: its
    local-server profile)."""
    profile = "hosted" if vary is True else vary or None
    counter = Counter()

    def answer(request: httpx.Request) -> httpx.Response:
        with counter.answering(), (standin.varying(profile) if profile else nullcontext()):
            return handle(request)

    return httpx.MockTransport(answer)


def standin_transport(profile: str = "hosted") -> httpx.MockTransport:
    """An httpx transport that answers in-process with a new instance of the stand-in (`standin`;
    `profile="local"`: as a local server answers)."""
    return offline_transport(vary=profile)
