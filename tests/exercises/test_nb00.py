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


def test_final_text_that_joins_every_part_crashes_on_a_refusal_and_is_told_why(capsys):
    def every_part(r):
        return "".join(p["text"] for i in r["output"] if i["type"] == "message" for p in i["content"])

    assert check_final_text(every_part) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 'a message with a refusal part")
    assert "A refusal part has no 'text'" in out and "join only 'output_text' parts" in out


def test_final_text_that_ignores_item_and_part_types_joins_the_reasoning_and_is_told_so(capsys):
    def every_text(r):
        return "".join(p.get("text", "") for i in r["output"] for p in i.get("content") or [])

    assert check_final_text(every_text) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 'a reasoning item before the message")
    assert "You joined the reasoning item's text too" in out and "type is 'message'" in out


def test_final_text_joined_with_newlines_is_told_to_join_with_nothing(capsys):
    def with_newlines(r):
        return "\n".join(p["text"] for i in r["output"] if i["type"] == "message"
                         for p in i["content"] if p["type"] == "output_text")  # fmt: skip

    assert check_final_text(with_newlines) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ case 'one message in two parts") and "with nothing in between" in out


def test_final_text_cases_include_a_refusal_and_a_reasoning_item():
    from course_lib.exercises.nb00 import final_text_cases

    bodies = dict(final_text_cases())
    parts = [p["type"] for body in bodies.values() for i in body["output"] if i["type"] == "message" for p in i["content"]]
    assert "refusal" in parts
    assert any(i["type"] == "reasoning" for body in bodies.values() for i in body["output"])


# ---- the zh-CN edition: the same checks, their own messages in Chinese --------------------------


def test_kinds_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    answer = SOLUTIONS["check_kinds"]()
    answer["request 1: tools[0].parameters"] = "value"
    assert check_kinds(answer) is False
    out = capsys.readouterr().out  # the object's name is a key the check reads: it stays as written
    assert out.startswith("✗ 'request 1: tools[0].parameters' 是规则，不是值：两次运行")
    assert "identical" not in out
    answer = SOLUTIONS["check_kinds"]()
    answer["tools/call request: params.arguments"] = "rule"
    assert check_kinds(answer) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 'tools/call request: params.arguments' 是值，不是规则：任务一变，它就跟着变了（")
    assert "'head': 20} → {'path': '/workspace/notes.txt', 'head': 5}" in out and "服务器运行之前" in out
    answer = SOLUTIONS["check_kinds"]()
    answer["request 2: function_call_output.output"] = "value"
    assert check_kinds(answer) is False
    assert "是结果，不是值：它随任务而变，而且只在服务器运行之后才出现" in capsys.readouterr().out


def test_kinds_shape_mistakes_and_success_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_kinds(["rule"]) is False
    assert capsys.readouterr().out == "✗ 请给出一个从对象名到种类的 dict；你给的是 list。\n"
    answer = SOLUTIONS["check_kinds"]()
    answer["tools/list: inputSchema"] = "schema"
    assert check_kinds(answer) is False
    assert capsys.readouterr().out == ("✗ 'tools/list: inputSchema'：'schema' 不是一种种类；"
                                       '请用 "rule"、"value" 或 "result"。\n')
    answer["tools/list: inputSchema"] = ...
    assert check_kinds(answer) is False
    assert capsys.readouterr().out.startswith("✗ 'tools/list: inputSchema' 还没有作答")
    assert check_kinds(SOLUTIONS["check_kinds"]()) is True
    assert capsys.readouterr().out == "✓ 10 个对象全部标对了，与两次真实运行测得的一致。\n"


def test_final_text_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")

    def output_0(r):
        first = r["output"][0]
        return first["content"][0]["text"] if first["type"] == "message" else ""

    assert check_final_text(output_0) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 例子 '调用旁边跟着一条消息，output = [function_call, message]'：你返回了 ''，")
    assert "这里的消息位于 output[1]" in out and "case" not in out

    def every_part(r):
        return "".join(p["text"] for i in r["output"] if i["type"] == "message" for p in i["content"])

    assert check_final_text(every_part) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 例子 '一条带 refusal 部分的消息") and "你的函数崩溃了，KeyError" in out
    assert "refusal 部分没有 'text'" in out
    assert check_final_text("Here are the first 20 lines") is False
    assert capsys.readouterr().out.startswith("✗ 请传入函数本身（final_text，不带括号）")
    assert check_final_text(SOLUTIONS["check_final_text"]()) is True
    assert capsys.readouterr().out == ("✓ 在全部 165 个响应上（消息、调用、reasoning 和 refusal 最多三项的每一种排列），"
                                       "final_text 与 SDK 的 output_text 一致。\n")


def test_every_final_text_case_has_a_chinese_label():
    from course_lib.exercises.nb00 import CASE_LABELS_ZH, final_text_cases

    assert set(CASE_LABELS_ZH) == {label for label, _ in final_text_cases()}
    assert all(zh != en for en, zh in CASE_LABELS_ZH.items())
