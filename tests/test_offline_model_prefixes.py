"""Naming a server reaches it, whatever way the host put the server into the tool's name: the
course's `ref__read_text_file`, the OpenAI Agents SDK's `mcp_ref__read_text_file`
(`include_server_in_tool_names`), pydantic-ai's `ref_read_text_file` (`.prefixed("ref")`) and the
Responses `namespace` tool (a call with `namespace: "ref"`). The frameworks themselves run in
tests/test_outside_frameworks.py."""

from __future__ import annotations

import json

import pytest

from course_lib.offline_model import respond
from course_lib.offline_model.chat import chat_completion
from course_lib.offline_model.messages import anthropic_message

SCHEMA = {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}}, "required": ["path"]}
ASK = "Show the first 2 lines of notes.txt with the ref server"


def tool(name: str) -> dict:
    return {"type": "function", "name": name, "description": "Read a text file", "parameters": SCHEMA, "strict": False}


CONVENTIONS = {  # convention → (the two servers' tool names, the ref server's)
    "the course's prefix__name": (["files__read_text_file", "ref__read_text_file"], "ref__read_text_file"),
    "Agents SDK include_server_in_tool_names": (["mcp_files__read_text_file", "mcp_ref__read_text_file"],
                                                "mcp_ref__read_text_file"),
    "pydantic-ai .prefixed()": (["files_read_text_file", "ref_read_text_file"], "ref_read_text_file"),
    "pydantic-ai .prefixed() beside an unprefixed server": (["read_text_file", "ref_read_text_file"],
                                                            "ref_read_text_file"),
}


@pytest.mark.parametrize("convention", CONVENTIONS)
@pytest.mark.parametrize("order", ["ref last", "ref first"])
def test_naming_the_server_calls_its_tool_in_every_envelope(convention, order):
    names, ref = CONVENTIONS[convention]
    names = names if order == "ref last" else names[::-1]
    responses = respond({"model": "gpt-4.1", "input": ASK, "tools": [tool(name) for name in names]})
    chat = chat_completion({"model": "gpt-4.1", "messages": [{"role": "user", "content": ASK}], "tools": [
        {"type": "function", "function": {"name": name, "parameters": SCHEMA}} for name in names]})
    messages = anthropic_message({"model": "claude-sonnet-4-6", "max_tokens": 256, "messages": [
        {"role": "user", "content": ASK}], "tools": [{"name": name, "input_schema": SCHEMA} for name in names]})
    assert responses["output"][0]["name"] == ref
    assert chat["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == ref
    assert next(block for block in messages["content"] if block["type"] == "tool_use")["name"] == ref
    other = respond({"model": "gpt-4.1", "input": ASK.replace("ref", "files"), "tools": [tool(n) for n in names]})
    if convention != "pydantic-ai .prefixed() beside an unprefixed server":  # that one has no "files" in its name
        assert other["output"][0]["name"] != ref


def test_the_first_declared_reader_when_no_server_is_named():
    names, _ = CONVENTIONS["Agents SDK include_server_in_tool_names"]
    response = respond({"model": "gpt-4.1", "input": "Show the first 2 lines of notes.txt", "tools": [tool(n) for n in names]})
    assert response["output"][0]["name"] == names[0]


def test_tools_that_share_only_a_word_are_not_taken_for_prefixed_ones():
    # The Node server's read_file and read_text_file share "file": "read" is no server.
    response = respond({"model": "gpt-4.1", "input": "read the first 2 lines of notes.txt with read_text_file",
                        "tools": [tool("read_file"), tool("read_text_file")]})  # fmt: skip
    assert response["output"][0]["name"] == "read_text_file"


def namespace(name: str) -> dict:
    return {"type": "namespace", "name": name, "description": f"the {name} server's tools",
            "tools": [{"type": "function", "name": "read_text_file", "description": "Read a text file",
                       "parameters": SCHEMA, "strict": False}]}  # fmt: skip


def test_a_namespace_tool_is_called_with_its_namespace_and_answered_from_its_result(client):
    tools = [namespace("files"), namespace("ref")]
    first = client.responses.create(model="gpt-4.1", input=ASK, tools=tools)
    [call] = first.output
    assert (call.name, call.namespace, json.loads(call.arguments)) == ("read_text_file", "ref",
                                                                       {"path": "notes.txt", "head": 2})
    context = [{"role": "user", "content": ASK}, call.to_dict(),
               {"type": "function_call_output", "call_id": call.call_id, "output": "a\nb\n"}]
    final = client.responses.create(model="gpt-4.1", input=context, tools=tools)
    assert final.output_text == "Here are the first 2 lines of notes.txt, as returned by ref.read_text_file:\n\na\nb\n"


def test_a_namespace_tool_is_checked_like_any_function_tool():
    bad = namespace("ref")
    bad["tools"][0]["parameters"] = {"type": "strng"}
    with pytest.raises(Exception, match="Invalid schema for function 'read_text_file'"):
        respond({"model": "gpt-4.1", "input": ASK, "tools": [bad]})
