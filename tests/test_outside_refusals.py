"""The refusal corpus: what real servers and frameworks say about a bad read, and the offline model
reading every word of it as a model would — never "Here are the first 5 lines of /etc/passwd"
after "Access denied".

`fixtures/refusal_corpus.json` is recorded, never typed: run this file as a script,

    python -m tests.test_outside_refusals --record        (needs `make node-tools`)

and it runs, for real, three servers — the Node reference filesystem server, a fastmcp server (the
one below, `--fastmcp-server`) and the course's own files server — against the same bad reads
(outside the root, through `..`, a missing file, a directory, head and tail together) and one good
read. It keeps two things:

- `servers`: each server's own result for each call, as the mcp client received it (`content`,
  `structuredContent`, `isError`);
- `forwarded`: what each framework put in front of the model after it ran the call itself, taken
  from the request it sent to the offline model: the OpenAI Agents SDK (`MCPServerStdio`, text and
  `use_structured_content`) and pydantic-ai (`MCPToolset`), each with each server, the model
  choosing the call from the task; and the frameworks' own error texts for a tool that failed
  (the Agents SDK's `default_tool_error_function` and `default_tool_timeout_error_message`,
  pydantic-ai's `{"error": …}` for a retried tool call), made by their own code.

Paths are written as the course writes them: the workspace's real folder becomes `/workspace`
and the repository's `/course`, so no machine path is stored. The tests replay every entry in all
three envelopes and in the shapes hosts send (text only, an MCP result object, Anthropic's
`is_error`), and require an error to be reported as an error, a read to be quoted as its text.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from course_lib.offline_model import respond
from course_lib.offline_model.chat import chat_completion
from course_lib.offline_model.messages import anthropic_message

ROOT = Path(__file__).resolve().parents[1]
WORKSPACE = ROOT / "fixtures" / "workspace"
CORPUS = ROOT / "fixtures" / "refusal_corpus.json"
FIRST_2 = "".join((WORKSPACE / "notes.txt").read_text(encoding="utf-8").splitlines(keepends=True)[:2])


# ---- the servers ---------------------------------------------------------------------------------


def _node_server() -> dict:
    from course_lib.node_tools import reference_server

    params = reference_server(WORKSPACE)
    return {"command": params.command, "args": list(params.args), "cwd": str(WORKSPACE)}


SERVERS = {  # name → (how to start it over stdio, how it writes a path under the root)
    "node-reference": (_node_server, lambda rel: str(WORKSPACE / rel) if rel else str(WORKSPACE)),
    "fastmcp": (lambda: {"command": sys.executable, "args": ["-m", "tests.test_outside_refusals", "--fastmcp-server",
                                                               str(WORKSPACE)], "cwd": str(ROOT)},
                lambda rel: str(WORKSPACE / rel) if rel else str(WORKSPACE)),
    "course-files": (lambda: {"command": sys.executable, "args": ["-m", "course_lib.fs_server", "--root", str(WORKSPACE)],
                              "cwd": str(ROOT)}, lambda rel: f"/workspace/{rel}" if rel else "/workspace"),
}  # fmt: skip

# case → (the path, relative to the root, or an absolute one; head; tail; what the model must say)
CASES = {
    "good": ("notes.txt", 2, None, "ok"),
    "outside": ("/etc/passwd", 5, None, "error"),
    "traversal": ("../secret.txt", 5, None, "error"),
    "missing": ("missing.txt", 5, None, "error"),
    "directory": ("", 5, None, "error"),
    "head and tail": ("notes.txt", 2, 2, "error"),
}
FRAMEWORK_CASES = ("good", "outside", "missing", "directory")  # the ones a task can ask for in words


def _arguments(server: str, case: str) -> dict:
    rel, head, tail = CASES[case][:3]
    path = rel if rel.startswith("/") else SERVERS[server][1](rel)
    return {"path": path, **({"head": head} if head else {}), **({"tail": tail} if tail else {})}


def _task(arguments: dict) -> str:
    return f"Show the first {arguments['head']} lines of {arguments['path']} with read_text_file"


def fastmcp_server(root: Path) -> None:
    """A fastmcp server with the reference server's `read_text_file`, failing the way fastmcp
    tools fail: a `ToolError` with the tool's own words, or an exception fastmcp wraps."""
    import logging

    from fastmcp import FastMCP
    from fastmcp.exceptions import ToolError

    logging.disable(logging.CRITICAL)  # fastmcp logs every tool error with a traceback
    server = FastMCP("files")

    @server.tool
    def read_text_file(path: str, head: int | None = None, tail: int | None = None) -> str:
        """Read a text file under the allowed directory; head or tail gives the first or last lines."""
        resolved = Path(path).resolve()
        if not resolved.is_relative_to(root.resolve()):
            raise ToolError(f"Access denied: {path} is outside the allowed directory {root}")
        if head and tail:
            raise ToolError("Cannot read both head and tail at once")
        lines = resolved.read_text(encoding="utf-8").splitlines(keepends=True)  # FileNotFoundError, IsADirectoryError
        return "".join(lines[:head] if head else lines[-tail:] if tail else lines)

    server.run(show_banner=False, log_level="CRITICAL")


