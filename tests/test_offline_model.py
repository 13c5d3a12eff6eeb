"""The offline model, exercised through a real openai client with strict response validation."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from openai.types.responses import ResponseFunctionToolCall

from course_lib.offline_model import BadRequest, handle, offline_transport, respond
from course_lib.offline_model.ids import renumbered

MODEL = "gpt-4.1"
NOTES = "alpha\nbeta\ngamma"


def function_tool(name: str, properties: dict, required: list[str] | None = None, **extra: Any) -> dict[str, Any]:
    parameters = {"type": "object", "properties": properties, "required": required or []}
    return {"type": "function", "name": name, "parameters": parameters, **extra}


def reader_tool(name: str = "fs__read_text_file", *, strict: bool = False) -> dict[str, Any]:
    """The reference filesystem server's read_text_file, as a Responses function tool."""
    number = {"type": ["number", "null"]} if strict else {"type": "number"}
    properties = {"path": {"type": "string"}, "head": number, "tail": number}
    tool = function_tool(name, properties, list(properties) if strict else ["path"], strict=strict)
    if strict:
        tool["parameters"]["additionalProperties"] = False
    return {**tool, "description": "Read a text file as text."}


def ask(client: openai.OpenAI, text: str, tools: list | None = None, **options: Any):
    tools = [reader_tool()] if tools is None else tools
    return client.responses.create(model=MODEL, input=text, tools=tools, **options)


def calls_of(response) -> list[tuple[str, dict]]:
    return [(item.name, json.loads(item.arguments)) for item in response.output if item.type == "function_call"]


def feed_back(client: openai.OpenAI, text: str, output: str, **options: Any):
    """Ask, execute nothing, return `output` as the result of the first call; the second response."""
    first = ask(client, text, **options)
    call = first.output[0]
    assert isinstance(call, ResponseFunctionToolCall)
    context = [{"role": "user", "content": text}, call.to_dict(),
               {"type": "function_call_output", "call_id": call.call_id, "output": output}]
    return client.responses.create(model=MODEL, input=context, tools=[reader_tool()], **options)


# ---- the first request: calls -------------------------------------------------------------------


def test_read_request_yields_a_function_call_with_json_arguments(client):
    response = ask(client, "Show me the first 20 lines of /workspace/notes.txt.")
    [call] = response.output
    assert isinstance(call, ResponseFunctionToolCall)
    assert call.name == "fs__read_text_file"
    assert call.arguments == '{"path":"/workspace/notes.txt","head":20}'  # text, compact, schema order
    assert call.call_id.startswith("call_") and call.id.startswith("fc_")
    assert response.status == "completed" and response.model == MODEL and response.tools[0].name == call.name


@pytest.mark.parametrize(
    ("prompt", "arguments"),
    [
        ("Please show the first five lines of notes.txt", {"path": "notes.txt", "head": 5}),
        ("What are the last 3 lines of /workspace/notes.txt?", {"path": "/workspace/notes.txt", "tail": 3}),
        ("Give me the top 12 lines of `docs/a.md`.", {"path": "docs/a.md", "head": 12}),
        ("Read the whole file /workspace/notes.txt", {"path": "/workspace/notes.txt"}),
        ("读取 /workspace/notes.txt 的前5行", {"path": "/workspace/notes.txt", "head": 5}),
        ("看一下notes.txt最后3行", {"path": "notes.txt", "tail": 3}),
        ("Read /workspace/notes.txt. I only need the first line.", {"path": "/workspace/notes.txt", "head": 1}),
        ("Show /data/2024/report-7.txt", {"path": "/data/2024/report-7.txt"}),  # numbers in a path are no range
        # a span of lines: read from the top down to its last line; the answer cuts the span out
        ("Show lines 3 to 5 of /workspace/notes.txt", {"path": "/workspace/notes.txt", "head": 5}),
        ("Show line 3 through line 12 of notes.txt", {"path": "notes.txt", "head": 12}),
        ("Read lines 4-6 of notes.txt", {"path": "notes.txt", "head": 6}),
        ("What is between lines two and five of notes.txt?", {"path": "notes.txt", "head": 5}),
        ("What does line 4 of /workspace/notes.txt say?", {"path": "/workspace/notes.txt", "head": 4}),
        ("Show lines 1 to 5 of notes.txt", {"path": "notes.txt", "head": 5}),  # from line 1: a head count
        ("Show line 1 of notes.txt", {"path": "notes.txt", "head": 1}),
    ],
)
def test_ranges_and_paths_come_from_the_request(client, prompt, arguments):
    assert calls_of(ask(client, prompt)) == [("fs__read_text_file", arguments)]


