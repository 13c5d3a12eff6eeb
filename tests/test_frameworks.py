"""course_lib.frameworks: the bench the frameworks of notebook 09b run on, its taps, the traces and
tables built from what crossed, and the fix that keeps a refusal a failure in the Agents SDK.

The frameworks themselves run here as a learner runs them (the Agents SDK and pydantic-ai against the
bench); Mastra, which needs Node, is in tests/test_frameworks_mastra.py.
"""

from __future__ import annotations

import asyncio
import copy
import json
import subprocess
import sys
from pathlib import Path

import httpx
import mcp_types
import pytest

from course_lib.frameworks import Bench, FrameworkRuns, Run, Shown, calls, duty_table, failure_marked, roundtrip, show_wire
from course_lib.frameworks.duties import column
from course_lib.frameworks.http_tap import HttpTap
from course_lib.frameworks.keep_failure import keep_failure
from course_lib.loop import run_loop
from course_lib.paths import workspace_dir
from course_lib.verify import check_roundtrip
from tests.conftest import reset_connections

READ = "Show the first 5 lines of /workspace/notes.txt"
REFUSED = "Show the first 5 lines of /etc/passwd"
TWO = "Show the first 3 lines of /workspace/notes.txt and the last 2 lines of /workspace/todo.md"
FIVE_LINES = "".join((workspace_dir() / "notes.txt").read_text().splitlines(keepends=True)[:5])


@pytest.fixture(scope="module")
def bench():
    with Bench() as started:
        yield started


@pytest.fixture(scope="module")
def course_run(bench):
    """The course's own loop on the bench: a read, a refused read, two reads in one response."""
    with bench.run("course") as run:
        host = bench.course_host()
        client = bench.openai_client()
        results = [run_loop(client, host, task) for task in (READ, REFUSED, TWO)]
    return run, results


# ---- the taps ----------------------------------------------------------------------------------


def test_the_stdio_tap_passes_every_line_unchanged_and_logs_it(tmp_path):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    log = tmp_path / "lines.jsonl"
    params = StdioServerParameters(command=sys.executable, args=[
        "-m", "course_lib.frameworks.stdio_tap", str(log), "--",
        sys.executable, "-m", "course_lib.fs_server", "--root", str(workspace_dir())])  # fmt: skip

    async def main():
        with (tmp_path / "stderr").open("w") as errlog:
            async with Client(stdio_client(params, errlog=errlog)) as client:
                return await client.call_tool("read_text_file", {"path": "/workspace/notes.txt", "head": 5})

    result = asyncio.run(main())
    assert result.content[0].text == FIVE_LINES  # what the server sent reached the client unchanged
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert {entry["from"] for entry in entries} == {"app", "server"}
    messages = [json.loads(entry["line"]) for entry in entries]
    call = next(m for m in messages if m.get("method") == "tools/call")
    answer = next(m for m, e in zip(messages, entries) if e["from"] == "server" and m.get("id") == call["id"])
    assert call["params"]["arguments"] == {"path": "/workspace/notes.txt", "head": 5}
    assert answer["result"]["content"][0]["text"] == FIVE_LINES


def test_the_stdio_tap_says_how_to_use_it_and_reports_a_command_it_cannot_start(tmp_path):
    usage = subprocess.run([sys.executable, "-m", "course_lib.frameworks.stdio_tap"], capture_output=True, text=True)
    assert usage.returncode == 2 and "usage:" in usage.stderr
    missing = subprocess.run([sys.executable, "-m", "course_lib.frameworks.stdio_tap", str(tmp_path / "log"), "--",
                              str(tmp_path / "no-such-program")], capture_output=True, text=True)  # fmt: skip
    assert missing.returncode == 127 and "cannot start" in missing.stderr and "Traceback" not in missing.stderr


def test_the_http_tap_records_json_and_streams_and_passes_errors_on(bench):
    import openai

    with openai.OpenAI(base_url=bench.model_url, api_key="offline", max_retries=0) as client:
        before = len(bench.model_tap.exchanges)
        client.responses.create(model="gpt-4.1", input="Hi")
        events = list(client.responses.create(model="gpt-4.1", input="Hi", stream=True))
    assert httpx.get(f"{bench.model_url}/no-such-path", timeout=10).status_code == 404
    plain, streamed, missing = bench.model_tap.exchanges[before:]
    assert plain.request["input"] == "Hi" and plain.response["object"] == "response"
    assert isinstance(streamed.response, str) and "event: response.completed" in streamed.response  # the stream's text
    assert events[-1].type == "response.completed"  # and the client got every event, in order
    assert missing.status == 404 and missing.method == "GET"


def test_the_http_tap_answers_502_when_its_upstream_is_gone():
    with HttpTap("http://127.0.0.1:9") as tap:  # nothing listens on the discard port
        answer = httpx.post(tap.url + "/v1/responses", json={"input": "x"}, timeout=10)
    assert answer.status_code == 502 and "could not reach" in answer.text
    assert tap.exchanges[0].status == 502


