"""Choosing the backend: offline without a key, the model name from the environment, no leaks."""

from __future__ import annotations

import subprocess
import sys

import httpx

from course_lib import backend, models


def test_make_client_is_offline_without_a_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert backend.is_offline()
    with backend.make_client() as client:
        assert client.base_url.host == "offline-model.invalid"
        reader = {"type": "function", "name": "read_text_file",
                  "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}
        response = client.responses.create(model=backend.model_name(), input="Show notes.txt", tools=[reader])
    assert response.output[0].arguments == '{"path":"notes.txt"}'
    assert "offline model" in backend.describe_backend()


def test_make_client_accepts_a_wrapping_transport(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    inner, seen = backend.http_transport(), []

    class Recorder(httpx.BaseTransport):
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            seen.append(request.url.path)
            return inner.handle_request(request)

    with backend.make_client(transport=Recorder()) as client:
        client.responses.create(model=backend.model_name(), input="hello")
    assert seen == ["/v1/responses"]


def test_model_name_honours_course_model(monkeypatch):
    monkeypatch.delenv("COURSE_MODEL", raising=False)
    assert backend.model_name() == backend.DEFAULT_MODEL == "gpt-4.1"
    monkeypatch.setenv("COURSE_MODEL", "gpt-4.1-mini")
    assert backend.model_name() == "gpt-4.1-mini"
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert "'gpt-4.1-mini'" in backend.describe_backend()


def test_describe_backend_never_shows_the_key(monkeypatch):
    secret = "sk-test-do-not-print-1234"
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    monkeypatch.setenv("OPENAI_BASE_URL", f"https://user:{secret}@llm.example.com:8443/v1?key={secret}")
    line = backend.describe_backend()
    assert secret not in line and "llm.example.com:8443" in line and not backend.is_offline()
    monkeypatch.delenv("OPENAI_BASE_URL")
    line = backend.describe_backend()
    assert secret not in line and line.startswith("Backend: real endpoint api.openai.com;")
    with backend.make_client() as client:  # built, never used: no network in tests
        assert client.base_url.host == "api.openai.com"


def test_the_offline_model_stands_below_backend_and_its_modules_import_no_circle():
    # backend imports the offline model, never the other way round (the model name comes from
    # course_lib.models); the Response builder and the stream need no hosted-MCP platform.
    code = ("import sys, course_lib.offline_model.response_object, course_lib.offline_model.streaming; "
            "print(sorted(m for m in ('course_lib.offline_model.hosted_mcp', 'course_lib.backend') if m in sys.modules)); "
            "import course_lib.offline_model; print('course_lib.backend' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[:2] == ["[]", "False"]
    assert backend.model_name is models.model_name and backend.DEFAULT_MODEL == models.DEFAULT_MODEL