def test_two_paths_give_two_calls_with_their_own_ranges(client):
    response = ask(client, "Show the first 5 lines of a.txt and the last 3 lines of b.txt")
    assert calls_of(response) == [
        ("fs__read_text_file", {"path": "a.txt", "head": 5}),
        ("fs__read_text_file", {"path": "b.txt", "tail": 3}),
    ]
    assert len({item.call_id for item in response.output}) == 2


def test_parallel_tool_calls_false_gives_one_call_then_the_next(client):
    text = "Show the first 5 lines of a.txt and the last 3 lines of b.txt"
    first = ask(client, text, parallel_tool_calls=False)
    assert calls_of(first) == [("fs__read_text_file", {"path": "a.txt", "head": 5})]
    assert first.parallel_tool_calls is False
    call = first.output[0]
    context = [{"role": "user", "content": text}, call.to_dict(),
               {"type": "function_call_output", "call_id": call.call_id, "output": "a1"}]
    second = client.responses.create(model=MODEL, input=context, tools=[reader_tool()], parallel_tool_calls=False)
    assert calls_of(second) == [("fs__read_text_file", {"path": "b.txt", "tail": 3})]
    assert second.output[0].call_id != call.call_id


def test_no_path_asks_which_file(client):
    response = ask(client, "Can you read my notes file?", tool_choice="auto")
    assert calls_of(response) == []
    assert response.output_text == "Which file should I read? Please give me its path; I won't guess one."


def test_a_required_call_without_a_path_carries_an_empty_one_never_a_guess(client):
    # The real API guarantees a call under "required": with nothing to fill it, the path is empty.
    response = ask(client, "Can you read my notes file?", tool_choice="required")
    assert calls_of(response) == [("fs__read_text_file", {"path": ""})]
    strict = ask(client, "Can you read my notes file?", tools=[reader_tool(strict=True)], tool_choice="required")
    assert calls_of(strict) == [("fs__read_text_file", {"path": "", "head": None, "tail": None})]


def test_a_forced_tool_gets_empty_values_of_its_types(client):
    properties = {"topic": {"type": "string"}, "count": {"type": "integer"}, "urgent": {"type": "boolean"},
                  "tags": {"type": "array", "items": {"type": "string"}}, "note": {"type": ["string", "null"]}}
    tool = function_tool("save_gap", properties, ["topic", "count", "urgent", "tags"])
    response = ask(client, "Hello", tools=[tool], tool_choice={"type": "function", "name": "save_gap"})
    assert calls_of(response) == [("save_gap", {"topic": "", "count": 0, "urgent": False, "tags": []})]


def test_a_forcing_tool_choice_forces_a_call_after_the_results_too(client):
    task = "Show the first 2 lines of notes.txt"
    first = ask(client, task)
    [call] = first.output
    context = [{"role": "user", "content": task}, call.to_dict(),
               {"type": "function_call_output", "call_id": call.call_id, "output": NOTES}]
    for tool_choice in ("required", {"type": "function", "name": "fs__read_text_file"}):
        again = client.responses.create(model=MODEL, input=context, tools=[reader_tool()], tool_choice=tool_choice)
        assert calls_of(again) == [("fs__read_text_file", {"path": "notes.txt", "head": 2})]
    answer = client.responses.create(model=MODEL, input=context, tools=[reader_tool()], tool_choice="auto")
    assert calls_of(answer) == [] and "alpha" in answer.output_text


def test_a_range_without_any_path_asks_instead_of_crashing(client):
    response = ask(client, "Show me the first 5 lines")
    assert response.output_text == "Which file should I read? Please give me its path; I won't guess one."


def test_tool_choice_none_never_calls(client):
    response = ask(client, "Show the first 20 lines of /workspace/notes.txt", tool_choice="none")
    assert calls_of(response) == []
    assert "/workspace/notes.txt" in response.output_text and "won't guess" in response.output_text


