"""course_lib.items: an item is found by its type, wherever the model put it."""

import pytest
from anthropic.types import Message
from openai.types.responses import Response

from course_lib.items import NoCall, SeveralCalls, call, calls, kinds, of_type

REASONING = {"type": "reasoning", "id": "rs_1", "summary": []}
CALL = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "read_text_file",
        "arguments": '{"path": "/workspace/notes.txt"}', "status": "completed"}
TEXT = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "Let me read it.", "annotations": []}]}


def _response(*items):
    return Response.model_validate({"id": "resp_1", "object": "response", "created_at": 0, "model": "m",
                                    "output": list(items), "parallel_tool_calls": True, "tool_choice": "auto",
                                    "tools": [], "status": "completed"})


@pytest.mark.parametrize("order", [(CALL,), (REASONING, CALL), (TEXT, CALL), (REASONING, TEXT, CALL)])
def test_the_call_is_found_wherever_it_sits(order):
    for container in (_response(*order), {"output": list(order)}, list(order)):
        found = call(container)
        assert (found["call_id"] if isinstance(found, dict) else found.call_id) == "call_1"
    assert kinds(_response(*order)) == [item["type"] for item in order]


def test_no_call_names_what_came_instead():
    with pytest.raises(NoCall, match="reasoning, message"):
        call(_response(REASONING, TEXT))


def test_several_calls_are_not_taken_for_one():
    second = {**CALL, "id": "fc_2", "call_id": "call_2", "name": "search"}
    with pytest.raises(SeveralCalls):
        call(_response(CALL, second))
    assert call(_response(CALL, second), name="search").call_id == "call_2"
    assert [c.call_id for c in calls(_response(REASONING, CALL, second))] == ["call_1", "call_2"]
    assert of_type(_response(REASONING, CALL), "reasoning")[0].id == "rs_1"


def test_messages_blocks_are_found_by_type_too():
    message = Message.model_validate({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude", "stop_reason": "tool_use",
        "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
        "content": [{"type": "text", "text": "I'll read it."},
                    {"type": "tool_use", "id": "toolu_1", "name": "read_text_file", "input": {"path": "a"}}]})
    assert call(message).id == "toolu_1"
    assert kinds(message) == ["text", "tool_use"]


def test_something_that_holds_no_items_is_named():
    with pytest.raises(TypeError, match="int"):
        kinds(3)
