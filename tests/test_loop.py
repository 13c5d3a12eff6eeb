import json

import pytest
from openai.types.responses import Response, ResponseFunctionToolCall

from course_lib.arguments import ReadTextFileArgs
from course_lib.course import start_course
from course_lib.execution import Executor, Session
from course_lib.guarded_loop import run_guarded_loop
from course_lib.loop import execute_call, next_tool_choice, response_stop
from course_lib.paths import workspace_dir

NOTES = (workspace_dir() / "notes.txt").read_text(encoding="utf-8")


@pytest.fixture
def course(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    c = start_course(quiet=True)
    yield c
    c.close()


def first_lines(n):
    return "".join(NOTES.splitlines(keepends=True)[:n])


def test_the_running_example_completes_from_the_real_file(course):
    result = course.run("Show the first 20 lines of /workspace/notes.txt")
    assert (result.status, result.reason, result.steps) == ("completed", None, 2)
    assert first_lines(20) in result.answer and first_lines(21) not in result.answer
    [link] = result.trace
    call = result.responses[0].output[0]
    assert link.call_id == call.call_id
    assert link.mcp_id == course.mcp.exchanges("tools/call")[0].id
    assert [item.get("type", "message") for item in result.context] == [
        "message", "function_call", "function_call_output", "message",
    ]  # fmt: skip


def test_head_5_changes_values_and_results_but_not_rules(course):
    twenty = course.run("Show the first 20 lines of /workspace/notes.txt")
    five = course.run("Show the first 5 lines of /workspace/notes.txt")
    requests = [e.request for e in course.wire.exchanges]
    assert requests[0]["tools"] == requests[2]["tools"]  # rule
    assert json.loads(twenty.trace[0].arguments_text)["head"] == 20
    assert json.loads(five.trace[0].arguments_text)["head"] == 5  # value
    assert five.trace[0].output == first_lines(5) != twenty.trace[0].output  # result


def test_a_missing_file_is_reported_as_a_failure_never_as_content(course):
    result = course.run("Show the first 3 lines of /workspace/missing.txt")
    assert result.status == "completed"
    assert result.trace[0].error_code == "NOT_FOUND"
    feedback = json.loads(result.trace[0].output)
    assert feedback["ok"] is False and feedback["error"]["kind"] == "tool"
    assert "reported an error" in result.answer and "NOT_FOUND" in result.answer


def test_a_path_outside_the_workspace_is_forbidden(course):
    result = course.run("Show /etc/passwd")
    assert result.trace[0].error_code == "FORBIDDEN"
    assert "root:" not in result.answer


def test_step_limit_ends_incomplete_without_an_answer(course):
    result = course.run("Show the first 2 lines of /workspace/notes.txt", max_steps=1)
    assert (result.status, result.reason, result.answer) == ("incomplete", "max_steps", None)
    assert len(result.trace) == 1  # the call ran, but the model never saw its result


def test_two_reads_in_one_turn_each_get_their_own_call_id(course):
    result = course.run("Show the first 2 lines of /workspace/notes.txt and the last 3 lines of /workspace/todo.md")
    assert len(result.trace) == 2 and result.trace[0].call_id != result.trace[1].call_id
    outputs = {i["call_id"]: i["output"] for i in result.context if i.get("type") == "function_call_output"}
    assert outputs[result.trace[0].call_id] == first_lines(2)
    todo = (workspace_dir() / "todo.md").read_text(encoding="utf-8")
    assert outputs[result.trace[1].call_id] == "".join(todo.splitlines(keepends=True)[-3:])


def test_strict_declarations_send_nulls_that_the_server_treats_as_absent(course):
    result = course.run("Show the first 4 lines of /workspace/notes.txt", strict=True)
    assert json.loads(result.trace[0].arguments_text) == {"path": "/workspace/notes.txt", "head": 4, "tail": None}
    assert result.trace[0].output == first_lines(4)


def _call(name, arguments):
    return ResponseFunctionToolCall(type="function_call", call_id="call_test", name=name, arguments=arguments)


def test_unknown_tool_and_bad_arguments_are_refused_before_anything_is_sent(course):
    sent = len(course.mcp.messages)
    item, link = execute_call(_call("fs__delete_file", "{}"), course.host)
    assert item["call_id"] == "call_test" and link.error_code == "INVALID_INPUT"
    assert json.loads(item["output"])["error"]["kind"] == "app"
    item, link = execute_call(_call("fs__read_text_file", '{"path": "notes.txt", "path": "x"}'), course.host)
    assert "duplicate key 'path'" in json.loads(item["output"])["error"]["message"]
    assert len(course.mcp.messages) == sent and link.mcp_id is None


def test_a_protocol_error_stays_distinct_from_a_tool_error(course):
    from dataclasses import replace

    route = course.host.route("fs__read_text_file")
    course.host.routes["fs__gone"] = replace(route, alias="fs__gone", tool="gone")  # a tool the server lacks
    item, link = execute_call(_call("fs__gone", '{"path": "notes.txt"}'), course.host)
    error = json.loads(item["output"])["error"]
    assert error["kind"] == "protocol" and "-32602" in error["message"]
    assert link.mcp_id == course.mcp.last_call().id


@pytest.mark.parametrize("choice", ["required", {"type": "function", "name": "fs__read_text_file"},
                                    {"type": "allowed_tools", "mode": "required",
                                     "tools": [{"type": "function", "name": "fs__read_text_file"}]}])
def test_a_forcing_tool_choice_applies_until_the_call_is_made(course, choice):
    result = course.run("Show the first 2 lines of /workspace/notes.txt", tool_choice=choice)
    assert (result.status, result.steps) == ("completed", 2) and first_lines(2) in result.answer
    sent = [exchange.request["tool_choice"] for exchange in course.wire.exchanges[-2:]]
    assert sent == [choice, next_tool_choice(choice)]
    assert sent[1] == "auto" or sent[1]["mode"] == "auto"


def test_without_the_reset_a_forcing_tool_choice_never_gets_an_answer(course):
    result = course.run("Show the first 2 lines of /workspace/notes.txt", tool_choice="required",
                        reset_tool_choice=False, max_steps=3)
    assert (result.status, result.reason, result.answer, result.steps) == ("incomplete", "max_steps", None, 3)
    assert [link.arguments for link in result.trace] == [{"path": "/workspace/notes.txt", "head": 2}] * 3


def test_a_call_forced_with_nothing_to_fill_it_is_refused_by_the_server_and_reported(course):
    result = course.run("Can you read my notes file?", tool_choice="required")
    [link] = result.trace
    assert (link.arguments, link.error_code) == ({"path": ""}, "INVALID_INPUT")
    assert result.status == "completed"
    assert "reported an error" in result.answer and "path is empty" in result.answer


def test_next_tool_choice_keeps_what_does_not_force():
    assert next_tool_choice("auto") == "auto" and next_tool_choice("none") == "none"
    allowed = {"type": "allowed_tools", "mode": "auto", "tools": []}
    assert next_tool_choice(allowed) is allowed


def test_a_response_cut_by_max_output_tokens_ends_the_loop_as_incomplete_with_its_reason(course):
    result = course.run("Show the first 20 lines of /workspace/notes.txt", max_output_tokens=16)
    assert (result.status, result.reason, result.answer, result.steps) == ("incomplete", "max_output_tokens", None, 2)
    last = result.responses[-1]
    assert last.status == "incomplete" and last.output_text  # cut-off text is there, but it is no answer
    assert last.output_text not in [item.get("content") for item in result.context]
    assert [item.get("type", "message") for item in result.context] == ["message", "function_call", "function_call_output"]
    assert course.wire.exchanges[-1].request["max_output_tokens"] == 16


def test_a_cut_off_call_is_never_executed(course):
    task = "Show the first 20 lines of /workspace/" + "n" * 80 + ".txt"
    result = course.run(task, max_output_tokens=16)
    assert (result.status, result.reason, result.trace, result.steps) == ("incomplete", "max_output_tokens", [], 1)
    assert course.mcp.exchanges("tools/call") == []


def test_max_output_tokens_is_not_sent_unless_given(course):
    course.run("Show the first 2 lines of /workspace/notes.txt")
    assert all("max_output_tokens" not in e.request for e in course.wire.exchanges)


@pytest.mark.parametrize(
    ("status", "details", "stop"),
    [("completed", None, None), (None, None, None), ("incomplete", {"reason": "content_filter"}, "content_filter"),
     ("incomplete", None, "incomplete"), ("failed", None, "failed")],
)
def test_response_stop_reads_status_and_incomplete_details(status, details, stop):
    body = {"id": "resp_1", "object": "response", "created_at": 0, "model": "m", "output": [],
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "status": status,
            "incomplete_details": details}  # fmt: skip
    assert response_stop(Response.model_validate(body)) == stop


def test_the_guarded_loop_also_stops_on_a_response_that_did_not_complete(course):
    executor = Executor([course.host.executor_tool("fs__read_text_file", ReadTextFileArgs)])
    result = run_guarded_loop(course.client, course.host, executor, Session("alice"),
                              "Show the first 20 lines of /workspace/notes.txt", request={"max_output_tokens": 16})
    # the strict declaration makes the call longer ("tail": null): 16 tokens cut the call itself
    assert (result.status, result.reason, result.answer, result.steps) == ("incomplete", "max_output_tokens", None, 1)
    assert result.responses[0].output[0].status == "incomplete"
    assert result.executions == [] and course.mcp.exchanges("tools/call") == []  # a cut-off call never runs
