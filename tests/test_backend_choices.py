"""Two choices a cell makes about the model, each said in one line: a demo that runs on the offline model
on purpose even with a key set (the gullible persona, a platform that reaches this machine, a stuck model),
and a long run that says how many requests it would send before it sends them (or stays offline)."""

from __future__ import annotations

import builtins
import json

import openai
import pytest

from course_lib import backend
from course_lib.course import start_course
from course_lib.execution import Executor, Session
from course_lib.fs_server import Workspace, build_server
from course_lib.guarded_loop import run_guarded_loop
from course_lib.arguments import ReadTextFileArgs
from course_lib.http_transport import serving
from course_lib.items import call, calls
from course_lib.paths import workspace_dir
from tests.test_offline_model_persona import GULLIBLE, INJECTED, WRITE_ARGS, after_read

UNREACHABLE = "http://model.unreachable.invalid:9/v1"  # .invalid never resolves: a request there fails at once
WHY = ("only the offline model has a gullible mode.", "只有离线模型才有“轻信”模式。")


@pytest.fixture
def key_set(monkeypatch):
    """A learner's key and endpoint, pointing where nothing answers: any request that went there fails."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-learner")
    monkeypatch.setenv("OPENAI_BASE_URL", UNREACHABLE)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-learner")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", UNREACHABLE.removesuffix("/v1"))
    monkeypatch.delenv(backend.PAID_RUNS, raising=False)
    monkeypatch.setattr(builtins, "input", lambda *a: pytest.fail("a cell must never wait for an answer"))


@pytest.fixture
def course(key_set):
    course = start_course(quiet=True)
    yield course
    course.close()


def no_endpoint(client: openai.OpenAI) -> None:
    """The configured endpoint really is unreachable: the demo's answers came from elsewhere."""
    with pytest.raises(openai.APIConnectionError):
        client.with_options(max_retries=0, timeout=5).responses.create(model="gpt-4.1", input="hi")


# ---- offline on purpose -----------------------------------------------------------------------------------


def test_the_gullible_persona_runs_offline_on_purpose_with_a_key_set(course, capsys):
    no_endpoint(course.client)
    demo = course.offline_on_purpose(*WHY)
    assert capsys.readouterr().out == ("Offline on purpose: only the offline model has a gullible mode. This part runs "
                                       "on the offline model, not on model.unreachable.invalid:9.\n")  # fmt: skip
    response = demo.client.responses.create(**after_read(INJECTED, metadata=GULLIBLE))
    assert [(c.name, json.loads(c.arguments)) for c in calls(response)] == [("apply_note_update", WRITE_ARGS)]
    assert demo.wire.last.request["metadata"] == GULLIBLE and len(demo.wire.exchanges) == 1
    assert course.wire.exchanges == []  # the course's own wire saw nothing of the demo
    demo.close()
    assert course.host.call("fs__read_text_file", {"path": "/workspace/notes.txt", "head": 1}).result is not None  # host still open


def test_the_guarded_loop_of_the_demo_uses_the_course_host(course):
    demo = course.offline_on_purpose(*WHY)
    executor = Executor([course.host.executor_tool("fs__read_text_file", ReadTextFileArgs)])
    result = run_guarded_loop(demo.client, demo.host, executor, Session("alice"), "Show the first 2 lines of /workspace/notes.txt")
    assert result.status == "completed" and result.executions[0].ok
    assert course.workspace.reads >= 1


def test_a_platform_reaching_this_machine_runs_offline_on_purpose(course):
    demo = course.offline_on_purpose("a platform cannot reach a server on your machine; the offline model can.",
                                     "平台连不到你机器上的服务器，离线模型可以。")  # fmt: skip
    with serving(build_server(Workspace(workspace_dir()))) as server:
        tool = {"type": "mcp", "server_label": "files", "server_url": server.url, "require_approval": "never"}
        response = demo.client.responses.create(model="gpt-4.1", input="Show the first 3 lines of /workspace/notes.txt",
                                                tools=[tool])  # fmt: skip
    assert [item.type for item in response.output][:2] == ["mcp_list_tools", "mcp_call"]