def test_the_http_tap_stays_quiet_when_a_client_vanishes_and_keeps_serving(capfd):
    with HttpTap("http://127.0.0.1:9") as tap:
        reset_connections(tap.url, "/v1/responses")
        assert httpx.post(tap.url + "/v1/responses", json={"input": "x"}, timeout=10).status_code == 502
    assert capfd.readouterr().err == ""  # no socketserver traceback in a learner's cell


# ---- a run, its calls, and the link the app keeps ----------------------------------------------


def test_calls_rebuild_the_link_the_host_itself_kept(course_run):
    run, results = course_run
    kept = {link.call_id: link.mcp_id for result in results for link in result.trace}
    traces = calls(run)
    assert {t.call_id: t.mcp_id for t in traces} == kept and len(kept) == 4
    for trace in traces:  # every object of the call, found on the wire
        assert trace.feedback["call_id"] == trace.call_id and trace.mcp_response["id"] == trace.mcp_id
        assert trace.mcp_request["params"]["arguments"] == trace.arguments and trace.answer


def test_calls_match_by_arguments_when_the_tools_call_go_out_in_another_order(course_run):
    run, _ = course_run
    expected = {t.call_id: t.mcp_id for t in calls(run)}
    messages = list(run.mcp)
    first, second = [i for i, m in enumerate(messages) if m.json.get("method") == "tools/call"][2:4]  # the two reads of TWO
    messages[first], messages[second] = messages[second], messages[first]
    assert {t.call_id: t.mcp_id for t in calls(Run("swapped", run.model, messages))} == expected


def test_a_call_no_server_ran_has_no_server_side():
    response = {"output": [{"type": "function_call", "call_id": "call_x", "name": "final_result", "arguments": "{}"}]}
    from course_lib.wire import HttpExchange

    [trace] = calls(Run("output tool", [HttpExchange("POST", "/v1/responses", {"input": "task", "tools": []}, 200, response)]))
    assert trace.mcp_request is None and trace.feedback is None and trace.answer is None and trace.task == "task"


@pytest.mark.parametrize(("output", "marked"), [
    ('{"ok": false, "error": {"code": "FORBIDDEN", "message": "no"}}', True),
    ('{"error": "FORBIDDEN: path is outside /workspace"}', True),
    ([{"type": "input_text", "text": '{"error": "x"}'}], True),
    ("FORBIDDEN: path is outside /workspace", False),
    ([{"type": "input_text", "text": "FORBIDDEN: path is outside /workspace"}], False),
    ("An error occurred while running the tool. Please try again.", False),
    ('{"path": "/workspace/notes.txt", "text": "…", "lines": 5}', False),
    ('["error"]', False),
])  # fmt: skip
def test_a_failure_is_marked_by_its_shape_not_by_its_words(output, marked):
    assert failure_marked(output) is marked


def test_the_course_s_own_round_trip_passes_verify_and_a_refusal_sent_as_words_fails_it(course_run):
    run, _ = course_run
    refused = next(t for t in calls(run) if t.task == REFUSED)
    assert all(finding.ok for finding in check_roundtrip(roundtrip(refused)))
    words = {**refused.feedback, "output": "FORBIDDEN: path is outside /workspace"}  # what the Agents SDK sends
    request_2 = dict(refused.answered.request, input=[words if i is refused.feedback else i
                                                      for i in refused.answered.request["input"]])  # fmt: skip
    broken = {**roundtrip(refused), "request_2": request_2}
    assert [f.link for f in check_roundtrip(broken) if not f.ok] == ["feedback comes from the tool result",
                                                                     "final answer built from the feedback"]


def test_the_wire_table_prints_each_object_with_its_id(course_run, capsys, en):
    run, _ = course_run
    show_wire(run, tasks=[REFUSED, "no such task"])
    printed = capsys.readouterr().out
    trace = next(t for t in calls(run) if t.task == REFUSED)
    assert "(no call for 'no such task': nothing crossed to the server)" in printed
    assert f"function_call         {trace.call_id}  " in printed and f"tools/call            id {trace.mcp_id} " in printed
    assert "fs__read_text_file(path: str, head?: int≥1|null, tail?: int≥1|null) · strict false" in printed
    assert "✓ failure marked" in printed and READ not in printed


