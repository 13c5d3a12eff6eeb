"""The one way an exercise check reaches a model: the offline model, in-process, whatever the
environment says.

A check is a teacher: it must give the same verdict on every machine, with no key, no network and
no endpoint that could be down or slow. A notebook's own cells follow `course_lib.backend` (a real
endpoint when `OPENAI_API_KEY` is set); a check never does. So the clients made here ignore
`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL`: each one is
built on the offline model's transport, with its base URL given explicitly (the SDKs read the
environment only when none is given) and an `httpx` client whose transport is given explicitly
(so no proxy variable applies either). The model name still comes from the one place it lives,
`backend.model_name()` (`COURSE_MODEL`), so a request a check sends names what the notebook's do.

    from course_lib.exercises.offline import model_name, offline_client, offline_course

    with offline_client() as client:
        client.responses.create(model=model_name(), input="...", tools=[...])
    course = offline_course()      # a `Course`: client, wire capture and files server, all offline

Like `backend.make_client` offline: responses are validated strictly against the SDK's types and
nothing is retried (a 400 is the lesson, not a glitch to retry).
"""

from __future__ import annotations

from pathlib import Path

import anthropic
import httpx
import httpx2
import openai

from course_lib.backend import OFFLINE_BASE_URL, anthropic_model_name, model_name
from course_lib.backend import _Httpx2Bridge  # the one place the anthropic SDK's httpx2 bridge lives
from course_lib.course import Course
from course_lib.offline_model import offline_transport
from course_lib.wire import HttpCapture

__all__ = ["anthropic_model_name", "model_name", "offline_anthropic", "offline_client", "offline_course"]


def offline_client(transport: httpx.BaseTransport | None = None) -> openai.OpenAI:
    """An `openai.OpenAI` client that always talks to the offline model in-process.

    `transport` wraps the offline model's transport (e.g. an `HttpCapture` around
    `offline_transport()`); it must end at the offline model, never at the network.
    """
    return openai.OpenAI(api_key="offline", base_url=OFFLINE_BASE_URL, max_retries=0,
                         http_client=httpx.Client(transport=transport or offline_transport()),
                         _strict_response_validation=True)


def offline_anthropic(transport: httpx.BaseTransport | None = None) -> anthropic.Anthropic:
    """An `anthropic.Anthropic` client that always talks to the offline model's Messages envelope.

    `transport` is a classic httpx transport ending at the offline model, as for `offline_client`.
    """
    http_client = httpx2.Client(transport=_Httpx2Bridge(transport or offline_transport()))
    return anthropic.Anthropic(api_key="offline", base_url=OFFLINE_BASE_URL.removesuffix("/v1"), max_retries=0,
                               http_client=http_client, _strict_response_validation=True)


def offline_course(workspace: Path | None = None, transport: httpx.BaseTransport | None = None) -> Course:
    """What `course.start_course()` gives, always on the offline model: a client with its wire
    captured, and a host with the files server over `workspace` (default: the course's). Prints
    nothing. Close it after use (`course.close()`).

    `transport` goes under the wire capture in place of `offline_transport()`: a wrapper around
    the offline model's transport (e.g. one that keeps every body whole).
    """
    from course_lib.fs_server import Workspace, build_server
    from course_lib.host import McpHost
    from course_lib.paths import workspace_dir

    wire = HttpCapture(transport or offline_transport())
    sandbox = Workspace(workspace or workspace_dir())
    host = McpHost()
    try:
        host.add_server("fs", build_server(sandbox))
    except BaseException:
        host.close()
        raise
    return Course(client=offline_client(wire), wire=wire, host=host, workspace=sandbox)
