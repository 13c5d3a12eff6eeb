"""The offline model's state (`previous_response_id`) and limits (`max_output_tokens`), through a real
openai client with strict response validation (the `client` fixture)."""

from __future__ import annotations

import json

import openai
import pytest
from openai.types.responses import Response

from course_lib.offline_model import respond, state
from course_lib.offline_model.ids import Counter, renumbered

MODEL = "gpt-4.1"
TASK = "Show the first 20 lines of /workspace/notes.txt"
TOOL = {"type": "function", "name": "fs__read_text_file", "description": "Read a text file as text.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}},
                       "required": ["path"]}}  # fmt: skip
TEXT = "A tool call involves three kinds of object: a rule, a value and a result.\n" * 3


def first_call(client, **options):
    response = client.responses.create(model=MODEL, input=TASK, tools=[TOOL], **options)
    [call] = response.output
    return response, call


def output_item(call, output=TEXT):
    return {"type": "function_call_output", "call_id": call.call_id, "output": output}


def refused(client, **request) -> dict:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, tools=[TOOL], **request)
    assert caught.value.status_code == 400
    return caught.value.body


# ---- previous_response_id --------------------------------------------------------------------------


def test_previous_response_id_answers_as_if_the_earlier_items_were_sent_again(client):
    response_1, call = first_call(client)
    chained = client.responses.create(model=MODEL, previous_response_id=response_1.id, input=[output_item(call)],
                                      tools=[TOOL])  # fmt: skip
    explicit = client.responses.create(model=MODEL, input=[{"role": "user", "content": TASK}, call.to_dict(),
                                                           output_item(call)], tools=[TOOL])  # fmt: skip
    assert chained.status == "completed" and TEXT in chained.output_text
    assert chained.output_text == explicit.output_text  # the same answer, whichever way the context came
    assert chained.previous_response_id == response_1.id and explicit.previous_response_id is None


def test_a_chain_of_three_keeps_every_earlier_turn(client):
    response_1, call = first_call(client)
    response_2 = client.responses.create(model=MODEL, previous_response_id=response_1.id, input=[output_item(call)],
                                         tools=[TOOL])  # fmt: skip
    third = client.responses.create(model=MODEL, previous_response_id=response_2.id,
                                    input="Show the first 2 lines of /workspace/todo.md", tools=[TOOL])  # fmt: skip
    [call_3] = third.output
    assert json.loads(call_3.arguments) == {"path": "/workspace/todo.md", "head": 2}
    # the earlier call is in the chain: answering it again is a duplicate the API refuses
    body = refused(client, previous_response_id=response_2.id, input=[call.to_dict(), output_item(call)])
    assert body["message"] == (f"Duplicate item found with id {call.id}. Remove duplicate items from your input "
                               "and try again.")  # fmt: skip


def test_an_unknown_id_gets_the_real_apis_400(client):
    body = refused(client, previous_response_id="resp_never_given", input="hi")
    assert body == {"message": "Previous response with id 'resp_never_given' not found.",
                    "type": "invalid_request_error", "param": "previous_response_id",
                    "code": "previous_response_not_found"}  # fmt: skip


def test_a_response_made_with_store_false_cannot_be_continued(client):
    response_1, call = first_call(client, store=False)
    assert response_1.store is False
    body = refused(client, previous_response_id=response_1.id, input=[output_item(call)])
    assert body["code"] == "previous_response_not_found" and response_1.id in body["message"]
    # the explicit context still works: nothing had to be stored
    explicit = client.responses.create(model=MODEL, input=[{"role": "user", "content": TASK}, call.to_dict(),
                                                           output_item(call)], tools=[TOOL], store=False)  # fmt: skip
    assert TEXT in explicit.output_text


def test_the_same_chain_gives_the_same_ids_in_every_run_and_fresh_ids_within_one():
    def run():
        state.forget_all()
        with Counter().answering():  # a new model instance
            first = respond({"model": MODEL, "input": TASK, "tools": [TOOL]})
            call = first["output"][0]
            second = respond({"model": MODEL, "previous_response_id": first["id"], "tools": [TOOL],
                              "input": [{"type": "function_call_output", "call_id": call["call_id"], "output": TEXT}]})
            third = respond({"model": MODEL, "input": TASK, "tools": [TOOL]})  # the task again: a new answer
        return first, second, third

    first, second, third = run()
    assert run() == (first, second, third)  # a new instance replays the same ids
    assert third["id"] != first["id"] and third["output"][0]["call_id"] != first["output"][0]["call_id"]
    assert renumbered(third) == renumbered(first)
    earlier = first["output"][0]["call_id"]
    with pytest.raises(Exception, match=f"No tool call found for function call output with call_id {earlier}"):
        respond({"model": MODEL, "previous_response_id": third["id"], "tools": [TOOL],  # the earlier call's id
                 "input": [{"type": "function_call_output", "call_id": earlier, "output": TEXT}]})  # answers nothing here


def test_the_store_is_bounded_and_forgets_the_oldest_first(monkeypatch):
    monkeypatch.setattr(state, "CAPACITY", 2)
    ids = [respond({"model": MODEL, "input": f"hello {n}"})["id"] for n in range(3)]
    with pytest.raises(Exception, match=f"Previous response with id '{ids[0]}' not found."):
        respond({"model": MODEL, "input": "again", "previous_response_id": ids[0]})
    assert respond({"model": MODEL, "input": "again", "previous_response_id": ids[2]})["status"] == "completed"


