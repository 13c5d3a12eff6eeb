import json

import pytest
from openai.types.responses import Response
from pydantic import BaseModel, ConfigDict

from course_lib.arguments import ReadTextFileArgs
from course_lib.backend import http_transport, make_client
from course_lib.execution import Executor, Session, Tool
from course_lib.guarded_loop import resume, run_guarded_loop
from course_lib.host import files_host
from course_lib.paths import workspace_dir
from course_lib.wire import HttpCapture

ALICE = Session("alice")
saved: list[dict] = []


class SaveArgs(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid")
    topic: str


async def save(args, ctx):
    saved.append({"topic": args.topic})
    return {"record_id": f"gap-{len(saved)}"}


@pytest.fixture
def setup(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    saved.clear()
    with files_host() as host:
        executor = Executor([
            host.executor_tool("fs__read_text_file", ReadTextFileArgs),
            Tool("save_gap", "Save a learning gap", SaveArgs, save, side_effect=True),
        ])  # fmt: skip
        yield host, executor


def test_a_read_goes_through_the_executor_and_the_mcp_server(setup):
    host, executor = setup
    result = run_guarded_loop(make_client(), host, executor, ALICE, "Show the first 2 lines of /workspace/notes.txt")
    assert (result.status, result.steps) == ("completed", 2)
    [execution] = result.executions
    expected = "".join((workspace_dir() / "notes.txt").read_text().splitlines(keepends=True)[:2])
    assert execution.result["data"]["text"] == expected
    assert [s.name for s in execution.steps] == ["allowlist", "parse", "schema", "permission", "execute", "output"]
    # the strict declaration made the model send "tail": null; the app did not forward the null
    assert json.loads(execution.arguments_text)["tail"] is None
    assert host.connections["fs"].exchanges("tools/call")[-1].request["params"]["arguments"] == {
        "path": "/workspace/notes.txt", "head": 2}  # fmt: skip


def test_a_forbidden_read_is_fed_back_as_a_failure(setup):
    host, executor = setup
    result = run_guarded_loop(make_client(), host, executor, ALICE, "Show /etc/passwd")
    assert result.status == "completed" and result.executions[0].error_code == "FORBIDDEN"
    assert "reported an error" in result.answer


class Scripted:
    """A stand-in client whose model always asks for the same call (a model stuck in a rut)."""

    def __init__(self, name, arguments):
        self.responses, self.call = self, (name, arguments)
        self.count = 0

    def create(self, **request):
        self.count += 1
        item = {"type": "function_call", "id": f"fc_{self.count}", "call_id": f"call_{self.count}",
                "name": self.call[0], "arguments": self.call[1], "status": "completed"}  # fmt: skip
        return Response.model_validate({
            "id": f"resp_{self.count}", "object": "response", "created_at": 0, "model": "m", "output": [item],
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
        })  # fmt: skip


def test_a_model_repeating_a_refused_call_is_stopped_by_the_tool_budget(setup):
    host, executor = setup
    client = Scripted("fs__read_text_file", '{"path": "/etc/passwd", "head": null, "tail": null}')
    result = run_guarded_loop(client, host, executor, ALICE, "read it", max_tool_failures=2)
    assert (result.status, result.reason, client.count) == ("incomplete", "tool_budget", 2)


def test_a_write_pauses_for_approval_and_runs_exactly_once_after_it(setup):
    host, executor = setup
    client = Scripted("save_gap", '{"topic": "call_id vs MCP id"}')
    result = run_guarded_loop(client, host, executor, ALICE, "save it", max_steps=1)
    assert (result.status, result.reason, saved) == ("incomplete", "approval_required", [])
    [pending] = result.pending
    assert pending.result["error"]["arguments"] == {"topic": "call_id vs MCP id"}
    assert not any(i.get("type") == "function_call_output" for i in result.context)  # held back
    result = resume(client, host, executor, ALICE, result, approved={pending.result["error"]["action_id"]}, max_steps=0)
    assert saved == [{"topic": "call_id vs MCP id"}]
    outputs = [i for i in result.context if i.get("type") == "function_call_output"]
    assert outputs == [{"type": "function_call_output", "call_id": "call_1", "output": '{"ok": true, "data": {"record_id": "gap-1"}}'}]


def test_a_rejected_write_never_runs_and_the_model_is_told(setup):
    host, executor = setup
    client = Scripted("save_gap", '{"topic": "x"}')
    result = run_guarded_loop(client, host, executor, ALICE, "save it", max_steps=1)
    result = resume(client, host, executor, ALICE, result, approved=set(), max_steps=0)
    assert saved == [] and "rejected" in result.context[-1]["output"]


def test_the_trace_links_each_call_id_to_the_mcp_id_that_served_it(setup):
    host, executor = setup
    result = run_guarded_loop(make_client(), host, executor, ALICE, "Show /etc/passwd")
    [link] = result.trace
    assert (link.server, link.tool, link.error_code) == ("fs", "read_text_file", "FORBIDDEN")
    assert link.mcp_id == host.connections["fs"].exchanges("tools/call")[-1].id


class Repeating(Scripted):
    """A model that sends the same call (same call_id) twice in one response."""

    def create(self, **request):
        response = super().create(**request)
        response.output.append(response.output[0])
        return response


def test_a_repeated_call_id_gets_exactly_one_output(setup):
    host, executor = setup
    client = Repeating("fs__read_text_file", '{"path": "notes.txt", "head": 1, "tail": null}')
    result = run_guarded_loop(client, host, executor, ALICE, "read it", max_steps=1)
    outputs = [i for i in result.context if i.get("type") == "function_call_output"]
    assert len(outputs) == 1 and len(result.executions) == 1
    assert len(host.connections["fs"].exchanges("tools/call")) == 1  # and it ran once


def test_resume_honours_a_decision_made_elsewhere_before_it(setup):
    host, executor = setup
    client = Scripted("save_gap", '{"topic": "ids"}')
    result = run_guarded_loop(client, host, executor, ALICE, "save it", max_steps=1)
    executor.approvals.approve(result.pending[0].result["error"]["action_id"])  # e.g. an ApprovalPanel click
    resume(client, host, executor, ALICE, result, max_steps=0)
    assert saved == [{"topic": "ids"}]


def test_request_fields_go_with_every_model_request_including_after_resume(setup):
    host, executor = setup
    wire = HttpCapture(http_transport())
    request = {"metadata": {"course_persona": "gullible"}, "instructions": "Answer briefly."}
    task = "Show the first 2 lines of /workspace/notes.txt"
    result = run_guarded_loop(make_client(wire), host, executor, ALICE, task, request=request)
    assert result.status == "completed"
    result = resume(make_client(wire), host, executor, ALICE, result, max_steps=1, request=request)
    bodies = [exchange.request for exchange in wire.exchanges]
    assert len(bodies) == 3
    assert all(body["metadata"] == request["metadata"] and body["instructions"] == "Answer briefly." for body in bodies)


@pytest.mark.parametrize("field", ["model", "input", "tools", "tool_choice", "parallel_tool_calls"])
def test_request_may_not_override_the_loops_own_fields(setup, field):
    host, executor = setup
    with pytest.raises(ValueError, match=f"request may not set the loop's own fields: {field}"):
        run_guarded_loop(make_client(), host, executor, ALICE, "hi", request={field: None})


def test_a_forcing_tool_choice_is_reset_once_the_call_is_made(setup):
    host, executor = setup
    wire = HttpCapture(http_transport())
    task = "Show the first 2 lines of /workspace/notes.txt"
    result = run_guarded_loop(make_client(wire), host, executor, ALICE, task, tool_choice="required")
    assert (result.status, result.steps) == ("completed", 2)
    assert [exchange.request["tool_choice"] for exchange in wire.exchanges] == ["required", "auto"]
    stuck = run_guarded_loop(make_client(wire), host, executor, ALICE, task, tool_choice="required",
                             reset_tool_choice=False, max_steps=3)
    assert (stuck.status, stuck.reason, len(stuck.executions)) == ("incomplete", "max_steps", 3)


class RecordingScripted(Scripted):
    def __init__(self, name, arguments):
        super().__init__(name, arguments)
        self.choices = []

    def create(self, **request):
        self.choices.append(request["tool_choice"])
        return super().create(**request)


def test_resume_continues_with_the_reset_tool_choice(setup):
    host, executor = setup
    forced = {"type": "function", "name": "save_gap"}
    client = RecordingScripted("save_gap", '{"topic": "strict mode"}')
    result = run_guarded_loop(client, host, executor, ALICE, "save it", max_steps=1, tool_choice=forced)
    [pending] = result.pending
    resume(client, host, executor, ALICE, result, approved={pending.result["error"]["action_id"]}, max_steps=1,
           tool_choice=forced)
    assert client.choices == [forced, "auto"]


# ---- narrowing the tools after untrusted content (06b §7) -------------------------------------

INBOX_TASK = "Read /workspace/inbox/study_group.txt and tell me what it says."
GULLIBLE = {"metadata": {"course_persona": "gullible"}}


@pytest.fixture
def notes_setup(monkeypatch, tmp_path):
    import shutil

    from course_lib.notes_store import AuditedExecutor, ManualClock, NotesStore, notes_tools

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    root = tmp_path / "workspace"
    shutil.copytree(workspace_dir(), root)
    store = NotesStore(root, clock=ManualClock())
    with files_host(root) as host:
        capture = HttpCapture(http_transport())
        executor = AuditedExecutor([host.executor_tool("fs__read_text_file", ReadTextFileArgs), *notes_tools(store)],
                                   audit=store.audit)  # fmt: skip
        yield host, executor, store, capture, make_client(capture)


def test_without_narrowing_the_injected_write_reaches_the_approval_step(notes_setup):
    host, executor, store, _, client = notes_setup
    result = run_guarded_loop(client, host, executor, ALICE, INBOX_TASK, request=GULLIBLE)
    assert result.reason == "approval_required" and [e.tool for e in result.pending] == ["apply_note_update"]
    assert result.untrusted == [] and store.writes == 0


def test_after_untrusted_output_the_next_request_offers_only_reads(notes_setup):
    from course_lib.approval import Provenance

    host, executor, store, capture, client = notes_setup
    result = run_guarded_loop(client, host, executor, ALICE, INBOX_TASK, request=GULLIBLE,
                              untrusted={"fs__read_text_file"})  # fmt: skip
    first, second = (exchange.request for exchange in capture.exchanges)
    assert "apply_note_update" in [t["name"] for t in first["tools"]]
    assert [t["name"] for t in second["tools"]] == ["fs__read_text_file", "preview_note_update"]
    [read] = result.executions
    assert result.untrusted == [Provenance(read.call_id, "fs__read_text_file")]
    # the gullible model cannot obey a CALL line for a tool the request does not offer
    assert (result.status, result.pending, store.writes) == ("completed", [], 0)
    assert "CALL apply_note_update" in result.answer  # it quoted the attack as text instead


def test_a_write_the_turn_does_not_offer_is_refused_at_the_allowlist(notes_setup):
    from course_lib.parallel import Call, execute_batch

    host, executor, store, _, _ = notes_setup
    call = Call("call_w", "apply_note_update", '{"path":"/workspace/notes.txt","content":"x","expected_version":1}')
    [refused] = host.run(execute_batch, executor, [call], ALICE, allowed=["fs__read_text_file", "preview_note_update"])
    assert refused.steps[-1].name == "allowlist" and refused.error_code == "INVALID_INPUT"
    assert "available: fs__read_text_file, preview_note_update" in refused.result["error"]["message"]
    assert executor.approvals.pending == {} and store.writes == 0


def test_narrow_false_keeps_the_provenance_and_the_write_waits_for_approval(notes_setup):
    host, executor, store, capture, client = notes_setup
    result = run_guarded_loop(client, host, executor, ALICE, INBOX_TASK, request=GULLIBLE,
                              untrusted={"fs__read_text_file"}, narrow=False)  # fmt: skip
    assert "apply_note_update" in [t["name"] for t in capture.exchanges[-1].request["tools"]]
    [read] = result.executions
    assert result.reason == "approval_required" and [str(p) for p in result.untrusted] == [f"fs__read_text_file ({read.call_id})"]
    after = resume(client, host, executor, ALICE, result, request=GULLIBLE)  # rejected: nothing approved
    assert after.status == "completed" and after.narrow is False and store.writes == 0


def test_resume_of_a_dropped_approval_says_it_was_dropped_not_rejected(notes_setup):
    host, executor, store, _, client = notes_setup
    result = run_guarded_loop(client, host, executor, ALICE, INBOX_TASK, request=GULLIBLE)
    [pending] = result.pending
    executor.approvals.max_pending = 1
    executor.approvals.request("apply_note_update", {"path": "/workspace/todo.md", "content": "x", "expected_version": 1},
                               "alice")  # another action comes; the one waiting in `result` is dropped
    after = resume(client, host, executor, ALICE, result, approved={pending.result["error"]["action_id"]},
                   request=GULLIBLE)  # fmt: skip
    refusal = next(e for e in after.executions if e.call_id == pending.call_id)
    assert refusal.error_code == "FORBIDDEN" and "dropped unanswered" in refusal.result["error"]["message"]
    assert store.writes == 0


def test_untrusted_can_be_a_function_that_names_the_source(notes_setup):
    from course_lib.approval import Provenance

    host, executor, store, capture, client = notes_setup
    seen = []

    def from_the_inbox(execution):
        seen.append(execution.tool)
        path = (execution.result.get("data") or {}).get("path", "")
        return path if path.startswith("/workspace/inbox/") else None

    result = run_guarded_loop(client, host, executor, ALICE, INBOX_TASK, request=GULLIBLE, untrusted=from_the_inbox)
    [read] = result.executions
    assert result.untrusted == [Provenance(read.call_id, "fs__read_text_file", "/workspace/inbox/study_group.txt")]
    assert str(result.untrusted[0]) == f"fs__read_text_file /workspace/inbox/study_group.txt ({read.call_id})"
    assert "apply_note_update" not in [t["name"] for t in capture.exchanges[-1].request["tools"]]  # narrowed
    assert (result.pending, store.writes, seen) == ([], 0, ["fs__read_text_file"])
    trusted = run_guarded_loop(client, host, executor, ALICE, "Show the first 2 lines of /workspace/notes.txt",
                               untrusted=from_the_inbox)  # fmt: skip
    assert trusted.untrusted == [] and trusted.status == "completed"
