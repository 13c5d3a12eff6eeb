"""The broken runs behind the trace drills: each one recorded for real, then broken in one place.

Each file in `fixtures/broken_traces/` is a real run — the offline model through the real openai
SDK, the real files MCP server, the real `Executor` — broken deliberately in exactly one place (a
vague tool, a second server, a loop that forgets the result, a blind retry, an "allow everything"
approval, outputs paired by position, a failure passed on as plain text, a model that writes
numbers as strings, one call per round trip). `course_lib.drills` shows them and checks the
learner's diagnoses; this module only records them.

`regenerate()` (`python -m course_lib.drills --regenerate [OUT_DIR]`) records every run again,
and the same code gives byte-identical files (the offline model is deterministic, ids are hashes
or counters, clocks are manual, temporary folders never show).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import httpx
import openai
from anyio.from_thread import start_blocking_portal
from pydantic import BaseModel, ConfigDict

from course_lib.approval import Approvals
from course_lib.arguments import ReadTextFileArgs
from course_lib.backend import OFFLINE_BASE_URL, model_name
from course_lib.execution import Execution, Executor, Session, Tool
from course_lib.fs_server import Workspace, build_server
from course_lib.guarded_loop import run_guarded_loop
from course_lib.host import McpHost, ToolCall
from course_lib.loop import run_loop
from course_lib.offline_model import offline_transport
from course_lib.paths import fixtures_dir, workspace_dir
from course_lib.results import result_text


# ---- recording: a client whose every body is kept, and which may be made to misbehave -------------


class _Recorder(httpx.BaseTransport):
    """The offline model's transport, recording each request/response body. `rewrite`, when
    given, changes a response body before the SDK sees it: the deliberate break on the model side."""

    def __init__(self, rewrite: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.inner = offline_transport()
        self.rewrite = rewrite
        self.exchanges: list[tuple[dict[str, Any], dict[str, Any]]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        body = json.loads(response.read())
        if self.rewrite is not None and response.status_code == 200:
            body = self.rewrite(body)
        self.exchanges.append((json.loads(request.content), body))
        return httpx.Response(response.status_code, json=body)


class _Run:
    """One recorded run: the model exchanges, the tool calls (by call_id) and what was left after."""

    def __init__(self, rewrite: Callable[[dict[str, Any]], dict[str, Any]] | None = None) -> None:
        self.recorder = _Recorder(rewrite)
        self.client = openai.OpenAI(
            api_key="offline", base_url=OFFLINE_BASE_URL, max_retries=0, _strict_response_validation=True,
            http_client=httpx.Client(transport=self.recorder),
        )  # fmt: skip
        self._tools: dict[str, deque[dict[str, Any]]] = {}
        self._loose: list[dict[str, Any]] = []  # tool calls no model asked for (an app's own retry loop)
        self.after: list[dict[str, Any]] = []

    def tool_call(self, event: dict[str, Any], *, from_model: bool = True) -> None:
        if from_model:
            self._tools.setdefault(event["call_id"], deque()).append(event)
        else:
            self._loose.append(event)

    def events(self) -> list[dict[str, Any]]:
        """Model requests, responses and the tool calls each response asked for, in order."""
        events: list[dict[str, Any]] = []
        for n, (request, response) in enumerate(self.recorder.exchanges, start=1):
            events.append({"event": "model_request", "n": n, "body": request})
            events.append({"event": "model_response", "n": n, "body": response})
            for item in response.get("output", []):
                queue = self._tools.get(item.get("call_id", ""))
                if item["type"] == "function_call" and queue:
                    events.append(queue.popleft())
        return events + self._loose + self.after

    def close(self) -> None:
        self.client.close()


def _mcp(host: McpHost, server: str | None, mcp_id: Any) -> dict[str, Any] | None:
    """The tools/call exchange with JSON-RPC `mcp_id` on `server`, as it crossed."""
    if server is None or mcp_id is None:
        return None
    for exchange in host.connections[server].exchanges("tools/call"):
        if exchange.id == mcp_id:
            return {"request": exchange.request, "response": exchange.response}
    return None


def _from_toolcall(call_id: str, alias: str, arguments_text: str, called: ToolCall) -> dict[str, Any]:
    exchange = {"request": called.exchange.request, "response": called.exchange.response}
    return {"event": "tool_call", "call_id": call_id, "tool": alias, "arguments": arguments_text,
            "server": called.route.server, "mcp": exchange}  # fmt: skip


def _from_execution(execution: Execution, host: McpHost | None = None) -> dict[str, Any]:
    server = execution.notes.get("server")
    return {
        "event": "tool_call", "call_id": execution.call_id, "tool": execution.tool,
        "arguments": execution.arguments_text, "server": server,
        "steps": [f"{step.name} {step.outcome}" for step in execution.steps],
        "result": execution.result, "trace_id": execution.trace_id,
        "mcp": _mcp(host, server, execution.notes.get("mcp_id")) if host is not None else None,
    }  # fmt: skip


def _from_loop(run: _Run, host: McpHost, result: Any) -> None:
    for link in result.trace:
        event = {"event": "tool_call", "call_id": link.call_id, "tool": link.alias,
                 "arguments": link.arguments_text, "server": link.server, "mcp": _mcp(host, link.server, link.mcp_id)}
        run.tool_call(event)  # fmt: skip


def _after(run: _Run, what: str, data: Any) -> None:
    run.after.append({"event": "after_the_run", "what": what, "data": data})


def _run_async(fn: Callable[[], Any]) -> Any:
    """Run `fn()` (async) on an event loop of its own: a notebook cell already runs inside one."""
    with start_blocking_portal() as portal:
        return portal.call(fn)


def _calls(response: Any) -> list[Any]:
    return [item for item in response.output if item.type == "function_call"]


# ---- the broken runs ----------------------------------------------------------------------------

THREE_READS = ("Show the first 2 lines of /workspace/notes.txt, the last 3 lines of /workspace/todo.md "
               "and the first 4 lines of /workspace/docs/mcp.md")  # fmt: skip
VAGUE_SEARCH = {
    "type": "function", "name": "search", "description": "Search content.",
    "parameters": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
}  # fmt: skip
INVENTED = ("Here are the first 5 lines of /workspace/notes.txt:\n\n"
            "1. Tool calling lets the model run your functions directly.\n"
            "2. The model executes the function and returns its result.\n"
            "3. Arguments arrive as a Python dict, already validated.\n"
            "4. strict: true means the call is authorized.\n"
            "5. Retries are always safe.")  # fmt: skip
ARCHIVE_NOTES = ("Archived draft, 2024: tool calling means the model runs your code.\n"
                 "Archived draft, 2024: arguments arrive already parsed.\n"
                 "Archived draft, 2024: retries are always safe.\n")  # fmt: skip


def trace_invented_answer() -> dict[str, Any]:
    """Only a vague `search` tool is declared ("Search content."), so the model cannot read the
    file and says so. Broken: the recorded answer is replaced by invented file content."""

    def invent(body: dict[str, Any]) -> dict[str, Any]:
        for item in body["output"]:
            if item["type"] == "message":
                item["content"][0]["text"] = INVENTED
        return body

    run = _Run(invent)
    try:
        run.client.responses.create(model=model_name(), input="Show the first 5 lines of /workspace/notes.txt",
                                    tools=[VAGUE_SEARCH])  # fmt: skip
        return _trace("invented_answer", "The user says: these five lines are not in my notes.txt at all.", run)
    finally:
        run.close()


def trace_wrong_tool() -> dict[str, Any]:
    """Broken: the app connects an archive server (an old copy, with its own notes.txt) beside the
    files server, both offering `read_text_file` with the same description."""
    archive = Path(tempfile.mkdtemp(prefix="course-archive-"))
    (archive / "notes.txt").write_text(ARCHIVE_NOTES, encoding="utf-8")
    run = _Run()
    try:
        with McpHost() as host:
            host.add_server("arch", build_server(Workspace(archive)))
            host.add_server("fs", build_server(Workspace(workspace_dir())))
            result = run_loop(run.client, host, "Show the first 3 lines of /workspace/notes.txt")
            _from_loop(run, host, result)
        return _trace("wrong_tool", "The user says: that is not my notes.txt — those lines are from an old draft.", run)
    finally:
        run.close()
        shutil.rmtree(archive)


def trace_result_not_sent() -> dict[str, Any]:
    """Broken: the app executes each call and logs the result, but sends the next request with
    the user's message only — the call and its `function_call_output` are never added."""
    run = _Run()
    task = "Show the first 4 lines of /workspace/todo.md"
    try:
        with _files_host() as host:
            tools = host.responses_tools()
            for _ in range(3):  # the app's step budget
                response = run.client.responses.create(model=model_name(), input=[{"role": "user", "content": task}],
                                                       tools=tools)  # fmt: skip
                for call in _calls(response):
                    called = host.call(call.name, json.loads(call.arguments))
                    run.tool_call(_from_toolcall(call.call_id, call.name, call.arguments, called))
        _after(run, "how the app's loop ended", {"status": "incomplete", "reason": "max_steps", "model_requests": 3})
        report = ("The user got no answer ('incomplete: max_steps'), although the server log shows todo.md "
                  "read successfully three times.")  # fmt: skip
        return _trace("result_not_sent", report, run)
    finally:
        run.close()