def test_a_stuck_model_runs_offline_on_purpose(course):
    """05's stuck model replays a recorded call: recorded on the offline model, found by type."""
    demo = course.offline_on_purpose("a stuck model is one we make stuck.", "卡住的模型是我们故意做出来的。")
    executor = Executor([course.host.executor_tool("fs__read_text_file", ReadTextFileArgs)])
    task = "Show the first 5 lines of /etc/passwd"
    careful = run_guarded_loop(demo.client, demo.host, executor, Session("alice"), task)

    class StuckModel:
        def __init__(self, response):
            self.responses, self.recorded, self.requests = self, response, 0

        def create(self, **request):
            self.requests += 1
            stuck = call(self.recorded).model_copy(update={"call_id": f"call_stuck_{self.requests}"})
            return self.recorded.model_copy(update={"output": [stuck]})

    rut = run_guarded_loop(StuckModel(careful.responses[0]), demo.host, executor, Session("alice"), task, max_steps=3)
    assert rut.status == "incomplete" and rut.reason in ("max_steps", "tool_budget") and rut.steps <= 3
    assert len({execution.arguments_text for execution in rut.executions}) == 1  # the same call, again and again


def test_the_line_without_a_key_and_in_chinese(monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert backend.offline_on_purpose_line(*WHY) == "Offline on purpose: only the offline model has a gullible mode."
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert backend.offline_on_purpose_line(*WHY) == "这里特意使用离线模型：只有离线模型才有“轻信”模式。"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("OPENAI_BASE_URL", UNREACHABLE)
    client = backend.offline_on_purpose(*WHY)
    assert capsys.readouterr().out == ("这里特意使用离线模型：只有离线模型才有“轻信”模式。这一部分在离线模型上运行，不发往 "
                                       "model.unreachable.invalid:9。\n")  # fmt: skip
    assert client.responses.create(model="gpt-4.1", input="hello").output_text


def test_an_anthropic_client_offline_on_purpose(key_set):
    with backend.make_anthropic_client(offline=True) as claude:
        message = claude.messages.create(model="claude-sonnet-4-6", max_tokens=100,
                                         messages=[{"role": "user", "content": "hello"}])  # fmt: skip
    assert message.content[0].text


# ---- cost before a paid run ---------------------------------------------------------------------------------


def test_offline_every_run_goes_ahead_without_a_word(monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    client = backend.client_for_requests(250, "The comparison", "对比")
    assert capsys.readouterr().out == "" and client.base_url.host == "offline-model.invalid"


def test_a_handful_goes_to_the_endpoint_without_a_word(key_set, capsys):
    client = backend.client_for_requests(backend.HANDFUL, "The comparison", "对比")
    assert capsys.readouterr().out == "" and client.base_url.host == "model.unreachable.invalid"


def test_more_than_a_handful_says_how_many_and_stays_offline(key_set, capsys):
    client = backend.client_for_requests(250, "The comparison", "对比")
    assert capsys.readouterr().out == (
        "The comparison would send about 250 requests to model.unreachable.invalid:9 (model 'gpt-4.1'), so this run "
        "stays on the offline model. To send them, set COURSE_PAID_RUNS=250 (or 1 for any size), e.g. "
        "`%env COURSE_PAID_RUNS=250`, and run the cell again.\n")
    assert client.base_url.host == "offline-model.invalid"
    assert client.responses.create(model="gpt-4.1", input="hello").output_text  # it answers: the offline model


@pytest.mark.parametrize(("opt_in", "goes"), [("1", True), ("yes", True), ("300", True), ("249", False), ("no", False)])
def test_the_learner_opts_in_with_an_environment_variable(key_set, monkeypatch, capsys, opt_in, goes):
    monkeypatch.setenv(backend.PAID_RUNS, opt_in)
    client = backend.client_for_requests(250, "The comparison", "对比")
    said = capsys.readouterr().out
    assert backend.requests_allowed(250) is goes
    assert (client.base_url.host == "model.unreachable.invalid") is goes
    assert said.startswith("The comparison: sending about 250 requests to model.unreachable.invalid:9" if goes
                           else "The comparison would send about 250 requests")  # fmt: skip


def test_the_cost_line_in_chinese(key_set, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    backend.client_for_requests(250, "The comparison", "对比")
    assert capsys.readouterr().out.startswith("对比会向 model.unreachable.invalid:9（模型 'gpt-4.1'）发送约 250 个请求，所以这次运行留在离线模型上。")
