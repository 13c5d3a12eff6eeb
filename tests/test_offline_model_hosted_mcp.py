"""The hosted `mcp` tool: the offline model acts as the platform, a real MCP client (the mcp SDK's
Streamable HTTP client) of our files server on a loopback port. Every response crosses the openai
SDK with strict response validation; the server's own read counter shows what really was read."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import openai
import pytest
from openai.types.responses import (
    ResponseMcpCallArgumentsDeltaEvent,
    ResponseMcpCallArgumentsDoneEvent,
    ResponseMcpCallCompletedEvent,
    ResponseMcpCallInProgressEvent,
    ResponseMcpListToolsCompletedEvent,
    ResponseMcpListToolsInProgressEvent,
    ResponseOutputItemAddedEvent,
    ResponseOutputItemDoneEvent,
)
from openai.types.responses.response_output_item import McpApprovalRequest, McpCall, McpListTools

from course_lib.fs_server import Workspace, build_server
from course_lib.http_transport import serving
from course_lib.offline_model import offline_transport
from course_lib.offline_model.hosted_mcp import DENIED
from course_lib.offline_model.ids import renumbered
from course_lib.paths import workspace_dir
from tests.test_outside_frameworks import base_url

__all__ = ["base_url"]  # the fixture: the offline model as a real local HTTP server

MODEL = "gpt-4.1"
TASK = "Show the first 3 lines of /workspace/notes.txt"
FIRST_3 = "".join((workspace_dir() / "notes.txt").read_text(encoding="utf-8").splitlines(keepends=True)[:3])


@pytest.fixture
def files():
    """Our files server over Streamable HTTP on a free loopback port, and its workspace (`reads`)."""
    workspace = Workspace(workspace_dir())
    with serving(build_server(workspace)) as srv:
        yield srv, workspace


def mcp_tool(url, **extra):
    return {"type": "mcp", "server_label": "files", "server_url": url, **extra}


def fresh_client():
    """A client of a new model instance (its own count of requests: the same ids in every run)."""
    return openai.OpenAI(api_key="offline", base_url="http://offline-model.invalid/v1", max_retries=0,
                         http_client=httpx.Client(transport=offline_transport()), _strict_response_validation=True)


def types_of(response):
    return [item.type for item in response.output]


def free_port_url():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/mcp"  # nothing listens there now


# ---- list and call -----------------------------------------------------------------------------------


def test_the_platform_lists_calls_and_answers_from_the_real_output(client, files):
    srv, workspace = files
    response = client.responses.create(model=MODEL, input=TASK, tools=[mcp_tool(srv.url, require_approval="never")])
    assert types_of(response) == ["mcp_list_tools", "mcp_call", "message"]
    listing, call, _ = response.output
    assert isinstance(listing, McpListTools) and [tool.name for tool in listing.tools] == ["read_text_file"]
    assert listing.tools[0].input_schema["properties"]["path"]["type"] == "string"  # the server's real schema
    assert listing.tools[0].annotations == {"readOnlyHint": True, "openWorldHint": False}
    assert isinstance(call, McpCall) and call.server_label == "files" and call.status == "completed"
    assert json.loads(call.arguments) == {"path": "/workspace/notes.txt", "head": 3}  # text, as in function_call
    assert call.output == FIRST_3 and call.error is None
    assert workspace.reads == 1  # the server really read the file, once
    assert FIRST_3 in response.output_text and "read_text_file" in response.output_text


def test_a_missing_file_comes_back_as_the_tools_own_error_and_the_answer_says_so(client, files):
    srv, _ = files
    response = client.responses.create(model=MODEL, input="Show the first 3 lines of /workspace/missing.txt",
                                       tools=[mcp_tool(srv.url, require_approval="never")])
    call = response.output[1]
    assert call.status == "failed" and call.output is None
    assert call.error.type == "mcp_tool_execution_error"
    assert call.error.content[0]["text"].startswith("NOT_FOUND: ")
    assert "NOT_FOUND" in response.output_text and "/workspace/missing.txt" in response.output_text


def test_allowed_tools_limits_what_is_listed_and_called(client, files):
    srv, workspace = files
    response = client.responses.create(model=MODEL, input=TASK, tools=[
        mcp_tool(srv.url, require_approval="never", allowed_tools=["write_file"])])
    assert types_of(response) == ["mcp_list_tools", "message"] and response.output[0].tools == []
    assert workspace.reads == 0 and FIRST_3 not in response.output_text
    for allowed, listed in [({"read_only": True}, 1), ({"read_only": False}, 0), ({"tool_names": ["read_text_file"]}, 1),
                            (["read_text_file"], 1)]:  # fmt: skip
        response = client.responses.create(model=MODEL, input=TASK, tools=[
            mcp_tool(srv.url, require_approval="never", allowed_tools=allowed)])
        assert len(response.output[0].tools) == listed, allowed


# ---- approvals ---------------------------------------------------------------------------------------


def test_by_default_every_call_waits_for_approval_and_nothing_is_read(client, files):
    srv, workspace = files
    response = client.responses.create(model=MODEL, input=TASK, tools=[mcp_tool(srv.url)])  # no require_approval
    assert types_of(response) == ["mcp_list_tools", "mcp_approval_request"]
    request = response.output[1]
    assert isinstance(request, McpApprovalRequest) and request.name == "read_text_file"
    assert json.loads(request.arguments)["path"] == "/workspace/notes.txt"
    assert workspace.reads == 0 and response.output_text == ""


def test_an_approved_call_is_made_in_the_next_response_without_listing_again(client, files):
    srv, workspace = files
    tools = [mcp_tool(srv.url, require_approval="always")]
    first = client.responses.create(model=MODEL, input=TASK, tools=tools)
    request = first.output[-1]
    second = client.responses.create(model=MODEL, previous_response_id=first.id, tools=tools, input=[
        {"type": "mcp_approval_response", "approval_request_id": request.id, "approve": True}])
    assert types_of(second) == ["mcp_call", "message"]  # the mcp_list_tools in context is re-used
    call = second.output[0]
    assert call.approval_request_id == request.id and call.arguments == request.arguments
    assert call.output == FIRST_3 and workspace.reads == 1
    assert FIRST_3 in second.output_text


def test_a_denied_call_is_not_made_and_the_answer_says_it_was_not_approved(client, files):
    srv, workspace = files
    tools = [mcp_tool(srv.url)]
    first = client.responses.create(model=MODEL, input=TASK, tools=tools)
    second = client.responses.create(model=MODEL, previous_response_id=first.id, tools=tools, input=[
        {"type": "mcp_approval_response", "approval_request_id": first.output[-1].id, "approve": False}])
    assert types_of(second) == ["message"] and workspace.reads == 0
    assert "DENIED" in second.output_text and "did not approve" in DENIED and FIRST_3 not in second.output_text


def test_the_approval_round_works_with_the_items_in_input_and_no_stored_state(client, files):
    srv, workspace = files
    tools = [mcp_tool(srv.url)]
    first = client.responses.create(model=MODEL, input=TASK, tools=tools, store=False)
    sent_back = [{"role": "user", "content": TASK}, *[item.model_dump(exclude_none=True) for item in first.output],
                 {"type": "mcp_approval_response", "approval_request_id": first.output[-1].id, "approve": True}]
    second = client.responses.create(model=MODEL, input=sent_back, tools=tools, store=False)
    assert types_of(second) == ["mcp_call", "message"] and workspace.reads == 1
    # Once the mcp_call is in the input, the approval is spent: sending it all again reads nothing more.
    everything = [*sent_back, *[item.model_dump(exclude_none=True) for item in second.output]]
    third = client.responses.create(model=MODEL, input=everything, tools=tools, store=False)
    assert types_of(third) == ["message"] and workspace.reads == 1 and FIRST_3 in third.output_text


def test_an_approval_response_for_no_request_is_refused(client, files):
    srv, _ = files
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, tools=[mcp_tool(srv.url)], input=[
            {"role": "user", "content": TASK},
            {"type": "mcp_approval_response", "approval_request_id": "mcpr_nothing", "approve": True}])
    assert "mcpr_nothing" in caught.value.body["message"]


# ---- refusals and failures ---------------------------------------------------------------------------


@pytest.mark.parametrize("url", ["https://mcp.example.com/mcp", "http://10.0.0.5:8765/mcp", "file:///etc/passwd",
                                 "http://127.0.0.1.example.com/mcp", "not a url"])
def test_a_server_off_this_machine_is_refused_with_a_400(client, url):
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input=TASK, tools=[mcp_tool(url)])
    error = caught.value.body
    assert error["param"] == "tools[0].server_url" and error["type"] == "invalid_request_error"
    assert "only reaches MCP servers on this machine" in error["message"]


def test_a_connector_is_refused_and_a_missing_url_is_named(client):
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input=TASK, tools=[
            {"type": "mcp", "server_label": "box", "connector_id": "connector_dropbox"}])
    assert caught.value.body["param"] == "tools[0].connector_id"
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, input=TASK, tools=[{"type": "mcp", "server_label": "files"}])
    assert caught.value.body["message"] == "Missing required parameter: 'tools[0].server_url'."


def test_a_server_that_cannot_be_listed_fails_the_request_with_the_real_424(client):
    with pytest.raises(openai.APIStatusError) as caught:
        client.responses.create(model=MODEL, input=TASK, tools=[mcp_tool(free_port_url())])
    assert caught.value.status_code == 424
    assert caught.value.body == {"message": "Error retrieving tool list from MCP server: 'files'. Http status code: "
                                            "424 (Failed Dependency)", "type": "external_connector_error",
                                 "param": "tools", "code": "http_error"}  # fmt: skip


def test_a_server_gone_after_the_listing_gives_an_mcp_call_error(client):
    workspace = Workspace(workspace_dir())
    tools = None
    with serving(build_server(workspace)) as srv:
        tools = [mcp_tool(srv.url)]
        first = client.responses.create(model=MODEL, input=TASK, tools=tools)
    second = client.responses.create(model=MODEL, previous_response_id=first.id, tools=tools, input=[
        {"type": "mcp_approval_response", "approval_request_id": first.output[-1].id, "approve": True}])
    call = second.output[0]
    assert call.type == "mcp_call" and call.status == "failed" and call.output is None
    assert call.error.type == "http_error" and "could not be reached" in call.error.message
    assert workspace.reads == 0 and "could not be reached" in second.output_text


# ---- streaming, and a caller inside a running event loop ------------------------------------------


def test_a_streamed_hosted_call_uses_the_real_event_types(client, files):
    srv, workspace = files
    tools = [mcp_tool(srv.url, require_approval="never")]
    events = list(client.responses.create(model=MODEL, input=TASK, tools=tools, stream=True))
    assert [event.sequence_number for event in events] == list(range(len(events)))
    kinds = [type(event) for event in events]
    assert kinds[2:6] == [ResponseOutputItemAddedEvent, ResponseMcpListToolsInProgressEvent,
                          ResponseMcpListToolsCompletedEvent, ResponseOutputItemDoneEvent]
    call_events = kinds[kinds.index(ResponseMcpCallArgumentsDeltaEvent) - 1:kinds.index(ResponseMcpCallCompletedEvent) + 2]
    assert call_events[0] is ResponseOutputItemAddedEvent and call_events[-1] is ResponseOutputItemDoneEvent
    assert call_events[-4:-1] == [ResponseMcpCallArgumentsDoneEvent, ResponseMcpCallInProgressEvent,
                                  ResponseMcpCallCompletedEvent]
    deltas = "".join(e.delta for e in events if isinstance(e, ResponseMcpCallArgumentsDeltaEvent))
    final = events[-1].response
    assert deltas == final.output[1].arguments and final.output[1].output == FIRST_3
    assert events[2].item.tools == [] and events[5].item.tools[0].name == "read_text_file"
    with client.responses.stream(model=MODEL, input=TASK, tools=tools) as stream:  # the SDK's helper assembles it
        assert FIRST_3 in stream.get_final_response().output_text
    assert workspace.reads == 2


def test_a_caller_inside_a_running_event_loop_still_gets_the_call_made(client, files):
    srv, workspace = files

    async def in_a_notebook():  # Jupyter runs cells inside an event loop; the sync client blocks in it
        return client.responses.create(model=MODEL, input=TASK, tools=[mcp_tool(srv.url, require_approval="never")])

    assert asyncio.run(in_a_notebook()).output[1].output == FIRST_3 and workspace.reads == 1


def test_an_mcp_call_is_no_function_call_the_app_could_answer(client, files):
    srv, workspace = files
    done = client.responses.create(model=MODEL, input=TASK, tools=[mcp_tool(srv.url, require_approval="never")])
    call = done.output[1]
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model=MODEL, tools=[mcp_tool(srv.url, require_approval="never")], input=[
            {"role": "user", "content": TASK}, *[item.model_dump(exclude_none=True) for item in done.output[:2]],
            {"type": "function_call_output", "call_id": call.id, "output": call.output}])
    assert caught.value.body["message"] == f"No tool call found for function call output with call_id {call.id}."
    assert workspace.reads == 1


def test_ids_do_not_depend_on_the_servers_port():
    outputs = []
    for _ in range(2):  # two runs, each a fresh model instance and a server on a new free port
        with serving(build_server(Workspace(workspace_dir()))) as srv, fresh_client() as client:
            outputs.append(client.responses.create(model=MODEL, input=TASK, tools=[mcp_tool(srv.url)], store=False))
    assert [item.id for item in outputs[0].output] == [item.id for item in outputs[1].output]
    assert outputs[0].output[1].id.startswith("mcpr_") and outputs[0].usage == outputs[1].usage


def test_every_request_gets_fresh_mcp_item_ids(client, files):
    srv, _ = files
    first, second = (client.responses.create(model=MODEL, input=TASK, tools=[mcp_tool(srv.url)], store=False)
                     for _ in range(2))  # fmt: skip
    assert {item.id for item in first.output}.isdisjoint(item.id for item in second.output)
    assert renumbered(first.to_dict()) == renumbered(second.to_dict())


def test_a_json_rpc_error_comes_back_as_an_mcp_protocol_error(client, files):
    srv, workspace = files
    listing = {"type": "mcp_list_tools", "id": "mcpl_stale", "server_label": "files", "tools": [
        {"name": "read_text_file_v0", "description": "Read a text file",
         "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]}  # a stale listing
    response = client.responses.create(model=MODEL, input=[{"role": "user", "content": TASK}, listing],
                                       tools=[mcp_tool(srv.url, require_approval="never")])
    assert types_of(response) == ["mcp_call", "message"]  # the listing in context is trusted, as the real API does
    error = response.output[0].error
    assert error.type == "mcp_protocol_error" and error.code == -32602 and "read_text_file_v0" in error.message
    assert workspace.reads == 0 and "read_text_file_v0" in response.output_text


def test_a_silent_server_is_given_up_on_never_a_hang(client, monkeypatch):
    from course_lib.offline_model import hosted_mcp

    monkeypatch.setattr(hosted_mcp, "TIMEOUT", 0.5)
    with socket.socket() as silent:  # accepts connections (the kernel's backlog), never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        with pytest.raises(openai.APIStatusError) as caught:
            client.responses.create(model=MODEL, input=TASK, tools=[mcp_tool(url)])
    assert caught.value.status_code == 424


# ---- an outside framework: the Agents SDK's HostedMCPTool, over a real socket --------------------------


def test_the_agents_sdks_hosted_mcp_tool_runs_its_approval_round_against_the_offline_model(base_url, files):
    from agents import Agent, HostedMCPTool, Runner

    from tests.test_outside_frameworks import agents_model, openai_client

    srv, workspace = files
    asked = []

    def approve(request):
        asked.append((request.data.name, json.loads(request.data.arguments)))
        return {"approve": True}

    async def main():
        async with openai_client(base_url) as client:
            tool = HostedMCPTool(tool_config=mcp_tool(srv.url, require_approval="always"), on_approval_request=approve)
            return await Runner.run(Agent(name="reader", tools=[tool], model=agents_model(client)), TASK)

    result = asyncio.run(main())
    assert asked == [("read_text_file", {"path": "/workspace/notes.txt", "head": 3})]
    assert workspace.reads == 1 and FIRST_3 in result.final_output
    kinds = [item.type for item in result.new_items]
    assert "mcp_list_tools_item" in kinds and "mcp_approval_request_item" in kinds and kinds[-1] == "message_output_item"


@pytest.mark.parametrize(("approval", "asked"), [
    ({"never": {"tool_names": ["read_text_file"]}}, False), ({"never": {"read_only": True}}, False),
    ({"never": {"tool_names": ["write_file"]}}, True), ({"always": {"tool_names": ["read_text_file"]}}, True),
    ("never", False), (None, True),
])  # fmt: skip
def test_an_approval_filter_decides_per_tool(client, files, approval, asked):
    srv, workspace = files
    response = client.responses.create(model=MODEL, input=TASK, tools=[mcp_tool(srv.url, require_approval=approval)])
    assert types_of(response)[1] == ("mcp_approval_request" if asked else "mcp_call")
    assert workspace.reads == (0 if asked else 1)


def test_a_malformed_mcp_tool_is_refused_with_the_field_named(client, files):
    srv, _ = files
    for extra, param in [({"require_approval": "sometimes"}, "tools[0].require_approval"),
                         ({"allowed_tools": [3]}, "tools[0].allowed_tools[0]"),
                         ({"require_approval": {"maybe": {}}}, "tools[0].require_approval.maybe")]:  # fmt: skip
        with pytest.raises(openai.BadRequestError) as caught:
            client.responses.create(model=MODEL, input=TASK, tools=[mcp_tool(srv.url, **extra)])
        assert caught.value.body["param"] == param, extra


def test_a_streamed_request_to_a_server_that_cannot_be_listed_is_a_424_before_any_event(client):
    with pytest.raises(openai.APIStatusError) as caught:
        client.responses.create(model=MODEL, input=TASK, tools=[mcp_tool(free_port_url())], stream=True)
    assert caught.value.status_code == 424 and caught.value.body["type"] == "external_connector_error"


def test_a_structured_answer_takes_its_values_from_the_platforms_own_mcp_call(client, files):
    srv, _ = files
    schema = {"type": "object", "properties": {"path": {"type": "string"}, "text": {"type": ["string", "null"]},
                                               "ok": {"type": "boolean"}},
              "required": ["path", "text", "ok"], "additionalProperties": False}  # fmt: skip
    response = client.responses.create(model=MODEL, input=TASK, tools=[mcp_tool(srv.url, require_approval="never")],
                                       text={"format": {"type": "json_schema", "name": "read", "schema": schema,
                                                        "strict": True}})  # fmt: skip
    assert types_of(response) == ["mcp_list_tools", "mcp_call", "message"]
    assert json.loads(response.output_text) == {"path": "/workspace/notes.txt", "text": FIRST_3, "ok": True}
    assert response.text.format.type == "json_schema"
