"""Choosing the backend: the real OpenAI endpoint when a key is configured, else the offline model.

    from course_lib.backend import make_client, model_name, describe_backend
    print(describe_backend())
    client = make_client()
    client.responses.create(model=model_name(), input="...", tools=[...])

- `OPENAI_API_KEY` set → the real endpoint (`OPENAI_BASE_URL` is honoured by the openai SDK itself).
- not set → `course_lib.offline_model`, answering in-process: no network, deterministic output.
- `COURSE_MODEL` overrides the model name (default `gpt-4.1`); this module is the one place it lives.
"""

from __future__ import annotations

import os

import httpx
import openai

from course_lib.offline_model import offline_transport

DEFAULT_MODEL = "gpt-4.1"
OFFLINE_BASE_URL = "http://offline-model.invalid/v1"  # .invalid can never resolve: nothing leaks out


def model_name() -> str:
    """The model every request names: env `COURSE_MODEL`, else `DEFAULT_MODEL`."""
    return os.environ.get("COURSE_MODEL") or DEFAULT_MODEL


def is_offline() -> bool:
    """True when no `OPENAI_API_KEY` is set, so requests go to the offline model."""
    return not os.environ.get("OPENAI_API_KEY")


def http_transport() -> httpx.BaseTransport:
    """The transport under the client: the offline model in-process, or the ordinary network.

    Wrap it (e.g. to record the wire) and hand it back through `make_client(transport=...)`.
    """
    return offline_transport() if is_offline() else httpx.HTTPTransport()


def make_client(transport: httpx.BaseTransport | None = None) -> openai.OpenAI:
    """An `openai.OpenAI` client on the configured backend.

    Offline, responses are validated strictly against the SDK types (so the stand-in cannot drift
    from the real wire format) and nothing is retried (a 400 is a lesson, not a glitch).
    `transport` replaces the one from `http_transport()`, e.g. a wrapper that records exchanges.
    """
    if is_offline():
        return openai.OpenAI(
            api_key="offline",
            base_url=OFFLINE_BASE_URL,
            http_client=httpx.Client(transport=transport or offline_transport()),
            _strict_response_validation=True,
            max_retries=0,
        )
    if transport is None:
        return openai.OpenAI()
    # openai 3.x runs on httpx2 but accepts a classic `httpx.Client`; our transports (the offline
    # model, the wire capture) are classic httpx transports, so both backends use that client.
    return openai.OpenAI(http_client=httpx.Client(transport=transport))


def describe_backend() -> str:
    """One line for a notebook to print: which backend answers and which model name is sent.

    Shows only the endpoint's host, never the key (nor anything else in the URL).
    """
    if is_offline():
        return f"Backend: offline model (deterministic, in-process, no network); model name '{model_name()}'."
    url = httpx.URL(os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1")
    host = f"{url.host}:{url.port}" if url.port else url.host
    return f"Backend: real endpoint {host}; model name '{model_name()}'."
