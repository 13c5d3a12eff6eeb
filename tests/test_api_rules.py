"""The refusal table (`course_lib.api_rules`): every rule broken once through the real SDKs, against the
offline model and the stand-in, refused with the API's status and error body; what keeps a rule is
accepted; and the check functions say a problem exactly when the model refuses."""

from __future__ import annotations

import json
from typing import Any, Callable

import anthropic
import httpx
import openai
import pytest

from course_lib.api_rules import (
    RULES,
    function_schema_problems,
    is_reasoning_model,
    messages_order_problems,
    responses_input_problems,
    strict_schema_portability,
    strict_schema_problems,
)
from course_lib.backend import make_anthropic_client
from course_lib.offline_model import offline_transport, standin_transport

TASK = "Show the first 3 lines of /workspace/notes.txt"
READ = {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}}, "required": ["path"]}
STRICT_READ = {"type": "object", "additionalProperties": False, "required": ["path", "head"],
               "properties": {"path": {"type": "string"}, "head": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}}  # fmt: skip
CLAUDE_TOOL = {"name": "read_text_file", "description": "Read a text file.", "input_schema": READ}


def with_property(schema: dict, name: str, sub: dict) -> dict:
    return {**schema, "required": [*schema["required"], name], "properties": {**schema["properties"], name: sub}}


class Models:
    """The openai and anthropic clients of one model instance: the offline model or the stand-in."""

    def __init__(self, transport: Callable[[], httpx.BaseTransport]) -> None:
        self.openai = openai.OpenAI(api_key="k", base_url="http://offline-model.invalid/v1", max_retries=0,
                                    http_client=httpx.Client(transport=transport()), _strict_response_validation=True)
        self.claude = make_anthropic_client(transport())

    def respond(self, model: str = "gpt-4.1", **body: Any):
        return self.openai.responses.create(model=model, **{"input": TASK, **body})

    def function(self, parameters: dict, strict: bool):
        tool = {"type": "function", "name": "read_text_file", "description": "Read.", "parameters": parameters,
                "strict": strict}  # fmt: skip
        return self.respond(tools=[tool])

    def message(self, messages: list, tools: list | None = None):
        return self.claude.messages.create(model="claude-sonnet-4-6", max_tokens=400, messages=messages,
                                           tools=[CLAUDE_TOOL] if tools is None else tools)  # fmt: skip


@pytest.fixture(params=["offline", "standin"])
def models(request, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    models = Models(offline_transport if request.param == "offline" else standin_transport)
    yield models
    models.openai.close()
    models.claude.close()


def openai_refusal(call: Callable[[], Any]) -> dict:
    with pytest.raises(openai.BadRequestError) as caught:
        call()
    assert caught.value.status_code == 400
    return caught.value.body  # the SDK's `body`: the `error` object


def anthropic_refusal(call: Callable[[], Any]) -> dict:
    with pytest.raises(anthropic.BadRequestError) as caught:
        call()
    assert caught.value.status_code == 400
    body = caught.value.body
    assert body["type"] == "error" and body["error"]["type"] == "invalid_request_error"
    assert body["request_id"].startswith("req_")
    return body["error"]


def assert_rule(rule: str, error: dict, message: str, param: str | None = None) -> None:
    """The refusal matches its rule: message, type, and (OpenAI) param and code."""
    assert error == RULES[rule].error_body(message, param)["error"]


# ---- Anthropic Messages -----------------------------------------------------------------------------------


def first_use(models: Models):
    message = models.message([{"role": "user", "content": TASK}])
    use = next(block for block in message.content if block.type == "tool_use")
    return message, use


def test_tool_result_blocks_come_first(models):
    message, use = first_use(models)
    result = {"type": "tool_result", "tool_use_id": use.id, "content": "a\nb\nc\n"}
    late = [{"role": "user", "content": TASK}, {"role": "assistant", "content": message.content},
            {"role": "user", "content": [{"type": "text", "text": "Here you go:"}, result]}]  # fmt: skip
    problems = messages_order_problems(late)
    assert problems == [
        "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. Messages following "
        "`tool_use` blocks must begin with a matching number of `tool_result` blocks."]
    assert_rule("messages.tool_results_first", anthropic_refusal(lambda: models.message(late)), problems[0])
    first = [*late[:2], {"role": "user", "content": [result, {"type": "text", "text": "Thanks."}]}]  # text after: fine
    assert messages_order_problems(first) == []
    assert models.message(first).stop_reason == "end_turn"


def test_every_tool_use_is_answered_in_the_next_message(models):
    message, use = first_use(models)
    silent = [{"role": "user", "content": TASK}, {"role": "assistant", "content": message.content},
              {"role": "user", "content": "Never mind."}]  # fmt: skip
    [problem] = messages_order_problems(silent)
    assert problem.startswith(f"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: {use.id}.")
    assert_rule("messages.tool_use_answered", anthropic_refusal(lambda: models.message(silent)), problem)


def test_a_tool_result_answers_a_tool_use_of_the_message_before(models):
    stray = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_nowhere", "content": "x"}]}]
    [problem] = messages_order_problems(stray)
    assert problem.startswith("messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_nowhere.")
    assert_rule("messages.tool_result_has_use", anthropic_refusal(lambda: models.message(stray)), problem)


def test_a_tool_input_schema_has_an_object_root(models):
    array = {**CLAUDE_TOOL, "input_schema": {"type": "array", "items": {"type": "string"}}}
    error = anthropic_refusal(lambda: models.message([{"role": "user", "content": TASK}], [array]))
    assert_rule("messages.input_schema_object", error, "tools.0.custom.input_schema.type: Input should be 'object'")


def test_typed_blocks_are_judged_like_dicts(models):
    message, use = first_use(models)
    ok = [{"role": "user", "content": TASK}, {"role": "assistant", "content": message.content},
          {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "a"}]}]  # fmt: skip
    assert messages_order_problems(ok) == []  # message.content holds the SDK's typed blocks