def test_the_duty_table_is_measured_on_the_runs(course_run, en):
    run, _ = course_run
    cells = column(FrameworkRuns(read=Shown(run, "§1")))
    assert cells["refused"] == ('{"ok": false, "error": {code, …}}', "§1")
    assert cells["rule"][0] == "the server's inputSchema, as is" and cells["parse"][0] == "✓ text → object"
    assert cells["approval"][0] == "not run"
    words = copy.deepcopy(run)  # the same run with its refusal fed back as words only
    for exchange in words.model:
        for item in exchange.request.get("input", []) if isinstance(exchange.request.get("input"), list) else []:
            if item.get("type") == "function_call_output" and item["output"].startswith('{"ok": false'):
                item["output"] = "FORBIDDEN: path is outside /workspace"
    table = str(duty_table({"words": FrameworkRuns(read=Shown(words, "§2"))}))
    assert 'words only: "FORBIDDEN: path is outside …" (isError dropped) (§2)' in table
    assert "hides\n  words  the call_id ⇄ JSON-RPC id link, isError (§2)" in table


# ---- keeping a refusal a failure --------------------------------------------------------------


def test_keep_failure_leaves_a_success_alone_and_marks_a_refusal_with_its_code():
    good = mcp_types.CallToolResult(content=[mcp_types.TextContent(type="text", text=FIVE_LINES)])
    assert keep_failure(good) is good
    refused = mcp_types.CallToolResult(is_error=True, content=[mcp_types.TextContent(type="text", text="FORBIDDEN: no")],
                                       structured_content={"error": {"code": "FORBIDDEN", "message": "no"}})  # fmt: skip
    kept = keep_failure(refused)
    assert kept.is_error and json.loads(kept.content[0].text) == {"ok": False, "error": {"code": "FORBIDDEN",
                                                                                          "message": "no", "kind": "tool"}}
    words = mcp_types.CallToolResult(is_error=True, content=[mcp_types.TextContent(type="text", text="Access denied")])
    assert json.loads(keep_failure(words).content[0].text)["error"] == {"code": "UPSTREAM_ERROR", "message": "Access denied",
                                                                        "kind": "tool"}


def agents_read(bench, server_class, task):
    from agents import Agent, Runner, set_tracing_disabled
    from agents.models.openai_responses import OpenAIResponsesModel
    from openai import AsyncOpenAI

    set_tracing_disabled(True)
    files = bench.files_stdio()

    async def main():
        async with AsyncOpenAI(base_url=bench.model_url, api_key="offline", max_retries=0) as client:
            server = server_class(name="files", params=files.params(), errlog=files.errors, cache_tools_list=True)
            async with server:
                agent = Agent(name="reader", mcp_servers=[server], model=OpenAIResponsesModel(model="gpt-4.1", openai_client=client))
                return await Runner.run(agent, task)

    with bench.run(server_class.__name__) as run:
        result = asyncio.run(main())
    return run, result


def test_the_agents_sdk_drops_is_error_and_keeps_failures_restores_the_mark(bench):
    from course_lib.frameworks.agents_sdk import KeepsFailures, LoggedMCPServerStdio

    plain, _ = agents_read(bench, LoggedMCPServerStdio, REFUSED)
    [dropped] = calls(plain)
    assert dropped.refused and dropped.feedback["output"] == [{"type": "input_text", "text": "FORBIDDEN: path is outside /workspace"}]
    assert not failure_marked(dropped.feedback["output"])
    kept, result = agents_read(bench, KeepsFailures, REFUSED)
    [marked] = calls(kept)
    assert marked.refused and failure_marked(marked.feedback["output"])  # the server still said isError; now the model does too
    assert all(finding.ok for finding in check_roundtrip(roundtrip(marked)))
    assert "Error code: FORBIDDEN" in result.final_output


def test_logged_mcp_server_stdio_sends_the_server_s_stderr_to_its_file(bench):
    from course_lib.frameworks.agents_sdk import LoggedMCPServerStdio

    run, result = agents_read(bench, LoggedMCPServerStdio, READ)
    assert FIVE_LINES in result.final_output and len(calls(run)) == 1
    errors = sorted(Path(bench._dir).glob("stdio-*.stderr"))
    assert errors and all(path.exists() for path in errors)  # created, and closed again by cleanup()


def test_the_bench_is_offline_and_says_when_a_part_does_not_start(bench, monkeypatch):
    from course_lib.frameworks.bench import BenchError

    assert bench.model_url.startswith("http://127.0.0.1:")
    broken = Bench(workspace=workspace_dir())
    monkeypatch.setattr(sys, "executable", "/bin/false")  # a "python" that exits at once
    with pytest.raises(BenchError, match="offline-model did not start"):
        broken.start()
    with pytest.raises(BenchError, match="not started"):
        broken.model_url  # noqa: B018 - the property raises


def test_the_http_tap_answers_400_to_a_body_it_cannot_read(bench):
    import socket

    host, port = "127.0.0.1", bench.model_tap.port
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.sendall(b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
        answer = b""
        while chunk := sock.recv(4096):  # the tap closes the connection after answering
            answer += chunk
    assert answer.startswith(b"HTTP/1.1 400") and b"could not read the request body" in answer
