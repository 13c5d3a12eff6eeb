"""Reasoning models in the offline model (`offline_model.reasoning`): the reasoning item in the SDK's
own shape (strict response validation), the real API's refusals when it is not passed back, and the
course's loops under a reasoning-model name."""

from __future__ import annotations

import json

import openai
import pytest
from openai.types.responses import ResponseFunctionToolCall, ResponseReasoningItem

from course_lib.arguments import ReadTextFileArgs
from course_lib.backend import make_client
from course_lib.course import start_course
from course_lib.execution import Executor, Session
from course_lib.guarded_loop import run_guarded_loop
from course_lib.host import files_host
from course_lib.offline_model import BadRequest, respond
from course_lib.offline_model.reasoning import ItemNotFound, is_reasoning_model

MODEL = "gpt-5"
TASK = "Show the first 20 lines of /workspace/notes.txt"
TWO = "Show /workspace/notes.txt and /workspace/todo.md"
TOOL = {"type": "function", "name": "fs__read_text_file", "description": "Read a text file as text.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}},
                       "required": ["path"]}}  # fmt: skip


def first(client, task=TASK, **options):
    response = client.responses.create(model=MODEL, input=task, tools=[TOOL], **options)
    return response, [{"role": "user", "content": task}, *(item.to_dict() for item in response.output)]


def answered(response, context):
    outputs = [{"type": "function_call_output", "call_id": item.call_id, "output": "line one\nline two\n"}
               for item in response.output if item.type == "function_call"]  # fmt: skip
    return [*context, *outputs]


def refused(client, context, **options) -> dict:
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input=context, tools=[TOOL], **options)
    assert caught.value.status_code == 400
    return caught.value.body


@pytest.mark.parametrize(("name", "reasoning"), [
    ("gpt-5", True), ("gpt-5-mini", True), ("gpt-5.2-codex", True), ("o1", True), ("o3-mini", True),
    ("o4-mini", True), ("gpt-5-chat-latest", False), ("gpt-4.1", False), ("gpt-4o", False), ("omni", False),
])  # fmt: skip
def test_the_reasoning_model_rule(name, reasoning):
    assert is_reasoning_model(name) is reasoning


def test_a_reasoning_model_puts_a_reasoning_item_before_its_call(client):
    raw = client.responses.with_raw_response.create(model=MODEL, input=TASK, tools=[TOOL])
    wire = json.loads(raw.text)["output"]
    response = raw.parse()  # strict validation against the SDK's types
    reasoning, call = response.output
    assert isinstance(reasoning, ResponseReasoningItem) and isinstance(call, ResponseFunctionToolCall)
    # on the wire: exactly the SDK's required fields, no `status` (the API refuses it in an input item)
    assert wire[0] == {"id": reasoning.id, "type": "reasoning", "summary": []}
    assert reasoning.id.startswith("rs_") and reasoning.to_dict() == wire[0]
    assert response.reasoning.effort == "medium"
    assert response.usage.output_tokens_details.reasoning_tokens > 0
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens


def test_the_default_model_has_no_reasoning_item(client):
    response = client.responses.create(model="gpt-4.1", input=TASK, tools=[TOOL])
    assert [item.type for item in response.output] == ["function_call"]
    assert response.reasoning.effort is None and response.usage.output_tokens_details.reasoning_tokens == 0


@pytest.mark.parametrize(("options", "encrypted"), [
    ({}, False), ({"include": ["reasoning.encrypted_content"]}, True), ({"store": False}, True),
])  # fmt: skip
def test_encrypted_content_when_asked_for_or_stateless(client, options, encrypted):
    response, _ = first(client, **options)
    content = response.output[0].encrypted_content
    assert (content is not None) is encrypted
    assert content is None or content.startswith("gAAAA")


def test_dropping_the_reasoning_item_is_the_real_apis_400_naming_both_ids(client):
    response, context = first(client)
    reasoning, call = response.output
    body = refused(client, answered(response, [item for item in context if item.get("type") != "reasoning"]))
    assert body == {
        "message": f"Item '{call.id}' of type 'function_call' was provided without its required 'reasoning' "
                   f"item: '{reasoning.id}'.", "type": "invalid_request_error", "param": "input", "code": None}  # fmt: skip


def test_with_the_reasoning_item_passed_back_the_model_answers(client):
    response, context = first(client)
    final = client.responses.create(model=MODEL, input=answered(response, context), tools=[TOOL])
    assert [item.type for item in final.output] == ["reasoning", "message"]
    assert "line one" in final.output_text


def test_a_call_sent_without_its_id_needs_no_reasoning_item(client):
    response, context = first(client)
    bare = [{k: v for k, v in item.items() if k != "id"} if item.get("type") == "function_call" else item
            for item in context if item.get("type") != "reasoning"]  # fmt: skip
    final = client.responses.create(model=MODEL, input=answered(response, bare), tools=[TOOL])
    assert final.output[-1].type == "message"


