"""Outside frameworks over Chat Completions: the OpenAI Agents SDK in its Chat Completions mode
(`OpenAIChatCompletionsModel`) and pydantic-ai's chat model (`OpenAIChatModel`) drive the offline
model's `POST /v1/chat/completions` over real HTTP, with our files server over stdio. Every answer
must be grounded, as in tests/test_outside_frameworks.py (which drives them over Responses), and so
must every structured answer: the Agents SDK's `output_type`, pydantic-ai's tool output and
`NativeOutput`, openai's `chat.completions.parse` and LangChain's `with_structured_output` hold the
real read's lines, or no success at all for a refused one."""

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_outside_frameworks import CASES as READS
from tests.test_outside_frameworks import EXPECTED, READ_TOOL, FileRead, agents_structured, langchain_structured
from tests.test_outside_frameworks import pydantic_ai_structured, real_read

EXPECTED_TASKS = {case: READS[case][0] for case in EXPECTED}

ROOT = Path(__file__).resolve().parents[1]
WORKSPACE = ROOT / "fixtures" / "workspace"
FS_ARGS = ["-m", "course_lib.fs_server", "--root", str(WORKSPACE)]
FIVE_LINES = "".join((WORKSPACE / "notes.txt").read_text().splitlines(keepends=True)[:5])

CASES = {  # request → what the answer must contain, and must not
    "good": ("Show the first 5 lines of /workspace/notes.txt",
             [f"as returned by read_text_file:\n\n{FIVE_LINES}"], ['{"path"', "Error"]),
    "refused": ("Show the first 5 lines of /etc/passwd",
                ["reported an error", "FORBIDDEN", "path is outside /workspace"], ["Here are"]),
}  # fmt: skip


@pytest.fixture(scope="module")
def base_url():
    """The offline model as a real local HTTP server on a free port."""
    server = subprocess.Popen([sys.executable, "-m", "course_lib.offline_model", "--port", "0"], cwd=ROOT,
                              stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        found = re.search(r"http://127\.0\.0\.1:(\d+)/v1", server.stderr.readline())
        assert found, "the offline model did not start"
        yield f"http://127.0.0.1:{found.group(1)}/v1"
    finally:
        server.terminate()
        server.wait(timeout=10)
        server.stderr.close()


def check(case, answer):
    _, present, absent = CASES[case]
    for text in present:
        assert text in answer, f"{case}: {text!r} missing from {answer!r}"
    for text in absent:
        assert text not in answer, f"{case}: {text!r} in {answer!r}"


def openai_client(base_url):
    from openai import AsyncOpenAI

    return AsyncOpenAI(base_url=base_url, api_key="offline", max_retries=0)


def test_agents_sdk_chat_completions_mode_answers_grounded(base_url):
    from agents import Agent, Runner, set_tracing_disabled
    from agents.mcp import MCPServerStdio
    from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel

    set_tracing_disabled(True)  # traces would go to the OpenAI platform

    async def main():
        params = {"command": sys.executable, "args": FS_ARGS, "cwd": str(ROOT)}
        async with openai_client(base_url) as client, MCPServerStdio(params=params, cache_tools_list=True) as server:
            model = OpenAIChatCompletionsModel(model="gpt-4.1", openai_client=client)
            agent = Agent(name="reader", mcp_servers=[server], model=model)
            results = {case: await Runner.run(agent, CASES[case][0]) for case in CASES}
            streamed = Runner.run_streamed(agent, CASES["good"][0])  # streamed chunks, tool-call deltas
            async for _ in streamed.stream_events():
                pass
            return results, streamed

    results, streamed = asyncio.run(main())
    for case, result in results.items():
        check(case, result.final_output)
    check("good", streamed.final_output)
    calls = [item.raw_item for item in results["good"].new_items if item.type == "tool_call_item"]
    assert [call.name for call in calls] == ["read_text_file"]


def test_pydantic_ai_chat_model_answers_grounded(base_url):
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    async def main():
        async with openai_client(base_url) as client:
            model = OpenAIChatModel("gpt-4.1", provider=OpenAIProvider(openai_client=client))
            toolset = MCPToolset(Client(StdioTransport(command=sys.executable, args=FS_ARGS, cwd=str(ROOT))))
            agent = Agent(model, toolsets=[toolset])
            async with agent:
                results = {case: await agent.run(CASES[case][0]) for case in CASES}
                async with agent.run_stream(CASES["good"][0]) as stream:
                    streamed = await stream.get_output()
                return results, streamed

    results, streamed = asyncio.run(main())
    for case, result in results.items():
        check(case, result.output)
    check("good", streamed)


# ---- structured output over Chat Completions ----------------------------------------------------


@pytest.mark.parametrize("case", EXPECTED)
def test_agents_sdk_output_type_over_chat_completions_holds_the_real_read(base_url, case):
    from agents import set_tracing_disabled
    from agents.models.openai_chatcompletions import OpenAIChatCompletionsModel

    set_tracing_disabled(True)
    output, _ = agents_structured(base_url, lambda client: OpenAIChatCompletionsModel(model="gpt-4.1", openai_client=client),
                                  case)  # fmt: skip
    assert output == EXPECTED[case]  # response_format json_schema, parsed and validated by the SDK


@pytest.mark.parametrize("case", EXPECTED)
@pytest.mark.parametrize("native", [False, True], ids=["tool output", "NativeOutput"])
def test_pydantic_ai_structured_output_over_chat_holds_the_real_read(base_url, case, native):
    from pydantic_ai import NativeOutput
    from pydantic_ai.models.openai import OpenAIChatModel

    result = pydantic_ai_structured(OpenAIChatModel, base_url, NativeOutput(FileRead) if native else FileRead, case)
    assert result.output == EXPECTED[case]
    assert sum(message.kind == "response" for message in result.all_messages()) == 2


@pytest.mark.parametrize("case", EXPECTED)
def test_openai_chat_parse_holds_the_real_read(base_url, case):
    from openai import OpenAI

    reader = {"type": "function", "function": {k: READ_TOOL[k] for k in ("name", "description", "parameters", "strict")}}
    with OpenAI(base_url=base_url, api_key="offline", max_retries=0) as client:
        messages = [{"role": "user", "content": EXPECTED_TASKS[case]}]
        first = client.chat.completions.parse(model="gpt-4.1", messages=messages, tools=[reader], response_format=FileRead)
        [call] = first.choices[0].message.tool_calls
        messages += [first.choices[0].message.model_dump(exclude_none=True, exclude={"parsed"}),
                     {"role": "tool", "tool_call_id": call.id, "content": real_read(call.function.parsed_arguments)}]
        final = client.chat.completions.parse(model="gpt-4.1", messages=messages, tools=[reader], response_format=FileRead)
    assert final.choices[0].message.parsed == EXPECTED[case]


@pytest.mark.parametrize("case", EXPECTED)
@pytest.mark.parametrize("method", ["json_schema", "function_calling"])
def test_langchain_with_structured_output_over_chat_holds_the_real_read(base_url, case, method):
    assert langchain_structured(base_url, case, method=method, responses=False) == EXPECTED[case]
