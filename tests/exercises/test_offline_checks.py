"""Every exercise check is offline by construction: with API keys set and the base URLs pointing at
an endpoint that cannot answer, each one gives exactly the verdict it gives offline, raises nothing
and opens no connection beyond this machine; and every model request it makes names the one model
name (`backend.model_name()`), never a literal of its own.

The checks are found, not listed: every `check_…` of every `course_lib/exercises/nb*` module, each
run with its `SOLUTIONS` answer and with a wrong one.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import io
import ipaddress
import json
import pkgutil
import re
import socket
from typing import Any

import httpx
import pytest

import course_lib.exercises as exercises
import course_lib.offline_model as offline_model

UNREACHABLE = "http://127.0.0.1:9"  # the discard port: nothing answers, so a request that leaves dies here

MODULES = [importlib.import_module(f"course_lib.exercises.{m.name}")
           for m in pkgutil.iter_modules(exercises.__path__) if m.name.startswith("nb")]  # fmt: skip
CHECKS = [(module, name) for module in MODULES for name in sorted(vars(module))
          if name.startswith("check_") and callable(getattr(module, name))]  # fmt: skip
IDS = [f"{module.__name__.rsplit('.', 1)[1]}.{name}" for module, name in CHECKS]


def _short(module: Any) -> str:
    return module.__name__.removeprefix("course_lib.exercises.")


# A wrong answer that gets past each check's shape tests, so the check goes as deep as it can
# (to the model, the servers). A function answer's wrong twin is one that returns early (None);
# the others need a value of the right shape, listed here.
def _wrong_policy(solution: Any) -> Any:
    return dataclasses.replace(solution, max_attempts=1)


WRONG_VALUES: dict[str, Any] = {
    "nb00.check_kinds": lambda solution: dict.fromkeys(solution, "rule"),
    "nb01.check_strict_search_notes": lambda solution: {
        **solution, "properties": {**solution["properties"], "limit": {"type": ["integer", "null"]}}},
    "nb01.check_tool_choices": lambda solution: {"use_backup": "required", "no_tools": "auto"},
    "nb02.check_predictions": lambda solution: ["OK"] * len(solution),
    "nb03b.check_reference_predictions": lambda solution: {"A": 0, "B": 1, "C": "error", "D": 2},
    "nb05.check_retry_policy": _wrong_policy,
    # its wrong twin is one id for every action (a function returning None is refused too: the fuzz pass)
    "nb06.check_make_action_id": lambda solution: lambda *args, **kwargs: "one id for every action",
    "nb06.check_write_decisions": lambda solution: {key: not value for key, value in solution.items()},
    "nb06b.check_outcomes": lambda solution: dict.fromkeys(solution, "written"),
    "nb08.check_tail_parse_only": lambda solution: {"arguments"},
    "nb08.check_other_server": lambda solution: {"arguments"},
    "nb08.check_not_sent_back": lambda solution: {"arguments"},
    "nb10.check_diagnoses": lambda solution: dict(zip(solution, reversed(list(solution.values())), strict=True)),
}


def _returns_early(*args: Any, **kwargs: Any) -> None:
    return None


def wrong_answer(module: Any, name: str) -> Any:
    solution = module.SOLUTIONS[name]()
    key = f"{_short(module)}.{name}"
    if key in WRONG_VALUES:
        return WRONG_VALUES[key](solution)
    if callable(solution) and not isinstance(solution, type):
        return _returns_early
    if isinstance(solution, type):  # a class to instantiate: its wrong twin is an empty class
        return type("Wrong", (), {})
    return WRONG_VALUES[key](solution)


def _clear_caches() -> None:
    """Forget what the checks cached (recorded runs), so every run really goes to the model again."""
    for info in pkgutil.walk_packages(exercises.__path__, f"{exercises.__name__}."):
        for value in vars(importlib.import_module(info.name)).values():
            if callable(getattr(value, "cache_clear", None)):
                value.cache_clear()


IDS_ON_THE_WIRE = re.compile(r"\b(?:call|fc|resp|msg|rs|mcp|mcpr|toolu|msg_01|chatcmpl)_[A-Za-z0-9]+")


def verdict(check: Any, answer: Any) -> tuple[Any, str]:
    """(what the check returned, what it printed with the model's ids blanked): the ids are fresh
    per request, the verdict and the words are not."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        returned = check(answer)
    return returned, IDS_ON_THE_WIRE.sub("<id>", out.getvalue())


class Connections:
    """Refuses, and records, every socket connection that would leave this machine or reach the
    unreachable endpoint; loopback servers the checks start themselves (03c's HTTP server) are fine."""

    def __init__(self) -> None:
        self.refused: list[Any] = []

    def allowed(self, address: Any) -> bool:
        if not isinstance(address, tuple):  # a Unix socket: local by nature
            return True
        host, port = address[0], address[1]
        return host in ("127.0.0.1", "::1", "localhost") and port != 9

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real_connect, real_connect_ex, real_getaddrinfo = socket.socket.connect, socket.socket.connect_ex, socket.getaddrinfo

        def connect(sock: socket.socket, address: Any) -> None:
            if not self.allowed(address):
                self.refused.append(address)
                raise ConnectionRefusedError(f"test: no connection to {address!r} from an exercise check")
            return real_connect(sock, address)

        def connect_ex(sock: socket.socket, address: Any) -> int:
            if not self.allowed(address):
                self.refused.append(address)
                return 111  # ECONNREFUSED
            return real_connect_ex(sock, address)

        def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
            if not _numeric(host) and host not in (None, "localhost", b"localhost"):
                self.refused.append(host)
                raise socket.gaierror(f"test: no name lookup for {host!r} from an exercise check")
            return real_getaddrinfo(host, *args, **kwargs)

        monkeypatch.setattr(socket.socket, "connect", connect)
        monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
        monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


def _numeric(host: Any) -> bool:
    """An address, not a name: resolving it asks no one (the connect guard judges it)."""
    try:
        ipaddress.ip_address(host.decode() if isinstance(host, bytes) else host)
    except (ValueError, AttributeError):
        return False
    return True


def online_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-real-key")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{UNREACHABLE}/v1")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", UNREACHABLE)


