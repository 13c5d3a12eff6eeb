"""Shared fixtures: the anyio backend, the pinned Node programs, the offline model behind the real
openai and anthropic clients, and the edition's language (`zh`, `en`)."""

import os
import socket
import struct
import time

import httpx
import openai
import pytest

from course_lib.backend import make_anthropic_client
from course_lib.offline_model import offline_transport

# Checks record progress in the learner's home (course_lib.progress): not the developer's during tests, nor
# nbval's kernels (they inherit this). The progress tests point it at files of their own.
os.environ.setdefault("COURSE_PROGRESS", "off")


@pytest.fixture
def anyio_backend() -> str:
    """Run `@pytest.mark.anyio` tests on asyncio only."""
    return "asyncio"


@pytest.fixture(scope="session")
def node_tools():
    """The pinned Node programs (Inspector, reference server), installed if needed.

    Skips locally when Node.js is missing; in CI (`CI=true`) that is a failure instead.
    """
    from course_lib.node_tools import NodeToolsMissing, ensure_installed

    try:
        ensure_installed()
    except NodeToolsMissing as missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs Node.js and the pinned npm packages: {missing}")
        pytest.skip(f"{missing} (then `make node-tools`)")


@pytest.fixture
def client():
    """The offline model behind a real openai client: strict response validation, no retries, no
    network, and independent of OPENAI_API_KEY (the tests of the offline model use this)."""
    with openai.OpenAI(api_key="offline", base_url="http://offline-model.invalid/v1", max_retries=0,
                       http_client=httpx.Client(transport=offline_transport()),
                       _strict_response_validation=True) as client:  # fmt: skip
        yield client


@pytest.fixture
def claude():
    """The offline model behind a real anthropic client (its Messages envelope)."""
    with make_anthropic_client() as client:
        yield client


@pytest.fixture
def zh(monkeypatch):
    """course_lib speaks the 简体中文 edition's language, as in notebooks/zh-CN."""
    monkeypatch.setenv("COURSE_LANG", "zh-CN")


@pytest.fixture
def en(monkeypatch):
    """course_lib speaks English, whatever the environment says."""
    monkeypatch.setenv("COURSE_LANG", "en")


# ---- any model: the offline model, and the stand-in over real HTTP with a learner's keys set ----------------

ANY_MODEL = {"offline": None, "standin": "gpt-4.1", "standin-reasoning": "gpt-6-luna"}


@pytest.fixture(scope="session")
def standin_url():
    """The stand-in (`course_lib.offline_model.standin`) over real HTTP for the session; its base URL."""
    from course_lib.offline_model import running_server

    with running_server(vary=True) as url:
        yield url


def standin_env(url: str, model: str) -> dict[str, str]:
    """The environment of a learner who set keys and points the course at an endpoint (here the stand-in)."""
    return {"OPENAI_API_KEY": "sk-standin", "OPENAI_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-standin",
            "ANTHROPIC_BASE_URL": url.removesuffix("/v1"), "COURSE_MODEL": model}  # fmt: skip


@pytest.fixture(params=list(ANY_MODEL))
def any_model(request, monkeypatch) -> str:
    """Run the test on each kind of model a learner may bring: the offline model (no key), then the
    stand-in over real HTTP with keys set, on the default model and on a reasoning model (`gpt-6-luna`).
    `start_course()`, `make_client()` and `make_anthropic_client()` follow. Yields the param's name."""
    if ANY_MODEL[request.param] is None:
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "COURSE_MODEL"):
            monkeypatch.delenv(name, raising=False)
    else:
        for name, value in standin_env(request.getfixturevalue("standin_url"), ANY_MODEL[request.param]).items():
            monkeypatch.setenv(name, value)
    return request.param


def reset_connections(url: str, path: str) -> None:
    """Two senders that vanish with a TCP reset, as a killed process's sockets do: one mid-body, one idle
    on a kept-alive connection after a whole request. The server must stay quiet and keep serving."""
    host, port = url.split("//")[1].split("/")[0].rsplit(":", 1)
    head = f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n".encode()
    mid_body, whole = head + b"Content-Length: 100\r\n\r\n{", head + b"Content-Length: 2\r\n\r\n{}"
    for raw, answered in ((mid_body, False), (whole, True)):
        with socket.create_connection((host, int(port)), timeout=10) as sock:
            sock.sendall(raw)
            if answered:
                assert sock.recv(65536).startswith(b"HTTP/1.1 ")  # answered; the connection stays open
            else:
                time.sleep(0.2)  # the server is reading the body now
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # close = RST
        time.sleep(0.2)  # the server meets the reset