# ---- recording ------------------------------------------------------------------------------------


async def _server_results() -> dict:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    results: dict[str, dict] = {}
    with open(os.devnull, "w") as errlog:
        for name, (start, _) in SERVERS.items():
            params = StdioServerParameters(**start())
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                for case in CASES:
                    arguments = _arguments(name, case)
                    result = await session.call_tool("read_text_file", arguments)
                    results.setdefault(name, {})[case] = {
                        "arguments": arguments,
                        "result": result.model_dump(mode="json", by_alias=True, exclude_none=True,
                                                    include={"content", "structured_content", "is_error"})}  # fmt: skip
    return results


class _Recorder:
    """The offline model in-process, keeping every request body a framework sends it."""

    def __init__(self) -> None:
        import httpx

        from course_lib.offline_model import offline_transport

        self.bodies: list[dict] = []
        inner = offline_transport()

        def answer(request: httpx.Request) -> httpx.Response:
            self.bodies.append(json.loads(request.content))
            return inner.handle_request(request)

        self.transport = httpx.MockTransport(answer)

    def client(self):
        import httpx
        from openai import AsyncOpenAI

        return AsyncOpenAI(api_key="offline", base_url="http://offline-model.invalid/v1", max_retries=0,
                           http_client=httpx.AsyncClient(transport=self.transport))

    def forwarded(self) -> list[tuple[dict, Any]]:
        """(the call, the output as sent back) for every function_call_output the frameworks sent."""
        pairs = []
        for body in self.bodies:
            items = body["input"] if isinstance(body["input"], list) else []
            calls = {item["call_id"]: item for item in items if item.get("type") == "function_call"}
            for item in items:
                if item.get("type") == "function_call_output" and (item["call_id"], item["output"]) not in [
                        (p[0]["call_id"], p[1]) for p in pairs]:  # fmt: skip
                    pairs.append((calls[item["call_id"]], item["output"]))
        return pairs


async def _agents_sdk(server: str, structured: bool) -> list[dict]:
    from agents import Agent, Runner, set_tracing_disabled
    from agents.mcp import MCPServerStdio
    from agents.models.openai_responses import OpenAIResponsesModel

    set_tracing_disabled(True)
    recorder = _Recorder()
    entries = []
    async with recorder.client() as client, MCPServerStdio(params=SERVERS[server][0](), name=server,
                                                           use_structured_content=structured,
                                                           cache_tools_list=True) as mcp:  # fmt: skip
        agent = Agent(name="reader", mcp_servers=[mcp], model=OpenAIResponsesModel(model="gpt-4.1", openai_client=client))
        for case in FRAMEWORK_CASES:
            task = _task(_arguments(server, case))
            await Runner.run(agent, task)
            call, output = recorder.forwarded()[-1]
            entries.append(_entry(server, "openai-agents" + (" structured" if structured else ""), case, task, call, output))
    return entries


async def _pydantic_ai(server: str) -> list[dict]:
    from fastmcp import Client
    from fastmcp.client.transports import StdioTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider

    recorder = _Recorder()
    entries = []
    async with recorder.client() as client:
        model = OpenAIResponsesModel("gpt-4.1", provider=OpenAIProvider(openai_client=client))
        agent = Agent(model, toolsets=[MCPToolset(Client(StdioTransport(**SERVERS[server][0]())))])
        async with agent:
            for case in FRAMEWORK_CASES:
                task = _task(_arguments(server, case))
                await agent.run(task)
                call, output = recorder.forwarded()[-1]
                entries.append(_entry(server, "pydantic-ai", case, task, call, output))
    return entries


def _entry(server: str, host: str, case: str, task: str, call: dict, output: Any) -> dict:
    return {"server": server, "host": host, "case": case, "task": task,
            "call": {"name": call["name"], "arguments": json.loads(call["arguments"])}, "output": output,
            "expect": CASES[case][3]}  # fmt: skip