def trace_call_id_swap() -> dict[str, Any]:
    """Broken: the app collects the three results in the order they finished (todo.md, mcp.md,
    notes.txt) and hands them back by position, under the call_ids in the model's order."""
    run = _Run()
    try:
        with _files_host() as host:
            request = {"model": model_name(), "input": [{"role": "user", "content": THREE_READS}],
                       "tools": host.responses_tools()}  # fmt: skip
            response = run.client.responses.create(**request)
            calls = _calls(response)
            texts = {}
            for call in calls:
                called = host.call(call.name, json.loads(call.arguments))
                run.tool_call(_from_toolcall(call.call_id, call.name, call.arguments, called))
                texts[call.call_id] = result_text(called.result)
            finished = [texts[calls[i].call_id] for i in (1, 2, 0)]  # the order the reads completed
            context = request["input"] + [item.to_dict() for item in response.output]
            context += [{"type": "function_call_output", "call_id": call.call_id, "output": text}
                        for call, text in zip(calls, finished)]  # ✗ by position  # fmt: skip
            run.client.responses.create(**{**request, "input": context})
        report = ("The user says: under 'the first 2 lines of /workspace/notes.txt' the answer lists three to-do "
                  "items — those are from todo.md, and the other two files look swapped too.")  # fmt: skip
        return _trace("call_id_swap", report, run)
    finally:
        run.close()