def test_tool_choice_named_forces_that_tool(client):
    tools = [reader_tool("fs__read_text_file"), reader_tool("ref__read_text_file")]
    choice = {"type": "function", "name": "ref__read_text_file"}
    response = ask(client, "Show the last 2 lines of notes.txt", tools=tools, tool_choice=choice)
    assert calls_of(response) == [("ref__read_text_file", {"path": "notes.txt", "tail": 2})]


def test_named_tool_without_path_is_called_with_empty_values(client):
    listing = function_tool("list_allowed_directories", {})
    response = ask(client, "hello", tools=[listing], tool_choice={"type": "function", "name": listing["name"]})
    assert calls_of(response) == [("list_allowed_directories", {})]
    search = function_tool("search_notes", {"query": {"type": "string"}}, ["query"])
    for choice in ({"type": "function", "name": "search_notes"}, "required"):
        response = ask(client, "hello", tools=[search], tool_choice=choice)
        assert calls_of(response) == [("search_notes", {"query": ""})]


def test_allowed_tools_limits_the_choice(client):
    tools = [reader_tool("fs__read_text_file"), reader_tool("ref__read_text_file")]
    allowed = [{"type": "function", "name": "ref__read_text_file"}]
    choice = {"type": "allowed_tools", "mode": "required", "tools": allowed}
    response = ask(client, "Show notes.txt", tools=tools, tool_choice=choice)
    assert calls_of(response) == [("ref__read_text_file", {"path": "notes.txt"})]


def test_no_tools_or_no_file_request_gives_plain_text(client):
    for prompt, tools in [("What is MCP?", None), ("hello", None), ("Show /workspace/notes.txt", [])]:
        response = ask(client, prompt, tools=tools)
        assert calls_of(response) == [] and response.output_text
    assert "no file-reading tool" in ask(client, "Show /workspace/notes.txt", tools=[]).output_text


def test_a_differently_named_reader_gets_only_the_fields_it_declares(client):
    tool = function_tool("read_file", {"path": {"type": "string"}})
    response = ask(client, "Show the first 5 lines of notes.txt", tools=[tool])
    assert calls_of(response) == [("read_file", {"path": "notes.txt"})]  # no head: the schema has none


def test_a_strict_tool_gets_every_property_with_nulls(client):
    response = ask(client, "Show the first 20 lines of /workspace/notes.txt", tools=[reader_tool(strict=True)])
    assert response.output[0].arguments == '{"path":"/workspace/notes.txt","head":20,"tail":null}'


@pytest.mark.parametrize(
    ("prompt", "name"),
    [
        ("Show notes.txt", "fs__read_text_file"),  # nothing named: the first declared
        ("Show notes.txt using ref__read_text_file", "ref__read_text_file"),
        ("Show notes.txt with the ref server", "ref__read_text_file"),
    ],
)
def test_alias_named_in_the_request_is_preferred(client, prompt, name):
    tools = [reader_tool("fs__read_text_file"), reader_tool("ref__read_text_file")]
    assert calls_of(ask(client, prompt, tools=tools)) == [(name, {"path": "notes.txt"})]


def test_reference_server_tool_list_picks_the_text_reader(client):
    path = {"path": {"type": "string"}}
    tools = [function_tool("fs__get_file_info", path), function_tool("fs__read_media_file", path),
             function_tool("fs__read_multiple_files", {"paths": {"type": "array"}}),
             function_tool("fs__write_file", path),
             function_tool("fs__read_text_file", {**path, "head": {"type": "number"}})]
    assert calls_of(ask(client, "Show the first 3 lines of notes.txt", tools=tools)) == [
        ("fs__read_text_file", {"path": "notes.txt", "head": 3})
    ]


def test_a_pydantic_strict_tool_gets_nulls_too(client):
    from pydantic import BaseModel

    class ReadTextFile(BaseModel):
        path: str
        head: int | None = None
        tail: int | None = None

    tool = openai.pydantic_responses_function_tool(ReadTextFile, name="fs__read_text_file")
    response = ask(client, "Show the last 4 lines of notes.txt", tools=[tool])
    assert response.output[0].arguments == '{"path":"notes.txt","head":null,"tail":4}'


# ---- the second request: answering from results --------------------------------------------------


