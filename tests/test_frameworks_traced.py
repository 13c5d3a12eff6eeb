"""Every framework of notebooks 09b and 09c on one bench, traced (course_lib.frameworks.runs): the span
tree links each call_id to its JSON-RPC id for every framework, the duty table recorded in
fixtures/duty_table.json is what the runs measure, and what LangGraph and the Claude Agent SDK do, read
on their wires.

Needs Node (Mastra, the Claude Code CLI: `make node-tools`) and the venvs of their own (LangGraph, the
Claude Agent SDK: `make outside-venvs`); the `node_tools` fixture skips without Node locally and fails
in CI. One run of everything, about 80 s.
"""

from __future__ import annotations

import json

import pytest

from course_lib.frameworks import Bench, calls, claude, langgraph
from course_lib.frameworks.duties import FrameworkRuns, record
from course_lib.frameworks.runs import fixture_path, run_all, trees_path
from course_lib.tracing import links, recording
from course_lib.tracing.records import SpanRecord
from course_lib.tracing.tree import call_links


@pytest.fixture(scope="module")
def columns(node_tools) -> dict[str, FrameworkRuns]:
    with Bench() as bench, recording() as trace:
        found = run_all(bench, trace)
    return found


def _wire_links(runs: FrameworkRuns) -> dict[str, str]:
    """The link as the wire shows it (each function_call and the tools/call that carried it)."""
    return {t.call_id: str(t.mcp_id) for t in calls(runs.read.run) if t.mcp_request is not None}


@pytest.mark.parametrize("name", ["this course", "Agents SDK", "pydantic-ai", "Mastra", "LangGraph", "Claude Agent SDK"])
def test_the_span_tree_links_each_call_id_to_its_json_rpc_id(columns, name):
    runs = columns[name]
    wire = _wire_links(runs)
    ran = set(runs.traced.call_ids)
    assert ran and set(wire) <= ran | set(wire)
    traced = links(runs.traced.spans)
    for call_id in ran & set(wire):  # every call a server ran in the traced run
        assert traced.get(call_id) == wire[call_id], f"{name}: {call_id} → {traced.get(call_id)} in the trace, {wire[call_id]} on the wire"


def test_each_framework_holds_the_two_ids_where_its_section_says(columns):
    def kinds(name: str) -> set[tuple[str, bool]]:
        return {(link.mcp_span.kind, link.mcp_span is link.tool_span)
                for link in call_links(columns[name].traced.spans) if link.mcp_span is not None}  # fmt: skip

    for name in ("this course", "Agents SDK", "pydantic-ai"):  # the mcp SDK's own client span, under the tool's
        assert kinds(name) == {("CLIENT", False)}, name
    for name in ("Mastra", "LangGraph"):  # no MCP client span: the server's, joined through _meta.traceparent
        assert kinds(name) == {("SERVER", False)}, name
    assert kinds("Claude Agent SDK") == {("SERVER", True)}  # the server's span, told the call id in _meta


def test_the_recorded_duty_table_is_what_the_runs_measure(columns):
    recorded = json.loads(fixture_path().read_text(encoding="utf-8"))
    assert record(columns) == recorded, "re-record with: python -m course_lib.frameworks.runs"


def test_the_recorded_span_trees_link_as_their_frameworks_did():
    trees = json.loads(trees_path().read_text(encoding="utf-8"))
    assert set(trees) == {"this course", "Agents SDK", "pydantic-ai", "Mastra", "LangGraph", "Claude Agent SDK"}
    for name, spans in trees.items():
        records = [SpanRecord(**span) for span in spans]
        assert links(records), f"{name}: the recorded tree links no call"
        assert all(s.start >= 0 for s in records)  # relative timestamps: the file does not change with the clock


# ---- LangGraph -----------------------------------------------------------------------------------