def test_interleaving_parallel_calls_and_outputs_loses_the_reasoning_item(client):
    response, context = first(client, TWO)
    reasoning, one, two = response.output
    assert (one.type, two.type) == ("function_call", "function_call")
    together = answered(response, context)  # reasoning, call, call, output, output: accepted
    assert client.responses.create(model=MODEL, input=together, tools=[TOOL]).output[-1].type == "message"
    interleaved = [together[0], together[1], together[2], together[4], together[3], together[5]]
    body = refused(client, interleaved)
    assert body["message"] == (f"Item '{two.id}' of type 'function_call' was provided without its "
                                        f"required 'reasoning' item: '{reasoning.id}'.")


def test_a_reasoning_item_without_the_item_that_followed_it(client):
    response, context = first(client)
    reasoning = response.output[0]
    body = refused(client, [context[0], context[1], {"role": "user", "content": "Go on."}])
    assert body["message"] == (f"Item '{reasoning.id}' of type 'reasoning' was provided without its "
                                        "required following item.")
    assert body["param"] == "input"


def test_a_reasoning_item_must_have_its_summary(client):
    response, context = first(client)
    context[1] = {k: v for k, v in context[1].items() if k != "summary"}
    body = refused(client, answered(response, context))
    assert body["message"] == "Missing required parameter: 'input[1].summary'."


def test_stateless_the_encrypted_content_carries_the_reasoning(client):
    response, context = first(client, store=False)
    final = client.responses.create(model=MODEL, input=answered(response, context), tools=[TOOL], store=False)
    assert final.output[-1].type == "message"


def test_stateless_a_reasoning_item_by_id_only_is_not_found(client):
    # The real API answers 404 (openai.NotFoundError); `ItemNotFound.status` says so, and the HTTP
    # layer sends that status.
    first_body = {"model": MODEL, "input": TASK, "tools": [TOOL], "store": False}
    output = respond(first_body)["output"]
    reasoning = {key: output[0][key] for key in ("id", "type", "summary")}  # encrypted_content dropped
    context = [{"role": "user", "content": TASK}, reasoning, output[1],
               {"type": "function_call_output", "call_id": output[1]["call_id"], "output": "x"}]
    with pytest.raises(ItemNotFound) as caught:
        respond({**first_body, "input": context})
    assert caught.value.status == 404 and caught.value.param == "input" and caught.value.code is None
    assert caught.value.message == (f"Item with id '{reasoning['id']}' not found. Items are not persisted when "
                                    "`store` is set to false. Try again with `store` set to true, or remove this "
                                    "item from your input.")
    with pytest.raises(openai.NotFoundError):
        client.responses.create(**{**first_body, "input": context})


def test_an_encrypted_content_the_model_did_not_write_is_refused(client):
    response, context = first(client, store=False)
    context[1] = {**context[1], "encrypted_content": "gAAAAAforged-content=="}
    body = refused(client, answered(response, context), store=False)
    assert body == {"message": "The encrypted content gAAA...nt== could not be verified.",
                             "type": "invalid_request_error", "param": None, "code": "invalid_encrypted_content"}


def test_previous_response_id_keeps_the_reasoning_item(client):
    response, _ = first(client)
    call = response.output[1]
    final = client.responses.create(model=MODEL, previous_response_id=response.id, tools=[TOOL], input=[
        {"type": "function_call_output", "call_id": call.call_id, "output": "line one\n"}])  # fmt: skip
    assert final.output[-1].type == "message" and "line one" in final.output_text


def test_previous_response_id_of_an_unstored_response_is_not_found(client):
    response, _ = first(client, store=False)
    body = refused(client, [{"type": "function_call_output", "call_id": response.output[1].call_id, "output": "x"}],
                   previous_response_id=response.id)  # fmt: skip
    assert body["code"] == "previous_response_not_found"


def test_run_loop_under_a_reasoning_model_passes_the_reasoning_item_back(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("COURSE_MODEL", MODEL)
    course = start_course(quiet=True)
    try:
        result = course.run(TASK)
    finally:
        course.close()
    assert (result.status, result.steps) == ("completed", 2)
    assert [item.get("type", "message") for item in result.context] == [
        "message", "reasoning", "function_call", "function_call_output", "reasoning", "message"]  # fmt: skip
    assert all(response.model == MODEL for response in result.responses)
    assert result.responses[-1].output[0].type == "reasoning"


def test_the_guarded_loop_under_a_reasoning_model_completes(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("COURSE_MODEL", MODEL)
    with files_host() as host:
        executor = Executor([host.executor_tool("fs__read_text_file", ReadTextFileArgs)])
        result = run_guarded_loop(make_client(), host, executor, Session("alice"), TASK)
    assert (result.status, result.steps) == ("completed", 2)
    assert [item.get("type") for item in result.context[1:3]] == ["reasoning", "function_call"]


def test_bad_request_is_the_base_of_item_not_found():
    assert issubclass(ItemNotFound, BadRequest)  # every caller that catches BadRequest still catches it