def test_answer_quotes_the_exact_tool_output(client):
    response = feed_back(client, "Show the first 20 lines of /workspace/notes.txt", NOTES)
    assert response.output_text == (
        f"Here are the first 20 lines of /workspace/notes.txt, as returned by fs__read_text_file:\n\n{NOTES}"
    )
    assert calls_of(response) == []


@pytest.mark.parametrize(
    ("prompt", "output", "text"),
    [
        ("Show lines 2 to 3 of /workspace/notes.txt", NOTES,
         "Here are lines 2 to 3 of /workspace/notes.txt, cut from what fs__read_text_file returned (it cannot read "
         "only those lines):\n\nbeta\ngamma"),
        ("What does line 2 of /workspace/notes.txt say?", "alpha\nbeta",
         "Here is line 2 of /workspace/notes.txt, cut from what fs__read_text_file returned (it cannot read only "
         "that line):\n\nbeta"),
        ("Show lines 2 to 9 of /workspace/notes.txt", NOTES,
         "Here are lines 2 to 3 of /workspace/notes.txt, cut from what fs__read_text_file returned (it cannot read "
         "only those lines):\n\nbeta\ngamma\n\n/workspace/notes.txt has only 3 lines as fs__read_text_file returned it."),
        ("Show line 7 of /workspace/notes.txt", NOTES,
         "/workspace/notes.txt has only 3 lines as fs__read_text_file returned it, so there is no line 7."),
        ("Show line 7 of /workspace/notes.txt", "alpha",
         "/workspace/notes.txt has only 1 line as fs__read_text_file returned it, so there is no line 7."),
    ],
)
def test_a_span_of_lines_is_cut_from_what_the_tool_returned_and_said_so(client, prompt, output, text):
    assert feed_back(client, prompt, output).output_text == text


def test_a_span_whose_call_the_app_changed_is_described_as_it_was_read(client):
    text = "Show lines 3 to 5 of /workspace/notes.txt"
    call = ask(client, text).output[0].to_dict()
    call["arguments"] = '{"path":"/workspace/notes.txt","tail":2}'  # the app chose another range
    context = [{"role": "user", "content": text}, call,
               {"type": "function_call_output", "call_id": call["call_id"], "output": "l4\nl5"}]
    response = client.responses.create(model=MODEL, input=context, tools=[reader_tool()])
    assert response.output_text == (
        "Here are the last 2 lines of /workspace/notes.txt, as returned by fs__read_text_file:\n\nl4\nl5")


@pytest.mark.parametrize("head", ["20", 0, 2.5, True])
def test_a_head_that_is_no_count_is_named_as_sent_never_read_as_the_whole_file(client, head):
    text = "Show the first 20 lines of /workspace/notes.txt"
    call = ask(client, text).output[0].to_dict()
    call["arguments"] = json.dumps({"path": "/workspace/notes.txt", "head": head})  # as a learner's code may send it
    refused = json.dumps({"ok": False, "error": {"code": "INVALID_INPUT", "message": "head: expected an integer"}})
    context = [{"role": "user", "content": text}, call,
               {"type": "function_call_output", "call_id": call["call_id"], "output": refused}]
    answer = client.responses.create(model=MODEL, input=context, tools=[reader_tool()]).output_text
    assert answer.startswith("The tool fs__read_text_file reported an error when asked for /workspace/notes.txt "
                             f"with head {json.dumps(head)}.\nError code: INVALID_INPUT")
    assert "contents" not in answer.splitlines()[0]


def test_answer_accepts_the_typed_call_item_and_ok_data_envelope(client):
    text = "Show the last 3 lines of notes.txt"
    call = ask(client, text).output[0]
    output = json.dumps({"ok": True, "data": {"text": NOTES}})
    context = [{"role": "user", "content": text}, call,
               {"type": "function_call_output", "call_id": call.call_id, "output": output}]
    response = client.responses.create(model=MODEL, input=context, tools=[reader_tool()])
    assert response.output_text.endswith(f"as returned by fs__read_text_file:\n\n{NOTES}")