def _framework_texts() -> list[dict]:
    """The frameworks' own words for a tool that failed, made by their own code."""
    import pydantic
    from agents.tool import default_tool_error_function, default_tool_timeout_error_message
    from pydantic_ai.messages import ToolReturnPart

    class Arguments(pydantic.BaseModel):
        path: str
        head: int | None = None

    try:
        Arguments.model_validate({"path": 5, "head": "five"})
    except pydantic.ValidationError as error:
        details = error.errors(include_url=False, include_context=False)
    retried = ToolReturnPart(tool_name="read_text_file", content=details, outcome="retried").model_response_str()
    call = {"name": "read_text_file", "arguments": {"path": "/workspace/notes.txt", "head": 5}}
    task = _task(call["arguments"])
    return [{"server": None, "host": host, "case": case, "task": task, "call": call, "output": output, "expect": "error"}
            for host, case, output in [
                ("openai-agents", "the tool raised", default_tool_error_function(None, RuntimeError("disk on fire"))),
                ("openai-agents", "the tool timed out",
                 default_tool_timeout_error_message(tool_name="read_text_file", timeout_seconds=5)),
                ("pydantic-ai", "arguments refused by validation", retried)]]  # fmt: skip


def _portable(value: Any) -> Any:
    """`value` with the machine's folders written as the course writes them."""
    text = json.dumps(value, ensure_ascii=False)
    for real, shown in ((str(WORKSPACE), "/workspace"), (str(ROOT), "/course")):
        text = text.replace(json.dumps(real)[1:-1], shown)
    return json.loads(text)


def record() -> dict:
    """Run every server and framework; the corpus as `fixtures/refusal_corpus.json` holds it."""

    async def main() -> dict:
        forwarded = []
        for server in SERVERS:
            forwarded += await _agents_sdk(server, structured=False)
            forwarded += await _agents_sdk(server, structured=True)
            forwarded += await _pydantic_ai(server)
        return {"servers": await _server_results(), "forwarded": forwarded + _framework_texts()}

    return _portable(asyncio.run(main()))