# ---- function tools -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("strict", [False, True])
def test_parameters_have_an_object_root(models, strict):
    [problem] = function_schema_problems({"type": "string"})
    assert problem == "schema must be a JSON Schema of 'type: \"object\"', got 'type: \"string\"'."
    error = openai_refusal(lambda: models.function({"type": "string"}, strict))
    assert_rule("function.object_root", error, f"Invalid schema for function 'read_text_file': {problem}", "tools[0].parameters")
    [untyped] = function_schema_problems({"properties": {"path": {"type": "string"}}})
    assert untyped.endswith("got 'type: null'.")


def test_parameters_have_no_composition_at_the_root(models):
    schema = {**READ, "anyOf": [{"required": ["path"]}, {"required": ["head"]}]}
    [problem] = function_schema_problems(schema)
    error = openai_refusal(lambda: models.function(schema, False))
    assert_rule("function.no_root_composition", error, f"Invalid schema for function 'read_text_file': {problem}",
                "tools[0].parameters")  # fmt: skip


def test_an_object_root_has_properties(models):
    error = openai_refusal(lambda: models.function({"type": "object"}, False))
    assert_rule("function.object_properties", error, "Invalid schema for function 'read_text_file': In context=(), "
                "object schema missing properties.", "tools[0].parameters")  # fmt: skip


def test_strict_mode_wants_every_property_required(models):
    schema = {**STRICT_READ, "required": ["path"]}
    [problem] = strict_schema_problems(schema)
    assert problem.endswith("Missing 'head'.")
    error = openai_refusal(lambda: models.function(schema, True))
    assert_rule("strict.required_every_property", error, f"Invalid schema for function 'read_text_file': {problem}",
                "tools[0].parameters")  # fmt: skip


def test_strict_mode_wants_additional_properties_false(models):
    schema = {key: value for key, value in STRICT_READ.items() if key != "additionalProperties"}
    [problem] = strict_schema_problems(schema)
    error = openai_refusal(lambda: models.function(schema, True))
    assert_rule("strict.no_additional_properties", error, f"Invalid schema for function 'read_text_file': {problem}",
                "tools[0].parameters")  # fmt: skip


@pytest.mark.parametrize("keyword", ["oneOf", "allOf", "not", "if", "dependentRequired"])
def test_strict_mode_refuses_keywords_outside_its_subset_nested_or_not(models, keyword):
    value = {"dependentRequired": {"a": ["b"]}}.get(keyword, [{"type": "integer"}, {"type": "null"}])
    if keyword in ("not", "if"):
        value = {"type": "string"}
    schema = with_property(STRICT_READ, "mode", {keyword: value, "type": "integer"} if keyword != "oneOf" else {keyword: value})
    [problem] = strict_schema_problems(schema)
    assert problem == f"In context=('properties', 'mode'), '{keyword}' is not permitted."
    error = openai_refusal(lambda: models.function(schema, True))
    assert_rule("strict.keyword_subset", error, f"Invalid schema for function 'read_text_file': {problem}",
                "tools[0].parameters")  # fmt: skip
    assert models.function(schema, False).output  # outside strict mode the same schema is fine