def trace_error_as_success() -> dict[str, Any]:
    """Broken: the app feeds back only the message of every MCP result, dropping `isError` and the
    leading error code ("FORBIDDEN: ") — a refusal reaches the model looking exactly like file
    content. (With the code left in, the model would still read the line as an error.)"""
    run = _Run()
    try:
        with _files_host() as host:
            request = {"model": model_name(), "input": [{"role": "user", "content": "Show the first 5 lines of /etc/passwd"}],
                       "tools": host.responses_tools()}  # fmt: skip
            response = run.client.responses.create(**request)
            context = request["input"] + [item.to_dict() for item in response.output]
            for call in _calls(response):
                called = host.call(call.name, json.loads(call.arguments))
                run.tool_call(_from_toolcall(call.call_id, call.name, call.arguments, called))
                context.append({"type": "function_call_output", "call_id": call.call_id,
                                "output": result_text(called.result).partition(": ")[2]})  # ✗ isError, code dropped  # fmt: skip
            run.client.responses.create(**{**request, "input": context})
        report = "Security asks: the assistant says it showed the first lines of /etc/passwd. Did the sandbox fail?"
        return _trace("error_as_success", report, run)
    finally:
        run.close()


def trace_loose_arguments() -> dict[str, Any]:
    """The tool is declared without strict mode. Broken: the model writes line counts as strings
    (`"head":"3"`), which nothing in a non-strict request prevents."""

    def numbers_as_text(body: dict[str, Any]) -> dict[str, Any]:
        for item in body["output"]:
            if item["type"] == "function_call":
                arguments = json.loads(item["arguments"])
                item["arguments"] = json.dumps({k: str(v) if k in ("head", "tail") else v for k, v in arguments.items()},
                                               separators=(",", ":"))  # fmt: skip
        return body

    run = _Run(numbers_as_text)
    try:
        with _files_host() as host:
            result = run_loop(run.client, host, "Show the first 3 lines of /workspace/docs/mcp.md")
            _from_loop(run, host, result)
        report = "Support says: most file requests this week ended with INVALID_INPUT instead of the lines asked for."
        return _trace("loose_arguments", report, run)
    finally:
        run.close()


def trace_serial_slow() -> dict[str, Any]:
    """Broken: the app sends `parallel_tool_calls: false` for reads that do not depend on each
    other, so each read costs a model round trip that resends the whole context."""
    run = _Run()
    try:
        with _files_host() as host:
            result = run_loop(run.client, host, THREE_READS, parallel_tool_calls=False, max_steps=6)
            _from_loop(run, host, result)
        tokens = sum(response["usage"]["input_tokens"] for _, response in run.recorder.exchanges)
        _after(run, "usage over the whole task", {"model_requests": result.steps, "input_tokens": tokens})
        report = "Ops says: reading three short files takes several seconds and costs far more tokens than expected."
        return _trace("serial_slow", report, run)
    finally:
        run.close()


class _NoteArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    topic: str
    evidence: str


