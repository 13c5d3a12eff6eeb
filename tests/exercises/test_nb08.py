"""Notebook 08's checks: each wrong answer gets a message that names the panel and the real values."""

from course_lib.exercises import nb08


def _says(check, answer, capsys) -> str:
    assert check(answer) is False
    return capsys.readouterr().out


def test_answers_that_are_not_sets_of_panel_names(capsys):
    assert "not str 'arguments'" in _says(nb08.check_tail_parse_only, "arguments", capsys)
    out = _says(nb08.check_other_server, {"result"}, capsys)
    assert "'result' is a kind of object, not a panel: its panels are mcp_result, function_call_output, answer" in out
    out = _says(nb08.check_other_server, {"tools/list"}, capsys)
    assert "'tools/list' is not a panel name; the panels are: input_schema, parameters, arguments" in out


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


# ---- the zh-CN edition: the same checks, their own messages in Chinese --------------------------


def test_the_not_answered_message_follows_the_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "en")
    out = _says(nb08.check_tail_parse_only, ..., capsys)
    assert out == ('✗ Not answered yet: set answer = the set of the panels that change, by name (names from PANELS, '
                   'written like {"…", "…"}), and run the cell again.\n')  # no solution as the example
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    out = _says(nb08.check_tail_parse_only, ..., capsys)
    assert out == ('✗ 还没有作答：令 answer = 会变化的面板的名字组成的集合（名字取自 PANELS，写法如 {"…", "…"}），'
                   '再运行这个单元格。\n')


def test_wrong_shapes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert _says(nb08.check_tail_parse_only, "arguments", capsys) == (
        "✗ 请给出面板名的集合，而不是 str 'arguments'：把名字放进花括号里，answer = {'…', '…'}。\n"
    )
    out = _says(nb08.check_other_server, {"结果"}, capsys)
    assert out.startswith("✗ '结果' 是对象的种类，不是面板：这一类的面板是 mcp_result, function_call_output, answer")
    out = _says(nb08.check_other_server, {"请求"}, capsys)
    assert out.startswith("✗ '请求' 不是面板名；面板有：input_schema, parameters, arguments")


def test_wrong_panel_sets_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    out = _says(nb08.check_tail_parse_only, {"arguments"}, capsys)
    assert out.startswith("✗ 'parsed' 也变了：'3' → '10'（现在是 ") and out.endswith("值随请求而变：新的请求，新的值。\n")
    out = _says(nb08.check_tail_parse_only, {"arguments", "parsed", "mcp_result"}, capsys)
    assert out == "✗ 'mcp_result' 没有变：两次运行中它都是 '未执行'。仅解析什么也不执行：两次运行都没有结果。\n"
    out = _says(nb08.check_other_server, {"mcp_arguments", "mcp_result", "function_call_output", "answer"}, capsys)
    assert out.endswith("别名（fs__ 或 arch__）是应用的路由，不是参数：值保持不变。\n")
    out = _says(nb08.check_other_server, {"parameters", "mcp_result", "function_call_output", "answer"}, capsys)
    assert "'parameters' 没有变" in out and out.endswith("声明是规则：里面没有某一次调用的任何值。\n")
    solution = nb08.SOLUTIONS["check_not_sent_back"]()
    out = _says(nb08.check_not_sent_back, solution - {"function_call_output"}, capsys)
    assert "删除了 1177 个字符" in out and out.endswith("应用仍然为新的结果构造反馈项，只是从不发送它。\n")
    out = _says(nb08.check_not_sent_back, solution | {"answer"}, capsys)
    assert out.startswith("✗ 'answer' 没有变：两次运行中它都是 '没有回答：结果从未发回")


def test_the_chinese_edition_accepts_the_same_answers(monkeypatch, capsys):
    """The zh-CN runs send Chinese requests; the same panels change, so the same answers pass."""
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    for name, solution in nb08.SOLUTIONS.items():
        assert getattr(nb08, name)(solution()) is True, name
        assert capsys.readouterr().out.startswith("✓ 真实运行中恰好是这些变了：")
