"""The offline model refuses what the real Responses API refuses, with its 400 wording: keys it does
not know in `input` items (judged by the openai SDK's own request types), duplicate item ids, item
ids without their type's prefix, input parts in an assistant message, function parameters that are
no JSON Schema or an object without `properties`; it lists supported values in English; and it
answers a failed write as a change not made."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import openai
import pytest
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage

from course_lib.offline_model import BadRequest, respond

MODEL = "gpt-4.1"
READER = {"type": "function", "name": "fs__read_text_file", "description": "Read a text file as text.",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}  # fmt: skip


def refused(client: openai.OpenAI, **body: Any) -> dict:
    """The error object of the 400 the offline model gives `body`, through the real SDK."""
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(**body)
    assert caught.value.status_code == 400 and caught.value.type == "invalid_request_error"
    assert (caught.value.param, caught.value.code) == (caught.value.body["param"], caught.value.body["code"])
    return caught.value.body


def first_call(client: openai.OpenAI, text: str = "Show notes.txt") -> ResponseFunctionToolCall:
    [call] = client.responses.create(model=MODEL, input=text, tools=[READER]).output
    assert isinstance(call, ResponseFunctionToolCall)
    return call


def second_input(call_item: Any, call_id: str, output: str = "alpha") -> list:
    return [{"role": "user", "content": "Show notes.txt"}, call_item,
            {"type": "function_call_output", "call_id": call_id, "output": output}]


# ---- unknown keys in input items ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("item", "param"),
    [
        ({"role": "user", "content": "hi", "foo": 1}, "input[0].foo"),
        ({"role": "user", "content": "hi", "foo": None}, "input[0].foo"),  # null does not make it known
        ({"role": "user", "content": [{"type": "input_text", "text": "hi", "bold": True}]}, "input[0].content[0].bold"),
        ({"type": "reasoning", "id": "rs_1", "summary": [], "status": "completed"}, "input[0].status"),
    ],
)
def test_an_unknown_key_is_refused_with_the_real_wording(client, item, param):
    error = refused(client, model=MODEL, input=[item])
    assert error["message"] == f"Unknown parameter: '{param}'."
    assert (error["param"], error["code"]) == (param, "unknown_parameter")


def test_an_unknown_key_in_a_function_call_output_part_is_refused(client):
    call = first_call(client)
    feedback = {"type": "function_call_output", "call_id": call.call_id,
                "output": [{"type": "input_text", "text": "alpha", "source": "fs"}]}  # fmt: skip
    error = refused(client, model=MODEL, input=[{"role": "user", "content": "Show notes.txt"}, call, feedback],
                    tools=[READER])  # fmt: skip
    assert error["param"] == "input[2].output[0].source"


def test_a_plain_model_dump_of_the_call_is_refused_for_its_python_name(client):
    call = first_call(client)
    dumped = call.model_dump()
    assert dumped["async_"] is None  # the Python attribute name of the wire field `async`
    error = refused(client, model=MODEL, input=second_input(dumped, call.call_id), tools=[READER])
    assert error["message"] == "Unknown parameter: 'input[1].async_'."


@pytest.mark.parametrize(
    "form",
    [
        lambda item: item,  # the typed item: the SDK sends the fields that were set
        lambda item: item.to_dict(),
        lambda item: item.model_dump(exclude_none=True),
        lambda item: item.model_dump(exclude_unset=True),
    ],
)
def test_every_form_the_sdk_produces_is_accepted(client, form):
    call = first_call(client)
    answer = client.responses.create(model=MODEL, input=second_input(form(call), call.call_id), tools=[READER])
    message = answer.output[0]
    assert isinstance(message, ResponseOutputMessage) and message.id.startswith("msg_")
    third = client.responses.create(model=MODEL, tools=[READER], input=[
        *second_input(form(call), call.call_id), form(message), {"role": "user", "content": "Thanks!"}])  # fmt: skip
    assert third.output_text  # the assistant message came back with its id, status and annotations


def test_every_key_the_sdk_declares_for_an_item_is_accepted():
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "fs__read_text_file",
            "arguments": '{"path":"a.txt"}', "status": "completed", "namespace": "fs", "async": False,
            "caller": {"type": "direct"}}  # fmt: skip
    output = {"type": "function_call_output", "id": "fco_1", "call_id": "call_1", "output": "alpha",
              "status": "completed", "name": "fs__read_text_file", "namespace": "fs", "caller": None}  # fmt: skip
    message = {"type": "message", "role": "user", "content": "Show a.txt", "phase": None}
    response = respond({"model": MODEL, "input": [message, call, output], "tools": [READER]})
    assert response["output"][0]["content"][0]["text"].endswith("alpha")


def test_the_same_item_sent_twice_is_refused_like_the_real_api(client):
    call = first_call(client)
    error = refused(client, model=MODEL, input=[*second_input(call, call.call_id), call.to_dict()], tools=[READER])
    assert error["message"] == f"Duplicate item found with id {call.id}. Remove duplicate items from your input and try again."
    assert (error["param"], error["code"]) == ("input", None)


# ---- function parameters that are no JSON Schema ----------------------------------------------------


@pytest.mark.parametrize("strict", [False, True])
def test_parameters_that_are_no_json_schema_are_refused(client, strict):
    bad = {"type": "function", "name": "lookup", "strict": strict, "parameters": {
        "type": "object", "properties": {"id": {"type": "strng"}}, "required": ["id"], "additionalProperties": False}}  # fmt: skip
    error = refused(client, model=MODEL, input="hi", tools=[READER, bad])
    assert error["message"] == "Invalid schema for function 'lookup': 'strng' is not valid under any of the given schemas."
    assert (error["param"], error["code"]) == ("tools[1].parameters", "invalid_function_parameters")


def test_a_malformed_strict_schema_is_a_400_not_a_crash():
    tool = {"type": "function", "name": "lookup", "strict": True,
            "parameters": {"type": "object", "properties": {"id": "string"}, "required": ["id"]}}  # fmt: skip
    with pytest.raises(BadRequest) as info:
        respond({"model": MODEL, "input": "hi", "tools": [tool]})
    assert info.value.message == "Invalid schema for function 'lookup': 'string' is not of type 'object', 'boolean'."


def test_importing_the_offline_model_loads_neither_jsonschema_nor_the_openai_types():
    code = ("import sys, course_lib.offline_model; "
            "print(sorted(m for m in ('jsonschema', 'openai') if m in sys.modules))")  # fmt: skip
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"  # both are imported on the first request that needs them


# ---- the answer after a failed write --------------------------------------------------------------

APPLY = {"type": "function", "name": "notes__apply_note_update",
         "description": "Replace the text of one existing note. Changes data: it runs only after approval.",
         "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
                        "required": ["path", "content"]}}  # fmt: skip


def answer_to(tool: dict, arguments: dict, output: str) -> str:
    call = {"type": "function_call", "call_id": "call_w", "name": tool["name"], "arguments": json.dumps(arguments)}
    body = {"model": MODEL, "tools": [READER, tool], "input": [
        {"role": "user", "content": "Update my note."}, call,
        {"type": "function_call_output", "call_id": "call_w", "output": output}]}  # fmt: skip
    return respond(body)["output"][0]["content"][0]["text"]


def failure(code: str, message: str) -> str:
    return json.dumps({"ok": False, "error": {"code": code, "message": message}})


def test_a_failed_write_says_the_change_was_not_made():
    answer = answer_to(APPLY, {"path": "/workspace/todo.md", "content": "- [x] done"},
                       failure("CONFLICT", "the note changed since it was read"))  # fmt: skip
    assert answer == ("The tool notes__apply_note_update reported an error when asked to change /workspace/todo.md.\n"
                      "Error code: CONFLICT\nError message: the note changed since it was read\n"
                      "The change was not made: nothing was saved.")  # fmt: skip


def test_a_write_that_timed_out_is_never_reported_as_saved():
    answer = answer_to(APPLY, {"path": "/workspace/todo.md", "content": "x"}, failure("TIMEOUT", "no answer in 5 s"))
    assert answer.endswith("\nThe change was not confirmed, so it may or may not have been saved; "
                           "I won't report it as saved.")  # fmt: skip


@pytest.mark.parametrize(
    "tool",
    [
        {"type": "function", "name": "save_learning_gap", "parameters": {"type": "object", "properties": {}}},
        {"type": "function", "name": "record_gap", "description": "Record a learning gap. Changes data.",
         "parameters": {"type": "object", "properties": {}}},  # no write verb in the name: the description says it
    ],
)
def test_a_failed_write_without_a_path_is_worded_as_a_write(tool):
    answer = answer_to(tool, {"topic": "call_id"}, "Error: the store is read-only")
    assert answer == (f'The tool {tool["name"]} reported an error for {{"topic": "call_id"}}.\n'
                      "Error message: Error: the store is read-only\nThe change was not made: nothing was saved.\n"
                      "What to try next: fix what the message names, then ask again.")  # fmt: skip
    assert "could not read" not in answer and "no result" not in answer


def test_a_successful_write_quotes_the_result_without_calling_it_file_contents():
    answer = answer_to(APPLY, {"path": "/workspace/todo.md", "content": "x"}, json.dumps({"ok": True, "data": {"version": 4}}))
    assert answer == ('Here is what notes__apply_note_update returned for the change to /workspace/todo.md:\n\n'
                      '{\n  "version": 4\n}')  # fmt: skip


def test_a_failed_read_keeps_the_read_wording():
    answer = answer_to(READER, {"path": "/workspace/todo.md"}, failure("NOT_FOUND", "no such file"))
    assert answer.endswith("\nI could not read the file, so I won't say anything about what it contains.")


# ---- supported values, written as an English list ---------------------------------------------------


@pytest.mark.parametrize(
    ("choice", "param", "message"),
    [
        ("any", "tool_choice", "Invalid value: 'any'. Supported values are: 'auto', 'none', and 'required'."),
        ({"type": "allowed_tools", "mode": "none", "tools": []}, "tool_choice.mode",
         "Invalid value: 'none'. Supported values are: 'auto' and 'required'."),
    ],
)  # fmt: skip
def test_supported_values_are_listed_in_english(client, choice, param, message):
    error = refused(client, model=MODEL, input="hi", tools=[READER], tool_choice=choice)
    assert (error["message"], error["param"], error["code"]) == (message, param, "invalid_value")


# ---- content parts by role --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "part",
    [
        {"type": "input_text", "text": "Sure, which file?"},
        {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="},
        {"type": "input_file", "file_id": "file-1"},
    ],
)
def test_an_assistant_message_holds_only_what_a_model_writes(client, part):
    history = [{"role": "user", "content": "Show notes.txt"}, {"role": "assistant", "content": [part]},
               {"role": "user", "content": "notes.txt, please"}]  # fmt: skip
    error = refused(client, model=MODEL, input=history, tools=[READER])
    assert error["message"] == f"Invalid value: '{part['type']}'. Supported values are: 'output_text' and 'refusal'."
    assert (error["param"], error["code"]) == ("input[1].content[0]", "invalid_value")  # the part, not its type


def test_an_assistant_message_may_hold_output_text_and_refusal(client):
    history = [{"role": "user", "content": "Show notes.txt"},
               {"role": "assistant", "content": [{"type": "output_text", "text": "Which notes?"},
                                                 {"type": "refusal", "refusal": "I can't guess."}]},
               {"role": "user", "content": [{"type": "input_text", "text": "/workspace/notes.txt"}]}]  # fmt: skip
    [call] = client.responses.create(model=MODEL, input=history, tools=[READER]).output
    assert isinstance(call, ResponseFunctionToolCall)


def test_a_part_type_the_api_does_not_know_lists_every_known_type(client):
    chat_style = {"role": "user", "content": [{"type": "text", "text": "Show notes.txt"}]}
    error = refused(client, model=MODEL, input=[chat_style], tools=[READER])
    assert error["message"] == (
        "Invalid value: 'text'. Supported values are: 'input_text', 'input_image', 'input_audio', 'output_text', "
        "'refusal', 'input_file', 'computer_screenshot', 'summary_text', and 'encrypted_content'.")  # fmt: skip
    assert (error["param"], error["code"]) == ("input[0].content[0].type", "invalid_value")


def test_a_function_call_output_may_hold_an_image(client):
    call = first_call(client)
    image = {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo="}
    feedback = {"type": "function_call_output", "call_id": call.call_id,
                "output": [{"type": "input_text", "text": "alpha"}, image]}  # fmt: skip
    answer = client.responses.create(model=MODEL, input=[{"role": "user", "content": "Show notes.txt"}, call, feedback],
                                     tools=[READER])  # fmt: skip
    assert "alpha" in answer.output_text


# ---- item ids carry their type's prefix -------------------------------------------------------------


def test_a_call_id_put_in_the_item_id_is_refused(client):
    call = first_call(client)
    replayed = call.to_dict() | {"id": call.call_id}  # the mistake: the model-side call_id where the item id goes
    error = refused(client, model=MODEL, input=second_input(replayed, call.call_id), tools=[READER])
    assert error["message"] == f"Invalid 'input[1].id': '{call.call_id}'. Expected an ID that begins with 'fc'."
    assert (error["param"], error["code"]) == ("input[1].id", "invalid_id_prefix")


def test_a_function_call_without_an_id_is_accepted(client):
    call = first_call(client)
    bare = {key: value for key, value in call.to_dict().items() if key != "id"}
    answer = client.responses.create(model=MODEL, input=second_input(bare, call.call_id), tools=[READER])
    assert answer.output_text.endswith("alpha")


@pytest.mark.parametrize(
    ("item", "prefix"),
    [
        ({"type": "message", "id": "019f629b-43ee", "role": "assistant", "status": "completed",
          "content": [{"type": "output_text", "text": "Hello.", "annotations": []}]}, "msg"),
        ({"type": "reasoning", "id": "item_df7e40c3", "summary": []}, "rs"),
    ],
)  # fmt: skip
def test_message_and_reasoning_ids_carry_their_prefix(client, item, prefix):
    error = refused(client, model=MODEL, input=[{"role": "user", "content": "hi"}, item])
    assert error["message"] == f"Invalid 'input[1].id': '{item['id']}'. Expected an ID that begins with '{prefix}'."
    assert (error["param"], error["code"]) == ("input[1].id", "invalid_id_prefix")


# ---- object schemas without properties --------------------------------------------------------------

NO_ARGS = {"type": "function", "name": "list_allowed_directories", "description": "List the folders it may read."}


@pytest.mark.parametrize("strict", [False, None])
def test_an_object_root_without_properties_is_refused_strict_or_not(client, strict):
    tool = NO_ARGS | {"parameters": {"type": "object"}} | ({} if strict is None else {"strict": strict})
    error = refused(client, model=MODEL, input="hi", tools=[READER, tool])
    assert error["message"] == ("Invalid schema for function 'list_allowed_directories': In context=(), "
                                "object schema missing properties.")  # fmt: skip
    assert (error["param"], error["code"]) == ("tools[1].parameters", "invalid_function_parameters")


@pytest.mark.parametrize("strict", [False, True])
def test_empty_properties_are_enough(client, strict):
    # The reference filesystem server's own declaration of this tool (tools/list, with $schema).
    parameters = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object", "properties": {}}
    if strict:
        parameters = {"type": "object", "properties": {}, "required": [], "additionalProperties": False}
    tool = NO_ARGS | {"parameters": parameters, "strict": strict}
    assert client.responses.create(model=MODEL, input="hi", tools=[READER, tool]).output


def test_a_strict_object_needs_properties_after_additional_properties(client):
    tool = NO_ARGS | {"strict": True, "parameters": {"type": "object", "additionalProperties": False}}
    error = refused(client, model=MODEL, input="hi", tools=[tool])
    assert error["message"] == ("Invalid schema for function 'list_allowed_directories': In context=(), "
                                "object schema missing properties.")  # fmt: skip


NESTED = {"type": "object", "required": ["path", "meta"], "additionalProperties": False, "properties": {
    "path": {"type": "string"}, "meta": {"type": "object", "additionalProperties": False}}}  # fmt: skip


def test_a_nested_object_without_properties_is_refused_only_in_strict_mode(client):
    tool = {"type": "function", "name": "tag_file", "parameters": NESTED}
    assert client.responses.create(model=MODEL, input="hi", tools=[tool | {"strict": False}]).output
    error = refused(client, model=MODEL, input="hi", tools=[tool | {"strict": True}])
    assert error["message"] == ("Invalid schema for function 'tag_file': In context=('properties', 'meta'), "
                                "object schema missing properties.")  # fmt: skip
    assert (error["param"], error["code"]) == ("tools[0].parameters", "invalid_function_parameters")
