"""The offline model in the other envelopes, read back through the real SDKs' own types with strict
validation: Chat Completions (plain and streamed, the real API's pairing 400s), Anthropic Messages
(plain and streamed, its error shape), GET /v1/models, and a 404 that lists the endpoints."""

from __future__ import annotations

import json

import anthropic
import httpx
import openai
import pytest
from anthropic.types import Message, ToolUseBlock
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from course_lib.backend import OFFLINE_BASE_URL
from course_lib.offline_model import offline_transport
from course_lib.offline_model.ids import renumbered

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}},
          "required": ["path"]}  # fmt: skip
CHAT_TOOLS = [{"type": "function", "function": {"name": "fs__read_text_file", "description": "Read a text file",
                                                "parameters": SCHEMA}}]  # fmt: skip
MSG_TOOLS = [{"name": "fs__read_text_file", "description": "Read a text file", "input_schema": SCHEMA}]
TWO = "Show the first 3 lines of /workspace/notes.txt and /workspace/todo.txt"




def chat(client, messages, **options):
    return client.chat.completions.create(model="gpt-4.1", messages=messages, tools=CHAT_TOOLS, **options)


def test_chat_parallel_calls_then_a_grounded_answer(client):
    first = chat(client, [{"role": "user", "content": TWO}])
    assert isinstance(first, ChatCompletion) and first.choices[0].finish_reason == "tool_calls"
    calls = first.choices[0].message.tool_calls
    assert [json.loads(c.function.arguments) for c in calls] == [{"path": "/workspace/notes.txt", "head": 3},
                                                                 {"path": "/workspace/todo.txt"}]
    assert first.choices[0].message.content is None and len({c.id for c in calls}) == 2
    again = chat(client, [{"role": "user", "content": TWO}])  # the same answer, under fresh ids
    assert again.id != first.id and {c.id for c in again.choices[0].message.tool_calls}.isdisjoint(c.id for c in calls)
    assert renumbered(again.to_dict()) == renumbered(first.to_dict())
    replies = [{"role": "tool", "tool_call_id": c.id, "content": f"text of {i}"} for i, c in enumerate(calls)]
    history = [{"role": "user", "content": TWO}, first.choices[0].message.model_dump(exclude_none=True), *replies]
    final = chat(client, history)
    assert final.choices[0].finish_reason == "stop" and not final.choices[0].message.tool_calls
    assert "text of 0" in final.choices[0].message.content and "text of 1" in final.choices[0].message.content


def test_chat_serial_calls_and_tool_choice(client):
    one = chat(client, [{"role": "user", "content": TWO}], parallel_tool_calls=False)
    assert len(one.choices[0].message.tool_calls) == 1
    none = chat(client, [{"role": "user", "content": TWO}], tool_choice="none")
    assert none.choices[0].message.tool_calls is None and "tool_choice" in none.choices[0].message.content
    forced = chat(client, [{"role": "user", "content": "hello"}],
                  tool_choice={"type": "function", "function": {"name": "fs__read_text_file"}})
    assert forced.choices[0].message.tool_calls[0].function.name == "fs__read_text_file"
    with pytest.raises(openai.BadRequestError, match="not found in 'tools'"):
        chat(client, [{"role": "user", "content": "hi"}], tool_choice={"type": "function", "function": {"name": "nope"}})


def test_chat_stream_assembles_to_the_same_calls(client):
    messages = [{"role": "user", "content": TWO}]
    with client.chat.completions.stream(model="gpt-4.1", messages=messages, tools=CHAT_TOOLS) as stream:
        chunks = [event.chunk for event in stream if event.type == "chunk"]
        final = stream.get_final_completion()
    assert all(isinstance(chunk, ChatCompletionChunk) for chunk in chunks)
    pieces = [d for ch in chunks for d in (ch.choices[0].delta.tool_calls or []) if ch.choices]
    assert {d.index for d in pieces} == {0, 1} and sum(1 for d in pieces if d.index == 0) > 3  # several pieces
    with pytest.raises(json.JSONDecodeError):
        json.loads(pieces[1].function.arguments)  # one piece is no JSON
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    plain = chat(client, messages)
    assert [c.function.arguments for c in final.choices[0].message.tool_calls] == [
        c.function.arguments for c in plain.choices[0].message.tool_calls]
    state = ChatCompletionStreamState()  # the SDK's own accumulator, fed chunk by chunk
    for chunk in chunks:
        state.handle_chunk(chunk)
    assert state.get_final_completion().choices[0].message.tool_calls[1].function.name == "fs__read_text_file"


