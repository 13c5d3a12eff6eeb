"""Wrong answers to notebook 03b's exercises get a message that says what is wrong."""

import pytest

from course_lib import node_tools as node_module
from course_lib.exercises.nb03b import SOLUTIONS, check_reference_predictions, check_route, exposed_tools

# ---- exercise 1: predictions, checked against the real reference server -----------------------

RIGHT = {"A": 8, "B": 0, "C": 2, "D": "error"}


def test_trusting_head_0_to_mean_no_lines_is_explained(node_tools, capsys):
    assert check_reference_predictions({**RIGHT, "A": 0}) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 3 of 4 right. A {'path': 'todo.md', 'head': 0}: you predicted 0 lines")
    assert "the reference returned 8 lines: head 0 is falsy" in out


def test_expecting_tail_1_to_give_the_last_line_is_explained(node_tools, capsys):
    assert check_reference_predictions({**RIGHT, "B": 1}) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 3 of 4 right. B")
    assert "you predicted 1 line, but the reference returned 0 lines" in out and "ends with a newline" in out


def test_expecting_head_and_tail_0_to_be_refused_is_explained(node_tools, capsys):
    assert check_reference_predictions({**RIGHT, "C": "error"}) is False
    out = capsys.readouterr().out
    assert "C {'path': 'notes.txt', 'head': 2, 'tail': 0}: you predicted an error, but the reference returned 2 lines" in out
    assert "tail 0 is falsy" in out


def test_expecting_the_reference_to_know_logical_paths_is_explained(node_tools, capsys):
    assert check_reference_predictions({**RIGHT, "D": 2}) is False
    out = capsys.readouterr().out
    assert "D {'path': '/workspace/notes.txt', 'head': 2}: you predicted 2 lines, but the reference returned an error" in out
    assert "only knows real paths" in out


def test_a_prediction_that_is_not_a_count_or_error_is_named(capsys):
    assert check_reference_predictions({**RIGHT, "D": True}) is False
    assert capsys.readouterr().out.startswith('✗ D: True is not a prediction')


def test_a_missing_case_is_named(capsys):
    assert check_reference_predictions({"A": 8, "B": 0, "C": 2}) is False
    assert capsys.readouterr().out.startswith("✗ Predict every case: D missing.")


def test_a_partly_edited_starter_is_not_answered(capsys):
    assert check_reference_predictions({"A": 8, "B": ..., "C": 2, "D": ...}) is False
    assert capsys.readouterr().out.startswith("✗ Not answered yet")


def test_without_node_the_check_says_so(monkeypatch, capsys):
    monkeypatch.setattr(node_module, "node_available", lambda: False)
    assert check_reference_predictions(RIGHT) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ This check runs the reference server, which needs Node.js: Node.js is not installed")


# ---- exercise 2: route, checked on a real host ------------------------------------------------


def _split_everywhere(alias, exposed):
    server, tool = alias.split("__")
    return server, tool


def _split_at_the_last(alias, exposed):
    return tuple(alias.rsplit("__", 1))


def _parse_without_the_record(alias, exposed):
    server, _, tool = alias.partition("__")
    return server, tool


def _string_prefix(alias, exposed):
    for server in exposed:
        if alias.startswith(server):
            return server, alias[len(server) + 2 :]
    raise LookupError(alias)


def _raises_the_wrong_kind(alias, exposed):
    server, _, tool = alias.partition("__")
    if tool not in exposed.get(server, []):
        raise ValueError(alias)
    return server, tool


def test_the_record_lists_only_exposed_tools():
    assert exposed_tools() == {"fs": ["read_text_file"], "fs_archive": ["read_text_file"], "gw": ["docs__read_text_file"]}


def test_splitting_at_every_separator_crashes_on_a_tool_name_with_one(capsys):
    assert check_route(_split_everywhere) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ route('gw__docs__read_text_file') raised ValueError")
    assert "A tool name may itself contain '__'" in out


def test_splitting_at_the_last_separator_names_a_server_that_does_not_exist(capsys):
    assert check_route(_split_at_the_last) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ route('gw__docs__read_text_file') gave ('gw__docs', 'read_text_file')")
    assert "no server is connected under 'gw__docs'" in out


