"""Structured outputs from the offline model, in every envelope: Responses `text.format`, Chat
`response_format`, Anthropic `output_config.format` and its forced-tool pattern, and output tools
(pydantic-ai's `final_result`). The JSON fits the schema (checked with jsonschema); every value comes
from the conversation's real tool results and the task; what nothing supports gets an honest value;
a refused read never yields a success. Each answer crosses the SDK's own types and parse helpers."""

from __future__ import annotations

import json
from typing import Literal

import jsonschema
import openai
import pytest
from pydantic import BaseModel

from course_lib.offline_model import BadRequest, respond
from course_lib.offline_model.chat import chat_completion
from course_lib.offline_model.messages import AnthropicError, anthropic_message
from course_lib.offline_model.structured import Evidence, Result, fill, is_output_tool
from course_lib.offline_model.tool_output import read_output
from course_lib.paths import workspace_dir

MODEL = "gpt-4.1"
PATH = "/workspace/notes.txt"
FIVE = "".join((workspace_dir() / "notes.txt").read_text(encoding="utf-8").splitlines(keepends=True)[:5])
TASK = f"Show the first 5 lines of {PATH}"
REFUSED = "Access denied - path outside allowed directories: /etc/passwd not in /workspace"
READER = {"type": "function", "name": "read_text_file", "description": "Read a text file", "strict": False,
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}},
                         "required": ["path"]}}  # fmt: skip


class FileRead(BaseModel):
    """What was read from a file."""

    path: str
    line_count: int
    text: str | None
    ok: bool


class Reads(BaseModel):
    class One(BaseModel):
        path: str
        ok: bool
        first_line: str | None
        error: str | None

    reads: list[One]
    answer: str
    sources: list[str]


def schema_of(model: type[BaseModel]) -> dict:
    return openai.lib._pydantic.to_strict_json_schema(model)  # what the SDK's parse helpers send


def read_turn(output: str, arguments: dict | None = None, task: str = TASK) -> list[dict]:
    arguments = {"path": PATH, "head": 5} if arguments is None else arguments
    return [{"role": "user", "content": task},
            {"type": "function_call", "call_id": "call_1", "name": "read_text_file", "arguments": json.dumps(arguments)},
            {"type": "function_call_output", "call_id": "call_1", "output": output}]  # fmt: skip


def fmt(model: type[BaseModel], strict: bool = True) -> dict:
    return {"format": {"type": "json_schema", "name": model.__name__, "schema": schema_of(model), "strict": strict}}


def answer_json(response: dict) -> dict:
    [message] = [item for item in response["output"] if item["type"] == "message"]
    return json.loads(message["content"][0]["text"])


# ---- Responses text.format ----------------------------------------------------------------------


def test_a_json_schema_answer_holds_the_real_reads_values_and_echoes_its_format():
    response = respond({"model": MODEL, "input": read_turn(FIVE), "tools": [READER], "text": fmt(FileRead)})
    value = answer_json(response)
    jsonschema.validate(value, schema_of(FileRead))
    assert value == {"path": PATH, "line_count": 5, "text": FIVE, "ok": True}
    assert response["text"]["format"] == {"type": "json_schema", "description": None, "name": "FileRead",
                                          "schema": schema_of(FileRead), "strict": True}  # fmt: skip


def test_a_refused_read_never_yields_a_success():
    value = answer_json(respond({"model": MODEL, "input": read_turn(REFUSED, {"path": "/etc/passwd", "head": 5},
                                                                    "Show the first 5 lines of /etc/passwd"),
                                 "tools": [READER], "text": fmt(FileRead)}))  # fmt: skip
    assert value == {"path": "/etc/passwd", "line_count": 0, "text": None, "ok": False}  # null: the schema allows it


def test_what_nothing_supports_is_honest_never_an_empty_string():
    class Strict(BaseModel):
        path: str
        text: str
        author: str
        pages: int
        ok: bool

    value = answer_json(respond({"model": MODEL, "input": read_turn(REFUSED), "tools": [READER], "text": fmt(Strict)}))
    assert value == {"path": PATH, "text": "not in the tool results", "author": "not in the tool results",
                     "pages": 0, "ok": False}  # fmt: skip
    good = answer_json(respond({"model": MODEL, "input": read_turn(FIVE), "tools": [READER], "text": fmt(Strict)}))
    assert good["text"] == FIVE and good["author"] == "not in the tool results" and "" not in good.values()