def test_chat_stream_ends_with_done_and_text_streams_in_pieces():
    body = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hello"}], "stream": True,
            "stream_options": {"include_usage": True}}
    raw = offline_transport().handle_request(httpx.Request("POST", f"{OFFLINE_BASE_URL}/chat/completions", json=body))
    events = raw.read().decode().split("\n\n")
    assert raw.headers["content-type"].startswith("text/event-stream") and events[-2] == "data: [DONE]"
    chunks = [json.loads(e.removeprefix("data: ")) for e in events[:-2]]
    assert sum(1 for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")) > 2
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["total_tokens"] > 0


@pytest.mark.parametrize("case, message, param", [
    ("orphan", "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with "
               "'tool_calls'.", "messages.[1].role"),
    ("unanswered", "An assistant message with 'tool_calls' must be followed by tool messages responding to each "
                   "'tool_call_id'. The following tool_call_ids did not have response messages: call_b", "messages.[1].role"),
    ("no_id", "Missing parameter 'tool_call_id': messages with role 'tool' must have a 'tool_call_id'.",
     "messages.[2].tool_call_id"),
])  # fmt: skip
def test_chat_pairing_errors_in_the_real_api_words(client, case, message, param):
    call = lambda i: {"id": i, "type": "function", "function": {"name": "fs__read_text_file", "arguments": "{}"}}  # noqa: E731
    user = {"role": "user", "content": "hi"}
    histories = {
        "orphan": [user, {"role": "tool", "tool_call_id": "call_a", "content": "x"}],
        "unanswered": [user, {"role": "assistant", "tool_calls": [call("call_a"), call("call_b")]},
                       {"role": "tool", "tool_call_id": "call_a", "content": "x"}, user],
        "no_id": [user, {"role": "assistant", "tool_calls": [call("call_a")]}, {"role": "tool", "content": "x"}],
    }
    with pytest.raises(openai.BadRequestError) as caught:
        chat(client, histories[case])
    assert caught.value.status_code == 400
    assert caught.value.body == {"message": message, "type": "invalid_request_error", "param": param,
                                 "code": caught.value.body["code"]}


def test_messages_tool_use_then_tool_result(claude):
    first = claude.messages.create(model="claude-sonnet-4-6", max_tokens=512, tools=MSG_TOOLS,
                                   messages=[{"role": "user", "content": TWO}])
    assert isinstance(first, Message) and first.stop_reason == "tool_use"
    uses = [b for b in first.content if isinstance(b, ToolUseBlock)]
    assert uses[0].input == {"path": "/workspace/notes.txt", "head": 3} and len(uses) == 2
    history = [{"role": "user", "content": TWO}, {"role": "assistant", "content": [b.model_dump() for b in first.content]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": uses[0].id, "content": "alpha"},
                                            {"type": "tool_result", "tool_use_id": uses[1].id, "is_error": True,
                                             "content": "the disk is on fire"}]}]  # fmt: skip
    final = claude.messages.create(model="claude-sonnet-4-6", max_tokens=512, tools=MSG_TOOLS, messages=history)
    text = final.content[0].text
    assert final.stop_reason == "end_turn" and "alpha" in text
    assert "reported an error" in text and "the disk is on fire" in text  # is_error read as a failure
    one = claude.messages.create(model="claude-sonnet-4-6", max_tokens=512, tools=MSG_TOOLS,
                                 tool_choice={"type": "auto", "disable_parallel_tool_use": True},
                                 messages=[{"role": "user", "content": TWO}])
    assert [b.type for b in one.content] == ["tool_use"]


def test_messages_stream_events_and_assembly(claude):
    kwargs = dict(model="claude-sonnet-4-6", max_tokens=512, tools=MSG_TOOLS, messages=[{"role": "user", "content": TWO}])
    with claude.messages.stream(**kwargs) as stream:
        events = [event.type for event in stream]
        final = stream.get_final_message()
    for kind in ("message_start", "content_block_start", "input_json", "content_block_stop", "message_delta",
                 "message_stop"):
        assert kind in events, kind
    assert events.count("input_json") > 4 and final.stop_reason == "tool_use"
    plain = claude.messages.create(**kwargs)
    assert [b.input for b in final.content] == [b.input for b in plain.content]
    with claude.messages.stream(model="claude-sonnet-4-6", max_tokens=512, messages=[{"role": "user", "content": "hi"}]) as s:
        assert s.get_final_text().startswith("I'm an offline teaching model")


