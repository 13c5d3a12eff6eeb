"""Wrong answers to notebook 00's exercises get a message that says what is wrong."""

from course_lib.exercises.nb00 import SOLUTIONS, check_final_text, check_kinds


def test_a_rule_labelled_value_is_explained_by_the_unchanged_runs(capsys):
    answer = SOLUTIONS["check_kinds"]()
    answer["request 1: tools[0].parameters"] = "value"
    assert check_kinds(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 'request 1: tools[0].parameters' is a rule, not a value")
    assert "identical in both runs" in out


def test_mcp_arguments_labelled_rule_shows_how_they_changed(capsys):
    answer = SOLUTIONS["check_kinds"]()
    answer["tools/call request: params.arguments"] = "rule"
    assert check_kinds(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 'tools/call request: params.arguments' is a value, not a rule")
    assert "'head': 20} → {'path': '/workspace/notes.txt', 'head': 5}" in out


def test_feedback_labelled_value_is_a_result_after_execution(capsys):
    answer = SOLUTIONS["check_kinds"]()
    answer["request 2: function_call_output.output"] = "value"
    assert check_kinds(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 'request 2: function_call_output.output' is a result, not a value")
    assert "only after the server ran" in out


def test_arguments_labelled_result_existed_before_execution(capsys):
    answer = SOLUTIONS["check_kinds"]()
    answer["response 1: function_call.arguments"] = "result"
    assert check_kinds(answer) is False
    assert "is a value, not a result: it changed with the task, but it existed before" in capsys.readouterr().out


def test_kinds_with_an_unknown_kind_or_a_missing_label(capsys):
    answer = SOLUTIONS["check_kinds"]()
    answer["tools/list: inputSchema"] = "schema"
    assert check_kinds(answer) is False
    assert "'schema' is not a kind" in capsys.readouterr().out
    answer["tools/list: inputSchema"] = ...
    assert check_kinds(answer) is False
    assert capsys.readouterr().out.startswith("✗ Not answered yet for 'tools/list: inputSchema'")


def test_final_text_that_assumes_a_message_crashes_on_a_call(capsys):
    assert check_final_text(lambda r: r["output"][0]["content"][0]["text"]) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 'a tool call only, output = [function_call]': your function crashed with KeyError")


def test_final_text_that_returns_none_is_told_to_return_a_str(capsys):
    def first_message(r):
        return next((i["content"][0]["text"] for i in r["output"] if i["type"] == "message"), None)

    assert check_final_text(first_message) is False
    assert "you returned None (NoneType); return a str" in capsys.readouterr().out


def test_final_text_that_reads_only_output_0_misses_a_later_message(capsys):
    def output_0(r):
        first = r["output"][0]
        return first["content"][0]["text"] if first["type"] == "message" else ""

    assert check_final_text(output_0) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 'a call next to a message, output = [function_call, message]': you returned ''")
    assert "The message is at output[1] here" in out


def test_final_text_that_reads_only_the_first_part_misses_the_rest(capsys):
    def first_part(r):
        return next((i["content"][0]["text"] for i in r["output"] if i["type"] == "message"), "")

    assert check_final_text(first_part) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 'one message in two parts")
    assert "Join the text of every output_text part" in out


def test_final_text_called_instead_of_passed(capsys):
    assert check_final_text("Here are the first 20 lines") is False
    assert "Pass the function itself" in capsys.readouterr().out
