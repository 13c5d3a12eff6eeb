import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from course_lib.verify import check_fields, check_roundtrip

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def load(name):
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def broken(findings):
    return [f.link for f in findings if not f.ok]


def test_recorded_fixtures_pass_every_check():
    assert broken(check_fields(load("field_fragments.json"))) == []
    findings = check_roundtrip(load("responses_roundtrip.json"))
    assert len(findings) == 12 and broken(findings) == []


def _call(r):
    return next(i for i in r["response_1"]["output"] if i["type"] == "function_call")


def _items(r, kind):
    return [i for i in r["request_2"]["input"] if i.get("type") == kind]


def wrong_call_id(r):
    _items(r, "function_call_output")[0]["call_id"] = "call_someone_else"


def drop_original_call(r):
    r["request_2"]["input"] = [i for i in r["request_2"]["input"] if i.get("type") != "function_call"]


def arguments_as_object(r):
    call = _call(r)
    call["arguments"] = json.loads(call["arguments"])


def mcp_id_mismatch(r):
    r["mcp_response"]["id"] = 999


def feedback_not_from_result(r):
    _items(r, "function_call_output")[0]["output"] = "read successfully"


def tools_dropped(r):
    r["request_2"]["tools"] = []


def value_written_into_rule(r):
    r["request_1"]["tools"][0]["parameters"]["properties"]["path"]["default"] = "/workspace/notes.txt"


def task_dropped(r):
    r["request_2"]["input"] = r["request_2"]["input"][1:]


@pytest.mark.parametrize(
    ("corrupt", "link"),
    [
        (wrong_call_id, "call and feedback call_ids pair"),
        (drop_original_call, "task and original call stay in context, in order"),
        (arguments_as_object, "model arguments are JSON text"),
        (mcp_id_mismatch, "MCP request/response ids pair"),
        (feedback_not_from_result, "feedback comes from the tool result"),
        (tools_dropped, "tool declarations kept in the second request"),
        (value_written_into_rule, "rules stay rules"),
        (task_dropped, "task and original call stay in context, in order"),
    ],
)
def test_each_corruption_is_rejected_and_named(corrupt, link):
    roundtrip = copy.deepcopy(load("responses_roundtrip.json"))
    corrupt(roundtrip)
    assert link in broken(check_roundtrip(roundtrip))


def test_fields_check_rejects_arguments_sent_as_text_to_mcp():
    fragments = load("field_fragments.json")
    fragments["mcp_request"]["params"]["arguments"] = json.dumps(fragments["mcp_request"]["params"]["arguments"])
    assert "MCP arguments are an object" in broken(check_fields(fragments))


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "course_lib.verify", *args], capture_output=True, text=True, timeout=60)


def test_cli_exits_zero_on_the_fixtures_and_nonzero_naming_the_broken_link(tmp_path):
    assert _cli("fields").returncode == 0
    ok = _cli("roundtrip")
    assert ok.returncode == 0 and "12 of 12 links hold" in ok.stdout
    roundtrip = load("responses_roundtrip.json")
    wrong_call_id(roundtrip)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(roundtrip))
    failed = _cli("roundtrip", str(bad))
    assert failed.returncode == 1
    assert "FAIL call and feedback call_ids pair" in failed.stdout


def test_a_feedback_given_as_input_text_parts_passes_every_check():
    parts = load("responses_roundtrip.json")
    feedback = next(i for i in parts["request_2"]["input"] if i.get("type") == "function_call_output")
    feedback["output"] = [{"type": "input_text", "text": feedback["output"]}]
    assert broken(check_roundtrip(parts)) == []
    feedback["output"] = [{"type": "input_text", "text": "something else"}]
    assert broken(check_roundtrip(parts)) == ["feedback comes from the tool result", "final answer built from the feedback"]
