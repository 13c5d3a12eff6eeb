"""Chat Completions and Messages bodies checked against the SDKs' own request types
(`request_params`): an unknown top-level key or a value of the wrong JSON type gets each real
API's own 400, through the real SDKs; every key the SDKs declare is accepted."""

from __future__ import annotations

import typing

import anthropic
import httpx
import openai
import pytest
from anthropic.types import message_create_params
from openai.types.chat import completion_create_params

from course_lib.backend import OFFLINE_BASE_URL
from course_lib.offline_model import offline_transport
from course_lib.offline_model.request_params import CHAT, MESSAGES, RESPONSES, _parameters, first_fault

TASK = [{"role": "user", "content": "hello"}]




def test_the_known_keys_are_the_sdks_own_not_a_hand_typed_list():
    chat_keys = set(typing.get_type_hints(completion_create_params.CompletionCreateParamsNonStreaming))
    messages_keys = set(typing.get_type_hints(message_create_params.MessageCreateParamsNonStreaming))
    assert set(_parameters(CHAT)) >= chat_keys and "messages" in chat_keys and "input" not in _parameters(CHAT)
    assert set(_parameters(MESSAGES)) >= messages_keys and "max_tokens" in messages_keys
    assert "input" in _parameters(RESPONSES) and "messages" not in _parameters(RESPONSES)


def test_chat_refuses_an_unknown_parameter_in_its_own_words(client):
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="gpt-4.1", messages=TASK, extra_body={"thinking": {"type": "enabled"}})
    assert caught.value.body == {"message": "Unrecognized request argument supplied: thinking",
                                 "type": "invalid_request_error", "param": None, "code": None}  # fmt: skip


@pytest.mark.parametrize(("extra", "message"), [
    ({"temperature": "hot"}, "Invalid type for 'temperature': expected a decimal, but got a string instead."),
    ({"n": 1.5}, "Invalid type for 'n': expected an integer, but got a decimal number instead."),
    ({"parallel_tool_calls": "yes"}, "Invalid type for 'parallel_tool_calls': expected a boolean, but got a string instead."),
    ({"tools": {"type": "function"}}, "Invalid type for 'tools': expected an array of objects, but got an object instead."),
])  # fmt: skip
def test_chat_refuses_a_wrong_json_type_with_invalid_type(client, extra, message):
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="gpt-4.1", messages=TASK, extra_body=extra)
    assert caught.value.body["message"] == message and caught.value.body["code"] == "invalid_type"
    assert caught.value.body["param"] == next(iter(extra))


def test_chat_accepts_the_keys_the_sdk_sends(client):
    completion = client.chat.completions.create(model="gpt-4.1", messages=TASK, temperature=0.2, max_completion_tokens=50,
                                                seed=1, user="u", stream_options=None, store=False)  # fmt: skip
    assert completion.choices[0].message.content
    assert len(list(client.chat.completions.create(model="gpt-4.1", messages=TASK, stream=True,
                                                   stream_options={"include_usage": True}))) > 1  # fmt: skip


def test_messages_refuses_an_unknown_parameter_in_anthropics_words(claude):
    with pytest.raises(anthropic.BadRequestError) as caught:
        claude.messages.create(model="claude-sonnet-4-6", max_tokens=64, messages=TASK,
                               extra_body={"response_format": {"type": "json_object"}})
    assert caught.value.body["type"] == "error"
    assert caught.value.body["error"] == {"type": "invalid_request_error",
                                          "message": "response_format: Extra inputs are not permitted"}


@pytest.mark.parametrize(("extra", "message"), [
    ({"max_tokens": "64"}, "max_tokens: Input should be a valid integer"),
    ({"stop_sequences": "END"}, "stop_sequences: Input should be a valid list"),
    ({"metadata": ["x"]}, "metadata: Input should be a valid dictionary"),
    ({"service_tier": 3}, "service_tier: Input should be 'auto' or 'standard_only'"),
])  # fmt: skip
def test_messages_refuses_a_wrong_json_type_in_anthropics_words(extra, message):
    body = {"model": "claude-sonnet-4-6", "max_tokens": 64, "messages": TASK, **extra}
    answer = offline_transport().handle_request(httpx.Request("POST", f"{OFFLINE_BASE_URL}/messages", json=body))
    assert answer.status_code == 400 and answer.json()["error"]["message"] == message


def test_an_unknown_key_is_reported_before_a_type_fault_and_a_null_known_key_passes():
    fault = first_fault({"temperature": "hot", "colour": None, "model": "m"}, CHAT)
    assert fault.key == "colour" and fault.kinds is None
    assert first_fault({"model": "m", "messages": [], "temperature": None}, CHAT) is None
    assert first_fault({"model": "m", "messages": [], "max_tokens": 5, "system": None}, MESSAGES) is None
