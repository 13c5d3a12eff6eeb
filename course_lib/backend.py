"""Choosing the backend: the real OpenAI endpoint when a key is configured, else the offline model.

    from course_lib.backend import make_client, model_name, describe_backend
    print(describe_backend())
    client = make_client()
    client.responses.create(model=model_name(), input="...", tools=[...])

- `OPENAI_API_KEY` set → the real endpoint (`OPENAI_BASE_URL` is honoured by the openai SDK itself).
  The base URL may be any server that speaks the API, e.g. a local Ollama or vLLM for Chat
  Completions (`OPENAI_BASE_URL=http://localhost:11434/v1`, with any key: `OPENAI_API_KEY=local`).
  The key alone decides, so the exercise checks (which drop it) stay offline whatever the base URL.
- not set → `course_lib.offline_model`, answering in-process: no network, deterministic output.
- `COURSE_MODEL` overrides the model name (default `gpt-4.1`; the names live in `course_lib.models`,
  re-exported here).
- Anthropic Messages (`make_anthropic_client`): `ANTHROPIC_API_KEY` set → the real endpoint,
  model `COURSE_ANTHROPIC_MODEL` (default `claude-sonnet-4-6`); else the same offline model.

On a real endpoint, a model name the endpoint does not serve (a retired or mistyped one, the
commonest way notebooks rot) fails its first request with one clear line: which model was asked
for, that this endpoint does not serve it, and how to set `COURSE_MODEL` (`_ModelCheck`).
"""

from __future__ import annotations

import json
import os

import anthropic
import httpx
import httpx2
import openai

from course_lib.lang import say
from course_lib.models import DEFAULT_ANTHROPIC_MODEL, DEFAULT_MODEL, anthropic_model_name, model_name
from course_lib.offline_model import offline_transport

__all__ = ["DEFAULT_ANTHROPIC_MODEL", "DEFAULT_MODEL", "OFFLINE_BASE_URL", "anthropic_model_name",
           "anthropic_transport", "describe_backend", "http_transport", "is_anthropic_offline", "is_offline",
           "make_anthropic_client", "make_client", "model_name", "unknown_model_line"]

OFFLINE_BASE_URL = "http://offline-model.invalid/v1"  # .invalid can never resolve: nothing leaks out


def is_offline() -> bool:
    """True when no `OPENAI_API_KEY` is set, so requests go to the offline model."""
    return not os.environ.get("OPENAI_API_KEY")


def is_anthropic_offline() -> bool:
    """True when no `ANTHROPIC_API_KEY` is set: Messages requests go to the offline model."""
    return not os.environ.get("ANTHROPIC_API_KEY")


def http_transport() -> httpx.BaseTransport:
    """The transport under the client: the offline model in-process, or the ordinary network
    (with `_ModelCheck`'s clear line for a model the endpoint does not serve).

    Wrap it (e.g. to record the wire) and hand it back through `make_client(transport=...)`.
    """
    return offline_transport() if is_offline() else _ModelCheck(httpx.HTTPTransport(), model_name())


class _ModelCheck(httpx.BaseTransport):
    """On a real endpoint: a 404 about the model (OpenAI's code `model_not_found`, Ollama's
    "model … not found", Anthropic's `not_found_error` "model: …") gets one clear line in front
    of the endpoint's own message, so the SDK's NotFoundError says what to do."""

    def __init__(self, inner: httpx.BaseTransport, model: str, variable: str = "COURSE_MODEL") -> None:
        self.inner, self.model, self.variable = inner, model, variable

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if response.status_code != 404:
            return response
        content = response.read()
        try:
            body = json.loads(content)
            error = body["error"]
            said = str(error.get("message", ""))
        except (ValueError, KeyError, TypeError, AttributeError):
            return httpx.Response(404, headers=response.headers, content=content)
        if "model" not in f"{error.get('code')} {said}".lower():
            return httpx.Response(404, headers=response.headers, content=content)
        line = unknown_model_line(self.model, request.url.host, self.variable)
        error["message"] = say("{line} (The endpoint said: {said})", "{line}（端点的原话：{said}）", line=line, said=said)
        headers = {k: v for k, v in response.headers.items() if k.lower() not in ("content-length", "content-encoding")}
        return httpx.Response(404, headers=headers, content=json.dumps(body).encode("utf-8"))

    def close(self) -> None:
        self.inner.close()


