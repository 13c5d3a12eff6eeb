"""`wire.HttpCapture`: JSON bodies kept as they crossed; a streamed answer recorded as it passes to
the SDK, never buffered first."""

from __future__ import annotations

import threading

import httpx
import openai

from course_lib.offline_model import handle, offline_transport
from course_lib.wire import HttpCapture

TASK = "Show the first 5 lines of /workspace/notes.txt"
TOOL = {"type": "function", "name": "read_text_file", "description": "Read a text file",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}


class _Gated(httpx.BaseTransport):
    """The offline model's real event stream, held back after its first event until `gate` is set
    (at most 5 s); `released` says whether the gate opened before the server sent the rest."""

    def __init__(self) -> None:
        self.gate, self.released = threading.Event(), []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        answer = handle(request)
        frames = list(answer.iter_raw())
        gate, released = self.gate, self.released

        class Frames(httpx.SyncByteStream):
            def __iter__(self):
                yield frames[0]
                released.append(gate.wait(5))
                yield from frames[1:]

        return httpx.Response(answer.status_code, headers=answer.headers, stream=Frames())


def client_on(transport):
    return openai.OpenAI(api_key="x", base_url="http://offline-model.invalid/v1", max_retries=0,
                         http_client=httpx.Client(transport=transport), _strict_response_validation=True)


def test_the_first_event_reaches_the_sdk_before_the_server_sends_the_last():
    gated = _Gated()
    wire = HttpCapture(gated)
    with client_on(wire) as client:
        events = iter(client.responses.create(model="gpt-4.1", input=TASK, tools=[TOOL], stream=True))
        assert next(events).type == "response.created"  # while the server still holds the rest back
        assert wire.last.response is None and wire.last.request["stream"] is True
        gated.gate.set()
        rest = list(events)
    assert gated.released == [True]  # the SDK had its event before the gate opened: nothing was buffered
    assert rest[-1].type == "response.completed"
    body = wire.last.response
    assert isinstance(body, str) and body.startswith("event: response.created\n") and "event: response.completed" in body


def test_a_stream_closed_early_keeps_the_part_that_crossed_and_plain_bodies_stay_json():
    wire = HttpCapture(offline_transport())
    with client_on(wire) as client:
        stream = client.responses.create(model="gpt-4.1", input=TASK, tools=[TOOL], stream=True)
        next(iter(stream))
        stream.close()
        partial = wire.last.response
        assert isinstance(partial, str) and partial.startswith("event: response.created")
        client.responses.create(model="gpt-4.1", input=TASK, tools=[TOOL])
    assert [exchange.status for exchange in wire.exchanges] == [200, 200]
    assert wire.last.response["object"] == "response" and wire.last.request["input"] == TASK