def offline_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_the_guard_really_refuses_the_unreachable_endpoint_and_the_internet(monkeypatch):
    """The proof below is only as good as this guard: the SDKs' own requests are stopped by it."""
    import openai

    guard = Connections()
    guard.install(monkeypatch)
    online_environment(monkeypatch)
    with openai.OpenAI(max_retries=0) as client, pytest.raises(openai.APIConnectionError):
        client.models.list()
    with pytest.raises(OSError):
        socket.create_connection(("93.184.215.14", 443), timeout=1)
    with pytest.raises(httpx.ConnectError):
        httpx.get("https://api.openai.com/v1/models")
    assert guard.refused == [("127.0.0.1", 9), ("93.184.215.14", 443), "api.openai.com"]


@pytest.mark.parametrize("answer_kind", ["solution", "wrong"])
@pytest.mark.parametrize(("module", "name"), CHECKS, ids=IDS)
def test_a_check_gives_the_offline_verdict_with_keys_set_and_no_network(module, name, answer_kind, monkeypatch):
    check = getattr(module, name)
    answer = module.SOLUTIONS[name]() if answer_kind == "solution" else wrong_answer(module, name)
    guard = Connections()
    with monkeypatch.context() as online:
        online_environment(online)
        guard.install(online)
        _clear_caches()
        with_keys = verdict(check, answer)  # raises nothing, or this test fails with it
    assert guard.refused == [], f"{_short(module)}.{name} tried to reach {guard.refused}"
    offline_environment(monkeypatch)
    _clear_caches()
    assert with_keys == verdict(check, answer)
    expected = answer_kind == "solution"
    assert with_keys[0] is expected, with_keys[1]
    assert with_keys[1].startswith("✓" if expected else "✗")


def test_every_check_with_a_value_answer_has_a_wrong_twin():
    missing = [f"{_short(m)}.{n}" for m, n in CHECKS
               if not callable(m.SOLUTIONS[n]()) and f"{_short(m)}.{n}" not in WRONG_VALUES]  # fmt: skip
    assert missing == []


def test_every_check_has_a_solution_and_every_solution_a_check():
    for module in MODULES:
        checks = {name for m, name in CHECKS if m is module}
        assert checks == set(module.SOLUTIONS), module.__name__


def test_every_model_request_of_a_check_names_the_course_model(monkeypatch):
    """`COURSE_MODEL` / `COURSE_ANTHROPIC_MODEL` reach every request a check makes: no check
    keeps a model name of its own, but for the cases that try an answer on a reasoning model
    (`nb04.reasoning_model`: the course's model when it is one, else gpt-5), named below."""
    import course_lib.backend as backend
    import course_lib.exercises.offline as seam

    monkeypatch.setenv("COURSE_MODEL", "course-check-model")
    monkeypatch.setenv("COURSE_ANTHROPIC_MODEL", "course-check-claude")
    named: list[tuple[str, str]] = []

    class Recording(httpx.BaseTransport):
        def __init__(self, inner: httpx.BaseTransport) -> None:
            self.inner = inner

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            if request.method == "POST":
                named.append((request.url.path, json.loads(request.content).get("model")))
            return self.inner.handle_request(request)

    real_transport, real_respond = offline_model.offline_transport, offline_model.respond
    for where in (seam, backend, offline_model):  # every name a client could be built from
        monkeypatch.setattr(where, "offline_transport", lambda: Recording(real_transport()))

    def respond(body: dict, *args: Any, **kwargs: Any) -> Any:
        named.append(("respond()", body.get("model")))
        return real_respond(body, *args, **kwargs)

    monkeypatch.setattr(offline_model, "respond", respond)
    _clear_caches()
    for module, name in CHECKS:
        for answer in (module.SOLUTIONS[name](), wrong_answer(module, name)):
            verdict(getattr(module, name), answer)
    assert len(named) > 50
    models = {(path.endswith("/messages"), model) for path, model in named}
    assert models == {(False, "course-check-model"), (True, "course-check-claude"), (False, "gpt-5")}
    monkeypatch.setenv("COURSE_MODEL", "o4-mini")  # a reasoning model as the course's: the reasoning cases use it
    from course_lib.exercises.nb04 import reasoning_model

    assert reasoning_model() == "o4-mini"
