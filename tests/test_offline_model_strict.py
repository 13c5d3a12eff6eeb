"""An omitted `strict` in the offline model: strict when the schema allows it, as in the Responses API.

The rule followed (openai 3.57, `types/responses/namespace_tool_param.py`): "If omitted, Responses
attempts to use strict validation when the schema is compatible, and falls back to non-strict
validation otherwise." `strict: false` sent explicitly is never strict.
"""

from __future__ import annotations

import json

import pytest

from course_lib.arguments import input_schema
from course_lib.declarations import strict_schema
from course_lib.offline_model.validation import strict_in_effect

MODEL = "gpt-4.1"
TASK = "Show the first 20 lines of /workspace/notes.txt"
STRICT_READY = strict_schema(input_schema())  # every property required, head/tail nullable
"""The files server's rule adapted for strict mode: strict-compatible as it stands."""


def reader(parameters: dict, **strict: bool | None) -> dict:
    return {"type": "function", "name": "fs__read_text_file", "description": "Read a text file.",
            "parameters": parameters, **strict}  # fmt: skip


def arguments(client, tool: dict, task: str = TASK, **options) -> dict:
    response = client.responses.create(model=MODEL, input=task, tools=[tool], **options)
    (call,) = [item for item in response.output if item.type == "function_call"]
    return json.loads(call.arguments)


def test_an_omitted_strict_on_a_strict_compatible_schema_gets_strict_arguments(client):
    # Every property present, null for the unused optional one: what strict: true gives.
    expected = {"path": "/workspace/notes.txt", "head": 20, "tail": None}
    assert arguments(client, reader(STRICT_READY)) == expected
    assert arguments(client, reader(STRICT_READY, strict=True)) == expected


def test_strict_false_sent_explicitly_stays_non_strict_on_the_same_schema(client):
    assert arguments(client, reader(STRICT_READY, strict=False)) == {"path": "/workspace/notes.txt", "head": 20}


def test_a_null_strict_counts_as_omitted(client):
    assert arguments(client, reader(STRICT_READY, strict=None))["tail"] is None


def test_an_omitted_strict_on_an_incompatible_schema_falls_back_to_non_strict(client):
    # The MCP inputSchema as published: head and tail optional, so not strict-compatible. No 400.
    assert arguments(client, reader(input_schema())) == {"path": "/workspace/notes.txt", "head": 20}


def test_an_omitted_strict_is_never_a_400_for_strict_mode_reasons(client):
    nested = {"type": "object", "required": ["path", "meta"], "additionalProperties": False, "properties": {
        "path": {"type": "string"}, "meta": {"type": "object", "additionalProperties": False}}}  # fmt: skip
    assert strict_in_effect(reader(nested)) is False  # a nested object without properties: not compatible
    assert client.responses.create(model=MODEL, input="hi", tools=[reader(nested)]).output


def test_a_forced_call_with_nothing_to_fill_it_is_strict_shaped_when_strict_is_omitted(client):
    forced = {"type": "function", "name": "fs__read_text_file"}
    assert arguments(client, reader(STRICT_READY), "Can you read my notes file?", tool_choice=forced) == {
        "path": "", "head": None, "tail": None}  # fmt: skip
    assert arguments(client, reader(input_schema()), "Can you read my notes file?", tool_choice=forced) == {
        "path": ""}  # fmt: skip


@pytest.mark.parametrize(("tool", "expected"), [
    (reader(STRICT_READY), True),
    (reader(STRICT_READY, strict=False), False),
    (reader(input_schema()), False),
    (reader(input_schema(), strict=True), True),  # the caller's word; the request is then a 400
    ({"type": "function", "name": "ping", "parameters": None}, True),
])  # fmt: skip
def test_strict_in_effect(tool, expected):
    assert strict_in_effect(tool) is expected


def test_the_course_host_always_sends_strict_so_nothing_is_left_to_the_default():
    from course_lib.course import start_course

    course = start_course(quiet=True)
    try:
        for strict in (False, True):
            assert [tool["strict"] for tool in course.host.responses_tools(strict=strict)] == [strict]
        course.run(TASK)
        assert all("strict" in tool for tool in course.wire.exchanges[0].request["tools"])
    finally:
        course.close()