@pytest.mark.parametrize(
    "output",
    [
        json.dumps({"ok": False, "error": {"code": "NOT_FOUND", "message": "no such file", "kind": "tool"}}),
        json.dumps({"isError": True, "code": "NOT_FOUND", "content": [{"type": "text", "text": "no such file"}]}),
        json.dumps({"error": {"code": "NOT_FOUND", "message": "no such file"}}),
    ],
)
def test_error_outputs_are_reported_as_errors(client, output):
    response = feed_back(client, "Show the first 20 lines of /workspace/notes.txt", output)
    # Only the course's own envelope ({"ok": false, ...}, whose retryable drives the host's retries)
    # goes without a line on what to try next.
    advice = "" if '"ok": false' in output else ("\nWhat to try next: check the path (the file may have moved "
                                                 "or been renamed) and ask again with the right one.")
    assert response.output_text == (
        "The tool fs__read_text_file reported an error when asked for the first 20 lines of /workspace/notes.txt.\n"
        "Error code: NOT_FOUND\nError message: no such file\n"
        "I could not read the file, so I won't say anything about what it contains." + advice
    )
    assert "Here are" not in response.output_text


def test_an_error_passed_on_as_plain_text_is_still_an_error(client):
    response = feed_back(client, "Show notes.txt", "Error: ENOENT: no such file or directory")
    assert response.output_text.startswith("The tool fs__read_text_file reported an error when asked for the contents")
    assert "Error message: Error: ENOENT: no such file or directory" in response.output_text


def test_several_results_are_answered_in_order_one_paragraph_each(client):
    text = "Show the first 5 lines of a.txt and the last 3 lines of b.txt"
    calls = ask(client, text).output
    error = json.dumps({"ok": False, "error": {"code": "DENIED", "message": "outside the workspace"}})
    context = [{"role": "user", "content": text}, *[call.to_dict() for call in calls],
               {"type": "function_call_output", "call_id": calls[0].call_id, "output": "a1\na2"},
               {"type": "function_call_output", "call_id": calls[1].call_id, "output": error}]
    answer = client.responses.create(model=MODEL, input=context, tools=[reader_tool()]).output_text
    assert answer.startswith("Here are the first 5 lines of a.txt, as returned by fs__read_text_file:\n\na1\na2\n\n")
    assert "reported an error when asked for the last 3 lines of b.txt.\nError code: DENIED" in answer


def test_results_of_edited_arguments_are_answered_not_called_again(client):
    text = "Show the first 20 lines of /workspace/notes.txt"
    call = ask(client, text).output[0].to_dict()
    call["arguments"] = '{"path":"/workspace/notes.txt","head":5}'  # the app changed the value: 20 -> 5
    context = [{"role": "user", "content": text}, call,
               {"type": "function_call_output", "call_id": call["call_id"], "output": "l1\nl2\nl3\nl4\nl5"}]
    response = client.responses.create(model=MODEL, input=context, tools=[reader_tool()])
    assert response.output_text.startswith("Here are the first 5 lines of /workspace/notes.txt")  # what was read


def test_two_identical_requests_get_the_same_answer_under_fresh_ids():
    body = {"model": MODEL, "input": "Show the first 20 lines of /workspace/notes.txt", "tools": [reader_tool()]}
    request = httpx.Request("POST", "http://offline/v1/responses", json=body)
    first, second = handle(request).json(), handle(request).json()
    # A real API mints new ids for every response: a "new" request never returns an earlier call_id.
    assert first["id"] != second["id"] and first["output"][0]["call_id"] != second["output"][0]["call_id"]
    assert first["output"][0]["id"] != second["output"][0]["id"]
    assert renumbered(first) == renumbered(second)  # the same response, ids aside


def test_a_fresh_instance_replays_the_same_ids_byte_for_byte():
    body = {"model": MODEL, "input": "Show the first 20 lines of /workspace/notes.txt", "tools": [reader_tool()]}

    def run() -> list[bytes]:
        with httpx.Client(transport=offline_transport()) as http:  # one model instance: its own count
            return [http.post("http://offline/v1/responses", json=body).content for _ in range(3)]

    first, again = run(), run()
    assert first == again and len(set(first)) == 3  # fresh within a run, the same sequence every run


def test_each_instance_counts_its_own_requests_whatever_the_others_do():
    body = {"model": MODEL, "input": "hello"}
    with httpx.Client(transport=offline_transport()) as one, httpx.Client(transport=offline_transport()) as two:
        a = one.post("http://offline/v1/responses", json=body).json()["id"]
        handle(httpx.Request("POST", "http://offline/v1/responses", json=body))  # the process's own count
        two.post("http://offline/v1/responses", json=body)
        b = one.post("http://offline/v1/responses", json=body).json()["id"]
    with httpx.Client(transport=offline_transport()) as fresh:
        assert [fresh.post("http://offline/v1/responses", json=body).json()["id"] for _ in range(2)] == [a, b]