def test_a_non_strict_schema_leaves_out_the_optional_properties_nothing_supports():
    schema = {"type": "object", "properties": {"path": {"type": "string"}, "author": {"type": "string"},
                                               "first_line": {"type": "string"}}, "required": ["path"]}  # fmt: skip
    text = {"format": {"type": "json_schema", "name": "loose", "schema": schema}}
    value = answer_json(respond({"model": MODEL, "input": read_turn(FIVE), "tools": [READER], "text": text}))
    assert value == {"path": PATH, "first_line": FIVE.splitlines()[0]}


def test_a_list_of_objects_gets_one_per_result_and_the_prose_answer():
    turn = [{"role": "user", "content": "Show the first line of /workspace/notes.txt and /etc/passwd"},
            {"type": "function_call", "call_id": "c1", "name": "read_text_file", "arguments": json.dumps({"path": PATH})},
            {"type": "function_call", "call_id": "c2", "name": "read_text_file",
             "arguments": json.dumps({"path": "/etc/passwd"})},
            {"type": "function_call_output", "call_id": "c1", "output": FIVE},
            {"type": "function_call_output", "call_id": "c2", "output": REFUSED}]  # fmt: skip
    value = answer_json(respond({"model": MODEL, "input": turn, "tools": [READER], "text": fmt(Reads)}))
    jsonschema.validate(value, schema_of(Reads))
    assert value["reads"] == [{"path": PATH, "ok": True, "first_line": FIVE.splitlines()[0], "error": None},
                              {"path": "/etc/passwd", "ok": False, "first_line": None, "error": REFUSED}]
    assert value["sources"] == [PATH] and "reported an error" in value["answer"] and FIVE in value["answer"]


def test_json_object_gets_the_evidence_itself():
    value = answer_json(respond({"model": MODEL, "input": read_turn(REFUSED), "tools": [READER],
                                 "text": {"format": {"type": "json_object"}}}))  # fmt: skip
    assert value["task"] == TASK and value["results"] == [
        {"tool": "read_text_file", "arguments": {"path": PATH, "head": 5}, "ok": False, "error": REFUSED, "code": None}]
    assert value["answer"].startswith("The tool read_text_file reported an error")


def test_before_the_read_the_model_calls_the_tool_and_answers_in_json_only_after(client):
    first = client.responses.parse(model=MODEL, input=TASK, tools=[READER], text_format=FileRead)
    assert [item.type for item in first.output] == ["function_call"] and first.output_parsed is None
    call = {k: v for k, v in first.output[0].to_dict().items() if k != "parsed_arguments"}  # the parse helper's own
    context = [{"role": "user", "content": TASK}, call,
               {"type": "function_call_output", "call_id": first.output[0].call_id, "output": FIVE}]
    final = client.responses.parse(model=MODEL, input=context, tools=[READER], text_format=FileRead)
    assert final.output_parsed == FileRead(path=PATH, line_count=5, text=FIVE, ok=True)
    assert final.text.format.type == "json_schema" and final.text.format.name == "FileRead"


def test_the_stream_helper_parses_the_streamed_json(client):
    with client.responses.stream(model=MODEL, input=read_turn(FIVE), tools=[READER], text_format=FileRead) as stream:
        deltas = [event.delta for event in stream if event.type == "response.output_text.delta"]
        final = stream.get_final_response()
    assert len(deltas) > 5 and final.output_parsed.text == FIVE


@pytest.mark.parametrize(("text", "message"), [
    ({"format": {"type": "yaml"}}, "Invalid value: 'yaml'."),
    ({"format": {"type": "json_schema", "schema": {"type": "object", "properties": {}}}},
     "Missing required parameter: 'text.format.name'."),
    ({"format": {"type": "json_schema", "name": "x", "strict": True,
                 "schema": {"type": "object", "properties": {"a": {"type": "string"}}}}},
     "Invalid schema for response_format 'x': "),
    ({"format": {"type": "json_schema", "name": "x", "schema": {"type": "strng"}}}, "Invalid schema for response_format 'x'"),
])  # fmt: skip
def test_a_malformed_format_is_a_400(text, message):
    with pytest.raises(BadRequest) as caught:
        respond({"model": MODEL, "input": TASK, "text": text})
    assert message in caught.value.message


# ---- Chat response_format -------------------------------------------------------------------------

CHAT_READER = {"type": "function", "function": {  # strict: the parse helper parses only strict tools' calls
    "name": "read_text_file", "description": "Read a text file", "strict": True,
    "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": ["integer", "null"]}},
                   "required": ["path", "head"], "additionalProperties": False}}}


def chat_turn(output: str) -> list[dict]:
    return [{"role": "user", "content": TASK},
            {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function", "function": {
                "name": "read_text_file", "arguments": json.dumps({"path": PATH, "head": 5})}}]},
            {"role": "tool", "tool_call_id": "call_1", "content": output}]  # fmt: skip


