"""course_lib.streaming: events assembled per item, arguments parsed from their
`response.function_call_arguments.done` event on, and the course's own loop run with every request
streamed (the same calls, trace and answer as unstreamed; each request with its own ids)."""

import json

import pytest

from course_lib.arguments import ArgumentsError
from course_lib.course import start_course
from course_lib.show import show_trace
from course_lib.streaming import StreamAssembler, StreamBroken, StreamedRequests, run_streamed, show_stream, wire_events
from tests.test_offline_model import MODEL, reader_tool

ONE_READ = "Show the first 5 lines of /workspace/notes.txt"
TWO_READS = "Show the first 5 lines of /workspace/notes.txt and the last 2 lines of /workspace/todo.md"


@pytest.fixture
def course(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    c = start_course(quiet=True)
    yield c
    c.close()


def without_ids(value):
    """The JSON with every `id` and `call_id` left out: what two separate requests can share."""
    if isinstance(value, dict):
        return {k: without_ids(v) for k, v in value.items() if k not in ("id", "call_id")}
    if isinstance(value, list):
        return [without_ids(v) for v in value]
    return value


def events_of(client, text, **extra):
    return list(client.responses.create(model=MODEL, input=text, tools=[reader_tool()], stream=True, **extra))


def test_the_partial_state_grows_piece_by_piece_and_the_arguments_parse_only_at_done(client):
    events = events_of(client, ONE_READ)
    assembler = StreamAssembler()
    seen = []
    for event in events:
        partial = assembler.feed(event)
        if event.type == "response.function_call_arguments.delta":
            seen.append(partial.text)
            with pytest.raises(StreamBroken, match="still streaming"):
                partial.arguments()
    assert len(seen) >= 5 and all(b.startswith(a) and len(b) > len(a) for a, b in zip(seen, seen[1:]))
    [item] = assembler.items.values()
    assert item.done and item.text == seen[-1] == item.item.arguments
    assert item.arguments() == {"path": "/workspace/notes.txt", "head": 5}
    assert (item.name, item.call_id, item.item_id) == (item.item.name, item.item.call_id, item.item.id)
    assert assembler.final() == events[-1].response and "(done)" in assembler.text()


def test_the_arguments_parse_at_their_done_event_before_the_item_is_done(client):
    # The arguments .done event carries the whole text (ResponseFunctionCallArgumentsDoneEvent:
    # "emitted when function-call arguments are finalized"): the call can be parsed there.
    events = events_of(client, ONE_READ)
    at = next(i for i, e in enumerate(events) if e.type == "response.function_call_arguments.done")
    assert events[at + 1].type == "response.output_item.done"  # the item finishes after it
    assembler = StreamAssembler()
    for event in events[:at]:
        partial = assembler.feed(event)
    with pytest.raises(StreamBroken, match="still streaming"):
        partial.arguments()
    partial = assembler.feed(events[at])
    assert partial.arguments_done and not partial.done and partial.item is None
    assert partial.arguments() == json.loads(events[at].arguments) == {"path": "/workspace/notes.txt", "head": 5}
    assembler.feed(events[at + 1])
    assert partial.done and partial.arguments() == json.loads(partial.item.arguments)


def test_a_message_item_has_no_arguments_to_parse(client, monkeypatch):
    assembler = StreamAssembler()
    for event in events_of(client, "Say hello"):
        assembler.feed(event)
    [message] = assembler.items.values()
    assert message.type == "message" and message.done
    monkeypatch.setenv("COURSE_LANG", "en")
    with pytest.raises(StreamBroken, match="^output item 0 is a message, not a function_call: it has no arguments$"):
        message.arguments()
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    with pytest.raises(StreamBroken, match="^输出项 0 是 message，不是 function_call：它没有 arguments$"):
        message.arguments()


def test_parallel_calls_are_assembled_apart_by_output_index(client):
    assembler = StreamAssembler()
    for event in events_of(client, TWO_READS):
        assembler.feed(event)
    first, second = assembler.items[0], assembler.items[1]
    assert first.item_id != second.item_id
    assert first.arguments()["path"] == "/workspace/notes.txt" and second.arguments() == {"path": "/workspace/todo.md", "tail": 2}
    assert [line.split()[0] for line in assembler.text().splitlines()] == ["[0]", "[1]"]


def test_a_finished_text_that_is_no_json_object_is_refused_at_done():
    from course_lib.streaming import PartialItem

    with pytest.raises(ArgumentsError):
        PartialItem(0, "fc_1", "function_call", "f", "call_1", text='{"path": "a"', arguments_done=True).arguments()


def test_events_that_do_not_add_up_are_refused(client):
    events = events_of(client, ONE_READ)
    delta = next(e for e in events if e.type == "response.function_call_arguments.delta")

    def feed_all(sequence):
        assembler = StreamAssembler()
        for event in sequence:
            assembler.feed(event)
        return assembler

    with pytest.raises(StreamBroken, match="never announced"):  # a piece before its item
        feed_all([events[0], delta])
    with pytest.raises(StreamBroken, match="never announced"):  # a piece under another item's id
        feed_all([*events[:3], delta.model_copy(update={"item_id": "fc_other"})])
    with pytest.raises(StreamBroken, match="do not join"):  # a piece lost on the way
        feed_all([e for e in events if e is not delta])
    with pytest.raises(StreamBroken, match="without response.completed"):  # the connection dropped
        feed_all(events[:-1]).final()
    with pytest.raises(StreamBroken, match="not the items"):  # a final response that differs from the stream
        done = events[-1]
        feed_all([*events[:-1], done.model_copy(update={"response": done.response.model_copy(update={"output": []})})]).final()


def test_an_error_event_stops_the_assembly_with_its_message():
    from openai.types.responses import ResponseErrorEvent

    error = ResponseErrorEvent(type="error", code="server_error", message="The server had an error", param=None,
                               sequence_number=3)  # fmt: skip
    with pytest.raises(StreamBroken, match="error: The server had an error"):
        StreamAssembler().feed(error)


def test_the_streamed_loop_makes_the_same_calls_and_answer_as_the_unstreamed_one(course, capsys):
    streamed = StreamedRequests(course.client, on_event=show_stream)
    result = course.run(TWO_READS, create=streamed)
    printed = capsys.readouterr().out
    plain = course.run(TWO_READS)
    assert (result.status, result.steps, result.answer) == ("completed", 2, plain.answer)
    # The same calls and results; the ids are each request's own, so they are left out of the comparison.
    assert [(link.alias, link.arguments_text, link.output) for link in result.trace] == \
        [(link.alias, link.arguments_text, link.output) for link in plain.trace]
    assert [without_ids(r.to_dict()["output"]) for r in result.responses] == \
        [without_ids(r.to_dict()["output"]) for r in plain.responses]
    assert without_ids(result.context) == without_ids(plain.context)
    # Inside each conversation every output quotes the call_id of a call before it.
    for run in (result, plain):
        calls = [item["call_id"] for item in run.context if item.get("type") == "function_call"]
        outputs = [item["call_id"] for item in run.context if item.get("type") == "function_call_output"]
        assert outputs == calls and len(calls) == 2
    # What the learner saw: the arguments growing, then the answer's text as it arrived.
    assert '[0] fs__read_text_file  +\'{"\'' in printed and printed.endswith(plain.answer + "\n")
    assert len(streamed.turns) == 2 and all(t.response is not None for t in streamed.turns)
    assert sum(e.type == "response.output_text.delta" for e in streamed.turns[1].events) > 10


def test_run_streamed_goes_through_the_hosts_mcp_server_and_the_wire_capture(course, capsys):
    result = run_streamed(course.client, course.host, ONE_READ)
    show_trace(result)
    assert "fs/read_text_file  MCP id" in capsys.readouterr().out
    assert course.workspace.reads >= 1
    captured = course.wire.exchanges[0]
    assert captured.request["stream"] is True
    events = wire_events(captured.response)
    assert [e["sequence_number"] for e in events] == list(range(len(events)))
    assert events[-1]["type"] == "response.completed" and events[-1]["response"] == result.responses[0].to_dict()


def test_a_streamed_response_cut_short_ends_the_loop_incomplete(course):
    result = course.run("Show the first 20 lines of /workspace/notes.txt and the last 2 lines of /workspace/todo.md",
                        create=StreamedRequests(course.client), max_output_tokens=16)  # fmt: skip
    assert (result.status, result.reason, result.trace) == ("incomplete", "max_output_tokens", [])
    assert result.responses[0].status == "incomplete"
    cut = result.responses[0].output[-1]
    assert cut.type == "function_call" and cut.status == "incomplete"
    with pytest.raises(json.JSONDecodeError):  # a cut call's arguments are no JSON: never parsed, never executed
        json.loads(cut.arguments)
    assert course.workspace.reads == 0


def test_parsing_too_early_is_refused_in_the_editions_language(client, monkeypatch):
    events = events_of(client, ONE_READ)
    early = StreamAssembler()
    for event in events[:6]:
        partial = early.feed(event)
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    with pytest.raises(StreamBroken, match=r"^输出项 0 还在流式传输中；等它的 response\.function_call_arguments\.done 事件到来再解析$"):
        partial.arguments()
    monkeypatch.setenv("COURSE_LANG", "en")
    with pytest.raises(StreamBroken, match=r"^output item 0 is still streaming; parse it at its "
                                           r"response\.function_call_arguments\.done event$"):
        partial.arguments()


def test_the_partial_state_and_the_refusals_speak_the_editions_language(client, monkeypatch):
    events = events_of(client, ONE_READ)
    delta = next(e for e in events if e.type == "response.function_call_arguments.delta")
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert StreamAssembler().text() == "（还没有输出项）"
    assembler, halfway = StreamAssembler(), StreamAssembler()
    for event in events:
        assembler.feed(event)
    for event in events[:6]:
        halfway.feed(event)
    assert assembler.text().endswith("(已完成)") and halfway.text().endswith("(传输中)")
    assert assembler.items[0].item_id[:12] in assembler.text() and "fs__read_text_file" in assembler.text()
    with pytest.raises(StreamBroken, match=r"^response\.function_call_arguments\.delta 指向输出项 0，但这一项从未宣告过$"):
        StreamAssembler().feed(delta)
    lost = StreamAssembler()
    with pytest.raises(StreamBroken, match=r"^项 fc_\w+ 的增量拼起来不等于它的 arguments$"):
        for event in events:
            if event is not delta:
                lost.feed(event)
    cut = StreamAssembler()
    for event in events[:-1]:
        cut.feed(event)
    with pytest.raises(StreamBroken, match=rf"^流在 {len(events) - 1} 个事件之后就结束了，没有 response\.completed$"):
        cut.final()
    done = events[-1]
    differs = StreamAssembler()
    for event in [*events[:-1], done.model_copy(update={"response": done.response.model_copy(update={"output": []})})]:
        differs.feed(event)
    with pytest.raises(StreamBroken, match=r"^流式传来的项与最终响应里的项不一致$"):
        differs.final()
    monkeypatch.setenv("COURSE_LANG", "en")
    assert StreamAssembler().text() == "(no output item yet)"
    assert assembler.text().endswith("(done)") and halfway.text().endswith("(streaming)")
    with pytest.raises(StreamBroken, match=r"^response\.function_call_arguments\.delta for output item 0 that was never announced$"):
        StreamAssembler().feed(delta)