def write(path: Path = CORPUS) -> None:
    path.write_text(json.dumps(record(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


# ---- the tests ------------------------------------------------------------------------------------

READER = {"type": "function", "name": "read_text_file", "description": "Read a text file",
          "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "number"},
                                                          "tail": {"type": "number"}}, "required": ["path"]}}  # fmt: skip


READ_SCHEMA = {"type": "object", "properties": {"ok": {"type": "boolean"}, "text": {"type": ["string", "null"]},
                                              "error": {"type": ["string", "null"]}},
               "required": ["ok", "text", "error"], "additionalProperties": False}  # fmt: skip


def corpus() -> dict:
    return json.loads(CORPUS.read_text(encoding="utf-8"))


def _raw_entries() -> list[dict]:
    """Every server result in the shapes hosts send it: its text alone (the Agents SDK, a fastmcp
    client's `content[0].text`), the MCP result object, and (for Messages) with `is_error`."""
    entries = []
    for server, cases in corpus()["servers"].items():
        for case, recorded in cases.items():
            result, arguments = recorded["result"], recorded["arguments"]
            text = "\n".join(block["text"] for block in result["content"] if block["type"] == "text")
            base = {"server": server, "case": case, "task": _task({"head": 2, **arguments}),
                    "call": {"name": "read_text_file", "arguments": arguments}, "expect": CASES[case][3],
                    "is_error": result.get("isError")}  # fmt: skip
            entries += [{**base, "host": "text only", "output": text},
                        {**base, "host": "MCP result object", "output": json.dumps(result, ensure_ascii=False)}]
    return entries


def _entries() -> list[dict]:
    if not CORPUS.exists():  # being recorded; the first test fails on its absence
        return []
    return corpus()["forwarded"] + _raw_entries()


def _id(entry: dict) -> str:
    return f"{entry['server']}|{entry['host']}|{entry['case']}"


def _answers(entry: dict) -> dict[str, str]:
    """What the offline model answers after this output, in each envelope."""
    call, output = entry["call"], entry["output"]
    arguments = json.dumps(call["arguments"], ensure_ascii=False)
    text = output if isinstance(output, str) else "\n".join(part["text"] for part in output)
    responses = respond({"model": "gpt-4.1", "tools": [READER], "input": [
        {"role": "user", "content": entry["task"]},
        {"type": "function_call", "call_id": "call_1", "name": call["name"], "arguments": arguments},
        {"type": "function_call_output", "call_id": "call_1", "output": output}]})  # fmt: skip
    chat = chat_completion({"model": "gpt-4.1", "tools": [{"type": "function", "function": {
        k: READER[k] for k in ("name", "description", "parameters")}}], "messages": [
        {"role": "user", "content": entry["task"]},
        {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                                              "function": {"name": call["name"], "arguments": arguments}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": text}]})  # fmt: skip
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": text}
    if entry.get("is_error"):
        result["is_error"] = True
    messages = anthropic_message({"model": "claude-sonnet-4-6", "max_tokens": 1024, "tools": [
        {"name": READER["name"], "description": READER["description"], "input_schema": READER["parameters"]}],
        "messages": [{"role": "user", "content": entry["task"]},
                     {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_1", "name": call["name"],
                                                        "input": call["arguments"]}]},
                     {"role": "user", "content": [result]}]})  # fmt: skip
    structured = respond({"model": "gpt-4.1", "tools": [READER], "text": {"format": {
        "type": "json_schema", "name": "read", "strict": True, "schema": READ_SCHEMA}}, "input": [
        {"role": "user", "content": entry["task"]},
        {"type": "function_call", "call_id": "call_1", "name": call["name"], "arguments": arguments},
        {"type": "function_call_output", "call_id": "call_1", "output": output}]})  # fmt: skip
    return {"structured": structured["output"][0]["content"][0]["text"],
            "responses": responses["output"][0]["content"][0]["text"],
            "chat": chat["choices"][0]["message"]["content"],
            "messages": messages["content"][0]["text"]}


def test_the_corpus_holds_every_servers_and_frameworks_real_words():
    data = corpus()
    assert set(data["servers"]) == set(SERVERS) and all(set(cases) == set(CASES) for cases in data["servers"].values())
    hosts = {entry["host"] for entry in data["forwarded"]}
    assert hosts == {"openai-agents", "openai-agents structured", "pydantic-ai"}
    node = data["servers"]["node-reference"]
    assert node["outside"]["result"]["content"][0]["text"].startswith("Access denied - path outside allowed directories")
    assert node["head and tail"]["result"]["content"][0]["text"] == \
        "Cannot specify both head and tail parameters simultaneously"
    assert node["good"]["result"]["structuredContent"] == {"content": FIRST_2.rstrip("\n")}  # its lines, joined
    assert str(ROOT) not in json.dumps(data) and str(Path.home()) not in json.dumps(data)  # no machine path stored


@pytest.mark.parametrize("entry", _entries(), ids=_id)
def test_the_model_misreports_nothing_in_the_corpus(entry):
    answers = _answers(entry)
    value = json.loads(answers.pop("structured"))  # a structured answer: never a success made of a refusal
    assert value["ok"] is (entry["expect"] == "ok") and (value["text"] is None) is (entry["expect"] == "error"), value
    for envelope, answer in answers.items():
        where = f"{_id(entry)} in {envelope}: {answer!r}"
        if entry["expect"] == "error":
            assert f"The tool {entry['call']['name']} reported an error" in answer, where
            assert "Here are" not in answer and "Here is" not in answer, where
            assert "I could not read the file, so I won't say anything about what it contains." in answer, where
        else:
            said = corpus()["servers"][entry["server"]]["good"]["result"]["content"][0]["text"]
            assert answer.startswith("Here are the first 2 lines of"), where
            assert answer.endswith(f":\n\n{said}") and said.startswith(FIRST_2.rstrip("\n")), where  # the text, not JSON
            assert '{"' not in answer, where


def test_the_corpus_is_what_the_servers_and_frameworks_say_now(node_tools, tmp_path):
    write(tmp_path / "corpus.json")
    assert json.loads((tmp_path / "corpus.json").read_text(encoding="utf-8")) == corpus(), \
        "the servers or frameworks say something else now: run python -m tests.test_outside_refusals --record"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m tests.test_outside_refusals")
    parser.add_argument("--record", action="store_true", help=f"record {CORPUS.relative_to(ROOT)} again")
    parser.add_argument("--fastmcp-server", type=Path, metavar="ROOT", help="serve the fastmcp server over stdio")
    options = parser.parse_args()
    if options.fastmcp_server:
        fastmcp_server(options.fastmcp_server)
    elif options.record:
        write()
        print(f"wrote {CORPUS.relative_to(ROOT)}")
    else:
        parser.print_help()
