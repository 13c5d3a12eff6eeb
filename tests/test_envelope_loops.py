"""The same task over Chat Completions and Anthropic Messages with the same McpHost: the same
grounded answers as the Responses loop, the real SDK objects, and the backend switch."""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from anthropic.types import Message
from openai.types.chat import ChatCompletion

from course_lib import backend
from course_lib.chat_loop import run_chat_loop
from course_lib.course import start_course
from course_lib.messages_loop import run_messages_loop

TASKS = ["Show the first 3 lines of /workspace/notes.txt", "Show the first 3 lines of /etc/passwd",
         "Show /workspace/notes.txt and /workspace/missing.txt"]  # fmt: skip


@pytest.fixture(scope="module")
def course():
    course = start_course(quiet=True)
    yield course
    course.close()


@pytest.mark.parametrize("task", TASKS)
def test_three_envelopes_give_the_same_grounded_answer(course, task):
    responses = course.run(task)
    chat = run_chat_loop(course.client, course.host, task)
    with backend.make_anthropic_client() as claude:
        messages = run_messages_loop(claude, course.host, task)
    assert responses.answer == chat.answer == messages.answer
    assert all(isinstance(c, ChatCompletion) for c in chat.completions)
    assert all(isinstance(m, Message) for m in messages.messages_out)
    assert [link.error_code for link in chat.trace] == [link.error_code for link in messages.trace]
    tool_replies = [m for m in chat.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_replies] == [c.id for c in chat.completions[0].choices[0].message.tool_calls]
    results = [b for m in messages.messages if m["role"] == "user" and isinstance(m["content"], list) for b in m["content"]]
    assert [b["is_error"] for b in results] == [link.error_code is not None for link in messages.trace]
    assert all(isinstance(link.arguments, dict) for link in messages.trace)  # input came as an object


def test_offline_by_default_and_a_local_server_with_any_key(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    assert backend.is_offline() and backend.is_anthropic_offline()
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    assert backend.is_offline()  # the key alone decides: checks that drop it stay offline
    monkeypatch.setenv("OPENAI_API_KEY", "local")
    with backend.make_client() as client:  # built, never used: no network in tests
        assert not backend.is_offline() and client.base_url.host == "localhost"
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    with backend.make_anthropic_client() as claude:
        assert not backend.is_anthropic_offline() and claude.base_url.host == "api.anthropic.com"


@pytest.mark.parametrize("status, body, clear", [
    (404, {"error": {"message": "The model `gpt-3.5-turbo-0301` does not exist or you do not have access to it.",
                     "type": "invalid_request_error", "param": None, "code": "model_not_found"}}, True),
    (404, {"error": {"message": "model \"llama9\" not found, try pulling it first", "type": "api_error"}}, True),
    (404, {"error": {"message": "Invalid URL (POST /v1/nope)", "type": "invalid_request_error"}}, False),
])  # fmt: skip
def test_a_model_the_endpoint_does_not_serve_gets_one_clear_line(monkeypatch, status, body, clear):
    monkeypatch.setenv("COURSE_MODEL", "gpt-3.5-turbo-0301")
    upstream = httpx.MockTransport(lambda request: httpx.Response(status, json=body))
    check = backend._ModelCheck(upstream, backend.model_name())
    with openai.OpenAI(api_key="k", base_url="http://llm.example.com/v1", max_retries=0,
                       http_client=httpx.Client(transport=check)) as client:  # fmt: skip
        with pytest.raises(openai.NotFoundError) as caught:
            client.chat.completions.create(model=backend.model_name(), messages=[{"role": "user", "content": "hi"}])
    message = caught.value.body["message"]
    assert ("Model 'gpt-3.5-turbo-0301' was asked for, but the endpoint llm.example.com does not serve it" in message) is clear
    assert ("COURSE_MODEL" in message) is clear and body["error"]["message"] in message
    assert json.dumps(caught.value.body)  # still the endpoint's JSON shape
