"""Choosing the backend: the real OpenAI endpoint when a key is configured, else the offline model.

    from course_lib.backend import make_client, model_name, describe_backend
    print(describe_backend())
    client = make_client()
    client.responses.create(model=model_name(), input="...", tools=[...])

- `OPENAI_API_KEY` set → the real endpoint (`OPENAI_BASE_URL` is honoured by the openai SDK itself).
  The base URL may be any server that speaks the API, e.g. a local Ollama or vLLM
  (`OPENAI_BASE_URL=http://localhost:11434/v1`, with any key: `OPENAI_API_KEY=local`).
  The key alone decides, so the exercise checks (which drop it) stay offline whatever the base URL.
- not set → `course_lib.offline_model`, answering in-process: no network, deterministic output.
- `COURSE_MODEL` overrides the model name (default `gpt-4.1`; the names live in `course_lib.models`,
  re-exported here).
- Anthropic Messages (`make_anthropic_client`): `ANTHROPIC_API_KEY` set → the real endpoint
  (`ANTHROPIC_BASE_URL` is honoured by the anthropic SDK itself), model `COURSE_ANTHROPIC_MODEL`
  (default `claude-sonnet-4-6`); else the same offline model. The anthropic SDK is imported only
  when such a client is made.

Two decisions a cell may make, each printing one line (in the edition's language):

- **offline on purpose** (`offline_on_purpose`, `Course.offline_on_purpose`): a demo that needs a
  behaviour only the offline model has (the gullible persona, a platform that reaches a server on
  this machine, a stuck model, a failure that must happen) runs on the offline model even with a
  key set, and says so;
- **cost before a paid run** (`client_for_requests`): a run of more than a handful of requests
  (`HANDFUL`) on a real endpoint says how many first and stays on the offline model unless the
  learner opted in with `COURSE_PAID_RUNS` (a notebook never waits for an answer).

On a real endpoint, a model name the endpoint does not serve (a retired or mistyped one, the
commonest way notebooks rot) fails its first request with one clear line: which model was asked
for, that this endpoint does not serve it, and how to set `COURSE_MODEL` (`_ModelCheck`).
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import httpx
import openai

from course_lib.lang import say
from course_lib.models import DEFAULT_ANTHROPIC_MODEL, DEFAULT_MODEL, anthropic_model_name, model_name
from course_lib.offline_model import offline_transport

if TYPE_CHECKING:  # imported when a Messages client is made: anthropic alone takes about as long as openai
    import anthropic

__all__ = ["DEFAULT_ANTHROPIC_MODEL", "DEFAULT_MODEL", "HANDFUL", "OFFLINE_BASE_URL", "PAID_RUNS",
           "anthropic_model_name", "anthropic_transport", "client_for_requests", "describe_backend", "endpoint_host",
           "http_transport", "is_anthropic_offline", "is_offline", "make_anthropic_client", "make_client",
           "model_name", "offline_on_purpose", "offline_on_purpose_line", "requests_allowed", "unknown_model_line"]

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


def make_client(transport: httpx.BaseTransport | None = None, *, offline: bool | None = None) -> openai.OpenAI:
    """An `openai.OpenAI` client on the configured backend (`offline=True`: the offline model whatever
    the keys say; `transport`, if given, must then end at the offline model).

    Offline, responses are validated strictly against the SDK types (so the stand-in cannot drift
    from the real wire format) and nothing is retried (a 400 is a lesson, not a glitch).
    `transport` replaces the one from `http_transport()`, e.g. a wrapper that records exchanges.
    """
    if offline or (offline is None and is_offline()):
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


_bridge: type | None = None


def _httpx2_bridge() -> type:
    """`_Httpx2Bridge`, made on first use (httpx2 is imported only when a Messages client is made)."""
    global _bridge
    if _bridge is None:
        import httpx2

        class _Httpx2Bridge(httpx2.BaseTransport):
            """The anthropic SDK takes only an `httpx2.Client` (it refuses a classic one, unlike openai);
            this carries each request to a classic httpx transport and the answer back, whole (a
            stream's events arrive together: fine for a cell, not for a live chat UI)."""

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

        _bridge = _Httpx2Bridge
    return _bridge


def __getattr__(name: str) -> Any:
    """`backend._Httpx2Bridge`, as before, made when first asked for (`_httpx2_bridge`)."""
    if name == "_Httpx2Bridge":
        return _httpx2_bridge()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_anthropic_client(transport: httpx.BaseTransport | None = None, *,
                          offline: bool | None = None) -> anthropic.Anthropic:
    """An `anthropic.Anthropic` client on the configured backend (see the module docstring;
    `offline=True`: the offline model whatever the keys say).

    Offline, like `make_client`: strict response validation against the SDK's types, no retries.
    `transport` (a classic httpx transport) replaces `anthropic_transport()`, e.g. a wire capture.
    """
    import anthropic  # here: only Messages cells need it, and it takes as long to import as openai
    import httpx2

    offline = is_anthropic_offline() if offline is None else offline
    default = offline_transport() if offline else anthropic_transport()
    http_client = httpx2.Client(transport=_httpx2_bridge()(transport or default))
    if offline:
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
    return say("Backend: real endpoint {host}; model name '{model}'.", "后端：真实端点 {host}；模型名 '{model}'。",
               host=endpoint_host(), model=model_name())


def endpoint_host() -> str:
    """The configured endpoint's host (and port), never the key nor the rest of the URL."""
    url = httpx.URL(os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1")
    return f"{url.host}:{url.port}" if url.port else url.host


# ---- offline on purpose ------------------------------------------------------------------------------


def offline_on_purpose_line(why_en: str, why_zh: str) -> str:
    """The one line a demo prints when it runs on the offline model on purpose (in the edition's
    language): why, and, with a key set, that the configured endpoint is not used for this part."""
    why = say(why_en, why_zh)
    if is_offline():
        return say("Offline on purpose: {why}", "这里特意使用离线模型：{why}", why=why)
    return say("Offline on purpose: {why} This part runs on the offline model, not on {host}.",
               "这里特意使用离线模型：{why}这一部分在离线模型上运行，不发往 {host}。", why=why, host=endpoint_host())


def offline_on_purpose(why_en: str, why_zh: str, transport: httpx.BaseTransport | None = None) -> openai.OpenAI:
    """An openai client on the offline model for a demo that needs a behaviour only the offline model
    has (the gullible persona, a platform that reaches a server on this machine, …), even when a key
    is set; prints `offline_on_purpose_line` first. `transport`, if given, must end at the offline
    model (e.g. `HttpCapture(offline_transport())` to record the wire). For a whole course (the same
    host and workspace, a wire of its own, `run`) use `Course.offline_on_purpose`."""
    print(offline_on_purpose_line(why_en, why_zh))
    return make_client(transport or offline_transport(), offline=True)


# ---- cost before a paid run ----------------------------------------------------------------------------

HANDFUL = 5  # a run of at most this many model requests goes to a real endpoint without a word
PAID_RUNS = "COURSE_PAID_RUNS"  # the learner's opt-in to longer runs: "1"/"yes" (any size) or a number (up to it)


def requests_allowed(count: int) -> bool:
    """Whether a run of `count` model requests may go to the configured endpoint: always offline (it
    costs nothing) and for a handful (`HANDFUL`); else only when `COURSE_PAID_RUNS` says so ("1",
    "yes", "true", "all", "on": any size; a number: runs of up to that many requests)."""
    if is_offline() or count <= HANDFUL:
        return True
    said = os.environ.get(PAID_RUNS, "").strip().lower()
    return said in ("1", "yes", "true", "all", "on") or (said.isdigit() and count <= int(said))


def client_for_requests(count: int, what_en: str, what_zh: str, *,
                        transport: httpx.BaseTransport | None = None) -> openai.OpenAI:
    """The client for a run of about `count` model requests (`what_en`/`what_zh`: the run, named).

    Offline, or a handful of requests: the configured client (on `transport`, e.g. a wire capture of
    `http_transport()`), without a word. More than a handful on a real endpoint: one line first, which
    says how many requests would go where and either that they go (the learner opted in with
    `COURSE_PAID_RUNS`) or that this run stays on the offline model, and how to opt in. It never asks:
    a notebook executed by nbconvert never waits for an answer.
    """
    if is_offline() or count <= HANDFUL:
        return make_client(transport)
    fields = dict(what=say(what_en, what_zh), count=count, host=endpoint_host(), model=model_name(), variable=PAID_RUNS)
    if requests_allowed(count):
        print(say("{what}: sending about {count} requests to {host} (model '{model}'), as {variable} allows.",
                  "{what}：按 {variable} 的许可，向 {host}（模型 '{model}'）发送约 {count} 个请求。", **fields))
        return make_client(transport)
    print(say("{what} would send about {count} requests to {host} (model '{model}'), so this run stays on the "
              "offline model. To send them, set {variable}={count} (or 1 for any size), e.g. `%env {variable}={count}`, "
              "and run the cell again.",
              "{what}会向 {host}（模型 '{model}'）发送约 {count} 个请求，所以这次运行留在离线模型上。要真的发送，请设置 "
              "{variable}={count}（设为 1 则不限次数），例如 `%env {variable}={count}`，然后重新运行这个单元格。", **fields))
    return make_client(offline_transport(), offline=True)