def unknown_model_line(model: str, host: str, variable: str = "COURSE_MODEL") -> str:
    """The one line for a model name the endpoint does not serve; `variable` names the setting
    (in the edition's language: `lang.say`)."""
    return say("Model '{model}' was asked for, but the endpoint {host} does not serve it (retired, mistyped, or not "
               "pulled on a local server). Set {variable} to a model it lists (`client.models.list()`), e.g. "
               "`%env {variable}=<name>` in the first cell, then restart the kernel.",
               "请求的模型是 '{model}'，但端点 {host} 不提供它（已下线、名字写错，或本地服务器上还没有拉取）。"
               "把 {variable} 设为它列出的某个模型（`client.models.list()`），例如在第一个单元格里写 "
               "`%env {variable}=<name>`，然后重启内核。", model=model, host=host, variable=variable)


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
    # openai 3.x runs on httpx2 but accepts a classic `httpx.Client`; our transports (the offline
    # model, the wire capture, the model check) are classic httpx transports, so both backends use it.
    return openai.OpenAI(http_client=httpx.Client(transport=transport or http_transport()))


def anthropic_transport() -> httpx.BaseTransport:
    """The classic-httpx transport under the Anthropic client: the offline model, or the network
    with the model check. Wrap it (e.g. in `wire.HttpCapture`) for `make_anthropic_client`."""
    if is_anthropic_offline():
        return offline_transport()
    return _ModelCheck(httpx.HTTPTransport(), anthropic_model_name(), "COURSE_ANTHROPIC_MODEL")


class _Httpx2Bridge(httpx2.BaseTransport):
    """The anthropic SDK takes only an `httpx2.Client` (it refuses a classic one, unlike openai);
    this carries each request to a classic httpx transport and the answer back, whole (a stream's
    events arrive together: fine for a cell, not for a live chat UI)."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        classic = httpx.Request(request.method, str(request.url), headers=list(request.headers.multi_items()),
                                content=request.read())
        answer = self.inner.handle_request(classic)
        content = answer.read()
        headers = [(k, v) for k, v in answer.headers.multi_items() if k.lower() != "content-encoding"]
        return httpx2.Response(answer.status_code, headers=headers, content=content)

    def close(self) -> None:
        self.inner.close()


def make_anthropic_client(transport: httpx.BaseTransport | None = None) -> anthropic.Anthropic:
    """An `anthropic.Anthropic` client on the configured backend (see the module docstring).

    Offline, like `make_client`: strict response validation against the SDK's types, no retries.
    `transport` (a classic httpx transport) replaces `anthropic_transport()`, e.g. a wire capture.
    """
    http_client = httpx2.Client(transport=_Httpx2Bridge(transport or anthropic_transport()))
    if is_anthropic_offline():
        return anthropic.Anthropic(api_key="offline", base_url=OFFLINE_BASE_URL.removesuffix("/v1"),
                                   http_client=http_client, _strict_response_validation=True, max_retries=0)
    return anthropic.Anthropic(http_client=http_client)


def describe_backend() -> str:
    """One line for a notebook to print: which backend answers and which model name is sent.

    Shows only the endpoint's host, never the key (nor anything else in the URL). In the
    edition's language (`lang.say`).
    """
    if is_offline():
        return say("Backend: offline model (deterministic, in-process, no network); model name '{model}'.",
                   "后端：离线模型（确定性，在进程内运行，不联网）；模型名 '{model}'。", model=model_name())
    url = httpx.URL(os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1")
    host = f"{url.host}:{url.port}" if url.port else url.host
    return say("Backend: real endpoint {host}; model name '{model}'.", "后端：真实端点 {host}；模型名 '{model}'。",
               host=host, model=model_name())
