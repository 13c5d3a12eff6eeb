"""Notebook 08's checks: each wrong answer gets a message that names the panel and the real values."""

from course_lib.exercises import nb08


def _says(check, answer, capsys) -> str:
    assert check(answer) is False
    return capsys.readouterr().out


def test_answers_that_are_not_sets_of_panel_names(capsys):
    assert "not str 'arguments'" in _says(nb08.check_tail_parse_only, "arguments", capsys)
    out = _says(nb08.check_other_server, {"result"}, capsys)
    assert "'result' is not a panel name; the panels are: input_schema, parameters, arguments" in out


def test_tail_parse_only_missing_a_value(capsys):
    out = _says(nb08.check_tail_parse_only, {"arguments"}, capsys)
    assert out.startswith("✗ 'parsed' changed too: '3' → '10'")


def test_tail_parse_only_claims_a_result_changed(capsys):
    out = _says(nb08.check_tail_parse_only, {"arguments", "parsed", "mcp_result"}, capsys)
    assert out.startswith("✗ 'mcp_result' did not change: it is 'not executed' in both runs.")


def test_other_server_claims_the_arguments_changed(capsys):
    out = _says(nb08.check_other_server, {"arguments", "mcp_result", "function_call_output", "answer"}, capsys)
    assert out.startswith("✗ 'arguments' did not change: it is '{\"path\":\"/workspace/notes.txt\",\"head\":5}'")


def test_other_server_claims_the_rule_changed(capsys):
    out = _says(nb08.check_other_server, {"parameters", "mcp_result", "function_call_output", "answer"}, capsys)
    assert "'parameters' did not change" in out and "A declaration is a rule" in out


def test_other_server_forgets_the_answer(capsys):
    out = _says(nb08.check_other_server, {"mcp_result", "function_call_output"}, capsys)
    assert out.startswith("✗ 'answer' changed too: 'fs__read_text_file' → 'arch__read_text_file'")


def test_not_sent_back_claims_the_answer_changed(capsys):
    solution = nb08.SOLUTIONS["check_not_sent_back"]()
    out = _says(nb08.check_not_sent_back, solution | {"answer"}, capsys)
    assert out.startswith("✗ 'answer' did not change: it is 'not answered: the result was never sent back")


def test_not_sent_back_forgets_the_mcp_request(capsys):
    solution = nb08.SOLUTIONS["check_not_sent_back"]()
    out = _says(nb08.check_not_sent_back, solution - {"mcp_arguments"}, capsys)
    assert out.startswith("✗ 'mcp_arguments' changed too: '20' → '5'")


def test_a_list_answer_is_accepted(capsys):
    assert nb08.check_tail_parse_only(["parsed", "arguments"]) is True
    assert capsys.readouterr().out.startswith("✓ exactly these changed in the real runs: arguments, parsed")


def test_each_wrong_answer_names_the_mistake_behind_it(capsys):
    everything = {"arguments", "parsed", "mcp_arguments", "mcp_result", "function_call_output", "answer"}
    out = _says(nb08.check_tail_parse_only, everything, capsys)  # "tail changed, so everything did"
    assert out.endswith("Parse only sends nothing: there is no MCP request in either run.\n")
    out = _says(nb08.check_tail_parse_only, {"arguments", "parsed", "answer"}, capsys)
    assert out.endswith("Parse only executes nothing: no result exists in either run.\n")
    out = _says(nb08.check_other_server, {"mcp_arguments", "mcp_result", "function_call_output", "answer"}, capsys)
    assert out.endswith("The alias (fs__ or arch__) is the app's routing, not an argument: the values stay.\n")
    out = _says(nb08.check_not_sent_back, {"arguments", "parsed", "mcp_arguments", "mcp_result"}, capsys)
    assert out.endswith("The app still builds the feedback item for the new result; it only never sends it.\n")
    out = _says(nb08.check_not_sent_back, {"arguments", "parsed", "mcp_arguments", "mcp_result",
                                           "function_call_output", "answer"}, capsys)  # fmt: skip
    assert out.endswith("The model was never asked again, so there is no answer in either run.\n")
    out = _says(nb08.check_not_sent_back, {"arguments", "parsed"}, capsys)  # "nothing runs if nothing is sent back"
    assert out.startswith("✗ 'mcp_arguments' changed too") and out.endswith("new request, new value.\n")
    out = _says(nb08.check_other_server, {"mcp_result", "answer"}, capsys)
    assert out.endswith("The tool really ran again: a new execution gives a new result.\n")
