"""Wrong answers to notebook 04b's exercises get a message that says what is wrong."""

import json

from course_lib.backend import model_name
from course_lib.exercises.nb04b import check_calls_from_stream, check_stream_answer


def _parse_each_delta(events):
    calls = {}
    for event in events:
        if event.type == "response.function_call_arguments.delta":
            calls[event.item_id] = json.loads(event.delta)
    return calls


def _keyed_by_item_id(events):
    return {e.item_id: json.loads(e.arguments) for e in events if e.type == "response.function_call_arguments.done"}


def _text_not_parsed(events):
    ids = {e.item.id: e.item.call_id for e in events if e.type == "response.output_item.added"}
    return {ids[e.item_id]: e.arguments for e in events if e.type == "response.function_call_arguments.done"}


def _pieces_of_the_latest_call(events):
    """Joins every delta to the call announced last: right while calls stream one after the other."""
    calls, current, text = {}, None, ""
    for event in events:
        if event.type == "response.output_item.added":
            current, text = event.item.call_id, ""
        elif event.type == "response.function_call_arguments.delta":
            text += event.delta
        elif event.type == "response.function_call_arguments.done":
            calls[current] = json.loads(text)
    return calls


def test_parsing_a_delta_is_named(capsys):
    assert check_calls_from_stream(_parse_each_delta) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ on the one-call stream, json.loads failed")
    assert "a delta is a piece of the arguments text, not JSON" in out


def test_item_ids_instead_of_call_ids_are_named(capsys):
    assert check_calls_from_stream(_keyed_by_item_id) is False
    assert "the keys are item ids (fc_…)" in capsys.readouterr().out


def test_arguments_left_as_text_are_named(capsys):
    assert check_calls_from_stream(_text_not_parsed) is False
    assert "the value is the arguments *text*" in capsys.readouterr().out


def test_joining_pieces_to_the_latest_call_fails_only_when_they_interleave(capsys):
    assert check_calls_from_stream(_pieces_of_the_latest_call) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ on the two-call stream with its pieces interleaved")
    assert "the pieces of two calls were joined together" in out


def _not_streamed(client, context):
    return client.responses.create(model=model_name(), input=context).output_text


def _last_piece(client, context):
    delta = ""
    for event in client.responses.create(model=model_name(), input=context, stream=True):
        if event.type == "response.output_text.delta":
            delta = event.delta
    return delta


def _every_delta_as_str(client, context):
    stream = client.responses.create(model=model_name(), input=context, stream=True)
    return "".join(str(getattr(event, "delta", "")) for event in stream if event.type != "response.output_text.done")[:-1]


def test_an_unstreamed_request_is_named(capsys):
    assert check_stream_answer(_not_streamed) is False
    assert "the request was not streamed" in capsys.readouterr().out


def test_keeping_only_the_last_piece_is_named(capsys):
    assert check_stream_answer(_last_piece) is False
    assert "it returned one piece" in capsys.readouterr().out


def test_a_text_that_differs_from_the_stream_is_named(capsys):
    assert check_stream_answer(_every_delta_as_str) is False
    assert "but the stream's answer is" in capsys.readouterr().out