def test_the_store_is_bounded_in_bytes_too_and_always_keeps_the_newest(monkeypatch):
    """512 chains of 8 MB inputs would hold 4 GB: a byte budget forgets the oldest, never the one just made."""
    state.forget_all()
    monkeypatch.setattr(state, "CAPACITY_BYTES", 50_000)
    big = "x" * 30_000
    ids = [respond({"model": MODEL, "input": f"{big} {n}"})["id"] for n in range(3)]
    assert list(state._stored) == [ids[2]]  # each alone is over half the budget: only the newest stays
    with pytest.raises(Exception, match=f"Previous response with id '{ids[1]}' not found."):
        respond({"model": MODEL, "input": "again", "previous_response_id": ids[1]})
    assert respond({"model": MODEL, "input": "again", "previous_response_id": ids[2]})["status"] == "completed"
    assert sum(state._sizes.values()) <= 50_000 or len(state._stored) == 1


# ---- function_call_output.output as content parts -----------------------------------------------------


def test_an_output_given_as_input_text_parts_is_read_as_their_text(client):
    response_1, call = first_call(client)
    parts = [{"type": "input_text", "text": TEXT}]
    answer = client.responses.create(model=MODEL, previous_response_id=response_1.id, tools=[TOOL],
                                     input=[output_item(call, parts)])  # fmt: skip
    assert TEXT in answer.output_text


def test_an_output_part_of_a_type_the_output_cannot_hold_is_refused(client):
    response_1, call = first_call(client)
    body = refused(client, previous_response_id=response_1.id,
                   input=[output_item(call, [{"type": "output_text", "text": TEXT}])])
    assert body["message"].startswith("Invalid value: 'output_text'. Supported values are: 'input_text', "
                                      "'input_image', and 'input_file'.")  # fmt: skip


# ---- max_output_tokens ----------------------------------------------------------------------------------


def test_an_answer_longer_than_max_output_tokens_comes_back_incomplete_and_cut(client):
    response_1, call = first_call(client)
    full = client.responses.create(model=MODEL, previous_response_id=response_1.id, input=[output_item(call)],
                                   tools=[TOOL])  # fmt: skip
    cut = client.responses.create(model=MODEL, previous_response_id=response_1.id, input=[output_item(call)],
                                  tools=[TOOL], max_output_tokens=16)  # fmt: skip
    assert (full.status, full.incomplete_details, full.max_output_tokens) == ("completed", None, None)
    assert cut.status == "incomplete" and cut.incomplete_details.reason == "max_output_tokens"
    assert cut.max_output_tokens == 16 and cut.usage.output_tokens == 16 and cut.completed_at is None
    [message] = cut.output
    assert message.status == "incomplete"
    assert len(cut.output_text) == 16 * 4 and full.output_text.startswith(cut.output_text)


def test_a_call_cut_by_max_output_tokens_has_arguments_that_do_not_parse(client):
    long_task = "Show the first 20 lines of /workspace/" + "a" * 80 + ".txt"
    cut = client.responses.create(model=MODEL, input=long_task, tools=[TOOL], max_output_tokens=16)
    [call] = cut.output
    assert (cut.status, call.status) == ("incomplete", "incomplete")
    with pytest.raises(json.JSONDecodeError):
        json.loads(call.arguments)


def test_a_response_that_fits_is_unchanged_apart_from_the_echoed_limit(client):
    plain, _ = first_call(client)
    limited, _ = first_call(client, max_output_tokens=1000)
    assert limited.status == "completed" and limited.max_output_tokens == 1000
    assert limited.output[0].arguments == plain.output[0].arguments


@pytest.mark.parametrize("limit", [0, 15])
def test_a_limit_below_16_is_refused_in_the_real_apis_words(client, limit):
    body = refused(client, input=TASK, max_output_tokens=limit)
    assert body == {"message": f"Invalid 'max_output_tokens': integer below minimum value. Expected a value >= 16, "
                               f"but got {limit} instead.", "type": "invalid_request_error",
                    "param": "max_output_tokens", "code": "integer_below_min_value"}  # fmt: skip


def test_every_incomplete_body_validates_against_the_sdk_types():
    state.forget_all()
    body = respond({"model": MODEL, "input": TASK, "tools": [TOOL], "max_output_tokens": 16})
    Response.model_validate(body)  # strict enough: literal statuses and reasons are checked by the SDK's model
    call = body["output"][0]
    answer = respond({"model": MODEL, "previous_response_id": body["id"], "max_output_tokens": 16,
                      "input": [{"type": "function_call_output", "call_id": call["call_id"], "output": TEXT}]})
    assert Response.model_validate(answer).incomplete_details.reason == "max_output_tokens"


def test_a_bad_item_after_previous_response_id_is_named_by_its_own_index(client):
    response_1, call = first_call(client)
    body = refused(client, previous_response_id=response_1.id, input=[{**output_item(call), "status_": "done"}])
    assert body["param"] == "input[0].status_" and body["code"] == "unknown_parameter"


# ---- the SDK's own types, which the notebooks teach from --------------------------------------------------


def test_the_sdk_types_allow_what_notebook_04_teaches():
    from typing import Literal, get_args, get_origin, get_type_hints

    from openai.types.responses.response import IncompleteDetails
    from openai.types.responses.response_input_item_param import FunctionCallOutput

    text, parts = get_args(get_type_hints(FunctionCallOutput)["output"])
    assert text is str and get_origin(parts) is list
    part_types = {get_args(get_type_hints(part)["type"])[0] for part in get_args(get_args(parts)[0])}
    assert part_types == {"input_text", "input_image", "input_file"}
    status = get_args(Response.model_fields["status"].annotation)[0]  # Optional[ResponseStatus]
    assert get_origin(status) is Literal and {"completed", "incomplete"} <= set(get_args(status))
    reason = get_args(IncompleteDetails.model_fields["reason"].annotation)[0]
    assert get_origin(reason) is Literal and "max_output_tokens" in get_args(reason)
