"""Wrong answers to notebook 03's exercises get a message that says what is wrong."""

from course_lib.exercises.nb03 import SOLUTIONS, check_classify, check_pair_by_id


def _pair_by_position(messages):
    requests = [m.json for m in messages if m.direction == "app→server" and "id" in m.json]
    responses = [m.json for m in messages if m.direction == "server→app"]
    return {request["id"]: (request, response) for request, response in zip(requests, responses)}


def _results_only(messages):
    requests = {m.json["id"]: m.json for m in messages if "method" in m.json and "id" in m.json}
    results = {m.json["id"]: m.json for m in messages if "result" in m.json}
    return {key: (request, results[key]) for key, request in requests.items() if key in results}


def _keeps_notifications(messages):
    pairs = {}
    for m in messages:
        pairs.setdefault(m.json.get("id"), [None, None])[0 if "method" in m.json else 1] = m.json
    return {key: tuple(pair) for key, pair in pairs.items()}


def test_pairing_by_position_fails_when_answers_arrive_in_another_order(capsys):
    assert check_pair_by_id(_pair_by_position) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ id 1: you paired it with the response whose id is 7")
    assert "Pair by the JSON-RPC id, not by position" in out


def test_dropping_error_responses_is_named(capsys):
    assert check_pair_by_id(_results_only) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ id 7 (tools/call delete_file) is missing")
    assert "an error is still the response" in out


def test_notification_under_key_none_is_named(capsys):
    assert check_pair_by_id(_keeps_notifications) is False
    assert capsys.readouterr().out.startswith("✗ key None: a notification")


def test_pair_by_id_that_crashes_on_the_notification(capsys):
    assert check_pair_by_id(lambda messages: {m.json["id"]: m for m in messages}) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ pair_by_id raised KeyError: 'id'")
    assert "notifications have no id" in out


def test_classify_that_ignores_is_error_calls_a_failure_a_success(capsys):
    assert check_classify(lambda r: "protocol error" if "error" in r else "success") is False
    out = capsys.readouterr().out
    assert out.startswith("✗ id 4 (read_text_file")
    assert "you said 'success', but result.isError is true" in out
    assert "must go back to the model as a failure" in out


def test_classify_that_assumes_a_result_crashes_on_the_protocol_error(capsys):
    assert check_classify(lambda r: "tool error" if r["result"]["isError"] else "success") is False
    out = capsys.readouterr().out
    assert out.startswith("✗ classify raised KeyError: 'result' on the response to id 7")


def test_classify_that_calls_a_tool_error_a_protocol_error(capsys):
    assert check_classify(lambda r: "protocol error" if "error" in r or r["result"]["isError"] else "success") is False
    out = capsys.readouterr().out
    assert out.startswith("✗ id 4")
    assert "you said 'protocol error'" in out and "the tool ran and failed" in out


def test_classify_with_an_unknown_label(capsys):
    assert check_classify(lambda r: "ok") is False
    assert "'ok' is not one of" in capsys.readouterr().out


def test_classify_that_indexes_is_error_crashes_on_a_result_that_omits_it(capsys):
    def indexes(r):
        return "protocol error" if "error" in r else "tool error" if r["result"]["isError"] else "success"

    assert check_classify(indexes) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ classify raised KeyError: 'isError'")
    assert "isError is optional" in out and '.get("isError", False)' in out


def test_classify_that_tests_the_presence_of_is_error_is_told_to_test_its_value(capsys):
    assert check_classify(lambda r: "protocol error" if "error" in r else
                          "tool error" if "isError" in r["result"] else "success") is False  # fmt: skip
    out = capsys.readouterr().out
    assert "you said 'tool error', but result.isError is false" in out and "test its value" in out


def test_classify_cases_include_a_result_without_is_error():
    from course_lib.exercises.nb03 import classify_cases

    results = [response["result"] for _, response in classify_cases() if "result" in response]
    assert any("isError" not in result for result in results)


# ---- the zh-CN edition: the same checks, their own messages in Chinese --------------------------


def test_the_not_answered_messages_follow_the_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "en")
    assert check_pair_by_id(...) is False
    assert check_classify(...) is False
    assert capsys.readouterr().out == (
        "✗ Not answered yet: define pair_by_id(messages), then set answer = pair_by_id (the function itself, without parentheses) "
        "and run the cell again.\n"
        "✗ Not answered yet: define classify(response), then set answer = classify (the function itself, without parentheses) "
        "and run the cell again.\n"
    )
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_pair_by_id(...) is False
    assert check_classify(...) is False
    assert capsys.readouterr().out == (
        "✗ 还没有作答：定义 pair_by_id(messages)，然后写 answer = pair_by_id（函数本身，不带括号），再运行这个单元格。\n"
        "✗ 还没有作答：定义 classify(response)，然后写 answer = classify（函数本身，不带括号），再运行这个单元格。\n"
    )


def test_pairing_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_pair_by_id(_pair_by_position) is False
    assert capsys.readouterr().out == (
        "✗ id 1：你把它与 id 为 7 的响应配成了一对（这一轮检查把服务器的应答按相反的顺序送达）。"
        "请按 JSON-RPC id 配对，而不是按位置。\n"
    )
    assert check_pair_by_id(_results_only) is False
    assert capsys.readouterr().out.startswith("✗ 缺少 id 7（tools/call delete_file）：它的应答是一个 JSON-RPC 错误")
    assert check_pair_by_id(SOLUTIONS["check_pair_by_id"]()) is True
    assert capsys.readouterr().out.startswith("✓ 在 16 种到达顺序下，全部 ")


def test_classify_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_classify(lambda r: "protocol error" if "error" in r else "success") is False
    out = capsys.readouterr().out
    assert out.startswith("✗ id 4（read_text_file")
    assert "你说的是 'success'，但 result.isError 为 true" in out and "绝不能当作成功" in out
    assert check_classify(lambda r: "tool error" if r["result"]["isError"] else "success") is False
    out = capsys.readouterr().out
    assert out.startswith("✗ classify 在 id ") and "读取结果之前先找 'error'" in out
    assert check_classify(SOLUTIONS["check_classify"]()) is True
    assert capsys.readouterr().out.startswith("✓ 全部 ")