def test_chat_parse_gives_the_real_reads_values(client):
    completion = client.chat.completions.parse(model=MODEL, messages=chat_turn(FIVE), tools=[CHAT_READER],
                                               response_format=FileRead)  # fmt: skip
    assert completion.choices[0].message.parsed == FileRead(path=PATH, line_count=5, text=FIVE, ok=True)
    refused = client.chat.completions.parse(model=MODEL, messages=chat_turn(REFUSED), tools=[CHAT_READER],
                                            response_format=FileRead)  # fmt: skip
    assert refused.choices[0].message.parsed.ok is False and refused.choices[0].message.parsed.text is None


def test_chat_json_object_needs_the_word_json_as_the_real_api_says():
    body = {"model": MODEL, "messages": chat_turn(FIVE), "tools": [CHAT_READER], "response_format": {"type": "json_object"}}
    with pytest.raises(BadRequest, match="'messages' must contain the word 'json' in some form"):
        chat_completion(body)
    body["messages"][0]["content"] += " as JSON"
    value = json.loads(chat_completion(body)["choices"][0]["message"]["content"])
    assert value["results"][0]["text"] == FIVE


# ---- Anthropic ------------------------------------------------------------------------------------


def anthropic_turn(output: str) -> list[dict]:
    return [{"role": "user", "content": TASK},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_text_file",
                                               "input": {"path": PATH, "head": 5}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": output}]}]


ANTHROPIC_READER = {"name": "read_text_file", "description": "Read a text file", "input_schema": READER["parameters"]}


def test_anthropic_parse_with_output_format_gives_the_real_values(claude):
    message = claude.messages.parse(model="claude-sonnet-4-6", max_tokens=1024, messages=anthropic_turn(FIVE),
                                    tools=[ANTHROPIC_READER], output_format=FileRead)  # fmt: skip
    assert message.parsed_output == FileRead(path=PATH, line_count=5, text=FIVE, ok=True)


def test_anthropics_forced_tool_pattern_fills_the_tool_from_the_results(claude):
    record = {"name": "record_read", "description": "Record what the read returned.",
              "input_schema": schema_of(FileRead)}  # fmt: skip
    message = claude.messages.create(model="claude-sonnet-4-6", max_tokens=1024, messages=anthropic_turn(REFUSED),
                                     tools=[ANTHROPIC_READER, record], tool_choice={"type": "tool", "name": "record_read"})
    [use] = [block for block in message.content if block.type == "tool_use"]
    assert use.name == "record_read" and use.input == {"path": PATH, "line_count": 0, "text": None, "ok": False}


def test_a_malformed_anthropic_format_is_refused_in_anthropics_shape():
    with pytest.raises(AnthropicError, match="output_config.format"):
        anthropic_message({"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": [{"role": "user", "content": "x"}],
                           "output_config": {"format": {"type": "json_schema", "schema": {"type": "strng"}}}})


# ---- output tools -----------------------------------------------------------------------------------

FINAL = {"type": "function", "name": "final_result", "description": "What was read from a file.", "strict": True,
         "parameters": schema_of(FileRead)}  # pydantic-ai's, as it sends it


def test_an_output_tool_is_called_only_after_the_data_tools_the_task_needs():
    first = respond({"model": MODEL, "input": TASK, "tools": [READER, FINAL], "tool_choice": "required"})
    assert [(item["type"], item["name"]) for item in first["output"]] == [("function_call", "read_text_file")]
    final = respond({"model": MODEL, "input": read_turn(FIVE), "tools": [READER, FINAL], "tool_choice": "required"})
    [call] = final["output"]
    assert call["name"] == "final_result"
    assert json.loads(call["arguments"]) == {"path": PATH, "line_count": 5, "text": FIVE, "ok": True}


def test_an_output_tool_after_a_refused_read_reports_the_failure():
    final = respond({"model": MODEL, "input": read_turn(REFUSED), "tools": [READER, FINAL], "tool_choice": "required"})
    assert json.loads(final["output"][0]["arguments"])["ok"] is False


def test_a_refused_output_call_is_not_made_again_with_the_same_arguments():
    filled = json.loads(respond({"model": MODEL, "input": read_turn(FIVE), "tools": [READER, FINAL],
                                 "tool_choice": "required"})["output"][0]["arguments"])  # fmt: skip
    retry = json.dumps({"error": [{"type": "value_error", "loc": ["text"], "msg": "Value error, too long"}]})
    turn = read_turn(FIVE) + [
        {"type": "function_call", "call_id": "call_2", "name": "final_result", "arguments": json.dumps(filled)},
        {"type": "function_call_output", "call_id": "call_2", "output": retry}]  # pydantic-ai's retry
    again = respond({"model": MODEL, "input": turn, "tools": [READER, FINAL], "tool_choice": "required"})
    assert [item["type"] for item in again["output"]] == ["message"]  # not the same call a second time


def test_a_frameworks_retry_feedback_is_not_a_new_task():
    feedback = ("Your previous response failed the application's validation (this is automated feedback, not a "
                "message from the user):\n<pyai:validation_errors>\n[]\n</pyai:validation_errors>")
    turn = read_turn(FIVE) + [{"role": "assistant", "content": "Here are…"}, {"role": "user", "content": feedback}]
    value = answer_json(respond({"model": MODEL, "input": turn, "tools": [READER], "text": fmt(FileRead)}))
    assert value["text"] == FIVE  # the task is still the read; no path taken from the feedback


@pytest.mark.parametrize(("tool", "forced", "expected"), [
    (FINAL, None, True),
    ({**READER, "name": "answer", "description": "Give the final answer to the user."}, None, True),
    ({**READER, "name": "FileRead", "description": "What was read from a file.", "parameters": schema_of(FileRead)},
     "FileRead", True),  # LangChain's with_structured_output tool, forced by name
    ({**READER, "name": "FileRead", "parameters": schema_of(FileRead)}, None, False),  # not forced: may be data
    (READER, "read_text_file", False),  # a reader forced by name is still a reader
    ({**READER, "name": "save_result", "parameters": schema_of(FileRead)}, "save_result", False),  # it writes
])  # fmt: skip
def test_which_tools_are_output_tools(tool, forced, expected):
    assert is_output_tool(tool, forced) is expected


# ---- the filler on its own -------------------------------------------------------------------------


class Everything(BaseModel):
    class Status(BaseModel):
        state: Literal["succeeded", "failed"]
        code: str | None
        message: str | None

    file_path: str
    lines: list[str]
    numberOfLines: int
    last_line: str | None
    is_error: bool
    tool: str
    head: int | None
    status: Status
    citations: list[str]
    question: str
    summary: str


@pytest.mark.parametrize("output", [FIVE, REFUSED, json.dumps({"path": PATH, "text": FIVE, "lines": 5}),
                                    json.dumps({"error": {"code": "FORBIDDEN", "message": "path is outside /workspace"}})])
def test_every_filled_value_fits_the_schema_and_comes_from_the_evidence(output):
    reading = read_output(output)
    ev = Evidence(TASK, [Result("read_text_file", {"path": PATH, "head": 5}, reading)], "the answer in prose")
    value = fill(schema_of(Everything), ev, strict=True)
    jsonschema.validate(value, schema_of(Everything))
    assert value["file_path"] == PATH and value["tool"] == "read_text_file" and value["head"] == 5
    assert value["question"] == TASK and value["summary"] == "the answer in prose"
    if reading.ok:
        assert value["lines"] == FIVE.splitlines() and value["numberOfLines"] == 5 and value["is_error"] is False
        assert value["status"] == {"state": "succeeded", "code": None, "message": None}
        assert value["citations"] == [PATH] and value["last_line"] == FIVE.splitlines()[-1]
    else:
        assert value["lines"] == [] and value["numberOfLines"] == 0 and value["is_error"] is True
        assert value["status"]["state"] == "failed" and value["status"]["message"] == reading.text
        assert value["status"]["code"] == reading.code and value["citations"] == [] and value["last_line"] is None


def test_refs_and_bounds_are_kept():
    schema = {"type": "object", "$defs": {"Count": {"type": "integer", "minimum": 1, "maximum": 3}},
              "properties": {"line_count": {"$ref": "#/$defs/Count"}}, "required": ["line_count"],
              "additionalProperties": False}  # fmt: skip
    ev = Evidence(TASK, [Result("read_text_file", {"path": PATH}, read_output(FIVE))], "")
    assert fill(schema, ev, strict=True) == {"line_count": 3}  # 5 lines, clamped to the schema's maximum


def test_a_data_call_the_framework_refused_is_not_repeated_and_the_output_tool_says_it_failed():
    retried = json.dumps({"error": [{"type": "int_parsing", "loc": ["head"], "msg": "Input should be a valid integer"}]})
    final = respond({"model": MODEL, "input": read_turn(retried), "tools": [READER, FINAL], "tool_choice": "required"})
    [call] = final["output"]  # pydantic-ai's retry of read_text_file: no second identical read
    assert call["name"] == "final_result" and json.loads(call["arguments"])["ok"] is False