def test_strict_mode_accepts_a_nested_any_of(models):
    assert strict_schema_problems(STRICT_READ) == []  # head: anyOf [integer, null]
    call = next(item for item in models.function(STRICT_READ, True).output if item.type == "function_call")
    assert json.loads(call.arguments) == {"path": "/workspace/notes.txt", "head": 3}


def test_default_is_accepted_here_as_on_api_openai_com_and_named_as_not_portable(models):
    schema = with_property(STRICT_READ, "encoding", {"type": "string", "default": "utf-8"})
    assert strict_schema_problems(schema) == []
    assert strict_schema_portability(schema) == [
        "In context=('properties', 'encoding'), 'default' is accepted by api.openai.com but refused by Azure OpenAI "
        "(\"'default' is not permitted.\"); leave it out to be safe everywhere."]
    assert models.function(schema, True).output
    assert "Azure" in RULES["strict.default_keyword"].providers


# ---- Responses input ----------------------------------------------------------------------------------------

TOOL = {"type": "function", "name": "fs__read_text_file", "description": "Read a text file.", "parameters": READ,
        "strict": False}  # fmt: skip


def read(models: Models, model: str):
    first = models.respond(model, tools=[TOOL])
    outputs = [{"type": "function_call_output", "call_id": item.call_id, "output": "a\nb\nc\n"}
               for item in first.output if item.type == "function_call"]  # fmt: skip
    return first, outputs


def test_a_reasoning_models_call_needs_its_reasoning_item(models):
    first, outputs = read(models, "gpt-5")
    by_hand = [{"role": "user", "content": TASK},
               *(item.to_dict() for item in first.output if item.type == "function_call"), *outputs]  # fmt: skip
    [problem] = responses_input_problems(by_hand, "gpt-5")
    call, reasoning = next(i for i in first.output if i.type == "function_call"), first.output[0]
    error = openai_refusal(lambda: models.respond("gpt-5", input=by_hand, tools=[TOOL]))
    assert_rule("responses.reasoning_before_call", error, f"Item '{call.id}' of type 'function_call' was provided "
                f"without its required 'reasoning' item: '{reasoning.id}'.")  # fmt: skip
    assert problem == f"Item '{call.id}' of type 'function_call' was provided without its required 'reasoning' item."
    in_order = [{"role": "user", "content": TASK}, *(item.to_dict() for item in first.output), *outputs]
    assert responses_input_problems(in_order, "gpt-5") == [] and models.respond("gpt-5", input=in_order, tools=[TOOL])
    assert responses_input_problems(by_hand, "gpt-4.1") == []  # not a reasoning model: nothing to send back


def test_a_reasoning_item_needs_the_item_that_followed_it(models):
    first, outputs = read(models, "gpt-5")
    alone = [{"role": "user", "content": TASK}, first.output[0].to_dict()]
    [problem] = responses_input_problems(alone, "gpt-5")
    error = openai_refusal(lambda: models.respond("gpt-5", input=alone, tools=[TOOL]))
    assert_rule("responses.reasoning_followed", error, problem)


def test_every_call_has_its_output(models):
    first, _ = read(models, "gpt-4.1")
    call = next(item for item in first.output if item.type == "function_call")
    unanswered = [{"role": "user", "content": TASK}, *(item.to_dict() for item in first.output)]
    error = openai_refusal(lambda: models.respond(input=unanswered, tools=[TOOL]))
    assert_rule("responses.call_has_output", error, f"No tool output found for function call {call.call_id}.")


def test_an_input_item_holds_only_known_fields(models):
    with models.openai.responses.stream(model="gpt-4.1", input=TASK, tools=[TOOL]) as events:
        first = events.get_final_response()  # a ParsedResponse: its call carries `parsed_arguments`
    call = next(item for item in first.output if item.type == "function_call")
    raw = [{"role": "user", "content": TASK}, call.to_dict(),
           {"type": "function_call_output", "call_id": call.call_id, "output": "a"}]  # fmt: skip
    index = 1
    error = openai_refusal(lambda: models.respond(input=raw, tools=[TOOL]))
    assert_rule("responses.known_item_fields", error, f"Unknown parameter: 'input[{index}].parsed_arguments'.",
                f"input[{index}].parsed_arguments")  # fmt: skip
    assert models.respond(input=[raw[0], sendable(call), raw[2]], tools=[TOOL]).output_text


def test_a_chat_tool_call_is_followed_by_its_tool_message(models):
    tools = [{"type": "function", "function": {"name": "read_text_file", "parameters": READ}}]
    first = models.openai.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": TASK}], tools=tools)
    call = first.choices[0].message.tool_calls[0]
    messages = [{"role": "user", "content": TASK}, first.choices[0].message.to_dict(), {"role": "user", "content": "and?"}]
    error = openai_refusal(lambda: models.openai.chat.completions.create(model="gpt-4.1", messages=messages, tools=tools))
    assert_rule("chat.tool_message_follows_calls", error, "An assistant message with 'tool_calls' must be followed by "
                "tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response "
                f"messages: {call.id}", "messages.[1].role")  # fmt: skip