# ---- 400s, as the real API gives them -------------------------------------------------------------


def call_item(call_id: str = "call_1", arguments: Any = '{"path":"a.txt"}') -> dict:
    return {"type": "function_call", "call_id": call_id, "name": "fs__read_text_file", "arguments": arguments}


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"input": "hi"}, "Missing required parameter: 'model'."),
        (
            {"model": MODEL, "input": [{"role": "user", "content": "a.txt"}, call_item(arguments={"path": "a.txt"})]},
            "Invalid type for 'input[1].arguments': expected a string, but got an object instead.",
        ),
        (
            {"model": MODEL, "input": [{"type": "function_call_output", "call_id": "call_x", "output": "x"}]},
            "No tool call found for function call output with call_id call_x.",
        ),
        ({"model": MODEL, "input": [call_item()]}, "No tool output found for function call call_1."),
        ({"model": MODEL, "input": [{"type": "telepathy"}]}, "Invalid value: 'telepathy'."),
        (
            {"model": MODEL, "input": "hi", "tools": [reader_tool()], "tool_choice": {"type": "function", "name": "x"}},
            "Tool choice 'function' with name 'x' not found in 'tools' parameter.",
        ),
        ({"model": MODEL, "input": "hi", "previous_response_id": "resp_1"}, "Previous response with id 'resp_1' not found."),
    ],
)
def test_malformed_requests_get_a_400(client, body, message):
    with pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(**body)
    assert caught.value.status_code == 400
    assert message in caught.value.message
    with pytest.raises(BadRequest) as direct:
        respond(body)
    assert message in direct.value.message and direct.value.to_body()["error"]["type"] == "invalid_request_error"


def test_other_paths_methods_and_bad_json():
    assert handle(httpx.Request("POST", "http://offline/v1/embeddings", json={})).status_code == 404
    assert handle(httpx.Request("GET", "http://offline/v1/responses")).status_code == 405
    bad = handle(httpx.Request("POST", "http://offline/v1/responses", content=b"{not json"))
    assert bad.status_code == 400 and "JSON" in bad.json()["error"]["message"]


# ---- the HTTP server -------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_http_server_answers_and_exits_cleanly(stop):
    port = free_port()
    root = Path(__file__).resolve().parents[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "course_lib.offline_model", "--port", str(port)],
        cwd=root, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
                time.sleep(0.05)
        base = f"http://127.0.0.1:{port}/v1"
        body = {"model": MODEL, "input": "Show the first 20 lines of /workspace/notes.txt", "tools": [reader_tool()]}
        with httpx.Client(trust_env=False, timeout=10) as http:
            raw = http.post(f"{base}/responses", json=body)
            assert raw.status_code == 200 and raw.json()["output"][0]["type"] == "function_call"
            assert http.get(f"{base}/embeddings").status_code == 404  # /models exists now (envelopes)
        with openai.OpenAI(base_url=base, api_key="x", max_retries=0, timeout=10, _strict_response_validation=True,
                           http_client=httpx.Client(trust_env=False)) as remote:
            response = remote.responses.create(**body)
        # Same body, same answer, in-process or over HTTP; the second request has ids of its own.
        assert response.id != raw.json()["id"] and renumbered(response.to_dict()) == renumbered(raw.json())
        assert response.output[0].arguments == '{"path":"/workspace/notes.txt","head":20}'
    finally:
        server.send_signal(stop)  # SIGINT is what Ctrl-C sends
        try:
            _, errors = server.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.communicate()
            raise
    assert server.returncode == 0
    assert f"listening on http://127.0.0.1:{port}/v1" in errors


def test_a_strict_tool_with_a_blindly_copied_schema_is_refused_like_the_real_api():
    copied = {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "number"}}, "required": ["path"]}
    tool = {"type": "function", "name": "fs__read_text_file", "parameters": copied, "strict": True}
    with pytest.raises(BadRequest) as info:
        respond({"model": "gpt-4.1", "input": "Show notes.txt", "tools": [tool]})
    assert info.value.message.startswith("Invalid schema for function 'fs__read_text_file': ")
    assert "Missing 'head'" in info.value.message