def test_parsing_without_the_record_routes_a_tool_only_left_out(capsys):
    assert check_route(_parse_without_the_record) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ route('gw__docs__list_directory') returned ('gw', 'docs__list_directory')")
    assert "only= left it out" in out and "raise LookupError" in out


def test_a_string_prefix_test_is_the_sibling_prefix_trick(capsys):
    assert check_route(_string_prefix) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ route('fs_archive__read_text_file') gave ('fs', 'rchive__read_text_file')")
    assert "merely starts with the characters 'fs'" in out
    assert "server 'fs' answered with a JSON-RPC error (Unknown tool: rchive__read_text_file)" in out


def test_refusing_with_the_wrong_exception_is_named(capsys):
    assert check_route(_raises_the_wrong_kind) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ route('gw__docs__list_directory') raised ValueError: gw__docs__list_directory; raise LookupError")


def test_returning_something_that_is_not_a_pair(capsys):
    assert check_route(lambda alias, exposed: alias) is False
    assert "must return a (server, tool) pair" in capsys.readouterr().out


@pytest.mark.parametrize("answer", [..., None])
def test_route_starter_is_not_answered(answer, capsys):
    assert check_route(answer) is False
    assert capsys.readouterr().out.startswith("✗ Not answered yet")


# ---- the zh-CN edition: the same checks, their own messages in Chinese --------------------------


def test_the_not_answered_messages_follow_the_edition(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "en")
    assert check_reference_predictions({"A": ..., "B": ..., "C": ..., "D": ...}) is False
    assert check_route(...) is False
    assert capsys.readouterr().out == (
        '✗ Not answered yet: replace each ... with a number of lines (0 or more) or "error".\n'
        "✗ Not answered yet: define route(alias, exposed), then set answer = route (the function itself, without parentheses) "
        "and run the cell again.\n"
    )
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_reference_predictions({"A": ..., "B": ..., "C": ..., "D": ...}) is False
    assert check_route(...) is False
    assert capsys.readouterr().out == (
        '✗ 还没有作答：把每个 ... 换成行数（0 或更多）或 "error"。\n'
        "✗ 还没有作答：定义 route(alias, exposed)，然后写 answer = route（函数本身，不带括号），再运行这个单元格。\n"
    )


def test_prediction_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_reference_predictions({"A": 8, "B": 0, "C": 2}) is False
    assert capsys.readouterr().out == "✗ 请预测每一个例子：缺少 D。\n"
    monkeypatch.setattr(node_module, "node_available", lambda: False)
    assert check_reference_predictions(RIGHT) is False
    assert capsys.readouterr().out.startswith("✗ 这个检查要运行参考服务器，需要 Node.js：没有安装 Node.js")


def test_a_wrong_prediction_is_explained_in_chinese(node_tools, monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_reference_predictions({**RIGHT, "A": 0}) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ 4 个中对了 3 个。A {'path': 'todo.md', 'head': 0}：你预测的是 0 行，但参考服务器返回了 8 行")
    assert "head 0 是假值" in out
    assert check_reference_predictions(SOLUTIONS["check_reference_predictions"]()) is True
    assert capsys.readouterr().out == "✓ 全部 4 个预测都与参考服务器真正返回的结果相符。\n"


def test_routing_mistakes_are_explained_in_chinese(monkeypatch, capsys):
    monkeypatch.setenv("COURSE_LANG", "zh-CN")
    assert check_route(_string_prefix) is False
    out = capsys.readouterr().out
    assert out.startswith("✗ route('fs_archive__read_text_file') 给出的是 ('fs', 'rchive__read_text_file')")
    assert "只是以字符 'fs' 开头" in out  # the server's own error text stays as it was sent
    assert "服务器 'fs' 以一个 JSON-RPC 错误作答（Unknown tool: rchive__read_text_file）" in out
    assert check_route(_parse_without_the_record) is False
    assert "但 only= 把它排除在外" in capsys.readouterr().out
    assert check_route(SOLUTIONS["check_route"]()) is True
    assert capsys.readouterr().out.startswith("✓ 全部 ")