def test_langgraph_interrupts_before_the_tools_run_and_resumes_from_its_checkpoint(columns):
    run = columns["LangGraph"].read.run
    traces = calls(run)
    held = columns["LangGraph"].approval.pending_call_id
    ran = [t for t in traces if t.call_id == held and t.mcp_request is not None]
    assert len(ran) == 1  # nothing ran while interrupted; once after Command(resume="approve")
    refused_review = [t for t in traces if t.feedback and "the reviewer refused" in str(t.feedback.get("output"))]
    assert refused_review and all(t.mcp_request is None for t in refused_review)  # refused: no tools/call at all


def test_langgraph_sends_a_refusal_as_words_and_a_raised_tool_in_its_own_words(columns):
    runs = columns["LangGraph"]
    refused = next(t for t in runs.read.traces() if t.refused)
    assert refused.feedback["output"] == [{"type": "input_text", "text": "FORBIDDEN: path is outside /workspace"}]
    raised = next(t for t in runs.raised.traces() if t.feedback)
    text = raised.feedback["output"] if isinstance(raised.feedback["output"], str) else raised.feedback["output"][0]["text"]
    assert text.startswith("Error: PermissionError('FORBIDDEN: /workspace/notes.txt is outside /workspace')")
    [strict] = runs.nulls.traces()
    assert strict.arguments["tail"] is None and strict.mcp_request["params"]["arguments"]["tail"] is None  # passed on


# ---- the Claude Agent SDK ------------------------------------------------------------------------


def test_claude_code_judges_every_call_and_writes_the_call_id_into_meta(columns):
    runs = columns["Claude Agent SDK"]
    traces = calls(runs.read.run)
    carried = [t for t in traces if t.mcp_request is not None]
    assert carried and all(t.mcp_request["params"]["_meta"]["claudecode/toolUseId"] == t.call_id for t in carried)
    denied = [t for t in traces if t.feedback and "approver refused" in str(t.feedback.get("output"))]
    assert denied and all(t.mcp_request is None and t.feedback["is_error"] for t in denied)  # refused before any tools/call
    refused = next(t for t in runs.read.traces() if t.refused)
    assert refused.feedback["is_error"] is True and refused.feedback["output"] == "FORBIDDEN: path is outside /workspace"


def test_claude_code_s_structured_answer_is_an_output_tool_with_the_real_values(columns):
    runs = columns["Claude Agent SDK"]
    outputs = [t for t in calls(runs.structured.run) if t.call.get("name") == "StructuredOutput"]
    values = sorted((t.arguments["path"], t.arguments["ok"], t.arguments["line_count"]) for t in outputs)
    assert values == [("/etc/passwd", False, 0), ("/workspace/notes.txt", True, 5)]


def test_the_claude_script_gets_no_key_and_the_cli_sends_nothing_out(monkeypatch, tmp_path):
    from course_lib.frameworks import scripts

    seen = {}

    def fake_run(command, config, **options):
        seen.update(config=config, env=options.get("env"))
        return {}

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setattr(claude, "ensure_claude", lambda: None)
    monkeypatch.setattr(claude, "run_script", fake_run)
    monkeypatch.setattr(claude.venvs, "python", lambda name: tmp_path / "python")

    class FakeBench:
        model_url = "http://127.0.0.1:1/v1"
        workspace = tmp_path

        def files_stdio(self, traced_to=None):
            from course_lib.frameworks.bench import StdioServer

            return StdioServer("python", ["-m", "x"], str(tmp_path), tmp_path / "log.jsonl", tmp_path / "log.stderr")

    claude.run_claude(FakeBench(), {"read": "x", "refused": "y"}, {}, traced_to="http://127.0.0.1:2")
    cli = seen["config"]["env"]
    assert {k: cli[k] for k in claude.QUIET} == claude.QUIET
    assert cli["OTEL_EXPORTER_OTLP_ENDPOINT"] == "http://127.0.0.1:2" and cli["OTEL_METRICS_EXPORTER"] == "none"
    assert seen["config"]["modelUrl"] == "http://127.0.0.1:1"  # the CLI adds /v1/messages itself
    assert seen["env"] == {"HOME": seen["config"]["home"]}  # run_script adds PATH and the locale only
    assert set(scripts.KEPT) >= {"PATH", "HOME"} and not any("KEY" in k for k in scripts.KEPT)
