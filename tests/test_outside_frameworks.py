"""The course's model and servers driven by the tools learners move on to, as they really run:
the OpenAI Agents SDK and pydantic-ai talk to the offline model over HTTP
(`python -m course_lib.offline_model --port 0`) and to our MCP servers over stdio; fastmcp's client
calls both servers. Each host forwards tool results its own way (text only, structured content,
errors wrapped in JSON); every answer must still be grounded: the lines for a good read, an error
with its code for a refused or missing one, never a refusal quoted as file content. Structured
output too (the Agents SDK's `output_type`, pydantic-ai's tool output and `NativeOutput`, openai's
`responses.parse`, LangChain's `with_structured_output`): the framework parses and validates, and
the values are the real read's lines, or no success at all for a refused one. Naming a server
reaches it under each framework's own prefix. (Chat Completions: tests/test_outside_chat.py.)
"""

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
WORKSPACE = ROOT / "fixtures" / "workspace"
FS_ARGS = ["-m", "course_lib.fs_server", "--root", str(WORKSPACE)]
FIVE_LINES = "".join((WORKSPACE / "notes.txt").read_text().splitlines(keepends=True)[:5])

CASES = {  # request → what the answer must contain, and must not
    "good": ("Show the first 5 lines of /workspace/notes.txt",
             [f"Here are the first 5 lines of /workspace/notes.txt, as returned by read_text_file:\n\n{FIVE_LINES}"],
             ['{"path"', "Error"]),
    "refused": ("Show the first 5 lines of /etc/passwd",
                ["reported an error when asked for the first 5 lines of /etc/passwd", "Error code: FORBIDDEN",
                 "Error message: path is outside /workspace", "What to try next:"],
                ["Here are", "{"]),
    "missing": ("Show the first 5 lines of /workspace/missing.txt",
                ["reported an error when asked for the first 5 lines of /workspace/missing.txt", "Error code: NOT_FOUND",
                 "no such file", "What to try next: check the path"],
                ["Here are", "{"]),
}  # fmt: skip


