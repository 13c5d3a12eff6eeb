import json

import anyio
import pytest
from pydantic import BaseModel, ConfigDict

from course_lib.approval import Approvals
from course_lib.execution import Executor, Session, Tool, ToolError


class EchoArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    text: str
    repeat: int | None = None


class EchoOut(BaseModel):
    echoed: str


class NoteArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    path: str
    content: str


ALICE = Session("alice")
written: list[dict] = []


async def echo(args, ctx):
    return {"echoed": args.text * (args.repeat or 1)}


async def save(args, ctx):
    written.append({"path": args.path, "content": args.content, "key": ctx.action_id})
    return {"saved": args.path}


async def slow_save(args, ctx):
    await anyio.sleep(1)
    written.append({"late": True})
    return {"saved": args.path}


async def missing(args, ctx):
    raise ToolError("NOT_FOUND", "no such note")


async def crash(args, ctx):
    raise RuntimeError("db password=hunter2 at /srv/real/path")


def make(**overrides):
    tools = [
        Tool("echo", "Echo text", EchoArgs, echo, output_model=EchoOut),
        Tool("save_note", "Save a note", NoteArgs, save, side_effect=True),
        Tool("slow_save", "Save slowly", NoteArgs, slow_save, side_effect=True, timeout=0.05),
        Tool("missing", "Always missing", EchoArgs, missing),
        Tool("crash", "Always crashes", EchoArgs, crash),
        Tool("only_bob", "Bob only", EchoArgs, echo, permission=lambda s, a: s.user_id == "bob"),
        Tool("big", "Too big", EchoArgs, echo, max_output_chars=20),
        Tool("liar", "Bad output", EchoArgs, lambda a, c: _const({"wrong": 1}), output_model=EchoOut),
    ]
    return Executor(tools, **overrides)


async def _const(value):
    return value


def run(executor, name, arguments, session=ALICE, **kw):
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return anyio.run(lambda: executor.execute("call_1", name, text, session, **kw))


def steps(ex):
    return [(s.name, s.outcome) for s in ex.steps]


def test_a_good_read_passes_every_step_and_is_normalized():
    ex = run(make(), "echo", {"text": "hi", "repeat": 2})
    assert ex.result == {"ok": True, "data": {"echoed": "hihi"}}
    assert steps(ex) == [("allowlist", "ok"), ("parse", "ok"), ("schema", "ok"), ("permission", "ok"),
                         ("execute", "ok"), ("output", "ok")]  # fmt: skip
    assert json.loads(ex.feedback_item()["output"]) == ex.result and ex.feedback_item()["call_id"] == "call_1"


@pytest.mark.parametrize(
    ("name", "arguments", "step", "fragment"),
    [
        ("os.system", {"text": "x"}, "allowlist", "unknown tool 'os.system'"),
        ("echo", '{"text": "a", "text": "b"}', "parse", "duplicate key"),
        ("echo", '{"text": NaN}', "parse", "NaN is not allowed"),
        ("echo", '{"text": "a"} extra', "parse", "unexpected data"),
        ("echo", {"text": 5}, "schema", "text: expected a string"),
        ("echo", {"text": "a", "repeat": "2"}, "schema", "repeat: expected an integer"),
        ("echo", {"text": "a", "user_id": "bob"}, "schema", "unknown property 'user_id'"),
    ],
)
def test_bad_calls_stop_at_the_right_step_with_invalid_input(name, arguments, step, fragment):
    ex = run(make(), name, arguments)
    assert ex.error_code == "INVALID_INPUT" and ex.steps[-1] == ex.steps[-1].__class__(step, "INVALID_INPUT")
    assert fragment in ex.result["error"]["message"] and ex.result["error"]["retryable"] is False


def test_the_turn_allowlist_narrows_the_registry():
    ex = run(make(), "echo", {"text": "a"}, allowed=["missing"])
    assert ex.error_code == "INVALID_INPUT" and "available: missing" in ex.result["error"]["message"]


def test_permission_comes_from_the_session_not_the_arguments():
    assert run(make(), "only_bob", {"text": "a"}).error_code == "FORBIDDEN"
    assert run(make(), "only_bob", {"text": "a"}, session=Session("bob")).ok


