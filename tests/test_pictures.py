"""Sequence diagrams (`course_lib.pictures.sequence`): each arrow is one recorded exchange or message.

Every test runs a real loop on the offline model and checks the diagram against the records it
was drawn from: the model's HTTP exchanges (`course.wire`), the JSON-RPC messages
(`connection.messages`), the loop's trace (call_id ⇄ JSON-RPC id) and its executions (approvals).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator

import pytest

from course_lib import pictures
from course_lib.backend import make_anthropic_client
from course_lib.chat_loop import run_chat_loop
from course_lib.course import Course, start_course
from course_lib.messages_loop import run_messages_loop
from course_lib.pictures.diagram import APP, MODEL, PERSON, Diagram, server_lane, short
from course_lib.pictures.mermaid import escape, to_mermaid
from course_lib.pictures.record import NotARecord
from course_lib.streaming import StreamedRequests, wire_events

TASK = "Show the first 20 lines of /workspace/notes.txt"
FS = server_lane("fs")


@pytest.fixture
def course() -> Iterator[Course]:
    course = start_course(quiet=True)
    yield course
    course.close()


def model_arrows(diagram: Diagram) -> list:
    return diagram.between(APP, MODEL)


def server_arrows(diagram: Diagram, lane: str = FS) -> list:
    return diagram.between(APP, lane)


def notes(diagram: Diagram, style: str) -> list:
    return [a for a in diagram.arrows if a.note and a.style == style]


def test_the_first_run_has_an_arrow_per_exchange_and_per_message_in_the_order_they_crossed(course):
    result = course.run(TASK)
    diagram = pictures.sequence(course).marks

    assert [lane for lane, _ in diagram.lanes] == [MODEL, APP, FS]
    # model side: a request and its answer per HTTP exchange, numbered in order
    sent = model_arrows(diagram)
    assert len(sent) == 2 * len(course.wire.exchanges) == 4
    assert [(a.source, a.target, a.lines[0]) for a in sent] == [
        (APP, MODEL, "request 1"), (MODEL, APP, "answer 1"), (APP, MODEL, "request 2"), (MODEL, APP, "answer 2")]
    call = next(i for i in result.responses[0].output if i.type == "function_call")
    assert f"function_call {call.name} · {call.call_id}" in sent[1].lines
    assert f"function_call_output · {call.call_id}" in sent[2].lines
    # server side: one arrow per JSON-RPC message, in the relay's order, each carrying its id
    messages = course.mcp.messages
    crossed = server_arrows(diagram)
    assert len(crossed) == len(messages) == 7
    for arrow, message in zip(crossed, messages):
        assert (arrow.source == APP) == (message.direction == "app→server")
        if "id" in message.json:
            assert f"id {message.json['id']}" in arrow.text
        else:
            assert arrow.style == "notify" and arrow.text == message.json["method"]
    # the app's link, right after the tools/call that carried the call
    link = result.trace[0]
    [note] = notes(diagram, "link")
    assert note.text == f"{link.call_id} ⇄ id {link.mcp_id}"
    order = [a.text for a in diagram.arrows]
    assert order.index(note.text) == order.index(f"tools/call read_text_file · id {link.mcp_id}") + 1
    # the setup crossed before the model was asked; the call after the answer that made it; the feedback after it
    assert order.index("initialize · id 1") < order.index(sent[0].text)
    assert order.index(sent[1].text) < order.index(note.text) < order.index(sent[2].text)


def test_one_run_among_several_keeps_only_its_own_exchanges(course):
    course.run(TASK)
    second = course.run("Show the first 5 lines of /workspace/notes.txt")
    diagram = pictures.sequence(second, course).marks

    assert len(model_arrows(diagram)) == 4
    ids = [a.text for a in server_arrows(diagram)]
    mcp_id = second.trace[0].mcp_id
    assert ids == [f"tools/call read_text_file · id {mcp_id}", f"result · id {mcp_id} · isError false"]
    assert notes(diagram, "link")[0].text == f"{second.trace[0].call_id} ⇄ id {mcp_id}"


def test_a_refused_read_is_drawn_as_an_error_and_its_feedback_says_so(course):
    result = course.run("Show the first 2 lines of /etc/passwd")
    diagram = pictures.sequence(result, course).marks

    [answer] = [a for a in server_arrows(diagram) if a.source == FS]
    assert answer.style == "error" and "isError true" in answer.lines[0] and "FORBIDDEN" in answer.lines[1]
    assert f"function_call_output · {result.trace[0].call_id} · ✗ FORBIDDEN" in model_arrows(diagram)[2].lines
    assert "--x" in pictures.sequence(result, course).mermaid


def test_a_call_the_app_refuses_before_sending_is_a_note_and_crosses_to_no_server(course):
    class InventsATool:  # a model that names a tool nobody declared
        def __init__(self, client):
            self.client = client

        def __call__(self, **request):
            response = self.client.responses.create(**request)
            output = [i.model_copy(update={"name": "fs__delete_file"}) if i.type == "function_call" else i
                      for i in response.output]  # fmt: skip
            return response.model_copy(update={"output": output})

    result = course.run(TASK, create=InventsATool(course.client))
    diagram = pictures.sequence(result, course.host).marks

    assert result.trace[0].error_code == "INVALID_INPUT" and result.trace[0].mcp_id is None
    [note] = notes(diagram, "refusal")
    assert note.lines[1] == f"{result.trace[0].call_id}: INVALID_INPUT"
    assert server_arrows(diagram) == []  # nothing crossed to the server in this run
    assert FS not in [lane for lane, _ in diagram.lanes]


def test_a_json_rpc_error_is_an_error_arrow_with_its_code():
    from mcp.shared.exceptions import MCPError

    from course_lib.fs_server import Workspace, build_server
    from course_lib.host import McpHost
    from course_lib.paths import workspace_dir

    with McpHost() as host:
        host.add_server("fs", build_server(Workspace(workspace_dir())))
        connection = host.connections["fs"]
        with pytest.raises(MCPError):
            host.run(connection.call_tool, "delete_file", {"path": "/workspace/notes.txt"})
        exchange = connection.last_call()
        diagram = pictures.sequence(exchange).marks
    request, answer = diagram.between(APP, server_lane("server"))
    code = exchange.response["error"]["code"]
    assert request.text == f"tools/call delete_file · id {exchange.id}"
    assert answer.style == "error" and answer.lines[0] == f"error {code} · id {exchange.id}"


def test_parallel_calls_are_carried_in_the_order_they_crossed_each_linked_to_its_call_id(course):
    result = course.run("Show the first 2 lines of /workspace/notes.txt, the last 3 lines of /workspace/todo.md "
                        "and the first 4 lines of /workspace/docs/mcp.md")  # fmt: skip
    diagram = pictures.sequence(result, course).marks

    assert len(result.trace) == 3
    assert [n.text for n in notes(diagram, "link")] == [f"{t.call_id} ⇄ id {t.mcp_id}" for t in result.trace]
    requests = [a for a in server_arrows(diagram) if a.source == APP]
    assert [a.text for a in requests] == [f"tools/call read_text_file · id {t.mcp_id}" for t in result.trace]
    fed_back = model_arrows(diagram)[2].lines
    assert fed_back[1:] == tuple(f"function_call_output · {t.call_id}" for t in result.trace)


def test_chat_completions_and_messages_pair_their_own_ids_with_the_json_rpc_ids(course):
    chat = run_chat_loop(course.client, course.host, TASK)
    with make_anthropic_client() as anthropic:
        claude = run_messages_loop(anthropic, course.host, TASK)
    for run, call_kind, result_kind in ((chat, "tool_calls", "role: tool"), (claude, "tool_use", "tool_result")):
        diagram = pictures.sequence(run, course).marks
        link = run.trace[0]
        assert len(model_arrows(diagram)) == 2 * run.steps
        shown = short(link.call_id)  # a long id is cut, marked …: its start finds it in the JSON
        assert shown == link.call_id or (shown.endswith("…") and link.call_id.startswith(shown[:-1]))
        assert f"{call_kind} fs__read_text_file · {shown}" in model_arrows(diagram)[1].lines
        assert f"{result_kind} · {shown}" in model_arrows(diagram)[2].lines
        assert notes(diagram, "link")[0].text == f"{shown} ⇄ id {link.mcp_id}"
    # Messages ran on a client nobody captured: its side comes from the loop's own record
    assert not any(e.path.endswith("/messages") for e in course.wire.exchanges)


def test_a_streamed_answer_says_how_many_events_carried_it(course):
    streamed = StreamedRequests(course.client)
    result = course.run(TASK, create=streamed)
    diagram = pictures.sequence(result, course).marks

    answers = [a for a in model_arrows(diagram) if a.source == MODEL]
    events = [len(wire_events(e.response)) for e in course.wire.exchanges]
    assert [a.lines[0] for a in answers] == [f"answer {n} · {k} events" for n, k in enumerate(events, start=1)]
    assert all(a.lines[0].endswith(" · stream") for a in model_arrows(diagram) if a.source == APP)


def test_a_framework_run_is_ordered_by_cause(tmp_path):
    from course_lib.frameworks import Bench, calls
    from course_lib.loop import run_loop

    with Bench() as bench:
        host, client = bench.course_host(), bench.openai_client()
        with bench.run("the course's loop") as run:
            run_loop(client, host, TASK)
            run_loop(client, host, "Show the first 2 lines of /etc/passwd")
    diagram = pictures.sequence(run).marks
    trace, refused = calls(run)
    lane = server_lane("files")
    assert dict(diagram.lanes)[APP] == "app: the course's loop"
    assert len(model_arrows(diagram)) == 2 * len(run.model)
    assert len(diagram.between(APP, lane)) == len(run.mcp)
    order = [a.text for a in diagram.arrows]
    carried = f"tools/call read_text_file · id {trace.mcp_id}"
    assert order.index(model_arrows(diagram)[1].text) < order.index(carried) < order.index(model_arrows(diagram)[2].text)
    assert [n.text for n in notes(diagram, "link")] == [f"{t.call_id} ⇄ id {t.mcp_id}" for t in (trace, refused)]
    # the second task is a new conversation: its first request shows its own message and rules again
    assert model_arrows(diagram)[4].lines == ("request 3", "message (user)", "1 tool declared")
    assert [a.style for a in diagram.between(APP, lane)][-1] == "error"  # the refused read


def test_a_write_waits_for_a_person_then_runs_once_approved(course):
    from course_lib.assistant import NotesAssistant

    with NotesAssistant(client=course.client) as assistant:
        paused = assistant.ask("Where is my understanding of workflows and agents incomplete?")
        assert paused.reason == "approval_required"
        waiting = pictures.sequence(paused, assistant).marks
        action = paused.pending[0].result["error"]["action_id"]
        call_id = paused.pending[0].call_id
        done = assistant.approve(paused)
        approved = pictures.sequence(done, assistant).marks

    assert [lane for lane, _ in waiting.lanes][-1] == PERSON
    ask, wait = waiting.arrows[-2:]
    assert (ask.source, ask.target, ask.lines) == (APP, PERSON, ("approve?", f"notes__save_learning_gap · {action}"))
    assert wait.note and wait.style == "wait"
    texts = [a.text for a in approved.arrows]
    save = next(t for t in done.trace if t.call_id == call_id)
    asked = texts.index(f"approve? · notes__save_learning_gap · {action}")  # the action a person approves
    assert texts[asked + 1] == f"approved · {action}"
    assert texts[asked + 2] == f"tools/call save_learning_gap · id {save.mcp_id}"


def test_a_rejected_write_crosses_to_no_server(course):
    from course_lib.assistant import NotesAssistant

    with NotesAssistant(client=course.client) as assistant:
        paused = assistant.ask("Where is my understanding of workflows and agents incomplete?")
        done = assistant.reject(paused)
        diagram = pictures.sequence(done, assistant).marks
    rejected = [a for a in diagram.arrows if a.source == PERSON]
    assert len(rejected) == 1 and rejected[0].style == "error"
    assert not any("save_learning_gap · id" in a.text for a in diagram.arrows)


def test_the_mermaid_text_has_a_participant_per_lane_and_a_line_per_arrow(course):
    course.run(TASK)
    picture = pictures.sequence(course)
    lines = picture.mermaid.splitlines()
    diagram = picture.marks
    assert lines[0] == "sequenceDiagram"
    assert [line for line in lines if line.strip().startswith("participant")] == [
        f"    participant L{i} as {escape(label)}" for i, (_, label) in enumerate(diagram.lanes)]
    body = [line for line in lines[2:] if not line.strip().startswith(("participant", "title"))]
    assert len(body) == len(diagram.arrows)
    assert sum(bool(re.match(r" *L\d+->>L\d+: ", line)) for line in body) == sum(a.style == "request" for a in diagram.arrows)
    assert sum(bool(re.match(r" *L\d+-->>L\d+: ", line)) for line in body) == sum(a.style == "response" for a in diagram.arrows)
    assert sum("Note over L1" in line for line in body) == len(notes(diagram, "link"))


def test_labels_are_data_never_mermaid_syntax():
    assert escape('say "hi"; #1 <b> & 50% {x}') == "say #quot;hi#quot;#59; #35;1 #lt;b#gt; #amp; 50#37; #123;x#125;"
    assert not re.search(r"[;<>&\"{}%]", re.sub(r"#\w+;", "", escape('a;b<c>d&e"f{g}h%')))


def test_the_same_run_gives_the_same_text_and_mermaid(course):
    course.run(TASK)
    again = start_course(quiet=True)
    try:
        again.run(TASK)
        assert pictures.sequence(again).mermaid == pictures.sequence(course).mermaid
        assert pictures.sequence(again).text == pictures.sequence(course).text
    finally:
        again.close()


def test_jupyter_gets_mermaid_png_and_text_in_one_output(course):
    course.run(TASK)
    picture = pictures.sequence(course)
    data, metadata = picture._repr_mimebundle_()
    assert set(data) == {"text/vnd.mermaid", "image/png", "text/plain"}
    import base64

    assert base64.b64decode(data["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
    assert data["text/plain"] == picture.text == repr(picture)
    assert to_mermaid(picture.marks) == data["text/vnd.mermaid"]


def test_the_chinese_edition_labels_in_chinese_and_keeps_the_wire_names(course, zh):
    course.run(TASK)
    diagram = pictures.sequence(course).marks
    assert dict(diagram.lanes) == {MODEL: "模型", APP: "应用", FS: "MCP 服务器 fs"}
    texts = [a.text for a in diagram.arrows]
    assert "请求 1 · message (user) · 声明了 1 个工具" in texts
    assert any(t.startswith("回答 1 · function_call fs__read_text_file · call_") for t in texts)


def test_anything_else_is_refused_with_a_clear_error():
    with pytest.raises(NotARecord, match="give pictures.sequence a record"):
        pictures.sequence()
    with pytest.raises(NotARecord, match="dict is not a record of a run"):
        pictures.sequence({"input": "hello"})


def test_importing_the_pictures_costs_no_matplotlib():
    code = "import sys, course_lib.pictures; print('matplotlib' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"


def test_a_call_sent_to_a_server_not_in_the_records_given_says_so(course):
    from course_lib.fs_server import Workspace, build_server
    from course_lib.host import McpHost
    from course_lib.loop import run_loop
    from course_lib.paths import workspace_dir

    course.run("Show the first 2 lines of /workspace/notes.txt")  # an id 3 on the course's own files server
    with McpHost() as other:
        other.add_server("arch", build_server(Workspace(workspace_dir()), name="archive"))
        result = run_loop(course.client, other, "Show the first 2 lines of /workspace/notes.txt")
        alone = pictures.sequence(result, course).marks  # the host it ran on is not given
        whole = pictures.sequence(result, course, other).marks
    link = result.trace[0]
    assert (link.server, link.mcp_id) == ("arch", 3)
    assert server_arrows(alone) == [] and [n.lines for n in notes(alone, "wait")] == [("sent to arch as id 3", "not in the records given")]
    assert [a.text for a in server_arrows(whole, server_lane("arch"))] == ["tools/call read_text_file · id 3",
                                                                          "result · id 3 · isError false"]
    assert notes(whole, "wait") == []


def test_results_that_arrive_back_to_back_are_drawn_in_request_order():
    """Two calls run together may finish in either order by microseconds: the stored picture must not
    depend on it (09's capstone turn flaked on it), so a run of back-to-back results follows the requests."""
    from course_lib.pictures.diagram import _back_to_back_in_request_order
    from course_lib.pictures.record import ServerMessage

    def ask(n):
        return ServerMessage("notes", True, {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {}})

    def answer(n):
        return ServerMessage("notes", False, {"jsonrpc": "2.0", "id": n, "result": {}})

    note = ServerMessage("notes", False, {"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
    order = lambda messages: [("→" if m.outgoing else "←", m.json.get("id")) for m in _back_to_back_in_request_order(messages)]  # noqa: E731
    assert order([ask(5), ask(6), answer(6), answer(5)]) == [("→", 5), ("→", 6), ("←", 5), ("←", 6)]
    # a message between two results ends the run: what came before it stays before it
    assert order([ask(5), ask(6), answer(6), note, answer(5)]) == [("→", 5), ("→", 6), ("←", 6), ("←", None), ("←", 5)]
    # a result whose request is not in the list (another group) keeps its place
    assert order([answer(3), ask(5), answer(5)]) == [("←", 3), ("→", 5), ("←", 5)]