@pytest.mark.parametrize("messages, message", [
    ([{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_x", "content": "hi"}]}],
     "messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_x. Each `tool_result` "
     "block must have a corresponding `tool_use` block in the previous message."),
    ([{"role": "user", "content": "hi"},
      {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "fs__read_text_file", "input": {}}]},
      {"role": "user", "content": "and?"}],
     "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a. Each `tool_use` "
     "block must have a corresponding `tool_result` block in the next message."),
    ([{"role": "user", "content": "hi"},
      {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_a", "name": "fs__read_text_file",
                                         "input": '{"path": "notes.txt"}'}]}],
     "messages.1.content.0.tool_use.input: Input should be a valid dictionary"),
])  # fmt: skip
def test_messages_errors_in_anthropic_shape(claude, messages, message):
    with pytest.raises(anthropic.BadRequestError) as caught:
        claude.messages.create(model="claude-sonnet-4-6", max_tokens=64, tools=MSG_TOOLS, messages=messages)
    assert caught.value.body["type"] == "error"
    assert caught.value.body["error"] == {"type": "invalid_request_error", "message": message}


def test_messages_requires_max_tokens_and_answers_bad_json_in_its_shape():
    transport = offline_transport()
    url = "http://offline-model.invalid/v1/messages"
    missing = transport.handle_request(httpx.Request("POST", url, json={"model": "m", "messages": []}))
    assert missing.status_code == 400 and missing.json()["error"]["message"] == "max_tokens: Field required"
    broken = transport.handle_request(httpx.Request("POST", url, content=b"{nope"))
    assert broken.status_code == 400 and broken.json()["type"] == "error"


def test_models_list_and_a_404_that_names_the_endpoints(client):
    models = client.models.list()
    assert [m.id for m in models.data] == ["gpt-4.1"] and client.models.retrieve("llama3.2").id == "llama3.2"
    with pytest.raises(openai.NotFoundError) as caught:
        client.get("/embeddings", cast_to=object)
    text = caught.value.body["message"]
    for endpoint in ("POST /v1/responses", "POST /v1/chat/completions", "POST /v1/messages", "GET /v1/models"):
        assert endpoint in text
    wrong = offline_transport().handle_request(httpx.Request("GET", f"{OFFLINE_BASE_URL}/chat/completions"))
    assert wrong.status_code == 405


def test_the_sdk_types_behind_notebook_04cs_table():
    """What the envelope table teaches, read from the SDKs' own types."""
    import typing

    from anthropic.types import ToolResultBlockParam, ToolUseBlockParam
    from openai.types.chat import ChatCompletionToolMessageParam
    from openai.types.chat.chat_completion_message_function_tool_call import Function
    from openai.types.responses import response_output_item as items

    assert Function.model_fields["arguments"].annotation is str  # Chat: the value is text
    assert typing.get_origin(ToolUseBlock.model_fields["input"].annotation) is dict  # Messages: an object
    def required(param):  # the TypedDict keys annotated Required[...]
        return {k for k, v in param.__annotations__.items() if getattr(v, "__forward_arg__", str(v)).startswith("Required[")}

    assert required(ChatCompletionToolMessageParam) == {"content", "role", "tool_call_id"}
    assert {"tool_use_id", "type"} <= required(ToolResultBlockParam) and "is_error" in ToolResultBlockParam.__annotations__
    assert {"id", "input", "name", "type"} <= required(ToolUseBlockParam)
    assert {"output", "error", "arguments"} <= set(items.McpCall.model_fields)  # the call and its result, one item
    assert "output" not in items.McpApprovalRequest.model_fields


BAD_BODIES = [[], {"model": "m"}, {"model": "m", "messages": "hi"}, {"model": "m", "messages": [1]},
              {"model": "m", "messages": [{"role": "robot", "content": "x"}]},
              {"model": "m", "messages": [{"role": "user", "content": 5}]},
              {"model": "m", "messages": [{"role": "assistant", "tool_calls": [{"id": "c"}]}]},
              {"model": "m", "messages": [{"role": "user", "content": [7]}]},
              {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": [7, {"type": "zz"}]}]},
              {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "tools": [{"name": 3}]},
              {"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "x"}], "tool_choice": {"type": "tool"}},
              {"model": "m", "max_tokens": "5", "messages": []},
              {"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": [{"type": "function"}]}]  # fmt: skip


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/v1/messages"])
@pytest.mark.parametrize("body", BAD_BODIES, ids=range(len(BAD_BODIES)))
def test_bad_bodies_get_a_400_in_the_providers_shape_never_a_crash(path, body):
    answer = offline_transport().handle_request(httpx.Request("POST", f"http://offline-model.invalid{path}", json=body))
    assert answer.status_code == 400, answer.content
    payload = answer.json()
    if path == "/v1/messages":
        assert payload["type"] == "error" and payload["error"]["type"] == "invalid_request_error"
    else:
        assert set(payload["error"]) == {"message", "type", "param", "code"}