# ---- the table itself ----------------------------------------------------------------------------------------


def test_every_rule_has_its_test_here():
    tested = {"messages.tool_results_first", "messages.tool_use_answered", "messages.tool_result_has_use",
              "messages.input_schema_object", "function.object_root", "function.no_root_composition",
              "function.object_properties", "strict.required_every_property", "strict.no_additional_properties",
              "strict.keyword_subset", "strict.default_keyword", "responses.reasoning_before_call",
              "responses.reasoning_followed", "responses.call_has_output", "responses.known_item_fields",
              "chat.tool_message_follows_calls"}  # fmt: skip
    assert set(RULES) == tested, "a rule without a test through the SDK, or a test of a rule that is gone"


def test_every_rule_names_its_api_status_and_source():
    for rule in RULES.values():
        assert rule.api in ("responses", "chat", "messages", "responses+chat"), rule.name
        assert rule.status == 400 and rule.message and len(rule.source) > 20, rule.name
        assert rule.shape == ("anthropic" if rule.api == "messages" else "openai")


def test_the_reasoning_model_rule_lives_here():
    assert is_reasoning_model("gpt-5") and is_reasoning_model("gpt-6-luna") and is_reasoning_model("o4-mini")
    assert not is_reasoning_model("gpt-5-chat-latest") and not is_reasoning_model("gpt-4.1")
    from course_lib.offline_model.reasoning import is_reasoning_model as offline

    assert offline is is_reasoning_model


def test_the_bottom_floor_imports_nothing_of_the_course():
    import ast
    from pathlib import Path

    import course_lib.api_rules as module

    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert imported <= {"__future__", "dataclasses", "typing"}, imported


# ---- a model accepts its own output sent back in order, in every mode ------------------------------------------


def sendable(item) -> dict:
    """An output item as input: `to_dict()`, without the SDK's own parsed fields that a stream's
    `ParsedResponse` adds (`parsed_arguments`, a part's `parsed`), which the API does not know
    ("Unknown parameter: 'input[1].parsed_arguments'.")."""
    data = {key: value for key, value in item.to_dict().items() if key != "parsed_arguments"}
    if isinstance(data.get("content"), list):
        data["content"] = [{k: v for k, v in part.items() if k != "parsed"} for part in data["content"]]
    return data


@pytest.mark.parametrize("model", ["gpt-4.1", "gpt-6-luna"])
@pytest.mark.parametrize("options", [{}, {"store": False, "include": ["reasoning.encrypted_content"]}], ids=["stored", "stateless"])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_its_own_output_sent_back_in_order_is_accepted(models, model, options, stream):
    if stream:
        with models.openai.responses.stream(model=model, input=TASK, tools=[TOOL], **options) as events:
            first = events.get_final_response()
    else:
        first = models.respond(model, tools=[TOOL], **options)
    context = [{"role": "user", "content": TASK}, *(sendable(item) for item in first.output)]
    context += [{"type": "function_call_output", "call_id": item.call_id, "output": "a\nb\nc\n"}
                for item in first.output if item.type == "function_call"]  # fmt: skip
    assert responses_input_problems(context, model) == []
    answer = models.respond(model, input=context, tools=[TOOL], **options)
    assert "a\nb\nc" in answer.output_text
    again = [*context, *(item.to_dict() for item in answer.output), {"role": "user", "content": "Thanks!"}]
    assert models.respond(model, input=again, tools=[TOOL], **options).output_text  # a later turn, the whole history


def test_its_own_output_is_accepted_over_chat_and_messages(models):
    tools = [{"type": "function", "function": {"name": "read_text_file", "parameters": READ}}]
    first = models.openai.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": TASK}], tools=tools)
    messages = [{"role": "user", "content": TASK}, first.choices[0].message.to_dict()]
    messages += [{"role": "tool", "tool_call_id": call.id, "content": "a\nb\nc\n"} for call in first.choices[0].message.tool_calls]
    assert "a\nb\nc" in models.openai.chat.completions.create(model="gpt-4.1", messages=messages, tools=tools).choices[0].message.content
    message, use = first_use(models)
    turn = [{"role": "user", "content": TASK}, {"role": "assistant", "content": message.content},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "a\nb\nc\n"}]}]  # fmt: skip
    assert messages_order_problems(turn) == [] and "a\nb\nc" in models.message(turn).content[-1].text
