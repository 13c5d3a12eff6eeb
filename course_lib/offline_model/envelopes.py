"""The offline model's other endpoints, as a table `server.handle` consults before /v1/responses:

    POST /v1/chat/completions          Chat Completions (chat.py), plain or `stream: true`
    POST /v1/messages                  Anthropic Messages (messages.py), plain or `stream: true`;
                                       with an `anthropic-beta` header, the beta request types
                                       (the SDK's tool runner: message threads, `threads`)
    POST /v1/messages/count_tokens     Anthropic's token count (`{"input_tokens": N}`)
    GET  /v1/models[/{id}]             the model list (any name is served offline), in the shape of
                                       the SDK that asks: Anthropic's (`ModelInfo`, a page with
                                       `has_more`) when the request carries `anthropic-version` or
                                       `x-api-key`, as the anthropic SDK's do, else OpenAI's

Each answers in its own provider's error shape; any path none of them (nor /v1/responses) serves
is a 404 that lists the endpoints, so a wrong path does not read like a wrong base URL.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Callable

import httpx

from course_lib.models import anthropic_model_name, model_name
from course_lib.offline_model.chat import chat_completion, chat_sse
from course_lib.offline_model.messages import AnthropicError, anthropic_message, count_tokens, message_sse
from course_lib.offline_model.response_object import CREATED_AT
from course_lib.offline_model.validation import BadRequest

ENDPOINTS = ("POST /v1/responses", "POST /v1/chat/completions", "POST /v1/messages", "POST /v1/messages/count_tokens",
             "GET /v1/models")  # fmt: skip
OWNER = "course-offline-model"
_CREATED = datetime.fromtimestamp(CREATED_AT, timezone.utc).isoformat().replace("+00:00", "Z")


def _json(status: int, payload: dict) -> httpx.Response:
    return httpx.Response(status, content=json.dumps(payload, ensure_ascii=False).encode("utf-8"),
                          headers={"content-type": "application/json"})


def _sse(content: bytes) -> httpx.Response:
    return httpx.Response(200, content=content, headers={"content-type": "text/event-stream; charset=utf-8"})


def _betas(request: httpx.Request) -> list[str]:
    """The `anthropic-beta` header's values (the SDK joins several with commas)."""
    return [beta.strip() for beta in request.headers.get("anthropic-beta", "").split(",") if beta.strip()]


def _chat(body: object, request: httpx.Request) -> httpx.Response:
    try:
        stream = isinstance(body, dict) and body.get("stream") is True
        return _sse(chat_sse(body)) if stream else _json(200, chat_completion(body))  # type: ignore[arg-type]
    except BadRequest as error:
        return _json(400, error.to_body())


def _messages(body: object, request: httpx.Request) -> httpx.Response:
    try:
        stream = isinstance(body, dict) and body.get("stream") is True
        betas = _betas(request)
        return _sse(message_sse(body, betas)) if stream else _json(200, anthropic_message(body, betas))  # type: ignore[arg-type]
    except AnthropicError as error:
        return _json(400, error.to_body())


def _count_tokens(body: object, request: httpx.Request) -> httpx.Response:
    try:
        return _json(200, count_tokens(body, _betas(request)))  # type: ignore[arg-type]
    except AnthropicError as error:
        return _json(400, error.to_body())


def _asks_like_anthropic(request: httpx.Request) -> bool:
    """Whether the anthropic SDK sent the request: it always sends `anthropic-version`, and its key as
    `x-api-key` (the openai SDK sends `Authorization: Bearer …`)."""
    return "anthropic-version" in request.headers or "x-api-key" in request.headers


def _model(name: str, anthropic: bool) -> dict:
    if anthropic:  # anthropic.types.ModelInfo
        return {"type": "model", "id": name, "display_name": f"{name} (offline)", "created_at": _CREATED,
                "lifecycle": "active"}
    return {"id": name, "object": "model", "created": CREATED_AT, "owned_by": OWNER}


def _models(path: str, request: httpx.Request) -> httpx.Response:
    anthropic = _asks_like_anthropic(request)
    if request.method != "GET":
        message = f"Method {request.method} is not allowed on {path}; use GET."
        return _error(405, message, "anthropic" if anthropic else "openai")
    if not path.endswith("/models"):
        return _json(200, _model(path.rsplit("/", 1)[1], anthropic))  # offline, every name is served
    if anthropic:
        name = anthropic_model_name()
        return _json(200, {"data": [_model(name, True)], "first_id": name, "last_id": name, "has_more": False})
    return _json(200, {"object": "list", "data": [_model(model_name(), False)]})


# path suffix → (method, answer, error shape for an unreadable body)
ROUTES: dict[str, tuple[str, Callable[[object, httpx.Request], httpx.Response], str]] = {
    "/chat/completions": ("POST", _chat, "openai"),
    "/messages/count_tokens": ("POST", _count_tokens, "anthropic"),
    "/messages": ("POST", _messages, "anthropic"),
}


def route(request: httpx.Request) -> httpx.Response | None:
    """The answer of the endpoint `request` names, or None for /v1/responses and unknown paths."""
    path = request.url.path.rstrip("/")
    if path.endswith("/models") or "/models/" in path:
        return _models(path, request)
    for suffix, (method, answer, shape) in ROUTES.items():
        if path.endswith(suffix):
            if request.method != method:
                message = f"Method {request.method} is not allowed on {path}; use {method}."
                return _error(405, message, shape)
            try:
                body = json.loads(request.content)
            except (ValueError, RecursionError) as exc:
                return _error(400, f"We could not parse the JSON body of your request: {exc}.", shape)
            return answer(body, request)
    return None


def _error(status: int, message: str, shape: str) -> httpx.Response:
    if shape == "anthropic":
        return _json(status, AnthropicError(message).to_body())
    return _json(status, BadRequest(message).to_body())


def not_found(request: httpx.Request) -> str:
    """The 404 message for a path no endpoint serves: what was asked, and what exists."""
    return (f"Invalid URL ({request.method} {request.url.path}): the offline model serves "
            f"{', '.join(ENDPOINTS)}. Check the path after the base URL.")
