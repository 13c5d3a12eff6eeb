"""The classes of answers issue 28's audits found judged wrongly, one test each, in both directions:
wrong answers the checks accepted, right answers they refused, and messages that misled.

Where a real API has a rule (`course_lib.api_rules`), the property is tried over the rule itself:
whatever the table refuses, the check refuses too.
"""

from __future__ import annotations

import copy
import hashlib
import json

import pytest

from course_lib import api_rules
from course_lib.exercises.nb01 import _strict_search_notes_solution, check_strict_search_notes
from course_lib.exercises.nb03 import _classify_solution, check_classify
from course_lib.exercises.nb04b import calls_from_stream, check_calls_from_stream, check_stream_answer
from course_lib.exercises.nb04c import check_to_messages, to_messages
from course_lib.exercises.nb06 import check_make_action_id
from course_lib.exercises.nb10 import check_action_id


def _refused(check, answer, capsys, *words):
    assert check(answer) is False
    printed = capsys.readouterr().out
    assert printed.startswith("✗ ") and printed.count("\n") == 1 and "Traceback" not in printed, printed
    missing = [word for word in words if word not in printed]
    assert not missing, f"{missing} not in {printed!r}"
    return printed


# ---- wrong answers that were accepted -----------------------------------------------------------

STRICT_REFUSED = ["oneOf", "allOf", "not", "if", "dependentRequired", "dependentSchemas"]


@pytest.mark.parametrize("keyword", STRICT_REFUSED)
def test_a_strict_declaration_the_api_refuses_is_refused(capsys, keyword):
    schema = _strict_search_notes_solution()
    limit = schema["properties"]["limit"]
    value = {"oneOf": limit.pop("anyOf"), "allOf": [{"type": ["integer", "null"]}], "not": {"const": 7},
             "if": {"type": "integer"}, "dependentRequired": {"limit": ["query"]},
             "dependentSchemas": {"limit": {"type": "object"}}}[keyword]
    (limit if keyword in ("oneOf", "allOf", "not", "if") else schema)[keyword] = value
    if keyword != "oneOf":
        limit.setdefault("anyOf", [{"type": "integer", "minimum": 1, "maximum": 20}, {"type": "null"}])
    assert api_rules.strict_schema_problems(schema), "the refusal table refuses it"
    _refused(check_strict_search_notes, schema, capsys, f"'{keyword}' is not permitted")


def test_a_default_that_contradicts_the_server_is_refused_and_a_true_one_passes_with_a_caution(capsys):
    schema = _strict_search_notes_solution()
    schema["properties"]["limit"]["default"] = 10
    _refused(check_strict_search_notes, schema, capsys, "limit defaults to 10", "reads a null limit as 5")
    schema["properties"]["limit"]["default"] = 5
    assert check_strict_search_notes(schema) is True
    assert "refused by Azure OpenAI" in capsys.readouterr().out


def test_a_strict_schema_that_narrows_what_the_mcp_rule_accepts_is_refused(capsys):
    schema = _strict_search_notes_solution()
    schema["properties"]["query"]["minLength"] = 1
    _refused(check_strict_search_notes, schema, capsys, "refuses {'query': '', 'limit': None}", "MCP rule accepts")


def test_an_answer_that_never_assembles_the_stream_is_refused(capsys):
    def reads_the_final_event(events):
        return {item.call_id: json.loads(item.arguments) for item in events[-1].response.output}

    _refused(check_calls_from_stream, reads_the_final_event, capsys, "cut before response.completed")


@pytest.mark.parametrize("where", [0, 1])
def test_every_messages_order_the_api_refuses_is_refused(capsys, where):
    def text_first(task, call, output):
        messages = to_messages(task, call, output)
        messages[2]["content"].insert(where, {"type": "text", "text": "Here is what the tool said."})
        return messages

    def text_after(task, call, output):
        messages = to_messages(task, call, output)
        messages[2]["content"].append({"type": "text", "text": "Here is what the tool said."})
        return messages

    if where == 0:  # text before the tool_result: the table refuses, so must the check
        _refused(check_to_messages, text_first, capsys, "messages.2: Did not find 1 `tool_result` block(s) at the "
                                                         "beginning", "Put the tool_result block(s) first")
    else:  # text after it: the API takes it, so must the check
        assert check_to_messages(text_after) is True


def test_a_success_sent_with_is_error_true_is_refused(capsys):
    def flagged(task, call, output):
        messages = to_messages(task, call, output)
        messages[2]["content"][0]["is_error"] = True
        return messages

    _refused(check_to_messages, flagged, capsys, "is_error: true, but the read succeeded")


