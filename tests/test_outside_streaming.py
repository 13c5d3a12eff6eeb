"""Outside frameworks stream too: the OpenAI Agents SDK's `Runner.run_streamed` and pydantic-ai's
`agent.run_stream` against the offline model over HTTP (`stream: true`), with our files server
over stdio. Each must see the call arrive in pieces and end with the same grounded answers as
their unstreamed runs (tests/test_outside_frameworks.py, whose server and cases these reuse), and
with a structured output type the same real values as unstreamed, the JSON or the output tool's
arguments arriving in pieces."""

import asyncio
import json
import sys

import pytest

from tests.test_outside_frameworks import CASES, EXPECTED, FS_ARGS, ROOT, FileRead, agents_model, base_url, check
from tests.test_outside_frameworks import openai_client

__all__ = ["base_url"]  # the fixture: the offline model as a real local HTTP server


def test_agents_sdk_run_streamed_sees_the_arguments_in_pieces_and_answers_grounded(base_url):
    from agents import Agent, Runner
    from agents.mcp import MCPServerStdio

    async def main():
        params = {"command": sys.executable, "args": FS_ARGS, "cwd": str(ROOT)}
        async with openai_client(base_url) as client, MCPServerStdio(params=params, cache_tools_list=True) as server:
            agent = Agent(name="reader", mcp_servers=[server], model=agents_model(client))
            runs = {}
            for case in CASES:
                result = Runner.run_streamed(agent, CASES[case][0])
                raw = [event.data async for event in result.stream_events() if event.type == "raw_response_event"]
                runs[case] = (result, raw)
            return runs

    runs = asyncio.run(main())
    for case, (result, raw) in runs.items():
        check(case, result.final_output)
        kinds = [event.type for event in raw]
        assert kinds.count("response.created") == 2 and kinds.count("response.completed") == 2  # call, then answer
        deltas = [event.delta for event in raw if event.type == "response.function_call_arguments.delta"]
        done = next(event for event in raw if event.type == "response.function_call_arguments.done")
        assert len(deltas) >= 5 and "".join(deltas) == done.arguments and json.loads(done.arguments)["path"]
        text = "".join(event.delta for event in raw if event.type == "response.output_text.delta")
        assert text == result.final_output


def test_pydantic_ai_run_stream_streams_the_final_answer_after_the_tool_result(base_url):
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
            runs = {}
            async with agent:
                for case in CASES:
                    async with agent.run_stream(CASES[case][0]) as result:
                        pieces = [piece async for piece in result.stream_text(delta=True, debounce_by=None)]
                        runs[case] = (pieces, await result.get_output(), result.all_messages())
            return runs

    runs = asyncio.run(main())
    for case, (pieces, output, messages) in runs.items():
        check(case, output)
        assert len(pieces) > 5 and "".join(pieces) == output  # the answer arrived in pieces
        calls = [part for message in messages for part in message.parts if part.part_kind == "tool-call"]
        assert len(calls) == 1 and json.loads(calls[0].args_as_json_str())["path"]  # assembled from its deltas


# ---- structured output, streamed ------------------------------------------------------------------


@pytest.mark.parametrize("case", EXPECTED)
def test_agents_sdk_run_streamed_with_output_type_holds_the_real_read(base_url, case):
    from agents import Agent, Runner
    from agents.mcp import MCPServerStdio

    async def main():
        params = {"command": sys.executable, "args": FS_ARGS, "cwd": str(ROOT)}
        async with openai_client(base_url) as client, MCPServerStdio(params=params, cache_tools_list=True) as server:
            agent = Agent(name="reader", mcp_servers=[server], model=agents_model(client), output_type=FileRead)
            result = Runner.run_streamed(agent, CASES[case][0])
            raw = [event.data async for event in result.stream_events() if event.type == "raw_response_event"]
            return result, raw

    result, raw = asyncio.run(main())
    assert result.final_output == EXPECTED[case]
    text = "".join(event.delta for event in raw if event.type == "response.output_text.delta")
    assert FileRead.model_validate_json(text) == EXPECTED[case]  # the JSON arrived in pieces


@pytest.mark.parametrize("case", EXPECTED)
def test_pydantic_ai_run_stream_with_an_output_tool_holds_the_real_read(base_url, case):
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
            agent = Agent(model, toolsets=[toolset], output_type=FileRead)
            async with agent, agent.run_stream(CASES[case][0]) as result:
                partial = [output async for output in result.stream_output(debounce_by=None)]
                return partial, await result.get_output()

    partial, output = asyncio.run(main())
    assert output == EXPECTED[case] and partial[-1] == EXPECTED[case]
