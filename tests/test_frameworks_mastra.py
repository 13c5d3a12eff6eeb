"""Mastra on the bench (course_lib.frameworks.mastra): the TypeScript script of notebook 09b, run by
the project-local Node 22 against the offline model and the files server, every object on the wire.

Needs Node.js and the pinned packages (`make node-tools`): skipped locally without them, a failure
in CI (the `node_tools` fixture).
"""

from __future__ import annotations

import json

import pytest

from course_lib.frameworks import Bench, calls, failure_marked
from course_lib.frameworks import mastra
from course_lib.paths import node_dir

TASKS = {"read": "Show the first 5 lines of /workspace/notes.txt", "refused": "Show the first 5 lines of /etc/passwd"}


@pytest.fixture(scope="module")
def mastra_run(node_tools):
    mastra.ensure_mastra()
    with Bench() as bench, bench.run("Mastra") as run:
        report = mastra.run_mastra(bench, TASKS)
    return run, report


def test_the_mastra_packages_are_pinned_exactly_and_run_on_the_project_node():
    pins = json.loads((node_dir() / "package.json").read_text(encoding="utf-8"))["dependencies"]
    lock = json.loads((node_dir() / "package-lock.json").read_text(encoding="utf-8"))["packages"]
    for name in ("@mastra/core", "@mastra/mcp", "@mastra/observability", "@ai-sdk/openai", "zod"):
        assert pins[name][0].isdigit(), f"{name} is pinned to an exact version, not a range: {pins[name]}"
        assert lock[f"node_modules/{name}"]["version"] == pins[name]
    node = tuple(map(int, lock["node_modules/node"]["version"].split(".")))
    assert node >= (22, 18, 0)  # strips TypeScript types natively, so the .mts runs with no build step
    assert lock["node_modules/@mastra/core"]["engines"] == {"node": ">=22.13.0"}  # which 22.23 meets
    assert mastra.script_path().suffix == ".mts"  # an ES module whatever package.json says
    script = mastra.script_path().read_text(encoding="utf-8")
    assert "@mastra/libsql" not in pins and "LibSQL" not in script  # approval resumes from Mastra's in-memory storage


def test_the_script_runs_every_agent_run_and_hands_back_what_mastra_saw(mastra_run):
    _, report = mastra_run
    assert set(report) == {"read", "refused", "structured_read", "structured_refused", "asked_read", "approved_read",
                           "asked_refused", "approved_refused"}  # fmt: skip
    assert report["read"]["text"].startswith("Here are the first 5 lines of /workspace/notes.txt")
    assert "Error code: FORBIDDEN" in report["refused"]["text"]
    assert report["structured_read"]["object"]["ok"] is True and report["structured_read"]["object"]["line_count"] == 5
    assert report["structured_refused"]["object"] == {"path": "/etc/passwd", "line_count": 0, "text": None, "ok": False}
    asked = report["asked_read"]
    assert asked["finishReason"] == "suspended" and asked["text"] == ""  # requireApproval: nothing ran yet
    assert asked["suspended"]["toolCallId"] == asked["toolCalls"][0]["toolCallId"]
    assert report["approved_read"]["text"].startswith("Here are the first 5 lines")


def test_every_call_crossed_both_wires_under_the_model_s_call_id(mastra_run):
    run, report = mastra_run
    traces = calls(run)
    by_id = {t.call_id: t for t in traces}
    assert set(by_id) == set(mastra.call_ids(report, *report))  # Mastra's toolCallId is the model's call_id
    assert [t.mcp_id for t in traces] == [1, 2, 3, 4, 5, 6]  # after its string probe id
    assert run.mcp[0].json["id"] == "server-discover-probe-1"
    approved = by_id[report["asked_read"]["suspended"]["toolCallId"]]
    assert approved.mcp_request is not None  # it ran once approved, and only then
    assert sum(t.mcp_request is not None for t in traces if t.call_id == approved.call_id) == 1


def test_mastra_rewrites_the_rule_trims_the_text_and_marks_a_refusal(mastra_run):
    run, report = mastra_run
    read, refused = (next(t for t in calls(run) if t.call_id == i) for i in mastra.call_ids(report, "read", "refused"))
    parameters = read.declaration["parameters"]
    assert parameters["required"] == ["path", "head", "tail"] and parameters["x-optional"] == ["head", "tail"]
    assert "minimum" not in json.dumps(parameters) and "greater than or equal to 1" in json.dumps(parameters)
    text = read.result["content"][0]["text"]
    assert read.feedback["output"] == text.strip() != text  # the content's text, its last newline gone
    assert read.arguments["tail"] is None and read.dropped_nulls == ["tail"]  # required|null: the model sent null, Mastra dropped it
    assert "tail" not in read.mcp_request["params"]["arguments"]
    assert refused.feedback["output"] == '{"error":"FORBIDDEN: path is outside /workspace"}'
    assert failure_marked(refused.feedback["output"])


def test_the_script_gets_no_key_and_mastra_s_telemetry_is_off(monkeypatch, tmp_path):
    seen = {}

    class Done:
        returncode, stdout, stderr = 0, "", ""

    def fake_run(command, **options):
        seen.update(options)
        json.loads(command[-1])  # the config is one JSON argument
        out = json.loads(command[-1])["out"]
        with open(out, "w", encoding="utf-8") as file:
            file.write("{}")
        return Done()

    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setattr(mastra, "ensure_mastra", lambda: None)
    monkeypatch.setattr(mastra.subprocess, "run", fake_run)

    class FakeBench:
        model_url = "http://127.0.0.1:1/v1"

        def files_stdio(self, traced_to=None):
            from course_lib.frameworks.bench import StdioServer

            return StdioServer("python", ["-m", "x"], str(tmp_path), tmp_path / "log.jsonl", tmp_path / "log.stderr")

    assert mastra.run_mastra(FakeBench(), TASKS) == {}
    env = seen["env"]
    assert env["MASTRA_TELEMETRY_DISABLED"] == "1"
    assert not any("KEY" in name or "TOKEN" in name for name in env), sorted(env)
    assert set(env) <= set(mastra._KEPT) | {"MASTRA_TELEMETRY_DISABLED"}


def test_a_failing_script_is_reported_with_its_own_words(monkeypatch, tmp_path):
    class Failed:
        returncode, stdout, stderr = 1, "", "SyntaxError: Unexpected token"

    monkeypatch.setattr(mastra, "ensure_mastra", lambda: None)
    monkeypatch.setattr(mastra.subprocess, "run", lambda *a, **k: Failed())

    class FakeBench:
        model_url = "http://127.0.0.1:1/v1"

        def files_stdio(self, traced_to=None):
            from course_lib.frameworks.bench import StdioServer

            return StdioServer("python", [], str(tmp_path), tmp_path / "log.jsonl", tmp_path / "log.stderr")

    with pytest.raises(mastra.MastraFailed, match="exit status 1") as failed:
        mastra.run_mastra(FakeBench(), TASKS)
    assert "SyntaxError: Unexpected token" in str(failed.value)


def test_no_node_is_said_plainly(monkeypatch):
    from course_lib.node_tools import NodeToolsMissing

    monkeypatch.setattr("course_lib.node_tools.shutil.which", lambda name: None)
    with pytest.raises(NodeToolsMissing, match="make node-tools"):
        mastra.ensure_mastra()