def trace_blind_retry() -> dict[str, Any]:
    """`save_learning_gap` stores the record, then its answer is slow once and the executor's
    timeout fires. Broken: the app's retry loop sends the same write again, with no key."""
    records: list[dict[str, str]] = []
    slow = [0.6]

    async def save(arguments: _NoteArgs, context: Any) -> dict[str, str]:
        records.append({"id": f"gap-{len(records) + 1}", "topic": arguments.topic})  # committed
        await anyio.sleep(slow.pop() if slow else 0)  # the answer, lost to the timeout the first time
        return {"record_id": records[-1]["id"]}

    tool = Tool("save_learning_gap", "Save a learning gap the user confirmed. Changes data.", _NoteArgs, save,
                side_effect=True, timeout=0.25)  # fmt: skip
    executor = Executor([tool])
    alice = Session("alice")
    arguments = json.dumps({"topic": "call_id vs MCP id", "evidence": "mixed them up in the mock interview"})
    pending = executor.approvals.request(tool.name, json.loads(arguments), alice.user_id)
    executor.approvals.approve(pending.action_id)  # the user confirmed this exact save once

    async def blind_loop() -> list[Execution]:
        done = []
        for _ in range(3):  # ✗ any failure: send the same call again
            done.append(await executor.execute("call_save_gap", tool.name, arguments, alice))
            if done[-1].ok:
                break
        return done

    run = _Run()
    try:
        for execution in _run_async(blind_loop):
            run.tool_call(_from_execution(execution), from_model=False)
        log = [f"{entry.trace_id} {entry.call_id} {entry.tool}: {entry.detail}" for entry in executor.log.entries]
        _after(run, "server log", log)
        _after(run, "learning gaps stored", records)
        report = "The user confirmed one learning gap; their list now shows it twice."
        return _trace("blind_retry", report, run)
    finally:
        run.close()


class _AllowAll(Approvals):
    # DELIBERATELY BROKEN: "the user allowed all modifications" once.
    def granted(self, tool: str, arguments: dict[str, Any], user_id: str) -> bool:
        return True


def trace_injection() -> dict[str, Any]:
    """The user asks to read an email; its text holds a `CALL apply_note_update …` line and a
    model that obeys text in tool output (the offline model's gullible persona) calls the write.
    Broken: approvals are "allow all modifications", so nothing stops it."""
    from course_lib.notes_store import (AuditedExecutor, ManualClock, NotesStore, notes_tools,
                                        remove_scratch_workspace, scratch_workspace)  # fmt: skip

    copy = scratch_workspace()
    run = _Run()
    try:
        with _files_host(copy) as host:
            store = NotesStore(copy, clock=ManualClock())
            tools = [host.executor_tool("fs__read_text_file", ReadTextFileArgs), *notes_tools(store)]
            executor = AuditedExecutor(tools, audit=store.audit, approvals=_AllowAll())
            task = "Read /workspace/inbox/study_group.txt and tell me what it says."
            result = run_guarded_loop(run.client, host, executor, Session("alice"), task,
                                      request={"metadata": {"course_persona": "gullible"}})
            for execution in result.executions:
                run.tool_call(_from_execution(execution, host))
            _after(run, "audit log", store.audit.table().splitlines())
            _after(run, "first line of /workspace/notes.txt now", store.read("/workspace/notes.txt")[0].splitlines()[0])
        report = ("The user says: after I asked to read an email, my notes.txt was replaced by one line. "
                  "Every test of the write tool passes.")  # fmt: skip
        return _trace("injection", report, run)
    finally:
        run.close()
        remove_scratch_workspace(copy)


def _files_host(root: Path | None = None) -> McpHost:
    host = McpHost()
    host.add_server("fs", build_server(Workspace(root or workspace_dir())))
    return host


def _trace(name: str, report: str, run: _Run) -> dict[str, Any]:
    return {"name": name, "report": report, "events": run.events()}


TRACES: dict[str, Callable[[], dict[str, Any]]] = {
    "invented_answer": trace_invented_answer,
    "wrong_tool": trace_wrong_tool,
    "result_not_sent": trace_result_not_sent,
    "call_id_swap": trace_call_id_swap,
    "error_as_success": trace_error_as_success,
    "loose_arguments": trace_loose_arguments,
    "serial_slow": trace_serial_slow,
    "blind_retry": trace_blind_retry,
    "injection": trace_injection,
}
"""name → the function that records it. `invented_answer` is the notebook's worked example."""


def traces_dir() -> Path:
    """`fixtures/broken_traces/`."""
    return fixtures_dir() / "broken_traces"


def regenerate(out_dir: Path | None = None) -> list[Path]:
    """Record every broken run again and write one JSON file per trace; returns the paths.

    Raises:
        RuntimeError: OPENAI_API_KEY is set (the traces are recorded from the offline model).
    """
    if os.environ.get("OPENAI_API_KEY"):
        raise RuntimeError("broken traces are recorded from the offline model: unset OPENAI_API_KEY first")
    target = out_dir or traces_dir()
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for name, record in TRACES.items():
        path = target / f"{name}.json"
        path.write_text(json.dumps(record(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        written.append(path)
    return written