def test_a_write_needs_approval_of_that_exact_action_once():
    written.clear()
    executor = make()
    first = run(executor, "save_note", {"path": "a.md", "content": "A"})
    assert first.error_code == "APPROVAL_REQUIRED" and written == []
    action = first.result["error"]["action_id"]
    assert first.result["error"]["arguments"] == {"path": "a.md", "content": "A"}
    executor.approvals.approve(action)
    # approving A does not authorize B: other content, other user
    assert run(executor, "save_note", {"path": "a.md", "content": "B"}).error_code == "APPROVAL_REQUIRED"
    assert run(executor, "save_note", {"content": "A", "path": "a.md"}, session=Session("mallory")).error_code == "APPROVAL_REQUIRED"
    # key order does not matter for the same action; it runs once
    assert run(executor, "save_note", '{"content": "A", "path": "a.md"}').ok
    assert written == [{"path": "a.md", "content": "A", "key": action}]
    assert run(executor, "save_note", {"path": "a.md", "content": "A"}).error_code == "APPROVAL_REQUIRED"  # single use


def test_an_expired_approval_authorizes_nothing():
    now = [0.0]
    executor = make(approvals=Approvals(ttl=10, clock=lambda: now[0]))
    action = run(executor, "save_note", {"path": "a.md", "content": "A"}).result["error"]["action_id"]
    executor.approvals.approve(action)
    now[0] = 11.0
    assert run(executor, "save_note", {"path": "a.md", "content": "A"}).error_code == "APPROVAL_REQUIRED"


def test_a_timeout_cancels_the_work_so_no_late_side_effect_happens():
    written.clear()
    executor = make()
    action = run(executor, "slow_save", {"path": "a.md", "content": "A"}).result["error"]["action_id"]
    executor.approvals.approve(action)

    async def main():
        ex = await executor.execute("call_1", "slow_save", '{"path": "a.md", "content": "A"}', ALICE)
        await anyio.sleep(1.2)  # longer than the handler would have taken
        return ex

    ex = anyio.run(main)
    assert ex.error_code == "TIMEOUT" and ex.result["error"]["retryable"] is True
    assert written == []


def test_expected_and_unexpected_failures_are_normalized_and_the_detail_stays_in_the_log():
    executor = make()
    assert run(executor, "missing", {"text": "a"}).result["error"] == {"code": "NOT_FOUND", "message": "no such note", "retryable": False}
    ex = run(executor, "crash", {"text": "a"})
    assert ex.error_code == "UPSTREAM_ERROR"
    assert "hunter2" not in ex.output and "/srv" not in ex.output and ex.trace_id in ex.output
    assert "hunter2" in executor.log.for_trace(ex.trace_id)[0].detail


def test_output_is_validated_and_size_capped():
    assert run(make(), "liar", {"text": "a"}).steps[-1].name == "output"
    big = run(make(), "big", {"text": "x" * 50})
    assert big.error_code == "UPSTREAM_ERROR" and "limit is 20" in big.result["error"]["message"]


def test_declarations_are_strict_function_tools():
    [decl] = make().declarations(only=["echo"])
    assert decl["strict"] is True and decl["parameters"]["required"] == ["text", "repeat"]
    assert decl["parameters"]["additionalProperties"] is False


# ---- never raises, whatever the call ----------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
                    max_leaves=12)  # fmt: skip
NAMES = st.sampled_from(["echo", "save_note", "missing", "crash", "only_bob", "big", "liar", "nope", ""]) | JSON | st.binary(max_size=8)
ARGUMENTS = st.builds(json.dumps, JSON) | JSON | st.binary(max_size=16) | st.sampled_from(
    ['{"text": "hi"}', '{"text": "a", "text": "b"}', "{", "[]", '{"text": NaN}', '{"path": "/a", "content": "b"}'])
SESSIONS = st.sampled_from([ALICE, Session("bob"), None, "alice", 42, {"user_id": "x"}])
ALLOWED = st.none() | st.sampled_from(["echo", ["echo", "crash"], [["echo"]], 5, [None, {}], {"echo": 1}, ()])


