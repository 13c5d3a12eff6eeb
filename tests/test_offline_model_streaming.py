"""The offline model with `stream: true`: server-sent events the openai SDK parses into its own
typed events (strict response validation), the same answer as without streaming (ids aside: every
request gets fresh ones), byte-identical when a fresh instance replays it, in-process and over a
real socket; bad input is a 400 before any event."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import typing

import httpx
import openai
import pytest
from openai.types.responses import (
    ResponseCompletedEvent,
    ResponseContentPartAddedEvent,
    ResponseContentPartDoneEvent,
    ResponseCreatedEvent,
    ResponseFunctionCallArgumentsDeltaEvent,
    ResponseFunctionCallArgumentsDoneEvent,
    ResponseFunctionToolCall,
    ResponseIncompleteEvent,
    ResponseInProgressEvent,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
    ResponseTextDeltaEvent,
    ResponseTextDoneEvent,
)

from course_lib.offline_model import handle, offline_transport
from course_lib.offline_model.ids import renumbered
from course_lib.offline_model.server import OfflineModelServer
from course_lib.offline_model.streaming import pieces, sse_frame, stream_events
from tests.test_offline_model import MODEL, reader_tool

ONE_READ = "Show the first 5 lines of /workspace/notes.txt"
TWO_READS = "Show the first 5 lines of /workspace/notes.txt and the last 2 lines of /workspace/todo.md"


def body(text, **extra):
    return {"model": MODEL, "input": text, "tools": [reader_tool()], **extra}


def streamed(client, text, **extra):
    return list(client.responses.create(**body(text, **extra), stream=True))


def raw_stream(request_body: dict) -> bytes:
    response = handle(httpx.Request("POST", "http://offline/v1/responses", json=request_body))
    return response.read()


def events_of(raw: bytes) -> list[dict]:
    return [json.loads(line[6:]) for line in raw.decode().splitlines() if line.startswith("data: ")]


# ---- the events ------------------------------------------------------------------------------


def test_a_text_answer_streams_as_the_sdks_typed_events_in_order(client):
    events = streamed(client, "hello", tools=[])
    assert [type(e) for e in events[:4]] == [ResponseCreatedEvent, ResponseInProgressEvent,
                                             ResponseOutputItemAddedEvent, ResponseContentPartAddedEvent]
    deltas = [e for e in events if isinstance(e, ResponseTextDeltaEvent)]
    assert len(deltas) > 5 and events[4:4 + len(deltas)] == deltas  # fmt: skip
    assert [type(e) for e in events[4 + len(deltas):]] == [ResponseTextDoneEvent, ResponseContentPartDoneEvent,
                                                            ResponseOutputItemDoneEvent, ResponseCompletedEvent]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    final = events[-1].response
    message = final.output[0]
    assert "".join(d.delta for d in deltas) == final.output_text == events[-4].text
    assert {d.item_id for d in deltas} == {message.id} and {d.output_index for d in deltas} == {0}
    # What a client holds before the pieces: the response in progress, the item empty.
    assert events[0].response.status == "in_progress" and events[0].response.output == []
    assert events[2].item.status == "in_progress" and events[2].item.content == []
    assert events[3].part.text == "" and events[-2].item == message and message.status == "completed"


def test_a_function_calls_arguments_arrive_in_several_deltas_that_parse_only_when_joined(client):
    events = streamed(client, ONE_READ)
    deltas = [e for e in events if isinstance(e, ResponseFunctionCallArgumentsDeltaEvent)]
    done = next(e for e in events if isinstance(e, ResponseFunctionCallArgumentsDoneEvent))
    call = events[-1].response.output[0]
    assert call.type == "function_call" and len(deltas) >= 5
    assert "".join(d.delta for d in deltas) == done.arguments == call.arguments
    assert json.loads(done.arguments) == {"path": "/workspace/notes.txt", "head": 5}
    so_far = ""
    for delta in deltas[:-1]:  # every prefix short of the whole text is not JSON yet
        so_far += delta.delta
        with pytest.raises(json.JSONDecodeError):
            json.loads(so_far)
    added = events[2]
    assert isinstance(added, ResponseOutputItemAddedEvent) and added.item.arguments == ""
    assert (added.item.name, added.item.call_id, added.item.id) == (call.name, call.call_id, call.id)
    assert {(d.item_id, d.output_index) for d in deltas} == {(call.id, 0)} and done.item_id == call.id


def test_parallel_calls_stream_one_item_after_the_other_each_under_its_own_index_and_id(client):
    events = streamed(client, TWO_READS)
    final = events[-1].response.output
    assert [item.type for item in final] == ["function_call", "function_call"] and final[0].id != final[1].id
    added = [e for e in events if isinstance(e, ResponseOutputItemAddedEvent)]
    assert [(e.output_index, e.item.id) for e in added] == [(0, final[0].id), (1, final[1].id)]
    for index, item in enumerate(final):
        mine = [e for e in events if getattr(e, "item_id", None) == item.id]
        assert {e.output_index for e in mine} == {index}
        assert "".join(e.delta for e in mine if e.type == "response.function_call_arguments.delta") == item.arguments
    done_first = next(i for i, e in enumerate(events) if e.type == "response.output_item.done")
    assert events.index(added[1]) > done_first  # this model finishes item 0 before it starts item 1


def test_a_streamed_final_answer_after_function_call_output_quotes_the_result(client):
    first = client.responses.create(**body(ONE_READ))
    call = first.output[0]
    context = [{"role": "user", "content": ONE_READ}, call.to_dict(),
               {"type": "function_call_output", "call_id": call.call_id, "output": "alpha\nbeta\n"}]
    events = list(client.responses.create(model=MODEL, input=context, tools=[reader_tool()], stream=True))
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert text.endswith("alpha\nbeta\n") and text == events[-1].response.output_text
    assert isinstance(events[-1], ResponseCompletedEvent)


def test_a_response_cut_by_max_output_tokens_ends_with_response_incomplete(client):
    events = streamed(client, "hello", tools=[], max_output_tokens=16)
    assert isinstance(events[-1], ResponseIncompleteEvent)
    assert events[-1].response.status == "incomplete" and events[-1].response.incomplete_details.reason == "max_output_tokens"
    assert events[-2].item.status == "incomplete"
    # The SDK's own helper wants `response.completed`: an incomplete stream has no final response there.
    with client.responses.stream(**body("hello", tools=[], max_output_tokens=16)) as stream:
        list(stream)
        with pytest.raises(RuntimeError, match="response.completed"):
            stream.get_final_response()


def test_an_item_type_without_deltas_arrives_whole():
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": []}
    events = stream_events({"status": "completed", "output": [reasoning]})
    assert [(e["type"], e.get("item")) for e in events[2:4]] == [("response.output_item.added", reasoning),
                                                                  ("response.output_item.done", reasoning)]


def test_pieces_join_back_to_exactly_the_text():
    for text in ["", "a", '{"path":"/workspace/notes.txt","head":5}', "line 1\n\n  line 2 \n", "前5行 of b.txt!!!",
                 "x" * 40]:
        assert "".join(pieces(text)) == text
    assert pieces('{"head":20}') == ['{"', "head", '":', "20", "}"]


# ---- the same answer, byte for byte ----------------------------------------------------------


def test_a_fresh_instance_replays_the_same_stream_byte_for_byte():
    def run() -> list[bytes]:
        with httpx.Client(transport=offline_transport()) as http:
            return [http.post("http://offline/v1/responses", json=body(TWO_READS, stream=True)).read() for _ in range(2)]

    first, again = run(), run()
    assert first == again
    # Within one run the second stream is the same answer under ids of its own.
    assert first[0] != first[1] and renumbered(events_of(first[0])) == renumbered(events_of(first[1]))


def test_the_stream_ends_with_the_very_response_the_unstreamed_request_gets(client):
    plain = handle(httpx.Request("POST", "http://offline/v1/responses", json=body(TWO_READS))).json()
    events = events_of(raw_stream(body(TWO_READS, stream=True)))
    assert renumbered(events[-1]["response"]) == renumbered(plain)
    done = [e["item"] for e in events if e["type"] == "response.output_item.done"]
    assert done == events[-1]["response"]["output"]  # within one stream, the very same items and ids
    assert renumbered(done) == renumbered(plain["output"])


def test_the_sdks_stream_helper_assembles_the_unstreamed_output(client):
    plain = client.responses.create(**body(TWO_READS))
    with client.responses.stream(**body(TWO_READS)) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert "response.function_call_arguments.delta" in kinds and final.id != plain.id
    # The helper adds `parsed_arguments` to each call; everything else is the same, ids aside.
    assert renumbered([{k: v for k, v in item.to_dict().items() if k != "parsed_arguments"} for item in final.output]) \
        == renumbered([item.to_dict() for item in plain.output])


def test_frames_carry_the_event_type_in_both_the_event_line_and_the_data():
    wire = raw_stream(body(ONE_READ, stream=True)).decode()
    frames = wire.split("\n\n")
    assert frames[-1] == "" and all(f.count("\n") == 1 for f in frames[:-1])  # two lines each: JSON never spans lines
    for frame in frames[:-1]:
        event_line, data_line = frame.split("\n")
        assert event_line == f"event: {json.loads(data_line.removeprefix('data: '))['type']}"
    assert sse_frame({"type": "t", "text": "a\nb"}) == b'event: t\ndata: {"type":"t","text":"a\\nb"}\n\n'


def test_an_async_client_streams_through_the_in_process_transport():
    async def main():
        async with openai.AsyncOpenAI(api_key="offline", base_url="http://offline-model.invalid/v1", max_retries=0,
                                      http_client=httpx.AsyncClient(transport=offline_transport()),
                                      _strict_response_validation=True) as client:  # fmt: skip
            stream = await client.responses.create(**body(ONE_READ), stream=True)
            return [event async for event in stream]

    events = asyncio.run(main())
    assert events[-1].type == "response.completed" and events[-1].response.output[0].type == "function_call"


# ---- bad input while streaming ----------------------------------------------------------------


@pytest.mark.parametrize(("extra", "param", "code"), [
    ({"colour": "red"}, "colour", "unknown_parameter"),
    ({"temperature": "hot"}, "temperature", "invalid_type"),
    ({"tools": [{"type": "function", "name": "f", "parameters": {"type": "strng"}}]}, "tools[0].parameters",
     "invalid_function_parameters"),
    ({"input": [{"type": "function_call_output", "call_id": "call_x", "output": "hi"}]}, "input", None),
], ids=["unknown", "type", "schema", "orphan-output"])  # fmt: skip
def test_bad_input_while_streaming_is_a_400_in_the_error_shape_before_any_event(client, extra, param, code):
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(**body(ONE_READ), stream=True, extra_body=extra)  # sent as given
    assert caught.value.status_code == 400
    assert caught.value.body["param"] == param and caught.value.body["code"] == code
    assert caught.value.body["type"] == "invalid_request_error"


def test_stream_must_be_a_boolean(client):
    with pytest.raises(openai.BadRequestError, match="Invalid type for 'stream': expected a boolean"):
        client.post("/responses", body={**body(ONE_READ), "stream": "yes"}, cast_to=object)


# ---- over a real socket ------------------------------------------------------------------------


@pytest.fixture
def server_url():
    srv = OfflineModelServer(("127.0.0.1", 0), idle_timeout=2.0, request_timeout=2.0)
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/v1"
    srv.shutdown()
    srv.server_close()
    thread.join(timeout=5)


def test_the_http_server_streams_chunked_event_frames_the_sdk_parses(server_url):
    with openai.OpenAI(api_key="offline", base_url=server_url, max_retries=0, timeout=10,
                       _strict_response_validation=True) as client:  # fmt: skip
        first = list(client.responses.create(**body(TWO_READS), stream=True))
        again = list(client.responses.create(**body(TWO_READS), stream=True))  # the same kept-alive connection
        with pytest.raises(openai.BadRequestError, match="Unknown parameter: 'colour'"):
            client.responses.create(**body(ONE_READ), stream=True, extra_body={"colour": "red"})
    assert renumbered([e.to_dict() for e in first]) == renumbered([e.to_dict() for e in again])
    assert first[-1].type == "response.completed" and len(first[-1].response.output) == 2
    with httpx.Client(timeout=10) as http:
        with http.stream("POST", f"{server_url}/responses", json=body(ONE_READ, stream=True)) as response:
            assert response.headers["content-type"] == "text/event-stream; charset=utf-8"
            assert response.headers["transfer-encoding"] == "chunked" and "content-length" not in response.headers
            chunks = list(response.iter_raw())
    assert renumbered(events_of(b"".join(chunks))) == renumbered(events_of(raw_stream(body(ONE_READ, stream=True))))


def test_a_client_that_leaves_mid_stream_does_not_stop_the_server(server_url):
    host, port = server_url.removeprefix("http://").removesuffix("/v1").split(":")
    payload = json.dumps(body(TWO_READS, stream=True)).encode()
    with socket.create_connection((host, int(port)), timeout=5) as sock:
        sock.sendall(b"POST /v1/responses HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(payload) + payload)
        assert sock.recv(100).startswith(b"HTTP/1.1 200 OK")
    with openai.OpenAI(api_key="offline", base_url=server_url, max_retries=0, timeout=10) as client:
        assert client.responses.create(**body(ONE_READ)).output[0].type == "function_call"


def test_the_sdks_argument_events_name_the_item_not_the_call():
    """What notebook 04b teaches: deltas and .done carry item_id and output_index, never the call_id,
    which only the item itself (output_item.added / .done) carries."""
    for event_type in (ResponseFunctionCallArgumentsDeltaEvent, ResponseFunctionCallArgumentsDoneEvent):
        assert {"item_id", "output_index", "sequence_number"} <= set(event_type.model_fields)
        assert "call_id" not in event_type.model_fields and "name" not in event_type.model_fields
    items = typing.get_args(ResponseOutputItemAddedEvent.model_fields["item"].annotation)
    assert ResponseFunctionToolCall in items and "call_id" in ResponseFunctionToolCall.model_fields
