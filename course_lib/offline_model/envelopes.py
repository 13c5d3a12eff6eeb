"""The offline model's other endpoints, as a table `server.handle` consults before /v1/responses:

    POST /v1/chat/completions   Chat Completions (chat.py), plain or `stream: true`
    POST /v1/messages           Anthropic Messages (messages.py), plain or `stream: true`
    GET  /v1/models[/{id}]      the model list (any name is served offline)

Each answers in its own provider's error shape; any path none of them (nor /v1/responses) serves
is a 404 that lists the endpoints, so a wrong path does not read like a wrong base URL.
"""

from __future__ import annotations

import json
from typing import Callable

import httpx

from course_lib.models import model_name
from course_lib.offline_model.chat import chat_completion, chat_sse
from course_lib.offline_model.messages import AnthropicError, anthropic_message, message_sse
from course_lib.offline_model.response_object import CREATED_AT
from course_lib.offline_model.validation import BadRequest

ENDPOINTS = ("POST /v1/responses", "POST /v1/chat/completions", "POST /v1/messages", "GET /v1/models")
OWNER = "course-offline-model"


def _json(status: int, payload: dict) -> httpx.Response:
    return httpx.Response(status, content=json.dumps(payload, ensure_ascii=False).encode("utf-8"),
                          headers={"content-type": "application/json"})


def _sse(content: bytes) -> httpx.Response:
    return httpx.Response(200, content=content, headers={"content-type": "text/event-stream; charset=utf-8"})


def _chat(body: object) -> httpx.Response:
    try:
        stream = isinstance(body, dict) and body.get("stream") is True
        return _sse(chat_sse(body)) if stream else _json(200, chat_completion(body))  # type: ignore[arg-type]
    except BadRequest as error:
        return _json(400, error.to_body())


def _messages(body: object) -> httpx.Response:
    try:
        stream = isinstance(body, dict) and body.get("stream") is True
        return _sse(message_sse(body)) if stream else _json(200, anthropic_message(body))  # type: ignore[arg-type]
    except AnthropicError as error:
        return _json(400, error.to_body())


def _model(name: str) -> dict:
    return {"id": name, "object": "model", "created": CREATED_AT, "owned_by": OWNER}


# path suffix → (method, answer, error shape for an unreadable body)
ROUTES: dict[str, tuple[str, Callable[[object], httpx.Response], str]] = {
    "/chat/completions": ("POST", _chat, "openai"),
    "/messages": ("POST", _messages, "anthropic"),
}


def route(request: httpx.Request) -> httpx.Response | None:
    """The answer of the endpoint `request` names, or None for /v1/responses and unknown paths."""
    path = request.url.path.rstrip("/")
    if path.endswith("/models") or "/models/" in path:
        if request.method != "GET":
            return _json(405, BadRequest(f"Method {request.method} is not allowed on {path}; use GET.").to_body())
        if path.endswith("/models"):
            return _json(200, {"object": "list", "data": [_model(model_name())]})
        return _json(200, _model(path.rsplit("/", 1)[1]))  # offline, every name is served
    for suffix, (method, answer, shape) in ROUTES.items():
        if path.endswith(suffix):
            if request.method != method:
                message = f"Method {request.method} is not allowed on {path}; use {method}."
                return _error(405, message, shape)
            try:
                body = json.loads(request.content)
            except (ValueError, RecursionError) as exc:
                return _error(400, f"We could not parse the JSON body of your request: {exc}.", shape)
            return answer(body)
    return None


def _error(status: int, message: str, shape: str) -> httpx.Response:
    if shape == "anthropic":
        return _json(status, AnthropicError(message).to_body())
    return _json(status, BadRequest(message).to_body())


def not_found(request: httpx.Request) -> str:
    """The 404 message for a path no endpoint serves: what was asked, and what exists."""
    return (f"Invalid URL ({request.method} {request.url.path}): the offline model serves "
            f"{', '.join(ENDPOINTS)}. Check the path after the base URL.")
