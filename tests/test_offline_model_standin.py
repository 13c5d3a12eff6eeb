"""The stand-in (`offline_model.standin`): the offline model varied the way real models vary, every
answer still valid against the SDKs' own types (strict response validation) and under the same refusals."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import anthropic
import httpx
import openai
import pytest

from course_lib.fs_server import Workspace, build_server
from course_lib.http_transport import serving
from course_lib.offline_model import offline_transport, respond, running_server, standin_transport
from course_lib.offline_model.standin import dated, reword, varying
from course_lib.paths import workspace_dir

TASK = "Show the first 3 lines of /workspace/notes.txt"
TOOL = {"type": "function", "name": "fs__read_text_file", "description": "Read a text file as text.", "strict": False,
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}},
                       "required": ["path"]}}  # fmt: skip
TEXT = "# Notes\nError code: not a label, a line of the file\nthird line\n"


def client(transport: httpx.BaseTransport) -> openai.OpenAI:
    return openai.OpenAI(api_key="k", base_url="http://offline-model.invalid/v1", max_retries=0,
                         http_client=httpx.Client(transport=transport), _strict_response_validation=True)


@pytest.fixture
def standin():
    with client(standin_transport()) as c:
        yield c


def read_and_answer(c: openai.OpenAI, model: str = "gpt-4.1", **options):
    """The whole read: the first response, the context sent back in order, and the answer."""
    first = c.responses.create(model=model, input=TASK, tools=[TOOL], **options)
    context = [{"role": "user", "content": TASK}, *(item.to_dict() for item in first.output)]
    context += [{"type": "function_call_output", "call_id": item.call_id, "output": TEXT}
                for item in first.output if item.type == "function_call"]  # fmt: skip
    return first, c.responses.create(model=model, input=context, tools=[TOOL], **options)


def test_the_model_name_is_a_dated_snapshot():
    assert dated("gpt-4.1") == "gpt-4.1-2025-04-14" and dated("gpt-5") == "gpt-5-2025-08-07"
    assert dated("gpt-4.1-2025-04-14") == "gpt-4.1-2025-04-14"  # already dated
    assert dated("my-local-model") == "my-local-model-2026-01-01"
    assert dated("claude-sonnet-4-6") == "claude-sonnet-4-6-20260101"


def test_a_call_comes_after_a_sentence_and_with_its_arguments_reordered(standin):
    first, _ = read_and_answer(standin)
    assert first.model == "gpt-4.1-2025-04-14"
    assert [item.type for item in first.output] == ["message", "function_call"]
    assert first.output[0].content[0].text == "Sure! I'll use `fs__read_text_file` to look at /workspace/notes.txt first."
    call = first.output[1]
    assert call.arguments == '{"head": 3, "path": "/workspace/notes.txt"}'  # another order, other spacing
    offline = client(offline_transport()).responses.create(model="gpt-4.1", input=TASK, tools=[TOOL]).output[0]
    assert json.loads(call.arguments) == json.loads(offline.arguments) and call.arguments != offline.arguments


def test_a_forced_call_comes_alone():
    for choice in ("required", {"type": "function", "name": "fs__read_text_file"}):
        with client(standin_transport()) as c:
            response = c.responses.create(model="gpt-4.1", input=TASK, tools=[TOOL], tool_choice=choice)
        assert [item.type for item in response.output] == ["function_call"]


def test_the_answer_is_reworded_yet_quotes_the_tool_output_exactly(standin):
    _, answer = read_and_answer(standin)
    _, offline = read_and_answer(client(offline_transport()))
    text = answer.output_text
    assert TEXT in text and text != offline.output_text
    assert offline.output_text.startswith("Here are the first 3 lines of /workspace/notes.txt, as returned by")
    assert text.startswith("I used `fs__read_text_file` to read the first 3 lines of /workspace/notes.txt.")
    assert "Error code: not a label" in text  # a line of the quoted file is not a label to reword
    assert text.rstrip().splitlines()[-1] in ("Let me know if you'd like anything else!",
                                               "Happy to help with anything else you need. 😊",
                                               "I hope this helps. Just ask if you want more!")  # fmt: skip


def test_an_error_answer_gets_markdown_labels():
    failed = json.dumps({"ok": False, "error": {"code": "NOT_FOUND", "message": "no such file", "retryable": False}})
    body = {"model": "gpt-4.1", "tools": [TOOL], "input": [
        {"role": "user", "content": TASK},
        {"type": "function_call", "call_id": "call_1", "name": "fs__read_text_file", "arguments": '{"path": "/workspace/notes.txt"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": failed}]}  # fmt: skip
    with varying():
        text = respond(body)["output"][0]["content"][0]["text"]
    assert "- **Error code:** `NOT_FOUND`" in text and "- **Error message:** no such file" in text
    assert text.startswith("Unfortunately, `fs__read_text_file` reported an error")


def test_chinese_answers_are_reworded_in_chinese():
    text = reword("以下是 /workspace/notes.txt 的前 3 行，由 fs__read_text_file 返回：\n\n一\n二\n三", ["一\n二\n三"])
    assert text.startswith("我用 `fs__read_text_file` 读取了 /workspace/notes.txt 的前 3 行，结果如下：\n\n一\n二\n三\n\n")
    assert re.search(r"[\u4e00-\u9fff]", text.splitlines()[-1])


def test_a_structured_answer_is_left_as_json(standin):
    schema = {"type": "object", "additionalProperties": False, "required": ["path"], "properties": {"path": {"type": "string"}}}
    fmt = {"format": {"type": "json_schema", "name": "where", "schema": schema, "strict": True}}
    _, answer = read_and_answer(standin, text=fmt)
    assert json.loads(answer.output_text) == {"path": "/workspace/notes.txt"}


def test_a_reasoning_model_output_sent_back_in_order_is_accepted(standin):
    first, answer = read_and_answer(standin, model="gpt-5")
    assert [item.type for item in first.output] == ["reasoning", "message", "function_call"]
    assert answer.output_text.startswith("I used `fs__read_text_file`")


def test_a_reasoning_model_output_sent_back_in_order_is_accepted_offline_too(monkeypatch):
    """The regression: [reasoning, message, function_call] is the offline model's own output too (the notes
    assistant proposing a gap), and sent back in order it used to be refused as lacking its reasoning item."""
    from tests.test_offline_model_assistant import STUB, Conversation, hits, note, ok

    monkeypatch.setattr("tests.test_offline_model_assistant.MODEL", "gpt-5")
    with client(offline_transport()) as c:
        talk = Conversation(c, "Where is my understanding of workflows incomplete? Save a learning gap.")
        talk.step()
        talk.step(lambda name, args: hits(("/notes/workflow-vs-agent.md", 5.0)))
        proposal = talk.step(lambda name, args: note("/notes/workflow-vs-agent.md", STUB))
        assert [item.type for item in proposal.output] == ["reasoning", "message", "function_call"]
        saved = talk.step(lambda name, args: ok({"record_id": "gap-0001", "replayed": False}))
    assert saved.output_text.endswith("Saved the learning gap as record gap-0001.")


def test_stateless_reasoning_carries_encrypted_content(standin):
    first, answer = read_and_answer(standin, model="gpt-5", store=False, include=["reasoning.encrypted_content"])
    assert first.output[0].type == "reasoning" and first.output[0].encrypted_content.startswith("gAAAA")
    assert answer.output_text


def test_the_stream_tells_the_same_varied_response(standin):
    with standin.responses.stream(model="gpt-4.1", input=TASK, tools=[TOOL]) as stream:
        added = [event.item.type for event in stream if event.type == "response.output_item.added"]
        final = stream.get_final_response()
    assert added == ["message", "function_call"] == [item.type for item in final.output]
    assert final.model == "gpt-4.1-2025-04-14"


def test_the_persona_switch_is_echoed_and_ignored():
    from tests.test_offline_model_persona import GULLIBLE, INJECTED, after_read

    with varying():
        response = respond(after_read(INJECTED, metadata=GULLIBLE))
    assert [item["type"] for item in response["output"]] == ["message"]  # no obeyed call: a real model has no switch
    assert response["metadata"] == GULLIBLE
    assert "CALL apply_note_update" in response["output"][0]["content"][0]["text"]


def test_a_hosted_mcp_server_on_this_machine_is_out_of_the_platforms_reach(standin):
    with serving(build_server(Workspace(workspace_dir()))) as server:
        tool = {"type": "mcp", "server_label": "files", "server_url": server.url, "require_approval": "never"}
        with pytest.raises(openai.APIStatusError) as caught:
            standin.responses.create(model="gpt-4.1", input=TASK, tools=[tool])
    assert caught.value.status_code == 424
    assert caught.value.body == {"message": "Error retrieving tool list from MCP server: 'files'. Http status code: "
                                            "424 (Failed Dependency)", "type": "external_connector_error",
                                 "param": "tools", "code": "http_error"}  # fmt: skip


def test_chat_completions_and_messages_vary_over_http():
    tool = {"name": "read_text_file", "description": "Read a file", "input_schema": TOOL["parameters"]}
    with running_server(vary=True) as url, anthropic.Anthropic(
            api_key="k", base_url=url.removesuffix("/v1"), max_retries=0, _strict_response_validation=True) as claude, \
            client(httpx.HTTPTransport()).with_options(base_url=url) as openai_client:
        message = claude.messages.create(model="claude-sonnet-4-6", max_tokens=500, tools=[tool],
                                         messages=[{"role": "user", "content": TASK}])  # fmt: skip
        forced = claude.messages.create(model="claude-sonnet-4-6", max_tokens=500, tools=[tool],
                                        tool_choice={"type": "any"}, messages=[{"role": "user", "content": TASK}])  # fmt: skip
        chat = openai_client.chat.completions.create(
            model="gpt-4.1", messages=[{"role": "user", "content": TASK}],
            tools=[{"type": "function", "function": {"name": "read_text_file", "parameters": TOOL["parameters"]}}])
    assert message.model == "claude-sonnet-4-6-20260101"
    assert [block.type for block in message.content] == ["text", "tool_use"]
    assert list(message.content[1].input) == ["head", "path"]
    assert [block.type for block in forced.content] == ["tool_use"]  # any/tool: no text first, as Anthropic documents
    assert chat.model == "gpt-4.1-2025-04-14" and chat.choices[0].message.content.startswith("Sure!")
    assert chat.choices[0].message.tool_calls[0].function.arguments == '{"head": 3, "path": "/workspace/notes.txt"}'


def test_the_command_line_serves_the_stand_in():
    server = subprocess.Popen([sys.executable, "-m", "course_lib.offline_model", "--vary", "--port", "0"],
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        line = server.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/v1", line)
        assert found and line.startswith("the stand-in"), line
        with client(httpx.HTTPTransport()).with_options(base_url=found.group(0)) as c:
            response = c.responses.create(model="gpt-4.1", input=TASK, tools=[TOOL])
        assert response.model == "gpt-4.1-2025-04-14"
    finally:
        server.terminate()
        server.wait(timeout=10)
        server.stderr.close()


# ---- the local-server profile (as Ollama's /v1/responses answers) ------------------------------------------


@pytest.fixture
def local():
    with client(standin_transport("local")) as c:
        yield c


def test_locally_calls_come_without_text_and_the_model_name_as_sent(local):
    first, answer = read_and_answer(local)
    assert [item.type for item in first.output] == ["function_call"] and first.model == "gpt-4.1"
    assert first.output[0].arguments == '{"head": 3, "path": "/workspace/notes.txt"}'
    assert TEXT in answer.output_text and answer.store is False


def test_locally_previous_response_id_is_ignored_and_nothing_is_stored(local):
    first = local.responses.create(model="gpt-4.1", input=TASK, tools=[TOOL])
    call = first.output[0]
    assert first.store is False
    again = local.responses.create(model="gpt-4.1", previous_response_id=first.id, input="Thanks!", tools=[TOOL])
    assert again.previous_response_id is None  # ignored, not refused: no state, no error
    # The output alone, its call only in the ignored chain: a stateless server never saw that call.
    # Ollama would answer without the context; the stand-in says so loudly, with the API's 400.
    with pytest.raises(openai.BadRequestError, match="No tool call found for function call output"):
        local.responses.create(model="gpt-4.1", previous_response_id=first.id, tools=[TOOL],
                               input=[{"type": "function_call_output", "call_id": call.call_id, "output": TEXT}])


def test_locally_tool_choice_is_ignored(local):
    response = local.responses.create(model="gpt-4.1", input="Hello!", tools=[TOOL], tool_choice="required")
    assert [item.type for item in response.output] == ["message"] and response.tool_choice == "auto"


def test_an_unknown_profile_is_refused():
    with pytest.raises(ValueError, match="unknown stand-in profile"):
        with varying("remote"):
            pass