class Unprintable:
    def __str__(self):
        raise RuntimeError("no text for you")


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(call_id=st.text(max_size=8) | JSON, name=NAMES, arguments=ARGUMENTS, session=SESSIONS, allowed=ALLOWED)
def test_execute_never_raises_on_any_malformed_call(call_id, name, arguments, session, allowed):
    ex = anyio.run(lambda: make().execute(call_id, name, arguments, session, allowed=allowed))
    assert ex.result["ok"] in (True, False)
    if not ex.ok:
        assert ex.result["error"]["code"] in ("INVALID_INPUT", "FORBIDDEN", "NOT_FOUND", "APPROVAL_REQUIRED",
                                              "TIMEOUT", "UPSTREAM_ERROR", "CONFLICT")  # fmt: skip
    json.loads(ex.output)  # the model always gets JSON text back


@pytest.mark.parametrize("name", [["echo"], None, 7, {"name": "echo"}, b"echo", Unprintable(), 1.5])
def test_a_name_that_is_not_a_string_is_refused_at_the_allowlist(name):
    ex = anyio.run(lambda: make().execute("call_1", name, '{"text": "hi"}', ALICE))
    assert ex.error_code == "INVALID_INPUT" and steps(ex) == [("allowlist", "INVALID_INPUT")]
    assert "unknown tool" in ex.result["error"]["message"]


@pytest.mark.parametrize("arguments", [{"text": "hi"}, None, 5, ["{}"], b'{"text": "hi"}'])
def test_arguments_that_are_not_text_are_refused_at_parse(arguments):
    ex = anyio.run(lambda: make().execute("call_1", "echo", arguments, ALICE))
    assert ex.error_code == "INVALID_INPUT" and steps(ex)[-1] == ("parse", "INVALID_INPUT")


def test_no_valid_session_and_a_broken_permission_check_both_fail_closed():
    ex = anyio.run(lambda: make().execute("call_1", "echo", '{"text": "hi"}', None))
    assert ex.error_code == "FORBIDDEN" and steps(ex)[-1] == ("permission", "FORBIDDEN")

    def broken(session, arguments):
        raise KeyError("roles")

    executor = Executor([Tool("echo", "Echo", EchoArgs, echo, permission=broken)])
    ex = anyio.run(lambda: executor.execute("call_1", "echo", '{"text": "hi"}', ALICE))
    assert ex.error_code == "FORBIDDEN" and "KeyError" in executor.log.for_trace(ex.trace_id)[0].detail


def test_output_that_is_not_json_is_an_upstream_error_not_a_crash():
    executor = Executor([Tool("odd", "Odd output", EchoArgs, lambda a, c: _const({1, 2}))])
    ex = anyio.run(lambda: executor.execute("call_1", "odd", '{"text": "hi"}', ALICE))
    assert ex.error_code == "UPSTREAM_ERROR" and steps(ex)[-1] == ("output", "UPSTREAM_ERROR")


def test_one_name_given_as_allowed_is_that_tool_not_its_letters():
    assert run(make(), "echo", {"text": "hi"}, allowed="echo").ok
    assert run(make(), "echo", {"text": "hi"}, allowed="ech").error_code == "INVALID_INPUT"


def test_step_labels_are_the_names_in_english_and_the_glossary_terms_in_chinese(monkeypatch):
    execution = run(make(), "save_note", {"path": "a", "content": "b"})  # stops at approval
    monkeypatch.setenv("COURSE_LANG", "en")
    assert [s.label for s in execution.steps] == ["allowlist", "parse", "schema", "permission", "approval"]
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert [f"{s.label} {s.outcome}" for s in execution.steps] == [
        "允许列表 ok", "解析 ok", "schema ok", "权限 ok", "批准 APPROVAL_REQUIRED"]
    assert steps(execution)[-1] == ("approval", "APPROVAL_REQUIRED")  # what code and records read stays English
    timed_out = run(make(approvals=_always()), "slow_save", {"path": "a", "content": "b"})
    assert [s.label for s in timed_out.steps][-2:] == ["批准", "执行"] and timed_out.error_code == "TIMEOUT"


def _always():
    class Always(Approvals):
        def granted(self, tool, arguments, user_id):
            return True

    return Always()