@pytest.fixture(scope="module")
def base_url():
    """The offline model as a real local HTTP server on a free port."""
    server = subprocess.Popen([sys.executable, "-m", "course_lib.offline_model", "--port", "0"], cwd=ROOT,
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        line = server.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:(\d+)/v1", line)
        assert found, f"the offline model did not start: {line!r}"
        yield f"http://127.0.0.1:{found.group(1)}/v1"
    finally:
        server.terminate()
        server.wait(timeout=10)
        server.stderr.close()


def check(case: str, answer: str) -> None:
    _, present, absent = CASES[case]
    for text in present:
        assert text in answer, f"{case}: {text!r} missing from {answer!r}"
    for text in absent:
        assert text not in answer, f"{case}: {text!r} in {answer!r}"


# ---- the OpenAI Agents SDK -------------------------------------------------------------------


def agents_model(client):
    from agents import set_tracing_disabled
    from agents.models.openai_responses import OpenAIResponsesModel

    set_tracing_disabled(True)  # traces would go to the OpenAI platform
    return OpenAIResponsesModel(model="gpt-4.1", openai_client=client)


def openai_client(base_url):
    from openai import AsyncOpenAI

    return AsyncOpenAI(base_url=base_url, api_key="offline", max_retries=0)


@pytest.mark.parametrize("structured", [False, True], ids=["text", "structured"])
def test_agents_sdk_with_our_files_server_answers_every_read_grounded(base_url, structured):
    from agents import Agent, Runner
    from agents.mcp import MCPServerStdio

    async def main():
        params = {"command": sys.executable, "args": FS_ARGS, "cwd": str(ROOT)}
        async with openai_client(base_url) as client, MCPServerStdio(
                params=params, use_structured_content=structured, cache_tools_list=True) as server:
            agent = Agent(name="reader", mcp_servers=[server], model=agents_model(client))
            return {case: (await Runner.run(agent, CASES[case][0])) for case in CASES}

    results = asyncio.run(main())
    for case, result in results.items():
        check(case, result.final_output)
    # What the SDK really sent back (the reason the model must read text): the refusal as a bare
    # line in an input_text part, no isError; with structured content, a read as JSON.
    def wire(case):
        return [item.raw_item["output"] for item in results[case].new_items if item.type == "tool_call_output_item"]

    assert wire("refused") == [[{"type": "input_text", "text": "FORBIDDEN: path is outside /workspace"}]]
    read = json.dumps({"path": "/workspace/notes.txt", "text": FIVE_LINES, "lines": 5})
    assert wire("good") == ([read] if structured else [[{"type": "input_text", "text": FIVE_LINES}]])


def test_agents_sdk_with_our_notes_server_searches_reads_and_saves_a_gap(base_url, tmp_path):
    from agents import Agent, Runner
    from agents.mcp import MCPServerStdio

    async def main():
        params = {"command": sys.executable, "args": ["-m", "course_lib.notes_server", "--gaps", str(tmp_path)],
                  "cwd": str(ROOT)}  # fmt: skip
        async with openai_client(base_url) as client, MCPServerStdio(params=params, cache_tools_list=True) as server:
            agent = Agent(name="notes", mcp_servers=[server], model=agents_model(client))
            answer = await Runner.run(agent, "How does idempotency keep a retried write safe?")
            gap = await Runner.run(agent, "Where is my understanding of agent loops and workflows incomplete? Save a learning gap.")
            return answer, gap

    answer, gap = asyncio.run(main())
    assert answer.final_output.startswith("From your notes:") and "[/notes/idempotency.md:" in answer.final_output  # [path:line]
    assert "Sources:" in answer.final_output
    # The notes server declares idempotency_key as required over MCP: the model fills it, so the save goes through.
    calls = [json.loads(item.raw_item.arguments) for item in gap.new_items
             if item.type == "tool_call_item" and item.raw_item.name == "save_learning_gap"]  # fmt: skip
    assert len(calls) == 1 and calls[0]["idempotency_key"].startswith("key-")
    saved = [item.raw_item["output"] for item in gap.new_items if item.type == "tool_call_output_item"][-1]
    assert json.loads(saved[0]["text"]) == {"record_id": "gap-0001", "replayed": False}
    assert gap.final_output.endswith("Saved the learning gap as record gap-0001."), gap.final_output


# ---- pydantic-ai -------------------------------------------------------------------------------


def test_pydantic_ai_with_our_files_server_answers_every_read_grounded(base_url):
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    async def main():
        async with openai_client(base_url) as client:
            model = OpenAIResponsesModel("gpt-4.1", provider=OpenAIProvider(openai_client=client))
            toolset = MCPToolset(Client(StdioTransport(command=sys.executable, args=FS_ARGS, cwd=str(ROOT))))
            agent = Agent(model, toolsets=[toolset])
            async with agent:
                return {case: await agent.run(CASES[case][0]) for case in CASES}

    results = asyncio.run(main())
    for case, result in results.items():
        check(case, result.output)
    # What pydantic-ai really sent back: structured content for the read; for the refusal the error's
    # text inside a JSON object (the server's error has no structured content: its schema is the success shape).
    returned = [part.model_response_str() for message in results["refused"].all_messages() for part in message.parts
                if part.part_kind == "tool-return"]  # fmt: skip
    assert len(returned) == 1 and json.loads(returned[0]) == {"error": "FORBIDDEN: path is outside /workspace"}


# ---- fastmcp's client, straight to both servers ----------------------------------------------


def test_fastmcp_client_calls_both_servers_over_stdio(tmp_path):
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    async def main():
        files = Client(StdioTransport(command=sys.executable, args=FS_ARGS, cwd=str(ROOT)))
        notes = Client(StdioTransport(command=sys.executable, args=["-m", "course_lib.notes_server", "--gaps", str(tmp_path)],
                                      cwd=str(ROOT)))  # fmt: skip
        async with files, notes:
            file_tools = [tool.name for tool in await files.list_tools()]
            good = await files.call_tool("read_text_file", {"path": "/workspace/notes.txt", "head": 5})
            refused = await files.call_tool("read_text_file", {"path": "/etc/passwd"}, raise_on_error=False)
            missing = await files.call_tool("read_text_file", {"path": "missing.txt"}, raise_on_error=False)
            note_tools = sorted(tool.name for tool in await notes.list_tools())
            hits = await notes.call_tool("search_notes", {"query": "idempotency key", "limit": 3})
            note = await notes.call_tool("read_note", {"path": hits.structured_content["hits"][0]["path"]})
            outside = await notes.call_tool("read_note", {"path": "/etc/passwd"}, raise_on_error=False)
            return file_tools, good, refused, missing, note_tools, hits, note, outside

    file_tools, good, refused, missing, note_tools, hits, note, outside = asyncio.run(main())
    assert file_tools == ["read_text_file"] and note_tools == ["read_note", "save_learning_gap", "search_notes"]
    assert not good.is_error and good.structured_content == {"path": "/workspace/notes.txt", "text": FIVE_LINES, "lines": 5}
    assert good.content[0].text == FIVE_LINES
    assert refused.is_error and refused.content[0].text == "FORBIDDEN: path is outside /workspace"
    assert refused.structured_content is None  # an error is text only: the output schema is the success shape
    assert missing.is_error and missing.content[0].text.startswith("NOT_FOUND: ")
    assert hits.structured_content["hits"][0]["path"] == "/notes/idempotency.md"
    assert not note.is_error and "idempotency" in note.structured_content["text"].lower()
    assert outside.is_error and outside.content[0].text == "FORBIDDEN: path is outside /notes"


# ---- structured output: the framework parses and validates, the values are the real read's ----------


class FileRead(BaseModel):
    """What was read from a file."""

    path: str
    line_count: int
    text: str | None
    ok: bool


EXPECTED = {  # what a structured answer must hold: the real tool's lines, or no success at all
    "good": FileRead(path="/workspace/notes.txt", line_count=5, text=FIVE_LINES, ok=True),
    "refused": FileRead(path="/etc/passwd", line_count=0, text=None, ok=False),
}


def agents_structured(base_url: str, make_model, case: str) -> tuple[FileRead, list]:
    """The Agents SDK with our files server and `output_type=FileRead`; `make_model(client)` its model."""
    from agents import Agent, Runner
    from agents.mcp import MCPServerStdio

    async def main():
        params = {"command": sys.executable, "args": FS_ARGS, "cwd": str(ROOT)}
        async with openai_client(base_url) as client, MCPServerStdio(params=params, cache_tools_list=True) as server:
            agent = Agent(name="reader", mcp_servers=[server], model=make_model(client), output_type=FileRead)
            result = await Runner.run(agent, CASES[case][0])
            return result.final_output, result.new_items

    return asyncio.run(main())


@pytest.mark.parametrize("case", EXPECTED)
def test_agents_sdk_output_type_over_responses_holds_the_real_read(base_url, case):
    output, items = agents_structured(base_url, agents_model, case)
    assert output == EXPECTED[case]  # parsed and validated by the SDK (text.format json_schema, strict)
    assert [item.type for item in items] == ["tool_call_item", "tool_call_output_item", "message_output_item"]


def pydantic_ai_structured(model_class, base_url: str, output_type, case: str):
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.providers.openai import OpenAIProvider

    async def main():
        async with openai_client(base_url) as client:
            model = model_class("gpt-4.1", provider=OpenAIProvider(openai_client=client))
            toolset = MCPToolset(Client(StdioTransport(command=sys.executable, args=FS_ARGS, cwd=str(ROOT))))
            agent = Agent(model, toolsets=[toolset], output_type=output_type)
            async with agent:
                return await agent.run(CASES[case][0])

    return asyncio.run(main())


@pytest.mark.parametrize("case", EXPECTED)
@pytest.mark.parametrize("native", [False, True], ids=["tool output", "NativeOutput"])
def test_pydantic_ai_structured_output_over_responses_holds_the_real_read(base_url, case, native):
    from pydantic_ai import NativeOutput
    from pydantic_ai.models.openai import OpenAIResponsesModel

    result = pydantic_ai_structured(OpenAIResponsesModel, base_url, NativeOutput(FileRead) if native else FileRead, case)
    assert result.output == EXPECTED[case]
    # Two requests: the read, then the answer (the output tool only after the data tool; no loop).
    assert sum(message.kind == "response" for message in result.all_messages()) == 2
    calls = [part.tool_name for message in result.all_messages() for part in message.parts if part.part_kind == "tool-call"]
    assert calls == (["read_text_file"] if native else ["read_text_file", "final_result"])  # pydantic-ai's output tool


def real_read(arguments: dict) -> str:
    """Run a read on our files server for real (fastmcp's client, stdio): the text its result holds."""
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport

    async def main():
        async with Client(StdioTransport(command=sys.executable, args=FS_ARGS, cwd=str(ROOT))) as files:
            return await files.call_tool("read_text_file", arguments, raise_on_error=False)

    return asyncio.run(main()).content[0].text


READ_TOOL = {"type": "function", "name": "read_text_file", "description": "Read a text file", "strict": True,
             "parameters": {"type": "object", "properties": {"path": {"type": "string"},
                                                             "head": {"type": ["integer", "null"]}},
                            "required": ["path", "head"], "additionalProperties": False}}  # fmt: skip


@pytest.mark.parametrize("case", EXPECTED)
def test_openai_responses_parse_holds_the_real_read(base_url, case):
    from openai import OpenAI

    with OpenAI(base_url=base_url, api_key="offline", max_retries=0) as client:
        first = client.responses.parse(model="gpt-4.1", input=CASES[case][0], tools=[READ_TOOL], text_format=FileRead)
        call = first.output[0]
        output = real_read(json.loads(call.arguments))
        context = [{"role": "user", "content": CASES[case][0]},
                   {k: v for k, v in call.to_dict().items() if k != "parsed_arguments"},  # the helper's own field
                   {"type": "function_call_output", "call_id": call.call_id, "output": output}]
        final = client.responses.parse(model="gpt-4.1", input=context, tools=[READ_TOOL], text_format=FileRead)
    assert final.output_parsed == EXPECTED[case] and final.text.format.name == "FileRead"


def langchain_structured(base_url: str, case: str, *, method: str, responses: bool) -> FileRead:
    from langchain_core.messages import HumanMessage, ToolMessage
    from langchain_openai import ChatOpenAI

    llm = ChatOpenAI(model="gpt-4.1", base_url=base_url, api_key="offline", max_retries=0,
                     use_responses_api=responses)  # fmt: skip
    reader = {"type": "function", "function": {k: READ_TOOL[k] for k in ("name", "description", "parameters")}}
    asked = llm.bind_tools([reader]).invoke(CASES[case][0])
    [call] = asked.tool_calls
    messages = [HumanMessage(CASES[case][0]), asked, ToolMessage(real_read(call["args"]), tool_call_id=call["id"])]
    return llm.with_structured_output(FileRead, method=method).invoke(messages)


@pytest.mark.parametrize("case", EXPECTED)
@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_langchain_with_structured_output_over_responses_holds_the_real_read(base_url, case, method):
    assert langchain_structured(base_url, case, method=method, responses=True) == EXPECTED[case]


def test_langchain_asks_for_a_json_schema_response_format_unless_told_otherwise():
    import inspect

    from langchain_openai import ChatOpenAI

    # json_schema (response_format / text.format) by default; function_calling forces a tool named
    # after the schema, which the offline model fills as an output tool.
    assert inspect.signature(ChatOpenAI.with_structured_output).parameters["method"].default == "json_schema"


# ---- naming a server reaches it, under each framework's prefix ------------------------------------

TWO_SERVERS_TASK = "Show the first 5 lines of /workspace/notes.txt with the ref server"


def test_agents_sdk_server_prefixed_names_reach_the_named_server(base_url):
    from agents import Agent, Runner
    from agents.mcp import MCPServerStdio

    async def main():
        def server(name):
            return MCPServerStdio(name=name, cache_tools_list=True, params={
                "command": sys.executable, "args": [*FS_ARGS, "--name", name], "cwd": str(ROOT)})

        async with openai_client(base_url) as client, server("files") as files, server("ref") as ref:
            agent = Agent(name="reader", mcp_servers=[files, ref], model=agents_model(client),
                          mcp_config={"include_server_in_tool_names": True})  # fmt: skip
            return await Runner.run(agent, TWO_SERVERS_TASK)

    result = asyncio.run(main())
    calls = [item.raw_item.name for item in result.new_items if item.type == "tool_call_item"]
    assert calls == ["mcp_ref__read_text_file"]  # the SDK's own prefix: mcp_<server>__<tool>
    assert result.final_output.startswith("Here are the first 5 lines of /workspace/notes.txt, as returned by "
                                          "mcp_ref__read_text_file")  # fmt: skip


def test_pydantic_ai_prefixed_toolsets_reach_the_named_server(base_url):
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    async def main():
        async with openai_client(base_url) as client:
            model = OpenAIResponsesModel("gpt-4.1", provider=OpenAIProvider(openai_client=client))
            toolsets = [MCPToolset(Client(StdioTransport(command=sys.executable, args=FS_ARGS, cwd=str(ROOT)))).prefixed(name)
                        for name in ("files", "ref")]  # fmt: skip
            agent = Agent(model, toolsets=toolsets)
            async with agent:
                return await agent.run(TWO_SERVERS_TASK)

    result = asyncio.run(main())
    calls = [part.tool_name for message in result.all_messages() for part in message.parts if part.part_kind == "tool-call"]
    assert calls == ["ref_read_text_file"]  # pydantic-ai's prefix: <prefix>_<tool>
    assert "as returned by ref_read_text_file" in result.output and FIVE_LINES in result.output