@pytest.mark.parametrize("field", ["structuredContent", "text"])
def test_a_classification_on_a_field_independent_of_is_error_is_refused(capsys, field):
    def on_structured(response):
        if "error" in response:
            return "protocol error"
        return "success" if "structuredContent" in response["result"] else "tool error"

    def on_text(response):
        if "error" in response:
            return "protocol error"
        text = " ".join(block.get("text", "") for block in response["result"].get("content", []))
        return "tool error" if "error" in text.lower() or text[:3].isupper() else "success"

    answer = on_structured if field == "structuredContent" else on_text
    printed = _refused(check_classify, answer, capsys, "result.isError")
    assert ("Only a top-level error and result.isError decide the kind" in printed
            or "Only result.isError says a tool failed" in printed), printed
    assert "whether the key is present" not in printed  # the words for another mistake
    assert check_classify(_classify_solution) is True


def _digest(bits):
    return lambda tool, arguments, user: hashlib.sha256(
        json.dumps([tool, arguments, user], sort_keys=True).encode()).hexdigest()[: bits // 4]


def test_approval_ids_of_8_bits_in_06_and_4_bits_in_10_are_refused(capsys):
    _refused(check_make_action_id, _digest(8), capsys, "two different actions got the same id")
    _refused(check_action_id, _digest(4), capsys, "two different actions got the same id")
    _refused(check_make_action_id, _digest(48), capsys, "your ids hold about 48 bits", "at least 64 bits")
    assert check_make_action_id(_digest(64)) is True
    assert "your ids hold about 64 bits (at least 64 needed)" in capsys.readouterr().out
    assert check_action_id(_digest(256)) is True


# ---- right answers that were refused -----------------------------------------------------------


def test_04b_ex2_a_right_answer_passes_and_the_with_block_shortcut_fails(capsys):
    from test_nb04b_corpus import closed_at_output_text_done, returns_at_completed

    assert check_stream_answer(returns_at_completed) is True
    assert "never reached" not in capsys.readouterr().out
    _refused(check_stream_answer, closed_at_output_text_done, capsys, "stopped reading at response.output_text.done",
             "response.completed never reached it")


# ---- messages that misled ----------------------------------------------------------------------


def test_no_not_answered_or_shape_message_shows_an_answer(capsys):
    from course_lib.exercises import nb08, nb10

    for check, solution in ((nb08.check_tail_parse_only, nb08.SOLUTIONS["check_tail_parse_only"]()),
                            (nb08.check_other_server, nb08.SOLUTIONS["check_other_server"]()),
                            (nb08.check_not_sent_back, nb08.SOLUTIONS["check_not_sent_back"]())):
        for answer in (..., "arguments", {"arguments": 1}, iter(["arguments"]), 5):
            check(answer)
            printed = capsys.readouterr().out
            quoted = [name for name in solution if f"'{name}'" in printed or f'"{name}"' in printed]
            assert len(quoted) < 2, printed  # the example never lists an answer's panels
    solved = nb10.SOLUTIONS["check_diagnoses"]()
    for answer in (..., {name: ... for name in solved}, {name: "D" for name in solved}):
        nb10.check_diagnoses(answer)
        printed = capsys.readouterr().out
        leaked = [pair for pair in solved.values() if f'("{pair[0]}", "{pair[1]}")' in printed]
        assert not leaked, printed


def test_a_drills_diff_never_shows_two_identical_prefixes(capsys):
    from course_lib.exercises.nb10 import check_responses_loop
    from course_lib.exercises.nb10.responses_loop import _loop_solution

    def wrong_at_the_end(client, model, task, tools, execute, max_steps=5):
        return _loop_solution(client, model, task, tools, execute, max_steps) + " (and one more line)"

    printed = _refused(check_responses_loop, wrong_at_the_end, capsys, "is not the one the full context gives")
    mine, right = printed.split("your answer ", 1)[1].split(" is not the one the full context gives (", 1)
    assert mine != right.split("):", 1)[0]

    def ids_differ_late(tool, arguments, user):
        text = json.dumps([tool, arguments, user])  # key order kept: A and A reordered differ near the end
        return "act_" + "0" * 80 + hashlib.sha256(text.encode()).hexdigest()

    printed = _refused(check_action_id, ids_differ_late, capsys, "your ids differ")
    one, other = printed.split("your ids differ: ", 1)[1].split(". Hint", 1)[0].split(" vs ")
    assert one != other


def test_the_run_once_check_needs_far_fewer_calls_than_it_did():
    from course_lib.exercises.nb06b import SOLUTIONS, check_run_once

    calls = []

    def counted(records, key, arguments, write, *, now, retention):
        calls.append(key)
        return SOLUTIONS["check_run_once"]()(records, key, arguments, write, now=now, retention=retention)

    assert check_run_once(copy.copy(counted)) is True
    assert len(calls) < 2_000  # it made about 88,000 before
